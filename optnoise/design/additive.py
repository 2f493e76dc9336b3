"""The additive release on the integers: ``q + eta`` on Z, with no range and no ``n``.

Counts and integer sums are released as ``q + eta`` with an integer noise ``eta``, the
way OpenDP and Google's libraries add a discrete Laplace or Gaussian. Neighbouring answers
differ by the neighbourhood's shifts (``Neighborhood.bd(D)``: ``+-1..+-D``; any scalar
shift set, directed or not), so the privacy pairs are ``f(eta)`` against ``f(eta + mu)``
for every integer ``eta``: infinitely many. This module owns everything the release needs:
its noise support and shape, the cost of each metric, the neighbour pairs, the rows, the
evaluation (distortion, ``achieved``, the released errors) and the solve. It is the
"release object" of issue 29 in the making: :class:`~optnoise.design.noise.NoiseDesign`
only dispatches to it.

The noise. A finite part ``f(-L..L)`` plus *staircase tails*: beyond ``L`` the last ``P``
masses (``P`` = the largest ``|shift|``) repeat with a factor ``a = e^-eps`` per period,
``f(x + P) = a f(x)`` for ``x > L - P``, and mirrored on the left. The family is linear in
``f``, contains the Geng-Viswanath staircase (the pure-DP optimum for MSE and MAE) and
every PMF supported on ``{-L+P..L-P}`` (zero base masses), and grows with ``L``. In the
periodic region every privacy term (a hockey-stick term, a leak mass, a ratio) is ``a``
times the term one period before, so the terms of all outputs beyond the first tail period
sum to the first period's times ``1 / (1 - a)``: the LP lists the entries whose smaller
output is at most ``L`` (and larger at least ``-L``) one by one, and one window of
*aggregated* entries ``G = F / (1 - a)`` per side. Tail mass and tail cost are exact
geometric sums (``sum_m a^m c(x + m P)``: closed forms for ``|e|^p`` with integer ``p``
and for indicator costs, a series summed to double precision otherwise); nothing is
truncated.

The support. ``support=L`` fixes the finite part; by default ``L`` starts at
:func:`initial_support` (a few noise scales, and for delta > 0 past where a pure staircase's
tail mass falls to delta) and grows by a quarter until the proven lower bound at the larger ``L`` is within
:data:`SUPPORT_RTOL` (the optimality gap) of the optimum at ``L``: the boundary is then
inactive and the result says so (:attr:`AdditiveResult.support_note`). As the families are
nested, every ``L`` gives a valid design; the optimum is proven for the family (staircase
tails beyond ``L``), which for pure DP and MSE/MAE contains the optimum over all noises. The
loop is :func:`optnoise.design.additive_support.grow_support`, shared with ``objective="delta"``
and the rdp/zcdp designs (:mod:`optnoise.design.additive_renyi`, from the reference Gaussian's support).

Metrics (on the released error ``eta``): ``"mse"``, ``"mae"``, ``"er"`` (``P(eta != 0)``),
``"abs^p"`` (``E|eta|^p``, e.g. ``"abs^3"`` or ``"abs^1.5"``), ``"exceed:t"``
(``P(|eta| > t)``, integer ``t >= 0``), a function ``c(eta)`` of integer arrays, or a cost
vector over ``{-L..L}`` (needs ``support=L``; each tail charged its boundary value).

Notions: ``"dp"`` (pure when ``delta = 0``), ``"pdp"`` (a MILP), ``"profile"``, and ``"rdp"``/``"zcdp"``
(:mod:`optnoise.design.additive_renyi`); ``objective="delta"`` for dp/pdp
(:mod:`optnoise.design.additive_delta`); ``"composed"``, both objectives (:mod:`optnoise.design.additive_composed`).
Symmetric neighbourhoods and costs under the LP notions solve for a symmetric PMF only:
averaging a feasible PMF with its reflection keeps it feasible (the constraints are convex)
and keeps its cost, so nothing is lost, and the LP halves.
"""

from __future__ import annotations

import copy
import math
import time
from typing import Any

import numpy as np

