# Two set-up commands: `make reproduce` and `make test`. Both bootstrap .venv.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.optnoise-installed
JOBS   ?= 2
# The pinned versions .venv installs (pyproject.toml keeps the ranges for library users).
CONSTRAINTS := requirements/constraints.txt
LOCKVENV    := .venv-lock

.PHONY: reproduce check-figures test lint docs bench clean venv lock

venv: $(STAMP)

$(STAMP): pyproject.toml $(CONSTRAINTS)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -c $(CONSTRAINTS) -e '.[test,docs,opendp]'
	touch $(STAMP)

# Regenerate every figure, then compare each regenerated CSV with the committed one (git HEAD)
# within the tolerances its script declares; fails on a difference beyond them.
reproduce: $(STAMP)
	$(VENV)/bin/optnoise figures all --jobs $(JOBS)
	$(VENV)/bin/optnoise figures check

# The comparison alone (e.g. after running single figure scripts).
check-figures: $(STAMP)
	$(VENV)/bin/optnoise figures check

# Refresh the pins deliberately: resolve the newest versions pyproject.toml allows in a scratch
# venv and freeze them into $(CONSTRAINTS); then `make reproduce`, review, and commit both.
lock:
	rm -rf $(LOCKVENV)
	$(PYTHON) -m venv $(LOCKVENV)
	$(LOCKVENV)/bin/python -m pip install --upgrade pip
	$(LOCKVENV)/bin/python -m pip install -e '.[test,docs,opendp]'
	{ sed -n '/^#/p' $(CONSTRAINTS); $(LOCKVENV)/bin/python -m pip freeze --exclude-editable | grep -iv '^optnoise'; } > $(CONSTRAINTS).new
	mv $(CONSTRAINTS).new $(CONSTRAINTS)
	rm -rf $(LOCKVENV)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

test: lint
	MPLBACKEND=Agg $(PY) -m pytest -n $(JOBS) --dist loadgroup -q

# The documentation (user guide, tutorial, API reference; the examples are executed): HTML in
# docs/_build/html; any Sphinx warning fails the build.
docs: $(STAMP)
	rm -rf docs/api/generated
	$(VENV)/bin/sphinx-build -W --keep-going -q -b html docs docs/_build/html

bench: $(STAMP)
	$(PY) benchmarks/bench_design.py

clean:
	rm -rf $(VENV) $(LOCKVENV) .cache docs/_build docs/api/generated
