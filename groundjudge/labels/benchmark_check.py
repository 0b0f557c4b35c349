"""How far a typed error benchmark holds up under blind labels: from the key of a drawn sample
(:mod:`groundjudge.labels.benchmark_files`) and each part's labels, every generator rule's and intended type's
**precision** (the share of its variants a reader labelled ungrounded *with* the intended error type), the looser
**error at all** share (labelled ungrounded, any type), the **correct** share (precision, and not marked
``"fluent": false``), the grounded controls' share labelled grounded, and the agreement between the labellers.

**Weighting**: see :data:`WEIGHTING`.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from groundjudge.labels.benchmark_files import KeyHeader, KeyItem, read_key
from groundjudge.labels.people import PeopleAgreement, people_agreement
from groundjudge.labels.store import LabelRecord, LabelsError, label_lines

Z95 = 1.959963984540054
"""The normal quantile of a two-sided 95% interval."""

WEIGHTING = (
    "A part's item i of stratum h weighs f_h / pi_i (pi_i: its inclusion probability in the part; f_h: the part's "
    "items in h over its labelled items in h, by weight, so items left unlabelled are made up for within their "
    "stratum). A group's share is the weighted mean (Hajek's ratio estimator), which stands for the group's rows "
    "in the whole benchmark file, not just the drawn ones. Its 95% interval is Wilson's score interval at the Kish "
    "effective sample size (sum w)^2 / sum w^2 (the plain Wilson interval when the group's weights are equal), "
    "without a finite-population correction, so a little wide where a stratum was mostly drawn. An unsure label "
    "counts as labelled and not confirmed: a row is confirmed only when a reader says so.")
"""How the figures are weighted to the whole benchmark file (also written into the measurement)."""

_SAMPLE_ID = re.compile(r"^(s[0-9a-f]{6})-\d+$")


class BenchmarkLabel(LabelRecord):
    """A reader's label of one blind item: grounded / ungrounded / unsure, the error types, a note, and optionally
    whether the answer reads as fluent text."""

    fluent: bool | None = Field(default=None, description="False: ungrammatical or garbled; None: not said.")


class Share(BaseModel):
    """A share among a group's labelled items: raw counts and the weighted estimate for the group's rows."""

    k: int = Field(description="Labelled items that have it (unweighted).")
    n: int = Field(description="Labelled items of the group.")
    estimate: float | None = Field(default=None, description="Weighted share (the group's rows in the file).")
    ci95: tuple[float, float] | None = Field(default=None, description="Wilson 95% interval at n_eff.")
    n_eff: float | None = Field(default=None, description="Kish effective sample size of the weights.")


class GroupFigures(BaseModel):
    """One group of variants (a rule, a type, a source, a verdict pattern, or all)."""

    group: str
    rows: int = Field(description="Rows of the group in the benchmark file.")
    items: int = Field(description="Items of the group in the part.")
    labelled: int
    unsure: int
    not_fluent: int
    error: Share = Field(description="Labelled ungrounded (any error type).")
    confirmed: Share = Field(description="Labelled ungrounded with the intended error type: the precision.")
    correct: Share = Field(description="Confirmed and not marked fluent: false.")


class ControlFigures(BaseModel):
    """One group of grounded controls: the share a reader labelled grounded."""

    group: str
    rows: int
    items: int
    labelled: int
    unsure: int
    grounded: Share


class PartFigures(BaseModel):
    """Everything measured on one part's labels."""

    part: str
    labels_file: str
    items: int
    labelled: int
    overall: GroupFigures
    by_type: list[GroupFigures]
    by_rule: list[GroupFigures]
    by_source: list[GroupFigures]
    by_verdict: list[GroupFigures]
    controls: list[ControlFigures]
    confusion: dict[str, dict[str, int]] = Field(description=(
        "Intended type -> what the reader said (each error type given, 'ungrounded, no type', 'grounded', "
        "'unsure') -> labelled variants, unweighted."))


class Measurement(BaseModel):
    """The benchmark check: per part's figures and the agreement between parts on the items both labelled."""

    sample: str
    dataset: str
    dataset_sha256: str
    judges: list[str]
    weighting: str
    parts: list[PartFigures]
    agreement: PeopleAgreement | None = Field(default=None, description="On the label and each error type.")
    agreement_confirmed: PeopleAgreement | None = Field(default=None, description=(
        "On whether a variant is confirmed (ungrounded with its intended type), variants labelled by both."))
    excluded: dict[str, int] | None = Field(default=None, description=(
        "Earlier samples whose rows the draw left out -> rows left out (the figures stand for the rest)."))


