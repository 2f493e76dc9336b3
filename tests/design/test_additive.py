"""The additive release ``q + eta`` on Z (optnoise.design.additive), against independent routes.

* pure DP equals the discrete staircase of Geng and Viswanath, optimised here by brute force
  over its step ``r`` with plain truncated sums (for D = 1 the discrete Laplace);
* the modulo design with circular costs converges to it as n grows;
* the achieved delta is recomputed from ``pmf_at`` on a long window by plain hockey-stick sums
  and by dp-accounting's PLD from the two PMFs, both orders.
"""

import math

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld_lib

from optnoise import Neighborhood, NoiseDesign
from optnoise.design.additive import parse_metric, tail_weights


def _additive(**kw):
    kw.setdefault("neighborhood", Neighborhood.bd(1))
    kw.setdefault("privacy", "dp")
    return NoiseDesign(release="additive", **kw)


def _staircase(D: int, eps: float, p: float) -> float:
    """min over r = 1..D of E|eta|^p of the discrete staircase (Geng-Viswanath), by truncated sums."""
    a, best = math.exp(-eps), math.inf
    i = np.arange(0, int(60 * D / eps) + 10)
    for r in range(1, D + 1):
        f = a ** (i // D) * np.where(i % D < r, 1.0, a)
        full = np.concatenate([f[:0:-1], f])
        x = np.arange(-i[-1], i[-1] + 1)
        best = min(best, float(full @ np.abs(x) ** p / full.sum()))
    return best


@pytest.mark.parametrize("D", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("metric,power", [("mse", 2), ("mae", 1)])
def test_pure_dp_is_the_discrete_staircase(D, metric, power):
    for eps in (0.5, 1.0):
        res = _additive(neighborhood=Neighborhood.bd(D), eps=eps, metric=metric).solve()
        assert res.status == "optimal"
        assert res.distortion == pytest.approx(_staircase(D, eps, power), rel=1e-6)
        assert res.achieved["dp"] == 0.0
        assert "inactive" in res.support_note


def test_count_is_the_discrete_laplace():
    a = math.exp(-1.0)
    res = _additive(eps=1.0, metric="mse").solve()
    assert res.distortion == pytest.approx(2 * a / (1 - a) ** 2, rel=1e-9)
    # the whole PMF is the discrete Laplace (1-a)/(1+a) a^|x|, tails included
    x = np.arange(-40, 41)
    assert res.pmf_at(x) == pytest.approx((1 - a) / (1 + a) * a ** np.abs(x), rel=1e-6, abs=1e-15)
    assert res.pmf.sum() + res.tail.mass == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("delta", [0.0, 1e-3])
def test_modulo_with_circular_costs_converges_to_additive(delta):
    add = _additive(neighborhood=Neighborhood.bd(2), eps=1.0, delta=delta, metric="mse").solve().distortion
    gaps = []
    for n in (20, 40, 80):
        mod = NoiseDesign(
            n=n, neighborhood=Neighborhood.bd(2), eps=1.0, delta=delta, metric="circular-mse", privacy="dp"
        ).solve(solver="highs")
        gaps.append(add - mod.distortion)  # the wrapped additive noise is feasible on the ring
    assert all(g >= -1e-9 for g in gaps)
    assert gaps[0] > gaps[1] > gaps[2] - 1e-12
    assert gaps[-1] < 1e-5 * add


def _window(res, M):
    x = np.arange(-M, M + 1)
    return x, res.pmf_at(x)


def _hockey(p, q, eps):
    return float(np.maximum(p - math.exp(eps) * q, 0.0).sum())


@pytest.mark.parametrize(
    "nb,eps,delta,metric",
    [
        (Neighborhood.bd(1), 1.0, 1e-3, "mse"),
        (Neighborhood.bd(2), 0.7, 1e-4, "mae"),
        (Neighborhood.bd(3), 1.0, 0.0, "mse"),
        (Neighborhood.shifts([1, 3], directed=True), 1.0, 1e-2, "er"),
    ],
)
def test_achieved_delta_by_plain_sums_and_dp_accounting(nb, eps, delta, metric):
    res = _additive(neighborhood=nb, eps=eps, delta=delta, metric=metric).solve()
    assert res.status == "optimal" and res.verify()
    M = res.L + 400 * max(abs(s[0]) for s in nb.raw)  # the tail's mass beyond M is below 1e-100
    x, f = _window(res, M)
    assert f.sum() == pytest.approx(1.0, abs=1e-12)
    shifts = {s[0] for s in nb.raw} | (set() if nb.directed else {-s[0] for s in nb.raw})
    worst, pess, opt = 0.0, 0.0, 0.0
    at = eps if delta > 0 else eps * (1 + 1e-6) + 1e-12  # the documented pure-DP rule (privacy.verification)
    for mu in shifts:
        # the modulo design's convention: f(eta) against f(eta + mu), on a padded common window
        pad = np.zeros(abs(mu))
        p = np.concatenate([pad, f]) if mu > 0 else np.concatenate([f, pad])
        q = np.concatenate([f, pad]) if mu > 0 else np.concatenate([pad, f])
        worst = max(worst, _hockey(p, q, at))
        keep = (p > 0) | (q > 0)
        with np.errstate(divide="ignore"):
            lp, lq = np.log(p[keep]), np.log(q[keep])
        up = {i: float(v) for i, v in enumerate(lp)}
        lo = {i: float(v) for i, v in enumerate(lq)}
        # both orders: H(P||Q) and H(Q||P), which is shift -mu (listed too unless directed); dp-accounting's
        # one-direction PLD of (lower, upper) measures H(upper||lower) (checked by hand on a two-point pair)
        for first, second in ((up, lo), (lo, up)):
            if first is lo and nb.directed:
                continue
            for pessimistic in (True, False):
                pld = pld_lib.from_two_probability_mass_functions(
                    second, first, pessimistic_estimate=pessimistic, value_discretization_interval=1e-5, symmetric=True
                )
                d = float(pld.get_delta_for_epsilon(at))
                pess, opt = (max(pess, d), opt) if pessimistic else (pess, max(opt, d))
    assert res.achieved["dp"] == pytest.approx(worst, rel=1e-9, abs=1e-15)
    assert worst <= delta * (1 + 1e-6) + 1e-100  # the window edge leaks its (< 1e-100) mass
    # dp-accounting's pessimistic and optimistic discretisations sandwich the exact value
    assert opt - 1e-12 <= worst <= pess + 1e-12
    assert pess - opt < 0.2 * max(delta, 1e-3)


@pytest.mark.parametrize("metric", ["mse", "mae", "abs^3", "abs^1.5", "er", "exceed:3"])
def test_tail_sums_are_exact(metric):
    cost = parse_metric(metric, None)
    a, P = math.exp(-0.8), 3
    x = np.array([5, 6, 7, -5, -6, -7])
    m = np.arange(0, 3000)
    brute = [float(np.sum(a**m * cost.fn(v + np.sign(v) * m * P))) for v in x]
    assert tail_weights(cost, x, P, a) == pytest.approx(brute, rel=1e-12)


def test_metrics_and_notions():
    pure = _additive(eps=1.0, metric="er").solve()
    # pure DP, er: the optimum over all noises on Z is the discrete Laplace's P(eta != 0) = 2a/(1+a)
    a = math.exp(-1.0)
    assert pure.distortion == pytest.approx(2 * a / (1 + a), rel=1e-9)
    dp = _additive(eps=1.0, delta=1e-3, metric="er").solve()
    pdp = _additive(eps=1.0, delta=1e-3, metric="er", privacy="pdp").solve()
    assert dp.distortion <= pdp.distortion + 1e-12 <= pure.distortion + 2e-12
    assert pdp.achieved["pdp"] <= 1e-3 * (1 + 1e-6)
    prof = _additive(eps=None, profile=[(1.0, 1e-3), (2.0, 0.0)], privacy="profile", metric="mse").solve()
    assert prof.status == "optimal" and prof.verify()
    assert prof.achieved["profile"][1] == 0.0
    fn = _additive(eps=1.0, metric=lambda e: e.astype(float) ** 2).solve()
    assert fn.distortion == pytest.approx(pure.actual["mse"], rel=1e-9)
    fixed = _additive(eps=1.0, metric="mse", support=20).solve()
    assert "given" in fixed.support_note and fixed.L == 20
    vec = _additive(eps=1.0, metric=np.arange(-20, 21) ** 2.0, support=20).solve()
    # each tail is charged its boundary cost 400, below eta^2 there
    assert vec.distortion == pytest.approx(vec.pmf @ np.arange(-20, 21) ** 2.0 + 400 * vec.tail.mass, rel=1e-12)
    assert vec.distortion <= fixed.distortion + 1e-12


def test_spec_round_trip_and_repr():
    d = _additive(neighborhood=Neighborhood.bd(2), eps=1.0, delta=1e-6, metric="mae", support=10)
    again = NoiseDesign.from_spec(d.spec())
    assert repr(again) == repr(d) and again.key() == d.key()
    assert "n" not in d.spec()


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(n=10, eps=1.0), "takes no n"),
        (dict(eps=1.0, privacy="rdp"), "takes its budget"),
        (dict(eps=1.0, privacy="zcdp", rho=0.5), "instead of eps/delta"),
        (dict(eps=1.0, privacy="composed"), "compositions is required"),
        (dict(eps=1.0, privacy="pdp-kadam"), "not yet supported"),
        (dict(eps=1.0, objective="epsilon", max_distortion=3.0), "objective"),
        (dict(eps=1.0, neighborhood=Neighborhood.bd(3), support=2), "support"),
        (dict(eps=1.0, support=0), "support"),
        (dict(eps=1.0, metric="circular-mse"), "metric"),
        (dict(eps=1.0, metric="abs^x"), "metric"),
        (dict(eps=1.0, metric=np.ones(5)), "support"),
        (dict(eps=1.0, neighborhood=Neighborhood.shifts([(1, 2)])), "scalar"),
    ],
)
def test_bad_input(kw, match):
    with pytest.raises(ValueError, match=match):
        _additive(**kw)


