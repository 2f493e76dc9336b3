"""Package structure: no import cycles inside optnoise, a public API that imports cleanly."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import optnoise

PACKAGE = Path(optnoise.__file__).resolve().parent


def _type_checking_lines(tree: ast.Module) -> set[int]:
    """Lines inside ``if TYPE_CHECKING:`` blocks (annotations only, never executed)."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", None)) == "TYPE_CHECKING":
            for sub in node.body:
                lines.update(range(sub.lineno, (sub.end_lineno or sub.lineno) + 1))
    return lines


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> optnoise modules it imports, at module level *or inside functions*.

    A function-level import still makes the two modules depend on each other,
    so it counts; only ``if TYPE_CHECKING:`` imports are left out.
    """
    modules = {p.stem for p in package.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in package.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_lines(tree)
        deps: set[str] = set()
        for node in ast.walk(tree):
            if getattr(node, "lineno", None) in skip:
                continue
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:  # from .x import y
                    deps.add(node.module.split(".")[0])
                else:  # from . import x
                    deps.update(a.name for a in node.names if a.name in modules)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("optnoise."):
                deps.add(node.module.split(".")[1])  # type: ignore[union-attr]
            elif isinstance(node, ast.Import):
                deps.update(a.name.split(".")[1] for a in node.names if a.name.startswith("optnoise."))
        graph[path.stem] = {d for d in deps if d in modules and d != path.stem}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path ``[a, b, ..., a]``, or None (depth-first search)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                return stack[stack.index(dep) :] + [dep]
            if dep not in state and (cycle := visit(dep)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_no_import_cycles():
    graph = import_graph()
    graph.pop("__init__", None)  # the package root re-exports everything by design
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_cycle_finder_finds_cycles():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_function_level_and_type_checking_imports(tmp_path):
    (tmp_path / "a.py").write_text("def f():\n    from .b import g\n")
    (tmp_path / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import f\n")
    (tmp_path / "c.py").write_text("from . import a\n")
    assert import_graph(tmp_path) == {"a": {"b"}, "b": set(), "c": {"a"}}


def test_layers():
    """The model knows nothing of its backends; certification knows nothing of the design classes."""
    graph = import_graph()
    assert "solvers" not in graph["model"]
    assert "design" not in graph["certify"] and "cli" not in graph["certify"]
    # only the CLI module imports the CLI
    assert [m for m, deps in graph.items() if "cli" in deps] == []


@pytest.mark.parametrize("name", optnoise.__all__)
def test_public_names_resolve(name):
    assert getattr(optnoise, name) is not None
