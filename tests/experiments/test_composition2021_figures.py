"""Fast modes of every composition2021 figure script (Cesar & Rogers, ALT 2021)."""

from __future__ import annotations

import csv
import runpy

import pytest
from _figure_checks import scripts

SCRIPTS = scripts("composition2021")


def test_all_six_figures_have_a_script():
    assert [s.stem for s in SCRIPTS] == [f"fig{i}" for i in range(1, 7)]


@pytest.mark.xdist_group("composition2021")
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_figure_script_fast(script, tmp_path):
    main = runpy.run_path(str(script))["main"]
    assert main(["--fast", "--out", str(tmp_path)]) == 0
    png, table = tmp_path / f"{script.stem}.png", tmp_path / f"{script.stem}.csv"
    assert png.stat().st_size > 1000
    with table.open() as fh:
        rows = list(csv.DictReader(fh))
    assert rows and all(v != "" for v in rows[0].values() if v is not None)


@pytest.mark.xdist_group("composition2021")
def test_fig6_uses_paper_privacy_budget(tmp_path):
    runpy.run_path(str(SCRIPTS[5]))["main"](["--fast", "--out", str(tmp_path)])
    with (tmp_path / "fig6.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert [r["word"] for r in rows][:3] == ["the", "and", "to"]
    assert float(rows[0]["eps_total"]) == pytest.approx(0.99369, abs=5e-6)


@pytest.mark.xdist_group("composition2021")
def test_fig5_laplace_and_zcdp_curves_are_fig4s(tmp_path):
    # Sec. 6.1: these two bounds depend on k * Delta_0 only, so they do not change between Figs. 4 and 5
    tables = {}
    for name in ("fig4", "fig5"):
        runpy.run_path(str(SCRIPTS[int(name[-1]) - 1]))["main"](["--fast", "--out", str(tmp_path)])
        with (tmp_path / f"{name}.csv").open() as fh:
            tables[name] = list(csv.DictReader(fh))
    fig4 = {float(r["l0_sensitivity"]): r for r in tables["fig4"]}
    shared = [r for r in tables["fig5"] if float(r["k_times_l0"]) in fig4]
    assert len(shared) >= 2
    for r in shared:
        other = fig4[float(r["k_times_l0"])]
        assert float(r["eps_laplace"]) == pytest.approx(float(other["eps_laplace"]))
        assert float(r["eps_gauss_zcdp"]) == pytest.approx(float(other["eps_gauss_zcdp"]))
