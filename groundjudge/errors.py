"""Errors every face shares: a request (flags, options, a served call) that cannot be carried out as given."""

from __future__ import annotations


class UsageError(Exception):
    """A run, verb or request that cannot be carried out as given (the message says what to change)."""
