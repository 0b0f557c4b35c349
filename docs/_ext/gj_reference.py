"""Sphinx extension: the reference pages generated from the code at build time, and links into the repository.

Directives (usable from MyST as ```` ```{gj-cli} ```` etc.):

* ``gj-cli`` -- every verb of the ``groundjudge`` command, from the argparse parsers of ``groundjudge/cli/``;
* ``gj-judges`` -- every judge kind's settings with type, default and choices, from the typed pydantic configs
  (``groundjudge.judges.config.config_model``);
* ``gj-model MODULE:CLASS`` -- the fields of a pydantic model (records, summary) with type, default and description;
* ``gj-pages`` -- a toctree of the pages that exist among glob patterns (or a sentence saying there are none yet).

Links: a Markdown link to a file of the repository outside ``docs/`` (``[x](../results/README.md)``) becomes a
link to that file -- under ``gj_repo_url`` when set (``GROUNDJUDGE_REPO_URL``), else relative to the built page,
so it opens the checkout's file -- and a link to a file that does not exist is a build warning (an error under -W).
"""

from __future__ import annotations

import argparse
import enum
import importlib
import os
import typing
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx import addnodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

LOG = logging.getLogger(__name__)


def _cell(text: object) -> str:
    """A value as one cell of a Markdown table: inline code, one line, pipes escaped."""
    value = " ".join(str(text).split())
    if not value:
        return ""
    code = f"`` {value} ``" if "`" in value else f"`{value}`"
    return code.replace("|", "\\|")


def _prose(text: str | None) -> str:
    """Help text as one Markdown line (pipes, angle brackets and emphasis marks escaped)."""
    text = " ".join((text or "").split())
    for char in ("\\", "|", "<", ">", "*", "_", "[", "]"):
        text = text.replace(char, "\\" + char)
    return text


def _type_name(annotation: object) -> str:
    """A readable name of a type annotation (``int | None``, ``Literal['a', 'b']`` as ``str``)."""
    if typing.get_origin(annotation) is typing.Literal:
        return "choice"
    if isinstance(annotation, type):
        return annotation.__name__
    text = str(annotation).replace("typing.", "")
    for prefix in ("groundjudge.types.", "groundjudge.runs.summary_model.", "pydantic.main."):
        text = text.replace(prefix, "")
    return text


def _choices(annotation: object) -> list[str]:
    """The values a Literal (also inside a union or a tuple) allows."""
    if typing.get_origin(annotation) is typing.Literal:
        return [str(v) for v in typing.get_args(annotation)]
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return [str(m.value) for m in annotation]
    found: list[str] = []
    for inner in typing.get_args(annotation):
        found += [c for c in _choices(inner) if c not in found]
    return found


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown (GFM) table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines + [""]


class _Generated(SphinxDirective):
    """A directive whose body is MyST Markdown generated from the code."""

    def generated(self) -> list[str]:
        """The Markdown lines to parse in place of the directive."""
        raise NotImplementedError

    def run(self) -> list[nodes.Node]:
        """Parse the generated Markdown (sections included) into the page."""
        node = nodes.section()
        node.document = self.state.document
        source = self.get_source_info()[0]
        nested_parse_with_titles(self.state, StringList(self.generated(), source=source), node)
        return node.children


def _options_defaults(parser: argparse.ArgumentParser) -> dict[str, typing.Any]:
    """The defaults of the pydantic options model a verb fills from its flags (``set_defaults(options_model=
    "module:Class")``): its flags default to None so that a flag not given leaves the model's default (or an
    experiment file's value) in place, and the reference shows the model's."""
    where = parser.get_default("options_model")
    if not where:
        return {}
    module, name = where.split(":")
    model = getattr(importlib.import_module(module), name)
    return {key: field.default for key, field in model.model_fields.items()
            if not field.is_required() and field.default_factory is None}