def test_n_still_required_elsewhere():
    with pytest.raises(ValueError, match="n is required"):
        NoiseDesign(eps=1.0, neighborhood=Neighborhood.bd(1))
    with pytest.raises(ValueError, match="support"):
        NoiseDesign(n=5, eps=1.0, neighborhood=Neighborhood.bd(1), support=3)


def test_small_delta_tolerance_is_repaired_by_mixing_with_the_pure_optimum():
    # HiGHS meets this LP's rows to ~2e-11, which exceeds delta = 1e-6 by ~1e-4 relative: the PMF is
    # mixed with the family's pure-DP optimum (the hockey stick is convex) and still proven optimal
    res = _additive(neighborhood=Neighborhood.bd(10), eps=1.0, delta=1e-6, metric="mse", support=159).solve(
        solver="highs"
    )
    assert res.status == "optimal" and res.verify()
    assert res.achieved["dp"] <= 1e-6
    assert res.gap <= 1e-6
    pure = _additive(neighborhood=Neighborhood.bd(10), eps=1.0, metric="mse").solve()
    assert res.distortion < pure.distortion


def test_baselines_calibrated_by_the_same_accounting():
    from optnoise.privacy.noise_families import discrete_gaussian_delta, discrete_gaussian_sigma2, geometric_noise

    a = math.exp(-1.0)
    pure = _additive(eps=1.0, metric="mse").solve()
    assert pure.baselines["discrete_laplace"] == pytest.approx(2 * a / (1 - a) ** 2, rel=1e-9)
    assert pure.baselines["discrete_gaussian"] == math.inf
    res = _additive(eps=1.0, delta=1e-6, metric="mse").solve()
    base = res.baselines
    assert res.distortion <= min(base.values())
    # the Gaussian's delta, from its variance alone, sits at the target (the least noise that meets it)
    s2 = discrete_gaussian_sigma2(base["discrete_gaussian"])
    assert discrete_gaussian_delta(1.0, s2) <= 1e-6 * (1 + 1e-6)
    assert discrete_gaussian_delta(1.0, s2 * (1 - 1e-6)) > 1e-6 * (1 - 1e-3)
    # the Laplace: variance 2 alpha / (1 - alpha)^2 inverted, then its delta on Z
    v = base["discrete_laplace"]
    alpha = (v + 1 - math.sqrt(2 * v + 1)) / v
    assert geometric_noise(alpha).delta(1.0) <= 1e-6 * (1 + 1e-6)
    assert alpha < a  # less noise than pure eps-DP needs
    assert geometric_noise(alpha * (1 - 1e-4)).delta(1.0) > 1e-6


