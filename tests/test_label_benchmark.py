"""``groundjudge label-benchmark``: a blind, seeded, stratified sample of a typed error benchmark for readers, and
each rule's and type's precision measured from their labels (issue #45, item 4)."""

from __future__ import annotations

import json
import math
import random
import re
from collections import Counter
from pathlib import Path

import pytest
from conftest import write_jsonl
from scipy.stats import binomtest
from sklearn.metrics import cohen_kappa_score

from groundjudge.cli import main
from groundjudge.formats.load import load_examples
from groundjudge.labels.benchmark_check import measure, weighted_share, wilson
from groundjudge.labels.benchmark_files import KeyHeader, KeyItem, leaks, read_key
from groundjudge.labels.benchmark_sample import DrawSettings, Unit, allocate, systematic

TYPES = {"F": "Factual Inaccuracies", "T": "Terminological Errors", "M": "Misattributions"}
TAXONOMY = ["Factual Inaccuracies", "Contextual Misinterpretations", "Procedural Errors", "Reasoning Errors",
            "Misattributions", "Terminological Errors"]


def _row(row_id: str, source: str, context: str, answer: str, made: dict) -> dict:
    label = "ungrounded" if made["kind"] == "variant" else "grounded"
    return {"id": row_id, "question": "What is due, and when?", "context": [context], "answer": answer,
            "label": label, "error_types": [made["error_type"]] if made.get("error_type") else [],
            "meta": {"group": row_id.split("~")[0], "source": source, "perturbation": made}}


def bench_rows() -> list[dict]:
    """A tiny benchmark: per source answer an original and typed variants; paraphrases and restatements as
    controls. No key word (type, rule, kind, id) occurs in the texts."""
    rows = []
    for source, count in (("alpha", 12), ("beta", 6)):
        for i in range(count):
            sid = f"{source}-{i}"
            context = (f"Clause {i}. The tenant shall pay {100 + i} crowns on day {i + 1} of each month to the "
                       f"landlord. A late fee applies after {i + 5} days.")
            answer = f"The tenant shall pay {100 + i} crowns on day {i + 1} of each month to the landlord."
            base = {"source_id": sid, "error_type": None, "rule": None}
            rows.append(_row(f"{sid}~orig", source, context, answer, {**base, "kind": "original"}))
            rows.append(_row(f"{sid}~factual~1", source, context, answer.replace(f"{100 + i}", f"{900 + i}"),
                             {**base, "kind": "variant", "error_type": TYPES["F"],
                              "rule": "factual.number" if i % 2 else "factual.duration"}))
            rows.append(_row(f"{sid}~terminological~1", source, context, answer.replace("shall", "may"),
                             {**base, "kind": "variant", "error_type": TYPES["T"],
                              "rule": "terms.modal" if i % 3 else "terms.scope"}))
            if source == "alpha" and i % 2 == 0:
                rows.append(_row(f"{sid}~misattribution~1", source, context,
                                 answer.replace("tenant", "landlord", 1).replace("the landlord.", "the tenant."),
                                 {**base, "kind": "variant", "error_type": TYPES["M"], "rule": "misattribution.role"}))
            if i < (4 if source == "alpha" else 3):
                rows.append(_row(f"{sid}~para~1", source, context, answer.replace(f"day {i + 1}", f"the day {i + 1}"),
                                 {**base, "kind": "paraphrase", "rule": "paraphrase.number_form"}))
            if source == "alpha":
                rows.append(_row(f"{sid}~hyp", source, context, "Rent is paid monthly to the landlord.",
                                 {**base, "kind": "restatement", "rule": "contractnli.entailed_hypothesis"}))
    return rows


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    """The tiny benchmark and a quip run over it (its verdicts make strata)."""
    folder = tmp_path_factory.mktemp("bench")
    data = write_jsonl(folder / "bench.jsonl", bench_rows())
    assert main(["run", str(data), "--judge", "quip:n=21,threshold=0.9", "--out", str(folder / "run"), "--quiet",
                 "--dev-fraction", "0"]) == 0
    return folder