def wilson(p: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval for share ``p`` at sample size ``n`` (which may be an effective, fractional one)."""
    if n <= 0:
        return 0.0, 1.0
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z / denominator * math.sqrt(max(p * (1 - p) / n + z * z / (4 * n * n), 0.0))
    return max(0.0, centre - half), min(1.0, centre + half)


def weighted_share(values: Sequence[bool], weights: Sequence[float]) -> Share:
    """The weighted share of ``values`` with its Wilson interval at the Kish effective size."""
    n = len(values)
    if n == 0:
        return Share(k=0, n=0)
    total = sum(weights)
    estimate = sum(w for v, w in zip(values, weights) if v) / total
    n_eff = total * total / sum(w * w for w in weights)
    return Share(k=sum(values), n=n, estimate=estimate, ci95=wilson(estimate, n_eff), n_eff=n_eff)


def read_part_labels(path: str | Path, part: str, header: KeyHeader, items: Mapping[str, KeyItem]
                     ) -> dict[str, BenchmarkLabel]:
    """A part's labels file, the last label per item; an id of another sample or part, an unknown id or an error
    type outside the taxonomy is a LabelsError naming ``file:line:field``."""
    blind = header.parts.get(part, part)
    labels: dict[str, BenchmarkLabel] = {}
    for number, record in label_lines(path, BenchmarkLabel):
        where = f"{path}:{number}"
        other = _SAMPLE_ID.match(record.id)
        if other and other.group(1) != header.sample:
            raise LabelsError(f"{where}:id: item {record.id!r} is of sample {other.group(1)}, the key's is "
                              f"{header.sample}: a labels file for another sample")
        if record.id not in items:
            raise LabelsError(f"{where}:id: unknown item id {record.id!r} (not in sample {header.sample})")
        if part not in items[record.id].pi:
            raise LabelsError(f"{where}:id: item {record.id!r} is not in part {part} ({blind}): a labels file for "
                              "another part")
        unknown = [name for name in record.error_types if name not in header.taxonomy]
        if unknown:
            raise LabelsError(f"{where}:error_types: unknown error type {unknown[0]!r} (allowed: "
                              f"{', '.join(header.taxonomy)})")
        labels[record.id] = record
    if not labels:
        raise LabelsError(f"{path}: no labels")
    return labels


def _weights(part: str, items: Sequence[KeyItem], labels: Mapping[str, BenchmarkLabel]) -> dict[str, float]:
    """Labelled item id -> weight (1 / pi, scaled up within its stratum for the part's unlabelled items)."""
    drawn: dict[str, float] = defaultdict(float)
    done: dict[str, float] = defaultdict(float)
    for item in items:
        drawn[item.stratum_name] += 1 / item.pi[part]
        if item.id in labels:
            done[item.stratum_name] += 1 / item.pi[part]
    return {item.id: drawn[item.stratum_name] / done[item.stratum_name] / item.pi[part]
            for item in items if item.id in labels}


def _confirmed(item: KeyItem, label: BenchmarkLabel) -> bool:
    return label.label == "ungrounded" and item.intended_type in label.error_types


def _variant_group(name: str, rows: int, members: Sequence[KeyItem], labels: Mapping[str, BenchmarkLabel],
                   weights: Mapping[str, float]) -> GroupFigures:
    done = [item for item in members if item.id in labels]
    w = [weights[item.id] for item in done]
    error = [labels[item.id].label == "ungrounded" for item in done]
    confirmed = [_confirmed(item, labels[item.id]) for item in done]
    correct = [c and labels[item.id].fluent is not False for c, item in zip(confirmed, done)]
    return GroupFigures(group=name, rows=rows, items=len(members), labelled=len(done),
                        unsure=sum(labels[item.id].label == "unsure" for item in done),
                        not_fluent=sum(labels[item.id].fluent is False for item in done),
                        error=weighted_share(error, w), confirmed=weighted_share(confirmed, w),
                        correct=weighted_share(correct, w))


def _rows_by(header: KeyHeader, kind: str, key: Callable[[str, str], str]) -> dict[str, int]:
    """Rows of the benchmark per group of one kind, from the key's stratum and rule sizes (a stratum's name is
    kind | type | source | verdict pattern)."""
    rows: dict[str, int] = defaultdict(int)
    for stratum, rules in header.rules.items():
        if stratum.split("|")[0] == kind:
            for rule, count in rules.items():
                rows[key(stratum, rule)] += count
    return dict(rows)


def _grouped(header: KeyHeader, part_items: Sequence[KeyItem],
             labels: Mapping[str, BenchmarkLabel], weights: Mapping[str, float]) -> dict[str, list[GroupFigures]]:
    """The variants' figures by type (taxonomy order), rule, source and verdict pattern."""
    ways: dict[str, tuple[Callable[[KeyItem], str], Callable[[str, str], str]]] = {
        "by_type": (lambda i: i.intended_type or "-", lambda s, r: s.split("|")[1]),
        "by_rule": (lambda i: i.rule or "-", lambda s, r: r),
        "by_source": (lambda i: i.source, lambda s, r: s.split("|")[2]),
        "by_verdict": (lambda i: i.verdict or "-", lambda s, r: s.split("|")[3]),
    }
    variants = [item for item in part_items if item.kind == "variant"]
    out = {}
    for name, (of_item, of_stratum) in ways.items():
        rows = _rows_by(header, "variant", of_stratum)
        members: dict[str, list[KeyItem]] = defaultdict(list)
        for item in variants:
            members[of_item(item)].append(item)
        order = [t for t in header.taxonomy if t in rows] if name == "by_type" else sorted(rows)
        out[name] = [_variant_group(group, rows[group], members.get(group, []), labels, weights) for group in order]
    return out


def _controls(header: KeyHeader, part_items: Sequence[KeyItem],
              labels: Mapping[str, BenchmarkLabel], weights: Mapping[str, float]) -> list[ControlFigures]:
    """The grounded controls' share labelled grounded, per kind and source."""
    out = []
    for kind in ("original", "paraphrase", "restatement"):
        rows = _rows_by(header, kind, lambda s, r: s.split("|")[2])
        for source in sorted(rows):
            members = [i for i in part_items if i.kind == kind and i.source == source]
            done = [i for i in members if i.id in labels]
            out.append(ControlFigures(group=f"{kind}, {source}", rows=rows[source], items=len(members),
                                      labelled=len(done), unsure=sum(labels[i.id].label == "unsure" for i in done),
                                      grounded=weighted_share([labels[i.id].label == "grounded" for i in done],
                                                              [weights[i.id] for i in done])))
    return out


def _confusion(part_items: Sequence[KeyItem], labels: Mapping[str, BenchmarkLabel], taxonomy: Sequence[str]
               ) -> dict[str, dict[str, int]]:
    table: dict[str, dict[str, int]] = {t: defaultdict(int) for t in taxonomy}
    for item in part_items:
        label = labels.get(item.id)
        if item.kind != "variant" or label is None:
            continue
        said = list(label.error_types) if label.label == "ungrounded" else [label.label]
        for answer in said or ["ungrounded, no type"]:
            table.setdefault(item.intended_type or "-", defaultdict(int))[answer] += 1
    return {t: dict(row) for t, row in table.items()}


def part_figures(header: KeyHeader, items: Mapping[str, KeyItem], part: str, labels: Mapping[str, BenchmarkLabel],
                 labels_file: str) -> PartFigures:
    """One part's figures from its labels."""
    part_items = [item for item in items.values() if part in item.pi]
    weights = _weights(part, part_items, labels)
    variants = [item for item in part_items if item.kind == "variant"]
    total = sum(_rows_by(header, "variant", lambda s, r: "all").values())
    return PartFigures(part=part, labels_file=labels_file, items=len(part_items), labelled=len(labels),
                       overall=_variant_group("all variants", total, variants, labels, weights),
                       **_grouped(header, part_items, labels, weights),
                       controls=_controls(header, part_items, labels, weights),
                       confusion=_confusion(part_items, labels, header.taxonomy))


def _agreement(items: Mapping[str, KeyItem], labels: Mapping[str, Mapping[str, BenchmarkLabel]],
               taxonomy: Sequence[str]) -> tuple[PeopleAgreement | None, PeopleAgreement | None]:
    """Agreement between the parts' labellers (each part one labeller) with ``estimate``'s figures; and on
    whether each variant both labelled is confirmed."""
    if len(labels) < 2:
        return None, None
    given = {(item_id, part): record.model_copy(update={"labeller": part})
             for part, by_id in labels.items() for item_id, record in by_id.items()}
    confirmed = {(item_id, part): LabelRecord(id=item_id, labeller=part, label="ungrounded" if _confirmed(
        items[item_id], record) else "grounded") for (item_id, part), record in given.items()
        if items[item_id].kind == "variant"}
    return (people_agreement(given, list(taxonomy)),
            people_agreement(confirmed, []))


def measure(key: str | Path, labels_files: Mapping[str, str | Path]) -> Measurement:
    """The benchmark check from the key and each part's labels file (part -> file; a part the key lacks is a
    LabelsError naming it and the parts there are)."""
    header, items = read_key(key)
    labels = {}
    for part, path in labels_files.items():
        if part not in header.parts:
            raise LabelsError(f"--labels {part}={path}: part {part!r} is not in the key (its parts: "
                              f"{', '.join(header.parts)})")
        labels[part] = read_part_labels(path, part, header, items)
    parts = [part_figures(header, items, part, labels[part], Path(labels_files[part]).name) for part in labels]
    agreement, agreement_confirmed = _agreement(items, labels, header.taxonomy)
    return Measurement(sample=header.sample, dataset=header.dataset, dataset_sha256=header.dataset_sha256,
                       judges=header.judges, weighting=WEIGHTING,
                       parts=parts, agreement=agreement, agreement_confirmed=agreement_confirmed,
                       excluded=header.excluded)
