"""The solver of composition-targeted designs (:mod:`optnoise.design.composed` states the method).

Candidates calibrated by the accounting, the surrogate search of :mod:`optnoise.design.composed_search`
from the best of them, the certified calibration of what it finds (least eps: then polished, composed_polish),
and the k = 1 LP paths.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from optnoise.design.composed_bounds import (
    SingleReleaseLP,
    bound_and_method,
    composition,
    eps_bound_and_method,
    single_release_lp,
)
from optnoise.design.composed_families import (
    Support,
    bisect_largest,
    bisect_smallest,
    calibrate_temper,
    certified_mix,
    clamp_anchor,
    family_pmf,
    gaussian_guess,
    golden_share,
    lp_candidate,
)
from optnoise.design.composed_polish import POLISH, polish, temper_to_cap
from optnoise.design.composed_search import clamp_pair_map, modulo_pair_map, reduced_search
from optnoise.engine.output import relative_gap
from optnoise.engine.progress import OutOfTime, Progress
from optnoise.engine.tolerance import OPTIMAL_GAP, proven_optimal

if TYPE_CHECKING:
    from optnoise.design.noise import NoiseDesign

__all__ = [
    "CALIBRATION_MARGIN",
    "LP_CANDIDATE_SIZE",
    "SEARCH_EVALUATIONS",
    "SEARCH_SECONDS",
    "SEARCH_SHARE",
    "TIME_SHARE",
    "ComposedProblem",
    "ComposedSolution",
    "solve_composed",
]

#: Calibrations accept a PMF when its composed delta is at most ``delta * (1 - CALIBRATION_MARGIN)``:
#: headroom for the exact rounding of :meth:`DesignResult.certify`, at no measurable distortion cost.
CALIBRATION_MARGIN = 1e-7
#: Share of ``time_limit`` the surrogate searches may use (the calibrations run to TIME_SHARE of it, the
#: bounds get the rest). Without a time limit only the evaluation limits stop the searches (reproducible).
SEARCH_SHARE = 0.6
#: Share of ``time_limit`` after which no new accounting check starts (the best certified point is returned).
TIME_SHARE = 0.85
#: Former default of the search's time (kept for imports): without ``time_limit`` no clock stops a solve now.
SEARCH_SECONDS = math.inf
#: Most surrogate evaluations of one search run.
SEARCH_EVALUATIONS = 800
#: Seconds per loss-grid point assumed for the first accounting check of a time-limited solve (measured
#: 0.6-2 us on a loaded 2-core machine; later checks use the mean rate seen).
CHECK_SECONDS_PER_POINT = 2e-6
#: The general path adds the single-release LP candidate only up to this many noise values.
LP_CANDIDATE_SIZE = 3000


@dataclass
class ComposedSolution:
    """What :func:`solve_composed` hands to the pipeline, which makes it a :class:`DesignResult`."""

    pmf: np.ndarray | None
    status: str
    bound: float | None
    message: str
    solve_time: float
    eps_objective: float | None = None
    method: str = ""
    candidates: dict[str, float] | None = None
    bound_method: str = ""


class ComposedProblem:
    """The design's composed problem as the calibrations and the search see it.

    The release-specific hooks (a subclass overrides them; :mod:`optnoise.design.additive_composed` does
    for the additive release): :meth:`compose` (the accounting of a PMF), :meth:`fold` (the symmetric
    parametrisation), :meth:`safe`, :meth:`anchor`, :meth:`bound`, :meth:`eps_bound`, and the attributes
    ``has_safe`` (``safe()`` is perfectly private) and ``lp_candidates`` (the general path's LP candidate).
    """

    has_safe = True
    lp_candidates = True

    def __init__(self, design: NoiseDesign, clock: Progress, options: dict[str, Any] | None = None) -> None:
        self.design = design
        self.clock = clock
        self.options = options  # raw HiGHS options of the LPs
        # every certified candidate, by name: (value, pmf, label); a time limit returns the best of them
        self.cands: dict[str, tuple[float, np.ndarray, str]] = {}
        self.k = int(design.compositions)
        self.delta = float(design.delta or 0.0)
        self.h = float(design.discretization)
        self.cost = _search_cost(design)
        self.support = Support(design.n, design.shape, design.rel.cyclic)
        self.checks = 0
        self.spent, self.points = 0.0, 0.0  # seconds and loss-grid points of the accounting checks so far
        self.calibrated: dict[str, tuple[str, float]] = {}  # see :meth:`family_candidate`
        from dp_accounting.pld import privacy_loss_distribution  # noqa: F401  (imported before a check is timed)

        self.heavy = False  # many pairs: each accounting check is slow, so the candidates are searched coarsely
        if not design.rel.cyclic:
            self.pairs = clamp_pair_map(design.n, design.pairs)
            self.sensitivity = float(np.max(np.abs(design.pairs[:, 0] - design.pairs[:, 1])))
            self.structured = False
        else:
            idx = design.shift_index()
            N = design.n + 1
            mus = np.where(design.shifts > N // 2, design.shifts - N, design.shifts)
            self.sensitivity = float(np.max(np.sqrt(np.sum(mus.astype(float) ** 2, axis=1))))
            self.structured = self._symmetric()
            if self.structured:
                # one pair per |mu|: the mirror pair of a symmetric PMF has the same PLD
                keep = [j for j in range(len(design.shifts)) if 0 < int(design.shifts[j, 0]) <= N // 2]
                idx = idx[keep]
            self.pairs = modulo_pair_map(idx)
        self.heavy = len(design.shifts if design.rel.cyclic else design.pairs) > 8

    def family_candidate(self, family: str) -> tuple[str, float] | None:
        """A candidate the problem already certified that stands for ``family`` (its name in ``cands`` and the
        family scale it has), so that family is not calibrated again; ``None`` (the default): calibrate it.

        The additive release certifies the discrete Gaussian and Laplace on Z before the search
        (:mod:`optnoise.design.additive_composed`); their calibration on the window is the same noise up to
        the tail, and costs a few dozen accounting checks."""
        return self.calibrated.get(family)

    @property
    def max_scale(self) -> float:
        return 4.0 * float(self.support.radius) ** 2 + 4.0

    def _symmetric(self) -> bool:
        d = self.design
        if d.dim != 1 or d.n < 2:
            return False
        N = d.n + 1
        s = {int(v) for v in d.shifts[:, 0]}
        cost = self.cost
        return s == {(-v) % N for v in s} and np.array_equal(cost, cost[(-np.arange(N)) % N])

    @property
    def path(self) -> str:
        return "structured" if self.structured else "general"

    def private(self, pmf: np.ndarray, eps: float) -> bool:
        """The certificate: the accounting's composed delta at eps within the calibration margin."""
        comp = self._composition(pmf)
        return comp is not None and comp.delta(eps) <= self.delta * (1.0 - CALIBRATION_MARGIN)

    def eps_of(self, pmf: np.ndarray) -> float:
        comp = self._composition(pmf)
        return math.inf if comp is None else float(comp.epsilon(self.delta * (1.0 - CALIBRATION_MARGIN)))

    def _composition(self, pmf: np.ndarray) -> Any:
        """The accounting of ``pmf`` (``None`` when its losses are too wide for the accounting's grid).

        With a time limit, a check predicted to end past the deadline is not started (:class:`OutOfTime`):
        its cost grows with the loss grid, ``k * (log-mass range) / h`` per pair, at the mean rate of the
        checks so far (:data:`CHECK_SECONDS_PER_POINT` before the first one).
        """
        self.checks += 1
        self.clock.step()
        f = np.asarray(pmf, dtype=float).ravel()
        logs = np.log(f[f > 0])
        points = self.k * self.pairs.count * (float(logs.max() - logs.min()) + 1.0) / self.h
        rate = self.spent / self.points if self.points else CHECK_SECONDS_PER_POINT
        if points * rate > self.clock.left():
            raise OutOfTime
        t = time.perf_counter()
        try:
            comp = self.compose(f)
        except ValueError:  # losses too wide for the accounting's grid (refused at once): not certified
            return None
        self.spent += time.perf_counter() - t
        self.points += points
        return comp

    def compose(self, pmf: np.ndarray) -> Any:
        """The accounting's k-fold composition of the release of ``pmf`` (``ValueError``: losses too wide)."""
        return composition(self.design, pmf)

    def distortion(self, pmf: np.ndarray) -> float:
        return float(self.cost @ np.asarray(pmf, dtype=float).ravel())

    def fold(self) -> tuple[np.ndarray, np.ndarray]:
        """Per noise value its distance ``r`` to 0 (circular on the ring), and the indices of the values at
        distance ``0..max(r)`` on one side (the half-line the symmetric search parametrises)."""
        N = self.design.n + 1
        return np.minimum(np.arange(N), N - np.arange(N)), np.arange(N // 2 + 1)

    def anchor(self, eps: float, lp_solver: str | SingleReleaseLP) -> np.ndarray | None:
        """A certified PMF the search's point is mixed with when tempering cannot certify it (clamped noise)."""
        return None if self.design.rel.cyclic else clamp_anchor(self, eps, lp_solver)

    def bound(self, lp_solver: str | SingleReleaseLP, upper: float, deadline: float | None) -> tuple[float | None, str]:
        """A proven lower bound on the distortion and its method (:func:`bound_and_method`)."""
        return bound_and_method(self.design, lp_solver, upper=upper, deadline=deadline, options=self.options)

    def eps_bound(
        self, cap: float, eps_hi: float, lp_solver: str | SingleReleaseLP, deadline: float | None
    ) -> tuple[float | None, str]:
        """A proven lower bound on the composed eps within ``cap`` and its method (:func:`eps_bound_and_method`)."""
        return eps_bound_and_method(self.design, cap, eps_hi, lp_solver, deadline, self.options)

    def safe(self) -> np.ndarray:
        """A PMF whose release is perfectly private: uniform modulo noise, or clamped noise at ``-n``."""
        f = np.zeros(self.support.size)
        if self.design.rel.cyclic:
            f[:] = 1.0 / f.size
        else:
            f[0] = 1.0
        return f

    def hybrid(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The symmetric PMF whose half-line losses are the larger of ``a``'s and ``b``'s (a body from one, a
        tail from the other): a second start of the structured search."""
        args = self.search_args()
        x = np.maximum(args["from_theta"](np.log(a)), args["from_theta"](np.log(b)))
        th = args["to_theta"](x)
        f = np.exp(np.maximum(th - th.max(), -40.0))
        return f / f.sum()

    def search_args(self) -> dict[str, Any]:
        """Parametrisation of the search: half-line losses of a symmetric PMF, or all log-masses."""
        if not self.structured:
            return {"pairs": self.pairs}
        r, half = self.fold()
        M = half.size - 1

        def to_theta(x: np.ndarray) -> np.ndarray:
            return np.concatenate([[0.0], -np.cumsum(x)])[r]

        def from_theta(th: np.ndarray) -> np.ndarray:
            return -np.diff(th[half])

        def back(g: np.ndarray) -> np.ndarray:
            gh = np.bincount(r, g, minlength=M + 1)
            return -np.cumsum(gh[::-1])[::-1][1:]

        lb = 2.0 * max(1.0, self.design.eps or 1.0)
        return {"pairs": self.pairs, "to_theta": to_theta, "from_theta": from_theta, "back": back, "bounds": (-lb, lb)}


def solve_composed(
    design: NoiseDesign,
    *,
    solver: str = "highs",
    time_limit: float | None = None,
    verbose: bool = False,
    options: dict[str, Any] | None = None,
    lp: SingleReleaseLP | None = None,
    problem: Any = None,
) -> ComposedSolution:
    """Solve a ``privacy="composed"`` design (module docstring); the pipeline wraps the result.

    ``verbose`` shows a progress bar on stderr (accounting checks and search evaluations, with the
    stage). ``time_limit`` (seconds) stops the work in time: the best certified point found so far is
    returned with status ``"time_limit"``, its proven bound and gap. ``options``: raw HiGHS options of
    the LPs inside (the k = 1 LP, the candidates' and the bounds' LPs). ``lp``: how those LPs are
    solved (:data:`~optnoise.design.composed_bounds.SingleReleaseLP`; the pipeline passes its own),
    by default each single-release design's own solve with ``solver``. ``problem(design, clock, options)``:
    another release's :class:`ComposedProblem` (its hooks); then every k, k = 1 included, is searched.
    """
    t0 = time.perf_counter()
    lp_solver: str | SingleReleaseLP = lp if lp is not None else ("highs" if solver == "auto" else solver)
    with Progress("composed", verbose=verbose, time_limit=time_limit, share=TIME_SHARE, unit="check") as clock:
        if problem is not None:
            out = _search(problem(design, clock, options), lp_solver)
        else:
            out = trivial_budget(design) or _solve(design, lp_solver, clock, options)
    out.solve_time = time.perf_counter() - t0
    return out


def _solve(
    design: NoiseDesign, lp_solver: str | SingleReleaseLP, clock: Progress, options: dict[str, Any] | None
) -> ComposedSolution:
    """The k = 1 LPs, or the candidates and searches of k >= 2 (the best certified point at a time limit)."""
    if design.compositions == 1:
        if design.objective == "distortion":
            return _k1_distortion(design, lp_solver, clock.left(total=True), options)
        return _k1_epsilon(design, lp_solver, clock, options)
    return _search(ComposedProblem(design, clock, options), lp_solver)


def _search(prob: ComposedProblem, lp_solver: str | SingleReleaseLP) -> ComposedSolution:
    """The candidates and searches of ``prob`` (the best certified point at a time limit)."""
    try:
        return _primal(prob, lp_solver) if prob.design.objective == "distortion" else _dual(prob, lp_solver)
    except OutOfTime:
        return _timed_out(prob, lp_solver)


def trivial_budget(design: NoiseDesign) -> ComposedSolution | None:
    """The designs solved without a search, each with its proof (``None`` for every other design).

    The distortion is linear in the PMF, ``sum_z c(z) f(z)`` (for clamped noise with the averaged cost
    of :func:`_clamp_cost`), so every PMF has distortion at least ``c_min = min_z c(z)`` and a PMF
    supported on the minimisers of ``c`` attains it.

    * ``delta >= 1``: every mechanism is (eps, 1)-DP at every eps >= 0, since the hockey-stick
      divergence ``sup_S P(S) - e^eps Q(S)`` never exceeds ``P(S) <= 1``; so is every composition.
      The constraint is void: the point mass at the least-cost noise value (0 for every metric,
      whose cost vanishes at zero error) is optimal with distortion ``c_min``, and the least composed
      eps under any cap ``>= c_min`` is 0, met by that point mass.
    * the least-cost PMF (the point mass, or the uniform PMF on every least-cost value) already meets
      the composed budget: optimal with distortion ``c_min``.
    * ``objective="epsilon"`` with ``max_distortion < c_min``: no PMF meets the cap: ``"infeasible"``.
    * ``objective="epsilon"`` with ``max_distortion = c_min`` and delta < 1: only PMFs on the
      minimisers of ``c`` meet the cap; when they are a single noise value whose release tells some
      neighbouring inputs apart with certainty (delta = 1 at every eps; e.g. the point mass at 0), no
      finite eps is achievable: ``"infeasible"``.
    """
    d = design
    cost = _search_cost(d)
    c_min = float(cost.min())
    at_min = np.flatnonzero(cost <= c_min)
    point = np.zeros(cost.size)
    point[int(at_min[0])] = 1.0
    delta = float(d.delta or 0.0)
    why = f"every PMF has distortion >= {c_min:.10g}, the least cost of one noise value"
    if d.objective == "epsilon":
        cap = float(d.max_distortion or 0.0)
        if cap < c_min:
            return ComposedSolution(None, "infeasible", None, f"max_distortion = {cap:g} < {c_min:.10g}: {why}", 0.0)
        if delta >= 1.0:
            msg = f"delta = {delta:g} >= 1: every release is (0, 1)-DP; the least-cost point mass meets the cap"
            return ComposedSolution(point, "optimal", 0.0, msg, 0.0, eps_objective=0.0, method="point mass")
        if cap == c_min and at_min.size == 1 and composition(d, point).infinite_mass >= 1.0:
            return ComposedSolution(
                None,
                "infeasible",
                None,
                f"max_distortion = {cap:g}: {why}, and only the point mass at that value meets it; its releases "
                f"are told apart with certainty, so no finite eps is achievable at delta = {delta:g} < 1",
                0.0,
            )
        return None
    if delta >= 1.0:
        msg = (
            f"delta = {delta:g} >= 1: every release is (eps, 1)-DP, so the least-cost PMF, the point mass at "
            f"noise {'0' if cost[int(at_min[0])] == 0 else 'of least cost'}, is optimal ({why})"
        )
        return ComposedSolution(point, "optimal", c_min, msg, 0.0, method="point mass")
    eps = float(d.eps or 0.0)
    spread = np.zeros(cost.size)
    spread[at_min] = 1.0 / at_min.size
    for f, what in ((point, "point mass"), (spread, "uniform PMF")):
        if composition(d, f).delta(eps) <= delta:
            msg = f"the least-cost {what} meets the composed budget, so it is optimal ({why})"
            return ComposedSolution(f, "optimal", c_min, msg, 0.0, method=what)
        if at_min.size == 1:
            break
    return None


def _timed_out(prob: ComposedProblem, lp_solver: str | SingleReleaseLP) -> ComposedSolution:
    """The best certified candidate when the time limit ran out (the perfectly private release if none)."""
    d = prob.design
    cands = {k: v for k, v in prob.cands.items() if math.isfinite(v[0])}  # eps = inf: not an answer
    epsilon = d.objective == "epsilon"
    if not cands:
        safe = prob.safe()
        if epsilon:
            return ComposedSolution(None, "time_limit", None, "time limit: no candidate within the cap yet", 0.0)
        cands["safe"] = (prob.distortion(safe), safe, "perfectly private release")
    best = min(cands.values(), key=lambda c: c[0])
    bound, how = None, ""
    if prob.clock.left(total=True) > 0:
        end = _bound_deadline(prob)
        if epsilon:
            bound, how = prob.eps_bound(float(d.max_distortion or 0.0), best[0], lp_solver, end)
        else:
            bound, how = prob.bound(lp_solver, best[0], end)
    table = {k: v[0] for k, v in cands.items()}
    what = "eps" if epsilon else "distortion"
    msg = (
        f"composed design, {prob.path} path: stopped at the time limit ({prob.clock.time_limit:g} s); least "
        f"{what} among certified candidates is {best[2]}; candidates "
        f"{', '.join(f'{k} {v:.6g}' for k, v in table.items())}; {prob.checks} accounting checks at h = {prob.h:g}"
    )
    out = _settle(best[1], best[0], bound, msg, best[2], table, best[0] if epsilon else None, "time_limit")
    return replace(out, bound_method=how)


def _family_candidates(prob: ComposedProblem, value_of: Any, guess: float) -> dict[str, tuple[float, np.ndarray, str]]:
    """Each family calibrated by ``value_of(make, start, coarse) -> (value, pmf, scale)``; the
    convolution's Laplace share by golden section (coarse calibrations warm-started from the last scale).
    Each certified candidate enters ``prob.cands`` at once (a time limit returns the best of them)."""
    out = prob.cands
    last = guess
    for fam in ("gaussian", "laplace"):
        known = prob.family_candidate(fam)
        if known is not None and known[0] in out:
            last = known[1] if fam == "gaussian" else last
            continue
        prob.clock.stage(f"calibrating {fam}")
        got = value_of(lambda V, fam=fam: family_pmf(fam, V, prob.support), guess)
        if got is not None:
            out[fam] = (got[0], got[1], fam)
            last = got[2] if fam == "gaussian" else last

    def coarse(w: float) -> float:
        nonlocal last
        got = value_of(lambda V: family_pmf("convolution", V, prob.support, w), last, coarse=True)
        last = got[2] if got is not None else last  # warm start the next share's calibration
        return math.inf if got is None else got[0]

    prob.clock.stage("calibrating convolution")
    _, w_best = golden_share(coarse, grid=(0.25, 0.5, 0.75), steps=1 if prob.heavy else 4)
    got = value_of(lambda V: family_pmf("convolution", V, prob.support, w_best), last)
    if got is not None:
        out["convolution"] = (got[0], got[1], f"convolution (Laplace share {w_best:.3f})")
    return out


def _search_time(prob: ComposedProblem) -> float:
    """Seconds left for the surrogate searches: ``SEARCH_SHARE`` of the time limit (``inf`` without one)."""
    if prob.clock.time_limit is None:
        return math.inf
    return prob.clock.t0 + SEARCH_SHARE * prob.clock.time_limit - time.perf_counter()


def _primal(prob: ComposedProblem, lp_solver: str | SingleReleaseLP) -> ComposedSolution:
    d = prob.design
    eps = float(d.eps or 0.0)
    guess = gaussian_guess(prob.k, eps, prob.delta, prob.sensitivity)

    def calibrated(make: Any, start: float, coarse: bool = False) -> tuple[float, np.ndarray, float] | None:
        rtol = 1e-4 if coarse else 1e-5 if prob.heavy else 1e-7
        # beyond a few squared radii a family is flat on its support: more scale buys no privacy
        V = bisect_smallest(lambda V: prob.private(make(V), eps), start, rtol=rtol, grow=1.1, maximum=prob.max_scale)
        if V is None:
            return None
        pmf = make(V)
        return prob.distortion(pmf), pmf, V

    cands = _family_candidates(prob, calibrated, guess)
    if prob.lp_candidates and not prob.structured and prob.support.size <= LP_CANDIDATE_SIZE:
        prob.clock.stage("single-release LP candidate")
        lp = lp_candidate(prob, eps, lp_solver)
        if lp is not None:
            cands["lp"] = (prob.distortion(lp), lp, "single-release LP at (eps0, delta/2k)")
    if not cands:
        safe = prob.safe()
        cands["safe"] = (prob.distortion(safe), safe, "perfectly private release")
    start = min(cands.values(), key=lambda c: c[0])
    starts = [np.maximum(start[1], 1e-300)]
    known = prob.family_candidate("gaussian")
    if prob.structured and known is not None and start[2] != cands.get(known[0], (0, 0, ""))[2]:
        # the family member at the known candidate's scale: a start needs no certificate (and no zeros)
        starts.append(prob.hybrid(start[1], family_pmf("gaussian", known[1], prob.support)))
    elif prob.structured and "gaussian" in cands and start[2] != "gaussian":
        starts.append(prob.hybrid(start[1], cands["gaussian"][1]))
    found = None
    # the second start guards against a local minimum of the first one's landscape. Both run unless a
    # time limit binds: without one, what is searched depends on evaluation counts only, not on the
    # machine's speed, so the solve is reproducible (a binding time limit is reported in the message)
    for i, f0 in enumerate(starts):
        left = _search_time(prob)
        if found is not None and left <= 0:
            break
        prob.clock.stage(f"search start {i + 1} of {len(starts)}")
        got = reduced_search(
            f0,
            cost=prob.cost,
            k=prob.k,
            eps=eps,
            mode="distortion",
            target=prob.delta,
            time_limit=max(left, 0.0),
            max_evals=SEARCH_EVALUATIONS,
            progress=lambda: prob.clock.step(check=False),
            **prob.search_args(),
        )
        if found is None or (got.pmf is not None and got.objective < found.objective):
            found = got
    assert found is not None
    if found.pmf is not None:
        prob.clock.stage("calibrating the search's point")
        ok = lambda f: prob.private(f, eps)  # noqa: E731
        tuned = calibrate_temper(found.pmf, ok)
        anchor = prob.anchor(eps, lp_solver) if tuned is None else None
        if anchor is not None:
            tuned = certified_mix(found.pmf, anchor, ok)
        if tuned is not None:
            cands["search"] = (prob.distortion(tuned), tuned, f"{prob.path} search ({found.evaluations} evaluations)")
    best = min(cands.values(), key=lambda c: c[0])
    prob.clock.stage("lower bound")
    bound, how = prob.bound(lp_solver, best[0], _bound_deadline(prob))
    table = {k: v[0] for k, v in cands.items()}
    msg = (
        f"composed design, {prob.path} path: least distortion among certified candidates is {best[2]}; "
        f"candidates {', '.join(f'{k} {v:.6g}' for k, v in table.items())}; search: {found.message}; "
        f"{prob.checks} accounting checks at h = {prob.h:g}; lower bound by {how or 'none'}"
    )
    return replace(_settle(best[1], best[0], bound, msg, best[2], table), bound_method=how)


def _settle(
    pmf: np.ndarray,
    value: float,
    bound: float | None,
    msg: str,
    method: str,
    table: dict[str, float],
    eps=None,
    unproven: str = "feasible",
) -> ComposedSolution:
    """The solution with its status: ``"optimal"`` with a proven gap, else ``unproven``."""
    gap = relative_gap(value, bound) if bound is not None else None
    status = "optimal" if proven_optimal(gap) else unproven
    if status != "optimal":
        msg += f"; {status}: the composed guarantee is re-verified, optimality is not proven"
    return ComposedSolution(pmf, status, bound, msg, 0.0, eps, method, table)


def _bound_deadline(prob: ComposedProblem) -> float | None:
    """When the bounds must end: the end of the time limit (``None`` without one; at least 0.1 s from now)."""
    if prob.clock.time_limit is None:
        return None
    return time.perf_counter() + max(prob.clock.left(total=True), 0.1)


def _dual(prob: ComposedProblem, lp_solver: str | SingleReleaseLP) -> ComposedSolution:
    d = prob.design
    cap = float(d.max_distortion or 0.0)
    uniform = prob.safe()
    if prob.has_safe and prob.distortion(uniform) <= cap:
        e = prob.eps_of(uniform)
        return _settle(uniform, e, 0.0, "the perfectly private release meets the cap", "safe", {"safe": e}, e)

    def at_cap(make: Any, start: float, coarse: bool = False) -> tuple[float, np.ndarray, float] | None:
        V = bisect_largest(lambda V: prob.distortion(make(V)) <= cap, start, rtol=1e-9, floor=1e-9, grow=1.5)
        if V is None:
            return None
        pmf = make(V)
        return prob.eps_of(pmf), pmf, V

    guess = max(cap, 1e-3) / max(1.0, prob.sensitivity**2) if d.metric != "er" else 1.0
    cands = _family_candidates(prob, at_cap, guess)
    if not cands:
        return _settle(uniform, math.inf, None, "no candidate meets the cap", "none", {})
    best = min(cands.values(), key=lambda c: c[0])
    raw = best[1]
    found_msg = ""
    for _ in range(2):  # minimise delta at the best eps so far under the cap, then again at the new eps
        eps_ref = float(best[0])
        if not math.isfinite(eps_ref) or eps_ref <= 0:
            break
        prob.clock.stage("search")
        found = reduced_search(
            np.maximum(raw, 1e-300),
            cost=prob.cost,
            k=prob.k,
            eps=eps_ref,
            mode="epsilon",
            target=cap,
            time_limit=max(_search_time(prob), 0.0) / 2,
            progress=lambda: prob.clock.step(check=False),
            **prob.search_args(),
        )
        found_msg = found.message
        if found.pmf is None:
            break
        raw = found.pmf
        tuned = temper_to_cap(prob, raw, cap)
        if tuned is None:
            break
        e = prob.eps_of(tuned)
        cands["search"] = (e, tuned, f"{prob.path} search ({found.evaluations} evaluations)")
        if e >= best[0]:
            break
        best = cands["search"]
    best = min(cands.values(), key=lambda c: c[0])
    if POLISH and prob.structured:  # smooth corrections of the best point, certified (composed_polish)
        prob.clock.stage("polish")
        pol = polish(prob, best[1], best[0], cap=cap, time_left=lambda: _search_time(prob))
        found_msg += f"; {pol.message}"
        best = cands["polish"] = (pol.value, pol.pmf, f"{best[2]}, polished") if pol.improved else best
    prob.clock.stage("lower bound")
    bound, how = prob.eps_bound(cap, best[0], lp_solver, _bound_deadline(prob))
    table = {k: v[0] for k, v in cands.items()}
    msg = (
        f"composed design (least eps), {prob.path} path: least eps among candidates at the cap is {best[2]}; "
        f"candidates {', '.join(f'{k} {v:.6g}' for k, v in table.items())}; search: {found_msg}; "
        f"accounting h = {prob.h:g}; lower bound by {how or 'none'}"
    )
    return replace(_settle(best[1], best[0], bound, msg, best[2], table, best[0]), bound_method=how)


def _search_cost(design: NoiseDesign) -> np.ndarray:
    """The cost per noise value the search charges: the design's, or a clamped design's per ``eta``."""
    return np.asarray(design.cost, dtype=float).ravel() if design.rel.cyclic else _clamp_cost(design)


def _clamp_cost(design: NoiseDesign) -> np.ndarray:
    """The clamped design's distortion is linear in the noise: ``mean_q cost(clip(q + eta) - q)`` per eta."""
    n = design.n
    q = np.arange(n + 1)[:, None]
    err = np.clip(q + np.arange(-n, n + 1)[None, :], 0, n) - q
    return np.asarray(design.cost, dtype=float)[err + n].mean(axis=0)


# --------------------------------------------------------------------------------------------
# k = 1: the (eps, delta) LP
# --------------------------------------------------------------------------------------------


def _single(design: NoiseDesign, eps: float) -> NoiseDesign:
    return design.replace(
        privacy="dp",
        compositions=None,
        discretization=None,
        objective="distortion",
        max_distortion=None,
        eps=eps,
        delta=design.delta,
    )


def _k1_distortion(
    design: NoiseDesign, lp_solver: str | SingleReleaseLP, time_limit: float, options: dict[str, Any] | None
) -> ComposedSolution:
    limit = None if math.isinf(time_limit) else max(time_limit, 0.1)
    res = single_release_lp(lp_solver)(_single(design, float(design.eps or 0.0)), time_limit=limit, options=options)
    msg = f"k = 1: the (eps, delta) LP (privacy='dp'), status {res.status!r}: {res.message}".rstrip(": ")
    pmf = None if res.pmf is None else np.asarray(res.pmf, dtype=float)
    return ComposedSolution(pmf, res.status, res.bound, msg, res.solve_time, method="LP", bound_method="lp")


def _k1_epsilon(
    design: NoiseDesign, lp_solver: str | SingleReleaseLP, clock: Progress, options: dict[str, Any] | None
) -> ComposedSolution:
    """Least eps with an (eps, delta) LP optimum within the cap: bisection, each side proven by an LP
    (stopped by the time limit where the proofs reached)."""
    cap = float(design.max_distortion or 0.0)
    lo, hi = 0.0, None
    best = None
    e = 1.0

    def lp(eps: float) -> Any:
        clock.step(stage=f"LP at eps = {eps:.6g}", check=False)
        left = clock.left(total=True)
        limit = None if math.isinf(left) else max(left, 0.1)
        return single_release_lp(lp_solver)(_single(design, eps), time_limit=limit, options=options)

    for _ in range(40):  # bracket: double until an LP within the cap
        if clock.expired:
            return ComposedSolution(None, "time_limit", None, "time limit: no (eps, delta) LP within the cap yet", 0.0)
        res = lp(e)
        if res.pmf is not None and res.distortion is not None and res.distortion <= cap and res.verify():
            hi, best = e, res
            break
        if res.bound is not None and res.bound > cap:
            lo = e
        e *= 2.0
        if e > 30.0:
            break
    if hi is None or best is None:
        return ComposedSolution(None, "error", None, "no (eps, delta) LP within the cap for eps <= 32", 0.0)
    timed_out = False
    for _ in range(40):
        if hi - lo <= 0.5 * OPTIMAL_GAP * max(1.0, hi):
            break
        if clock.expired:
            timed_out = True
            break
        mid = 0.5 * (lo + hi)
        res = lp(mid)
        if res.pmf is not None and res.distortion is not None and res.distortion <= cap and res.verify():
            hi, best = mid, res
        elif res.bound is not None and res.bound > cap:
            lo = mid
        else:  # neither proven: stop where the proofs end
            break
    pmf = np.asarray(best.pmf, dtype=float)
    gap = relative_gap(hi, lo)
    status = "optimal" if proven_optimal(gap) else "time_limit" if timed_out else "feasible"
    msg = f"k = 1: least eps by bisection over the (eps, delta) LP; eps in ({lo:.10g}, {hi:.10g}] (both proven)"
    return ComposedSolution(pmf, status, lo, msg, 0.0, eps_objective=hi, method="LP bisection", bound_method="lp")
