"""Device, precision, out-of-memory back-off and label mapping shared by every local judge."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
import torch
from test_local_nli import tiny_model

from groundjudge.judges import SpecError, build_judge
from groundjudge.local_nli import model_cache
from groundjudge.local_nli.devices import (DeviceError, is_out_of_memory, placement, resolve_device, resolve_dtype,
                                           run_in_batches)
from groundjudge.local_nli.model import ModelUnavailable
from groundjudge.local_nli.nli_model import CONTRADICTION, ENTAILMENT, NEUTRAL, LabelMapError, NLIModel, map_labels
from groundjudge.local_nli.precision import native_bf16_cpu
from groundjudge.types import Example

NO_GPU = not torch.cuda.is_available() and not torch.backends.mps.is_available()
EXAMPLE = Example(id="x", context=["The deposit is returned within 30 days. Pets are not allowed."],
                  answer="The deposit comes back within 30 days. Pets are fine.")


@pytest.mark.skipif(not NO_GPU, reason="auto picks the accelerator on a machine that has one")
def test_auto_is_cpu_here_and_an_absent_gpu_is_a_clear_error():
    assert resolve_device("auto") == "cpu" and placement().device == "cpu"
    assert placement("auto", "float32") == placement("cpu", "float32")
    with pytest.raises(DeviceError, match=r"device=cuda .* sees no CUDA GPU.*device=auto or device=cpu"):
        resolve_device("cuda")
    with pytest.raises(DeviceError, match="MPS"):
        resolve_device("mps")
    with pytest.raises(SpecError, match=r"judge 'nli'.*device=cuda"):
        build_judge("nli:device=cuda")
    for kind in ("hhem", "minicheck", "spans", "crossencoder:model=x"):
        with pytest.raises(SpecError, match="device=cuda"):
            build_judge(f"{kind}{',' if ':' in kind else ':'}device=cuda")


def test_precision_rules():
    with pytest.raises(DeviceError, match=r"float16 is not supported on CPU.*bfloat16"):
        resolve_dtype("float16", "cpu")
    assert resolve_dtype("float16", "cuda") == "float16"
    assert resolve_dtype("float32", "cpu", bf16=True, flags=frozenset({"avx512_bf16"})) == "bfloat16"
    with pytest.raises(DeviceError, match="contradict"):
        resolve_dtype("float16", "cuda", bf16=True)
    with pytest.raises(DeviceError, match="unknown device"):
        resolve_device("tpu")
    if NO_GPU:
        with pytest.raises(SpecError, match="float16"):
            build_judge("spans:dtype=float16")
    with pytest.raises(SpecError, match="one of: auto, float32, bfloat16, float16"):
        build_judge("hhem:dtype=int4")


class Limited:
    """A workload that runs out of memory for batches over ``limit`` items (as a GPU would)."""

    def __init__(self, limit: int, error: BaseException | None = None):
        self.limit, self.done, self.tries = limit, [], []
        self.error = error or torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    def __call__(self, index):
        self.tries.append(len(index))
        if len(index) > self.limit:
            raise self.error
        self.done.extend(index)


def test_out_of_memory_halves_the_batch_down_to_one():
    work = Limited(3)
    assert run_in_batches(list(range(10)), 16, work) == 2
    assert work.tries == [10, 8, 4, 2, 2, 2, 2, 2]   # 16 -> 8 -> 4 -> 2, then the rest at 2
    assert work.done == list(range(10))   # every item once, in order
    work = Limited(1, RuntimeError("MPS backend out of memory (MPS allocated: 9 GiB)"))
    assert run_in_batches(list(range(5)), 8, work) == 1 and work.done == list(range(5))
    with pytest.raises(torch.OutOfMemoryError):   # even one item does not fit: nothing left to halve
        run_in_batches([0, 1], 4, Limited(0))
    with pytest.raises(RuntimeError, match="shape mismatch"):   # not memory: raised at once, not retried
        run_in_batches([0, 1], 4, Limited(0, RuntimeError("shape mismatch")))
    assert is_out_of_memory(torch.OutOfMemoryError("x")) and not is_out_of_memory(ValueError("out of memory"))


def test_nli_model_backs_off_and_keeps_the_smaller_batch(tmp_path, monkeypatch):
    model = NLIModel(tiny_model(tmp_path / "m", weight_scale=20.0), batch_size=8, dtype="float32")
    premises = [f"Premise number {i} " + "word " * i for i in range(9)]
    hypotheses = [f"Claim {i}." for i in range(9)]
    reference = model.score_pairs(premises, hypotheses)
    forward = model.model.forward

    def small_memory(**batch):
        if batch["input_ids"].shape[0] > 2:
            raise torch.OutOfMemoryError("CUDA out of memory")
        return forward(**batch)

    monkeypatch.setattr(model.model, "forward", small_memory)
    assert np.allclose(model.score_pairs(premises, hypotheses), reference, atol=1e-5)
    assert model.batch_size == 2


def test_labels_setting_maps_any_checkpoint():
    assert map_labels({0: "LABEL_0", 1: "LABEL_1"}, ["not_supported", "supported"]) == {0: CONTRADICTION, 1: ENTAILMENT}
    assert map_labels({0: "LABEL_0", 1: "LABEL_1"}, ["contradiction", "entailment"]) == {0: CONTRADICTION,
                                                                                          1: ENTAILMENT}
    assert map_labels({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}, ["entailment", "neutral", "contradiction"]) == {
        0: ENTAILMENT, 1: NEUTRAL, 2: CONTRADICTION}
    # a two-label model is entailment vs not-entailment, whatever the other label is called
    assert map_labels({0: "neutral", 1: "entailment"}) == {0: CONTRADICTION, 1: ENTAILMENT}
    assert map_labels({0: "LABEL_0", 1: "LABEL_1"}, ["entailment", "not_enough_info"]) == {0: ENTAILMENT,
                                                                                            1: CONTRADICTION}
    with pytest.raises(LabelMapError, match=r"labels=\[not_supported,supported\]"):
        map_labels({0: "LABEL_0", 1: "LABEL_1"})
    with pytest.raises(LabelMapError, match="names 3 labels but the model has 2"):
        map_labels({0: "LABEL_0", 1: "LABEL_1"}, ["a", "b", "c"])
    assert issubclass(LabelMapError, ModelUnavailable) and issubclass(LabelMapError, ValueError)   # stops a run
    with pytest.raises(LabelMapError, match="exactly one entailment-like"):
        map_labels({0: "LABEL_0", 1: "LABEL_1"}, ["supported", "entailment"])


def test_nli_judge_with_labels_on_a_label_0_label_1_checkpoint(tmp_path):
    path = tiny_model(tmp_path / "factkb", bias=(0.0, 6.0), id2label={0: "LABEL_0", 1: "LABEL_1"})
    with pytest.raises(LabelMapError, match="labels="):
        asyncio.run(build_judge(f"nli:model={path}")[0].judge(EXAMPLE))
    judge, spec = build_judge(f"nli:model={path},labels=[not_supported, supported],top_k=1")
    assert spec.settings["labels"] == ["not_supported", "supported"]
    result = asyncio.run(judge.judge(EXAMPLE))
    assert [c.label for c in result.verdict.claims] == ["supported", "supported"]
    flipped = asyncio.run(build_judge(f"nli:model={path},labels=[supported, not_supported],top_k=1")[0].judge(EXAMPLE))
    assert [c.label for c in flipped.verdict.claims] == ["contradicted", "contradicted"]


@pytest.mark.skipif(not native_bf16_cpu(), reason="bfloat16 is refused on a CPU without AMX / AVX512-BF16")
def test_bf16_and_dtype_are_one_setting_and_int8_still_works(tmp_path):
    path = tiny_model(tmp_path / "m", bias=(0.0, 6.0, 0.0))
    old, _ = build_judge(f"nli:model={path},bf16=true,top_k=1")
    new, _ = build_judge(f"nli:model={path},dtype=bfloat16,top_k=1")
    assert old.engine().model is new.engine().model   # one load for the two spellings
    assert next(new.engine().model.parameters()).dtype == torch.bfloat16
    assert model_cache.load_count(path) == 1
    assert asyncio.run(old.judge(EXAMPLE)).verdict.label == "grounded"
    quantised, _ = build_judge(f"nli:model={path},int8=true,top_k=1")
    assert "quantized" in type(quantised.engine().model.bert.encoder.layer[0].attention.self.query).__module__
    assert asyncio.run(quantised.judge(EXAMPLE)).verdict.label == "grounded"
    crossencoder, _ = build_judge(f"crossencoder:model={path},bf16=true,top_k=1")
    assert crossencoder.engine().model is new.engine().model
    with pytest.raises(SpecError, match="contradict"):
        build_judge(f"nli:model={path},bf16=true,dtype=float16")


def test_planned_slices_are_followed_and_still_halved_on_out_of_memory():
    work = Limited(100)
    assert run_in_batches(list(range(10)), 4, work, sizes=[3, 4, 1, 2]) == 4
    assert work.tries == [3, 4, 1, 2] and work.done == list(range(10))
    work = Limited(2)   # a planned slice of 3 under a size of 8: the slice itself is halved
    assert run_in_batches(list(range(7)), 8, work, sizes=[3, 4]) == 2
    assert work.tries == [3, 2, 1, 2, 2] and work.done == list(range(7))
