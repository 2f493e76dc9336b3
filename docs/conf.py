"""Sphinx configuration of the optnoise documentation (``make docs``): user guide, tutorial, API reference."""

from __future__ import annotations

import pkgutil

import optnoise

project = "optnoise"
author = "optnoise developers"
release = version = optnoise.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",  # numpy-style docstrings
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "myst_nb",  # the README and the user guide (Markdown, executed) and the tutorial notebook as pages
]

# The API reference (api/index.rst) lists every module once, grouped by subpackage. Each module page
# (templates in _templates/autosummary) documents the names of the module's __all__ that it defines;
# nothing is documented where it is only re-exported (a package's __init__, or `optnoise` itself), so
# every object has exactly one cross-reference target.
templates_path = ["_templates"]
autosummary_generate = True
autosummary_imported_members = False
autosummary_ignore_module_all = False  # a module's public names are its __all__
autodoc_default_options = {"show-inheritance": True}
autodoc_typehints = "description"
autodoc_member_order = "bysource"
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False


def _submodules() -> dict[str, list[str]]:
    """Every package of optnoise -> its public modules (for the package page template)."""
    out: dict[str, list[str]] = {}
    for info in pkgutil.walk_packages(optnoise.__path__, "optnoise."):
        parent, _, name = info.name.rpartition(".")
        if not name.startswith("_"):
            out.setdefault(parent, []).append(info.name)
    return out


autosummary_context = {"submodules": _submodules()}

myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
# The tutorial and the guide pages are executed at build time (every example is small), so the
# pages show real outputs; an example that raises fails the build.
nb_execution_mode = "force"
nb_execution_timeout = 300
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "api/generated/*.md", "jupyter_execute"]
html_theme = "pydata_sphinx_theme"
html_title = f"optnoise {release}"
html_theme_options = {"navigation_with_keys": False}
