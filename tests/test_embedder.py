"""The sentence embedder on the engine: the model's own vectors (pooling read from its config), its backends, one
shared vector cache across the judges of a run, and cosine / views / evidence selection as they were with a plain
sentence-transformers call. Model: the packaged all-MiniLM-L6-v2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT
from test_local_chunks import minilm_nli

from groundjudge.judges import build_judge
from groundjudge.local_nli import embedder as embedder_module
from groundjudge.local_nli.embedder import EmbedderSpec, SentenceEmbedder, sentence_embedder, spec_for
from groundjudge.local_nli.evidence import similarity
from groundjudge.local_nli.model import DEFAULT_EMBEDDER, load_embedder, resolve_model
from groundjudge.local_nli.pooling import PoolingConfig, PoolingUnsupported, read_pooling
from groundjudge.local_nli.precision import native_bf16
from groundjudge.local_nli.vector_cache import ENV_SIZE, SENTENCE_VECTORS, VectorCache, max_bytes
from groundjudge.runs.records import RecordWriter
from groundjudge.runs.runner import JudgeTask, run_judges
from groundjudge.types import Example

SENTENCES = ["Short.", "A landlord must return the deposit within 30 days of the lease ending.",
             "Rent is due on the first day of each month, and a late fee of five percent applies after the tenth.",
             " ".join(["The tenant may terminate the lease early by giving written notice"] * 30),   # > 256 tokens
             "Short.", "Der Vermieter muss die Kaution innerhalb von 30 Tagen zurückzahlen.", "Pets?", ""]


def reference(texts, model: str = DEFAULT_EMBEDDER) -> np.ndarray:
    """What the judges computed before: sentence-transformers' encode, unit length."""
    return load_embedder(model).encode(list(texts), batch_size=64, normalize_embeddings=True,
                                       convert_to_numpy=True, show_progress_bar=False)


def legal_examples(n: int = 24) -> list[Example]:
    """The first answers of the bundled legal sample."""
    lines = (ROOT / "datasets" / "legal_qa" / "legal_qa.jsonl").read_text(encoding="utf-8").splitlines()[:n]
    return [Example.model_validate(json.loads(line)) for line in lines]


@pytest.fixture(autouse=True)
def fresh_cache():
    """Every test starts and ends with an empty shared vector cache."""
    SENTENCE_VECTORS.clear()
    yield
    SENTENCE_VECTORS.clear()


def test_the_pooling_is_read_from_the_models_own_config():
    assert read_pooling(resolve_model(DEFAULT_EMBEDDER)) == PoolingConfig(
        modes=("mean_tokens",), normalize=True, max_seq_length=256)


@pytest.mark.slow
def test_engine_vectors_are_sentence_transformers_in_float32():
    engine = SentenceEmbedder(dtype="float32", cache=None, batch_size=3)
    vectors = engine.embed(SENTENCES)
    assert vectors.shape == (len(SENTENCES), 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, reference(SENTENCES), atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert engine.stats.pairs_scored == len(SENTENCES) - 1 and engine.stats.duplicates == 1   # "Short." once
    assert engine.stats.batches == 3   # 7 distinct texts in batches of 3, sorted by length
    assert engine.embed([]).shape == (0, 384)


def _model_copy(folder: Path, pooling: dict, modules: list[dict]) -> str:
    """The packaged MiniLM with another pooling config and module list (weights linked, not copied)."""
    source = Path(resolve_model(DEFAULT_EMBEDDER))
    folder.mkdir()
    for file in source.iterdir():
        if file.is_file() and file.name != "modules.json":
            (folder / file.name).symlink_to(file)
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"word_embedding_dimension": 384, **pooling}))
    (folder / "modules.json").write_text(json.dumps(modules))
    return str(folder)


MODULES = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
           {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]


def test_other_pooling_modes_follow_the_config_as_sentence_transformers_does(tmp_path):
    folder = _model_copy(tmp_path / "cls_max", {"pooling_mode_cls_token": True, "pooling_mode_max_tokens": True,
                                                "pooling_mode_mean_tokens": False}, MODULES)
    assert read_pooling(folder) == PoolingConfig(modes=("cls_token", "max_tokens"), max_seq_length=256)
    engine = SentenceEmbedder(name=folder, dtype="float32", cache=None)
    vectors = engine.embed(SENTENCES[:4])
    assert vectors.shape == (4, 768)
    np.testing.assert_allclose(vectors, reference(SENTENCES[:4], folder), atol=1e-5)


def test_modules_and_modes_the_engine_does_not_run_are_refused(tmp_path):
    dense = MODULES + [{"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"}]
    with pytest.raises(PoolingUnsupported, match="sentence_transformers.models.Dense"):
        read_pooling(_model_copy(tmp_path / "dense", {"pooling_mode_mean_tokens": True}, dense))
    with pytest.raises(PoolingUnsupported, match="weightedmean_tokens"):
        read_pooling(_model_copy(tmp_path / "weighted", {"pooling_mode_weightedmean_tokens": True}, MODULES))


