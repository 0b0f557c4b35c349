"""The labelling queue, the labels file and the design-based estimates (issue 34 items 2 and 4)."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from groundjudge.labels.estimates import estimate, strata_counts
from groundjudge.labels.queue import build_queue
from groundjudge.labels.store import LabelsError, read_labels
from groundjudge.labels.strata import is_disagreement, pattern
from groundjudge.metrics import classification_metrics
from tests.conftest import cli, rent_rows, write_jsonl

JUDGES = ("A", "B")


def synthetic(rng: np.random.Generator, n: int = 600, accuracy=(0.85, 0.78)) -> tuple[dict, dict]:
    """A corpus with two judges of known accuracy: (id -> judge -> verdict, id -> gold)."""
    gold = rng.random(n) < 0.5
    says = [np.where(rng.random(n) > acc, ~gold, gold) for acc in accuracy]
    name = {True: "grounded", False: "ungrounded"}
    verdicts = {f"x{i}": {j: name[bool(s[i])] for j, s in zip(JUDGES, says)} for i in range(n)}
    return verdicts, {f"x{i}": name[bool(gold[i])] for i in range(n)}


def queue_of(verdicts: dict, strategy: str, size: int, seed: int) -> list:
    return build_queue({i: pattern(v, JUDGES) for i, v in verdicts.items()}, strategy, size, seed)


def test_stratified_queue_puts_disagreements_first_with_agreements_woven_in():
    verdicts, _ = synthetic(np.random.default_rng(0), 500)
    queue = queue_of(verdicts, "stratified", 200, 7)
    assert len(queue) == 200 and len({item.id for item in queue}) == 200
    for prefix in (10, 50, 150):                       # within what the disagreement strata hold (~150 of 500)
        agree = sum(not is_disagreement(item.stratum) for item in queue[:prefix])
        assert abs(agree - 0.2 * prefix) <= 1           # every prefix keeps the agreement share
    sizes = {}
    for v in verdicts.values():
        sizes[pattern(v, JUDGES)] = sizes.get(pattern(v, JUDGES), 0) + 1
    drawn = {}
    for item in queue:
        drawn[item.stratum] = drawn.get(item.stratum, 0) + 1
    for item in queue:
        assert item.pi == pytest.approx(drawn[item.stratum] / sizes[item.stratum])
    assert queue == queue_of(verdicts, "stratified", 200, 7)        # seeded
    assert queue != queue_of(verdicts, "stratified", 200, 8)


def test_uniform_queue_is_a_seeded_random_order():
    verdicts, _ = synthetic(np.random.default_rng(1), 300)
    queue = queue_of(verdicts, "uniform", 300, 3)
    assert sorted(item.id for item in queue) == sorted(verdicts)
    assert [item.id for item in queue] != list(verdicts)
    assert all(item.pi == 1.0 for item in queue)


@pytest.mark.parametrize("strategy", ["stratified", "uniform"])
def test_intervals_cover_the_true_difference(strategy):
    """1,000 synthetic corpora, two judges of known accuracy, 60 labels in queue order: the 95% intervals of
    a - b cover the corpus's true difference in at least 93% of corpora, for accuracy and balanced accuracy."""
    rng = np.random.default_rng(2026)
    covered = {"accuracy": 0, "balanced_accuracy": 0}
    corpora = 1000
    for k in range(corpora):
        verdicts, gold = synthetic(rng, 400)
        queue = queue_of(verdicts, strategy, 60, k)
        labels = {item.id: gold[item.id] for item in queue}
        result = estimate(strata_counts(verdicts, JUDGES, labels), JUDGES, draws=1000, seed=k)
        for pair in result.pairs:
            truth = [classification_metrics([gold[i] for i in verdicts], [verdicts[i][j] for i in verdicts])[pair.metric]
                     for j in JUDGES]
            covered[pair.metric] += pair.ci95[0] <= truth[0] - truth[1] <= pair.ci95[1]
    assert {m: c / corpora for m, c in covered.items()} == {m: pytest.approx(0.965, abs=0.035) for m in covered}


