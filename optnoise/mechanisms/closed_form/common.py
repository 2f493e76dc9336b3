"""Validation and shared pieces of the closed forms."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.optimize import brentq

from optnoise.engine.validation import check_delta, check_eps, check_probability, shown

__all__ = [
    "eps_array",
    "delta_array",
    "check_rho",
    "scalar_or_array",
    "xi",
    "geometric_f0",
    "f0_gap",
    "increasing_root",
    "staircase_f0",
]


def _float_array(value: Any, check: Callable[[Any], float]) -> np.ndarray:
    """``value`` as a float array whose every entry passes the shared ``check``."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        check(value)  # raises the shared one-line message
        raise
    for v in np.unique(arr):  # one message format for scalars and arrays
        check(v)
    return arr


def eps_array(value: Any) -> np.ndarray:
    """``value`` (a scalar or array of eps) as a float array, each entry checked as an eps."""
    return _float_array(value, check_eps)


def delta_array(value: Any) -> np.ndarray:
    """``value`` (a scalar or array of delta) as a float array, each entry checked as a delta."""
    return _float_array(value, check_delta)


def check_rho(rho: Any) -> float:
    """A ratio ``rho`` strictly between 0 and 1."""
    rho = check_probability("rho", rho)
    if not 0.0 < rho < 1.0:
        raise ValueError(f"rho must be in (0, 1); got {shown(rho)}")
    return rho


def scalar_or_array(arr: np.ndarray) -> Any:
    """A float for a 0-d array (a scalar argument), else the array."""
    return float(arr) if np.ndim(arr) == 0 else arr


def xi(a: Any, eps: Any) -> Any:
    """``xi_a = sum_{i<a} e^{-i eps} = (1 - e^{-a eps}) / (1 - e^{-eps})`` (after (35))."""
    return np.expm1(-a * np.asarray(eps, float)) / np.expm1(-np.asarray(eps, float))


def geometric_f0(m: Any, eps: Any) -> Any:
    """``(1 - e^-eps) / (1 - e^{-(m+1) eps})``: f(0) of a geometric chain of m+1 masses."""
    return 1.0 / xi(m + 1, eps)


def f0_gap(f0: Callable[[Any, float], Any], shape: Any, target: float, eps: float) -> float:
    """``f0(shape, eps) - target``: the equation whose root is a region boundary."""
    return float(f0(shape, eps)) - target


def increasing_root(g: Callable[[float], float]) -> float:
    """Root in eps > 0 of an increasing function g with g(0+) < 0 < g(inf)."""
    hi = 1.0
    while g(hi) <= 0.0:
        hi *= 2.0
    return brentq(g, 1e-300, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps)


def staircase_f0(lengths: Any, eps: Any) -> Any:
    """``1 / sum_i l_i e^{-i eps}``: the normalising ``f(0)`` of (29) and (34)."""
    lengths = np.asarray(lengths, float)
    e = np.asarray(eps, float)[..., None]
    return 1.0 / np.sum(lengths * np.exp(-np.arange(lengths.size) * e), axis=-1)
