"""The lower-bound LP of continuous designs: lazy rows in one HiGHS instance, warm starts across resolutions."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from optnoise.design import continuous
from optnoise.design.continuous_bound import lower_bound, warm_entries
from optnoise.design.continuous_cost import parse_real_metric
from optnoise.design.noise import NoiseDesign


def _setup(m: int, metric: str = "mae", eps: float = 1.0, delta: float = 0.1):
    d = NoiseDesign(release="continuous", sensitivity=1.0, eps=eps, delta=delta, metric=metric, resolution=1 / m)
    up = continuous._solve_upper(continuous._upper_design(d, m), "auto", None, None)
    K = continuous._truncation(d, m, up)
    return d, up, K


def test_warm_entries_cover_every_overlapping_half_cell_and_shift():
    # cell k of width w is [(k - 1/2) w, (k + 1/2) w): the half-width cells meeting it, found by overlap
    k, j = 3, 2
    fine = [c for c in range(-20, 21) if (c + 0.5) / 2 > k - 0.5 and (c - 0.5) / 2 < k + 0.5]
    # a shift of j cells lies in [(j - 1/2) w, (j + 1/2) w] up to rounding: half-cell shifts within one of 2 j
    shifts = [s for s in range(0, 20) if abs(s / 2 - j) <= 0.5]
    got = warm_entries(np.array([[1, -1, j, k]]))
    want = {(1, -1, s, c) for s in shifts for c in fine}
    assert {tuple(r) for r in got.tolist()} == want
    assert warm_entries(np.zeros((0, 4), dtype=np.int64)).shape == (0, 4)
    # ratio 1 (a wider truncation at the same m) hands the entries on unchanged
    same = np.array([[0, 1, 4, -2], [3, 1, 0, 5]])
    assert np.array_equal(warm_entries(same, 1), np.unique(same, axis=0))


@pytest.mark.parametrize("metric", ["mae", "mse"])
def test_warm_start_gives_the_cold_bound(metric):
    d4, up4, K4 = _setup(4, metric)
    coarse = lower_bound(d4.cost_of, [(1.0, 0.1)], 4, 0.25, K4, up4.pmf_at(np.arange(-K4, K4 + 1)))
    assert coarse.active is not None and len(coarse.active) > 0
    d8, up8, K8 = _setup(8, metric)
    seed = up8.pmf_at(np.arange(-K8, K8 + 1))
    cold = lower_bound(d8.cost_of, [(1.0, 0.1)], 8, 0.125, K8, seed)
    warm = lower_bound(d8.cost_of, [(1.0, 0.1)], 8, 0.125, K8, seed, warm=warm_entries(coarse.active))
    assert cold.complete and warm.complete
    assert warm.bound == pytest.approx(cold.bound, abs=1e-9)
    # the warm start is a start, not a restriction: with no seed at all it still reaches the full LP's optimum
    bare = lower_bound(d8.cost_of, [(1.0, 0.1)], 8, 0.125, K8, np.zeros(2 * K8 + 1), warm=warm_entries(coarse.active))
    assert bare.complete and bare.bound == pytest.approx(cold.bound, abs=1e-9)
    # and every one stays below the mechanism (a proven lower bound)
    assert max(cold.bound, warm.bound, bare.bound) <= up8.distortion + 1e-9


def test_a_row_round_cut_short_keeps_the_bound_proved_before_it(monkeypatch):
    # at m = 128 a later round can outlast the time limit; the rounds before it have proved a bound by weak duality
    from optnoise.engine import lazy

    d, up, K = _setup(8)
    start = np.zeros(2 * K + 1)  # no seed: several rounds
    done = lower_bound(d.cost_of, [(1.0, 0.1)], 8, 0.125, K, start)
    assert done.complete and done.rounds >= 3
    real, calls = lazy.highs_output, []

    def short(h, model, seconds):
        out = real(h, model, seconds)
        calls.append(out.objective)
        if len(calls) < 3:
            return out
        return dataclasses.replace(out, status="time_limit", x=None, objective=None, dual=None, bound=None)

    monkeypatch.setattr(lazy, "highs_output", short)
    cut = lower_bound(d.cost_of, [(1.0, 0.1)], 8, 0.125, K, start)
    assert cut.rounds == 3 and not cut.complete and "round 2's" in cut.message
    # round 2's bound is its relaxation's optimum (strong duality): below the full LP's, and a proven bound
    assert cut.bound == pytest.approx(calls[1], rel=1e-7) and cut.bound <= done.bound + 1e-9


def test_lazy_bound_equals_every_row_at_once_and_a_fine_mechanism():
    cost = parse_real_metric("mae", 1.0)
    d, up, K = _setup(4)
    lazy = lower_bound(cost, [(1.0, 0.1)], 4, 0.25, K, up.pmf_at(np.arange(-K, K + 1)))
    every = lower_bound(cost, [(1.0, 0.1)], 4, 0.25, K, None)
    assert lazy.complete and every.complete and lazy.rounds >= 1
    assert lazy.bound == pytest.approx(every.bound, abs=1e-9)
    assert lazy.rows < every.rows
    fine = NoiseDesign(release="continuous", sensitivity=1.0, eps=1.0, delta=0.1, metric="mae", resolution=1 / 16)
    assert lazy.bound <= fine.solve().distortion + 1e-9


def test_refinement_hands_the_active_entries_on(monkeypatch):
    seen = []
    real = continuous.lower_bound

    def spy(*args, **kw):
        seen.append((args[2], None if kw.get("warm") is None else len(kw["warm"])))
        return real(*args, **kw)

    monkeypatch.setattr(continuous, "lower_bound", spy)
    d = NoiseDesign(release="continuous", sensitivity=1.0, eps=1.0, delta=0.1, metric="mae", gap=1e-4)
    continuous.solve(d, time_limit=20.0)
    ms = [m for m, _ in seen]
    assert ms[0] == continuous.FIRST_RESOLUTION and len(set(ms)) >= 2
    first_at = {m: w for m, w in reversed(seen)}  # the first call at each m
    assert first_at[ms[0]] is None
    assert all(first_at[m] for m in set(ms) if m != ms[0])


def _fixed_at(density_q: np.ndarray, density_m: np.ndarray, far: float):
    """A ``solve_with_cuts`` that solves the LP with its cells' masses, moments and far masses fixed to a density's."""
    from optnoise.design import continuous_bound

    real = continuous_bound.solve_with_cuts

    def fixed(model, cuts, cut_upper, **kw):
        n = density_q.size
        lo, hi = model.col_lower.copy(), model.col_upper.copy()
        # columns: q (n), m (n), t (n), far (2), then the rest (continuous_bound._base)
        cols = np.concatenate([np.arange(2 * n), [3 * n, 3 * n + 1]])
        lo[cols] = hi[cols] = np.concatenate([density_q, density_m, [far, far]])
        return real(dataclasses.replace(model, col_lower=lo, col_upper=hi), cuts, cut_upper, **kw)

    return fixed


@pytest.mark.parametrize(("metric", "symmetric"), [("mae", True), ("mse", True), ("mae", False)])
def test_a_dp_density_meets_every_row_of_the_lp(monkeypatch, metric, symmetric):
    # A finer mechanism is an (eps, delta)-DP density; its cell masses and moments at a coarse grid, and its
    # mass past a narrow truncation, must meet every row (the LP is a relaxation), and the LP's optimum with
    # them fixed is at most the density's cost. A row that is not valid for every DP density fails this.
    from optnoise.design import continuous_bound

    m, ratio, K = 4, 3, 6  # the truncation at 1.5 Delta leaves mass in the far cells and the edge entries
    fine = NoiseDesign(
        release="continuous", sensitivity=1.0, eps=1.0, delta=0.1, metric=metric, resolution=1 / (ratio * m)
    ).solve()
    c = np.arange(-4000, 4001)
    f = fine.upper.pmf_at(c)
    f = (f + f[::-1]) / 2.0  # its mirror image is DP too: the symmetric LP's points are symmetric
    assert f.sum() == pytest.approx(1.0, abs=1e-12)
    cells = np.arange(-K, K + 1)
    # coarse cell k = fine cells ratio k - 1, ratio k, ratio k + 1 (odd ratio: the edges line up)
    idx = ratio * cells[:, None] + np.arange(-1, 2)[None, :] + 4000
    q = f[idx].sum(axis=1)
    mom = (f[idx] * (np.arange(3) + 0.5)[None, :] / 3.0).sum(axis=1)  # int p(x) (x - left edge) / w over the cell
    far = f[: idx[0, 0]].sum()
    assert far > 1e-4 and q[0] > 1e-4  # the merged edge entries are exercised
    monkeypatch.setattr(continuous_bound, "solve_with_cuts", _fixed_at(q, mom, far))
    cost = parse_real_metric(metric, 1.0)
    lb = lower_bound(cost, [(1.0, 0.1)], m, 1.0 / m, K, None, symmetric=symmetric)
    assert lb.bound is not None, lb.message
    assert lb.bound <= fine.distortion + 1e-9


@pytest.mark.parametrize(
    "budget", [[(1.0, 0.1)], [(1.0, 0.0)], [(1.0, 0.1), (0.5, 0.2)]], ids=["dp", "pure", "profile"]
)
def test_rows_only_for_shifts_over_budget_give_every_rows_bound(budget):
    # the lazy LP adds a dropped entry only in a shift whose completed hockey stick exceeds its budget;
    # its optimum must still be the LP with every row's (solved at once, no seed)
    cost = parse_real_metric("mae", 1.0)
    d, up, K = _setup(8)
    seed = up.pmf_at(np.arange(-K, K + 1))
    lazy = lower_bound(cost, budget, 8, 0.125, K, seed)
    every = lower_bound(cost, budget, 8, 0.125, K, None)
    assert lazy.complete and every.complete
    assert lazy.bound == pytest.approx(every.bound, abs=1e-9)
    assert lazy.rows < every.rows


def test_merged_edges_reach_the_wide_truncations_bound_at_a_narrow_one():
    # without the merged edge entries a narrow truncation loses (mass piles into the last cells); with them the
    # narrow LP proves no wider one does better (no far or outermost mass) and meets the wide LP's bound
    cost = parse_real_metric("mae", 1.0)
    m = 8
    d, up, K = _setup(m)
    narrow, wide = K - m // 2, K + 2 * m
    seed = lambda k: up.pmf_at(np.arange(-k, k + 1))  # noqa: E731
    merged = lower_bound(cost, [(1.0, 0.1)], m, 1 / m, narrow, seed(narrow))
    plain = lower_bound(cost, [(1.0, 0.1)], m, 1 / m, narrow, seed(narrow), edges=False)
    reference = lower_bound(cost, [(1.0, 0.1)], m, 1 / m, wide, seed(wide), edges=False)
    assert merged.far_mass <= 1e-9 and merged.outer_mass <= 1e-9
    assert merged.bound == pytest.approx(reference.bound, abs=1e-9)
    assert plain.bound < reference.bound - 1e-3


def test_raw_highs_options_reach_the_lower_bound_lp(monkeypatch):
    from optnoise.design import continuous_bound

    seen = []
    real = continuous_bound.solve_with_cuts

    def spy(*args, **kw):
        seen.append(kw.get("options"))
        return real(*args, **kw)

    monkeypatch.setattr(continuous_bound, "solve_with_cuts", spy)
    d = NoiseDesign(release="continuous", sensitivity=1.0, eps=1.0, delta=0.1, metric="mae", resolution=0.25)
    res = d.solve(solver="highs", options={"random_seed": 5})
    assert seen and all(o == {"random_seed": 5} for o in seen)
    assert res.bound is not None and res.bound <= res.distortion
