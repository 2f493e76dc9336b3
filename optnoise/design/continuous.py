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

Speed. The upper bound inherits the additive design's lazy rows, symmetry and staircase tails; in the
refinement the mechanism at ``m`` picks the first rows at ``2 m``
(:func:`~optnoise.design.continuous_start.finer_seed`) instead of a pure-DP solve: (1, 0.1), l1, m = 128 in
88 s after m = 64 (``benchmarks/RESULTS.md``).
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
:mod:`optnoise.design.continuous_renyi`, the lower bound the larger of its conversion's and the Renyi
tangent-cut bound of :mod:`optnoise.design.continuous_renyi_bound`; still short of the upper bound, so those
end ``"feasible"``) and
``"composed"`` (both objectives: :mod:`optnoise.design.continuous_composed` states why the cells' integer
design is a mechanism on the reals and why its ring bound holds for every density; refined over
``m = 1, 2, 4, ...`` up to :data:`MAX_AUTO_RESOLUTION_COMPOSED`, stopping early when a doubling improves the
mechanism by less than :data:`COMPOSED_STALL`, see :func:`_solve_composed`);
``"pdp"`` is refused by name (not yet).

The result (:class:`ContinuousResult`) has ``pld()``, ``compose(k)`` and ``plot()`` (the cell masses'
accounting over the integer shifts, which covers every real shift); ``certify()`` and ``to_opendp()``
refuse and name the deployable grid release, which :meth:`ContinuousResult.to_grid` solves.
"""

from __future__ import annotations

import dataclasses
import math
import time
from types import SimpleNamespace
from typing import Any

import numpy as np

from optnoise.design import additive
from optnoise.design.additive_renyi import orders_of
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
from optnoise.design.continuous_renyi_bound import renyi_cell_bound
from optnoise.design.continuous_result import (
    CONTINUOUS,
    ContinuousResult,
    describe,
    from_spec,
    is_composed,
    is_renyi,
    spec,
)
from optnoise.design.continuous_start import (
    FIRST_RESOLUTION,
    MAX_CELLS,
    finer_seed,
    first_resolution,
)
from optnoise.design.continuous_start import budget_pairs as _budget
from optnoise.design.continuous_start import truncation as _truncation
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
    "from_spec",
    "model_size",
    "setup",
    "solve",
    "spec",
]

#: The keywords of NoiseDesign only this release takes (refused by name elsewhere).
RELEASE_FIELDS = ("sensitivity", "resolution", "gap")
#: The problem's required flags on the command line (its sensitivity fixes the neighbourhood).
REQUIRED_FLAGS = ("eps", "sensitivity")
#: ``optnoise sweep`` runs it (each point refines over resolutions unless --resolution fixes one; the points of
#: :data:`CACHED_NOTIONS` are cached, :func:`read_back`).
SWEEPABLE = True
#: The notions whose results a sweep's cache reads back (:func:`read_back` re-proves their bound); the others'
#: bounds (a composed ring bound, a Renyi profile's) are not re-proved from stored data: solved again.
CACHED_NOTIONS = ("dp", "profile")
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
MAX_AUTO_RESOLUTION = 256
#: Largest number of privacy entries (candidate rows) of the lower-bound LP; beyond it the refinement stops.
MAX_ENTRIES = 2_000_000
#: The automatic refinement of a composed design: ``m = COMPOSED_RESOLUTION, 2 m, ...`` up to this
#: (:func:`composed_resolutions`; the composed search grows with ``k m`` and takes minutes at k = 10, m = 4).
MAX_AUTO_RESOLUTION_COMPOSED = 16
#: A composed design's refinement stops when a doubling of ``m`` improves its distortion (or composed eps) by
#: less than this, relative, on the best so far (:func:`_solve_composed`).
COMPOSED_STALL = 1e-3
#: Default requested relative gap.
DEFAULT_GAP = 1e-3
#: Far (or edge) mass of the lower-bound LP's solution above which its truncation is widened and the LP re-solved.
FAR_MASS_TOL = 1e-9
#: The share of a time limit kept for building the result after the last LP (at most 1 s; :func:`_for_the_lps`).
RESULT_RESERVE = 0.01


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
    # a warm start (continuous_warm) holds cell masses at the fixed resolution only
    cells.warm_start = getattr(design, "warm_start", None) if m == design.m_fixed else None
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
        if (
            lb.bound is None
            or (
                lb.far_mass <= FAR_MASS_TOL
                and (lb.outer_mass <= FAR_MASS_TOL or lb.edge_mass <= 1e-2 * design.target_gap)
            )
            or K >= MAX_CELLS
            or 8 * m * (2 * wider + 1) > MAX_ENTRIES
            or _out_of_time(time_limit, t0)
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
    time_limit = _for_the_lps(time_limit)
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
    proof: dict[str, Any] | None = None
    history: list[dict[str, Any]] = []
    message = ""
    prev: tuple[int, np.ndarray | None] | None = None
    last_up: tuple[int, Any] | None = None
    for m in ms:
        t1 = time.perf_counter()
        cells = _upper_design(design, m)
        if last_up is not None and m == 2 * last_up[0] and not renyi:  # the previous mechanism picks the first rows
            cells.lazy_seed = finer_seed(last_up[1])
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
        last_up = (m, up)
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
        if renyi:  # the Renyi sums of the cells with tangent cuts: tighter than the conversion (module docstring)
            tb = renyi_cell_bound(
                design.cost_of, orders_of(cells)[0], m, w=design.sensitivity / m, K=(lb.cells - 1) // 2,
                time_limit=time_left(time_limit, t0),
            )  # fmt: skip
            if tb is not None and (lb.bound is None or tb > lb.bound):
                lb = dataclasses.replace(lb, bound=tb)
        if lb.bound is not None and (best_lb is None or lb.bound > best_lb):
            best_lb = lb.bound
            proof = None if renyi else lower_proof(m, lb)
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
        if _out_of_time(time_limit, t0):
            message = "time limit reached"
            break
    res = _result(design, best_up, best_m, best_lb, history, message, time.perf_counter() - t0)
    res.proof = proof
    return res


def composed_resolutions(design: Any) -> list[int]:
    """The resolutions a composed design tries: ``resolution=``'s ``m``, else ``1, 2, 4, ...`` up to the cap."""
    if design.m_fixed is not None:
        return [design.m_fixed]
    ms, m = [], COMPOSED_RESOLUTION
    while m <= MAX_AUTO_RESOLUTION_COMPOSED:
        ms.append(m)
        m *= 2
    return ms


