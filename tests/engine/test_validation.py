"""Shared argument checks (optnoise/_validation.py)."""

import math
import sys

import numpy as np
import pytest

from optnoise.engine.validation import MAX_EPS, MAX_FINITE_EPS, check_eps


def test_check_eps_bounds_eps_only_when_asked():
    assert MAX_FINITE_EPS == pytest.approx(709.78, abs=0.01)  # log of the largest double, 1.797e308
    assert math.isfinite(math.exp(check_eps(MAX_FINITE_EPS, maximum=MAX_FINITE_EPS)))
    with np.errstate(over="ignore"):
        assert np.isinf(np.exp(MAX_FINITE_EPS + 1e-9))
    with pytest.raises(ValueError, match=r"eps must be <= 709.783 \(e\^eps must be a finite double\); got 1e\+25"):
        check_eps(1e25, maximum=MAX_FINITE_EPS)
    assert check_eps(1e25) == 1e25  # closed forms and accounting take any finite eps
    with pytest.raises(ValueError, match="must be finite"):
        check_eps(float("inf"))
    assert check_eps(0.0, allow_zero=True) == 0.0
    with pytest.raises(ValueError, match="> 0"):
        check_eps(0.0)


def test_check_eps_takes_a_tighter_bound_and_its_reason():
    assert check_eps(MAX_EPS, maximum=MAX_EPS, why="a reason") == MAX_EPS
    with pytest.raises(ValueError, match=r"eps2 must be <= 34.5 \(a reason\); got 35"):
        check_eps(35, "eps2", maximum=MAX_EPS, why="a reason")
    assert sys.float_info.max == pytest.approx(math.exp(MAX_FINITE_EPS))
