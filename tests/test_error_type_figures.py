"""Per gold error type figures: recall with Wilson intervals, the most missed type, the typing confusion matrix
and its macro-F1, in the summary, the typed model, report.md and the PNGs; on records built by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from groundjudge.report.compare import compare
from groundjudge.report.markdown import render_markdown
from groundjudge.report.plots import make_plots
from groundjudge.runs.records import RecordWriter, read_records
from groundjudge.runs.summary import summarize
from groundjudge.runs.summary_model import ErrorTyping, RunSummary
from groundjudge.types import (
    Claim,
    ClaimVerdict,
    DatasetInfo,
    Example,
    JudgeResult,
    JudgeSpec,
    ResultRecord,
    RunHeader,
    Verdict,
)

FI, CM, MA, PE, RE, TE = ("Factual Inaccuracies", "Contextual Misinterpretations", "Misattributions",
                          "Procedural Errors", "Reasoning Errors", "Terminological Errors")
TYPER = "error_types:model=m,threshold=1.0"
PLAIN = "quip:n=21"
NONE = "none"

# (gold type or None for a grounded answer, typing judge's outcome, plain judge's outcome) per answer; an outcome
# is "grounded", "abstain", "untyped" (ungrounded, no claim typed) or the type given (ungrounded, typed); the plain
# judge never types, "ungrounded" is its catch
ANSWERS = (
    [(FI, FI, "ungrounded")] * 3 + [(FI, FI, "grounded")] * 2 + [(FI, RE, "grounded")]                # FI: 6
    + [(MA, MA, "ungrounded")] * 5 + [(MA, MA, "grounded")] * 2 + [(MA, FI, "grounded")]              # MA: 10
    + [(MA, "grounded", "grounded")] * 2
    + [(PE, PE, "ungrounded")] * 2 + [(PE, "untyped", "ungrounded")] + [(PE, "grounded", "ungrounded")]  # PE: 5
    + [(PE, "abstain", "grounded")]
    + [(RE, RE, "grounded")] + [(RE, "grounded", "grounded")] * 3                                         # RE: 4
    + [("antonym_swap", FI, "ungrounded")]                                        # a gold type of another scheme
    + [(None, "grounded", "grounded")] * 4 + [(None, MA, "grounded")]                         # 5 grounded answers
)


def _example(i: int, gold: str | None) -> Example:
    return Example(id=f"q{i}", context=["The tenant pays 500 euros a month."], answer=f"answer {i}",
                   label="grounded" if gold is None else "ungrounded", error_types=() if gold is None else (gold,))


def _verdict(i: int, outcome: str, path: str) -> Verdict:
    if outcome == "abstain":
        return Verdict(example_id=f"q{i}", label="abstain", abstain_reason="no_claims", path=path)
    if outcome == "grounded":
        return Verdict(example_id=f"q{i}", label="grounded", score=1.0,
                       claims=(ClaimVerdict(claim=Claim(text="rent"), label="supported"),), path=path)
    claims = (ClaimVerdict(claim=Claim(text="rent"), label="supported"),
              ClaimVerdict(claim=Claim(text="amount"), label="contradicted",
                           error_type=None if outcome in ("untyped", "ungrounded") else outcome),
              ClaimVerdict(claim=Claim(text="date"), label="unverifiable", error_type=TE if outcome == FI else None))
    return Verdict(example_id=f"q{i}", label="ungrounded", score=0.0, claims=claims, path=path)


def write_run(run_dir: Path, spec: JudgeSpec, column: int, skip: set[int] = frozenset(),
              started: str = "2026-03-01T10:00:00Z") -> Path:
    """records.jsonl of a run with one judge, its outcomes read from column 1 (typing) or 2 (plain) of ANSWERS."""
    header = RunHeader(run_id=run_dir.name, started_at=started, judges=(spec,),
                       dataset=DatasetInfo(files=("datasets/legal_qa/legal_qa.jsonl",), formats=("native",),
                                           n=len(ANSWERS) - len(skip), hash="0" * 64))
    with RecordWriter(run_dir / "records.jsonl") as writer:
        writer.write(header)
        for i, row in enumerate(ANSWERS):
            if i not in skip:
                writer.write(ResultRecord(judge=spec.spec, example=_example(i, row[0]),
                                          result=JudgeResult(verdict=_verdict(i, row[column], spec.name))))
    return run_dir


TYPER_SPEC = JudgeSpec(spec=TYPER, name="error_types", settings={"model": "m", "threshold": 1.0, "taxonomy": None})
PLAIN_SPEC = JudgeSpec(spec=PLAIN, name="quip", settings={"n": 21})


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("error_types")
    return (write_run(root / "typing", TYPER_SPEC, 1),
            write_run(root / "plain", PLAIN_SPEC, 2, started="2026-03-04T09:00:00Z"))


@pytest.fixture(scope="module")
def summaries(runs) -> dict[str, dict]:
    out = {}
    for run in runs:
        out.update(summarize(read_records(run / "records.jsonl"), n_boot=50)["judges"])
    return out


def wilson(k: int, n: int, z: float = 1.959963984540054) -> list[float]:
    """The Wilson score interval, written out."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return [centre - half, centre + half]


