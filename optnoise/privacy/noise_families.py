"""The noise families every layer uses, and the matrix of a release."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize

from optnoise.engine.validation import check_choice, check_int, check_positive, check_probability, shown
from optnoise.privacy.curves import (
    NOTIONS,
    delta_dp,
    delta_pdp,
    delta_pdp_kadam,
    hockey_stick,
    mechanism_delta,
    pair_leak,
)
from optnoise.privacy.neighborhood import Neighborhood, neighbour_pairs

__all__ = [
    "Mechanism",
    "IntegerNoise",
    "geometric_noise",
    "discrete_gaussian_noise",
    "discrete_gaussian_pmf",
    "discrete_gaussian_variance",
    "discrete_gaussian_sigma2",
    "discrete_gaussian_delta",
    "cks_delta",
    "DISTANCES",
    "TAIL",
    "modulo_matrix",
    "check_open_unit",
]


#: Distances for :meth:`Mechanism.mse`.
DISTANCES = ("linear", "circular", "noise")
#: Integer noises are kept on a window outside of which their mass is below this.
TAIL = 1e-30
#: Largest integer window (half width) an :class:`IntegerNoise` may need.
MAX_HALF_WIDTH = 5_000_000
_REDUCE = ("mean", "worst", "none")
_COUNT = Neighborhood.bd(1)  # count query, sensitivity 1, both directions


@dataclass(frozen=True, eq=False)
class Mechanism:
    """A randomised release ``q -> q~`` on ``{0..n}`` given by its matrix.

    Attributes
    ----------
    name : str
        Family name (one of :data:`FAMILIES`).
    n : int
        Answers and outputs lie in ``{0..n}``.
    variant : str
        ``"modulo"``, ``"clamped"`` or ``"range"`` (see the module docstring).
    params : mapping
        The family's parameter(s), e.g. ``{"alpha": 0.7}``.
    matrix : ndarray, shape (n+1, n+1)
        ``matrix[q, k] = Pr(q~ = k | q)``; every row sums to 1.
    noise : ndarray or None
        For modulo mechanisms the noise PMF ``f(eta)``, ``eta = 0..n``, with
        ``matrix[q, (q + eta) % (n+1)] = f(eta)``; ``None`` otherwise.
    """

    name: str
    n: int
    variant: str
    params: Mapping[str, float]
    matrix: np.ndarray
    noise: np.ndarray | None = None

    @property
    def is_modulo(self) -> bool:
        """True when the release is ``q + eta (mod n+1)`` with one noise PMF."""
        return self.noise is not None

    def _reduce(self, per_q: np.ndarray, reduce: str) -> Any:
        reduce = check_choice("reduce", reduce, _REDUCE)
        if reduce == "none":
            return per_q
        return float(per_q.mean() if reduce == "mean" else per_q.max())

    def error_rate(self, *, reduce: str = "mean") -> Any:
        """``Pr(q~ != q)`` (Definition 3), averaged over a uniform q, at the worst q, or per q.

        For a modulo mechanism it is ``1 - f(0)`` for every q (10).
        """
        return self._reduce(1.0 - np.diag(self.matrix), reduce)

    def mse(self, *, distance: str = "linear", reduce: str = "mean") -> Any:
        """Mean squared error ``E[d(q~, q)^2]`` (Definition 4), per true answer q, then reduced.

        Parameters
        ----------
        distance : {"linear", "circular", "noise"}
            ``"linear"``: ``|q~ - q|``, the released answer's actual error.
            ``"circular"``: ``min(|q~ - q|, n+1 - |q~ - q|)``; for a modulo
            mechanism every q gives ``sum_eta min(eta, n+1-eta)^2 f(eta)``.
            ``"noise"`` (modulo only): the paper's (11) as printed,
            ``sum_eta eta^2 f(eta)`` with ``eta = q~ - q mod (n+1)``.
        reduce : {"mean", "worst", "none"}
            Average over a uniform q, the largest over q, or the array over q.
        """
        distance = check_choice("distance", distance, DISTANCES)
        q = np.arange(self.n + 1)
        diff = np.abs(q[None, :] - q[:, None])  # [q, k]
        if distance == "linear":
            d = diff
        elif distance == "circular":
            d = np.minimum(diff, self.n + 1 - diff)
        else:
            if not self.is_modulo:
                raise ValueError("distance='noise' needs a modulo mechanism; use 'linear' or 'circular'")
            d = (q[None, :] - q[:, None]) % (self.n + 1)
        return self._reduce(np.sum(self.matrix * d.astype(float) ** 2, axis=1), reduce)

    def delta(self, eps: Any, *, notion: str = "dp", neighborhood: Neighborhood | None = None, tol: float = 0.0) -> Any:
        """``delta(eps)`` of the mechanism under a privacy notion, vectorised over ``eps``.

        Parameters
        ----------
        eps : float or array_like
        notion : {"dp", "pdp", "pdp-kadam"}
            Hockey stick (Definition 1), Definition 2, or the published MILP's
            notion (modulo mechanisms only). Computed by :mod:`optnoise.privacy`.
        neighborhood : Neighborhood, optional
            Shifts ``mu = Q(X) - Q(X')`` between neighbouring datasets. Default:
            a count query with sensitivity 1, both directions
            (``Neighborhood.bd(1)``). Modulo mechanisms take the shifts modulo
            ``n+1`` (the paper's eq. (8)); the others use the answer pairs of
            :func:`neighbour_pairs`.
        tol : float
            Slack on the PDP indicators (see :func:`optnoise.privacy.curves.pdp_leak`).
        """
        notion = check_choice("notion", notion, NOTIONS)
        nb = _COUNT if neighborhood is None else neighborhood
        if not isinstance(nb, Neighborhood):
            raise ValueError("neighborhood must be a Neighborhood (e.g. Neighborhood.bd(1))")
        if self.is_modulo:
            curve = {
                "dp": lambda: delta_dp(self.noise, nb, eps),
                "pdp": lambda: delta_pdp(self.noise, nb, eps, tol=tol),
                "pdp-kadam": lambda: delta_pdp_kadam(self.noise, nb, eps, tol=tol),
            }
            return curve[notion]()
        if notion == "pdp-kadam":
            raise ValueError("notion='pdp-kadam' is defined for modulo mechanisms only; use 'dp' or 'pdp'")
        return mechanism_delta(self.matrix, neighbour_pairs(self.n, nb), eps, notion=notion, tol=tol)


def modulo_matrix(noise: np.ndarray) -> np.ndarray:
    """``P[q, (q + eta) % (n+1)] = f(eta)``: the rows are cyclic shifts of the noise."""
    m = noise.size
    q = np.arange(m)
    return noise[(q[None, :] - q[:, None]) % m]


@dataclass(frozen=True, eq=False)
class IntegerNoise:
    """An integer-valued noise ``g(v)`` kept on a finite window of integers.

    Attributes
    ----------
    name : str
        Family name.
    params : mapping
        Parameters of the family.
    values : ndarray of int
        Consecutive integers; outside them the mass is below :data:`TAIL`.
    pmf : ndarray
        ``g(values)``, normalised over all integers (not renormalised on the window).
    """

    name: str
    params: Mapping[str, float]
    values: np.ndarray
    pmf: np.ndarray

    @property
    def variance(self) -> float:
        """``E[eta^2] - E[eta]^2`` of the noise on the integers."""
        v = self.values.astype(float)
        mean = float(np.dot(v, self.pmf))
        return float(np.dot(v * v, self.pmf) - mean * mean)

    def wrapped(self, n: int) -> np.ndarray:
        """``f(eta) = sum_j g(eta + j (n+1))``, ``eta = 0..n``: the noise modulo n+1."""
        n = check_int("n", n, minimum=1)
        return np.bincount(np.mod(self.values, n + 1), weights=self.pmf, minlength=n + 1)

    def clamped_matrix(self, n: int) -> np.ndarray:
        """``P[q, k]`` of ``min(max(0, q + eta), n)`` (55), i.e. (56) with the corrected last column.

        ``P[q, 0] = F(-q)``, ``P[q, k] = g(k - q)`` for ``0 < k < n`` and
        ``P[q, n] = 1 - F(n - q - 1)``.
        """
        n = check_int("n", n, minimum=1)
        q = np.arange(n + 1)[:, None]
        out = np.clip(q + self.values[None, :], 0, n)
        flat = (q * (n + 1) + out).ravel()
        w = np.broadcast_to(self.pmf, out.shape).ravel()
        return np.bincount(flat, weights=w, minlength=(n + 1) ** 2).reshape(n + 1, n + 1)

    def mechanism(self, n: int, *, variant: str = "modulo") -> Mechanism:
        """The mechanism ``q + eta`` on ``{0..n}``, wrapped (``"modulo"``) or ``"clamped"``."""
        variant = check_choice("variant", variant, ("modulo", "clamped"))
        if {"modulo": True, "clamped": False}[variant]:
            f = self.wrapped(n)
            return Mechanism(self.name, int(n), variant, dict(self.params), modulo_matrix(f), f)
        return Mechanism(self.name, int(n), variant, dict(self.params), self.clamped_matrix(n), None)

    def delta(self, eps: Any, *, notion: str = "dp", sensitivity: int = 1) -> Any:
        """``delta(eps)`` of ``q + eta`` on all integers (no clamping, no wrap; ``n = inf``).

        Neighbouring answers differ by ``1..sensitivity`` in both directions;
        the output window is the noise window widened by the shift, so no mass
        is lost. ``notion`` is ``"dp"`` (hockey stick) or ``"pdp"`` (Definition 2).
        """
        leak = pair_leak(notion, eps)
        d = check_int("sensitivity", sensitivity, minimum=1)
        vals = []
        for s in range(1, d + 1):
            p = np.concatenate([self.pmf, np.zeros(s)])  # q + eta, q = 0
            r = np.concatenate([np.zeros(s), self.pmf])  # q' = q + s
            for a, b in ((p, r), (r, p)):
                vals.append(np.atleast_1d(leak(a, b)))
        out = np.max(np.stack(vals), axis=0)
        return float(out[0]) if np.ndim(eps) == 0 else out


def check_open_unit(name: str, value: Any) -> float:
    """A probability strictly between 0 and 1 (``ValueError`` naming ``name`` otherwise)."""
    v = check_probability(name, value)
    if not 0.0 < v < 1.0:
        raise ValueError(f"{name} must be in (0, 1); got {shown(value)}")
    return v


def _half_width(w: float) -> int:
    if not w <= MAX_HALF_WIDTH:
        raise ValueError(
            f"the noise is too wide to tabulate (half width {w:.3g} > {MAX_HALF_WIDTH}); choose a less noisy parameter"
        )
    return int(math.ceil(w))


def geometric_noise(alpha: float) -> IntegerNoise:
    """Two-sided geometric (discrete Laplace) noise, ``g(v) = (1-alpha)/(1+alpha) alpha^|v|``.

    The alpha-geometric mechanism of Ghosh et al. (2009); it is
    ``-ln(alpha)``-DP for a count query. ``alpha`` in (0, 1).
    """
    alpha = check_open_unit("alpha", alpha)
    w = _half_width(math.log(TAIL) / math.log(alpha))
    v = np.arange(-w, w + 1)
    # log space: alpha^|v| underflows long before the window ends for small alpha
    logp = math.log1p(-alpha) - math.log1p(alpha) + np.abs(v) * math.log(alpha)
    return IntegerNoise("geometric", {"alpha": alpha}, v, np.exp(logp))


def discrete_gaussian_noise(sigma2: float) -> IntegerNoise:
    """Discrete Gaussian ``N_Z(0, sigma^2)``, exactly normalised over Z (Canonne et al. 2020).

    Uses :func:`optnoise.privacy.noise_families.discrete_gaussian_pmf`.
    """
    sigma2 = check_positive("sigma2", sigma2)
    w = _half_width(math.sqrt(-2.0 * sigma2 * math.log(TAIL)) + 1)
    v = np.arange(-w, w + 1)
    return IntegerNoise("gaussian", {"sigma2": sigma2}, v, discrete_gaussian_pmf(v, sigma2))


def _dg_half_width(sigma2: float) -> int:
    # exp(-x^2 / (2 sigma^2)) < 1e-330 beyond this: below the smallest double
    return int(math.ceil(math.sqrt(2.0 * sigma2 * 760.0))) + 2


def _dg_log_normaliser(sigma2: float) -> float:
    """``ln sum_{x in Z} exp(-x^2 / (2 sigma^2))``, exact to double precision.

    Direct summation for small sigma^2; Poisson summation
    ``sqrt(2 pi sigma^2) (1 + 2 sum_k exp(-2 pi^2 sigma^2 k^2))`` for large.
    """
    if sigma2 <= 4.0:
        x = np.arange(-_dg_half_width(sigma2), _dg_half_width(sigma2) + 1)
        return float(np.log(np.sum(np.exp(-(x * x) / (2.0 * sigma2)))))
    k = np.arange(1, 6)
    return 0.5 * math.log(2.0 * math.pi * sigma2) + math.log1p(2.0 * np.sum(np.exp(-2.0 * math.pi**2 * sigma2 * k * k)))


def discrete_gaussian_pmf(support: Any, sigma2: float) -> np.ndarray:
    """pmf of the discrete Gaussian ``N_Z(0, sigma^2)`` at integer ``support`` points.

    ``P(x) = exp(-x^2/(2 sigma^2)) / sum_{y in Z} exp(-y^2/(2 sigma^2))``
    (Canonne-Kamath-Steinke, Definition 1), normalised over all integers, not
    over ``support``. Reusable by other modules.
    """
    sigma2 = check_positive("sigma2", sigma2)
    x = np.asarray(support)
    if x.size and not np.issubdtype(x.dtype, np.integer):
        if not np.all(np.isfinite(x)) or np.any(x != np.round(x)):
            raise ValueError("support must contain integers")
    xf = x.astype(float)
    return np.exp(-(xf * xf) / (2.0 * sigma2) - _dg_log_normaliser(sigma2))


def discrete_gaussian_variance(sigma2: float) -> float:
    """Variance of ``N_Z(0, sigma^2)`` (strictly below ``sigma^2``)."""
    sigma2 = check_positive("sigma2", sigma2)
    m = _dg_half_width(sigma2)
    if m <= 2_000_000:
        x = np.arange(-m, m + 1)
        return float(np.sum(x.astype(float) ** 2 * discrete_gaussian_pmf(x, sigma2)))
    # Poisson summation: E[X^2] = 2 sigma^4 d ln Z / d sigma^2
    k = np.arange(1, 6)
    w = np.exp(-2.0 * math.pi**2 * sigma2 * k * k)
    return sigma2 - 2.0 * sigma2**2 * (4.0 * math.pi**2 * np.sum(k * k * w)) / (1.0 + 2.0 * np.sum(w))


def discrete_gaussian_sigma2(variance: float) -> float:
    """The parameter ``sigma^2`` whose discrete Gaussian has the given variance."""
    v = check_positive("variance", variance)
    lo, hi = v, v + 1.0
    if discrete_gaussian_variance(lo) >= v:
        return lo  # the gap sigma^2 - variance is below double precision here
    while discrete_gaussian_variance(hi) < v:
        hi *= 2.0
    return float(optimize.brentq(lambda s: discrete_gaussian_variance(s) - v, lo, hi, xtol=1e-14, rtol=1e-14))


def discrete_gaussian_delta(eps: Any, sigma2: float, *, sensitivity: int = 1) -> Any:
    """Exact delta of ``c + N_Z(0, sigma^2)`` by the hockey-stick sum (vectorised over eps)."""
    sigma2 = check_positive("sigma2", sigma2)
    d = check_int("sensitivity", sensitivity, minimum=1)
    m = _dg_half_width(sigma2)
    x = np.arange(-m, m + d + 1)
    p = discrete_gaussian_pmf(x, sigma2)
    q = discrete_gaussian_pmf(x - d, sigma2)
    return hockey_stick(p, q, eps)


def cks_delta(eps: Any, sigma2: float, *, sensitivity: int = 1) -> Any:
    """Canonne-Kamath-Steinke Theorem 7, the paper's eq. (45).

    ``delta = P[Y > eps sigma^2/D - D/2] - e^eps P[Y > eps sigma^2/D + D/2]``,
    ``Y ~ N_Z(0, sigma^2)``. The paper evaluates it with ``sigma^2`` set to
    the variance of its own noise.
    """
    sigma2 = check_positive("sigma2", sigma2)
    d = check_int("sensitivity", sensitivity, minimum=1)
    e = np.atleast_1d(np.asarray(eps, dtype=float))
    m = _dg_half_width(sigma2)
    x = np.arange(-m, m + 1)
    p = discrete_gaussian_pmf(x, sigma2)
    tail = np.concatenate([np.cumsum(p[::-1])[::-1], [0.0]])  # tail[i] = P[Y >= x[i]]

    def gt(t: np.ndarray) -> np.ndarray:
        i = np.clip(np.floor(t).astype(np.int64) + 1 + m, 0, x.size)  # first index with x > t
        return tail[i]

    out = np.maximum(gt(e * sigma2 / d - d / 2.0) - np.exp(e) * gt(e * sigma2 / d + d / 2.0), 0.0)
    return float(out[0]) if np.ndim(eps) == 0 else out
