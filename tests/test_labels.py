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
from conftest import cli, rent_rows, write_jsonl

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


@pytest.mark.slow
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


@pytest.mark.slow
def test_label_queue_and_estimate_end_to_end(tmp_path):
    out, gold = _run(tmp_path)
    result = cli("label", str(out), "--no-serve", "--size", "12", "--seed", "1")
    assert "queue:" in result.stdout
    queue = [json.loads(line) for line in (out / "label_queue.jsonl").read_text().splitlines()]
    assert len(queue) == 12 and set(queue[0]) == {"id", "stratum", "pi", "strategy", "built_for", "batch", "seen"}
    assert queue[0]["strategy"] == "adaptive" and queue[0]["built_for"]["metric"] == "balanced_accuracy"  # default
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


@pytest.mark.slow
def test_bad_labels_stop_the_estimate_with_nothing_written(tmp_path):
    out, _ = _run(tmp_path)
    (out / "labels.jsonl").write_bytes(b'{"id": "g1", "label": "grounded"}\n{"id": "g2", "note": "\xff"}\n')
    result = cli("estimate", str(out), check=False)
    assert result.returncode == 2 and "labels.jsonl:2: not UTF-8" in result.stderr
    assert not (out / "estimates.json").exists()


@pytest.mark.slow
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


REF_JUDGES = ("A", "B", "R")


def synthetic_with_reference(rng: np.random.Generator, n: int = 400, reference: float = 0.93) -> tuple[dict, dict]:
    """Two judges of known accuracy (0.85, 0.78) and a reference judge R of accuracy ``reference``, errors
    independent; 40% of answers grounded."""
    gold = rng.random(n) < 0.4
    says = [np.where(rng.random(n) > acc, ~gold, gold) for acc in (0.85, 0.78, reference)]
    name = {True: "grounded", False: "ungrounded"}
    verdicts = {f"x{i}": {j: name[bool(s[i])] for j, s in zip(REF_JUDGES, says)} for i in range(n)}
    return verdicts, {f"x{i}": name[bool(gold[i])] for i in range(n)}


def _ppi_runs(reference: float, corpora: int, seed: int):
    from groundjudge.labels.ppi import ppi_estimates

    rng = np.random.default_rng(seed)
    for k in range(corpora):
        verdicts, gold = synthetic_with_reference(rng, 400, reference)
        queue = build_queue({i: pattern(v, REF_JUDGES) for i, v in verdicts.items()}, "uniform", 60, k)
        result = ppi_estimates(verdicts, REF_JUDGES, {item.id: gold[item.id] for item in queue}, queue, "R")
        for judge in ("A", "B"):
            truth = classification_metrics([gold[i] for i in verdicts], [verdicts[i][judge] for i in verdicts])
            if judge in result.judges:
                yield judge, truth, result.judges[judge]


@pytest.mark.slow
def test_ppi_intervals_cover_the_truth_and_are_narrower_with_a_good_reference():
    """1,000 synthetic corpora of 400 answers, 60 labels of a uniform queue, a reference judge right on 93% of
    answers: the PPI++ 95% intervals of each judge's accuracy and balanced accuracy over the whole corpus cover the
    truth in at least 93% of corpora, and are narrower than the classical (labels-only) intervals."""
    covered, ratio = {}, {}
    for judge, truth, figures in _ppi_runs(0.93, 1000, 2027):
        for metric, figure in figures.items():          # a judge with < 3 errors among the labels is left out
            key = (judge, metric)
            covered.setdefault(key, []).append(figure.ci95[0] <= truth[metric] <= figure.ci95[1])
            ratio.setdefault(key, []).append((figure.ci95[1] - figure.ci95[0]) /
                                             (figure.classical_ci95[1] - figure.classical_ci95[0]))
    assert set(covered) == {(j, m) for j in "AB" for m in ("accuracy", "balanced_accuracy")}
    assert all(len(v) >= 980 for v in covered.values())
    coverage = {key: float(np.mean(v)) for key, v in covered.items()}
    assert all(c >= 0.93 for c in coverage.values()), coverage
    widths = {key: float(np.mean(v)) for key, v in ratio.items()}
    assert all(w < 0.8 for w in widths.values()), widths


def test_ppi_with_a_useless_reference_costs_little():
    """A reference that is right half the time predicts nothing: power tuning falls back to about the classical
    interval (PPI without tuning would be wider), and the coverage holds."""
    rows = list(_ppi_runs(0.5, 200, 7))
    ratio = np.mean([(f["accuracy"].ci95[1] - f["accuracy"].ci95[0]) /
                     (f["accuracy"].classical_ci95[1] - f["accuracy"].classical_ci95[0]) for _, _, f in rows])
    coverage = np.mean([f["accuracy"].ci95[0] <= t["accuracy"] <= f["accuracy"].ci95[1] for _, t, f in rows])
    assert ratio < 1.05 and coverage >= 0.92


