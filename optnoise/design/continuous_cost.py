"""Costs of a real-valued error on the cells of a continuous design (:mod:`optnoise.design.continuous`).

Cell ``k`` is ``[(k - 1/2) w, (k + 1/2) w)`` (centred cells, so that a symmetric cost gives
symmetric cell costs). Each metric supplies

* the **cell average** ``(1/w) int_cell c(x) dx``: the exact cost of a piecewise-constant
  density per unit of cell mass (the upper bound's cost; closed forms for ``|x|^p`` and
  ``P(|x| > t)``, a 16-point Gauss-Legendre rule for a user function);
* **lower cuts** ``t_k >= a q_k + b mu_k`` (``q_k`` the cell's mass, ``mu_k = int_cell x p(x) dx``
  its first moment) valid for *every* density on the cell: ``int_cell c p >= q c_env(mu / q)``
  where ``c_env`` is the lower convex envelope of ``c`` on the cell (Jensen), and every
  affine minorant of ``c_env`` gives a linear cut in ``(q, mu)``. Tangents of ``|x|^p`` for
  ``p >= 1`` (convex); the chord for ``p < 1`` on a cell not containing 0 (concave there) and
  ``h^(p-1) |x|`` on the cell around 0 (``|x|^p >= h^(p-1) |x|`` for ``|x| <= h``); for
  ``1{|x| > t}`` the constant 1 or 0 off the threshold and the envelope's ramp
  ``(x - t) / (hi - t)`` on a cell straddling ``t`` (mirrored at ``-t``); for a user function
  the cell minimum, taken at the endpoint nearer 0, which is the minimum only when ``c`` is
  nondecreasing in ``|x|`` on each side of 0 (checked on a grid; otherwise no lower bound);
* the **far cost** ``min_{|x| >= L} c(x)``: what the lower bound charges the mass beyond ``+-L``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from optnoise.engine.validation import shown

__all__ = ["CONTINUOUS_METRICS", "RealCost", "parse_real_metric"]

#: Metric names of the continuous release (``"abs^p"`` and ``"exceed:t"`` take a number).
CONTINUOUS_METRICS = ("mse", "mae", "abs^p", "exceed:t")
_POWER = re.compile(r"abs\^([0-9]*\.?[0-9]+)$")
_EXCEED = re.compile(r"exceed:([0-9]*\.?[0-9]+)$")
#: Tangent points per cell for a convex power cost: the cut error is at most ``c'' (w / 2(TANGENTS - 1))^2 / 2``.
TANGENTS = 9
#: Points of the monotonicity check of a user cost, per side of 0 (over ``[0, 64 * sensitivity]``).
MONOTONE_CHECK = 4097
_GL_X, _GL_W = np.polynomial.legendre.leggauss(16)


@dataclass(frozen=True)
class RealCost:
    """The cost ``c(e)`` of a real error and its cell quantities (module docstring)."""

    name: str
    fn: Callable[[np.ndarray], np.ndarray]
    power: float | None = None
    threshold: float | None = None
    monotone: bool = True

    @property
    def symmetric(self) -> bool:
        """``c(-x) = c(x)`` (the built-in metrics; a user function is not assumed symmetric)."""
        return self.power is not None or self.threshold is not None

    def average(self, k: np.ndarray, w: float) -> np.ndarray:
        """``(1/w) int_{(k-1/2)w}^{(k+1/2)w} c(x) dx`` for integer cells ``k``."""
        k = np.asarray(k, dtype=np.int64)
        if self.symmetric:
            k = np.abs(k)  # equal costs for k and -k, exactly
        lo, hi = (k - 0.5) * w, (k + 0.5) * w
        if self.power is not None:
            p = self.power

            def F(x: np.ndarray) -> np.ndarray:
                return np.sign(x) * np.abs(x) ** (p + 1.0) / (p + 1.0)

            return (F(hi) - F(lo)) / w
        if self.threshold is not None:
            t = self.threshold
            inside = np.clip(np.minimum(hi, t) - np.maximum(lo, -t), 0.0, None)  # length within [-t, t]
            return 1.0 - inside / w
        mid, half = (lo + hi) / 2.0, w / 2.0
        x = mid[..., None] + half * _GL_X
        return np.asarray(self.fn(x) @ _GL_W / 2.0, dtype=float)

    def cuts(self, k: int, w: float) -> list[tuple[float, float]]:
        """Lower cuts ``(a, b)``: ``int_cell c p >= a q + b mu`` for every density on cell ``k`` (docstring)."""
        lo, hi = (k - 0.5) * w, (k + 0.5) * w
        out: list[tuple[float, float]] = []
        if self.power is not None:
            p = self.power
            if p >= 1.0:
                # |x| is affine on each side of 0: the endpoints' tangents are exact there
                for x in np.linspace(lo, hi, 2 if p == 1.0 else TANGENTS):
                    slope = p * abs(x) ** (p - 1.0) * math.copysign(1.0, x) if x != 0.0 else 0.0
                    out.append((abs(x) ** p - slope * x, slope))
            elif lo < 0.0 < hi:
                h = max(-lo, hi)
                out += [(0.0, h ** (p - 1.0)), (0.0, -(h ** (p - 1.0)))]
            else:  # concave on the cell: the chord lies below c
                slope = (abs(hi) ** p - abs(lo) ** p) / w
                out.append((abs(lo) ** p - slope * lo, slope))
            return out
        if self.threshold is not None:
            t = self.threshold
            if lo >= t or hi <= -t:
                return [(1.0, 0.0)]
            if lo < t < hi:  # 0 up to t, 1 beyond: the envelope ramps from t to hi
                out.append((-t / (hi - t), 1.0 / (hi - t)))
            if lo < -t < hi:
                out.append((-t / (-t - lo), -1.0 / (-t - lo)))
            return out
        if not self.monotone:
            return []
        x = np.array([0.0 if lo < 0.0 < hi else (lo if lo >= 0.0 else hi)])
        return [(float(self.fn(x)[0]), 0.0)]

    def far(self, L: float) -> float | None:
        """``min_{|x| >= L} c(x)`` (``None`` for a user cost not nondecreasing in ``|x|``)."""
        if self.power is not None:
            return float(L**self.power)
        if self.threshold is not None:
            return 1.0 if L > self.threshold else 0.0
        if not self.monotone:
            return None
        return float(np.min(self.fn(np.array([-L, L]))))


def _power(p: float) -> Callable[[np.ndarray], np.ndarray]:
    return lambda x: np.abs(np.asarray(x, dtype=float)) ** p


def parse_real_metric(metric: Any, sensitivity: float) -> RealCost:
    """The :class:`RealCost` of ``metric`` (``"mse"``, ``"mae"``, ``"abs^p"``, ``"exceed:t"`` or a function)."""
    if isinstance(metric, str):
        if metric in ("mse", "mae"):
            p = 2.0 if metric == "mse" else 1.0
            return RealCost(metric, _power(p), power=p)
        m = _POWER.match(metric)
        if m and 0.0 < float(m.group(1)) <= 16.0:
            return RealCost(metric, _power(float(m.group(1))), power=float(m.group(1)))
        m = _EXCEED.match(metric)
        if m and math.isfinite(float(m.group(1))):
            t = float(m.group(1))
            return RealCost(metric, lambda x: (np.abs(np.asarray(x, dtype=float)) > t).astype(float), threshold=t)
    elif callable(metric):
        user = metric

        def fn(x: np.ndarray) -> np.ndarray:
            v = np.broadcast_to(np.asarray(user(np.asarray(x, dtype=float)), dtype=float), np.shape(x))
            if not np.all(np.isfinite(v)):
                raise ValueError("metric function values must be finite")
            return v

        grid = np.linspace(0.0, 64.0 * sensitivity, MONOTONE_CHECK)
        right, left = fn(grid), fn(-grid)
        monotone = bool(np.all(np.diff(right) >= 0.0) and np.all(np.diff(left) >= 0.0))
        return RealCost("custom", fn, monotone=monotone)
    raise ValueError(
        f"metric must be one of {', '.join(CONTINUOUS_METRICS)} for release='continuous' (abs^p with 0 < p <= 16, "
        f"e.g. 'abs^3'; exceed:t with a real t >= 0, e.g. 'exceed:0.5') or a function of the real error; "
        f"got {shown(metric)}"
    )
