"""The labelling queue built for the metric asked (issue 45 item 1): ``groundjudge label RUN --for METRIC
[--pair A B]`` allocates labels across the verdict strata by Neyman allocation for that metric's pair difference.

The simulation draws 1,000 synthetic two-judge corpora, builds each queue with the real queue code, takes the
labels of its first 50 and 100 items, and computes the design-based interval of a - b with a vectorised copy of
:func:`groundjudge.labels.estimates.estimate` (checked against it on a few corpora below): the same
finite-population stratified posterior with a Jeffreys prior, stratum weights N_h whatever the sampling rates."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import cli, rent_rows, write_jsonl

from groundjudge.labels.allocation import neyman_targets
from groundjudge.labels.estimates import estimate, strata_counts
from groundjudge.labels.queue import build_metric_queue, build_queue
from groundjudge.labels.strata import pattern

JUDGES = ("A", "B")
NAMES = ("GG", "GU", "UG", "UU")
"""The four strata of two judges that always decide, in the estimator's (sorted) order."""

SAYS_G = np.array([[1, 1, 0, 0], [1, 0, 1, 0]], dtype=float)
"""Per judge, whether it says grounded in each stratum of NAMES."""


def corpora(rng: np.random.Generator, count: int, n: int, equal_balanced: bool) -> tuple[np.ndarray, np.ndarray]:
    """``count`` corpora of ``n`` answers: (gold grounded, stratum index into NAMES), each count x n.

    Judge B's recall is r on both classes; judge A's is r + d on grounded answers and r - d on ungrounded ones
    (equal balanced accuracy, different accuracy unless the classes are even) when ``equal_balanced``, else A is
    better on both (r + d). The judges share their latent draw on 60% of answers, so they disagree on 10-25%."""
    base = rng.uniform(0.30, 0.70, (count, 1))
    recall = rng.uniform(0.55, 0.85, (count, 1))
    step = rng.uniform(0.05, 0.15, (count, 1))
    gold = rng.random((count, n)) < base
    recall_a = np.where(gold, recall + step, recall - step if equal_balanced else recall + step)
    latent_a = rng.random((count, n))
    latent_b = np.where(rng.random((count, n)) < 0.6, latent_a, rng.random((count, n)))
    says_a = np.where(latent_a < recall_a, gold, ~gold)
    says_b = np.where(latent_b < recall, gold, ~gold)
    return gold, 2 * (~says_a) + (~says_b)


