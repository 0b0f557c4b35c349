"""View-independence diagnostics of a multi-view run, on constructed verdicts."""

from __future__ import annotations

import pytest

from groundjudge.types import Claim, ClaimVerdict, Example, JudgeResult, ResultRecord, Verdict
from groundjudge.runs.views_summary import views_diagnostics

NAMES = ("direct", "reversed", "paraphrase")


def record(i: int, label: str, votes: list[tuple[bool, ...]]) -> ResultRecord:
    """One answer whose claims got these per-view votes."""
    claims = tuple(ClaimVerdict(claim=Claim(text=f"claim {c}"), label="supported" if all(v) else "unverifiable",
                                score=sum(v) / len(v), views=dict(zip(NAMES, v))) for c, v in enumerate(votes))
    example = Example(id=f"a{i}", context=["doc"], answer="text", label=label)
    verdict = Verdict(example_id=example.id, label="grounded", score=min(c.score for c in claims), claims=claims,
                      path="local:views(m)")
    return ResultRecord(judge="views", example=example, result=JudgeResult(verdict=verdict))


def test_correlated_views_beat_the_bound_and_show_it():
    # every view accepts the same two of four ungrounded answers: errors perfectly correlated
    ungrounded = [record(i, "ungrounded", [(True, True, True)]) for i in range(2)]
    ungrounded += [record(i + 2, "ungrounded", [(True, True, True), (False, False, False)]) for i in range(2)]
    grounded = [record(i + 4, "grounded", [(True, True, False), (True, True, True)]) for i in range(4)]
    out = views_diagnostics(ungrounded + grounded, tau=0.6)
    assert out["n_views"] == 3 and out["n_ungrounded"] == 4 and out["n_grounded"] == 4
    # a view accepts an answer only when it entails every claim of it
    assert out["per_view"]["direct"] == {"tpr": 1.0, "fpr": 0.5}
    assert out["per_view"]["paraphrase"] == {"tpr": 0.0, "fpr": 0.5}
    assert out["alpha"] == 0.5 and out["multi_view_fpr"] == 0.5
    assert out["bound"] == pytest.approx(0.9405, abs=1e-3)     # exp(-3 D(0.6 || 0.5))
    assert out["error_correlation_ungrounded"] == pytest.approx(1.0)


def test_independent_looking_views_stay_under_the_bound():
    # each ungrounded answer fooled exactly one view: no answer reaches the 0.6 support mass
    ungrounded = [record(i, "ungrounded", [tuple(v == i % 3 for v in range(3))]) for i in range(6)]
    out = views_diagnostics(ungrounded, tau=0.6)
    assert out["alpha"] == pytest.approx(1 / 3) and out["multi_view_fpr"] == 0.0
    assert out["error_correlation"] < 0
    assert "tpr" in out["per_view"]["direct"] and out["per_view"]["direct"]["tpr"] is None


def test_runs_without_view_votes_get_no_diagnostics():
    plain = record(0, "grounded", [(True,)]).model_copy(deep=True)
    stripped = plain.result.verdict.model_copy(update={"claims": ()})
    assert views_diagnostics([plain.model_copy(update={"result": JudgeResult(verdict=stripped)})], 0.6) == {}


def test_lean_copies_give_the_same_diagnostics_and_keep_no_claim_text(tmp_path):
    """A run's summary reads lean copies of its records: the view votes survive, the claims' text does not (it
    was ~3.7 KB per answer of the views judge, held for every answer until the summary was written)."""
    from groundjudge.runs.lean_records import read_lean_records
    from groundjudge.runs.records import RecordWriter, read_records
    from groundjudge.types import DatasetInfo, JudgeSpec, RunHeader

    records = [record(i, "ungrounded", [tuple(v == i % 3 for v in range(3)), (True, True, True)]) for i in range(6)]
    records += [record(i + 6, "grounded", [(True, True, i % 2 == 0)]) for i in range(4)]
    path = tmp_path / "records.jsonl"
    header = RunHeader(run_id="r", judges=(JudgeSpec(spec="views", name="views"),),
                       dataset=DatasetInfo(files=("d.jsonl",), formats=("native",), n=10, hash="h"),
                       started_at="2026-11-29T00:00:00+00:00")
    with RecordWriter(path) as writer:
        writer.write(header)
        for r in records:
            writer.write(r)
    lean = read_lean_records(path).results
    assert views_diagnostics(lean, 0.6) == views_diagnostics(read_records(path).results, 0.6) != {}
    claims = [c for r in lean for c in r.result.verdict.claims]
    assert claims and not any(hasattr(c, "claim") or hasattr(c, "reason") for c in claims)
    assert len({id(c.views) for c in claims}) == len({tuple(c.views.items()) for c in claims})   # one per pattern
