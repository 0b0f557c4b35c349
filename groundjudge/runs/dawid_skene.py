"""A model-based hint, without labels, of how often each judge is right: the Dawid–Skene model (crowd-kit) fitted to
the judges' verdicts alone.

Dawid and Skene (1979) treat each answer's true label as hidden and each judge as a noisy annotator with its own
confusion matrix; EM fits the matrices and the share of grounded answers from who agrees with whom. It needs three
judges or more (with two, agreement cannot tell which of the two is wrong), and it **assumes the judges err
independently given the true label**. Judges that share a model, a prompt or a method err together, and the model
then reads their shared mistakes as the truth: their accuracies come out too high, the others' too low. So this is
a hint for an unlabelled run, never a measurement; human labels (``groundjudge label`` / ``estimate``) measure.
Abstentions are left out of the model (a judge's figures are on the answers it decided).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

from groundjudge.errors import UsageError
from groundjudge.runs.records import RunRecords
from groundjudge.runs.summary_model import DawidSkeneHint, DawidSkeneJudge

MIN_JUDGES = 3
"""Judges with decisions needed before the model is fitted."""

METHOD = "Dawid-Skene (crowd-kit DawidSkene, EM from majority vote, 100 iterations), fitted to the verdicts alone"

CAVEAT = ("Model-based, no labels: it assumes the judges err independently given the true label. Judges sharing a "
          "model, prompt or method break that (their shared errors look like the truth): a hint, not a measurement.")

LABELS = ("grounded", "ungrounded")


def fit_dawid_skene(verdicts: Mapping[str, Mapping[str, str]], shared: Sequence[Sequence[str]] = ()
                    ) -> DawidSkeneHint | None:
    """Fit the model to ``judge -> answer id -> verdict label`` (abstentions ignored); None with fewer than
    ``MIN_JUDGES`` judges that decided anything, or when the judges decided only one way. Raises UsageError when
    crowd-kit is not installed."""
    rows = [(answer, judge, label) for judge, by_answer in verdicts.items()
            for answer, label in by_answer.items() if label in LABELS]
    judges = [j for j in verdicts if any(r[1] == j for r in rows)]
    if len(judges) < MIN_JUDGES or len({r[2] for r in rows}) < 2:
        return None
    try:
        import pandas as pd
        from crowdkit.aggregation import DawidSkene
    except ImportError as err:
        raise UsageError(f"--dawid-skene needs crowd-kit: pip install 'groundjudge[labels]' ({err})") from None

    model = DawidSkene(n_iter=100)
    with warnings.catch_warnings():            # crowd-kit's pandas idioms warn under pandas 3; nothing for the user
        warnings.simplefilter("ignore")
        model.fit(pd.DataFrame(rows, columns=["task", "worker", "label"]))
    prior = {label: float(model.priors_.get(label, 0.0)) for label in LABELS}
    figures = {}
    for judge in judges:
        def recall(label: str) -> float:
            try:
                return float(model.errors_.loc[(judge, label), label])
            except KeyError:                    # the judge never gave this label
                return 0.0
        g, u = recall("grounded"), recall("ungrounded")
        figures[judge] = DawidSkeneJudge(
            n_decided=sum(r[1] == judge for r in rows), accuracy=prior["grounded"] * g + prior["ungrounded"] * u,
            balanced_accuracy=(g + u) / 2, recall_grounded=g, recall_ungrounded=u)
    return DawidSkeneHint(method=METHOD, caveat=CAVEAT, n_answers=len({r[0] for r in rows}),
                          grounded_share=prior["grounded"], judges=figures,
                          shared=[list(group) for group in shared if len(group) > 1])


def dawid_skene_for_records(records: RunRecords) -> DawidSkeneHint | None:
    """The hint for a run's records (None with fewer than three judges that decided anything)."""
    verdicts: dict[str, dict[str, str]] = {spec.spec: {} for spec in records.header.judges}
    for record in records.results:
        verdicts.setdefault(record.judge, {})[record.example.id] = record.result.verdict.label
    groups: dict[str, list[str]] = {}
    for spec in records.header.judges:
        groups.setdefault(str(spec.settings.get("model") or spec.name), []).append(spec.spec)
    return fit_dawid_skene(verdicts, list(groups.values()))
