"""Private selection: exponential mechanism, permute-and-flip, report-noisy-max.

Implements McKenna & Sheldon, "Permute-and-Flip: a new mechanism for
differentially private selection" (NeurIPS 2020), cited below as [PF].

Given quality scores ``q in R^m`` of sensitivity ``Delta``, a selection
mechanism returns a candidate ``r``; its *error* is ``q* - q_r`` with
``q* = max(q)`` ([PF] Eq. 4). Three mechanisms are provided, each with a
sampler (numpy ``Generator``), an exact output pmf, and through
:func:`expected_error` / :func:`error_tail` the expected error and the
probability that the error exceeds ``t``:

* exponential mechanism (EM, [PF] Definition 4):
  ``P(r) ~ exp(eps q_r / (2 Delta))``;
* permute-and-flip (PF, [PF] Algorithm 1): visit the candidates in random order
  and stop at ``r`` with probability ``p_r = exp(eps (q_r - q*) / (2 Delta))``;
* report-noisy-max with Laplace noise (RNM, [PF] Appendix F): argmax of
  ``q + Laplace(2 Delta / eps)``.

``monotonic=True`` is the variant of [PF] Remark 1 for quality functions that
can only increase when an individual is added (e.g. counts): the factor
``2 Delta`` becomes ``Delta`` for every mechanism.

The module also holds the worst-case analysis of [PF] Sec. 4.1 (Eqs. 7, 8,
Props. 1, 4, 5, Cor. 1), the optimal regular mechanism on the bounded lattice
as a linear program ([PF] Theorem 3, Appendix D, Fig. 2; built with
:class:`~optnoise.engine.model.ModelBuilder`, solved by
:func:`~optnoise.engine.solve.solve_model`), and the DPBench mode and median tasks
of [PF] Sec. 6.

Numerics: scores enter only through ``eps (q - q*) / (c Delta) <= 0``, so
vectors of thousands of candidates with counts of 10^7 neither overflow nor
produce NaN; probabilities that underflow are exactly 0.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import integrate, optimize, special

from optnoise.engine.validation import (
    check_choice,
    check_eps,
    check_finite,
    check_finite_array,
    check_int,
    check_pmf,
    check_positive,
    shown,
)

__all__ = [
    "MECHANISMS",
    "GOLDEN_EPS",
    "scaled_scores",
    "em_pmf",
    "pf_pmf",
    "rnm_pmf",
    "selection_pmf",
    "em_sample",
    "pf_sample",
    "rnm_sample",
    "expected_error",
    "error_tail",
    "eps_for_expected_error",
    "worst_case_scores",
    "em_worst_case_error",
    "pf_worst_case_error",
    "rnm_worst_case_error",
    "worst_case_expected_error",
    "expected_error_upper_bound",
    "error_tail_upper_bound",
    "pf_worst_case_lower_bound",
    "mode_quality",
    "median_quality",
    "gauss_legendre01",
]

#: Mechanism names accepted by :func:`selection_pmf` and friends.
MECHANISMS = ("em", "pf", "rnm")

#: ``ln((3 + sqrt 5) / 2)``: for ``eps`` at or above it PF is the optimal
#: regular mechanism on the bounded lattice ([PF] Theorem 3, Lemma 7).
GOLDEN_EPS = math.log((3.0 + math.sqrt(5.0)) / 2.0)


# ---------------------------------------------------------------------------
# Scores and pmfs
# ---------------------------------------------------------------------------


def _coef(monotonic: bool) -> float:
    # [PF] Remark 1: a monotonic quality function halves the worst-neighbour gap.
    return 1.0 if monotonic else 0.5


def scaled_scores(q: Any, eps: float, *, sensitivity: float = 1.0, monotonic: bool = False) -> np.ndarray:
    """Log coin probabilities ``log p_r = eps (q_r - q*) / (2 Delta)`` (``Delta`` if monotonic).

    Every entry is ``<= 0`` and the maximum is exactly 0, so these are both
    PF's log flip probabilities ([PF] Algorithm 1) and EM's shifted logits.

    Parameters
    ----------
    q : array_like, shape (m,)
        Finite quality scores.
    eps : float
        Privacy parameter, > 0.
    sensitivity : float, optional
        Sensitivity ``Delta`` of every score, > 0.
    monotonic : bool, optional
        Use the monotonic variant of [PF] Remark 1.
    """
    q = check_finite_array("q", q)
    eps = check_eps(eps)
    delta = check_positive("sensitivity", sensitivity)
    s = (q - q.max()) * (_coef(monotonic) * eps / delta)
    return s


def em_pmf(q: Any, eps: float, sensitivity: float = 1.0, monotonic: bool = False) -> np.ndarray:
    """Exact output pmf of the exponential mechanism ([PF] Definition 4).

    ``P(r) = softmax(eps q / (2 Delta))_r`` (``Delta`` when ``monotonic``),
    evaluated as a log-sum-exp so huge scores cannot overflow.
    """
    return special.softmax(scaled_scores(q, eps, sensitivity=sensitivity, monotonic=monotonic))


def gauss_legendre01(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes and weights of ``n`` points on ``[0, 1]``."""
    x, w = special.roots_legendre(n)
    return 0.5 * (x + 1.0), 0.5 * w


