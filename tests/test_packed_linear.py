"""oneDNN-packed linear layers (local_nli.batches.pack_linear_layers): same results, same model, safe to share."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from groundjudge.local_nli.batches import PACKED_ATTR, pack_linear_layers  # noqa: E402
from groundjudge.local_nli.nli_model import NLIModel  # noqa: E402

needs_onednn = pytest.mark.skipif(not torch.backends.mkldnn.is_available(), reason="torch built without oneDNN")


def tiny_bert():
    """A random 2-layer BERT sequence classifier (exact GELU in its intermediate layers)."""
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    config = BertConfig(vocab_size=200, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64, num_labels=3)
    return BertForSequenceClassification(config).eval()


def batch(seed: int = 1):
    """Two padded rows of random token ids."""
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, 200, (2, 11), generator=generator)
    mask = torch.ones_like(ids)
    mask[1, 7:] = 0
    return {"input_ids": ids, "attention_mask": mask}


@needs_onednn
def test_packed_model_gives_the_plain_logits_and_keeps_its_parameters():
    model = tiny_bert()
    with torch.inference_mode():
        plain = model(**batch()).logits
    state = {k: v.clone() for k, v in model.state_dict().items()}
    packed = pack_linear_layers(model)
    assert packed == sum(1 for m in model.modules() if type(m) is torch.nn.Linear) > 0
    intermediates = [m for m in model.modules() if type(m).__name__ == "BertIntermediate"]
    assert intermediates and all("forward" in vars(m) for m in intermediates)   # GELU fused into the product
    with torch.inference_mode():
        assert torch.allclose(model(**batch()).logits, plain, atol=1e-5)
    assert model.state_dict().keys() == state.keys()
    assert all(torch.equal(model.state_dict()[k], v) for k, v in state.items())
    assert pack_linear_layers(model) == 0   # idempotent: a shared model is packed once


@needs_onednn
def test_a_changed_weight_is_packed_again_and_training_takes_the_plain_path():
    model = tiny_bert()
    pack_linear_layers(model)
    with torch.inference_mode():
        before = model(**batch()).logits
    with torch.no_grad():
        model.classifier.weight.mul_(3.0)   # in place: the packed copy is stale now
    reference = copy.deepcopy(model)
    with torch.inference_mode():
        after = model(**batch()).logits
        assert not torch.allclose(after, before, atol=1e-4)
        assert torch.allclose(after, reference(**batch()).logits, atol=1e-5)
    model.train()   # with gradients wanted, the plain F.linear runs, so backward works
    loss = model(**batch()).logits.sum()
    loss.backward()
    assert model.classifier.weight.grad is not None and torch.isfinite(model.classifier.weight.grad).all()


@needs_onednn
def test_copies_and_pickles_of_a_packed_model_compute_the_same():
    model = tiny_bert()
    pack_linear_layers(model)
    with torch.inference_mode():
        expected = model(**batch(3)).logits
        copied = copy.deepcopy(model)
        assert getattr(copied.classifier, PACKED_ATTR).tensor is None   # packed again on first use
        assert torch.allclose(copied(**batch(3)).logits, expected, atol=1e-5)
        restored = pickle.loads(pickle.dumps(model))
        assert torch.allclose(restored(**batch(3)).logits, expected, atol=1e-5)


def test_a_non_float32_model_is_left_alone():
    model = tiny_bert().to(torch.bfloat16)
    assert pack_linear_layers(model) == 0
    assert not any(hasattr(m, PACKED_ATTR) for m in model.modules())


@needs_onednn
def test_engine_packs_on_cpu_and_scores_as_the_plain_model(tmp_path):
    """The NLI engine packs its CPU float32 model, and its probabilities equal the unpacked model's softmax."""
    from test_local_nli import tiny_model

    path = tiny_model(tmp_path / "m", weight_scale=20.0)
    engine = NLIModel(path, batch_size=4, dtype="float32")   # packing is for float32 (dtype=auto may pick bf16)
    assert any(hasattr(m, PACKED_ATTR) for m in engine.model.modules())
    premises = [f"Sentence number {i} " + "word " * (i * 3) for i in range(6)]
    hypotheses = [f"Claim {i}." for i in range(6)]
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    plain = AutoModelForSequenceClassification.from_pretrained(path).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    with torch.inference_mode():
        logits = plain(**tokenizer(premises, hypotheses, padding=True, return_tensors="pt")).logits
    expected = torch.softmax(logits, dim=-1).numpy()
    got = engine.score_pairs(premises, hypotheses)   # columns: entailment, neutral, contradiction
    reordered = np.zeros_like(expected)
    for index, column in engine.columns.items():
        reordered[:, index] = got[:, column]
    assert np.allclose(reordered, expected, atol=1e-5)
