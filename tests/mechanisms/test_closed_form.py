"""Closed forms of Kadam et al. (2024) against the paper's numbers and the MILP (13).

The independent route is the solver layer: ``NoiseDesign(..., privacy="pdp-kadam")``
with the paper's directed SD/BD shift sets. Feasibility of a closed-form PMF is
re-checked with :func:`optnoise.privacy.curves.delta_pdp_kadam`, which knows nothing
of the closed forms. Expected numbers are the paper's printed values, hand
computations written out here, or solver outputs; never closed_form output.
"""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optnoise import Neighborhood, NoiseDesign, delta_pdp_kadam
from optnoise.mechanisms import closed_form as cf

TOL = 1e-7  # closed form vs solver
LEAK_TOL = 1e-12  # rounding in e^eps * f(eta+mu) == f(eta) on exact staircases


@functools.cache
def _solve(kind: str, n: int, mu: int, eps: float, delta: float) -> tuple[float, ...]:
    nb = Neighborhood.sd(mu, directed=True) if kind == "sd" else Neighborhood.bd(mu, directed=True)
    res = NoiseDesign(n=n, eps=eps, delta=delta, neighborhood=nb, metric="er", privacy="pdp-kadam").solve()
    assert res.status == "optimal"
    return tuple(res.pmf)


def solve(kind: str, n: int, mu: int, eps: float, delta: float) -> np.ndarray:
    return np.array(_solve(kind, n, mu, float(eps), float(delta)))


def shifts(kind: str, mu: int) -> list[int]:
    return [mu] if kind == "sd" else list(range(1, mu + 1))


def assert_valid(pmf: np.ndarray, kind: str, mu: int, eps: float, delta: float) -> None:
    """A PMF that the MILP (13) accepts at (eps, delta)."""
    assert np.all(pmf >= 0) and abs(pmf.sum() - 1) < 1e-12
    assert delta_pdp_kadam(pmf, shifts(kind, mu), eps, tol=LEAK_TOL) <= delta + LEAK_TOL


def steps(pmf: np.ndarray, tol: float = 1e-9) -> tuple[int, ...]:
    """Lengths of the runs of equal consecutive masses; ``eta = 0`` is a run of its own."""
    runs: list[int] = []
    for a, b in zip(pmf[:-1], pmf[1:], strict=True):
        if runs and abs(a - b) <= tol:
            runs[-1] += 1
        else:
            runs.append(1)
    return (1, *runs)


# ============================================================ the paper's stated numbers


