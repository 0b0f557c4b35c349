"""Everything a tune settles before its first call: the tune file, the labelled data and its parts, the judge, the
candidates and the LLM service. Every problem found here is one line naming file:line, and nothing is called."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from groundjudge.formats.load import load_examples
from groundjudge.judges.config import JudgeConfig, config_model
from groundjudge.llm.service_options import LLMOptions, make_service
from groundjudge.runs.chunk_option import DEFAULT_LOCAL_CHUNK, check_local_chunk
from groundjudge.tune.calibration import content_free_examples
from groundjudge.tune.candidates import Candidate, build_candidates, is_score_judge
from groundjudge.tune.parts import TuneParts, split_parts
from groundjudge.tune.spec import TuneFile, load_tune
from groundjudge.types import Example

POOL_FILE = "demos_pool.jsonl"


class TuneOptions(LLMOptions):
    """A tune as the command line (or Python) describes it."""

    tune_file: str
    out: str = Field(default="runs/tune", description="The tune folder: state, winner.toml, tune.json, tune.md.")
    labels: str | None = Field(default=None, description="Human labels (a labels.jsonl or a run folder) as gold.")
    resume: bool = False
    dry_run: bool = False
    concurrency: int = Field(default=8, ge=1)
    local_chunk: int = Field(default=DEFAULT_LOCAL_CHUNK, description=(
        "Answers handed at once to a local judge with a batch path (1: one at a time)."))

    @field_validator("local_chunk", mode="before")
    @classmethod
    def _chunk(cls, value: Any) -> int:
        return check_local_chunk(value)


@dataclass
class Prepared:
    """A tune ready to run."""

    tune: TuneFile
    options: TuneOptions
    base: JudgeConfig
    parts: TuneParts
    start: Candidate
    candidates: list[Candidate]
    content_free: list[Example]
    service: Any
    pool: Path | None


def _base(tf: TuneFile) -> JudgeConfig:
    spec = tf.spec
    found = [c for c in tf.experiment.judges if c.name == spec.judge]
    if not found:
        names = ", ".join(c.name for c in tf.experiment.judges)
        raise tf.error(("tune", "judge"), f"[tune] judge: {spec.judge!r} is no judge of [judges] (judges: {names}; "
                                          "a table with a matrix is several judges: tune one)")
    base = found[0]
    fields = config_model(base.kind).model_fields
    if spec.calibration and not is_score_judge(base):
        raise tf.error(("tune", "calibration"), f"[tune.calibration]: judge {base.name!r} decides without a "
                                                "threshold (calibration needs a score judge, e.g. score=logprobs)")
    if spec.demos and "demos" not in fields:
        raise tf.error(("tune", "demos"), f"[tune.demos]: judge kind {base.kind!r} shows no demonstrations")
    if spec.claims and base.kind != "claims":
        raise tf.error(("tune", "claims"), f"[tune.claims]: judge {base.name!r} is not a claims judge")
    if spec.instructions and "prompts" not in fields:
        raise tf.error(("tune", "instructions"), f"[tune.instructions]: judge kind {base.kind!r} renders no prompt")
    return base


def _examples(tf: TuneFile, labels: str | None) -> list[Example]:
    data = tf.experiment.data
    loaded = load_examples(data.files, data.format, data.skip_invalid).examples
    if data.split:
        loaded = [ex for ex in loaded if ex.split == data.split]
    if labels:
        from groundjudge.labels.gold import load_gold, relabel_examples

        loaded = relabel_examples(loaded, load_gold(labels, {ex.id for ex in loaded}))
    labelled = [ex for ex in loaded if ex.label is not None]
    if not labelled:
        raise tf.error(("data", "files"), "[data] files: no labelled answer to tune on (gold labels in the data, "
                                          "or --labels FILE|RUN with people's labels)")
    if data.sample and data.sample < len(labelled):
        labelled = sorted(random.Random(data.seed).sample(labelled, data.sample), key=labelled.index)
    return labelled


def _parts(tf: TuneFile, examples: list[Example], needs_fit: bool) -> TuneParts:
    spec = tf.spec
    parts = split_parts(examples, spec.parts.optimise, spec.parts.select, spec.parts.test, spec.seed,
                        with_pool=spec.demos is not None)
    for name, needed in (("test", True), ("select", True), ("fit", needs_fit), ("pool", spec.demos is not None)):
        if needed and not getattr(parts, name):
            what = {"fit": "optimise (fit half)", "pool": "optimise (demonstrations half)"}.get(name, name)
            groups = set().union(*(parts.groups(p) for p in ("pool", "fit", "select", "test")))
            raise tf.error(("tune", "parts"), f"[tune] parts: the {what} part is empty ({len(examples)} labelled "
                                              f"answers in {len(groups)} groups); give it a larger share or more data")
    return parts


def prepare(options: TuneOptions) -> Prepared:
    """Check the tune file, the data and the levers; build the candidates and the service (no call made)."""
    tf = load_tune(options.tune_file)
    spec = tf.spec
    base = _base(tf)
    examples = _examples(tf, options.labels)
    methods = {c for c in (spec.calibration.methods if spec.calibration else [])}
    from groundjudge.tune.candidates import start_method

    needs_fit = "threshold" in methods or start_method(base) == "threshold" or bool(
        spec.instructions and spec.instructions.proposer)
    parts = _parts(tf, examples, needs_fit)
    out = Path(options.out)
    pool = None
    if spec.demos:
        from groundjudge.judges.demonstrations import pool_from_examples, write_pool

        pool = write_pool(out / POOL_FILE, pool_from_examples(parts.pool))
    start, candidates = build_candidates(base, spec, pool)
    run = tf.experiment.run
    llm = LLMOptions(prompts=options.prompts or run.prompts, cache_dir=options.cache_dir or run.cache_dir,
                     no_cache=options.no_cache)
    with_question = any(ex.question for ex in examples)
    cf = content_free_examples(spec.calibration.content_free, with_question) if spec.calibration else []
    return Prepared(tune=tf, options=options, base=base, parts=parts, start=start, candidates=candidates,
                    content_free=cf, service=make_service(llm), pool=pool)
