"""Baseline mechanisms for queries with answers in {0..n} (Kadam et al. 2024, "Numerical results").

The paper compares its optimal noise with five baselines (Figs. 5-8):

============================  ==========  ========================================
mechanism                     parameter   reference
============================  ==========  ========================================
two-sided geometric           ``alpha``   Ghosh, Roughgarden, Sundararajan 2009
discrete Gaussian             ``sigma2``  Canonne, Kamath, Steinke 2020
exponential mechanism         ``beta``    McSherry-Talwar 2007 via Gumbel noise
                                          (Adams 2013; the paper's footnote 6)
discrete count mechanism      ``rho``     Sadeghi, Asoodeh, Calmon 2020
data-independent              ``rho``     Ravi et al. 2022
============================  ==========  ========================================

Every mechanism is returned as a :class:`Mechanism`: the matrix
``P[q, k] = Pr(q~ = k | q)`` over ``q, k in {0..n}``, in one of the variants
the paper uses:

``"modulo"``
    ``q~ = q + eta (mod n+1)``, the paper's own release (eq. (4) with the
    modulo sum). An integer noise is wrapped onto ``{0..n}``:
    ``f(eta) = sum_j g(eta + j (n+1))``.
``"clamped"``
    ``q~ = min(max(0, q + eta), n)``, eq. (55), with the output distribution
    (56). The printed (56) gives ``Pr(q~ = n | q) = 1 - F(n - q)``; the mass
    ``g(n - q)`` belongs to that output too (``q + eta = n``), so the correct
    value, used here, is ``1 - F(n - q - 1)``; with the printed one the rows
    would not sum to 1.
``"range"``
    Only for the exponential mechanism: candidates ``r in {0..n}`` scored by
    ``-|r - q|``, the classical mechanism on the answer range (not additive).
    Its ``"modulo"`` variant scores by the wrapped distance
    ``-min(|r-q|, n+1-|r-q|)``, which makes it an additive modulo mechanism.

Exponential mechanism through Gumbel noise (footnote 6). Add independent
Gumbel noise ``G_r ~ Gumbel(m, beta)`` (any location m) to every candidate's
score ``u(q, r)`` and release the argmax. Since ``max_r (u_r + G_r)`` is
Gumbel-distributed and ``Pr(argmax = r) = e^{u_r/beta} / sum_s e^{u_s/beta}``
(the Gumbel-max trick), the output distribution is exactly the exponential
mechanism ``P[q, r] = softmax_r(u(q, r) / beta)``; ``beta`` plays the role of
``2 Delta / eps_EM``. The location ``m`` cancels, which is why the paper's
``Gumbel(eps, beta')`` has only one effective parameter.

Discrete count mechanism (``rho``). The noise of Sadeghi et al. lives on
``{-N..N}`` with ``P(0) = 1 - rho`` and ``P(+-i) = rho alpha_i / 2``, where the
weights ``alpha`` are the optimal ones of their Definition 2 for the privacy
level at which the mechanism is used (:func:`optnoise.mechanisms.count.optimal_alpha`).
Their mechanism changes the PMF near the ends of the range; here the one
noise is wrapped (``"modulo"``) or clamped, with ``N = n // 2`` by default so
that the wrapped support does not fold onto itself.

Errors and privacy. :meth:`Mechanism.error_rate` and :meth:`Mechanism.mse`
are averaged over a uniform true answer (or the worst one); the MSE is
``E[d(q~, q)^2]`` with ``d`` the plain distance ``|q~ - q|`` (the released
answer's error, Definition 4), the wrapped distance, or, for modulo
mechanisms, the paper's noise cost ``eta^2`` of (11). :meth:`Mechanism.delta`
gives ``delta(eps)`` under ``"dp"`` (hockey stick), ``"pdp"`` (Definition 2)
and, for modulo mechanisms, ``"pdp-kadam"`` (the MILP (13)), all through
:mod:`optnoise.privacy`. :meth:`IntegerNoise.delta` is the same for the
un-truncated mechanism ``q + eta`` on the integers (the paper's ``n = inf``
curves of Fig. 6).

Fitting a baseline to the paper's targets: :func:`match_parameter` finds the
parameter with a given MSE or error rate (e.g. MSE = 0.6101, ER = 0.3 in
Fig. 7), :func:`calibrate` the least-noise parameter meeting
``delta(eps) <= delta`` (Fig. 5).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import logsumexp

from optnoise.engine.validation import (
    check_choice,
    check_delta,
    check_eps,
    check_int,
    check_positive,
    check_probability,
)
from optnoise.mechanisms.count import optimal_alpha
from optnoise.privacy.neighborhood import Neighborhood
from optnoise.privacy.noise_families import (
    IntegerNoise,
    Mechanism,
    check_open_unit,
    discrete_gaussian_noise,
    geometric_noise,
    modulo_matrix,
)

__all__ = [
    "VARIANTS",
    "FAMILIES",
    "PARAMETERS",
    "count_noise",
    "geometric",
    "discrete_gaussian",
    "exponential",
    "count_mechanism",
    "data_independent",
    "build",
    "match_parameter",
    "calibrate",
]

#: Ways of mapping an additive noise onto the answer range {0..n}.
VARIANTS = ("modulo", "clamped", "range")
#: Baseline families, as accepted by :func:`build`.
FAMILIES = ("geometric", "gaussian", "exponential", "count", "independent")
#: The parameter each family is indexed by (larger = noisier for all of them).
PARAMETERS = {"geometric": "alpha", "gaussian": "sigma2", "exponential": "beta", "count": "rho", "independent": "rho"}


# --------------------------------------------------------------------------
# Integer noises and the n = inf mechanism
# --------------------------------------------------------------------------


def count_noise(rho: float, *, eps: float, N: int) -> IntegerNoise:
    """Noise of the count mechanism of Sadeghi et al. (2020) on ``{-N..N}``.

    ``P(0) = 1 - rho``, ``P(+-i) = rho alpha_i / 2`` with the optimal ``alpha``
    for ``(N, rho, eps)`` (:func:`optnoise.mechanisms.count.optimal_alpha`).
    """
    rho = check_open_unit("rho", rho)
    eps = check_eps(eps)
    N = check_int("N", N, minimum=1)
    m = optimal_alpha(N, rho, eps)
    return IntegerNoise("count", {"rho": rho, "eps": eps, "N": N}, np.arange(-N, N + 1), m.pmf)


# --------------------------------------------------------------------------
# The five baselines on {0..n}
# --------------------------------------------------------------------------


def geometric(n: int, alpha: float, *, variant: str = "modulo") -> Mechanism:
    """Two-sided geometric mechanism (Ghosh et al. 2009) on ``{0..n}``, ``"modulo"`` or ``"clamped"``."""
    return geometric_noise(alpha).mechanism(n, variant=variant)


def discrete_gaussian(n: int, sigma2: float, *, variant: str = "modulo") -> Mechanism:
    """Discrete Gaussian mechanism (Canonne et al. 2020) on ``{0..n}``, ``"modulo"`` or ``"clamped"``."""
    return discrete_gaussian_noise(sigma2).mechanism(n, variant=variant)


def exponential(n: int, beta: float, *, variant: str = "modulo") -> Mechanism:
    """Exponential mechanism realised with Gumbel noise (footnote 6; Adams 2013).

    ``q~ = argmax_r (u(q, r) + G_r)`` with ``G_r`` i.i.d. Gumbel with scale
    ``beta`` (any location), so ``P[q, r] = exp(u(q, r)/beta) / sum_s exp(u(q, s)/beta)``.

    Parameters
    ----------
    n : int
    beta : float
        Gumbel scale ``beta' > 0``; larger is noisier.
    variant : {"modulo", "range"}
        Score ``u = -min(|r-q|, n+1-|r-q|)`` (an additive modulo mechanism) or
        ``u = -|r - q|`` (the classical mechanism on the range).
    """
    n = check_int("n", n, minimum=1)
    beta = check_positive("beta", beta)
    variant = check_choice("variant", variant, ("modulo", "range"))
    q = np.arange(n + 1)
    diff = np.abs(q[None, :] - q[:, None])
    cyclic = {"modulo": True, "range": False}[variant]
    dist = np.minimum(diff, n + 1 - diff) if cyclic else diff
    logits = -dist / beta
    P = np.exp(logits - logsumexp(logits, axis=1, keepdims=True))
    noise = P[0].copy() if cyclic else None  # a modulo mechanism is its noise
    return Mechanism("exponential", n, variant, {"beta": beta}, P, noise)


def count_mechanism(n: int, rho: float, *, eps: float, N: int | None = None, variant: str = "modulo") -> Mechanism:
    """Discrete count mechanism of Sadeghi et al. (2020) on ``{0..n}``.

    Its noise (:func:`count_noise`) is designed for the privacy level ``eps``;
    ``N`` defaults to ``n // 2`` (the widest support that does not fold onto
    itself modulo ``n+1``). The error rate of the modulo variant is ``rho``.
    """
    n = check_int("n", n, minimum=2)
    N = n // 2 if N is None else check_int("N", N, minimum=1, maximum=n)
    return count_noise(rho, eps=eps, N=N).mechanism(n, variant=variant)


def data_independent(n: int, rho: float) -> Mechanism:
    """Data-independent mechanism (Ravi et al. 2022): ``f(0) = 1 - rho``, ``f(eta) = rho/n``, modulo n+1."""
    n = check_int("n", n, minimum=1)
    rho = check_probability("rho", rho)
    f = np.r_[1.0 - rho, np.full(n, rho / n)]
    return Mechanism("independent", n, "modulo", {"rho": rho}, modulo_matrix(f), f)


def build(
    family: str, n: int, value: float, *, variant: str = "modulo", eps: float | None = None, N: int | None = None
) -> Mechanism:
    """The baseline ``family`` with parameter ``value`` (its :data:`PARAMETERS` entry).

    ``eps`` (and optionally ``N``) are needed by the count mechanism, whose
    weights are designed for a privacy level.
    """
    family = check_choice("family", family, FAMILIES)
    if family == "geometric":
        return geometric(n, value, variant=variant)
    if family == "gaussian":
        return discrete_gaussian(n, value, variant=variant)
    if family == "exponential":
        return exponential(n, value, variant=variant)
    if family == "count":
        if eps is None:
            raise ValueError("eps is required for family='count' (its weights depend on eps)")
        return count_mechanism(n, value, eps=eps, N=N, variant=variant)
    if variant != "modulo":
        raise ValueError("family='independent' exists only as variant='modulo'")
    return data_independent(n, value)


# --------------------------------------------------------------------------
# Fitting a parameter
# --------------------------------------------------------------------------

# Every family's parameter as an increasing function of t in [0, 1] (more noise as t grows):
# linear or logarithmic between the bounds below. A geometric alpha above 0.9999 is
# indistinguishable from uniform noise on any range the figures use.
_BOUNDS = {
    "geometric": (1e-6, 0.9999, False),
    "gaussian": (1e-4, 1e4, True),
    "exponential": (1e-4, 1e4, True),
    "count": (1e-6, 1.0 - 1e-6, False),
}


def _param_of(family: str, t: float, n: int) -> float:
    if family == "independent":
        return t * n / (n + 1)  # rho = n/(n+1) is the uniform noise
    lo, hi, log = _BOUNDS[family]
    if log:
        return math.exp(math.log(lo) + t * (math.log(hi) - math.log(lo)))
    return lo + t * (hi - lo)


_T_LO, _T_HI = 0.0, 1.0


def _error(mech: Mechanism, measure: str, distance: str, reduce: str) -> float:
    if measure == "er":
        return float(mech.error_rate(reduce=reduce))
    return float(mech.mse(distance=distance, reduce=reduce))


def match_parameter(
    family: str,
    n: int,
    target: float,
    *,
    measure: str = "mse",
    distance: str = "circular",
    reduce: str = "mean",
    variant: str = "modulo",
    eps: float | None = None,
    N: int | None = None,
) -> float:
    """The parameter at which the baseline's error equals ``target``.

    Parameters
    ----------
    family : str
        One of :data:`FAMILIES`.
    n : int
    target : float
        Error to match, e.g. MSE = 0.6101 or ER = 0.3 (Fig. 7).
    measure : {"mse", "er"}
    distance, reduce
        As in :meth:`Mechanism.mse` (``distance`` is ignored for ``"er"``).
    variant : str
    eps, N
        For the count mechanism (see :func:`build`).

    Returns
    -------
    float
        The parameter (``alpha``, ``sigma2``, ``beta`` or ``rho``), found by
        Brent's method on the error, which increases with it.

    Raises
    ------
    ValueError
        When the family cannot reach ``target``.
    """
    family = check_choice("family", family, FAMILIES)
    measure = check_choice("measure", measure, ("mse", "er"))
    target = check_positive("target", target)

    def err(t: float) -> float:
        mech = build(family, n, _param_of(family, t, n), variant=variant, eps=eps, N=N)
        return _error(mech, measure, distance, reduce) - target

    lo, hi = err(_T_LO), err(_T_HI)
    if not lo <= 0.0 <= hi:
        raise ValueError(
            f"target {measure}={target:g} is out of reach for family={family!r} at n={n} "
            f"(its {measure} ranges over [{lo + target:.4g}, {hi + target:.4g}])"
        )
    t = brentq(err, _T_LO, _T_HI, xtol=1e-15, rtol=1e-13, maxiter=500)
    return _param_of(family, t, n)


def calibrate(
    family: str,
    n: int,
    eps: float,
    delta: float,
    *,
    notion: str = "pdp",
    neighborhood: Neighborhood | None = None,
    variant: str = "modulo",
    N: int | None = None,
    grid: int = 100,
    tol: float = 0.0,
    margin: float = 0.0,
) -> float:
    """Least-noise parameter of ``family`` with ``delta(eps) <= delta`` (the baselines of Fig. 5).

    ``notion`` defaults to ``"pdp"`` (Definition 2 of Kadam et al., the paper's baselines), not
    ``"dp"``: pass ``notion="dp"`` to calibrate to (eps, delta)-DP (the hockey stick). For noise
    added on all integers (no ``n``), ``NoiseDesign(release="additive", ...).solve().baselines``
    calibrates the discrete Laplace and Gaussian to the design's own notion.

    The noise parameter is scanned from the least to the most noisy on
    ``grid`` points; the boundary between the last point that fails and the
    first that meets the target is then bisected, so the result meets it.
    The count mechanism's weights are designed for ``eps`` at every point.

    ``margin`` (relative, in ``[0, 1]``) asks for ``delta(eps (1 - margin)) <= delta``
    instead, the safe direction (every delta curve is non-increasing in eps).
    Definition 2's indicator is the strict ``f(eta) > e^eps f(eta+mu)``, and
    the least-noise PDP parameter sits exactly where a likelihood ratio equals
    ``e^eps``: without a margin, e.g. the discrete Gaussian at eps = 1 comes out
    as ``sigma^2 = 0.5000000000000009``, where whether ``f(0)/f(1) = e`` counts as
    a leak (delta 0.782) or not (0.218) is decided by the last bit of the
    floating-point evaluation. With a margin every output that is counted as
    not leaking has privacy loss at most ``eps (1 - margin)``.

    Returns
    -------
    float
        The parameter, or ``nan`` when no scanned parameter meets the target.
    """
    family = check_choice("family", family, FAMILIES)
    eps = check_eps(eps)
    delta = check_delta(delta)
    grid = check_int("grid", grid, minimum=2)
    at = eps * (1.0 - check_probability("margin", margin))

    def ok(t: float) -> bool:
        mech = build(family, n, _param_of(family, t, n), variant=variant, eps=eps, N=N)
        return bool(mech.delta(at, notion=notion, neighborhood=neighborhood, tol=tol) <= delta)

    ts = np.linspace(_T_LO, _T_HI, grid)
    first = next((i for i, t in enumerate(ts) if ok(float(t))), None)
    if first is None:
        return float("nan")
    if first == 0:
        return _param_of(family, float(ts[0]), n)
    lo, hi = float(ts[first - 1]), float(ts[first])
    for _ in range(48):  # t to ~1e-16: below the resolution of every parameter
        mid = 0.5 * (lo + hi)
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return _param_of(family, hi, n)