class TestPaperNumbers:
    def test_fig1_assignment_orders(self):
        # Fig. 1 caption: order 0, 3, 6, 1, 4, 7, 2, 5 (mu=3) and 0, 2, 4, 6 (mu=2), n=7
        assert cf.sd_cycle(7, 3).tolist() == [0, 3, 6, 1, 4, 7, 2, 5]
        assert cf.sd_cycle(7, 2).tolist() == [0, 2, 4, 6]

    @pytest.mark.parametrize("delta", [0.0, 0.05, 0.2])
    def test_fig9a_ordering(self, delta):
        # Fig. 9a, n=7, mu=3, eps=0.75: f(0)>=f(3)>=f(6)>=f(1)>=f(4)>=f(7)>=f(2)>=f(5)
        order = [0, 3, 6, 1, 4, 7, 2, 5]
        for pmf in (cf.sd_pmf(7, 3, 0.75, delta=delta), solve("sd", 7, 3, 0.75, delta)):
            if delta == 0.0:  # coprime: every mass is positive
                assert np.all(pmf > 0)
            assert np.all(np.diff(pmf[order]) <= 1e-12)

    @pytest.mark.parametrize("delta", [0.0, 0.05, 0.2, 0.5])
    def test_fig9b_zeros(self, delta):
        # Fig. 9b, n=7, mu=2, eps=0.75: f = 0 at eta in {1, 3, 5, 7}; f(0)>=f(2)>=f(4)>=f(6)
        for pmf in (cf.sd_pmf(7, 2, 0.75, delta=delta), solve("sd", 7, 2, 0.75, delta)):
            assert np.all(np.abs(pmf[[1, 3, 5, 7]]) < 1e-12)
            assert np.all(np.diff(pmf[[0, 2, 4, 6]]) <= 1e-12)

    def test_fig9_f0_grows_with_delta_and_b_beats_a(self):
        # "as delta increases, f(0) increases"; mu=2 (zeros) has the lower error rate
        d = np.linspace(0, 1, 201)
        ra, rb = cf.sd_error_rate(7, 3, 0.75, delta=d), cf.sd_error_rate(7, 2, 0.75, delta=d)
        assert np.all(np.diff(ra) <= 1e-15) and np.all(np.diff(rb) <= 1e-15)
        assert np.all(rb <= ra + 1e-15)

    def test_scalar_optimum_n4_eps15_is_lemma4(self):
        # "[0.6469, 0.1443, 0.1443, 0.0322, 0.0322]" at n=4, eps=1.5: Lemma 4 with mu_bar=2
        printed = [0.6469, 0.1443, 0.1443, 0.0322, 0.0322]
        np.testing.assert_allclose(cf.bd_pmf(4, 2, 1.5), printed, atol=5e-5)
        np.testing.assert_allclose(solve("bd", 4, 2, 1.5, 0.0), printed, atol=5e-5)
        # and not the SD closed form with mu=1 or mu=2
        assert not np.allclose(cf.sd_pmf(4, 1, 1.5), printed, atol=5e-3)
        assert not np.allclose(cf.sd_pmf(4, 2, 1.5), printed, atol=5e-3)

    def test_fig10a_lemma4_staircase(self):
        # Fig. 10a: n=8, mu_bar=3, eps=1.5: b=2 steps of length 3 and a last step r=2
        assert cf.bd_step_lengths(8, 3) == (1, 3, 3, 2)
        pmf = solve("bd", 8, 3, 1.5, 0.0)
        assert steps(pmf) == (1, 3, 3, 2)
        np.testing.assert_allclose(cf.bd_pmf(8, 3, 1.5), pmf, atol=TOL)
        # "the vertical height of each step is e^eps times higher than the previous one"
        heights = pmf[[0, 1, 4, 7]]
        np.testing.assert_allclose(heights[:-1] / heights[1:], math.exp(1.5), rtol=1e-9)

    def test_fig10_error_rate_flat_up_to_01212(self):
        phi0 = 1 / (1 + 3 * (math.exp(-1.5) + math.exp(-3)) + 2 * math.exp(-4.5))  # (29) by hand
        for d in [0.0, 0.03, 0.06, 0.09, 0.12, 0.1212]:
            assert solve("bd", 8, 3, 1.5, d)[0] == pytest.approx(phi0, abs=TOL)
        assert solve("bd", 8, 3, 1.5, 0.1213)[0] > phi0 + 1e-5  # the flat region ends there

    def test_fig10_boundaries(self):
        # 0.1212, 0.1238, 0.1522 to 4 decimals. The first two are (37b), (37c) of
        # Theorem 3 (applied by the paper although b + r = 4 >= mu_bar = 3); the
        # third is the flat region with lengths (1,3,2,2,1), which lies beyond the
        # theorem ((h, j) = (1, 2), "j must be increased beyond h").
        e = 1.5
        reg = cf.bd_boundaries(8, 3, e, as_printed=True)
        assert round(reg.delta_bar[0], 4) == 0.1212
        assert round(reg.delta_low[1], 4) == 0.1238
        phi_3 = 1 / sum(w * math.exp(-i * e) for i, w in enumerate((1, 3, 2, 2, 1)))
        low_3 = phi_3 * (math.exp(-e) + math.exp(-2 * e))  # two leaks, cf. (37c) with xi_2
        assert round(low_3, 4) == 0.1522
        # the solver's f(0) is flat exactly from these points on
        for lo, phi in [(reg.delta_low[1], reg.phi0[1]), (low_3, phi_3)]:
            assert solve("bd", 8, 3, e, lo)[0] == pytest.approx(phi, abs=TOL)
            assert solve("bd", 8, 3, e, lo * 1.01)[0] == pytest.approx(phi, abs=TOL)
            assert solve("bd", 8, 3, e, lo * 0.999)[0] < phi - 1e-6

    @pytest.mark.parametrize(
        "delta, lengths",
        [
            (0.1212, (1, 3, 3, 2)),
            (0.12385, (1, 3, 2, 3)),
            (0.15225, (1, 3, 2, 2, 1)),
        ],
    )
    def test_fig10b_step_lengths(self, delta, lengths):
        # the printed deltas are rounded; the upper end of each rounding interval
        # lies inside the flat region that starts at the exact boundary
        assert steps(solve("bd", 8, 3, 1.5, delta)) == lengths

    def test_lemma4_and_bd_flat_region_count(self):
        # "k = b(b-1)/2 alternating flat and linear regions" (Theorem 3, eps large: no cut)
        for n, mb in [(9, 4), (15, 5), (19, 6)]:
            b = n // mb
            reg = cf.bd_boundaries(n, mb, 2.0)
            assert reg.h.size == 1 + b * (b - 1) // 2

    def test_theorem2_remarks(self):
        # "delta_bar_k = e^eps delta_low_k" and "delta_low_k is the smallest non-zero
        # mass f_(n-k) of the k-th flat region"; f*(0) = 1 = delta_low_n
        n, mu, e = 7, 3, 0.75
        low, bar = cf.sd_boundaries(n, mu, e)
        np.testing.assert_allclose(bar[1:-1], math.exp(e) * low[1:-1], rtol=1e-12)
        assert low[-1] == pytest.approx(1.0) and bar[-1] == 1.0
        order = cf.sd_cycle(n, mu)
        for k in range(1, n):
            pmf = cf.sd_pmf(n, mu, e, delta=low[k])
            assert pmf[order][n - k] == pytest.approx(low[k], rel=1e-12)
            assert np.all(pmf[order][n - k + 1 :] == 0)

    def test_corollary1_first_branch(self):
        # The text after (22) says "delta = (1 - rho) e^{-n eps}" between eps_1 and
        # eps_0, "from (21) for h=0, k=1"; (21) and (24) give e^{-(n-1) eps}, and so
        # does the solver.
        n, mu, rho = 7, 3, 0.45
        eps_k = cf.sd_level_eps(n, mu, rho)
        e = float(0.5 * (eps_k[0] + eps_k[1]))
        d = (1 - rho) * math.exp(-(n - 1) * e)
        assert cf.sd_level_curve(n, mu, rho, e) == pytest.approx(d, rel=1e-12)
        assert solve("sd", n, mu, e, d)[0] == pytest.approx(1 - rho, abs=TOL)
        assert solve("sd", n, mu, e, (1 - rho) * math.exp(-n * e))[0] < 1 - rho - 1e-4

    def test_limit_thresholds_of_printed_44_48(self):
        # (44): 0.5 up to ln 2, e^-eps after; (48): up to ln(1 + mu_bar). Continuous there.
        assert cf.sd_limit_error_rate(math.log(2), as_printed=True) == pytest.approx(0.5)
        assert cf.sd_limit_error_rate(0.3, as_printed=True) == 0.5
        for mb in (2, 3, 5):
            t = math.log(1 + mb)
            assert cf.bd_limit_error_rate(mb, t, as_printed=True) == pytest.approx(0.5)
            assert cf.bd_limit_error_rate(mb, t) == pytest.approx(0.5)
            assert cf.bd_limit_error_rate(mb, 0.5 * t, as_printed=True) == 0.5

    def test_46_and_47_agree(self):
        for mb, e in [(1, 0.3), (3, 1.0), (6, 2.5)]:
            phi = 1 / (1 + mb * math.exp(-e) / (1 - math.exp(-e)))  # (46)
            assert 1 - cf.bd_limit_error_rate(mb, e) == pytest.approx(phi, rel=1e-12)