def _draw(bench: Path, out: Path, *extra: str) -> int:
    return main(["label-benchmark", "draw", str(bench / "bench.jsonl"), "--out", str(out), "--run",
                 str(bench / "run"), "--variants", "20", "--second-variants", "8", "--originals", "6",
                 "--restatements", "3", *extra])


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_blind_files_give_away_nothing_of_the_key(bench, tmp_path, capsys):
    assert _draw(bench, tmp_path / "round") == 0
    header, items = read_key(tmp_path / "round" / "key.jsonl")
    secrets = {"~", "variant", "paraphrase", "restatement", "original", "stratum", "intended", "alpha", "beta"}
    for item in items.values():
        secrets |= {item.row_id, item.source_id, item.stratum_name, item.intended_type or "", item.rule or ""}
        secrets |= set((item.rule or "").split("."))
    secrets |= set(TAXONOMY) | {"factual", "terminological", "misattribution", "number", "duration", "modal",
                                "scope", "role", "number_form", "para", "hyp", "orig"}
    secrets.discard("")
    for part in ("A", "B"):
        path = tmp_path / "round" / f"blind_{part}.jsonl"
        text = path.read_text(encoding="utf-8").lower()
        found = sorted(secret for secret in secrets if secret.lower() in text)
        assert not found, f"{path.name} holds {found}"
        for obj in _jsonl(path):
            assert set(obj) == {"id", "question", "documents", "answer"}
            assert re.fullmatch(rf"{header.sample}-\d+", obj["id"])
    examples = {e.id: e for e in load_examples([bench / "bench.jsonl"]).examples}
    key = tmp_path / "round" / "key.jsonl"
    assert leaks(tmp_path / "round" / "blind_A.jsonl", key, examples) == []
    # the guard itself finds a key value slipped into an answer
    lines = _jsonl(tmp_path / "round" / "blind_A.jsonl")
    lines[0]["answer"] += " (terms.modal)"
    write_jsonl(tmp_path / "leaky.jsonl", lines)
    assert any("terms.modal" in p for p in leaks(tmp_path / "leaky.jsonl", key, examples))


def test_the_draw_is_seeded_and_stratified(bench, tmp_path, capsys):
    for name, seed in (("one", "0"), ("two", "0"), ("three", "1")):
        assert _draw(bench, tmp_path / name, "--seed", seed) == 0
    for file in ("blind_A.jsonl", "blind_B.jsonl", "key.jsonl"):
        assert (tmp_path / "one" / file).read_bytes() == (tmp_path / "two" / file).read_bytes()
        assert (tmp_path / "one" / file).read_bytes() != (tmp_path / "three" / file).read_bytes()
    header, items = read_key(tmp_path / "one" / "key.jsonl")
    assert header.judges == ["quip:n=21,threshold=0.9"]
    kinds = Counter(item.kind for item in items.values())
    assert kinds == {"variant": 20, "original": 6, "restatement": 3, "paraphrase": 7}
    assert sum("B" in item.pi and item.kind == "variant" for item in items.values()) == 8
    drawn = Counter(item.stratum_name for item in items.values())
    for stratum, n in drawn.items():
        assert stratum.split("|")[3] in ("G", "U")   # the judge's verdict splits the strata
        for item in items.values():
            if item.stratum_name == stratum:
                assert item.pi["A"] == pytest.approx(n / header.strata[stratum])
    # every non-empty variant cell is drawn, and cells share the 20 variants by the square root of their size
    cells = Counter(item.cell for item in items.values() if item.kind == "variant")
    sizes = Counter()
    for stratum, size in header.strata.items():
        if stratum.startswith("variant|"):
            sizes["|".join(stratum.split("|")[:3])] += size
    assert cells == allocate(sizes, 20, 0.5)
    # part B is a subsample of part A within each cell, in an order of its own
    blind_a = [obj["id"] for obj in _jsonl(tmp_path / "one" / "blind_A.jsonl")]
    blind_b = [obj["id"] for obj in _jsonl(tmp_path / "one" / "blind_B.jsonl")]
    assert set(blind_b) < set(blind_a) and len(blind_b) == sum("B" in i.pi for i in items.values())
    assert [i for i in blind_a if i in blind_b] != blind_b
    for cell in {items[i].cell for i in blind_b}:
        in_a = [i for i in blind_a if items[i].cell == cell]
        in_b = [i for i in blind_b if items[i].cell == cell]
        for item_id in in_b:
            assert items[item_id].pi["B"] == pytest.approx(items[item_id].pi["A"] * len(in_b) / len(in_a))


