"""The last layer computed for [CLS] only (local_nli.cls_only): same logits, the full layer wherever it must run."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from groundjudge.local_nli.batches import pack_linear_layers  # noqa: E402
from groundjudge.local_nli.cls_only import CLS_ONLY_ATTR, cls_only_last_layer  # noqa: E402


def tiny(kind: str, attention: str):
    """A random 3-layer BERT or RoBERTa sequence classifier with the given attention kernel."""
    from transformers import (BertConfig, BertForSequenceClassification, RobertaConfig,
                              RobertaForSequenceClassification)

    config_class, model_class = {"bert": (BertConfig, BertForSequenceClassification),
                                 "roberta": (RobertaConfig, RobertaForSequenceClassification)}[kind]
    torch.manual_seed(0)
    config = config_class(vocab_size=120, hidden_size=32, num_hidden_layers=3, num_attention_heads=4,
                          intermediate_size=64, max_position_embeddings=80, num_labels=3,
                          initializer_range=0.3)   # far from uniform attention: padding changes the result
    config._attn_implementation = attention
    return model_class(config).eval()


def padded_batch():
    """Four rows of random ids, two of them padded (so the [CLS] query must ignore the padding)."""
    generator = torch.Generator().manual_seed(3)
    ids = torch.randint(5, 120, (4, 19), generator=generator)
    mask = torch.ones_like(ids)
    mask[1, 11:] = 0
    mask[3, 4:] = 0
    return {"input_ids": ids, "attention_mask": mask}


def full_layer_calls(model) -> list[int]:
    """A counter of the last layer's own self-attention module runs (the shortcut never calls it)."""
    calls = [0]
    model.base_model.encoder.layer[-1].attention.self.register_forward_hook(lambda *a: calls.__setitem__(0, calls[0] + 1))
    return calls


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["bert", "roberta"])
@pytest.mark.parametrize("attention", ["eager", "sdpa"])
def test_cls_only_gives_the_full_models_logits(kind, attention):
    reference, model = tiny(kind, attention), tiny(kind, attention)
    batch = padded_batch()
    assert cls_only_last_layer(model) and cls_only_last_layer(model)   # idempotent
    calls = full_layer_calls(model)
    with torch.inference_mode():
        assert torch.allclose(model(**batch).logits, reference(**batch).logits, atol=1e-6)
        cls = model.base_model(**batch).last_hidden_state   # [CLS] after the last layer (layer-normed, O(1))
        expected = reference.base_model(**batch).last_hidden_state[:, :1]
        unpadded = model.base_model(input_ids=batch["input_ids"]).last_hidden_state
        unpadded_expected = reference.base_model(input_ids=batch["input_ids"]).last_hidden_state[:, :1]
    assert calls[0] == 0 and cls.shape[1] == 1   # the shortcut ran: one position, the full attention never
    assert torch.allclose(cls, expected, atol=1e-5)
    assert torch.allclose(unpadded, unpadded_expected, atol=1e-5)
    assert not torch.allclose(unpadded[1], cls[1], atol=0.1)   # the mask matters, so it was really applied


def test_with_packed_linear_layers_too():
    reference, model = tiny("bert", "sdpa"), tiny("bert", "sdpa")
    pack_linear_layers(model)
    cls_only_last_layer(model)
    with torch.inference_mode():
        assert torch.allclose(model(**padded_batch()).logits, reference(**padded_batch()).logits, atol=1e-5)


def test_training_and_hidden_states_run_the_full_layer():
    model = tiny("bert", "eager")
    cls_only_last_layer(model)
    calls = full_layer_calls(model)
    batch = padded_batch()
    logits = model(**batch).logits   # gradients wanted: the full layer, so backprop reaches every token
    logits.sum().backward()
    assert calls[0] == 1 and model.bert.embeddings.word_embeddings.weight.grad is not None
    model.config.output_hidden_states = True
    with torch.inference_mode():
        out = model.bert(**batch)
    assert calls[0] == 2 and out.last_hidden_state.shape[1] == batch["input_ids"].shape[1]


def test_other_models_are_left_alone():
    from transformers import DistilBertConfig, DistilBertForSequenceClassification

    model = DistilBertForSequenceClassification(DistilBertConfig(vocab_size=50, dim=32, n_layers=2, n_heads=2,
                                                                 hidden_dim=64, num_labels=2)).eval()
    assert not cls_only_last_layer(model)
    bert = tiny("bert", "eager")
    bert.config._attn_implementation = "flex_attention"
    assert not cls_only_last_layer(bert)
    assert not hasattr(bert.bert.encoder.layer[-1], CLS_ONLY_ATTR)


def test_the_engine_loads_classifiers_with_it(tmp_path):
    from groundjudge.local_nli import model_cache
    from groundjudge.local_nli.devices import placement

    from test_local_nli import tiny_model   # a saved BERT classifier with a tokenizer

    path = tiny_model(tmp_path / "m")
    loaded = model_cache.load_pretrained("AutoModelForSequenceClassification", path, placement("cpu", "float32"))
    assert getattr(loaded.model.base_model.encoder.layer[-1], CLS_ONLY_ATTR, False)
    model_cache.clear()
