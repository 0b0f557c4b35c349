"""``groundjudge prompts``: the built-in templates (which judge renders which, the variables each receives),
and ``--copy-to DIR`` to start a variant from the real template."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from rich.table import Table
from rich.text import Text

from groundjudge.cli.common import UsageError, stdout_console
from groundjudge.judges import load_builtin_judges
from groundjudge.llm.templates import PACKAGE_PROMPTS, PromptLibrary


def template_users() -> dict[str, list[str]]:
    """Prompt name -> the judge kinds that render it."""
    users: dict[str, list[str]] = {}
    for kind, cls in sorted(load_builtin_judges().items()):
        for name in getattr(cls, "TEMPLATES", ()):
            users.setdefault(name, []).append(kind)
    return users


def copy_prompts(names: list[str], target: Path, library: PromptLibrary | None = None) -> list[Path]:
    """Copy the named built-in prompts (all when ``names`` is empty) and the partials they include into
    ``target``; an existing file there is left alone (returned only when written)."""
    library = library or PromptLibrary()
    known = library.names()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(f"no prompt {unknown[0]!r}; prompts: {', '.join(known)}")
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for filename in sorted({f for name in (names or known) for f in library.files(name)}):
        destination = target / filename
        if destination.exists():
            continue
        shutil.copyfile(PACKAGE_PROMPTS / filename, destination)
        written.append(destination)
    return written


def cmd_prompts(args: argparse.Namespace) -> int:
    """List the built-in prompts, or copy them out."""
    console = stdout_console()
    if args.copy_to:
        target = Path(args.copy_to)
        written = copy_prompts(args.names, target)
        kept = len({f for n in (args.names or PromptLibrary().names()) for f in PromptLibrary().files(n)}) \
            - len(written)
        console.print(f"copied {len(written)} file(s) to {target}" + (f" ({kept} already there, kept)" if kept else ""))
        console.print("edit them, then give the folder to a judge: prompts = \"DIR\" in an experiment, "
                      f"or --judge 'claims:prompts={target}'", soft_wrap=True)
        return 0
    if args.names:
        raise UsageError("prompt names go with --copy-to DIR")
    library, users = PromptLibrary(), template_users()
    table = Table(title=f"built-in prompts ({PACKAGE_PROMPTS.name}/)")
    for column in ("prompt", "judges", "files", "variables"):
        table.add_column(column)
    for name in library.names():
        table.add_row(name, ", ".join(users.get(name, [])) or "-", Text("\n".join(library.files(name))),
                      ", ".join(library.variables(name)))
    console.print(table)
    return 0


def add_parser(verbs) -> None:
    """Add the ``prompts`` verb."""
    prompts = verbs.add_parser("prompts", help="list the built-in prompt templates, or copy them out to edit")
    prompts.add_argument("names", nargs="*", metavar="NAME", help="prompts to copy (default: all)")
    prompts.add_argument("--copy-to", metavar="DIR", help="copy the templates (and their partials) into DIR")
    prompts.set_defaults(func=cmd_prompts)