def test_stratified_design_narrows_the_difference():
    """Same labels, narrower interval on a - b where the judges disagree on ~30% of answers."""
    rng = np.random.default_rng(5)
    widths = {"stratified": [], "uniform": []}
    for k in range(60):
        verdicts, gold = synthetic(rng, 400)
        for strategy in widths:
            queue = queue_of(verdicts, strategy, 60, k)
            result = estimate(strata_counts(verdicts, JUDGES, {i.id: gold[i.id] for i in queue}), JUDGES, draws=1000)
            pair = next(p for p in result.pairs if p.metric == "accuracy")
            widths[strategy].append(pair.ci95[1] - pair.ci95[0])
    assert np.mean(widths["stratified"]) < 0.75 * np.mean(widths["uniform"])


def _run(tmp_path):
    rows = rent_rows(15)
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    out = tmp_path / "run"
    cli("run", str(data), "--judge", "quip:n=21,threshold=0.5", "--judge", "quip:n=8,threshold=0.7", "--out", str(out),
        "--quiet", "--dev-fraction", "0")
    return out, {r["id"]: r["label"] for r in rows}


def test_label_queue_and_estimate_end_to_end(tmp_path):
    out, gold = _run(tmp_path)
    result = cli("label", str(out), "--no-serve", "--size", "12", "--seed", "1")
    assert "queue:" in result.stdout
    queue = [json.loads(line) for line in (out / "label_queue.jsonl").read_text().splitlines()]
    assert len(queue) == 12 and set(queue[0]) == {"id", "stratum", "pi"}
    with open(out / "labels.jsonl", "w") as handle:
        for item in queue:
            handle.write(json.dumps({"id": item["id"], "label": gold[item["id"]], "labeller": "ana"}) + "\n")
        handle.write(json.dumps({"id": queue[0]["id"], "label": "unsure", "labeller": "ana"}) + "\n")   # a relabel
        for item in queue[1:4]:                                    # a second person on three answers
            handle.write(json.dumps({"id": item["id"], "label": "grounded", "labeller": "bo"}) + "\n")
    result = cli("estimate", str(out))
    estimates = json.loads((out / "estimates.json").read_text())
    assert set(estimates["judges"]) == {"quip:n=21,threshold=0.5", "quip:n=8,threshold=0.7"}
    figure = estimates["judges"]["quip:n=21,threshold=0.5"]["balanced_accuracy"]
    assert figure["ci95"][0] <= figure["estimate"] <= figure["ci95"][1]
    assert estimates["n_labelled"] == 11 and estimates["n_unsure"] == 1      # the last line for an answer counts
    pair = estimates["pairs"][0]
    assert {pair["a"], pair["b"]} == set(estimates["judges"]) and pair["metric"] in ("accuracy", "balanced_accuracy")
    assert "separated" in result.stdout and "between people" in result.stdout
    assert estimates["people"]["n_overlap"] == 3 and estimates["people"]["labellers"] == ["ana", "bo"]
    cli("report", str(out), "--out", str(out / "report"))
    report = (out / "report" / "report.md").read_text()
    assert f"## Human labels (run): 11 labelled of {estimates['n_answers']}" in report
    assert "## Between people (run)" in report


@pytest.mark.parametrize("line, expected", [
    ('{"id": "nope", "label": "grounded"}', ":1:id: unknown answer id 'nope'"),
    ('{"id": "g1", "label": "maybe"}', ":1:label: Input should be"),
    ('{"id": "g1", "label": ', ":1: not a JSON object"),
])
def test_bad_labels_file_names_file_line_field(tmp_path, line, expected):
    path = tmp_path / "labels.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(LabelsError, match=f"labels.jsonl{expected}"):
        read_labels(path, {"g1"})


def test_bad_labels_stop_the_estimate_with_nothing_written(tmp_path):
    out, _ = _run(tmp_path)
    (out / "labels.jsonl").write_bytes(b'{"id": "g1", "label": "grounded"}\n{"id": "g2", "note": "\xff"}\n')
    result = cli("estimate", str(out), check=False)
    assert result.returncode == 2 and "labels.jsonl:2: not UTF-8" in result.stderr
    assert not (out / "estimates.json").exists()


