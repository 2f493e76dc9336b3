"""The continuous release: ``q + X`` for a real query of sensitivity ``Delta``, over all noise densities.

Cells of width ``w = Delta / m`` are ``[(k - 1/2) w, (k + 1/2) w)`` (centred, so symmetric costs
stay symmetric). Two facts bracket the least distortion over every density:

* **Upper bound** (a mechanism). A density constant on each cell, with cell masses ``f_k``, is
  (eps, delta)-DP for every real shift ``|s| <= Delta`` exactly when ``f`` meets the integer
  constraints for the shifts ``1..m``: for ``s = (j + theta) w`` each cell of the output
  splits into a part ``1 - theta`` facing cell ``k - j`` and a part ``theta`` facing
  ``k - j - 1``, so the hockey stick at ``s`` is ``(1 - theta) H_j + theta H_{j+1}``
  (``H_0 = 0``). Its cost is ``sum_k f_k cbar_k`` with ``cbar_k`` the cell average of the cost.
  That is the additive integer design with ``Neighborhood.bd(m)`` and cost ``cbar``
  (:mod:`optnoise.design.additive`: staircase tails, lazy rows, symmetry, re-verified), which
  this module calls through :class:`~optnoise.design.noise.NoiseDesign`.
* **Lower bound** (over all densities): the LP of :mod:`optnoise.design.continuous_bound`
  (cell masses and first moments, offset-averaged masses, Jensen cuts, a relaxed far cell).

``resolution=w`` fixes ``m``; otherwise ``m`` doubles from :data:`FIRST_RESOLUTION` until the
proven gap ``(upper - lower) / max(1, upper)`` (the rule of
:func:`~optnoise.engine.output.relative_gap`, and Selvi et al.'s) is at most ``gap`` (default 1e-3) or
:data:`MAX_AUTO_RESOLUTION`, :data:`MAX_CELLS` or :data:`MAX_ENTRIES` (the size caps) is reached.
The best upper bound and the best lower bound over the resolutions tried are reported (every one is valid). Status
``"optimal"`` means *proven within the requested gap* (as a MIP gap does); ``"feasible"`` a
valid mechanism whose proven gap is larger (``res.gap`` says how large).

Speed. The upper bound inherits the additive design's lazy rows, symmetry and staircase tails.
The lower-bound LP is solved over symmetric points with lazy rows seeded by the upper bound's
density (:mod:`optnoise.design.continuous_bound`), truncated just past where the mechanism's tail
stops mattering (:func:`_truncation`, widened only when the LP's solution leans on its edge), and
the refinement starts coarse at small eps (:func:`first_resolution`). Each LP is built once and its
lazy rows are added to one HiGHS instance (dual simplex warm starts); across resolutions the
entries active at ``m`` start the LP at ``2 m`` (centred cells do not nest when ``m`` doubles:
:func:`~optnoise.design.continuous_bound.warm_entries` hands on every half-cell they overlap). The
LP grows like ``m^2 / eps`` entries, which is where large eps with large delta spends its time.

Metrics (of the real error): ``"mse"``, ``"mae"``, ``"abs^p"``, ``"exceed:t"`` (``P(|e| > t)``,
real ``t >= 0``) and a function of real arrays (its cell averages by Gauss-Legendre
quadrature; a lower bound only when it is nondecreasing in ``|e|``). Notions: ``"dp"`` (pure at
``delta = 0``), ``"profile"``, ``"rdp"``/``"zcdp"`` (both bounds in
:mod:`optnoise.design.continuous_renyi`; its lower bound is loose, so those end ``"feasible"``) and
``"composed"`` (both objectives, at one resolution: :mod:`optnoise.design.continuous_composed` states why
the cells' integer design is a mechanism on the reals and why its ring bound holds for every density);
``"pdp"`` is refused by name (not yet).

The result (:class:`ContinuousResult`) has ``pld()``, ``compose(k)`` and ``plot()`` (the cell masses'
accounting over the integer shifts, which covers every real shift); ``certify()`` and ``to_opendp()``
refuse and name the deployable grid release, which :meth:`ContinuousResult.to_grid` solves.
"""

from __future__ import annotations

import math
import time
from types import SimpleNamespace
from typing import Any

import numpy as np