from optnoise.design.additive_composed import setup_composed, solve_composed
from optnoise.design.additive_delta import setup_objective, solve_delta
from optnoise.design.additive_eval import (
    ADDITIVE,
    ADDITIVE_METRICS,
    AdditiveResult,
    Tail,
    normalised,
    notion_of,
    parse_metric,
    settled_result,
    tail_weights,  # noqa: F401 (reached here by callers)
)
from optnoise.design.additive_lp import (  # noqa: F401 (build, model_size, relaxed_bound: callers reach them here)
    budget_pairs,
    build,
    lazy_solve,
    model_size,
    relaxed_bound,
)
from optnoise.design.additive_renyi import RENYI_NOTIONS, setup_renyi, solve_renyi
from optnoise.design.additive_spec import budget_text, describe, problem_lines, spec  # noqa: F401 (NoiseDesign and the CLI call them here)
from optnoise.design.additive_support import MAX_SUPPORT, grow_support
from optnoise.design.settle import backend_solve, proof_dual
from optnoise.engine.progress import time_left
from optnoise.engine.solve import check_solve_args
from optnoise.engine.tolerance import MIP_REL_GAP, OPTIMAL_GAP
from optnoise.engine.validation import (
    MAX_EPS,
    MAX_EPS_REASON,
    check_choice,
    check_delta,
    check_eps,
    check_int,
    check_model_size,
    shown,
)
from optnoise.privacy.neighborhood import Neighborhood
from optnoise.privacy.notions import NOTION_REGISTRY, get_notion
from optnoise.privacy.profile import check_profile

__all__ = [
    "ADDITIVE",
    "ADDITIVE_NOTIONS",
    "ADDITIVE_METRICS",
    "MAX_SUPPORT",
    "AdditiveResult",
    "Tail",
    "compact_support",
    "initial_support",
    "read_eps_budget",
    "setup",
    "solve",
]

#: Notions the additive release supports today.
ADDITIVE_NOTIONS = ("dp", "pdp", "profile", *RENYI_NOTIONS, "composed")
#: Notions refused by name (not yet supported for the additive release).
NOT_YET = ("pdp-kadam",)
#: The keywords only this release takes (:attr:`optnoise.design.releases.Release.fields`).
RELEASE_FIELDS = ("support",)
#: Of those, the integer ones; and the class results are read back with (:class:`~optnoise.design.releases.Release`).
INTEGER_FIELDS, RESULT = ("support",), AdditiveResult


# --------------------------------------------------------------------------------------------
# setup (the NoiseDesign hook)
# --------------------------------------------------------------------------------------------


def scalar_shifts(neighborhood: Neighborhood) -> np.ndarray:
    """The nonzero integer shifts of a scalar neighbourhood on Z (with negatives unless directed)."""
    if neighborhood.dim != 1:
        raise ValueError(
            "neighborhood must have scalar shifts for release='additive' (a query with integer answers): vector "
            "queries on Z^d are refused, since the staircase tails that keep every tail sum exact are defined along "
            "one axis; release each coordinate with its own additive design, or use release='modulo' with its n"
        )
    raw = np.array([s[0] for s in neighborhood.raw], dtype=np.int64)
    if not neighborhood.directed:
        raw = np.concatenate([raw, -raw])
    out = np.unique(raw[raw != 0])
    if out.size == 0:
        raise ValueError("neighborhood must have a nonzero shift for release='additive'")
    if int(np.max(np.abs(out))) > MAX_SUPPORT:
        raise ValueError(f"neighborhood shifts must have |shift| <= {MAX_SUPPORT} for release='additive'")
    return out


def setup(design: Any, **kw: Any) -> None:
    """Validate and store an additive design on ``design`` (a :class:`NoiseDesign`; module docstring)."""
    if kw["n"] is not None:
        raise ValueError(
            "n applies to release='modulo' or 'clamp'; release='additive' releases q + eta on all integers "
            "and takes no n (leave it unset; support=L bounds the finite part of the noise if needed)"
        )
    name = "dp" if kw["privacy"] is None else kw["privacy"]
    known = NOTION_REGISTRY.get(name) if isinstance(name, str) else None
    if known is not None and known.shared:  # pdp-kadam: its shared indicators are a modulo MILP
        raise ValueError(
            f"privacy={shown(name)} is not yet supported for release='additive'; use one of "
            f"{', '.join(ADDITIVE_NOTIONS)}"
        )
    design.privacy = check_choice("privacy", name, ADDITIVE_NOTIONS)
    notion = get_notion(design.privacy)
    renyi, composed = notion.renyi, notion.composed
    if composed:  # setup_composed checks its objective
        design.objective, design.max_distortion = "distortion", None
    else:
        setup_objective(design, kw)
    # a Renyi design takes either one's fields here: setup_renyi says which notion a misplaced one needs
    own = {f.name for n in NOTION_REGISTRY.values() if n.renyi for f in n.fields} if renyi else notion.field_names()
    for name in ("shape", "rdp", "rho", "alphas", "compositions", "discretization"):
        if kw[name] is not None and name not in own:
            raise ValueError(f"{name} does not apply to release='additive' with privacy={shown(design.privacy)}")
    if not isinstance(kw["neighborhood"], Neighborhood):
        raise ValueError(
            f"neighborhood must be a Neighborhood (e.g. Neighborhood.bd(3)); got {shown(kw['neighborhood'])}"
        )
    design.neighborhood = kw["neighborhood"]
    design.release, design.n, design.budget = ADDITIVE, None, None
    design.shifts = scalar_shifts(design.neighborhood)
    design.period = int(np.max(np.abs(design.shifts)))
    design.profile = None
    design.rdp = design.rho = design.alphas = None
    design.compositions = design.discretization = None
    if renyi or composed:
        pass  # its budget is read after the support (setup_renyi, setup_composed)
    else:
        read_eps_budget(design, kw, minimised_delta=design.objective == "delta")
        # every pair's ratio holds along the tail
        design.tail_eps = design.eps if design.profile is None else min(e for e, _ in design.profile)
    support = kw["support"]
    if support is not None:
        support = check_int("support", support, minimum=1, maximum=MAX_SUPPORT)
        if support < design.period:
            raise ValueError(f"support must be at least the largest |shift| = {design.period}; got {support}")
    design.support = support
    design.cost_of = parse_metric(kw["metric"], support)
    if renyi:
        setup_renyi(design, kw)
    if composed:
        setup_composed(design, kw)
    design.metric = design.cost_of.name
    design.cost = design.cost_of.vector
    design.shape = None
    if support is not None:
        check_model_size(model_size(design, support), what=f"the {design.privacy!r} model of this design")


