# Two set-up commands: `make reproduce` and `make test`. Both bootstrap .venv.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.optnoise-installed
JOBS   ?= 2

.PHONY: reproduce test lint docs bench clean venv

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -e '.[test,docs,opendp]'
	touch $(STAMP)

reproduce: $(STAMP)
	$(VENV)/bin/optnoise figures all --jobs $(JOBS)

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
	rm -rf $(VENV) .cache docs/_build docs/api/generated
