"""The JSON schema a model decodes its reply against, made from the reply's pydantic model.

Grammar-constrained servers (llama.cpp's, and through it llama-cpp-python, Ollama and LM Studio) turn a string's
``maxLength`` into one grammar rule per character, and refuse a grammar whose repetitions pass their bound:
llama.cpp's ``MAX_REPETITION_THRESHOLD`` is 2000, and llama-cpp-python 0.3.36's server dies on a string of
``maxLength`` 1,500 or 2,000 and answers one of 1,000 (tried 2026-12-07). A long bound on a reply string is a
check of the parsed reply, not a guide for decoding: it stays in the pydantic model, which rejects a longer reply
as invalid, and is left out of the schema sent to the provider. Bounds up to :data:`MAX_DECODED_LENGTH` are sent.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

MAX_DECODED_LENGTH = 1000
"""The longest string ``maxLength`` sent to a provider; a longer one is checked only when the reply is parsed."""


def _drop_long_bounds(node: Any) -> None:
    if isinstance(node, dict):
        bound = node.get("maxLength")
        if isinstance(bound, int) and bound > MAX_DECODED_LENGTH:
            del node["maxLength"]
        for value in node.values():
            _drop_long_bounds(value)
    elif isinstance(node, list):
        for value in node:
            _drop_long_bounds(value)


@lru_cache(maxsize=64)
def decoding_schema(output_model: type[BaseModel] | None) -> dict | None:
    """The reply model's JSON schema without string bounds over :data:`MAX_DECODED_LENGTH` (None: no model)."""
    if output_model is None:
        return None
    schema = copy.deepcopy(output_model.model_json_schema())
    _drop_long_bounds(schema)
    return schema
