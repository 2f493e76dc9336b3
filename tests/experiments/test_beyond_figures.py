"""Fast modes of the figure scripts of experiments/beyond/, and the claims their README states."""

import csv
import runpy
from pathlib import Path

import numpy as np
import pytest
from _figure_checks import run_fast, scripts

from optnoise import Neighborhood, NoiseDesign
from optnoise.reproduce.figures import PAPERS

SCRIPTS = scripts("beyond")
FIGURES = Path(__file__).resolve().parents[2] / "figures" / "beyond"


def test_scripts_found():
    assert {"no_wraparound", "composition", "composition_k", "counts"} <= {p.stem for p in SCRIPTS}
    assert PAPERS.count("beyond") == 1


@pytest.mark.xdist_group("beyond")
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_fast_mode_writes_png_and_csv(script, tmp_path):
    run_fast(script, tmp_path)


def _committed():
    with open(FIGURES / "no_wraparound.csv") as fh:
        return [{k: float(v) for k, v in r.items()} for r in csv.DictReader(fh)]


def test_committed_orderings_hold_at_every_point():
    """The ordering the README states: general <= clamped <= truncated geometric; modulo's released error is worst.

    Up to 2e-6 relative: a solution repaired to meet the tolerance rule may cost up to 1e-6 (REPAIR_RTOL).
    """
    rows = _committed()
    assert len(rows) == 30
    for r in rows:
        for m in ("mse", "er"):
            assert r[f"general_{m}"] <= r[f"clamp_{m}"] * (1 + 2e-6)
            assert r[f"clamp_{m}"] <= r[f"geometric_{m}"] * (1 + 2e-6)
            assert r[f"general_{m}"] <= r[f"modulo_{m}"]
        assert r["modulo_mse"] > 2.5 * r["general_mse"]  # wrap-around: a released 20 for a true 0


def test_committed_pure_dp_matches_ghosh_roughgarden_sundararajan():
    """Pure DP, uniform prior: the clamped optimum is the truncated geometric mechanism itself (both measures)."""
    for r in _committed():
        if r["delta"] == 0:
            assert r["alpha"] == pytest.approx(np.exp(-r["eps"]), rel=1e-9)  # CSV: 10 digits
            assert r["clamp_er"] == pytest.approx(r["geometric_er"], rel=2e-6)
            assert r["clamp_mse"] == pytest.approx(r["geometric_mse"], rel=2e-6)
            assert r["general_er"] == pytest.approx(r["geometric_er"], rel=2e-6)


def test_committed_error_rates_equal_closed_forms():
    """Pure DP error rates, from their closed forms (n = 20, +-1 neighbours, uniform answer).

    Truncated geometric: the diagonal is (1-a)/(1+a) inside and 1/(1+a) at both ends, a = e^-eps.
    Modulo optimum: every shift must satisfy f(eta) <= e^eps f(eta +- 1) cyclically, so the largest
    f(0) is 1/Z with f(k) = f(0) a^d(k), d the circular distance: the error rate is 1 - 1/Z.
    """
    n = 20
    d = np.minimum(np.arange(n + 1), n + 1 - np.arange(n + 1))
    for r in _committed():
        if r["delta"] != 0:
            continue
        a = np.exp(-r["eps"])
        geo = 1 - ((n - 1) * (1 - a) / (1 + a) + 2 / (1 + a)) / (n + 1)
        assert r["general_er"] == pytest.approx(geo, rel=2e-6)
        assert r["modulo_er"] == pytest.approx(1 - 1 / np.sum(a**d), rel=2e-6)


def test_real_valued_composed_claims():
    """The committed real_valued_composed.csv (variance 25, delta = 1e-6): optnoise under every baseline at every
    k, its bound under it, the Gaussian column the closed form, and the README's numbers at k = 10."""
    import math

    from optnoise.mechanisms.gaussian import analytic_gaussian_epsilon

    rows = {int(r["k"]): {c: float(v) for c, v in r.items()} for r in _rows("real_valued_composed")}
    assert sorted(rows) == [1, 2, 3, 5, 7, 10]
    for k, r in rows.items():
        assert r["bound"] <= r["eps_optnoise"] <= min(r["gaussian"], r["laplace"], r["laplace_gaussian"])
        assert r["mse"] <= 25.0 * (1 + 1e-6)
        # k Gaussian releases are one at sensitivity sqrt(k): the closed form, independently of the script
        assert r["gaussian"] == pytest.approx(analytic_gaussian_epsilon(5.0, 1e-6, sensitivity=math.sqrt(k)), rel=1e-9)
        # shares 0 and 1 are candidates: the convolution is the better part, up to its accounting grid (k h)
        assert r["laplace_gaussian"] <= min(r["laplace"], r["gaussian"]) + 2 * k * 1e-4
    assert all(rows[k]["laplace_gaussian_share"] == 1.0 for k in (1, 2, 3, 5, 7))
    ten = rows[10]
    assert 0.5 < ten["laplace_gaussian_share"] < 0.75
    readme = {"eps_optnoise": 2.6672, "laplace_gaussian": 2.7144, "laplace": 2.8274, "gaussian": 2.9216}
    for name, value in readme.items():
        assert ten[name] == pytest.approx(value, abs=1e-4), name
    assert ten["laplace_gaussian"] / ten["eps_optnoise"] - 1 == pytest.approx(0.0177, abs=1e-4)