def read_eps_budget(design: Any, kw: dict[str, Any], *, minimised_delta: bool = False) -> None:
    """Store the budget of an LP notion on ``design``: ``profile`` for ``privacy="profile"``, else eps and delta.

    ``design.privacy`` is set; ``minimised_delta`` leaves delta unset (``objective="delta"``). Shared by the
    releases built on this one (:mod:`optnoise.design.continuous`).
    """
    design.profile = None
    if not get_notion(design.privacy).takes_eps:
        if kw["eps"] is not None or kw["delta"] is not None:
            raise ValueError("privacy='profile' takes its budget (profile=[(eps, delta), ...]) instead of eps/delta")
        if kw["profile"] is None:
            raise ValueError("profile is required with privacy='profile'")
        design.profile = check_profile(kw["profile"])
        design.eps, design.delta = None, None
        return
    if kw["profile"] is not None:
        raise ValueError("profile applies only with privacy='profile'")
    design.eps = check_eps(kw["eps"], maximum=MAX_EPS, why=MAX_EPS_REASON)
    design.delta = None if minimised_delta else 0.0 if kw["delta"] is None else check_delta(kw["delta"])


def initial_support(design: Any) -> int:
    """The first ``L`` tried when ``support`` is unset: a few noise scales ``P / eps``, and past ``exceed:t``.

    An (eps, delta > 0) design starts no wider than :func:`compact_support`. Only the time depends on
    the start: the support grows until its boundary is proven inactive (:func:`grow_support`).
    """
    eps = float(design.tail_eps)
    L = max(2 * design.period, int(math.ceil(4 * design.period / max(eps, 1e-3))), 8)
    deltas = [d for _, d in budget_pairs(design)]
    if min(deltas) > 0:  # past where a pure staircase's tail mass falls to delta: cutting it there pays
        L = max(L, int(math.ceil(design.period * (math.log(1.0 / min(deltas)) + 2.0) / eps)))
    compact = compact_support(design)
    if compact is not None:
        L = min(L, max(compact, 2 * design.period, 8))
    if design.cost_of.beyond is not None:
        L = max(L, design.cost_of.threshold + design.period)
    return min(L, MAX_SUPPORT)


def compact_support(design: Any) -> int | None:
    """Twice the truncated Laplace's half-width plus one period, for the hockey-stick rows at delta > 0; else ``None``.

    The noise scale ``P / eps`` suits pure DP; with delta > 0 the optimal noise is compact: the
    truncated Laplace (Geng, Ding, Guo, Kumar 2020) is (eps, delta)-DP on the half-width
    ``(P / eps) log(1 + (e^eps - 1) / (2 delta))`` (at most ``P`` once delta >= 1/2). Measured on the
    reals at (0.005, 0.75), l1, m = 16 (``P = 16``, idle machine): the noise-scale start is 12800 cells
    a side and the solve took 168 s; from 48 cells it takes 4 s, the same optimum (0.2574405). ``None``
    for pure DP, a profile with a pure pair, the MILP (pdp), Renyi and composed notions.
    """
    notion = notion_of(design)
    if notion.lp != "dp" or notion.composed or notion.renyi:
        return None
    pairs = budget_pairs(design)
    if any(d <= 0.0 for _, d in pairs):
        return None
    widths = [math.log1p(math.expm1(e) / (2.0 * min(d, 0.5))) / e for e, d in pairs]  # in periods
    return int(math.ceil(2.0 * design.period * max(widths))) + design.period


