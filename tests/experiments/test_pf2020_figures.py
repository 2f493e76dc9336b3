"""Fast modes of every figure script of experiments/pf2020/ (McKenna & Sheldon 2020)."""

import csv

import pytest
from _figure_checks import run_fast, scripts

SCRIPTS = scripts("pf2020")


def test_scripts_found():
    assert {p.stem for p in SCRIPTS} >= {
        "fig1a",
        "fig1b",
        "fig1c",
        "fig2a",
        "fig2bc",
        "fig3",
        "fig4",
        "fig5",
        "fig6",
        "fig7",
    }


@pytest.mark.xdist_group("pf2020")
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_fast_mode_writes_png_and_csv(script, tmp_path):
    run_fast(script, tmp_path)


@pytest.mark.xdist_group("pf2020")
def test_fig2_fast_ratios_are_sane(tmp_path):
    script = next(p for p in SCRIPTS if p.stem == "fig2bc")
    run_fast(script, tmp_path)
    with open(tmp_path / "fig2b.csv") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        assert 1 - 1e-8 <= float(r["pf_ratio_regular_lp"]) < 1.05
        if float(r["eps"]) >= 0.9624236501192069:
            assert abs(float(r["pf_ratio_regular_lp"]) - 1) < 1e-8
