"""One shape for a verdict as the adapters hand it on, whichever face produced it.

``run`` / ``evaluate`` leave :class:`~groundjudge.types.ResultRecord` lines (with the header's
:class:`~groundjudge.types.JudgeSpec`), ``groundjudge.judge`` returns a ``JudgeVerdict``, the pytest plugin a
``GateVerdict``, and a judge itself a :class:`~groundjudge.types.JudgeResult` or
:class:`~groundjudge.types.Verdict`. :func:`view_of` reads any of them into a :class:`VerdictView`;
:func:`explanation` is the text both the OpenTelemetry event and the MLflow feedback carry.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from groundjudge.types import ClaimVerdict, JudgeResult, JudgeSpec, LLMCall, ResultRecord, Verdict


class VerdictView(BaseModel):
    """A verdict with the judge that gave it and the example it is about, as the adapters report it."""

    model_config = ConfigDict(frozen=True)
    example_id: str = Field(description="The judged example's id.")
    judge: str = Field(description="The judge's name (its spec, e.g. 'quip:n=21').")
    kind: str = Field(description="The judge's kind (quip, cosine, claims, ...).")
    model: str | None = Field(default=None, description="The model(s) it called or loaded, comma-joined; None when "
                                                        "it has none (quip).")
    template_hashes: tuple[str, ...] = Field(default=(), description="Content hashes of the prompts it rendered.")
    label: str = Field(description="grounded, ungrounded or abstain.")
    score: float | None = None
    threshold: float | None = None
    abstain_reason: str | None = None
    path: str = Field(description="What produced the verdict (llm:<model>, local:..., fallback:...).")
    claims: tuple[ClaimVerdict, ...] = ()
    meta: dict[str, Any] = Field(default_factory=dict, description="The example's meta (trace_id, span_id, ...).")


def _unique(values: Any) -> tuple[str, ...]:
    """The non-empty values, first occurrence first."""
    return tuple(dict.fromkeys(v for v in values if v))


def _model(calls: tuple[LLMCall, ...], spec: JudgeSpec | None) -> str | None:
    """The models the calls went to, else the judge's model setting."""
    models = _unique(call.model for call in calls)
    if models:
        return ",".join(models)
    setting = (spec.settings.get("model") if spec else None)
    return str(setting) if setting else None


def _from_result(result: JudgeResult, judge: str, spec: JudgeSpec | None, meta: dict[str, Any]) -> dict[str, Any]:
    """The fields of a judge's result (its verdict, calls and the judge's header entry)."""
    verdict = result.verdict
    hashes = _unique(call.template_hash for call in result.calls) or \
        (tuple(t.hash for t in spec.templates.values()) if spec else ())
    return dict(example_id=verdict.example_id, judge=judge, kind=spec.name if spec else judge.split(":")[0],
                model=_model(result.calls, spec), template_hashes=hashes, label=verdict.label, score=verdict.score,
                threshold=verdict.threshold, abstain_reason=verdict.abstain_reason, path=verdict.path,
                claims=verdict.claims, meta=meta)


def view_of(verdict: Any, judge: str | None = None, spec: JudgeSpec | None = None,
            meta: dict[str, Any] | None = None) -> VerdictView:
    """Any verdict groundjudge hands out, as a :class:`VerdictView`.

    Takes a ``ResultRecord`` (with ``spec``: its judge's header entry), a pytest ``GateVerdict``, the API's
    ``JudgeVerdict``, a ``JudgeResult`` or a bare ``Verdict`` (then ``judge`` names the judge), or a
    ``VerdictView``. ``meta`` adds to the example's meta (``trace_id`` / ``span_id`` parent an OTel event).
    """
    extra = dict(meta or {})
    if isinstance(verdict, VerdictView):
        return verdict.model_copy(update={"meta": {**verdict.meta, **extra}}) if extra else verdict
    if isinstance(verdict, ResultRecord):
        return VerdictView(**_from_result(verdict.result, judge or verdict.judge, spec,
                                          {**verdict.example.meta, **extra}))
    if hasattr(verdict, "example") and hasattr(verdict, "result") and hasattr(verdict, "spec"):   # GateVerdict
        fields = _from_result(verdict.result, judge or verdict.judge, spec or verdict.spec,
                              {**verdict.example.meta, **extra})
        return VerdictView(**{**fields, "example_id": verdict.test})
    if isinstance(verdict, JudgeResult):
        return VerdictView(**_from_result(verdict, judge or verdict.verdict.path, spec, extra))
    if isinstance(verdict, Verdict):
        return VerdictView(**_from_result(JudgeResult(verdict=verdict), judge or verdict.path, spec, extra))
    if hasattr(verdict, "calls") and hasattr(verdict, "judge") and hasattr(verdict, "label"):   # JudgeVerdict
        name = judge or verdict.judge
        return VerdictView(example_id=str(extra.get("example_id", "answer")), judge=name,
                           kind=spec.name if spec else name.split(":")[0], model=_model(tuple(verdict.calls), spec),
                           template_hashes=_unique(call.template_hash for call in verdict.calls), label=verdict.label,
                           score=verdict.score, threshold=verdict.threshold, abstain_reason=verdict.abstain_reason,
                           path=verdict.path, claims=tuple(verdict.claims), meta=extra)
    raise TypeError(f"not a groundjudge verdict: {type(verdict).__name__} (pass a ResultRecord, JudgeVerdict, "
                    "GateVerdict, JudgeResult or Verdict)")


def unsupported_claims(view: VerdictView) -> list[ClaimVerdict]:
    """The claims the judge did not find supported, in answer order."""
    return [claim for claim in view.claims if claim.label != "supported"]


def explanation(view: VerdictView) -> str:
    """Why: the abstention's reason, or the unsupported claims with each one's reason (else that all are supported).

    One line per unsupported claim: ``- [label] claim text: reason``.
    """
    if view.label == "abstain":
        return f"abstained: {view.abstain_reason}"
    score = "" if view.score is None else f" (score {view.score:.3f}" + \
        ("" if view.threshold is None else f", threshold {view.threshold:.3f}") + ")"
    lines = [f"{view.label}{score} by {view.judge}"]
    for claim in unsupported_claims(view):
        reason = f": {claim.reason}" if claim.reason else ""
        lines.append(f"- [{claim.label}] {claim.claim.text}{reason}")
    if view.claims and len(lines) == 1:
        lines.append("every claim is supported")
    return "\n".join(lines)
