"""Composition edge cases: pairs told apart with certainty, the exact pure eps, the accepted grids."""

from __future__ import annotations

import numpy as np
import pytest

from optnoise.privacy import accounting


def test_point_mass_composes_to_delta_one():
    """dp-accounting cannot compose a PLD without finite losses (IndexError): delta is 1 at every eps."""
    f = np.zeros(11)
    f[0] = 1.0
    comp = accounting.compose(f, [1, -1], 3, warn=False)
    assert comp.delta(0.0) == 1.0 and comp.delta(50.0) == 1.0
    assert comp.epsilon(0.5) == np.inf and comp.epsilon(1.0) == 0.0


def test_pure_eps_is_k_times_the_largest_loss():
    rng = np.random.default_rng(3)
    f = rng.random(9) + 0.1
    f /= f.sum()
    worst = max(float(np.max(np.log(f) - np.log(np.roll(f, -s)))) for s in (1, -1))
    comp = accounting.compose(f, [1, -1], 4, warn=False)
    assert comp.epsilon(0.0) == pytest.approx(4 * worst, rel=1e-12)
    assert comp.delta(4 * worst) == 0.0
    assert comp.delta(4 * worst * 0.9) > 0.0
    # never above the pure eps at any delta, and the PLD still decides where it is tighter
    assert comp.epsilon(1e-6) <= comp.epsilon(0.0)
    assert comp.epsilon(0.1) < comp.epsilon(0.0)


def test_directed_pairs_read_one_direction():
    f = np.array([0.5, 0.3, 0.2])
    comp = accounting.compose(f, [1], 2, warn=False)  # the pair (f, f(. + 1)) only
    worst = float(np.max(np.log(f) - np.log(np.roll(f, -1))))
    assert comp.epsilon(0.0) == pytest.approx(2 * worst, rel=1e-12)


@pytest.mark.parametrize("h", [800.0, 2.0, 1e-300, 0.0, -1e-4, float("nan")])
def test_discretization_outside_the_range_names_it(h):
    with pytest.raises(ValueError, match="discretization") as info:
        accounting.compose(np.full(5, 0.2), [1, -1], 2, discretization=h)
    assert len(str(info.value)) < 200
