"""``groundjudge attack``: a battery of answers that address the judge, built from real answers of your data."""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from groundjudge.cli.common import UsageError, console, stdout_console
from groundjudge.formats import ADAPTERS
from groundjudge.formats.load import assign_missing_splits, load_examples

DEFAULT_DEV_FRACTION = 0.3
"""As ``groundjudge run``: data without splits gets this share of groups as dev."""


def _styles(text: str | None) -> tuple[str, ...]:
    from groundjudge.security.attacks import STYLES

    if not text:
        return STYLES
    chosen = tuple(dict.fromkeys(s.strip() for s in text.split(",") if s.strip()))
    unknown = [s for s in chosen if s not in STYLES]
    if unknown or not chosen:
        raise UsageError(f"unknown style {unknown[0] if unknown else text!r} (--styles); known: {', '.join(STYLES)}")
    return chosen


def cmd_attack(args: argparse.Namespace) -> int:
    """Pick examples of one label in one split, write each plain and once attacked per style (native JSONL)."""
    from groundjudge.security import attacks

    styles = _styles(args.styles)
    if args.sample is not None and args.sample < 1:
        raise UsageError("--sample must be at least 1")
    dev_fraction = DEFAULT_DEV_FRACTION if args.dev_fraction is None else args.dev_fraction
    loaded = load_examples(args.data, args.format, args.skip_invalid)
    examples = loaded.examples
    split = None if args.split == "all" else args.split
    if split and all(ex.split is None for ex in examples) and dev_fraction > 0:
        examples = assign_missing_splits(examples, dev_fraction)
    pool = [ex for ex in examples if (split is None or ex.split == split)
            and (args.label == "any" or ex.label == args.label)]
    where = f"label {args.label!r}" + (f" in split {split!r}" if split else "")
    if not pool:
        raise UsageError(f"no examples with {where} in {', '.join(loaded.files)}")
    if args.sample and args.sample < len(pool):
        pool = sorted(random.Random(args.seed).sample(pool, args.sample), key=pool.index)
    out = Path(args.out)
    if out.exists() and out.is_dir():
        raise UsageError(f"{out}: a directory (--out names a .jsonl file)")
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = []
    from rich.progress import Progress

    with Progress(console=console, transient=True, disable=args.quiet) as progress:
        task = progress.add_task("attacking", total=len(pool))
        for example in pool:
            for copy in [attacks.plain(example)] + [attacks.attack(example, style, args.seed) for style in styles]:
                if args.out_split == "test":
                    copy = copy.model_copy(update={"split": "test"})
                rows.append(copy)
            progress.advance(task)
    with out.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row.model_dump(mode="json"), ensure_ascii=False) + "\n")
    stdout = stdout_console()
    stdout.print(f"{len(pool)} answers ({where}) x (plain + {len(styles)} attacks) = {len(rows)} rows -> {out}",
                 markup=False, highlight=False)
    stdout.print(f"styles: {', '.join(styles)}; seed {args.seed}; split of the rows: "
                 f"{'test' if args.out_split == 'test' else 'as in the data'}", markup=False, highlight=False)
    if args.out_split == "test":
        stdout.print(f"judge them: groundjudge run {out} --split test --judge SPEC", markup=False, highlight=False)
    return 0


def add_parser(verbs) -> None:
    """Add the ``attack`` verb and its options to the command's subparsers."""
    p = verbs.add_parser("attack", help="build answers that address the judge (prompt-injection battery)",
                         description="Pick answers of one label from the data (loaded as `groundjudge run` loads "
                                     "it) and write each one plain and once per injection style with an attack "
                                     "sentence added, in groundjudge's native JSON-lines format.")
    p.add_argument("data", nargs="+", help="data files or directories (format auto-detected)")
    p.add_argument("--out", required=True, metavar="FILE.jsonl", help="where to write the rows")
    p.add_argument("--format", choices=sorted(ADAPTERS), help="force the format of every file")
    p.add_argument("--split", choices=("train", "dev", "test", "all"), default="dev",
                   help="take answers from this split (data without splits: the --dev-fraction group split; "
                        "default dev; all: every split)")
    p.add_argument("--dev-fraction", type=float,
                   help=f"when the data has no splits, this share of groups is dev (default {DEFAULT_DEV_FRACTION})")
    p.add_argument("--label", choices=("ungrounded", "grounded", "any"), default="ungrounded",
                   help="take answers with this gold label (default ungrounded)")
    p.add_argument("--sample", type=int, metavar="N", help="a seeded sample of N answers (default all)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample and of the attack phrasings (default 0)")
    p.add_argument("--styles", metavar="A,B,...", help="injection styles to add (default all)")
    p.add_argument("--out-split", choices=("test", "keep"), default="test",
                   help="split of the written rows: test (default; `groundjudge run FILE --split test` judges all "
                        "of them) or keep each source's")
    p.add_argument("--skip-invalid", action="store_true", help="skip and count invalid rows")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_attack)
