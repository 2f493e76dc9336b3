"""Baselines for real-valued queries: the distortion of the classical continuous noises at (eps, delta).

A real query of sensitivity ``Delta`` released as ``q + X`` with a continuous noise ``X``;
each noise is the least noisy member of its family meeting (eps, delta)-DP for every shift
``|s| <= Delta`` (the family's worst shift is ``Delta``), and its cost is ``E|X|`` (``"mae"``)
or ``E X^2`` (``"mse"``):

``"laplace"``
    Laplace of scale ``b``. Pure DP (``delta = 0``): ``b = Delta / eps``. For ``delta > 0`` the
    **least** scale meeting delta: the Laplace mechanism with ``eps0 = Delta / b`` has the exact
    privacy profile ``delta(eps) = 1 - exp((eps - eps0) / 2)`` for ``eps < eps0`` (0 beyond), so
    ``b = Delta / (eps - 2 log(1 - delta))``. ``E|X| = b``, ``E X^2 = 2 b^2``.
``"gaussian"``
    The analytic Gaussian (Balle and Wang 2018, Theorem 8): the least ``sigma`` with
    ``Phi(Delta/(2 sigma) - eps sigma/Delta) - e^eps Phi(-Delta/(2 sigma) - eps sigma/Delta) <= delta``,
    by bisection on that exact formula (:func:`optnoise.mechanisms.gaussian.analytic_gaussian_sigma`).
    ``E X^2 = sigma^2``, ``E|X| = sigma sqrt(2/pi)``; ``inf`` at ``delta = 0`` (no Gaussian is pure DP).
``"truncated_laplace"``
    Geng, Ding, Guo and Kumar (AISTATS 2020), Definition 1: density ``B e^(-|x|/lam)`` on
    ``[-A, A]`` with ``lam = Delta / eps``, ``A = lam log(1 + (e^eps - 1) / (2 delta))`` and
    ``B = 1 / (2 lam (1 - e^(-A/lam)))``; with ``t = A / lam``,
    ``E|X| = lam (1 - e^-t (1 + t)) / (1 - e^-t)`` and
    ``E X^2 = lam^2 (2 - e^-t (t^2 + 2t + 2)) / (1 - e^-t)``. Its delta is the mass that a shift by
    ``Delta`` uncovers, ``P(X < Delta - A)`` (inside the overlap the density ratio is at most
    ``e^eps``). The closed form ``A`` holds for ``delta <= 1/2`` (then ``A >= Delta``); for
    ``1/2 < delta < 1`` the same family is calibrated by bisection on ``P(X < Delta - A) = delta``
    (an extension: the paper states ``delta < 1/2``). At ``delta = 0`` it is the Laplace.
``"staircase"``
    Geng and Viswanath (2014), the optimal pure eps-DP noise on the reals, closed forms
    (``b = e^-eps``): ``E|X| = Delta e^(eps/2) / (e^eps - 1)`` at ``gamma* = 1 / (1 + e^(eps/2))``, and
    ``E X^2 = Delta^2 (2^(-2/3) b^(2/3) (1 + b)^(2/3) + b) / (1 - b)^2``. Only at ``delta = 0``: for
    ``delta > 0`` no closed form of the optimal (eps, delta) noise is known (Geng et al. 2020 bound it;
    Selvi, Liu and Wiesemann 2025 compute it numerically), so the key is omitted.
"""

from __future__ import annotations

import math
from typing import Any

from scipy import optimize

from optnoise.design.grid import set_real_baselines
from optnoise.engine.validation import MAX_EPS, MAX_EPS_REASON, check_choice, check_delta, check_eps, check_positive
from optnoise.mechanisms.gaussian import analytic_gaussian_epsilon, analytic_gaussian_sigma

__all__ = [
    "REAL_METRICS",
    "composed_real_baselines",
    "real_baselines",
    "laplace_scale",
    "truncated_laplace_width",
    "staircase_cost",
]

#: The metrics of :func:`real_baselines`: ``E|X|`` and ``E X^2``.
REAL_METRICS = ("mae", "mse")