# ============================================================ closed form vs the MILP


def _sd_points(n: int, mu: int, e: float) -> list[float]:
    low, bar = cf.sd_boundaries(n, mu, e)
    m = low.size - 1
    pts = {0.0, 1.0, *low[1:], *bar[:-1]}
    pts |= {0.5 * (low[k] + bar[k]) for k in range(m)}  # inside flat regions
    pts |= {0.5 * (bar[k - 1] + low[k]) for k in range(1, m + 1)}  # inside linear regions
    return sorted(float(p) for p in pts)


# (n, mu, eps): coprime n+1 and mu (m = n), and non-coprime (m = N_mu - 1 < n)
SD_GRID = [(7, 3, 0.75), (6, 4, 0.75), (5, 1, 0.9), (7, 2, 1.5), (5, 4, 1.2), (8, 3, 1.0)]


@pytest.mark.parametrize("n, mu, e", SD_GRID)
def test_sd_against_milp(n, mu, e):
    low, bar = cf.sd_boundaries(n, mu, e)
    assert np.all(np.diff(np.c_[low, bar].ravel()) >= 0)  # 0 = low_0 <= bar_0 < low_1 <= ...
    for d in _sd_points(n, mu, e):
        ref = solve("sd", n, mu, e, d)
        pmf = cf.sd_pmf(n, mu, e, delta=d)
        assert pmf[0] == pytest.approx(ref[0], abs=TOL), d
        assert cf.sd_error_rate(n, mu, e, delta=d) == pytest.approx(1 - ref[0], abs=TOL)
        assert_valid(pmf, "sd", mu, e, d)
        k = int(np.sum(bar[:-1] < d))
        if low[k] <= d < bar[k]:
            # inside a flat region the optimum is unique (checked in development
            # by minimising and maximising every mass over the optimal face)
            np.testing.assert_allclose(pmf, ref, atol=TOL)
        # linear regions: the masses after the broken link of (21) can be
        # rearranged at the same f(0); at delta = delta_bar_k the flat PMF and the
        # start of the next linear region are both optimal. Only f(0) is compared.