def test_ppi_only_on_a_uniform_queue_and_default_reference():
    from groundjudge.labels.ppi import MIN_LABELS, default_reference, ppi_estimates

    verdicts, gold = synthetic_with_reference(np.random.default_rng(3), 300)
    strata = {i: pattern(v, REF_JUDGES) for i, v in verdicts.items()}
    big, _ = synthetic_with_reference(np.random.default_rng(4), 3000)
    assert default_reference(big, REF_JUDGES) == "R"                # the good judge agrees most with the others
    assert default_reference({"x": {"A": "grounded"}, "y": {"A": "grounded", "B": "ungrounded"}}, ("A", "B")) == "A"
    stratified = build_queue(strata, "stratified", 100, 1)
    result = ppi_estimates(verdicts, REF_JUDGES, gold, stratified)
    assert result.judges == {} and "not uniform" in result.skipped
    old = [item.model_copy(update={"strategy": None}) for item in build_queue(strata, "uniform", 100, 1)]
    assert "unrecorded" in ppi_estimates(verdicts, REF_JUDGES, gold, old).skipped
    assert "no labelling queue" in ppi_estimates(verdicts, REF_JUDGES, gold, []).skipped
    uniform = build_queue(strata, "uniform", 100, 1)
    few = {item.id: gold[item.id] for item in uniform[:MIN_LABELS - 1]}
    assert f"PPI from {MIN_LABELS}" in ppi_estimates(verdicts, REF_JUDGES, few, uniform).skipped
    given = ppi_estimates(verdicts, REF_JUDGES, gold, uniform, "A")
    assert given.reference == "A" and given.reference_chosen == "given" and given.n_labelled == 100
    with pytest.raises(ValueError, match="not a judge of the run"):
        ppi_estimates(verdicts, REF_JUDGES, gold, uniform, "Z")


@pytest.mark.slow
def test_estimate_gives_ppi_on_a_uniform_queue_in_the_file_the_cli_and_the_panel(tmp_path):
    from fastapi.testclient import TestClient

    from groundjudge.serve.label_app import label_app

    out, gold = _run(tmp_path)
    cli("label", str(out), "--no-serve", "--strategy", "uniform", "--seed", "2")
    queue = [json.loads(line) for line in (out / "label_queue.jsonl").read_text().splitlines()]
    assert {item["strategy"] for item in queue} == {"uniform"}
    flip = {"grounded": "ungrounded", "ungrounded": "grounded"}
    labelled = {item["id"]: gold[item["id"]] if k % 3 else flip[gold[item["id"]]] for k, item in enumerate(queue[:24])}
    (out / "labels.jsonl").write_text("".join(json.dumps({"id": i, "label": v}) + "\n" for i, v in labelled.items()))
    before = cli("estimate", str(out)).stdout
    estimates = json.loads((out / "estimates.json").read_text())
    ppi = estimates["ppi"]
    assert ppi["n_labelled"] == 24 and ppi["n_answers"] == len(queue) and ppi["skipped"] is None
    assert ppi["reference"] in estimates["judges"] and ppi["reference_chosen"].startswith("default")
    assert set(ppi["judges"]) == set(estimates["judges"])        # people disagree with every judge on 8 of 24
    for judge, figures in ppi["judges"].items():
        low, high = figures["accuracy"]["ci95"]
        assert 0 <= low <= figures["accuracy"]["estimate"] <= high <= 1
    assert "PPI++ over all" in before and "classical" in before
    assert set(estimates) >= {"n_labelled", "judges", "pairs", "strata", "method"}      # the old keys stay
    bad = cli("estimate", str(out), "--reference", "nope", check=False)
    assert bad.returncode == 2 and "not a judge of the run" in bad.stderr
    cli("report", str(out), "--out", str(out / "report"))
    assert "## Human labels (run): PPI++ with reference" in (out / "report" / "report.md").read_text()
    panel = TestClient(label_app(str(out), "ana", hosts=["*"])).get("/api/estimates").json()
    assert panel["ppi"]["judges"].keys() == ppi["judges"].keys()
    cli("label", str(out), "--no-serve")                          # the default, adaptive queue: no PPI, and why
    result = cli("estimate", str(out))
    assert "PPI: not given: the queue is adaptive, not uniform" in result.stdout
    assert json.loads((out / "estimates.json").read_text())["ppi"]["judges"] == {}


def test_more_labels_projection_follows_the_queue_and_comes_true_about_half_the_time():
    """30 labels of a stratified queue, the accuracy difference not yet separated: the projection from per-stratum
    variances along the rest of the queue never asks for more labels than it takes to label every disagreement
    (after which the difference is exact), and labelling that many more separates the two judges in roughly half
    of the corpora (a projection keeps today's difference; it moves)."""
    rng = np.random.default_rng(8)
    came_true, checked = [], 0
    for k in range(60):
        verdicts, gold = synthetic(rng, 400)
        queue = queue_of(verdicts, "stratified", None, k)
        known = {item.id: gold[item.id] for item in queue[:30]}
        result = estimate(strata_counts(verdicts, JUDGES, known), JUDGES, draws=1000, seed=k,
                          upcoming=[item.stratum for item in queue[30:]])
        pair = next(p for p in result.pairs if p.metric == "accuracy")
        if pair.separated:
            assert pair.more_labels_needed == 0
            continue
        if pair.more_labels_needed is None:
            continue
        cliff = max(j for j, item in enumerate(queue) if is_disagreement(item.stratum)) + 1 - 30
        assert 1 <= pair.more_labels_needed <= cliff
        more = {item.id: gold[item.id] for item in queue[:30 + pair.more_labels_needed]}
        later = estimate(strata_counts(verdicts, JUDGES, more), JUDGES, draws=1000, seed=k)
        came_true.append(next(p for p in later.pairs if p.metric == "accuracy").separated)
        checked += 1
    assert checked >= 30
    assert 0.35 <= np.mean(came_true) <= 0.85