def test_allocation_and_systematic_draw_by_hand():
    # sqrt shares 10 : 5 : 1 of 12 -> c held at its minimum 1, then 11 * 10/15 = 7.33 and 3.67 -> 7 and 4
    assert allocate({"a": 100, "b": 25, "c": 1}, 12, 0.5) == {"a": 7, "b": 4, "c": 1}
    assert allocate({"a": 100, "b": 25, "c": 1}, 12, 1.0) == {"a": 9, "b": 2, "c": 1}   # c 1, then 8.8, 2.2
    assert allocate({"a": 3, "b": 50}, 20, 0.0) == {"a": 3, "b": 17}                    # a capped at its size
    with pytest.raises(ValueError):
        allocate({"a": 3, "b": 5}, 9, 1.0)
    units = [Unit(row_id=f"r{i}", source_id=f"s{i}", kind="variant", intended_type="T", source="x",
                  rule="a" if i < 15 else "b" if i < 24 else "c") for i in range(30)]
    hits = Counter()
    for seed in range(3000):
        chosen = systematic(units, 10, seed, "h")
        assert len({u.row_id for u in chosen}) == 10
        rules = Counter(u.rule for u in chosen)
        assert abs(rules["a"] - 5) <= 1 and abs(rules["b"] - 3) <= 1 and abs(rules["c"] - 2) <= 1
        hits.update(u.row_id for u in chosen)
    assert all(abs(hits[u.row_id] / 3000 - 1 / 3) < 0.04 for u in units)   # inclusion probability n/N


def _key(tmp_path: Path, items: list[KeyItem], rules: dict) -> Path:
    header = KeyHeader(sample="s000abc", dataset="bench.jsonl", dataset_sha256="0" * 64, settings=DrawSettings(),
                       parts={"A": "blind_A.jsonl", "B": "blind_B.jsonl"},
                       strata={s: sum(r.values()) for s, r in rules.items()}, rules=rules, taxonomy=TAXONOMY)
    return write_jsonl(tmp_path / "key.jsonl", [header.model_dump(), *(i.model_dump() for i in items)])


def _item(number: int, stratum: str, rule: str, pi: dict, kind: str = "variant") -> KeyItem:
    _, intended, source, verdict = stratum.split("|")
    return KeyItem(id=f"s000abc-{number}", row_id=f"row{number}", source_id=f"src{number}", kind=kind,
                   intended_type=None if intended == "-" else intended, rule=rule, source=source, verdict=verdict,
                   stratum_name=stratum, pi=pi)


H1, H2, C1 = (f"variant|{TYPES['T']}|x|G", f"variant|{TYPES['T']}|x|U", "original|-|x|G")


@pytest.fixture
def hand_key(tmp_path) -> Path:
    """Stratum H1: 10 rows, 2 drawn (pi 0.2); H2: 30 rows, 3 drawn (pi 0.1); 4 grounded originals, 2 drawn."""
    items = [_item(1, H1, "r1", {"A": 0.2, "B": 0.1}), _item(2, H1, "r1", {"A": 0.2}),
             _item(3, H2, "r1", {"A": 0.1, "B": 0.1}), _item(4, H2, "r2", {"A": 0.1, "B": 0.1}),
             _item(5, H2, "r2", {"A": 0.1}), _item(6, C1, "-", {"A": 0.5, "B": 0.5}, kind="original"),
             _item(7, C1, "-", {"A": 0.5}, kind="original")]
    return _key(tmp_path, items, {H1: {"r1": 10}, H2: {"r1": 12, "r2": 18}, C1: {"-": 4}})


def _labels(path: Path, rows: list[tuple]) -> Path:
    return write_jsonl(path, [{"id": f"s000abc-{n}", "label": label, "error_types": types, **extra}
                              for n, label, types, extra in rows])


