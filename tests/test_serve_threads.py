"""``serve --torch-threads N`` holds once a model loads: every loader sets torch's threads to ``torch_threads()``
when it loads (lazily, at warm-up), which used to put them back to one per core."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from groundjudge.local_nli.model import load_embedder, torch_threads  # noqa: E402
from groundjudge.serve.loading import set_torch_threads  # noqa: E402


def test_torch_threads_stay_as_asked_after_a_model_loads(monkeypatch):
    monkeypatch.delenv("GROUNDJUDGE_THREADS", raising=False)
    before = torch.get_num_threads()
    try:
        set_torch_threads(1)
        assert torch_threads() == 1
        load_embedder.cache_clear()
        load_embedder("sentence-transformers/all-MiniLM-L6-v2")   # the on-disk MiniLM: sets torch's threads
        assert torch.get_num_threads() == 1
    finally:
        load_embedder.cache_clear()
        torch.set_num_threads(before)
