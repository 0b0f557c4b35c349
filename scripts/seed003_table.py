"""Seed 003's comparison table (legal groundedness benchmark) with groundjudge's own judges and data.

The seed benchmarks groundedness judges on legal QA by macro precision / recall /
F1, accuracy and latency per response, grouped into method families (similarity,
NLI, prompting, a fine-tuned cross-encoder). This script prints, per data set
found in the given run directories, one row per groundjudge judge with the
family it belongs to, beside the seed's published rows for that family, and the
share of ungrounded answers of each gold error type that each judge caught,
beside the seed's Table 4. Every number of ours is recomputed from the records
(``summary.json`` is not read). The seed's rows are on the seed's own
(proprietary) data set, not on ours: the comparison is of method families.

    python scripts/seed003_table.py RUN_DIR [RUN_DIR ...] [--paper-split test|dev|both] \\
        [--common] [--out results/seed003.md] [--json seed003.json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from groundjudge.runs.records import find_records
from groundjudge.report.compare import Comparison, compare, per_response
from groundjudge.runs.summary import latency_without_cache
from groundjudge.report.tables import TextTable, markdown_document
from groundjudge.types import RunHeader

PAPER = "Trautmann et al., Measuring the Groundedness of Legal Question-Answering Systems (seed 003)"

CAVEAT = ("The paper's rows are on the paper's own data set (proprietary legal queries, responses and contexts), "
          "not on ours: they compare method families, not numbers on the same data.")

NO_COUNTERPART = "no counterpart"


@dataclass(frozen=True)
class PaperRow:
    """One published row of the paper: a method's macro metrics on one split, and where they are printed."""

    method: str
    family: str
    table: str
    split: str
    n: int
    macro_precision: float
    macro_recall: float
    macro_f1: float
    accuracy: float
    latency_s: float | None = None
    latency_source: str | None = None
    note: str | None = None


PAPER_RESPONSES = {"dev": 162, "test": 316}
"""Responses per split (the paper's Table 1): the n of its Table 3 rows."""

SIMILARITY, QUIP, NLI = "Semantic Similarity", "Quoted Information Precision", "Natural Language Inference"
FINE_TUNED, DIRECT = "Fine-Tuning (Cross-Encoder)", "Direct Prompting"
REFCHECKER, DEEPEVAL, SELFCHECK = "Amazon RefChecker", "DeepEval Claims Extraction and Verification", "SelfCheckGPT"

FAMILIES: dict[str, str] = {
    SIMILARITY: "§5.1", QUIP: "§5.1", NLI: "§5.2", FINE_TUNED: "§5.4", DIRECT: "§5.3", REFCHECKER: "§5.3",
    DEEPEVAL: "§5.3", SELFCHECK: "§5.3",
}
"""The paper's method families, in its order, with the section that describes each."""

_LATENCY = {"GPT-4o": 2.2, "DeepEval Claims Verify": 26.1}
"""The only latencies the paper gives as numbers (§7, measured on the dev set; the rest are in Fig. 2 only)."""

_TABLE3: tuple[tuple[str, str, tuple[float, float, float, float], tuple[float, float, float, float]], ...] = (
    # method, family, dev (P, R, F1, acc), test (P, R, F1, acc)
    ("COS_SIM", SIMILARITY, (0.525, 0.520, 0.494, 0.520), (0.497, 0.497, 0.493, 0.497)),
    ("QUIP", QUIP, (0.648, 0.533, 0.421, 0.533), (0.560, 0.509, 0.379, 0.509)),
    ("HEM V1", NLI, (0.640, 0.640, 0.640, 0.640), (0.598, 0.595, 0.592, 0.595)),
    ("HEM V2", NLI, (0.580, 0.580, 0.580, 0.580), (0.564, 0.563, 0.562, 0.563)),
    ("FACT_KB", NLI, (0.527, 0.527, 0.526, 0.527), (0.510, 0.510, 0.508, 0.510)),
    ("GC-large", FINE_TUNED, (0.694, 0.667, 0.655, 0.667), (0.628, 0.620, 0.615, 0.620)),
    ("LYNX v1.1", DIRECT, (0.764, 0.460, 0.571, 0.460), (0.792, 0.503, 0.597, 0.503)),
    ("Sonnet 3.5", DIRECT, (0.728, 0.727, 0.726, 0.727), (0.724, 0.715, 0.712, 0.715)),
    ("GPT-4o", DIRECT, (0.783, 0.773, 0.771, 0.773), (0.802, 0.763, 0.755, 0.763)),
    ("RefChecker (Haiku)", REFCHECKER, (0.511, 0.506, 0.450, 0.506), (0.514, 0.507, 0.435, 0.508)),
    ("RefChecker (Sonnet 3)", REFCHECKER, (0.500, 0.500, 0.366, 0.500), (0.500, 0.500, 0.386, 0.500)),
    ("DeepEval Claims Verify", DEEPEVAL, (0.801, 0.800, 0.800, 0.800), (0.779, 0.774, 0.774, 0.775)),
    ("SCGPT (Multi-Gen)", SELFCHECK, (0.627, 0.627, 0.627, 0.627), (0.679, 0.667, 0.661, 0.667)),
    ("SCGPT (ContextNLI)", SELFCHECK, (0.620, 0.620, 0.620, 0.620), (0.610, 0.604, 0.600, 0.604)),
)