def test_precision_and_intervals_match_a_hand_computation(hand_key, tmp_path):
    t, f = TYPES["T"], TYPES["F"]
    a = _labels(tmp_path / "a.jsonl", [(1, "ungrounded", [t], {}), (2, "ungrounded", [t], {"fluent": False}),
                                       (3, "ungrounded", [t, f], {}), (4, "ungrounded", [f], {}),
                                       (5, "grounded", [], {}), (6, "grounded", [], {}), (7, "unsure", [], {})])
    result = measure(hand_key, {"A": a})
    (part,) = result.parts
    (typed,) = part.by_type
    # weights 1/pi: items 1-2 weigh 5, items 3-5 weigh 10; confirmed 1, 2, 3: (5 + 5 + 10) / 40
    assert typed.rows == 40 and typed.confirmed.estimate == pytest.approx(0.5)
    assert typed.error.estimate == pytest.approx(30 / 40)
    assert typed.correct.estimate == pytest.approx(15 / 40)            # item 2 is not fluent
    n_eff = 40 ** 2 / (2 * 5 ** 2 + 3 * 10 ** 2)                         # Kish: 4.571
    assert typed.confirmed.n_eff == pytest.approx(n_eff)
    assert typed.confirmed.ci95 == pytest.approx((0.16213, 0.83787), abs=1e-4)   # Wilson at p 0.5, n 4.571
    rules = {g.group: g for g in part.by_rule}
    assert rules["r1"].rows == 22 and rules["r1"].confirmed.estimate == pytest.approx(1.0)
    assert rules["r2"].rows == 18 and rules["r2"].confirmed.estimate == 0.0 and rules["r2"].error.estimate == 0.5
    (control,) = part.controls
    assert (control.grounded.k, control.grounded.n, control.unsure) == (1, 2, 1)
    assert part.confusion[t] == {t: 3, f: 2, "grounded": 1}
    # with equal weights the interval is the plain Wilson interval (scipy's)
    share = weighted_share([True, True, False, True, False], [3.0] * 5)
    assert share.ci95 == pytest.approx(binomtest(3, 5).proportion_ci(method="wilson"), abs=1e-9)
    assert wilson(1.0, 1.0)[0] == pytest.approx(0.2065, abs=1e-4)


def test_unlabelled_items_are_made_up_for_within_their_stratum(hand_key, tmp_path):
    t = TYPES["T"]
    a = _labels(tmp_path / "a.jsonl", [(1, "ungrounded", [t], {}), (3, "ungrounded", [t], {}),
                                       (4, "grounded", [], {})])
    (typed,) = measure(hand_key, {"A": a}).parts[0].by_type
    # item 2 missing: item 1 stands for all 10 rows of H1; item 5 missing: items 3, 4 for the 30 rows of H2
    assert typed.confirmed.estimate == pytest.approx((10 + 15) / 40)
    assert typed.labelled == 3 and typed.items == 5


def test_agreement_between_the_labellers_reuses_estimates_figures(hand_key, tmp_path):
    t = TYPES["T"]
    a = _labels(tmp_path / "a.jsonl", [(1, "ungrounded", [t], {}), (3, "ungrounded", [t], {}),
                                       (4, "grounded", [], {}), (6, "grounded", [], {})])
    b = _labels(tmp_path / "b.jsonl", [(1, "ungrounded", [t], {}), (3, "grounded", [], {}),
                                       (4, "grounded", [], {}), (6, "grounded", [], {})])
    result = measure(hand_key, {"A": a, "B": b})
    (pair,) = result.agreement.pairs
    assert (pair.a, pair.b, pair.n) == ("A", "B", 4)
    expected = cohen_kappa_score(["u", "u", "g", "g"], ["u", "g", "g", "g"])        # 0.5
    assert pair.kappa == pytest.approx(expected) and expected == pytest.approx(0.5)
    assert result.agreement_confirmed.pairs[0].n == 3                             # the variants both labelled
    assert {p.part for p in result.parts} == {"A", "B"}


