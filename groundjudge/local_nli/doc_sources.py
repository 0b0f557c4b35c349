"""The documents that ``groundjudge train --from-documents`` makes claims from: plain-text files (one document per
file) or the distinct contexts of data files of any supported format (their labels are never read).

Every document is split into sentences before anything is written, so a document that yields no sentence, or a
file in no known format, stops the run with one line that names it (``skip_invalid`` skips and counts them).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from groundjudge.formats import ADAPTERS, RowError
from groundjudge.formats.load import DataError, load_examples
from groundjudge.local_nli.pairs import document_sentences, source_group
from groundjudge.paths import portable_path
from groundjudge.types import Example

TEXT_SUFFIXES = (".txt", ".text", ".md")
"""Files read as plain text: the whole file is one document."""

MIN_SENTENCE_WORDS = 4
"""A sentence needs at least this many words to count (headings and list numbers do not)."""


@dataclass(frozen=True)
class Document:
    """One source document: its sentences, the group that keeps it on one side of the split, and a unit key."""

    key: str
    """Identity of the unit of work (a hash of the text): written with its pairs, skipped on resume."""
    group: str
    file: str
    sentences: tuple[str, ...]
    example: Example
    """An unlabelled example standing for it (its context is the document), for the split and the checks."""


@dataclass
class DocumentSet:
    """The documents read from the files, per file its format and count, and what was skipped."""

    documents: list[Document]
    files: list[dict] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def _error(path: str | Path, message: str) -> DataError:
    return DataError([RowError(file=str(path), line=0, field="<file>", message=message)])


def real_sentences(text: str) -> tuple[str, ...]:
    """The sentences of a text that have at least :data:`MIN_SENTENCE_WORDS` words with a letter."""
    return tuple(s for s in document_sentences(text)
                 if sum(any(c.isalpha() for c in w) for w in s.split()) >= MIN_SENTENCE_WORDS)


def _text_examples(path: Path) -> list[Example]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise _error(path, f"not UTF-8 (byte offset {err.start})") from None
    except OSError as err:
        raise _error(path, f"not readable ({err.strerror or err})") from None
    if not text.strip():
        raise _error(path, "empty file: no document to read")
    return [Example(id=f"file:{path.name}", context=(text,), answer="", meta={"group": f"file:{path.name}"})]


def _file_examples(path: Path, fmt: str | None, skip_invalid: bool) -> tuple[list[Example], str]:
    if not path.is_file():
        raise _error(path, "no such file" if not path.exists() else "not a file: give the data files")
    if fmt is None and path.suffix.lower() in TEXT_SUFFIXES:
        return _text_examples(path), "text"
    if fmt is None and not any(adapter.detect(path) for adapter in ADAPTERS.values()):
        raise _error(path, f"no known format: plain text ({', '.join(TEXT_SUFFIXES)}) or a data file of one of "
                           f"{', '.join(ADAPTERS)} (--format to force one)")
    loaded = load_examples([path], fmt, skip_invalid)
    return loaded.examples, loaded.formats[0]


def unit_key(example: Example) -> str:
    """The key of a document: a short hash of its context (the same text is one unit, whatever its id)."""
    digest = hashlib.sha256("\x1e".join(example.context).encode("utf-8")).hexdigest()
    return digest[:16]


_RANK = {None: 0, "train": 1, "dev": 2, "test": 3}


def _distinct(examples: Sequence[Example]) -> list[Example]:
    """One example per distinct context, in first-seen order, carrying the strongest split any of its examples has
    (a document with a test example is held out as a whole)."""
    firsts: dict[str, Example] = {}
    for example in examples:
        key = unit_key(example)
        first = firsts.setdefault(key, example)
        if _RANK[example.split] > _RANK[first.split]:
            firsts[key] = first.model_copy(update={"split": example.split})
    return list(firsts.values())


def read_documents(paths: Sequence[str], fmt: str | None = None, skip_invalid: bool = False) -> DocumentSet:
    """Every distinct document of the files, in file order, each with its sentences.

    Raises :class:`DataError` (one line naming the file) for a file in no known format, and for a document
    with no sentence unless ``skip_invalid``, which skips and lists it.
    """
    out = DocumentSet(documents=[])
    seen: set[str] = set()
    for given in paths:
        path = Path(given)
        examples, name = _file_examples(path, fmt, skip_invalid)
        count = 0
        for example in _distinct(examples):
            key = unit_key(example)
            if key in seen:
                continue
            seen.add(key)
            sents = tuple(s for doc in example.context for s in real_sentences(doc))
            if not sents:
                where = example.id if name != "text" else ""
                if not skip_invalid:
                    raise _error(path, f"document {where + ' ' if where else ''}yields no sentence of "
                                       f"{MIN_SENTENCE_WORDS} words or more (--skip-invalid skips it)")
                out.skipped.append(f"{portable_path(path)}: {where or 'the file'}")
                continue
            unlabelled = example.model_copy(update={"label": None, "error_types": ()})
            out.documents.append(Document(key=key, group=source_group(example), file=portable_path(path),
                                          sentences=sents, example=unlabelled))
            count += 1
        out.files.append({"file": portable_path(path), "format": name, "documents": count})
    if not out.documents:
        raise _error(", ".join(paths), "no document with a sentence to make claims from")
    return out
