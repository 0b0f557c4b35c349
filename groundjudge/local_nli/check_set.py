"""The fixed check set shipped with the package: (premise, hypothesis) pairs on which ``dtype=auto`` measures
whether a faster precision gives the verdicts float32 gives (see :mod:`groundjudge.local_nli.backend_check`).

``check_set.jsonl`` beside this module: a header line saying where the pairs come from (the bundled legal QA
sample and SummEdits sample, Apache-2.0; built by ``scripts/make_check_set.py``), then one pair a line.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

CHECK_SET = Path(__file__).with_name("check_set.jsonl")
"""The shipped file."""


@dataclass(frozen=True)
class CheckSet:
    """The pairs, their source (the file's header) and a hash of the file (part of every cached check's key)."""

    premises: tuple[str, ...]
    hypotheses: tuple[str, ...]
    source: str
    digest: str

    def __len__(self) -> int:
        """How many pairs."""
        return len(self.premises)


def read_check_set(path: Path = CHECK_SET) -> CheckSet:
    """The pairs of a check-set file (header line first)."""
    raw = path.read_bytes()
    rows = [json.loads(line) for line in raw.decode("utf-8").splitlines() if line.strip()]
    header = rows[0].get("header", {}) if rows else {}
    pairs = [row for row in rows if "premise" in row]
    return CheckSet(premises=tuple(r["premise"] for r in pairs), hypotheses=tuple(r["hypothesis"] for r in pairs),
                    source=str(header.get("source", "")), digest=hashlib.sha256(raw).hexdigest()[:16])


@lru_cache(maxsize=1)
def check_set() -> CheckSet:
    """The shipped check set (read once per process)."""
    return read_check_set()
