"""The words around a comparison's figures: the latency caption of the terminal table, and the notes on what data
the merged runs judged (:mod:`groundjudge.report.compare` computes the figures; this module only words them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.text import Text


def latency_caption(judges: Mapping[str, Mapping[str, Any]]) -> Text | None:
    """The comparison table's caption naming each judge whose latency is a share of a chunk's compute (a
    ``latency_chunk`` over 1 in its summary), or None when every judge was timed one answer at a time."""
    chunked = {spec: s["latency_chunk"] for spec, s in judges.items() if (s.get("latency_chunk") or 0) > 1}
    if not chunked:
        return None
    return Text("latency of " + ", ".join(f"{spec} (chunks of {size})" for spec, size in chunked.items())
                + ": each answer's share of its chunk's compute (one call's time / its answers; "
                  "--local-chunk 1: one answer at a time)")


def data_notes(contents: Sequence[frozenset[str]], hashes: Sequence[str]) -> list[str]:
    """The caveat on two or more runs' data, from each run's judged example keys and its data hash: none when they
    judged the same examples under one hash, a reassurance when only the hashes differ, else a warning."""
    if len(set(contents)) == 1:
        if len(set(hashes)) > 1:
            return [("The runs' data hashes differ, but they evaluated the same examples (only the splits "
                     "assigned to them differ): their rows are comparable.")]
        return []
    shared = frozenset.intersection(*contents)
    named = ", ".join(sorted({h[:12] for h in hashes}))
    return [(f"These runs judged different data (data hashes {named}; {len(shared)} examples in all of them): "
             "compare their rows with care. McNemar tests use only the examples both judges judged.")]


def common_note(shared: int) -> str:
    """The note that ``--common`` cut every run down to the ``shared`` examples all of them judged."""
    return (f"Every run is restricted to the {shared} examples all of them judged (--common): the rows are on "
            "the same data.")


def latency_notes(labels: Mapping[str, str], judges: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Each judge's own latency notes (its summary's ``latency_notes``), prefixed with its display name."""
    return [f"{labels[key]}: {note}" for key, stats in judges.items() for note in stats.get("latency_notes", [])]