@pytest.mark.parametrize("judge,expected", [
    (TYPER, {FI: (6, 6, 0), MA: (8, 10, 0), PE: (3, 5, 1), RE: (1, 4, 0), "antonym_swap": (1, 1, 0)}),
    (PLAIN, {FI: (3, 6, 0), MA: (5, 10, 0), PE: (4, 5, 0), RE: (0, 4, 0), "antonym_swap": (1, 1, 0)}),
])
def test_recall_per_type_has_its_wilson_interval(summaries, judge, expected):
    recall = summaries[judge]["error_type_recall"]
    assert list(recall) == sorted(expected)
    for kind, (k, n, abstained) in expected.items():
        row = recall[kind]
        assert (row["k"], row["n"], row["abstained"]) == (k, n, abstained), kind
        assert row["rate"] == pytest.approx(k / n)
        assert row["ci95"] == pytest.approx(wilson(k, n), abs=1e-9)
    # the old counts stay as they were: abstentions are not misses there
    assert summaries[TYPER]["per_error_type"][PE] == {"n": 5, "missed": 1, "abstained": 1, "miss_rate": 0.2}


def test_most_missed_type_needs_five_answers_and_breaks_ties_by_n(summaries):
    # typing judge: Reasoning Errors has the lowest recall (0.25) but only 4 answers; of the rest PE is lowest
    assert summaries[TYPER]["most_missed_type"] == PE
    # plain judge: FI 3/6 and MA 5/10 tie at 0.5; MA has more answers
    assert summaries[PLAIN]["most_missed_type"] == MA


def test_typing_confusion_matrix_and_macro_f1(summaries):
    typing = summaries[TYPER]["error_typing"]
    assert "error_typing" not in summaries[PLAIN]          # a judge that types nothing gets no typing figures
    assert typing["n"] == 25 and typing["n_none"] == 2 + 3 + 3      # MA grounded; PE untyped/grounded/abstain; RE
    assert typing["types"] == sorted([FI, CM, MA, PE, RE, TE])
    assert typing["predicted"] == typing["types"] + [NONE]
    zero = dict.fromkeys(typing["predicted"], 0)
    # claims without scores: the answer's type is its first unsupported claim's, FI, never the TE after it
    assert typing["confusion"] == {
        FI: {**zero, FI: 5, RE: 1}, MA: {**zero, MA: 7, FI: 1, NONE: 2}, PE: {**zero, PE: 2, NONE: 3},
        RE: {**zero, RE: 1, NONE: 3}, CM: zero, TE: zero}
    expected = {FI: (5 / 6, 5 / 6, 6), MA: (1.0, 0.7, 10), PE: (1.0, 0.4, 5), RE: (0.5, 0.25, 4)}
    assert list(typing["per_type"]) == sorted(expected)        # CM and TE: neither gold nor given
    for kind, (precision, recall, support) in expected.items():
        row = typing["per_type"][kind]
        assert row["precision"] == pytest.approx(precision) and row["recall"] == pytest.approx(recall)
        assert row["f1"] == pytest.approx(2 * precision * recall / (precision + recall))
        assert row["support"] == support
    assert typing["macro_f1"] == pytest.approx((5 / 6 + 14 / 17 + 4 / 7 + 1 / 3) / 4)
    assert typing["accuracy"] == pytest.approx(15 / 25)
    # the existing match rate is unchanged: typed answers whose types include the gold one, in the taxonomy
    assert summaries[TYPER]["error_type_accuracy"] == pytest.approx(15 / 17)
    assert summaries[TYPER]["error_type_gold_outside_taxonomy"] == 1