def threshold_corpora(rng: np.random.Generator, count: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` corpora of ``n`` answers where the two judges' balanced accuracies are equal but one is liberal
    and one conservative (SummEdits quip vs cosine): both threshold a shared score ``mu y + e`` (plus a little
    noise of their own) at ``mu / 2 -+ delta``, so their recalls differ by class and their balanced accuracies
    are equal in expectation; they disagree on 10-30% of answers. (gold grounded, stratum index into NAMES)."""
    base = rng.uniform(0.30, 0.70, (count, 1))
    signal = rng.uniform(0.3, 1.5, (count, 1))
    delta = rng.uniform(0.12, 0.4, (count, 1))
    gold = rng.random((count, n)) < base
    score = signal * gold + rng.normal(size=(count, n))
    says_a = score + 0.3 * rng.normal(size=(count, n)) > signal / 2 - delta
    says_b = score + 0.3 * rng.normal(size=(count, n)) > signal / 2 + delta
    return gold, 2 * (~says_a) + (~says_b)


def true_difference(gold: np.ndarray, stratum: np.ndarray) -> dict[str, np.ndarray]:
    """Per corpus, the exact a - b on accuracy and balanced accuracy."""
    size = np.stack([(stratum == h).sum(axis=1) for h in range(4)], axis=1).astype(float)
    grounded = np.stack([((stratum == h) & gold).sum(axis=1) for h in range(4)], axis=1).astype(float)
    a, b = metrics(grounded, size)
    return {m: a[m] - b[m] for m in a}


def metrics(grounded: np.ndarray, size: np.ndarray) -> tuple[dict, dict]:
    """Both judges' accuracy and balanced accuracy from grounded counts per stratum (last axis; ``size``
    broadcasts against it), as :func:`groundjudge.labels.estimates.metrics_from_counts` computes them."""
    total = size.sum(axis=-1)
    actual_g = grounded.sum(axis=-1)
    out = []
    for says in SAYS_G:
        tp_g, tp_u = (grounded * says).sum(axis=-1), ((size - grounded) * (1 - says)).sum(axis=-1)
        recall_g = np.divide(tp_g, actual_g, out=np.zeros_like(tp_g), where=actual_g > 0)
        recall_u = np.divide(tp_u, total - actual_g, out=np.zeros_like(tp_u), where=total - actual_g > 0)
        out.append({"accuracy": (tp_g + tp_u) / total, "balanced_accuracy": (recall_g + recall_u) / 2})
    return out[0], out[1]


def intervals(rng: np.random.Generator, size: np.ndarray, labelled: np.ndarray, grounded: np.ndarray,
              draws: int = 1000) -> dict[str, np.ndarray]:
    """Per corpus (rows), the 95% interval of a - b (corpora x 2) from the labels per stratum: the estimator's
    finite-population Jeffreys posterior, vectorised over corpora."""
    share = rng.beta(grounded[:, None] + 0.5, labelled[:, None] - grounded[:, None] + 0.5,
                     size=(len(size), draws, 4))
    counts = grounded[:, None] + rng.binomial((size - labelled)[:, None].astype(np.int64).repeat(draws, 1), share)
    a, b = metrics(counts.astype(float), size[:, None])
    return {m: np.percentile(a[m] - b[m], [2.5, 97.5], axis=1).T for m in a}


def labelled_counts(gold: np.ndarray, stratum: np.ndarray, queue_of, budgets) -> dict[int, tuple]:
    """For each budget: (labelled, grounded among them) per corpus and stratum, from the first items of the
    queue ``queue_of(strata dict, corpus index)`` builds for each corpus."""
    count = len(gold)
    out = {k: (np.zeros((count, 4)), np.zeros((count, 4))) for k in budgets}
    for c in range(count):
        strata = {f"x{i}": NAMES[s] for i, s in enumerate(stratum[c])}
        head = queue_of(strata, c)[:max(budgets)]   # read once; each budget counts a prefix of it
        where = np.array([NAMES.index(item.stratum) for item in head], dtype=np.int64)
        grounded = gold[c, [int(item.id[1:]) for item in head]].astype(float)
        for k in budgets:
            out[k][0][c] = np.bincount(where[:k], minlength=4)
            out[k][1][c] = np.bincount(where[:k], weights=grounded[:k], minlength=4)
    return out


QUEUES = {
    "uniform": lambda metric: lambda strata, c: build_queue(strata, "uniform", 400, c),
    "stratified": lambda metric: lambda strata, c: build_queue(strata, "stratified", 100, c),
    "neyman": lambda metric: lambda strata, c: build_metric_queue(strata, JUDGES, metric, None, 100, c),
}

UNIFORM_GRID = (50, 75, 100, 150, 200, 250, 300, 400)
"""Budgets at which uniform's mean width is measured, to find the labels it needs for the others' width."""


def simulate(metric: str, equal_balanced: bool, count: int = 1000, n: int = 700, seed: int = 45) -> dict:
    """Mean width and coverage of a - b at 50 and 100 labels for each queue, and the labels uniform needs
    for the neyman and stratified queues' mean width (linear interpolation over UNIFORM_GRID)."""
    rng = np.random.default_rng(seed)
    gold, stratum = threshold_corpora(rng, count, n) if equal_balanced else corpora(rng, count, n, False)
    truth = true_difference(gold, stratum)[metric]
    size = np.stack([(stratum == h).sum(axis=1) for h in range(4)], axis=1).astype(float)
    out = {}
    for name, make in QUEUES.items():
        budgets = UNIFORM_GRID if name == "uniform" else (50, 100)
        counts = labelled_counts(gold, stratum, make(metric), budgets)
        for k in budgets:
            ci = intervals(rng, size, *counts[k])[metric]
            out[(name, k)] = {"width": float(np.mean(ci[:, 1] - ci[:, 0])),
                              "coverage": float(np.mean((ci[:, 0] <= truth) & (truth <= ci[:, 1])))}
    widths = [out[("uniform", k)]["width"] for k in UNIFORM_GRID]
    for name in ("neyman", "stratified"):
        for k in (50, 100):
            need = np.interp(-out[(name, k)]["width"], [-w for w in widths], UNIFORM_GRID,
                             right=np.inf)
            out[(name, k)]["label_ratio"] = float(need / k)
    return out


def test_vectorised_estimator_matches_estimate():
    """The simulation's interval is the estimator's: same counts, same interval within Monte-Carlo error."""
    rng = np.random.default_rng(3)
    gold, stratum = corpora(rng, 3, 300, True)
    size = np.stack([(stratum == h).sum(axis=1) for h in range(4)], axis=1).astype(float)
    counts = labelled_counts(gold, stratum, QUEUES["neyman"]("balanced_accuracy"), (60,))[60]
    ours = intervals(rng, size, *counts, draws=20000)
    for c in range(3):
        verdicts = {f"x{i}": {j: "grounded" if NAMES[s][k] == "G" else "ungrounded" for k, j in enumerate(JUDGES)}
                    for i, s in enumerate(stratum[c])}
        queue = QUEUES["neyman"]("balanced_accuracy")({i: pattern(v, JUDGES) for i, v in verdicts.items()}, c)
        labels = {item.id: "grounded" if gold[c, int(item.id[1:])] else "ungrounded" for item in queue[:60]}
        result = estimate(strata_counts(verdicts, JUDGES, labels), JUDGES, draws=20000, seed=c)
        for pair in result.pairs:
            assert ours[pair.metric][c] == pytest.approx(pair.ci95, abs=0.01)


def test_allocation_follows_the_metric():
    """Accuracy: the agreement strata get only the proportional floor (a label there cannot move a - b);
    balanced accuracy: they get more (the class totals live there); every prefix follows the allocation."""
    sizes = {"GG": 200, "UU": 200, "GU": 50, "UG": 50}
    accuracy = neyman_targets(sizes, "accuracy", [(0, 1)])
    balanced = neyman_targets(sizes, "balanced_accuracy", [(0, 1)])
    assert accuracy["GG"] == pytest.approx(0.05 * 0.4)
    assert accuracy["GU"] == pytest.approx(0.95 * 0.5 + 0.05 * 0.1, rel=0.03)
    assert balanced["GG"] > 3 * accuracy["GG"] and balanced["GU"] < accuracy["GU"]
    assert sum(balanced.values()) == pytest.approx(1.0)
    strata = {f"x{i}": name for i, name in enumerate(n for n, k in sizes.items() for _ in range(k))}
    queue = build_metric_queue(strata, JUDGES, "balanced_accuracy", ("B", "A"), 120, 4)
    for prefix in (10, 40, 120):
        for name, target in balanced.items():
            assert abs(sum(item.stratum == name for item in queue[:prefix]) - target * prefix) <= 1
    assert {item.strategy for item in queue} == {"neyman"}
    assert queue[0].built_for.metric == "balanced_accuracy" and queue[0].built_for.pairs == [("B", "A")]
    drawn = {n: sum(item.stratum == n for item in queue) for n in sizes}
    assert all(item.pi == pytest.approx(drawn[item.stratum] / sizes[item.stratum]) for item in queue)
    assert queue == build_metric_queue(strata, JUDGES, "balanced_accuracy", ("B", "A"), 120, 4)


def test_unequal_sampling_rates_are_weighted_by_stratum_size():
    """A queue that samples strata at very different rates: the estimate weights each stratum by N_h (its
    answers), not by its share of the labels, so labelling whole strata gives the exact figures."""
    verdicts = {f"x{i}": {"A": "grounded" if i < 300 else "ungrounded", "B": "grounded" if i < 250 else "ungrounded"}
                for i in range(400)}
    gold = {f"x{i}": "grounded" if i % 3 else "ungrounded" for i in range(400)}
    labels = {i: gold[i] for i in list(gold)[250:300]}                 # all of the GU stratum, none elsewhere
    labels.update({i: gold[i] for i in list(gold)[:10]})                # 4% of GG
    result = estimate(strata_counts(verdicts, JUDGES, labels), JUDGES, draws=4000)
    pair = next(p for p in result.pairs if p.metric == "accuracy")
    truth = sum((gold[i] == verdicts[i]["A"]) - (gold[i] == verdicts[i]["B"]) for i in gold) / 400
    assert pair.ci95[0] == pytest.approx(truth, abs=1e-9) and pair.ci95[1] == pytest.approx(truth, abs=1e-9)


def test_estimate_flags_the_queue_s_target_and_projects_labels_to_half_width_05():
    """With a queue built for balanced accuracy, the estimate flags that pair and metric, and projects the labels
    before the 95% interval's half-width reaches 0.05 along the rest of the queue: labelling that many more gives
    a half-width near 0.05 (median over 20 corpora)."""
    rng = np.random.default_rng(11)
    reached = []
    for c in range(20):
        gold, stratum = threshold_corpora(rng, 1, 600)
        verdicts = {f"x{i}": {j: "grounded" if NAMES[s][k] == "G" else "ungrounded" for k, j in enumerate(JUDGES)}
                    for i, s in enumerate(stratum[0])}
        truth = {f"x{i}": "grounded" if g else "ungrounded" for i, g in enumerate(gold[0])}
        queue = build_metric_queue({i: pattern(v, JUDGES) for i, v in verdicts.items()}, JUDGES,
                                   "balanced_accuracy", None, None, c)
        labels = {item.id: truth[item.id] for item in queue[:40]}
        result = estimate(strata_counts(verdicts, JUDGES, labels), JUDGES, draws=2000, seed=c,
                          upcoming=[item.stratum for item in queue[40:]], built_for=queue[0].built_for)
        assert [(p.metric, p.queue_target) for p in result.pairs] == [("accuracy", False),
                                                                       ("balanced_accuracy", True)]
        more = result.pairs[1].labels_to_half_width
        assert more is not None and more > 0
        labels = {item.id: truth[item.id] for item in queue[:40 + more]}
        after = estimate(strata_counts(verdicts, JUDGES, labels), JUDGES, draws=2000, seed=c).pairs[1]
        reached.append((after.ci95[1] - after.ci95[0]) / 2)
    assert 0.035 <= np.median(reached) <= 0.065


@pytest.mark.slow
def test_balanced_accuracy_queue_against_uniform_on_equal_pairs():
    """1,000 corpora where the two judges' balanced accuracies are equal (a liberal and a conservative
    threshold on one score, as SummEdits quip vs cosine): the queue built for balanced accuracy is narrower than
    uniform and than the old stratified queue at 50 and 100 labels, and covers the true difference.

    Measured (seed 45): uniform needs 1.69x (50 labels) and 1.79x (100) the labels for the queue's mean width,
    the old stratified queue's 1.06x / 1.23x; coverage 0.944 / 0.943 (uniform's 0.943 / 0.936). The issue's 2x is
    not met here, and no fixed allocation meets it on these corpora: on 300 of them, Neyman with the true
    per-stratum variances gives 1.92x (median, linearised variance against proportional), the prior-based
    allocation 1.87x."""
    result = simulate("balanced_accuracy", equal_balanced=True)
    for k in (50, 100):
        assert 0.93 <= result[("neyman", k)]["coverage"] <= 0.975
        assert result[("neyman", k)]["width"] < result[("uniform", k)]["width"]
        assert result[("neyman", k)]["label_ratio"] >= 1.5
        assert result[("neyman", k)]["label_ratio"] > result[("stratified", k)]["label_ratio"] + 0.3


@pytest.mark.slow
def test_accuracy_queue_keeps_the_stratified_gain():
    """1,000 corpora, judge A better: the queue built for accuracy needs fewer labels than uniform for the
    same width, at least as few as the old stratified queue, and covers at 93-97%.

    Measured (seed 45): uniform needs 4.7x the labels at 50 (the old stratified queue: 3.9x) and more than 4x at
    100 (its width 0.039 is below uniform's at 400 labels; stratified 3.9x); coverage 0.950 / 0.965."""
    result = simulate("accuracy", equal_balanced=False)
    for k in (50, 100):
        assert 0.93 <= result[("neyman", k)]["coverage"] <= 0.975
        assert result[("neyman", k)]["label_ratio"] >= 2.5
        assert result[("neyman", k)]["width"] <= result[("stratified", k)]["width"]


def _run(tmp_path, *judges: str):
    rows = rent_rows(8)
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    out = tmp_path / "run"
    args = [arg for judge in judges for arg in ("--judge", judge)]
    cli("run", str(data), *args, "--out", str(out), "--quiet", "--dev-fraction", "0")
    return out


@pytest.mark.slow
def test_label_for_through_the_cli(tmp_path):
    """``--for`` writes an adaptive queue (``--batch 0``: a fixed neyman one) that says what it was built for;
    bad ``--for`` / ``--pair`` / ``--batch`` and ``--for`` on a one-judge run stop with one line naming the flag,
    and write nothing; the default on a one-judge run is the stratified queue."""
    out = _run(tmp_path, "quip:n=21,threshold=0.5", "span")
    result = cli("label", str(out), "--no-serve", "--for", "accuracy", "--seed", "2", "--batch", "0")
    assert "for accuracy, quip:n=21,threshold=0.5 - span, fixed" in result.stdout
    queue = [json.loads(line) for line in (out / "label_queue.jsonl").read_text().splitlines()]
    assert len(queue) == 16 and queue[0]["strategy"] == "neyman"
    assert queue[0]["built_for"] == {"metric": "accuracy", "pairs": [["quip:n=21,threshold=0.5", "span"]]}
    result = cli("label", str(out), "--no-serve", "--for", "accuracy", "--seed", "2")
    assert "for accuracy, quip:n=21,threshold=0.5 - span, adaptive: batches of 10" in result.stdout
    queue = [json.loads(line) for line in (out / "label_queue.jsonl").read_text().splitlines()]
    assert queue[0]["strategy"] == "adaptive" and queue[0]["built_for"] == {
        "metric": "accuracy", "pairs": [["quip:n=21,threshold=0.5", "span"]], "batch": 10, "seed": 2}
    cli("label", str(out), "--no-serve", "--pair", "span", "quip:n=21,threshold=0.5", "--size", "5")
    queue = [json.loads(line) for line in (out / "label_queue.jsonl").read_text().splitlines()]
    assert len(queue) == 5 and queue[0]["built_for"]["metric"] == "balanced_accuracy"
    with open(out / "labels.jsonl", "w") as handle:
        handle.writelines(json.dumps({"id": item["id"], "label": "grounded", "labeller": "ana"}) + "\n"
                          for item in queue[:3])
    cli("estimate", str(out))
    pairs = json.loads((out / "estimates.json").read_text())["pairs"]
    assert [(p["metric"], p["queue_target"]) for p in pairs] == [("accuracy", False), ("balanced_accuracy", True)]
    assert all("labels_to_half_width" in p for p in pairs)
    (out / "labels.jsonl").unlink()
    (out / "label_queue.jsonl").unlink()
    for flags, named in ((["--for", "macro_f1"], "--for: unknown metric 'macro_f1'"),
                         (["--for", "accuracy", "--pair", "span", "cosine"], "--pair: 'cosine' is not a judge"),
                         (["--for", "--strategy", "uniform"], "--for: builds its own queue"),
                         (["--batch", "-1"], "--batch: -1")):
        result = cli("label", str(out), "--no-serve", *flags, check=False)
        assert result.returncode == 2 and named in result.stderr and len(result.stderr.strip().splitlines()) == 1
        assert not (out / "label_queue.jsonl").exists()
    (tmp_path / "one").mkdir()
    one = _run(tmp_path / "one", "span")
    result = cli("label", str(one), "--no-serve", "--for", check=False)
    assert result.returncode == 2 and "--for balanced_accuracy: the run has one judge" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (one / "label_queue.jsonl").exists()
    result = cli("label", str(one), "--no-serve")
    assert "stratified (one judge: no pair difference to aim at)" in result.stdout
