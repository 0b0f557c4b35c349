"""Which rows of a typed error benchmark (``datasets/legal_types``) a reader labels, to check that each variant is
the error it claims: a seeded, stratified sample of the typed variants with grounded controls mixed in.

Every row is a *unit* with its kind (``variant``, or a grounded control: ``original``, ``paraphrase``,
``restatement``), intended error type, generator rule, source and, when judge runs are given, the judges' verdict
pattern on it (:mod:`groundjudge.labels.strata`'s letters; ``-`` for a row a run did not judge). A **cell** is
kind x type x source; a **stratum** is a cell x verdict pattern.

* **Cells** share a group's items (``variants``, ``originals``, ...) by size to the power 0.5 (``sqrt``: between
  equal and proportional shares, so small types get enough rows for their own interval and large ones are not
  starved), 1 (``proportional``) or 0 (``equal``), each non-empty cell at least one, none more than it has.
* **Strata** of a cell share its items in proportion to their sizes, each at least one.
* **Within a stratum**: a systematic sample with a random start along its rows sorted by generator rule (then a
  seeded hash), so every rule gets its share to within one row, and every row of the stratum has inclusion
  probability exactly n/N (fractional-interval systematic sampling).

A second labeller's part is a seeded subsample of the first part: each cell's items shared in proportion to the
first part's, drawn at random within the cell, so a row's inclusion probability in it is known too.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from groundjudge.labels.strata import judge_order, pattern, verdict_table
from groundjudge.runs.lean_records import read_lean_records
from groundjudge.runs.records import find_records
from groundjudge.types import Example

KINDS = ("variant", "original", "paraphrase", "restatement")
"""What a benchmark row is: a typed ungrounded variant, or a grounded control."""

ALLOCATIONS = {"sqrt": 0.5, "proportional": 1.0, "equal": 0.0}
"""How a group's items are shared between its cells: the power of the cell's size its share follows."""

PARTS = ("A", "B")
"""The first labeller's part (the whole sample) and the second's (a subsample of it)."""


class SampleError(ValueError):
    """A setting or input the draw cannot use; the message is one line naming it."""


class Unit(BaseModel):
    """One benchmark row as the draw sees it (nothing of its text)."""

    row_id: str
    source_id: str
    kind: Literal["variant", "original", "paraphrase", "restatement"]
    intended_type: str | None = Field(default=None, description="The error type the generator meant (variants).")
    rule: str | None = Field(default=None, description="The generator rule that made the row (variants, paraphrases).")
    source: str
    split: str | None = None
    verdict: str = Field(default="", description="The judges' verdict pattern (one letter per judge; '' with none).")

    @property
    def cell(self) -> str:
        """kind | intended type | source."""
        return f"{self.kind}|{self.intended_type or '-'}|{self.source}"

    @property
    def stratum(self) -> str:
        """The cell | the judges' verdict pattern."""
        return f"{self.cell}|{self.verdict or '-'}"


class DrawSettings(BaseModel):
    """How many of each group part A gets, how part B is sized, and how cells share them."""

    variants: int = Field(default=200, ge=1, description="Typed variants in part A.")
    second_variants: int = Field(default=50, ge=0, description="Typed variants in part B (0: no part B).")
    originals: int = Field(default=40, ge=0)
    restatements: int = Field(default=20, ge=0)
    paraphrases: int | None = Field(default=None, ge=0, description="Paraphrase controls in part A (None: all).")
    allocation: Literal["sqrt", "proportional", "equal"] = "sqrt"
    seed: int = 0


@dataclass
class Drawn:
    """A drawn sample: its units with their inclusion probability per part, and every stratum's size."""

    units: list[Unit]
    pi: dict[str, dict[str, float]] = field(default_factory=dict)
    """row id -> part -> inclusion probability (a part the row is not in is absent)."""
    population: dict[str, int] = field(default_factory=dict)
    """stratum -> rows of the benchmark in it."""
    rules: dict[str, dict[str, int]] = field(default_factory=dict)
    """stratum -> generator rule -> rows of the benchmark in it (``-`` for no rule)."""