def test_sd_non_coprime_remark3_is_n_to_N_minus_1():
    # Remark 3 printed "replace n with N_mu"; the solver says n -> N_mu - 1
    n, mu, e = 7, 2, 1.5  # N_mu = 4
    f0 = solve("sd", n, mu, e, 0.0)[0]
    assert f0 == pytest.approx((1 - math.exp(-e)) / (1 - math.exp(-4 * e)), abs=TOL)  # n -> 3
    assert abs(f0 - (1 - math.exp(-e)) / (1 - math.exp(-5 * e))) > 1e-3  # n -> 4
    # same for a flat region of Theorem 2: k = 1 keeps N_mu - 1 = 3 masses
    low, bar = cf.sd_boundaries(n, mu, e)
    printed_m = 4
    d = 0.5 * (low[1] + bar[1])
    wrong = (1 - math.exp(-e)) / (1 - math.exp(-printed_m * e))  # (20) with n -> N_mu, k = 1
    assert solve("sd", n, mu, e, d)[0] == pytest.approx((1 - math.exp(-e)) / (1 - math.exp(-3 * e)), abs=TOL)
    assert abs(solve("sd", n, mu, e, d)[0] - wrong) > 1e-3


def _bd_points(reg: cf.BDRegions) -> list[float]:
    pts = {0.0, 1.0, *reg.delta_low[1:], *reg.delta_bar, 0.5 * (reg.delta_bar[-1] + 1)}
    pts |= {0.5 * (a + b) for a, b in zip(reg.delta_low, reg.delta_bar, strict=True)}
    pts |= {0.5 * (a + b) for a, b in zip(reg.delta_bar[:-1], reg.delta_low[1:], strict=True)}
    return sorted(float(p) for p in pts)


# (n, mu_bar, eps): b = 1, 2 (r = 0 and r > 0), 3 (r = 0, 1, 2; with and without
# the cut at small eps)
BD_GRID = [(4, 3, 1.0), (6, 4, 0.8), (8, 4, 1.0), (9, 4, 0.5), (15, 5, 0.4), (15, 5, 1.0), (16, 5, 0.7), (20, 6, 1.2)]


@pytest.mark.parametrize("n, mb, e", BD_GRID)
def test_bd_against_milp(n, mb, e):
    reg = cf.bd_boundaries(n, mb, e)
    assert np.all(np.diff(np.c_[reg.delta_low, reg.delta_bar].ravel()) >= 0)
    for d in _bd_points(reg):
        ref = solve("bd", n, mb, e, d)
        pmf = cf.bd_pmf(n, mb, e, delta=d)
        assert pmf[0] == pytest.approx(ref[0], abs=TOL), d
        assert cf.bd_error_rate(n, mb, e, delta=d) == pytest.approx(1 - ref[0], abs=TOL)
        assert_valid(pmf, "bd", mb, e, d)
        s = int(np.sum(reg.delta_bar < d))
        if s < reg.h.size and reg.delta_low[s] <= d < reg.delta_bar[s]:
            # inside flat regions: unique optimum (face checked in development),
            # and the step lengths are (31)
            np.testing.assert_allclose(pmf, ref, atol=TOL)
            assert steps(ref) == tuple(w for w in cf.bd_step_lengths(n, mb, reg.h[s], reg.j[s]) if w)
        # linear regions, segment b (40)-(41) and the right end delta_bar of a
        # flat region: several optima, f(0) compared only


def test_bd_phi0_and_alpha_beta_against_milp():
    # n=9, mu_bar=4, eps=1: flat region (1,1) has lengths (1,4,3,2)
    n, mb, e = 9, 4, 1.0
    reg = cf.bd_boundaries(n, mb, e)
    ref = solve("bd", n, mb, e, 0.5 * (reg.delta_low[1] + reg.delta_bar[1]))[0]
    by_hand = 1 / (1 + 4 * math.exp(-e) + 3 * math.exp(-2 * e) + 2 * math.exp(-3 * e))
    assert ref == pytest.approx(by_hand, abs=TOL)
    assert cf.bd_phi0(n, mb, 1, 1, e) == pytest.approx(ref, abs=TOL)
    alpha, beta = cf.bd_alpha_beta(n, mb, 1, 1, e)
    assert 1 / (mb * alpha + beta) == pytest.approx(ref, abs=TOL)
    # the printed (35)-(36) (u = 0 since j = h) miss it: 0.35364
    b, r, h, j, u = 2, 1, 1, 1, 0
    xi = lambda a: sum(math.exp(-i * e) for i in range(a))  # noqa: E731
    a_pr = math.exp(-e) * xi(b) - (1 - u) * math.exp(-(b - h + j + 1) * e)
    b_pr = 1 + math.exp(-(b - h + 1) * e) * (math.exp(-j * e) - xi(h)) + (r + h - u) * math.exp(-(b + 1) * e)
    assert 1 / (mb * a_pr + b_pr) == pytest.approx(0.35364, abs=1e-5)


