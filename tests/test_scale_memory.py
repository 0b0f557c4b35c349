"""A run's memory does not grow with its answers' documents: examples are read from the file as they are judged and
the summary is computed from lean copies of the records (issue 42 item 5); a memory budget that cannot hold one
answer is refused in one line before anything is judged (item 1)."""

from __future__ import annotations

import gc
import json
import random
import tracemalloc
from pathlib import Path

import pytest

from groundjudge.errors import UsageError
from groundjudge.judges.config import JudgeConfig
from groundjudge.runs.execute import RunOptions, execute
from groundjudge.runs.lean_records import read_lean_records
from groundjudge.runs.records import read_records
from groundjudge.runs.summary import summarize, summarize_file

DOCUMENT_WORDS = 600
"""Words per document: about 4 KB, more than a run may keep per answer."""


def write_answers(path: Path, answers: int) -> Path:
    """``answers`` native rows, each with a document of its own (random words), half of them grounded."""
    words = [f"w{i}" for i in range(500)]
    with open(path, "w", encoding="utf-8") as handle:
        for index in range(answers):
            rng = random.Random(index)
            document = " ".join(rng.choice(words) for _ in range(DOCUMENT_WORDS)) + "."
            answer = document[:40] if index % 2 == 0 else "nothing of the kind"
            handle.write(json.dumps({"id": f"a{index}", "context": document, "answer": answer,
                                     "label": "grounded" if index % 2 == 0 else "ungrounded"}) + "\n")
    return path


def peak_bytes(tmp_path: Path, answers: int) -> int:
    """The Python heap's peak (tracemalloc) over a whole run of the span judge on ``answers`` answers."""
    data = write_answers(tmp_path / f"data-{answers}.jsonl", answers)
    options = RunOptions(data=[str(data)], judges=[JudgeConfig.from_spec("span")], out=str(tmp_path / f"run-{answers}"), quiet=True,
                         dev_fraction=0)
    gc.collect()
    tracemalloc.start()
    try:
        assert execute(options) == 0
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.slow
def test_a_run_holds_far_less_than_a_document_per_answer(tmp_path, monkeypatch):
    from groundjudge import metrics

    # the bootstraps draw their resamples in blocks of a fixed size, here full at both sizes: what differs between
    # the two runs is then what grows with the answers
    monkeypatch.setattr(metrics, "BOOT_BLOCK", 20_000)
    monkeypatch.setattr(metrics, "AUC_BLOCK", 20_000)
    peak_bytes(tmp_path, 20)   # imports and first-use caches, before anything is measured
    small, large = peak_bytes(tmp_path, 600), peak_bytes(tmp_path, 3000)
    per_answer = (large - small) / 2400
    document = DOCUMENT_WORDS * 5
    # the examples held in a list and the records read back whole took two documents per answer and more (one in
    # the example, one in its record); what grows now is the summary's lean copy of each record
    assert per_answer < document / 2, (small, large, per_answer)


def test_the_summary_of_lean_records_is_the_summary_of_the_records(tmp_path):
    data = write_answers(tmp_path / "data.jsonl", 40)
    out = tmp_path / "run"
    assert execute(RunOptions(data=[str(data)], judges=[JudgeConfig.from_spec("span"), JudgeConfig.from_spec("quip")], out=str(out), quiet=True,
                              dev_fraction=0)) == 0
    records = out / "records.jsonl"
    assert summarize_file(records) == summarize(read_records(records))
    lean = read_lean_records(records)
    assert [(r.judge, r.example.id, r.result.verdict.label) for r in lean.results] == \
        [(r.judge, r.example.id, r.result.verdict.label) for r in read_records(records).results]


def test_lean_records_keep_every_figure_in_columns_and_about_a_hundred_bytes_per_result(tmp_path):
    """The columns give back each figure as recorded (None where it was None), per judge in file order, and a
    result costs no object of its own: a few thousand results read back hold well under 372 bytes each (what one
    slotted copy per result held)."""
    data = write_answers(tmp_path / "data.jsonl", 6)
    out = tmp_path / "run"
    judges = [JudgeConfig.from_spec("span"), JudgeConfig.from_spec("quip")]
    assert execute(RunOptions(data=[str(data)], judges=judges, out=str(out), quiet=True, dev_fraction=0)) == 0
    lines = (out / "records.jsonl").read_text(encoding="utf-8").splitlines()
    header, results = lines[0], [json.loads(line) for line in lines[1:]]
    results[0]["result"]["verdict"]["score"] = None
    results[0]["result"]["started_at"] = None
    results[1]["result"]["batch_size"] = 3
    many = [header]
    for copy in range(700):   # 700 copies of the 12 results under new ids: 8,400 results of 4,200 answers
        for result in results:
            renamed = json.loads(json.dumps(result))
            renamed["example"]["id"] = f"{result['example']['id']}-{copy}"
            renamed["result"]["verdict"]["example_id"] = renamed["example"]["id"]
            many.append(json.dumps(renamed))
    path = tmp_path / "many.jsonl"
    path.write_text("\n".join(many) + "\n", encoding="utf-8")

    full = read_records(path).results
    gc.collect()
    tracemalloc.start()
    try:
        lean = read_lean_records(path)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    fields = ("label", "score", "threshold", "path", "abstain_reason", "latency_s", "queue_s",
              "started_at", "finished_at", "batch_size")
    def figures(record):
        verdict, result = record.result.verdict, record.result
        return (record.judge, record.example.id, record.example.label,
                *(getattr(verdict if hasattr(verdict, name) else result, name) for name in fields))
    assert [figures(r) for r in lean.results] == [figures(r) for r in full]
    assert lean.results[0].result.verdict.score is None and lean.results[0].result.started_at is None
    assert lean.results[1].result.batch_size == 3 and lean.results[-1].example.id == full[-1].example.id
    assert [figures(r) for r in lean.results[2:5]] == [figures(r) for r in full[2:5]]
    grouped = lean.results.by_judge()
    assert {judge: [r.example.id for r in rows] for judge, rows in grouped.items()} == \
        {judge: [r.example.id for r in full if r.judge == judge] for judge in ("span", "quip")}
    assert held / len(full) < 250, held / len(full)


