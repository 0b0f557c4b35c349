"""Model input text for the local detectors: the input templates, and cutting a premise to fit.

HHEM, MiniCheck and the LettuceDetect-style tagger each read their pair in the format they were trained
on; the formats live as templates in ``groundjudge/prompts`` (``hhem_pair.j2``, ``minicheck_pair.j2``,
``spans_context.j2``). They are model inputs, not LLM prompts: rendered with plain Jinja, the texts as
variables, nothing escaped.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from functools import lru_cache
from importlib import resources
from typing import Any

from jinja2 import Environment, StrictUndefined, Template

_ENV = Environment(undefined=StrictUndefined, keep_trailing_newline=False, trim_blocks=True, lstrip_blocks=True,
                   autoescape=False)


@lru_cache(maxsize=16)
def input_template(name: str) -> Template:
    """A model-input template of ``groundjudge/prompts`` by file name, compiled once."""
    text = resources.files("groundjudge").joinpath("prompts", name).read_text(encoding="utf-8")
    return _ENV.from_string(text)


def render(name: str, **variables: Any) -> str:
    """The template rendered with these texts."""
    return input_template(name).render(**variables)


def cut_to_tokens(tokenizer: Any, text: str, max_tokens: int) -> tuple[str, bool]:
    """``text`` cut at a token boundary so that it has at most ``max_tokens`` tokens; (text, whether cut)."""
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    if len(encoded["input_ids"]) <= max_tokens:
        return text, False
    if max_tokens <= 0:
        return "", True
    end = int(encoded["offset_mapping"][max_tokens - 1][1])
    return text[:end], True


TOKEN_COUNTS_KEPT = 65_536
"""Texts whose token count is kept per tokenizer (least recently used first out): about 10 MB of short texts."""
_COUNTS: weakref.WeakKeyDictionary[Any, OrderedDict[str, int]] = weakref.WeakKeyDictionary()
_COUNTS_LOCK = threading.Lock()


def token_count(tokenizer: Any, text: str) -> int:
    """Tokens of a text without special tokens, remembered per tokenizer for the last
    :data:`TOKEN_COUNTS_KEPT` texts: the evidence windows of a document are cut from the same sentences for
    every answer about it, so most counts of a run are repeats."""
    with _COUNTS_LOCK:
        counts = _COUNTS.setdefault(tokenizer, OrderedDict())
        known = counts.get(text)
        if known is not None:
            counts.move_to_end(text)
            return known
    count = len(tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])
    with _COUNTS_LOCK:
        counts[text] = count
        if len(counts) > TOKEN_COUNTS_KEPT:
            counts.popitem(last=False)
    return count