from optnoise.design import additive
from optnoise.design.continuous_bound import LowerBound, lower_bound, warm_entries
from optnoise.design.continuous_composed import (
    COMPOSED_RESOLUTION,
    best_of,
    composed_bound,
    composed_fields,
    setup_composed,
)
from optnoise.design.continuous_cost import RealCost, parse_real_metric
from optnoise.design.continuous_renyi import (
    MAX_AUTO_RESOLUTION_RENYI,
    gaussian_baseline,
    profile_view,
    renyi_budget_kw,
    setup_renyi_budget,
    solve_upper_renyi,
)
from optnoise.design.continuous_result import CONTINUOUS, ContinuousResult, describe, is_composed, is_renyi, spec
from optnoise.design.grid import installed_real_baselines
from optnoise.engine.output import relative_gap
from optnoise.engine.progress import time_left
from optnoise.engine.validation import (
    check_choice,
    check_finite,
    check_positive,
    shown,
)
from optnoise.privacy.neighborhood import Neighborhood

__all__ = [
    "CONTINUOUS",
    "CONTINUOUS_NOTIONS",
    "MAX_RESOLUTION",
    "ContinuousResult",
    "describe",
    "model_size",
    "setup",
    "solve",
    "spec",
]

#: The keywords of NoiseDesign only this release takes (refused by name elsewhere).
RELEASE_FIELDS = ("sensitivity", "resolution", "gap")
#: The problem's required flags on the command line (its sensitivity fixes the neighbourhood).
REQUIRED_FLAGS = ("eps", "sensitivity")
#: ``optnoise sweep`` runs it (each point refines over resolutions unless --resolution fixes one; not cached).
SWEEPABLE = True
#: Notions the continuous release supports today (rdp, zcdp: :mod:`optnoise.design.continuous_renyi`;
#: composed: :mod:`optnoise.design.continuous_composed`).
CONTINUOUS_NOTIONS = ("dp", "profile", "rdp", "zcdp", "composed")
#: The keywords of a Renyi budget (rdp, zcdp), accepted only with those notions.
RENYI_BUDGET = ("rdp", "rho", "alphas")
#: The keywords of a composed budget, accepted only with that notion.
COMPOSED_BUDGET = ("compositions", "discretization")
#: ``certify()``/``to_opendp()`` refuse: a real density has no exact floating-point sampler (the grid release does).
DEPLOYABLE = False
#: Largest ``m = sensitivity / resolution`` accepted for a given ``resolution``.
MAX_RESOLUTION = 512
#: The automatic refinement starts at this ``m`` (fewer at small eps: :func:`first_resolution`) and doubles up
#: to :data:`MAX_AUTO_RESOLUTION`.
FIRST_RESOLUTION = 4
MAX_AUTO_RESOLUTION = 256
#: Largest number of cells on a side of the lower-bound LP (the upper bound's support plus margins).
MAX_CELLS = 20_000
#: Largest number of privacy entries (candidate rows) of the lower-bound LP; beyond it the refinement stops.
MAX_ENTRIES = 2_000_000
#: Default requested relative gap.
DEFAULT_GAP = 1e-3
#: Far (or edge) mass of the lower-bound LP's solution above which its truncation is widened and the LP re-solved.
FAR_MASS_TOL = 1e-9


