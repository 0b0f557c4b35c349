"""``assert_grounded`` and the ``groundjudge`` fixture's object: judge an answer in a test and fail it, with the
verdict, score, threshold, reason and unsupported claims, when the answer is not grounded."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from groundjudge.testing import gate_active
from groundjudge.testing.gate_model import GateSettings, GateVerdict
from groundjudge.testing.gate_session import GateSession
from groundjudge.testing.gate_text import failure_message


class NotGrounded(AssertionError):
    """An answer failed the gate; ``verdict`` is the gate's verdict (its message says why)."""

    def __init__(self, verdict: GateVerdict):
        super().__init__(failure_message(verdict))
        self.verdict = verdict


class GateScope:
    """The checks of one test: its session, id and marker settings, and where its verdicts go.

    The ``groundjudge`` fixture is this object: ``.assert_grounded(...)`` fails the test, ``.judge(...)`` only
    returns the verdict (both are in the session's table and record).
    """

    def __init__(self, session: GateSession, test: str, settings: GateSettings,
                 sink: Callable[[GateVerdict], None] | None = None):
        self.session = session
        self.test = test
        self.settings = settings
        self.sink = sink
        self.verdicts: list[GateVerdict] = []
        """This test's verdicts, in order."""

    def _next_id(self) -> str:
        """The test's id for its next verdict (``#2``, ``#3``... after the first)."""
        n = len(self.verdicts) + 1
        return self.test if n == 1 else f"{self.test}#{n}"

    def check(self, answer: str, context: str | Sequence[str], question: str | None = None, asserted: bool = True,
              **given: Any) -> GateVerdict:
        """Judge one answer with the test's settings (``given``: judge, repeats, pass_rate, min_score over them)
        and record the verdict."""
        verdict = self.session.check(self._next_id(), answer, context, question, self.settings.merged(**given))
        verdict = verdict.model_copy(update={"asserted": asserted})
        self.verdicts.append(verdict)
        if self.sink is not None:
            self.sink(verdict)
        return verdict

    def judge(self, answer: str, context: str | Sequence[str], judge: Any = None, question: str | None = None,
              min_score: float | None = None) -> GateVerdict:
        """The gate's verdict on an answer, without failing the test."""
        return self.check(answer, context, question, asserted=False, judge=judge, min_score=min_score)

    def assert_grounded(self, answer: str, context: str | Sequence[str], judge: Any = None,
                        question: str | None = None, min_score: float | None = None, **given: Any) -> GateVerdict:
        """Fail (:class:`NotGrounded`) unless the answer passes the gate; returns the verdict."""
        __tracebackhide__ = True
        verdict = self.check(answer, context, question, judge=judge, min_score=min_score, **given)
        if not verdict.passed:
            raise NotGrounded(verdict)
        return verdict


_OUTSIDE: GateScope | None = None


def current_scope() -> GateScope:
    """The running test's scope under the pytest plugin; outside pytest, one scope per process (no record)."""
    global _OUTSIDE
    scope = gate_active.current()
    if scope is not None:
        return scope
    if _OUTSIDE is None:
        _OUTSIDE = GateScope(GateSession(), "assert_grounded", GateSettings())
    return _OUTSIDE


def assert_grounded(answer: str, context: str | Sequence[str], judge: Any = None, question: str | None = None,
                    min_score: float | None = None, *, repeats: int | None = None,
                    pass_rate: float | None = None) -> GateVerdict:
    """Fail with the verdict, score, threshold, reason and unsupported claims unless ``answer`` is grounded in
    ``context`` (one document or several); returns the verdict.

    ``judge`` is a spec (``"quip:n=21"``), JudgeConfig or table; unset, the test's ``@pytest.mark.groundjudge``
    judge, else the ``groundjudge_judge`` ini setting. With ``repeats`` the answer is judged that many times and
    passes when the share of grounded repeats (``min_score``: of scores reaching it) is at least ``pass_rate``.
    """
    __tracebackhide__ = True
    return current_scope().assert_grounded(answer, context, judge, question, min_score, repeats=repeats,
                                           pass_rate=pass_rate)