def _option_rows(parser: argparse.ArgumentParser) -> list[list[str]]:
    rows = []
    model_defaults = _options_defaults(parser)
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        name = ", ".join(action.option_strings) or action.metavar or action.dest
        given = model_defaults.get(action.dest) if action.default is None else action.default
        default = "" if given is None or given is False or given == argparse.SUPPRESS or not action.option_strings \
            else given
        choices = ", ".join(str(c) for c in action.choices) if action.choices else ""
        rows.append([_cell(name), _cell(default), _cell(choices), _prose(action.help)])
    return rows


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser, str]]:
    """A parser's sub-commands (name, parser, help), each once: an alias names a parser already listed."""
    found: list[tuple[str, argparse.ArgumentParser, str]] = []
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {choice.dest: choice.help for choice in action._choices_actions}
        seen: set[int] = set()
        for name, sub_parser in action.choices.items():
            if id(sub_parser) not in seen:
                seen.add(id(sub_parser))
                found.append((name, sub_parser, helps.get(name) or ""))
    return found


def _command_lines(command: str, parser: argparse.ArgumentParser, help_text: str, depth: int) -> list[str]:
    """The section of one command (a heading one level deeper per level of nesting: ``groundjudge
    label-benchmark draw`` under ``groundjudge label-benchmark``), then those of its sub-commands, at any depth."""
    lines = ["#" * min(depth + 1, 6) + f" {command}", ""]
    lines += [_prose(parser.description or help_text), "", "```text"]
    lines += parser.format_usage().strip().splitlines() + ["```", ""]
    rows = _option_rows(parser)
    if rows:
        lines += _table(["argument", "default", "choices", "what it does"], rows)
    subcommands = _subcommands(parser)
    if subcommands:
        lines += ["Sub-commands: " + "; ".join(f"`{name}` ({_prose(text)})" if text else f"`{name}`"
                                               for name, _, text in subcommands) + ".", ""]
    for name, sub_parser, text in subcommands:
        lines += _command_lines(f"{command} {name}", sub_parser, text, depth + 1)
    return lines


def cli_reference(parser: argparse.ArgumentParser) -> list[str]:
    """The command reference as MyST Markdown: a section per verb of ``parser`` and per sub-command of a verb,
    nested at any depth."""
    lines = ["Options of every verb: `-v` / `--verbose` before the verb logs more.", ""]
    for verb, verb_parser, text in _subcommands(parser):
        lines += _command_lines(f"{parser.prog} {verb}", verb_parser, text, 1)
    return lines


class CliDirective(_Generated):
    """Every verb of the ``groundjudge`` command, and every sub-command of a verb, with its usage and options, from
    the argparse parsers."""

    def generated(self) -> list[str]:
        """One section per verb and sub-command."""
        from groundjudge.cli import build_parser

        return cli_reference(build_parser())


class JudgesDirective(_Generated):
    """Every judge kind's settings, from the typed configs the runs check them with."""

    def generated(self) -> list[str]:
        """One section per judge kind."""
        from groundjudge.judges import load_builtin_judges
        from groundjudge.judges.config import config_model

        lines: list[str] = []
        for kind, cls in sorted(load_builtin_judges().items()):
            model = config_model(kind)
            doc = (cls.__doc__ or "").strip().splitlines()
            lines += [f"`{kind}`", "-" * (len(kind) + 2), "",
                      _prose(doc[0] if doc else ""), ""]
            rows = []
            for key, field in model.model_fields.items():
                default = "(required)" if field.is_required() else field.default
                rows.append([_cell(key), _cell(_type_name(field.annotation)), _cell(default),
                             _cell(", ".join(_choices(field.annotation)))])
            lines += _table(["setting", "type", "default", "choices"], rows) if rows \
                else ["No settings.", ""]
        return lines


