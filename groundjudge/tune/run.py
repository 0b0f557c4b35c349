"""Run a tune: prepare (no call), check the budget, propose instructions, search by successive halving, judge the
test part with the start and the winner, and write ``winner.toml`` and ``tune.json``."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from pathlib import Path

from groundjudge.paths import portable_path
from groundjudge.tune.budget import CallBudget
from groundjudge.tune.candidates import Candidate, build_candidates
from groundjudge.tune.evaluate import Evaluator
from groundjudge.tune.heldout import compare_on_test
from groundjudge.tune.plan import Stage, check_budget, plan_stages
from groundjudge.tune.prepare import Prepared, TuneOptions, prepare
from groundjudge.tune.proposer import mistakes_shown, propose, write_proposal
from groundjudge.tune.result import CandidateRow, TuneResult
from groundjudge.tune.scoring import score, threshold_of
from groundjudge.tune.search import Search
from groundjudge.tune.state import Judged, TuneState
from groundjudge.tune.winner import write_winner

RESULT_FILE = "tune.json"


def plan_hash(prep: Prepared) -> str:
    """What a resumed tune must share with the first: the parts' answers, the candidates, the seed and levers."""
    spec = prep.tune.spec
    payload = {"parts": {name: [ex.id for ex in getattr(prep.parts, name)] for name in ("pool", "fit", "select",
                                                                                         "test")},
               "candidates": [c.id for c in prep.candidates], "seed": spec.seed,
               "levers": spec.model_dump(mode="json", exclude={"max_calls", "max_cost"})}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()[:16]


def _search(prep: Prepared, evaluator: Evaluator, budget: CallBudget, candidates: list[Candidate]) -> Search:
    return Search(evaluator=evaluator, budget=budget, parts=prep.parts, spec=prep.tune.spec, candidates=candidates,
                  content_free=prep.content_free)


def dry_run(options: TuneOptions) -> list[Stage]:
    """The plan's stages (calls, tokens, $), estimated without a call."""
    prep = prepare(options)
    budget = CallBudget(prep.tune.spec.max_calls, prep.tune.spec.max_cost)
    search = _search(prep, Evaluator(prep.service, _NoState()), budget, prep.candidates)
    return plan_stages(search, prep.start.config)


class _NoState:
    """The state of a dry run: nothing judged, nothing written."""

    spent_calls = 0

    def get(self, *key):
        """Nothing is judged in a dry run."""
        return None


def _proposals(prep: Prepared, evaluator: Evaluator, search: Search, notes: list[str]) -> list[str]:
    """Judge the fit part with the start, show its mistakes to the proposer, write the valid proposals."""
    lever = prep.tune.spec.instructions
    fit = search.fit_set()
    results = evaluator.judge(prep.start.config, "fit", fit)
    threshold = threshold_of(prep.start, [], list(results.values()), [ex.label for ex in fit])
    scored = score(fit, results, threshold)
    mistakes = mistakes_shown(fit, scored.verdicts, lever.mistakes)
    if not mistakes:
        notes.append("the proposer was not asked: the start judged every fit answer right")
        return []
    judge = evaluator.judge_of(prep.start.config)
    folders = []
    for index in range(lever.proposals):
        calls: list = []
        guidance = asyncio.run(propose(prep.service, lever, judge, mistakes, index, calls))
        made = [c for c in calls if not c.cached and c.attempts > 0]
        if evaluator.state.get("proposer", "proposer", str(index)) is None:
            evaluator.state.add(Judged(config="proposer", part="proposer", example=str(index), label="grounded",
                                       calls=len(made), cost_usd=sum(c.cost_usd for c in made)))
        if guidance is None:
            notes.append(f"proposal {index + 1}: the proposer's reply was not usable guidance; left out")
            continue
        folder = Path(prep.options.out) / "proposals" / f"p{index + 1}"
        folders.append(str(write_proposal(folder, judge, guidance, fit[0])))
    return folders


def _winner_threshold(winner: Candidate, evaluator: Evaluator, search: Search, select_results) -> float | None:
    """The threshold frozen into winner.toml (batch calibration: the mean log-odds of its select answers)."""
    fit = search.fit_set()
    fit_results = evaluator.judge(winner.config, "fit", fit) if winner.method == "threshold" else {}
    prior = evaluator.judge(winner.config, "content_free", search.content_free) \
        if winner.method == "contextual" else {}
    return threshold_of(winner, list(select_results.values()), list(fit_results.values()),
                        [ex.label for ex in fit] if fit_results else [], list(prior.values()))