def _pf_pmf_integral(s: np.ndarray) -> np.ndarray:
    """PF pmf from the integral form ``P(r) = p_r int_0^1 prod_{j != r} (1 - t p_j) dt``.

    The integrand is a polynomial of degree m - 1 in t, so Gauss-Legendre with
    ``m // 2 + 1`` nodes is exact; every quadrature term is positive, so there
    is no cancellation however many candidates or however close to 1 the
    ``p_j`` are. Equal scores are evaluated once.
    """
    m = s.size
    uniq, inv, counts = np.unique(s, return_inverse=True, return_counts=True)
    pu = np.exp(uniq)
    t, w = gauss_legendre01(m // 2 + 1)
    log_w = np.log(w)
    # log prod_j (1 - t p_j), summed over distinct values with multiplicity
    log1m = np.log1p(-t[:, None] * pu[None, :])
    log_g = log1m @ counts.astype(float)
    log_int = np.empty(uniq.size)
    chunk = max(1, 4_000_000 // max(t.size, 1))
    for a in range(0, uniq.size, chunk):
        b = min(uniq.size, a + chunk)
        terms = log_w[:, None] + log_g[:, None] - log1m[:, a:b]
        log_int[a:b] = special.logsumexp(terms, axis=0)
    out = np.exp(uniq + log_int)[inv]
    # The exact pmf sums to 1; dividing by the computed sum removes the ~1e-11
    # relative error of high-order Gauss-Legendre weights (scipy, n > 100).
    return out / out.sum()


def _pf_pmf_appendix_e(s: np.ndarray) -> np.ndarray:
    """PF pmf by the O(m^2) dynamic programme of [PF] Appendix E.

    ``E_k`` = sum over k-subsets of ``prod p_j`` (elementary symmetric
    polynomials), ``E^{-r}_k = E_k - p_r E^{-r}_{k-1}`` removes candidate r, and
    ``P(r) = p_r sum_{k=0}^{m-1} (-1)^k E^{-r}_k / (k + 1)`` (Lemma 2). The
    alternating sum cancels catastrophically once many ``p_j`` are close to 1
    and m is large (tens of candidates); use it for checks on small inputs.
    """
    m = s.size
    p = np.exp(s)
    e = np.zeros(m + 1)
    e[0] = 1.0
    for pj in p:
        e[1:] = e[1:] + pj * e[:-1]
    er = np.ones(m)  # E^{-r}_0
    total = er.copy()  # k = 0 term
    for k in range(1, m):
        er = e[k] - p * er
        total += ((-1.0) ** k / (k + 1.0)) * er
    return p * total


def pf_pmf(
    q: Any,
    eps: float,
    sensitivity: float = 1.0,
    monotonic: bool = False,
    *,
    method: str = "integral",
) -> np.ndarray:
    """Exact output pmf of permute-and-flip ([PF] Algorithm 1, Lemmas 1-2).

    Parameters
    ----------
    q, eps, sensitivity, monotonic
        As in :func:`scaled_scores`.
    method : {"integral", "appendix_e"}
        ``"integral"`` (default): the integral form
        ``P(r) = p_r int_0^1 prod_{j != r} (1 - t p_j) dt`` by exact
        Gauss-Legendre quadrature; stable for thousands of candidates.
        ``"appendix_e"``: the O(m^2) elementary-symmetric-polynomial recursion
        of [PF] Appendix E, exact in exact arithmetic but unstable for large m.

    Returns
    -------
    ndarray, shape (m,)
    """
    method = check_choice("method", method, ("integral", "appendix_e"))
    s = scaled_scores(q, eps, sensitivity=sensitivity, monotonic=monotonic)
    if method == "appendix_e":
        return _pf_pmf_appendix_e(s)
    return _pf_pmf_integral(s)


def _log_laplace_cdf(y: np.ndarray) -> np.ndarray:
    # standard Laplace: F(y) = e^y / 2 for y < 0, 1 - e^-y / 2 otherwise
    return np.where(y < 0, y - math.log(2.0), np.log1p(-0.5 * np.exp(-np.abs(y))))


def rnm_pmf(
    q: Any,
    eps: float,
    sensitivity: float = 1.0,
    monotonic: bool = False,
    *,
    tol: float = 1e-12,
) -> np.ndarray:
    """Output pmf of report-noisy-max with Laplace noise, by numerical integration.

    Noise ``Laplace(2 Delta / eps)`` (``Delta / eps`` when ``monotonic``) is
    added to each score and the argmax returned ([PF] Appendix F). With ``f``,
    ``F`` the standard Laplace pdf and cdf and ``u = scaled_scores(...)``::

        P(r) = int f(x - u_r) prod_{j != r} F(x - u_j) dx.

    The integrand is evaluated in log space; the integral is adaptive
    (``scipy.integrate.quad_vec``) with break points at every distinct score,
    over ``[-45, 45]`` around the maximum (the rest has mass below 1e-19).

    Parameters
    ----------
    tol : float, optional
        Absolute tolerance of the integration (per entry).
    """
    u = scaled_scores(q, eps, sensitivity=sensitivity, monotonic=monotonic)
    tol = check_positive("tol", tol)
    if u.size == 1:
        return np.ones(1)
    uniq, inv, counts = np.unique(u, return_inverse=True, return_counts=True)
    cnt = counts.astype(float)
    lo, hi = -45.0, 45.0

    def integrand(x: float) -> np.ndarray:
        y = x - uniq
        log_f = -np.abs(y) - math.log(2.0)
        log_cdf = _log_laplace_cdf(y)
        log_g = float(cnt @ log_cdf)
        return np.exp(log_f + log_g - log_cdf)

    pts = [float(v) for v in uniq if lo < v < hi]
    val, _err = integrate.quad_vec(
        integrand, lo, hi, points=pts or None, epsabs=tol, epsrel=1e-10, norm="max", limit=20_000
    )
    val = np.clip(val, 0.0, None)
    return val[inv]


def selection_pmf(
    mechanism: str,
    q: Any,
    eps: float,
    *,
    sensitivity: float = 1.0,
    monotonic: bool = False,
) -> np.ndarray:
    """The pmf of ``mechanism`` (one of :data:`MECHANISMS`) on scores ``q``."""
    mechanism = check_choice("mechanism", mechanism, MECHANISMS)
    fn = {"em": em_pmf, "pf": pf_pmf, "rnm": rnm_pmf}[mechanism]
    return fn(q, eps, sensitivity=sensitivity, monotonic=monotonic)


# ---------------------------------------------------------------------------
# Samplers
# ---------------------------------------------------------------------------


def _check_rng(rng: Any) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator (np.random.default_rng()); got {type(rng).__name__}")
    return rng


def _sample_size(size: Any) -> int | None:
    return None if size is None else check_int("size", size, minimum=1)


def em_sample(
    q: Any,
    eps: float,
    rng: np.random.Generator,
    *,
    sensitivity: float = 1.0,
    monotonic: bool = False,
    size: int | None = None,
) -> Any:
    """Sample the exponential mechanism by the Gumbel-max trick.

    ``argmax_r (log p_r + G_r)`` with i.i.d. standard Gumbel ``G_r`` has law
    ``softmax(log p)``, i.e. EM; this route never forms the normalised pmf.
    Returns an int, or an int array of length ``size``.
    """
    s = scaled_scores(q, eps, sensitivity=sensitivity, monotonic=monotonic)
    rng = _check_rng(rng)
    n = _sample_size(size)
    g = rng.gumbel(size=(1 if n is None else n, s.size))
    out = np.argmax(s[None, :] + g, axis=1)
    return int(out[0]) if n is None else out


def pf_sample(
    q: Any,
    eps: float,
    rng: np.random.Generator,
    *,
    sensitivity: float = 1.0,
    monotonic: bool = False,
    size: int | None = None,
) -> Any:
    """Sample permute-and-flip exactly as [PF] Algorithm 1.

    Candidates are visited in a uniformly random order; candidate ``r`` is
    returned when its coin, heads with probability ``p_r = exp(scaled score)``,
    comes up heads. A maximum has ``p = 1``, so the loop always stops.
    """
    s = scaled_scores(q, eps, sensitivity=sensitivity, monotonic=monotonic)
    rng = _check_rng(rng)
    n = _sample_size(size)
    p = np.exp(s)
    k = 1 if n is None else n
    out = np.empty(k, dtype=np.int64)
    for i in range(k):
        perm = rng.permutation(s.size)
        heads = rng.random(s.size) < p[perm]  # uniform draws lie in [0, 1): a maximum (p = 1) always stops
        out[i] = perm[int(np.argmax(heads))]
    return int(out[0]) if n is None else out


def rnm_sample(
    q: Any,
    eps: float,
    rng: np.random.Generator,
    *,
    sensitivity: float = 1.0,
    monotonic: bool = False,
    size: int | None = None,
) -> Any:
    """Sample report-noisy-max: argmax of ``q + Laplace(2 Delta / eps)`` ([PF] Appendix F)."""
    s = scaled_scores(q, eps, sensitivity=sensitivity, monotonic=monotonic)
    rng = _check_rng(rng)
    n = _sample_size(size)
    noise = rng.laplace(size=(1 if n is None else n, s.size))
    out = np.argmax(s[None, :] + noise, axis=1)
    return int(out[0]) if n is None else out


# ---------------------------------------------------------------------------
# Error of a pmf
# ---------------------------------------------------------------------------


def _pmf_and_scores(pmf: Any, q: Any) -> tuple[np.ndarray, np.ndarray]:
    q = check_finite_array("q", q)
    pmf = check_pmf("pmf", pmf, atol=1e-6)
    if pmf.shape != q.shape:
        raise ValueError(f"pmf must have the shape of q {q.shape}; got {pmf.shape}")
    return pmf, q


def expected_error(pmf: Any, q: Any) -> float:
    """Expected error ``E[q* - q_R] = sum_r pmf_r (q* - q_r)`` ([PF] Eq. 4).

    Computed from the gaps ``q* - q_r`` (never as ``q* - pmf @ q``), so scores
    around 10^7 lose no precision.
    """
    pmf, q = _pmf_and_scores(pmf, q)
    return float(pmf @ (q.max() - q))


def error_tail(pmf: Any, q: Any, t: float, *, strict: bool = True) -> float:
    """``P(error > t)`` (``>= t`` with ``strict=False``) for the output law ``pmf``."""
    pmf, q = _pmf_and_scores(pmf, q)
    t = check_finite("t", t)
    gap = q.max() - q
    mask = gap > t if strict else gap >= t
    return float(pmf[mask].sum())


def eps_for_expected_error(
    q: Any,
    target: float,
    *,
    mechanism: str = "pf",
    sensitivity: float = 1.0,
    monotonic: bool = False,
    rtol: float = 1e-10,
) -> float:
    """The ``eps`` at which ``mechanism`` has expected error ``target`` on ``q``.

    The expected error falls from ``q* - mean(q)`` (uniform choice, eps -> 0) to
    0; the root is found by Brent's method in ``log eps``.
    """
    mechanism = check_choice("mechanism", mechanism, ("em", "pf"))
    q = check_finite_array("q", q)
    target = check_positive("target", target)
    ceiling = float(np.mean(q.max() - q))
    if not target < ceiling:
        raise ValueError(
            f"target must be in (0, {shown(ceiling)}) (the error of a uniform choice); got {shown(target)}"
        )

    def g(log_eps: float) -> float:
        pmf = selection_pmf(mechanism, q, math.exp(log_eps), sensitivity=sensitivity, monotonic=monotonic)
        return math.log(max(expected_error(pmf, q), 1e-300)) - math.log(target)

    lo, hi = -1.0, 1.0
    while g(lo) < 0:
        lo -= 2.0
    while g(hi) > 0:
        hi += 2.0
    return math.exp(optimize.brentq(g, lo, hi, xtol=rtol, rtol=rtol))


# ---------------------------------------------------------------------------
# Worst-case analysis ([PF] Sec. 4.1)
# ---------------------------------------------------------------------------


def worst_case_scores(m: int, c: float) -> np.ndarray:
    """The worst-case score vector ``(0, -c, ..., -c)`` of [PF] Prop. 4."""
    m = check_int("m", m, minimum=1)
    c = check_positive("c", c, allow_zero=True)
    q = np.full(m, -c)
    q[0] = 0.0
    return q


def _worst_case_args(c: Any, m: int, eps: float, sensitivity: float, monotonic: bool):
    m = check_int("m", m, minimum=1)
    eps = check_eps(eps)
    delta = check_positive("sensitivity", sensitivity)
    c = np.asarray(c, dtype=float)
    if not np.all(np.isfinite(c)) or np.any(c < 0):
        raise ValueError("c must be finite and >= 0")
    x = c * (_coef(monotonic) * eps / delta)  # -log p
    return c, m, x


def em_worst_case_error(c: Any, m: int, eps: float, *, sensitivity: float = 1.0, monotonic: bool = False) -> Any:
    """[PF] Eq. 7: ``E[err_EM] = c (m-1) p / (1 + (m-1) p)`` on ``(0, -c, ..., -c)``.

    ``p = exp(-eps c / (2 Delta))``; vectorised over ``c``.
    """
    c, m, x = _worst_case_args(c, m, eps, sensitivity, monotonic)
    # (m-1)p/(1+(m-1)p) = expit(log(m-1) - x)
    val = c * special.expit(math.log(m - 1) - x) if m > 1 else np.zeros_like(c)
    return val if val.ndim else float(val)


def _pf_nonmax_prob(p: np.ndarray, m: int) -> np.ndarray:
    """``1 - (1 - (1-p)^m) / (m p)``: PF's chance of missing the unique maximum.

    Closed form where ``m p`` is not small; otherwise the series
    ``sum_{k>=2} (-1)^k C(m,k) p^(k-1) / m``, whose terms shrink by a factor
    ``<= m p`` and so lose nothing to cancellation.
    """
    p = np.asarray(p, dtype=float)
    out = np.empty_like(p)
    big = m * p > 0.05
    pb = p[big]
    with np.errstate(divide="ignore"):  # p = 1 gives log1p(-1) = -inf, (1-p)^m = 0
        y = -np.expm1(m * np.log1p(-np.minimum(pb, 1.0)))
    out[big] = 1.0 - y / (m * pb)
    ps = p[~big]
    acc = np.zeros_like(ps)
    coef = np.full_like(ps, -float(m))  # (-1)^k C(m,k) p^(k-1) at k = 1
    for k in range(2, min(m, 40) + 1):
        coef = coef * (-ps) * (m - k + 1) / k
        acc += coef
    out[~big] = acc / m
    return out


def pf_worst_case_error(c: Any, m: int, eps: float, *, sensitivity: float = 1.0, monotonic: bool = False) -> Any:
    """[PF] Eq. 8: ``E[err_PF] = c (1 - (1 - (1-p)^m) / (m p))`` on ``(0, -c, ..., -c)``."""
    c, m, x = _worst_case_args(c, m, eps, sensitivity, monotonic)
    val = c * _pf_nonmax_prob(np.exp(-x), m) if m > 1 else np.zeros_like(c)
    return val if val.ndim else float(val)


def rnm_worst_case_error(c: Any, m: int, eps: float, *, sensitivity: float = 1.0, monotonic: bool = False) -> Any:
    """RNM's expected error on ``(0, -c, ..., -c)`` ([PF] Appendix F).

    ``E = c (1 - P_0)`` with ``1 - P_0 = int f(x) [1 - F(x + c/b)^(m-1)] dx``
    for the standard Laplace ``f, F`` and noise scale ``b``; the bracket is
    evaluated as ``-expm1((m-1) log F)`` so large ``c`` keeps full precision.
    """
    c, m, x = _worst_case_args(c, m, eps, sensitivity, monotonic)
    flat = np.atleast_1d(x)
    out = np.empty_like(flat)
    for i, gam in enumerate(flat):
        if m == 1:
            out[i] = 0.0
            continue

        def f(z: float, gam: float = float(gam)) -> float:
            lf = -abs(z) - math.log(2.0)
            lF = float(_log_laplace_cdf(np.array([z + gam]))[0])
            return math.exp(lf) * -math.expm1((m - 1) * lF)

        pts = sorted({0.0, -float(gam)})
        lo, hi = -60.0 - float(gam), 60.0
        val, _ = integrate.quad(f, lo, hi, points=pts, epsabs=1e-15, epsrel=1e-12, limit=500)
        out[i] = val
    res = np.asarray(c, dtype=float) * out.reshape(np.shape(c))
    return res if res.ndim else float(res)


def worst_case_expected_error(
    mechanism: str,
    m: int,
    eps: float,
    *,
    sensitivity: float = 1.0,
    monotonic: bool = False,
) -> tuple[float, float]:
    """Worst-case expected error over every score vector, and the ``c`` attaining it.

    By [PF] Prop. 4 the worst case is ``(0, -c, ..., -c)``; Eq. 7 (EM) or Eq. 8
    (PF) is maximised over ``c`` (grid over ``x = eps c / (2 Delta)``, then
    bounded Brent). ``"rnm"`` maximises the RNM error over the same family.

    Returns
    -------
    (error, c) : tuple of float
    """
    mechanism = check_choice("mechanism", mechanism, MECHANISMS)
    m = check_int("m", m, minimum=1)
    eps = check_eps(eps)
    delta = check_positive("sensitivity", sensitivity)
    if m == 1:
        return 0.0, 0.0
    scale = delta / (_coef(monotonic) * eps)  # c = scale * x
    fn = {"em": em_worst_case_error, "pf": pf_worst_case_error, "rnm": rnm_worst_case_error}[mechanism]

    def err(x: Any) -> Any:
        return fn(np.asarray(x) * scale, m, eps, sensitivity=delta, monotonic=monotonic)

    xs = np.geomspace(1e-3, math.log(m) + 60.0, 60 if mechanism == "rnm" else 400)
    vals = np.asarray(err(xs))
    i = int(np.argmax(vals))
    a, b = xs[max(i - 1, 0)], xs[min(i + 1, xs.size - 1)]
    res = optimize.minimize_scalar(
        lambda x: -float(err(x)), bounds=(a, b), method="bounded", options={"xatol": 1e-10 * max(1.0, b)}
    )
    x_best = float(res.x) if -res.fun >= vals[i] else float(xs[i])
    return float(err(x_best)), x_best * scale


def expected_error_upper_bound(m: int, eps: float, *, sensitivity: float = 1.0, monotonic: bool = False) -> float:
    """[PF] Prop. 1 / Cor. 1: ``E[err] <= (2 Delta / eps) ln m`` for EM and PF."""
    m = check_int("m", m, minimum=1)
    eps = check_eps(eps)
    delta = check_positive("sensitivity", sensitivity)
    return delta / (_coef(monotonic) * eps) * math.log(m)


def error_tail_upper_bound(s: Any, m: int, eps: float, *, sensitivity: float = 1.0, monotonic: bool = False) -> Any:
    """[PF] Prop. 1 / Cor. 1: ``P(err >= s) <= m exp(-eps s / (2 Delta))`` (capped at 1).

    This is the statement ``P(err >= (2 Delta/eps)(ln m + t)) <= e^-t`` with
    ``s = (2 Delta/eps)(ln m + t)``.
    """
    m = check_int("m", m, minimum=1)
    eps = check_eps(eps)
    delta = check_positive("sensitivity", sensitivity)
    s = np.asarray(s, dtype=float)
    val = np.minimum(1.0, m * np.exp(-(_coef(monotonic) * eps / delta) * s))
    return val if val.ndim else float(val)


def pf_worst_case_lower_bound(m: int, eps: float, *, sensitivity: float = 1.0, monotonic: bool = False) -> float:
    """[PF] Prop. 5: at ``c = (2 Delta/eps) ln m``, ``E[err_PF] >= (Delta / (2 eps)) ln m``.

    Eq. 8 gives ``c (1 - 1/m)^m`` there and ``(1 - 1/m)^m >= 1/4`` for
    ``m >= 2``; the same bound holds for EM by [PF] Theorem 2.
    """
    m = check_int("m", m, minimum=1)
    eps = check_eps(eps)
    delta = check_positive("sensitivity", sensitivity)
    return 0.25 * delta / (_coef(monotonic) * eps) * math.log(m)


# ---------------------------------------------------------------------------
# DPBench tasks ([PF] Sec. 6, Appendix G)
# ---------------------------------------------------------------------------


def _histogram(x: Any) -> np.ndarray:
    x = check_finite_array("x", x)
    if np.any(x < 0) or np.any(x != np.round(x)):
        raise ValueError("x must hold non-negative integer counts")
    return x


def mode_quality(x: Any) -> np.ndarray:
    """Mode task: ``q_i = x_i`` (bin counts; sensitivity 1, monotonic in the sense of [PF] Remark 1)."""
    return _histogram(x).copy()


def median_quality(x: Any) -> np.ndarray:
    """Median task: minus the fewest individuals to add or remove to make bin ``i`` the median.

    The median of ``N`` items is the ``ceil(N/2)``-th smallest (the lower
    median), as in the authors' code. With ``A_i = x_0 + ... + x_i`` bin ``i``
    holds it iff ``2 A_{i-1} < N <= 2 A_i``. Every addition or removal changes
    ``d1 = N - 2 A_i`` and ``d2 = 2 A_{i-1} - N + 1`` by one each, and adding
    to bin ``i`` lowers both, so the cost is ``max(0, d1, d2)``. It has
    sensitivity 1 ([PF] Sec. 6, McSherry 2009).
    """
    x = _histogram(x)
    a = np.cumsum(x)
    n = a[-1]
    below = np.concatenate([[0.0], a[:-1]])
    cost = np.maximum(0.0, np.maximum(n - 2.0 * a, 2.0 * below - n + 1.0))
    return -cost
