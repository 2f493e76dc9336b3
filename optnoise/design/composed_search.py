"""The search half of composition-targeted design: a differentiable surrogate and a reduced-gradient optimiser.

Nothing here certifies anything. :mod:`optnoise.design.composed` uses it to *find* a good
PMF and then calibrates and checks every returned PMF with optnoise's own accounting
(:func:`optnoise.privacy.accounting.compose_pairs`).

Surrogate (:class:`Surrogate`)
    For one ordered pair ``(P, Q)`` with losses ``l(o) = log P(o) - log Q(o)`` (mass ``P(o)``),
    the k-fold self-composition has ::

        delta_k(eps) = sum_o P(o) Psi(l(o)),   Psi(l) = E[(1 - e^{eps - l - S})_+],

    ``S`` the (k-1)-fold sum of losses, whose law is one real FFT power of the losses
    split linearly onto a grid. With ``t = eps - l``, ``T0(t) = P(S > t)`` and
    ``T1(t) = E[e^{-S} 1{S > t}]`` (suffix sums), ``Psi = T0 - e^t T1`` and
    ``Psi' = e^t T1``, so the exact gradient of the surrogate is ::

        d delta / d P(o) = k (Psi(l(o)) + Psi'(l(o))),   d delta / d Q(o) = -k e^{l(o)} Psi'(l(o)).

    A release with several pairs uses the largest surrogate delta over a working set of
    its worst pairs (a sub-gradient of the max).
Reduced problem (:func:`reduced_search`)
    The PMF is ``u = softmax(a theta)``; for every ``theta`` the temper ``a`` solving the
    constraint (surrogate delta = target for the distortion objective, distortion = cap
    for the epsilon objective) is found by a safeguarded Newton iteration, and the
    objective is minimised over ``theta`` (or over a parametrisation of it, e.g. the
    half-line losses of a symmetric PMF) by L-BFGS-B with the implicit-function gradient
    ``grad J = dJ/dtheta - (dJ/da / dC/da) dC/dtheta``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "PairMap",
    "Surrogate",
    "SearchResult",
    "clamp_pair_map",
    "line_pair_map",
    "modulo_pair_map",
    "reduced_search",
    "temper",
]

#: Largest FFT length of the surrogate's (k-1)-fold law; a wider loss range gets a coarser grid.
MAX_FFT = 1 << 19
#: The distortion search lays the surrogate's (k-1)-fold law on the losses of all but extremes of mass
#: ``SURROGATE_TAIL * delta / (k - 1)`` (:meth:`Surrogate._body`): its delta moves by at most this share of delta.
SURROGATE_TAIL = 1e-6


#: Positive masses of a tempered PMF stay above ``e^LOG_FLOOR`` times the mode (every finite loss <= 40).
LOG_FLOOR = -40.0


def temper(pmf: np.ndarray, a: float) -> np.ndarray:
    """``pmf^a`` normalised (zeros stay zeros, positive masses at least ``e^LOG_FLOOR`` of the mode);
    ``a < 1`` flattens, ``a > 1`` sharpens."""
    f = np.asarray(pmf, dtype=float)
    pos = f > 0
    z = np.full(f.shape, -np.inf)
    z[pos] = a * np.log(f[pos])
    z -= z[pos].max()
    z[pos] = np.maximum(z[pos], LOG_FLOOR)
    g = np.exp(z)
    return g / g.sum()


class Surrogate:
    """Surrogate k-fold delta of one ordered pair and its gradient (module docstring)."""

    def __init__(self, k: int, eps: float, grid: float, lcap: float, tail: float = 0.0, max_fft: int = MAX_FFT) -> None:
        self.k, self.eps, self.grid, self.lcap = int(k), float(eps), float(grid), float(lcap)
        self.tail, self.max_fft = float(tail), int(max_fft)

    def _body(self, loss: np.ndarray, P: np.ndarray) -> tuple[float, float]:
        """The loss range the (k-1)-fold law is laid on: all losses but extremes of total ``P``-mass at most
        ``tail`` (``tail / 2`` a side), which are moved to its ends. That moves at most ``tail`` of each
        summand's law, so ``Psi`` and the surrogate delta change by at most ``(k - 1) tail``; without it a
        few outputs of mass ~1e-14 with losses near ``lcap`` (the edges of the additive release's window)
        stretch the FFT 25-fold."""
        lo, hi = float(loss.min()), float(loss.max())
        if self.tail <= 0.0:
            return lo, hi
        order = np.argsort(loss)
        cum = np.cumsum(P[order])
        i = int(np.searchsorted(cum, 0.5 * self.tail, side="right"))  # the first loss kept from below
        j = int(np.searchsorted(cum, cum[-1] - 0.5 * self.tail, side="left"))  # the last one kept from above
        if not 0 <= i <= j < loss.size:
            return lo, hi
        return float(loss[order[i]]), float(loss[order[j]])

    def __call__(self, P: np.ndarray, Q: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        P = np.maximum(P, 1e-300)
        Q = np.maximum(Q, 1e-300)
        raw = np.log(P) - np.log(Q)
        loss = np.clip(raw, -self.lcap, self.lcap)
        k, eps = self.k, self.eps
        G: Any
        s: Any
        if k == 1:
            s, G = np.zeros(1), np.ones(1)
        else:
            lo_b, hi_b = self._body(loss, P)
            span = (k - 1) * (hi_b - lo_b + 2 * self.grid)
            h = max(self.grid, span / self.max_fft)
            j = np.clip(loss, lo_b, hi_b) / h
            j0 = np.floor(j)
            th = j - j0
            i0 = j0.astype(np.int64)
            lo = int(i0.min())
            p1 = np.bincount(i0 - lo, P * (1 - th), minlength=int(i0.max()) - lo + 2)
            p1 += np.bincount(i0 - lo + 1, P * th, minlength=p1.size)[: p1.size]
            m = k - 1
            M = m * (p1.size - 1) + 1
            from scipy import fft as sfft

            nfft = sfft.next_fast_len(M, real=True)
            G = np.maximum(sfft.irfft(sfft.rfft(p1, nfft) ** m, nfft)[:M], 0.0)
            s = (m * lo + np.arange(M)) * h
        t = eps - loss
        C0 = np.concatenate([np.cumsum(G[::-1])[::-1], [0.0]])
        C1 = np.concatenate([np.cumsum((G * np.exp(-(s - s[0])))[::-1])[::-1], [0.0]])
        idx = np.searchsorted(s, t, side="right")
        e1 = np.exp(np.minimum(t - s[0], 700.0)) * C1[idx]
        psi = np.maximum(C0[idx] - e1, 0.0)
        d = float(np.dot(P, psi))
        clipped = raw != loss  # clipped losses: no gradient through the loss
        dpsi = np.where(clipped, 0.0, e1)
        gP = k * (psi + dpsi)
        gQ = -k * np.exp(loss) * dpsi
        return d, gP, gQ


@dataclass
class PairMap:
    """How a flat PMF becomes the release's ordered pairs, and how pair gradients flow back.

    ``forward(f, js)`` returns ``(P, Q)`` arrays of shape ``(len(js), C)`` for the pairs ``js``;
    ``backward(j, gP, gQ)`` the gradient in ``f`` of a function of pair ``j`` with gradients ``gP``, ``gQ``.
    """

    forward: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]
    backward: Callable[[int, np.ndarray, np.ndarray], np.ndarray]
    count: int


def modulo_pair_map(index: np.ndarray) -> PairMap:
    """Pairs ``(f, f[index[j]])`` of modulo noise (``index`` as :meth:`NoiseDesign.shift_index`)."""
    index = np.asarray(index, dtype=np.int64)
    N = index.shape[1]

    def forward(f: np.ndarray, js: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.broadcast_to(f, (len(js), N)), f[index[js]]

    def backward(j: int, gP: np.ndarray, gQ: np.ndarray) -> np.ndarray:
        return gP + np.bincount(index[j], gQ, minlength=N)

    return PairMap(forward, backward, index.shape[0])


def clamp_pair_map(n: int, pairs: np.ndarray) -> PairMap:
    """Pairs ``(P[x], P[x'])`` of the clamped release ``clip(q + eta, 0, n)``, eta on ``-n..n``."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    out = np.clip(np.arange(n + 1)[:, None] + np.arange(-n, n + 1)[None, :], 0, n)  # (n+1, 2n+1)

    def rows(f: np.ndarray, q: np.ndarray) -> np.ndarray:
        flat = (np.arange(q.size)[:, None] * (n + 1) + out[q]).ravel()
        return np.bincount(flat, np.tile(f, q.size), minlength=q.size * (n + 1)).reshape(q.size, n + 1)

    def forward(f: np.ndarray, js: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return rows(f, pairs[js, 0]), rows(f, pairs[js, 1])

    def backward(j: int, gP: np.ndarray, gQ: np.ndarray) -> np.ndarray:
        return gP[out[pairs[j, 0]]] + gQ[out[pairs[j, 1]]]

    return PairMap(forward, backward, pairs.shape[0])


def line_pair_map(size: int, shifts: np.ndarray) -> PairMap:
    """Pairs ``(f(eta), f(eta + mu))`` of noise on Z held on ``size`` consecutive integers (zero beyond them).

    The outputs are the window widened by the largest ``|mu|`` on each side, so every output where
    either mass is positive is listed (the additive release, :mod:`optnoise.design.additive_composed`).
    """
    mus = np.asarray(shifts, dtype=np.int64).ravel()
    D = int(np.max(np.abs(mus)))
    o = np.arange(size + 2 * D) - D  # index into f of each output's eta; out of range reads the zero entry
    inside = lambda i: np.where((i >= 0) & (i < size), i, size)  # noqa: E731
    ip, iq = inside(o), inside(o[None, :] + mus[:, None])

    def forward(f: np.ndarray, js: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        fz = np.append(f, 0.0)
        return np.broadcast_to(fz[ip], (len(js), ip.size)), fz[iq[js]]

    def backward(j: int, gP: np.ndarray, gQ: np.ndarray) -> np.ndarray:
        return (np.bincount(ip, gP, minlength=size + 1) + np.bincount(iq[j], gQ, minlength=size + 1))[:size]

    return PairMap(forward, backward, mus.size)


@dataclass
class SearchResult:
    """The best PMF found (surrogate-feasible), with what the search did."""

    pmf: np.ndarray | None
    objective: float
    evaluations: int
    seconds: float
    message: str
    history: list[float] = field(default_factory=list)


class _Working:
    """The surrogate over the worst pairs of a release (max over a working set, refreshed now and then)."""

    def __init__(self, pairs: PairMap, sur: Surrogate, eps: float, k: int, size: int = 3) -> None:
        self.pairs, self.sur, self.size = pairs, sur, size
        self.probe = np.array(sorted({eps / k, eps / math.sqrt(k), eps, 0.5 * eps}))
        self.active: list[int] = list(range(min(pairs.count, size)))
        self.calls = 0

    def refresh(self, f: np.ndarray) -> None:
        if self.pairs.count <= self.size:
            self.active = list(range(self.pairs.count))
            return
        from optnoise.privacy.curves import hockey_stick

        P, Q = self.pairs.forward(f, np.arange(self.pairs.count))
        prof = np.array([np.atleast_1d(hockey_stick(P[j], Q[j], self.probe)) for j in range(self.pairs.count)])
        best = {int(np.argmax(prof[:, i])) for i in range(prof.shape[1])}
        order = [int(j) for j in np.argsort(-prof.sum(axis=1))]
        self.active = (sorted(best) + [j for j in order if j not in best])[: self.size]

    def __call__(self, f: np.ndarray) -> tuple[float, np.ndarray]:
        self.calls += 1
        if self.calls % 40 == 1:
            self.refresh(f)
        P, Q = self.pairs.forward(f, np.asarray(self.active))
        best: tuple[float, int, np.ndarray, np.ndarray] | None = None
        for i, j in enumerate(self.active):
            d, gP, gQ = self.sur(np.asarray(P[i]), np.asarray(Q[i]))
            if best is None or d > best[0]:
                best = (d, j, gP, gQ)
        assert best is not None
        return best[0], self.pairs.backward(best[1], best[2], best[3])


class _Stop(Exception):
    pass


def reduced_search(
    start: np.ndarray,
    *,
    pairs: PairMap,
    cost: np.ndarray,
    k: int,
    eps: float,
    mode: str,
    target: float,
    to_theta: Callable[[np.ndarray], np.ndarray] | None = None,
    from_theta: Callable[[np.ndarray], np.ndarray] | None = None,
    back: Callable[[np.ndarray], np.ndarray] | None = None,
    bounds: tuple[float, float] | None = None,
    grid: float | None = None,
    time_limit: float = 30.0,
    max_evals: int = 400,
    working: int = 3,
    progress: Callable[[], None] | None = None,
    max_fft: int = MAX_FFT,
    stall: tuple[int, float] | None = None,
) -> SearchResult:
    """Minimise the distortion at a surrogate composed delta (``mode="distortion"``, ``target`` = delta),
    or the surrogate delta at ``eps`` under a distortion cap (``mode="epsilon"``, ``target`` = the cap).

    ``start`` is a positive flat PMF. ``to_theta(x)`` maps the optimisation variables to the
    full log-PMF, ``from_theta`` the other way, ``back`` pulls a gradient in theta back to x
    (default: x is theta). ``time_limit`` (seconds, ``inf`` for none) and ``max_evals`` stop the
    search; ``progress()`` is called once per evaluation. ``max_fft`` caps the surrogate's FFT
    (:class:`Surrogate`). ``stall = (m, rtol)`` also stops it when the best surrogate-feasible objective
    fell by at most ``rtol`` (relative) over the last ``m`` evaluations (a rule on evaluation counts, so
    reproducible like ``max_evals``). Returns the best surrogate-feasible PMF found (or ``None``).
    """
    t0 = time.perf_counter()
    c = np.asarray(cost, dtype=float).ravel()
    cscale = max(float(np.max(np.abs(c))), 1e-300)
    grid = grid if grid is not None else 1e-4 * max(1.0, k / 20.0)
    # moving extremes of mass SURROGATE_TAIL delta / (k - 1) moves the surrogate delta by SURROGATE_TAIL delta at most
    tail = SURROGATE_TAIL * target / max(k - 1, 1) if mode == "distortion" else 0.0
    sur = _Working(pairs, Surrogate(k, eps, grid, max(2.0, 3.0 * eps), tail, max_fft), eps, k, working)
    theta0 = np.log(np.maximum(np.asarray(start, dtype=float).ravel(), 1e-300))
    theta0 = theta0 - theta0.max()
    to_theta = to_theta or (lambda x: x)
    from_theta = from_theta or (lambda th: th)
    back = back or (lambda g: g)
    log_target = math.log(target) if mode == "distortion" else 0.0
    state: dict[str, Any] = {"a": 1.0, "best": (math.inf, None), "evals": 0, "stalled": False}
    hist: list[float] = []
    bests: list[float] = []  # the best surrogate-feasible objective after each evaluation

    def pmf(th: np.ndarray, a: float) -> np.ndarray:
        z = a * th
        e = np.exp(z - z.max())
        return e / e.sum()

    def constraint(u: np.ndarray) -> tuple[float, np.ndarray, float, np.ndarray]:
        """(C, dC/du, objective, dobj/du)."""
        d, G = sur(u)
        d = max(d, 1e-300)
        if mode == "distortion":
            return math.log(d) - log_target, G / d, float(c @ u), c
        # the distortion falls as the PMF sharpens: C = 1 - c.u / cap increases with a, as log delta does
        return 1.0 - float(c @ u) / target, -c / target, math.log(d), G / d

    def solve_a(th: np.ndarray) -> tuple[float, np.ndarray, float, np.ndarray, float, np.ndarray, float]:
        """The temper a with C(softmax(a theta)) = 0: Newton steps inside a bracket (C increases with a)."""
        a = state["a"]
        lo, hi = 0.0, math.inf
        for _ in range(60):
            u = pmf(th, a)
            C, gC, obj, g_obj = constraint(u)
            mth = float(u @ th)
            dCa = float((gC * u) @ (th - mth))
            if abs(C) < 1e-10:
                break
            if C > 0:
                hi = min(hi, a)
            else:
                lo = max(lo, a)
            an = a - C / dCa if dCa > 0 else math.nan
            if not (lo < an < hi):
                an = 0.5 * (lo + hi) if math.isfinite(hi) else 2.0 * a
            if an < 1e-4 or an > 1e4 or hi - lo < 1e-13 * max(1.0, a):
                break
            a = float(an)
        return a, u, C, gC, obj, g_obj, dCa

    def _stalled() -> bool:
        if stall is None or len(bests) <= stall[0] or not math.isfinite(bests[-1]):
            return False
        state["stalled"] = bests[-1 - stall[0]] - bests[-1] <= stall[1] * abs(bests[-1])
        return bool(state["stalled"])

    def fg(x: np.ndarray) -> tuple[float, np.ndarray]:
        if time.perf_counter() - t0 > time_limit or state["evals"] >= max_evals or _stalled():
            raise _Stop
        state["evals"] += 1
        if progress is not None:
            progress()
        th = to_theta(x)
        a, u, C, gC, obj, g_obj, dCa = solve_a(th)
        state["a"] = a
        mth = float(u @ th)
        dobj_a = float((g_obj * u) @ (th - mth))
        dobj = a * u * (g_obj - float(g_obj @ u))
        dC = a * u * (gC - float(gC @ u))
        grad = dobj - (dobj_a / dCa) * dC if dCa != 0 else dobj
        feasible = abs(C) < 1e-6
        if feasible and obj < state["best"][0]:
            state["best"] = (obj, u.copy())
        hist.append(obj)
        bests.append(state["best"][0])
        scale = abs(hist[0]) if hist and hist[0] != 0 else 1.0
        if not feasible:  # no temper meets the constraint here: steer back with a large value
            return (abs(hist[0]) + abs(C) * cscale) / scale, back(grad) / scale
        return obj / scale, back(grad) / scale

    from scipy.optimize import minimize

    x0 = from_theta(theta0)
    bnds = None if bounds is None else [bounds] * x0.size
    if bounds is not None:
        x0 = np.clip(x0, bounds[0], bounds[1])
    message = ""
    try:
        res = minimize(
            fg,
            x0,
            jac=True,
            method="L-BFGS-B",
            bounds=bnds,
            options={"maxiter": max_evals, "maxcor": 30, "gtol": 1e-12, "ftol": 1e-13},
        )
        message = str(res.message)
    except _Stop:
        # which limit stopped it matters: the evaluation limit is reproducible, the time limit is not
        if state["stalled"]:
            assert stall is not None
            message = (
                f"stopped after {state['evals']} evaluations: the best point improved by at most "
                f"{stall[1]:g} (relative) over the last {stall[0]}"
            )
        elif state["evals"] >= max_evals:
            message = f"stopped at the evaluation limit ({max_evals})"
        else:
            message = f"stopped at the time limit ({time_limit:.3g} s, not reproducible)"
    except (FloatingPointError, ValueError, np.linalg.LinAlgError) as exc:  # pragma: no cover - numerical
        message = f"search stopped: {exc}"
    best = state["best"]
    return SearchResult(best[1], best[0], state["evals"], time.perf_counter() - t0, message, hist)
