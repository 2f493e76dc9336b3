"""Integer-valued noise for count queries (Sadeghi, Asoodeh, Calmon, arXiv 2007.09374).

The math of the source text was lost in extraction; this module follows the
standard definitions of count-query mechanisms and re-derives each step,
checked against the solver layer and exact hockey-stick computations.

Mechanism (Props. 1 and 3, eq. (14)): for a true count ``c >= N`` release
``c + Z`` with ``Z`` on ``{-N..N}``::

    P(Z = 0) = 1 - rho,    P(Z = +i) = P(Z = -i) = rho alpha_i / 2,

``alpha_i >= 0``, ``sum alpha_i = 1`` -- zero mean, hard support, and a fixed
probability ``rho`` of a wrong count (properties P1-P3). Neighbouring counts
differ by 1. Write ``a = e^eps`` and ``beta_i = rho alpha_i / 2``.

Singular-event delta (Remark 1, Prop. 2). ``delta~`` is the smallest delta with
``P(y|c) <= a P(y|c') + delta`` for every single output ``y``. For a
symmetric noise both orders of the pair give the same rows::

    p(i) - a p(i+1) <= delta,   p(i+1) - a p(i) <= delta,   i = 0..N,

with ``p(0) = 1 - rho``, ``p(i) = beta_i``, ``p(N+1) = 0``. Prop. 4, eqs.
(17)-(19), keeps the first family (the "decreasing" rows).

Lower bounds (Lemmas 1-2, reconstructed). The decreasing rows give lower
bounds on the betas from the front: ``beta_1 >= L_1 = (1 - rho - delta)/a``,
``beta_{i+1} >= L_{i+1} = (L_i - delta)/a``, so
``L_i = (1 - rho) a^-i - delta sum_{j<=i} a^-j``. Dropping the betas after
``k`` and using ``sum beta = rho/2`` gives the Type-I bounds::

    delta_k = ((1 - rho) A_k - rho/2) / B_k,
    A_k = sum_{j=1..k} a^-j,   B_k = sum_{j=1..k} (k - j + 1) a^-j.

From the back, ``beta_N <= delta`` and ``beta_i <= a beta_{i+1} + delta`` cap
the total mass; ``sum beta = rho/2`` then gives the Type-II bound::

    delta_II = (rho/2) / sum_{j=0..N-1} S_j,   S_j = sum_{l=0..j} a^l.

Theorem 3 (achievability): ``delta~* = max(delta_1..delta_N, delta_II)``; the
optimal alphas (Definition 2) make the active rows tight: Type-I ``k``
(eq. (39)) sets ``beta_1 = L_1``, ``beta_{i+1} = (beta_i - delta)/a`` for
``i < k`` and ``beta_i = 0`` after ``k`` (support shrinks to ``{-k..k}``, as
the text reports for Fig. 1); Type-II (eqs. (37)-(38)) sets ``beta_N =
delta``, ``beta_i = a beta_{i+1} + delta``. Crossover values (eq. (34)) are
the ``rho`` at which consecutive bounds are equal (:func:`crossover_values`).

DP delta. Remark 2 turns ``delta~`` into a DP guarantee: the outputs where
``P(y|c) > a P(y|c')`` lie in ``{c-N..c}``, so ``delta <= (N+1) delta~``
(:func:`paper_dp_delta`). The exact DP delta is the hockey stick
(:func:`count_delta`); :func:`count_lp` also minimises it directly.

Baseline: the discrete Gaussian ``N_Z(0, sigma^2)`` of Canonne-Kamath-Steinke
with the same variance; :func:`discrete_gaussian_pmf` (exact normalisation),
:func:`discrete_gaussian_delta` (hockey-stick sum) and :func:`cks_delta`
(their Theorem 7, the expression (45) the paper evaluates with ``sigma^2``
set to the variance of the proposed noise).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from optnoise.engine.model import ModelBuilder
from optnoise.engine.solve import solve_model
from optnoise.engine.validation import check_choice, check_eps, check_int, check_pmf, check_probability, shown
from optnoise.privacy.curves import hockey_stick

__all__ = [
    "CountMechanism",
    "count_noise_pmf",
    "singular_delta",
    "count_delta",
    "paper_dp_delta",
    "type1_bounds",
    "type2_bound",
    "crossover_values",
    "optimal_alpha",
    "count_lp",
    "delta_curve",
]


def _check_rho(rho: Any) -> float:
    rho = check_probability("rho", rho)
    if not 0.0 < rho < 1.0:
        raise ValueError(f"rho must be in (0, 1); got {shown(rho)}")
    return rho


def _check_alpha(alpha: Any) -> np.ndarray:
    return check_pmf("alpha", alpha, atol=1e-7)


# --------------------------------------------------------------------------
# The noise family and its privacy parameters
# --------------------------------------------------------------------------


def count_noise_pmf(alpha: Any, rho: float) -> np.ndarray:
    """pmf of Z on ``-N..N``: ``P(0) = 1 - rho``, ``P(+-i) = rho alpha_i / 2`` (eqs. (3), (14))."""
    a = _check_alpha(alpha)
    rho = _check_rho(rho)
    half = rho * a / 2.0
    return np.concatenate([half[::-1], [1.0 - rho], half])


def _one_sided(alpha: np.ndarray, rho: float) -> np.ndarray:
    """``p(0..N+1)``: the non-negative half of the pmf with a trailing zero."""
    return np.concatenate([[1.0 - rho], rho * alpha / 2.0, [0.0]])


def singular_delta(alpha: Any, rho: float, eps: float, *, reverse: bool = True) -> float:
    """``delta~``: largest ``P(y|c) - e^eps P(y|c')`` over single outputs y (Remark 1).

    ``reverse=False`` keeps only Prop. 4's decreasing rows ``p(i) - a p(i+1)``.
    """
    a = _check_alpha(alpha)
    rho = _check_rho(rho)
    eps = check_eps(eps, allow_zero=True)
    p = _one_sided(a, rho)
    e = math.exp(eps)
    worst = float(np.max(p[:-1] - e * p[1:]))
    if reverse:
        worst = max(worst, float(np.max(p[1:] - e * p[:-1])))
    return max(worst, 0.0)


def count_delta(alpha: Any, rho: float, eps: Any) -> Any:
    """Exact (eps, delta)-DP delta: the hockey stick ``sum_y [P(y|c) - e^eps P(y|c+1)]_+``.

    For a symmetric noise the reverse order gives the same value, so one
    direction is enough (the function still takes the maximum of both).
    Vectorised over ``eps``.
    """
    z = count_noise_pmf(alpha, rho)
    p = np.concatenate([z, [0.0]])
    q = np.concatenate([[0.0], z])
    fwd = np.atleast_1d(hockey_stick(p, q, eps))
    bwd = np.atleast_1d(hockey_stick(q, p, eps))
    out = np.maximum(fwd, bwd)
    return float(out[0]) if np.ndim(eps) == 0 else out


#: Former name of :func:`count_delta` (``optnoise.exact_delta`` is the exact check of a design's weights).
exact_delta = count_delta


def paper_dp_delta(delta_tilde: Any, N: int) -> Any:
    """DP delta from the singular-event delta, ``min(1, (N+1) delta~)`` (Remark 2).

    The outputs where ``P(y|c) > e^eps P(y|c+1)`` lie in ``{c-N..c}``, at most
    ``N+1`` of them, each exceeding by at most ``delta~``.
    """
    N = check_int("N", N, minimum=1)
    return np.minimum(1.0, (N + 1) * np.asarray(delta_tilde, dtype=float))


# --------------------------------------------------------------------------
# Closed form: Type-I / Type-II bounds, crossover values, Definition 2
# --------------------------------------------------------------------------


def _ab(N: int, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """``A_k`` and ``B_k`` for k = 1..N."""
    inv = np.exp(-eps * np.arange(1, N + 1))  # a^-j
    A = np.cumsum(inv)
    B = np.cumsum(A)  # B_k = sum_{i<=k} A_i
    return A, B


def _type2_denominator(N: int, eps: float) -> float:
    """``sum_{j=0..N-1} S_j``, ``S_j = (a^{j+1} - 1)/(a - 1)``; ``inf`` on overflow."""
    j = np.arange(N)
    if eps == 0.0:
        return float(np.sum(j + 1.0))
    with np.errstate(over="ignore"):
        S = np.expm1((j + 1) * eps) / math.expm1(eps)
    return float(np.sum(S))


def type1_bounds(N: int, rho: float, eps: float) -> np.ndarray:
    """Type-I lower bounds ``delta_1..delta_N`` on ``delta~`` (Lemma 1, eq. (23))."""
    N = check_int("N", N, minimum=1)
    rho = _check_rho(rho)
    eps = check_eps(eps, allow_zero=True)
    A, B = _ab(N, eps)
    return ((1.0 - rho) * A - rho / 2.0) / B


def type2_bound(N: int, rho: float, eps: float) -> float:
    """Type-II lower bound ``(rho/2) / sum_{j<N} S_j`` on ``delta~`` (Lemma 2, eq. (32))."""
    N = check_int("N", N, minimum=1)
    rho = _check_rho(rho)
    eps = check_eps(eps, allow_zero=True)
    return (rho / 2.0) / _type2_denominator(N, eps)


def crossover_values(N: int, eps: float) -> np.ndarray:
    """Crossover values ``theta_1..theta_N`` (eq. (34)), as values of rho.

    ``theta_k`` (k < N) is the rho at which ``delta_k = delta_{k+1}``;
    ``theta_N`` the rho at which ``delta_N = delta_II``. Every bound is affine
    in rho: ``delta_k = c_k - rho d_k`` with ``c_k = A_k/B_k``,
    ``d_k = (A_k + 1/2)/B_k``, and ``delta_II = rho / (2 sum S_j)``. The
    sequence increases with k, so ``delta~* = delta_k`` exactly when
    ``theta_{k-1} <= rho <= theta_k`` (Theorem 2, with ``theta_0 = 0``) and
    ``delta~* = delta_II`` when ``rho >= theta_N``.
    """
    N = check_int("N", N, minimum=1)
    eps = check_eps(eps)
    A, B = _ab(N, eps)
    c, d = A / B, (A + 0.5) / B
    th = np.empty(N)
    th[:-1] = (c[:-1] - c[1:]) / (d[:-1] - d[1:])
    th[-1] = c[-1] / (d[-1] + 0.5 / _type2_denominator(N, eps))
    return th


@dataclass(frozen=True)
class CountMechanism:
    """A member of the family with its privacy parameters, re-verified exactly.

    Attributes
    ----------
    N, rho, eps : support half-width, error probability, privacy level
    alpha : ndarray, shape (N,)
    delta_tilde : float
        Singular-event delta, recomputed from ``alpha`` (:func:`singular_delta`).
    delta_exact : float
        Hockey-stick DP delta, recomputed from ``alpha`` (:func:`count_delta`).
    delta_paper : float
        ``(N+1) delta~`` (Remark 2).
    active : int
        Number of non-zero alphas (the support is ``{-active..active}``).
    method : str
        How alpha was obtained.
    claimed : float
        The optimal value reported by the construction or solver.
    """

    N: int
    rho: float
    eps: float
    alpha: np.ndarray
    delta_tilde: float
    delta_exact: float
    delta_paper: float
    active: int
    method: str
    claimed: float

    @property
    def pmf(self) -> np.ndarray:
        """Noise pmf on ``-N..N``."""
        return count_noise_pmf(self.alpha, self.rho)

    @property
    def variance(self) -> float:
        """``E[Z^2] = rho sum i^2 alpha_i``."""
        return float(self.rho * np.sum(np.arange(1, self.N + 1) ** 2 * self.alpha))


def _finish(N: int, rho: float, eps: float, alpha: np.ndarray, method: str, claimed: float) -> CountMechanism:
    alpha = np.clip(alpha, 0.0, None)
    alpha = alpha / alpha.sum()
    dt = singular_delta(alpha, rho, eps)
    nz = np.nonzero(alpha > 1e-12)[0]
    return CountMechanism(
        N=N,
        rho=rho,
        eps=eps,
        alpha=alpha,
        delta_tilde=dt,
        delta_exact=float(count_delta(alpha, rho, eps)),
        delta_paper=float(paper_dp_delta(dt, N)),
        active=int(nz[-1] + 1) if nz.size else 0,
        method=method,
        claimed=float(claimed),
    )


def optimal_alpha(N: int, rho: float, eps: float) -> CountMechanism:
    """The optimal alphas of Definition 2 and ``delta~*`` of Theorem 3.

    ``delta~* = max(delta_1, ..., delta_N, delta_II)``; the alphas make the
    rows of the active bound tight (see the module docstring). Optimal for
    the decreasing rows of Prop. 4; :func:`count_lp` with ``reverse=True``
    checks the reverse rows too (they bind only for rho near 1).
    """
    N = check_int("N", N, minimum=1)
    rho = _check_rho(rho)
    eps = check_eps(eps)
    t1 = type1_bounds(N, rho, eps)
    t2 = type2_bound(N, rho, eps)
    a = math.exp(eps)
    beta = np.zeros(N)
    if t2 >= t1.max():
        d = t2
        beta[-1] = d
        for i in range(N - 2, -1, -1):
            beta[i] = a * beta[i + 1] + d
        method = "type-II"
    else:
        k = int(np.argmax(t1)) + 1
        d = float(t1[k - 1])
        beta[0] = (1.0 - rho - d) / a
        for i in range(1, k):
            beta[i] = (beta[i - 1] - d) / a
        method = f"type-I(k={k})"
    return _finish(N, rho, eps, 2.0 * beta / rho, method, d)


# --------------------------------------------------------------------------
# The LPs (solver layer)
# --------------------------------------------------------------------------


def count_lp(
    N: int,
    rho: float,
    eps: float,
    *,
    objective: str = "singular",
    reverse: bool = True,
    solver: str = "highs",
) -> CountMechanism:
    """Minimise delta over alpha with the solver layer (Prop. 2).

    Parameters
    ----------
    N, rho, eps
    objective : {"singular", "hockey"}
        ``"singular"``: the paper's singular-event ``delta~`` (Prop. 2; rows of
        the module docstring). ``"hockey"``: the exact DP delta,
        ``sum_j t_j`` with ``t_j >= p(j) - a p(j-1)``, ``t_j >= 0`` over
        ``j = -N..N``.
    reverse : bool
        For ``"singular"``: include the rows ``p(i+1) - a p(i) <= delta``
        (True: Definition 1 for singular events in full) or only Prop. 4's
        decreasing rows (False, the paper's system (17)-(19)).
    """
    N = check_int("N", N, minimum=1)
    rho = _check_rho(rho)
    eps = check_eps(eps, allow_zero=True)
    check_choice("objective", objective, ("singular", "hockey"))
    a, h = math.exp(eps), rho / 2.0
    mb = ModelBuilder()
    al = mb.add_vars(N, lb=0.0, ub=1.0, name="alpha")
    dl = mb.add_vars(1, lb=0.0, name="delta")[0]
    mb.add_row(al, np.ones(N), lower=1.0, upper=1.0)
    # p(i) = coef * alpha + const for i = 0..N+1, as (col or -1, coef, const)
    col = np.concatenate([[-1], al, [-1]])
    coef = np.concatenate([[0.0], np.full(N, h), [0.0]])
    const = np.concatenate([[1.0 - rho], np.zeros(N), [0.0]])

    def rows_for(i_hi: np.ndarray, i_lo: np.ndarray, t_cols: np.ndarray | None) -> None:
        """Rows ``p(i_hi) - a p(i_lo) - slack <= 0`` (slack = delta or t)."""
        m = i_hi.size
        r, c, v = [], [], []
        idx = np.arange(m)
        for sel, s in ((i_hi, 1.0), (i_lo, -a)):
            ok = col[sel] >= 0
            r.append(idx[ok])
            c.append(col[sel][ok])
            v.append(s * coef[sel][ok])
        slack = np.full(m, dl) if t_cols is None else t_cols
        r.append(idx)
        c.append(slack)
        v.append(-np.ones(m))
        rhs = -(const[i_hi] - a * const[i_lo])
        mb.add_rows(np.concatenate(r), np.concatenate(c), np.concatenate(v), upper=rhs)

    i = np.arange(N + 1)
    if objective == "singular":
        rows_for(i, i + 1, None)  # decreasing rows (17)-(19)
        if reverse:
            rows_for(i + 1, i, None)
    else:
        # j = -N..N: p(j) - a p(j-1); with p(-m) = p(m):
        # j <= 0: p(|j|) - a p(|j|+1);  j >= 1: p(j) - a p(j-1)
        t = mb.add_vars(2 * N + 1, lb=0.0, name="t")
        rows_for(i, i + 1, t[: N + 1])
        rows_for(i[1:], i[:-1], t[N + 1 :])
        mb.add_row(np.concatenate([t, [dl]]), np.concatenate([np.ones(t.size), [-1.0]]), upper=0.0)
    mb.set_objective([dl], [1.0])
    model = mb.build()
    out = solve_model(model, solver=solver)
    if out.status != "optimal" or out.x is None or out.objective is None:
        raise RuntimeError(f"count LP ended with status {out.status!r} ({out.message})")
    method = f"lp-{objective}" + ("" if objective == "hockey" or reverse else "-prop4")
    return _finish(N, rho, eps, out.x[al], method, out.objective)


def delta_curve(
    eps: Any,
    N: int,
    rho: float,
    *,
    design: str = "closed-form",
    measure: str = "paper",
) -> np.ndarray:
    """(eps, delta) curve of the optimal mechanism at each eps (Figs. 2-4).

    Parameters
    ----------
    design : {"closed-form", "lp-singular", "lp-hockey"}
        How alpha is chosen at each eps.
    measure : {"singular", "paper", "exact"}
        ``delta~``, ``(N+1) delta~`` (Remark 2) or the exact hockey stick.
    """
    check_choice("design", design, ("closed-form", "lp-singular", "lp-hockey"))
    check_choice("measure", measure, ("singular", "paper", "exact"))
    eps_arr = np.atleast_1d(np.asarray(eps, dtype=float))
    out = np.empty(eps_arr.size)
    for j, e in enumerate(eps_arr):
        if design == "closed-form":
            m = optimal_alpha(N, rho, e)
        else:
            m = count_lp(N, rho, e, objective=design[3:])
        # The closed form's value is exact; recomputing it from alpha would
        # lose relative precision to cancellation once delta~ < 1e-15.
        dt = m.claimed if design == "closed-form" else m.delta_tilde
        out[j] = {"singular": dt, "paper": float(paper_dp_delta(dt, N)), "exact": m.delta_exact}[measure]
    return out
