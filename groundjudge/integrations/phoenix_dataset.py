"""Phoenix, for examples that name no traced span: a dataset of the examples and an experiment of the verdicts.

The dataset holds one example per answer: input ``{question, context}``, reference output ``{label, error_types}``
(the gold, when the data has it), metadata ``{example_id, answer, split}``. The experiment (one per export, named
after the run) has one run per answer, whose output is the answer, and one evaluation per judge on it (named
``groundjudge:<judge>``, kind LLM or CODE, label, score, explanation), plus ``groundjudge:human`` (kind HUMAN)
where the run folder holds human labels.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from groundjudge.integrations.phoenix_fields import ANNOTATION_PREFIX, HUMAN, verdict_fields
from groundjudge.integrations.verdicts import VerdictView


def dataset_rows(records: Any, views: list[VerdictView]) -> list[dict[str, Any]]:
    """One dataset row (input, output, metadata) per answer the views are about, in records order."""
    wanted = {view.example_id for view in views}
    rows: dict[str, dict[str, Any]] = {}
    for record in records.results:
        example = record.example
        if example.id in wanted and example.id not in rows:
            output = {"label": example.label, "error_types": list(example.error_types)} if example.label else {}
            rows[example.id] = {"input": {"question": example.question, "context": list(example.context)},
                                "output": output,
                                "metadata": {"example_id": example.id, "answer": example.answer,
                                             "split": example.split}}
    return list(rows.values())


def _dataset(client: Any, name: str, rows: list[dict[str, Any]]) -> Any:
    """The dataset ``name`` with ``rows`` added: created, or (exported before) its examples not yet in it added."""
    try:
        dataset = client.datasets.get_dataset(dataset=name)
    except Exception:  # noqa: BLE001 - the client raises a plain ValueError / HTTP error for an unknown name
        dataset = None
    if dataset is None:
        return client.datasets.create_dataset(name=name, inputs=[r["input"] for r in rows],
                                              outputs=[r["output"] for r in rows],
                                              metadata=[r["metadata"] for r in rows],
                                              dataset_description="groundjudge: answers judged for grounding")
    known = {example["metadata"].get("example_id") for example in dataset.examples}
    new = [r for r in rows if r["metadata"]["example_id"] not in known]
    if not new:
        return dataset
    return client.datasets.add_examples_to_dataset(dataset=dataset, inputs=[r["input"] for r in new],
                                                   outputs=[r["output"] for r in new],
                                                   metadata=[r["metadata"] for r in new])


def _times(records: Any, example_id: str) -> tuple[datetime, datetime]:
    """When the answer's judging started and ended (earliest start, latest end over its results)."""
    starts = [r.result.started_at for r in records.results if r.example.id == example_id and r.result.started_at]
    ends = [r.result.finished_at for r in records.results if r.example.id == example_id and r.result.finished_at]
    now = datetime.now(timezone.utc).timestamp()
    return (datetime.fromtimestamp(min(starts, default=now), timezone.utc),
            datetime.fromtimestamp(max(ends, default=now), timezone.utc))


def _log_evaluation(client: Any, run_id: str, fields: dict[str, Any]) -> None:
    """One experiment evaluation (None values left out)."""
    client.experiments.log_evaluation(experiment_run_id=run_id, name=fields["name"],
                                      annotator_kind=fields["annotator_kind"], label=fields.get("label"),
                                      score=fields.get("score"), explanation=fields.get("explanation"),
                                      metadata=fields.get("metadata") or {})


def export_dataset(client: Any, records: Any, views: list[VerdictView], name: str,
                   labels: dict[str, Any]) -> dict[str, Any]:
    """Write the dataset and the experiment; the ``PhoenixExport`` fields it fills."""
    dataset = _dataset(client, name, dataset_rows(records, views))
    by_id = {example["metadata"].get("example_id"): example for example in dataset.examples}
    header = records.header
    experiment = client.experiments.create(
        dataset_id=dataset.id, dataset_version_id=dataset.version_id,
        experiment_name=f"groundjudge {header.run_id}",
        experiment_description=", ".join(spec.spec for spec in header.judges),
        experiment_metadata={"run_id": header.run_id, "judges": [spec.spec for spec in header.judges],
                             "dataset_hash": header.dataset.hash})
    evaluations = 0
    for example_id in dict.fromkeys(view.example_id for view in views):
        example = by_id[example_id]
        start, end = _times(records, example_id)
        run = client.experiments.log_run(experiment_id=experiment["id"], dataset_example_id=example["id"],
                                         output={"answer": example["metadata"]["answer"]},
                                         start_time=start, end_time=end)
        for view in (v for v in views if v.example_id == example_id):
            _log_evaluation(client, run["id"], verdict_fields(view))
            evaluations += 1
        label = labels.get(example_id)
        if label is not None:
            _log_evaluation(client, run["id"], {"name": ANNOTATION_PREFIX + HUMAN, "annotator_kind": "HUMAN",
                                                "label": label.label, "explanation": label.note or None,
                                                "metadata": {"labeller": label.labeller, "time": label.time}})
            evaluations += 1
    return {"dataset_id": dataset.id, "dataset_name": name, "experiment_id": experiment["id"],
            "evaluations": evaluations}
