"""The hhem, minicheck and spans judges, on tiny randomly initialised models of their real architectures.

Nothing is downloaded: tests/tiny_models.py builds each model offline (T5 with a two-way head as HHEM, an
HHEM-layout checkpoint with its own modelling code, RoBERTa / DeBERTa-v2 / Flan-T5 as MiniCheck, a
ModernBERT token tagger as LettuceDetect) and the judges load them with their real loading code.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil

import numpy as np
import pytest
import tiny_models as tiny
from conftest import ROOT, cli
from test_report_browser import browser  # noqa: F401 - the headless chromium fixture

from groundjudge.judges import SpecError, build_judge
from groundjudge.local_nli import model_cache
from groundjudge.local_nli.hhem_model import RemoteCodeRequired, load_hhem_model
from groundjudge.local_nli.minicheck_model import chunk_context, infer_backend, load_minicheck_model, word_count
from groundjudge.local_nli.model import ModelUnavailable
from groundjudge.local_nli.nli_model import LabelMapError
from groundjudge.local_nli.precision import native_bf16_cpu
from groundjudge.local_nli.settings import ModelSettings
from groundjudge.local_nli.token_tagger import load_tagger, merge_spans
from groundjudge.runs.records import read_records
from groundjudge.types import Example

FP32 = ModelSettings(dtype="float32")
"""Settings for a score compared with one computed by hand in float32 (dtype=auto may choose bfloat16)."""

LEGAL_QA = ROOT / "datasets" / "legal_qa" / "legal_qa.jsonl"
EXAMPLE = Example(id="x", question="When is the deposit returned?",
                  context=["The deposit is returned within 30 days. Pets are not allowed. Interest is paid yearly."],
                  answer="The deposit comes back within 30 days. Pets are fine.")


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Every tiny model, built once for this module."""
    base = tmp_path_factory.mktemp("detectors")
    paths = {
        "hhem_token": tiny.hhem_like(base / "hhem_token"),
        "hhem_sequence": tiny.hhem_like(base / "hhem_sequence", head="sequence"),
        "hhem_yes": tiny.hhem_like(base / "hhem_yes", consistent_bias=6.0),
        "hhem_no": tiny.hhem_like(base / "hhem_no", consistent_bias=-6.0),
        "roberta": tiny.minicheck_roberta(base / "roberta", weight_scale=30.0),
        "roberta_yes": tiny.minicheck_roberta(base / "roberta_yes", supported_bias=6.0),
        "deberta": tiny.minicheck_deberta(base / "deberta"),
        "flan": tiny.minicheck_flan(base / "flan"),
        "tagger": tiny.tagger(base / "tagger"),
    }
    paths["hhem_remote"] = tiny.hhem_remote(base / "hhem_remote", paths["hhem_token"])
    return paths


def judge_one(spec: str, example: Example = EXAMPLE):
    judge, _ = build_judge(spec)
    return asyncio.run(judge.judge(example))


def by_hand_hhem(path: str, premise: str, hypothesis: str) -> float:
    """HHEM's score computed directly: T5 token classifier, first position, softmax, class 1."""
    import torch
    from transformers import AutoTokenizer, T5ForTokenClassification

    tokenizer, model = AutoTokenizer.from_pretrained(path), T5ForTokenClassification.from_pretrained(path).eval()
    text = (f"<pad> Determine if the hypothesis is true given the premise?\n\nPremise: {premise}\n\n"
            f"Hypothesis: {hypothesis}")
    with torch.no_grad():
        logits = model(**tokenizer([text], return_tensors="pt")).logits[:, 0, :]
    return float(torch.softmax(logits, dim=-1)[0, 1])


