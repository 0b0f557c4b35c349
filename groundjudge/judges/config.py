"""Typed judge configs: one pydantic model per judge kind, the single check of every judge setting.

A judge kind's settings are the init fields of its dataclass (its defaults are
the judge's defaults); :func:`config_model` turns them into a frozen pydantic
model that forbids unknown keys. Every way of naming a judge goes through it:
the CLI spec string (``quip:n=21,agg=min``), an experiment file's judge table,
the Python API, ``groundjudge judges`` and the records header. Spec strings are
text, read leniently (``n=21`` is the integer 21, ``[A, B]`` a list, ``{claims:model=M,against=context}``
an inner judge); experiment files and Python calls are typed, read strictly (``n = "21"`` is an error).
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from groundjudge.judges.registry import SpecError, judge_class
from groundjudge.paths import portable_path


class SettingError(SpecError):
    """A judge setting that is unknown or has a bad value; ``key`` names it (None: the judge kind itself)."""

    def __init__(self, message: str, key: str | None = None):
        super().__init__(message)
        self.key = key


def setting_fields(cls: type) -> list[dataclasses.Field]:
    """The fields of a judge dataclass that are settings (not runtime objects such as the LLM service)."""
    return [f for f in dataclasses.fields(cls) if f.init and not f.metadata.get("runtime")]


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return ...


@cache
def config_model(kind: str) -> type[BaseModel]:
    """The pydantic model of a judge kind's settings (unknown keys forbidden, values typed as the judge's)."""
    cls = judge_class(kind)
    hints = typing.get_type_hints(cls, include_extras=True)
    fields = {f.name: (hints[f.name], Field(default=_default(f))) for f in setting_fields(cls)}
    doc = (cls.__doc__ or kind).strip().splitlines()[0]
    return create_model(f"{cls.__name__}Config", __config__=ConfigDict(extra="forbid", frozen=True),
                        __doc__=f"Settings of the {kind!r} judge: {doc}", **fields)


def _choices(annotation: Any) -> tuple | None:
    """The allowed values of a Literal setting (also inside ``X | None``), else None."""
    if typing.get_origin(annotation) is typing.Literal:
        return typing.get_args(annotation)
    for option in typing.get_args(annotation):
        if typing.get_origin(option) is typing.Literal:
            return typing.get_args(option)
    return None


def _options(annotation: Any) -> tuple:
    union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    return typing.get_args(annotation) if union else (annotation,)


def _is_list(annotation: Any) -> bool:
    return any(typing.get_origin(o) in (tuple, list) for o in _options(annotation))


def _error(kind: str, err: ValidationError, model: type[BaseModel], where: str) -> SettingError:
    """The first validation error as one line naming the key and, for a choice, the valid ones."""
    first = err.errors()[0]
    key = str(first["loc"][0]) if first["loc"] else None
    if first["type"] == "extra_forbidden":
        return SettingError(f"{where}: judge {kind!r} has no setting {key!r}; settings: "
                            f"{', '.join(model.model_fields)}", key)
    field = model.model_fields.get(key or "")
    choices = _choices(field.annotation) if field else None
    hint = f" (one of: {', '.join(map(str, choices))})" if choices else ""
    given = first.get("input")
    return SettingError(f"{where}: setting {key!r} of judge {kind!r}: {first['msg']}{hint}, got {given!r}", key)


def validate_settings(kind: str, values: dict[str, Any], where: str, strict: bool = True) -> dict[str, Any]:
    """The given settings, checked and typed by the kind's config model (only the keys given are returned).

    ``strict`` (experiment files, Python) rejects a value of the wrong type; otherwise (spec strings) text is
    converted (``"21"`` to 21). Raises SettingError naming ``where``, the key and the valid choices.
    """
    model = config_model(kind)
    try:
        if strict:  # JSON mode: a list stands for a tuple, an int for a float, nothing else is converted
            checked = model.model_validate_json(json.dumps(values, default=str), strict=True)
        else:
            checked = model.model_validate(values)
    except ValidationError as err:
        raise _error(kind, err, model, where) from None
    return {key: getattr(checked, key) for key in values}


def split_top(text: str, sep: str = ",") -> list[str]:
    """Split on ``sep`` outside ``[...]`` and ``{...}``; an unbalanced bracket is a SpecError."""
    parts, depth, current = [], 0, []
    for char in text:
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth < 0:
                raise SpecError(f"judge spec {text!r}: unbalanced {char!r}")
        if char == sep and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    if depth:
        raise SpecError(f"judge spec {text!r}: unclosed bracket")
    parts.append("".join(current))
    return parts


def unbrace(value: str) -> str:
    """``{inner spec}`` as the inner spec's text; any other value unchanged."""
    return value[1:-1].strip() if value.startswith("{") and value.endswith("}") else value