def _rows(stem):
    with open(FIGURES / f"{stem}.csv") as fh:
        return list(csv.DictReader(fh))


def test_committed_zcdp_optimum_costs_at_most_the_gaussian():
    """(a): the optimum costs at most the discrete Gaussian at the same achieved rho."""
    rows = _rows("composition_zcdp")
    assert rows and all(r["status"] == "optimal" and float(r["ratio"]) <= 1 + 1e-7 for r in rows)


def _panel(name):
    return [r for r in _rows("composition_k") if r["panel"] == name]


def test_committed_compositions_meet_the_total_budget():
    """(composition_k a): every composed design meets (1, 1e-5) by its own accounting; k = 1 is the LP optimum."""
    rows = _panel("mse")
    assert rows and all(float(r["eps_composed"]) <= 1.0 + 1e-9 and float(r["delta_composed"]) <= 1e-5 for r in rows)
    assert all(r["status_composed"] == ("optimal" if r["k"] == "1" else "feasible") for r in rows)


def test_committed_composed_optimum_is_never_above_the_baselines():
    """(composition_k a, b): the composed optimum costs at most the best of DG, DLap and the best convolution,
    and its proven lower bound is below it."""
    for r in _panel("mse"):
        best = min(float(r["mse_gaussian"]), float(r["mse_laplace"]), float(r["mse_convolution"]))
        assert float(r["mse_composed"]) <= best * (1 + 1e-9)
        assert float(r["bound_composed"]) <= float(r["mse_composed"]) * (1 + 1e-9)
    ten = next(r for r in _panel("mse") if r["k"] == "10")
    assert float(ten["mse_composed"]) / float(ten["mse_gaussian"]) < 0.93  # the README's 7% at k = 10


def test_committed_least_eps_at_variance_25():
    """(composition_k c): the least composed eps under the variance cap is at most every family's at the cap."""
    rows = _panel("eps")
    assert rows
    for r in rows:
        assert float(r["mse_composed"]) <= 25.0
        best = min(float(r["eps_gaussian"]), float(r["eps_laplace"]), float(r["eps_convolution"]))
        assert float(r["eps_composed"]) <= best + 1e-9


# --- counts.py: counts and sums on the integers (issue #30) ---------------------------------------------------------


def _counts_script():
    """The script's functions, without running its ``main``."""
    return runpy.run_path(
        str(Path(__file__).resolve().parents[2] / "experiments" / "beyond" / "counts.py"), run_name="x"
    )


def _laplace_mse_at(eps, delta):
    """Discrete Laplace on a count (shift 1), least noise meeting (eps, delta)-DP, by a closed form.

    With f(x) proportional to a^|x|, the hockey stick against the shift by one is
    sum_{x >= 0} f(x) - e^eps f(x + 1) = (1 - e^eps a) / (1 + a); equal to delta at
    a = (1 - delta) / (e^eps + delta). The MSE is 2a / (1 - a)^2.
    """
    a = (1.0 - delta) / (np.exp(eps) + delta)
    return 2 * a / (1 - a) ** 2


def test_counts_point_against_closed_forms():
    """One fast point: optnoise below both baselines; the calibrated Laplace equals its closed form."""
    s = _counts_script()
    r = s["point"](1.0, 1)
    assert r["mse_laplace"] == pytest.approx(_laplace_mse_at(1.0, 1e-6), rel=1e-9)
    assert r["mse_optnoise"] <= r["mse_laplace"] * (1 + 1e-6)
    assert r["mse_optnoise"] <= r["mse_gaussian"]
    assert r["mse_laplace"] <= r["mse_pure_laplace"]
    # the pure-DP limit: the additive optimum is the discrete Laplace, MSE 2e^-eps / (1 - e^-eps)^2 (Geng-Viswanath)
    for eps in (0.5, 1.0):
        pure = NoiseDesign(release="additive", neighborhood=Neighborhood.bd(1), eps=eps, delta=0.0, metric="mse")
        res = pure.solve(solver="highs")
        assert res.status == "optimal"
        closed = 2 * np.exp(-eps) / (1 - np.exp(-eps)) ** 2
        assert res.distortion == pytest.approx(closed, rel=1e-6)
        assert s["pure_laplace_mse"](eps, 1) == pytest.approx(closed, rel=1e-12)


