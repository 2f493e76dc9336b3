"""Fast modes of every kadam2024 figure script (Kadam et al., Cybersecurity 7:54, 2024)."""

from __future__ import annotations

import csv
import math
import runpy

import numpy as np
import pytest
from _figure_checks import scripts

SCRIPTS = scripts("kadam2024")

#: Files each script must write (stem -> extra suffixes besides .png/.csv).
OUTPUTS = {
    "fig1": ["fig1"],
    "fig2": ["fig2"],
    "fig3": ["fig3"],
    "fig4": ["fig4"],
    "fig5": ["fig5a", "fig5b", "fig5a_exact", "fig5b_exact"],
    "fig6": ["fig6"],
    "fig7": ["fig7a", "fig7b", "fig7a_exact", "fig7b_exact"],
    "fig8": ["fig8"],
    "fig9": ["fig9a", "fig9b"],
    "fig10": ["fig10a", "fig10b"],
    "table1": ["table1"],
    "fig11": ["fig11a", "fig11b"],
    "fig12": ["fig12a", "fig12b"],
    "fig13": ["fig13a", "fig13b"],
    "fig14": ["fig14a", "fig14b", "fig14_meters"],
}


def test_every_figure_and_table_has_a_script():
    assert sorted(s.stem for s in SCRIPTS) == sorted(OUTPUTS)


@pytest.mark.xdist_group("kadam2024")
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_figure_script_fast(script, tmp_path):
    out = tmp_path / "kadam2024"
    main = runpy.run_path(str(script))["main"]
    assert main(["--fast", "--out", str(out)]) == 0
    for stem in OUTPUTS[script.stem]:
        assert (out / f"{stem}.png").stat().st_size > 5000, stem
        with (out / f"{stem}.csv").open() as fh:
            rows = list(csv.DictReader(fh))
        assert rows, stem
        numbers = [float(v) for r in rows for v in r.values() if v not in ("", None) and _is_number(v)]
        assert numbers and all(math.isfinite(x) or math.isnan(x) for x in numbers)
    if script.stem == "table1":
        assert (out / "table1.md").read_text().count("|") > 50


def _is_number(v: str) -> bool:
    try:
        float(v)
    except ValueError:
        return False
    return True


def test_figs_5_and_7_full_grids_have_at_least_200_eps():
    """The jumps of Corollaries 1-2 need a fine grid: the full runs use >= 200 eps, and the committed CSVs too."""
    helpers = runpy.run_path(str(next(s for s in SCRIPTS if s.stem == "fig5").parent / "_kadam2024.py"))
    grid = helpers["EPS_GRID"]
    assert grid.size >= 200 and np.all(np.diff(grid) > 0) and grid[0] == 0.1 and grid[-1] == 3.0
    assert np.all(np.isin(np.round(np.arange(0.1, 3.01, 0.1), 4), grid))  # the values the README quotes
    committed = SCRIPTS[0].parents[2] / "figures" / "kadam2024"
    for stem in ("fig5a", "fig5b", "fig7a", "fig7b", "fig5a_exact", "fig5b_exact", "fig7a_exact", "fig7b_exact"):
        path = committed / f"{stem}.csv"
        if not path.exists():
            pytest.skip("figures not generated")
        with path.open() as fh:
            rows = list(csv.DictReader(fh))
        curves: dict[str, set[float]] = {}
        for r in rows:
            curves.setdefault(r["curve"], set()).add(float(r["eps"]))
        assert all(len(e) >= 200 for e in curves.values()), stem