def setup(design: Any, **kw: Any) -> None:
    """Validate and store a continuous design on ``design`` (a :class:`NoiseDesign`; module docstring)."""
    if kw["n"] is not None:
        raise ValueError("n does not apply to release='continuous' (a real query; give sensitivity=Delta)")
    if kw["neighborhood"] is not None:
        raise ValueError("neighborhood does not apply to release='continuous'; give sensitivity=Delta instead")
    # pdp is refused by name here (not yet supported for this release)
    design.privacy = check_choice("privacy", "dp" if kw["privacy"] is None else kw["privacy"], CONTINUOUS_NOTIONS)
    renyi, composed = is_renyi(design), is_composed(design)
    if not composed and (kw["objective"] != "distortion" or kw["max_distortion"] is not None):
        raise ValueError(
            "objective must be 'distortion' for release='continuous' (objective='epsilon' with privacy='composed')"
        )
    for name in ("shape", "rdp", "rho", "alphas", "compositions", "discretization", "support"):
        if kw[name] is not None and not ((renyi and name in RENYI_BUDGET) or (composed and name in COMPOSED_BUDGET)):
            raise ValueError(f"{name} does not apply to release='continuous'")
    if kw["sensitivity"] is None:
        raise ValueError("sensitivity is required with release='continuous' (a positive finite float, e.g. 1.0)")
    design.sensitivity = check_positive("sensitivity", kw["sensitivity"])
    design.m_fixed = None
    design.resolution = None
    if kw["resolution"] is not None:
        design.m_fixed = resolution_cells(design.sensitivity, kw["resolution"])
        design.resolution = design.sensitivity / design.m_fixed
    gap = DEFAULT_GAP if kw["gap"] is None else check_finite("gap", kw["gap"])
    if not 0.0 < gap < 1.0:
        raise ValueError(f"gap must be in (0, 1) (a relative gap between the bounds, e.g. 1e-3); got {shown(gap)}")
    design.target_gap = gap
    design.objective, design.max_distortion = "distortion", None
    design.compositions = design.discretization = None
    design.rdp = design.rho = design.alphas = None
    if renyi:
        setup_renyi_budget(design, kw)
    elif composed:
        setup_composed(design, kw)
    else:
        additive.read_eps_budget(design, kw)
    design.cost_of = parse_real_metric(kw["metric"], design.sensitivity)
    design.metric = design.cost_of.name
    design.release, design.n, design.budget = CONTINUOUS, None, None
    design.neighborhood = None
    design.shape = design.cost = design.support = None


def resolution_cells(sensitivity: float, resolution: Any) -> int:
    """``m = sensitivity / resolution`` when it is an integer in ``1..MAX_RESOLUTION``; else a ``ValueError``."""
    w = check_positive("resolution", resolution)
    ratio = sensitivity / w
    m = max(1, min(MAX_RESOLUTION, int(round(ratio))))
    if not (math.isfinite(ratio) and abs(ratio - round(ratio)) <= 1e-9 * max(1.0, ratio) and 1 <= ratio):
        raise ValueError(
            f"resolution must divide sensitivity = {sensitivity:g} into an integer m = sensitivity / resolution "
            f"in 1..{MAX_RESOLUTION}; got {shown(resolution)} (m = {ratio:g}); m = {m} would do: "
            f"resolution = {sensitivity / m!r}"
        )
    if round(ratio) > MAX_RESOLUTION:
        raise ValueError(
            f"resolution must give m = sensitivity / resolution <= {MAX_RESOLUTION}; got {shown(resolution)} "
            f"(m = {round(ratio)}); m = {MAX_RESOLUTION} would do: resolution = {sensitivity / MAX_RESOLUTION!r}"
        )
    return int(round(ratio))


def _budget(design: Any) -> list[tuple[float, float]]:
    return list(design.profile) if design.profile is not None else [(float(design.eps), float(design.delta))]


def model_size(design: Any) -> dict[str, int]:
    """Size of the upper-bound (additive) model at the first resolution tried."""
    cells = _upper_design(design, design.m_fixed or FIRST_RESOLUTION)
    if is_renyi(design):
        return additive.model_size(cells, cells.renyi_support)
    return additive.model_size(cells, additive.initial_support(cells))


def _upper_design(design: Any, m: int) -> Any:
    """The additive integer design whose optimum is the best piecewise-constant density at ``m`` (docstring).

    Built through :func:`optnoise.design.additive.setup` on a plain namespace, as
    :class:`~optnoise.design.noise.NoiseDesign` builds it (``noise`` imports this module, so
    importing ``NoiseDesign`` here would be an import cycle).
    """
    cost: RealCost = design.cost_of
    w = design.sensitivity / m

    def cell_cost(k: np.ndarray) -> np.ndarray:
        return cost.average(k, w)

    kw: dict[str, Any] = dict.fromkeys(
        ("n", "max_distortion", "shape", "rdp", "rho", "alphas", "compositions", "discretization", "support")
    )
    kw.update(
        neighborhood=Neighborhood.bd(m),
        metric=cell_cost,
        privacy=design.privacy,
        objective="distortion",
        eps=design.eps,
        delta=design.delta if design.profile is None else None,
        profile=design.profile,
    )
    if is_renyi(design):
        kw.update(renyi_budget_kw(design))
    if is_composed(design):
        kw.update(composed_fields(design))
    cells = SimpleNamespace()
    additive.setup(cells, **kw)
    return cells