def _table3_rows() -> list[PaperRow]:
    rows = []
    for method, family, dev, test in _TABLE3:
        for split, (p, r, f1, acc) in (("dev", dev), ("test", test)):
            latency = _LATENCY.get(method)
            rows.append(PaperRow(method, family, "Table 3", split, PAPER_RESPONSES[split], p, r, f1, acc,
                                 latency_s=latency, latency_source="§7 (dev set)" if latency else None))
    return rows


PAPER_ROWS: tuple[PaperRow, ...] = (*_table3_rows(),
    PaperRow("deberta-v3-base", FINE_TUNED, "Table 2", "dev", 75, 0.459, 0.466, 0.450, 0.493,
             note="the cross-encoder's own fine-tuning dev set of sentence pairs, not responses"),
    PaperRow("deberta-v3-large", FINE_TUNED, "Table 2", "dev", 75, 0.736, 0.739, 0.733, 0.733,
             note="the cross-encoder's own fine-tuning dev set of sentence pairs, not responses"),
)
"""Every published metric row: Table 3 (all methods, dev and test) and Table 2 (the fine-tuned cross-encoders)."""

ERROR_TYPES = ("Factual Inaccuracies", "Contextual Misinterpretations", "Procedural Errors", "Reasoning Errors",
               "Misattributions", "Terminological Errors")
"""The paper's six response error types, in the order it introduces them."""

PAPER_ERROR_TYPES: dict[str, Any] = {
    "method": "DeepEval Claims Verify", "family": DEEPEVAL, "table": "Table 4", "split": "dev",
    "misclassified": {"Terminological Errors": (2, 3), "Factual Inaccuracies": (12, 59), "Procedural Errors": (1, 5),
                      "Reasoning Errors": (2, 15), "Contextual Misinterpretations": (1, 9), "Misattributions": (0, 1)},
}
"""Table 4: the best method's misclassified / total ungrounded dev responses per error type."""

JUDGE_FAMILIES: dict[str, tuple[str, str]] = {
    "cosine": (SIMILARITY, "embedding cosine of each answer sentence with its best context sentence"),
    "quip": (QUIP, "character n-gram quoting score"),
    "span": (NO_COUNTERPART, "exact/normalised span match for short answers"),
    "nli": (NLI, "one local NLI model over claims and evidence windows (the paper: HEM, FactKB)"),
    "views": (NLI, "several NLI views vote per claim; the paper's NLI rows are single models"),
    "crossencoder": (FINE_TUNED, "a cross-encoder fine-tuned with groundjudge train"),
    "direct": (DIRECT, "one LLM call for the verdict (template=lynx: the Lynx prompt)"),
    "claims": (DEEPEVAL, "LLM claim extraction, then verification of each claim"),
    "triplets": (REFCHECKER, "LLM knowledge-triplet extraction, each triplet checked"),
    "selfcheck": (SELFCHECK, "consistency with answers sampled again at raised temperature"),
    "error_types": (DEEPEVAL, "the claims chain, then each unsupported claim typed (the paper's §8 taxonomy)"),
    "cascade": (NO_COUNTERPART, "local judge, escalating unsure answers to an LLM judge"),
    "fallback": (NO_COUNTERPART, "a primary judge with a secondary when its provider is unavailable"),
    "stack": (NO_COUNTERPART, "a logistic regression over other judges' scores, fitted on the dev part"),
    "hhem": (NLI, "Vectara HHEM-2.1-open per answer sentence over evidence windows (the paper's HEM V1 / V2 rows are Vectara's models)"),
    "minicheck": (NLI, "MiniCheck per answer sentence, max over ~400-word chunks"),
    "spans": (NO_COUNTERPART, "a LettuceDetect-style token tagger marking hallucinated spans of the answer"),
}
"""groundjudge judge name -> (the paper's method family, or no counterpart; how the judge works)."""