@pytest.mark.slow
def test_hhem_reads_the_first_position_of_its_prompt_and_loads_three_ways(models):
    premise, claim = EXAMPLE.context[0], "The deposit comes back within 30 days."
    engine = load_hhem_model(models["hhem_token"], FP32)
    ids = engine.tokenizer(engine.text(premise, claim))["input_ids"]
    assert ids[0] == engine.tokenizer.pad_token_id and ids[-1] == engine.tokenizer.eos_token_id
    expected = by_hand_hhem(models["hhem_token"], premise, claim)
    assert engine.score_pairs([premise], [claim])[0] == pytest.approx(expected, abs=1e-5)
    # the published layout: remote code only when asked, or the same weights in transformers' own T5
    with pytest.raises(RemoteCodeRequired, match=r"trust_remote_code=true.*native=true"):
        load_hhem_model(models["hhem_remote"])
    assert issubclass(RemoteCodeRequired, ModelUnavailable)   # stops a run instead of failing every example
    native = load_hhem_model(models["hhem_remote"], FP32, native=True)
    remote = load_hhem_model(models["hhem_remote"], FP32, trust_remote_code=True)
    assert type(remote.model).__name__ == "HHEMv2ForSequenceClassification"
    assert type(native.model).__name__ == "T5ForTokenClassification"
    for other in (native, remote):   # tokenizer taken from the config's foundation, the same numbers
        assert other.score_pairs([premise], [claim])[0] == pytest.approx(expected, abs=1e-5)
    sequence = load_hhem_model(models["hhem_sequence"]).score_pairs([premise, "x"], [claim, "y"])
    assert sequence.shape == (2,) and ((sequence > 0) & (sequence < 1)).all()


@pytest.mark.slow
def test_hhem_judge_claims_granularity_and_windows(models):
    result = judge_one(f"hhem:model={models['hhem_yes']}")
    claims = result.verdict.claims
    assert [c.label for c in claims] == ["supported", "supported"] and result.verdict.label == "grounded"
    assert result.verdict.score == pytest.approx(min(c.score for c in claims))
    assert all(EXAMPLE.answer[c.claim.start:c.claim.end] == c.claim.text for c in claims)
    assert claims[0].evidence.text == EXAMPLE.context[0] and claims[0].reason.startswith("HHEM")
    result = judge_one(f"hhem:model={models['hhem_no']},granularity=answer")
    assert len(result.verdict.claims) == 1 and result.verdict.claims[0].claim.text == EXAMPLE.answer
    assert result.verdict.claims[0].label == "unverifiable" and result.verdict.label == "ungrounded"
    # a long document is read in windows that fit beside the claim; each claim against its top-k of them
    doc = " ".join(f"Clause {i} sets the rent of flat {i} at {100 + i} crowns a month." for i in range(60))
    long = Example(id="l", context=[doc], answer="Flat 7 costs 107 crowns. Flat 9 costs 109 crowns.")
    result = judge_one(f"hhem:model={models['hhem_token']},window_tokens=40,top_k=2,evidence=tfidf,max_length=128",
                       long)
    assert result.timings["windows"] > 5 and result.timings["pairs_scored"] == 4.0
    assert result.timings["pairs_truncated"] == 0.0
    for claim in result.verdict.claims:
        evidence = claim.evidence
        assert doc[evidence.start:evidence.end] == evidence.text


@pytest.mark.slow
def test_minicheck_backends_inputs_and_labels(models):
    assert infer_backend({"model_type": "t5"}) == "flan-t5"
    assert infer_backend({"model_type": "deberta-v2"}) == "deberta"
    assert infer_backend({"model_type": "roberta"}) == "roberta"
    roberta = load_minicheck_model(models["roberta"])
    assert roberta.backend == "roberta" and roberta.max_length == 128   # capped by its 130 positions
    assert roberta.text("doc.", "claim.") == "doc.</s>claim."
    deberta = load_minicheck_model(models["deberta"])
    assert deberta.backend == "deberta" and deberta.text("doc.", "claim.") == "doc.[SEP]claim."
    flan = load_minicheck_model(models["flan"], FP32)
    assert flan.backend == "flan-t5" and flan.text("doc.", "claim.") == "predict: doc.</s>claim."
    assert load_minicheck_model(models["flan"], backend="roberta").backend == "roberta"
    # Flan-T5: P("1") from one decoder step, softmax over the first tokens of "0" and "1"
    import torch

    tokens = [flan.tokenizer(t, add_special_tokens=False)["input_ids"][0] for t in ("0", "1")]
    assert tuple(tokens) == flan.label_tokens and tokens[0] != tokens[1]
    encoded = flan.tokenizer(["predict: The sky is blue.</s>The sky is blue."], return_tensors="pt")
    with torch.no_grad():
        logits = flan.model(**encoded, decoder_input_ids=torch.zeros((1, 1), dtype=torch.long)).logits[0, 0]
    expected = float(torch.softmax(logits[tokens], dim=-1)[1])
    assert flan.score_pairs(["The sky is blue."], ["The sky is blue."])[0] == pytest.approx(expected, abs=1e-5)
    # a pair too long for the model has its premise cut at a token boundary, and counted, never silently
    from groundjudge.local_nli.batches import ScoreStats

    stats = ScoreStats()
    long = roberta.score_pairs(["word " * 400, "short premise."], ["a claim.", "a claim."], stats=stats)
    assert stats.pairs_truncated == 1 and stats.claims_truncated == 0 and long.shape == (2,)
    # label 1 is 'supported' unless labels= says the checkpoint orders them otherwise
    assert roberta.supported == 1
    assert load_minicheck_model(models["roberta"], ModelSettings(labels=("supported", "unsupported"))).supported == 0
    with pytest.raises(LabelMapError, match=r"labels="):
        load_minicheck_model(models["roberta"], ModelSettings(labels=("LABEL_0", "LABEL_1")))


