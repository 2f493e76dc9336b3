"""Composition-targeted design, ``NoiseDesign(privacy="composed", compositions=k)``: sound, good, honest.

Every returned guarantee is recomputed here without the design's own code path: with
dp-accounting's ``from_two_probability_mass_functions`` (both orders), and for k <= 3 on small
rings by exact enumeration of the k-fold privacy loss in mpmath. Baselines are calibrated in
the test by the same accounting; lower bounds are checked against a random search; k = 1 is
the LP; the dual form, clamped and vector releases, certification and bad input are covered.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from mpmath import mp, mpf

from optnoise import Neighborhood, NoiseDesign
from optnoise.design.composed import MAX_DESIGN_COMPOSITIONS
from optnoise.design.result import DesignResult
from optnoise.privacy import accounting
from optnoise.privacy.verification import within_delta

NB = Neighborhood.bd(1)
EPS, DELTA = 1.0, 1e-5


def composed(n=24, k=3, **kw):
    args = {"n": n, "eps": EPS, "delta": DELTA, "neighborhood": NB, "metric": "circular-mse", "privacy": "composed"}
    args.update(kw)
    return NoiseDesign(compositions=k, **args)


@pytest.fixture(scope="module")
def k3():
    return composed().solve(time_limit=120)


@pytest.fixture(scope="module")
def k2_small():
    return composed(n=14, k=2).solve(time_limit=120)


def _pmf_dicts(f, shift=1):
    g = np.roll(f, -shift)
    keep = np.flatnonzero((f > 0) | (g > 0))
    with np.errstate(divide="ignore"):
        lf, lg = np.log(f), np.log(g)
    return {int(i): float(lf[i]) for i in keep}, {int(i): float(lg[i]) for i in keep}


def _from_two_pmfs_eps(f, k, *, pessimistic, h=1e-4):
    lower, upper = _pmf_dicts(np.asarray(f, dtype=float))
    pld = pld_lib.from_two_probability_mass_functions(
        lower, upper, pessimistic_estimate=pessimistic, value_discretization_interval=h, symmetric=False
    )
    return pld.self_compose(k).get_epsilon_for_delta(DELTA)


def _exact_delta(f, k, eps):
    """Exact delta(eps) of the k-fold composition of (f, f(.+1)) by enumerating k-tuples of outputs (mpmath)."""
    mp.dps = 40
    p = [mpf(float(v)) for v in f]
    q = [mpf(float(v)) for v in np.roll(f, -1)]
    e = mp.exp(mpf(eps))
    total = mpf(0)
    support = [i for i in range(len(p)) if p[i] > 0]
    for tup in itertools.product(support, repeat=k):
        a, b = mpf(1), mpf(1)
        for i in tup:
            a *= p[i]
            b *= q[i]
        if a > e * b:
            total += a - e * b
    return total


# -------------------------------------------------------------------------------------------- soundness


def test_returned_guarantee_is_reverified_by_the_accounting(k3):
    assert k3.status == "feasible" and k3.verify()
    comp = k3.compose(3)
    assert comp.delta(EPS) <= DELTA
    assert comp.epsilon(DELTA) <= EPS + 1e-12
    assert k3.achieved["composed"] <= DELTA
    assert "structured path" in k3.message


def test_independent_dp_accounting_from_two_pmfs_both_orders(k3):
    """The optimistic estimate (a lower bound on the truth) is within the target; the pessimistic
    from_two_pmfs PLD rounds every loss up, so it may exceed it by at most ~k h."""
    f = k3.pmf
    assert np.allclose(f, f[(-np.arange(f.size)) % f.size], rtol=1e-12, atol=0)  # symmetric: one pair covers both
    assert _from_two_pmfs_eps(f, 3, pessimistic=False) <= EPS + 1e-9
    assert _from_two_pmfs_eps(f, 3, pessimistic=True) <= EPS + 3 * 1e-4


def test_exact_enumeration_of_the_composition_small_ring(k2_small):
    f = np.asarray(k2_small.pmf, dtype=float)
    exact = _exact_delta(f, 2, EPS)
    accounted = k2_small.compose(2).delta(EPS)
    assert exact <= DELTA
    assert float(exact) <= accounted * (1 + 1e-9)  # the accounting is pessimistic
    assert accounted <= float(exact) * 1.05 + 1e-12  # ... and close


@pytest.mark.slow
def test_exact_enumeration_k3():
    res = composed(n=10, k=3).solve(time_limit=120)
    f = np.asarray(res.pmf, dtype=float)
    exact = _exact_delta(f, 3, EPS)
    assert exact <= DELTA and float(exact) <= res.compose(3).delta(EPS) * (1 + 1e-9)


def test_calibrated_baselines_are_never_better(k3):
    """Discrete Gaussian and Laplace calibrated here by the same accounting cost at least the design."""
    n = k3.design.n
    N = n + 1
    r = np.minimum(np.arange(N), N - np.arange(N)).astype(float)

    def ok(f):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return accounting.compose(f, [1, -1], 3, warn=False).delta(EPS) <= DELTA

    for shape in (-(r**2) / 2.0, -r):  # Gaussian, Laplace (tempering = the scale)
        g = _calibrate(shape, ok)
        assert float(r**2 @ g) >= k3.distortion * (1 - 1e-9)


def _calibrate(logf, ok):
    """The sharpest exp(a logf) (normalised) that passes ok: geometric bisection on a."""

    def at(a):
        z = a * logf
        f = np.exp(np.maximum(z - z.max(), -40.0))  # no zero mass: every loss finite and <= 40
        return f / f.sum()

    lo, hi = 1e-4, 1e3
    assert ok(at(lo)) and not ok(at(hi))
    for _ in range(40):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if ok(at(mid)) else (lo, mid)
    return at(lo)


def test_lower_bound_is_a_bound_random_search(k2_small):
    """No calibrated random PMF (symmetric or not) beats the reported lower bound."""
    rng = np.random.default_rng(7)
    d = k2_small.design
    N = d.n + 1
    r = np.minimum(np.arange(N), N - np.arange(N)).astype(float)
    assert k2_small.bound is not None and 0 < k2_small.bound <= k2_small.distortion
    best = math.inf
    for _ in range(4):
        logf = -(r ** rng.uniform(0.5, 2.0)) + rng.normal(0, 0.3, N)
        g = _calibrate(logf, lambda h: composed_delta(h, d) <= DELTA)
        best = min(best, float(r**2 @ g))
    assert best >= k2_small.bound


def composed_delta(f, design):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return accounting.compose(f, design.shifts, design.compositions, warn=False).delta(EPS)


def test_status_feasible_with_bound_and_gap(k3):
    assert k3.bound is not None and k3.gap is not None
    assert k3.gap == pytest.approx((k3.distortion - k3.bound) / max(1.0, k3.distortion))
    # the k = 1 LP bound at the same (eps, delta) is valid, and the sum statistic's is larger here
    lp = NoiseDesign(n=24, eps=EPS, delta=DELTA, neighborhood=NB, metric="circular-mse", privacy="dp").solve()
    assert k3.bound >= lp.bound * (1 - 1e-9)


# -------------------------------------------------------------------------------------------- k = 1


def test_k1_is_the_lp_optimum():
    res = composed(n=30, k=1).solve()
    lp = NoiseDesign(n=30, eps=EPS, delta=DELTA, neighborhood=NB, metric="circular-mse", privacy="dp").solve()
    assert res.status == "optimal" and lp.status == "optimal"
    assert res.distortion == pytest.approx(lp.distortion, rel=1e-12)
    assert np.allclose(res.pmf, lp.pmf)
    assert res.verify() and within_delta(res.compose(1).delta(EPS), DELTA)  # eps = 1 lies on the grid


def test_k1_dual_is_proven():
    res = composed(n=30, k=1, eps=None, objective="epsilon", max_distortion=4.0).solve()
    assert res.status == "optimal" and res.verify()
    assert res.distortion <= 4.0
    assert res.bound <= res.eps_objective <= res.bound * (1 + 1e-6) + 1e-9


# -------------------------------------------------------------------------------------------- dual form


@pytest.mark.slow
def test_dual_form_least_eps_under_a_variance_cap():
    d = composed(n=40, k=4, eps=None, objective="epsilon", max_distortion=16.0)
    res = d.solve(time_limit=120)
    assert res.status == "feasible" and res.verify()
    assert res.distortion <= 16.0
    comp = res.compose(4)
    assert comp.epsilon(DELTA) <= res.eps_objective + 1e-12
    assert comp.delta(res.eps_objective) <= DELTA * (1 + 1e-6)
    assert res.bound is not None and res.bound <= res.eps_objective
    # the discrete Gaussian at the cap needs a larger eps
    N = 41
    r = np.minimum(np.arange(N), N - np.arange(N)).astype(float)
    lo, hi = 1.0, 64.0
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        f = np.exp(-(r**2) / (2 * mid))
        f /= f.sum()
        lo, hi = (mid, hi) if float(r**2 @ f) <= 16.0 else (lo, mid)
    f = np.exp(-(r**2) / (2 * lo))
    f /= f.sum()
    assert accounting.compose(f, [1, -1], 4).epsilon(DELTA) >= res.eps_objective
    again = DesignResult.from_dict(res.to_dict(), design=d)
    assert again.eps_objective == res.eps_objective and again.status == "feasible"


# -------------------------------------------------------------------------------------------- general path


def test_clamped_release_is_reverified():
    d = NoiseDesign(
        n=10, eps=EPS, delta=DELTA, neighborhood=NB, metric="mse", privacy="composed", compositions=2, release="clamp"
    )
    res = d.solve(time_limit=120)
    assert res.status == "feasible" and res.verify() and "general path" in res.message
    assert res.compose(2).delta(EPS) <= DELTA
    assert res.bound is not None and res.bound <= res.distortion


def test_vector_query_is_reverified():
    nb = Neighborhood.shifts([(1, 0), (0, 1)])
    d = NoiseDesign(
        n=6, eps=EPS, delta=DELTA, neighborhood=nb, metric="circular-mse", privacy="composed", compositions=2
    )
    res = d.solve(time_limit=120)
    assert res.status == "feasible" and res.verify() and res.pmf.shape == (7, 7)
    assert res.compose(2).delta(EPS) <= DELTA


@pytest.mark.slow
def test_error_rate_and_directed_neighbourhood():
    d = composed(n=12, k=2, metric="er", neighborhood=Neighborhood.sd(1, directed=True))
    res = d.solve(time_limit=120)
    assert res.status == "feasible" and res.verify() and "general path" in res.message
    assert res.compose(2).delta(EPS) <= DELTA


# -------------------------------------------------------------------------------------------- API


def test_certify_single_release_and_composed(k3):
    cd = k3.certify()
    info = cd.composed
    assert info["compositions"] == 3 and info["composed_delta"] <= DELTA
    assert cd.compose(3).delta(EPS) <= DELTA
    assert cd.design.privacy == "dp" and cd.verify()


def test_spec_round_trip_and_cache(tmp_path):
    d = composed(n=12, k=2, discretization=1e-3)
    assert NoiseDesign.from_spec(d.spec()).spec() == d.spec()
    first = d.solve(time_limit=120, cache=tmp_path)
    again = d.solve(time_limit=120, cache=tmp_path)
    assert again.status == first.status and again.distortion == first.distortion and again.bound == first.bound
    assert first.compose(2, discretization=1e-3).delta(EPS) <= DELTA


@pytest.mark.parametrize(
    "kw, name",
    [
        ({"compositions": 2.0}, "compositions"),
        ({"compositions": True}, "compositions"),
        ({"compositions": 0}, "compositions"),
        ({"compositions": 10**12}, "compositions"),
        ({"compositions": MAX_DESIGN_COMPOSITIONS + 1}, "compositions"),
        ({"compositions": None}, "compositions"),
        ({"delta": 0.0}, "delta"),
        ({"delta": None}, "delta"),
        ({"delta": 2.0}, "delta"),
        ({"eps": -1.0}, "eps"),
        ({"eps": None, "objective": "epsilon"}, "max_distortion"),
        ({"objective": "epsilon", "max_distortion": 5.0}, "eps"),
        ({"objective": "delta", "delta": None, "max_distortion": 5.0}, "objective"),
        ({"discretization": 0.5}, "discretization"),
        ({"discretization": -1e-4}, "discretization"),
    ],
)
def test_bad_input_names_the_parameter(kw, name):
    args = {"n": 20, "eps": EPS, "delta": DELTA, "neighborhood": NB, "privacy": "composed", "compositions": 3, **kw}
    with pytest.raises(ValueError, match=name):
        NoiseDesign(**args)


def test_composed_only_arguments_are_refused_elsewhere():
    with pytest.raises(ValueError, match="compositions"):
        NoiseDesign(n=10, eps=1.0, delta=1e-5, neighborhood=NB, privacy="dp", compositions=3)
    with pytest.raises(ValueError, match="objective"):
        NoiseDesign(n=10, delta=1e-5, neighborhood=NB, privacy="dp", objective="epsilon", max_distortion=3.0)
    with pytest.raises(ValueError, match="canonical"):
        composed(n=10, k=2).solve(canonical=True)
    with pytest.raises(ValueError, match="solver"):
        composed(n=10, k=2).solve(solver="scip")
    with pytest.raises(ValueError, match="no LP/MILP model"):
        composed(n=10, k=2).build_model()


def test_golden_share_finds_interior_and_end_minima():
    from optnoise.design.composed_families import golden_share

    calls = []

    def bowl(w):
        calls.append(w)
        return (w - 0.3) ** 2

    value, w = golden_share(bowl)
    # bracket [0, 0.5] after the grid, 8 golden steps shrink it to 0.5 * 0.618^8 ~ 0.011
    assert abs(w - 0.3) < 0.011 and value == pytest.approx((w - 0.3) ** 2)
    assert len(calls) == len(set(calls))  # each share evaluated once
    assert golden_share(lambda w: -w)[1] == 1.0  # an end of the grid is a candidate
    assert golden_share(lambda w: w, grid=(0.25, 0.5, 0.75))[1] < 0.011  # the bracket reaches past the grid


def test_calibrate_family_is_the_threshold_of_the_accounting():
    """The calibrated scale meets the composed target and 0.1% less does not; the discrete Gaussian's
    scale is close to the continuous Gaussian's (its k-fold composition is exactly (eps, delta))."""
    from optnoise.design.composed_families import Support, calibrate_family, family_pmf, family_within
    from optnoise.design.metrics import cost_vector

    n, k = 80, 4
    sup = Support(n, (n + 1,), "modulo")
    pmf, V = calibrate_family("gaussian", sup, k, EPS, DELTA, rtol=1e-6)

    def delta_of(f):
        return accounting.compose(f, [1, -1], k, warn=False).delta(EPS)

    assert delta_of(pmf) <= DELTA < delta_of(family_pmf("gaussian", V * 0.999, sup))
    from optnoise.design.composed_families import gaussian_guess

    assert V == pytest.approx(gaussian_guess(k, EPS, DELTA, 1.0), rel=0.02)
    cost = cost_vector("circular-mse", n)
    f = family_within("laplace", sup, cost, 25.0)
    assert float(cost @ f) == pytest.approx(25.0, rel=1e-9) and float(cost @ f) <= 25.0