@pytest.mark.skipif(not native_bf16("cpu"), reason="bfloat16 is checked where the CPU computes it natively")
def test_bfloat16_vectors_are_close_to_float32():
    full = SentenceEmbedder(dtype="float32", cache=None).embed(SENTENCES)
    half = SentenceEmbedder(dtype="bfloat16", cache=None).embed(SENTENCES)
    assert np.abs(half - full).max() < 0.01
    assert (half * full).sum(axis=1).min() > 0.999   # cosine of each bf16 vector with its float32 one


@pytest.mark.slow
def test_onnx_runtime_float32_is_torch_and_int8_stays_close(tmp_path, monkeypatch):
    monkeypatch.setenv("GROUNDJUDGE_ONNX_CACHE", str(tmp_path / "onnx"))
    expected = reference(SENTENCES)
    onnx = SentenceEmbedder(backend="onnx", cache=None)
    assert onnx.placement.dtype == "float32" and onnx.backend_name() == "onnx"
    np.testing.assert_allclose(onnx.embed(SENTENCES), expected, atol=1e-5)
    quantised = SentenceEmbedder(backend="onnx", int8=True, cache=None)
    assert (quantised.embed(SENTENCES) * expected).sum(axis=1).min() > 0.95


def test_a_cpu_only_backend_on_another_device_is_one_line():
    with pytest.raises(ValueError, match="backend=onnx runs on CPU only"):
        SentenceEmbedder(backend="onnx", device="cuda")
    with pytest.raises(ValueError, match="unknown backend 'tensorrt'; use one of: torch, onnx"):
        SentenceEmbedder(backend="tensorrt")


def test_the_vector_cache_is_bounded_and_least_recently_used_goes_first(monkeypatch):
    row = np.ones(100, dtype=np.float32)
    cache = VectorCache(limit=3 * VectorCache.entry_bytes("a", row))
    cache.put_many("m", ["a", "b", "c"], [row, row * 2, row * 3])
    assert cache.get_many("m", ["a"])[0][0] == 1.0   # "a" is now the most recent
    cache.put_many("m", ["d"], [row * 4])
    assert [v is not None for v in cache.get_many("m", ["a", "b", "c", "d"])] == [True, False, True, True]
    assert cache.nbytes <= cache.limit and len(cache) == 3
    assert cache.get_many("other model", ["a"]) == [None]   # keyed by the embedder's identity too
    monkeypatch.setenv(ENV_SIZE, "lots")
    with pytest.raises(ValueError, match=f"{ENV_SIZE}='lots' is not a size; use a number of MiB >= 0"):
        max_bytes()



def test_the_vector_caches_bound_is_the_memory_it_keeps_alive():
    """What the cache counts is what its entries hold (vectors, texts, keys, the map), measured by tracemalloc: a
    bound of 2 MiB keeps at most 2 MiB alive, however small the vectors (counting the vectors' data and the texts'
    length alone let 14% more stay for MiniLM's, several times more for short ones)."""
    import tracemalloc

    for dim in (384, 16):
        texts = [f"sentence {i} of a long run" for i in range(20_000)]   # made before: only what the cache keeps
        vectors = np.ones((len(texts), dim), dtype=np.float32)
        cache = VectorCache(limit=2 * 2**20)
        tracemalloc.start()
        try:
            for start in range(0, len(texts), 256):   # chunk by chunk, as a run puts them
                cache.put_many(("model", "cpu", "float32", "torch"), texts[start:start + 256],
                               vectors[start:start + 256])
            held, _ = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert cache.nbytes <= cache.limit and len(cache) < len(texts), dim
        assert held <= cache.limit, (dim, held, cache.nbytes)


def test_the_default_bound_holds_a_grouping_window_of_short_documents_sentences(monkeypatch):
    """The default is sized for a run's grouping window (2,048 answers of ~10 sentences with a MiniLM vector each),
    no more: it is what a long run's memory grows by before the cache is full."""
    from groundjudge.runs.chunk_option import DEFAULT_LOCAL_CHUNK
    from groundjudge.runs.local_chunks import GROUPING_WINDOW

    monkeypatch.delenv(ENV_SIZE, raising=False)
    entry = VectorCache.entry_bytes("A sentence of a legal document, about as long as most of them are.",
                                    np.ones(384, dtype=np.float32))
    window = GROUPING_WINDOW * DEFAULT_LOCAL_CHUNK * 10 * entry
    assert window <= max_bytes() <= 2 * window

def test_vectors_are_keyed_by_placement():
    spec = spec_for("all-MiniLM-L6-v2")
    assert spec == EmbedderSpec(name="all-MiniLM-L6-v2")
    full = SentenceEmbedder(dtype="float32")
    assert full.identity[1:] == ("cpu", "float32", "torch")
    full.embed(SENTENCES[:2])
    assert len(SENTENCE_VECTORS) == 2 and SENTENCE_VECTORS.get_many(full.identity, SENTENCES[:2])[0] is not None
    assert SENTENCE_VECTORS.get_many(full.identity[:2] + ("bfloat16", "torch"), SENTENCES[:1]) == [None]


