"""Package structure: layers with one direction of dependency, no import cycles, small modules.

The subpackages of optnoise are layers; a module may import only from its own
layer and the layers allowed below it (:data:`ALLOWED`):

    engine -> privacy -> plotting -> design -> deploy
                                        \\-> mechanisms
    reproduce and cli on top; nothing imports cli.

Every import counts, at module level or inside a function (a function-level
import still makes two modules depend on each other); only ``if TYPE_CHECKING:``
imports, which are annotations and never run, are left out.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import optnoise

PACKAGE = Path(optnoise.__file__).resolve().parent

#: Which layers each layer may import (itself included).
ALLOWED: dict[str, set[str]] = {
    "engine": {"engine"},
    "privacy": {"engine", "privacy"},
    "plotting": {"engine", "privacy", "plotting"},
    "design": {"engine", "privacy", "plotting", "design"},
    "deploy": {"engine", "privacy", "plotting", "design", "deploy"},
    "mechanisms": {"engine", "privacy", "design", "mechanisms"},
    "reproduce": {"engine", "privacy", "plotting", "design", "deploy", "mechanisms", "reproduce"},
    "cli": {"engine", "privacy", "plotting", "design", "deploy", "mechanisms", "reproduce", "cli"},
}
#: Longest module, in lines.
MAX_LINES = 700


def _type_checking_lines(tree: ast.Module) -> set[int]:
    """Lines inside ``if TYPE_CHECKING:`` blocks (annotations only, never executed)."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", None)) == "TYPE_CHECKING":
            for sub in node.body:
                lines.update(range(sub.lineno, (sub.end_lineno or sub.lineno) + 1))
    return lines


def module_name(path: Path, package: Path = PACKAGE) -> str:
    """The dotted name of a module file: ``optnoise.design.noise`` for ``design/noise.py`` in the package."""
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package's modules it imports, at module level *or inside functions*.

    ``from a.b import c`` depends on ``a.b.c`` when that is a module, else on ``a.b``;
    relative imports are resolved against the importing module.
    """
    paths = {module_name(p, package): p for p in package.rglob("*.py")}
    modules = set(paths)
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_lines(tree)
        is_pkg = path.name == "__init__.py"
        deps: set[str] = set()
        for node in ast.walk(tree):
            if getattr(node, "lineno", None) in skip:
                continue
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".")
                    base = base[: len(base) - node.level + (1 if is_pkg else 0)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    deps.add(sub if sub in modules else target)
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
        graph[name] = {d for d in deps if d in modules and d != name}
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


def layer(module: str) -> str | None:
    """The layer (top-level subpackage) of a module; None for the package root."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Every import that goes against :data:`ALLOWED`."""
    out = []
    for module, deps in sorted(graph.items()):
        own = layer(module)
        if own is None:
            continue
        for dep in sorted(deps):
            other = layer(dep)
            if other is not None and other not in ALLOWED[own]:
                out.append(f"{module} imports {dep} ({own} may import only {', '.join(sorted(ALLOWED[own]))})")
    return out


def _without_package_inits(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    # a package's __init__ re-exports its modules by design; the modules themselves must not cycle
    inits = {m for m in graph if (PACKAGE.parent / m.replace(".", "/") / "__init__.py").exists()}
    return {m: {d for d in deps if d not in inits} for m, deps in graph.items() if m not in inits}


def test_no_import_cycles():
    cycle = find_cycle(_without_package_inits(import_graph()))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_layers_import_only_downwards():
    assert layer_violations(import_graph()) == []


def test_nothing_imports_the_cli():
    graph = import_graph()
    assert [m for m, deps in graph.items() if layer(m) != "cli" and any(layer(d) == "cli" for d in deps)] == []


def test_every_module_belongs_to_a_layer():
    roots = {layer(m) for m in import_graph()} - {None}
    assert roots == set(ALLOWED)
    assert sorted(p.name for p in PACKAGE.glob("*.py")) == ["__init__.py"]


def test_plotting_imports_no_design_code():
    graph = import_graph()
    assert {d for m, deps in graph.items() if layer(m) == "plotting" for d in deps if layer(d) == "design"} == set()


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_modules_stay_small(path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, (
        f"{path.relative_to(PACKAGE)} has {lines} lines (at most {MAX_LINES}): split it by concept"
    )


def test_rules_catch_violations(tmp_path):
    pkg = tmp_path / "optnoise"
    for sub in ("engine", "design", "cli"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "engine" / "model.py").write_text("def f():\n    from optnoise.design.noise import g\n")
    (pkg / "design" / "noise.py").write_text(
        "from typing import TYPE_CHECKING\nfrom optnoise.engine import model\nif TYPE_CHECKING:\n"
        "    from optnoise.cli import main\n"
    )
    (pkg / "cli" / "main.py").write_text("from ..design.noise import g\n")
    graph = import_graph(pkg)
    assert graph["optnoise.engine.model"] == {"optnoise.design.noise"}
    assert graph["optnoise.design.noise"] == {"optnoise.engine.model"}
    assert graph["optnoise.cli.main"] == {"optnoise.design.noise"}
    assert find_cycle(graph) == ["optnoise.design.noise", "optnoise.engine.model", "optnoise.design.noise"]
    assert len(layer_violations(graph)) == 1


def test_cycle_finder_finds_cycles():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


@pytest.mark.parametrize("name", optnoise.__all__)
def test_public_names_resolve(name):
    assert getattr(optnoise, name) is not None


def private_imports(package: Path = PACKAGE) -> list[str]:
    """Every ``from optnoise... import _name`` between two modules of the package (function-level ones too).

    A leading underscore means "this module only" (scipy's convention): a name another module needs is
    shared API and goes without one. Relative imports count; ``__dunder__`` names do not.
    """
    out = []
    for path in sorted(package.rglob("*.py")):
        name = module_name(path, package)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if not node.level and not (node.module or "").startswith(package.name):
                continue
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    out.append(f"{name} imports {alias.name} from {'.' * node.level}{node.module or ''}")
    return out


def test_no_private_name_is_imported_from_another_module():
    assert private_imports() == []


def test_private_import_rule_catches_violations(tmp_path):
    pkg = tmp_path / "optnoise"
    (pkg / "design").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "design" / "__init__.py").write_text("from optnoise.design.a import __all__ as names\n")
    (pkg / "design" / "a.py").write_text("def _helper():\n    pass\n")
    (pkg / "design" / "b.py").write_text("def f():\n    from .a import _helper\n")
    (pkg / "design" / "c.py").write_text("from optnoise.design.a import _helper, f\nfrom numpy import _pytesttester\n")
    assert private_imports(pkg) == [
        "optnoise.design.b imports _helper from .a",
        "optnoise.design.c imports _helper from optnoise.design.a",
    ]


def test_the_composed_search_does_not_import_the_noise_design():
    # it solves its LPs through an interface (design.composed_bounds.SingleReleaseLP), not NoiseDesign.solve
    graph = import_graph()
    for module in ("optnoise.design.composed_solve", "optnoise.design.composed_bounds", "optnoise.design.settle"):
        assert "optnoise.design.noise" not in graph[module], module
    # and the engine knows nothing of privacy: its tolerance module keeps solver numbers only
    assert not any(layer(d) == "privacy" for d in graph["optnoise.engine.tolerance"])