@pytest.mark.parametrize("n, mb", [(9, 4), (15, 5), (16, 5), (20, 6)])
def test_bd_alpha_beta_is_34(n, mb):
    b = n // mb
    for h in range(1, b):
        for j in range(1, h + 1):
            for e in (0.3, 1.0, 4.0):
                lengths = cf.bd_step_lengths(n, mb, h, j)
                assert sum(lengths) == n + 1
                alpha, beta = cf.bd_alpha_beta(n, mb, h, j, e)
                direct = 1 / sum(w * math.exp(-i * e) for i, w in enumerate(lengths))
                assert 1 / (mb * alpha + beta) == pytest.approx(direct, rel=1e-12)


@pytest.mark.parametrize("n, mb", [(9, 4), (15, 5), (16, 5), (24, 7)])
def test_bd_linear_lengths_38_sum_to_n_plus_1(n, mb):
    b = n // mb
    for h in range(1, b):
        for j in range(1, h + 1):
            lengths = cf.bd_step_lengths(n, mb, h, j, linear=True)
            assert sum(lengths) == n + 1 and len(lengths) == b + 3
            assert lengths[b - h + j + 1] == 1


def test_bd_37c_second_form_61():
    # (37c)/(61): delta_low_{h,j} = (phi_0^k / phi_0^{k-1}) delta_bar_{h,j-1}
    reg = cf.bd_boundaries(16, 5, 1.3)
    for k in range(1, reg.h.size):
        assert reg.delta_low[k] == pytest.approx(reg.phi0[k] / reg.phi0[k - 1] * reg.delta_bar[k - 1], rel=1e-12)


def test_bd_printed_39_pmf_leaks():
    # linear region (h, j) = (2, 1) of n=15, mu_bar=5, eps=0.4: the printed
    # (38)-(39) PMF has the optimal f(0) but is infeasible in (13)
    n, mb, e, d = 15, 5, 0.4, 0.0845
    b, h, j = 3, 2, 1
    reg = cf.bd_boundaries(n, mb, e)
    assert reg.delta_bar[1] < d < reg.delta_low[2] and (reg.h[2], reg.j[2]) == (h, j)
    lengths = cf.bd_step_lengths(n, mb, h, j, linear=True)
    xi_j = sum(math.exp(-i * e) for i in range(j))
    single = b - h + j + 1
    vals = [
        d * math.exp((b - h - i) * e) / xi_j if i < single else d * math.exp((b - h - i + 1) * e) / xi_j
        for i in range(len(lengths))
    ]
    vals[single] = 0.0
    vals[single] = 1 - sum(w * v for w, v in zip(lengths, vals, strict=True))
    printed = np.repeat(vals, lengths)
    ref = solve("bd", n, mb, e, d)
    assert printed[0] == pytest.approx(ref[0], abs=TOL)
    assert delta_pdp_kadam(printed, shifts("bd", mb), e, tol=LEAK_TOL) == math.inf
    assert_valid(cf.bd_pmf(n, mb, e, delta=d), "bd", mb, e, d)


def test_bd_small_eps_cut():
    # b = 3, eps < ln golden ratio: printed flat (2,1) would run to 0.1425 at
    # f(0) = 0.12728; the line f(0) = delta takes over at 0.12728
    n, mb, e = 15, 5, 0.4
    assert e < math.log((1 + math.sqrt(5)) / 2)
    printed = cf.bd_boundaries(n, mb, e, as_printed=True)
    assert printed.delta_bar[2] > printed.phi0[2]
    cut = cf.bd_boundaries(n, mb, e)
    assert cut.h.size == 3 and cut.delta_bar[-1] == pytest.approx(printed.phi0[2])
    for d in (0.13, 0.14):
        assert solve("bd", n, mb, e, d)[0] == pytest.approx(d, abs=TOL)
        assert 1 - cf.bd_error_rate(n, mb, e, delta=d) == pytest.approx(d, abs=TOL)
        assert printed.phi0[2] < d - 1e-3


def test_bd_theorem3_fails_for_b4():
    # n=24, mu_bar=6 (b=4, r=0, b+r < mu_bar), eps=2: the printed flat region
    # (3,1) needs more delta than (37c) says, and the MILP optimum is lower
    n, mb, e = 24, 6, 2.0
    printed = cf.bd_boundaries(n, mb, e, as_printed=True)
    k = list(zip(printed.h, printed.j, strict=True)).index((3, 1))
    lengths = (1, 6, 5, 6, 5, 2)  # (31) for (h, j) = (3, 1)
    pmf = np.repeat([printed.phi0[k] * math.exp(-i * e) for i in range(6)], lengths)
    assert round(printed.delta_low[k], 6) == 0.070479
    # the last masses of groups 1 and 3 leak: group 3 (length 6) is followed
    # within mu_bar by group 4 (length 5) and then group 5, e^{2 eps} lower
    leak = printed.phi0[k] * (math.exp(-e) + math.exp(-3 * e))
    assert delta_pdp_kadam(pmf, shifts("bd", mb), e, tol=LEAK_TOL) == pytest.approx(leak, rel=1e-12)
    assert round(leak, 6) == 0.07177
    assert solve("bd", n, mb, e, 0.0705)[0] < printed.phi0[k] - 5e-5
    with pytest.raises(ValueError, match="b = n//mu_bar >= 4"):
        cf.bd_pmf(n, mb, e, delta=0.05)
    # delta = 0 is Lemma 4, which holds for every (n, mu_bar)
    np.testing.assert_allclose(cf.bd_pmf(n, mb, e), solve("bd", n, mb, e, 0.0), atol=TOL)


