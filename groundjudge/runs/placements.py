"""The run header's word on where each local judge's model runs: device and precision, and how ``dtype=auto``
chose it (the float32 agreement check, run once per machine and model, else read from its cache)."""

from __future__ import annotations

from collections.abc import Sequence

from groundjudge.consoles import console
from groundjudge.judges.composite import judge_parts
from groundjudge.local_nli.model import ModelUnavailable
from groundjudge.runs.runner import JudgeTask
from groundjudge.types import JudgeSpec


def runs_on(judge: object) -> str | None:
    """Where the local models of a judge (or of its inner judges) run; None for a judge without one. Loads
    them (a run does right after); a model that cannot load is left to the run to report."""
    notes = []
    for part in judge_parts(judge):
        describe = getattr(part, "runs_on", None)
        if describe is None:
            continue
        try:
            notes.append(describe())
        except ModelUnavailable:
            return None
    return "; ".join(note for note in notes if note) or None


def with_placements(tasks: Sequence[JudgeTask], specs: Sequence[JudgeSpec], engine: str = "local",
                    quiet: bool = False) -> list[JudgeSpec]:
    """The header entries with each local judge's ``runs_on``, printed once (Ray: each actor decides on its own
    machine, so the header says so instead of loading the models on the driver)."""
    out = []
    for task, spec in zip(tasks, specs):
        if engine == "ray":
            note = "chosen on each Ray worker's machine" if runs_on_any(task.judge) else None
        else:
            note = runs_on(task.judge)
        if note and not quiet:
            console.print(f"{spec.spec}: runs on {note}", markup=False, highlight=False, soft_wrap=True)
        out.append(spec.model_copy(update={"runs_on": note}) if note else spec)
    return out


def runs_on_any(judge: object) -> bool:
    """Whether a judge (or one of its inner judges) runs a local model."""
    return any(hasattr(part, "runs_on") for part in judge_parts(judge))
