"""Exact repair (optnoise.design.repair): a slightly infeasible solution comes back as integer weights whose
exact check (optnoise.privacy.exact) meets the target, at a small loss change; the pure-DP envelope by hand."""

import math
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest

from optnoise import Neighborhood, NoiseDesign
from optnoise.design.layout import pmf_layout
from optnoise.design.repair import (
    DEFAULT_BITS,
    MAX_LOSS,
    RepairFailed,
    exact_repair,
    prepare,
    pure_envelope,
    solution_of,
)
from optnoise.privacy.curves import delta_dp, delta_pdp
from optnoise.privacy.exact import check_bounds, exact_delta, round_to_total

D = 2**DEFAULT_BITS


def solved(privacy: str, delta: float, n: int = 8, eps: float = 1.0):
    d = NoiseDesign(n=n, eps=eps, delta=delta, neighborhood=Neighborhood.bd(1), privacy=privacy)
    res = d.solve(solver="highs")
    assert res.status == "optimal"
    return d, res.pmf.ravel()


def bumped(p: np.ndarray, a: float) -> np.ndarray:
    """``(1 - a) p + a`` at the mode: a mass ``a`` moved onto the largest value, which leaks a little more."""
    q = (1.0 - a) * p
    q[np.argmax(p)] += a
    return q


def exact_of(d, w, notion):
    return exact_delta(w, d.shift_index(), notion, check_bounds(d.eps))


def assert_certified(d, rep, notion, target, base):
    w = rep.weights
    assert sum(int(x) for x in w) == D and all(int(x) >= 0 for x in w)
    # re-checked from the weights alone, exactly and in floats
    exact = exact_of(d, w, notion)
    assert isinstance(exact, Fraction) and exact <= Fraction(target) and exact == rep.delta
    f = np.array([Fraction(int(x), D) for x in w], dtype=float)
    curve = {"dp": delta_dp, "pdp": delta_pdp}[notion]
    assert curve(f, d.shifts, d.eps) <= target * (1 + 1e-12)
    # the loss is the expected cost of the weights, and moved by at most the budget
    assert rep.loss == pytest.approx(float(np.dot(d.cost.ravel(), f)), rel=1e-12)
    assert abs(rep.loss - base) <= MAX_LOSS * max(1.0, abs(base))


@pytest.mark.parametrize("a", [1e-8, 1e-3])
def test_dp_solution_slightly_over_is_repaired(a):
    d, p = solved("dp", 0.01)
    base = float(np.dot(d.cost.ravel(), p))
    q = bumped(p, a)
    # the rounded bumped PMF fails the exact check: the repair has something to do
    assert exact_of(d, round_to_total(q, D), "dp") > Fraction(0.01)
    rep = exact_repair(d, prepare(q), base=base, target=0.01)
    assert_certified(d, rep, "dp", 0.01, base)
    # a tiny excess is mixed away; a large one needs the LP re-solved with a margin
    assert rep.method == ("mix-uniform" if a < 1e-6 else "margin-resolve")
    assert (rep.mix_units > 0) == (rep.method == "mix-uniform")
    assert rep.mix_weight == pytest.approx(rep.mix_units * d.size / D)


def test_pdp_leak_from_a_bump_is_mixed_away():
    d, p = solved("pdp", 0.1, n=6)
    base = float(np.dot(d.cost.ravel(), p))
    q = bumped(p, 1e-9)
    assert exact_of(d, round_to_total(q, D), "pdp") > Fraction(0.1)  # the bump makes a large mass leak
    rep = exact_repair(d, prepare(q), base=base, target=0.1)
    assert rep.method == "mix-uniform"
    assert_certified(d, rep, "pdp", 0.1, base)


def test_pure_target_and_failure_within_a_zero_budget():
    d, p = solved("dp", 0.0, n=6)
    base = float(np.dot(d.cost.ravel(), p))
    q = p.copy()
    q[np.argmax(q)] *= 1 + 1e-6
    q /= q.sum()
    rep = exact_repair(d, prepare(q), base=base, target=0.0)
    assert rep.delta == 0
    assert_certified(d, rep, "dp", 0.0, base)
    # with no loss allowed, nothing certifies: RepairFailed (a ValueError) says what was tried
    with pytest.raises(RepairFailed, match="tried rounding, uniform mixing") as err:
        exact_repair(d, prepare(bumped(p, 0.3)), base=base, target=0.0, max_loss=0.0)
    assert isinstance(err.value, ValueError)


def test_pure_envelope_by_hand():
    # Z_5, shifts +-1, e^eps = 2: from a point mass the envelope halves per step, both ways round the ring:
    # (1, 1/2, 1/4, 1/4, 1/2) / 2.5
    shifts = np.array([1, 4])
    index = (np.arange(5)[None, :] + shifts[:, None]) % 5
    lay = pmf_layout(index, np.zeros(5), "dp", lambda delta, solver: None)
    g = pure_envelope(lay, np.array([1.0, 0, 0, 0, 0]), math.log(2.0))
    assert g == pytest.approx(np.array([0.4, 0.2, 0.1, 0.1, 0.2]), rel=1e-12)
    # a PMF already within the ratio bound is its own envelope
    flat = np.full(5, 0.2)
    assert pure_envelope(lay, flat, 0.1) == pytest.approx(flat)
    # every ratio within e^eps; nothing below the input (up to normalisation)
    p = np.array([0.7, 0.0, 0.3, 0.0, 0.0])
    g = pure_envelope(lay, p, 0.5)
    assert np.all(g[lay.first] <= math.exp(0.5) * g[lay.second] * (1 + 1e-12))
    assert np.all(g / g.max() >= p / p.max() - 1e-15)
    assert pure_envelope(lay, np.zeros(5), 0.5) is None


def test_prepare_and_solution_of():
    out = prepare(np.array([[0.5, -1e-12], [1e-16, 0.5]]))
    assert out.tolist() == [0.5, 0.0, 0.0, 0.5]
    assert solution_of(SimpleNamespace(matrix=np.eye(2), pmf=np.ones(3))).shape == (2, 2)
    assert solution_of(SimpleNamespace(matrix=None, pmf=np.ones(3))).shape == (3,)
    assert solution_of(object()) is None
