"""The report's "Human labels" tables: for a run folder holding ``labels.jsonl``, each judge's figures and every
pair's difference estimated from the labels so far (valid under the labelling queue's design), and the answers on
which people disagree, kept apart from the judges' errors."""

from __future__ import annotations

from typing import Any

from groundjudge.labels.estimates import estimate_run
from groundjudge.labels.queue import read_queue
from groundjudge.labels.store import LABELS_FILE, LabelsError, latest_labels, read_labels
from groundjudge.report.compare import Comparison

ESTIMATES_NOTE = ("From the human labels so far (labels.jsonl), with 95% intervals valid under the labelling "
                  "queue's design (groundjudge label / estimate); unsure labels are left out.")


def _cell(interval) -> str:
    return f"{interval.estimate:.3f} [{interval.ci95[0]:.2f}, {interval.ci95[1]:.2f}]"


def _ppi_cells(figure) -> list[str]:
    if figure is None:
        return ["-", "-"]
    return [f"{figure.estimate:.3f} [{figure.ci95[0]:.2f}, {figure.ci95[1]:.2f}]",
            f"{figure.classical_estimate:.3f} [{figure.classical_ci95[0]:.2f}, {figure.classical_ci95[1]:.2f}]"]


def human_label_tables(comparison: Comparison) -> list[dict[str, Any]]:
    """The tables of every run in the comparison that has human labels (none when no run has any)."""
    tables = []
    for run in comparison.runs:
        path = run.path / LABELS_FILE
        if not path.exists():
            continue
        try:
            history = read_labels(path, {r.example.id for r in run.records.results})
        except LabelsError as err:
            tables.append({"id": f"human-labels-{run.name}", "title": f"Human labels ({run.name})",
                           "note": f"labels.jsonl cannot be read: {err}", "headers": ["judge"], "rows": []})
            continue
        result = estimate_run(run.records, latest_labels(history), history=history, queue=read_queue(run.path))
        tables.append({
            "id": f"human-labels-{run.name}", "title": f"Human labels ({run.name}): {result.n_labelled} labelled "
                                                     f"of {result.n_answers}", "note": ESTIMATES_NOTE,
            "headers": ["judge", "balanced accuracy", "accuracy", "macro-F1"],
            "rows": [[judge, _cell(f["balanced_accuracy"]), _cell(f["accuracy"]), _cell(f["macro_f1"])]
                     for judge, f in result.judges.items()]})
        tables.append({
            "id": f"human-label-pairs-{run.name}", "title": f"Human labels ({run.name}): a - b",
            "note": "Separated: the 95% interval excludes 0; more labels: a projection along the rest of the queue.",
            "headers": ["a", "b", "metric", "a - b [95% CI]", "separated", "more labels"],
            "rows": [[p.a, p.b, p.metric, f"{p.estimate:+.3f} [{p.ci95[0]:+.2f}, {p.ci95[1]:+.2f}]",
                      "yes" if p.separated else "no",
                      "-" if p.more_labels_needed is None else str(p.more_labels_needed)] for p in result.pairs]})
        if result.ppi is not None and result.ppi.judges:
            ppi = result.ppi
            tables.append({
                "id": f"human-labels-ppi-{run.name}", "title": f"Human labels ({run.name}): PPI++ with reference "
                                                             f"{ppi.reference}",
                "note": (f"Prediction-powered (PPI++) over all {ppi.n_answers} answers from {ppi.n_labelled} labels "
                         "of the uniform queue, the reference judge's verdicts as predictions; classical: the "
                         "labels alone. 95% CLT intervals."),
                "headers": ["judge", "accuracy (PPI)", "classical", "balanced accuracy (PPI)", "classical"],
                "rows": [[judge, *[cell for metric in ("accuracy", "balanced_accuracy") for cell in _ppi_cells(
                    f.get(metric))]] for judge, f in ppi.judges.items()]})
        if result.people is not None:
            people = result.people
            tables.append({
                "id": f"people-{run.name}", "title": f"Between people ({run.name})",
                "note": (f"{people.n_overlap} answers labelled by two people or more; Krippendorff's alpha "
                         f"{'-' if people.alpha is None else f'{people.alpha:.3f}'}. Where people disagree a "
                         "judge cannot be scored wrong: these answers are listed apart from the judges' errors."),
                "headers": ["answer", *people.labellers],
                "rows": [[d["id"], *[d["labels"].get(who, "-") for who in people.labellers]]
                         for d in people.disagreements]})
    return tables
