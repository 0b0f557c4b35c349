"""``groundjudge label-benchmark``: check a typed error benchmark with blind labels.

``draw DATA --out DIR`` writes a seeded, stratified sample of the benchmark's typed variants with grounded
controls mixed in as blind files for two labellers (``blind_A.jsonl``, ``blind_B.jsonl``: id, question,
documents, answer; nothing else) and the hidden key (``key.jsonl``, or ``--key FILE`` to keep it elsewhere);
``--exclude KEY`` leaves out every row of an earlier sample, for a fresh one after the generator was fixed
(``--exclude-data FILE``, repeatable: also the rows with the text of such a row in the build it was drawn from).
It also writes the readers' instructions, ``DIR/README.md``: the six types, their definitions and the rulings for
where two seem to fit, from the taxonomy file the error-types judge uses; and, when there are two parts, one copy
per reader (``README_A.md``, ``README_B.md``) that names only that reader's own blind and labels files, so
neither reader is pointed at the other's labels.
``measure KEY --labels A=FILE [--labels B=FILE]`` gives every rule's and type's precision with 95% intervals,
weighted to the whole file, and the agreement between the labellers (docs/labelling.md, "Checking a benchmark").
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.text import Text

from groundjudge.cli.common import UsageError, stdout_console
from groundjudge.formats.load import load_examples
from groundjudge.labels.benchmark_check import measure
from groundjudge.labels.benchmark_files import (
    BLIND_FILES,
    KEY_FILE,
    KeyFileError,
    KeyHeader,
    leaks,
    read_key,
    sample_tag,
    write_round,
)
from groundjudge.labels.benchmark_readme import readers_readme
from groundjudge.labels.benchmark_sample import (
    ALLOCATIONS,
    PARTS,
    DrawSettings,
    SampleError,
    draw,
    units_of,
    verdict_patterns,
    with_verdicts,
)
from groundjudge.labels.benchmark_tables import measurement_markdown, share_text
from groundjudge.labels.interchange_common import taxonomy_names

CHECK_FILES = ("benchmark_check.json", "benchmark_check.md")
"""What ``measure`` writes into ``--out``."""
README_FILE = "README.md"
"""The readers' instructions ``draw`` writes beside the blind files."""


def _settings(args: argparse.Namespace) -> DrawSettings:
    for flag in ("variants", "second_variants", "originals", "restatements", "paraphrases"):
        value = getattr(args, flag)
        if value is not None and value < (1 if flag == "variants" else 0):
            raise UsageError(f"--{flag.replace('_', '-')} {value}: a count of rows "
                             f"({'1' if flag == 'variants' else '0'} or more)")
    return DrawSettings(variants=args.variants, second_variants=args.second_variants, originals=args.originals,
                        restatements=args.restatements, paraphrases=args.paraphrases, allocation=args.allocation,
                        seed=args.seed)


def cmd_draw(args: argparse.Namespace) -> int:
    """Draw the sample and write the blind files and the key; nothing is written when a setting is bad."""
    settings = _settings(args)
    out = Path(args.out)
    paths = {"A": out / BLIND_FILES["A"], "B": out / BLIND_FILES["B"], "key": Path(args.key or out / KEY_FILE),
             "readme": out / README_FILE}
    there = [str(path) for path in paths.values() if path.exists()]
    if there and not args.force:
        raise UsageError(f"--out {out}: {there[0]} exists (--force overwrites it; labels made for it would then "
                         "belong to another sample)")
    excluded = _excluded_rows(args.exclude)
    loaded = load_examples([args.data])
    examples = {example.id: example for example in loaded.examples}
    if args.exclude_data:
        excluded.update(_same_text_rows(args.exclude_data, args.exclude, excluded, loaded.examples))
    try:
        units = units_of(loaded.examples)
        judges: list[str] = []
        if args.run:
            judges, patterns = verdict_patterns(args.run, args.judge)
            units = with_verdicts(units, judges, patterns)
        elif args.judge:
            raise SampleError("--judge: names a judge of the runs given with --run (none given)")
        left_out = {tag: sum(unit.row_id in rows for unit in units) for tag, rows in excluded.items()}
        units = [unit for unit in units if not any(unit.row_id in rows for rows in excluded.values())]
        drawn = draw(units, settings)
    except SampleError as err:
        raise UsageError(str(err)) from None
    header = KeyHeader(sample=sample_tag(loaded.hash, settings, judges, list(excluded)),
                       dataset=Path(args.data).name, dataset_sha256=loaded.hash, settings=settings, judges=judges,
                       parts={part: paths[part].name for part in PARTS if settings.second_variants or part == "A"},
                       strata=drawn.population, rules=drawn.rules, taxonomy=taxonomy_names(None),
                       excluded=left_out if excluded else None)
    write_round(drawn, examples, header, paths)
    problems = [p for part in header.parts for p in leaks(paths[part], paths["key"], examples)]
    if problems:
        raise UsageError(f"a blind file gives away its key ({len(problems)} problem(s)): {problems[0]}")
    counts = {part: sum(part in drawn.pi[unit.row_id] for unit in drawn.units) for part in header.parts}
    files = {part: (paths[part].name, counts[part]) for part in header.parts}
    paths["readme"].write_text(readers_readme(header.sample, files), encoding="utf-8")
    if len(files) > 1:
        for part, named in files.items():
            reader_readme(out, part).write_text(readers_readme(header.sample, {part: named}), encoding="utf-8")
    _print_draw(header, drawn, paths)
    return 0


