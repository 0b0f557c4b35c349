"""What ``groundjudge estimate RUN`` prints: the judges' figures, the pairs' differences, how far each aimed-at pair is
from its stopping points, the PPI++ figures and the agreement between people, as rich tables and plain lines."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text


def print_estimates(stdout: Console, result) -> None:
    """Print every table and line of an estimate (a :class:`groundjudge.labels.estimates` result), in order."""
    stdout.print(judges_table(result))
    stdout.print(pairs_table(result))
    for line in stopping_lines(result):
        stdout.print(Text(line))
    if result.ppi is not None:
        stdout.print(ppi_table(result.ppi) if result.ppi.judges else Text(
            f"PPI: not given: {result.ppi.skipped or 'no judge has enough right and wrong answers among the labels'}"))
        for judge, why in result.ppi.judges_skipped.items():
            stdout.print(Text(f"PPI: {judge}: not given: {why}"))
    if result.people is not None:
        stdout.print(people_table(result.people))


def _ci(interval) -> str:
    return f"{interval.estimate:.3f} [{interval.ci95[0]:.2f}, {interval.ci95[1]:.2f}]"


def judges_table(result) -> Table:
    """Each judge's balanced accuracy, accuracy and macro-F1 with their 95% intervals."""
    table = Table(title=f"from {result.n_labelled} human labels of {result.n_answers} answers "
                        f"({result.n_unsure} unsure left out); 95% intervals valid under the queue's design")
    for column in ("judge", "balanced accuracy", "accuracy", "macro-F1"):
        table.add_column(column, justify="left" if column == "judge" else "right")
    for judge, figures in result.judges.items():
        table.add_row(Text(judge), _ci(figures["balanced_accuracy"]), _ci(figures["accuracy"]), _ci(figures["macro_f1"]))
    return table


def pairs_table(result) -> Table:
    """Each pair's difference a - b per metric: interval, whether separated, labels still needed, whether settled."""
    aimed = any(pair.queue_target for pair in result.pairs)
    table = Table(title="a - b: separated when the 95% interval excludes 0; labels to exclude 0 and to ±0.05: "
                        "projected along the queue; settled: ahead whatever the unlabelled answers are"
                        + ("; * the queue was built for this pair and metric" if aimed else ""))
    for column in ("a", "b", "metric", "a - b [95% CI]", "labels where they differ", "separated", "to exclude 0",
                   "to ±0.05", "settled"):
        table.add_column(column, justify="left" if column in ("a", "b", "metric") else "right")
    for pair in result.pairs:
        more = "-" if pair.more_labels_needed is None else f"~{pair.more_labels_needed}"
        tight = "-" if pair.labels_to_half_width is None else f"~{pair.labels_to_half_width}"
        settled = "no" if pair.ahead_for_good is None else ("a" if pair.ahead_for_good == pair.a else "b") + " ahead"
        table.add_row(Text(pair.a), Text(pair.b), pair.metric + (" *" if pair.queue_target else ""),
                      f"{pair.estimate:+.3f} [{pair.ci95[0]:+.2f}, {pair.ci95[1]:+.2f}]",
                      str(pair.labels_where_they_differ), "yes" if pair.separated else "no",
                      "0" if pair.separated else more, tight, settled)
    return table


def stopping_lines(result) -> list[str]:
    """One line per pair and metric the queue aims at (else balanced accuracy): how far from each stopping point,
    and whether no further label can change which judge is ahead."""
    aimed = [p for p in result.pairs if p.queue_target] or [p for p in result.pairs if p.metric == "balanced_accuracy"]
    lines = []
    for pair in aimed:
        name = f"{pair.metric.replace('_', ' ')} {pair.a} - {pair.b}"
        if pair.ahead_for_good is not None:
            low, high = pair.worst_case
            lines.append(f"{name}: no further label can change which judge is ahead: {pair.ahead_for_good} "
                         f"(a - b between {low:+.3f} and {high:+.3f} whatever the unlabelled answers are)")
            continue
        exclude = "excludes 0 now" if pair.separated else (
            "0 not excluded by the rest of the queue" if pair.more_labels_needed is None
            else f"~{pair.more_labels_needed} more labels to exclude 0")
        target = ("±0.05 not reached by the rest of the queue" if pair.labels_to_half_width is None
                  else f"~{pair.labels_to_half_width} more to ±0.05")
        lines.append(f"{name}: {exclude}; {target}; labels can still change which judge is ahead")
    return lines


def ppi_table(ppi) -> Table:
    """Each judge's PPI++ accuracy and balanced accuracy beside the classical figures from the labels alone."""
    table = Table(title=f"PPI++ over all {ppi.n_answers} answers, reference {ppi.reference} ({ppi.reference_chosen}), "
                        f"from {ppi.n_labelled} labels of the uniform queue; classical: the labels alone")
    for column in ("judge", "accuracy (PPI)", "classical", "balanced accuracy (PPI)", "classical"):
        table.add_column(column, justify="left" if column == "judge" else "right")
    for judge, figures in ppi.judges.items():
        cells = []
        for metric in ("accuracy", "balanced_accuracy"):
            figure = figures.get(metric)
            cells += ["-", "-"] if figure is None else [
                f"{figure.estimate:.3f} [{figure.ci95[0]:.2f}, {figure.ci95[1]:.2f}]",
                f"{figure.classical_estimate:.3f} [{figure.classical_ci95[0]:.2f}, {figure.classical_ci95[1]:.2f}]"]
        table.add_row(Text(judge), *cells)
    return table


def people_table(people) -> Table:
    """Agreement between the labellers: Krippendorff's alpha in the title, each pair's agreement and Cohen's kappa."""
    alpha = "-" if people.alpha is None else f"{people.alpha:.3f}"
    table = Table(title=f"between people: {people.n_overlap} answers labelled twice or more; Krippendorff's alpha "
                        f"{alpha}; {len(people.disagreements)} answers where people disagree")
    for column in ("a", "b", "both labelled", "agree", "Cohen's kappa"):
        table.add_column(column, justify="left" if column in ("a", "b") else "right")
    for pair in people.pairs:
        table.add_row(Text(pair.a), Text(pair.b), str(pair.n), "-" if pair.agreement is None else f"{pair.agreement:.1%}",
                      "-" if pair.kappa is None else f"{pair.kappa:.3f}")
    return table