def _counts_committed():
    with open(FIGURES / "counts.csv") as fh:
        return [{k: float(v) for k, v in r.items()} for r in csv.DictReader(fh)]


def test_committed_counts_orderings_and_closed_forms():
    """optnoise <= calibrated Laplace <= pure-DP Laplace and optnoise <= Gaussian at every point; closed forms."""
    rows = _counts_committed()
    assert {r["bound"] for r in rows} == {1.0, 10.0} and len(rows) == 16
    for r in rows:
        assert r["delta"] == 1e-6
        assert r["mse_optnoise"] <= r["mse_laplace"] * (1 + 1e-6)
        assert r["mse_optnoise"] <= r["mse_gaussian"]
        assert r["mse_laplace"] <= r["mse_pure_laplace"] * (1 + 1e-9)
        assert r["bound_optnoise"] <= r["mse_optnoise"] * (1 + 1e-9)
        assert r["mse_optnoise"] - r["bound_optnoise"] <= 1e-6 * max(1.0, r["mse_optnoise"]) * 1.01
        a = np.exp(-r["eps"] / r["bound"])
        assert r["mse_pure_laplace"] == pytest.approx(2 * a / (1 - a) ** 2, rel=1e-9)
        if r["bound"] == 1:
            assert r["mse_laplace"] == pytest.approx(_laplace_mse_at(r["eps"], r["delta"]), rel=1e-8)


def test_committed_counts_composed_never_above_a_baseline():
    """The composed panel: at every k the certified design is at most each baseline calibrated to the same
    composition by the same accounting, the proven bound is below it, and k = 1 is the single-release optimum."""
    with open(FIGURES / "counts_composed.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert {(int(r["bound"]), int(r["k"])) for r in rows} == {(b, k) for b in (1, 10) for k in (1, 2, 4, 6, 10)}
    single = {int(r["bound"]): float(r["mse_optnoise"]) for r in _counts_committed() if r["eps"] == 1.0}
    for r in rows:
        mse, lower = float(r["mse_optnoise"]), float(r["bound_optnoise"])
        assert r["eps"] == "1" and float(r["delta"]) == 1e-6
        assert lower <= mse * (1 + 1e-9)
        for name in ("laplace", "gaussian", "convolution"):
            value = float(r[f"mse_{name}"])
            assert np.isnan(value) if (name == "convolution" and r["k"] == "1") else mse <= value * (1 + 1e-9)
        if r["k"] == "1":
            assert r["status"] == "optimal" and mse == pytest.approx(single[int(r["bound"])], rel=1e-9)
        else:
            assert r["status"] == "feasible"
    # per-release MSE grows with k (more releases, less budget each)
    for b in ("1", "10"):
        seq = [
            float(r["mse_optnoise"]) for r in sorted((r for r in rows if r["bound"] == b), key=lambda r: int(r["k"]))
        ]
        assert seq == sorted(seq)


def test_real_valued_claims():
    """The committed real_valued.csv: a proven band under every valid mechanism, and the README's numbers."""
    rows = _rows("real_valued")
    for r in rows:
        lower, upper = float(r["lower"]), float(r["upper"])
        # the lower bound holds over all densities: below every calibrated mechanism and the pure staircase
        for name in ("truncated_laplace", "gaussian", "laplace", "staircase_pure"):
            assert lower <= float(r[name]), (r, name)
        assert lower <= upper and float(r["gap"]) == pytest.approx((upper - lower) / max(1.0, upper), rel=1e-6)
    stair = {r["eps"]: float(r["staircase_pure"]) for r in rows if r["metric"] == "mae"}
    assert stair["1"] == pytest.approx(0.95952, abs=1e-5)  # Geng-Viswanath closed form at eps = 1 (issue 31)
    gaps = [float(r["gap"]) for r in rows if r["panel"] == "resolution"]
    assert gaps == sorted(gaps, reverse=True) and gaps[-1] < 5e-4
    eps_rows = [r for r in rows if r["panel"] == "eps"]
    assert max(float(r["gap"]) for r in eps_rows) < 0.022
    tl = [float(r["truncated_laplace"]) / float(r["upper"]) - 1 for r in eps_rows if r["eps"] == "4"]
    assert min(tl) > 0.78 and max(tl) < 1.25