def reader_readme(out: Path, part: str) -> Path:
    """Where ``draw`` writes the README for one reader only (its own files named, the other reader's not)."""
    return out / f"README_{part}.md"


def _excluded_rows(keys: list[str] | None) -> dict[str, set[str]]:
    """Sample tag -> the row ids of each ``--exclude`` key; a key that cannot be read is a one-line error."""
    rows: dict[str, set[str]] = {}
    for key in keys or []:
        if not Path(key).is_file():
            raise UsageError(f"--exclude {key}: no such key file")
        try:
            header, items = read_key(key)
        except KeyFileError as err:
            raise UsageError(f"--exclude {err}") from None
        rows.setdefault(header.sample, set()).update(item.row_id for item in items.values())
    return rows


def _same_text_rows(old_files: list[str], keys: list[str] | None, excluded: dict[str, set[str]], examples) -> dict:
    """``<tag> same text`` -> the rows of the data (under other ids) whose source and answer text are those of a row
    of an ``--exclude`` key in the old data file that key was drawn from (matched by hash): rows a fix retyped
    under a new id. Every old file must be the data of at least one key."""
    if not keys:
        raise UsageError("--exclude-data: needs --exclude KEY (the keys drawn from it)")
    headers = [read_key(key)[0] for key in keys]
    by_tag: dict[str, dict] = {}
    for old_data in old_files:
        if not Path(old_data).is_file():
            raise UsageError(f"--exclude-data {old_data}: no such file")
        old = load_examples([old_data])
        tags = [header.sample for header in headers if header.dataset_sha256 == old.hash]
        if not tags:
            raise UsageError(f"--exclude-data {old_data}: not the data the --exclude keys were drawn from (its hash "
                             "differs from their headers')")
        for tag in tags:
            by_tag[tag] = {example.id: example for example in old.examples}
    out: dict[str, set[str]] = {}
    for tag, rows in excluded.items():
        if tag not in by_tag:
            continue
        by_id = by_tag[tag]
        texts = {_source_and_answer(by_id[row]) for row in rows if row in by_id}
        same = {example.id for example in examples if example.id not in rows
                and _source_and_answer(example) in texts}
        if same:
            out[f"{tag} same text"] = same
    return out


def _source_and_answer(example) -> tuple[str, str]:
    made = (example.meta or {}).get("perturbation") or {}
    return str(made.get("source_id") or example.id), example.answer


def _print_draw(header: KeyHeader, drawn, paths) -> None:
    console = stdout_console()
    for tag, count in (header.excluded or {}).items():
        console.print(Text(f"left out: {count} rows of sample {tag} (--exclude)"), soft_wrap=True)
    for part in header.parts:
        kinds: dict[str, int] = {}
        for unit in drawn.units:
            if part in drawn.pi[unit.row_id]:
                kinds[unit.kind] = kinds.get(unit.kind, 0) + 1
        console.print(Text(f"part {part}: {paths[part]} ({sum(kinds.values())} items: "
                           + ", ".join(f"{count} {kind}s" for kind, count in kinds.items()) + ")"), soft_wrap=True)
    strata = len({unit.stratum for unit in drawn.units})
    console.print(Text(f"readers' README: {paths['readme']}"
                       + (", one per reader: " + ", ".join(reader_readme(paths['readme'].parent, part).name
                                                           for part in header.parts)
                          if len(header.parts) > 1 else "")), soft_wrap=True)
    console.print(Text(f"key: {paths['key']} (sample {header.sample}, {strata} strata drawn from; keep it from the "
                       "readers)"), soft_wrap=True)


def _labels_files(given: list[str] | None) -> dict[str, str]:
    files: dict[str, str] = {}
    for text in given or []:
        part, sep, path = text.partition("=")
        if not sep or not part or not path:
            raise UsageError(f"--labels {text}: give PART=FILE (PART: {' or '.join(PARTS)})")
        if part in files:
            raise UsageError(f"--labels {text}: part {part} given twice")
        if not Path(path).is_file():
            raise UsageError(f"--labels {text}: {path} is not a file")
        files[part] = path
    if not files:
        raise UsageError(f"--labels: give at least one PART=FILE (PART: {' or '.join(PARTS)})")
    return files


