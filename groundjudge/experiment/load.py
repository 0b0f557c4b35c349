"""Experiment files: the data and the named judges of a run, in TOML, checked before any work.

```toml
[data]
files = ["legal_qa.jsonl"]          # relative to this file; plus format, split, sample, seed, ...

[judges.quip]
kind = "quip"
matrix = { n = [11, 21] }           # two judges: quip[n=11], quip[n=21]

[judges.claims]
kind = "claims"
model = "openai/gpt-4o-mini"
prompts = "prompts/strict"          # this judge's templates over the built-in ones
```

Every judge table is checked by its kind's typed config (:mod:`groundjudge.judges.config`); a matrix expands
into one judge per combination of its values (:mod:`groundjudge.experiment.matrix`). Every error is one line
naming the file, the line and the key.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from groundjudge.experiment.matrix import expand
from groundjudge.experiment.toml_lines import line_of
from groundjudge.judges import SpecError
from groundjudge.judges.config import JudgeConfig
from groundjudge.runs.engine_options import EngineSection

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

BUILT_IN = "built-in"
"""The ``prompts`` value (in a matrix, say) that means the built-in templates."""


class ExperimentError(ValueError):
    """A bad experiment file: the message names the file, the line and the key."""


class DataSection(BaseModel):
    """``[data]``: what is judged (paths relative to the experiment file)."""

    model_config = ConfigDict(extra="forbid")
    files: list[str] = Field(min_length=1, description="Data files or folders (format detected per file).")
    format: str | None = Field(default=None, description="Force this format for every file.")
    split: Literal["train", "dev", "test"] | None = Field(default=None, description="Evaluate only this split.")
    sample: int | None = Field(default=None, ge=1, description="A seeded random sample of this many examples.")
    seed: int = 0
    calibrate_on: list[str] | None = Field(default=None, description="Dev files to fit thresholds on.")
    calibrate_sample: int | None = Field(default=None, ge=1, description="Fit on a seeded sample of this many dev "
                                                                         "examples.")
    dev_fraction: float = Field(default=0.3, ge=0.0, lt=1.0)
    skip_invalid: bool = False


class RunSection(EngineSection):
    """``[run]``: where and how the run goes (every key can be overridden by the CLI flag of that name)."""

    model_config = ConfigDict(extra="forbid")
    out: str | None = Field(default=None, description="Run folder (relative to the current folder, as --out).")
    concurrency: int | None = Field(default=None, ge=1)
    max_cost: float | None = Field(default=None, ge=0.0)
    batch: bool | None = Field(default=None, description="Every LLM judge through the provider batch APIs.")
    batch_poll_s: float | None = Field(default=None, gt=0.0)
    batch_max_wait_s: float | None = Field(default=None, ge=0.0)
    prompts: str | None = Field(default=None, description="Template folder for every judge without its own.")
    cache_dir: str | None = None


class Experiment(BaseModel):
    """An experiment file read and checked: its data, run options and the expanded judges, in file order."""

    path: str
    data: DataSection
    run: RunSection = Field(default_factory=RunSection)
    judges: list[JudgeConfig]


def _fail(path: Path, text: str, key: tuple[str, ...] | list[str], message: str) -> ExperimentError:
    line = line_of(text, key) if key else None
    return ExperimentError(f"{path}:{line or 1}: {message}")


def _relative(base: Path, value: str) -> str:
    """A path written in the file, resolved against the file's folder (``~`` expanded)."""
    given = Path(value).expanduser()
    return str(given if given.is_absolute() else (base / given))


def _resolve_prompts(base: Path, value: Any) -> Any:
    if value == BUILT_IN:
        return None
    return _relative(base, value) if isinstance(value, str) else value


def _read(path: Path) -> tuple[str, dict[str, Any]]:
    if not path.is_file():
        raise ExperimentError(f"{path}: no such experiment file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ExperimentError(f"{path}: not UTF-8 ({err.reason} at byte {err.start})") from None
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        found = re.search(r"\(at line (\d+), column \d+\)", str(err))
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(err))
        if message.startswith("Cannot declare") or message.startswith("Cannot overwrite"):
            message += " (a judge name or key is given twice)"
        raise ExperimentError(f"{path}:{found.group(1) if found else 1}: not valid TOML: {message}") from None


def _section(path: Path, text: str, model: type[BaseModel], name: str, values: Any) -> BaseModel:
    if not isinstance(values, dict):
        raise _fail(path, text, (name,), f"[{name}] must be a table")
    try:
        return model.model_validate(values)
    except ValidationError as err:
        first = err.errors()[0]
        key = tuple(str(p) for p in first["loc"] if not isinstance(p, int))
        what = "unknown key" if first["type"] == "extra_forbidden" else first["msg"]
        fields = ", ".join(model.model_fields)
        raise _fail(path, text, (name, *key), f"[{name}] {'.'.join(key)}: {what}"
                    + (f"; keys: {fields}" if first["type"] == "extra_forbidden" else "")) from None