def laplace_scale(eps: float, delta: float, sensitivity: float = 1.0) -> float:
    """The least Laplace scale making ``q + Lap(b)`` (eps, delta)-DP at sensitivity ``Delta`` (module docstring)."""
    return sensitivity / (eps - 2.0 * math.log1p(-delta))


def truncated_laplace_width(eps: float, delta: float, sensitivity: float = 1.0) -> float:
    """``A``, the half-width of the truncated Laplace at (eps, delta) (module docstring); ``inf`` at delta = 0."""
    lam = sensitivity / eps
    if delta == 0.0:
        return math.inf
    if delta <= 0.5:
        return lam * math.log1p(math.expm1(eps) / (2.0 * delta))

    def uncovered(A: float) -> float:
        # P(X < Delta - A) for Delta/2 <= A <= Delta: the left half and the part of the right half below Delta - A
        return 0.5 + 0.5 * math.expm1(-(sensitivity - A) / lam) / math.expm1(-A / lam) - delta

    return float(optimize.brentq(uncovered, sensitivity / 2.0, sensitivity, xtol=1e-15, rtol=1e-15))


def _truncated_laplace_cost(lam: float, A: float, metric: str) -> float:
    if math.isinf(A):
        return lam if metric == "mae" else 2.0 * lam**2
    t = A / lam
    keep = -math.expm1(-t)  # 1 - e^-t
    if metric == "mae":
        return lam * (keep - t * math.exp(-t)) / keep
    return lam**2 * (2.0 * keep - math.exp(-t) * (t * t + 2.0 * t)) / keep


def staircase_cost(eps: float, metric: str, sensitivity: float = 1.0) -> float:
    """The Geng-Viswanath staircase's optimal ``E|X|`` or ``E X^2`` under pure eps-DP (module docstring)."""
    if metric == "mae":
        return sensitivity * math.exp(eps / 2.0) / math.expm1(eps)
    b = math.exp(-eps)
    return sensitivity**2 * (2.0 ** (-2.0 / 3.0) * (b * (1.0 + b)) ** (2.0 / 3.0) + b) / (-math.expm1(-eps)) ** 2


def real_baselines(*, eps: float, delta: float, metric: str, sensitivity: float = 1.0) -> dict[str, float]:
    """The ``metric`` of each classical noise calibrated to (eps, delta) at ``sensitivity`` (module docstring).

    Parameters
    ----------
    eps : float
        > 0 (at most the design limit, :data:`optnoise.engine.validation.MAX_EPS`).
    delta : float
        In ``[0, 1)``; 0 is pure eps-DP (then ``"staircase"`` is given and ``"gaussian"`` is ``inf``).
    metric : {"mae", "mse"}
        ``E|X|`` or ``E X^2``.
    sensitivity : float
        ``Delta > 0``: the largest change of the real query between neighbours.

    Returns
    -------
    dict
        ``"laplace"``, ``"gaussian"``, ``"truncated_laplace"`` and (``delta = 0``) ``"staircase"``.
    """
    eps = check_eps(eps, maximum=MAX_EPS, why=MAX_EPS_REASON)
    delta = check_delta(delta)
    if delta >= 1.0:
        raise ValueError("delta must be < 1 for real_baselines (at delta = 1 no noise is needed); got 1")
    metric = check_choice("metric", metric, REAL_METRICS)
    sens = check_positive("sensitivity", sensitivity)
    b = laplace_scale(eps, delta, sens)
    out = {"laplace": b if metric == "mae" else 2.0 * b * b}
    if delta == 0.0:
        out["gaussian"] = math.inf
    else:
        sigma = analytic_gaussian_sigma(eps, delta, sensitivity=sens)
        out["gaussian"] = sigma * math.sqrt(2.0 / math.pi) if metric == "mae" else sigma**2
    out["truncated_laplace"] = _truncated_laplace_cost(sens / eps, truncated_laplace_width(eps, delta, sens), metric)
    if delta == 0.0:
        out["staircase"] = staircase_cost(eps, metric, sens)
    return out


#: The Laplace's k-fold accounting grid (dp-accounting's pessimistic PLD): its eps is at most h k above the exact one.
LAPLACE_DISCRETIZATION = 1e-4


