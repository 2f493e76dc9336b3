"""Privacy accounting: exact delta(eps) curves for noise PMFs and mechanism matrices.

Three notions are computed, each as the worst case over neighbouring pairs:

``"dp"``  -- (eps, delta)-DP, the hockey stick
    ``H_eps(P||Q) = sum_o [P(o) - e^eps Q(o)]_+`` (Dwork et al. 2006; Kadam et al.
    2024, Definition 1).
``"pdp"`` -- (eps, delta)-probabilistic DP, Definition 2 of Kadam et al. taken
    literally: ``Pr_P(L > eps) = sum_o P(o) 1[P(o) > e^eps Q(o)]``, each pair
    separately. An output with ``Q(o) = 0 < P(o)`` has infinite privacy loss and
    always counts as leakage.
``"pdp-kadam"`` -- the notion behind the published MILP (13a)-(13h): one
    indicator ``u(eta)`` per noise value *shared by every shift*. ``u(eta) = 1``
    is forced when ``eta`` leaks for some shift (13f) and is allowed only when
    ``f(eta) >= e^eps f(eta + mu)`` for *every* shift (13g); the leak mass
    ``sum_eta u(eta) f(eta)`` is bounded once (13c). The delta of a PMF under
    this notion is the smallest delta for which (13) is feasible, ``inf`` when
    no delta is (a value that leaks for one shift but not "weakly" for all).

For a delta > 0 the notions are ordered: ``dp <= pdp <= pdp-kadam`` (PDP implies
DP, Theorem 1; the shared indicator only adds constraints). For delta = 0 all
three coincide with pure eps-DP.

Neighbourhoods are *directed*: each shift ``mu`` is one ordered pair
``(X, X')`` with ``Q(X) - Q(X') = mu (mod n+1)``. Pass a
:class:`~optnoise.privacy.neighborhood.Neighborhood` (symmetric by default) or an
explicitly symmetric shift list to cover both orders.

Tolerances: the functions here are exact for the floating-point numbers they
are given (``tol=0, rtol=0``). A solver returns PMFs whose tight ratio rows hold
only up to rounding; ``rtol`` makes an indicator read
``P(o) > e^eps (1 + rtol) Q(o)`` (a privacy-loss slack of ``log1p(rtol)``, which
:func:`optnoise.privacy.verification.pdp_rtol` sets for re-verification), and
``tol`` adds an absolute slack. Both must be finite and >= 0. Exact guarantees
for a sampled design come from :mod:`optnoise.deploy.certify`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from optnoise.engine.tolerance import check_tol
from optnoise.engine.validation import (
    MAX_CELLS,
    check_choice,
    check_delta,
    check_int,
    check_int_array,
    check_pmf,
    real_array,
    shown,
)

__all__ = [
    "NOTIONS",
    "hockey_stick",
    "pdp_leak",
    "pair_leak",
    "shifted_pmfs",
    "resolve_shifts",
    "delta_dp",
    "delta_pdp",
    "delta_pdp_kadam",
    "achieved_deltas",
    "eps_for_delta",
    "mechanism_delta",
    "mechanism_delta_dp",
    "mechanism_delta_pdp",
    "adjacent_pairs",
]

#: The privacy notions optnoise designs for and accounts in.
NOTIONS = ("pdp", "pdp-kadam", "dp")


def _eps_array(eps: Any) -> tuple[np.ndarray, bool]:
    arr = real_array("eps", eps)
    scalar = arr.ndim == 0
    arr = np.atleast_1d(arr)
    if np.any(~np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"eps must be finite and >= 0; got {shown(eps)}")
    return arr, scalar


def _ret(values: np.ndarray, scalar: bool) -> Any:
    return float(values[0]) if scalar else values


def _masses(name: str, x: Any) -> np.ndarray:
    """Finite non-negative masses, flattened (they need not sum to 1)."""
    arr = real_array(name, x).ravel()
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must contain finite, non-negative masses (no NaN, inf or negative entries)")
    return arr


def hockey_stick(p: Any, q: Any, eps: Any) -> Any:
    """Hockey-stick divergence ``H_eps(P||Q) = sum_o [P(o) - e^eps Q(o)]_+``.

    Parameters
    ----------
    p, q : array_like
        Probability masses over the same outputs (any shape; summed over all axes).
    eps : float or array_like
        Privacy level(s); the result has the shape of ``eps``.

    Returns
    -------
    float or ndarray
        The smallest delta with ``P(S) <= e^eps Q(S) + delta`` for every event S
        (Definition 1 of Kadam et al. 2024, one direction).
    """
    p, q = _masses("p", p), _masses("q", q)
    if p.shape != q.shape:
        raise ValueError(f"p and q must have the same number of outputs; got {p.size} and {q.size}")
    e, scalar = _eps_array(eps)
    # Only outputs where P > Q can contribute for eps >= 0; sorting by the log
    # ratio turns the sum over a grid of eps into cumulative sums.
    mask = p > 0
    p, q = p[mask], q[mask]
    with np.errstate(divide="ignore"):
        ratio = np.where(q > 0, np.log(p) - np.log(np.where(q > 0, q, 1.0)), np.inf)
    order = np.argsort(-ratio)
    ratio, p, q = ratio[order], p[order], q[order]
    cp = np.concatenate([[0.0], np.cumsum(p)])
    cq = np.concatenate([[0.0], np.cumsum(q)])
    # number of outputs with log ratio > eps
    k = np.searchsorted(-ratio, -e, side="left")
    out = np.maximum(cp[k] - np.exp(e) * cq[k], 0.0)
    return _ret(out, scalar)


def pdp_leak(p: Any, q: Any, eps: Any, *, tol: float = 0.0, rtol: float = 0.0) -> Any:
    """Probability of privacy loss above eps: ``sum_o P(o) 1[P(o) > e^eps (1 + rtol) Q(o) + tol]``.

    This is the per-pair quantity bounded by (eps, delta)-PDP (Definition 2,
    eq. (3) of Kadam et al. 2024). Outputs with ``Q(o) = 0 < P(o)`` leak unless
    ``P(o) <= tol``.
    """
    p, q = _masses("p", p), _masses("q", q)
    tol, rtol = check_tol("tol", tol), check_tol("rtol", rtol)
    if p.shape != q.shape:
        raise ValueError(f"p and q must have the same number of outputs; got {p.size} and {q.size}")
    e, scalar = _eps_array(eps)
    leak = p[None, :] > (np.exp(e) * (1.0 + rtol))[:, None] * q[None, :] + tol
    out = (leak * p[None, :]).sum(axis=1)
    return _ret(out, scalar)


def resolve_shifts(pmf: np.ndarray, shifts: Any) -> np.ndarray:
    """Shift vectors as an int array of shape (k, d), reduced modulo n+1."""
    from optnoise.privacy.neighborhood import Neighborhood

    n = pmf.shape[0] - 1
    if isinstance(shifts, Neighborhood):
        return shifts.resolve(n=n, dim=pmf.ndim)
    # exact integers in [-n, n] (as for Neighborhood.resolve), checked before any conversion
    arr = check_int_array("shifts", shifts, minimum=-n, maximum=n)
    if arr.size == 0:
        raise ValueError("shifts must be a non-empty set of query shifts")
    if pmf.ndim == 1:
        arr = arr.reshape(-1, 1)
    elif arr.ndim == 1:
        arr = arr.reshape(1, -1)
    if arr.shape[1] != pmf.ndim:
        raise ValueError(f"each shift must have {pmf.ndim} coordinates to match the pmf; got shape {arr.shape}")
    arr = np.mod(arr, n + 1)
    if np.any(np.all(arr == 0, axis=1)):
        raise ValueError("shifts must not contain 0 (mod n+1): a shift of 0 is not a neighbour")
    return arr


def shifted_pmfs(pmf: Any, shifts: Any) -> tuple[np.ndarray, np.ndarray]:
    """The pmf and, for each shift ``mu``, the array ``g_mu(eta) = f(eta + mu)``.

    Returns ``(f, g)`` with ``f`` of shape ``(N,)`` and ``g`` of shape ``(k, N)``
    where ``N = (n+1)**d``; the shift is modulo ``n+1`` in every coordinate.
    """
    f = check_pmf("pmf", pmf, atol=1e-6)
    if f.ndim > 1 and len(set(f.shape)) != 1:
        raise ValueError(f"pmf must have shape (n+1,)*d; got {f.shape}")
    mus = resolve_shifts(f, shifts)
    if len(mus) * f.size > MAX_CELLS:
        raise ValueError(
            f"shifts: {len(mus)} shifts over {f.size} noise values exceed the accounting limit of {MAX_CELLS} pairs"
        )
    g = np.stack([np.roll(f, shift=tuple(-m for m in mu), axis=tuple(range(f.ndim))).ravel() for mu in mus])
    return f.ravel(), g


def delta_dp(pmf: Any, shifts: Any, eps: Any) -> Any:
    """(eps, delta)-DP delta of the modulo-addition mechanism with noise ``pmf``.

    ``max_mu sum_eta [f(eta) - e^eps f(eta + mu)]_+`` over the shift set
    (Kadam et al. 2024, eq. (8) with the hockey stick of Definition 1).
    Vectorised over ``eps``. With a symmetric shift set this covers both
    orders of every neighbouring pair.
    """
    f, g = shifted_pmfs(pmf, shifts)
    vals = np.stack([np.atleast_1d(hockey_stick(f, gm, eps)) for gm in g])
    out = vals.max(axis=0)
    return float(out[0]) if np.ndim(eps) == 0 else out


def delta_pdp(pmf: Any, shifts: Any, eps: Any, *, tol: float = 0.0, rtol: float = 0.0) -> Any:
    """(eps, delta)-PDP delta (Definition 2 taken literally, one indicator per shift).

    ``max_mu sum_eta f(eta) 1[f(eta) > e^eps (1 + rtol) f(eta+mu) + tol]``. Vectorised over ``eps``.
    """
    f, g = shifted_pmfs(pmf, shifts)
    vals = np.stack([np.atleast_1d(pdp_leak(f, gm, eps, tol=tol, rtol=rtol)) for gm in g])
    out = vals.max(axis=0)
    return float(out[0]) if np.ndim(eps) == 0 else out


def delta_pdp_kadam(pmf: Any, shifts: Any, eps: Any, *, tol: float = 0.0, rtol: float = 0.0) -> Any:
    """Smallest delta for which ``pmf`` is feasible in the published MILP (13).

    ``u(eta) = 1`` iff ``f(eta) > e^eps (1 + rtol) f(eta+mu) + tol`` for some shift
    (13f); (13g) then needs ``f(eta) >= e^eps (1 - rtol) f(eta+mu) - tol`` for every
    shift, and the delta is ``sum_eta u(eta) f(eta)`` (13c). Returns ``inf`` at an
    eps where (13g) fails, since no delta makes the PMF feasible there.
    """
    tol, rtol = check_tol("tol", tol), check_tol("rtol", rtol)
    f, g = shifted_pmfs(pmf, shifts)
    e, scalar = _eps_array(eps)
    scale = np.exp(e)[:, None, None]
    leaks = f[None, None, :] > scale * (1.0 + rtol) * g[None, :, :] + tol  # (eps, shift, eta)
    u = leaks.any(axis=1)
    weak_all = (f[None, None, :] >= scale * (1.0 - rtol) * g[None, :, :] - tol).all(axis=1)
    consistent = np.all(~u | weak_all, axis=1)
    out = np.where(consistent, (u * f[None, :]).sum(axis=1), np.inf)
    return _ret(out, scalar)


def achieved_deltas(
    pmf: Any, shifts: Any, eps: float, *, tol: float = 0.0, rtol: float = 0.0, pure: bool = False
) -> dict[str, float]:
    """Delta of ``pmf`` under each notion at ``eps``: ``{"pdp", "pdp-kadam", "dp"}``.

    ``tol``/``rtol`` are the PDP indicator slacks (see :func:`delta_pdp`); the DP
    hockey stick has no indicator and uses none, except with ``pure=True`` (a target
    delta of 0, pure DP), where it is read at the same slackened eps
    ``eps + log(1 + rtol)`` as the indicators: at delta = 0 every notion is one
    constraint and gets one tolerance (:mod:`optnoise.privacy.verification`).
    Re-verification uses ``rtol=optnoise.privacy.verification.pdp_rtol(eps)``.
    """
    return {
        "pdp": float(delta_pdp(pmf, shifts, eps, tol=tol, rtol=rtol)),
        "pdp-kadam": float(delta_pdp_kadam(pmf, shifts, eps, tol=tol, rtol=rtol)),
        "dp": float(delta_dp(pmf, shifts, eps + math.log1p(rtol) if pure else eps)),
    }


_DELTA_FUNCS = {"dp": delta_dp, "pdp": delta_pdp, "pdp-kadam": delta_pdp_kadam}


def eps_for_delta(pmf: Any, shifts: Any, delta: float, *, notion: str = "dp") -> float:
    """Smallest eps >= 0 with ``delta_<notion>(pmf, shifts, eps) <= delta``.

    All three delta curves are non-increasing in eps and change only at the
    log-likelihood ratios ``ln f(eta) - ln f(eta+mu)``; the DP curve is
    ``a - e^eps b`` between consecutive ratios. The answer is therefore either
    a ratio, 0, or the root of that linear-in-``e^eps`` piece. Returns ``inf``
    when no finite eps achieves ``delta`` (a leak through a zero mass).
    """
    check_delta(delta)
    check_choice("notion", notion, NOTIONS)
    f, g = shifted_pmfs(pmf, shifts)
    func = _DELTA_FUNCS[notion]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.log(f)[None, :] - np.log(g)
    cand = np.unique(ratios[np.isfinite(ratios) & (ratios > 0)])
    # A ratio is the threshold of a strict inequality; in floating point the
    # inequality may still hold at it, so the next few floats are candidates too.
    cand = np.unique(np.concatenate([[0.0], cand, cand + 8 * np.spacing(cand)]))
    vals = np.atleast_1d(func(pmf, shifts, cand))
    ok = np.nonzero(vals <= delta + 1e-15)[0]
    if ok.size == 0:
        return float("inf")
    i = int(ok[0])
    if func is not delta_dp or i == 0:  # the other curves are steps: their value changes only at a ratio
        return float(cand[i])
    # On (cand[i-1], cand[i]] the maximising shift may change, so bisect the
    # monotone curve there instead of solving one linear piece.
    lo, hi = float(cand[i - 1]), float(cand[i])
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if delta_dp(pmf, shifts, mid) <= delta:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-15 * max(1.0, hi):
            break
    return hi


# --------------------------------------------------------------------------
# General mechanisms given as a matrix P[input, output]
# --------------------------------------------------------------------------


def adjacent_pairs(n_inputs: int, *, sensitivity: int = 1, symmetric: bool = True) -> np.ndarray:
    """Ordered neighbour pairs ``(x, x')`` of a count query on ``{0..n_inputs-1}``.

    Neighbours differ by 1..``sensitivity`` in value; ``symmetric`` adds both orders.
    """
    n_inputs = check_int("n_inputs", n_inputs, minimum=1, maximum=MAX_CELLS)
    sensitivity = check_int("sensitivity", sensitivity, minimum=1, maximum=MAX_CELLS)
    sensitivity = min(sensitivity, n_inputs)  # larger differences have no pair anyway
    if n_inputs * sensitivity > MAX_CELLS:
        raise ValueError(f"n_inputs * sensitivity = {n_inputs * sensitivity} exceeds the limit {MAX_CELLS}")
    lows = [np.arange(n_inputs - s, dtype=np.int64) for s in range(1, sensitivity + 1)]
    arr = np.stack(
        [np.concatenate(lows), np.concatenate([x + s for s, x in enumerate(lows, start=1)])], axis=1
    ).reshape(-1, 2)
    if symmetric:
        arr = np.concatenate([arr, arr[:, ::-1]])
    return arr


def _check_mechanism(P: Any, pairs: Any) -> tuple[np.ndarray, np.ndarray]:
    P = real_array("P", P)
    if P.ndim != 2:
        raise ValueError(f"P must be a 2-D matrix P[input, output]; got shape {P.shape}")
    if not np.all(np.isfinite(P)) or np.any(P < 0):
        raise ValueError("P must contain finite, non-negative probabilities")
    if np.any(np.abs(P.sum(axis=1) - 1) > 1e-6):
        raise ValueError("each row of P must sum to 1 (P[input, :] is the output distribution)")
    # exact integer indices: a fractional index such as 0.5 is refused, not truncated
    pairs = check_int_array("pairs", pairs, minimum=0, maximum=P.shape[0] - 1)
    if pairs.size == 0 or pairs.size % 2:
        raise ValueError(f"pairs must be a non-empty list of (input, input) pairs; got shape {pairs.shape}")
    pairs = pairs.reshape(-1, 2)
    return P, pairs


def pair_leak(notion: str, eps: Any, *, tol: float = 0.0, rtol: float = 0.0) -> Callable[[Any, Any], Any]:
    """``leak(p, q)``: the delta of one ordered pair of output distributions at ``eps`` under ``notion``,
    ``"dp"`` (:func:`hockey_stick`) or ``"pdp"`` (:func:`pdp_leak`, with its slacks ``tol``/``rtol``)."""
    rules: dict[str, Callable[[Any, Any], Any]] = {
        "dp": lambda p, q: hockey_stick(p, q, eps),
        "pdp": lambda p, q: pdp_leak(p, q, eps, tol=tol, rtol=rtol),
    }
    return rules[check_choice("notion", notion, tuple(rules))]


def mechanism_delta(P: Any, pairs: Any, eps: Any, *, notion: str = "dp", tol: float = 0.0, rtol: float = 0.0) -> Any:
    """Delta of a general mechanism ``P[input, output]`` over ordered neighbour ``pairs``.

    ``notion`` is ``"dp"`` (hockey stick) or ``"pdp"`` (Definition 2). Use this
    for clamped mechanisms, eqs. (55)-(56), and any baseline that is not a
    modulo-addition mechanism. Vectorised over ``eps``.
    """
    check_choice("notion", notion, ("dp", "pdp"))
    P, pairs = _check_mechanism(P, pairs)
    leak = pair_leak(notion, eps, tol=tol, rtol=rtol)
    vals = [np.atleast_1d(leak(P[a], P[b])) for a, b in pairs]
    out = np.max(np.stack(vals), axis=0)
    return float(out[0]) if np.ndim(eps) == 0 else out


def mechanism_delta_dp(P: Any, pairs: Any, eps: Any) -> Any:
    """(eps, delta)-DP delta of a mechanism matrix; see :func:`mechanism_delta`."""
    return mechanism_delta(P, pairs, eps, notion="dp")


def mechanism_delta_pdp(P: Any, pairs: Any, eps: Any, *, tol: float = 0.0) -> Any:
    """(eps, delta)-PDP delta of a mechanism matrix; see :func:`mechanism_delta`."""
    return mechanism_delta(P, pairs, eps, notion="pdp", tol=tol)