def test_pdp_milp_agrees_with_the_modulo_milp_on_a_large_ring():
    # a second formulation: the modulo MILP (Definition 2 per shift) with the error rate, whose ring
    # allows wrap-around (so it is never worse) and which stops using it once n is large
    add = _additive(eps=1.0, delta=1e-3, metric="er", privacy="pdp").solve()
    assert add.status == "optimal"
    for n, exact in ((10, False), (20, True), (30, True)):
        mod = NoiseDesign(n=n, neighborhood=Neighborhood.bd(1), eps=1.0, delta=1e-3, metric="er", privacy="pdp").solve(
            solver="highs"
        )
        assert mod.distortion <= add.distortion + 1e-9
        if exact:
            assert mod.distortion == pytest.approx(add.distortion, rel=1e-9)


# --------------------------------------------------------------------------------------------
# the restricted routes to speed: relaxation bound at the wider support, lazy entries at L
# --------------------------------------------------------------------------------------------


class _Seed:
    """A stand-in result: only ``pmf_at`` is read by the relaxation."""

    def __init__(self, fn):
        self.pmf_at = fn


_RESTRICTED_CASES = [
    (Neighborhood.bd(3), {"eps": 1.0, "delta": 1e-4}),
    (Neighborhood.bd(2), {"eps": 0.5}),  # pure: the relaxation drops ratio rows
    (Neighborhood.bd(2, directed=True), {"eps": 1.0, "delta": 1e-3}),
    (Neighborhood.bd(2), {"privacy": "profile", "profile": [(0.5, 1e-3), (1.5, 1e-5)]}),
]


