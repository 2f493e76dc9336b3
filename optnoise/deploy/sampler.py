"""Exact sampling from integer weights over ``2**bits``, with the OS CSPRNG by default."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from optnoise.engine.validation import shown

__all__ = ["SamplingTable", "draw_uniform", "check_rng", "check_answers"]


class SamplingTable:
    """Exact lookup of one integer distribution: draws below ``2**bits`` to indices.

    ``lookup(u)`` is the ``i`` with ``cum[i-1] <= u < cum[i]``, i.e.
    ``searchsorted(cum, u, side="right")``: start at the guide entry of the
    draw's top bits (a lower bound) and advance while ``u >= cum[i]``.
    """

    def __init__(self, weights: np.ndarray, bits: int, guide_bits: int = 16) -> None:
        self.bits = bits
        self.cum = np.cumsum(np.asarray(weights, dtype=np.int64).ravel(), dtype=np.int64)
        self.guide_bits = min(guide_bits, bits)
        starts = np.arange(1 << self.guide_bits, dtype=np.int64) << (bits - self.guide_bits)
        # guide[t]: the interval containing the first integer of bucket t; a draw in
        # bucket t has index >= guide[t] (the table is non-decreasing).
        self.guide = np.searchsorted(self.cum, starts, side="right")

    def lookup(self, u: np.ndarray) -> np.ndarray:
        idx = self.guide[u >> (self.bits - self.guide_bits)]
        active = np.flatnonzero(u >= self.cum[idx])
        while active.size:
            idx[active] += 1
            active = active[u[active] >= self.cum[idx[active]]]
        return idx


def draw_uniform(count: int, bits: int, rng: Any) -> np.ndarray:
    """``count`` integers uniform on ``[0, 2**bits)`` as int64."""
    if rng is None:
        # CSPRNG: os.urandom (getrandom(2)); the top `bits` of each 64-bit word are uniform.
        words = np.frombuffer(os.urandom(8 * count), dtype=np.uint64)
        return (words >> np.uint64(64 - bits)).astype(np.int64)
    return rng.integers(0, 1 << bits, size=count, dtype=np.int64)


def check_rng(rng: Any) -> Any:
    if rng is None or isinstance(rng, np.random.Generator):
        return rng
    raise ValueError(
        "rng must be None (cryptographically secure, for deployment) or a seeded "
        f"numpy.random.Generator (reproducible experiments only); got {type(rng).__name__}"
    )


def check_answers(q: Any, n: int, name: str = "q") -> np.ndarray:
    """Integer answers in ``[0, n]`` (a scalar or any array) as int64."""
    arr = np.asarray(q)
    if arr.dtype == object or arr.dtype.kind not in "iuf" or arr.size == 0:
        raise ValueError(f"{name} must be integers in [0, n] = [0, {n}] (a scalar or an array); got {shown(q)}")
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise ValueError(f"{name} must be integers in [0, n] = [0, {n}]; got non-integer or non-finite values")
    if arr.min() < 0 or arr.max() > n:
        raise ValueError(f"{name} must be integers in [0, n] = [0, {n}]; got values outside that range")
    return arr.astype(np.int64, copy=False)
