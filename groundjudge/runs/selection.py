"""Which examples a run judges and which it fits thresholds on, chosen without holding the examples.

The data files are checked in one pass (:func:`~groundjudge.formats.load.scan_examples`) that keeps, per valid
example, one byte: its split and whether its group falls in the dev share. The evaluated and dev parts, the
``--sample`` and ``--calibrate-sample`` draws are chosen from those bytes exactly as they were chosen from the
examples in memory, and each part is a :class:`SelectedExamples`: the chosen positions, read again from the files
every time it is iterated (with the split each one was given and the human gold of ``--labels``). A run over
many answers thus holds a few bytes per answer, not the answers.
"""

from __future__ import annotations

import random
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from groundjudge.formats.load import DataFiles, group_split, scan_examples, with_split
from groundjudge.types import Example

SPLITS: tuple[str | None, ...] = (None, "train", "dev", "test")
"""The split of an example as a code: its index here."""

DEV_BUCKET = 4
"""The bit of a code set when the example's group falls in the ``--dev-fraction`` dev share."""


class SelectedExamples:
    """Some examples of a data set, in data order, read from the files at each iteration.

    ``positions`` index the valid examples of ``data`` (ascending); an example without a split gets the one the
    group split gave it when ``assign`` is set, and its gold from ``gold`` when that names its id.
    """

    def __init__(self, data: Iterable[Example], positions: Iterable[int], assign: float | None = None,
                 gold: Mapping[str, Any] | None = None):
        self.data = data
        self.positions = array("q", positions)
        self.assign = assign
        self.gold = gold

    def __len__(self) -> int:
        return len(self.positions)

    def _as_chosen(self, example: Example) -> Example:
        if self.gold is not None and example.id in self.gold:
            from groundjudge.labels.gold import relabel_examples

            example = relabel_examples([example], self.gold)[0]
        if self.assign is not None and example.split is None:
            example = with_split(example, group_split(example, self.assign))
        return example

    def __iter__(self) -> Iterator[Example]:
        if not self.positions:
            return
        wanted, last = 0, self.positions[-1]
        for position, example in enumerate(self.data):
            if position == self.positions[wanted]:
                yield self._as_chosen(example)
                wanted += 1
                if position == last:
                    return


class Joined:
    """Several example collections iterated one after another, as often as asked (``len`` their sum)."""

    def __init__(self, *parts: Any):
        self.parts = parts

    def __len__(self) -> int:
        return sum(len(part) for part in self.parts)

    def __iter__(self) -> Iterator[Example]:
        for part in self.parts:
            yield from part


class Filtered:
    """The items of a re-iterable collection that ``keep`` accepts, iterated as often as asked (counted once,
    in one pass, when made)."""

    def __init__(self, items: Iterable[Any], keep: Callable[[Any], bool]):
        self.items = items
        self.keep = keep
        self.count = sum(1 for item in items if keep(item))

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[Any]:
        return (item for item in self.items if self.keep(item))


@dataclass
class Chosen:
    """The parts of a run's data: what is judged into the records, what thresholds are fitted on."""

    data: DataFiles
    """The data files, checked."""
    evaluated: SelectedExamples
    """The examples judged into records.jsonl."""
    dev: SelectedExamples
    """The examples thresholds are fitted on (empty when nothing is calibrated)."""
    split_name: str
    """The name of the evaluated part (``test``, ``all but dev``, ...)."""
    cal_source: str | None
    """Where the dev examples come from, for the calibration record."""


def _drawn(positions: list[int], size: int | None, seed: int) -> list[int]:
    """A seeded sample of ``size`` positions in data order (all when ``size`` is None or not smaller): the
    examples ``random.Random(seed).sample`` draws from the examples at those positions."""
    if not size or size >= len(positions):
        return positions
    return sorted(random.Random(seed).sample(positions, size))


def choose_examples(args: Any, calibrating: bool) -> Chosen:
    """The evaluated and dev parts of ``args.data`` (a run's options: split, dev fraction, labels, samples,
    calibrate_on), as the run has always chosen them; raises the data's errors before anything is judged."""
    codes = bytearray()
    ids: set[str] | None = set() if args.labels else None

    def note(example: Example) -> None:
        bucket = DEV_BUCKET if group_split(example, args.dev_fraction) == "dev" else 0
        codes.append(SPLITS.index(example.split) | bucket)
        if ids is not None:
            ids.add(example.id)

    data = scan_examples(args.data, args.format, args.skip_invalid, note)
    gold = None
    if args.labels:
        from groundjudge.labels.gold import load_gold

        gold = load_gold(args.labels, ids)
    everything = range(len(codes))
    if args.calibrate_on:
        dev_data = scan_examples(args.calibrate_on, None, args.skip_invalid)   # each file's format detected
        evaluated = [i for i in everything if args.split is None or SPLITS[codes[i] & 3] == args.split]
        dev = SelectedExamples(dev_data, _drawn(list(range(len(dev_data))), args.calibrate_sample, args.seed))
        return Chosen(data, SelectedExamples(data, _drawn(evaluated, args.sample, args.seed), gold=gold), dev,
                      args.split or "all", ",".join(args.calibrate_on))
    assign = (calibrating or args.split) and all(code & 3 == 0 for code in codes) and args.dev_fraction > 0
    if assign:
        split_of = ["dev" if code & DEV_BUCKET else "test" for code in codes]
        source = f"split:dev (group-hash {args.dev_fraction:.0%} of the data)"
    else:
        split_of = [SPLITS[code & 3] for code in codes]
        source = "split:dev"
    dev_positions = [i for i in everything if split_of[i] == "dev"] if calibrating else []
    if args.split:
        evaluated = [i for i in everything if split_of[i] == args.split]
    elif dev_positions:
        evaluated = [i for i in everything if split_of[i] != "dev"]
    else:
        evaluated = list(everything)
    name = args.split or ("all but dev" if dev_positions else "all")
    fraction = args.dev_fraction if assign else None
    return Chosen(data, SelectedExamples(data, _drawn(evaluated, args.sample, args.seed), fraction, gold),
                  SelectedExamples(data, _drawn(dev_positions, args.calibrate_sample, args.seed), fraction, gold),
                  name, source if dev_positions else None)
