"""MLflow adapter (issue 37): ``Groundedness`` is an MLflow GenAI scorer; ``mlflow.genai.evaluate`` on a sqlite
store under a temporary folder logs its feedback (read back with the MlflowClient), with the documents from
``expectations["context"]`` or from a trace's RETRIEVER span, and an abstention as a Feedback with an error.

MLflow 3 pins pyarrow below the [pandas] extra's tested version, so these tests run in the integrations
environment, where all five adapters' extras install together with constraints/integrations.txt (see
docs/integrations/environment.md); elsewhere they are skipped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

mlflow = pytest.importorskip("mlflow", minversion="3.0")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

from mlflow.entities import Document, SpanType  # noqa: E402
from mlflow.tracking import MlflowClient  # noqa: E402

from conftest import ROOT  # noqa: E402
from groundjudge.integrations.mlflow import Groundedness, context_of  # noqa: E402

CONTEXT = ("Residential Tenancies Act, Section 12. A landlord must return the security deposit within 30 days "
           "after the tenancy ends. A landlord who fails to do so owes the tenant twice the deposit.")
GROUNDED = "A landlord must return the security deposit within 30 days after the tenancy ends."
UNGROUNDED = "Tenants may keep the keys for a year after they move out."


@pytest.fixture(scope="module", autouse=True)
def nothing_written_into_the_working_tree():
    """MLflow's defaults write into the working directory: ./mlflow.db as the tracking store, ./mlruns for an
    experiment's artifacts. These tests must leave neither there nor at the repository's root (which .gitignore
    hides from ``git status``, so this checks it)."""
    places = {folder / name for folder in (Path.cwd(), ROOT) for name in ("mlruns", "mlflow.db")}
    before = {place for place in places if place.exists()}
    yield
    assert {place for place in places if place.exists()} <= before


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A sqlite tracking store in a temporary folder, as the current tracking URI, with an experiment whose
    artifacts (trace files among them) go to that folder too: an experiment made without an artifact location
    gets MLflow's default, ./mlruns under the working directory, which is how a test run once wrote (and
    committed) mlruns/ into the repository."""
    folder = tmp_path_factory.mktemp("mlflow")
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(f"sqlite:///{folder / 'mlflow.db'}")
    artifacts = (folder / "artifacts").as_uri()
    experiment_id = MlflowClient().create_experiment("groundjudge-tests", artifact_location=artifacts)
    experiment = mlflow.set_experiment(experiment_id=experiment_id)
    assert experiment.artifact_location == artifacts
    yield experiment.experiment_id
    mlflow.flush_trace_async_logging()   # the traces still queued go to this store, not to the next tracking URI
    mlflow.set_tracking_uri(previous)


def feedback_by_answer(run_id: str, experiment_id: str) -> dict[str, object]:
    """The run's traces read back through the MlflowClient: answer -> its groundedness feedback."""
    traces = MlflowClient().search_traces(experiment_ids=[experiment_id], run_id=run_id)
    found = {}
    for trace in traces:
        (feedback,) = [a for a in trace.info.assessments if a.name == "groundedness"]
        found[str(trace.data.response).strip('"')] = feedback
    return found


def test_scorer_called_as_mlflow_calls_it():
    scorer = Groundedness(judge="quip:agg=min")
    good = scorer(inputs={"question": "When?"}, outputs=GROUNDED, expectations={"context": CONTEXT})
    bad = scorer(inputs={"question": "When?"}, outputs={"response": UNGROUNDED}, expectations={"context": [CONTEXT]})
    assert good.value == "yes" and bad.value == "no" and bad.error is None
    assert f"- [unverifiable] {UNGROUNDED}" in bad.rationale
    assert bad.metadata["label"] == "ungrounded" and float(bad.metadata["threshold"]) == 0.5
    assert bad.source.source_type == "CODE" and bad.source.source_id == "groundjudge:quip:agg=min"
    missing = scorer(outputs=GROUNDED, expectations={})
    assert missing.value is None and missing.error.error_code == "MISSING_INPUT"
    assert Groundedness(judge="quip", report="score")(outputs=GROUNDED, expectations={"context": CONTEXT}).value == 1.0


def test_evaluate_logs_feedback_from_expectations_context(store):
    data = [{"inputs": {"question": "When is the deposit returned?"}, "outputs": answer,
             "expectations": {"context": [CONTEXT]}} for answer in (GROUNDED, UNGROUNDED)]
    result = mlflow.genai.evaluate(data=data, scorers=[Groundedness(judge="quip:agg=min")])
    assert result.metrics["groundedness/mean"] == pytest.approx(0.5)
    found = feedback_by_answer(result.run_id, store)
    assert found[GROUNDED].value == "yes" and found[UNGROUNDED].value == "no"
    assert UNGROUNDED in found[UNGROUNDED].rationale and found[UNGROUNDED].metadata["judge"] == "quip:agg=min"


@mlflow.trace(span_type=SpanType.RETRIEVER)
def retrieve(question: str) -> list[Document]:
    """The app's retriever: one document (a RETRIEVER span in the trace)."""
    return [Document(page_content=CONTEXT, metadata={"doc_uri": "leases/section-12"})]


@mlflow.trace
def answer_with_rag(question: str) -> str:
    """The app: retrieve, then answer (the trace holds the RETRIEVER span)."""
    retrieve(question)
    return GROUNDED if "deposit" in question else UNGROUNDED


def test_evaluate_reads_documents_from_the_traces_retriever_span(store):
    data = [{"inputs": {"question": q}} for q in ("When is the deposit returned?", "May tenants keep the keys?")]
    result = mlflow.genai.evaluate(data=data, predict_fn=answer_with_rag, scorers=[Groundedness(judge="quip:agg=min")])
    found = feedback_by_answer(result.run_id, store)
    assert found[GROUNDED].value == "yes" and found[UNGROUNDED].value == "no"
    assert "by quip:agg=min" in found[GROUNDED].rationale


def test_scorer_on_a_stored_trace_and_abstention_is_an_error(store):
    answer_with_rag("When is the deposit returned?")
    mlflow.flush_trace_async_logging()
    trace = mlflow.get_trace(mlflow.get_last_active_trace_id())
    assert context_of(None, trace) == [CONTEXT]
    feedback = Groundedness(judge="quip")(trace=trace)
    assert feedback.value == "yes"
    abstained = Groundedness(judge="quip")(outputs="  ", trace=trace)   # an empty answer: quip abstains
    assert abstained.value is None and abstained.error.error_code == "ABSTAIN"
    assert abstained.error.error_message == "quip abstained: empty_answer"
    assert abstained.rationale == "abstained: empty_answer"
    mlflow.log_feedback(trace_id=trace.info.trace_id, name=feedback.name, value=feedback.value,
                        rationale=feedback.rationale, source=feedback.source)
    logged = [a for a in MlflowClient().get_trace(trace.info.trace_id).info.assessments if a.name == "groundedness"]
    assert logged and logged[0].value == "yes"
