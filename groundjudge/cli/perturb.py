"""``groundjudge perturb``: ungrounded variants of grounded answers, each with one error of a named type and its
edit recorded, beside grounded controls (the originals and paraphrases), as native JSON lines."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.table import Table

from groundjudge.cli.common import (UsageError, add_llm_options, console, llm_options, make_service,
                                    stdout_console)
from groundjudge.formats import ADAPTERS
from groundjudge.formats.load import load_examples


def _options(args: argparse.Namespace) -> tuple[str, ...]:
    from groundjudge.perturb import parse_types

    if args.per_answer < 1:
        raise UsageError("--per-answer must be at least 1")
    if args.paraphrases < 0:
        raise UsageError("--paraphrases must be 0 or more")
    if args.sample is not None and args.sample < 1:
        raise UsageError("--sample must be at least 1")
    if args.generator_only and not args.generator:
        raise UsageError("--generator-only needs --generator SPEC")
    try:
        return parse_types(args.types)
    except ValueError as err:
        raise UsageError(f"{err} (--types)") from None


def _out_path(text: str) -> Path:
    out = Path(text)
    if out.exists() and out.is_dir():
        raise UsageError(f"{out}: a directory (--out names a .jsonl file)")
    out.parent.mkdir(parents=True, exist_ok=True)
    return out


def _summary(result, out: Path, rejections: Path) -> None:
    from groundjudge.perturb import ERROR_TYPES

    stdout = stdout_console()
    rejected_by_type: dict[str, int] = {}
    for r in result.rejections:
        rejected_by_type[r.type_slug or r.kind] = rejected_by_type.get(r.type_slug or r.kind, 0) + 1
    kept = Table(title=f"kept: {len(result.examples)} rows from {result.sources} answers (check: {result.check})")
    for column in ("type", "error type", "kept", "rejected"):
        kept.add_column(column, justify="right" if column in ("kept", "rejected") else "left")
    for slug, n in result.kept_by_type().items():
        kept.add_row(slug, ERROR_TYPES[slug], str(n), str(rejected_by_type.get(slug, 0)))
    controls = result.controls()
    kept.add_row("original", "grounded control", str(controls.get("original", 0)), "0")
    kept.add_row("paraphrase", "grounded control", str(controls.get("paraphrase", 0)),
                 str(rejected_by_type.get("paraphrase", 0)))
    stdout.print(kept)
    reasons = result.rejected_by_reason()
    if reasons:
        table = Table(title=f"rejected: {sum(reasons.values())} candidates")
        table.add_column("reason")
        table.add_column("n", justify="right")
        for reason, n in sorted(reasons.items(), key=lambda item: (-item[1], item[0])):
            table.add_row(reason, str(n))
        stdout.print(table)
    else:
        stdout.print("rejected: none", markup=False, highlight=False)
    stdout.print(f"rows -> {out}; rejections -> {rejections}", markup=False, highlight=False)


def cmd_perturb(args: argparse.Namespace) -> int:
    """Load the data, take the grounded answers, write controls and one-error variants and the rejections."""
    from rich.progress import Progress

    from groundjudge.perturb import JudgeCheck, LLMGenerator, LexicalCheck, perturb, select_sources

    types = _options(args)
    out = _out_path(args.out)
    loaded = load_examples(args.data, args.format, args.skip_invalid)
    sources = select_sources(loaded.examples, args.label, args.sample, args.seed)
    if not sources:
        raise UsageError(f"no {args.label} answers to perturb in {', '.join(loaded.files)} (--label)")
    service = make_service(llm_options(args)) if (args.generator or (args.check and args.check != "lexical")) else None
    generator = LLMGenerator.from_spec(args.generator, service, only=args.generator_only) if args.generator else None
    check = JudgeCheck.build(args.check, service) if args.check and args.check != "lexical" else LexicalCheck()
    with Progress(console=console, transient=True, disable=args.quiet) as progress:
        task = progress.add_task("perturbing", total=len(sources))
        result = perturb(sources, types=types, per_answer=args.per_answer, seed=args.seed,
                         paraphrases=args.paraphrases, generator=generator, check=check,
                         progress=lambda: progress.advance(task))
    with out.open("w", encoding="utf-8") as handle:
        for row in result.examples:
            handle.write(json.dumps(row.model_dump(mode="json"), ensure_ascii=False) + "\n")
    rejections = out.with_name(out.name + ".rejections.json")
    rejections.write_text(json.dumps(result.rejections_report(), ensure_ascii=False, indent=1) + "\n",
                          encoding="utf-8")
    _summary(result, out, rejections)
    return 0


def add_parser(verbs) -> None:
    """Add the ``perturb`` verb and its options to the command's subparsers."""
    from groundjudge.perturb import SLUGS, SOURCE_LABELS

    p = verbs.add_parser(
        "perturb", help="write one-error ungrounded variants of grounded answers, with grounded controls",
        description="Take the grounded answers of the data (any format `groundjudge run` reads) and write, per "
                    "answer, the original and paraphrases (label grounded) and per error type of the legal "
                    "taxonomy up to N variants with exactly one error (label ungrounded), each edit recorded in "
                    "meta.perturbation, as native JSON lines; rejected candidates go to FILE.rejections.json.")
    p.add_argument("data", nargs="+", help="data files or directories (format auto-detected)")
    p.add_argument("--out", required=True, metavar="FILE.jsonl", help="where to write the rows")
    p.add_argument("--format", choices=sorted(ADAPTERS), help="force the format of every file")
    p.add_argument("--types", metavar="A,B,...", help=f"error types to make (default all: {','.join(SLUGS)})")
    p.add_argument("--per-answer", type=int, default=1, metavar="N",
                   help="variants per type per answer (default 1)")
    p.add_argument("--paraphrases", type=int, default=1, metavar="N",
                   help="paraphrase controls per answer (default 1; 0: only the originals)")
    p.add_argument("--seed", type=int, default=0, help="seed: the same input and seed give the same file (default 0)")
    p.add_argument("--label", choices=SOURCE_LABELS, default="grounded",
                   help="rows taken as grounded sources: labelled grounded (default), unlabelled, or any row")
    p.add_argument("--sample", type=int, metavar="N", help="a seeded sample of N source answers (default all)")
    p.add_argument("--generator", metavar="SPEC",
                   help="an LLM for the types and answers no rule fills, e.g. 'model=openai/gpt-4o-mini' or "
                        "'model=openai/NAME,api_base=http://127.0.0.1:8080/v1' (any LLM setting of the judges)")
    p.add_argument("--generator-only", action="store_true", help="make every variant and paraphrase with the LLM")
    p.add_argument("--check", metavar="SPEC",
                   help="judge spec that verifies each variant (kept only if it does not call it grounded), e.g. "
                        "'nli' or 'direct:model=...'; default: lexical (the edited words with three words either "
                        "side must not occur in the context)")
    p.add_argument("--skip-invalid", action="store_true", help="skip and count invalid rows")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_llm_options(p)
    p.set_defaults(func=cmd_perturb)
