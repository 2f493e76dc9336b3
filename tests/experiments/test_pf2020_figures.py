"""Fast modes of every figure script of experiments/pf2020/ (McKenna & Sheldon 2020)."""

import csv
import math
import runpy
from pathlib import Path

import numpy as np
import pytest
from _figure_checks import run_fast, scripts
from scipy import integrate, special

from optnoise.mechanisms.selection import GOLDEN_EPS
from optnoise.reproduce.datasets import load_dpbench

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


# ---------------------------------------------------------------- the paper's settings and claims

COMMITTED = Path(__file__).resolve().parents[2] / "figures" / "pf2020"
BAR_COLUMNS = ["dataset", "task", "anchor", "eps", "em_expected_error", "pf_expected_error", "error_ratio"]


def _rows(path):
    with open(path) as fh:
        return list(csv.DictReader(fh))


def _notebook_median_quality(x):
    """The authors' ``median_quality`` (experimental-plots.ipynb), restated loop by loop: an independent route."""
    a = np.cumsum(x)
    med = int(np.searchsorted(a, x.sum() / 2))
    n_tot = x.sum()
    q = np.zeros(x.size)
    for i in range(med):
        q[i] = math.ceil(n_tot - 2 * a[i])
    for i in range(med + 1, x.size):
        q[i] = math.ceil(2 * a[i - 1] - n_tot + 1)
    return -q


def _quality(dataset, task):
    x = load_dpbench(dataset).astype(float)
    return 2.0 * x if task == "mode" else _notebook_median_quality(x)


def _em_error(q, eps):
    """EM's expected error in quality units, softmax(eps q / 2) in log space."""
    z = eps * (q - q.max()) / 2.0
    return float(np.exp(z - special.logsumexp(z)) @ (q.max() - q))


def _pf_error_by_quadrature(q, eps):
    """PF's expected error from P(r) = p_r int_0^1 prod_{j != r} (1 - t p_j) dt, integrated adaptively."""
    p = np.exp(eps * (q - q.max()) / 2.0)
    gap = q.max() - q
    keep = gap > 0  # the best candidate contributes no error

    def f(t):
        log_all = np.sum(np.log1p(-t * p[keep])) + (np.sum(~keep) * math.log1p(-t) if t < 1 else -np.inf)
        return float(np.sum(p[keep] * gap[keep] * np.exp(log_all - np.log1p(-t * p[keep]))))

    return integrate.quad(f, 0.0, 1.0, epsabs=1e-9, epsrel=1e-9, limit=400)[0]


def _check_bar_rows(rows):
    assert rows and list(rows[0]) == BAR_COLUMNS
    for r in rows:
        assert r["anchor"] == "em"
        q, eps = _quality(r["dataset"], r["task"]), float(r["eps"])
        # the anchor: EM's error is 50 quality units (the authors' get_bar), recomputed by hand
        assert float(r["em_expected_error"]) == pytest.approx(50.0, rel=1e-8)
        assert _em_error(q, eps) == pytest.approx(50.0, rel=1e-7)
        pf = float(r["pf_expected_error"])
        assert _pf_error_by_quadrature(q, eps) == pytest.approx(pf, rel=1e-6)
        # Theorem 2 and the "factor of two": PF is better, by at most a factor 2
        assert 1.0 < float(r["error_ratio"]) <= 2.0
        assert float(r["error_ratio"]) == pytest.approx(50.0 / pf, rel=1e-9)


@pytest.mark.xdist_group("pf2020")
def test_bar_charts_fast_are_anchored_at_em_50_quality_units(tmp_path):
    runpy.run_path(str(next(p for p in SCRIPTS if p.stem == "fig7")))["main"](["--fast", "--out", str(tmp_path)])
    rows = _rows(tmp_path / "fig7.csv")
    assert {r["task"] for r in rows} == {"mode", "median"}
    _check_bar_rows(rows)


def test_committed_bar_charts_carry_the_authors_setting():
    fig3c, fig7 = _rows(COMMITTED / "fig3c.csv"), _rows(COMMITTED / "fig7.csv")
    datasets = ["HEPTH", "ADULTFRANK", "MEDCOST", "SEARCHLOGS", "PATENT"]
    assert [r["dataset"] for r in fig3c] == datasets and {r["task"] for r in fig3c} == {"mode"}
    assert [(r["dataset"], r["task"]) for r in fig7] == [(d, t) for t in ("mode", "median") for d in datasets]
    assert fig3c == fig7[:5]
    _check_bar_rows(fig7)
    # "close to a factor of two for all data sets": every ratio is at least 1.5, most are at least 1.9
    ratios = [float(r["error_ratio"]) for r in fig7]
    assert min(ratios) >= 1.5 and sum(x >= 1.9 for x in ratios) >= 6
    # PATENT's mode bar: the true root (eps ~ 0.0085, PF 27.3), not the authors' spurious 0.1257 (PF 0)
    patent = next(r for r in fig3c if r["dataset"] == "PATENT")
    assert float(patent["eps"]) < 0.01 and float(patent["pf_expected_error"]) > 25
    assert not (COMMITTED / "fig3c_em.csv").exists()  # the primary 3(c) is the authors' EM anchor now


