"""Renyi-DP and zCDP budgets: divergences, the order grid, the reference Gaussian, and a conic model.

The default solver of these designs is :mod:`optnoise.privacy.renyi_solve` (log-barrier search with a
certified lower bound); the conic model below, solved through cvxpy (Clarabel or SCS), is the
``solver="cvxpy"`` cross-check.

For the modulo release with noise ``f`` and shift set M, write
``g_mu(eta) = f(eta + mu)`` and, for ``alpha > 1``,

    ``K_mu(alpha) = log sum_eta f(eta)^alpha g_mu(eta)^(1-alpha) = (alpha - 1) D_alpha(f || g_mu)``

(``D_1`` is the KL divergence ``sum f log(f/g)``). Notions:

``privacy="rdp", rdp=[(alpha_1, eps_1), ...]``
    ``D_alpha_j(f || g_mu) <= eps_j`` for every listed order and every shift
    (Mironov 2017): exactly the listed orders, nothing in between.
``privacy="zcdp", rho=rho``
    rho-zCDP (Bun and Steinke 2016) asks ``D_alpha <= rho alpha`` for *every*
    ``alpha > 1``. The search works on the finite grid ``alphas``
    (default :func:`zcdp_alphas`) plus ``D_inf(f || g_mu) <= rho alpha_max``
    (pure DP at ``eps0 = rho * alpha_max``, linear rows), refined until the PMF
    meets rho at every order (:mod:`optnoise.privacy.renyi_sup`).

Both are convex in ``f``: for ``alpha > 1``, ``t >= f^alpha g^(1-alpha)`` is the
3-D power cone ``t^(1/alpha) g^(1-1/alpha) >= f``, and KL is the relative
entropy (exponential cone). :func:`build_renyi_model` writes them as a
:class:`~optnoise.engine.model.LinearModel` with cones, solved by the ``"cvxpy"``
backend of :mod:`optnoise.engine.solve`.

Scaling. Feasible PMFs decay like a Gaussian, so their masses span hundreds of
orders of magnitude and an interior-point solver cannot resolve the tails
directly. The model's variables are ``x = f / s`` for a reference PMF ``s``
(the wrapped discrete Gaussian that meets the budget, :func:`reference_log_pmf`);
the cones are homogeneous, so ``x`` keeps every cone and only the linear rows
carry ``s``; each ``alpha`` row is divided by ``e^{(alpha-1) eps}`` so that its
entries are of order 1. Terms of weight below :data:`MIN_WEIGHT` (the far
tails, whose contribution is negligible unless the solver's ratios there are
wildly off) are left out: without them Clarabel stalls on rows spanning
hundreds of orders of magnitude. Leaving terms out relaxes the model; the
re-verification of the full divergences decides. Instances that are still
too ill-conditioned (very small noise, e.g. rho >= 1 for a count) end with
status ``"error"``; SCS (``conic_solver="scs"``) may solve them, slowly.

The finite grid and the full zCDP guarantee. ``K_mu`` is a log moment
generating function, hence convex in alpha, with ``K_mu(1) = 0``. If
``K_mu(a_j) <= rho a_j (a_j - 1)`` on a grid ``1 = a_0 < a_1 < ... < a_m``
(``a_0`` holds trivially) then on ``[a_j, a_{j+1}]`` the chord gives
``K_mu(a) <= rho [a (a-1) + (a - a_j)(a_{j+1} - a)]``, i.e.

    ``D_alpha <= rho alpha (1 + m_grid)``, ``m_grid = max_j max_a (a - a_j)(a_{j+1} - a) / (a (a - 1))``,

and for ``alpha >= a_m``, ``D_alpha <= D_inf <= rho a_m <= rho alpha``. So a
PMF meeting the grid is only ``rho (1 + m_grid)``-zCDP (:func:`grid_margin`; about
``(r-1)^2/4`` for a geometric grid of ratio r in ``alpha - 1``, and ``a_1 - 1`` below
``a_1``: 9 for the grid ``{10}``). The solver therefore does not stop at the grid:
:mod:`optnoise.privacy.renyi_sup` refines it and certifies rho itself.

Re-verification. The returned PMF is checked independently in float64
(:func:`achieved_rho`: ``K`` on a fine grid of ``alpha - 1``, accurate near
alpha = 1, with the chord bound between orders and intervals subdivided where it is
loose, so its value bounds ``sup_{alpha > 1} D_alpha / alpha`` up to float error):
the *achieved rho* is reported, and the PMF meets its budget only if
``achieved_rho <= rho (1 + RENYI_RTOL)`` (``RENYI_RTOL`` is float64's evaluation
slack; the grid margin is never granted). RDP designs are re-verified at their listed
orders, ``D <= eps (1 + RENYI_RTOL)``: the listed orders are the whole guarantee.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
from scipy.special import logsumexp

from optnoise.engine.model import LinearModel, ModelBuilder
from optnoise.engine.output import SolverOutput
from optnoise.engine.solve import solve_model
from optnoise.engine.validation import check_finite_array, check_positive, shown
from optnoise.privacy.curves import shifted_pmfs

__all__ = [
    "RENYI_NOTIONS",
    "RENYI_RTOL",
    "ALPHA_MIN_GAP",
    "ALPHA_RATIO",
    "achieved_rho",
    "achieved_rho_pairs",
    "build_renyi_terms_model",
    "solve_conic_scaled",
    "violating_orders",
    "build_renyi_model",
    "check_alphas",
    "check_reference",
    "check_rdp",
    "grid_margin",
    "reference_log_pmf",
    "renyi_curve",
    "renyi_divergence",
    "solve_renyi",
    "zcdp_alphas",
]

#: Privacy notions handled here.
RENYI_NOTIONS = ("rdp", "zcdp")
#: Relative slack of a re-verified Renyi divergence (conic solvers reach ~1e-8 relative).
RENYI_RTOL = 1e-5
#: Default zCDP grid: ``alpha - 1`` from this value ...
ALPHA_MIN_GAP = 1e-4
#: ... in geometric steps of this ratio ...
ALPHA_RATIO = 1.1
#: ... up to at least this order (and past the reference's ``D_inf / rho``).
ALPHA_MAX = 32.0
#: Points per decade of ``alpha - 1`` of the re-verification grid.
VERIFY_DENSITY = 400
#: Smallest ``alpha - 1`` of the re-verification grid (``D_alpha`` there is the KL divergence to ~1e-12).
VERIFY_MIN_GAP = 1e-12
#: Subdivision rounds of the re-verification (each splits the loosest intervals in 8) ...
VERIFY_ROUNDS = 8
#: ... at most this many intervals per round.
VERIFY_SPLIT = 400
#: Largest order of any grid.
MAX_ALPHA = 1e6
#: Terms of a Renyi row with a smaller weight are left out of the conic model (module docstring).
MIN_WEIGHT = 1e-12
#: Objective scales (value at the reference PMF) tried in turn by :func:`solve_renyi`.
OBJECTIVE_SCALES = (10.0, 1.0, 0.1, 30.0, 0.01)
#: Smallest log reference mass the design can represent in float64.
MIN_LOG_MASS = -700.0


# --------------------------------------------------------------------------------------------
# divergences (independent float64 evaluation from a PMF)
# --------------------------------------------------------------------------------------------


def renyi_divergence(p: Any, q: Any, alpha: Any) -> Any:
    """``D_alpha(P || Q)`` in nats, by log-sum-exp in float64; vectorised over alpha.

    ``alpha = 1`` is KL, ``alpha = inf`` the max divergence ``max log(P/Q)``.
    ``inf`` when ``P`` has mass where ``Q`` has none.
    """
    p = np.asarray(p, dtype=float).ravel()
    q = np.asarray(q, dtype=float).ravel()
    if p.shape != q.shape:
        raise ValueError(f"p and q must have the same number of outputs; got {p.size} and {q.size}")
    a = np.atleast_1d(np.asarray(alpha, dtype=float))
    if np.any(~(a >= 1)):
        raise ValueError(f"alpha must be >= 1; got {shown(alpha)}")
    supp = p > 0
    with np.errstate(divide="ignore"):
        lp, lq = np.log(p[supp]), np.log(q[supp])
    if np.any(q[supp] == 0):
        out = np.full(a.size, np.inf)
    else:
        out = np.empty(a.size)
        kl, inf = a == 1.0, np.isinf(a)
        out[kl] = float(np.dot(p[supp], lp - lq))
        out[inf] = float(np.max(lp - lq))
        mid = ~(kl | inf)
        rows = np.flatnonzero(mid)
        step = max(1, 2_000_000 // max(1, lp.size))  # bound the (orders x outputs) work array
        for k in range(0, rows.size, step):
            sel = rows[k : k + step]
            am = a[sel][:, None]
            out[sel] = logsumexp(am * lp[None, :] + (1.0 - am) * lq[None, :], axis=1) / (a[sel] - 1.0)
    return float(out[0]) if np.ndim(alpha) == 0 else out


def renyi_curve(pmf: Any, shifts: Any, alpha: Any) -> Any:
    """``max_mu D_alpha(f || f(.+mu))`` over the shifts; vectorised over alpha."""
    f, g = shifted_pmfs(pmf, shifts)
    vals = np.max(np.stack([np.atleast_1d(renyi_divergence(f, gm, alpha)) for gm in g]), axis=0)
    return float(vals[0]) if np.ndim(alpha) == 0 else vals


# --------------------------------------------------------------------------------------------
# grids
# --------------------------------------------------------------------------------------------


def check_alphas(alphas: Any, name: str = "alphas") -> tuple[float, ...]:
    """Distinct finite orders ``alpha >= 1`` (1 is KL), sorted."""
    arr = check_finite_array(name, np.atleast_1d(np.asarray(alphas, dtype=float)))
    if np.any(arr < 1) or np.any(arr > MAX_ALPHA):
        raise ValueError(f"{name} must lie in [1, {MAX_ALPHA:g}] (1 is the KL divergence); got {alphas!r:.200}")
    arr = np.sort(arr)
    if np.any(np.diff(arr) == 0):
        raise ValueError(f"{name} must be distinct; got a repeated order")
    return tuple(float(a) for a in arr)


def check_rdp(rdp: Any) -> tuple[tuple[float, float], ...]:
    """A non-empty list of ``(alpha, eps_alpha)``: distinct finite alpha >= 1, eps_alpha > 0; sorted."""
    if rdp is None:
        raise ValueError("rdp is required with privacy='rdp': a list of (alpha, eps_alpha) pairs")
    arr = check_finite_array("rdp", rdp, ndim=2) if np.ndim(rdp) == 2 else None
    if arr is None or arr.shape[1] != 2:
        raise ValueError(f"rdp must be a list of (alpha, eps_alpha) pairs; got {rdp!r:.200}")
    alphas = check_alphas(arr[:, 0], "rdp alpha")
    if np.any(arr[:, 1] <= 0):
        raise ValueError("rdp eps_alpha values must be > 0")
    order = np.argsort(arr[:, 0])
    return tuple((a, float(e)) for a, e in zip(alphas, arr[order, 1], strict=True))


def zcdp_alphas(alpha_max: float = ALPHA_MAX, *, gap: float = ALPHA_MIN_GAP, ratio: float = ALPHA_RATIO) -> np.ndarray:
    """The default zCDP grid: 1 (KL), then ``1 + gap r^k`` up to the first order >= ``alpha_max``."""
    alpha_max = check_positive("alpha_max", alpha_max)
    gap = check_positive("gap", gap)
    ratio = check_positive("ratio", ratio)
    if ratio <= 1:
        raise ValueError(f"ratio must be > 1; got {shown(ratio)}")
    k = max(0, math.ceil(math.log(max(alpha_max - 1.0, gap) / gap) / math.log(ratio)))
    return np.concatenate([[1.0], 1.0 + gap * ratio ** np.arange(k + 1)])


def grid_margin(alphas: Any) -> float:
    """``m_grid = max_j max_{a in [a_j, a_{j+1}]} (a - a_j)(a_{j+1} - a) / (a (a - 1))`` over ``{1} + alphas``.

    The relative zCDP slack between grid points (module docstring). Exact:
    on each interval the maximiser solves a quadratic, evaluated in closed form.
    """
    a = np.unique(np.concatenate([[1.0], check_alphas(alphas)]))
    worst = 0.0
    for lo, hi in zip(a[:-1], a[1:], strict=True):
        # h(a) = (a - lo)(hi - a) / (a^2 - a); h'(a) = 0  <=>  (1 - lo - hi) a^2 + 2 lo hi a - lo hi = 0
        A, B, C = 1.0 - lo - hi, 2.0 * lo * hi, -lo * hi
        cands = [lo, hi]
        if abs(A) < 1e-300:
            cands.append(-C / B)
        else:
            disc = B * B - 4 * A * C
            if disc >= 0:
                cands += [(-B + s * math.sqrt(disc)) / (2 * A) for s in (1.0, -1.0)]
        for x in cands:
            if lo < x < hi:
                worst = max(worst, (x - lo) * (hi - x) / (x * (x - 1.0)))
            elif lo == 1.0 and x == lo:
                worst = max(worst, hi - 1.0)  # the limit a -> 1 of (hi - a) / a
    return worst


def _log_mgf(f: np.ndarray, g: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``max_mu K_mu(a) = max_mu (a - 1) D_a(f || g_mu)`` at the orders ``a = 1 + t``, accurate as ``t -> 0``."""
    return _log_mgf_pairs([(f, gm) for gm in g], t)


