"""How many calls to send a model at once: what the server can serve, not more.

``concurrency="auto"`` (the default) resolves to :data:`HOSTED_CONCURRENCY` for hosted providers
(no ``api_base``, or one on a public host). For an ``api_base`` on this machine or the local network
it asks the server once per base (cached for the process) ``GET <base without /v1>/props``:
llama.cpp's server answers with ``total_slots`` (requests it serves at once) and its per-slot
context; anything else — no such route (llama-cpp-python's server, Ollama, vLLM), an error, no
answer within :data:`PROBE_TIMEOUT_S` — gives :data:`UNKNOWN_LOCAL_CONCURRENCY`, since a local
server that queues requests would otherwise count queueing as latency. An explicit number is used
as given.
"""

from __future__ import annotations

import asyncio
import ipaddress
import threading
from functools import lru_cache
from urllib.parse import urlsplit

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from groundjudge.llm.settings import LLMSettings

HOSTED_CONCURRENCY = 8
"""Calls in flight per model for hosted providers."""

UNKNOWN_LOCAL_CONCURRENCY = 1
"""Calls in flight for a local server that does not say how many it serves at once."""

PROBE_TIMEOUT_S = 2.0
"""How long the /props probe waits for a local server."""

LOCAL_HOSTNAMES = frozenset({"localhost", "host.docker.internal"})
"""Host names taken as local besides loopback and private addresses and ``*.local``."""


_PROBE_LOCK = threading.Lock()


class _GenerationSettings(BaseModel):
    model_config = ConfigDict(extra="ignore")
    n_ctx: int | None = None


class ServerProps(BaseModel):
    """What llama.cpp's server says about itself at ``/props`` (the fields groundjudge reads)."""

    model_config = ConfigDict(extra="ignore")
    total_slots: int | None = Field(default=None, ge=1, description="Requests served at once.")
    default_generation_settings: _GenerationSettings = Field(default_factory=_GenerationSettings)

    @property
    def n_ctx(self) -> int | None:
        """Context length of one slot, in tokens."""
        return self.default_generation_settings.n_ctx


def is_local(api_base: str | None) -> bool:
    """Whether an api_base is on this machine or the local network (loopback, private address, *.local)."""
    if not api_base:
        return False
    host = (urlsplit(api_base if "//" in api_base else f"http://{api_base}").hostname or "").lower()
    if host in LOCAL_HOSTNAMES or host.endswith(".local"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_unspecified


def props_url(api_base: str) -> str:
    """``<api_base without a trailing /v1>/props``."""
    base = api_base.rstrip("/")
    if base.endswith("/v1"):
        base = base[: -len("/v1")]
    return base + "/props"


@lru_cache(maxsize=64)
def probe_server(api_base: str, timeout: float = PROBE_TIMEOUT_S) -> ServerProps | None:
    """Ask a server for its /props once per base (cached); None when it has no such route or does not answer."""
    try:
        response = httpx.get(props_url(api_base), timeout=timeout)
        if response.status_code != 200:
            return None
        return ServerProps.model_validate(response.json())
    except (httpx.HTTPError, ValueError, ValidationError):
        return None


def resolve_concurrency_sync(settings: LLMSettings) -> int:
    """The number of calls in flight to use for a model (probing a local server's /props when "auto")."""
    if settings.concurrency != "auto":
        return max(1, int(settings.concurrency))
    if not is_local(settings.api_base):
        return HOSTED_CONCURRENCY
    with _PROBE_LOCK:  # judges start many calls at once: the first probes, the others read its answer
        props = probe_server(settings.api_base)
    if props is None or props.total_slots is None:
        return UNKNOWN_LOCAL_CONCURRENCY
    return props.total_slots


def server_slots_sync(settings: LLMSettings) -> int | None:
    """Requests the model's server serves at once: a local server's /props ``total_slots``, 1 for a local
    server that does not say, None for a hosted provider (unknown; taken as enough)."""
    if not is_local(settings.api_base):
        return None
    with _PROBE_LOCK:
        props = probe_server(settings.api_base)
    return UNKNOWN_LOCAL_CONCURRENCY if props is None or props.total_slots is None else props.total_slots


async def server_slots(settings: LLMSettings) -> int | None:
    """:func:`server_slots_sync` without blocking the event loop during the probe."""
    if not is_local(settings.api_base):
        return None
    return await asyncio.to_thread(server_slots_sync, settings)


async def resolve_concurrency(settings: LLMSettings) -> int:
    """:func:`resolve_concurrency_sync` without blocking the event loop during the probe."""
    if settings.concurrency != "auto" or not is_local(settings.api_base):
        return resolve_concurrency_sync(settings)
    return await asyncio.to_thread(resolve_concurrency_sync, settings)
