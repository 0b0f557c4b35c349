"""``groundjudge replay``: re-judge a run from its recorded LLM replies, with the network off."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import sys
from datetime import datetime, timezone
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
from groundjudge.cli.common import console, git_commit, llm_options, make_service, stdout_console
from groundjudge.judges import SpecError  # noqa: E402
from groundjudge.judges.config import JudgeConfig  # noqa: E402
from groundjudge.judges.demonstrations.configure import rebuilt_settings  # noqa: E402
from groundjudge.runs.calibrate import with_threshold  # noqa: E402
from groundjudge.runs.chunk_option import LOCAL_CHUNK_FLAG, check_local_chunk  # noqa: E402
from groundjudge.runs.interrupts import RunInterrupted, interrupts_raised
from groundjudge.runs.lock import RunLock
from groundjudge.runs.records import RecordWriter, RunRecords, find_records, new_run_id, read_records  # noqa: E402
from groundjudge.runs.runner import JudgeTask, run_judges  # noqa: E402
from groundjudge.runs.summary import summarize  # noqa: E402
from groundjudge.types import JudgeSpec, Verdict  # noqa: E402


def cmd_replay(args: argparse.Namespace) -> int:
    """Re-judge every recorded example from the recorded LLM replies only; report what differs."""
    from groundjudge.runs.replay_cache import recorded_cache

    if args.local_chunk is not None:
        check_local_chunk(args.local_chunk)   # refused in one line before anything is read or judged
    source = Path(args.dir)
    original = read_records(find_records(source))
    service = make_service(llm_options(args), offline=True, cache=recorded_cache(source))
    out = Path(args.out) if args.out else source / "replay"
    command = ["groundjudge", *getattr(args, "argv", ["replay"])]
    try:
        with interrupts_raised(), RunLock(out, command, warn=lambda text: console.print(f"[yellow]{text}",
                                                                                         soft_wrap=True)):
            replayed = _replay_into(args, original, service, out)
    except RunInterrupted as stop:
        console.print(f"[yellow]{stop}: replay stopped; the lock is released. Replay again with:", soft_wrap=True)
        print(shlex.join(command), file=sys.stderr, flush=True)
        return stop.exit_code
    before = {(r.judge, r.example.id): r.result.verdict for r in original.results}
    differ = [(r.judge, r.example.id) for r in replayed.results
              if not same_verdict(before[(r.judge, r.example.id)], r.result.verdict)]
    new_calls = sum(not c.cached for r in replayed.results for c in r.result.calls)
    stdout_console().print(f"replayed {len(replayed.results)} verdicts from {source}: "
                    f"{len(replayed.results) - len(differ)} identical, {len(differ)} differ; "
                    f"{new_calls} new LLM calls")
    for judge_spec, example_id in differ[:20]:
        stdout_console().print(f"  differs: {judge_spec} {example_id}")
    return 0 if not differ else 1


SCORE_TOLERANCE = 1e-6
"""Scores closer than this are the same score: a local model's float32 scores move in the last digits with the
answers it is batched with (as :func:`groundjudge.metrics.fit_threshold` treats them)."""


def same_verdict(before: Verdict, after: Verdict) -> bool:
    """The same label and the same score (both None, or within :data:`SCORE_TOLERANCE`)."""
    if before.label != after.label or (before.score is None) != (after.score is None):
        return False
    return before.score is None or abs(before.score - after.score) <= SCORE_TOLERANCE


def recorded_chunk(original: RunRecords, spec: str) -> int:
    """The chunk size the run gave a local judge: the most answers one of its results shared a call with (1 when
    none did, or the judge judged answer by answer)."""
    return max((r.result.batch_size or 1 for r in original.results if r.judge == spec), default=1)


def recorded_judge(spec: JudgeSpec, out: Path) -> JudgeConfig:
    """The judge exactly as the header records it (kind and every setting). A ``prompts`` folder that is not
    here any more is rebuilt from the template texts the header keeps, under ``out/prompts/``; a demonstrations
    pool file likewise from the pool lines it keeps, under ``out/demos/``."""
    settings = dict(spec.settings)
    folder = settings.get("prompts")
    if folder and not Path(folder).is_dir() and spec.templates:
        rebuilt = out / "prompts" / hashlib.sha256(spec.spec.encode()).hexdigest()[:12]
        rebuilt.mkdir(parents=True, exist_ok=True)
        for template in spec.templates.values():
            for filename, text in template.files.items():
                if template.origin.get(filename, "built-in") != "built-in":
                    (rebuilt / filename).write_text(text, encoding="utf-8")
        settings["prompts"] = str(rebuilt)
    settings = rebuilt_settings(settings, spec.demonstrations, out / "demos")   # a pool file that is gone
    if settings.get("weights") and not Path(settings["weights"]).is_file() and spec.calibration \
            and spec.calibration.fit:   # a stack's saved fit that is gone: the header's copy of it is used
        settings["weights"] = None
    try:
        return JudgeConfig.create(spec.name, name=spec.spec, **settings)
    except SpecError:   # a header written before typed settings (lists as text): read its spec string
        return JudgeConfig.from_spec(spec.spec)


def _replay_into(args: argparse.Namespace, original: RunRecords, service, out: Path) -> RunRecords:
    """Re-judge the original run's examples into the locked folder ``out`` (records and summary); its records."""
    records_path = out / "records.jsonl"
    if records_path.exists():
        records_path.unlink()
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    header = original.header.model_copy(update={"run_id": new_run_id(), "git_commit": git_commit(),
                                                "started_at": started})
    with RecordWriter(records_path) as writer:
        writer.write(header)
        for spec in header.judges:
            judge = recorded_judge(spec, out).build(service=service)
            task = JudgeTask(spec=spec.spec, judge=judge)
            if spec.calibration is not None:
                task = with_threshold(task, spec.calibration)
            examples = [r.example for r in original.results if r.judge == spec.spec]
            chunk = args.local_chunk or recorded_chunk(original, spec.spec)
            run_judges([task], examples, writer, show_progress=not args.quiet, local_chunk=chunk)
    replayed = read_records(records_path)
    (out / "summary.json").write_text(json.dumps(summarize(replayed), indent=2) + "\n", encoding="utf-8")
    return replayed


def add_parser(verbs) -> None:
    """Add the ``replay`` verb and its options to the command's subparsers."""
    replay = verbs.add_parser("replay", help="re-judge a run from its recorded LLM calls, with no network")
    replay.add_argument("dir", help="a run directory (records.jsonl)")
    replay.add_argument("--out", help="where to write the replayed run (default DIR/replay)")
    replay.add_argument("--prompts", metavar="DIR", help="the prompt folder the run used, if any")
    replay.add_argument(LOCAL_CHUNK_FLAG, dest="local_chunk", type=int, metavar="N",
                        help="answers handed at once to a local judge with a batch path (default: as the run "
                             "chunked them; 1: one at a time)")
    replay.add_argument("--quiet", action="store_true")
    replay.set_defaults(func=cmd_replay)
