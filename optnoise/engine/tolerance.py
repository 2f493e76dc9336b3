"""The floating-point re-verification rule, in one place.

Solvers meet constraints only up to their feasibility tolerance (about 1e-9
with optnoise's settings), so every PMF they return is re-verified from the
PMF alone (:attr:`optnoise.DesignResult.achieved`) and accepted against the
requested delta by the one rule below. ``DesignResult.verify()``, the CLI's
``verify`` and every sweep row use it; nothing else decides.

The rule
--------
*Delta.* A re-verified delta ``a`` meets a target ``delta`` when ::

    a <= delta * (1 + DELTA_RTOL) + DELTA_ATOL          # 1e-6 relative, 1e-12 absolute

The slack is relative, so a claim at ``delta = 1e-9`` is honoured to about
``1e-15``; the absolute ``1e-12`` only covers the float rounding of sums of many
masses near ``delta = 0`` (pure eps-DP). NaN never meets a target.

*PDP indicators.* An output ``eta`` leaks for a shift ``mu`` when its privacy
loss exceeds a slightly larger eps, with the same relative-plus-absolute shape::

    f(eta) > exp(eps * (1 + PDP_EPS_RTOL) + PDP_EPS_ATOL) f(eta+mu)   # 1e-6 relative, 1e-12 absolute

i.e. the PDP deltas are re-verified at ``eps * (1 + 1e-6) + 1e-12``. This absorbs the
rounding of ratio rows that a solver makes tight (about 1e-14 absolute, so a
relative 1e-9 or more on masses of 1e-6), and nothing else; at eps = 1e-10 the
check is still at 1.01e-10. A mass whose neighbour has mass 0 always leaks (an
absolute slack on masses would hide such infinite-loss outputs at small delta).
The published MILP's "weak" rows (13g) are read with the same slack:
``f(eta) >= exp(-(eps * 1e-6 + 1e-12)) e^eps f(eta+mu)``. :func:`pdp_rtol` gives the
resulting multiplicative slack, the ``rtol`` of :mod:`optnoise.privacy`.

These are floating-point guarantees; for a guarantee that holds exactly for
the distribution you sample, certify the design (:mod:`optnoise.deploy.certify`).

Statuses
--------
A solver's ``"optimal"`` (or a time-limit incumbent) whose PMF fails the rule is
reported as ``"unverified"`` (:data:`UNVERIFIED`) with the reason, never as
``"optimal"``: :func:`settle_status` is the one place that decides.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = [
    "DELTA_RTOL",
    "DELTA_ATOL",
    "PDP_EPS_RTOL",
    "PDP_EPS_ATOL",
    "pdp_rtol",
    "UNVERIFIED",
    "RESULT_STATUSES",
    "delta_allowance",
    "within_delta",
    "check_tol",
    "settle_status",
]

#: Relative slack of the delta rule: ``achieved <= delta * (1 + DELTA_RTOL) + DELTA_ATOL``.
DELTA_RTOL = 1e-6
#: Absolute slack of the delta rule (float rounding of sums near delta = 0).
DELTA_ATOL = 1e-12
#: PDP indicators are evaluated at ``eps * (1 + PDP_EPS_RTOL) + PDP_EPS_ATOL``.
PDP_EPS_RTOL = 1e-6
PDP_EPS_ATOL = 1e-12
#: Status of a result whose solver claimed a solution that failed re-verification.
UNVERIFIED = "unverified"
#: Every status a design result can carry.
RESULT_STATUSES = ("optimal", "infeasible", "unbounded", "time_limit", "error", UNVERIFIED)


FEASIBILITY_TOL = 1e-9
MIP_REL_GAP = 1e-9


def check_tol(name: str, value: Any) -> float:
    """A tolerance: a finite real number >= 0 (NaN, infinities, bools and strings are refused)."""
    if isinstance(value, (bool, str, bytes)) or value is None:
        raise ValueError(f"{name} must be a finite number >= 0; got {value!r}")
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number >= 0; got {value!r}") from None
    if not math.isfinite(out) or out < 0:
        raise ValueError(f"{name} must be a finite number >= 0; got {value!r}")
    return out


def pdp_rtol(eps: float) -> float:
    """The relative slack on ``f(eta) / (e^eps f(eta+mu))`` that PDP indicators get at ``eps``.

    ``exp(eps * PDP_EPS_RTOL + PDP_EPS_ATOL) - 1``: reading ``f > e^eps (1 + rtol) g``
    is reading the privacy loss against ``eps * (1 + 1e-6) + 1e-12``.
    """
    return math.expm1(float(eps) * PDP_EPS_RTOL + PDP_EPS_ATOL)


def delta_allowance(delta: float) -> float:
    """The largest re-verified delta that meets the target ``delta`` under the rule."""
    return float(delta) * (1.0 + DELTA_RTOL) + DELTA_ATOL


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
    PMF must meet. A claimed solution (``"optimal"`` or a ``"time_limit"``
    incumbent) that fails :func:`within_delta` becomes :data:`UNVERIFIED`; the
    returned message says by how much. With a ``cap`` (the minimise-delta
    objective), the re-computed ``value`` of the ``measure`` must also meet it
    by the same rule. Every other status is kept.
    """
    if status not in ("optimal", "time_limit") or achieved is None:
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
        f"tolerance rule of optnoise.engine.tolerance)"
    )
