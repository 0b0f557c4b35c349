"""Successive halving on the select part: every candidate judges a few select answers, the best 1/eta go on to
eta times as many, until one is left or the select part is used up.

Each rung judges a longer prefix of the (seeded) select order, so a candidate's earlier answers come from the
state file and the cache: only the new answers cost calls. Before a rung its new requests are counted (shared
ones once, cheapest judge configs first); a rung that would not fit in the calls left (less those kept for the
test part) is not started, and a rung the budget cut short anyway is not used: the search ends at the last
complete rung, and its best candidate wins.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from groundjudge.tune.budget import CallBudget
from groundjudge.tune.candidates import Candidate
from groundjudge.tune.evaluate import Evaluator
from groundjudge.tune.estimate import Request
from groundjudge.tune.parts import TuneParts, shuffled
from groundjudge.tune.result import CandidateRow, RungRow
from groundjudge.tune.scoring import Scored, rank_key, score, threshold_of
from groundjudge.tune.spec import TuneSpec
from groundjudge.types import Example


@dataclass
class Outcome:
    """How the search ended."""

    winner: Candidate
    rows: dict[str, CandidateRow]
    rungs: list[RungRow]
    stopped: str


@dataclass
class Search:
    """One successive-halving search over candidates (see the module's description)."""

    evaluator: Evaluator
    budget: CallBudget
    parts: TuneParts
    spec: TuneSpec
    candidates: list[Candidate]
    content_free: list[Example]
    reserve: int = 0
    """Calls kept for the test part."""
    rows: dict[str, CandidateRow] = field(default_factory=dict)

    def fit_set(self) -> list[Example]:
        """The optimise answers thresholds are fitted on (a seeded sample of ``fit_examples``)."""
        return shuffled(self.parts.fit, self.spec.seed)[:self.spec.fit_examples]

    def rung_sizes(self) -> list[int]:
        """Select answers per rung: first_rung, x eta, ... up to the whole select part."""
        total, sizes, n = len(self.parts.select), [], self.spec.first_rung
        while True:
            sizes.append(min(n, total))
            if n >= total:
                return sizes
            n *= self.spec.eta

    def _work(self, alive: Sequence[Candidate], prefix: Sequence[Example]) -> list[tuple]:
        """(config, part, examples) still to judge for a rung, per distinct config."""
        work, seen = [], set()
        for cand in alive:
            if cand.config_id in seen:
                continue
            seen.add(cand.config_id)
            methods = {c.method for c in alive if c.config_id == cand.config_id}
            work.append((cand.config, "select", list(prefix)))
            if "threshold" in methods:
                work.append((cand.config, "fit", self.fit_set()))
            if "contextual" in methods:
                work.append((cand.config, "content_free", self.content_free))
        return work

    def requests(self, work: Sequence[tuple]) -> list[Request]:
        """The new requests (not sent before, each once) that some work would send."""
        return self.evaluator.ledger.new(r for config, part, exs in work
                                         for r in self.evaluator.requests(config, part, exs))

    def _scored(self, cand: Candidate, prefix: Sequence[Example]) -> Scored:
        ev = self.evaluator
        batch = ev.judge(cand.config, "select", prefix)
        fit = ev.judge(cand.config, "fit", self.fit_set()) if cand.method == "threshold" else {}
        prior = ev.judge(cand.config, "content_free", self.content_free) if cand.method == "contextual" else {}
        threshold = threshold_of(cand, list(batch.values()), list(fit.values()),
                                 [ex.label for ex in self.fit_set()] if fit else [], list(prior.values()))
        return score(prefix, batch, threshold)

    def run(self, rung_done=None) -> Outcome:
        """Run the rungs; ``rung_done(RungRow)`` is told after each."""
        order = {c.id: i for i, c in enumerate(self.candidates)}
        alive, rungs, best = list(self.candidates), [], None
        select = shuffled(self.parts.select, self.spec.seed)
        stopped = "select part used up"
        for index, size in enumerate(self.rung_sizes()):
            prefix = select[:size]
            work = self._work(alive, prefix)
            need = len(self.requests(work))
            if need > self.budget.left() - self.reserve:
                stopped = f"budget: rung {index} ({need} new calls) did not fit"
                break
            before = self.budget.calls
            self.budget.clear_refusals()
            cheap_first = sorted(work, key=lambda w: len(self.requests([w])))
            for config, part, exs in cheap_first:
                self.evaluator.judge(config, part, exs)
            complete = self.budget.refused == 0
            scored = {c.id: self._scored(c, prefix) for c in alive} if complete else {}
            ranked = sorted(alive, key=lambda c: rank_key(scored[c.id], order[c.id], self.spec.select_by)) \
                if complete else alive
            keep = max(1, math.ceil(len(alive) / self.spec.eta))
            kept = ranked[:keep] if complete else []
            rungs.append(RungRow(index=index, examples=size, candidates=[c.id for c in alive],
                                 kept=[c.id for c in kept], calls=self.budget.calls - before, complete=complete))
            if rung_done:
                rung_done(rungs[-1])
            if not complete:
                stopped = f"budget: rung {index} was cut short"
                break
            for cand in alive:
                s = scored[cand.id]
                self.rows[cand.id] = self._row(cand, index, size, s)
            best, alive = ranked[0], kept
            if len(alive) == 1:
                stopped = "one candidate left"
                break
        return Outcome(winner=best or self.candidates[0], rows=self.rows, rungs=rungs, stopped=stopped)

    def _row(self, cand: Candidate, rung: int, size: int, s: Scored) -> CandidateRow:
        return CandidateRow(id=cand.id, name=cand.name, levers=cand.levers, settings=cand.config.settings,
                            select_examples=size, select_balanced_accuracy=s.balanced_accuracy,
                            select_roc_auc=s.roc_auc, threshold=s.threshold, rung=rung)