def _solve_upper(cells: Any, solver: str, time_limit: float | None, options: Any) -> Any:
    return additive.solve(cells, solver=solver, time_limit=time_limit, options=options)


def _beaten(design: Any, upper: float) -> bool:
    """Whether the truncated Laplace or the analytic Gaussian costs less than ``upper`` (then refine further).

    Both are densities meeting the guarantee, so the optimum is below them; a coarse grid's
    mechanism can be above them within the requested gap (measured: 2e-4 relative at eps = 0.02, m = 1).
    """
    if is_renyi(design):
        return upper > gaussian_baseline(design).get("gaussian", math.inf)
    if design.profile is not None or design.metric not in ("mae", "mse"):
        return False
    base = installed_real_baselines(
        eps=design.eps, delta=design.delta, metric=design.metric, sensitivity=design.sensitivity
    )
    return upper > min(base.get("truncated_laplace", math.inf), base.get("gaussian", math.inf))


def _rel_gap(upper: float | None, lower: float | None) -> float | None:
    """:func:`~optnoise.engine.output.relative_gap`, never negative (both bounds are proven)."""
    g = relative_gap(upper, lower)
    return None if g is None else max(0.0, g)


def first_resolution(design: Any) -> int:
    """The first ``m`` of the automatic refinement: :data:`FIRST_RESOLUTION`, fewer cells at small eps.

    The noise spreads over about ``Delta / eps``: at small eps a coarse grid already resolves it
    (the bracket's width is a small fraction of the distortion), while the support in cells, and so
    the LPs, grow like ``m / eps``.
    """
    eps = min(e for e, _ in _budget(design))
    return FIRST_RESOLUTION if eps >= 1.0 else (2 if eps >= 0.2 else 1)


def _truncation(design: Any, m: int, up: Any) -> int:
    """The first number of cells a side of the lower-bound LP: where the mechanism's tail stops mattering, plus m.

    The bound is valid at any ``K``. Beyond ``K`` the mechanism's cells should cost at most 1% of
    the requested gap and (delta > 0) hold at most 1% of gap x delta of mass, so that the LP's
    optimum need not live there; the last ``m`` cells, whose rows reaching past ``K`` are dropped,
    are a margin (:func:`_lower_at` widens it while the LP's solution uses it).
    """
    k = np.arange(0, MAX_CELLS + 1)
    w = design.sensitivity / m
    right, left = up.pmf_at(k), up.pmf_at(-k)
    cost = right * design.cost_of.average(k, w) + left * design.cost_of.average(-k, w)

    def first_below(values: np.ndarray, level: float) -> int:
        beyond = np.cumsum(values[::-1])[::-1]  # beyond[K] = sum over |k| >= K
        small = np.nonzero(beyond <= level)[0]
        return int(small[0]) if small.size else MAX_CELLS

    K = first_below(cost, 1e-2 * design.target_gap * max(up.distortion, 1.0))  # the gap's scale
    deltas = [d for _, d in _budget(design) if d > 0.0]
    if deltas:
        K = max(K, first_below(right + left, 1e-2 * design.target_gap * min(deltas)))
    return int(min(MAX_CELLS, K + m))


