"""dtype=auto: bfloat16 only where the CPU (or GPU) has native bf16 units and the model's verdicts on the shipped
check set agree with float32; the check's cache; its forced failure; the one-line refusal of a forced bfloat16."""

from __future__ import annotations

import importlib.util
import json
import logging
import sys

import pytest
import torch
from conftest import ROOT
from test_local_nli import tiny_model

from groundjudge.judges import SpecError, build_judge
from groundjudge.local_nli import backend_cache, backend_check, precision
from groundjudge.local_nli.backend_report import auto_summary
from groundjudge.local_nli.check_set import check_set
from groundjudge.local_nli.devices import DeviceError, placement, resolve_dtype
from groundjudge.local_nli.nli_model import NLIModel
from groundjudge.runs.placements import with_placements
from groundjudge.runs.runner import JudgeTask

INTEL_SPR = "processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 amx_bf16 amx_tile\n\nprocessor\t: 1\n"
OLD_XEON = "processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_vnni\n"
GRAVITON = "processor\t: 0\nFeatures\t: fp asimd sve bf16 i8mm\n"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh check cache in tmp_path, nothing remembered in the process, and a CPU that has AVX512-BF16
    (bfloat16 runs on any x86 CPU in torch, emulated where it is not native: fine for a tiny model)."""
    monkeypatch.setenv(backend_cache.ENV_CACHE, str(tmp_path / "backend"))
    monkeypatch.delenv(backend_check.ENV_MIN_AGREEMENT, raising=False)
    monkeypatch.setattr(precision, "machine_flags", lambda: precision.parse_flags(INTEL_SPR))
    backend_check.forget()
    yield tmp_path / "backend"
    backend_check.forget()


def test_auto_proposes_bfloat16_only_where_the_cpu_has_bf16_units():
    spr, old, arm = (precision.cpu_flags(lambda text=t: text) for t in (INTEL_SPR, OLD_XEON, GRAVITON))
    assert {"amx_bf16", "avx512_bf16"} <= spr and "avx512_vnni" in old and "bf16" in arm
    assert resolve_dtype("auto", "cpu", flags=spr) == "bfloat16"
    assert resolve_dtype("auto", "cpu", flags=precision.parse_flags("flags : fpu amx_bf16\n")) == "bfloat16"
    assert resolve_dtype("auto", "cpu", flags=old) == "float32"
    assert resolve_dtype("auto", "cpu", flags=arm) == "float32"   # only AMX / AVX512-BF16 count
    assert resolve_dtype("float32", "cpu", flags=spr) == "float32"   # a forced precision stays as given
    assert resolve_dtype("auto", "mps", flags=spr) == "float32"
    # no /proc/cpuinfo (macOS, Windows): torch's own query answers, as flags
    assert precision.cpu_flags(lambda: "") <= {"avx512_bf16", "amx_bf16"}
    assert precision.bf16_flags_seen(old) == "none" and precision.bf16_flags_seen(spr) == "amx_bf16, avx512_bf16"
    epyc = "processor\t: 0\nmodel name\t: AMD EPYC 9R14\nflags\t\t: fpu avx512f avx512_bf16\n"
    assert precision.cpu_description(lambda: epyc) == "AMD EPYC 9R14 (bf16 units: avx512_bf16)"
    assert precision.cpu_description(lambda: OLD_XEON).endswith("(bf16 units: none)")   # no model name: platform's


def test_a_forced_bfloat16_without_bf16_units_is_one_line_naming_the_setting(monkeypatch):
    with pytest.raises(DeviceError) as err:
        resolve_dtype("bfloat16", "cpu", flags=precision.parse_flags(OLD_XEON))
    message = str(err.value)
    assert "\n" not in message and message.startswith("dtype=bfloat16 was asked for")
    assert "AMX or AVX512-BF16" in message and "one of auto, float32, bfloat16, float16" in message
    monkeypatch.setattr(precision, "machine_flags", lambda: precision.parse_flags(OLD_XEON))
    for spec, setting in (("nli:dtype=bfloat16", "dtype=bfloat16"), ("nli:bf16=true", "bf16=true"),
                          ("spans:dtype=bfloat16", "dtype=bfloat16"), ("views:dtype=bfloat16", "dtype=bfloat16")):
        with pytest.raises(SpecError, match=rf"{setting} was asked for.*dtype: one of auto, float32") as err:
            build_judge(spec)   # refused when the judge is built, before anything is judged
        assert "\n" not in str(err.value)
    assert placement("cpu", "auto") == placement("cpu", "float32")   # auto is float32 there, and builds
    build_judge("nli")
    with pytest.raises(SpecError, match="float16 is not supported on CPU"):   # the older refusals stay
        build_judge("hhem:dtype=float16")
    with pytest.raises(SpecError, match="one of: auto, float32, bfloat16, float16"):
        build_judge("minicheck:dtype=int4")


def test_the_check_set_is_shipped_with_its_source_and_rebuilt_the_same(monkeypatch):
    pairs = check_set()
    assert len(pairs) == 300 and len(set(zip(pairs.premises, pairs.hypotheses))) == 300
    assert "legal_qa" in pairs.source and "SummEdits" in pairs.source and "Apache-2.0" in pairs.source
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    spec = importlib.util.spec_from_file_location("make_check_set", ROOT / "scripts" / "make_check_set.py")
    script = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "make_check_set", script)
    spec.loader.exec_module(script)
    rows = script.build()   # in memory: the script's output is the shipped file
    assert [(r["premise"], r["hypothesis"]) for r in rows] == list(zip(pairs.premises, pairs.hypotheses))
    packaged = (ROOT / "pyproject.toml").read_text()
    assert "local_nli/check_set.jsonl" in packaged


def test_the_check_picks_bfloat16_for_a_model_that_agrees_and_is_cached(cache, tmp_path, monkeypatch):
    path = tiny_model(tmp_path / "m", weight_scale=20.0)   # confident logits: bf16 gives the same argmax
    runs = []
    measure = backend_check.measure
    monkeypatch.setattr(backend_check, "measure",   # counts the checks run, each a real one
                        lambda probe, verdicts: runs.append(probe) or measure(probe, verdicts))
    model = NLIModel(path)
    assert model.placement.dtype == "bfloat16" and next(model.model.parameters()).dtype == torch.bfloat16
    assert len(runs) == 1 and "agrees with float32 on 100.0% of 300" in model.placement.note
    [record] = backend_cache.entries()
    assert record.agreement == 1.0 and record.pairs == 300 and record.dtype == "bfloat16" and record.seconds > 0
    assert record.torch == torch.__version__ and record.model.startswith(str(tmp_path / "m"))
    stored = json.loads(next(cache.glob("*.json")).read_text())
    assert stored["rule"] == "nli-argmax:[]" and stored["check_set"] == check_set().digest
    from groundjudge.local_nli import model_cache

    assert model_cache.load_count(path) == 1   # the check's float32 and bfloat16 loads were private
    # a second resolution, in a new process as far as the check knows: read from disk, the model not run
    backend_check.forget()
    again = NLIModel(path, batch_size=4)
    assert len(runs) == 1 and again.placement.dtype == "bfloat16" and again.placement.note.endswith(", cached")
    # another torch, CPU or precision is another key: checked again
    newer = INTEL_SPR.replace("amx_tile", "amx_tile avx512_fp16")
    monkeypatch.setattr(precision, "machine_flags", lambda: precision.parse_flags(newer))
    backend_check.forget()
    NLIModel(path, batch_size=5)
    assert len(runs) == 2 and len(backend_cache.entries()) == 2
    assert any("agrees with float32 on 100.0% of 300 -> bfloat16" in line for line in auto_summary())


_OTHER_PROCESS = """
import sys
from pathlib import Path
from groundjudge.local_nli import backend_check
from groundjudge.local_nli.devices import Placement

