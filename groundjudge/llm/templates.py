"""Prompt templates: Jinja, sandboxed, strict, versioned by the hash of their content.

A prompt named ``NAME`` is the pair ``NAME.system.j2`` (optional) and
``NAME.user.j2``. Templates are looked up first in the user's folder
(``--prompts DIR``), then in the package's ``prompts/``, so a team can
override or add prompts without touching the code. Untrusted text (answers,
contexts) is passed as variables and placed by the templates inside the shared
``block`` of ``_blocks.j2``: a frame marked with a boundary code the text cannot
know (``boundary_code``, a hash of the block's own text), the text neutralised
first (``neutralise`` filter; see ``groundjudge.llm.boundary``). Nothing is
spliced into instructions.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from jinja2 import FileSystemLoader, StrictUndefined, TemplateNotFound, meta
from jinja2.sandbox import SandboxedEnvironment

from groundjudge.llm.boundary import boundary_code, neutralise

PACKAGE_PROMPTS = Path(__file__).resolve().parents[1] / "prompts"
"""The built-in templates."""


class TemplateError(ValueError):
    """A prompt that does not exist or does not render."""


@dataclass(frozen=True)
class RenderedPrompt:
    """Chat messages rendered from a template, with the template's identity."""

    name: str
    template_hash: str
    messages: tuple[dict[str, str], ...]


class PromptLibrary:
    """Renders prompts from a user folder (if any) over the built-in folder."""

    def __init__(self, user_dir: str | Path | None = None):
        self.search_path = [str(p) for p in (user_dir, PACKAGE_PROMPTS) if p is not None]
        self.env = SandboxedEnvironment(loader=FileSystemLoader(self.search_path), undefined=StrictUndefined,
                                        keep_trailing_newline=False, trim_blocks=True, lstrip_blocks=True,
                                        autoescape=False)
        self.env.filters["neutralise"] = neutralise
        self.env.globals["boundary_code"] = boundary_code
        self._hashes: dict[str, str] = {}
        self._file_lists: dict[str, list[str]] = {}

    def _source(self, filename: str) -> str:
        source, _, _ = self.env.loader.get_source(self.env, filename)
        return source

    def _collect(self, filename: str, seen: dict[str, str]) -> None:
        if filename in seen:
            return
        source = self._source(filename)
        seen[filename] = source
        for child in meta.find_referenced_templates(self.env.parse(source)):
            if child:
                self._collect(child, seen)

    def template_hash(self, name: str) -> str:
        """sha256 (first 16 hex) over the prompt's files and every partial they include (read once per name)."""
        if name not in self._hashes:
            self._hashes[name] = self._compute_hash(name)
        return self._hashes[name]

    def _compute_hash(self, name: str) -> str:
        seen: dict[str, str] = {}
        for filename in self._files(name):
            self._collect(filename, seen)
        digest = hashlib.sha256()
        for filename in sorted(seen):
            digest.update(filename.encode() + b"\0" + seen[filename].encode() + b"\0")
        return digest.hexdigest()[:16]

    def _files(self, name: str) -> list[str]:
        if name not in self._file_lists:
            self._file_lists[name] = self._find_files(name)
        return self._file_lists[name]

    def _find_files(self, name: str) -> list[str]:
        files = []
        for role in ("system", "user"):
            filename = f"{name}.{role}.j2"
            try:
                self._source(filename)
            except TemplateNotFound:
                continue
            files.append(filename)
        if f"{name}.user.j2" not in files:
            raise TemplateError(f"no prompt {name!r}: expected {name}.user.j2 in {', '.join(self.search_path)}")
        return files

    def record(self, name: str) -> dict:
        """The prompt's hash, the full text of each of its files (partials included) and where each was read from
        (``built-in`` or the user folder, portable): what a records header keeps."""
        from groundjudge.paths import portable_path

        seen: dict[str, str] = {}
        for filename in self._files(name):
            self._collect(filename, seen)
        origin = {}
        for filename in sorted(seen):
            _, located, _ = self.env.loader.get_source(self.env, filename)
            folder = Path(located).parent
            origin[filename] = "built-in" if folder == PACKAGE_PROMPTS else portable_path(folder)
        return {"hash": self.template_hash(name), "files": {f: seen[f] for f in sorted(seen)}, "origin": origin}

    def variables(self, name: str) -> list[str]:
        """The variables the prompt's files (and partials) read: what a judge must pass to render it."""
        seen: dict[str, str] = {}
        for filename in self._files(name):
            self._collect(filename, seen)
        found: set[str] = set()
        for source in seen.values():
            found |= meta.find_undeclared_variables(self.env.parse(source))
        return sorted(found)

    def files(self, name: str) -> list[str]:
        """The file names of a prompt and every partial it includes."""
        seen: dict[str, str] = {}
        for filename in self._files(name):
            self._collect(filename, seen)
        return sorted(seen)

    def render(self, name: str, variables: dict) -> RenderedPrompt:
        """Render the prompt's system and user messages; a missing variable is an error."""
        messages = []
        for filename in self._files(name):
            role = filename.split(".")[-2]
            try:
                text = self.env.get_template(filename).render(**variables).strip()
            except Exception as err:  # jinja raises several types; all mean "this prompt does not render"
                raise TemplateError(f"{filename}: {type(err).__name__}: {err}") from err
            messages.append({"role": role, "content": text})
        return RenderedPrompt(name=name, template_hash=self.template_hash(name), messages=tuple(messages))

    def names(self) -> list[str]:
        """Every prompt name available (user folder and built-ins)."""
        found = set()
        for folder in self.search_path:
            found.update(p.name[: -len(".user.j2")] for p in Path(folder).glob("*.user.j2"))
        return sorted(found)


@lru_cache(maxsize=8)
def prompt_library(user_dir: str | None = None) -> PromptLibrary:
    """A shared library per user folder."""
    return PromptLibrary(user_dir)