def _lower_at(
    design: Any,
    m: int,
    up: Any,
    solver: str,
    time_limit: float | None,
    options: Any,
    warm: np.ndarray | None = None,
) -> LowerBound:
    """The lower bound at ``m``, the truncation widened while the LP's solution uses its edge or the far cells.

    Near ``+-K`` the outputs reaching past the truncation enter the LP merged into one per shift
    (:mod:`~optnoise.design.continuous_bound`, edges), so a solution with mass there may exploit the
    truncation. When the far cells and the outermost cells ``+-K`` hold no mass, no wider truncation
    raises the bound (the solution extended by zeros is feasible there); otherwise, while the mass in
    the last ``m`` cells also exceeds 1% of the requested gap, ``K`` grows by a quarter (at least
    ``m``) and the LP is solved again. Measured at (1, 0.1), l1, m = 16: without the merged edge
    entries 0.6831 at K = 54 and 0.68948 at K = 70; with them 0.68948 at K = 40 already. Every bound
    is valid; the largest is kept.

    ``warm``: entries to start the LP's lazy rows with (a coarser resolution's, mapped by
    :func:`~optnoise.design.continuous_bound.warm_entries`); a wider truncation starts from the
    entries active at the narrower one.
    """
    w = design.sensitivity / m
    K = _truncation(design, m, up)
    t0 = time.perf_counter()
    best: LowerBound | None = None
    while True:
        seed = up.pmf_at(np.arange(-K, K + 1))
        lb = lower_bound(
            design.cost_of, _budget(design), m, w, K, seed, solver, time_left(time_limit, t0), options, warm=warm
        )
        if lb.active is not None:
            warm = lb.active if warm is None else np.concatenate([warm, lb.active])
        if best is None or (lb.bound is not None and (best.bound is None or lb.bound > best.bound)):
            best = lb
        wider = min(MAX_CELLS, K + max(m, K // 4))
        left = time_left(time_limit, t0)
        if (
            lb.bound is None
            or (
                lb.far_mass <= FAR_MASS_TOL
                and (lb.outer_mass <= FAR_MASS_TOL or lb.edge_mass <= 1e-2 * design.target_gap)
            )
            or K >= MAX_CELLS
            or 8 * m * (2 * wider + 1) > MAX_ENTRIES
            or (left is not None and left <= 0.0)
        ):
            best.solve_time = time.perf_counter() - t0
            return best
        K = wider


def solve(
    design: Any,
    solver: str = "auto",
    time_limit: float | None = None,
    *,
    options: dict[str, Any] | None = None,
    verbose: bool = False,
    **unsupported: Any,
) -> ContinuousResult:
    """Solve a continuous design (the hook of :meth:`NoiseDesign.solve`; module docstring)."""
    for ignored in ("mip_gap", "concurrent"):  # LPs only; one solver at a time (the machine's cores are shared)
        unsupported.pop(ignored, None)
    given = {k: v for k, v in unsupported.items() if v is not None and v is not False and v not in ("hull", "clarabel")}
    if given:
        raise ValueError(f"{next(iter(given))} is not yet supported for release='continuous'")
    renyi = is_renyi(design)
    if solver == "cvxpy" and not renyi:
        raise ValueError("solver must be an LP backend for release='continuous'; got 'cvxpy'")
    if renyi and solver not in ("auto", "cvxpy"):
        raise ValueError(f"solver must be 'auto' or 'cvxpy' for release='continuous' with privacy={design.privacy!r}")
    if is_composed(design):
        return _solve_composed(design, solver, time_limit, options)
    t0 = time.perf_counter()
    ms = [design.m_fixed] if design.m_fixed is not None else []
    if not ms:
        m = 1 if renyi else first_resolution(design)
        while m <= (MAX_AUTO_RESOLUTION_RENYI if renyi else MAX_AUTO_RESOLUTION):
            ms.append(m)
            m *= 2
    best_up: Any = None
    best_m = ms[0]
    best_lb: float | None = None
    history: list[dict[str, Any]] = []
    message = ""
    prev: tuple[int, np.ndarray | None] | None = None
    for m in ms:
        t1 = time.perf_counter()
        cells = _upper_design(design, m)
        if renyi:
            up = solve_upper_renyi(cells, time_left(time_limit, t0), options)
        else:
            up = _solve_upper(cells, solver, time_left(time_limit, t0), options)
        t_up = time.perf_counter() - t1
        if up.status not in ("optimal", "feasible") or up.distortion is None:
            message = f"the upper bound at m = {m} ended {up.status!r}: {up.message}"
            if best_up is None:
                best_up, best_m = up, m
            break
        if best_up is None or up.distortion < best_up.distortion:
            best_up, best_m = up, m
        if up.L + 2 * m > MAX_CELLS:
            message = f"m = {m} needs more than MAX_CELLS = {MAX_CELLS} cells a side; stopped"
            break
        # rdp/zcdp: the lower bound is the dp LP's over a profile every such density meets (continuous_renyi)
        target = profile_view(design) if renyi else design
        entries = 8 * m * (2 * _truncation(target, m, up) + 1)  # 4 families x 2 signs at most
        if entries > MAX_ENTRIES:
            message = f"the lower-bound LP at m = {m} would have ~{entries} entries > MAX_ENTRIES = {MAX_ENTRIES}"
            break
        # warm start: the entries active at the previous resolution, mapped onto this grid
        warm = None if prev is None or prev[1] is None else warm_entries(prev[1], m // prev[0])
        lb = _lower_at(target, m, up, "auto" if renyi else solver, time_left(time_limit, t0), options, warm)
        prev = (m, lb.active)
        if lb.bound is not None and (best_lb is None or lb.bound > best_lb):
            best_lb = lb.bound
        history.append(
            {
                "m": m,
                "upper": up.distortion,
                "lower": lb.bound,
                "ratio": None if lb.bound is None or up.distortion <= 0 else (up.distortion - lb.bound) / up.distortion,
                "cells": lb.cells,
                "lp_rows": lb.rows,
                "rounds": lb.rounds,
                "complete": lb.complete,
                "upper_time": t_up,
                "lower_time": lb.solve_time,
            }
        )
        if lb.message:
            message = lb.message
        if verbose:
            print(f"m = {m}: upper {up.distortion:.6g}, lower {lb.bound}, {t_up + lb.solve_time:.1f} s")
        g = _rel_gap(best_up.distortion, best_lb)
        if g is not None and g <= design.target_gap and not _beaten(design, best_up.distortion):
            break
        left = time_left(time_limit, t0)
        if left is not None and left <= 0.0:
            message = "time limit reached"
            break
    return _result(design, best_up, best_m, best_lb, history, message, time.perf_counter() - t0)


def _solve_composed(design: Any, solver: str, time_limit: float | None, options: Any) -> ContinuousResult:
    """A composed design at one resolution (:mod:`optnoise.design.continuous_composed`): the cells' composed
    design (a mechanism), and the larger of the ring's composed bound and (objective distortion) the
    single-release bound of :func:`_lower_at`, both valid over every density."""
    t0 = time.perf_counter()
    m = design.m_fixed or COMPOSED_RESOLUTION
    up = _solve_upper(_upper_design(design, m), solver, time_limit, options)
    t_up = time.perf_counter() - t0
    if up.status not in ("optimal", "feasible") or up.pmf is None:
        return _result(design, up, m, None, [], f"the upper bound at m = {m} ended {up.status!r}: {up.message}", t_up)
    epsilon = design.objective == "epsilon"
    value = float(up.achieved["composed_eps"] if epsilon else up.distortion)
    deadline = None if time_limit is None else t0 + max(time_limit, t_up + 1.0)
    bound = composed_bound(design, m, up.L, value, deadline, options)
    if not epsilon:
        lb = _lower_at(design, m, up, solver, time_left(time_limit, t0), options)
        bound = best_of(bound, (lb.bound, "single-release LP"))
    history = [{"m": m, "upper": value, "lower": bound[0], "bound_method": bound[1], "upper_time": t_up}]
    message = f"composed design at m = {m}: {up.message}; bound by {bound[1] or 'none'}"
    return _result(design, up, m, bound[0], history, message, time.perf_counter() - t0)


def _result(
    design: Any, up: Any, m: int, bound: float | None, history: list[dict[str, Any]], message: str, elapsed: float
) -> ContinuousResult:
    ok = up.status in ("optimal", "feasible") and up.distortion is not None
    value = up.achieved.get("composed_eps") if ok and design.objective == "epsilon" else up.distortion
    gap = _rel_gap(value, bound) if ok else None
    if not ok:
        status = up.status
    elif gap is not None and gap <= design.target_gap:
        status = "optimal"
    else:
        status = "feasible"
        reach = "no proven lower bound" if gap is None else f"proven gap {gap:.3g}"
        message = (f"{message}; " if message else "") + f"{reach} above the requested {design.target_gap:g}"
    return ContinuousResult(
        design=design,
        status=status,
        m=m,
        resolution=design.sensitivity / m,
        support=np.asarray(up.support),
        pmf=up.pmf,
        tail=up.tail,
        distortion=up.distortion,
        bound=bound,
        gap=gap,
        achieved=dict(up.achieved or {}),
        upper=up,
        history=history,
        message=message,
        solve_time=elapsed,
    )