@pytest.mark.slow
def test_minicheck_chunks_max_over_chunks_and_top_k(models):
    topics = ("rent", "pets", "noise", "parking", "heating", "repairs", "keys", "guests", "smoking", "gardens")
    sentences = [f"Sentence {i} of the lease names {topics[i % 10]} as its rule." for i in range(100)]
    doc = " ".join(sentences)   # 1,000 words
    chunks = chunk_context([doc], 400, 10_000, word_count)
    assert [word_count(c.text) for c in chunks] == [400, 400, 200]
    assert all(c.text.startswith("Sentence") and c.text.endswith(".") for c in chunks)   # whole sentences
    assert "".join(doc[c.start:c.end] + " " for c in chunks).strip() == doc   # no overlap, nothing lost
    recut = chunk_context([doc], 400, 60, lambda t: len(t.split()) * 2)   # a model that takes fewer tokens
    assert all(len(c.text.split()) * 2 <= 60 for c in recut) and all(doc[c.start:c.end] == c.text for c in recut)
    engine = load_minicheck_model(models["roberta"])
    example = Example(id="c", context=[doc], answer="Sentence 7 of the lease names keys as its rule.")
    judge, _ = build_judge(f"minicheck:model={models['roberta']},chunk_words=40,threshold=0.5")
    result = asyncio.run(judge.judge(example))
    wins, _ = judge.claim_windows(example, [example.answer], engine)
    assert wins == chunk_context([doc], 40, 10_000, word_count)   # 40 words fit the tiny RoBERTa's 128 tokens
    assert result.timings["pairs_scored"] == float(len(wins)) == 25.0   # every chunk: the recipe
    per_chunk = engine.score_pairs([w.text for w in wins], [example.answer] * len(wins))
    assert np.ptp(per_chunk) > 1e-5   # the chunks really score differently, so the max is tested
    claim = result.verdict.claims[0]
    assert claim.score == pytest.approx(float(per_chunk.max()), abs=1e-6)
    assert claim.evidence.text == wins[int(per_chunk.argmax())].text
    result = judge_one(f"minicheck:model={models['roberta']},chunk_words=40,top_k=1,evidence=tfidf", example)
    assert result.timings["pairs_scored"] == 1.0 and "Sentence 7 " in result.verdict.claims[0].evidence.text
    result = judge_one(f"minicheck:model={models['roberta_yes']}")
    assert [c.label for c in result.verdict.claims] == ["supported", "supported"]
    assert result.verdict.label == "grounded" and result.verdict.claims[0].reason.startswith("MiniCheck")
    for name in ("deberta", "flan"):
        result = judge_one(f"minicheck:model={models[name]},granularity=answer")
        assert len(result.verdict.claims) == 1 and 0 < result.verdict.score < 1


ANSWER = "On Mars moon the deposit is returned within 30 days, so that is fine.\n"


