"""The package's shape, read from its source (no import): short signatures, an engine that does not reach up into
its faces (the command line, the report, the Python API, the server, the integrations), no import circle between
its modules, and a docstring on every public function and class."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "groundjudge"
MAX_PARAMETERS = 8
"""Most parameters a function may take (self / cls not counted; *args, **kwargs and keyword-only ones counted)."""
ENGINE = ("runs", "judges", "llm", "local_nli", "formats", "labels", "perturb", "tune", "security", "experiment",
          "metrics", "types", "text", "paths", "errors", "consoles")
"""The engine, as subpackages (``runs``) and modules (``metrics``: metrics.py): it serves the faces and must not
import them."""
FACES = ("groundjudge.cli", "groundjudge.report", "groundjudge.api", "groundjudge.serve", "groundjudge.integrations")
"""The faces (the command line, the report, the Python API, the server, the integrations): the engine must not
import them."""


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


def _absolute(node: ast.ImportFrom, package: str) -> str:
    """The module a ``from ... import`` names, a relative one made absolute against the importer's ``package``."""
    base = node.module or ""
    if node.level:
        parts = package.split(".")
        anchor = ".".join(parts[:len(parts) - node.level + 1])
        base = f"{anchor}.{base}" if base else anchor
    return base


def _imported_modules(tree: ast.Module, package: str) -> Iterator[tuple[int, str]]:
    """Every module an import statement of the module names (inside functions too), relative ones made absolute
    against its ``package``; ``from package import name`` yields ``package.name`` as well (it may be a module)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, package)
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


def _files_of(part: str) -> list[Path]:
    """The files of an engine part: a subpackage's modules, or the one module (``metrics``: metrics.py)."""
    folder = PACKAGE / part
    return sorted(folder.rglob("*.py")) if folder.is_dir() else [PACKAGE / f"{part}.py"]


@pytest.mark.parametrize("part", ENGINE)
def test_the_engine_imports_no_face(part: str) -> None:
    files = _files_of(part)
    assert all(path.is_file() for path in files), f"groundjudge/{part} is gone: update ENGINE"
    found = [f"{_name(path)}:{line} imports {module}"
             for path in files
             for line, module in _imported_modules(_tree(path), _package_of(path))
             if any(_is_under(module, face) for face in FACES)]
    assert not found, f"groundjudge/{part} reaches up into a face ({', '.join(FACES)}):\n" + "\n".join(found)


def _module_of(path: Path) -> str:
    """The dotted module a file is (a package's ``__init__.py`` is the package: ``groundjudge.runs``)."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _run_time_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node under ``tree`` but those in an ``if TYPE_CHECKING:`` block (read by type checkers, never run;
    its ``else:`` does run)."""
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for node in child.orelse:
                yield node
                yield from _run_time_nodes(node)
            continue
        yield child
        yield from _run_time_nodes(child)


def _run_time_imports(tree: ast.Module, package: str, modules: set[str]) -> Iterator[tuple[int, str]]:
    """The package modules a module imports when it runs (inside functions too, not for type checkers only):
    ``from pkg import name`` imports the submodule ``pkg.name`` where there is one, else ``pkg`` itself."""
    for node in _run_time_nodes(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, package)
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        else:
            continue
        yield from ((node.lineno, name) for name in names if name in modules)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of a module graph (module -> the modules it imports): its strongly connected components
    of two modules or more (Tarjan), each sorted, in order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while not component or component[-1] != node:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(cycles)


def test_the_cycle_finder_finds_each_circle_once() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"d"}, "f": {"a", "f"}, "g": set()}
    assert _cycles(graph) == [["a", "b", "c"], ["d", "e"]]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_the_cycle_check_reads_run_time_imports_module_to_module() -> None:
    source = ("from typing import TYPE_CHECKING\nfrom groundjudge.runs import records, LATEST\n"
              "if TYPE_CHECKING:\n    from groundjudge.cli import common\n"
              "def late():\n    from ..judges.config import JudgeConfig\n")
    modules = {"groundjudge.runs", "groundjudge.runs.records", "groundjudge.cli.common", "groundjudge.judges.config"}
    found = {module for _, module in _run_time_imports(ast.parse(source), "groundjudge.runs", modules)}
    assert found == {"groundjudge.runs.records", "groundjudge.runs", "groundjudge.judges.config"}


def _circles_told(paths: dict[str, Path], package_of) -> list[str]:
    """The import circles among ``paths`` (module name -> file), each told with the lines that tie it."""
    modules = set(paths)
    lines: dict[tuple[str, str], set[int]] = {}
    for module, path in paths.items():
        for line, target in _run_time_imports(_tree(path), package_of(path), modules):
            if target != module:
                lines.setdefault((module, target), set()).add(line)
    graph: dict[str, set[str]] = {module: set() for module in modules}
    for module, target in lines:
        graph[module].add(target)
    return [f"{' <-> '.join(cycle)}:\n" + "\n".join(
        f"    {_name(paths[a])}:{','.join(map(str, sorted(lines[a, b])))} imports {b}"
        for a in cycle for b in sorted(graph[a]) if b in cycle) for cycle in _cycles(graph)]


def test_no_import_circles_between_the_package_modules() -> None:
    told = _circles_told({_module_of(path): path for path in _modules()}, _package_of)
    assert not told, (f"{len(told)} import circle(s); move the names both sides need into a module of their "
                      "own:\n" + "\n".join(told))


def test_no_import_circles_between_the_scripts() -> None:
    """scripts/*.py run as scripts (their folder on the path), so ``import label_budget`` is scripts/label_budget.py."""
    told = _circles_told({path.stem: path for path in sorted((PACKAGE.parent / "scripts").glob("*.py"))},
                         lambda path: "")
    assert not told, (f"{len(told)} import circle(s) between scripts; move the names both need into a module of "
                      "their own:\n" + "\n".join(told))


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
