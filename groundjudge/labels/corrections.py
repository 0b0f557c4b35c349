"""Corrections as demonstrations: the answers a judge got wrong in a labelled run, with the person's label and
note, as a pool an LLM judge can be shown (``demos=``; ``demo_strategy=corrections``).

A correction is an answer whose latest human label (``RUN/labels.jsonl``, from ``groundjudge label``) is grounded
or ungrounded and differs from the judge's verdict in the run's records. Abstentions and ``unsure`` labels are
not corrections.
"""

from __future__ import annotations

from pathlib import Path

from groundjudge.errors import UsageError
from groundjudge.judges.demonstrations.pool import Demonstration
from groundjudge.labels.gold import load_gold
from groundjudge.runs.records import find_records, read_records


def corrections_pool(run_dir: str | Path, judge: str | None = None, labels: str | Path | None = None
                     ) -> list[Demonstration]:
    """The corrections of ``judge`` (a judge spec of the run; optional when the run has one judge) in a labelled
    run folder, in the order they were labelled; ``labels``: another labels file (default ``RUN/labels.jsonl``)."""
    records = read_records(find_records(run_dir))
    specs = [spec.spec for spec in records.header.judges]
    if judge is None:
        if len(specs) != 1:
            raise UsageError(f"{run_dir}: the run has {len(specs)} judges; name one: {', '.join(specs)}")
        judge = specs[0]
    if judge not in specs:
        raise UsageError(f"{run_dir}: no judge {judge!r} in the run; judges: {', '.join(specs)}")
    gold = load_gold(labels or run_dir, {r.example.id for r in records.results})
    said_by = {r.example.id: r for r in records.results if r.judge == judge}
    pool = []
    for example_id, human in gold.items():          # labelling order: records come in completion order
        record = said_by.get(example_id)
        said = record.result.verdict.label if record else None
        if record is None or human.label == "unsure" or said == "abstain":
            continue
        if said != human.label:
            ex = record.example
            pool.append(Demonstration(id=ex.id, question=ex.question, context=ex.context, answer=ex.answer,
                                      label=human.label, note=human.note, judge_label=said,
                                      source=f"labels:{records.header.run_id}"))
    return pool
