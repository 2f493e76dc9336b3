"""The floating-point re-verification rule and what a status may claim, in one place.

Solvers meet constraints only up to their feasibility tolerance
(:data:`optnoise.engine.tolerance.FEASIBILITY_TOL`, 1e-9 with optnoise's settings), so every
solution they return is re-verified from the solution alone
(:attr:`optnoise.DesignResult.achieved`) and accepted against the requested delta by the one
rule below. ``verify()``, the CLI's ``verify`` and every sweep row use it; nothing else decides.
The solver-side numbers (feasibility tolerance, MIP gap, :data:`~optnoise.engine.tolerance.OPTIMAL_GAP`
and the gap rule :func:`~optnoise.engine.tolerance.settle_gap`) stay in the engine, which knows
nothing of privacy.

The rule
--------
*Delta > 0.* A re-verified delta ``a`` meets a target ``delta > 0`` when ::

    a <= delta * (1 + DELTA_RTOL)          # relative 1e-6, for every delta > 0

The slack is purely relative: a claim at ``delta = 1e-15`` is honoured to about
``1e-21``, never through an absolute term. NaN never meets a target.

*Delta = 0 (pure eps-DP), one rule for every notion.* Every output's privacy loss
must be at most a slightly larger eps::

    f(eta) <= exp(eps * (1 + PDP_EPS_RTOL) + PDP_EPS_ATOL) f(eta+mu)   # 1e-6 relative, 1e-12 absolute

i.e. the hockey stick (``"dp"``) and the leak masses (``"pdp"``, ``"pdp-kadam"``) are
re-verified at ``eps' = eps (1 + 1e-6) + 1e-12`` and must be exactly 0 there. At
delta = 0 all notions are the same constraint (pure DP), so they get the same
tolerance (:func:`check_eps`).

*PDP indicators.* At every delta, an output ``eta`` leaks for a shift ``mu`` when its
privacy loss exceeds that same ``eps'``. This absorbs the rounding of ratio rows
that a solver makes tight (about 1e-14 absolute, so a relative 1e-9 or more on
masses of 1e-6), and nothing else; at eps = 1e-10 the check is still at 1.01e-10. A
mass whose neighbour has mass 0 always leaks. The published MILP's "weak" rows
(13g) are read with the same slack. :func:`pdp_rtol` gives the resulting
multiplicative slack, the ``rtol`` of :mod:`optnoise.privacy.curves`.

These are floating-point guarantees; for a guarantee that holds exactly for the
distribution you sample, certify the design (:mod:`optnoise.deploy.certify`).

Statuses
--------
:func:`settle_status` is the one place that decides what a result may claim:

``"optimal"``
    The solution passes re-verification *and* its objective is proven within the
    relative gap :data:`~optnoise.engine.tolerance.OPTIMAL_GAP` of a valid lower bound: a MILP solver's dual
    bound, an LP's weak-duality bound from its row multipliers
    (:meth:`~optnoise.engine.model.LinearModel.dual_bound`), or a theorem.
``"feasible"``
    The solution passes re-verification, optimality is not proven: ``bound`` and
    ``gap`` say how far it may be (a MILP stopped at a looser ``mip_gap``, a conic
    solver's ``optimal_inaccurate``, a design for a composed guarantee).
``"unverified"``
    A claimed solution (optimal, feasible or a time-limit incumbent) that fails
    re-verification, with the reason; never reported as optimal or feasible.
``"time_limit"``, ``"infeasible"``, ``"unbounded"``, ``"error"``
    What the solver said, with any incumbent.

Tolerances passed by users are bounded (:func:`~optnoise.engine.tolerance.check_tol` with
:data:`MAX_TOL`): a tolerance that could turn a leaky solution into a passing one (e.g. ``verify --tol 1``) is refused.
"""

from __future__ import annotations

import math

from optnoise.engine.tolerance import settle_gap

__all__ = [
    "DELTA_RTOL",
    "PDP_EPS_RTOL",
    "PDP_EPS_ATOL",
    "pdp_rtol",
    "UNVERIFIED",
    "RESULT_STATUSES",
    "delta_allowance",
    "within_delta",
    "dp_eps",
    "MAX_TOL",
    "settle_status",
    "settle_gap",
    "CertificationError",
]


