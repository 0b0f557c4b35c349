"""The LLM replies a run folder recorded, as an in-memory call cache: what a replay answers from, offline."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from groundjudge.runs.records import find_records, read_records

if TYPE_CHECKING:
    from groundjudge.llm import CallCache


def recorded_cache(run_dir: str | Path):
    """A :class:`~groundjudge.llm.cache.CallCache` (memory only) holding every LLM reply recorded in a run folder
    (``records.jsonl`` and ``calibration.jsonl``, plain or gzipped), keyed as the calls were."""
    from groundjudge.llm import CallCache
    from groundjudge.llm.cache import recorded_entry

    cache = CallCache(None)
    for path in (find_records(run_dir, "calibration.jsonl"), find_records(run_dir)):
        if not path.exists():
            continue
        for record in read_records(path).results:
            for call in record.result.calls:
                if call.cache_key and call.raw_output is not None:
                    cache.put(call.cache_key, recorded_entry(call))
    return cache


def seed_cache(run_dirs: Iterable[str | Path], cache: CallCache) -> int:
    """Copy the LLM replies recorded in run folders into ``cache`` where it has none for the key; the number copied.

    A later call reads one only when its key (model, rendered prompt, schema, sampling) is the recorded call's, so a
    run made with an older prompt gives no hit: hits are counted where they happen, never assumed."""
    copied = 0
    for run_dir in run_dirs:
        for key, entry in recorded_cache(run_dir).memory.items():
            if cache.get(key) is None:
                cache.put(key, entry)
                copied += 1
    return copied
