"""The ``--local-chunk`` run option: how many answers a local judge with a batch path is handed at once.

Its default and its check live here, apart from the engine options that carry it and the chunked judging that
uses it (:mod:`groundjudge.runs.local_chunks`), so that both can import them.
"""

from __future__ import annotations

from typing import Any

from groundjudge.errors import UsageError

DEFAULT_LOCAL_CHUNK = 32
"""Answers handed to a local judge's ``score_batch`` at once when the run does not say."""

LOCAL_CHUNK_FLAG = "--local-chunk"
"""The flag (and, as ``local_chunk``, the run option) that sizes the chunks."""


def check_local_chunk(value: Any) -> int:
    """``value`` when it is a usable chunk size, else a UsageError naming the flag and the allowed values (a
    UsageError, not a ValueError: it leaves pydantic as the CLI's one-line error)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(f"{LOCAL_CHUNK_FLAG} (local_chunk) must be a whole number of answers >= 1 "
                         f"(1: one answer at a time; default {DEFAULT_LOCAL_CHUNK}); got {value!r}")
    return value
