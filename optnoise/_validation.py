"""Shared input validation.

Every public entry point funnels user input through these helpers so that a
mistake surfaces as one ``ValueError`` that names the parameter and the
allowed values, never as a solver traceback or a silent wrong answer.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = [
    "check_choice",
    "check_eps",
    "check_delta",
    "check_int",
    "check_positive",
    "check_finite",
    "check_pmf",
    "check_probability",
    "check_finite_array",
]


def _as_float(name: str, value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a real number; got {value!r}")
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number; got {value!r}") from None
    return out


def check_finite(name: str, value: Any) -> float:
    """Return ``value`` as a float, refusing NaN and infinities."""
    out = _as_float(name, value)
    if not math.isfinite(out):
        raise ValueError(f"{name} must be finite; got {value!r}")
    return out


def check_positive(name: str, value: Any, *, allow_zero: bool = False) -> float:
    """A finite real number > 0 (or >= 0 with ``allow_zero``)."""
    out = check_finite(name, value)
    if out < 0 or (out == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite number {bound}; got {value!r}")
    return out


def check_eps(value: Any, name: str = "eps", *, allow_zero: bool = False) -> float:
    """Privacy parameter epsilon: finite and > 0 (>= 0 when ``allow_zero``)."""
    return check_positive(name, value, allow_zero=allow_zero)


def check_probability(name: str, value: Any) -> float:
    """A finite number in [0, 1]."""
    out = check_finite(name, value)
    if not 0.0 <= out <= 1.0:
        raise ValueError(f"{name} must be in [0, 1]; got {value!r}")
    return out


def check_delta(value: Any, name: str = "delta") -> float:
    """Privacy parameter delta in [0, 1]."""
    return check_probability(name, value)


def check_int(
    name: str,
    value: Any,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int:
    """An integer (numpy integers and integral floats are accepted) within bounds."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an integer; got {value!r}")
    if isinstance(value, (int, np.integer)):
        out = int(value)
    else:
        f = _as_float(name, value)
        if not math.isfinite(f) or f != int(f):
            raise ValueError(f"{name} must be an integer; got {value!r}")
        out = int(f)
    if minimum is not None and out < minimum:
        hi = f" and <= {maximum}" if maximum is not None else ""
        raise ValueError(f"{name} must be an integer >= {minimum}{hi}; got {value!r}")
    if maximum is not None and out > maximum:
        lo = f">= {minimum} and " if minimum is not None else ""
        raise ValueError(f"{name} must be an integer {lo}<= {maximum}; got {value!r}")
    return out


def check_choice(name: str, value: Any, choices: Iterable[str]) -> str:
    """One of a fixed set of strings."""
    choices = tuple(choices)
    if not isinstance(value, str) or value not in choices:
        allowed = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {allowed}; got {value!r}")
    return value


def check_pmf(name: str, pmf: Any, *, atol: float = 1e-9) -> np.ndarray:
    """A finite, non-negative array that sums to 1 within ``atol``."""
    try:
        arr = np.asarray(pmf, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of probabilities; got {type(pmf).__name__}") from None
    if arr.size == 0:
        raise ValueError(f"{name} must be a non-empty array of probabilities")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values (no NaN or inf)")
    if np.any(arr < 0):
        raise ValueError(f"{name} must be non-negative; its smallest entry is {arr.min()!r}")
    total = float(arr.sum())
    if abs(total - 1.0) > atol:
        raise ValueError(f"{name} must sum to 1 (within {atol:g}); it sums to {total!r}")
    return arr


def check_finite_array(name: str, value: Any, *, ndim: int = 1, min_size: int = 1) -> np.ndarray:
    """A float array of exactly ``ndim`` dimensions, at least ``min_size`` entries, no NaN or inf."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of real numbers; got {type(value).__name__}") from None
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-dimensional array; got shape {arr.shape}")
    if arr.size < min_size:
        raise ValueError(f"{name} must have at least {min_size} entries; got {arr.size}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values (no NaN or inf)")
    return arr
