"""Errors every face shares: a request (flags, options, a served call) that cannot be carried out as given."""

from __future__ import annotations


class UsageError(Exception):
    """A run, verb or request that cannot be carried out as given (the message says what to change)."""


class ProviderUnreachable(UsageError):
    """Work that needs every answer judged (a tune) stopped because the LLM provider did not answer: what was
    judged is kept, and the message says how to go on."""
