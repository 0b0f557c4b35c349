"""The Python API: judge one answer, or evaluate data with several judges and get a Run back.

```python
import groundjudge

verdict = groundjudge.judge("The deposit is returned within 21 days.", ["... within 21 days ..."],
                            judge="quip", n=21)
run = groundjudge.evaluate("datasets/legal_qa/legal_qa.jsonl", judges=["quip", "cosine"], split="test")
run.summary.judges["quip"].balanced_accuracy
run.to_pandas()          # one row per judge x answer (pip install "groundjudge[pandas]")
run.report("report/")    # report.md, report.html, plots
```

Both take judges as spec strings (``"quip:n=21"``), kinds with settings, :class:`JudgeConfig` objects or
experiment files; ``evaluate`` runs exactly what ``groundjudge run`` runs and leaves the same records.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from groundjudge.experiment import load_experiment
from groundjudge.judges.config import JudgeConfig
from groundjudge.runs.records import RunRecords, find_records, read_records
from groundjudge.runs.summary_model import RunSummary
from groundjudge.types import ClaimVerdict, Example, LLMCall

JudgeLike = str | JudgeConfig | dict[str, Any]
"""A judge as the API takes it: a spec string or kind, a JudgeConfig, or ``{"kind": ..., setting: value}``."""


class JudgeVerdict(BaseModel):
    """The verdict on one answer, with everything it took: claims and evidence, calls, tokens, cost, latency."""

    judge: str = Field(description="The judge's name (its spec).")
    label: str = Field(description="grounded, ungrounded or abstain.")
    score: float | None = None
    threshold: float | None = None
    abstain_reason: str | None = None
    path: str = Field(description="What produced the verdict (llm:<model>, local:..., fallback:...).")
    claims: tuple[ClaimVerdict, ...] = ()
    calls: tuple[LLMCall, ...] = ()
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0


def as_config(judge: JudgeLike, **settings: Any) -> JudgeConfig:
    """A JudgeConfig from anything the API accepts (settings given as keywords are checked strictly)."""
    if isinstance(judge, JudgeConfig):
        return JudgeConfig.create(judge.kind, name=judge.name, **{**judge.settings, **settings}) if settings \
            else judge
    if isinstance(judge, dict):
        return JudgeConfig.from_table({**judge, **settings})
    if judge.endswith(".toml"):
        judges = load_experiment(judge).judges
        if len(judges) != 1:
            raise ValueError(f"{judge} has {len(judges)} judges ({', '.join(j.name for j in judges)}): "
                             "pick one from groundjudge.load_experiment(path).judges")
        return as_config(judges[0], **settings)
    config = JudgeConfig.from_spec(judge)
    if settings:
        return JudgeConfig.create(config.kind, **{**config.settings, **settings})
    return config


def _service(cache_dir: str | None = None, no_cache: bool = False):
    from groundjudge.llm.service_options import LLMOptions, make_service

    return make_service(LLMOptions(cache_dir=cache_dir, no_cache=no_cache))


def judge(answer: str, context: str | Sequence[str], judge: JudgeLike = "claims", question: str | None = None,
          *, cache_dir: str | None = None, no_cache: bool = False, **settings: Any) -> JudgeVerdict:
    """Judge one answer against its context (one document or several) and return the typed verdict.

    Score-based judges decide with their default threshold (``threshold=`` sets it). LLM calls go through the
    same cache as ``groundjudge run`` (``~/.cache/groundjudge/calls`` unless ``cache_dir`` / ``no_cache``).
    """
    from groundjudge.runs.runner import judge_one

    config = as_config(judge, **settings)
    example = Example(id="answer", question=question, answer=answer,
                      context=(context,) if isinstance(context, str) else tuple(context))
    built = config.build(service=_service(cache_dir, no_cache))
    result = asyncio.run(judge_one(built, example))
    verdict, calls = result.verdict, result.calls
    return JudgeVerdict(judge=config.name, label=verdict.label, score=verdict.score, threshold=verdict.threshold,
                        abstain_reason=verdict.abstain_reason, path=verdict.path, claims=verdict.claims,
                        calls=calls, input_tokens=sum(c.input_tokens for c in calls),
                        output_tokens=sum(c.output_tokens for c in calls), cost_usd=sum(c.cost_usd for c in calls),
                        latency_s=result.latency_s)


@dataclass
class Run:
    """A finished run folder: its summary (typed), records, tables and report."""

    path: Path
    _records: RunRecords | None = field(default=None, repr=False)

    @property
    def records(self) -> RunRecords:
        """The records: header (judges, templates, data) and one result per judge x answer."""
        if self._records is None:
            self._records = read_records(find_records(self.path))
        return self._records

    @property
    def summary(self) -> RunSummary:
        """summary.json, typed."""
        return RunSummary.model_validate_json((self.path / "summary.json").read_text(encoding="utf-8"))

    def to_pandas(self, table: str = "verdicts"):
        """One row per judge x answer (``table="claims"``: one per claim), as a pandas DataFrame."""
        from groundjudge.runs.tables import claim_rows, to_dataframe, verdict_rows

        if table not in ("verdicts", "claims"):
            raise ValueError("table is 'verdicts' or 'claims'")
        return to_dataframe((verdict_rows if table == "verdicts" else claim_rows)(self.records))

    def report(self, out: str | Path | None = None) -> Path:
        """Write report.md, report.html and the plots (default: the run's ``report/``); returns the folder."""
        from groundjudge.report.compare import compare
        from groundjudge.report.html import render_html
        from groundjudge.report.markdown import render_markdown
        from groundjudge.report.plots import make_plots

        folder = Path(out) if out else self.path / "report"
        folder.mkdir(parents=True, exist_ok=True)
        comparison = compare([self.path])
        plots = make_plots(comparison, folder)
        (folder / "report.md").write_text(render_markdown(comparison, plots), encoding="utf-8")
        (folder / "report.html").write_text(render_html(comparison, plots), encoding="utf-8")
        return folder


def _data_files(data: Any, out: Path) -> list[str]:
    """Paths for the run: the paths given, or Example objects written to ``out/data.jsonl`` (native format)."""
    if isinstance(data, (str, Path)):
        return [str(data)]
    items = list(data)
    if items and all(isinstance(x, Example) for x in items):
        from groundjudge.runs.execute import write_examples

        return [str(write_examples(items, out))]
    return [str(x) for x in items]


def evaluate(data: Any, judges: Sequence[JudgeLike] | None = None, out: str | Path | None = None,
             **options: Any) -> Run:
    """Judge data with several judges as ``groundjudge run`` does, and return the Run.

    ``data`` is a data file or folder, a list of them, a list of :class:`Example`, or an experiment file (then
    its judges are used, plus any given). ``options`` are run options (``split``, ``sample``, ``seed``,
    ``calibrate_on``, ``dev_fraction``, ``concurrency``, ``max_cost``, ``prompts``, ``cache_dir``, ``resume``,
    ``quiet``...). ``out=None`` writes into a new temporary folder. ``otel=True`` emits every verdict as an
    OpenTelemetry ``gen_ai.evaluation.result`` event through your global logger provider (``otel=provider``:
    through that one; ``[otel]`` extra, :mod:`groundjudge.integrations.otel`).
    """
    from groundjudge.runs.execute import RunOptions, execute_to_end

    otel = options.pop("otel", None)
    folder = Path(out) if out else Path(tempfile.mkdtemp(prefix="groundjudge-run-"))
    if otel:
        from groundjudge.integrations.otel_export import results_before

        before = results_before(str(folder))   # a resumed run emits only its new verdicts
    configs = [as_config(j) for j in judges or []]
    values: dict[str, Any] = {"quiet": True}
    if isinstance(data, (str, Path)) and str(data).endswith(".toml"):
        experiment = load_experiment(data)
        configs = list(experiment.judges) + configs
        values.update({k: v for k, v in experiment.data.model_dump().items() if v is not None})
        values.update(experiment.run.model_dump(exclude_none=True))
        values["data"] = values.pop("files")
        values["experiment"] = experiment.path
    else:
        values["data"] = _data_files(data, folder)
    values.update(options)
    values.update({"judges": configs, "out": str(folder)})
    run = Run(execute_to_end(RunOptions.model_validate(values)))
    if otel:
        from groundjudge.integrations.otel import emit_records

        emit_records(run.records, logger_provider=None if otel is True else otel, skip=before)
    return run