class CertificationError(ValueError):
    """The requested (eps, delta) cannot be certified exactly (or the result is not certifiable).

    Raised by :func:`optnoise.deploy.certify.certify_result` (and re-exported there and as
    ``optnoise.CertificationError``); it lives here, below the design layer, so that a design
    result can raise it without importing deployment code.
    """


#: Relative slack of the delta rule: ``achieved <= delta * (1 + DELTA_RTOL)``.
DELTA_RTOL = 1e-6
#: PDP indicators are evaluated at ``eps * (1 + PDP_EPS_RTOL) + PDP_EPS_ATOL``.
PDP_EPS_RTOL = 1e-6
PDP_EPS_ATOL = 1e-12

#: Status of a result whose solver claimed a solution that failed re-verification.
UNVERIFIED = "unverified"
#: Every status a design result can carry.
RESULT_STATUSES = ("optimal", "feasible", "infeasible", "unbounded", "time_limit", "error", UNVERIFIED)

#: Largest tolerance a user may pass to a re-verification (``verify --tol``): it may absorb float
#: rounding, never a leak.
MAX_TOL = 1e-6


def pdp_rtol(eps: float) -> float:
    """The relative slack on ``f(eta) / (e^eps f(eta+mu))`` that PDP indicators get at ``eps``.

    ``exp(eps * PDP_EPS_RTOL + PDP_EPS_ATOL) - 1``: reading ``f > e^eps (1 + rtol) g``
    is reading the privacy loss against ``eps * (1 + 1e-6) + 1e-12``.
    """
    return math.expm1(float(eps) * PDP_EPS_RTOL + PDP_EPS_ATOL)


def dp_eps(eps: float, pure: bool) -> float:
    """The eps at which the DP hockey stick is re-verified: ``eps``, or for a pure target (delta = 0) the
    slackened ``eps (1 + 1e-6) + 1e-12`` that every notion shares there (module docstring)."""
    return float(eps) + math.log1p(pdp_rtol(eps)) if pure else float(eps)


def delta_allowance(delta: float) -> float:
    """The largest re-verified delta that meets the target ``delta`` under the rule."""
    return float(delta) * (1.0 + DELTA_RTOL)


def within_delta(achieved: float, delta: float) -> bool:
    """True when a re-verified ``achieved`` delta meets the target ``delta`` (NaN never does)."""
    a = float(achieved)
    return not math.isnan(a) and a <= delta_allowance(delta)


def settle_status(
    status: str,
    achieved: float | None,
    target: float | None,
    *,
    notion: str,
    value: float | None = None,
    cap: float | None = None,
    measure: str = "distortion",
    cap_name: str = "max_distortion",
) -> tuple[str, str]:
    """The status a result may carry after re-verification, and why.

    ``status`` is what the solver said; ``achieved`` the delta re-verified from
    the PMF under ``notion`` (``None`` without a PMF); ``target`` the delta the
    PMF must meet. A claimed solution (``"optimal"``, ``"feasible"`` or a ``"time_limit"``
    incumbent) that fails :func:`within_delta` becomes :data:`UNVERIFIED`; the
    returned message says by how much. With a ``cap`` (the minimise-delta
    objective), the re-computed ``value`` of the ``measure`` must also meet it
    by the same rule. Every other status is kept.
    """
    if status not in ("optimal", "feasible", "time_limit") or achieved is None:
        return status, ""
    if target is None or not math.isfinite(float(target)):
        return UNVERIFIED, f"re-verification impossible: no finite target delta under {notion!r}"
    if within_delta(achieved, target):
        if cap is not None and value is not None and not within_delta(value, cap):
            return UNVERIFIED, (
                f"re-verification failed: the {measure} {value:.10g} exceeds the cap {cap_name} = {cap:g} "
                "beyond the tolerance rule"
            )
        return status, ""
    return UNVERIFIED, (
        f"re-verification failed: the solver reported {status!r}, but the PMF's {notion} delta is "
        f"{float(achieved):.6g} > {delta_allowance(target):.6g} (target {float(target):.6g} with the "
        f"tolerance rule of optnoise.privacy.verification)"
    )
