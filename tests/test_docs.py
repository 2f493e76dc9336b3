"""The documentation: the API reference covers every module, the user guide is complete, the build is clean."""

from __future__ import annotations

import contextlib
import importlib
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

import optnoise
from optnoise.reproduce.figures import PAPERS, list_scripts

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
PKG = Path(optnoise.__file__).resolve().parent
API = DOCS / "api" / "index.rst"
#: The user guide's pages, in reading order (docs/guide/<page>.md).
GUIDE_PAGES = ("designing", "counts", "mechanisms", "budgets", "deploying", "cli", "reproduce")


def dotted(path: Path) -> str:
    """``optnoise/design/noise.py`` -> ``optnoise.design.noise``; a package folder -> its name."""
    rel = path.relative_to(PKG.parent).with_suffix("") if path.suffix else path.relative_to(PKG.parent)
    return ".".join(rel.parts)


def public_modules() -> set[str]:
    """Every module of the package that is not private (``_*.py``, which includes ``__init__.py``)."""
    return {dotted(p) for p in PKG.rglob("*.py") if not p.name.startswith("_")}


def packages() -> set[str]:
    return {dotted(p.parent) for p in PKG.rglob("__init__.py")}


def api_reference() -> tuple[list[str], list[str], list[str]]:
    """What docs/api/index.rst lists: (modules of its autosummary toctrees, its ``.. module::`` sections,
    the names of its untoctree'd autosummary tables), each resolved against the current module."""
    current = None
    listed: list[str] = []
    sections: list[str] = []
    names: list[str] = []
    in_table = toctree = False
    for line in API.read_text().splitlines():
        m = re.match(r"\.\. module:: ([\w.]+)\s*$", line)
        if m:
            current = m.group(1)
            sections.append(current)
            in_table = False
            continue
        if line.startswith(".. autosummary::"):
            in_table, toctree = True, False
            continue
        if not in_table or not line.strip():
            continue
        if not line.startswith(" "):  # the table ended
            in_table = False
            continue
        item = line.strip()
        if item.startswith(":"):
            toctree = toctree or item.startswith(":toctree:")
            continue
        assert current is not None, f"autosummary entry {item!r} before any '.. module::'"
        (listed if toctree else names).append(f"{current}.{item.lstrip('~')}")
    return listed, sections, names


def toctree(page: Path) -> list[str]:
    """The entries of the MyST toctree(s) of a Markdown page."""
    entries, inside = [], False
    for line in page.read_text().splitlines():
        if line.strip().startswith("```{toctree}"):
            inside = True
        elif inside and line.strip().startswith("```"):
            inside = False
        elif inside and line.strip() and not line.strip().startswith(":"):
            entries.append(line.strip())
    return entries


def test_api_page_lists_every_public_module():
    listed, sections, _ = api_reference()
    assert len(listed) == len(set(listed)), "a module is listed twice"
    missing = public_modules() - set(listed)
    assert not missing, f"modules missing from docs/api/index.rst: {sorted(missing)}"
    # anything else listed must be a package (mechanisms.closed_form), never a module that does not exist
    extra = set(listed) - public_modules()
    assert extra <= packages(), f"docs/api/index.rst lists unknown modules: {sorted(extra - packages())}"
    # one section per subpackage, and one for the top-level package
    subpackages = {dotted(p.parent) for p in PKG.glob("*/__init__.py")}
    assert set(sections) == subpackages | {"optnoise"}
    # every listed module sits in the section of its subpackage
    for name in listed:
        section = [s for s in sections if name.startswith(s + ".")]
        assert section and max(section, key=len) == ".".join(name.split(".")[:2]), name


def test_api_page_tables_cover_the_top_level_api():
    """The top-level tables name every object of ``optnoise.__all__``, each where it is defined."""
    _, _, names = api_reference()
    found = {}
    for name in names:
        module, _, attr = name.rpartition(".")
        obj = getattr(importlib.import_module(module), attr)
        assert attr in optnoise.__all__ and getattr(optnoise, attr) is obj, name
        if hasattr(obj, "__module__") and not isinstance(obj, (tuple, str, float, int)):
            assert obj.__module__ == module, f"{name} is documented in {obj.__module__}"
        found[attr] = name
    assert set(found) == set(optnoise.__all__) - {"__version__"}


def test_guide_pages_exist_and_are_in_the_toctree():
    for page in GUIDE_PAGES:
        assert (DOCS / "guide" / f"{page}.md").is_file(), page
    assert toctree(DOCS / "guide" / "index.md") == list(GUIDE_PAGES)
    assert toctree(DOCS / "index.md") == ["guide/index", "tutorial", "api/index", "readme"]
    # every page but the reproduction table is an executed notebook with examples
    for page in GUIDE_PAGES[:-1]:
        text = (DOCS / "guide" / f"{page}.md").read_text()
        assert text.startswith("---\nfile_format: mystnb"), f"{page}.md is not executed (no mystnb front matter)"
        assert "```{code-cell}" in text, page


def test_reproduce_page_lists_every_figure_script():
    text = (DOCS / "guide" / "reproduce.md").read_text()
    for paper in PAPERS:
        for script in list_scripts(paper):
            assert f"`{paper}/{script.name}`" in text, f"{paper}/{script.name} is missing from guide/reproduce.md"


@pytest.mark.slow
def test_docs_build_without_warnings(tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_nb")
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(DOCS), str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=900,
    )
    # Sphinx reports "<file>:<line>: WARNING: ..." (and -W turns each into a non-zero exit); the Jupyter
    # kernel that executes the tutorial logs notices of its own on stderr, which are not Sphinx's.
    warnings = [line for line in proc.stderr.splitlines() if re.search(r": (WARNING|ERROR|CRITICAL):", line)]
    assert proc.returncode == 0 and not warnings, proc.stderr[-3000:]
    pages = ["index.html", "readme.html", "tutorial.html", "guide/index.html", "api/index.html"]
    pages += [f"guide/{page}.html" for page in GUIDE_PAGES]
    pages += ["api/generated/optnoise.design.noise.html", "api/generated/optnoise.mechanisms.closed_form.bd.html"]
    for page in pages:
        assert (tmp_path / page).is_file(), page
    # the tutorial and the guide are executed during the build, so the pages carry real outputs
    for page in ["tutorial.html"] + [f"guide/{page}.html" for page in GUIDE_PAGES[:-1]]:
        assert "cell_output" in (tmp_path / page).read_text(), page
    # every object has one target, in its defining module: no package-level duplicates
    html = "".join(p.read_text() for p in (tmp_path / "api" / "generated").glob("*.html"))
    assert html.count('id="optnoise.privacy.neighborhood.Neighborhood"') == 1
    assert 'id="optnoise.privacy.Neighborhood"' not in html and 'id="optnoise.Neighborhood"' not in html


def test_readme_count_example_prints_what_it_states():
    """The README's first example (a count, release="additive") runs and prints the outputs it states."""
    text = (REPO / "README.md").read_text()
    block = text[text.index("### A count") :]
    code = block[block.index("```python\n") + len("```python\n") : block.index("```", block.index("```python") + 3)]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    printed = out.getvalue().splitlines()
    # the first line is stated in the comment of its print, the loop's lines as comment lines after it
    stated = re.findall(r"print\(res\.status.*#\s*(.*)", code)
    stated += [line[2:] for line in code.splitlines() if line.startswith("# ")]
    assert len(stated) == 3
    assert printed == stated
