"""The trade-off lower bound of composed designs (:mod:`optnoise.design.composed_tradeoff`).

A lower bound must never exceed what a certified noise achieves: checked against noises calibrated
here by the accounting (discrete Gaussian, discrete Laplace) over several (k, eps, delta, n) and
neighbourhoods, against an exhaustive grid of symmetric PMFs judged by the exact composed hockey
stick on a tiny ring, and its parts on their own (the certified LP values against a feasible PMF's
own curve, the composed hockey stick against exact enumeration).
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest

from optnoise import Neighborhood, NoiseDesign
from optnoise.design import composed_tradeoff as ct
from optnoise.design.composed_bounds import bound_and_method, eps_bound_and_method, lp_lower_bound
from optnoise.design.composed_families import Support, calibrate_family, family_within
from optnoise.design.pipeline import proof_of
from optnoise.design.result import DesignResult
from optnoise.privacy import accounting

#: A coarser grid than the default keeps these tests quick (validity does not depend on the grid).
FAST = 0.01


def design(n, k, eps, delta, nb=None, metric="circular-mse", **kw):
    return NoiseDesign(
        n=n,
        eps=eps,
        delta=delta,
        neighborhood=nb or Neighborhood.bd(1),
        metric=metric,
        privacy="composed",
        compositions=k,
        **kw,
    )


def calibrated_costs(d):
    """Distortions of the discrete Gaussian and Laplace calibrated by the design's own accounting."""
    out = {}
    sup = Support(d.n, d.shape, d.release)
    N = d.n + 1
    shifts = [int(v) - N if v > N // 2 else int(v) for v in np.asarray(d.shifts).ravel()]  # centred: 170 is -1
    for fam in ("gaussian", "laplace"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = calibrate_family(
                fam, sup, d.compositions, d.eps, d.delta, shifts=shifts, discretization=d.discretization
            )
        if got is not None:
            f = np.asarray(got[0], dtype=float).ravel()
            assert accounting.compose(f, d.shifts, d.compositions, warn=False).delta(d.eps) <= d.delta
            out[fam] = float(np.asarray(d.cost, dtype=float).ravel() @ f)
    return out


CASES = [
    (40, 2, 1.0, 1e-5, None, "circular-mse"),
    (60, 4, 0.5, 1e-6, None, "circular-mse"),
    (50, 10, 2.0, 1e-3, None, "circular-mse"),
    (40, 3, 1.0, 1e-5, Neighborhood.bd(2), "circular-mse"),
    (40, 3, 1.0, 1e-4, Neighborhood.sd(1, directed=True), "circular-mse"),  # directed: the general LP
    (30, 3, 1.0, 1e-5, None, "er"),
]


@pytest.mark.parametrize(("n", "k", "eps", "delta", "nb", "metric"), CASES)
def test_bound_never_above_a_certified_noise(n, k, eps, delta, nb, metric):
    """(a) Searched up to four times the best calibrated noise, the bound stays below every calibrated noise."""
    d = design(n, k, eps, delta, nb, metric)
    costs = calibrated_costs(d)
    assert costs
    b, how = bound_and_method(d, upper=4.0 * min(costs.values()))
    assert b is not None and 0 < b <= min(costs.values())
    # (b) the reported bound is the larger of the two methods
    lp = lp_lower_bound(d)
    assert b >= (lp or 0.0)
    assert how == ("tradeoff" if b > (lp or 0.0) else "lp")


def _exact_composed_hs(f, g, k, eps):
    """max over both orders of H_{e^eps}(f^k || g^k), by enumerating k-tuples (float, small rings)."""
    P, Q = np.asarray(f, float), np.asarray(g, float)
    for _ in range(k - 1):
        P, Q = np.multiply.outer(P, f).ravel(), np.multiply.outer(Q, g).ravel()
    e = math.exp(eps)
    return max(np.maximum(P - e * Q, 0).sum(), np.maximum(Q - e * P, 0).sum())


def test_bound_below_exhaustive_grid_of_symmetric_pmfs():
    """(c) On a ring of 7 at k = 2, no symmetric PMF on a 1/80 grid meeting the exact composed guarantee
    costs less than the bound (the bound's argument covers exactly these PMFs), and it is not vacuous."""
    n, k, eps, delta = 6, 2, 1.0, 0.02
    d = design(n, k, eps, delta)
    b = ct.tradeoff_bound(d, 0.0, None)
    N = n + 1
    r = np.minimum(np.arange(N), N - np.arange(N))
    cost = np.asarray(d.cost, dtype=float)
    M = 80
    best = math.inf
    for a1, a2, a3 in itertools.product(range(M // 2 + 1), repeat=3):
        if a1 + a2 + a3 > M // 2:
            continue
        p = np.array([M - 2 * (a1 + a2 + a3), a1, a2, a3]) / M
        f = p[r]
        c = float(cost @ f)
        if c < best and _exact_composed_hs(f, np.roll(f, 1), k, eps) <= delta:
            best = c
    assert b is not None and 0.5 * best < b <= best


def test_certified_curve_bounds_a_feasible_noise():
    """Step 2 on its own: at V = cost(f), every certified U(lam) is at least f's own h_f(lam)."""
    d = design(40, 3, 1.0, 1e-5)
    tb = ct.setup(d)
    lp = tb.lps[0][0]
    N = d.n + 1
    r = np.minimum(np.arange(N), N - np.arange(N)).astype(float)
    for s2 in (4.0, 9.0, 30.0):
        f = np.exp(-(r**2) / (2 * s2))
        f /= f.sum()
        V = float(np.asarray(d.cost, float) @ f)
        U = lp.upper(V)
        g = np.roll(f, -1)  # f(z + 1)
        h_f = np.array([np.minimum(g, lam * f).sum() for lam in tb.lams])
        assert np.all(h_f <= U + 1e-12)
        # and not vacuous: the LP optimum is attained by some PMF, so U is not far above the best curve
        assert np.all(U <= np.minimum(1.0, tb.lams) + 1e-12)


def test_composed_hockey_stick_is_a_lower_bound_of_the_exact_one():
    """Step 4 on its own: against exact enumeration of a small pair (both orders)."""
    rng = np.random.default_rng(3)
    for _ in range(3):
        a = rng.dirichlet(np.ones(6))
        b = rng.dirichlet(np.ones(6))
        pair = ct._Pair(a, b, 0.0, 0.0)
        for k in (2, 3):
            for eps in (0.0, 0.3, 1.0):
                e = math.exp(eps)
                P, Q = a, b
                for _ in range(k - 1):
                    P, Q = np.multiply.outer(P, a).ravel(), np.multiply.outer(Q, b).ravel()
                exact_fw = np.maximum(P - e * Q, 0).sum()
                exact_rv = np.maximum(Q - e * P, 0).sum()
                lo_fw = ct.composed_hockey_lower(pair, k, eps)
                lo_rv = ct.composed_hockey_lower(pair.reverse(), k, eps)
                assert lo_fw <= exact_fw and lo_rv <= exact_rv
                assert lo_fw >= exact_fw - 5e-3 and lo_rv >= exact_rv - 5e-3  # the lattice rounding only


def test_infinite_loss_atoms_count_fully():
    """Mass of A where B is 0 is delta whatever eps: 1 - (1 - m)^k of it."""
    pair = ct._Pair(np.array([0.9]), np.array([1.0]), 0.1, 0.0)
    assert ct.composed_hockey_lower(pair, 3, 50.0) == pytest.approx(1 - 0.9**3, abs=2e-9)


def test_result_reports_the_tradeoff_method_and_keeps_it():
    """The result's bound is the trade-off one here (the LP bounds are far lower), named in the proof."""
    d = design(24, 3, 1.0, 1e-5)
    res = d.solve(time_limit=120)  # a safety net: the limit bounds the whole solve
    assert res.status == "feasible" and res.verify()
    assert res.bound_method == "tradeoff" and "lower bound by tradeoff" in res.message
    assert res.bound > 1.5 * lp_lower_bound(d) and res.bound <= res.distortion
    assert proof_of(res)["method"] == "tradeoff"
    again = DesignResult.from_dict(res.to_dict(), design=d)
    assert again.bound_method == "tradeoff"


def test_out_of_scope_falls_back_to_the_lp_bounds():
    d = design(10, 2, 1.0, 1e-5, metric="mse", release="clamp")
    assert ct.setup(d) is None
    b, how = bound_and_method(d)
    assert how == "lp" and b == lp_lower_bound(d)


def test_eps_bound_below_the_designs_eps():
    """Dual form: at a variance cap, the trade-off eps bound is below what a calibrated Gaussian reaches."""
    d = design(60, 4, None, 1e-6, objective="epsilon", max_distortion=16.0)
    f = family_within("gaussian", Support(d.n, d.shape, d.release), np.asarray(d.cost, float), 16.0)
    e_dg = accounting.compose(f, d.shifts, 4, warn=False).epsilon(1e-6)
    b, how = eps_bound_and_method(d, 16.0, e_dg, "highs")
    assert how == "tradeoff" and 0 < b <= e_dg


@pytest.mark.slow
def test_headline_k10():
    """(d) k = 10, (1, 1e-5), +-1, circular MSE, n = 170 (the README's example): the old bound is 18.3
    against the design's 129.30; the trade-off bound is several times larger and below the Gaussian."""
    d = design(170, 10, 1.0, 1e-5)
    costs = calibrated_costs(d)
    lp = lp_lower_bound(d)
    b, how = bound_and_method(d, upper=min(costs.values()))
    assert how == "tradeoff" and b <= min(costs.values())
    assert b > 3.0 * lp


def _pair_curve(pair, alphas):
    """The trade-off curve of a pair of atoms, at ``alphas`` (steepest atoms first: the Neyman-Pearson order)."""
    order = np.argsort(-(pair.b / pair.a), kind="stable")
    xa = np.concatenate([[0.0], np.cumsum(pair.a[order])])
    yb = (1.0 - pair.b_inf) - np.concatenate([[0.0], np.cumsum(pair.b[order])])
    return np.interp(alphas, xa, yb, right=0.0)


def _exact_curve(f, g, alphas):
    """T(f, g)(a) = max over lam in {0} and the likelihood ratios of sum min(g, lam f) - lam a (exact)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        lams = np.unique(np.concatenate([[0.0], (g / f)[f > 0]]))
    h = np.array([np.minimum(g, lam * f).sum() for lam in lams])
    return np.max(h[None, :] - lams[None, :] * alphas[:, None], axis=1)


@pytest.mark.parametrize("s2", [2.0, 6.0, 20.0])
def test_pair_curve_dominates_every_noise_of_that_cost(s2):
    """Steps 2-3 on their own: the pair built at V = cost(f) has a curve above f's exact trade-off curve."""
    d = design(40, 3, 1.0, 1e-5)
    tb = ct.setup(d)
    N = d.n + 1
    r = np.minimum(np.arange(N), N - np.arange(N)).astype(float)
    f = np.exp(-(r**2) / (2 * s2)) + 0.3 * np.exp(-np.abs(r) / np.sqrt(s2))
    f /= f.sum()
    V = float(np.asarray(d.cost, float) @ f)
    pair = tb.pairs(V)[0][0]
    alphas = np.linspace(0.0, 1.0, 2001)
    F = _pair_curve(pair, alphas)
    T = _exact_curve(f, np.roll(f, -1), alphas)
    assert np.all(T <= F + 1e-12)
    assert np.all(F <= 1.0 - alphas + 1e-12) and abs(pair.a.sum() + pair.a_inf - 1.0) < 1e-9


@pytest.mark.slow
def test_vector_query_bound_below_a_calibrated_product_gaussian():
    """Vector queries (one LP per listed shift): the bound is below a product discrete Gaussian calibrated here."""
    nb = Neighborhood.shifts([(1, 0), (0, 1)])
    d = NoiseDesign(
        n=8, eps=1.0, delta=1e-5, neighborhood=nb, metric="circular-mse", privacy="composed", compositions=2
    )
    N = d.n + 1
    r = np.minimum(np.arange(N), N - np.arange(N)).astype(float)

    def make(s2):
        g = np.exp(-(r**2) / (2 * s2))
        g /= g.sum()
        return np.multiply.outer(g, g)

    lo, hi = 0.1, 100.0
    for _ in range(40):
        mid = math.sqrt(lo * hi)
        ok = accounting.compose(make(mid), d.shifts, 2, warn=False).delta(1.0) <= 1e-5
        lo, hi = (lo, mid) if ok else (mid, hi)
    dg = float(np.asarray(d.cost, float).ravel() @ make(hi).ravel())
    b = ct.tradeoff_bound(d, 0.0, 4.0 * dg, fine=FAST)
    assert b is not None and 0 < b <= dg


def test_deadline_stops_with_a_proven_value():
    """A deadline ends the search early: nothing, or a V that its own test excluded (so still a bound)."""
    import time

    d = design(30, 3, 1.0, 1e-5)
    assert ct.tradeoff_bound(d, 0.0, 50.0, deadline=time.perf_counter()) is None
    full = ct.tradeoff_bound(d, 0.0, 50.0, fine=FAST)
    early = ct.tradeoff_bound(d, 0.0, 50.0, deadline=time.perf_counter() + 0.5, fine=FAST)
    assert full is not None and (early is None or early <= full * (1 + 1e-9))
