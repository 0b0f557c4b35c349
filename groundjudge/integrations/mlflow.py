"""MLflow: ``Groundedness``, an MLflow GenAI scorer that judges with any groundjudge judge.

```python
import mlflow
from groundjudge.integrations.mlflow import Groundedness

mlflow.genai.evaluate(data=[{"inputs": {"question": "..."}, "outputs": "...",
                             "expectations": {"context": ["..."]}}],
                      scorers=[Groundedness(judge="quip")])
```

MLflow calls it as it calls every scorer (``inputs``, ``outputs``, ``expectations``, ``trace``). The documents come
from ``expectations["context"]`` (one text or a list), else from the trace's RETRIEVER spans (their outputs:
documents with ``page_content``, or texts). It returns ``Feedback(value, rationale)``: ``"yes"``/``"no"`` (grounded or
not; ``report="score"``: the score in [0, 1]), the rationale naming the unsupported claims and their reasons, the
score, threshold, judge and path in the metadata; an abstention is a Feedback with an error (its reason).

Needs the ``[mlflow]`` extra (MLflow 3); importing this module does not import MLflow: the scorer class is made on
first use of ``Groundedness``.
"""

from __future__ import annotations

from typing import Any

from groundjudge.integrations.extras import lazy_class, require

ANSWER_KEYS = ("response", "answer", "output", "outputs", "content", "text")
"""Keys an ``outputs`` dict may hold the answer under, in the order they are tried."""

QUESTION_KEYS = ("question", "query", "input", "inputs", "request", "prompt")
"""Keys an ``inputs`` dict may hold the question under, in the order they are tried."""


def _text_of(value: Any, keys: tuple[str, ...]) -> str | None:
    """A value as text: a string itself, a dict's first known key, a chat reply's last message, else None."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in keys:
            if key in value and value[key] is not None:
                return _text_of(value[key], keys)
        if "choices" in value:   # an OpenAI chat completion
            return _text_of(value["choices"][0].get("message", {}).get("content"), keys)
        if "messages" in value and value["messages"]:
            return _text_of(value["messages"][-1], keys)
        return None
    if isinstance(value, list) and value:
        return _text_of(value[-1], keys)
    return str(value)


def answer_text(outputs: Any) -> str | None:
    """The answer an MLflow ``outputs`` value holds (a string, or a dict/chat reply holding one)."""
    return _text_of(outputs, ANSWER_KEYS)


def question_text(inputs: Any) -> str | None:
    """The question an MLflow ``inputs`` value holds, if any."""
    return _text_of(inputs, QUESTION_KEYS)


def _document_text(document: Any) -> str | None:
    """One retrieved document's text: a string, ``page_content`` / ``content`` / ``text`` of a dict or object."""
    if isinstance(document, str):
        return document
    for key in ("page_content", "content", "text"):
        value = document.get(key) if isinstance(document, dict) else getattr(document, key, None)
        if isinstance(value, str):
            return value
    return None


def retrieved_documents(trace: Any) -> list[str]:
    """The texts of the documents every RETRIEVER span of an MLflow trace returned, in span order."""
    if trace is None:
        return []
    documents: list[str] = []
    for span in trace.search_spans(span_type="RETRIEVER"):
        outputs = span.outputs
        if isinstance(outputs, dict):
            outputs = outputs.get("documents", [outputs])
        for document in outputs if isinstance(outputs, list) else [outputs]:
            text = _document_text(document) if document is not None else None
            if text and text.strip():
                documents.append(text)
    return documents


def root_span_io(trace: Any) -> tuple[Any, Any]:
    """(inputs, outputs) of an MLflow trace's root span: what the app was asked and answered."""
    if trace is None:
        return None, None
    root = next((span for span in trace.data.spans if span.parent_id is None), None)
    return (root.inputs, root.outputs) if root is not None else (None, None)


def context_of(expectations: dict[str, Any] | None, trace: Any) -> list[str]:
    """The documents to judge against: ``expectations["context"]`` (text or list), else the trace's retrievals."""
    given = (expectations or {}).get("context")
    if isinstance(given, str):
        given = [given]
    documents = [_document_text(d) for d in given or []]
    documents = [d for d in documents if d and d.strip()]
    return documents or retrieved_documents(trace)


def feedback_fields(verdict: Any, report: str) -> dict[str, Any]:
    """``Feedback`` keywords for a verdict (a ``JudgeVerdict``): value or error, rationale, metadata (strings)."""
    from groundjudge.integrations.verdicts import explanation, view_of

    view = view_of(verdict)
    metadata = {"judge": view.judge, "label": view.label, "path": view.path}
    metadata.update({key: f"{value:.6g}" for key, value in (("score", view.score), ("threshold", view.threshold))
                     if value is not None})
    fields: dict[str, Any] = {"rationale": explanation(view), "metadata": metadata}
    if view.label == "abstain":
        fields["error"] = ("ABSTAIN", f"{view.judge} abstained: {view.abstain_reason}")
    elif report == "score":
        fields["value"] = view.score
    else:
        fields["value"] = "yes" if view.label == "grounded" else "no"
    return fields


def _make_scorer_class() -> type:
    """The ``Groundedness`` class, an MLflow GenAI ``Scorer`` subclass (imports MLflow)."""
    scorers = require("mlflow.genai.scorers", "mlflow")
    entities = require("mlflow.entities", "mlflow")

    class Groundedness(scorers.Scorer):
        """Is the output grounded in the documents (``expectations["context"]``, else the trace's retrievals)?

        ``judge``: any groundjudge judge spec (``"quip"``, ``"cosine"``, ``"claims:model=gpt-4o-mini"``...);
        ``settings``: its settings as keywords; ``report``: ``"label"`` (yes/no) or ``"score"``.
        """

        name: str = "groundedness"
        judge: str = "claims"
        settings: dict[str, Any] = {}
        report: str = "label"

        def __call__(self, *, inputs: Any = None, outputs: Any = None, expectations: dict[str, Any] | None = None,
                     trace: Any = None) -> Any:
            """Judge the output against the documents; a Feedback (an error Feedback when it cannot)."""
            import groundjudge

            source = entities.AssessmentSource(source_type="CODE", source_id=f"groundjudge:{self.judge}")
            traced_inputs, traced_outputs = root_span_io(trace)
            answer = answer_text(outputs if outputs is not None else traced_outputs)
            question = question_text(inputs if inputs is not None else traced_inputs)
            documents = context_of(expectations, trace)
            missing = "no documents (expectations['context'] or a RETRIEVER span)" if not documents else \
                "no answer in the outputs" if answer is None else None
            if missing:
                return entities.Feedback(name=self.name, source=source, error=entities.AssessmentError(
                    error_code="MISSING_INPUT", error_message=missing))
            verdict = groundjudge.judge(answer, documents, judge=self.judge, question=question, **self.settings)
            fields = feedback_fields(verdict, self.report)
            if "error" in fields:
                code, message = fields.pop("error")
                fields["error"] = entities.AssessmentError(error_code=code, error_message=message)
            return entities.Feedback(name=self.name, source=source, **fields)

    Groundedness.__module__ = __name__
    return Groundedness


__getattr__ = lazy_class(__name__, "Groundedness", _make_scorer_class)
"""``Groundedness``: made (and MLflow imported) on first use, so importing this module stays light."""
