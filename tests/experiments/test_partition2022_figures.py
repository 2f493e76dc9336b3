"""Fast modes of every figure script of experiments/partition2022/, and the paper's claims on their CSVs."""

import csv
import runpy
from collections import defaultdict
from pathlib import Path

import pytest
from _figure_checks import run_fast, scripts

SCRIPTS = scripts("partition2022")
COMMITTED = Path(__file__).resolve().parents[2] / "figures" / "partition2022"


def test_scripts_found():
    assert {p.stem for p in SCRIPTS} >= {"fig1", "fig2", "fig3", "fig4"}


@pytest.mark.xdist_group("partition2022")
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_fast_mode_writes_png_and_csv(script, tmp_path):
    run_fast(script, tmp_path)


def _read(path):
    with open(path) as fh:
        return list(csv.DictReader(fh))


def _assert_opt_below_laplace(rows, keys):
    """Theorem 1: pi_opt >= pi_Lap, so each percentile of pi_opt is below Laplace's at every plotted point."""
    by_point = defaultdict(dict)
    for r in rows:
        by_point[tuple(r[k] for k in keys)][r["method"]] = float(r["n"])
    assert by_point
    for point, n in by_point.items():
        assert n["opt"] < n["laplace"], point


def _assert_fig4_order(rows):
    assert rows
    for r in rows:
        # budget split (eps/kappa, delta/kappa): Theorem 1 at the split budget
        assert float(r["midpoint_opt"]) < float(r["midpoint_laplace"]), r


@pytest.mark.xdist_group("partition2022")
def test_fast_percentiles_follow_theorem1(tmp_path):
    for name, keys in (("fig2", ("eps", "q")), ("fig3", ("eps", "delta", "q"))):
        runpy.run_path(str(next(p for p in SCRIPTS if p.stem == name)))["main"](["--fast", "--out", str(tmp_path)])
        _assert_opt_below_laplace(_read(tmp_path / f"{name}.csv"), keys)
    runpy.run_path(str(next(p for p in SCRIPTS if p.stem == "fig4")))["main"](["--fast", "--out", str(tmp_path)])
    _assert_fig4_order(_read(tmp_path / "fig4.csv"))


def test_committed_percentiles_follow_theorem1():
    """The committed (full-grid) Figs. 2-4: the optimal percentile is below Laplace's at every plotted point."""
    _assert_opt_below_laplace(_read(COMMITTED / "fig2.csv"), ("eps", "q"))
    _assert_opt_below_laplace(_read(COMMITTED / "fig3.csv"), ("eps", "delta", "q"))
    rows = _read(COMMITTED / "fig4.csv")
    _assert_fig4_order(rows)
    # Sec. 5: pi_opt beats Gaussian thresholding for kappa <= 2, Gaussian wins from kappa = 4; they cross at 3
    for r in rows:
        k, o, g = int(r["kappa"]), float(r["midpoint_opt"]), float(r["midpoint_gaussian"])
        if k <= 2:
            assert o < g
        elif k >= 4:
            assert o > g
        else:
            assert abs(o - g) / g < 0.05