@dataclass
class Section:
    """One data set: the merged comparison of its runs, and its tables as data."""

    name: str
    comparison: Comparison
    rows: list[dict[str, Any]] = field(default_factory=list)
    error_types: list[dict[str, Any]] = field(default_factory=list)


def judge_name(spec: str) -> str:
    """The judge's registry name from its spec (``quip:n=21`` -> ``quip``)."""
    return spec.partition(":")[0].strip()


def family_of(spec: str) -> str:
    """The paper's method family of a judge spec, or ``no counterpart``."""
    return JUDGE_FAMILIES.get(judge_name(spec), (NO_COUNTERPART, ""))[0]


def read_header(run_dir: Path) -> RunHeader:
    """The header line of a run directory's records (plain or gzipped), without reading the results."""
    path = find_records(run_dir)
    if not path.exists():
        raise SystemExit(f"{run_dir}: no records.jsonl or records.jsonl.gz")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return RunHeader.model_validate_json(handle.readline())


def dataset_name(header: RunHeader) -> str:
    """A short name of a run's data: ``<folder>/<file>`` of each data file."""
    return ", ".join(f"{Path(f).parent.name}/{Path(f).name}" for f in header.dataset.files)


def group_runs(run_dirs: Sequence[Path]) -> dict[str, list[Path]]:
    """Run directories grouped by the data files they judged, in first-seen order."""
    groups: dict[str, list[Path]] = {}
    for run_dir in run_dirs:
        groups.setdefault(dataset_name(read_header(run_dir)), []).append(run_dir)
    return groups


def our_rows(comparison: Comparison) -> list[dict[str, Any]]:
    """One row per judge of the comparison, with its metrics recomputed from the records."""
    rows = []
    for key, stats in comparison.judges.items():
        spec = comparison.specs[key]
        rows.append({
            "source": "ours", "family": family_of(spec), "judge": comparison.labels[key], "spec": spec,
            "run": comparison.run_of[key], "n": stats["n"], "n_abstained": stats["n_abstained"],
            "macro_precision": stats.get("macro_precision"), "macro_recall": stats.get("macro_recall"),
            "macro_f1": stats.get("macro_f1"), "accuracy": stats.get("accuracy"),
            "balanced_accuracy": stats.get("balanced_accuracy"),
            # replies reused from the call cache count with their original latency
            "latency_mean_s": latency_without_cache(stats)["mean"],
            "usd_per_response": per_response(stats)[0] / 1000,
        })
    return rows


def paper_rows(families: Sequence[str], splits: Sequence[str]) -> list[dict[str, Any]]:
    """The paper's published rows of the given families and splits, as table rows."""
    return [{"source": f"paper, {row.table} ({row.split})", "family": row.family, "judge": row.method,
             "spec": None, "n": row.n, "n_abstained": None, "macro_precision": row.macro_precision,
             "macro_recall": row.macro_recall, "macro_f1": row.macro_f1, "accuracy": row.accuracy,
             "balanced_accuracy": None, "latency_mean_s": row.latency_s, "usd_per_response": None,
             "latency_source": row.latency_source, "note": row.note}
            for row in PAPER_ROWS if row.family in families and row.split in splits]


FAMILY_ORDER = (*FAMILIES, NO_COUNTERPART)
"""Row order of the tables: the paper's families in its order, then the judges with no counterpart."""


