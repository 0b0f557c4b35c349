"""The plan's calls and $ before any call: what ``--dry-run`` prints, and the check that the budget covers the
first rung and the test part (else the tune stops before its first call, naming ``max_calls``' line)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from groundjudge.tune.estimate import Ledger, dollars
from groundjudge.tune.evaluate import Evaluator
from groundjudge.tune.parts import shuffled
from groundjudge.tune.search import Search
from groundjudge.tune.spec import TuneError


@dataclass(frozen=True)
class Stage:
    """One stage of the plan: calls (at most), tokens and $."""

    name: str
    calls: int
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


def test_reserve(search: Search, start_config) -> int:
    """Calls the test part may need: the start and the costliest candidate config, on every test answer."""
    ev = search.evaluator
    configs = {c.config_id: c.config for c in search.candidates}

    def count(config) -> int:
        return len(Ledger(set(ev.ledger.seen)).new(ev.requests(config, "test", search.parts.test)))

    start = count(start_config)
    return start + max((count(c) for cid, c in configs.items()), default=0)


def _stage(name: str, requests: list, with_dollars: bool) -> Stage:
    if not with_dollars:
        return Stage(name, len(requests))
    tokens_in, tokens_out, cost = dollars(requests)
    return Stage(name, len(requests), tokens_in, tokens_out, cost)


def plan_stages(search: Search, start_config, with_dollars: bool = True) -> list[Stage]:
    """The stages of the whole tune: rung 0 exactly, later rungs at most (their survivors' costliest configs), and
    the test part."""
    ev: Evaluator = search.evaluator
    sizes = search.rung_sizes()
    select = shuffled(search.parts.select, search.spec.seed)
    stages = [_stage(f"rung 0: {len(search.candidates)} candidates x {sizes[0]} answers",
                     search.requests(search._work(search.candidates, select[:sizes[0]])), with_dollars)]
    per_config: dict[str, float] = {}
    for cand in search.candidates:
        if cand.config_id not in per_config:
            reqs = Ledger(set(ev.ledger.seen)).new(ev.requests(cand.config, "select", select[:sizes[0]]))
            per_config[cand.config_id] = len(reqs) / max(1, sizes[0])
    alive = len(search.candidates)
    scale = (stages[0].input_tokens, stages[0].output_tokens, stages[0].cost_usd, max(1, stages[0].calls))
    for index in range(1, len(sizes)):
        alive = max(1, math.ceil(alive / search.spec.eta))
        costly = sorted(per_config.values(), reverse=True)[:alive]
        calls = math.ceil(sum(costly) * (sizes[index] - sizes[index - 1]))
        share = calls / scale[3]
        stages.append(Stage(f"rung {index}: {alive} candidates x {sizes[index]} answers (at most)", calls,
                            round(scale[0] * share), round(scale[1] * share), scale[2] * share))
        if alive == 1:
            break
    test = []
    configs = {c.config_id: c.config for c in search.candidates}
    costliest = max(configs.values(), key=lambda c: len(ev.requests(c, "test", search.parts.test)))
    for config in {id(start_config): start_config, id(costliest): costliest}.values():
        test += ev.requests(config, "test", search.parts.test)
    stages.append(_stage(f"test: start and winner x {len(search.parts.test)} answers (at most)",
                         Ledger(set(ev.ledger.seen)).new(test), with_dollars))
    return stages


def check_budget(search: Search, start, where: str, extra: int = 0) -> int:
    """The calls kept for the test part; raises TuneError when max_calls cannot cover one candidate on the first
    rung plus the test part, or the whole first rung."""
    reserve = test_reserve(search, start.config)
    first = shuffled(search.parts.select, search.spec.seed)[:search.rung_sizes()[0]]
    one = len(search.requests(search._work([start], first)))
    rung = len(search.requests(search._work(search.candidates, first)))
    left = search.budget.left()
    if one + reserve + extra > left:
        raise TuneError(f"{where}: [tune] max_calls: {search.budget.max_calls} calls cannot cover one candidate: "
                        f"{one} calls on the first rung's {len(first)} answers, {reserve} for the test part"
                        + (f", {extra} for proposals" if extra else "") + f" ({left} left)")
    if rung + reserve + extra > left:
        raise TuneError(f"{where}: [tune] max_calls: {search.budget.max_calls} calls cannot cover the first rung "
                        f"({rung} calls: {len(search.candidates)} candidates x {len(first)} answers) and the test "
                        f"part ({reserve}); raise max_calls or try fewer candidates")
    return reserve
