"""The tune state file (``tune_state.jsonl``): one flushed line per answer judged by a candidate, so that a
resumed tune judges nothing twice and starts its budget from the calls already made.

The first line is the plan (its hash covers the data parts, the candidates and the seed); a resumed tune with
another plan is refused. Every other line is a :class:`Judged` answer: a candidate's judge config, the part, the
example, the verdict and score, and the calls it cost.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import BaseModel, Field

from groundjudge.errors import UsageError
from groundjudge.types import JudgeResult

STATE_FILE = "tune_state.jsonl"


class Judged(BaseModel):
    """One answer judged by one judge config during a tune."""

    config: str = Field(description="The judge config's id (candidates differing only in calibration share it).")
    part: str = Field(description="fit, select, test, content_free or proposer.")
    example: str
    label: str = Field(description="The judge's verdict (grounded / ungrounded / abstain).")
    score: float | None = None
    abstain_reason: str | None = None
    calls: int = Field(default=0, description="LLM calls made (cached replies not counted).")
    cost_usd: float = Field(default=0.0, description="$ of the calls made.")
    answer_cost_usd: float = Field(default=0.0, description="$ of every call of the answer, cached or not.")
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def complete(self) -> bool:
        """False when the budget cut the answer short (it is judged again on resume, from the cache)."""
        return not (self.abstain_reason or "").startswith("budget")


def judged(config: str, part: str, example_id: str, result: JudgeResult) -> Judged:
    """The state line of one result."""
    made = [c for c in result.calls if not c.cached and c.attempts > 0]
    verdict = result.verdict
    return Judged(config=config, part=part, example=example_id, label=verdict.label, score=verdict.score,
                  abstain_reason=verdict.abstain_reason, calls=len(made), cost_usd=sum(c.cost_usd for c in made),
                  answer_cost_usd=sum(c.cost_usd for c in result.calls),
                  input_tokens=sum(c.input_tokens for c in result.calls),
                  output_tokens=sum(c.output_tokens for c in result.calls))


class TuneState:
    """The state file of a tune folder: what was judged, by which config, at what cost."""

    def __init__(self, folder: Path, plan_hash: str, resume: bool):
        self.path = folder / STATE_FILE
        self.results: dict[tuple[str, str, str], Judged] = {}
        self.spent_calls = 0
        self.spent_usd = 0.0
        self.calls_by_config: dict[str, int] = {}
        if self.path.exists() and self.path.stat().st_size:
            if not resume:
                raise UsageError(f"{self.path} exists: pass --resume to continue that tune, or another --out")
            self._load(plan_hash)
        else:
            folder.mkdir(parents=True, exist_ok=True)
            self._append({"kind": "plan", "plan": plan_hash})

    def _load(self, plan_hash: str) -> None:
        lines = self.path.read_text(encoding="utf-8").splitlines()
        first = json.loads(lines[0])
        if first.get("plan") != plan_hash:
            raise UsageError(f"{self.path} was made by another plan (the data, its parts, the candidates or the seed changed); "
                             "use another --out")
        for line in lines[1:]:
            try:
                entry = Judged.model_validate_json(line)
            except ValueError:   # a torn last line of a stopped tune
                continue
            self._count(entry)

    def _count(self, entry: Judged) -> None:
        self.spent_calls += entry.calls
        self.spent_usd += entry.cost_usd
        self.calls_by_config[entry.config] = self.calls_by_config.get(entry.config, 0) + entry.calls
        if entry.complete:
            self.results[(entry.config, entry.part, entry.example)] = entry

    def _append(self, data: dict) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(data) + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    def add(self, entry: Judged) -> None:
        """Record one judged answer (flushed)."""
        self._append(entry.model_dump(mode="json"))
        self._count(entry)

    def get(self, config: str, part: str, example_id: str) -> Judged | None:
        """The complete result of that config on that answer, if judged."""
        return self.results.get((config, part, example_id))
