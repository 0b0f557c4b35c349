"""Helpers shared by the format adapters: row errors, file sniffing, ids."""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from groundjudge.types import Example


class RowError(BaseModel):
    """A bad input row: which file, which line (1-based) and which field."""

    file: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        """``file:line: field 'f': message`` on one line; a whole-file error (line 0) names no line, and no
        field when its field is a placeholder such as ``<file>``."""
        message = " ".join(self.message.split())
        if self.line > 0:
            return f"{self.file}:{self.line}: field '{self.field}': {message}"
        if self.field.startswith("<"):
            return f"{self.file}: {message}"
        return f"{self.file}: field '{self.field}': {message}"


_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]+")


def key_field(base: str, key: Any) -> str:
    """The field path of ``base``'s member ``key``: ``base.key`` for a plain key (``nda-1``), else the key
    JSON-quoted, ``base["a key\\n"]``, so a key with dots, spaces or line breaks still names one field on one line."""
    text = str(key)
    return f"{base}.{text}" if _PLAIN_KEY.fullmatch(text) else f"{base}[{json.dumps(text)}]"


MAX_META_DEPTH = 100
"""How deeply a row's meta may nest: far beyond any real data set, well within what the records can store."""


def nesting_depth(value: Any) -> int:
    """How many lists and objects deep a JSON value goes (0 for a scalar), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list | tuple):
            deepest = max(deepest, depth + 1)
            stack.extend((inner, depth + 1) for inner in (item.values() if isinstance(item, dict) else item))
    return deepest


def make_example(path: Path, line: int, **fields: Any) -> Example | RowError:
    """Build an Example, turning a validation failure into a RowError for that line."""
    if nesting_depth(fields.get("meta")) > MAX_META_DEPTH:
        return RowError(file=str(path), line=line, field="meta", message=f"nested deeper than {MAX_META_DEPTH} levels")
    try:
        return Example(**fields)
    except ValidationError as err:
        first = err.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "<row>"
        return RowError(file=str(path), line=line, field=field, message=first["msg"])


def encoding_error(path: Path, line: int, raw: bytes, err: UnicodeDecodeError, offset: int) -> RowError:
    """The RowError of a line that is not UTF-8: its line, the bad byte and its offset in the file."""
    return RowError(file=str(path), line=line, field="<encoding>",
                    message=f"not UTF-8 (byte 0x{raw[err.start]:02x} at byte offset {offset + err.start} of the "
                            f"file, column {err.start + 1} of the line)")


class JSONTooDeep(json.JSONDecodeError):
    """JSON nested more deeply than the parser can follow (it would otherwise raise RecursionError)."""


def decode_json(text: str, pos: int | None = None) -> Any:
    """``json.loads(text)``, or ``(value, end)`` decoded from ``pos`` when given; too deep a nesting is a
    :class:`JSONTooDeep` (a JSONDecodeError at ``pos``), not a RecursionError."""
    try:
        return json.loads(text) if pos is None else _DECODER.raw_decode(text, pos)
    except RecursionError:
        raise JSONTooDeep("nested too deeply to read", text, pos or 0) from None


_DECODER = json.JSONDecoder()


def decoded_lines(path: Path) -> Iterator[tuple[int, str, RowError | None]]:
    """Each line of a text file as (1-based number, text without its line ending, encoding error or None).

    A UTF-8 byte-order mark and CRLF endings are accepted silently. A line that is not UTF-8 comes with the
    RowError naming it and the byte offset (its text decoded with replacement characters, for parsers that
    must keep counting lines); reading goes on with the next line.
    """
    offset = 0
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            body = raw[len(codecs.BOM_UTF8):] if number == 1 and raw.startswith(codecs.BOM_UTF8) else raw
            try:
                yield number, body.decode("utf-8").rstrip("\r\n"), None
            except UnicodeDecodeError as err:
                error = encoding_error(path, number, body, err, offset + len(raw) - len(body))
                yield number, body.decode("utf-8", errors="replace").rstrip("\r\n"), error
            offset += len(raw)


def read_lines(path: Path) -> Iterator[tuple[int, str | RowError]]:
    """Each line of a text file as (number, text), or (number, RowError) for a line that is not UTF-8."""
    for number, text, error in decoded_lines(path):
        yield number, error or text


def read_text(path: Path) -> str | RowError:
    """A whole text file decoded as UTF-8 (BOM dropped, CRLF kept for the parser), or the RowError of its first
    line that is not UTF-8."""
    raw = path.read_bytes()
    start = len(codecs.BOM_UTF8) if raw.startswith(codecs.BOM_UTF8) else 0
    try:
        return raw[start:].decode("utf-8")
    except UnicodeDecodeError as err:
        at = start + err.start
        line_start = raw.rfind(b"\n", 0, at) + 1
        line_end = raw.find(b"\n", at)
        line = raw[line_start:line_end if line_end >= 0 else len(raw)]
        local = UnicodeDecodeError(err.encoding, line, at - line_start, at - line_start + 1, err.reason)
        return encoding_error(path, raw.count(b"\n", 0, at) + 1, line, local, line_start)


def read_json_document(path: Path) -> Any | RowError:
    """A whole-file JSON document, or one RowError naming the line that is not UTF-8 or not valid JSON."""
    text = read_text(path)
    if isinstance(text, RowError):
        return text
    try:
        return decode_json(text)
    except JSONTooDeep as err:
        return RowError(file=str(path), line=0, field="<json>", message=f"not readable as JSON: {err.msg}")
    except json.JSONDecodeError as err:
        return RowError(file=str(path), line=err.lineno, field="<json>", message=f"not readable as JSON: {err}")


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any] | RowError]]:
    """Yield (line number, object) for each non-blank line; a bad line (JSON, encoding) yields a RowError."""
    for number, text in read_lines(path):
        if isinstance(text, RowError):
            yield number, text
            continue
        if not text.strip():
            continue
        try:
            obj = decode_json(text)
        except json.JSONDecodeError as err:
            yield number, RowError(file=str(path), line=number, field="<json>", message=str(err))
            continue
        if not isinstance(obj, dict):
            yield number, RowError(file=str(path), line=number, field="<row>", message="not a JSON object")
            continue
        yield number, obj


def head_text(path: Path, size: int = 1_000_000) -> str:
    """The first ``size`` bytes of a file as text, for sniffing a format: BOM dropped, undecodable bytes
    replaced (the loader reports them with their line), "" when unreadable."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(size)
    except OSError:
        return ""
    return raw.removeprefix(codecs.BOM_UTF8).decode("utf-8", errors="replace")