def _solve_composed(design: Any, solver: str, time_limit: float | None, options: Any) -> ContinuousResult:
    """A composed design refined over resolutions (:mod:`optnoise.design.continuous_composed`).

    At each ``m`` of :func:`composed_resolutions`: the cells' composed design (a mechanism), and the
    larger of the ring's composed bound and (objective distortion) the single-release bound of
    :func:`_lower_at`. Every one of those bounds holds over all densities, so the largest over the
    resolutions does; the mechanism kept is the best over them (a finer grid does not nest a coarser
    one's centred cells and the composed search is not exact: measured k = 2, variance 25, eps 0.56475
    at m = 1 and 0.56545 at m = 2). Refinement stops at the first of: the proven gap within ``gap``;
    a value (distortion, or composed eps) improving by less than :data:`COMPOSED_STALL` relative on
    the best so far (the composed bounds close slowly with ``m``, too slowly for a small ``gap``: the
    result's message says so); the time limit; the size caps. ``design.warm_start`` (set by
    :mod:`optnoise.design.continuous_warm` with ``resolution=``): cell masses on ``-W..W`` at that
    resolution, which the cells' search also starts from.
    """
    t0 = time.perf_counter()
    epsilon = design.objective == "epsilon"
    best_up: Any = None
    best_m, best_value = 0, math.inf
    bound: tuple[float | None, str] = (None, "")
    bound_m = 0
    history: list[dict[str, Any]] = []
    stop = ""
    for m in composed_resolutions(design):
        t1 = time.perf_counter()
        up = _solve_upper(_upper_design(design, m), solver, time_left(time_limit, t0), options)
        t_up = time.perf_counter() - t1
        if up.status not in ("optimal", "feasible") or up.pmf is None:
            stop = f"the upper bound at m = {m} ended {up.status!r}: {up.message}"
            if best_up is None:
                return _result(design, up, m, None, [], stop, t_up)
            break
        value = float(up.achieved["composed_eps"] if epsilon else up.distortion)
        gain = None if best_up is None else (best_value - value) / best_value if best_value > 0 else 0.0
        if value < best_value:
            best_up, best_m, best_value = up, m, value
        # the bound gets at least a second after its mechanism, whatever the time limit (a bound at all)
        deadline = None if time_limit is None else max(t0 + time_limit, time.perf_counter() + 1.0)
        at_m = composed_bound(design, m, up.L, value, deadline, options)
        if not epsilon:
            lb = _lower_at(design, m, up, solver, time_left(time_limit, t0), options)
            at_m = best_of(at_m, (lb.bound, "single-release LP"))
        if best_of(bound, at_m) is at_m and at_m[0] is not None:
            bound, bound_m = at_m, m
        history.append(
            {
                "m": m,
                "upper": value,
                "lower": at_m[0],
                "bound_method": at_m[1],
                "upper_time": t_up,
                "time": time.perf_counter() - t1,
            }
        )
        g = _rel_gap(best_value, bound[0])
        if g is not None and g <= design.target_gap:
            break
        if gain is not None and gain < COMPOSED_STALL:
            stop = (
                f"refinement stopped at m = {m}: the {'eps' if epsilon else 'distortion'} improved by "
                f"{max(gain, 0.0):.2g} < COMPOSED_STALL = {COMPOSED_STALL:g} (relative) over m = {best_m}; "
                "the composed bound closes too slowly with m to reach the requested gap"
            )
            break
        if _out_of_time(time_limit, t0):
            stop = f"time limit reached after m = {m}"
            break
        if best_up.L + 2 * m > MAX_CELLS:
            stop = f"m = {m} needs more than MAX_CELLS = {MAX_CELLS} cells a side; stopped"
            break
    tried = ", ".join(str(h["m"]) for h in history)
    message = (
        f"composed design at m = {tried}: mechanism at m = {best_m} ({best_up.message}); "
        f"bound by {bound[1] or 'none'}" + (f" at m = {bound_m}" if bound[1] else "") + (f"; {stop}" if stop else "")
    )
    return _result(design, best_up, best_m, bound[0], history, message, time.perf_counter() - t0)


