"""Instruction candidates written by a proposer model from the judge's mistakes on the optimise part.

The proposer (any litellm model) is shown the judge's main prompt and the answers it judged wrongly on the fit
part (in data blocks, like every judged text) through the ``tune_propose`` template, and replies with a paragraph
of guidance. A reply is kept only as plain text (no template syntax, no block tags, 20 to 2,000 characters); it is
written into a prompt folder as that prompt's system template with the guidance inserted after its imports,
inside ``{% raw %}``, and the folder must render. Each proposal is its own sampled call (cached per sample
index), so a resumed tune gets the same proposals without a call.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from groundjudge.llm import LLMSettings, ProviderError
from groundjudge.llm.templates import PromptLibrary, TemplateError
from groundjudge.tune.spec import InstructionsLever
from groundjudge.types import Example

MAX_DOC_CHARS = 2000
"""Characters of each document shown to the proposer per mistake."""
_FORBIDDEN = re.compile(r"\{\{|\{%|\{#|%\}|boundary=|</?(?:document|answer|question|instructions)\b", re.I)
_IMPORT = re.compile(r"^\s*\{%-?\s*(?:from|import)\b.*?%\}\s*$")


class Proposal(BaseModel):
    """The proposer's reply."""

    guidance: str = Field(json_schema_extra={"maxLength": 2000})


def target_template(judge: Any) -> str:
    """The judge's prompt a proposal rewrites: its verification or yes/no prompt, else its first."""
    names = list(judge.template_names())
    return next((n for n in names if "verify" in n or "yesno" in n), names[0])


def valid_guidance(text: str) -> str | None:
    """The guidance stripped, or None when it is not plain text of a usable length."""
    text = text.strip()
    if not 20 <= len(text) <= 2000 or _FORBIDDEN.search(text) or "endraw" in text:
        return None
    return text


def _with_guidance(source: str, guidance: str) -> str:
    lines = source.splitlines()
    cut = 0
    while cut < len(lines) and (_IMPORT.match(lines[cut]) or not lines[cut].strip()):
        cut += 1
    inserted = ["Guidance from earlier mistakes: {% raw %}" + guidance + "{% endraw %}", ""]
    return "\n".join(lines[:cut] + inserted + lines[cut:]) + "\n"


def write_proposal(folder: Path, judge: Any, guidance: str, example: Example) -> Path:
    """A prompt folder: the judge's own folder (if any) with the target prompt's system template carrying the
    guidance; it must render on ``example`` with the guidance in it (else TemplateError)."""
    name = target_template(judge)
    if folder.exists():
        shutil.rmtree(folder)
    if getattr(judge, "prompts", None):
        shutil.copytree(judge.prompts, folder)
    folder.mkdir(parents=True, exist_ok=True)
    files = judge.library.record(name)["files"]
    source = files.get(f"{name}.system.j2", "")
    (folder / f"{name}.system.j2").write_text(_with_guidance(source, guidance), encoding="utf-8")
    variables = {"question": example.question, "context": list(example.context), "answer": example.answer,
                 "demos": [], "claims": [example.answer], "claim": example.answer, "facts": None,
                 "evidence": list(example.context)}
    rendered = PromptLibrary(folder).render(name, variables)
    if guidance not in rendered.messages[0]["content"]:
        raise TemplateError(f"{folder}: the guidance does not show in {name}.system.j2")
    return folder


def mistakes_shown(examples: Sequence[Example], verdicts: Sequence[str], limit: int) -> list[dict]:
    """The wrongly judged answers as the proposer's template reads them (documents shortened)."""
    shown = []
    for example, said in zip(examples, verdicts):
        if said != example.label and len(shown) < limit:
            shown.append({"said": said, "gold": example.label, "question": example.question,
                          "context": [doc[:MAX_DOC_CHARS] for doc in example.context], "answer": example.answer})
    return shown


async def propose(service: Any, lever: InstructionsLever, judge: Any, mistakes: list[dict], index: int,
                  calls: list) -> str | None:
    """One proposal's guidance (None when the reply is unusable or the provider failed)."""
    settings = LLMSettings(model=lever.proposer, api_base=lever.proposer_api_base, temperature=lever.temperature,
                           max_tokens=400)
    instructions = judge.library.record(target_template(judge))["files"]
    text = "\n\n".join(instructions[k] for k in sorted(instructions) if not k.startswith("_"))
    try:
        parsed = await service.complete(settings, "tune_propose", {"instructions": text, "mistakes": mistakes},
                                        Proposal, calls, sample_index=index)
    except ProviderError:
        return None
    return valid_guidance(parsed.guidance) if parsed is not None else None