def _log_mgf_pairs(pairs: list[tuple[np.ndarray, np.ndarray]], t: np.ndarray) -> np.ndarray:
    """``max_m (a - 1) D_a(p_m || q_m)`` over pairs of distributions at the orders ``a = 1 + t``.

    Where ``(a - 1) max |log(p / q)| < 1`` the sum is written ``1 + sum p expm1((a - 1) d)`` and
    ``K = log1p(...)``: no cancellation against 1 (plain log-sum-exp loses ~1e-16 absolute, i.e. all
    relative accuracy once ``K`` is that small). Elsewhere log-sum-exp. ``p_m`` and ``q_m`` sum to the
    same total (a shifted PMF, or the lumped terms of the additive release).
    """
    out = np.full(t.size, -np.inf)
    for f, gm in pairs:
        supp = f > 0
        lf = np.log(f[supp])
        total = float(np.sum(f[supp]))
        with np.errstate(divide="ignore"):
            d = lf - np.log(gm[supp])
        small = t * float(np.max(np.abs(d))) < 1.0
        step = max(1, 2_000_000 // max(1, d.size))  # bound the (orders x outputs) work array
        for k in range(0, t.size, step):
            am1 = t[k : k + step, None]
            sm = small[k : k + step]
            with np.errstate(over="ignore", invalid="ignore"):  # overflowing rows take the log-sum-exp branch
                near = np.log1p(np.sum(f[supp][None, :] * np.expm1(am1 * d[None, :]), axis=1) / total)
            far = logsumexp(lf[None, :] + am1 * d[None, :], axis=1) - math.log(total)
            out[k : k + step] = np.maximum(out[k : k + step], np.where(sm, near, far))
    return out


def _chord_bounds(t: np.ndarray, K: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per interval ``[t_j, t_{j+1}]`` of ``t = alpha - 1 > 0``: ``max (c0 + c1 x) / (x (x + 1))`` and where.

    ``c0 + c1 x`` is the chord of the convex ``K``, hence above it; the maximiser is an end or a root
    of ``c1 x^2 + 2 c0 x + c0 = 0`` (the derivative's numerator). Working in ``t``, not alpha, keeps
    the intervals near alpha = 1 exact in float64.
    """
    x0, x1 = t[:-1], t[1:]
    c1 = (K[1:] - K[:-1]) / (x1 - x0)
    c0 = K[:-1] - c1 * x0
    cands = [x0, x1]
    disc = c0 * c0 - c1 * c0
    with np.errstate(invalid="ignore", divide="ignore"):
        root = np.sqrt(np.where(disc >= 0, disc, np.nan))
        for sgn in (1.0, -1.0):
            cands.append(np.where(c1 != 0, (-c0 + sgn * root) / c1, np.nan))
    best = np.full(x0.size, -np.inf)
    where = x0.copy()
    for x in cands:
        inside = (x >= x0) & (x <= x1)
        with np.errstate(invalid="ignore", divide="ignore"):
            val = np.where(inside, (c0 + c1 * x) / (x * (x + 1.0)), -np.inf)
        better = val > best
        best, where = np.where(better, val, best), np.where(better, x, where)
    return best, where


def violating_orders(pmf: Any, shifts: Any, rho: float, *, density: int = VERIFY_DENSITY) -> list[float]:
    """The orders where ``D_alpha / alpha`` may exceed ``rho``: one per run of intervals of the
    :func:`achieved_rho` grid whose chord bound exceeds it (where that bound peaks), ``1.0`` (the KL
    divergence) when ``(1, a_1]`` does; empty when the PMF is certified."""
    prof = _sup_profile(pmf, shifts, density)
    if prof is None or not math.isfinite(prof[3]):
        return []
    t, ub, at, first = prof[:4]
    out = [1.0] if first > rho else []
    over = ub > rho
    starts = np.flatnonzero(over & ~np.concatenate([[False], over[:-1]]))
    for i in starts:
        j = i
        while j + 1 < over.size and over[j + 1]:
            j += 1
        k = i + int(np.argmax(ub[i : j + 1]))
        out.append(1.0 + float(at[k]))
    return out


def _sup_profile(pmf: Any, shifts: Any, density: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float] | None:
    """``(t, chord bounds, where, first, tail)`` of :func:`achieved_rho`; ``None`` for a shift-invariant PMF.

    ``t`` is ``inf`` when some shifted PMF is 0 where ``f`` is not.
    """
    f, g = shifted_pmfs(pmf, shifts)
    if all(np.array_equal(f, gm) for gm in g):
        return None
    return _pairs_profile([(f, gm) for gm in g], density)


def _pairs_profile(
    pairs: list[tuple[np.ndarray, np.ndarray]], density: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
    """:func:`_sup_profile` over pairs of distributions ``(p_m, q_m)``: ``sup_alpha max_m D_alpha / alpha``."""
    dinf = max(renyi_divergence(f, gm, np.inf) for f, gm in pairs)
    if not np.isfinite(dinf):
        inf = np.array([math.inf])
        return inf, inf, inf, math.inf, math.inf
    kl = max(renyi_divergence(f, gm, 1.0) for f, gm in pairs)
    lo = VERIFY_MIN_GAP
    # cover up to A with D_inf / A <= kl-ish level: the tail bound D_inf / A must not dominate
    hi = min(max(64.0, 4.0 * dinf / max(kl, 1e-12)), MAX_ALPHA)
    m = int(math.ceil(density * math.log10(hi / lo)))
    t = np.geomspace(lo, hi, m)  # alpha - 1
    K = _log_mgf_pairs(pairs, t)
    first = float(K[0] / t[0])  # (1, a_1]: D_a / a <= D_a <= D_{a_1}
    tail = dinf / (1.0 + t[-1])
    for _ in range(VERIFY_ROUNDS):
        ub, at = _chord_bounds(t, K)
        met = float(np.max(K / (t * (t + 1.0))))  # attained at a grid point: a lower bound on the sup
        loose = np.flatnonzero(ub > met * (1.0 + 1e-10))
        if loose.size == 0:
            break
        loose = loose[np.argsort(ub[loose])[-VERIFY_SPLIT:]]  # the worst intervals first
        ratio = t[loose + 1, None] / t[loose, None]
        new = np.setdiff1d((t[loose, None] * ratio ** (np.arange(1, 8)[None, :] / 8.0)).ravel(), t)
        if new.size == 0:
            break
        t, keep = np.unique(np.concatenate([t, new]), return_index=True)
        K = np.concatenate([K, _log_mgf_pairs(pairs, new)])[keep]
    ub, at = _chord_bounds(t, K)
    return t, ub, at, first, tail


def achieved_rho(pmf: Any, shifts: Any, *, density: int = VERIFY_DENSITY) -> tuple[float, float]:
    """Upper bound on ``sup_{alpha > 1} max_mu D_alpha(f || f(.+mu)) / alpha``, and where it is attained.

    Evaluates ``K_mu = (alpha - 1) D_alpha`` in float64 (:func:`_log_mgf`) on a grid of ``density``
    points per decade of ``alpha - 1`` from :data:`VERIFY_MIN_GAP`, and bounds every interval by the
    chord of the convex ``K`` (module docstring); intervals whose chord bound exceeds the largest value
    ``D_alpha / alpha`` met at a grid point are subdivided (:data:`VERIFY_ROUNDS` times), so the bound
    is within about 1e-9 of the supremum. On ``(1, a_1]`` ``D_alpha / alpha <= D_{a_1}`` (``D`` is
    nondecreasing); beyond the last order ``D_alpha / alpha <= D_inf / alpha``. A shift-invariant PMF
    (the uniform one) gives exactly 0. Returns ``(inf, inf)`` when some shifted PMF is 0 where ``f``
    is not.
    """
    prof = _sup_profile(pmf, shifts, density)
    if prof is None:
        return 0.0, 1.0  # shift-invariant (the uniform PMF): every divergence is exactly 0
    return _sup_of(prof)


def achieved_rho_pairs(pairs: list[tuple[Any, Any]], *, density: int = VERIFY_DENSITY) -> tuple[float, float]:
    """:func:`achieved_rho` of pairs of distributions ``(p_m, q_m)`` (each pair summing to the same total).

    The additive release lists, per shift, its explicit outputs and one lumped term per geometric tail
    (:func:`optnoise.design.additive_renyi.divergence_pairs`): lumping outputs whose likelihood ratio is
    equal leaves every Renyi divergence unchanged.
    """
    pairs = [(np.asarray(p, dtype=float), np.asarray(q, dtype=float)) for p, q in pairs]
    return _sup_of(_pairs_profile(pairs, density))


def _sup_of(prof: tuple[np.ndarray, np.ndarray, np.ndarray, float, float]) -> tuple[float, float]:
    t, ub, at, first, tail = prof
    if not math.isfinite(first):
        return math.inf, math.inf
    j = int(np.argmax(ub))
    best, where = float(ub[j]), 1.0 + float(at[j])
    if first >= best:
        best, where = first, 1.0
    if tail > best:
        best, where = tail, 1.0 + float(t[-1])
    return best, where


# --------------------------------------------------------------------------------------------
# the conic model
# --------------------------------------------------------------------------------------------


def reference_log_pmf(n: int, dim: int, sigma2: float) -> np.ndarray:
    """log of the product of wrapped Gaussians ``exp(-d(eta)^2 / (2 sigma2))`` on ``{0..n}^dim``, normalised.

    ``d`` is the circular distance. Used only to scale the model's variables
    (any positive PMF would do); its masses are represented in log space.
    """
    d = np.minimum(np.arange(n + 1), n + 1 - np.arange(n + 1)).astype(float)
    one = -(d * d) / (2.0 * sigma2)
    grids = np.meshgrid(*([one] * dim), indexing="ij")
    ls = np.sum(np.stack(grids), axis=0).ravel()
    return ls - float(logsumexp(ls))


def check_reference(n: int, dim: int, sigma2: float) -> np.ndarray:
    """:func:`reference_log_pmf`, or ``ValueError`` when its masses fall below ``e^MIN_LOG_MASS``.

    Such a design's optimum has masses that float64 cannot hold (both solution methods refuse it).
    """
    log_ref = reference_log_pmf(n, dim, sigma2)
    if log_ref.min() < MIN_LOG_MASS:
        raise ValueError(
            f"n is too large for this budget: the reference discrete Gaussian (sigma^2 = {sigma2:.4g}) has masses "
            f"below e^{MIN_LOG_MASS:g} at the far end of {{0..{n}}}, which float64 cannot hold; choose n <= "
            f"{int(2 * math.sqrt(-2 * MIN_LOG_MASS * sigma2 / dim))} or a smaller privacy budget"
        )
    return log_ref


def build_renyi_model(
    cost: np.ndarray,
    idx: np.ndarray,
    orders: list[tuple[float, float]],
    log_ref: np.ndarray,
    *,
    eps_inf: float | None = None,
) -> LinearModel:
    """Minimise ``cost @ f`` s.t. ``D_alpha(f || f_mu) <= eps`` for every ``(alpha, eps)`` and shift.

    Variables ``x = f / s`` (block ``"x"``) with ``log s = log_ref``; blocks
    ``r{j}`` (KL terms) and ``t{j}`` (power-cone terms). ``eps_inf`` adds
    ``f(eta) <= e^eps_inf f(eta + mu)`` (pure DP; ``D_inf <= eps_inf``). The modulo
    release's terms of :func:`build_renyi_terms_model`: shift ``m`` pairs ``eta`` with ``idx[m, eta]``.
    """
    K, N = idx.shape
    return build_renyi_terms_model(
        cost,
        np.ones(N),
        np.tile(np.arange(N), K),
        idx.ravel(),
        np.repeat(np.arange(K), N),
        orders,
        log_ref,
        eps_inf=eps_inf,
    )


def build_renyi_terms_model(
    cost: np.ndarray,
    mass: np.ndarray,
    first: np.ndarray,
    second: np.ndarray,
    group: np.ndarray,
    orders: list[tuple[float, float]],
    log_ref: np.ndarray,
    *,
    log_scale: tuple[np.ndarray, np.ndarray] | None = None,
    eps_inf: float | None = None,
) -> LinearModel:
    """The conic model of :func:`build_renyi_model` over general divergence terms.

    Divergence ``g`` (one per shift) is ``D_alpha(P_g || Q_g)`` with ``P_g`` the masses
    ``u_e f(first_e)`` and ``Q_g`` the masses ``v_e f(second_e)`` of its terms ``e`` (``group_e = g``),
    ``log u, log v = log_scale`` (default 0): the modulo release lists every output once per shift;
    the additive release (:mod:`optnoise.design.additive_renyi`) lumps each geometric tail into one
    term of weight ``1 / (1 - a)``. ``mass @ f = 1`` replaces ``sum f = 1`` (tails counted).
    """
    N = cost.size
    s = np.exp(log_ref)
    lu, lv = (np.zeros(first.size), np.zeros(first.size)) if log_scale is None else log_scale
    A, B = lu + log_ref[first], lv + log_ref[second]  # log of each term's two masses per unit of x
    mb = ModelBuilder()
    x = mb.add_vars(N, lb=0.0, ub=np.inf, name="x")
    mb.add_row(x, mass * s, lower=1.0, upper=1.0)
    mb.set_objective(x, cost.ravel() * s)
    I, J = first, second  # noqa: E741
    groups, local = np.unique(group, return_inverse=True)
    for j, (alpha, eps) in enumerate(orders):
        if alpha == 1.0:
            # KL: sum_e u_e s x(I) [log (u s)(I) / (v s)(J) + log x(I) / x(J)] <= eps
            r = mb.add_vars(I.size, lb=-np.inf, ub=np.inf, name=f"r{j}")
            mb.add_rel_entr(x[I], x[J], r)
            w = np.exp(A)
            mb.add_rows(
                np.concatenate([local, local]), np.concatenate([r, x[I]]), np.concatenate([w, w * (A - B)]), upper=eps
            )
            continue
        # sum_e w t <= 1 with t >= x(I)^alpha x(J)^(1-alpha), i.e. the power cone
        # t^(1/alpha) x(J)^(1-1/alpha) >= x(I), and w = (u s)(I)^alpha (v s)(J)^(1-alpha) / e^{(alpha-1) eps}
        logw = alpha * A + (1.0 - alpha) * B - (alpha - 1.0) * eps
        # a term with w < MIN_WEIGHT cannot matter unless the solver's x ratios are astronomically off, which
        # the re-verification would catch; leaving it out keeps the conic problem well posed
        keep = logw > math.log(MIN_WEIGHT)
        rows = local[keep]
        t = mb.add_vars(int(keep.sum()), lb=0.0, ub=np.inf, name=f"t{j}")
        mb.add_power_cones(t, x[J[keep]], x[I[keep]], 1.0 / alpha)
        present = np.unique(rows)
        mb.add_rows(np.searchsorted(present, rows), t, np.exp(logw[keep]), upper=1.0)
    if eps_inf is not None:
        # (u s)(I) x(I) <= e^eps_inf (v s)(J) x(J), each row divided by its largest coefficient
        ca = np.ones(I.size)
        cb = np.exp(eps_inf + B - A)
        top = np.maximum(ca, cb)
        r_ = np.arange(I.size)
        mb.add_rows(
            np.repeat(r_, 2), np.stack([x[I], x[J]], 1).ravel(), np.stack([ca / top, -cb / top], 1).ravel(), upper=0.0
        )
    return mb.build()


def solve_renyi(
    *,
    cost: np.ndarray,
    idx: np.ndarray,
    shape: tuple[int, ...],
    orders: list[tuple[float, float]],
    sigma2: float,
    eps_inf: float | None = None,
    time_limit: float | None = None,
    verbose: bool = False,
    conic_solver: str = "clarabel",
) -> tuple[SolverOutput, np.ndarray | None, dict[str, int]]:
    """Build and solve :func:`build_renyi_model`; returns the backend output, the PMF (or None) and the model size.

    ``sigma2`` is the variance of the reference discrete Gaussian that scales the
    variables (one meeting every order's budget).
    """
    log_ref = check_reference(shape[0] - 1, len(shape), sigma2)
    model = build_renyi_model(cost, idx, orders, log_ref, eps_inf=eps_inf)
    out, logf = solve_conic_scaled(model, log_ref, time_limit=time_limit, verbose=verbose, conic_solver=conic_solver)
    return out, None if logf is None else np.exp(logf).reshape(shape), model.size


def solve_conic_scaled(
    model: LinearModel,
    log_ref: np.ndarray,
    *,
    mass: np.ndarray | None = None,
    time_limit: float | None = None,
    verbose: bool = False,
    conic_solver: str = "clarabel",
) -> tuple[SolverOutput, np.ndarray | None]:
    """Solve a model of :func:`build_renyi_terms_model` at several objective scales; the output and ``log f``.

    ``log f`` is normalised so that ``mass @ f = 1`` (default ``sum f = 1``); ``None`` without a point.
    """
    # Interior-point progress on these cones depends on the objective's scale (measured: Clarabel stalls
    # on some instances at one scale and solves them at another, and returns inaccurate points). The
    # objective at the reference PMF is normalised to each of OBJECTIVE_SCALES in turn; a point is
    # accepted once it costs no more than the reference Gaussian, which is feasible by construction.
    ref_cost = max(float(np.sum(model.c)), 1e-300)  # x = 1 is the reference PMF
    best: SolverOutput | None = None
    out = None
    for scale in OBJECTIVE_SCALES:
        k = scale / ref_cost
        out = solve_model(
            replace(model, c=model.c * k),
            solver="cvxpy",
            time_limit=time_limit,
            verbose=verbose,
            conic_solver=conic_solver,
        )
        if out.objective is not None:
            obj = out.objective / k
            out = replace(out, objective=obj, bound=None if out.bound is None else out.bound / k)
            if best is None or obj < (best.objective if best.objective is not None else math.inf):
                best = out
            if obj <= ref_cost * (1 + 1e-9):
                break
    if best is None:
        assert out is not None
        return out, None
    out = best
    if out.status == "optimal" and (out.objective or 0.0) > ref_cost * (1 + 1e-9):
        out = replace(
            out,
            status="error",
            message=f"{out.message}; the conic solver's best point costs {out.objective:.10g}, more than the "
            f"reference discrete Gaussian's {ref_cost:.10g}, which is feasible: not an optimum",
        )
    if out.x is None:
        return out, None
    xv = np.clip(out.x[model.block("x")], 0.0, None)
    with np.errstate(divide="ignore"):
        logf = log_ref + np.log(xv)
    logm = np.zeros(logf.size) if mass is None else np.log(mass)
    return out, logf - float(logsumexp(logf + logm))