def _test_side(cand: Candidate, evaluator: Evaluator, search: Search):
    test = list(search.parts.test)
    results = evaluator.judge(cand.config, "test", test)
    fit = search.fit_set()
    fit_results = evaluator.judge(cand.config, "fit", fit) if cand.method == "threshold" else {}
    prior = evaluator.judge(cand.config, "content_free", search.content_free) if cand.method == "contextual" else {}
    threshold = threshold_of(cand, list(results.values()), list(fit_results.values()),
                             [ex.label for ex in fit] if fit_results else [], list(prior.values()))
    return score(test, results, threshold)


def run_tune(options: TuneOptions, say: Callable[[str], None] = print) -> TuneResult:
    """The whole tune (see the module's description); returns what tune.json holds."""
    prep = prepare(options)
    spec, out = prep.tune.spec, Path(options.out)
    state = TuneState(out, plan_hash(prep), options.resume)
    budget = CallBudget(spec.max_calls, spec.max_cost, state.spent_calls, state.spent_usd)
    prep.service.budget = budget
    evaluator = Evaluator(prep.service, state, options.concurrency, local_chunk=options.local_chunk)
    search = _search(prep, evaluator, budget, prep.candidates)
    for config in {c.config_id: c.config for c in prep.candidates}.values():
        for part, examples in (("select", prep.parts.select), ("fit", search.fit_set()), ("test", prep.parts.test),
                               ("content_free", prep.content_free)):
            evaluator.mark_done(config, part, examples)
    lever = spec.instructions
    proposer_calls = lever.proposals if lever and lever.proposer else 0
    if proposer_calls:
        proposer_calls += len(search.requests([(prep.start.config, "fit", search.fit_set())]))
    where = prep.tune.where("tune", "max_calls")
    search.reserve = check_budget(search, prep.start, where, proposer_calls)
    notes: list[str] = []
    if state.spent_calls:
        say(f"resuming: {state.spent_calls} calls made before")
    if proposer_calls:
        folders = _proposals(prep, evaluator, search, notes)
        if folders:
            _, candidates = build_candidates(prep.base, spec, prep.pool, folders)
            search.candidates = candidates
            search.reserve = check_budget(search, prep.start, where)
    say(f"{len(search.candidates)} candidates; select {len(prep.parts.select)}, test {len(prep.parts.test)} answers; "
        f"{budget.left()} of {spec.max_calls} calls left")
    outcome = search.run(rung_done=lambda r: say(
        f"rung {r.index}: {len(r.candidates)} candidates x {r.examples} answers, {r.calls} calls"
        + ("" if r.complete else " (cut short by the budget)")))
    winner = outcome.winner
    select_results = evaluator.judge(winner.config, "select",
                                     [ex for ex in prep.parts.select
                                      if state.get(winner.config_id, "select", ex.id) is not None])
    frozen = _winner_threshold(winner, evaluator, search, select_results)
    start_side = _test_side(prep.start, evaluator, search)
    winner_side = _test_side(winner, evaluator, search)
    if budget.refused:
        notes.append("the budget ran out on the test part: answers it cut short count as abstentions")
    if winner.method == "batch":
        notes.append("batch calibration: the test part used its own mean log-odds; winner.toml freezes the "
                     "select part's")
    comment = (f"The winner of `groundjudge tune {portable_path(prep.tune.path)}`: {winner.name}.\n"
               "Run it as it is: groundjudge run THIS_FILE")
    written = write_winner(out, prep.tune.experiment, winner.config, frozen, comment)
    rows = [outcome.rows.get(c.id) or CandidateRow(id=c.id, name=c.name, levers=c.levers,
                                                   settings=c.config.settings) for c in search.candidates]
    rows = [r.model_copy(update={"calls": state.calls_by_config.get(r.id.split(":")[0], 0)}) for r in rows]
    parts = {name: len(getattr(prep.parts, name)) for name in ("pool", "fit", "select", "test")}
    result = TuneResult(
        tune_file=portable_path(prep.tune.path), judge=prep.base.name, seed=spec.seed, parts=parts,
        groups={name: len(prep.parts.groups(name)) for name in parts}, max_calls=spec.max_calls,
        max_cost=spec.max_cost, calls=budget.calls, cost_usd=budget.spent, stopped=outcome.stopped,
        start=prep.start.id, winner=winner.id, winner_config=written.name, winner_threshold=frozen,
        candidates=rows, rungs=outcome.rungs,
        test=compare_on_test(prep.parts.test, start_side, winner_side, spec.seed), notes=notes)
    (out / RESULT_FILE).write_text(result.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return result