def units_of(examples: Iterable[Example]) -> list[Unit]:
    """The benchmark's rows as units, read from each row's ``meta.perturbation`` (as ``groundjudge perturb`` and
    scripts/build_legal_types.py write it); a row without one is a SampleError naming it."""
    units = []
    for example in examples:
        made = example.meta.get("perturbation")
        if not isinstance(made, dict) or made.get("kind") not in KINDS:
            raise SampleError(f"row {example.id!r}: no meta.perturbation.kind of {', '.join(KINDS)} "
                              "(not a row of a perturbed benchmark)")
        kind = made["kind"]
        if kind == "variant" and not made.get("error_type"):
            raise SampleError(f"row {example.id!r}: a variant without meta.perturbation.error_type")
        units.append(Unit(row_id=example.id, source_id=str(made.get("source_id") or example.id), kind=kind,
                          intended_type=made.get("error_type") if kind == "variant" else None,
                          rule=made.get("rule"), source=str(example.meta.get("source") or "-"), split=example.split))
    return units


def verdict_patterns(runs: Sequence[str | Path], judges: Sequence[str] | None = None) -> tuple[list[str], dict[str, str]]:
    """The judges (every judge of the runs, in order, or ``judges``) and each judged row's verdict pattern."""
    table: dict[str, dict[str, str]] = defaultdict(dict)
    order: list[str] = []
    for run in runs:
        path = find_records(Path(run))
        if not path.exists():
            raise SampleError(f"--run {run}: not a run folder (no records.jsonl)")
        records = read_lean_records(path)
        order += [judge for judge in judge_order(records) if judge not in order]
        for row_id, verdicts in verdict_table(records).items():
            table[row_id].update(verdicts)
    chosen = list(judges) if judges else order
    unknown = [judge for judge in chosen if judge not in order]
    if unknown:
        raise SampleError(f"--judge {unknown[0]}: not a judge of the runs given (they have: {', '.join(order)})")
    return chosen, {row_id: pattern(verdicts, chosen) for row_id, verdicts in table.items()}


def with_verdicts(units: Sequence[Unit], judges: Sequence[str], patterns: Mapping[str, str]) -> list[Unit]:
    """The units with their verdict pattern (``-`` per judge for a row no run judged); a run that judged rows the
    benchmark lacks is a SampleError (a run of another data set)."""
    ids = {unit.row_id for unit in units}
    stray = sorted(set(patterns) - ids)
    if stray:
        raise SampleError(f"--run: the runs judged {len(stray)} answer(s) the benchmark lacks (e.g. {stray[0]!r}): "
                          "runs of another data set")
    blank = "-" * len(judges)
    return [unit.model_copy(update={"verdict": patterns.get(unit.row_id, blank)}) for unit in units]


def allocate(sizes: Mapping[str, int], total: int, power: float, minimum: int = 1) -> dict[str, int]:
    """``total`` items shared between keys in proportion to size ** power, each non-empty key at least
    ``minimum`` and at most its size (largest remainders, ties by key); ValueError when that cannot be met."""
    keys = sorted(key for key, size in sizes.items() if size > 0)
    if total > sum(sizes[key] for key in keys):
        raise ValueError(f"{total} asked, {sum(sizes[key] for key in keys)} there")
    if total < minimum * len(keys):
        raise ValueError(f"{total} asked, fewer than {minimum} for each of the {len(keys)} strata")
    fixed: dict[str, float] = {}
    while True:
        free = [key for key in keys if key not in fixed]
        left = total - sum(fixed.values())
        weight = sum(sizes[key] ** power for key in free)
        target = {key: left * sizes[key] ** power / weight for key in free} if free else {}
        over = {key: float(sizes[key]) for key in free if target[key] > sizes[key]}
        under = {key: float(minimum) for key in free if target[key] < minimum}
        if not over and not under:
            break
        fixed.update(over or under)
    shares = {**fixed, **target}
    counts = {key: math.floor(share + 1e-9) for key, share in shares.items()}
    short = total - sum(counts.values())
    for key in sorted(keys, key=lambda k: (-(shares[k] - counts[k]), k)):
        if short <= 0:
            break
        if counts[key] < sizes[key]:
            counts[key] += 1
            short -= 1
    return counts


def _order_key(seed: int, unit: Unit) -> tuple[str, str]:
    return unit.rule or "", hashlib.sha256(f"{seed}\x1f{unit.row_id}".encode()).hexdigest()


def systematic(units: Sequence[Unit], n: int, seed: int, name: str) -> list[Unit]:
    """``n`` of ``units``: every (N/n)-th along the units sorted by rule then a seeded hash, from a random start
    (each unit's inclusion probability exactly n/N)."""
    ordered = sorted(units, key=lambda unit: _order_key(seed, unit))
    if n >= len(ordered):
        return ordered
    step = len(ordered) / n
    start = random.Random(f"{seed}\x1fstart\x1f{name}").uniform(0, step)
    return [ordered[min(len(ordered) - 1, math.floor(start + j * step))] for j in range(n)]