def verdicts(dtype):   # a check run here would leave this mark
    Path(sys.argv[1]).write_text("measured here")
    return ["entailment"] * 3

Path(sys.argv[1] + ".started").write_text("")
record, cached = backend_check.measured("no-such-model", "nli-argmax:[]", Placement("cpu", "bfloat16"), verdicts)
print(cached, record.agreement, record.seconds)
"""


@pytest.mark.slow
def test_a_second_process_waits_for_the_check_another_runs_and_reads_its_record(tmp_path, monkeypatch):
    """Two processes resolving dtype=auto for one model at once (Ray actors, service workers): the one that starts
    second blocks on the check's file lock, then reads the first one's record instead of measuring again."""
    import os
    import subprocess
    import time
    from pathlib import Path

    monkeypatch.setenv(backend_cache.ENV_CACHE, str(tmp_path / "backend"))
    probe = backend_cache.CheckRecord(
        model=backend_cache.model_identity("no-such-model"), rule="nli-argmax:[]", device="cpu",
        machine=backend_cache.machine_identity("cpu"), torch=torch.__version__, dtype="bfloat16",
        check_set=check_set().digest, pairs=0, agreement=0.0, seconds=0.0, measured_at="")
    key, mark = backend_cache.record_key(probe), tmp_path / "mark"
    with backend_cache.locked(key) as held:   # this process is "checking" the model
        assert held
        other = subprocess.Popen([sys.executable, "-c", _OTHER_PROCESS, str(mark)], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=dict(os.environ))
        started = Path(f"{mark}.started")
        for _ in range(300):   # bounded: up to 60 s for the other process to import groundjudge and get here
            if started.exists() or other.poll() is not None:
                break
            time.sleep(0.2)
        time.sleep(1.0)   # past the cache read, at the lock
        assert other.poll() is None and not mark.exists()   # waiting, not measuring
        backend_cache.write(probe.model_copy(update={"pairs": 300, "agreement": 0.997, "seconds": 12.5,
                                                     "measured_at": "2026-11-28T00:00:00+00:00"}))
    out, err = other.communicate(timeout=60)
    assert other.returncode == 0, err
    assert out.split() == ["True", "0.997", "12.5"] and not mark.exists()   # read the record, ran no check
    # with nobody holding the lock and no record, the other process measures (the mark shows it)
    for file in (tmp_path / "backend").glob("*.json"):
        file.unlink()
    done = subprocess.run([sys.executable, "-c", _OTHER_PROCESS, str(mark)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout.split()[:2] == ["False", "1.0"] and mark.exists(), done.stderr


def test_a_failed_check_falls_back_to_float32_with_one_warning(cache, tmp_path, monkeypatch, caplog):
    path = tiny_model(tmp_path / "m", weight_scale=20.0)
    monkeypatch.setenv(backend_check.ENV_MIN_AGREEMENT, "1.001")   # a bar no measurement reaches: a real failure
    with caplog.at_level(logging.WARNING, logger="groundjudge.local_nli.backend_check"):
        model = NLIModel(path)
        NLIModel(path, batch_size=3)   # the same model again: no second warning
    assert model.placement.dtype == "float32" and next(model.model.parameters()).dtype == torch.float32
    [warning] = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert "\n" not in warning and "agrees with float32 on only 100.0% of 300" in warning
    assert "bar 100.1%" in warning and "so float32" in warning
    # the measurement is cached, the bar applied when it is read: back at 99% the same record passes
    monkeypatch.delenv(backend_check.ENV_MIN_AGREEMENT)
    backend_check.forget()
    assert NLIModel(path, batch_size=2).placement.dtype == "bfloat16"
    monkeypatch.setenv(backend_check.ENV_MIN_AGREEMENT, "most")
    with pytest.raises(DeviceError, match="GROUNDJUDGE_AUTO_MIN_AGREEMENT='most' is not a share"):
        NLIModel(path, batch_size=6)


def test_int8_and_onnx_stay_float32_and_opt_in(cache, tmp_path):
    path = tiny_model(tmp_path / "m", weight_scale=20.0)
    quantised = NLIModel(path, int8=True)
    assert quantised.placement.dtype == "float32" and "int8 runs float32" in quantised.placement.note
    assert backend_cache.entries() == []   # nothing to check


def test_the_run_header_says_where_each_local_judge_runs(cache, tmp_path):
    path = tiny_model(tmp_path / "m", weight_scale=20.0)
    judges = [build_judge(spec) for spec in (f"nli:model={path},top_k=1", f"nli:model={path},dtype=float32",
                                             "quip")]
    specs = with_placements([JudgeTask(s.spec, j) for j, s in judges], [s for _, s in judges], quiet=True)
    assert specs[0].runs_on.startswith("cpu bfloat16 (dtype=auto: bfloat16 agrees with float32 on 100.0% of 300")
    assert specs[1].runs_on == "cpu float32" and specs[2].runs_on is None
    ray = with_placements([JudgeTask(s.spec, j) for j, s in judges], [s for _, s in judges], "ray", quiet=True)
    assert ray[0].runs_on == "chosen on each Ray worker's machine" and ray[2].runs_on is None
