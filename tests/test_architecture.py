"""The package's shape, read from its source (no import): short signatures, an engine that does not reach up into
the command line or the report, and a docstring on every public function and class."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "groundjudge"
MAX_PARAMETERS = 8
"""Most parameters a function may take (self / cls not counted; *args, **kwargs and keyword-only ones counted)."""
ENGINE = ("runs", "judges", "llm", "local_nli", "formats")
"""Subpackages that are the engine: they serve the faces (CLI, report) and must not import them."""
FACES = ("groundjudge.cli", "groundjudge.report")
"""Modules the engine must not import."""


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _name(path: Path) -> str:
    return path.relative_to(PACKAGE.parent).as_posix()


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _parameter_count(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> int:
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    if positional and positional[0].arg in ("self", "cls"):
        positional = positional[1:]
    return len(positional) + len(args.kwonlyargs) + (args.vararg is not None) + (args.kwarg is not None)


def test_no_function_takes_more_than_eight_parameters() -> None:
    too_many = [f"{_name(path)}:{node.lineno} {getattr(node, 'name', 'lambda')} ({_parameter_count(node)})"
                for path in _modules() for node in ast.walk(_tree(path))
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                and _parameter_count(node) > MAX_PARAMETERS]
    assert not too_many, f"functions with more than {MAX_PARAMETERS} parameters:\n" + "\n".join(too_many)


def _package_of(path: Path) -> str:
    """The dotted package a module file is in (``groundjudge.runs`` for runs/execute.py and runs/__init__.py)."""
    return ".".join(path.relative_to(PACKAGE.parent).parts[:-1])


def _imported_modules(tree: ast.Module, package: str) -> Iterator[tuple[int, str]]:
    """Every module an import statement of the module names (inside functions too), relative ones made absolute
    against its ``package``; ``from package import name`` yields ``package.name`` as well (it may be a module)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = ".".join(parts[:len(parts) - node.level + 1])
                base = f"{anchor}.{base}" if base else anchor
            yield node.lineno, base
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def _is_under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_the_import_check_sees_relative_and_nested_imports() -> None:
    source = ("from .. import cli\nfrom ..report.tables import TextTable\n"
              "def late():\n    import groundjudge.cli.common\n")
    found = {module for _, module in _imported_modules(ast.parse(source), "groundjudge.runs")}
    assert {"groundjudge.cli", "groundjudge.report.tables", "groundjudge.cli.common"} <= found


def test_the_parameter_count_skips_self_and_counts_the_rest() -> None:
    method = ast.parse("def f(self, a, /, b, *args, c, **kwargs): pass").body[0]
    assert _parameter_count(method) == 5


@pytest.mark.parametrize("subpackage", ENGINE)
def test_the_engine_imports_no_face(subpackage: str) -> None:
    found = [f"{_name(path)}:{line} imports {module}"
             for path in sorted((PACKAGE / subpackage).rglob("*.py"))
             for line, module in _imported_modules(_tree(path), _package_of(path))
             if any(_is_under(module, face) for face in FACES)]
    assert not found, f"groundjudge/{subpackage} reaches up into the CLI or the report:\n" + "\n".join(found)


def _is_public(node: ast.AST) -> bool:
    """A function or class whose name does not start with ``_`` (so no dunder either)."""
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not node.name.startswith("_")


def _undocumented(path: Path) -> Iterator[str]:
    """Public module-level functions and classes, and public methods of public classes, without a docstring."""
    for node in _tree(path).body:
        if not _is_public(node):
            continue
        if ast.get_docstring(node) is None:
            yield f"{_name(path)}:{node.lineno} {node.name}"
        if isinstance(node, ast.ClassDef):
            for member in node.body:
                if (_is_public(member) and not isinstance(member, ast.ClassDef)
                        and ast.get_docstring(member) is None):
                    yield f"{_name(path)}:{member.lineno} {node.name}.{member.name}"


def test_every_public_function_and_class_has_a_docstring() -> None:
    missing = [entry for path in _modules() for entry in _undocumented(path)]
    assert not missing, f"{len(missing)} public functions / classes without a docstring:\n" + "\n".join(missing)


def test_tests_import_their_helpers_without_the_tests_package() -> None:
    """`tests/` is no package: a wheel that ships a top-level `tests` package (ppi-python does) would shadow
    `from tests.x import ...`, so the test modules import their helpers as `from conftest import ...`."""
    offenders = []
    for path in sorted((PACKAGE.parent / "tests").glob("*.py")):
        for node in ast.walk(_tree(path)):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                     else [alias.name for alias in node.names] if isinstance(node, ast.Import) else [])
            offenders += [f"tests/{path.name}:{node.lineno}" for name in names
                          if name == "tests" or name.startswith("tests.")]
    assert not offenders, "import `tests.` (shadowed by site-packages/tests): " + ", ".join(offenders)
