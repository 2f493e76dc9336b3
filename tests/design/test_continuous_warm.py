"""Warm starts across resolutions (optnoise.design.continuous_warm, composed_polish.refine_cells), by independent
routes: exact interval overlaps for the refined cells, hockey sticks by numpy, dp-accounting on sub-cells."""

from __future__ import annotations

import math

import numpy as np
import pytest

from optnoise import NoiseDesign
from optnoise.design.composed_polish import refine_cells
from optnoise.design.continuous_warm import resolution_chain, solve_refined

K, DELTA, CAP = 2, 1e-6, 25.0


def _overlap_masses(f: np.ndarray, w: float) -> np.ndarray:
    """Masses of the centred cells of width w/2 of the density with masses f on the cells of width w
    (cells -L..L), by interval overlaps."""
    L = (f.size - 1) // 2
    out = []
    for j in range(-2 * L - 1, 2 * L + 2):
        a, b = (j - 0.5) * w / 2, (j + 0.5) * w / 2
        mass = 0.0
        for k in range(-L, L + 1):
            lo, hi = max(a, (k - 0.5) * w), min(b, (k + 0.5) * w)
            mass += max(0.0, hi - lo) / w * f[k + L]
        out.append(mass)
    return np.array(out)


def _hockey(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    return float(np.maximum(p - math.exp(eps) * q, 0.0).sum())


def _shifted(f: np.ndarray, j: int) -> tuple[np.ndarray, np.ndarray]:
    return np.concatenate([f, np.zeros(j)]), np.concatenate([np.zeros(j), f])


def test_refine_cells_are_the_densitys_masses_on_the_finer_cells():
    rng = np.random.default_rng(3)
    f = rng.random(9)
    f /= f.sum()
    got = refine_cells(f)
    assert got.size == 2 * f.size + 1
    assert np.allclose(got, _overlap_masses(f, 0.7), atol=1e-15)
    assert got.sum() == pytest.approx(1.0, abs=1e-14)


def test_refined_cells_are_as_private_as_the_density():
    """Post-processing: the finer cell index of q + X for a shift of 1 or 2 finer cells (half or one coarse cell)
    is never more distinguishable than the coarse density is for real shifts (the mixture of its integer shifts
    0 and 1: hockey stick at most that of shift 1)."""
    x = np.arange(-30, 31)
    f = np.exp(-np.abs(x) / 3.0 - 0.01 * x**2)
    f /= f.sum()
    g = refine_cells(f)
    for eps in (0.0, 0.1, 0.3, 0.6):
        coarse = max(_hockey(*_shifted(f, 1), eps), _hockey(*_shifted(f, 1)[::-1], eps))
        for j in (1, 2):
            fine = max(_hockey(*_shifted(g, j), eps), _hockey(*_shifted(g, j)[::-1], eps))
            assert fine <= coarse + 1e-15


@pytest.mark.parametrize(("m", "steps", "chain"), [(16, 2, [4, 8, 16]), (6, 2, [3, 6]), (5, 2, [5]), (8, 0, [8])])
def test_resolution_chain(m, steps, chain):
    assert resolution_chain(m, steps) == chain


def test_resolution_chain_bad_input():
    with pytest.raises(ValueError, match="m must be a positive integer"):
        resolution_chain(0)


def test_solve_refined_needs_a_composed_continuous_design():
    d = NoiseDesign(release="continuous", sensitivity=1.0, eps=1.0, delta=1e-6, metric="mse")
    with pytest.raises(ValueError, match="release='continuous' and privacy='composed'"):
        solve_refined(d)


def test_warm_started_design_is_certified_and_within_the_cap(dp_eps):
    m = 2
    d = NoiseDesign(
        release="continuous",
        sensitivity=1.0,
        resolution=1.0 / m,
        metric="mse",
        privacy="composed",
        compositions=K,
        delta=DELTA,
        objective="epsilon",
        max_distortion=CAP,
    )
    res = solve_refined(d, steps=1)
    assert res.status in ("optimal", "feasible") and res.verify()
    assert "warm-started from m = 1" in res.message and "warm start" in res.message
    eps = res.achieved["composed_eps"]
    # the variance re-computed from the cell masses: each cell's average of x^2 includes its w^2 / 12
    w, W = 1.0 / m, 1500
    cells = np.arange(-W, W + 1)
    f = res.pmf_at(cells)
    assert 1.0 - float(f.sum()) < 1e-12
    assert float(f @ ((cells * w) ** 2 + w * w / 12)) <= CAP * (1 + 1e-9)
    # real shifts s = 1 (m cells) and s = 3/4 (sub-cells of width w/2): dp-accounting, not optnoise's accounting
    sub = np.repeat(f[np.abs(cells) <= 400] / 2, 2)
    for j in (3, 4):
        assert dp_eps(*_shifted(sub, j), K, DELTA * (1 - 1e-6)) <= eps * (1 + 1e-3)