@pytest.mark.slow
def test_a_documents_sentences_are_embedded_once_across_two_judges_of_a_run(tmp_path, monkeypatch):
    computed: list[str] = []
    original = SentenceEmbedder._compute

    def counting(self, texts):
        computed.extend(texts)
        return original(self, texts)

    monkeypatch.setattr(SentenceEmbedder, "_compute", counting)
    data = legal_examples(12)
    specs = ["cosine:dtype=float32", "cosine:dtype=float32,agg=mean,batch_size=16"]   # two engines, one cache
    judges = [build_judge(spec)[0] for spec in specs]
    with RecordWriter(tmp_path / "records.jsonl") as writer:
        run_judges([JudgeTask(s, j) for s, j in zip(specs, judges)], data, writer, show_progress=False,
                   local_chunk=5)
    assert len((tmp_path / "records.jsonl").read_text().splitlines()) == 2 * len(data)
    assert len(computed) == len(set(computed))   # no sentence computed twice, by either judge
    sentences = {doc[s:e] for ex in data for doc in ex.context for s, e in _spans(doc)}
    assert sentences <= set(computed)
    assert sentence_embedder(EmbedderSpec(dtype="float32", batch_size=16)).stats.pairs_scored == 0   # all cached


def _spans(text: str):
    from groundjudge.text import sentence_spans

    return sentence_spans(text)


def _as_before(monkeypatch) -> None:
    """Make every engine embedder answer with sentence-transformers' encode (the path before the engine)."""
    monkeypatch.setattr(SentenceEmbedder, "embed", lambda self, texts: reference(texts, self.name))
    SENTENCE_VECTORS.clear()


def _scores(judge, examples):
    return [(s.score, [(c.label, c.score, c.evidence.text if c.evidence else None) for c in s.claims])
            for s in judge.score_batch(examples)]


def _assert_same(after, before):
    for (score, claims), (old_score, old_claims) in zip(after, before, strict=True):
        assert score == pytest.approx(old_score, abs=1e-6)
        assert [(label, text) for label, _, text in claims] == [(label, text) for label, _, text in old_claims]
        assert [s for _, s, _ in claims] == pytest.approx([s for _, s, _ in old_claims], abs=1e-6)


@pytest.mark.slow
def test_cosine_and_views_verdicts_and_scores_are_those_of_sentence_transformers(tmp_path, monkeypatch):
    data = legal_examples(12)   # three documents, grounded and altered answers
    nli = minilm_nli(tmp_path / "nli")
    cosine = build_judge("cosine:dtype=float32")[0]
    views = build_judge(f"views:model={nli},top_k=2,entail_at=0.3,dtype=float32")[0]
    after = [_scores(cosine, data), _scores(views, data)]
    claims = [c for ex in data for c in _spans(ex.answer)]
    windows = [doc[s:e] for doc in data[0].context for s, e in _spans(doc)]
    claim_texts = [data[0].answer[s:e] for s, e in _spans(data[0].answer)]
    engine_similarity = similarity(claim_texts, windows, model=spec_for(DEFAULT_EMBEDDER, cosine.embedder().placement))
    _as_before(monkeypatch)
    before = [_scores(cosine, data), _scores(views, data)]
    for now, then in zip(after, before):
        _assert_same(now, then)
    np.testing.assert_allclose(engine_similarity, reference(claim_texts) @ reference(windows).T, atol=1e-6)
    assert claims and len(after[0]) == len(data)


def test_evidence_selection_follows_the_scorers_placement():
    class Scorer:
        placement = embedder_module.Placement(device="cpu", dtype="float32")

    assert spec_for("m", Scorer.placement) == EmbedderSpec(name="m", device="cpu", dtype="float32")
    auto = embedder_module.Placement(device="cpu", dtype="bfloat16", auto=True)
    assert spec_for("m", auto).dtype == "auto"


@pytest.mark.slow
def test_the_embedders_verdicts_settle_dtype_auto(tmp_path, monkeypatch):
    from groundjudge.local_nli import backend_cache, backend_check

    monkeypatch.setenv(backend_cache.ENV_CACHE, str(tmp_path / "backend"))
    backend_check.forget()
    engine = SentenceEmbedder(dtype="auto", cache=None)
    try:
        note = engine.placement.note
        if native_bf16("cpu"):
            assert "check-set verdicts" in note and engine.placement.dtype in ("bfloat16", "float32")
            assert [e.rule for e in backend_cache.entries()] == [embedder_module.CHECK_RULE]
        else:
            assert engine.placement.dtype == "float32" and "no native bfloat16" in note
    finally:
        backend_check.forget()
    shutil.rmtree(tmp_path / "backend", ignore_errors=True)
