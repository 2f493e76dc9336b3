"""The trade-off lower bound of composed designs (``proof["method"] == "tradeoff"``).

Why the LP bounds of :mod:`optnoise.design.composed` are loose: one release of a design whose
k-fold composition is (eps, delta)-DP is itself (eps, delta)-DP, but composition asks much more
of its shape. This bound asks exactly the composed question, of the best shape a budget allows.

The argument (modulo release, any dimension, any listed shifts, any cost; notation of
:mod:`optnoise.privacy.accounting`: the pair of shift ``mu`` is ``(f, f_mu)``, ``f_mu(z) = f(z + mu)``).

1. *What the accounting implies.* :func:`~optnoise.privacy.accounting.compose_pairs` composes a
   pessimistic dominating pair ``(P*, Q*)`` of every listed pair, ``H_g(P*||Q*) >= H_g(f||f_mu)``
   for every ``g = e^eps > 0`` (Zhu, Dong and Wang 2022). Hockey sticks at every ``g`` determine the
   trade-off curve ``T(P, Q)(a) = inf{1 - E_Q phi : E_P phi <= a}``, and trade-off order is kept by
   composition (Dong, Roth and Su 2022, Lemma C.3), so a design ``f`` that the accounting certifies has,
   for every listed ``mu`` and every sequence ``mu_1..mu_k`` of listed shifts,
   ``H_{e^eps}(f x ... x f || f_mu1 x ... x f_muk) <= delta``. (The converse is not needed.)
2. *The least distinguishable curve at cost V.* For ``lam >= 0``,
   ``inf_a [T(a) + lam a] = sum_z min(f_mu(z), lam f(z)) =: h_f(lam)`` (Neyman-Pearson), and a
   closed convex ``T`` is ``T(a) = sup_lam [h_f(lam) - lam a]``. So for every ``f`` with
   ``sum_z c(z) f(z) <= V``, ``T(f, f_mu) <= G_V`` with ``G_V(a) = sup_lam [h(lam) - lam a]`` and
   ``h(lam) = max {h_f(lam) : f a PMF on the ring, c.f <= V}``, a small LP (the ring is finite, so
   no tail mass escapes it). Its value is bounded from above at each ``lam_j`` of a grid (:func:`lambda_grid`)
   by a *certified dual*: any row multipliers, clipped to their sign constraints, plus the negative
   parts of the reduced costs times the variables' upper bound 1, bound the LP whatever the solver's
   accuracy (:meth:`_CurveLP._certify`; float rounding of that sum is covered by :data:`LP_SLACK`).
   Only the cost row depends on ``V``, so a certificate found at one ``V`` bounds ``h`` at every ``V``
   (a tangent of the concave value function): the bisection of step 5 runs on the certificates kept,
   and the LPs are re-solved only where it stops. Between grid points, for ``lam`` in
   ``[lam_j, lam_j+1]``: ``h`` is non-decreasing, so ``h(lam) - lam a <= U_j+1 - lam_j a``; and
   ``min(q, lam p) <= (lam / lam_j) min(q, lam_j p)``, so ``h(lam) <= (lam / lam_j) U_j``, linear in
   ``lam``, and ``h(lam) - lam a <= max(U_j - lam_j a, r U_j - lam_j+1 a)`` (``r = lam_j+1 / lam_j``);
   with the lines ``U_j - lam_j a`` at every grid point, one of ``U_j+1 - lam_j a`` and
   ``r U_j - lam_j+1 a`` per interval suffices (each lies above the minimum of the two bounds); the
   one lower where the interval touches the curve is taken. Below the grid ``h(lam) <= min(U_0, lam)``
   gives ``U_0 - U_0 a``; above it ``h <= 1`` gives ``1 - lam_last a``. The maximum ``M`` of these
   lines, floored at 0 and capped by ``1 - a`` (both hold for every trade-off curve), is ``>= G_V``;
   the lower convex hull ``F`` of ``M``'s values at finitely many ``a`` (0 and 1 among them) is
   ``>= G_V`` too, because ``G_V`` is convex and below those values. ``F`` is a piecewise-linear
   trade-off curve.
3. *A pair with curve F.* Each segment of ``F`` on ``[a_i-1, a_i]`` with slope ``-s_i`` is an atom of
   mass ``a_i - a_i-1`` under ``A`` and ``s_i (a_i - a_i-1)`` under ``B``; ``1 - F(0)`` is ``B``-mass where
   ``A`` is 0, and where ``F`` reaches 0 before ``a = 1`` the rest is ``A``-mass where ``B`` is 0. Then
   ``T(A, B) = F >= T(f, f_mu)``, and by composition ``T(A^k, B^k) >= T(f^k, f_mu^k)``; hockey sticks
   are decreasing in the curve, so ``H_g(f^k || f_mu^k) >= H_g(A^k || B^k)`` and
   ``H_g(f_mu^k || f^k) >= H_g(B^k || A^k)``.
4. *A lower bound of the composed hockey stick.* ``H_g(A^k||B^k) = E[(1 - g e^{-L_1-...-L_k})_+]``
   with ``L`` the privacy loss ``log(A/B)`` under ``A`` (``+inf`` counts 1). It is increasing in every
   loss, so rounding each finite loss *down* to the lattice :data:`LOSS_GRID` lowers it; the lattice
   distribution of the sum is one FFT (``rfft^k``). The FFT's float error, and the float rounding of
   the masses, are far below :data:`HS_SLACK`, which is subtracted. The reverse direction is the same
   computation with ``A`` and ``B`` exchanged.
5. *Conclusion.* If the bound of step 4 exceeds ``delta`` for some listed ``mu`` (or, when ``-mu`` is
   listed too, its reverse), no PMF of cost ``<= V`` is certified by the accounting: ``V`` is a proven
   lower bound on the distortion. Since ``G_V`` grows with ``V``, the largest such ``V`` is found by
   bisection; every reported ``V`` carries its own proof (each test above is rigorous on its own).

Symmetric noise loses nothing. When the listed shifts are closed under ``mu -> -mu`` and the cost under
``z -> -z``, the PMF ``s = (f + f(-.)) / 2`` has the cost of ``f`` and, if ``f`` is certified,
``H_{e^eps}(s^k || s_mu^k) <= delta`` for every listed ``mu``: ``(s, s_mu)`` is ``(f, f_mu)`` and the
reflection of ``(f, f_-mu)``, mixed with a fair coin; revealing the coins (post-processing can only
lower a hockey stick) makes the k-fold pair a coin-average of products ``f_{+-mu}`` of listed shifts,
each at most ``delta`` by step 1. So the LP of step 2 may be restricted to symmetric PMFs
(``f(z) = f(-z)``), which gives a much higher bound; otherwise (directed or asymmetric shift sets,
asymmetric costs) it runs over all PMFs.

Cost. :func:`lambda_grid` has 665 points at the defaults (step :data:`FINE_STEP` in ``log lam`` up to
:data:`FINE_SPAN`, coarser beyond; rings of more than :data:`FINE_CELLS` values get a proportionally
coarser step), one HiGHS model per shift whose ``lam`` entries are rewritten, each ``lam`` warm-started
from its last basis: about 2.5 s of CPU at k = 10, n = 170, and 6 s at k = 100, n = 896. A finer grid
only raises the bound (about 71 at step 0.01, 76.7 at 0.005, 79.4 at 0.0025 for k = 10, n = 170).

Scope. Modulo releases with at most :data:`MAX_CELLS` noise values and ``compositions >= 2``. Clamped
releases (whose pairs are not shifts of one PMF) and larger rings keep the LP bounds of
:mod:`optnoise.design.composed_bounds`; the design reports the larger bound and the method that gave it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from optnoise.design.noise import NoiseDesign

__all__ = [
    "HS_SLACK",
    "LOSS_GRID",
    "LP_SLACK",
    "MAX_CELLS",
    "TradeoffBound",
    "composed_hockey_lower",
    "lambda_grid",
    "setup",
    "tradeoff_bound",
    "tradeoff_eps_bound",
]

#: Largest number of noise values for which the trade-off LP is built.
MAX_CELLS = 2000
#: Steps of the grid ``log lam`` at which the curve LP is solved: fine within ``FINE_SPAN``, coarse beyond.
FINE_STEP, COARSE_STEP, FINE_SPAN = 0.0025, 0.1, 0.8
#: Rings of more noise values than this get a proportionally coarser fine step.
FINE_CELLS = 1000
#: The grid spans ``lam`` in ``[exp(-LAMBDA_SPAN), exp(LAMBDA_SPAN)]`` (scaled up for small k).
LAMBDA_SPAN = 2.0
#: Lattice of the privacy losses in the composition (losses are rounded down to it).
LOSS_GRID = 2.5e-4
#: Most lattice points of the composed loss distribution (a coarser lattice beyond).
MAX_LATTICE = 1 << 21
#: Bisection of the bound stops at this relative width.
BISECTION_RTOL = 5e-3
#: Most times the curve LPs are re-solved where the bisection stopped (each tightens the certificates there).
SOLVE_ROUNDS = 8
#: Absolute slack added to each certified LP bound (float rounding of the dual sum).
LP_SLACK = 1e-11
#: Absolute slack subtracted from each composed hockey stick (FFT and mass rounding).
HS_SLACK = 1e-9


# --------------------------------------------------------------------------------------------
# step 2: certified upper bounds of h(lam) = max{sum_z min(f_mu(z), lam f(z)) : c.f <= V}
# --------------------------------------------------------------------------------------------


class _CurveLP:
    """The curve LPs of one shift on a grid of ``lam``, solved by HiGHS and certified by their duals.

    Variables ``x = (p, t)``: ``p`` the free masses (one per cell, or per orbit ``{z, -z}``
    for symmetric noise; ``f(z) = p[tie[z]]``), ``t_z`` the summands; all in ``[0, 1]``. Rows:
    ``t_z - f(z + mu) <= 0``, ``t_z - lam f(z) <= 0``, ``sum f = 1``, ``c.f <= V``. The objective
    ``max sum t`` is solved as ``min -sum t``. One HiGHS model per ``lam``, so that a new ``V`` (a row
    bound) is a warm re-solve.
    """

    def __init__(self, cost: np.ndarray, moved: np.ndarray, tie: np.ndarray, lams: np.ndarray) -> None:
        import scipy.sparse as sp

        N = cost.size
        m = int(tie.max()) + 1
        self.N, self.m = N, m
        z = np.arange(N)
        rows = np.concatenate([z, z, N + z, np.full(N, 2 * N), np.full(N, 2 * N + 1)])
        cols = np.concatenate([m + z, tie[moved], m + z, tie, tie])
        vals = np.concatenate([np.ones(N), -np.ones(N), np.ones(N), np.ones(N), cost])
        A0 = sp.csr_matrix((vals, (rows, cols)), shape=(2 * N + 2, m + N))
        # the lam-dependent entries: -lam f(z) in row N + z
        Al = sp.csr_matrix((-np.ones(N), (N + z, tie)), shape=(2 * N + 2, m + N))
        self.A0T, self.AlT = A0.T.tocsr(), Al.T.tocsr()
        self.c = np.concatenate([np.zeros(m), -np.ones(N)])
        self.row_lo = np.concatenate([np.full(2 * N, -np.inf), [1.0, -np.inf]])
        self.row_hi = np.concatenate([np.zeros(2 * N), [1.0, 0.0]])
        self.lams = np.asarray(lams, dtype=float)
        # one HiGHS model for every lam (the lam entries' values change; the pattern does not), and each
        # lam's last optimal basis: many small models would hold ~2 kB per cell and lam
        A = (A0 + Al).tocsc()
        A.sum_duplicates()
        A.sort_indices()
        mark = Al.tocsc()  # the lam entries: one per row N + z
        self.lam_pos = np.flatnonzero(np.isin(_entry_keys(A), _entry_keys(mark)))
        self.values = A.data.astype(float)
        self.lp = self._model(A)
        self.highs: Any = None
        self.bases: list[Any] = [None] * self.lams.size
        self.certs: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def _model(self, A: Any) -> Any:
        import highspy

        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = A.shape[1], A.shape[0]
        lp.col_cost_ = self.c
        lp.col_lower_ = np.zeros(A.shape[1])
        lp.col_upper_ = np.ones(A.shape[1])
        lp.row_lower_ = self.row_lo
        lp.row_upper_ = self.row_hi.copy()
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = A.indptr.astype(np.int32)
        lp.a_matrix_.index_ = A.indices.astype(np.int32)
        lp.a_matrix_.value_ = A.data.astype(float)
        return lp

    def solve(self, V: float) -> None:
        """Solve every ``lam``'s LP at cost ``<= V`` and keep its dual certificate (valid at every ``V``)."""
        from optnoise.engine.highs import new_highs

        if self.highs is None:
            self.highs = new_highs()
        h = self.highs
        Y = np.zeros((self.row_hi.size, self.lams.size))
        row_hi = self.row_hi.copy()
        row_hi[-1] = V
        self.lp.row_upper_ = row_hi
        basis = None
        for j, lam in enumerate(self.lams):
            vals = self.values.copy()
            vals[self.lam_pos] = -lam
            self.lp.a_matrix_.value_ = vals
            h.passModel(self.lp)
            start = self.bases[j] if self.bases[j] is not None else basis
            if start is not None:
                h.setBasis(start)  # this lam's last basis, or the neighbouring lam's: a warm start
            h.run()
            basis = self.bases[j] = h.getBasis()
            y = np.asarray(h.getSolution().row_dual, dtype=float)
            if y.size == Y.shape[0]:
                Y[:, j] = np.where(np.isfinite(y), y, 0.0)  # any multipliers are sound: 0 is
        self.certs.append(self._certify(Y))

    def upper(self, V: float) -> np.ndarray:
        """Certified upper bounds of ``h(lam)`` at cost ``<= V`` for every ``lam`` of the grid: the least
        over the certificates kept so far (solving at ``V`` first if there are none)."""
        if not self.certs:
            self.solve(V)
        out = np.minimum(1.0, self.lams)  # h <= min(1, lam) always
        for a, b, size in self.certs:
            out = np.minimum(out, a + b * V + LP_SLACK * (1.0 + size + b * V))
        return out

    def _certify(self, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per column of row multipliers ``Y``: ``h(lam_j) <= a_j + b_j V + LP_SLACK (1 + size_j + b_j V)``
        at every cost ``V`` (weak duality, signs enforced).

        For rows ``lo <= A x <= hi``, multipliers ``y`` (0 where the matching side is infinite) and
        ``0 <= x <= 1``: ``c.x = y.Ax + (c - A'y).x >= sum_i y_i (hi_i if y_i < 0 else lo_i)
        + sum_j min(0, (c - A'y)_j)``. Only the cost row's bound ``V`` depends on ``V`` (a line in ``V``:
        the LP value is concave in ``V``, and this is its tangent where it was solved). The float error
        of that sum is far below :data:`LP_SLACK` times the sum of the absolute terms, which is added.
        """
        Y = Y.copy()
        Y[(Y < 0) & ~np.isfinite(self.row_hi)[:, None]] = 0.0
        Y[(Y > 0) & ~np.isfinite(self.row_lo)[:, None]] = 0.0
        Y[-1] = np.minimum(Y[-1], 0.0)  # the cost row: only its upper side V is finite
        rhs = np.where(Y < 0, self.row_hi[:, None], np.where(Y > 0, self.row_lo[:, None], 0.0))
        rows = (Y * rhs)[:-1]  # the cost row's term -y V is kept apart
        R = self.c[:, None] - self.A0T @ Y - (self.AlT @ Y) * self.lams[None, :]
        red = np.minimum(R, 0.0)
        a = -(rows.sum(axis=0) + red.sum(axis=0))
        size = np.abs(rows).sum(axis=0) + np.abs(red).sum(axis=0)
        return a, -Y[-1], size


def _entry_keys(A: Any) -> np.ndarray:
    """One integer per stored entry of a CSC matrix (column-major position), in storage order."""
    cols = np.repeat(np.arange(A.shape[1]), np.diff(A.indptr))
    return cols.astype(np.int64) * A.shape[0] + A.indices


# --------------------------------------------------------------------------------------------
# steps 2-3: the lines, their capped convex minorant F, and a pair (A, B) with T(A, B) = F
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Pair:
    """Atoms of a pair: finite atoms ``(a, b)`` (both > 0) and the masses ``a_inf`` (B = 0), ``b_inf`` (A = 0)."""

    a: np.ndarray
    b: np.ndarray
    a_inf: float
    b_inf: float

    def reverse(self) -> _Pair:
        return _Pair(self.b, self.a, self.b_inf, self.a_inf)


def _lines(lp: _CurveLP, lams: np.ndarray, V: float) -> tuple[np.ndarray, np.ndarray]:
    """Slopes ``s`` (increasing) and intercepts ``u`` of lines ``u - s a`` whose maximum is ``>= G_V`` (step 2).

    With ``U_j >= h(lam_j)``: ``h`` is non-decreasing, so the least ``U`` at or above ``lam`` bounds
    ``h(lam)``; and ``min(q, lam p) <= (lam / lam_j) min(q, lam_j p)`` for ``lam >= lam_j``, so
    ``h(lam) <= (lam / lam_j) U_j``. For ``lam`` in ``[lam_j, lam_j+1]`` (``r = lam_j+1 / lam_j``):
    ``h(lam) - lam a <= max(U_j - lam_j a, min(U_j+1 - lam_j a, r U_j - lam_j+1 a))`` (the scaled
    bound is linear in ``lam``, so its maximum is at an end). The first is a line; the minimum is
    below either line, and the one lower where the interval touches the curve (about
    ``a = (U_j+1 - U_j) / (lam_j+1 - lam_j)``) is taken. Below the grid ``h(lam) <= min(U_0, lam)``,
    and ``min(U_0, lam) - lam a`` is largest at ``lam = U_0`` (``<= lam_0``), which gives the line
    ``U_0 - U_0 a``; above the grid ``h <= 1`` gives ``1 - lam_last a``.
    """
    U = lp.upper(V)
    U = np.minimum.accumulate(U[::-1])[::-1]
    lo, hi = lams[:-1], lams[1:]
    r = hi / lo
    a_cross = (r * U[:-1] - U[1:]) / (hi - lo)
    # where the piece touches the curve: about the crossing of the exact lines at lam_j and lam_j+1
    a_touch = (U[1:] - U[:-1]) / (hi - lo)
    left = a_touch <= a_cross  # there the minimum is the first line: its tangent is the line itself
    slope = np.where(left, lo, hi)
    icpt = np.where(left, U[1:], r * U[:-1])
    s = np.concatenate([[U[0]], lams, slope, [lams[-1]]])
    u = np.concatenate([[U[0]], U, icpt, [1.0]])
    order = np.argsort(s, kind="stable")
    return s[order], u[order]


def _hull_pair(s: np.ndarray, u: np.ndarray) -> _Pair:
    """The pair whose trade-off curve ``F`` is the lower convex hull of ``m = min(max(max_j (u_j - s_j a), 0), 1 - a)``
    sampled at finitely many ``a`` (0 and 1 included).

    Any sample set gives a valid ``F >= G_V``: ``G_V`` is convex and ``<= m`` at every sample, so it lies
    below the hull of the samples; the samples (kinks of consecutive lines, their zeros and meets
    with ``1 - a``) only make ``F`` tight. ``s`` is increasing.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        cross = (u[1:] - u[:-1]) / (s[1:] - s[:-1])
        zero = np.where(s > 0, u / s, np.nan)
        meet = np.where(s != 1, (u - 1.0) / (s - 1.0), np.nan)
    a = np.concatenate([np.linspace(0.0, 1.0, 257), cross, zero, meet])
    a = np.unique(a[np.isfinite(a) & (a >= 0) & (a <= 1)])
    top = np.max(u[None, :] - s[None, :] * a[:, None], axis=1)
    val = np.minimum(np.maximum(top, 0.0), np.nextafter(1.0 - a, 2.0))
    # lower convex hull (monotone chain over increasing a)
    hull: list[int] = []
    for i in range(a.size):
        while len(hull) >= 2:
            i0, i1 = hull[-2], hull[-1]
            if (val[i1] - val[i0]) * (a[i] - a[i0]) >= (val[i] - val[i0]) * (a[i1] - a[i0]):
                hull.pop()
            else:
                break
        hull.append(i)
    ha, hv = a[hull], val[hull]
    da = np.diff(ha)
    db = -np.diff(hv)
    keep = db > 0
    b_inf = max(0.0, 1.0 - float(hv[0]))
    # flat pieces where F is 0: A-mass where B is 0. A flat piece above 0 cannot occur for a convex
    # curve ending at 0; were float noise to make one, dropping its A-mass lowers both hockey sticks
    a_inf = float(np.sum(da[~keep & (hv[:-1] <= 1e-300)]))
    return _Pair(da[keep], db[keep], a_inf, b_inf)


# --------------------------------------------------------------------------------------------
# step 4: a lower bound of H_g(A^k || B^k)
# --------------------------------------------------------------------------------------------


def composed_hockey_lower(pair: _Pair, k: int, eps: float, grid: float = LOSS_GRID) -> float:
    """A lower bound of ``H_{e^eps}(A^k || B^k)``: losses rounded down to ``grid``, one FFT (step 4)."""
    mass_inf = 1.0 - (1.0 - pair.a_inf) ** k
    a = pair.a[pair.a > 0]
    b = pair.b[pair.a > 0]
    if a.size == 0:
        return max(0.0, mass_inf - HS_SLACK)
    loss = np.log(a) - np.log(b)
    lo, hi = float(loss.min()), float(loss.max())
    while k * (hi - lo) / grid + 2 > MAX_LATTICE:
        grid *= 2.0
    idx = np.floor(loss / grid).astype(np.int64)
    base = int(idx.min())
    width = int(idx.max()) - base + 1
    one = np.bincount(idx - base, weights=a, minlength=width)
    size = k * (width - 1) + 1
    nfft = 1 << max(1, (size - 1).bit_length())
    dist = np.fft.irfft(np.fft.rfft(one, nfft) ** k, nfft)[:size]
    dist = np.maximum(dist, 0.0)
    total = (np.arange(size) + k * base) * grid
    weight = np.maximum(0.0, -np.expm1(eps - total))
    return max(0.0, float(dist @ weight) + mass_inf - HS_SLACK)


# --------------------------------------------------------------------------------------------
# the design's bound
# --------------------------------------------------------------------------------------------


@dataclass
class TradeoffBound:
    """The curve LPs of a design: one per listed shift (up to mirror images for symmetric noise)."""

    k: int
    delta: float
    lps: list[tuple[_CurveLP, bool, bool]]  # (lp, forward listed, reverse listed)
    lams: np.ndarray

    def pairs(self, V: float) -> list[tuple[_Pair, bool, bool]]:
        return [(_hull_pair(*_lines(lp, self.lams, V)), fw, rv) for lp, fw, rv in self.lps]

    def solve(self, V: float) -> None:
        """Solve the curve LPs at ``V``: their certificates, kept, are tight there and valid everywhere."""
        for lp, _, _ in self.lps:
            lp.solve(V)

    def _breaks(self, got: list[tuple[_Pair, bool, bool]], eps: float) -> bool:
        """Whether some listed order's composed hockey stick, bounded from below, exceeds delta (step 5)."""
        for pair, fw, rv in got:
            if fw and composed_hockey_lower(pair, self.k, eps) > self.delta:
                return True
            if rv and composed_hockey_lower(pair.reverse(), self.k, eps) > self.delta:
                return True
        return False

    def excluded(self, V: float, eps: float) -> bool:
        """Whether no PMF of cost ``<= V`` can be certified at ``(eps, delta)`` (steps 2-5), by the
        certificates kept so far."""
        return self._breaks(self.pairs(V), eps)

    def eps_lower(self, V: float, eps_hi: float) -> float:
        """The largest eps (bisection, 30 steps) at which cost ``<= V`` is excluded; 0 if none."""
        got = self.pairs(V)

        def out(eps: float) -> bool:
            return self._breaks(got, eps)

        lo, hi = 0.0, eps_hi
        if not out(lo):
            return 0.0
        for _ in range(30):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if out(mid) else (lo, mid)
        return lo


def _symmetric(design: NoiseDesign, listed: set[tuple[int, ...]]) -> bool:
    N = design.n + 1
    if any(tuple((-v) % N for v in mu) not in listed for mu in listed):
        return False
    cost = np.asarray(design.cost, dtype=float).reshape(design.shape)
    mirror = cost[tuple(np.ix_(*[(-np.arange(N)) % N] * design.dim))]
    return bool(np.array_equal(cost, mirror))


def lambda_grid(k: int, eps: float, fine: float | None = None) -> np.ndarray:
    """The grid ``lam = exp(x)``: step ``fine`` where per-release losses matter most
    (``|x| <= FINE_SPAN``), :data:`COARSE_STEP` beyond, up to ``|x| = LAMBDA_SPAN`` (wider for few releases)."""
    fine = FINE_STEP if fine is None else float(fine)
    span = LAMBDA_SPAN * max(1.0, 3.0 * eps / math.sqrt(k))
    inner = np.arange(-round(FINE_SPAN / fine), round(FINE_SPAN / fine) + 1) * fine
    outer = np.arange(round(FINE_SPAN / COARSE_STEP) + 1, math.ceil(span / COARSE_STEP) + 1) * COARSE_STEP
    return np.exp(np.concatenate([-outer[::-1], inner, outer]))


def setup(design: NoiseDesign, max_shifts: int = 2, fine: float | None = None) -> TradeoffBound | None:
    """The curve LPs of ``design``, or ``None`` outside the scope (module docstring)."""
    if not design.rel.cyclic or int(design.compositions or 1) < 2 or design.size > MAX_CELLS:
        return None
    N = design.n + 1
    shifts = np.asarray(design.shifts, dtype=np.int64).reshape(len(design.shifts), -1)
    listed = {tuple(int(v) for v in mu) for mu in shifts}
    sym = _symmetric(design, listed)
    idx = design.shift_index()
    grids = np.indices(design.shape).reshape(design.dim, -1)
    cells = np.arange(design.size)
    if sym:
        mirror = np.ravel_multi_index(tuple((-grids) % N), design.shape)
        tie_raw = np.minimum(cells, mirror)
        _, tie = np.unique(tie_raw, return_inverse=True)
    else:
        tie = cells
    centred = np.where(shifts > N // 2, shifts - N, shifts)
    order = np.argsort(-np.sum(centred.astype(float) ** 2, axis=1), kind="stable")
    cost = np.asarray(design.cost, dtype=float).ravel()
    if fine is None:  # the LPs grow with the ring: a coarser grid keeps large rings within seconds
        fine = FINE_STEP * max(1.0, design.size / FINE_CELLS)
    lams = lambda_grid(int(design.compositions), float(design.eps or 1.0), fine)
    lps: list[tuple[_CurveLP, bool, bool]] = []
    done: set[tuple[int, ...]] = set()
    for j in order:
        mu = tuple(int(v) for v in shifts[j])
        neg = tuple((-v) % N for v in mu)
        if mu in done or all(v == 0 for v in mu):
            continue
        done.update({mu, neg})
        # symmetric noise: T(f, f_mu) is symmetric, so its reverse order adds nothing (both are valid)
        lps.append((_CurveLP(cost, idx[j], tie.astype(np.int64), lams), True, neg in listed and not sym))
        if len(lps) >= max_shifts:
            break
    if not lps:
        return None
    return TradeoffBound(int(design.compositions), float(design.delta or 0.0), lps, lams)


def tradeoff_bound(
    design: NoiseDesign,
    lo: float,
    hi: float | None = None,
    eps: float | None = None,
    rtol: float = BISECTION_RTOL,
    deadline: float | None = None,
    fine: float | None = None,
) -> float | None:
    """The largest ``V`` that the trade-off argument excludes (bisection in ``[lo, hi]``), or ``None``.

    Every ``V`` returned is excluded by its own test (module docstring), so it is a proven lower
    bound on the distortion of every design the accounting certifies at ``(eps, delta)`` (default:
    the design's eps). ``hi`` defaults to doubling from ``lo`` until a ``V`` is not excluded (the
    least distortion of a known certified design is the natural ``hi``). ``None``: outside the scope,
    or nothing excluded above ``lo``.

    The curve LPs are solved at a few ``V`` only (:data:`SOLVE_ROUNDS`): each solve's certificates
    bound ``h`` at every ``V`` (tangents of a concave function), so the bisection runs on them, and
    the next solve is where the last bisection stopped, which tightens them there. ``deadline`` (a
    :func:`time.perf_counter` value): stop there with the best ``V`` proven so far (still a bound).
    ``fine``: the grid's fine step (default :data:`FINE_STEP`; coarser is faster and lower).
    """
    import time

    def late() -> bool:
        return deadline is not None and time.perf_counter() > deadline

    tb = setup(design, fine=fine)
    if tb is None:
        return None
    e = float(design.eps or 0.0) if eps is None else float(eps)
    best = None
    a = max(0.0, float(lo))
    if hi is None:
        cost = np.asarray(design.cost, dtype=float)
        b = max(2.0 * a, float(np.min(cost[cost > 0], initial=1.0)))
        for _ in range(60):
            if late():
                return best
            tb.solve(b)
            if not tb.excluded(b, e):
                break
            a = best = b
            b *= 2.0
        else:
            return best
    else:
        b = float(hi)
        if late():
            return None
        tb.solve(0.5 * (a + b))
    for _ in range(SOLVE_ROUNDS):
        top = b
        while top - a > rtol * top and not late():
            mid = 0.5 * (a + top)
            if tb.excluded(mid, e):
                a = best = mid
            else:
                top = mid
        if late():
            break
        tb.solve(top)  # the certificates are tight at top now: either it is excluded, or it is the end
        if tb.excluded(top, e):
            a = best = top
        else:
            b = top
        if b - a <= rtol * b:
            break
    return best


def tradeoff_eps_bound(design: NoiseDesign, cap: float, eps_hi: float) -> float | None:
    """The largest eps at which no design of distortion ``<= cap`` is certified; ``None`` outside the scope."""
    tb = setup(design)
    if tb is None or not math.isfinite(eps_hi) or eps_hi <= 0:
        return None
    return tb.eps_lower(cap, eps_hi)