@pytest.mark.parametrize("n, mb, e", [(8, 3, 1.5), (10, 3, 0.7), (12, 2, 1.0), (7, 7, 0.5)])
def test_lemma4_any_range_against_milp(n, mb, e):
    np.testing.assert_allclose(cf.bd_pmf(n, mb, e), solve("bd", n, mb, e, 0.0), atol=TOL)


@pytest.mark.parametrize("n, mu, e", [(9, 1, 1.0), (9, 5, 0.4), (11, 8, 2.0)])
def test_lemma3_against_milp(n, mu, e):
    np.testing.assert_allclose(cf.sd_pmf(n, mu, e), solve("sd", n, mu, e, 0.0), atol=TOL)


# ============================================================ level curves (22)-(25), (42)-(43)


def assert_level(error_rate, rho: float, e: np.ndarray, d: np.ndarray) -> None:
    """``d`` is the smallest delta with ``error_rate(eps, delta) <= rho``."""
    r = error_rate(e, d)
    assert np.all(r <= rho + 1e-12)
    pos = d > 0
    np.testing.assert_allclose(r[pos], rho, atol=1e-12)
    assert np.all(error_rate(e[pos], d[pos] * (1 - 1e-6)) > rho)


@pytest.mark.parametrize("n, mu, rho", [(7, 3, 0.3), (7, 2, 0.45), (5, 1, 0.6)])
def test_sd_level_curve(n, mu, rho):
    e = np.linspace(0.05, 3.0, 60)
    d = cf.sd_level_curve(n, mu, rho, e)
    assert_level(lambda x, y: cf.sd_error_rate(n, mu, x, delta=y), rho, e, d)
    # (24) with the thresholds (25): delta = e^{-(m-k) eps} (1 - rho) on [eps_k, eps_{k-1})
    m = cf.sd_cycle(n, mu).size - 1
    eps_k = cf.sd_level_eps(n, mu, rho)
    for k in range(1, m + 1):
        inside = (e >= eps_k[k]) & (e < eps_k[k - 1])
        np.testing.assert_allclose(d[inside], np.exp(-(m - k) * e[inside]) * (1 - rho), rtol=1e-12)
        if eps_k[k] > 0:  # (25): the k-th flat level equals 1 - rho at eps_k
            x = eps_k[k]
            assert (1 - math.exp(-x)) / (1 - math.exp(-(m + 1 - k) * x)) == pytest.approx(1 - rho, abs=1e-12)
    assert np.all(d[e >= eps_k[0]] == 0)
    # and the solver: at the level-curve delta, f(0) = 1 - rho
    for x in (0.3, 0.9):
        dx = cf.sd_level_curve(n, mu, rho, x)
        assert solve("sd", n, mu, x, dx)[0] >= 1 - rho - TOL


@pytest.mark.parametrize("n, mb, rho", [(9, 4, 0.7), (15, 5, 0.8), (15, 5, 0.86)])
def test_bd_level_curve(n, mb, rho):
    e = np.linspace(0.05, 3.0, 40)
    d = cf.bd_level_curve(n, mb, rho, e)
    assert_level(lambda x, y: cf.bd_error_rate(n, mb, x, delta=y), rho, e, d)
    # (43): the flat level of (h, j) equals 1 - rho at eps_{h,j}
    h, j, eps_hj = cf.bd_level_eps(n, mb, rho)
    for hh, jj, x in zip(h, j, eps_hj, strict=True):
        if x > 0:
            assert cf.bd_phi0(n, mb, hh, jj, x) == pytest.approx(1 - rho, abs=1e-12)
    # (42) between the thresholds of flat region (h, j) and the previous one, at large eps (no cut)
    b = n // mb
    for k in range(1, h.size):
        lo, hi = eps_hj[k], eps_hj[k - 1]
        x = 0.5 * (lo + hi)
        if x > 0.5 and hi > lo:
            xi = sum(math.exp(-i * x) for i in range(j[k]))
            assert cf.bd_level_curve(n, mb, rho, x) == pytest.approx(xi * math.exp(-(b - h[k]) * x) * (1 - rho))
    x = 1.0
    assert solve("bd", n, mb, x, cf.bd_level_curve(n, mb, rho, x))[0] >= 1 - rho - TOL


# ============================================================ n -> infinity, (44)-(54)


