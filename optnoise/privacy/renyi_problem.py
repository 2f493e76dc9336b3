"""The Renyi-DP / zCDP design problem in log space: divergences, tangent cuts and a certified lower bound.

Notation. The noise ``f`` lives on the ``N`` points of the flattened grid ``{0..n}^dim``; shift ``m``
(one of ``K``) sends output ``eta`` to ``J_m(eta) = idx[m, eta]`` and ``g_m(eta) = f(J_m(eta))`` is the
shifted PMF. The design is ::

    minimise  c . f   over the simplex (f >= 0, sum f = 1)
    s.t.      D_alpha(f || g_m) <= eps       for every listed (alpha, eps) and every shift m,
              f(eta) <= e^eps_inf g_m(eta)   for every eta and m (only when eps_inf is given),

Renyi DP at the listed orders (Mironov 2017), or zCDP on an order grid plus its ``D_inf`` row (Bun and
Steinke 2016; :mod:`optnoise.privacy.renyi` states what the grid guarantees). Constraint ``i`` is the pair
(order ``j``, shift ``m``); points are given by their logs ``logf = log f``, so that masses of 1e-300 and
their ratios stay exact.

Homogenised constraints. For ``alpha > 1`` let ``E = e^{(alpha-1) eps}`` and ::

    G(f) = (sum_eta f(eta)^alpha g(eta)^(1-alpha) - E sum_eta f(eta)) / ((alpha - 1) E),

and for ``alpha = 1`` (KL) ``G(f) = sum_eta f log(f / g) - eps sum_eta f``. Each ``G`` is convex (the
perspective ``f^alpha g^(1-alpha)`` is jointly convex for ``alpha > 1``) and positively 1-homogeneous,
and on the simplex ``G(f) <= 0`` exactly when ``D_alpha(f || g) <= eps``; there
``G = expm1((alpha-1)(D_alpha - eps)) / (alpha - 1)`` (``D_1 - eps`` for KL). Its gradient depends on
``f`` only through the log-ratios ``d(eta) = logf(eta) - logf(J(eta))``: the term of ``eta`` contributes ::

    P(eta) = 1 + alpha / (alpha - 1) expm1((alpha - 1)(d - eps))   to  dG/df(eta)     (KL: 1 + d - eps),
    Q(eta) = -exp(alpha d - (alpha - 1) eps)                        to  dG/df(J(eta)),

numbers of order one in f-space wherever the masses are (no cancellation near ``alpha = 1``).

Tangent cuts and the lower bound. A convex 1-homogeneous ``G`` equals ``grad G(f_hat) . f_hat`` (Euler),
so its tangent at any ``f_hat > 0`` reads ``G(f) >= grad G(f_hat) . f`` for every ``f >= 0``. Hence for
any multipliers ``y >= 0`` (one per constraint, possibly at several tangent points) and ``nu >= 0`` (one
per ``D_inf`` row), every feasible ``f`` satisfies ::

    c . f >= c . f + sum_i y_i G_i(f) + sum_b nu_b (f(eta_b) - e^eps_inf f(J_b)) >= e . f >= min_eta e(eta),
    e = c + sum_i y_i grad G_i(f_hat) + B^T nu,

weak Lagrangian duality with the simplex kept explicit. :meth:`RenyiProblem.lower_bound` evaluates
``min_eta e(eta)`` in float64 and subtracts a bound on its rounding error, so the result is a lower bound
on the optimum whatever ``f_hat``, ``y`` and ``nu`` are (no accuracy is assumed of whoever computed them);
at a KKT point it equals the optimum up to that margin. The margin is a generous a-priori estimate
(4 units of roundoff per operation on every exponent argument, and ``(terms + 2)`` units on the sum of
absolute values for each sum), not interval arithmetic.

Upper bounds. :meth:`RenyiProblem.feasible` checks a point from its logs with log-sum-exp, keeping a
relative margin :data:`SAFETY` below every budget; :meth:`RenyiProblem.repair` mixes a point with a
strictly feasible one (the feasible set is convex) with the largest weight that passes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import logsumexp

__all__ = ["SAFETY", "RenyiProblem"]

#: Relative margin a point must keep below every budget to be accepted (``max D_i / eps_i <= 1 - SAFETY``).
SAFETY = 1e-11
#: Twice the unit roundoff of float64: a generous unit for the rounding margins.
_U = float(np.finfo(float).eps)


class RenyiProblem:
    """The design of the module docstring for one cost vector, shift table and budget.

    Parameters
    ----------
    cost : array of shape (N,)
        Distortion of every noise value.
    idx : int array of shape (K, N)
        ``idx[m, eta]`` is ``eta`` moved by shift ``m`` (each row a permutation: the modulo release).
    orders : list of (alpha, eps)
        Orders ``alpha >= 1`` (1 is KL) and their budgets ``eps > 0``.
    eps_inf : float, optional
        The ``D_inf`` budget (zCDP's pure-DP row), or ``None``.
    bound_inf : bool
        Whether the ``D_inf`` rows may carry multipliers in :meth:`lower_bound`. ``False`` when those
        rows only guide the search and are not part of the problem the bound must hold for (zCDP:
        rho-zCDP does not imply ``D_inf <= eps_inf``, so a bound using them is not a bound on the
        rho-zCDP optimum); ``nu`` is then ignored and the bound holds for the orders alone.
    """

    def __init__(
        self,
        cost: Any,
        idx: Any,
        orders: list[tuple[float, float]],
        eps_inf: float | None = None,
        *,
        bound_inf: bool = True,
    ) -> None:
        self.cost = np.asarray(cost, dtype=float).ravel()
        self.idx = np.asarray(idx, dtype=np.int64)
        if self.idx.ndim != 2 or self.idx.shape[1] != self.cost.size:
            raise ValueError(f"idx must have shape (K, {self.cost.size}); got {self.idx.shape}")
        n_points = self.cost.size
        if not all(np.array_equal(np.sort(row), np.arange(n_points)) for row in self.idx):
            raise ValueError("idx rows must be permutations of the noise values (the modulo release)")
        #: ``inv[m, eta]``: the output whose shift ``m`` lands on ``eta``.
        self.inv = np.argsort(self.idx, axis=1)
        n_shifts = self.idx.shape[0]
        self.alpha = np.repeat([float(a) for a, _ in orders], n_shifts)
        self.eps = np.repeat([float(e) for _, e in orders], n_shifts)
        self.shift = np.tile(np.arange(n_shifts), len(orders))
        self.kl = self.alpha == 1.0
        self.eps_inf = None if eps_inf is None else float(eps_inf)
        self.bound_inf = bool(bound_inf)

    @property
    def size(self) -> int:
        """``N``, the number of noise values."""
        return self.cost.size

    @property
    def shifts(self) -> int:
        """``K``, the number of shifts."""
        return self.idx.shape[0]

    @property
    def constraints(self) -> int:
        """``I``, the number of Renyi constraints (orders times shifts)."""
        return self.alpha.size

    # ------------------------------------------------------------------ values
    def log_ratios(self, logf: np.ndarray) -> np.ndarray:
        """``d[m, eta] = logf(eta) - logf(J_m(eta))``; ``-inf`` where ``f(eta) = 0`` (such terms are 0)."""
        with np.errstate(invalid="ignore"):
            d = logf[None, :] - logf[self.idx]
        return np.where(np.isneginf(logf)[None, :], -np.inf, d)

    def divergences(self, logf: np.ndarray) -> tuple[np.ndarray, float]:
        """``D_alpha_i(f || g_m_i)`` of every constraint and ``max_m D_inf(f || g_m)``, from the logs.

        ``logf`` need not be normalised; masses ``-inf`` are zeros (a zero neighbour of a positive mass
        makes the divergences infinite).
        """
        logf = logf - logsumexp(logf)
        d = self.log_ratios(logf)
        out = np.empty(self.constraints)
        kl = self.kl
        if kl.any():
            f = np.exp(logf)
            with np.errstate(invalid="ignore"):
                terms = np.where(f[None, :] > 0, d[self.shift[kl]] * f[None, :], 0.0)
            out[kl] = terms.sum(axis=1)
        if (~kl).any():
            am1 = self.alpha[~kl] - 1.0
            with np.errstate(invalid="ignore"):
                M = logf[None, :] + am1[:, None] * d[self.shift[~kl]]
            out[~kl] = logsumexp(np.where(np.isnan(M), -np.inf, M), axis=1) / am1
        return out, float(np.max(d))

    def excess(self, logf: np.ndarray) -> float:
        """Largest relative excess ``max_i D_i / eps_i - 1`` (and ``D_inf / eps_inf - 1``); <= 0 when feasible."""
        div, dinf = self.divergences(logf)
        worst = float(np.max(div / self.eps)) - 1.0
        if self.eps_inf is not None:
            worst = max(worst, dinf / self.eps_inf - 1.0)
        return worst

    def feasible(self, logf: np.ndarray) -> bool:
        """True when ``logf`` meets every budget with the relative margin :data:`SAFETY`."""
        return self.excess(logf) <= -SAFETY

    def value(self, logf: np.ndarray) -> float:
        """``c . f`` of the normalised ``f = exp(logf)``."""
        return float(self.cost @ np.exp(logf - logsumexp(logf)))

    def slacks(self, logf: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """``-G_i(f)`` of every constraint on the simplex, and the log ``D_inf`` slacks.

        The first is ``-expm1((alpha-1)(D - eps)) / (alpha-1)`` (``eps - D`` for KL), accurate near 0;
        the second (``None`` without ``eps_inf``) is ``log(e^eps_inf f(J_m(eta)) - f(eta))`` of shape
        ``(K, N)``, NaN where the row is violated. ``logf`` must be normalised.
        """
        div, _ = self.divergences(logf)
        am1 = np.where(self.kl, 1.0, self.alpha - 1.0)
        with np.errstate(over="ignore"):
            G = np.where(self.kl, div - self.eps, np.expm1(am1 * (div - self.eps)) / am1)
        if self.eps_inf is None:
            return -G, None
        d = self.log_ratios(logf)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            logs = logf[self.idx] + self.eps_inf + np.log1p(-np.exp(d - self.eps_inf))
        return -G, np.where(d < self.eps_inf, logs, np.nan)

    # ------------------------------------------------------------------ tangents
    def tangents(self, logf: np.ndarray, sel: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Gradient pieces of ``G_i`` at ``f = exp(logf)`` for the constraints ``sel`` (module docstring).

        Returns arrays of shape ``(len(sel), N)``: ``P`` and ``Q`` (term ``eta``'s coefficients of
        ``f(eta)`` and of ``f(J(eta))``), their derivatives in ``logf`` (``A1 = dP/dl(eta) = -dP/dl(J)``,
        ``AQ = dQ/dl(J) = -dQ/dl(eta)``), the log-ratios ``d``, and rounding bounds ``errP``, ``errQ``
        on the computed ``P`` and ``Q`` (a-priori estimates: the exponent arguments carry about
        ``|argument|`` units of roundoff, ``exp`` and ``expm1`` one more).
        """
        sel = np.arange(self.constraints) if sel is None else np.asarray(sel, dtype=np.int64)
        a = self.alpha[sel][:, None]
        eps = self.eps[sel][:, None]
        kl = self.kl[sel][:, None]
        am1 = np.where(kl, 1.0, a - 1.0)
        d = self.log_ratios(logf)[self.shift[sel]]
        with np.errstate(over="ignore", invalid="ignore"):
            x = (a - 1.0) * (d - eps)
            A1 = np.where(kl, 1.0, a * np.exp(x))
            P = np.where(kl, 1.0 + d - eps, 1.0 + a / am1 * np.expm1(x))
            arg = a * d - (a - 1.0) * eps
            Qe = np.exp(arg)
            errP = 4 * _U * (np.abs(P) + 1.0 + A1 * (np.abs(d) + np.abs(eps) + 1.0))
            errQ = 4 * _U * Qe * (np.abs(a * d) + np.abs((a - 1.0) * eps) + 2.0)
        return {"P": P, "Q": -Qe, "A1": A1, "AQ": a * Qe, "d": d, "errP": errP, "errQ": errQ}

    def gradients(self, parts: dict[str, np.ndarray], sel: np.ndarray | None = None) -> np.ndarray:
        """The f-space gradients ``grad G_i`` (rows) from :meth:`tangents` output for the same ``sel``."""
        sel = np.arange(self.constraints) if sel is None else np.asarray(sel, dtype=np.int64)
        return parts["P"] + np.take_along_axis(parts["Q"], self.inv[self.shift[sel]], axis=1)

    def lower_bound(
        self, points: list[np.ndarray], multipliers: list[np.ndarray], nu: np.ndarray | None = None
    ) -> float:
        """A certified lower bound on the optimum: ``min_eta e(eta)`` minus its rounding margin.

        ``points`` are tangent points (logs, every entry finite), ``multipliers`` one array of
        ``I`` multipliers per point, ``nu`` the ``(K, N)`` multipliers of the ``D_inf`` rows (row
        ``(m, eta)``: ``f(eta) - e^eps_inf f(J_m(eta)) <= 0``). Negative multipliers are clipped to 0,
        and constraints whose tangent is not finite get none, so any input gives a valid bound
        (module docstring); ``-inf`` when nothing is finite. ``nu`` is ignored unless
        :attr:`bound_inf`.
        """
        e = self.cost.copy()
        mag = np.abs(self.cost)  # sum of |terms| of every e(eta), for the summation error
        err = np.zeros(self.size)  # propagated error of the tangent coefficients
        terms = 1
        for logf, y in zip(points, multipliers, strict=True):
            y = np.maximum(np.nan_to_num(np.asarray(y, dtype=float), nan=0.0, posinf=0.0), 0.0)
            sel = np.flatnonzero(y > 0)
            if sel.size == 0:
                continue
            parts = self.tangents(logf, sel)
            for k, i in enumerate(sel):
                inv = self.inv[self.shift[i]]
                p, q = parts["P"][k], parts["Q"][k][inv]
                ep, eq = parts["errP"][k], parts["errQ"][k][inv]
                if not (np.all(np.isfinite(p)) and np.all(np.isfinite(q)) and np.all(np.isfinite(ep + eq))):
                    continue
                e += y[k] * (p + q)
                mag += y[k] * (np.abs(p) + np.abs(q))
                err += y[k] * (ep + eq)
                terms += 2
        if nu is not None and self.eps_inf is not None and self.bound_inf:
            nu = np.maximum(np.nan_to_num(np.asarray(nu, dtype=float), nan=0.0, posinf=0.0), 0.0)
            ee = math.exp(self.eps_inf)
            for m in range(self.shifts):
                e += nu[m]
                e[self.idx[m]] -= ee * nu[m]
                mag += nu[m]
                mag[self.idx[m]] += ee * nu[m]
            terms += 2 * self.shifts
        if not np.all(np.isfinite(e)):
            return -math.inf
        # recursive summation of `terms` products: |error| <= (terms + 2) u sum |term| (u <= _U / 2)
        bound = float(np.min(e - err - (terms + 2) * _U * mag))
        return bound - 8 * _U * abs(bound)

    # ------------------------------------------------------------------ repair
    @staticmethod
    def mix(l1: np.ndarray, l0: np.ndarray, theta: float) -> np.ndarray:
        """Logs of ``theta f1 + (1 - theta) f0`` (normalised inputs)."""
        if theta >= 1.0:
            return l1.copy()
        if theta <= 0.0:
            return l0.copy()
        return np.logaddexp(math.log(theta) + l1, math.log1p(-theta) + l0)

    def repair(self, l1: np.ndarray, l0: np.ndarray, *, steps: int = 60) -> tuple[np.ndarray, float]:
        """The mixture of ``l1`` with a feasible ``l0`` of largest weight ``theta`` on ``l1`` that is feasible.

        Bisection on ``theta`` (the feasible set is convex, so the feasible weights form an interval
        containing 0). Returns the normalised logs and ``theta``.
        """
        l1 = l1 - logsumexp(l1)
        if self.feasible(l1):
            return l1, 1.0
        lo, hi = 0.0, 1.0
        for _ in range(steps):
            mid = 0.5 * (lo + hi)
            if self.feasible(self.mix(l1, l0, mid)):
                lo = mid
            else:
                hi = mid
            if hi - lo < 1e-13:
                break
        return self.mix(l1, l0, lo), lo
