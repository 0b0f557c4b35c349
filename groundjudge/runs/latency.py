"""What a judge's latency means: service time per answer, the concurrency it was measured at, queueing,
and the run's wall time per answer — computed from the records.

Per-answer latency (``JudgeResult.latency_s``) is service time: the answer's wall time less the time its
LLM calls waited for a client-side slot (``queue_s``). A server that serves fewer requests at once than
it is sent still queues them on its side, and that wait is part of the measured latency: it grows with
the concurrency. The run's wall time per answer (the time covered by the answers' start-to-finish
intervals, divided by the answers) tells the two apart: a p50 latency far above it means the requests
overlapped, and the notes say so.

A local judge given answers in chunks (``--local-chunk``, :mod:`groundjudge.runs.local_chunks`) records each
answer's share of its chunk's compute instead (the call's time / the answers in it); ``latency_chunk`` in the
summary is the largest chunk, a note says so, and a chunk counts as one call when the concurrency is measured.
"""

from __future__ import annotations

from typing import Any

from groundjudge.metrics import latency_stats, peak_overlap, union_seconds
from groundjudge.types import ResultRecord

LATENCY_KIND = "service time per answer: wall time less the client-side queue (queue_s)"
"""What ``latency_s`` in a summary measures."""

CHUNK_LATENCY_KIND = ("each answer's share of its chunk's compute: the time of the one call that scored the chunk / "
                      "the answers in it (batch_size)")
"""What ``latency_s`` measures for a local judge given answers in chunks (``--local-chunk``)."""

QUEUE_NOTE_SHARE = 0.5
"""A note when more than this share of the answers' time was spent waiting for a client-side slot."""


def _intervals(results: list[ResultRecord]) -> list[tuple[float, float]]:
    return [(r.result.started_at, r.result.finished_at) for r in results
            if r.result.started_at is not None and r.result.finished_at is not None]


def _calls(results: list[ResultRecord]) -> list[tuple[float, float]]:
    """The intervals of the scoring calls: one per answer, except that the answers of one chunk (which share
    their call's interval) count once."""
    chunked = {(r.result.started_at, r.result.finished_at) for r in results
               if r.result.batch_size and r.result.started_at is not None and r.result.finished_at is not None}
    alone = [(r.result.started_at, r.result.finished_at) for r in results if not r.result.batch_size]
    return [*chunked, *[(a, b) for a, b in alone if a is not None and b is not None]]


def chunk_size(results: list[ResultRecord]) -> int | None:
    """The largest chunk a local judge's answers were scored in (``batch_size``), or None when none was."""
    sizes = [r.result.batch_size for r in results if r.result.batch_size]
    return max(sizes) if sizes else None


def _server_per_answer(results: list[ResultRecord]) -> list[float]:
    """Per answer, the provider's own time summed over its calls; only answers whose every call has one."""
    out = []
    for r in results:
        made = [c for c in r.result.calls if not c.cached]
        if made and all(c.server_s is not None for c in made):
            out.append(sum(c.server_s or 0.0 for c in made))
    return out


def measured_concurrency(results: list[ResultRecord]) -> int | None:
    """The concurrency the latency was measured at: the most calls to the model in flight at once (LLM judges),
    else the most examples judged at once; None for records that predate these fields."""
    in_flight = [c.in_flight for r in results for c in r.result.calls if not c.cached and c.in_flight]
    if in_flight:
        return max(in_flight)
    intervals = _calls(results)   # a chunk is one call: its answers were scored together, not concurrently
    return peak_overlap(intervals) if intervals else None


def latency_summary(results: list[ResultRecord]) -> dict[str, Any]:
    """Latency fields of a judge's summary: kind, concurrency, queue, wall time per answer, server time, notes."""
    service = [r.result.latency_s for r in results]
    queued = [r.result.queue_s for r in results]
    intervals = _intervals(results)
    limits = [c.concurrency for r in results for c in r.result.calls if c.concurrency]
    chunk = chunk_size(results)
    out: dict[str, Any] = {
        "latency_kind": CHUNK_LATENCY_KIND if chunk and chunk > 1 else LATENCY_KIND,
        "latency_chunk": chunk,
        "latency_concurrency": measured_concurrency(results),
        "concurrency_limit": max(limits) if limits else None,
        "queue_s": latency_stats(queued),
        "queue_share": sum(queued) / total if (total := sum(queued) + sum(service)) > 0 else 0.0,
        "wall_s_per_answer": union_seconds(intervals) / len(intervals) if intervals else None,
        "server_slots": min(slots) if (slots := [c.server_slots for r in results for c in r.result.calls
                                                  if c.server_slots]) else None,
    }
    server = _server_per_answer(results)
    if server:
        out["server_s"] = latency_stats(server)
    out["latency_notes"] = latency_notes(latency_stats(service), out)
    return out


def latency_notes(latency: dict[str, float], fields: dict[str, Any]) -> list[str]:
    """Warnings when the latency grew with the concurrency it was measured at, or queueing dominated.

    Latency grows with concurrency when more requests were in flight than the server serves at once
    (``server_slots``: a local server's /props, 1 for a local server that does not say): the server's own
    queue is then inside every request's time. A provider's processing-time header does not settle it:
    llama-cpp-python's ``openai-processing-ms`` includes the wait for its one slot.
    """
    notes = []
    if (fields.get("latency_chunk") or 0) > 1:
        notes.append(f"latency is each answer's share of its chunk's compute (chunks of up to "
                     f"{fields['latency_chunk']} answers scored in one call; --local-chunk 1 measures one answer "
                     "at a time)")
    at, wall, slots = fields["latency_concurrency"], fields["wall_s_per_answer"], fields.get("server_slots")
    if at and slots and at > slots:
        notes.append(
            f"p50 latency {latency['p50']:.3g} s was measured at {at} requests in flight to a server that serves "
            f"{slots} at once: its queue is counted as latency, which grows with concurrency"
            + (f" (the run's wall time per answer was {wall:.3g} s)" if wall else "")
            + f"; use concurrency={slots} (the default, concurrency=auto) for the latency of a request alone.")
    if fields["queue_share"] > QUEUE_NOTE_SHARE:
        limit = fields["concurrency_limit"]
        notes.append(
            f"{fields['queue_share']:.0%} of the answers' time was spent waiting for a client-side slot"
            + (f" (limit {limit} calls in flight)" if limit else "")
            + ": left out of the latency; the wall time per answer says how long a run takes.")
    return notes


def at_concurrency(summary: dict[str, Any]) -> str:
    """``@N``: the concurrency a judge summary's latency was measured at (``@?`` for old records)."""
    at = summary.get("latency_concurrency")
    return f"@{at}" if at else "@?"
