"""Load any supported data format into Examples, with errors that name file, line and field."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from groundjudge.formats import ADAPTERS, RowError
from groundjudge.formats._common import head_text, read_lines
from groundjudge.paths import portable_path
from groundjudge.types import Example, Split


class DataError(ValueError):
    """Raised when input rows are invalid and skipping them was not asked for.

    Its message is one line: the first bad row in full, then (up to ``shown``) the others, and how to go on.
    """

    def __init__(self, errors: Sequence[RowError], shown: int = 10):
        self.errors = list(errors)
        rows = [err for err in self.errors if err.line > 0]
        if len(self.errors) == 1:
            hint = " (fix the row, or pass --skip-invalid to skip and count it)" if rows else ""
            super().__init__(f"{self.errors[0]}{hint}")
            return
        named = "; ".join(str(err) for err in self.errors[:shown])
        more = f"; ... and {len(self.errors) - shown} more" if len(self.errors) > shown else ""
        hint = " (fix the rows, or pass --skip-invalid to skip and count them)" if rows else ""
        super().__init__(f"{len(self.errors)} invalid rows: {named}{more}{hint}")


@dataclass
class LoadedData:
    """Examples loaded from one or more files, with the rows that were skipped."""

    examples: list[Example]
    files: list[str]
    formats: list[str]
    errors: list[RowError] = field(default_factory=list)

    @property
    def hash(self) -> str:
        """Content hash of the examples in order: the identity of the data set in run records."""
        return dataset_hash(self.examples)


def detect_format(path: Path) -> str:
    """Name of the first adapter that recognises the file, or a clear error (its first non-UTF-8 line, if any)."""
    for name, adapter in ADAPTERS.items():
        if adapter.detect(path):
            return name
    undecodable = next((text for _, text in read_lines(path) if isinstance(text, RowError)), None)
    if undecodable is not None:
        raise DataError([undecodable])
    if not head_text(path, 4096).strip():
        raise DataError([RowError(file=str(path), line=0, field="<file>", message="empty file: no rows to read")])
    known = ", ".join(ADAPTERS)
    raise DataError([RowError(file=str(path), line=0, field="<format>",
                              message=f"unrecognised format; pass --format (one of: {known})")])


def _file_error(path: Path, message: str, field: str = "<file>") -> DataError:
    return DataError([RowError(file=str(path), line=0, field=field, message=message)])


def data_files(path: str | Path, fmt: str | None = None) -> list[Path]:
    """The data files a path names: the file itself, or every data file inside a directory (sorted, hidden
    files left out; with ``fmt``, the files that format recognises, else those any format recognises)."""
    path = Path(path)
    if not path.exists():
        raise _file_error(path, "no such file or directory")
    if not path.is_dir():
        return [path]
    if fmt is not None and fmt not in ADAPTERS:
        raise _file_error(path, f"unknown format {fmt!r}; known: {', '.join(ADAPTERS)}", "--format")
    try:
        files = sorted(f for f in path.rglob("*")
                       if f.is_file() and not any(part.startswith(".") for part in f.relative_to(path).parts))
    except OSError as err:
        raise _file_error(path, f"directory not readable ({err.strerror or err})", "<directory>") from None
    unreadable = next((f for f in files if not os.access(f, os.R_OK)), None)
    if unreadable is not None:
        raise _file_error(unreadable, "not readable (permission denied); make it readable, or move it out of "
                                      f"{path}")
    adapters = [ADAPTERS[fmt]] if fmt else list(ADAPTERS.values())
    found = [f for f in files if any(a.detect(f) for a in adapters)]
    if not found:
        what = f"no {fmt} data files" if fmt else "no data files of a known format"
        others = ", ".join(f.name for f in files[:3]) + (", ..." if len(files) > 3 else "")
        held = f"it holds only {others}" if files else "it is empty"
        raise _file_error(path, f"{what} in this directory ({held})", "<directory>")
    return found


def _checked_format(path: Path, fmt: str | None) -> str:
    """The format a readable data file is read in (``fmt``, else detected); a clear error otherwise."""
    if not path.exists():
        raise _file_error(path, "no such file or directory")
    if path.is_dir():
        raise _file_error(path, "a directory: give its data files, or the directory to `groundjudge run`")
    if not os.access(path, os.R_OK):
        raise _file_error(path, "not readable (permission denied)")
    name = fmt or detect_format(path)
    if name not in ADAPTERS:
        raise _file_error(path, f"unknown format {name!r}; known: {', '.join(ADAPTERS)}", "--format")
    return name


def _file_items(path: Path, name: str) -> Iterator[Example | RowError]:
    """The examples and row errors of one file in format ``name``, as its adapter reads them."""
    try:
        yield from ADAPTERS[name].load(path)
    except OSError as err:
        raise _file_error(path, f"not readable ({err.strerror or err})") from None


def load_file(path: str | Path, fmt: str | None = None) -> tuple[list[Example], list[RowError], str]:
    """Load one file: (examples, row errors, format name). Never raises on a bad row."""
    path = Path(path)
    name = _checked_format(path, fmt)
    examples: list[Example] = []
    errors: list[RowError] = []
    for item in _file_items(path, name):
        (errors if isinstance(item, RowError) else examples).append(item)
    return examples, errors, name


@dataclass
class DataFiles:
    """A run's data files, checked in one pass and read again, example by example, whenever iterated.

    Nothing but the rows' errors and the ids of the examples (to find repeats) is kept from the checking pass, so
    the examples of a large data set are never all in memory; each iteration yields the valid examples in the
    order :func:`load_examples` lists them (rows with errors and repeated ids left out).
    """

    sources: list[tuple[Path, str]]
    """Each file and the format it is read in."""
    files: list[str]
    """The files as recorded (portable paths)."""
    formats: list[str]
    """Their formats."""
    errors: list[RowError] = field(default_factory=list)
    """The invalid rows (kept with --skip-invalid, else the scan raised)."""
    n: int = 0
    """Valid examples."""
    repeated: frozenset[tuple[int, int]] = frozenset()
    """(file index, example index in that file) of the examples left out for an id seen before."""

    def __len__(self) -> int:
        return self.n

    def __iter__(self) -> Iterator[Example]:
        for index, (path, name) in enumerate(self.sources):
            position = 0
            for item in _file_items(path, name):
                if isinstance(item, RowError):
                    continue
                if (index, position) not in self.repeated:
                    yield item
                position += 1


def scan_examples(paths: Iterable[str | Path], fmt: str | None = None, skip_invalid: bool = False,
                  visit: Callable[[Example], None] | None = None) -> DataFiles:
    """Read and validate every file once, before any work (``visit`` sees each valid example, in order);
    duplicate ids across files are errors too. Raises :class:`DataError` as :func:`load_examples` does."""
    errors: list[RowError] = []
    sources: list[tuple[Path, str]] = []
    files: list[str] = []
    seen: dict[str, int] = {}
    repeated: set[tuple[int, int]] = set()
    n = 0
    for path in (file for given in paths for file in data_files(given, fmt)):
        name = _checked_format(path, fmt)
        index = len(sources)
        sources.append((path, name))
        files.append(portable_path(path))
        position = 0
        repeats: list[RowError] = []   # listed after the file's own row errors, as the file's examples are
        for item in _file_items(path, name):
            if isinstance(item, RowError):
                errors.append(item)
                continue
            position += 1
            if item.id in seen:
                # the line of a row whose id repeats one of its own file is named by its adapter (native);
                # here an example is known by its position in the file
                repeats.append(RowError(file=str(path), line=0, field="id",
                                        message=f"duplicate id {item.id!r} in example {position} of the file "
                                                f"(first in {sources[seen[item.id]][0]})"))
                repeated.add((index, position - 1))
                continue
            seen[item.id] = index
            n += 1
            if visit is not None:
                visit(item)
        errors.extend(repeats)
    if errors and not skip_invalid:
        raise DataError(errors)
    if not n:
        what = (f"no valid rows to judge ({len(errors)} skipped; the first: {errors[0]})" if errors
                else "no examples (an empty file, or only a header)")
        raise DataError([RowError(file=", ".join(str(p) for p, _ in sources), line=0, field="<file>",
                                  message=what)])
    return DataFiles(sources=sources, files=files, formats=[name for _, name in sources], errors=errors, n=n,
                     repeated=frozenset(repeated))


def load_examples(paths: Iterable[str | Path], fmt: str | None = None, skip_invalid: bool = False) -> LoadedData:
    """Load and validate every file before any work; duplicate ids across files are errors too."""
    examples: list[Example] = []
    scanned = scan_examples(paths, fmt, skip_invalid, examples.append)
    return LoadedData(examples=examples, files=scanned.files, formats=scanned.formats, errors=scanned.errors)


def dataset_hash(examples: Sequence[Example]) -> str:
    """sha256 over the canonical JSON of the examples, in order."""
    digest = hashlib.sha256()
    for example in examples:
        digest.update(json.dumps(example.model_dump(mode="json"), sort_keys=True).encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def group_split(example: Example, dev_fraction: float) -> Split:
    """Deterministic dev/test assignment by the example's group, so a document is never in both."""
    bucket = int(hashlib.sha256(example.group.encode("utf-8")).hexdigest()[:8], 16) / 0xFFFFFFFF
    return "dev" if bucket < dev_fraction else "test"


def with_split(example: Example, split: Split) -> Example:
    """A copy of the example with its split set."""
    return example.model_copy(update={"split": split})


def assign_missing_splits(examples: Sequence[Example], dev_fraction: float) -> list[Example]:
    """Give every example without a split a dev/test split by group hash; others keep theirs."""
    return [ex if ex.split is not None else with_split(ex, group_split(ex, dev_fraction)) for ex in examples]