def test_the_composed_search_solves_its_lps_through_the_pipeline_not_noise_design_solve(monkeypatch):
    # issue 29: the search calls the single-release LP through an interface (design.composed_bounds.SingleReleaseLP)
    calls = []
    solve = NoiseDesign.solve

    def counted(self, *a, **k):
        calls.append(self.privacy)
        return solve(self, *a, **k)

    monkeypatch.setattr(NoiseDesign, "solve", counted)
    d = NoiseDesign(n=8, eps=1.0, delta=1e-3, neighborhood=Neighborhood.bd(1), privacy="composed", compositions=1)
    res = d.solve()
    assert res.status == "optimal" and res.verify()
    assert calls == ["composed"]  # the k = 1 LP ran, but not by re-entering NoiseDesign.solve


def test_surrogate_lays_its_law_on_all_but_negligible_extremes():
    """Two outputs of mass ~1e-14 with losses near the cap (the edges of the additive release's window) used to
    set the FFT's span: (k - 1) x 5 instead of (k - 1) x 0.3. Moved to the body's ends (``tail``), they change
    the surrogate delta by at most (k - 1) tail, and its gradient not at all in the body."""
    from optnoise.design.composed_search import Surrogate

    x = np.arange(-60, 61)
    f = np.exp(-np.abs(x) / 6.0)
    f /= f.sum()
    # a Laplace pair (cyclic shift by one: losses +-1/6, and 0 where it wraps), and two near-empty outputs
    # whose losses are +-log 10 (as at the additive window's edges)
    P = np.concatenate([f, [1e-14, 1e-15]])
    Q = np.concatenate([np.roll(f, 1), [1e-15, 1e-14]])
    k, eps, tail = 10, 1.0, 1e-13
    exact = Surrogate(k, eps, 1e-4, 3.0)
    cut = Surrogate(k, eps, 1e-4, 3.0, tail=tail)
    loss = np.clip(np.log(np.maximum(P, 1e-300)) - np.log(np.maximum(Q, 1e-300)), -3, 3)
    lo, hi = cut._body(loss, P)
    assert float(loss.max() - loss.min()) > 4.6  # the extremes +-log 10 ...
    assert (lo, hi) == pytest.approx((-1 / 6, 1 / 6))  # ... are not in the body: the Laplace pair's losses
    d0, gP0, _ = exact(P, Q)
    d1, gP1, _ = cut(P, Q)
    assert abs(d1 - d0) <= (k - 1) * tail + 1e-12 * d0
    assert np.allclose(gP1[1:-1], gP0[1:-1], rtol=1e-6, atol=1e-15)


def test_reduced_search_stall_rule_stops_on_evaluation_counts():
    """``stall=(m, rtol)`` stops once the best point fell by at most rtol over m evaluations, and says so."""
    from optnoise.design.composed_search import line_pair_map, reduced_search

    x = np.arange(-30, 31)
    start = np.exp(-np.abs(x) / 4.0)
    start /= start.sum()
    kw = dict(pairs=line_pair_map(x.size, np.array([1, -1])), cost=x.astype(float) ** 2, k=3, eps=0.5)
    free = reduced_search(start, mode="distortion", target=1e-2, max_evals=200, **kw)
    stalled = reduced_search(start, mode="distortion", target=1e-2, max_evals=200, stall=(5, 1e-2), **kw)
    assert "the best point improved by at most 0.01 (relative) over the last 5" in stalled.message
    assert stalled.evaluations < free.evaluations
    assert free.evaluations == 200 and 20 < stalled.evaluations < 100  # measured 49
    assert free.objective <= stalled.objective <= free.objective * 1.1  # measured 29.59 and 31.06
