"""The search of the Renyi-DP / zCDP design: a log-barrier path in log space and a primal-dual refinement.

The problem, its homogenised constraints ``G_i`` and the certified lower bound are those of
:mod:`optnoise.privacy.renyi_problem`; :mod:`optnoise.privacy.renyi_solve` drives the search, bounds
and statuses. This module computes the points and multipliers:

1. **Search** (:func:`barrier_newton`). Log-barrier path following on ::

       phi(f) = c . f - mu sum_i log(-G_i(f)) - mu sum_b w_b log(e^eps_inf f(J_b) - f(eta_b))

   over the simplex, in the variables ``logf = log f``: a Newton step in f-space, written in the
   diagonal scaling ``diag(f)`` so that ``f`` stays positive (``f <- f exp(t dl)``) and masses of 1e-300
   keep their ratios, globalised by Armijo backtracking on the convex ``phi``. Every Newton matrix is
   assembled from log-ratios and equilibrated in log space (``log sqrt`` of its diagonal), so masses far
   below the float64 range do not underflow. The weights ``w_b = f(J_b)`` (fixed per stage) make the
   ``D_inf`` barrier add about ``mu`` per shift to the duality gap, not ``mu N``, and keep it from
   propping up the far tails. At a centre, ``y_i = mu / -G_i`` and ``nu_b = mu w_b / s_b``
   (:func:`centre_multipliers`) make the Lagrangian bound about ``mu (I + K)`` below the value.
2. **Refinement** (:func:`newton_refine`). Near a centre the barrier objective cannot resolve the far tails (its
   gradient is scaled by ``f``), so the barrier's KKT system is solved by a primal-dual Newton method
   with the multipliers ``y`` as unknowns: ``c + sum_i y_i grad G_i + B^T nu - lambda = 0`` in
   **f-space**, ``y_i G_i = -mu``, ``sum f = 1`` (``nu`` follows from ``logf``), column-equilibrated.
   This brings the f-space stationarity, which the bound depends on, to working precision in every mass.

Nothing here needs to be exact: any point and multipliers give a valid bound
(:meth:`~optnoise.privacy.renyi_problem.RenyiProblem.lower_bound`) and every returned point is
re-checked (:mod:`optnoise.privacy.renyi_solve`); accuracy only makes the gap small.
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.special import logsumexp

from optnoise.privacy.renyi_problem import RenyiProblem

__all__ = ["MAX_STEP", "barrier_newton", "barrier_value", "centre_multipliers", "newton_refine"]

#: Largest change of a log mass in one damped barrier Newton step.
MAX_STEP = 5.0


# --------------------------------------------------------------------------------------------
# the barrier Newton step
# --------------------------------------------------------------------------------------------


def barrier_value(prob: RenyiProblem, logf: np.ndarray, mu: float, logw: np.ndarray | None) -> float:
    """``phi`` of the module docstring at the normalised ``logf``; ``inf`` outside the strict interior."""
    g, logs = prob.slacks(logf)
    if not np.all(g > 0):
        return math.inf
    out = prob.value(logf) - mu * float(np.sum(np.log(g)))
    if logw is not None:
        if logs is None or np.any(np.isnan(logs)):
            return math.inf
        out -= mu * float(np.sum(np.exp(logw) * logs))
    return out


def _log_hessian(prob: RenyiProblem, y: np.ndarray, parts: dict[str, np.ndarray]) -> np.ndarray:
    """``sum_i y_i d(grad G_i)/dl``: the f-space Hessian times ``diag(f)``, from log-ratios only.

    Term ``eta`` of ``G_i`` puts ``P(eta)`` in row ``eta`` (``dP/dl(eta) = A1``, ``dP/dl(J) = -A1``) and
    ``Q(eta)`` in row ``J(eta)`` (``dQ/dl(eta) = -AQ``, ``dQ/dl(J) = AQ``). Each shift's index pairs are
    distinct, so the updates are plain fancy-index additions.
    """
    N = prob.size
    rows = np.arange(N)
    H = np.zeros((N, N))
    for m in range(prob.shifts):
        sel = prob.shift == m
        J = prob.idx[m]
        wa, wq = y[sel] @ parts["A1"][sel], y[sel] @ parts["AQ"][sel]
        H[rows, rows] += wa
        H[rows, J] -= wa
        H[J, rows] -= wq
        H[J, J] += wq
    return H


def _pure_rows(
    prob: RenyiProblem, logf: np.ndarray, mu: float, logw: np.ndarray, logs: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``D_inf`` barrier rows ``b = (m, eta)``: multipliers, ratios and denominators, shape ``(K, N)``.

    ``nu_b = mu w_b / s_b`` with ``s_b = e^eps_inf f(J) - f(eta) = f(J) (e^eps_inf - r)``,
    ``r = f(eta) / f(J)``; ``nu`` is the row's f-space multiplier (gradient ``nu_b (e_eta - e^eps_inf e_J)``).
    """
    assert prob.eps_inf is not None
    r = np.exp(prob.log_ratios(logf))
    den = math.exp(prob.eps_inf) - r
    return mu * np.exp(logw - logs), r, den


