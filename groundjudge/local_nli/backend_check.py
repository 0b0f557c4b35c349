"""``dtype=auto``: run a model in bfloat16 only where its verdicts are those of float32.

Where the device computes bfloat16 natively (:mod:`~groundjudge.local_nli.precision`), ``auto`` proposes it;
before the model is used, :func:`settle` scores the shipped check set
(:mod:`~groundjudge.local_nli.check_set`, 300 pairs) with the model in float32 and in bfloat16 and keeps
bfloat16 only if at least 99% of the verdicts agree (``GROUNDJUDGE_AUTO_MIN_AGREEMENT``, a share; above 1
every check fails, which tests use). A verdict is what the judge decides from one pair with its default
threshold: the argmax label of an NLI model (entailment / neutral / contradiction), P(supported) >= 0.5 of
a support scorer (HHEM, MiniCheck), P(hallucinated) >= 0.5 on some answer token of a tagger. A failed check
falls back to float32 with a one-line warning that says the agreement measured.

The check's two loads are private (:func:`groundjudge.local_nli.model_cache.unshared`): nothing stays loaded.
It runs once per machine and model: the measured agreement is cached on disk
(:mod:`~groundjudge.local_nli.backend_cache`) and in the process.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

from groundjudge.local_nli import backend_cache
from groundjudge.local_nli.backend_cache import CheckRecord
from groundjudge.local_nli.check_set import check_set
from groundjudge.local_nli.devices import DeviceError, Placement
from groundjudge.local_nli.model_cache import unshared

log = logging.getLogger(__name__)

MIN_AGREEMENT = 0.99
"""The share of check-set verdicts a faster precision must give as float32 does to be chosen."""
ENV_MIN_AGREEMENT = "GROUNDJUDGE_AUTO_MIN_AGREEMENT"
"""The environment variable that changes :data:`MIN_AGREEMENT` (a share, e.g. 0.995)."""

Verdicts = Callable[[str], Sequence[Hashable]]
"""A model's verdict on every check-set pair, loaded in the precision named (``float32``, ``bfloat16``)."""

_MEMO: dict[str, CheckRecord] = {}
_WARNED: set[str] = set()
_LOCK = threading.RLock()


def min_agreement() -> float:
    """The bar a faster precision must reach (``GROUNDJUDGE_AUTO_MIN_AGREEMENT``, else 0.99)."""
    raw = os.environ.get(ENV_MIN_AGREEMENT, "").strip()
    if not raw:
        return MIN_AGREEMENT
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise DeviceError(f"{ENV_MIN_AGREEMENT}={raw!r} is not a share; use a number in (0, 1], e.g. 0.99 "
                          "(above 1 every check fails)")
    return value


def forget() -> None:
    """Forget the checks remembered in this process (the disk cache stays): the next settle reads the disk."""
    with _LOCK:
        _MEMO.clear()
        _WARNED.clear()


def agreement(reference: Sequence[Hashable], other: Sequence[Hashable]) -> float:
    """The share of positions where the two verdict lists agree."""
    if len(reference) != len(other) or not reference:
        raise ValueError(f"verdict lists of {len(reference)} and {len(other)} items cannot be compared")
    return sum(a == b for a, b in zip(reference, other)) / len(reference)


def _torch_version() -> str:
    import torch

    return str(torch.__version__)


def measure(probe: CheckRecord, verdicts_at: Verdicts) -> CheckRecord:
    """Score the check set in float32 and in ``probe.dtype`` (private loads) and record how many agree."""
    start = time.perf_counter()
    with unshared():
        reference = list(verdicts_at("float32"))
        candidate = list(verdicts_at(probe.dtype))
    return probe.model_copy(update={
        "pairs": len(reference), "agreement": agreement(reference, candidate),
        "seconds": round(time.perf_counter() - start, 3),
        "measured_at": datetime.now(timezone.utc).isoformat(timespec="seconds")})


def measured(model: str, rule: str, where: Placement, verdicts_at: Verdicts) -> tuple[CheckRecord, bool]:
    """The check of (model folder, rule, device, dtype) on this machine: remembered, cached on disk, or run now (and
    cached). Returns the record and whether it was read rather than run."""
    probe = CheckRecord(model=backend_cache.model_identity(model), rule=rule, device=where.device,
                        machine=backend_cache.machine_identity(where.device), torch=_torch_version(),
                        dtype=where.dtype, check_set=check_set().digest, pairs=0, agreement=0.0, seconds=0.0,
                        measured_at="")
    key = backend_cache.record_key(probe)
    with _LOCK:   # one check at a time: a second thread asking for the same model waits and reads the result
        if key in _MEMO:
            return _MEMO[key], True
        record = backend_cache.read(key)
        cached = record is not None
        if record is None:
            with backend_cache.locked(key):   # another process checking the same model: wait, then read its record
                record = backend_cache.read(key)
                cached = record is not None
                if record is None:
                    log.info("dtype=auto: checking %s in %s against float32 on %d pairs (once per machine and "
                             "model)", model, where.dtype, len(check_set()))
                    record = measure(probe, verdicts_at)
                    backend_cache.write(record)
        _MEMO[key] = record
        return record, cached


def outcome(record: CheckRecord, minimum: float, cached: bool) -> str:
    """How a check went, in words (the placement's note)."""
    share = f"{record.agreement:.1%} of {record.pairs} check-set verdicts (bar {minimum:.1%})"
    when = f"measured {record.measured_at[:10]} in {record.seconds:.1f} s" + (", cached" if cached else "")
    if record.agreement >= minimum:
        return f"dtype=auto: {record.dtype} agrees with float32 on {share}; {when}"
    return f"dtype=auto: {record.dtype} agrees with float32 on only {share}, so float32; {when}"


def settle(where: Placement, model: str, rule: str, verdicts_at: Verdicts) -> Placement:
    """The placement to load: ``where`` as given unless its dtype is ``auto``'s bfloat16 proposal, which is
    kept only when the check passes (else float32, with one warning per model and process). ``model`` is the
    model's folder (its identity: :func:`backend_cache.model_identity`), ``rule`` names how verdicts are read
    from it (and the loader, where one folder loads several ways)."""
    if not where.auto:
        return where
    if where.dtype == "float32":
        return replace(where, note=f"dtype=auto: no native bfloat16 on this {where.device}")
    record, cached = measured(model, rule, where, verdicts_at)
    minimum = min_agreement()
    note = outcome(record, minimum, cached)
    if record.agreement >= minimum:
        return replace(where, note=note)
    with _LOCK:
        if model + rule not in _WARNED:
            _WARNED.add(model + rule)
            log.warning("%s: %s", model, note)
    return Placement(device=where.device, dtype="float32", auto=True, note=note)


def settle_scorer(where: Placement, model: str, rule: str, build: Callable[[Placement], Any],
                  verdicts: Callable[[Any], Sequence[Hashable]]) -> Placement:
    """:func:`settle` for a loader: ``build(placement)`` makes the scorer (its loads are private during the
    check), ``verdicts(scorer)`` reads its verdicts on the check set."""
    return settle(where, model, rule, lambda dtype: verdicts(build(Placement(device=where.device, dtype=dtype))))


def check_pairs() -> tuple[list[str], list[str]]:
    """The check set's premises and hypotheses, as lists."""
    pairs = check_set()
    return list(pairs.premises), list(pairs.hypotheses)


def support_verdicts(scorer: Any) -> list[bool]:
    """A support scorer's verdicts on the check set: P(supported) >= 0.5 (HHEM's and MiniCheck's default
    threshold)."""
    return [bool(p >= 0.5) for p in scorer.score_pairs(*check_pairs())]