def first_jsonl_object(path: Path, tries: int = 5) -> dict[str, Any] | None:
    """The first JSON object of a JSON-lines file, or None if it does not look like one.

    Up to ``tries`` leading lines that are not UTF-8 or not JSON are passed over, so that a file whose first
    row is broken is still recognised (the loader names that row); the first line that is JSON decides.
    """
    try:
        for _, text in read_lines(path):
            if isinstance(text, RowError) or not text.strip():
                tries -= isinstance(text, RowError)
            else:
                try:
                    obj = decode_json(text)
                except json.JSONDecodeError:
                    tries -= 1
                else:
                    return obj if isinstance(obj, dict) else None
            if tries <= 0:
                return None
    except OSError:
        return None
    return None


def csv_header(path: Path, delimiter: str = ",") -> list[str]:
    """The header row of a CSV (or TSV) file, or [] if unreadable."""
    try:
        return next(csv.reader(io.StringIO(head_text(path)), delimiter=delimiter), [])
    except csv.Error:
        return []


def json_head(path: Path, size: int = 4096) -> str:
    """The first characters of a file, for cheap sniffing of JSON documents."""
    return head_text(path, size)


def short_hash(*parts: str) -> str:
    """A 12-hex-digit content hash, used for group ids of shared documents."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()
    return digest[:12]


def first_array_object(path: Path, head_size: int = 1_000_000) -> dict[str, Any] | None:
    """The first object of a file holding a JSON array, or None if it is not one."""
    for size in (head_size, None):
        text = head_text(path, size if size else -1)
        stripped = text.lstrip()
        if not stripped.startswith("["):
            return None
        body = stripped[1:].lstrip()
        try:
            obj, _ = decode_json(body, 0)
        except ValueError:
            if size is None or len(text) < size:
                return None
            continue
        return obj if isinstance(obj, dict) else None
    return None


def read_delimited(path: Path, delimiter: str = ",") -> Iterator[tuple[int, dict[str, str] | RowError]]:
    """Yield (1-based line where the row starts, row dict) from a CSV/TSV file with a header.

    The first data row gets the line after the (possibly multi-line) header. Long fields (whole documents) are
    allowed: the csv module's field size limit is raised to 1 GiB. A row that spans a line which is not UTF-8
    yields that line's encoding RowError instead of the row; a file the csv module cannot parse further yields
    one RowError (field "<csv>") and stops.
    """
    csv.field_size_limit(max(csv.field_size_limit(), 1 << 30))
    bad: dict[int, RowError] = {}

    def decoded() -> Iterator[str]:
        for number, text, error in decoded_lines(path):
            if error is not None:
                bad[number] = error
            yield text + "\n"

    line = 0
    try:
        reader = csv.DictReader(decoded(), delimiter=delimiter)
        if reader.fieldnames is None:  # reads the header, so line_num is where it ends
            return
        header_errors = [bad[n] for n in sorted(bad) if n <= reader.line_num]
        if header_errors:
            yield header_errors[0].line, header_errors[0]
            return
        line = reader.line_num
        for row in reader:
            spanned = [bad[n] for n in range(line + 1, reader.line_num + 1) if n in bad]
            yield (spanned[0].line, spanned[0]) if spanned else (line + 1, row)
            line = reader.line_num
    except csv.Error as err:
        yield line + 1, RowError(file=str(path), line=line + 1, field="<csv>", message=str(err))
