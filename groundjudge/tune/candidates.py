"""The candidates of a tune: the judge to tune with every combination of its levers' values.

A candidate is a judge config (prompt folder, demonstrations, the claims judge's aggregation) and a calibration
(:mod:`groundjudge.tune.calibration`). Candidates that differ only in calibration share their judge config, so
they share every LLM call; configs that render the same requests (the claims judge's aggregations) share them
through the call cache.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from groundjudge.judges.config import JudgeConfig
from groundjudge.tune.spec import Method, TuneSpec


class Candidate(BaseModel):
    """One point of the search: a judge config and a calibration."""

    model_config = ConfigDict(frozen=True)
    id: str = Field(description="config id : calibration")
    name: str = Field(description="What differs from the judge as given, and the calibration.")
    config_id: str
    config: JudgeConfig
    method: Method
    levers: dict[str, Any] = Field(default_factory=dict, description="The lever values that differ from the start.")


def config_id(config: JudgeConfig) -> str:
    """A short hash of a judge config's kind and settings (its name left out)."""
    payload = json.dumps({"kind": config.kind, "settings": config.settings}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:12]


def is_score_judge(config: JudgeConfig) -> bool:
    """Whether the judge's verdict is its score against a threshold (what calibration changes)."""
    judge = config.build()
    return hasattr(judge, "threshold") and bool(getattr(judge, "uses_threshold", True))


def start_method(config: JudgeConfig) -> Method:
    """How ``groundjudge run`` would use the judge: a threshold fitted on dev unless one is given."""
    return "threshold" if is_score_judge(config) and "threshold" not in config.settings else "none"


def _options(spec: TuneSpec, proposals: list[str]) -> list[list[tuple[dict, dict]]]:
    """Per lever, its (settings update, label) options; the first of each is 'as given'."""
    prompts: list[tuple[dict, dict]] = [({}, {})]
    if spec.instructions:
        prompts += [({"prompts": folder}, {"prompts": Path(folder).name}) for folder in spec.instructions.prompts]
    prompts += [({"prompts": folder}, {"proposal": Path(folder).name}) for folder in proposals]
    demos: list[tuple[dict, dict]] = [({}, {})]
    if spec.demos:
        for strategy in spec.demos.strategies:
            seeds = spec.demos.seeds if strategy == "balanced" else spec.demos.seeds[:1]
            for k, seed in itertools.product(spec.demos.k, seeds):
                chosen = {"demo_strategy": strategy, "k": k, "demo_seed": seed}
                demos.append(({"__demos__": chosen}, {"demos": f"{strategy} k={k}"
                                                              + (f" seed={seed}" if strategy == "balanced" else "")}))
    claims: list[tuple[dict, dict]] = [({}, {})]
    if spec.claims:
        for agg, credit in itertools.product(spec.claims.aggregate or [None], spec.claims.partial_credit or [None]):
            update = {k: v for k, v in (("aggregate", agg), ("partial_credit", credit)) if v is not None}
            if update:
                claims.append((update, dict(update)))
    return [prompts, demos, claims]


def _config(base: JudgeConfig, update: dict, pool: Path | None) -> JudgeConfig:
    from groundjudge.judges.demonstrations import with_demonstrations

    demos = update.pop("__demos__", None)
    config = JudgeConfig.create(base.kind, name=base.name, where=base.source, **{**base.settings, **update})
    if demos is not None and pool is not None:
        config = with_demonstrations(config, pool, strategy=demos["demo_strategy"], k=demos["k"],
                                     seed=demos["demo_seed"], name=base.name)
    return config


def _label(levers: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in levers.items()) or "as given"


def build_candidates(base: JudgeConfig, spec: TuneSpec, pool: Path | None,
                     proposals: list[str] = ()) -> tuple[Candidate, list[Candidate]]:
    """The starting candidate (the judge as given, calibrated as ``groundjudge run`` would) and every candidate
    (the start first; a seeded sample of ``max_candidates`` when the levers give more)."""
    methods: list[Method] = ["none"]
    first = start_method(base)
    if is_score_judge(base):
        methods = list(dict.fromkeys([first, *(spec.calibration.methods if spec.calibration else [])]))
    everything: list[Candidate] = []
    for combo in itertools.product(*_options(spec, list(proposals))):
        update: dict = {}
        levers: dict = {}
        for settings, label in combo:
            update.update(settings)
            levers.update(label)
        config = _config(base, dict(update), pool)
        cid = config_id(config)
        for method in methods:
            shown = {**levers, **({"calibration": method} if method != first or levers else {})}
            everything.append(Candidate(id=f"{cid}:{method}", name=_label(shown) if shown else "start",
                                        config_id=cid, config=config, method=method,
                                        levers={**levers, "calibration": method}))
    start = everything[0]
    rest = everything[1:]
    if len(everything) > spec.max_candidates:
        keep = sorted(random.Random(spec.seed).sample(range(len(rest)), spec.max_candidates - 1))
        rest = [rest[i] for i in keep]
    return start, [start, *rest]