def _judges(path: Path, text: str, tables: Any) -> list[JudgeConfig]:
    if not isinstance(tables, dict) or not tables:
        raise _fail(path, text, ("judges",), "[judges] needs at least one judge table, e.g. [judges.quip] "
                                             'kind = "quip"')
    configs: list[JudgeConfig] = []
    names: dict[str, str] = {}
    for table_name, table in tables.items():
        where = ("judges", table_name)
        if not isinstance(table, dict):
            raise _fail(path, text, where, f"judges.{table_name} must be a table with kind = \"<judge>\"")
        settings = dict(table)
        kind = settings.pop("kind", table_name)
        matrix = settings.pop("matrix", None)
        if not isinstance(kind, str):
            raise _fail(path, text, (*where, "kind"), f"judges.{table_name}.kind must be a judge name")
        if "prompts" in settings:
            settings["prompts"] = _resolve_prompts(path.parent, settings["prompts"])
        if matrix is not None and (not isinstance(matrix, dict) or not matrix
                                   or not all(isinstance(v, list) and v for v in matrix.values())):
            raise _fail(path, text, (*where, "matrix"), f"judges.{table_name}.matrix must map settings to "
                                                        "non-empty arrays, e.g. matrix = { n = [11, 21] }")
        if matrix and "prompts" in matrix:
            matrix = {**matrix, "prompts": [_resolve_prompts(path.parent, v) for v in matrix["prompts"]]}
        if isinstance(settings.get("demos"), str):   # a demonstrations pool, relative to the file like prompts
            settings["demos"] = _relative(path.parent, settings["demos"])
        if isinstance(settings.get("weights"), str):   # a stacked judge's saved fit, relative to the file too
            settings["weights"] = _relative(path.parent, settings["weights"])
        if matrix and isinstance(matrix.get("demos"), list):
            matrix = {**matrix, "demos": [_relative(path.parent, v) if isinstance(v, str) else v
                                          for v in matrix["demos"]]}
        try:
            for name, values, varied in expand(table_name, settings, matrix or {}):
                source = f"{path}:{line_of(text, where) or 1}"
                config = JudgeConfig.create(kind, name=name, where=f"judges.{table_name}", **values)
                configs.append(config.model_copy(update={"source": source}))
                if name in names:
                    raise _fail(path, text, where, f"judge name {name!r} is given twice (also {names[name]})")
                names[name] = f"judges.{table_name}"
        except SpecError as err:
            key = getattr(err, "key", None)
            in_matrix = bool(matrix) and key in matrix
            located = (*where, "matrix", key) if in_matrix else (*where, key) if key else (*where, "kind")
            message = str(err)
            if in_matrix and "has no setting" in message:
                message = f"matrix over an unknown key: {message}"
            raise _fail(path, text, located, message) from None
    return configs


def load_experiment(path: str | Path, extra_sections: tuple[str, ...] = ()) -> Experiment:
    """Read and check an experiment file: data files exist, every judge's kind and settings are valid, matrices
    expand into uniquely named judges. Raises ExperimentError (file:line: message) on the first problem.
    ``extra_sections`` are further tables a verb reads itself (``[tune]`` for groundjudge tune)."""
    path = Path(path)
    text, doc = _read(path)
    known = ("data", "run", "judges", *extra_sections)
    unknown = sorted(set(doc) - set(known))
    if unknown:
        raise _fail(path, text, (unknown[0],), f"unknown section [{unknown[0]}]; sections: {', '.join(known)}")
    if "data" not in doc:
        raise ExperimentError(f"{path}:1: no [data] section (files = [...])")
    data = _section(path, text, DataSection, "data", doc["data"])
    for key in ("files", "calibrate_on"):
        resolved = []
        for given in getattr(data, key) or []:
            full = _relative(path.parent, given)
            if not Path(full).exists():
                raise _fail(path, text, ("data", key), f"[data] {key}: no such file or folder {given!r} "
                                                       f"(paths are relative to {path.parent or '.'})")
            resolved.append(full)
        if getattr(data, key) is not None:
            setattr(data, key, resolved)
    run = _section(path, text, RunSection, "run", doc.get("run", {}))
    for key in ("prompts", "cache_dir"):
        if getattr(run, key):
            setattr(run, key, _relative(path.parent, getattr(run, key)))
    return Experiment(path=str(path), data=data, run=run, judges=_judges(path, text, doc.get("judges")))