def _solve_at(
    design: Any,
    L: int,
    solver: str,
    time_limit: float | None,
    mip_gap: float,
    verbose: bool,
    options: Any,
    concurrent: bool,
    seed: Any = None,
    loose: bool = False,
) -> AdditiveResult:
    """Solve the model at support ``L``; re-verify; settle the status.

    With a ``seed`` (a PMF as a function of the integers, near the optimum) the rows that cannot
    bind there are left out until a solution needs them (:func:`~optnoise.design.additive_lp.lazy_solve`;
    ``loose``: the seed is a caller's nearby mechanism (``design.lazy_seed``), not an optimum at ``L``, and
    starts it with the looser rule).
    """
    check_model_size(model_size(design, L), what=f"the {design.privacy!r} model of this design at support {L}")
    if seed is not None and not notion_of(design).indicators:
        model, cols, out = lazy_solve(design, L, seed, solver, time_limit, mip_gap, verbose, options, concurrent, loose)
    else:
        model, cols = build(design, L)
        out = backend_solve(model, solver, time_limit, mip_gap, verbose, options, concurrent=concurrent)
    pmf = None
    if out.x is not None:
        raw = out.x[cols.F[2 * design.period : 2 * design.period + 2 * L + 1]]
        if np.all(np.isfinite(raw)) and raw.max() > 0:
            pmf = normalised(design, raw, L)
    support = np.arange(-L, L + 1)
    if pmf is None:
        status = "error" if out.status == "optimal" else out.status
        return AdditiveResult(
            design,
            status,
            support,
            None,
            None,
            None,
            {},
            {},
            out.bound,
            out.gap,
            out.solve_time,
            out.solver,
            out.message,
            model_size=model.size,
        )
    bound = out.bound
    if not model.is_mip and out.status == "optimal" and (out.gap is None or out.gap > OPTIMAL_GAP / 10):
        # the LP bound from the optimal basis in scaled variables (as the modulo pipeline proves it)
        proof = proof_dual(model, out.x)
        if proof is not None and (bound is None or proof[0] > bound):
            bound = proof[0]
    res = _settled(design, pmf, L, out.status, bound, out.message)
    pure = design.profile is None and design.delta == 0.0
    if res.status == "unverified" and not notion_of(design).indicators and not pure:
        mixed = _mixed(design, pmf, L, res.achieved, _pure_at(design, L, solver, time_limit, options, concurrent))
        if mixed is not None:
            again = _settled(design, mixed[0], L, out.status, bound, out.message)
            if again.status in ("optimal", "feasible"):
                again.message = (
                    f"{again.message}; the solver's PMF exceeded the budget within its tolerance ({res.message}); "
                    f"mixed with a fraction {mixed[1]:.3g} of {mixed[2]}"
                ).lstrip("; ")
                res = again
    res.solve_time, res.backend, res.model_size = out.solve_time, out.solver, model.size
    return res


_settled = settled_result  # re-verified, gap recomputed, status settled (one rule for solves and loads)


def _pure_at(
    design: Any, L: int, solver: str, time_limit: float | None, options: Any, concurrent: bool
) -> np.ndarray | None:
    """A verified pure eps-DP PMF of the family at support ``L`` (``None`` for a profile, or on failure).

    Solved at the first support tried for pure DP (no larger than ``L``), whose families are nested
    in the one at ``L``: its staircase extends exactly, and its far masses stay clear of the
    solver's absolute tolerance.
    """
    res = _pure_result(design, L, solver, time_limit, options, concurrent)
    return None if res is None else res.pmf_at(np.arange(-L, L + 1))


def _pure_result(
    design: Any, L: int, solver: str, time_limit: float | None, options: Any, concurrent: bool
) -> AdditiveResult | None:
    """The family's verified pure eps-DP optimum at the first support tried for pure DP (at most ``L``)."""
    if design.profile is not None:
        return None
    pure = copy.copy(design)
    pure.delta = 0.0
    small = min(L, initial_support(pure))
    res = _solve_at(pure, small, solver, time_limit, MIP_REL_GAP, False, options, concurrent)
    return res if res.status in ("optimal", "feasible") else None