@pytest.mark.slow
def test_token_tagger_spans_map_back_onto_the_answer(models):
    tagger = load_tagger(models["tagger"])
    scores = tagger.answer_scores(EXAMPLE.context, EXAMPLE.question, ANSWER)
    spans = merge_spans(ANSWER, scores, 0.5)
    assert [(s.text, ANSWER[s.start:s.end]) for s in spans] == [("Mars moon", "Mars moon"), ("that", "that")]
    assert spans[0].start == ANSWER.index("Mars") and spans[1].end == ANSWER.index("that") + 4
    assert spans[0].tokens == 2 and all(s.prob > 0.9 for s in spans)
    assert all(ANSWER[a:b] for a, b in scores.offsets)   # every answer token has its characters
    first = merge_spans("Mars is far.", tagger.answer_scores(EXAMPLE.context, None, "Mars is far."), 0.5)
    assert [(s.start, s.end) for s in first] == [(0, 4)]   # a word at the very start (no leading space)
    result = judge_one(f"spans:model={models['tagger']}", EXAMPLE.model_copy(update={"answer": ANSWER}))
    verdict = result.verdict
    assert verdict.label == "ungrounded" and verdict.score == pytest.approx(1 - float(scores.probs.max()), abs=1e-6)
    assert [(c.claim.text, c.claim.start, c.claim.end, c.label) for c in verdict.claims] == [
        ("Mars moon", 3, 12, "unverifiable"), ("that", ANSWER.index("that"), ANSWER.index("that") + 4, "unverifiable")]
    assert verdict.claims[0].reason.startswith("token tagger")
    clean = judge_one(f"spans:model={models['tagger']}", EXAMPLE.model_copy(update={"answer": "The rent is due."}))
    assert clean.verdict.label == "grounded" and clean.verdict.claims == ()
    assert judge_one(f"spans:model={models['tagger']}", EXAMPLE.model_copy(
        update={"answer": "  "})).verdict.abstain_reason == "no_claims"


@pytest.mark.slow
def test_token_tagger_reads_a_long_context_in_windows(models):
    doc = " ".join(f"Clause {i} says that the deposit is kept in a separate account." for i in range(40))
    example = Example(id="w", question="Where?", context=[doc], answer=ANSWER)
    result = judge_one(f"spans:model={models['tagger']},max_length=96", example)
    assert result.timings["windows"] > 3 and result.timings["answer_tokens_cut"] == 0.0
    assert [c.claim.text for c in result.verdict.claims] == ["Mars moon", "that"]
    low = judge_one(f"spans:model={models['tagger']},max_length=96,across_windows=min", example)
    assert [c.claim.text for c in low.verdict.claims] == ["Mars moon", "that"]
    assert low.verdict.score >= result.verdict.score   # min over windows is never more hallucinated than max


def test_two_judges_naming_one_model_load_it_once(models):
    path = tiny.copy_model(models["roberta"], models["roberta"] + "_shared")
    before = model_cache.load_count(path)
    assert before == 0
    for spec in (f"minicheck:model={path},dtype=float32", f"minicheck:model={path},chunk_words=50,threshold=0.3,"
                 "dtype=float32", f"nli:model={path},labels=[not_supported, supported],top_k=1,dtype=float32"):
        assert judge_one(spec).verdict.label in ("grounded", "ungrounded")
    assert model_cache.load_count(path) == 1   # the nli judge got the very same weights
    if native_bf16_cpu():
        judge_one(f"minicheck:model={path},dtype=bfloat16")   # another precision is another model
        assert model_cache.load_count(path) == 2


@pytest.mark.slow
def test_judges_list_the_new_detectors_with_their_settings():
    out = cli("judges").stdout
    for name, setting in (("hhem", "trust_remote_code"), ("minicheck", "chunk_words"), ("spans", "across_windows")):
        assert re.search(rf"\b{name}\b", out) and setting in out
    with pytest.raises(SpecError, match="granularity"):
        build_judge("hhem:granularity=paragraph")


@pytest.fixture(scope="module")
def detector_run(models, tmp_path_factory):
    """``groundjudge run`` of the three detectors on four legal QA rows, and its report."""
    specs = [f"hhem:model={models['hhem_token']},threshold=0.5",
             f"minicheck:model={models['flan']},threshold=0.5",
             f"spans:model={models['tagger']},threshold=0.5"]
    out = tmp_path_factory.mktemp("detector-run") / "run"
    cli("run", str(LEGAL_QA), *[a for s in specs for a in ("--judge", s)], "--sample", "4", "--out", str(out),
        "--quiet", "--dev-fraction", "0")
    cli("report", str(out), "--out", str(out / "report"))
    return out, specs