def test_sd_limit_is_exp_minus_eps_not_half():
    # (44) prints 0.5 for eps <= ln 2; the MILP at n = 30 is already at e^-eps
    e = 0.3
    ref = 1 - solve("sd", 30, 1, e, 0.0)[0]
    assert ref == pytest.approx(math.exp(-e), abs=1e-3)
    assert cf.sd_limit_error_rate(e) == pytest.approx(math.exp(-e))
    assert abs(ref - 0.5) > 0.2
    # the printed cap would make the masses (45) sum to 0.5 / (1 - e^-eps) > 1
    assert 0.5 / (1 - math.exp(-e)) > 1
    h = np.arange(2000)
    assert cf.sd_limit_pmf(e, h).sum() == pytest.approx(1.0, abs=1e-12)
    es = np.array([0.1, 0.5, 1.0, 3.0])
    np.testing.assert_allclose(cf.sd_error_rate(2000, 1, es), cf.sd_limit_error_rate(es), atol=1e-12)
    np.testing.assert_allclose(cf.sd_pmf(2000, 7, 1.0)[[0, 7, 14, 21]], cf.sd_limit_pmf(1.0, np.arange(4)), atol=1e-12)


def test_bd_limit():
    mb, e = 2, 0.5  # eps < ln 3: printed (48) says 0.5
    ref = 1 - solve("bd", 40, mb, e, 0.0)[0]
    assert ref == pytest.approx(cf.bd_limit_error_rate(mb, e), abs=1e-3)
    assert abs(ref - 0.5) > 0.2
    for mb, e in [(2, 0.5), (3, 1.0), (5, 2.0)]:
        n = 600 * mb
        assert cf.bd_error_rate(n, mb, e) == pytest.approx(cf.bd_limit_error_rate(mb, e), abs=1e-12)
        eta = np.arange(4 * mb + 1)
        np.testing.assert_allclose(cf.bd_pmf(n, mb, e)[eta], cf.bd_limit_pmf(mb, e, eta), atol=1e-12)


def test_sd_limit_phi0_51_is_n_independent():
    e = 0.8
    for i in range(5):
        lvl = cf.sd_limit_phi0(i, e)
        assert lvl == pytest.approx((1 - math.exp(-e)) / (1 - math.exp(-(i + 1) * e)))
        for n in (i + 1, i + 4, i + 9):  # the flat region k = n - i of Theorem 2
            low, bar = cf.sd_boundaries(n, 1, e)
            k = n - i
            d = 0.5 * (low[k] + bar[k])
            assert 1 - cf.sd_error_rate(n, 1, e, delta=d) == pytest.approx(lvl, rel=1e-12)
    assert solve("sd", 6, 1, e, 0.5 * sum(x[4] for x in cf.sd_boundaries(6, 1, e)))[0] == pytest.approx(
        cf.sd_limit_phi0(2, e), abs=TOL
    )
    assert cf.sd_limit_phi0(500, e) == pytest.approx(1 - math.exp(-e))


def test_bd_limit_phi0_53_is_limit_of_34():
    # flat region (h, j) = (b - c, j) with explicit lengths (31) at large b,
    # summed directly (mu_bar fixed: outside Theorem 3's range, a limit of the formula)
    mb, e = 4, 0.9
    for c in (0, 1, 3):
        for j in (1, 2):
            b = 400
            h = b - c
            lengths = [1] + [mb] * (b - h) + [mb if i == b - h + j + 1 else mb - 1 for i in range(b - h + 1, b + 1)]
            lengths += [h + 0 - 1]  # r = 0, u = 1
            direct = 1 / sum(w * math.exp(-i * e) for i, w in enumerate(lengths))
            assert cf.bd_limit_phi0(mb, c, j, e) == pytest.approx(direct, rel=1e-12)
            # printed (53) differs
            q = 1 - math.exp(-e)
            printed = q / (mb * math.exp(-e) + (1 - math.exp(-e) * (1 + math.exp(-(c + j) * e))))
            assert abs(printed - direct) > 1e-4
    # c -> inf: (46)
    assert cf.bd_limit_phi0(mb, 200, 1, e) == pytest.approx(1 - cf.bd_limit_error_rate(mb, e), rel=1e-12)


# ============================================================ API: vectorisation, robustness, validation


def test_vectorised_matches_scalar():
    e = np.array([0.3, 1.0, 2.5])[:, None]
    d = np.array([0.0, 0.01, 0.2, 0.7])[None, :]
    for fn, n, mu in [(cf.sd_pmf, 7, 3), (cf.sd_pmf, 7, 2), (cf.bd_pmf, 9, 4)]:
        out = fn(n, mu, e, delta=d)
        assert out.shape == (3, 4, n + 1)
        for a in range(3):
            for b in range(4):
                np.testing.assert_array_equal(out[a, b], fn(n, mu, float(e[a, 0]), delta=float(d[0, b])))
    r = cf.sd_error_rate(7, 3, e, delta=d)
    assert r.shape == (3, 4) and isinstance(cf.sd_error_rate(7, 3, 1.0), float)
    low, bar = cf.sd_boundaries(7, 3, np.array([0.5, 1.0]))
    assert low.shape == bar.shape == (2, 8)


