"""The tune's budget: at most ``max_calls`` LLM calls and ``max_cost`` dollars, never one call more.

The LLM client asks the budget before every call it sends (a cached reply is not a call and is free); this one
counts the calls it lets through and refuses the next once ``max_calls`` are spent, so the judge abstains with
reason ``budget`` and the tune stops at the end of that rung, keeping the last complete one. A resumed tune starts
the count from the calls its state file records. Retries of one call after a 429 or a 5xx are attempts of that
call, as in the records.
"""

from __future__ import annotations

from groundjudge.llm.cost import Budget
from groundjudge.llm.errors import ProviderError


class CallBudget(Budget):
    """A spending cap in calls (and, optionally, USD) over every call of a tune."""

    def __init__(self, max_calls: int, max_cost: float | None = None, calls: int = 0, spent: float = 0.0):
        super().__init__(max_cost)
        self.max_calls = max_calls
        self.calls = calls
        self.spent = spent
        self.refused = 0
        """Calls refused since the last :meth:`clear_refusals` (a rung cut short)."""

    def left(self) -> int:
        """Calls still allowed."""
        return max(0, self.max_calls - self.calls)

    def check(self) -> None:
        """Let one call through and count it, or raise ProviderError('budget')."""
        with self._lock:
            if self.calls >= self.max_calls:
                self.refused += 1
                raise ProviderError("budget", f"the tune's max_calls={self.max_calls} are spent")
            if self.max_cost is not None and self.spent >= self.max_cost:
                self.refused += 1
                raise ProviderError("budget", f"the tune's max_cost=${self.max_cost:.4f} is spent "
                                              f"(${self.spent:.4f})")
            self.calls += 1

    def clear_refusals(self) -> None:
        """Forget refusals (at the start of a rung)."""
        self.refused = 0
