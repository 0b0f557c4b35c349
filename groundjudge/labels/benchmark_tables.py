"""The benchmark check (:mod:`groundjudge.labels.benchmark_check`) as markdown: per part, the variants'
precision by intended type, generator rule, source and judges' verdict pattern, the grounded controls, what the
reader called each intended type, and the agreement between the parts' labellers."""

from __future__ import annotations

from collections.abc import Sequence

from groundjudge.labels.benchmark_check import (
    ControlFigures,
    GroupFigures,
    Measurement,
    PartFigures,
    Share,
)
from groundjudge.labels.people import PeopleAgreement

_VARIANT_COLUMNS = ("rows in file", "labelled", "precision [95% CI]", "k/n", "an error at all [95% CI]",
                    "correct and fluent [95% CI]", "unsure", "not fluent")


def share_text(share: Share) -> str:
    """``0.72 [0.66, 0.78]``, or ``-`` when nothing was labelled."""
    if share.estimate is None or share.ci95 is None:
        return "-"
    return f"{share.estimate:.2f} [{share.ci95[0]:.2f}, {share.ci95[1]:.2f}]"


def _table(first: str, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    head = [first, *columns]
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * len(columns) + "|"]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def _variant_rows(groups: Sequence[GroupFigures]) -> list[list[str]]:
    return [[g.group.replace("|", "/"), str(g.rows), str(g.labelled), share_text(g.confirmed),
             f"{g.confirmed.k}/{g.confirmed.n}", share_text(g.error), share_text(g.correct), str(g.unsure),
             str(g.not_fluent)] for g in groups]


def _control_rows(groups: Sequence[ControlFigures]) -> list[list[str]]:
    return [[g.group, str(g.rows), str(g.labelled), share_text(g.grounded), f"{g.grounded.k}/{g.grounded.n}",
             str(g.unsure)] for g in groups]


def _confusion(part: PartFigures) -> list[str]:
    given = {answer for row in part.confusion.values() for answer in row}
    said = [a for a in [*part.confusion, "ungrounded, no type", "grounded", "unsure"] if a in given]
    rows = [[intended, *(str(part.confusion[intended].get(answer, 0)) for answer in said)]
            for intended in part.confusion if part.confusion[intended]]
    return _table("intended type \\ reader said", said, rows)


def _agreement(name: str, agreement: PeopleAgreement) -> list[str]:
    alpha = "-" if agreement.alpha is None else f"{agreement.alpha:.3f}"
    lines = [f"**{name}**: {agreement.n_overlap} items labelled by both; Krippendorff's alpha {alpha}."]
    for pair in agreement.pairs:
        kappa = "-" if pair.kappa is None else f"{pair.kappa:.3f}"
        share = "-" if pair.agreement is None else f"{pair.agreement:.1%}"
        lines.append(f"{pair.a} vs {pair.b}: {pair.n} items, agree on {share}, Cohen's kappa {kappa}.")
        typed = [f"{t}: {'-' if k is None else f'{k:.2f}'}" for t, k in pair.kappa_per_error_type.items()]
        if typed:
            lines.append("Cohen's kappa per error type (items both called ungrounded): " + "; ".join(typed) + ".")
    return lines


def part_markdown(part: PartFigures, judges: Sequence[str]) -> list[str]:
    """One part's tables."""
    overall = part.overall
    lines = [f"## Part {part.part} ({part.labels_file}): {part.labelled} of {part.items} items labelled", "",
             (f"**All {overall.rows} typed variants**: precision (labelled ungrounded with the intended type) "
             f"{share_text(overall.confirmed)} ({overall.confirmed.k}/{overall.confirmed.n} of the labelled); an "
             f"error at all {share_text(overall.error)}; correct and fluent {share_text(overall.correct)}."), ""]
    sections = [("Per intended type", part.by_type), ("Per generator rule", part.by_rule),
                ("Per source", part.by_source),
                ((f"Per judges' verdict pattern (one letter per judge: {', '.join(judges) or 'none'}; G grounded, "
                 "U ungrounded, - not judged)"), part.by_verdict)]
    for title, groups in sections:
        lines += [f"### {title}", "", *_table("group", _VARIANT_COLUMNS, _variant_rows(groups)), ""]
    lines += ["### Grounded controls: share labelled grounded", "",
              *_table("control", ("rows in file", "labelled", "grounded [95% CI]", "k/n", "unsure"),
                      _control_rows(part.controls)), "",
              "### What the reader said of each intended type (labelled variants, unweighted)", "",
              *_confusion(part), ""]
    return lines


def measurement_markdown(measurement: Measurement) -> str:
    """The whole check as one markdown page."""
    lines = [f"# Benchmark check of {measurement.dataset}: sample {measurement.sample}", "",
             (f"Data: `{measurement.dataset}` (sha256 {measurement.dataset_sha256[:12]}...). Weighting: "
             f"{measurement.weighting}"), ""]
    if measurement.excluded:
        left = ", ".join(f"{count} rows of sample {tag}" for tag, count in measurement.excluded.items())
        lines += [(f"Left out before the draw (--exclude): {left}. Every figure stands for the benchmark's "
                   "other rows: the row counts below are of those."), ""]
    for part in measurement.parts:
        lines += part_markdown(part, measurement.judges)
    if measurement.agreement is not None:
        lines += ["## Agreement between the labellers", "", *_agreement("The label and error types",
                                                                         measurement.agreement), ""]
    if measurement.agreement_confirmed is not None:
        lines += [*_agreement("Whether a variant is confirmed (ungrounded with its intended type)",
                              measurement.agreement_confirmed), ""]
    return "\n".join(lines)