def test_mode_in_quality_units_is_the_monotonic_mechanism_on_counts():
    from optnoise.mechanisms.selection import em_pmf, expected_error, pf_pmf

    x = load_dpbench("MEDCOST").astype(float)
    for eps in (0.001, 0.004, 0.02):
        for pmf in (em_pmf, pf_pmf):
            a, b = pmf(2 * x, eps), pmf(x, eps, monotonic=True)
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-300)
            assert expected_error(a, 2 * x) == pytest.approx(2 * expected_error(b, x), rel=1e-9)


def test_committed_fig3a_is_in_quality_units_on_the_authors_range():
    rows = [r for r in _rows(COMMITTED / "fig3a.csv") if r["kind"] == "curve"]
    q = _quality("HEPTH", "mode")
    assert float(rows[0]["eps"]) == pytest.approx(1e-4)
    # the range ends where EM's error is 1 quality unit (the notebook's expected_epsilon(q, 1.0))
    assert float(rows[-1]["em_expected_error"]) == pytest.approx(1.0, rel=1e-6)
    assert _em_error(q, float(rows[-1]["eps"])) == pytest.approx(1.0, rel=1e-6)
    assert float(rows[0]["em_expected_error"]) == pytest.approx(_em_error(q, 1e-4), rel=1e-9)


def _ratio_table(name, key):
    out = {}
    for r in _rows(COMMITTED / f"{name}.csv"):
        out.setdefault((int(r["m"]), int(r["k"])), []).append(
            (float(r["eps"]), float(r[f"{key}_ratio_regular_lp"]), float(r[f"{key}_ratio_paper_lp"]))
        )
    return {mk: np.array(v) for mk, v in out.items()}


def _check_fig2_grid(table, mks):
    assert sorted(table) == sorted(mks)
    for v in table.values():
        np.testing.assert_allclose(v[:, 0], np.logspace(-2, 1, 250), rtol=1e-9)


def test_committed_fig2a_is_the_authors_configuration_and_claims():
    t = _ratio_table("fig2a", "pf")
    _check_fig2_grid(t, [(m, 4) for m in (3, 4, 5, 6)])
    maxima = []
    for v in t.values():
        eps, reg, pap = v.T
        assert np.all(reg >= 1 - 1e-8) and np.all(pap >= 1 - 1e-8)
        above = eps >= GOLDEN_EPS
        assert np.all(np.abs(reg[above] - 1) < 1e-8) and np.all(np.abs(pap[above] - 1) < 1e-8)  # Theorem 3
        assert max(reg.max(), pap.max()) < 1.0115  # "barely exceeds one" (the authors' y-range tops at 1.0115)
        maxima.append(reg.max())
    assert max(maxima) - min(maxima) < 0.005  # "no strong dependence on m"


def test_committed_fig2bc_claims():
    pf, em = _ratio_table("fig2b", "pf"), _ratio_table("fig2c", "em")
    mks = [(4, k) for k in (2, 4, 6, 8)]
    _check_fig2_grid(pf, mks)
    _check_fig2_grid(em, mks)
    # 2(b): PF's ratio grows slowly with k (the printed LP's peak), staying below 1.0115
    peaks = [pf[mk][:, 2].max() for mk in mks]
    assert all(a < b for a, b in zip(peaks[:-1], peaks[1:], strict=True)) and peaks[-1] < 1.0115
    # 2(c): EM's ratio is much larger, grows with eps and k towards 2, and both ratios tend to 1 as eps -> 0
    em_last = [em[mk][-1, 1] for mk in mks]
    assert all(a < b for a, b in zip(em_last[:-1], em_last[1:], strict=True)) and em_last[-1] > 1.9
    for mk in mks:
        assert em[mk][0, 1] < 1.01 and pf[mk][0, 1] < 1.0001
        assert em[mk][:, 1].max() > 1.8  # much larger than PF's, which stays within 1% of one
        assert em[mk][:, 1].max() - 1 > 50 * (pf[mk][:, 1].max() - 1)
