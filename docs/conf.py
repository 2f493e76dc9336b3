"""Sphinx configuration of the optnoise API reference (``make docs``)."""

from __future__ import annotations

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
    "myst_nb",  # the README (Markdown) and the tutorial notebook as pages
]

autosummary_generate = True
autosummary_imported_members = False  # each object is documented once, in the module that defines it
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_typehints = "description"
autodoc_member_order = "bysource"
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False

myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3
# The tutorial is executed at build time (it is short), so the page shows real outputs.
nb_execution_mode = "force"
nb_execution_timeout = 300
nb_execution_raise_on_error = True

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "api/generated/*.md"]
html_theme = "pydata_sphinx_theme"
html_title = f"optnoise {release}"
html_theme_options = {"navigation_with_keys": False}