def test_the_typed_model_reads_the_new_fields(summaries, runs):
    summary = summarize(read_records(runs[0] / "records.jsonl"), n_boot=50)
    model = RunSummary.model_validate_json(json.dumps(summary))
    judge = model.judges[TYPER]
    assert isinstance(judge.error_typing, ErrorTyping)
    assert judge.error_typing.confusion[MA][NONE] == 2 and judge.error_typing.per_type[RE].precision == 0.5
    assert judge.error_type_recall[PE].k == 3 and judge.error_type_recall[PE].ci95 == pytest.approx(wilson(3, 5))
    assert judge.most_missed_type == PE and judge.per_error_type[PE].missed == 1


ROOT = Path(__file__).resolve().parents[1]
OLD_SUMMARIES = ["results/local/legal_qa/summary.json", *sorted(
    str(p.relative_to(ROOT)) for p in (ROOT / "results/llm/legal_qa").glob("*/summary.json"))]


@pytest.mark.parametrize("path", OLD_SUMMARIES)
def test_committed_summaries_still_load(path):
    file = ROOT / path
    if not file.exists():
        pytest.skip(f"{path} is not in this checkout")
    model = RunSummary.model_validate_json(file.read_text(encoding="utf-8"))
    assert model.judges
    for judge in model.judges.values():        # written before the recall figures: the new fields are optional
        assert judge.per_error_type is None or all(row.n >= row.missed for row in judge.per_error_type.values())


def test_report_of_two_runs_has_the_tables_and_figures(runs, tmp_path):
    comparison = compare(list(runs))
    plots = make_plots(comparison, tmp_path)
    names = {p.name for p in plots}
    confusion = "error_type_confusion_error_types_model_m_threshold_1_0.png"
    assert {"error_type_recall.png", confusion, "error_types.png"} <= names
    assert not any(n.startswith("error_type_confusion_quip") for n in names)      # the plain judge types nothing
    for path in plots:
        assert path.exists() and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    markdown = render_markdown(comparison, plots)
    assert "![error type recall](error_type_recall.png)" in markdown and f"({confusion})" in markdown
    recall = section(markdown, "Recall by gold error type")
    assert f"| {PLAIN} | 0.50 [{wilson(3, 6)[0]:.2f}, {wilson(3, 6)[1]:.2f}] (n=6) |" in recall
    assert f"0.60 [{wilson(3, 5)[0]:.2f}, {wilson(3, 5)[1]:.2f}] (n=5)" in recall
    most = section(markdown, "The error type each judge misses most")
    assert f"| {TYPER} | {PE} | 0.60 [" in most and f"| {PLAIN} | {MA} | 0.50 [" in most
    assert f"| {TYPER} | {(5 / 6 + 14 / 17 + 4 / 7 + 1 / 3) / 4:.3f} | 0.600 | 8 | 25 |" in section(
        markdown, "Error typing: macro-F1")
    matrix = section(markdown, f"Error typing of {TYPER}: confusion matrix")
    assert f"| {MA} | 0 | 1 | 7 | 0 | 0 | 0 | 2 | 10 | 1.00 | 0.70 | 0.82 |" in matrix
    assert f"| {TE} | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | - | - | - |" in matrix
    assert "## Missed errors by gold error type" in markdown