def composed_real_baselines(
    *,
    compositions: int,
    delta: float,
    metric: str,
    sensitivity: float = 1.0,
    eps: float | None = None,
    max_distortion: float | None = None,
) -> dict[str, float]:
    """The Gaussian, the Laplace and their best convolution calibrated to a k-fold composed guarantee.

    With ``eps`` (the distortion objective): each noise's least ``metric`` such that its k-fold composition is
    (eps, delta)-DP at ``sensitivity``. With ``max_distortion`` (the eps objective): the composed eps at delta
    of the noisiest member within the cap.

    * Gaussian: k releases of ``N(0, sigma^2)`` at sensitivity ``Delta`` are one Gaussian release at
      sensitivity ``sqrt(k) Delta`` (the sum of the k log-likelihood ratios is Gaussian), so the analytic
      Gaussian at ``sqrt(k) Delta`` is exact (:func:`analytic_gaussian_sigma`, :func:`analytic_gaussian_epsilon`).
    * Laplace: dp-accounting's pessimistic PLD of the Laplace mechanism at :data:`LAPLACE_DISCRETIZATION`,
      composed k times (an upper bound of its true eps or delta: the Laplace's cost is never understated);
      the least scale by bisection for the distortion objective.
    * ``"laplace_gaussian"``: the best Laplace + Gaussian convolution, the Laplace's share of the variance
      optimised (:func:`optnoise.mechanisms.real_convolution.best_laplace_gaussian`, its pessimistic PLD
      composed by dp-accounting at the same grid; that function, cached, also gives the share).

    Returns
    -------
    dict
        The ``metric`` (with ``eps``) or the composed eps (with ``max_distortion``) of each noise.
    """
    from dp_accounting.pld import privacy_loss_distribution as pld

    from optnoise.mechanisms.real_convolution import best_laplace_gaussian

    metric = check_choice("metric", metric, REAL_METRICS)
    sens = check_positive("sensitivity", sensitivity)
    k = int(compositions)
    delta = check_delta(delta)
    # the cost of each noise from its scale, and the scale from a cost
    g_cost = (lambda s: s * math.sqrt(2.0 / math.pi)) if metric == "mae" else (lambda s: s * s)
    l_cost = (lambda b: b) if metric == "mae" else (lambda b: 2.0 * b * b)

    def laplace(b: float) -> Any:
        one = pld.from_laplace_mechanism(
            b, sensitivity=sens, value_discretization_interval=LAPLACE_DISCRETIZATION, pessimistic_estimate=True
        )
        return one.self_compose(k)

    if max_distortion is not None:
        cap = check_positive("max_distortion", max_distortion)
        sigma = cap * math.sqrt(math.pi / 2.0) if metric == "mae" else math.sqrt(cap)
        b = cap if metric == "mae" else math.sqrt(cap / 2.0)
        conv, _ = best_laplace_gaussian(
            compositions=k, delta=delta, metric=metric, sensitivity=sens, max_distortion=cap
        )
        return {
            "gaussian": analytic_gaussian_epsilon(sigma, delta, sensitivity=math.sqrt(k) * sens),
            "laplace": float(laplace(b).get_epsilon_for_delta(delta)),
            "laplace_gaussian": conv,
        }
    eps = check_eps(eps, maximum=MAX_EPS, why=MAX_EPS_REASON)
    sigma = analytic_gaussian_sigma(eps, delta, sensitivity=math.sqrt(k) * sens)
    lo, hi = sens / eps, k * sens / eps  # per-release eps between eps / k (basic composition) and eps
    while laplace(lo).get_delta_for_epsilon(eps) <= delta:
        lo /= 2.0
    while hi / lo - 1.0 > 1e-6:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if laplace(mid).get_delta_for_epsilon(eps) <= delta else (mid, hi)
    conv, _ = best_laplace_gaussian(compositions=k, delta=delta, metric=metric, sensitivity=sens, eps=eps)
    return {"gaussian": g_cost(sigma), "laplace": l_cost(hi), "laplace_gaussian": conv}


def _installed(**kw: Any) -> dict[str, float]:
    """The baselines the design layer asks for: composed ones when ``compositions`` is given."""
    return composed_real_baselines(**kw) if "compositions" in kw else real_baselines(**kw)


set_real_baselines(_installed)  # the grid release's res.baselines (design cannot import mechanisms)
