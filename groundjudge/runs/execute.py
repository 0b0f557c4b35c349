"""Execute a run: load the data, build the judges, calibrate, judge into records.jsonl, summarise.

Used by ``groundjudge run`` (flags and experiment files), by the Python API (:func:`groundjudge.evaluate`) and
by distillation's teacher (:mod:`groundjudge.runs.distill`); each describes the run as :class:`RunOptions`.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
from groundjudge.consoles import console, stdout_console  # noqa: E402
from groundjudge.errors import UsageError  # noqa: E402
from groundjudge.formats.load import DataFiles, dataset_hash  # noqa: E402
from groundjudge.judges.composite import judge_parts  # noqa: E402
from groundjudge.judges import uses_llm  # noqa: E402
from groundjudge.judges.config import JudgeConfig, recorded_settings  # noqa: E402
from groundjudge.judges.demonstrations.leakage import refuse_leakage  # noqa: E402
from groundjudge.judges.demonstrations.shown import demonstrations_record  # noqa: E402
from groundjudge.llm.service_options import LLMOptions, make_service  # noqa: E402
from groundjudge.paths import portable_path
from groundjudge.llm.batch.driver import DEFAULT_MAX_WAIT_S, DEFAULT_POLL_S, BatchError, BatchesOpen  # noqa: E402
from groundjudge.runs.batch_rounds import batch_driver, batch_judges, with_batch  # noqa: E402
from groundjudge.runs.calibrate import (  # noqa: E402
    calibrate,
    frozen_calibrations,
    needs_calibration,
    with_threshold,
)
from groundjudge.runs.interrupts import RunInterrupted, interrupts_raised
from groundjudge.runs.lock import RunLock
from groundjudge.runs.placements import with_placements
from groundjudge.runs.provenance import git_commit, package_versions
from groundjudge.runs.records import (  # noqa: E402
    RecordsError,
    RecordWriter,
    done_pairs,
    new_run_id,
    read_header,
    repair_torn_tail,
)
from groundjudge.runs.runner import JudgeTask, refuse_small_budget, run_judges  # noqa: E402
from groundjudge.runs.selection import Joined, SelectedExamples, choose_examples  # noqa: E402
from groundjudge.runs.engine_options import EngineOptions, local_chunks_of, runner_for  # noqa: E402
from groundjudge.runs.summary import summarize_file  # noqa: E402
from groundjudge.types import Calibration, DatasetInfo, Example, JudgeSpec, PromptTemplate, RunHeader  # noqa: E402


BATCHES_OPEN_EXIT = 75
"""Exit status of a run that stopped waiting for open provider batches (EX_TEMPFAIL: resume later)."""


class RunOptions(LLMOptions, EngineOptions):
    """Everything a run needs, from CLI flags, an experiment file or Python."""

    data: list[str] = Field(min_length=1, description="Data files or folders.")
    judges: list[JudgeConfig] = Field(min_length=1)
    format: str | None = None
    split: Literal["train", "dev", "test"] | None = None
    sample: int | None = None
    seed: int = 0
    calibrate_on: list[str] | None = None
    calibrate_sample: int | None = Field(default=None, ge=1, description=(
        "Fit thresholds on a seeded random sample of this many dev examples (an LLM judge's calibration costs calls)."))
    dev_fraction: float = 0.3
    labels: str | None = Field(default=None, description=(
        "Human labels (a labels.jsonl, or a run folder holding one) that replace the data's gold, by example id."))
    skip_invalid: bool = False
    out: str = "runs/latest"
    resume: bool = False
    concurrency: int = 8
    quiet: bool = False
    dry_run: bool = False
    batch: bool = Field(default=False, description=(
        "Send every LLM judge's calls through the provider batch APIs (OpenAI, Anthropic; half price), in rounds."))
    batch_poll_s: float = Field(default=DEFAULT_POLL_S, gt=0, description="Seconds between polls of open batches.")
    batch_max_wait_s: float = Field(default=DEFAULT_MAX_WAIT_S, ge=0, description=(
        "Stop waiting for open batches after this long (the run stops; --resume polls them again)."))
    experiment: str | None = Field(default=None, description="The experiment file the run was described by.")
    argv: list[str] | None = Field(default=None, description="The command line, for the resume hint.")


def prompt_templates(judge: Any) -> dict[str, PromptTemplate]:
    """Every prompt a judge renders (its inner judges' too), with its hash and full text."""
    found: dict[str, PromptTemplate] = {}
    for part in judge_parts(judge):
        if hasattr(part, "template_names"):
            for name in part.template_names():
                found.setdefault(name, PromptTemplate(**part.library.record(name)))
    return found


def build_tasks(configs: list[JudgeConfig], service) -> tuple[list[JudgeTask], list[JudgeSpec]]:
    """The judges of a run and their header entries (settings and templates as recorded)."""
    tasks, specs = [], []
    for config in configs:
        judge = config.build(service=service)
        tasks.append(JudgeTask(spec=config.name, judge=judge))
        specs.append(JudgeSpec(spec=config.name, name=config.kind, settings=recorded_settings(judge),
                               templates=prompt_templates(judge), demonstrations=demonstrations_record(judge),
                               calibration=getattr(judge, "frozen_calibration", None)))   # a stack's weights=FILE
    return tasks, specs


@dataclass
class RunPlan:
    """What a run will judge, settled before anything is judged: judges, examples, calibration and data record."""

    tasks: list[JudgeTask]
    """The judges, as built."""
    specs: list[JudgeSpec]
    """Their header entries (settings and templates as recorded)."""
    evaluated: SelectedExamples
    """The examples judged into records.jsonl (read from the files as they are judged)."""
    dev: SelectedExamples
    """The examples thresholds are fitted on (empty when no judge is calibrated)."""
    to_calibrate: list[JudgeTask]
    """The judges whose thresholds are fitted on ``dev``."""
    loaded: DataFiles
    """The data as checked (files, formats, skipped rows, valid examples)."""
    dataset: DatasetInfo
    """The header's record of the evaluated data."""
    split_name: str
    """The name of the evaluated part (``test``, ``all but dev``, ...)."""
    cal_source: str | None
    """Where the dev examples come from, for the calibration record."""


def dry_run(args: RunOptions, tasks: list[JudgeTask], evaluated: list[Example], dev: list[Example],
            service) -> int:
    """Print the estimated calls, tokens and $ of the run without calling anything."""
    from rich.table import Table
    from rich.text import Text

    from groundjudge.llm.dryrun import estimate_run

    table = Table(title=f"dry run: {len(tasks)} judge(s), {len(evaluated)} examples + {len(dev)} dev "
                        "(estimates; nothing was called)")
    for column in ("judge", "kind", "settings given", "LLM calls", "input tokens", "output tokens", "$",
                   "$ batch"):
        table.add_column(column, justify="left" if column in ("judge", "kind", "settings given") else "right")
    total = batch_total = 0.0
    configs = {config.name: config for config in args.judges}
    shared: set = set()   # requests already counted: a later judge rendering the same one reads the cache
    for task in tasks:
        estimate = estimate_run(task.judge, list(evaluated) + list(dev), service.prompts, shared)
        total += estimate["cost_usd"]
        batch_total += estimate["cost_usd_batch"]
        config = configs[task.spec]
        given = ", ".join(f"{k}={(portable_path(v) if v else 'built-in') if k == 'prompts' else v}"
                          for k, v in config.settings.items())
        table.add_row(Text(task.spec), config.kind, Text(given), str(estimate["llm_calls"]), str(estimate["tokens"]["input"]),
                      str(estimate["tokens"]["output"]), f"{estimate['cost_usd']:.4f}",
                      f"{estimate['cost_usd_batch']:.4f}")
    stdout_console().print(table)
    stdout_console().print(f"estimated total: ${total:.4f} online, ${batch_total:.4f} with --batch (provider batch "
                           "APIs at half price: OpenAI and Anthropic models; others as online); cached calls would "
                           "cost nothing")
    return 0


def execute(args: RunOptions) -> int:
    """Judge the data with every judge, write records.jsonl and summary.json, print the table."""
    out = Path(args.out)
    records_path = out / "records.jsonl"
    if args.batch:
        args = args.model_copy(update={"judges": with_batch(args.judges)})
    service = make_service(args) if any(uses_llm(c.kind) for c in args.judges) else None
    tasks, specs = build_tasks(args.judges, service)
    batching = service is not None and batch_judges(tasks, args.batch)
    user_settings = {config.name: config.settings for config in args.judges}
    if len({c.name for c in args.judges}) != len(args.judges):
        raise UsageError("two judges have the same name")

    refuse_small_budget(tasks, local_chunks_of(args))   # before the data is read and the run folder is made
    to_calibrate = [t for t in tasks if needs_calibration(t, user_settings[t.spec])]
    chosen = choose_examples(args, bool(to_calibrate))   # checked in one pass; the examples are read when judged
    loaded, evaluated, dev, split_name = chosen.data, chosen.evaluated, chosen.dev, chosen.split_name
    if loaded.errors:
        console.print(f"skipped {len(loaded.errors)} invalid row(s); first: {loaded.errors[0]}", markup=False,
                      style="yellow", soft_wrap=True)
    if not len(evaluated):
        raise UsageError(f"no examples to evaluate (split {split_name!r})")
    refuse_leakage({t.spec: t.judge for t in tasks}, Joined(evaluated, dev))   # no judge is shown what it judges
    if args.dry_run:
        return dry_run(args, tasks, list(evaluated), list(dev) if to_calibrate else [], service or make_service(args))
    dataset = DatasetInfo(files=tuple(loaded.files), formats=tuple(loaded.formats), n=len(evaluated),
                          hash=dataset_hash(evaluated), n_loaded=len(loaded),
                          skipped_rows=len(loaded.errors))

    plan = RunPlan(tasks=tasks, specs=specs, evaluated=evaluated, dev=dev, to_calibrate=to_calibrate, loaded=loaded,
                   dataset=dataset, split_name=split_name, cal_source=chosen.cal_source)
    command = resume_command(args)
    driver = batch_driver(args, out, service) if batching else None
    try:
        with interrupts_raised(), RunLock(out, command, warn=lambda text: console.print(f"[yellow]{text}",
                                                                                         soft_wrap=True)):
            return _judge_into(args, plan, service, driver)
    except BatchesOpen as stop:
        console.print(f"[yellow]{stop}: stopped waiting; every verdict written so far is kept and the batches' ids "
                      f"are in {out / 'batches.jsonl'}. Continue (polling them, not submitting them again) with:",
                      soft_wrap=True)
        print(shlex.join(command), file=sys.stderr, flush=True)
        return BATCHES_OPEN_EXIT
    except BatchError as err:
        console.print(f"[red]error: {err}; every verdict written so far is kept. Once fixed, continue with:",
                      soft_wrap=True)
        print(shlex.join(command), file=sys.stderr, flush=True)
        return 1
    except RunInterrupted as stop:
        if records_path.exists():
            kept = f"every verdict written so far is kept in {records_path}"
        elif (out / "calibration.jsonl").exists():
            kept = "nothing was judged yet (the dev verdicts of the calibration are kept)"
        else:
            kept = "nothing was judged yet"
        console.print(f"[yellow]{stop}: stopped; {kept}; the lock is released. Continue with:", soft_wrap=True)
        print(shlex.join(command), file=sys.stderr, flush=True)  # whole on one line, for copying
        return stop.exit_code


def write_examples(examples: Sequence[Example], folder: Path) -> Path:
    """``examples`` as a native data file, ``folder/data.jsonl``, for a run to read; returns its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "data.jsonl"
    path.write_text("".join(x.model_dump_json(exclude_defaults=True) + "\n" for x in examples), encoding="utf-8")
    return path


def execute_to_end(args: RunOptions) -> Path:
    """Execute a run that has to finish (the Python API's, a teacher's): its folder, resolved, or a RuntimeError
    naming the exit code it stopped with."""
    code = execute(args)
    if code != 0:
        raise RuntimeError(f"the run in {args.out} stopped with exit code {code}")
    return Path(args.out).resolve()


def resume_command(args: RunOptions) -> list[str]:
    """The command line that continues this run: the one given, with --resume."""
    given = list(args.argv) if getattr(args, "argv", None) else ["run"]
    return ["groundjudge", *given, *([] if "--resume" in given else ["--resume"])]


def _interrupted_calibration(cal_path: Path, dev_header: RunHeader) -> RunHeader | None:
    """The header of a calibration that a stopped run left in ``cal_path``, when it is for the same dev data and
    judges (its dev records are then kept); None otherwise."""
    if not cal_path.exists() or cal_path.stat().st_size == 0:
        return None
    repair_torn_tail(cal_path)
    try:
        header = read_header(cal_path)
    except RecordsError:
        return None
    same = header.dataset.hash == dev_header.dataset.hash and \
        [s.spec for s in header.judges] == [s.spec for s in dev_header.judges]
    return header if same else None


def _judge_into(args: RunOptions, plan: RunPlan, service, driver=None) -> int:
    """Calibrate (or resume), judge and summarise into the locked run folder."""
    out = Path(args.out)
    records_path = out / "records.jsonl"
    tasks, specs, dev, to_calibrate = plan.tasks, plan.specs, plan.dev, plan.to_calibrate
    loaded, dataset = plan.loaded, plan.dataset
    done: set[tuple[str, str]] = set()
    if records_path.exists() and records_path.stat().st_size > 0:
        if not args.resume:
            raise UsageError(f"{records_path} exists: pass --resume to continue that run, or another --out")
        removed = repair_torn_tail(records_path)
        header = read_header(records_path)
        if header.dataset.hash != dataset.hash:
            raise UsageError(f"{records_path} was made from other data (hash {header.dataset.hash[:12]} "
                             f"!= {dataset.hash[:12]}); use another --out")
        if [s.spec for s in header.judges] != [s.spec for s in specs]:
            raise UsageError(f"{records_path} was made with judges {[s.spec for s in header.judges]}; "
                             "resume with the same --judge list or use another --out")
        done = done_pairs(records_path)   # the keys alone: a long run's records are not all held
        frozen = {s.spec: s.calibration for s in header.judges if s.calibration}
        tasks = [with_threshold(t, frozen[t.spec]) if t.spec in frozen else t for t in tasks]
        console.print(f"resuming {header.run_id}: {len(done)} result(s) kept"
                      + (f", {removed} torn byte(s) cut" if removed else ""))
    else:
        specs = with_placements(tasks, specs, args.engine, args.quiet)   # dtype=auto's choice, in the header
        calibrations: dict[str, Calibration] = {}
        run_id = new_run_id()
        started = datetime.now(timezone.utc).isoformat(timespec="seconds")
        if to_calibrate and dev:
            dev_files = tuple(portable_path(f) for f in args.calibrate_on) if args.calibrate_on else tuple(loaded.files)
            dev_info = DatasetInfo(files=dev_files, formats=tuple(loaded.formats),
                                   n=len(dev), hash=dataset_hash(dev))
            dev_header = RunHeader(run_id=run_id, judges=tuple(s for s in specs if s.spec in
                                                                {t.spec for t in to_calibrate}),
                                   dataset=dev_info, eval_split="dev", versions=package_versions(),
                                   git_commit=git_commit(), started_at=started)
            cal_path = out / "calibration.jsonl"
            kept = _interrupted_calibration(cal_path, dev_header) if args.resume else None
            if kept is not None:  # a run stopped while calibrating: go on with its dev records, under its id
                run_id, started, dev_header = kept.run_id, kept.started_at, kept
            elif cal_path.exists():
                cal_path.unlink()
            console.print(f"calibrating {len(to_calibrate)} judge(s) on {len(dev)} dev examples ({plan.cal_source})"
                          + (" (resumed)" if kept is not None else ""))
            calibrations = calibrate(to_calibrate, dev, plan.cal_source, dev_header, cal_path,
                                     partial(run_judges, concurrency=args.concurrency, show_progress=not args.quiet,
                                             batches=driver, local_chunk=local_chunks_of(args)))
        elif to_calibrate:
            unfitted = [t.spec for t in to_calibrate if getattr(t.judge, "needs_fit", False)]
            if unfitted:
                raise UsageError(f"judge {unfitted[0]!r} is fitted on dev data: give --calibrate-on DEV, data with a "
                                 "dev split, or a saved fit (weights=FILE)")
            console.print("[yellow]no dev data: score-based judges keep their default thresholds "
                          "(use --calibrate-on or a dev split)")
            calibrations = {t.spec: Calibration(threshold=t.judge.threshold, source="default") for t in to_calibrate}
        calibrations = {**frozen_calibrations(tasks), **calibrations}   # a stack's weights=FILE goes in the header
        tasks = [with_threshold(t, calibrations[t.spec]) if t.spec in calibrations else t for t in tasks]
        specs = [s.model_copy(update={"calibration": calibrations.get(s.spec)}) for s in specs]
        templates = {name: service.prompts.template_hash(name) for name in service.prompts.names()} if service else {}
        header = RunHeader(run_id=run_id, judges=tuple(specs), dataset=dataset, eval_split=plan.split_name,
                           template_hashes=templates, versions=package_versions(), git_commit=git_commit(),
                           started_at=started)
        out.mkdir(parents=True, exist_ok=True)
        with RecordWriter(records_path) as writer:
            writer.write(header)

    with RecordWriter(records_path) as writer:
        runner_for(args)(tasks, plan.evaluated, writer, done=done, concurrency=args.concurrency,
                         show_progress=not args.quiet, batches=driver)
    summary = summarize_file(records_path)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return 0
