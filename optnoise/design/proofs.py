"""Re-checking the proof of a stored result: the one check the cache and ``certify`` share.

A result read back from disk (a cache entry, a ``solve --format json`` file) carries numbers: a
status, a ``bound``, a ``gap``. None of them is trusted. :func:`recheck` re-derives the bound from
the result's own proof data or independently of it, and settles the status again:

* **LP** (every LP notion, mechanisms): weak duality of the stored row multipliers on the rebuilt
  model (:meth:`~optnoise.engine.model.LinearModel.dual_bound`); without stored multipliers and with
  ``resolve=True``, the bound of a fresh solve of the same problem.
* **MILP**: a branch-and-bound bound cannot be re-checked from stored data; only a fresh solve
  (``resolve=True``) proves it. The cache does not re-solve, so a MILP entry claiming ``"optimal"``
  is solved again rather than served.
* **mechanisms** (:class:`~optnoise.design.mechanism.MechanismDesign`, lazy rows): the stored row
  multipliers of the final restricted LP with the (pair, output) entries it kept; weak duality on
  that restricted model, rebuilt from the design (it is the relaxation whose optimum the solve
  claimed: :mod:`optnoise.design.mechanism` states why it bounds the full LP). An entry without
  them (or with a malformed entry list) proves nothing and is solved again.
* **composed, distortion objective**: the proven lower bound re-derived by its LPs
  (:func:`optnoise.design.composed_bounds.lower_bound`).
* **composed, epsilon objective**: a stored lower bound ``b`` on eps stands only when the LP bounds
  prove that no design within the distortion cap exists at ``b`` (``lower_bound(eps=b) > cap``);
  otherwise there is none.
* **rdp / zcdp**: tangent cuts at the result's own PMF, solved as an LP and evaluated in certified
  float arithmetic (:func:`optnoise.privacy.renyi_solve.tangent_lp_bound`); for zCDP without the
  ``D_inf`` row, so the bound holds for rho-zCDP itself.

A re-derived bound above the result's objective (beyond ``OPTIMAL_GAP``) contradicts the
re-verified PMF: :func:`recheck` raises ``ValueError`` (the cache then discards the entry and solves
again; ``certify`` refuses the file). A result that claims ``"optimal"`` is kept ``"optimal"`` only
when the re-derived bound proves its gap within ``OPTIMAL_GAP``; otherwise it is served as
``"feasible"`` with the re-derived ``bound`` and ``gap`` (the cache, whose entries must keep their
stored status, solves such an entry again).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from optnoise.design.composed_bounds import lower_bound
from optnoise.engine.output import relative_gap
from optnoise.engine.tolerance import OPTIMAL_GAP, proven_optimal

__all__ = ["recheck", "rederive_bound"]

#: Statuses that claim a solution, and so have something to prove.
_CLAIMS = ("optimal", "feasible", "time_limit")


def _finite(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float, np.floating, np.integer)):
        return None
    return float(x) if math.isfinite(float(x)) else None


def _composed_bound(result: Any) -> float | None:
    d = result.design
    if d.objective != "epsilon":
        # searched no further than the stored design's own cost: a bound above it would be refused anyway
        return lower_bound(d, "highs", upper=_finite(result.distortion))
    b = _finite(result.bound)
    if b is None:
        return None
    if b <= 0.0:
        return b  # eps >= 0 for every design
    lb = lower_bound(d, "highs", eps=b)
    return b if lb is not None and lb > float(d.max_distortion or 0.0) else None


def _renyi_bound(result: Any) -> float | None:
    from optnoise.privacy.renyi import reference_log_pmf
    from optnoise.privacy.renyi_problem import RenyiProblem
    from optnoise.privacy.renyi_solve import tangent_lp_bound

    d, budget = result.design, result.design.budget
    prob = RenyiProblem(d.cost, d.shift_index(), budget.orders(), budget.eps_inf, bound_inf=budget.kind.bound_inf)
    reference = reference_log_pmf(d.n, d.dim, float(budget.sigma2 or 1.0))
    with np.errstate(divide="ignore"):
        # any positive tangent point gives a valid bound; the mixture keeps every mass positive
        tangent = prob.mix(np.log(np.asarray(result.pmf, dtype=float).ravel()), reference, 1.0 - 1e-15)
    b = tangent_lp_bound(prob, tangent)
    return b if math.isfinite(b) else None


def _active(design: Any, stored: Any) -> np.ndarray | None | bool:
    """The (pair, output) mask of a lazy-row proof's entries: ``None`` for the full model, ``False`` if malformed."""
    if stored is None:
        return None
    shape = (design.pairs.shape[0], design.outputs.size) if hasattr(design, "outputs") else None
    try:
        idx = np.asarray(stored, dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        return False
    if shape is None or idx.ndim != 1 or np.any(idx < 0) or np.any(idx >= shape[0] * shape[1]):
        return False
    mask = np.zeros(shape[0] * shape[1], dtype=bool)
    mask[idx] = True
    return mask.reshape(shape)


def rederive_bound(result: Any, proof: Any = None, *, resolve: bool = True, formulation: str = "hull") -> float | None:
    """A lower bound on ``result``'s objective, proven afresh (module docstring); ``None`` when none is.

    ``proof`` is a cache entry's proof (``{"kind": "lp-dual", "dual": [...]}``); the result's own
    ``dual`` is used the same way. ``resolve`` allows a fresh solve where nothing else proves a bound.
    """
    d = result.design
    if getattr(getattr(d, "notion", None), "composed", False):
        return _composed_bound(result)
    budget = getattr(d, "budget", None)
    if budget is not None and budget.is_conic:
        return _renyi_bound(result)
    duals = []
    if isinstance(proof, dict) and proof.get("kind") == "lp-dual" and isinstance(proof.get("dual"), list):
        duals.append((proof["dual"], _active(d, proof.get("active"))))
    if getattr(result, "dual", None) is not None:
        duals.append((result.dual, getattr(result, "active", None)))
    for y, active in duals:
        if active is False:
            continue  # a malformed row set proves nothing
        model = (
            d.build_model(formulation=formulation)
            if active is None
            else d.build_model(formulation=formulation, active=active)
        )
        if not model.is_mip:
            b = model.dual_bound(y)
            if b is not None and math.isfinite(b):
                return float(b)
    if resolve:
        fresh = d.solve(solver="highs", formulation=formulation)
        return _finite(fresh.bound) if fresh.status in _CLAIMS else None
    return None


def recheck(result: Any, proof: Any = None, *, resolve: bool = True, formulation: str = "hull") -> Any:
    """``result`` with its bound re-derived (:func:`rederive_bound`) and its status settled on it.

    Mutates and returns ``result``. ``ValueError`` when the re-derived bound exceeds the objective
    (the stored result contradicts its own proof).
    """
    if result.status not in _CLAIMS or getattr(result, result._SOLUTION) is None:
        return result
    objective = result._objective()
    bound = rederive_bound(result, proof, resolve=resolve, formulation=formulation)
    if bound is not None and objective is not None and bound > objective + OPTIMAL_GAP * max(1.0, abs(objective)):
        raise ValueError(
            f"result: the proven bound {bound:.10g} exceeds the result's objective {objective:.10g}; the stored "
            "result contradicts its own proof"
        )
    result.bound = bound
    result.gap = relative_gap(objective, bound) if bound is not None and objective is not None else None
    if result.status == "optimal" and not proven_optimal(result.gap):
        result.status = "feasible"
        why = "no bound re-derived" if result.gap is None else f"re-derived gap {result.gap:.3g}"
        result.message = f"{result.message}; 'optimal' not proven by its own proof ({why})".lstrip("; ")
    return result