@pytest.mark.slow
def test_each_detector_runs_end_to_end_and_the_report_carries_the_spans(detector_run):
    out, specs = detector_run
    records = read_records(out / "records.jsonl")
    assert {r.judge for r in records.results} == set(specs) and len(records.results) == 12
    for record in records.results:
        verdict, answer = record.result.verdict, record.example.answer
        assert verdict.label in ("grounded", "ungrounded") and verdict.path.startswith("local:")
        assert all(answer[c.claim.start:c.claim.end] == c.claim.text for c in verdict.claims)
    spans = [c for r in records.results if r.judge == specs[2] for c in r.result.verdict.claims]
    assert spans and {c.claim.text for c in spans} <= {"that", "That", "Mars", "moon", "Mars moon"}
    page = (out / "report" / "report.html").read_text(encoding="utf-8")
    blob = page.split('<script type="application/json" id="data">', 1)[1].split("</script>", 1)[0]
    data = json.loads(blob)
    tagged = [c for ex in data["examples"] for v in ex["verdicts"].values() for c in v["claims"] if c["kind"] == "span"]
    assert tagged and {c["text"] for c in tagged} == {c.claim.text for c in spans}
    assert all(c["start"] is not None for c in tagged) and "mark.span-halluc" in page
    other = [c for ex in data["examples"] for v in ex["verdicts"].values() for c in v["claims"] if c["kind"] != "span"]
    assert other and {c["kind"] for c in other} == {"claim"}


@pytest.mark.slow
@pytest.mark.skipif(not (shutil.which("chromium") and shutil.which("chromedriver")),
                    reason="needs Debian's chromium and chromium-driver (.ci/run installs them)")
def test_the_report_page_highlights_the_spans_in_a_browser(detector_run, browser):
    from selenium.webdriver.common.by import By

    out, specs = detector_run
    records = read_records(out / "records.jsonl")
    flagged = next(r for r in records.results if r.judge == specs[2] and r.result.verdict.claims)
    expected = [c.claim.text for c in flagged.result.verdict.claims]
    browser.get((out / "report" / "report.html").as_uri())
    assert not [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    browser.find_element(By.ID, "f-disagree").click()   # show every example
    item = next(i for i in browser.find_elements(By.CSS_SELECTOR, "#list .item")
                if i.get_attribute("data-id") == flagged.example.id)
    item.click()
    detail = browser.find_element(By.ID, "detail")
    marked = detail.find_elements(By.CSS_SELECTOR, ".text.answer-text mark.span-halluc")
    assert [m.text for m in marked] == expected   # in the answer itself, where the reader looks first
    box = next(b for b in detail.find_elements(By.CSS_SELECTOR, ".verdict") if b.get_attribute("data-judge") == specs[2])
    assert [m.text for m in box.find_elements(By.CSS_SELECTOR, "mark.span-halluc")] == expected
    assert "hallucinated spans marked" in box.text.lower() and "token tagger" in box.find_element(
        By.CSS_SELECTOR, "mark.span-halluc").get_attribute("title")
    other = next(b for b in detail.find_elements(By.CSS_SELECTOR, ".verdict") if b.get_attribute("data-judge") == specs[0])
    assert other.find_elements(By.CSS_SELECTOR, "mark.claim") and not other.find_elements(By.CSS_SELECTOR,
                                                                                          "mark.span-halluc")


@pytest.mark.slow
def test_dtype_auto_settles_every_loader_by_the_check_set(models, tmp_path, monkeypatch):
    """hhem, minicheck and the tagger decide dtype=auto by the check set like nli; a failed check is float32."""
    from groundjudge.local_nli import backend_cache, backend_check, precision

    monkeypatch.setenv(backend_cache.ENV_CACHE, str(tmp_path / "backend"))
    monkeypatch.setattr(precision, "machine_flags", lambda: frozenset({"avx512_bf16"}))
    backend_check.forget()
    loaders = (lambda s: load_hhem_model(models["hhem_token"], s), lambda s: load_minicheck_model(models["roberta"], s),
               lambda s: load_tagger(models["tagger"], s))
    for load in loaders:
        where = load(ModelSettings(batch_size=3)).placement
        assert where.auto and where.note.startswith("dtype=auto: bfloat16 agrees with float32 on")
        assert where.dtype == ("bfloat16" if "only" not in where.note else "float32")
    rules = sorted(r.rule.split(":")[0] for r in backend_cache.entries())
    assert rules == ["hhem", "minicheck", "tagger"] and all(r.pairs == 300 for r in backend_cache.entries())
    monkeypatch.setenv(backend_check.ENV_MIN_AGREEMENT, "1.001")   # every check fails: float32 everywhere
    backend_check.forget()
    for load in loaders:
        engine = load(ModelSettings(batch_size=5))
        assert engine.placement.dtype == "float32" and "so float32" in engine.placement.note
        assert str(next(engine.model.parameters()).dtype) == "torch.float32"
    backend_check.forget()
