"""The LLM replies a run folder recorded, as an in-memory call cache: what a replay answers from, offline."""

from __future__ import annotations

from pathlib import Path

from groundjudge.runs.records import find_records, read_records


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
