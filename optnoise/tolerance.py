"""Floating-point tolerances of re-verification, in one place.

Solvers meet constraints only up to their feasibility tolerance (about 1e-9
with optnoise's settings), so a PMF they return is re-verified from the PMF
alone (:attr:`optnoise.DesignResult.achieved`) and accepted against the
requested delta with the slack below. These are floating-point guarantees;
for a guarantee that holds exactly for the distribution you sample, certify
the design (:mod:`optnoise.certify`).
"""

from __future__ import annotations

__all__ = ["ACHIEVED_TOL", "DELTA_TOL"]

#: Absolute slack on ``f(eta) - e^eps f(eta+mu)`` when PDP indicators are re-evaluated.
ACHIEVED_TOL = 1e-8
#: Re-verified delta may exceed the requested one by at most this much.
DELTA_TOL = 1e-6