class ModelDirective(_Generated):
    """The fields of one pydantic model: name, type, default, description."""

    required_arguments = 1

    def generated(self) -> list[str]:
        """A table of the model's fields under its docstring."""
        import importlib

        module_name, _, class_name = self.arguments[0].partition(":")
        model = getattr(importlib.import_module(module_name), class_name)
        doc = " ".join((model.__doc__ or "").split())
        lines = [f"`{class_name}`", "-" * (len(class_name) + 2), "",
                 _prose(doc), "", f"Defined in `{module_name}`.", ""]
        rows = []
        for key, field in model.model_fields.items():
            if field.is_required():
                default = "(required)"
            elif field.default_factory is not None:
                default = field.default_factory()
            else:
                default = field.default
            rows.append([_cell(field.alias or key), _cell(_type_name(field.annotation)), _cell(default),
                         _prose(field.description)])
        return lines + _table(["field", "type", "default", "description"], rows)


class PagesDirective(_Generated):
    """A toctree of the pages that exist among the patterns given (the argument and the content lines, each a glob
    relative to this page, in order), or a line saying there are none yet: a page other contributors add later
    (``tuning.md``, ``integrations/*.md``) joins the navigation by itself and never breaks the strict build."""

    has_content = True
    optional_arguments = 1
    option_spec = {"caption": directives.unchanged}

    def generated(self) -> list[str]:
        """The toctree, or the fallback sentence."""
        here = (Path(self.env.srcdir) / self.env.docname).parent
        entries: list[str] = []
        for pattern in [*self.arguments, *(line.strip() for line in self.content if line.strip())]:
            for path in sorted(here.glob(pattern)):
                entry = os.path.relpath(path.with_suffix(""), here).replace(os.sep, "/")
                if entry not in entries:
                    entries.append(entry)
        if not entries:
            return ["No pages here yet.", ""]
        caption = [f":caption: {self.options['caption']}"] if "caption" in self.options else []
        return ["```{toctree}", *caption, ":maxdepth: 1", "", *entries, "```", ""]


def _repo_link(app, docname: str, target: Path) -> str:
    """The URL of a repository file seen from a built page."""
    rel = target.relative_to(app.config.gj_repo_root).as_posix()
    if app.config.gj_repo_url:
        return f"{app.config.gj_repo_url.rstrip('/')}/{rel}"
    page_dir = (Path(app.outdir) / docname).parent
    return Path(os.path.relpath(target, page_dir)).as_posix()


def _outside_docs(app, path: Path) -> bool:
    srcdir = Path(app.srcdir).resolve()
    return srcdir not in path.resolve().parents and path.resolve() != srcdir


def link_repository_files(app, doctree: nodes.document) -> None:
    """Turn links to repository files outside docs/ into links to the files; warn on a missing one."""
    docname = app.env.docname
    here = (Path(app.srcdir) / docname).parent
    for node in list(doctree.findall(addnodes.pending_xref)) + list(doctree.findall(addnodes.download_reference)):
        if node.get("reftype") not in ("myst", "download"):
            continue
        raw = node.get("reftarget", "")
        if not raw or "://" in raw:
            continue
        path = Path(raw) if os.path.isabs(raw) else here / raw
        if not _outside_docs(app, path):
            continue
        candidates = [path, path.with_name(path.name + ".md")]
        found = next((c.resolve() for c in candidates if c.exists()), None)
        anchor = node.get("reftargetid")
        if found is None or Path(app.config.gj_repo_root) not in found.parents:
            LOG.warning("link to a repository file that does not exist: %s", raw, location=node,
                        type="gj", subtype="repo_link")
            continue
        uri = _repo_link(app, docname, found) + (f"#{anchor}" if anchor else "")
        ref = nodes.reference("", "", *node.children, refuri=uri, internal=False)
        for child in ref.findall(nodes.literal):
            child["classes"] = [c for c in child["classes"] if c != "xref"]
        node.replace_self(ref)


def setup(app):
    """Register the directives, the link rewriting and their settings."""
    app.add_config_value("gj_repo_root", str(Path(__file__).resolve().parents[2]), "env")
    app.add_config_value("gj_repo_url", os.environ.get("GROUNDJUDGE_REPO_URL", ""), "env")
    app.add_directive("gj-cli", CliDirective)
    app.add_directive("gj-judges", JudgesDirective)
    app.add_directive("gj-model", ModelDirective)
    app.add_directive("gj-pages", PagesDirective)
    app.connect("doctree-read", link_repository_files)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
