"""Judge configs with demonstrations: one with a given set (what a search over demonstrations, ``groundjudge tune``,
builds for each candidate), and a recorded one whose pool file is gone (what a replay rebuilds)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from groundjudge.judges.config import JudgeConfig, spec_text
from groundjudge.judges.demonstrations.select import PER_ANSWER, Strategy
from groundjudge.types import DemonstrationRef

DEMO_SETTINGS = ("demos", "k", "demo_strategy", "demo_seed", "demo_ids", "demo_embedder")
"""The settings :func:`with_demonstrations` replaces."""


def with_demonstrations(config: JudgeConfig | str, pool: str | Path, strategy: Strategy | None = None,
                        k: int | None = None, seed: int | None = None, ids: Sequence[str] | None = None,
                        name: str | None = None) -> JudgeConfig:
    """``config`` (a JudgeConfig or spec string) with demonstrations from ``pool``: by ``strategy``/``k``/``seed``,
    or exactly the entries ``ids`` (strategy ``fixed``). Earlier demonstration settings are dropped; the name is
    the new spec text unless ``name`` is given. Settings are checked (and the pool read) when the judge is built."""
    base = JudgeConfig.from_spec(config) if isinstance(config, str) else config
    settings = {key: value for key, value in base.settings.items() if key not in DEMO_SETTINGS}
    settings["demos"] = str(pool)
    if ids is not None:
        settings["demo_ids"] = list(ids)
        settings["demo_strategy"] = "fixed"
    elif strategy is not None:
        settings["demo_strategy"] = strategy
    if k is not None:
        settings["k"] = k
    if seed is not None:
        settings["demo_seed"] = seed
    return JudgeConfig.create(base.kind, name=name or spec_text(base.kind, settings), where=base.source, **settings)


def rebuilt_settings(settings: dict[str, Any], refs: Sequence[DemonstrationRef], folder: Path) -> dict[str, Any]:
    """Recorded settings whose pool file is gone, made to show the same demonstrations from the pool lines the
    header keeps: the pool rebuilt under ``folder``, a fixed set named by its ids (per-answer selection keeps its
    strategy: the header holds the whole pool). Settings with no pool, or whose pool is there, are returned as
    they are."""
    demos = settings.get("demos")
    if not demos or Path(demos).is_file() or not refs:
        return settings
    lines = [json.dumps(ref.entry, ensure_ascii=False) for ref in refs]
    digest = hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()[:12]
    path = folder / f"demos-{digest}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    rebuilt = {**settings, "demos": str(path)}
    if (settings.get("demo_strategy") or ("fixed" if settings.get("demo_ids") else "balanced")) not in PER_ANSWER:
        rebuilt.update(demo_strategy="fixed", demo_ids=[ref.id for ref in refs])
    return rebuilt