@pytest.mark.parametrize("nb,kw", _RESTRICTED_CASES)
def test_relaxed_bound_never_above_the_full_optimum_at_the_wider_support(nb, kw):
    from optnoise.design import additive

    L = 12
    d = _additive(neighborhood=nb, metric="mse", support=L, **kw)
    res = d.solve(solver="highs")
    assert res.status == "optimal"
    wide = L + L // 4
    full = _additive(neighborhood=nb, metric="mse", support=wide, **kw).solve(solver="highs")
    assert full.status == "optimal"
    a = math.exp(-1.0)
    laplace = _Seed(lambda x: (1 - a) / (1 + a) * a ** np.abs(np.asarray(x, dtype=float)))
    point = _Seed(lambda x: (np.asarray(x) == 0).astype(float))  # a bad guess: most binding rows dropped
    for seed in (res, laplace, point):
        bound, size = additive.relaxed_bound(d, seed, wide, "highs", None, None, False)
        assert bound is not None
        # weak duality on a relaxation: never above the optimum of the full model at the wider support
        assert bound <= full.distortion + 1e-9 * max(1.0, full.distortion)
        assert size["rows"] < additive.build(d, wide)[0].shape[0]
    # from the optimum at L it is tight whenever the full model at the wider support does no better
    bound, _ = additive.relaxed_bound(d, res, wide, "highs", None, None, False)
    if full.distortion >= res.distortion * (1 - 1e-7):
        assert bound == pytest.approx(full.distortion, rel=1e-6)


@pytest.mark.parametrize("nb,kw", _RESTRICTED_CASES)
def test_lazy_entries_reach_the_full_models_optimum(nb, kw):
    from optnoise.design import additive
    from optnoise.engine.tolerance import MIP_REL_GAP

    L = 15
    d = _additive(neighborhood=nb, metric="mse", **kw)
    full = additive._solve_at(d, L, "highs", None, MIP_REL_GAP, False, None, False)
    a = math.exp(-0.5)
    seeds = [
        lambda x: (1 - a) / (1 + a) * a ** np.abs(np.asarray(x, dtype=float)),
        lambda x: (np.asarray(x) == 0).astype(float),  # needs rounds (or the fall-back to the full model)
    ]
    assert full.status == "optimal"
    for seed in seeds:
        lazy = additive._solve_at(d, L, "highs", None, MIP_REL_GAP, False, None, False, seed=seed)
        assert lazy.status == "optimal"
        assert lazy.distortion == pytest.approx(full.distortion, rel=2e-6)
        assert lazy.verify()
        assert lazy.model_size["rows"] <= full.model_size["rows"]