def test_human_labels_as_gold_in_run_summarize_and_report(tmp_path):
    out, gold = _run(tmp_path)
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()[1:]]
    judged = {r["example"]["id"]: r["result"]["verdict"]["label"] for r in records if r["judge"].startswith("quip:n=21")}
    people = {i: ("ungrounded" if gold[i] == "grounded" else "grounded") for i in sorted(gold)[:10]}   # they disagree
    people[sorted(gold)[10]] = "unsure"
    (out / "labels.jsonl").write_text("".join(json.dumps({"id": i, "label": v}) + "\n" for i, v in people.items()))
    cli("summarize", str(out), "--labels", str(out))
    quip = json.loads((out / "summary.labels.json").read_text())["judges"]["quip:n=21,threshold=0.5"]
    scored = [i for i, v in people.items() if v != "unsure"]
    expected = classification_metrics([people[i] for i in scored], [judged[i] for i in scored])
    assert quip["n"] == 10 and quip["balanced_accuracy"] == pytest.approx(expected["balanced_accuracy"])
    cli("report", str(out), "--labels", str(out / "labels.jsonl"), "--out", str(tmp_path / "report"))
    assert "| 10 |" in (tmp_path / "report" / "report.md").read_text()
    rerun = tmp_path / "rerun"
    cli("run", str(tmp_path / "data.jsonl"), "--judge", "quip:n=21,threshold=0.5", "--labels", str(out / "labels.jsonl"),
        "--out", str(rerun), "--quiet", "--dev-fraction", "0")
    again = json.loads((rerun / "summary.json").read_text())["judges"]["quip:n=21,threshold=0.5"]
    assert again["n"] == len(gold) - 1                       # every answer keeps a gold but the unsure one
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "g0", "label": "grounded"}\n{"id": "zz", "label": "grounded"}\n')
    result = cli("run", str(tmp_path / "data.jsonl"), "--judge", "quip", "--labels", str(bad), "--out",
                 str(tmp_path / "never"), "--quiet", check=False)
    assert result.returncode == 2 and "bad.jsonl:2:id: unknown answer id 'zz'" in result.stderr
    assert not (tmp_path / "never" / "records.jsonl").exists()


def test_agreement_between_people():
    import krippendorff
    from sklearn.metrics import cohen_kappa_score

    from groundjudge.labels.people import people_agreement
    from groundjudge.labels.store import LabelRecord, latest_by_labeller

    rng = random.Random(4)
    history, truth = [], {}
    for i in range(40):
        truth[i] = rng.choice(["grounded", "ungrounded"])
        for who, noise in (("ana", 0.1), ("bo", 0.25)):
            label = truth[i] if rng.random() > noise else rng.choice(["grounded", "ungrounded", "unsure"])
            types = ["Factual Inaccuracies"] if label == "ungrounded" and rng.random() < 0.6 else []
            history.append(LabelRecord(id=f"x{i}", label=label, labeller=who, error_types=types))
    history.append(LabelRecord(id="x0", label="unsure", labeller="bo"))                 # bo's relabel counts
    history.append(LabelRecord(id="solo", label="grounded", labeller="ana"))            # nobody else: not overlap
    latest = latest_by_labeller(history)
    result = people_agreement(latest, ["Factual Inaccuracies"])
    ana = [latest[(f"x{i}", "ana")].label for i in range(40)]
    bo = [latest[(f"x{i}", "bo")].label for i in range(40)]
    assert result.n_overlap == 40 and bo[0] == "unsure"
    assert result.pairs[0].kappa == pytest.approx(cohen_kappa_score(ana, bo))
    codes = {"grounded": 0, "ungrounded": 1, "unsure": 2}
    expected = krippendorff.alpha(reliability_data=[[codes[x] for x in ana], [codes[x] for x in bo]],
                                  level_of_measurement="nominal")
    assert result.alpha == pytest.approx(expected)
    assert {d["id"] for d in result.disagreements} == {f"x{i}" for i in range(40) if ana[i] != bo[i]}