def by_family(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows stably sorted by their family's place in FAMILY_ORDER."""
    return sorted(rows, key=lambda r: FAMILY_ORDER.index(r["family"]))


def interleaved(ours: list[dict[str, Any]], splits: Sequence[str]) -> list[dict[str, Any]]:
    """Our rows by family in the paper's order, each family followed by the paper's rows; no-counterpart last."""
    rows: list[dict[str, Any]] = []
    for family in FAMILY_ORDER:
        mine = [r for r in ours if r["family"] == family]
        if mine:
            rows += mine + paper_rows([family], splits)
    return rows


def caught_by_type(per_error_type: dict[str, dict[str, int]]) -> dict[str, dict[str, Any]]:
    """Per gold error type: answers of that type the judge called ungrounded (abstentions are not catches)."""
    out = {}
    for kind, row in per_error_type.items():
        caught = row["n"] - row["missed"] - row["abstained"]
        out[kind] = {"n": row["n"], "caught": caught, "abstained": row["abstained"], "share": caught / row["n"]}
    return out


def paper_caught_by_type() -> dict[str, dict[str, Any]]:
    """Table 4 turned into caught shares: total minus misclassified, over total."""
    return {kind: {"n": total, "caught": total - missed, "abstained": 0, "share": (total - missed) / total}
            for kind, (missed, total) in PAPER_ERROR_TYPES["misclassified"].items()}


def error_type_rows(comparison: Comparison) -> list[dict[str, Any]]:
    """Per judge whose data carries gold error types: the caught share of each type."""
    return by_family([{"source": "ours", "family": family_of(comparison.specs[key]), "judge": comparison.labels[key],
                       "spec": comparison.specs[key], "per_type": caught_by_type(stats["per_error_type"])}
                      for key, stats in comparison.judges.items() if stats.get("per_error_type")])


def build_section(name: str, run_dirs: Sequence[Path], splits: Sequence[str], common: bool = False) -> Section:
    """Merge one data set's runs (summaries recomputed from records; with ``common`` on the examples all of them
    judged) and lay out its rows."""
    comparison = compare(list(run_dirs), common_only=common)
    section = Section(name=name, comparison=comparison)
    section.rows = interleaved(our_rows(comparison), splits)
    section.error_types = error_type_rows(comparison)
    return section


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _latency(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" if value >= 1 else f"{value:.4f}"


METRIC_HEADERS = ["source", "method family (paper)", "judge / paper method", "n", "macro P", "macro R", "macro F1",
                  "acc", "bal. acc", "latency s / response", "$ / response"]


def metric_row(row: dict[str, Any]) -> list[str]:
    """A metrics row as printed."""
    n = str(row["n"]) + (f" ({row['n_abstained']} abst.)" if row.get("n_abstained") else "")
    latency = _latency(row["latency_mean_s"]) + (" (dev)" if row.get("latency_source") else "")
    return [row["source"], row["family"], row["judge"], n, _num(row["macro_precision"]), _num(row["macro_recall"]),
            _num(row["macro_f1"]), _num(row["accuracy"]), _num(row["balanced_accuracy"]), latency,
            _num(row["usd_per_response"], 5)]


def section_title(section: Section) -> str:
    """``<data set> — <n> examples (<split>)``: the examples each run judged, and the runs' evaluation splits."""
    headers = [run.records.header for run in section.comparison.runs]
    sizes = sorted({len({r.example.id for r in run.records.results}) for run in section.comparison.runs})
    splits = sorted({h.eval_split or "all" for h in headers})
    return f"{section.name} — {'/'.join(map(str, sizes))} examples ({', '.join(splits)})"


def metrics_table(section: Section) -> TextTable:
    """The comparison table of one data set: our judges beside the paper's rows of their family."""
    notes = [CAVEAT, "Ours: recomputed from records; abstentions count as errors, never as grounded; latency is "
             "the mean wall time per response here (a reply reused from the call cache at its original latency), "
             "$ at list prices. Paper: macro metrics as published; it gives "
             "no balanced accuracy (for two classes it equals macro recall), no cost, and latency as numbers only "
             "for two methods (§7, dev set). Table 2 rows are scored on sentence pairs, not responses."]
    notes += section.comparison.notes
    return TextTable(title=section_title(section), headers=METRIC_HEADERS,
                     rows=[metric_row(r) for r in section.rows], note=" ".join(notes))


def _share(cell: dict[str, Any] | None) -> str:
    return "-" if cell is None else f"{cell['share']:.2f} ({cell['caught']}/{cell['n']})"


def error_types_table(section: Section) -> TextTable | None:
    """Caught share per gold error type for our judges, and the paper's Table 4 turned into the same share."""
    if not section.error_types:
        return None
    kinds = list(ERROR_TYPES) + sorted({k for r in section.error_types for k in r["per_type"]} - set(ERROR_TYPES))
    rows = [["ours", r["family"], r["judge"]] + [_share(r["per_type"].get(k)) for k in kinds]
            for r in section.error_types]
    paper = paper_caught_by_type()
    rows.append([f"paper, {PAPER_ERROR_TYPES['table']} ({PAPER_ERROR_TYPES['split']})", PAPER_ERROR_TYPES["family"],
                 PAPER_ERROR_TYPES["method"]] + [_share(paper.get(k)) for k in kinds])
    note = ("Share of the ungrounded answers of each gold error type that the judge called ungrounded "
            "(caught/total; higher is better; an abstention is not a catch). The paper reports this only for its "
            "best method, on its dev set, as misclassified/total (here: total minus misclassified). " + CAVEAT)
    return TextTable(title=f"{section.name} — ungrounded answers caught, by gold error type",
                     headers=["source", "method family (paper)", "judge / paper method", *kinds], rows=rows, note=note)


def paper_methods(family: str) -> list[str]:
    """The paper's methods of one family with their table, in the paper's order (``QUIP (Table 3)``)."""
    return list(dict.fromkeys(f"{r.method} ({r.table})" for r in PAPER_ROWS if r.family == family))


def mapping_table() -> TextTable:
    """Every groundjudge judge with the paper's method family and the paper's rows of that family."""
    rows = [[name, family, FAMILIES.get(family, "-"), ", ".join(paper_methods(family)) or "-", how]
            for name, (family, how) in JUDGE_FAMILIES.items()]
    return TextTable(title="groundjudge judges and the paper's method families",
                     headers=["judge", "method family (paper)", "paper section", "paper rows", "what the judge does"],
                     rows=rows)


def all_tables(sections: Sequence[Section]) -> list[TextTable]:
    """The mapping, then per data set the metrics table and (when there are gold error types) the error-type table."""
    tables = [mapping_table()]
    for section in sections:
        tables.append(metrics_table(section))
        extra = error_types_table(section)
        if extra is not None:
            tables.append(extra)
    return tables


def rich_table(data: TextTable) -> Table:
    """A table for the terminal: paper rows dimmed."""
    return data.to_rich(left_columns=3, muted=lambda row: row[0].startswith("paper"))


def markdown(tables: Sequence[TextTable]) -> str:
    """The tables as one Markdown document."""
    return markdown_document(f"Seed 003 comparison: {PAPER}", [f"**{CAVEAT}**", ""], tables)

def numbers(sections: Sequence[Section], splits: Sequence[str]) -> dict[str, Any]:
    """Everything printed, as JSON-ready numbers."""
    return {
        "paper": PAPER, "caveat": CAVEAT, "paper_splits_shown": list(splits),
        "paper_rows": [asdict(r) for r in PAPER_ROWS], "paper_responses": PAPER_RESPONSES,
        "paper_error_types": {**PAPER_ERROR_TYPES, "caught": paper_caught_by_type()},
        "judge_families": {name: {"family": family, "how": how} for name, (family, how) in JUDGE_FAMILIES.items()},
        "datasets": [{"name": s.name, "title": section_title(s), "runs": [str(r.path) for r in s.comparison.runs],
                      "notes": s.comparison.notes, "rows": s.rows, "error_types": s.error_types} for s in sections],
    }


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR", help="groundjudge run directories")
    parser.add_argument("--paper-split", choices=("test", "dev", "both"), default="test",
                        help="which of the paper's splits to print beside ours (default: test)")
    parser.add_argument("--common", action="store_true",
                        help="per data set, restrict every run to the examples all of them judged")
    parser.add_argument("--out", type=Path, metavar="FILE.md", help="also write the tables as Markdown")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the numbers as JSON")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the tables; write Markdown and JSON when asked."""
    args = parse_args(argv)
    splits = ("dev", "test") if args.paper_split == "both" else (args.paper_split,)
    sections = [build_section(name, dirs, splits, args.common) for name, dirs in group_runs(args.runs).items()]
    tables = all_tables(sections)
    console = Console()
    console.print(f"[bold]{CAVEAT}[/bold]")
    for data in tables:
        console.print(rich_table(data))
    if args.out:
        args.out.write_text(markdown(tables), encoding="utf-8")
    if args.json:
        args.json.write_text(json.dumps(numbers(sections, splits), indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