@pytest.mark.parametrize("e", [1e-12, 1e-6, 50.0, 800.0, 1e4])
def test_extreme_eps_no_nan_no_warning(e):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for d in (0.0, 1e-300, 1e-5, 0.3, 0.5, 1.0):
            for pmf in (cf.sd_pmf(40, 3, e, delta=d), cf.sd_pmf(39, 4, e, delta=d), cf.bd_pmf(9, 4, e, delta=d)):
                assert np.all(np.isfinite(pmf)) and np.all(pmf >= 0)
                assert pmf.sum() == pytest.approx(1.0, abs=1e-9)
        low, bar = cf.sd_boundaries(40, 3, e)
        assert np.all(np.isfinite(low)) and np.all(np.isfinite(bar))
        assert np.isfinite(cf.sd_limit_error_rate(e)) and np.isfinite(cf.bd_limit_error_rate(3, e))


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 14), data=st.data(), e=st.floats(0.02, 6.0), d=st.floats(0.0, 1.0))
def test_sd_property_feasible_and_monotone(n, data, e, d):
    mu = data.draw(st.integers(1, n))
    pmf = cf.sd_pmf(n, mu, e, delta=d)
    assert_valid(pmf, "sd", mu, e, d)
    assert cf.sd_error_rate(n, mu, e, delta=min(1.0, d + 0.01)) <= cf.sd_error_rate(n, mu, e, delta=d) + 1e-15


_BD_OK = [(n, mb) for mb in range(2, 8) for n in range(mb, 4 * mb + 4) if n // mb <= 3 and n // mb + n % mb < mb]


@settings(max_examples=40, deadline=None)
@given(nm=st.sampled_from(_BD_OK), e=st.floats(0.02, 6.0), d=st.floats(0.0, 1.0))
def test_bd_property_feasible_and_monotone(nm, e, d):
    n, mb = nm
    pmf = cf.bd_pmf(n, mb, e, delta=d)
    assert_valid(pmf, "bd", mb, e, d)
    assert cf.bd_error_rate(n, mb, e, delta=min(1.0, d + 0.01)) <= cf.bd_error_rate(n, mb, e, delta=d) + 1e-15


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: cf.sd_pmf(0, 1, 1.0), "n must be an integer >= 1"),
        (lambda: cf.sd_pmf(7, 0, 1.0), "mu must be an integer >= 1 and <= 7"),
        (lambda: cf.sd_pmf(7, 8, 1.0), "mu must be an integer >= 1 and <= 7"),
        (lambda: cf.sd_pmf(7, 3, 0.0), "eps must be a finite number > 0"),
        (lambda: cf.sd_pmf(7, 3, [1.0, -1.0]), "eps must be a finite number > 0"),
        (lambda: cf.sd_pmf(7, 3, float("nan")), "eps must be finite"),
        (lambda: cf.sd_pmf(7, 3, "x"), "eps must be a real number"),
        (lambda: cf.sd_pmf(7, 3, 1.0, delta=1.5), r"delta must be in \[0, 1\]"),
        (lambda: cf.sd_pmf(7, 3, 1.0, delta=[0.1, float("nan")]), "delta must be finite"),
        (lambda: cf.sd_level_curve(7, 3, 0.0, 1.0), r"rho must be in \(0, 1\)"),
        (lambda: cf.sd_level_eps(7, 3, 1.2), r"rho must be in \[0, 1\]"),
        (lambda: cf.bd_pmf(8, 3, 1.5, delta=0.1), "b \\+ r < mu_bar.*n=8, mu_bar=3"),
        (lambda: cf.bd_boundaries(8, 3, 1.5), "b \\+ r < mu_bar"),
        (lambda: cf.bd_pmf(8, 9, 1.5), "mu_bar must be an integer >= 1 and <= 8"),
        (lambda: cf.bd_step_lengths(9, 4, 2, 1), "h must be an integer >= 0 and <= 1"),
        (lambda: cf.bd_step_lengths(9, 4, 1, 2), "j must be an integer >= 1 and <= 1"),
        (lambda: cf.bd_limit_phi0(3, -1, 1, 1.0), "c must be an integer >= 0"),
        (lambda: cf.sd_limit_pmf(1.0, [0, -1]), "h must be integers >= 0"),
        (lambda: cf.bd_limit_pmf(3, 1.0, [0.5]), "eta must be integers >= 0"),
        (lambda: cf.sd_cycle(True, 1), "n must be an integer"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