def _mixed(
    design: Any, pmf: np.ndarray, L: int, achieved: dict[str, Any], pure: np.ndarray | None
) -> tuple[np.ndarray, float, str] | None:
    """``(1 - lam) f + lam g`` meeting every budget, ``lam`` and what ``g`` is; or ``None``.

    A solver meets its rows to an absolute tolerance (~1e-11 here), which at a small delta can
    exceed the relative re-verification rule. ``g`` is pure eps_t-DP and lies in the family: the
    family's pure optimum ``pure`` when given (it costs least), else the discrete Laplace
    ``e^(-eps_t / P)`` (its tail decays by ``e^-eps_t`` per period ``P``). The hockey stick is
    jointly convex, so ``H(mix) <= (1 - lam) H(f)``: ``lam = 1 - delta / H(f)`` repairs every
    pair with delta > 0 (and the mixture is re-verified like any PMF).
    """
    pairs = budget_pairs(design)
    got = achieved["profile"] if design.profile is not None else [achieved["dp"]]
    lam = 0.0
    for (_, d), h in zip(pairs, got, strict=True):
        if h > d:
            if d == 0.0:
                return None
            lam = max(lam, 1.0 - d / h)
    if not 0.0 < lam < 1e-2:
        return None
    lam = lam * (1.0 + 1e-6) + 1e-15
    if pure is not None:
        return (1.0 - lam) * pmf + lam * pure, lam, "the family's pure-DP optimum"
    alpha = math.exp(-design.tail_eps / design.period)
    g = (1.0 - alpha) / (1.0 + alpha) * alpha ** np.abs(np.arange(-L, L + 1))
    return (1.0 - lam) * pmf + lam * g, lam, "the pure-DP discrete Laplace"


def solve(
    design: Any,
    solver: str = "auto",
    time_limit: float | None = None,
    *,
    mip_gap: float = MIP_REL_GAP,
    verbose: bool = False,
    options: dict[str, Any] | None = None,
    concurrent: bool = True,
    **unsupported: Any,
) -> AdditiveResult:
    """Solve an additive design (the hook of :meth:`NoiseDesign.solve`); ``support`` grown when unset."""
    given = {k: v for k, v in unsupported.items() if v not in (None, False, "hull", "clarabel")}
    if given:
        raise ValueError(f"{next(iter(given))} is not yet supported for release='additive'")
    options, time_limit, mip_gap, _ = check_solve_args(
        solver, formulation="hull", options=options, time_limit=time_limit, mip_gap=mip_gap
    )
    if notion_of(design).composed:
        return solve_composed(design, _solve_at, solver, time_limit, options, concurrent)
    if design.objective == "delta":
        return solve_delta(design, build, initial_support, solver, time_limit, mip_gap, verbose, options, concurrent)
    if notion_of(design).renyi:
        if solver not in ("auto", "cvxpy"):
            raise ValueError(f"solver must be 'auto' or 'cvxpy' for privacy={design.privacy!r}; got {shown(solver)}")
        return solve_renyi(design, time_limit, options, verbose)
    if solver == "cvxpy":
        raise ValueError("solver must be an LP/MILP backend for release='additive'; got 'cvxpy'")
    t0 = time.perf_counter()

    def left() -> float | None:
        return time_left(time_limit, t0)

    args = (solver, mip_gap, verbose, options, concurrent)
    if design.support is not None:
        res = _solve_at(design, design.support, args[0], left(), *args[1:])
        res.support_note = f"support L = {design.support} given: optimal among noises on -L..L with staircase tails"
        return res
    L = initial_support(design)
    seed, loose = None, False
    if notion_of(design).takes_eps and not notion_of(design).indicators and design.delta > 0.0:
        # a caller's seed (continuous: the coarser resolution's mechanism on this grid) only picks the starting
        # rows of the lazy solve, as the pure optimum would; the pure solve is then skipped (it costs the most)
        seed = getattr(design, "lazy_seed", None)
        loose = seed is not None
        if seed is None:
            # the pure optimum is a staircase like the (eps, delta) one: its binding rows are nearly the same
            pure = _pure_result(design, L, solver, left(), options, concurrent)
            seed = None if pure is None else pure.pmf_at
    res = _solve_at(design, L, args[0], left(), *args[1:], seed=seed, loose=loose)

    def relaxed(res: AdditiveResult, wide: int) -> tuple[float | None, dict[str, int]]:
        return relaxed_bound(design, res, wide, solver, left(), options, concurrent)

    return grow_support(
        L,
        res,
        lambda wide: _solve_at(design, wide, args[0], left(), *args[1:]),
        period=design.period,
        value=lambda r: r.distortion,
        relaxed=None if notion_of(design).indicators else relaxed,
        time_limit=time_limit,
        t0=t0,
    )