def test_a_memory_budget_that_cannot_hold_one_answer_is_one_line_before_anything_is_judged(tmp_path):
    data = write_answers(tmp_path / "data.jsonl", 4)
    out = tmp_path / "run"
    options = RunOptions(data=[str(data)], judges=[JudgeConfig.from_spec("cosine:threshold=0.5")], out=str(out), quiet=True,
                         dev_fraction=0, local_memory="1KB")
    with pytest.raises(UsageError) as refused:
        execute(options)
    message = str(refused.value)
    assert "\n" not in message and "--local-memory" in message and "cannot hold one answer" in message
    assert "512MB" in message   # the allowed values
    assert not out.exists()   # nothing judged, no run folder


@pytest.mark.parametrize("value", ["0", "-3MB", "lots", "2XB"])
def test_a_memory_budget_that_is_no_size_is_one_line_naming_the_setting(value):
    with pytest.raises(UsageError) as refused:
        RunOptions(data=["x.jsonl"], judges=[JudgeConfig.from_spec("quip")], local_memory=value)
    assert "--local-memory" in str(refused.value) and "512MB" in str(refused.value)


def test_the_threshold_sweep_is_the_classification_metrics_at_each_threshold():
    import numpy as np

    from groundjudge.metrics import classification_metrics
    from groundjudge.report.plots import sweep_balanced_accuracy

    rng = random.Random(0)
    for _ in range(100):
        n = rng.randrange(2, 40)
        gold = ["grounded", "ungrounded"] + [rng.choice(["grounded", "ungrounded"]) for _ in range(n)]
        scores = [None if rng.random() < 0.1 else rng.choice([0.0, 0.5, 1.0, rng.random()]) for _ in gold]
        grid = np.unique(np.concatenate([np.linspace(0, 1, 21), [s for s in scores if s is not None]]))
        one_by_one = [classification_metrics(gold, ["abstain" if s is None else "grounded" if s >= t else "ungrounded"
                                                    for s in scores])["balanced_accuracy"] for t in grid]
        assert sweep_balanced_accuracy(gold, scores, grid).tolist() == one_by_one


def test_chunks_are_cut_from_a_stream_in_windows_full_but_the_last_and_grouped_by_document(monkeypatch):
    from groundjudge.runs import local_chunks
    from groundjudge.types import Example

    monkeypatch.setattr(local_chunks, "GROUPING_WINDOW", 3)
    examples = [Example(id=f"e{i}", context=(f"doc {i % 4}",), answer="a") for i in range(50)]
    taken: list[int] = []

    def stream():
        for index, example in enumerate(examples):
            taken.append(index)
            yield example

    cut = []
    for chunk in local_chunks.chunks(stream(), 4):
        cut.append(chunk)
        assert len(taken) <= 4 * 3 + len(cut) * 4   # never more read ahead than a window past what was cut
    assert [len(c) for c in cut] == [4] * 12 + [2]
    assert sorted(e.id for c in cut for e in c) == sorted(e.id for e in examples)
    first_window = [e for c in cut[:3] for e in c]
    assert first_window == local_chunks.by_document(examples[:12])   # one window, grouped by document
    size, lengths = [5], []
    for chunk in local_chunks.chunks(examples[:20], lambda: size[0]):   # a budget lowers the size as answers come
        lengths.append(len(chunk))
        size[0] = 3
    assert lengths == [5, 3, 3, 3, 3, 3]


def test_the_chunk_size_follows_the_budget_and_the_pairs_answers_need(tmp_path):
    from dataclasses import dataclass

    from groundjudge.runs.memory_budget import LocalChunks, pair_bytes

    (tmp_path / "config.json").write_text(json.dumps({"hidden_size": 100, "num_hidden_layers": 2}), encoding="utf-8")

    @dataclass
    class Judge:
        model: str = str(tmp_path)
        top_k: int = 2
        window_tokens: int = 36

    judge = Judge()
    assert pair_bytes(judge) == (36 + 64) * 100 * 2 * 4   # tokens x hidden x layers x float32
    sizer = LocalChunks(size=32, memory=1_600_000).sizer(judge, "nli")
    assert sizer.size() == 10   # 2 pairs (one claim x top_k) of 80 kB per answer
    sizer.observe([{"answer_pairs": 8.0}, {"score_s": 0.1}])
    assert sizer.size() == 2    # an answer needed 8 pairs: fewer answers per chunk from now on
    assert LocalChunks(size=4, memory=10**9).sizer(judge, "nli").size() == 4   # never above --local-chunk
    with pytest.raises(UsageError, match="cannot hold one answer"):
        LocalChunks(size=32, memory=100_000).sizer(judge, "nli")


@pytest.mark.parametrize("run", ["security/nli_unseen/error_types", "llm/legal_qa/cascade", "legal_types/direct",
                                 "security/halueval/selfcheck"])
def test_lean_records_summarise_committed_runs_as_the_records_do(run):
    """Runs of LLM judges with calls, cascades' stages, error types and injection findings: the same summary."""
    path = Path(__file__).resolve().parents[1] / "results" / run / "records.jsonl.gz"
    assert summarize_file(path) == summarize(read_records(path))
