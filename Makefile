# Two set-up commands: `make reproduce` and `make test`. Both bootstrap .venv.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.optnoise-installed
JOBS   ?= 2

.PHONY: reproduce test lint bench clean venv

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -e '.[test,opendp]'
	touch $(STAMP)

reproduce: $(STAMP)
	$(VENV)/bin/optnoise figures all --jobs $(JOBS)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

test: lint
	MPLBACKEND=Agg $(PY) -m pytest -n $(JOBS) --dist loadgroup -q

bench: $(STAMP)
	$(PY) benchmarks/bench_design.py

clean:
	rm -rf $(VENV) .cache