def _group_sizes(settings: DrawSettings, units: Sequence[Unit]) -> dict[str, int]:
    """Part A's items per kind, checked against what the benchmark has (a SampleError names the setting)."""
    have = {kind: sum(unit.kind == kind for unit in units) for kind in KINDS}
    asked = {"variant": settings.variants, "original": settings.originals, "restatement": settings.restatements,
             "paraphrase": have["paraphrase"] if settings.paraphrases is None else settings.paraphrases}
    names = {"variant": "--variants", "original": "--originals", "restatement": "--restatements",
             "paraphrase": "--paraphrases"}
    for kind, count in asked.items():
        if count > have[kind]:
            raise SampleError(f"{names[kind]} {count}: the benchmark has {have[kind]} {kind} row(s) (0 to "
                              f"{have[kind]})")
    if settings.second_variants > settings.variants:
        raise SampleError(f"--second-variants {settings.second_variants}: part B is a subsample of part A "
                          f"(0 to --variants, {settings.variants})")
    return asked


def _draw_part_a(units: Sequence[Unit], settings: DrawSettings) -> dict[str, float]:
    """Part A: row id -> inclusion probability."""
    power = ALLOCATIONS[settings.allocation]
    by_stratum: dict[str, list[Unit]] = defaultdict(list)
    for unit in units:
        by_stratum[unit.stratum].append(unit)
    pi: dict[str, float] = {}
    for kind, count in _group_sizes(settings, units).items():
        if count == 0:
            continue
        cells: dict[str, dict[str, int]] = defaultdict(dict)
        for name, members in by_stratum.items():
            if members[0].kind == kind:
                cells[members[0].cell][name] = len(members)
        try:
            per_cell = allocate({cell: sum(s.values()) for cell, s in cells.items()}, count, power)
            per_stratum = {name: n for cell, strata in cells.items()
                           for name, n in allocate(strata, per_cell[cell], 1.0).items()}
        except ValueError as err:
            raise SampleError(f"--{kind}s {count}: cannot be shared between the {kind} strata ({err})") from None
        for name, n in per_stratum.items():
            for unit in systematic(by_stratum[name], n, settings.seed, name):
                pi[unit.row_id] = n / len(by_stratum[name])
    return pi


def _draw_part_b(units: Sequence[Unit], pi_a: Mapping[str, float], settings: DrawSettings) -> dict[str, float]:
    """Part B, a subsample of part A: row id -> inclusion probability (part A's times the cell's subsampling)."""
    if settings.second_variants == 0:
        return {}
    ratio = settings.second_variants / settings.variants
    chosen = [unit for unit in units if unit.row_id in pi_a]
    pi: dict[str, float] = {}
    for kind in KINDS:
        cells: dict[str, list[Unit]] = defaultdict(list)
        for unit in chosen:
            if unit.kind == kind:
                cells[unit.cell].append(unit)
        if not cells:
            continue
        total = settings.second_variants if kind == "variant" else round(ratio * sum(map(len, cells.values())))
        for cell, n in allocate({c: len(m) for c, m in cells.items()}, total, 1.0, minimum=0).items():
            members = sorted(cells[cell], key=lambda unit: unit.row_id)
            for unit in random.Random(f"{settings.seed}\x1fB\x1f{cell}").sample(members, n):
                pi[unit.row_id] = pi_a[unit.row_id] * n / len(members)
    return pi


def draw(units: Sequence[Unit], settings: DrawSettings) -> Drawn:
    """Part A and part B of the sample (see the module's docstring), with every stratum's and rule's size."""
    pi_a = _draw_part_a(units, settings)
    pi_b = _draw_part_b(units, pi_a, settings)
    population: dict[str, int] = defaultdict(int)
    rules: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for unit in units:
        population[unit.stratum] += 1
        rules[unit.stratum][unit.rule or "-"] += 1
    pi = {row_id: {"A": p, **({"B": pi_b[row_id]} if row_id in pi_b else {})} for row_id, p in pi_a.items()}
    return Drawn(units=[unit for unit in units if unit.row_id in pi], pi=pi, population=dict(population),
                 rules={name: dict(counts) for name, counts in rules.items()})
