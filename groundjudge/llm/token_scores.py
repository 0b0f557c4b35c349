"""Scores from a model's token probabilities: P(yes) / (P(yes) + P(no)) of the first answer token.

A yes/no prompt is answered with one word. When the provider returns the top
log-probabilities of the first generated token, the score sums the probability
of every variant of each word among them (``Yes``, `` yes``, ``YES``, ``yes.``)
and renormalises over the two words: a graded score that ranks answers, where a
verbalised verdict gives only 0 or 1. When no log-probabilities come back
(Anthropic, Ollama) the word itself is the verdict: 1.0 or 0.0, marked
``verbalised``.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import math
import re
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from groundjudge.llm.litellm_module import litellm_module

if TYPE_CHECKING:
    from groundjudge.llm.cache import CallCache

ScoreSource = Literal["logprobs", "verbalised"]
"""Where a score came from: the first token's probabilities, or the model's one-word verdict."""

TOP_LOGPROBS = 20
"""How many alternatives of the first token are requested (OpenAI's maximum)."""

_WORD = re.compile(r"[A-Za-z]+")


class TokenScore(BaseModel):
    """A yes/no reply scored: P(yes) among {yes, no}, its source, and the word the model wrote."""

    p_yes: float = Field(ge=0.0, le=1.0)
    source: ScoreSource
    answer: str | None = Field(default=None, description="The first word of the reply, lower-cased.")
    mass: float | None = Field(default=None, description=(
        "With log-probabilities: the probability the model put on yes or no at all (low when it meant to say "
        "something else first)."))


def first_token_logprobs(response: Any) -> dict[str, float] | None:
    """The top log-probabilities of the first generated token, token -> logprob (None when the provider sent none)."""
    try:
        content = response.choices[0].logprobs.content
    except (AttributeError, IndexError, TypeError):
        content = None
    if content is None:
        try:
            content = response.choices[0].logprobs["content"]
        except (AttributeError, IndexError, KeyError, TypeError):
            return None
    if not content:
        return None
    first = content[0]
    alternatives = getattr(first, "top_logprobs", None)
    if alternatives is None and isinstance(first, dict):
        alternatives = first.get("top_logprobs")
    out: dict[str, float] = {}
    for alt in alternatives or ():
        token = alt.get("token") if isinstance(alt, dict) else getattr(alt, "token", None)
        logprob = alt.get("logprob") if isinstance(alt, dict) else getattr(alt, "logprob", None)
        if token is not None and logprob is not None:
            out[token] = max(out.get(token, -math.inf), float(logprob))
    if not out:   # no alternatives: the chosen token alone
        token = first.get("token") if isinstance(first, dict) else getattr(first, "token", None)
        logprob = first.get("logprob") if isinstance(first, dict) else getattr(first, "logprob", None)
        if token is None or logprob is None:
            return None
        out[token] = float(logprob)
    return out


def word_of(token: str) -> str:
    """A token as the word it starts: letters only, lower-cased (`` Yes`` -> ``yes``, ``NO.`` -> ``no``)."""
    match = _WORD.search(token)
    return match.group().lower() if match and token[:match.start()].strip(" \t\n\"'*`:") == "" else ""


def yes_probability(top: dict[str, float], yes: str = "yes", no: str = "no") -> TokenScore | None:
    """P(yes) / (P(yes) + P(no)) over the first token's alternatives, every variant of a word summed (None when
    neither word is among them)."""
    p_yes = sum(math.exp(lp) for token, lp in top.items() if word_of(token) == yes)
    p_no = sum(math.exp(lp) for token, lp in top.items() if word_of(token) == no)
    if p_yes + p_no <= 0:
        return None
    return TokenScore(p_yes=p_yes / (p_yes + p_no), source="logprobs", mass=min(p_yes + p_no, 1.0))


def verbal_answer(text: str | None, yes: str = "yes", no: str = "no") -> TokenScore | None:
    """The reply's first word as the verdict (1.0 yes, 0.0 no), None when it is neither."""
    match = _WORD.search(text or "")
    word = match.group().lower() if match else ""
    if word not in (yes, no):
        return None
    return TokenScore(p_yes=1.0 if word == yes else 0.0, source="verbalised", answer=word)


def score_reply(text: str | None, top: dict[str, float] | None) -> TokenScore | None:
    """The score of a yes/no reply: from the log-probabilities when they hold either word, else from the word."""
    said = verbal_answer(text)
    if top:
        scored = yes_probability(top)
        if scored is not None:
            return scored.model_copy(update={"answer": said.answer if said else None})
    return said


def supports_logprobs(model: str, cache: CallCache | None = None) -> bool:
    """Whether litellm passes ``logprobs`` / ``top_logprobs`` to this model's provider (OpenAI-compatible servers,
    vLLM and llama.cpp included; not Anthropic, not Ollama).

    The answer is litellm's, kept in ``cache`` (the run's call cache) under the model and litellm's version: a run
    whose calls all come from the cache then never imports litellm (seconds per process), and a new litellm asks
    again."""
    version = _litellm_version()
    key = _capability_key(model, version)
    if cache is not None:
        hit = cache.get(key)
        if hit is not None and isinstance(hit.get("logprobs"), bool):
            return hit["logprobs"]
    try:
        litellm = litellm_module()
        provider = litellm.get_llm_provider(model)[1]
        params = litellm.get_supported_openai_params(model=model.split("/", 1)[-1], custom_llm_provider=provider)
    except Exception:  # noqa: BLE001 - an unknown provider: do not ask
        return False
    answer = bool(params) and "logprobs" in params and "top_logprobs" in params
    if cache is not None:
        cache.put(key, {"capability": "logprobs", "model": model, "litellm": version, "logprobs": answer})
    return answer


def _litellm_version() -> str:
    try:
        return importlib.metadata.version("litellm")
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def _capability_key(model: str, version: str) -> str:
    """The cache key of the logprobs capability of ``model`` under litellm ``version``."""
    payload = {"capability": "logprobs", "model": model, "litellm": version}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()
