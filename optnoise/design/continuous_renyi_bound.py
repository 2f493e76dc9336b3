"""A lower bound over all densities for the Renyi notions (rdp, zcdp) of the continuous release.

Cells of width ``w = Delta / m`` are ``[(k - 1/2) w, (k + 1/2) w)``. For ``alpha > 1`` write
``phi(a, b) = a^alpha b^(1 - alpha)`` (``0`` when ``a = 0``): a density ``p`` with
``D_alpha(p || p_s) <= eps_alpha`` at a shift ``s`` has ``int p^alpha p_s^(1 - alpha) <= C_alpha =
exp((alpha - 1) eps_alpha)``. Three facts make an LP whose optimum is below the least distortion of
every density meeting the budget at every real shift ``|s| <= Delta``:

1. **Cells** (data processing). At ``s = j w`` the cell masses ``q`` of ``p`` and of ``p_s`` are ``q`` and
   ``q`` shifted by ``j`` cells, so ``sum_k phi(q_k, q_(k-j)) <= C_alpha`` for ``j = +-1..+-m``.
2. **Offset cells** (data processing, then convexity). The same holds for the cells moved by any
   ``t`` in ``[0, w)``, and ``phi`` is jointly convex (the perspective of ``a^alpha``), so it holds for
   their average over ``t``: the offset-averaged masses ``r`` of :mod:`optnoise.design.continuous_bound`.
3. **Tangents** (convexity again). ``phi`` is convex and 1-homogeneous, so for every ratio ``t > 0``,
   ``phi(a, b) >= alpha t^(alpha - 1) a + (1 - alpha) t^alpha b`` (its tangent plane along ``a = t b``), and
   ``phi >= 0``. With ``u_k >= 0`` above every tangent of :data:`RATIOS`, ``sum_k u_k <= C_alpha`` is a
   relaxation of (1) and (2); terms reaching past the truncation ``+-K`` are dropped (they are ``>= 0``).

Every order is a valid constraint, so any subset of the budget's orders is (:data:`MAX_ORDERS` of them,
spread over the list). The cost side, the far mass and the symmetry are those of
:func:`~optnoise.design.continuous_bound.cell_lp` (Jensen cuts on the cells' first moments; for a
symmetric cost the rows here are invariant under the reflection too, both signs of every shift being
present). The bound is the weak-duality bound of the LP's multipliers
(:meth:`~optnoise.engine.model.LinearModel.dual_bound`), valid whatever the solver's accuracy.

Measured (zcdp rho = 0.5, mse, m = 2, K = 14): 0.779 with the fixed tangents, against 0.521 for the
(eps, delta) conversion's bound and 1.0 for the Gaussian (the upper bound: 1.0146); 0.830 at m = 4, K = 28
(72 s) against the conversion's 0.552. Adding the tangents
at the solution's own ratios (a cutting-plane loop) raised a prototype's bound by about 0.03 per round, but
each round took minutes with :func:`scipy.optimize.linprog`, so it is not done here. Orders with a cap above
``e^MAX_LOG_CAP`` are left out: their bounds ``u <= C_alpha`` enter the weak-duality bound, and with caps
near ``e^30`` HiGHS' multipliers proved -496 against an optimum of 0.78 (K = 20); at ``e^6`` they prove it.
"""

from __future__ import annotations

import math

import numpy as np

from optnoise.design.continuous_bound import PROOF_GAP, cell_lp
from optnoise.design.continuous_cost import RealCost
from optnoise.design.settle import backend_solve, proof_dual
from optnoise.engine.tolerance import MIP_REL_GAP

__all__ = ["MAX_ORDERS", "RATIOS", "renyi_cell_bound"]

#: The tangent ratios ``t = a / b`` of fact 3 (any set is valid; these span the ratios of a smooth density's
#: neighbouring cells).
RATIOS = tuple(float(x) for x in np.exp(np.linspace(-1.5, 1.5, 7)))
#: Orders used at most (a subset of the budget's, spread over it: fewer rows, still valid).
MAX_ORDERS = 8
#: Largest ``(alpha - 1) eps_alpha`` of an order used (:func:`_orders`).
MAX_LOG_CAP = 6.0


def _orders(orders: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """At most :data:`MAX_ORDERS` finite orders ``alpha > 1`` of the budget, spread geometrically in ``alpha - 1``.

    Orders whose cap ``exp((alpha - 1) eps_alpha)`` exceeds ``e^MAX_LOG_CAP`` are left out (a cap that large
    constrains no mass the cost cares about; leaving an order out is valid).
    """
    finite = sorted(
        (float(a), float(e))
        for a, e in orders
        if 1.0 < a < math.inf and math.isfinite(e) and (a - 1.0) * e <= MAX_LOG_CAP
    )
    if len(finite) <= MAX_ORDERS:
        return finite
    logs = np.log([a - 1.0 for a, _ in finite])
    want = np.linspace(logs[0], logs[-1], MAX_ORDERS)
    pick = sorted({int(np.argmin(np.abs(logs - x))) for x in want})
    return [finite[i] for i in pick]


def renyi_cell_bound(
    cost: RealCost,
    orders: list[tuple[float, float]],
    m: int,
    w: float,
    K: int,
    time_limit: float | None = None,
) -> float | None:
    """The lower bound of the module docstring at ``m`` cells per sensitivity, ``K`` cells a side (``None``: none).

    ``orders``: the budget's ``(alpha, eps_alpha)``; only finite ``alpha > 1`` are used.
    """
    used = _orders(orders)
    if not used or cost.far((K + 0.5) * w) is None:
        return None
    mb, q, _, r, _ = cell_lp(cost, m, w, K, cost.symmetric)
    for alpha, eps in used:
        cap = math.exp((alpha - 1.0) * eps)
        for shift in [*range(1, m + 1), *range(-m, 0)]:
            for masses in (q, r):  # facts 1 and 2
                n = masses.size
                k = np.arange(n)
                k = k[(k - shift >= 0) & (k - shift < n)]
                a, b = masses[k], masses[k - shift]
                u = mb.add_vars(k.size, lb=0.0, ub=cap, name="u")
                mb.add_row(u, np.ones(k.size), upper=cap)
                for t in RATIOS:  # alpha t^(alpha-1) a + (1 - alpha) t^alpha b - u <= 0
                    mb.add_rows(
                        np.repeat(np.arange(k.size), 3),
                        np.stack([a, b, u], 1).ravel(),
                        np.tile([alpha * t ** (alpha - 1.0), (1.0 - alpha) * t**alpha, -1.0], k.size),
                        upper=0.0,
                    )
    model = mb.build()
    out = backend_solve(model, "highs", time_limit, MIP_REL_GAP, False, None, concurrent=False)
    best = None if out.dual is None else model.dual_bound(out.dual)
    obj = out.objective if out.objective is not None else math.inf
    if out.x is not None and (best is None or obj - best > PROOF_GAP * max(1.0, abs(obj))):
        # HiGHS' multipliers are accurate to an absolute tolerance, which the tangents' large coefficients
        # amplify (measured: -496 against an optimum of 0.778 at K = 20); the optimal basis found again in
        # scaled variables proves the optimum (as continuous_bound does)
        proof = proof_dual(model, out.x)
        if proof is not None and (best is None or proof[0] > best):
            best = proof[0]
    return None if best is None or not math.isfinite(best) else float(best)
