"""``privacy="composed"`` for the additive release: one noise on Z whose k-fold composition is (eps, delta)-DP.

The accounting is optnoise's (:func:`optnoise.privacy.accounting.compose_pairs`, dp-accounting's
pessimistic PLD at the design's ``discretization``) on the release's pairs on all of Z: each geometric
tail lumped into one atom (:func:`~optnoise.design.additive_eval.lumped_pairs`), which keeps every privacy
loss and its probability, so nothing beyond ``L`` is truncated.

The family. Noises on ``{-L..L}`` plus staircase tails whose factor per period ``P`` is that of the
**calibrated discrete Laplace**: the least noisy discrete Laplace whose k-fold composition meets the target
(found at setup by bisection under the same accounting, so the family is a function of the design). That
Laplace is a member, and every member beyond ``L`` decays like it. By default ``L = P +``
:data:`SEARCH_SCALES` Laplace scales, where the Laplace's mass has fallen by ``e^-20``.

The search is the modulo release's (:func:`optnoise.design.composed_solve.solve_composed`), run on this
release through its hooks (:class:`AdditiveProblem`): the discrete Gaussian, Laplace and their best
convolution laid on ``{-L..L}``, the surrogate search (symmetric half-line losses when the shifts and the
cost are symmetric; all log-masses otherwise) from the best of them, the certified temper calibration of
what it finds (else a certified mixture with the calibrated Laplace). Every trial is judged by the
accounting above with the search's relative margin
(:data:`~optnoise.design.composed_solve.CALIBRATION_MARGIN`). The calibrated discrete Laplace on Z
(exactly a member) and the discrete Gaussian on Z calibrated by the same accounting (on ``{-L..L}`` with the
family's tail, mixed with the Laplace until certified, :data:`MARGIN`) are candidates too, so the result is
never worse than either. A ``design.warm_start`` (masses on ``-W..W``, e.g. a coarser
resolution's design refined, :mod:`optnoise.design.continuous_warm`) is a candidate too, tempered to the cap or
sharpened until certified.

``objective="epsilon"`` (least composed eps under ``max_distortion``): the modulo release's dual search
(:func:`~optnoise.design.composed_solve.solve_composed`) through the same hooks. The family's tail is then
that of the discrete Laplace of largest scale within the cap (:func:`cap_family`, fixed at setup), which is
the first candidate; the others (Gaussian, Laplace and their convolution on ``{-L..L}``) are laid at the
cap, and the search's point tempered to it. ``achieved["composed_eps"]`` is the accounting's eps at the
design's delta re-computed from the PMF alone (the certified eps; ``achieved["composed"]`` the delta there),
and the result must meet the cap by the tolerance rule; ``bound`` is the ring's proven eps bound
(:meth:`AdditiveProblem.eps_bound`, below), ``gap`` relative to the eps.

Bounds, valid for every noise on Z (not only the family): wrapping the release modulo ``N``,
``(q + eta) mod N``, is a post-processing, so the wrapped noise ``f_N(z) = sum_j f(z + jN)`` is certified
for the modulo release with the same shifts whenever ``f`` is for the additive one (the trade-off argument
of :mod:`optnoise.design.composed_tradeoff` needs only the true hockey sticks, which post-processing
lowers), and its circular cost is at most the cost of ``f`` for every metric non-decreasing in ``|eta|``
(``mse``, ``mae``, ``abs^p``, ``er``, ``exceed:t``: the circular representative is the least). So the
modulo composed bounds of the wrapped design (:func:`~optnoise.design.composed_bounds.bound_and_method`,
:func:`~optnoise.design.composed_bounds.eps_bound_and_method`: the trade-off bound, the k = 1 LP and for
MSE the sum statistic) bound this design; the ring is ``N = min(2L + 1, RING_CELLS)`` (at least
``2kP + 3`` where the cap allows). A user cost (a function or a vector) has no such wrap: the bound is then
the (eps, delta) LP of the family at ``L`` (a bound within the family only, as the message says). Status:
``"feasible"`` with bound and gap, ``"optimal"`` only when the bound proves the gap.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from optnoise.design.additive_eval import (
    COMPOSED_MARGIN,
    AdditiveResult,
    entries,
    extended,
    least_noise,
    lumped_pairs,
    normalised,
    settled_result,
    stacked_pairs,
    tail_weights,
)
from optnoise.design.composed import check_composed_args
from optnoise.design.composed_bounds import bound_and_method, compose_release, eps_bound_and_method
from optnoise.design.composed_families import Support, bisect_largest, calibrate_temper, certified_mix
from optnoise.design.composed_polish import temper_to_cap
from optnoise.design.composed_search import PairMap
from optnoise.design.composed_solve import ComposedProblem, ComposedSolution
from optnoise.design.composed_solve import solve_composed as solve_composed_search
from optnoise.design.composed_tradeoff import MAX_CELLS
from optnoise.engine.progress import OutOfTime
from optnoise.engine.validation import MAX_EPS, MAX_EPS_REASON, check_eps, shown
from optnoise.privacy.noise_families import discrete_gaussian_noise, geometric_noise

__all__ = ["MARGIN", "AdditiveProblem", "cap_family", "setup_composed", "solve_composed", "wrapped_design"]

#: Relative margin below delta of the calibrated discrete Laplace and Gaussian on Z (the accounting's float slack).
MARGIN = COMPOSED_MARGIN
#: The finite part reaches this many calibrated-Laplace scales beyond ``P`` (its mass beyond falls by e^-20):
#: the search's surrogate sees the window only, so its edges must carry almost nothing.
SEARCH_SCALES = 20.0
#: Largest finite part the search lays out by default (``2L + 1`` noise values).
MAX_SEARCH_SUPPORT = 3000
#: Largest FFT of the search's surrogate (:class:`~optnoise.design.composed_search.Surrogate`): the two outputs
#: where the window meets a tail have losses near the surrogate's cap, which at 1e-4 per grid point would need
#: ~(k - 1) 5e4 points; a coarser grid there costs the search nothing measurable (count, k = 10: 158.600 either way).
SEARCH_FFT = 1 << 16
#: The search stops when its best point fell by at most 1e-5 (relative) over the last 50 evaluations (count,
#: k = 10: 158.613 after 30 evaluations, 158.6008 after 150, 158.5999 after 300; each evaluation ~0.06 s).
SEARCH_STALL = (50, 1e-5)
#: Largest ring the bounds wrap the release onto (the trade-off bound's scope).
RING_CELLS = MAX_CELLS


def setup_composed(design: Any, kw: dict[str, Any]) -> None:
    """Validate a composed additive design and fix its family (module docstring)."""
    out = check_composed_args(
        "composed",
        kw["compositions"],
        kw["discretization"],
        kw["objective"],
        kw["eps"],
        kw["delta"],
        kw["max_distortion"],
    )
    design.compositions, design.discretization = out["compositions"], out["discretization"]
    design.delta, design.objective = out["delta"], kw["objective"]
    if design.objective == "epsilon":
        design.eps, design.max_distortion = None, out["max_distortion"]
        cap_family(design)
        return
    design.eps = check_eps(kw["eps"], maximum=MAX_EPS, why=MAX_EPS_REASON)
    design.tail_eps = design.eps  # provisional: _noise_meets reads no tail
    lap = least_noise(design, lambda t: geometric_noise(math.exp(-1.0 / t)), design.compositions * design.period)
    if lap is None:
        raise ValueError("no discrete Laplace meets this composed target (eps, delta, compositions)")
    design.laplace_scale = _scale_of(lap)
    design.tail_eps = design.period / design.laplace_scale


def cap_family(design: Any) -> None:
    """The ``"epsilon"`` form's family: the discrete Laplace of largest scale whose distortion is within the cap.

    Its tail factor is the family's (module docstring); it is the search's safe candidate. The cost is read
    from ``design.cost_of`` (the grid release calls this again once its cell cost is in place).
    """
    cap = float(design.max_distortion)

    def within(t: float) -> bool:
        lap = geometric_noise(math.exp(-1.0 / t))
        return float(np.asarray(design.cost_of.fn(lap.values), dtype=float) @ lap.pmf) <= cap

    t = bisect_largest(within, float(design.period), rtol=1e-10, floor=1e-3, grow=2.0)
    if t is None:
        raise ValueError(
            f"max_distortion must admit some noise: no discrete Laplace of scale >= 1e-3 has distortion <= "
            f"{cap:g} (got max_distortion={shown(design.max_distortion)})"
        )
    design.laplace_scale = t
    design.tail_eps = design.period / t


def _scale_of(noise: Any) -> float:
    """``t`` of a discrete Laplace ``alpha^|x|`` (``alpha = e^(-1/t)``) from its masses at 0 and 1."""
    v = np.asarray(noise.values)
    p0, p1 = float(noise.pmf[v == 0][0]), float(noise.pmf[v == 1][0])
    return -1.0 / math.log(p1 / p0)


def _laplace_on(design: Any, L: int) -> np.ndarray:
    """The calibrated Laplace's masses on ``-L..L`` (its tail is the family's staircase exactly)."""
    alpha = math.exp(-1.0 / design.laplace_scale)
    return (1.0 - alpha) / (1.0 + alpha) * alpha ** np.abs(np.arange(-L, L + 1))


def _variance(noise: Any) -> float:
    """The variance of an integer noise from its masses (the scale the composed search's families use)."""
    v = np.asarray(noise.values, dtype=float)
    return float(noise.pmf @ (v * v))


def _laplace_noise(design: Any) -> Any:
    return geometric_noise(math.exp(-1.0 / design.laplace_scale))


class AdditiveProblem(ComposedProblem):
    """The additive release as the composed search sees it (the hooks of :class:`ComposedProblem`).

    The search's PMF lives on ``{-L..L}``; its tails are derived from its last ``P`` masses
    (:func:`~optnoise.design.additive_eval.normalised`), so :meth:`distortion` and :meth:`compose` judge
    the noise on all of Z. ``solve_at`` is the additive LP (the family bound of user costs).
    """

    has_safe = False  # no noise on Z is perfectly private
    lp_candidates = False

    def __init__(self, design: Any, clock: Any, options: Any, L: int, solve_at: Callable[..., Any]) -> None:
        self.design, self.clock, self.options, self.L, self.solve_at = design, clock, options, L, solve_at
        self.cands = {}
        self.k, self.delta = int(design.compositions), float(design.delta)
        self.h = float(design.discretization)
        self.support = Support(L, (2 * L + 1,), cyclic=False)  # offsets -L..L, as clamped noise's
        P, a = design.period, math.exp(-design.tail_eps)
        # u, the searched vector, holds at each of the last P values of a side its whole staircase series
        # (f(x) / (1 - a)): u sums to 1 with the tails, and the distortion is linear in it
        self.wscale = _wscale(design, L)
        cost = np.array(design.cost_of.fn(np.arange(-L, L + 1)), dtype=float)  # a copy: a user cost may be read-only
        cost[-P:] += a * tail_weights(design.cost_of, np.arange(L + 1, L + P + 1), P, a)
        cost[:P] += a * tail_weights(design.cost_of, np.arange(-L - P, -L), P, a)
        self.exact_cost = cost  # per unit of f
        self.cost = cost * self.wscale  # per unit of u
        self.checks, self.spent, self.points = 0, 0.0, 0.0
        self.calibrated = {}  # the Z candidates' families, filled by solve_composed
        mus = np.asarray(design.shifts, dtype=np.int64).ravel()
        self.sensitivity = float(P)
        self.structured = set(mus.tolist()) == set((-mus).tolist()) and design.cost_of.symmetric(L)
        self.pairs = self._pair_map(np.flatnonzero(mus > 0) if self.structured else np.arange(mus.size))
        self.heavy = mus.size > 8

    def _pair_map(self, used: np.ndarray) -> PairMap:
        """The pairs of the shifts ``used`` as linear gathers of ``u``: the lumped pairs of
        :func:`~optnoise.design.additive_eval.lumped_pairs` (tails included, exact), so the surrogate sees Z."""
        d: Any = self.design
        L = self.L
        P, a = d.period, math.exp(-d.tail_eps)
        x = np.arange(-L - 2 * P, L + 2 * P + 1)
        m = np.where(np.abs(x) > L, -((L - np.abs(x)) // P), 0)  # periods beyond L: ceil((|x| - L) / P)
        src = x - np.sign(x) * m * P + L
        coef = a**m * self.wscale[src]
        k, p, q, win = entries(L, P, np.asarray(d.shifts))
        lump = np.where(win, 1.0 / (1.0 - a), 1.0)
        rows = [np.flatnonzero(k == j) for j in used]
        width = max(r.size for r in rows)
        size = 2 * L + 1
        iP, iQ = np.full((len(rows), width), size), np.full((len(rows), width), size)
        cP, cQ = np.zeros((len(rows), width)), np.zeros((len(rows), width))
        for i, r in enumerate(rows):
            fp, fq = p[r] + L + 2 * P, q[r] + L + 2 * P
            iP[i, : r.size], cP[i, : r.size] = src[fp], coef[fp] * lump[r]
            iQ[i, : r.size], cQ[i, : r.size] = src[fq], coef[fq] * lump[r]

        def forward(u: np.ndarray, js: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            uz = np.append(u, 0.0)
            return uz[iP[js]] * cP[js], uz[iQ[js]] * cQ[js]

        def backward(j: int, gP: np.ndarray, gQ: np.ndarray) -> np.ndarray:
            g = np.bincount(iP[j], gP * cP[j], minlength=size + 1) + np.bincount(iQ[j], gQ * cQ[j], minlength=size + 1)
            return g[:size]

        return PairMap(forward, backward, len(rows))

    def search_args(self) -> dict[str, Any]:
        """The modulo search's parametrisation, with the surrogate's FFT capped at :data:`SEARCH_FFT` and,
        for the distortion objective, the stall rule :data:`SEARCH_STALL`."""
        args = super().search_args() | {"max_fft": SEARCH_FFT}
        return args | {"stall": SEARCH_STALL} if self.design.objective == "distortion" else args

    def to_pmf(self, u: np.ndarray) -> np.ndarray:
        """The noise's finite part ``f`` on ``-L..L`` of a searched vector ``u`` (normalised with its tails)."""
        return normalised(self.design, np.asarray(u, dtype=float).ravel() * self.wscale, self.L)

    def to_u(self, f: np.ndarray) -> np.ndarray:
        u = np.asarray(f, dtype=float) / self.wscale
        return u / u.sum()

    def compose(self, pmf: np.ndarray) -> Any:
        d = self.design
        F, _ = extended(d, self.to_pmf(pmf), self.L)
        return compose_release(stacked_pairs(d, lumped_pairs(d, F, self.L)), self.k, self.h)

    def distortion(self, pmf: np.ndarray) -> float:
        return float(self.exact_cost @ self.to_pmf(pmf))

    def fold(self) -> tuple[np.ndarray, np.ndarray]:
        return np.abs(np.arange(-self.L, self.L + 1)), np.arange(self.L, 2 * self.L + 1)

    def safe(self) -> np.ndarray:
        """The calibrated discrete Laplace (certified at setup; the ``"epsilon"`` form's is at the cap)."""
        return self.to_u(_laplace_on(self.design, self.L))

    def anchor(self, eps: float, lp_solver: Any) -> np.ndarray | None:
        return self.safe()

    def bound(self, lp_solver: Any, upper: float, deadline: float | None) -> tuple[float | None, str]:
        wrapped = wrapped_design(self.design, self.L)
        if wrapped is None:
            one = copy.copy(self.design)
            one.privacy, one.compositions = "dp", None
            left = None if deadline is None else max(deadline - time.perf_counter(), 0.1)
            res = self.solve_at(one, self.L, "highs", left, 1e-4, False, self.options, False)
            return (res.bound, "lp") if res.status == "optimal" and res.bound is not None else (None, "")
        return bound_and_method(wrapped, "highs", upper=upper, deadline=deadline, options=self.options)

    def eps_bound(self, cap: float, eps_hi: float, lp_solver: Any, deadline: float | None) -> tuple[float | None, str]:
        wrapped = wrapped_design(self.design, self.L)
        if wrapped is None:
            return None, ""
        return eps_bound_and_method(wrapped, cap, eps_hi, "highs", deadline, self.options)


def wrapped_design(design: Any, L: int) -> Any:
    """The modulo composed design whose bounds bound ``design`` (module docstring), or ``None`` (a user cost)."""
    c = design.cost_of
    k, P = int(design.compositions), design.period
    N = min(RING_CELLS, max(2 * L + 1, 2 * k * P + 3))
    z = np.arange(N)
    metric: Any
    if c.name in ("mse", "mae") and c.power is not None:
        metric = f"circular-{c.name}"
    elif c.power is not None or c.name in ("mse", "mae", "er") or c.name.startswith(("exceed:", "abs^")):
        # a named metric (a grid release's cell average too: nondecreasing in |eta|) at the circular representative
        metric = np.array(c.fn(np.where(z > N // 2, z - N, z)), dtype=float)
    else:
        return None
    # built, not design.replace(): a grid design's spec is not an integer one
    fields = ("compositions", "discretization", "delta", "objective", "eps", "max_distortion")
    kw = {f: getattr(design, f) for f in fields}
    return type(design)(n=N - 1, neighborhood=design.neighborhood, privacy="composed", metric=metric, **kw)


def solve_composed(
    design: Any,
    solve_at: Callable[..., AdditiveResult],
    solver: str,
    time_limit: float | None,
    options: Any,
    concurrent: bool,
) -> AdditiveResult:
    """The search of the module docstring; ``solve_at`` is the additive LP at a support (no import cycle)."""
    t0 = time.perf_counter()
    P = design.period
    L = design.support or int(min(MAX_SEARCH_SUPPORT, math.ceil(P + SEARCH_SCALES * design.laplace_scale)))
    lap = _laplace_on(design, L)
    lap_noise = _laplace_noise(design)
    epsilon = design.objective == "epsilon"
    gauss = None if epsilon else least_noise(design, discrete_gaussian_noise, _gaussian_guess(design))
    warm = getattr(design, "warm_start", None)  # a start from elsewhere (a coarser resolution): certified here

    def make(_: Any, clock: Any, opts: Any) -> AdditiveProblem:
        """The problem, with the calibrated discrete Laplace and Gaussian on Z as its first candidates."""
        prob = AdditiveProblem(design, clock, opts, L, solve_at)
        try:
            lap_value = prob.eps_of(prob.to_u(lap)) if epsilon else prob.distortion(prob.to_u(lap))
            prob.cands["discrete Laplace"] = (lap_value, prob.to_u(lap), "the calibrated discrete Laplace")
            if not epsilon:  # the window's Laplace family is this noise: not calibrated again
                prob.calibrated["laplace"] = ("discrete Laplace", _variance(lap_noise))
            if gauss is not None:
                ok = lambda u: prob.private(u, float(design.eps))  # noqa: E731
                g = certified_mix(prob.to_u(_on_window(gauss, L)), prob.to_u(lap), ok)
                if g is not None:
                    prob.cands["discrete Gaussian"] = (prob.distortion(g), g, "the calibrated discrete Gaussian")
                    prob.calibrated["gaussian"] = ("discrete Gaussian", float(gauss.params["sigma2"]))
            if warm is not None:
                _warm_candidate(prob, warm)
        except OutOfTime:  # the search's own time-limit path returns the best certified candidate
            pass
        return prob

    sol = solve_composed_search(design, solver="highs", time_limit=time_limit, options=options, problem=make)
    if sol.pmf is None:  # a time limit before the first candidate's accounting (objective epsilon): no noise
        return AdditiveResult(
            design, sol.status, np.arange(-L, L + 1), None, None, None, {}, {}, sol.bound, None,
            time.perf_counter() - t0, "composed", sol.message,
        )  # fmt: skip
    pmf = normalised(design, sol.pmf * _wscale(design, L), L)  # the search's vector u as the noise f
    out = settled_result(design, pmf, L, sol.status, sol.bound, sol.message)
    out.solve_time, out.backend = time.perf_counter() - t0, "composed"
    out._baselines = _baselines(design, gauss, sol)
    out.support_note = (
        f"support L = {L}: noises on -L..L with the calibrated Laplace's tail (factor "
        f"{math.exp(-design.tail_eps):.6g} per period); bound: "
        + (
            "the modulo bounds of the release wrapped onto a ring"
            if wrapped_design(design, L) is not None
            else "one release's (eps, delta) LP of that family"
        )
    )
    return out


def _warm_candidate(prob: AdditiveProblem, warm: np.ndarray) -> None:
    """``design.warm_start`` (masses on ``-W..W``, cut or padded to ``-L..L``) as a candidate: tempered to the
    cap and accounted (``"epsilon"``), or sharpened until the accounting certifies it (``"distortion"``)."""
    d: Any = prob.design
    L = prob.L
    w = np.asarray(warm, dtype=float).ravel()
    W = (w.size - 1) // 2
    f = np.zeros(2 * L + 1)
    r = min(L, W)
    f[L - r : L + r + 1] = w[W - r : W + r + 1]
    u = prob.to_u(np.maximum(f, 1e-300))  # positive everywhere: no infinite loss
    if d.objective == "epsilon":
        t = temper_to_cap(prob, u, float(d.max_distortion))
        value = math.inf if t is None else prob.eps_of(t)
    else:
        t = calibrate_temper(u, lambda v: prob.private(v, float(d.eps)))
        value = math.inf if t is None else prob.distortion(t)
    if t is not None and math.isfinite(value):
        prob.cands["warm start"] = (value, t, "the warm start (a coarser resolution's design, refined)")


def _gaussian_guess(design: Any) -> float:
    """First guess of the calibrated Gaussian's variance: the classic bound at eps / k per release, k P^2 scaled."""
    k, P = design.compositions, design.period
    return (k * P * P) * 2.0 * math.log(1.25 / design.delta) / design.eps**2


def _on_window(noise: Any, L: int) -> np.ndarray:
    """``noise``'s masses on ``-L..L`` (what lies beyond is replaced by the family's tail)."""
    g = np.zeros(2 * L + 1)
    v = np.asarray(noise.values)
    inside = np.abs(v) <= L
    g[v[inside] + L] = noise.pmf[inside]
    return g


def _baselines(design: Any, gauss: Any, sol: ComposedSolution) -> dict[str, float]:
    """``res.baselines``: the discrete Laplace and Gaussian calibrated on Z by the same accounting (their
    distortion; the Laplace's is its composed eps at the cap for ``objective="epsilon"``), and the search's best
    convolution of the two (on ``{-L..L}`` with the family's tail, calibrated by the same accounting)."""
    table = sol.candidates or {}
    if design.objective == "epsilon":
        return {
            "discrete_laplace": float(table.get("discrete Laplace", math.inf)),
            "discrete_gaussian": float(table.get("gaussian", math.inf)),
            "convolution": float(table.get("convolution", math.inf)),
        }
    lap = _laplace_noise(design)
    return {
        "discrete_laplace": float(design.cost_of.fn(lap.values) @ lap.pmf),
        "discrete_gaussian": math.inf if gauss is None else float(design.cost_of.fn(gauss.values) @ gauss.pmf),
        "convolution": float(table.get("convolution", math.inf)),
    }


def _wscale(design: Any, L: int) -> np.ndarray:
    """``f / u`` (:class:`AdditiveProblem`): 1 inside, ``1 - a`` on the last ``P`` values of each side."""
    w = np.ones(2 * L + 1)
    w[: design.period] = w[-design.period :] = 1.0 - math.exp(-design.tail_eps)
    return w