def cmd_measure(args: argparse.Namespace) -> int:
    """Measure the benchmark's precision from the key and the labels; write JSON and markdown into --out."""
    files = _labels_files(args.labels)
    if not Path(args.key).is_file():
        raise UsageError(f"{args.key}: no such key file")
    result = measure(args.key, files)
    out = Path(args.out) if args.out else Path(args.key).parent
    out.mkdir(parents=True, exist_ok=True)
    (out / CHECK_FILES[0]).write_text(json.dumps(result.model_dump(), indent=2) + "\n", encoding="utf-8")
    (out / CHECK_FILES[1]).write_text(measurement_markdown(result), encoding="utf-8")
    console = stdout_console()
    for part in result.parts:
        overall = part.overall
        console.print(Text(f"part {part.part}: {part.labelled}/{part.items} labelled; all variants: precision "
                           f"{share_text(overall.confirmed)}, an error at all {share_text(overall.error)}"),
                      soft_wrap=True)
        for group in part.by_type:
            console.print(Text(f"  {group.group}: precision {share_text(group.confirmed)} "
                               f"({group.confirmed.k}/{group.confirmed.n})"), soft_wrap=True)
    if result.agreement is not None and result.agreement.pairs:
        pair = result.agreement.pairs[0]
        kappa = "-" if pair.kappa is None else f"{pair.kappa:.3f}"
        console.print(Text(f"agreement {pair.a} vs {pair.b}: {pair.n} items, Cohen's kappa {kappa}"), soft_wrap=True)
    console.print(Text(f"written: {out / CHECK_FILES[0]}, {out / CHECK_FILES[1]}"), soft_wrap=True)
    return 0


def add_parser(verbs) -> None:
    """Add the ``label-benchmark`` verb (``draw`` and ``measure``) to the command's subparsers."""
    verb = verbs.add_parser("label-benchmark", help="check a typed error benchmark with blind labels: draw a "
                                                    "sample for readers, then measure each rule's precision")
    steps = verb.add_subparsers(dest="step", required=True)
    drawing = steps.add_parser("draw", help="write blind files for two labellers, their README and the hidden key")
    drawing.add_argument("data", help="the benchmark (rows with meta.perturbation, as groundjudge perturb writes)")
    drawing.add_argument("--out", required=True, metavar="DIR", help="folder of the blind files")
    drawing.add_argument("--key", metavar="FILE", help=f"the key (default DIR/{KEY_FILE}; keep it from readers)")
    drawing.add_argument("--variants", type=int, default=200, help="typed variants in part A (default 200)")
    drawing.add_argument("--second-variants", type=int, default=50,
                         help="typed variants in part B, a subsample of A for a second labeller (default 50; 0: none)")
    drawing.add_argument("--originals", type=int, default=40, help="grounded originals in part A (default 40)")
    drawing.add_argument("--restatements", type=int, default=20, help="grounded restatements in part A (default 20)")
    drawing.add_argument("--paraphrases", type=int, default=None, help="paraphrase controls in part A (default all)")
    drawing.add_argument("--allocation", choices=tuple(ALLOCATIONS), default="sqrt",
                         help="how each group's items are shared between type x source cells: by size to the "
                              "power 0.5 (sqrt, default), 1 (proportional) or 0 (equal)")
    drawing.add_argument("--run", action="append", metavar="DIR",
                         help="a run over the benchmark: its judges' verdict patterns split the strata (repeatable)")
    drawing.add_argument("--judge", action="append", metavar="SPEC",
                         help="only these judges of the runs make the verdict pattern (repeatable; default all)")
    drawing.add_argument("--exclude", action="append", metavar="KEY",
                         help="an earlier sample's key: every row id in it is left out of this draw, so a fresh "
                              "sample shares no row with it (repeatable)")
    drawing.add_argument("--exclude-data", action="append", metavar="FILE",
                         help="a data file an --exclude key was drawn from (its hash is the key's): rows with the same "
                              "source and answer text as one of that key's rows are left out too (rows a fix retyped "
                              "under a new id; repeatable, one per earlier build)")
    drawing.add_argument("--seed", type=int, default=0, help="seed of the draw and the orders (default 0)")
    drawing.add_argument("--force", action="store_true", help="overwrite blind files or a key already there")
    drawing.set_defaults(func=cmd_draw)
    measuring = steps.add_parser("measure", help="precision per rule and type from the key and the labels")
    measuring.add_argument("key", help="the key the draw wrote")
    measuring.add_argument("--labels", action="append", metavar="PART=FILE",
                           help="a part's labels (A=labels_A.jsonl, B=labels_B.jsonl; labels.jsonl lines)")
    measuring.add_argument("--out", metavar="DIR", help=f"where {' and '.join(CHECK_FILES)} go (default: the "
                                                        "key's folder)")
    measuring.set_defaults(func=cmd_measure)
