"""The upper bound at 2m seeded by the mechanism at m (continuous_start.finer_seed): the same optimum, faster."""

from __future__ import annotations

import numpy as np
import pytest

from optnoise import NoiseDesign
from optnoise.design import additive, additive_lp, continuous
from optnoise.design.composed_polish import refine_cells
from optnoise.design.continuous_start import finer_seed
from optnoise.design.rows import hockey_sums
from optnoise.engine.tolerance import MIP_REL_GAP


def _design(m, eps=1.0, delta=0.1, metric="mae"):
    return NoiseDesign(release="continuous", sensitivity=1.0, eps=eps, delta=delta, metric=metric, resolution=1.0 / m)


def _upper(m, **kw):
    return continuous._solve_upper(continuous._upper_design(_design(m, **kw), m), "highs", None, None)


def test_finer_seed_is_the_cell_masses_at_twice_the_resolution():
    up = _upper(4)
    seed = finer_seed(up)
    # by hand: cell j of width w/2 is [(j - 1/2) w/2, (j + 1/2) w/2); its mass is the overlap with each coarse cell
    # [(k - 1/2) w, (k + 1/2) w) times that cell's density f_k / w
    for j in range(-9, 10):
        lo, hi = (j - 0.5) / 2, (j + 0.5) / 2
        want = sum(max(0.0, min(hi, k + 0.5) - max(lo, k - 0.5)) * up.pmf_at(np.array([k]))[0] for k in range(-12, 13))
        assert seed(np.array([j]))[0] == pytest.approx(want, abs=1e-15)
    # refine_cells maps the finite part the same way (cells -2L-1..2L+1)
    L = up.L
    cells = np.arange(-2 * L + 1, 2 * L)  # those the finite part alone decides
    assert np.allclose(seed(cells), refine_cells(up.pmf)[cells + 2 * L + 1], atol=1e-15)
    # tails included: the refined masses sum to the mechanism's
    wide = np.arange(-200 * L, 200 * L + 1)
    assert seed(wide).sum() == pytest.approx(up.pmf_at(np.arange(-100 * L, 100 * L + 1)).sum(), abs=1e-12)


@pytest.mark.parametrize(("eps", "delta", "metric"), [(1.0, 0.1, "mae"), (0.5, 0.3, "mse")])
def test_seeded_upper_skips_the_pure_solve_and_finds_the_same_optimum(monkeypatch, eps, delta, metric):
    m = 8
    cold = _upper(m, eps=eps, delta=delta, metric=metric)
    coarse = _upper(m // 2, eps=eps, delta=delta, metric=metric)
    cells = continuous._upper_design(_design(m, eps=eps, delta=delta, metric=metric), m)
    cells.lazy_seed = finer_seed(coarse)

    def no_pure(*args, **kw):
        raise AssertionError("the pure-DP solve must be skipped when a lazy seed is given")

    monkeypatch.setattr(additive, "_pure_result", no_pure)
    warm = continuous._solve_upper(cells, "highs", None, None)
    assert warm.status == cold.status == "optimal"
    assert warm.distortion == pytest.approx(cold.distortion, rel=1e-7, abs=1e-9)
    assert warm.L == cold.L
    assert warm.achieved["dp"] <= delta * (1 + 1e-6)  # re-verified from the cell masses


def test_the_automatic_refinement_seeds_each_resolution_and_matches_fixed_ones(monkeypatch):
    seeded = []
    solve = additive.solve

    def spy(design, *args, **kw):
        seeded.append(getattr(design, "lazy_seed", None) is not None)
        return solve(design, *args, **kw)

    monkeypatch.setattr(continuous, "MAX_AUTO_RESOLUTION", 16)  # m = 4, 8, 16 (gap 1e-6 is not reached)
    monkeypatch.setattr(continuous.additive, "solve", spy)
    res = NoiseDesign(release="continuous", sensitivity=1.0, eps=1.0, delta=0.1, metric="mae", gap=1e-6).solve()
    assert [h["m"] for h in res.history] == [4, 8, 16]
    assert seeded == [False, True, True]  # each m seeded by the one before, the first by none
    monkeypatch.setattr(continuous.additive, "solve", solve)
    for h in res.history[1:]:  # a fixed resolution solves without a seed: the same optimum
        assert h["upper"] == pytest.approx(_upper(h["m"]).distortion, rel=1e-7)


def test_the_lazy_solve_adds_rows_only_in_shifts_at_their_budget():
    # (eps, delta) = (1, 0.1) at m = 8 cells: most of the 8 shifts keep slack at the optimum, and their entries
    # need no rows; the lazy solve's final model has fewer rows than the one with every row, the same optimum
    cells = continuous._upper_design(_design(8), 8)
    L = additive.initial_support(cells)
    full = additive._solve_at(cells, L, "highs", None, MIP_REL_GAP, False, None, False)
    coarse = _upper(4)
    cells.lazy_seed = finer_seed(coarse)
    lazy = additive._solve_at(
        cells, L, "highs", None, MIP_REL_GAP, False, None, False, seed=cells.lazy_seed, loose=True
    )
    assert lazy.status == full.status == "optimal"
    assert lazy.distortion == pytest.approx(full.distortion, rel=1e-8)
    assert lazy.model_size["rows"] < full.model_size["rows"] / 2
    # the kept rows at the seed are those of shifts near their budget: a shift with slack has none
    mb, cols, (k, first_c, second_c) = additive_lp._base(cells, L)
    x = additive_lp._point(cells, mb.num_vars, cols, lazy.pmf_at)
    term = x[first_c] - np.e * x[second_c]
    hs = hockey_sums(term, k)
    assert hs.max() == pytest.approx(0.1, rel=1e-6)
    assert (hs[np.unique(k)] < 0.095).any()  # some shift has slack (its rows are never needed)
