"""No code compares privacy-notion or release names: it reads the registries' objects instead.

A line *branches on a name* when it compares (``==``, ``!=``, ``in``, ``not in``) a notion or release
name (a string constant of :data:`VOCABULARY`, alone or in a tuple) or a variable or attribute called
``privacy``, ``notion`` or ``release`` (issue 29: 85 such lines, at most 12 remaining, each a registry
lookup or an input check).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "optnoise"
#: The notion and release names, and the row kind "pure" they select.
VOCABULARY = {"modulo", "clamp", "additive", "pdp", "pdp-kadam", "dp", "profile", "rdp", "zcdp", "composed", "pure"}
#: Names of variables and attributes that hold a notion or a release.
HOLDERS = {"privacy", "notion", "release"}
#: The most lines that may still branch on a name: registry lookups and input checks.
LIMIT = 12
#: The additive release's own modules, whose internals another branch is extending (notions rdp, zcdp,
#: composed on Z) and which still test ``design.privacy``: counted apart, and never more than today, until
#: they read ``design.notion`` as the modulo and clamp releases do.
ADDITIVE_MODULES = {"optnoise/design/additive.py", "optnoise/design/additive_eval.py", "optnoise/deploy/additive.py"}
ADDITIVE_LIMIT = 17


#: Module constants that hold a notion or release name.
CONSTANTS = {"ADDITIVE", "COMPOSED"}
#: The comparisons that branch (``is None`` does not).
BRANCHING = (ast.Eq, ast.NotEq, ast.In, ast.NotIn)


def _names_a_value(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in VOCABULARY
    if isinstance(node, ast.Name):
        return node.id in CONSTANTS
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_names_a_value(e) for e in node.elts)
    return False


def _holds_a_value(node: ast.AST) -> bool:
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "getattr" and len(node.args) >= 2:
        return isinstance(node.args[1], ast.Constant) and node.args[1].value in HOLDERS  # getattr(d, "release")
    return (isinstance(node, ast.Name) and node.id in HOLDERS) or (
        isinstance(node, ast.Attribute) and node.attr in HOLDERS
    )


def branching_lines(source: str) -> list[int]:
    """The line numbers of ``source`` that compare a notion or release name."""
    lines = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and any(isinstance(op, BRANCHING) for op in node.ops):
            sides = [node.left, *node.comparators]
            if any(_names_a_value(s) or _holds_a_value(s) for s in sides):
                lines.add(node.lineno)
    return sorted(lines)


def all_branches() -> list[str]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        rows = text.splitlines()
        out += [f"{path.relative_to(PACKAGE.parent)}:{i}: {rows[i - 1].strip()}" for i in branching_lines(text)]
    return out


def test_few_lines_branch_on_notion_or_release_names():
    found = all_branches()
    additive = [f for f in found if f.split(":")[0] in ADDITIVE_MODULES]
    rest = [f for f in found if f not in additive]
    assert len(rest) <= LIMIT, f"{len(rest)} lines branch on a notion or release name:\n" + "\n".join(rest)
    assert len(additive) <= ADDITIVE_LIMIT, "the additive release branches on names more:\n" + "\n".join(additive)


@pytest.mark.parametrize(
    "source, count",
    [
        ('if design.release == "clamp":\n    pass\n', 1),
        ("x = privacy in NOT_YET\n", 1),
        ('y = "pdp" if notion != "dp" else kind\n', 1),
        ('z = {"dp": 1}[name]\nw = k == "other"\nv = release is None\n', 0),
        ('if getattr(d, "release", None) == ADDITIVE:\n    pass\n', 1),
    ],
)
def test_the_counter_counts_comparisons(source, count):
    assert len(branching_lines(source)) == count
