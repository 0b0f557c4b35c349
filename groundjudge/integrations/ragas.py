"""RAGAS: ``Groundedness``, a RAGAS metric that judges with any groundjudge judge, usable in ``ragas.evaluate``.

```python
from ragas import EvaluationDataset, evaluate
from groundjudge.integrations.ragas import Groundedness

data = EvaluationDataset.from_list([{"user_input": "When is rent due?", "response": "Rent is due on day 1.",
                                     "retrieved_contexts": ["Rent is due on day 1 of each month."]}])
evaluate(data, metrics=[Groundedness(judge="quip")])
```

It is a single-turn metric (``ragas.metrics.base.SingleTurnMetric``, RAGAS 0.4) over ``response`` and
``retrieved_contexts`` (``user_input`` when given), so it sits beside RAGAS's own metrics (``faithfulness``...) in
one ``evaluate``. A local judge needs no LLM; an LLM judge (``claims:model=...``) calls its model through groundjudge's
client, not through RAGAS's ``llm``. The value is the judge's grounding score in [0, 1] (``report="label"``: 1.0
grounded / 0.0 ungrounded); an abstention, or a row without documents, is NaN (RAGAS leaves it out of the mean).

Needs the ``[ragas]`` extra; importing this module does not import RAGAS: the class is made on first use of
``Groundedness``.
"""

from __future__ import annotations

import math
from typing import Any

from groundjudge.integrations.extras import lazy_class, require
from groundjudge.integrations.verdicts import VerdictView

REPORTS = ("score", "label")
"""What the metric's value is: the judge's grounding score, or 1.0 / 0.0 by its label."""


def metric_value(view: VerdictView, report: str = "score") -> float:
    """The metric's value for a verdict: NaN for an abstention; the score (by label when it has none) or the label."""
    if view.label == "abstain":
        return math.nan
    by_label = 1.0 if view.label == "grounded" else 0.0
    if report == "label" or view.score is None:
        return by_label
    return float(view.score)


def _make_metric_class() -> type:
    """The ``Groundedness`` class, a RAGAS ``SingleTurnMetric`` dataclass (imports RAGAS)."""
    from dataclasses import dataclass, field

    base = require("ragas.metrics.base", "ragas")
    from groundjudge.integrations.judging import LoopJudge, documents_of

    @dataclass
    class Groundedness(base.SingleTurnMetric):
        """Is ``response`` grounded in ``retrieved_contexts``, by the groundjudge judge ``judge``?

        ``judge``: any judge spec (``"quip"``, ``"cosine"``, ``"claims:model=gpt-4o-mini"``...); ``settings``: its
        settings as keywords; ``report``: ``"score"`` (the judge's score in [0, 1]) or ``"label"`` (1.0 / 0.0).
        """

        name: str = "groundedness"
        judge: str = "quip"
        settings: dict[str, Any] = field(default_factory=dict)
        report: str = "score"
        output_type: Any = base.MetricOutputType.CONTINUOUS
        _required_columns: dict[Any, set[str]] = field(default_factory=lambda: {
            base.MetricType.SINGLE_TURN: {"user_input:optional", "response", "retrieved_contexts"}})
        _judge: Any = field(default=None, init=False, repr=False)

        def __post_init__(self) -> None:
            """Check ``report`` and make the judge (built on first use)."""
            super().__post_init__()
            if self.report not in REPORTS:
                raise ValueError(f"report={self.report!r}: one of {', '.join(REPORTS)}")
            self._judge = LoopJudge(judge=self.judge, settings=dict(self.settings))

        def init(self, run_config: Any) -> None:
            """Nothing to set up: the judge is built on first use (RAGAS calls this before scoring)."""

        async def _single_turn_ascore(self, sample: Any, callbacks: Any) -> float:
            """The value for one row (NaN when the judge abstains or the row has no documents)."""
            documents = documents_of(sample.retrieved_contexts)
            if not documents or sample.response is None:
                return math.nan
            view = await self._judge.judge_answer(sample.response, documents, question=sample.user_input)
            return metric_value(view, self.report)

    Groundedness.__module__ = __name__
    Groundedness.__qualname__ = "Groundedness"
    return Groundedness


__getattr__ = lazy_class(__name__, "Groundedness", _make_metric_class)
"""``Groundedness``: made (and RAGAS imported) on first use, so importing this module stays light."""