def parse_spec(text: str) -> tuple[str, dict[str, Any]]:
    """Split ``name:key=value,...`` into the name and raw settings: text, ``[a, b]`` as a list of text,
    ``{inner spec}`` as the inner spec's text."""
    name, _, rest = text.partition(":")
    settings: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in split_top(rest))):
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise SpecError(f"judge spec {text!r}: setting {part!r} is not key=value")
        value = value.strip()
        if value.startswith("[") and value.endswith("]"):
            settings[key.strip()] = [unbrace(v.strip()) for v in split_top(value[1:-1]) if v.strip()]
        else:
            settings[key.strip()] = unbrace(value)
    return name.strip(), settings


def _spec_values(kind: str, raw: dict[str, Any], text: str) -> dict[str, Any]:
    """Spec-string text made ready for lenient validation: ``none`` for an optional setting, one item for a list."""
    fields = config_model(kind).model_fields
    ready = {}
    for key, value in raw.items():
        annotation = fields[key].annotation if key in fields else None
        if isinstance(value, str) and annotation is not None:
            if value.lower() in ("none", "null") and type(None) in _options(annotation):
                value = None
            elif _is_list(annotation):
                if ";" in value:
                    raise SettingError(f"{text}: setting {key!r} is a list: write it [A, B] (the ';' lists "
                                       "are gone)", key)
                value = [value] if value else []
        ready[key] = value
    return ready


class JudgeConfig(BaseModel):
    """One judge of a run: the name its records are filed under, its kind and the settings given to it."""

    model_config = ConfigDict(frozen=True)
    name: str = Field(description="Name in records, tables and reports (a spec text, or an experiment's name).")
    kind: str = Field(description="The judge kind (see `groundjudge judges`).")
    settings: dict[str, Any] = Field(default_factory=dict, description="The settings given (typed); the rest "
                                                                        "are the kind's defaults.")
    source: str | None = Field(default=None, description="Where it was defined, e.g. 'exp.toml:12'.")

    @classmethod
    def from_spec(cls, text: str) -> JudgeConfig:
        """The config of a spec string ``name:key=value,...`` (the name is the text itself)."""
        kind, raw = parse_spec(text)
        judge_class(kind)
        settings = validate_settings(kind, _spec_values(kind, raw, text), f"judge spec {text!r}", strict=False)
        return cls(name=text, kind=kind, settings=settings, source="--judge")

    @classmethod
    def create(cls, kind: str, name: str | None = None, where: str | None = None, **settings: Any) -> JudgeConfig:
        """A typed config from Python or an experiment file (values checked strictly)."""
        judge_class(kind)
        checked = validate_settings(kind, settings, where or f"judge {name or kind!r}", strict=True)
        return cls(name=name or spec_text(kind, checked), kind=kind, settings=checked, source=where)

    @classmethod
    def from_table(cls, table: dict[str, Any], where: str | None = None) -> JudgeConfig:
        """A typed config from a table: ``{"kind": ..., "name": ... (optional), setting: value, ...}``."""
        values = dict(table)
        kind = values.pop("kind", None)
        if not isinstance(kind, str):
            raise SpecError(f"{where or 'judge'} {table!r} needs kind = \"<judge>\"")
        name = values.pop("name", None)
        return cls.create(kind, name=name, where=where, **values)

    def build(self, **runtime: Any) -> Any:
        """The judge itself; ``runtime`` objects (the run's LLM service) go to judges with such a field."""
        judge_cls = judge_class(self.kind)
        wanted = {f.name for f in dataclasses.fields(judge_cls) if f.metadata.get("runtime")}
        return judge_cls(**self.settings, **{k: v for k, v in runtime.items() if k in wanted})


def spec_text(kind: str, settings: dict[str, Any]) -> str:
    """The spec string of a kind and settings (``quip:n=11``), the default name of a judge."""
    def text(value: Any) -> str:
        if isinstance(value, (list, tuple)):
            return "[" + ", ".join(map(text, value)) + "]"
        if isinstance(value, dict):
            inner = dict(value)
            return "{" + spec_text(inner.pop("kind"), inner) + "}"
        return "none" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
    body = ",".join(f"{k}={text(v)}" for k, v in settings.items())
    return f"{kind}:{body}" if body else kind


def recorded_settings(judge: Any) -> dict[str, Any]:
    """A judge's settings as the records header keeps them: JSON values, local paths made portable."""
    values = {}
    for f in setting_fields(type(judge)):
        value = getattr(judge, f.name)
        if f.name in ("prompts", "demos", "weights") and value:   # weights: a stack's saved fit
            value = portable_path(value)
        values[f.name] = list(value) if isinstance(value, tuple) else value
    return values
