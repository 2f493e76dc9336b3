"""Fast mode of the beyond/composition figure script (issue #15)."""

from __future__ import annotations

import csv
import runpy
from pathlib import Path

import pytest

from optnoise.figures import PAPERS, list_scripts

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "beyond" / "composition.py"


def test_beyond_is_run_once():
    assert PAPERS.count("beyond") == 1
    assert SCRIPT in list_scripts("beyond")


@pytest.mark.xdist_group("beyond")
def test_composition_fast(tmp_path):
    assert runpy.run_path(str(SCRIPT))["main"](["--fast", "--out", str(tmp_path)]) == 0
    for stem in ("composition_zcdp", "composition_profile", "composition_k"):
        assert (tmp_path / f"{stem}.png").stat().st_size > 1000
    with (tmp_path / "composition_zcdp.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    # the optimum costs at most the Gaussian at the same achieved rho
    assert all(r["status"] == "optimal" and float(r["ratio"]) <= 1 + 1e-7 for r in rows)
    with (tmp_path / "composition_k.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    # every calibrated design meets the total (eps, delta) by its own PLD accounting
    assert all(float(r["eps_profile_design"]) <= 1.0 and float(r["eps_dp_design"]) <= 1.0 for r in rows)