def test_common_recomputes_the_figures_on_the_shared_answers(runs, tmp_path):
    outside = next(i for i, row in enumerate(ANSWERS) if row[0] == "antonym_swap")
    fewer = write_run(tmp_path / "fewer", PLAIN_SPEC, 2, skip={0, outside})
    comparison = compare([runs[0], fewer], common_only=True)
    recall = comparison.judges[TYPER]["error_type_recall"]
    assert "antonym_swap" not in recall and recall[FI]["n"] == 5 and recall[FI]["k"] == 5
    assert comparison.judges[TYPER]["error_typing"]["confusion"][FI][FI] == 4


def section(markdown: str, heading: str) -> str:
    return markdown.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]


def _typed(text: str, kind: str | None, score: float | None, label: str = "unverifiable") -> ClaimVerdict:
    return ClaimVerdict(claim=Claim(text=text), label=label, score=score, error_type=kind)


def test_the_lead_error_type_is_the_least_supported_typed_claim():
    """Scored claims: the lowest score's type (the first of equal scores); a typed claim without a score puts the
    answer's order back; supported claims and untyped ones never lead."""
    from groundjudge.runs.error_type_stats import lead_error_type

    assert lead_error_type([_typed("a", FI, 0.4), _typed("b", TE, 0.1), _typed("c", MA, 0.3)]) == TE
    assert lead_error_type([_typed("a", FI, 0.2), _typed("b", TE, 0.2)]) == FI
    assert lead_error_type([_typed("a", FI, 0.4), _typed("b", TE, None)]) == FI
    assert lead_error_type([_typed("a", RE, 0.0, label="supported"), _typed("b", None, 0.0),
                            _typed("c", PE, 0.5)]) == PE
    assert lead_error_type([_typed("a", None, 0.1)]) is None


def test_a_run_summary_types_an_answer_by_its_least_supported_claim(tmp_path):
    """Through the records and the summary's lean copy of them: the detector's weakest sentence gives the type, and
    two judges' agreement compares the same lead types."""
    specs = [JudgeSpec(spec=f"error_types:model=m{k},threshold=0.5", name="error_types",
                       settings={"model": f"m{k}", "threshold": 0.5, "taxonomy": None}) for k in (1, 2)]
    header = RunHeader(run_id="lead", started_at="2026-03-01T10:00:00Z", judges=tuple(specs),
                       dataset=DatasetInfo(files=("x.jsonl",), formats=("native",), n=2, hash="0" * 64))
    claims = {specs[0].spec: (_typed("a", FI, 0.4), _typed("b", TE, 0.1)),
              specs[1].spec: (_typed("a", FI, 0.2), _typed("b", TE, 0.3))}
    with RecordWriter(tmp_path / "records.jsonl") as writer:
        writer.write(header)
        for spec in specs:
            for i, gold in enumerate((TE, TE)):
                verdict = Verdict(example_id=f"q{i}", label="ungrounded", score=0.1, claims=claims[spec.spec],
                                  path="error_types")
                writer.write(ResultRecord(judge=spec.spec, example=_example(i, gold),
                                          result=JudgeResult(verdict=verdict)))
    from groundjudge.runs.lean_records import read_lean_records

    for records in (read_records(tmp_path / "records.jsonl"), read_lean_records(tmp_path / "records.jsonl")):
        summary = summarize(records, n_boot=20)
        first, second = (summary["judges"][s.spec]["error_typing"] for s in specs)
        assert first["confusion"][TE][TE] == 2 and first["accuracy"] == 1.0
        assert second["confusion"][TE][FI] == 2 and second["accuracy"] == 0.0
        (pair,) = summary["pairwise"]
        assert pair["error_type_n"] == 2 and pair["error_type_agreement"] == 0.0     # TE against FI on both
