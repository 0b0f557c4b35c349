"""The winner as an experiment file that ``groundjudge run`` uses as it is: the data of the tune file and one
judge table with the winner's settings, its calibrated threshold frozen, paths relative to the new file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from groundjudge.experiment import Experiment
from groundjudge.judges.config import JudgeConfig

WINNER_FILE = "winner.toml"


def toml_value(value: Any) -> str:
    """A TOML value for a setting: strings, numbers, booleans, arrays and inline tables."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML for {type(value).__name__}")


def _relative(path: str, folder: Path) -> str:
    return os.path.relpath(Path(path).resolve(), folder.resolve())


def write_winner(out: Path, experiment: Experiment, config: JudgeConfig, threshold: float | None,
                 comment: str) -> Path:
    """Write ``out/winner.toml`` (the winner's judge as ``[judges.tuned]``); returns its path."""
    settings = {k: v for k, v in config.settings.items() if v is not None}
    for key in ("prompts", "demos"):
        if isinstance(settings.get(key), str):
            settings[key] = _relative(settings[key], out)
    if threshold is not None:
        settings["threshold"] = round(float(threshold), 6)
    data = experiment.data.model_dump(exclude_defaults=True, exclude={"calibrate_on", "calibrate_sample"})
    data["files"] = [_relative(f, out) for f in experiment.data.files]
    lines = [f"# {line}" for line in comment.splitlines()] + ["", "[data]"]
    lines += [f"{k} = {toml_value(v)}" for k, v in data.items() if v is not None]
    lines += ["", "[judges.tuned]", f"kind = {toml_value(config.kind)}"]
    lines += [f"{k} = {toml_value(v)}" for k, v in settings.items()]
    path = out / WINNER_FILE
    out.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