def _for_the_lps(time_limit: float | None) -> float | None:
    """The share of ``time_limit`` the LPs get: the rest (:data:`RESULT_RESERVE` of it, at most 1 s) builds the result.

    The last LP stops at its limit, and re-verifying its mechanism and building the result take a few
    tenths of a second more (Selvi et al.'s grid at 60 s: up to 60.3 s without the reserve).
    """
    return None if time_limit is None else time_limit - min(RESULT_RESERVE * time_limit, 1.0)


def _out_of_time(time_limit: float | None, t0: float) -> bool:
    """Whether ``time_limit`` seconds have passed since ``t0`` (``time_left`` never reaches 0: it has a floor)."""
    return time_limit is not None and time.perf_counter() - t0 >= time_limit


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


def lower_proof(m: int, lb: LowerBound) -> dict[str, Any] | None:
    """What re-proves ``lb`` at resolution ``m`` (:func:`read_back`): its truncation and its active entries."""
    if lb.bound is None or lb.active is None:
        return None
    return {"kind": "continuous-lp", "m": int(m), "K": (int(lb.cells) - 1) // 2, "active": lb.active.tolist()}


def read_back(
    data: Any, *, design: Any, recheck: bool = True, proof: Any = None, backend: str = ""
) -> ContinuousResult:
    """A continuous result of ``design`` rebuilt from :meth:`ContinuousResult.to_dict` output; no stored number is
    trusted (the sweep cache's and the result files' reader, :data:`RESULT`).

    The mechanism: its cell masses are read and re-verified as the cells' integer design at the stored ``m``
    (:meth:`~optnoise.design.additive_eval.AdditiveResult.from_dict`: tails, distortion and the privacy of every
    shift ``1..m`` recomputed). The bound: the lower-bound LP of ``proof`` (:func:`lower_proof`: its ``m``, its
    truncation ``K`` and its active entries as the starting rows) is solved again, its rows generated lazily as
    ever, so the bound is a fresh weak-duality bound whatever the stored entries; without a proof (or with
    ``recheck`` and none) there is no bound. The status is settled again from the re-proved gap. Only the
    notions of :data:`CACHED_NOTIONS` are read back (``ValueError`` otherwise, as for a malformed field).
    """
    from optnoise.design.additive_eval import AdditiveResult

    if design.privacy not in CACHED_NOTIONS:
        raise ValueError(f"privacy={design.privacy!r} continuous results are not read back (solved again)")
    if not isinstance(data, dict) or data.get("release") != CONTINUOUS:
        raise ValueError(f"a continuous result must be a JSON object with release {CONTINUOUS!r}")
    missing = [k for k in ("m", "status", "support", "pmf") if k not in data]
    if missing:
        raise ValueError(f"result lacks the field {shown(missing[0])}")
    m = data["m"]
    if isinstance(m, bool) or not isinstance(m, int) or not 1 <= m <= MAX_RESOLUTION:
        raise ValueError(f"result field 'm' must be an integer in 1..{MAX_RESOLUTION}; got {shown(m)}")
    if design.m_fixed is not None and m != design.m_fixed:
        raise ValueError(f"result field 'm' must be the design's {design.m_fixed}; got {m}")
    if data["pmf"] is None:
        raise ValueError("result field 'pmf' is missing: a result without a mechanism is not read back")
    cells = _upper_design(design, m)
    support = data["support"]
    if (
        not isinstance(support, list)
        or not support
        or isinstance(support[-1], bool)
        or not isinstance(support[-1], int)
    ):
        raise ValueError("result field 'support' must be the list of cells -L..L")
    cells.support = support[-1]  # the masses are read at their own L (from_dict checks the list is -L..L)
    raw = {"release": additive.ADDITIVE, "status": "feasible", "support": data["support"], "pmf": data["pmf"]}
    up = AdditiveResult.from_dict(raw, design=cells, recheck=False, backend=backend)
    if up.status != "feasible" or up.distortion is None:
        raise ValueError(f"the stored cell masses do not re-verify ({up.status}: {up.message})")
    bound: float | None = None
    if isinstance(proof, dict) and proof.get("kind") == "continuous-lp":
        bm, K = proof.get("m"), proof.get("K")
        if not (isinstance(bm, int) and isinstance(K, int) and 1 <= bm <= MAX_RESOLUTION and 1 <= K <= MAX_CELLS):
            raise ValueError(f"proof fields 'm' and 'K' must be integers in 1..{MAX_RESOLUTION} and 1..{MAX_CELLS}")
        active = np.asarray(proof.get("active") or [], dtype=np.int64).reshape(-1, 4)
        w = design.sensitivity / bm
        # the mechanism's cells seed the rows at its own resolution; at another, only the stored entries do
        seed = up.pmf_at(np.arange(-K, K + 1)) if bm == m else np.full(2 * K + 1, 1.0 / (2 * K + 1))
        lb = lower_bound(design.cost_of, _budget(design), bm, w, K, seed, "auto", None, None, warm=active)
        bound = lb.bound
    res = _result(design, up, m, bound, [], "read back: the cell masses re-verified, the bound re-proved", 0.0)
    history = data.get("history")
    res.history = history if isinstance(history, list) else []
    res.proof = proof if bound is not None else None
    res.backend = backend
    return res


#: How results of this release are read back (:attr:`optnoise.design.releases.Release.result_class`).
RESULT = SimpleNamespace(from_dict=read_back)