@pytest.mark.parametrize("lines, message", [
    ([{"id": "s000abc-1", "label": "grounded"}, {"id": "s000abc-99", "label": "grounded"}],
     r"a\.jsonl:2:id: unknown item id 's000abc-99'"),
    ([{"id": "sfff111-1", "label": "grounded"}], r"a\.jsonl:1:id: .*another sample"),
    ([{"id": "s000abc-1", "label": "ungrounded", "error_types": ["Typos"]}],
     r"a\.jsonl:1:error_types: unknown error type 'Typos'"),
    ([{"id": "s000abc-1", "label": "wrong"}], r"a\.jsonl:1:label: "),
    ([], r"a\.jsonl: no labels"),
])
def test_bad_labels_are_one_line_naming_file_and_line(hand_key, tmp_path, capsys, lines, message):
    path = write_jsonl(tmp_path / "a.jsonl", lines)
    assert main(["label-benchmark", "measure", str(hand_key), "--labels", f"A={path}"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and re.search(message, err), err
    assert not (tmp_path / "benchmark_check.json").exists()


def test_a_labels_file_for_another_part_or_bad_flags_are_one_line(hand_key, tmp_path, capsys):
    b = _labels(tmp_path / "b.jsonl", [(1, "grounded", [], {}), (2, "grounded", [], {})])
    assert main(["label-benchmark", "measure", str(hand_key), "--labels", f"B={b}"]) == 2
    assert re.search(r"b\.jsonl:2:id: item 's000abc-2' is not in part B", capsys.readouterr().err)
    for flags, message in ((["--labels", "A"], "give PART=FILE"), (["--labels", f"C={b}"], "part 'C' is not in the key"),
                           (["--labels", f"A={tmp_path / 'none.jsonl'}"], "is not a file")):
        assert main(["label-benchmark", "measure", str(hand_key), *flags]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and message in err, err


def test_bad_draw_settings_are_one_line_and_write_nothing(bench, tmp_path, capsys):
    for flags, message in ((["--variants", "500"], "--variants 500: the benchmark has 42 variant"),
                           (["--second-variants", "30"], "--second-variants 30: part B is a subsample"),
                           (["--variants", "2", "--second-variants", "1"], "--variants 2: cannot be shared"),
                           (["--judge", "nli"], "--judge nli: not a judge of the runs")):
        assert _draw(bench, tmp_path / "out", *flags) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and message in err, err
        assert not (tmp_path / "out").exists()
    assert _draw(bench, tmp_path / "out") == 0
    assert _draw(bench, tmp_path / "out") == 2 and "exists" in capsys.readouterr().err


def test_measure_end_to_end_on_a_drawn_sample(bench, tmp_path, capsys):
    assert _draw(bench, tmp_path / "round") == 0
    _, items = read_key(tmp_path / "round" / "key.jsonl")
    rng = random.Random(3)
    for part in ("A", "B"):
        rows = []
        for obj in _jsonl(tmp_path / "round" / f"blind_{part}.jsonl"):
            item = items[obj["id"]]
            right = item.kind == "variant" and rng.random() < 0.8
            rows.append({"id": obj["id"], "label": "ungrounded" if right else "grounded",
                         "error_types": [item.intended_type] if right else [], "labeller": part})
        write_jsonl(tmp_path / f"labels_{part}.jsonl", rows)
    out = tmp_path / "check"
    assert main(["label-benchmark", "measure", str(tmp_path / "round" / "key.jsonl"), "--labels",
                 f"A={tmp_path / 'labels_A.jsonl'}", "--labels", f"B={tmp_path / 'labels_B.jsonl'}",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "part A: 36/36 labelled" in printed and "Cohen's kappa" in printed
    result = json.loads((out / "benchmark_check.json").read_text())
    assert result["parts"][0]["overall"]["rows"] == 42
    assert math.isclose(sum(g["rows"] for g in result["parts"][0]["by_type"]), 42)
    page = (out / "benchmark_check.md").read_text()
    assert "| Terminological Errors | 18 |" in page and "### Per generator rule" in page


def test_exclude_leaves_out_every_row_of_an_earlier_key(bench, tmp_path, capsys):
    """A fresh sample after a fix: --exclude KEY draws none of the earlier sample's rows, says so in the key and
    the measurement, and weighs by the rows left in."""
    assert _draw(bench, tmp_path / "one", "--variants", "12", "--second-variants", "4", "--originals", "4",
                 "--restatements", "2", "--paraphrases", "3") == 0
    first_header, first = read_key(tmp_path / "one" / "key.jsonl")
    assert "excluded" not in _jsonl(tmp_path / "one" / "key.jsonl")[0]     # keys without --exclude as before
    first_rows = {item.row_id for item in first.values()}
    assert _draw(bench, tmp_path / "two", "--variants", "12", "--second-variants", "4", "--originals", "4",
                 "--restatements", "2", "--paraphrases", "3", "--seed", "5", "--exclude",
                 str(tmp_path / "one" / "key.jsonl")) == 0
    assert f"left out: {len(first_rows)} rows of sample {first_header.sample}" in capsys.readouterr().out
    header, second = read_key(tmp_path / "two" / "key.jsonl")
    assert {item.row_id for item in second.values()}.isdisjoint(first_rows)
    assert header.excluded == {first_header.sample: len(first_rows)} and header.sample != first_header.sample
    # the strata count only the rows left in: the whole benchmark less the first sample
    assert sum(header.strata.values()) == sum(first_header.strata.values()) - len(first_rows)
    # without --exclude the same seed draws some of the first sample's rows (the test above can fail)
    assert _draw(bench, tmp_path / "three", "--variants", "12", "--second-variants", "4", "--originals", "4",
                 "--restatements", "2", "--paraphrases", "3", "--seed", "5") == 0
    _, third = read_key(tmp_path / "three" / "key.jsonl")
    assert not {item.row_id for item in third.values()}.isdisjoint(first_rows)
    labels = [{"id": item.id, "label": "grounded", "error_types": [], "fluent": True, "note": "", "labeller": "A"}
              for item in second.values()]
    write_jsonl(tmp_path / "labels_A.jsonl", labels)
    result = measure(tmp_path / "two" / "key.jsonl", {"A": str(tmp_path / "labels_A.jsonl")})
    assert result.excluded == {first_header.sample: len(first_rows)}
    # a key that is not there, or not a key: one line, nothing written
    for bad, message in ((tmp_path / "none.jsonl", "no such key file"), (tmp_path / "labels_A.jsonl", "not a")):
        assert _draw(bench, tmp_path / "four", "--exclude", str(bad)) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and message in err and "--exclude" in err, err
        assert not (tmp_path / "four").exists()


def test_exclude_data_leaves_out_a_row_retyped_under_a_new_id(bench, tmp_path, capsys):
    """A fix that retypes a row gives it a new id with the same text: --exclude-data (the file the earlier key was
    drawn from) leaves it out as well; a file that is not that data is one line."""
    assert _draw(bench, tmp_path / "one", "--variants", "12", "--second-variants", "4", "--originals", "4",
                 "--restatements", "2", "--paraphrases", "3") == 0
    first_header, first = read_key(tmp_path / "one" / "key.jsonl")
    moved = min(item.row_id for item in first.values() if item.kind == "variant")
    rows = bench_rows()
    for row in rows:
        if row["id"] == moved:
            row["id"] = moved.split("~")[0] + "~contextual~1"
            row["error_types"] = ["Contextual Misinterpretations"]
            row["meta"]["perturbation"]["error_type"] = "Contextual Misinterpretations"
    (tmp_path / "rebuilt").mkdir()
    rebuilt = write_jsonl(tmp_path / "rebuilt" / "bench.jsonl", rows)
    args = ["label-benchmark", "draw", str(rebuilt), "--variants", "12", "--second-variants", "4", "--originals",
            "4", "--restatements", "2", "--paraphrases", "3", "--seed", "5", "--exclude",
            str(tmp_path / "one" / "key.jsonl")]
    assert main([*args, "--out", str(tmp_path / "two"), "--exclude-data", str(bench / "bench.jsonl")]) == 0
    header, second = read_key(tmp_path / "two" / "key.jsonl")
    assert header.excluded == {first_header.sample: len(first) - 1, f"{first_header.sample} same text": 1}
    assert moved.split("~")[0] + "~contextual~1" not in {item.row_id for item in second.values()}
    capsys.readouterr()
    assert main([*args, "--out", str(tmp_path / "three"), "--exclude-data", str(rebuilt)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "not the data the --exclude keys were drawn from" in err, err
    assert not (tmp_path / "three").exists()


def test_the_draw_writes_the_readers_readme_with_the_taxonomy_s_types_and_rulings(bench, tmp_path, capsys):
    """The readers' README comes from the taxonomy file (one text for readers and judge): every type by its exact
    name, its definition without the ruling in the table, and each ruling under the table; the parts' files."""
    from groundjudge.labels.benchmark_readme import split_ruling, taxonomy_entries

    assert _draw(bench, tmp_path / "one") == 0
    header, _ = read_key(tmp_path / "one" / "key.jsonl")
    readme = (tmp_path / "one" / "README.md").read_text(encoding="utf-8")
    entries = taxonomy_entries()
    assert len(entries) == 6
    rulings = [split_ruling(definition) for _, definition in entries]
    assert sum(ruling is not None for _, ruling in rulings) >= 3
    for (name, _), (head, ruling) in zip(entries, rulings):
        assert f"| `{name}` | {head} |" in readme
        assert ruling is None or f"- **{name}.** {ruling[:1].upper()}{ruling[1:]}" in readme
    assert "A changed party is a Misattribution when" in readme
    for part in header.parts:
        count = len(_jsonl(tmp_path / "one" / f"blind_{part}.jsonl"))
        assert f"| labeller {part} | `blind_{part}.jsonl` ({count} items) | `labels_{part}.jsonl`" in readme
    assert f"look like `{header.sample}-123`" in readme and "README.md" in capsys.readouterr().out
    for part, other in (("A", "B"), ("B", "A")):
        own = (tmp_path / "one" / f"README_{part}.md").read_text(encoding="utf-8")
        assert f"`blind_{part}.jsonl`" in own and f"`labels_{part}.jsonl`" in own
        assert f"blind_{other}" not in own and f"labels_{other}" not in own, own
        assert f'`"{other}"`' not in own and "A changed party is a Misattribution when" in own


def test_exclude_data_takes_one_old_build_per_key(bench, tmp_path, capsys):
    """Two earlier rounds drawn from two builds: --exclude-data given twice leaves out the same-text rows of each
    key in its own build (matched by hash)."""
    small = ("--variants", "12", "--second-variants", "4", "--originals", "4", "--restatements", "2",
             "--paraphrases", "3")
    assert _draw(bench, tmp_path / "one", *small) == 0
    first_header, first = read_key(tmp_path / "one" / "key.jsonl")
    rows = bench_rows()
    first_moved = min(item.row_id for item in first.values() if item.kind == "variant")
    for row in rows:
        if row["id"] == first_moved:
            row["id"] = first_moved.split("~")[0] + "~contextual~1"
    (tmp_path / "b2").mkdir()
    build2 = write_jsonl(tmp_path / "b2" / "bench.jsonl", rows)
    left = ["--exclude", str(tmp_path / "one" / "key.jsonl")]
    assert main(["label-benchmark", "draw", str(build2), "--out", str(tmp_path / "two"), *small, "--seed", "3",
                 *left, "--exclude-data", str(bench / "bench.jsonl")]) == 0
    second_header, second = read_key(tmp_path / "two" / "key.jsonl")
    second_moved = min(item.row_id for item in second.values() if item.kind == "variant" and "~factual" not in
                       item.row_id and item.row_id.split("~")[0] != first_moved.split("~")[0])
    rows3 = [dict(row) for row in rows]
    for row in rows3:
        if row["id"] == second_moved:
            row["id"] = second_moved.split("~")[0] + "~factual~7"
    (tmp_path / "b3").mkdir()
    build3 = write_jsonl(tmp_path / "b3" / "bench.jsonl", rows3)
    both = [*left, "--exclude", str(tmp_path / "two" / "key.jsonl")]
    args = ["label-benchmark", "draw", str(build3), *small, "--paraphrases", "0", "--seed", "4", *both]
    assert main([*args, "--out", str(tmp_path / "three"), "--exclude-data", str(bench / "bench.jsonl"),
                 "--exclude-data", str(build2)]) == 0
    header, third = read_key(tmp_path / "three" / "key.jsonl")
    assert header.excluded[f"{first_header.sample} same text"] == 1
    assert header.excluded[f"{second_header.sample} same text"] == 1
    drawn = {item.row_id for item in third.values()}
    assert drawn.isdisjoint({item.row_id for item in first.values()} | {item.row_id for item in second.values()})
    assert second_moved.split("~")[0] + "~factual~7" not in drawn
    capsys.readouterr()
    assert main([*args, "--out", str(tmp_path / "four"), "--exclude-data", str(build3)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--exclude-data" in err and "not the data" in err, err
    assert not (tmp_path / "four").exists()