def _f_gradient(prob: RenyiProblem, y: np.ndarray, grads: np.ndarray, nu: np.ndarray | None) -> np.ndarray:
    """``c + sum_i y_i grad G_i + B^T nu``: the f-space gradient of the barrier (and the certificate's ``e``)."""
    out = prob.cost + y @ grads
    if nu is not None and prob.eps_inf is not None:
        ee = math.exp(prob.eps_inf)
        for m in range(prob.shifts):
            out += nu[m]
            out[prob.idx[m]] -= ee * nu[m]
    return out


def _newton_direction(
    prob: RenyiProblem, logf: np.ndarray, mu: float, logw: np.ndarray | None
) -> tuple[np.ndarray, float, float] | None:
    """The barrier Newton step ``dl`` at the normalised ``logf``, its decrement and the f-space residual.

    The f-space Newton system ``H_f df + lambda 1 = -grad``, ``sum df = 0`` in ``df = f dl`` reads
    ``diag(f) H_f diag(f) dl + lambda f = -f grad``, ``f . dl = 0``. Its matrix is the log-Hessian
    scaled by ``f``, plus the Gauss-Newton terms of the logarithms; each entry is formed as
    ``exp(log numbers)`` after dividing by ``D = sqrt(diag)`` (computed in logs), so that no mass is
    formed where it underflows. Returns ``None`` outside the strict interior.
    """
    g, logs = prob.slacks(logf)
    if not np.all(g > 0):
        return None
    y = mu / g
    parts = prob.tangents(logf)
    grads = prob.gradients(parts)
    if not np.all(np.isfinite(grads)):
        return None
    Hl = _log_hessian(prob, y, parts)
    nu = vectors = None
    if logw is not None:
        if logs is None or np.any(np.isnan(logs)):
            return None
        nu, r, den = _pure_rows(prob, logf, mu, logw, logs)
        # mu w_b (f a_b)(f a_b)^T / s_b^2 = v v^T, v = sqrt(mu w_b) (f a_b) / s_b, a_b = e_J e^eps_inf - e_eta:
        # its entries, in logs: 0.5 log(mu w_b) + logf - log s_b (+ eps_inf at J)
        half = 0.5 * (math.log(mu) + logw) - logs
        vectors = (half + logf[None, :], half + prob.eps_inf + logf[prob.idx])
    grad = _f_gradient(prob, y, grads, nu)
    # the Gauss-Newton factor F = diag(y / sqrt(mu)) grads diag(f), in logs: grads reach 1e200 where f is tiny
    with np.errstate(divide="ignore"):
        logF = np.log(np.abs(y[:, None] * grads)) - 0.5 * math.log(mu) + logf[None, :]
        # log of diag(H): the log-Hessian's diagonal times f, the Gauss-Newton terms, the D_inf rows
        pieces = [logf + np.log(np.maximum(np.diag(Hl), 0.0)), logsumexp(2 * logF, axis=0)]
    if vectors is not None:
        sq = np.full(prob.size, -np.inf)
        for m in range(prob.shifts):
            sq = np.logaddexp(sq, 2 * vectors[0][m])
            sq[prob.idx[m]] = np.logaddexp(sq[prob.idx[m]], 2 * vectors[1][m])
        pieces.append(sq)
    logd = 0.5 * logsumexp(np.stack(pieces), axis=0)
    logd = np.where(np.isfinite(logd), logd, 0.0)
    scale = np.exp(logf - logd)  # f / D
    with np.errstate(over="ignore", invalid="ignore"):  # the exponent is large only where Hl is 0 (no neighbours)
        H = np.where(Hl != 0, np.exp(logf[:, None] - logd[:, None] - logd[None, :]) * Hl, 0.0)
    F = np.sign(grads) * np.exp(logF - logd[None, :])
    H += F.T @ F
    if vectors is not None:
        rows = np.arange(prob.size)
        for m in range(prob.shifts):
            J = prob.idx[m]
            a, b = np.exp(vectors[0][m] - logd), np.exp(vectors[1][m] - logd[J])
            H[rows, rows] += a * a
            H[J, J] += b * b
            H[rows, J] -= a * b
            H[J, rows] -= a * b
    rhs = -grad * scale
    z = _constrained_solve(0.5 * (H + H.T), scale, rhs)
    if z is None:
        return None
    step = z * np.exp(-logd)
    decrement = float(rhs @ z)  # -(f grad) . dl
    residual = float(np.max(np.abs(grad - float(np.exp(logf) @ grad))))
    return step, decrement, residual


