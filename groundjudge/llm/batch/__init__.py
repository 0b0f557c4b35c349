"""Provider batch APIs for LLM judges (OpenAI Batch API, Anthropic Message Batches): half price, built on the cache.

A judge with ``batch=true`` (or ``groundjudge run --batch``) judges in rounds. In each round every unfinished
example is judged as usual, but a call whose request is not in the call cache is not sent: the client files the
request (``requests``: the exact body litellm would send) and raises :class:`Deferred`, which ends that example's
round. At the round's end the driver (``driver``) submits the pending requests as one batch per provider and model
(``openai_batch``, ``anthropic_batch``), polls them, and writes each reply into the cache under its request's key
(``replies``: read as the online path reads replies, priced at half the online price); the next round finds them
there, so a chain (claims: extract, then verify) advances one stage per round without any judge knowing about
batches. The run folder's ``batches.jsonl`` (``ledger``) keeps every batch's id and state, so a resumed run polls
the open batches instead of submitting their requests again. The round loop itself is in
:mod:`groundjudge.runs.batch_rounds`.
"""

from groundjudge.llm.batch.requests import (
    BATCH_PROVIDERS,
    BatchFailure,
    BatchSession,
    BatchUnavailable,
    Deferred,
    PendingRequest,
    deferral_scope,
    provider_of,
    require_provider,
)

__all__ = ["BATCH_PROVIDERS", "BatchFailure", "BatchSession", "BatchUnavailable", "Deferred", "PendingRequest",
           "deferral_scope", "provider_of", "require_provider"]
