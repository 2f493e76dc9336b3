"""Pair layouts (optnoise.design.layout): the pairs a design's exact check compares are the neighbourhood's,
modulo shifts for ``release="modulo"`` and answer pairs inside 0..n for ``release="clamp"``."""

import math
from fractions import Fraction

import numpy as np
import pytest

from optnoise import Neighborhood, NoiseDesign
from optnoise.design.clamp import clamp_matrix
from optnoise.design.layout import matrix_layout, pmf_layout
from optnoise.privacy.curves import delta_dp, delta_pdp, hockey_stick
from optnoise.privacy.exact import check_bounds, round_to_total

DENOMINATOR = 2**40


def no_resolve(delta, solver):
    return None


@pytest.mark.parametrize(
    "hood, want",
    [
        (Neighborhood.bd(2), {1, 2, 5, 6}),  # +-1, +-2 modulo 7
        (Neighborhood.bd(2, directed=True), {1, 2}),  # directed: no -mu
        (Neighborhood.sd(3), {3, 4}),
    ],
)
def test_modulo_pairs_are_the_shifts(hood, want):
    d = NoiseDesign(n=6, eps=1.0, delta=0.05, neighborhood=hood, privacy="dp")
    lay = d.pair_layout()
    N = 7
    assert (lay.kind, lay.rows, lay.cols, lay.weights_shape, lay.size) == ("pmf", 1, N, (N,), N)
    # every pair compares f(eta) with f(eta + mu) for one shift mu, each shift once
    assert np.array_equal(lay.first, np.broadcast_to(np.arange(N), lay.first.shape))
    steps = (lay.second - lay.first) % N
    assert np.all(steps == steps[:, :1])
    got = set(steps[:, 0].tolist())
    assert got == want


def test_modulo_check_and_loss_match_the_float_curves(rng):
    d = NoiseDesign(n=6, eps=0.7, delta=0.05, neighborhood=Neighborhood.bd(2), privacy="dp")
    lay = d.pair_layout()
    pmf = rng.dirichlet(np.full(7, 3.0))
    w = round_to_total(lay.embed(pmf), DENOMINATOR)
    q = np.array([Fraction(int(x), DENOMINATOR) for x in w], dtype=float)
    bounds = check_bounds(d.eps)
    for notion, curve in (("dp", delta_dp), ("pdp", delta_pdp)):
        other = pmf_layout(d.shift_index(), d.cost, notion, no_resolve)
        got = other.check(w, DENOMINATOR, bounds)
        assert float(got) == pytest.approx(curve(q, d.shifts, d.eps), rel=1e-9, abs=1e-15), notion
    # the loss is the expected cost: sum_eta cost(eta) f(eta)
    assert lay.loss_of(pmf) == pytest.approx(float(np.dot(d.cost.ravel(), pmf)))


@pytest.mark.parametrize("directed", [False, True])
def test_clamp_pairs_are_answer_pairs_inside_the_range(directed):
    n = 4
    d = NoiseDesign(
        n=n, eps=1.0, delta=0.05, neighborhood=Neighborhood.bd(2, directed=directed), privacy="dp", release="clamp"
    )
    lay = d.pair_layout()
    C = n + 1
    assert (lay.kind, lay.rows, lay.cols, lay.weights_shape) == ("matrix", C, C, (C, C))
    # by hand: q - q' in {1, 2} (and {-1, -2} unless directed), both answers in 0..n, nothing wraps
    diffs = {1, 2} if directed else {1, 2, -1, -2}
    want = {(q, p) for q in range(C) for p in range(C) if q - p in diffs}
    got = set()
    for f, s in zip(lay.first, lay.second, strict=True):
        x, y = np.divmod(f, C)
        x2, y2 = np.divmod(s, C)
        assert np.all(x == x[0]) and np.all(x2 == x2[0]) and np.array_equal(y, np.arange(C)) and np.array_equal(y2, y)
        got.add((int(x[0]), int(x2[0])))
    assert got == want and len(lay.first) == len(want)


def test_clamp_check_is_the_matrix_hockey_stick(rng):
    n = 4
    d = NoiseDesign(n=n, eps=0.8, delta=0.05, neighborhood=Neighborhood.bd(1), privacy="dp", release="clamp")
    lay = d.pair_layout()
    pmf = rng.dirichlet(np.full(2 * n + 1, 2.0))
    P = clamp_matrix(pmf, n)
    assert np.allclose(lay.embed(pmf), P.ravel())
    # rounded row by row to the common denominator, as the certifier does
    W = np.concatenate([round_to_total(row, DENOMINATOR) for row in P])
    Q = np.array([Fraction(int(x), DENOMINATOR) for x in W], dtype=float).reshape(n + 1, n + 1)
    want = max(float(hockey_stick(Q[a], Q[b], d.eps)) for a in range(n + 1) for b in range(n + 1) if abs(a - b) == 1)
    got = lay.check(W, DENOMINATOR, check_bounds(d.eps))
    assert float(got) == pytest.approx(want, rel=1e-9, abs=1e-15)
    # the loss: the cost of the released error y - q, averaged over the n + 1 answers (uniform prior)
    err = np.arange(n + 1)[None, :] - np.arange(n + 1)[:, None]
    assert lay.loss_of(lay.embed(pmf)) == pytest.approx(float((P * d.cost[err + n]).sum()) / (n + 1))


def test_matrix_layout_minimax_loss_and_bad_notion():
    outputs = np.arange(3)
    pairs = np.array([[0, 1], [1, 0], [1, 2], [2, 1]])
    L = np.abs(np.arange(3)[:, None] - np.arange(3)[None, :]).astype(float)
    rows = np.zeros((3, 9))
    rows[np.repeat(np.arange(3), 3), np.arange(9)] = L.ravel()  # minimax: one loss row per input
    lay = matrix_layout(pairs, outputs, rows, "dp", no_resolve)
    P = np.array([[0.8, 0.2, 0.0], [0.1, 0.8, 0.1], [0.0, 0.5, 0.5]])
    # per-input expected |y - x|: 0.2, 0.2, 0.5 -> the worst is 0.5
    assert lay.loss_of(P.ravel()) == pytest.approx(0.5)
    assert lay.first[2].tolist() == [3, 4, 5] and lay.second[2].tolist() == [6, 7, 8]
    W = np.array([4, 1, 0, 1, 3, 1, 0, 2, 3], dtype=object)  # rows of 5 over D = 5
    eps = math.log(2.0)
    # E = 2. (0, 1): [4 - 2]_+ = 2; (1, 0): [3 - 2]_+ + [1 - 0]_+ = 2; (1, 2) and (2, 1): 1. The worst: 2/5
    assert lay.check(W, 5, check_bounds(eps)) == pytest.approx(0.4, abs=1e-30)
    with pytest.raises(ValueError, match="notion must be one of 'dp', 'pdp'"):
        matrix_layout(pairs, outputs, rows, "pdp-kadam", no_resolve)
