"""Composition-targeted noise design: ``NoiseDesign(privacy="composed", compositions=k, ...)``.

The problem. One release (modulo or clamped, scalar or vector, any metric) is designed so
that its **k-fold adaptive composition** is (eps, delta)-DP, as optnoise accounts it:
:func:`optnoise.privacy.accounting.compose_pairs` on the release's pairs (the dominating
pair of every neighbouring pair, pessimistic connect-the-dots PLD at the design's
``discretization`` h, default :data:`~optnoise.privacy.accounting.DISCRETIZATION` = 1e-4),
which is exactly what ``res.compose(k, discretization=h)`` reports. Two forms:

``objective="distortion"`` (eps, delta given)
    least distortion of one release such that ``compose(k).delta(eps) <= delta``;
``objective="epsilon"`` (delta and ``max_distortion`` given, eps unset)
    least composed ``eps = compose(k).epsilon(delta)`` such that the distortion is at most
    ``max_distortion`` (e.g. the best eps at variance 25).

Soundness. Every returned PMF is checked by that accounting itself: the last step of every
path is a 1-D calibration (temper ``f^a``, a family's scale, or a mixture) whose every
trial is judged by the accounting with a relative margin :data:`CALIBRATION_MARGIN`, and
the result re-verifies it from the PMF alone (``DesignResult.achieved["composed"]``).
Searches use a differentiable surrogate (:mod:`optnoise.design.composed_search`) and never
decide privacy. At k = 1 the 1-fold composition is the release itself: its guarantee is the
exact hockey stick (as ``privacy="dp"`` re-verifies it), and ``compose(1)`` agrees with it
when eps lies on the accounting grid (``eps / h`` an integer, e.g. eps = 1 at h = 1e-4);
between grid points the connect-the-dots PLD over-states it.

Paths (``DesignResult.message`` names the one taken):

``k = 1``
    the (eps, delta) LP, delegated to ``privacy="dp"``: exactly its optimum and status. The
    epsilon form bisects eps over that LP: each LP either gives a PMF within the cap or
    proves (weak duality) that none exists, so the gap is proven.
``structured`` (k >= 2; modulo, scalar, symmetric neighbourhood, cost symmetric under eta -> -eta)
    the colleague's method: symmetric PMFs parametrised by their half-line privacy losses,
    the constraint removed by tempering, L-BFGS on the surrogate with exact gradients, then
    the certified temper calibration. The pairs ``(f, f(.+mu))`` and ``(f, f(.-mu))`` of a
    symmetric PMF have the same PLD, so one pair per ``|mu|`` enters the surrogate.
``general``
    everything else (clamped release, vector queries, directed or asymmetric shift sets,
    asymmetric costs): the same search over all log-masses, with the surrogate of the worst pairs (a working
    set refreshed from the single-release profile), then the certified temper calibration
    and, for clamped noise, a certified mixture with a strictly private release when
    tempering cannot reach the target.

In every k >= 2 path the candidates (discrete Gaussian, discrete Laplace, their best
convolution over the Laplace share of the variance; in the general path also the
single-release LP optimum at a per-release budget ``(eps0, delta / 2k)``) are calibrated the
same certified way, the search starts from the best, and the least-distortion certified PMF
is returned, so the result is never worse than any calibrated candidate.

Status. ``"optimal"`` only with a proof: k = 1 (the LP's own proof), a trivial budget (below) or a
proven gap within :data:`~optnoise.engine.tolerance.OPTIMAL_GAP`. Otherwise ``"feasible"`` (or
``"time_limit"``, below): the composed
guarantee holds (re-verified) and ``bound`` is a proven lower bound, ``gap`` the relative gap:

* any metric: the k = 1 LP at the same (eps, delta) (one release is a post-processing of
  the composition, so it is (eps, delta)-DP);
* ``"mse"`` and ``"circular-mse"`` with modulo noise (scalar or vector): the sum statistic.
  ``T = sum_i y_i - c (mod n+1)`` is a post-processing of k releases with neighbouring answers
  ``q, q + mu``; its noise ``g`` is the k-fold convolution, shifted by ``c``, and its pair is
  ``(g, g(. + k mu))``, so ``g`` is feasible for the (eps, delta) LP with the shifts ``k mu``
  and the circular MSE. With integer representatives ``eta_i`` (of ``{0..n}`` for "mse", of
  the circular interval for "circular-mse": both have ``eta^2 >=`` the circular distance
  squared), the circular distance of ``S - c`` is at most ``|S - c|`` with
  ``S = sum eta_i``, and ``c = round(E S)`` gives
  ``E (S - c)^2 <= k Var(eta) + 1/4 <= k MSE + 1/4`` per coordinate. Hence
  ``MSE >= (LP_k - d/4) / k``; no symmetry of the PMF is assumed.

* modulo noise (any metric, shift set and dimension, up to
  :data:`~optnoise.design.composed_tradeoff.MAX_CELLS` values): the *trade-off bound* of
  :mod:`optnoise.design.composed_tradeoff`. For every cost V, certified duals of a small LP bound
  the least distinguishable trade-off curve any noise of cost <= V can have; a pair of
  distributions with a curve above it is composed k times, with every loss rounded down; if even
  that composition breaks (eps, delta), no certified design costs V or less. Bisection on V; for
  symmetric shift sets and costs the LP runs over symmetric PMFs, which loses nothing (that
  module proves it).

``bound`` is the largest of these, and ``DesignResult.bound_method`` (the cache proof's
``"method"``) says which: ``"tradeoff"`` or ``"lp"``. For the epsilon form, the bound is the
largest eps at which they prove that no design within the cap exists (the trade-off curve at
cost ``max_distortion``, composed, at every eps below it breaks delta). Measured at k = 10,
(1, 1e-5), +-1, circular MSE, n = 170: the LP bounds give 18.28 (14% of the design's 129.30),
the trade-off bound 79.60 (61%, gap 0.38); at k = 2, n = 128: 7.64 against 7.83; at k = 100,
(n = 896): 772 against 1390 (the LP bounds: 154). Epsilon form at k = 10, delta = 1e-6, variance
25, n = 140: eps >= 2.11 against the design's 2.66 (the LP bounds: 0.84).

Trivial budgets (:func:`~optnoise.design.composed_solve.trivial_budget`, no search). The distortion is
linear in the PMF, so no PMF does better than the least cost ``c_min`` of one noise value. With
``delta >= 1`` every release is (eps, 1)-DP (a hockey-stick divergence never exceeds 1), so the
point mass at the least-cost value (0 for every metric) is ``"optimal"`` at once, and the least
composed eps under a cap ``>= c_min`` is 0. A cap below ``c_min``, or equal to it when only a point
mass meets it (its releases are told apart with certainty), is ``"infeasible"``.

Time and reproducibility. Without ``time_limit`` nothing depends on the clock: the searches stop
at evaluation limits (:data:`~optnoise.design.composed_solve.SEARCH_EVALUATIONS` per start) and
the calibrations run to their tolerances, so the result depends on the problem only (the same PMF
on any machine). ``solve(time_limit=T)`` bounds the whole solve: the searches get ``0.6 T``
(:data:`~optnoise.design.composed_solve.SEARCH_SHARE`); no accounting check starts after
``0.85 T`` (nor one predicted, from the loss grid and the checks so far, to end after it); the
bound's LPs get the rest. When the limit cuts a search only, the message says so and the status
stays ``"feasible"``; when it cuts the calibrations, the best certified candidate so far (at worst
the perfectly private release) is returned with status ``"time_limit"``, its proven bound and gap.
``solve(verbose=True)`` (and the CLI's ``solve`` on a terminal, unless ``--quiet``) shows a progress bar on
stderr: accounting checks and search evaluations, with the stage. HiGHS ``options`` apply to the
LPs inside (k = 1, the candidates, the bounds); ``mip_gap`` is refused (no MILP is solved).

Limits. ``compositions`` is an integer in ``1..MAX_DESIGN_COMPOSITIONS`` (bools, floats and
larger values are refused); ``delta > 0`` (for pure DP design ``privacy="dp"`` at eps/k:
pure composition is exact); ``discretization`` in ``[MIN_DISCRETIZATION, MAX_DISCRETIZATION]``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from optnoise.design.composed_bounds import composition, lower_bound, single_delta  # noqa: F401 (re-exported)
from optnoise.design.composed_solve import CALIBRATION_MARGIN, ComposedSolution, solve_composed
from optnoise.engine.validation import check_int, check_positive, shown
from optnoise.privacy import accounting
from optnoise.privacy.notions import get_notion

if TYPE_CHECKING:
    from optnoise.design.noise import NoiseDesign

__all__ = [
    "CALIBRATION_MARGIN",
    "NO_MODEL",
    "check_composed_args",
    "composed_spec",
    "composition",
    "lp_notion",
    "single_delta",
    "COMPOSED",
    "MAX_DESIGN_COMPOSITIONS",
    "MAX_DISCRETIZATION",
    "MIN_DISCRETIZATION",
    "ComposedSolution",
    "check_design_compositions",
    "check_discretization",
    "composed_achieved",
    "lower_bound",
    "solve_composed",
]

#: The notion's name (``privacy="composed"``).
COMPOSED = "composed"
#: Largest ``compositions`` a design accepts (the surrogate's FFT and the accounting grow with k).
MAX_DESIGN_COMPOSITIONS = 1000
#: Accepted accounting grids ``h``.
MIN_DISCRETIZATION, MAX_DISCRETIZATION = 1e-6, 1e-2


def check_design_compositions(value: Any) -> int:
    """A design's ``compositions``: a Python or numpy integer in ``1..MAX_DESIGN_COMPOSITIONS`` (no bool, no float).

    The design cap (1000) bounds the composed search; accounting a given design
    (:func:`optnoise.privacy.accounting.check_compositions`) accepts up to ``10**6``.
    """
    return check_int("compositions (the number of releases)", value, minimum=1, maximum=MAX_DESIGN_COMPOSITIONS)


def check_discretization(value: Any) -> float:
    """``discretization``: the accounting grid h, a number in ``[MIN_DISCRETIZATION, MAX_DISCRETIZATION]``."""
    if value is None:
        return accounting.DISCRETIZATION
    h = check_positive("discretization", value)
    if not MIN_DISCRETIZATION <= h <= MAX_DISCRETIZATION:
        raise ValueError(
            f"discretization must be in [{MIN_DISCRETIZATION:g}, {MAX_DISCRETIZATION:g}] (the accounting grid); "
            f"got {shown(value)}"
        )
    return h


#: Why a composed design has no model of its own.
NO_MODEL = (
    "privacy='composed' has no LP/MILP model: it is solved by optnoise.design.composed (its k = 1 case is the "
    "privacy='dp' LP)"
)


def lp_notion(privacy: str) -> str:
    """The notion of the LPs a design solves: ``"dp"`` for a composed design (k = 1, bounds), else its own."""
    return get_notion(privacy).lp or privacy


def composed_spec(design: Any, describe: bool = False) -> dict[str, Any]:
    """The composed fields of ``design.spec()`` (empty for other notions); ``describe``: for ``repr``."""
    if not design.notion.composed:
        return {}
    out = {"compositions": design.compositions, "discretization": design.discretization}
    if describe:
        lead = {"eps": design.eps} if design.objective == "distortion" else {"max_distortion": design.max_distortion}
        out = {**lead, "delta": design.delta, **out}
    return out


def check_composed_args(
    privacy: Any,
    compositions: Any,
    discretization: Any,
    objective: Any,
    eps: Any,
    delta: Any,
    max_distortion: Any,
) -> dict[str, Any]:
    """The composed-only fields of a :class:`NoiseDesign`, checked (``None`` for every other notion).

    Refuses ``compositions``/``discretization``/``objective="epsilon"`` outside ``privacy="composed"``,
    and inside it: a missing or bad ``compositions``, ``objective="delta"``, ``delta`` missing or 0,
    ``eps`` given with ``objective="epsilon"``, ``max_distortion`` missing there or given with
    ``objective="distortion"``. Every refusal is a ``ValueError`` naming the parameter.
    """
    from optnoise.engine.validation import check_delta

    out: dict[str, Any] = dict.fromkeys(("compositions", "discretization", "delta", "max_distortion"))
    if not get_notion(privacy).composed:
        if compositions is not None or discretization is not None:
            name = "compositions" if compositions is not None else "discretization"
            raise ValueError(f"{name} applies only with privacy='composed'")
        if objective == "epsilon":
            raise ValueError("objective='epsilon' applies only with privacy='composed'")
        return out
    if compositions is None:
        raise ValueError("compositions is required with privacy='composed' (the number of releases k)")
    out["compositions"] = check_design_compositions(compositions)
    out["discretization"] = check_discretization(discretization)
    if objective not in ("distortion", "epsilon"):
        raise ValueError(
            f"objective must be 'distortion' or 'epsilon' with privacy='composed'; got {shown(objective)} "
            "(the least composed delta is not offered)"
        )
    if objective == "epsilon" and eps is not None:
        raise ValueError("eps must be left unset with objective='epsilon' (it is what is minimised)")
    if delta is None:
        raise ValueError("delta is required with privacy='composed' (a number in (0, 1])")
    out["delta"] = check_delta(delta)
    if out["delta"] == 0.0:
        raise ValueError(
            "delta must be > 0 with privacy='composed'; for pure DP the k-fold composition of (eps/k)-DP is "
            "exact: design privacy='dp' at eps/k with delta=0"
        )
    if objective == "epsilon":
        if max_distortion is None:
            raise ValueError("max_distortion is required with objective='epsilon'")
        out["max_distortion"] = check_positive("max_distortion", max_distortion, allow_zero=True)
    elif max_distortion is not None:
        raise ValueError("max_distortion applies only with objective='delta' or 'epsilon'")
    return out


# --------------------------------------------------------------------------------------------
# what a composed design is, as the accounting sees it
# --------------------------------------------------------------------------------------------


def composed_achieved(design: NoiseDesign, pmf: np.ndarray, eps: float | None) -> dict[str, float]:
    """What a composed result re-verifies from its PMF alone.

    ``"composed"``: delta at ``eps`` of the k-fold composition (the exact hockey stick at
    k = 1, the accounting's otherwise); ``"composed_eps"``: the accounting's eps at the
    design's delta; ``"dp"``: the exact single-release delta at ``eps``.
    """
    out: dict[str, float] = {}
    comp = composition(design, pmf)
    delta = float(design.delta or 0.0)
    out["composed_eps"] = float(comp.epsilon(delta)) if delta > 0 else math.inf
    if eps is None or not math.isfinite(eps):
        out["composed"] = math.nan
        out["dp"] = math.nan
        return out
    single = single_delta(design, pmf, eps)
    out["dp"] = single
    out["composed"] = single if design.compositions == 1 else float(comp.delta(eps))
    return out