def _constrained_solve(H: np.ndarray, a: np.ndarray, rhs: np.ndarray) -> np.ndarray | None:
    """``z`` with ``H z + lambda a = rhs``, ``a . z = 0``, for a positive semidefinite, equilibrated ``H``.

    Through a Cholesky factor of ``H + tau I`` (``tau`` from 1e-14 up, until it factors), so that
    ``rhs . z = rhs' H^-1 rhs - (a' H^-1 rhs)^2 / (a' H^-1 a) >= 0`` (Cauchy-Schwarz): the step is a
    descent direction however ill-conditioned ``H`` is; the indefinite KKT matrix gives no such guarantee.
    """
    eye = np.eye(H.shape[0])
    tau = 1e-14
    while tau < 1.0:
        try:
            factor = cho_factor(H + tau * eye)
        except np.linalg.LinAlgError:
            tau *= 100.0
            continue
        u, v = cho_solve(factor, rhs), cho_solve(factor, a)
        lam = float(a @ u) / float(a @ v)
        return u - lam * v
    return None


def barrier_newton(
    prob: RenyiProblem,
    logf: np.ndarray,
    mu: float,
    logw: np.ndarray | None,
    *,
    deadline: float | None,
    iters: int = 100,
) -> tuple[np.ndarray, bool]:
    """Minimise ``phi`` from a strictly feasible ``logf``; returns the point and whether it is centred.

    Damped Newton steps (Armijo backtracking, steps capped at :data:`MAX_STEP` in ``logf``) until the decrement is below
    ``1e-3 mu``; then full steps while the f-space stationarity residual keeps decreasing: close to the
    centre they converge quadratically also in the far tails, where ``phi`` cannot resolve progress.
    """
    logf = logf - logsumexp(logf)
    phi = barrier_value(prob, logf, mu, logw)
    cscale = max(float(np.max(np.abs(prob.cost))), 1e-300)
    best_residual = math.inf
    for _ in range(iters):
        if deadline is not None and time.perf_counter() > deadline:
            return logf, False
        newton = _newton_direction(prob, logf, mu, logw)
        if newton is None or not np.all(np.isfinite(newton[0])) or not math.isfinite(newton[1]):
            return logf, False
        step, decrement, residual = newton
        if best_residual < math.inf or decrement < 1e-3 * mu:
            if residual <= 1e-13 * cscale:
                return logf, True
            trial = logf + step
            trial -= logsumexp(trial)
            value = barrier_value(prob, trial, mu, logw)
            if math.isfinite(value) and residual < best_residual:
                best_residual = residual
                logf, phi = trial, value
                continue
            return logf, residual <= 1e-6 * cscale
        t = min(1.0, MAX_STEP / max(float(np.max(np.abs(step))), 1e-300))
        while t > 1e-12:
            trial = logf + t * step
            trial -= logsumexp(trial)
            value = barrier_value(prob, trial, mu, logw)
            if value <= phi - 1e-4 * t * decrement:
                break
            t *= 0.5
        else:
            return logf, decrement < 1e-6 * max(abs(phi), 1.0)
        logf, phi = trial, value
    return logf, False


def centre_multipliers(
    prob: RenyiProblem, logf: np.ndarray, mu: float, logw: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray | None]:
    """The barrier's multipliers at ``logf``: ``y_i = mu / -G_i`` and ``nu_b = mu w_b / s_b``."""
    g, logs = prob.slacks(logf)
    y = mu / g
    if logw is None or logs is None:
        return y, None
    return y, _pure_rows(prob, logf, mu, logw, logs)[0]


# --------------------------------------------------------------------------------------------
# the primal-dual refinement
# --------------------------------------------------------------------------------------------


