"""Fast modes of every figure script of experiments/count2020/."""

import pytest
from _figure_checks import run_fast, scripts

SCRIPTS = scripts("count2020")


def test_scripts_found():
    assert {p.stem for p in SCRIPTS} >= {"fig1", "fig2", "fig3", "fig4"}


@pytest.mark.xdist_group("count2020")
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_fast_mode_writes_png_and_csv(script, tmp_path):
    run_fast(script, tmp_path)


def _run(name, tmp_path):
    import csv
    import runpy

    runpy.run_path(str(next(p for p in SCRIPTS if p.stem == name)))["main"](["--fast", "--out", str(tmp_path)])
    with open(tmp_path / f"{name}.csv") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.xdist_group("count2020")
def test_fig1_draws_z_geq_0_of_a_symmetric_pmf(tmp_path):
    import numpy as np

    from optnoise.mechanisms.count import optimal_alpha

    rows = _run("fig1", tmp_path)
    z = [int(r["z"]) for r in rows]
    assert z == list(range(0, 11))  # "for z >= 0 (noting the symmetry for z < 0)"
    pmf = optimal_alpha(10, 0.5, 1.0).pmf
    np.testing.assert_allclose(pmf, pmf[::-1], atol=1e-15)
    assert float(rows[0]["proposed"]) == pytest.approx(0.5)  # P(Z = 0) = 1 - rho
    # half of the symmetric pmf: twice the z > 0 part plus P(0) is the whole mass
    assert float(rows[0]["proposed"]) + 2 * sum(float(r["proposed"]) for r in rows[1:]) == pytest.approx(1.0)


@pytest.mark.xdist_group("count2020")
def test_fig3_delta_grows_to_one_above_a_reliability_threshold(tmp_path):
    from optnoise.mechanisms.count import crossover_values

    rows = _run("fig3", tmp_path)
    for r in rows:
        assert float(r["reliability"]) == pytest.approx(1 - float(r["rho"]))
    cols = [c for c in rows[0] if c.startswith("delta_")]
    assert len(cols) == 6
    for c in cols:
        assert float(rows[0][c]) < 0.02  # low reliability: small delta
        assert float(rows[-1][c]) > 0.99  # reliability above the knee: delta ~ 1
    # the knee 1 - theta_N moves to higher reliability as eps grows, and N barely moves it
    knees = {(e, n): 1 - crossover_values(n, e)[-1] for e in (0.5, 1.0, 2.0) for n in (10, 20)}
    for n in (10, 20):
        assert knees[(0.5, n)] < knees[(1.0, n)] < knees[(2.0, n)]
    for e in (0.5, 1.0, 2.0):
        assert abs(knees[(e, 10)] - knees[(e, 20)]) < 0.02