def newton_refine(
    prob: RenyiProblem,
    logf: np.ndarray,
    y: np.ndarray,
    mu: float,
    logw: np.ndarray | None,
    *,
    rtol: float,
    deadline: float | None,
    iters: int = 30,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Primal-dual Newton on the barrier KKT system in unknowns ``(logf, y, lambda)`` (module docstring).

    Residuals: f-space stationarity ``(c + sum y_i grad G_i + B^T nu(logf) - lambda) / max|c|``,
    complementarity ``y_i G_i + mu`` and ``sum f - 1``; the step keeps ``y > 0`` and ``G < 0``
    and must reduce the residual norm. Stops once stationarity is below ``rtol`` and complementarity
    below ``1e-3 mu``. Returns the point of least stationarity residual and its multipliers.
    """
    N, I = prob.size, prob.constraints  # noqa: E741  (the docstrings' I)
    cs = max(float(np.max(np.abs(prob.cost))), 1e-300)
    ee = math.exp(prob.eps_inf) if prob.eps_inf is not None else 0.0
    rows = np.arange(N)

    def system(logf: np.ndarray, y: np.ndarray, lam: float) -> tuple[np.ndarray, np.ndarray, np.ndarray | None] | None:
        g, logs = prob.slacks(logf)
        if not np.all(g > 0) or not np.all(y > 0):
            return None
        parts = prob.tangents(logf)
        grads = prob.gradients(parts)
        if not np.all(np.isfinite(grads)):
            return None
        Hl = _log_hessian(prob, y, parts)
        nu = None
        if logw is not None:
            if logs is None or np.any(np.isnan(logs)):
                return None
            nu, r, den = _pure_rows(prob, logf, mu, logw, logs)
            for m in range(prob.shifts):
                # d nu_b / dl = nu_b (r e_eta - e^eps_inf e_J) / den, entering rows eta (+1) and J (-e^eps_inf)
                J, de, dj = prob.idx[m], nu[m] * r[m] / den[m], -nu[m] * ee / den[m]
                Hl[rows, rows] += de
                Hl[rows, J] += dj
                Hl[J, rows] -= ee * de
                Hl[J, J] -= ee * dj
        stationarity = _f_gradient(prob, y, grads, nu) - lam
        f = np.exp(logf)
        res = np.concatenate([stationarity / cs, -y * g + mu, [f.sum() - 1.0]])
        jac = np.zeros((N + I + 1, N + I + 1))
        jac[:N, :N] = Hl / cs
        jac[:N, N : N + I] = grads.T / cs
        jac[:N, -1] = -1.0 / cs
        with np.errstate(divide="ignore"):  # y grad G_i f, in logs: gradients reach 1e200 where f is tiny
            jac[N : N + I, :N] = np.sign(grads) * np.exp(np.log(np.abs(y[:, None] * grads)) + logf[None, :])
        jac[N : N + I, N : N + I] = np.diag(-g)
        jac[-1, :N] = f
        return res, jac, nu

    g0, _ = prob.slacks(logf)
    lam = prob.value(logf) - float(y @ g0)
    current = system(logf, y, lam)
    if current is None:
        return logf, y, centre_multipliers(prob, logf, mu, logw)[1]
    res, jac, nu = current
    best = (logf, y, nu, float(np.max(np.abs(res[:N]))))
    for _ in range(iters):
        if deadline is not None and time.perf_counter() > deadline:
            break
        cn = np.maximum(np.max(np.abs(jac), axis=0), 1e-300)  # column equilibration
        try:
            step = np.linalg.solve(jac / cn[None, :], -res) / cn
        except np.linalg.LinAlgError:
            break
        dl, dy, dlam = step[:N], step[N : N + I], step[-1]
        t = 1.0
        if np.any(dy < 0):
            t = min(1.0, 0.99 * float(np.min(-y[dy < 0] / dy[dy < 0])))
        t = min(t, 2.0 / max(float(np.max(np.abs(dl))), 1e-300))
        norm = float(np.linalg.norm(res))
        while t > 1e-8:
            trial_l = logf + t * dl
            trial_l -= logsumexp(trial_l)
            trial = system(trial_l, y + t * dy, lam + t * dlam)
            if trial is not None and float(np.linalg.norm(trial[0])) < (1 - 1e-4 * t) * norm:
                break
            t *= 0.5
        else:
            break
        logf, y, lam = trial_l, y + t * dy, lam + t * dlam
        res, jac, nu = trial
        stat = float(np.max(np.abs(res[:N])))
        if stat < best[3]:
            best = (logf, y, nu, stat)
        if stat < rtol and float(np.max(np.abs(res[N:-1]))) < 1e-3 * mu:
            break
    return best[0], best[1], best[2]


#: Former name of :func:`newton_refine` ("polish" named three different steps; this one is a Newton refinement).
polish = newton_refine
