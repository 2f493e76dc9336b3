"""Renyi-DP and zCDP for the continuous release (:mod:`optnoise.design.continuous`): both bounds.

Cells of width ``w = Delta / m`` are ``[(k - 1/2) w, (k + 1/2) w)``; ``f_k`` is a cell's mass.

**Upper bound** (a mechanism). The density constant on each cell with masses ``f`` meets the Renyi
budget for every real shift ``|s| <= Delta`` when ``f`` meets it for the integer shifts ``1..m``
(both signs). For ``s = (j + theta) w`` each output cell splits into a part of width ``theta w``
facing cell ``k - j - 1`` and one of width ``(1 - theta) w`` facing cell ``k - j``, on each of which
both densities are constant, so

    ``int p^alpha p_s^(1 - alpha) = theta E_(j+1) + (1 - theta) E_j``,  ``E_j = exp((alpha - 1) D_alpha(j))``,

(``E_0 = 1``): at most ``max(E_j, E_(j+1)) <= exp((alpha - 1) eps_alpha)`` for ``alpha > 1``; the KL
(``alpha = 1``) is the same mixture of the integer KLs. So every order's divergence at a real shift
is at most the worst integer shift's (tested on sub-cells). The best such ``f`` is the additive
Renyi design (:mod:`optnoise.design.additive_renyi`) on ``Neighborhood.bd(m)`` with each cell
charged its average cost, which is the density's exact cost. Its family bound (over noises on
``-L..L`` with fixed staircase tails) is *not* a bound over all densities, so it is skipped.

**Lower bound** (over all densities). The cell masses of any density meeting the budget meet it for
the integer shifts ``+-1..+-m`` (post-processing by ``x -> cell of x`` maps ``X + j w`` onto the
masses shifted by ``j``). For ``alpha > 1`` every term ``f_k^alpha f_(k-j)^(1-alpha)`` is
nonnegative, so the sum over the terms of a window ``|k|, |k - j| <= N`` is at most
``exp((alpha - 1) eps_alpha)`` (times the total mass 1): a convex constraint on the masses
``f_(-N..N)`` and the far mass ``F = P(|cell| > N)``, whose tangent cuts are linear and valid for
every such density (the Kelley loop :func:`optnoise.design.additive_renyi.kelley_bound`). The KL
order and zCDP's ``D_inf`` rows are left out (a relaxation). The cost of a density is at least
``sum_k f_k min_(cell k) c + F min_(|x| >= (N + 1/2) w) c``
(:meth:`~optnoise.design.continuous_cost.RealCost.far`, a cost nondecreasing in ``|x|``; otherwise
no bound). The LP's value is proven by weak duality, so any number of rounds gives a valid bound;
the cell minimum loses about ``w / 2`` of the error against the cell average, so this bound closes
like ``w`` as ``m`` grows (measured in the tests).

Speed: the upper bound's conic solve grows fast with the noise's width in cells (about
``Delta / (w sqrt(rho))``): the automatic refinement for these notions stops at
:data:`MAX_AUTO_RESOLUTION_RENYI`.
"""

from __future__ import annotations

import math
import time
from types import SimpleNamespace
from typing import Any

import numpy as np

from optnoise.design.additive_renyi import kelley_bound, orders_of, setup_renyi, solve_renyi
from optnoise.design.continuous_bound import LowerBound
from optnoise.engine.progress import time_left

__all__ = [
    "MAX_AUTO_RESOLUTION_RENYI",
    "gaussian_baseline",
    "lower_bound_renyi",
    "renyi_budget_kw",
    "setup_renyi_budget",
    "solve_upper_renyi",
]

#: The automatic refinement of an rdp/zcdp continuous design stops at this ``m``.
MAX_AUTO_RESOLUTION_RENYI = 8
#: Kelley rounds of the lower bound (every round's bound is valid; more rounds only tighten it).
LOWER_ROUNDS = 30
#: Window of the lower bound: the upper bound's support plus this many sensitivities a side.
WINDOW_MARGIN = 2


def setup_renyi_budget(design: Any, kw: dict[str, Any]) -> None:
    """Validate and store ``rdp`` or ``rho``/``alphas`` on a continuous design (``design.privacy`` set).

    The additive release's checks (:func:`~optnoise.design.additive_renyi.setup_renyi`), run at one cell:
    the budget does not depend on the resolution.
    """
    probe = SimpleNamespace(privacy=design.privacy, period=1)
    setup_renyi(probe, {**kw, "support": None})
    design.rdp, design.rho, design.alphas = probe.rdp, probe.rho, probe.alphas
    design.eps = design.delta = design.profile = None


def renyi_budget_kw(design: Any) -> dict[str, Any]:
    """The keywords of the additive design's Renyi budget (``rdp`` or ``rho``/``alphas``), from ``design``."""
    return {"rdp": design.rdp, "rho": design.rho, "alphas": design.alphas, "eps": None, "delta": None}


def solve_upper_renyi(cells: Any, time_limit: float | None, options: Any) -> Any:
    """The additive Renyi design on bd(m) (``cells``), without its family bound (module docstring)."""
    return solve_renyi(cells, time_limit, options, False, family_bound=False)


def _cell_minimum(cost: Any, k: np.ndarray, w: float) -> np.ndarray | None:
    """``min`` of the cost over each cell ``k`` (``None`` when the cost is not nondecreasing in ``|x|``)."""
    out = np.empty(k.size)
    for i, kk in enumerate(k):
        v = cost.far(max(abs(int(kk)) - 0.5, 0.0) * w)
        if v is None:
            return None
        out[i] = v
    return out


def lower_bound_renyi(design: Any, cells: Any, m: int, up: Any, time_limit: float | None, options: Any) -> LowerBound:
    """A proven lower bound over all densities at resolution ``m`` (module docstring).

    ``cells`` is the additive design of the upper bound (its orders; zCDP: its grid of orders), ``up``
    its result (the first tangent point: its cell masses on the window, and the rest as far mass).
    """
    t0 = time.perf_counter()
    w = design.sensitivity / m
    N = int(up.L) + WINDOW_MARGIN * m
    k = np.arange(-N, N + 1)
    cell_cost = _cell_minimum(design.cost_of, k, w)
    far_cost = design.cost_of.far((N + 0.5) * w)
    if cell_cost is None or far_cost is None:
        why = "no lower bound: the cost is not nondecreasing in |e|"
        return LowerBound(None, 2 * N + 1, 0, 0, False, 0.0, 0.0, 0.0, why)
    shifts = np.concatenate([np.arange(1, m + 1), -np.arange(1, m + 1)])
    group, I, J = [], [], []  # noqa: E741
    for g, s in enumerate(shifts):
        out = k[(np.abs(k - s) <= N)]  # outputs whose both masses lie in the window: every other term is dropped
        group.append(np.full(out.size, g))
        I.append(out + N)
        J.append(out - s + N)
    n = 2 * N + 1
    t = {
        "group": np.concatenate(group),
        "I": np.concatenate(I),
        "J": np.concatenate(J),
        "mass": np.ones(n + 1),  # the last column is the far mass F: in the mass row, in no term
        "cost": np.append(cell_cost, far_cost),
    }
    t["lu"] = t["lv"] = np.zeros(t["I"].size)
    seed = up.pmf_at(k)
    # the far column only scales the LP (any positive tangent point gives valid cuts)
    point = np.append(seed, max(1.0 - float(seed.sum()), 1e-12))
    orders = [(a, e) for a, e in orders_of(cells)[0] if a > 1.0]
    groups = SimpleNamespace(shifts=shifts)
    bound, size = kelley_bound(groups, t, point, orders, time_left(time_limit, t0), options, rounds=LOWER_ROUNDS)
    # complete: False (tangent cuts relax the Renyi constraints; the bound is the LP's, proven by duality)
    rows = int(size.get("rows", 0))
    return LowerBound(bound, 2 * N + 1, rows, LOWER_ROUNDS, False, 0.0, 0.0, time.perf_counter() - t0)


def gaussian_baseline(design: Any) -> dict[str, float]:
    """The Gaussian calibrated to the same Renyi budget, its ``mse``/``mae`` (else empty).

    ``N(0, sigma^2)`` has ``D_alpha = alpha Delta^2 / (2 sigma^2)`` at shift ``Delta`` (and less at smaller
    shifts): zCDP needs ``sigma^2 = Delta^2 / (2 rho)``; rdp the largest ``alpha Delta^2 / (2 eps_alpha)``.
    """
    D2 = design.sensitivity**2
    if design.rho is not None:
        var = D2 / (2.0 * design.rho)
    else:
        var = max(a * D2 / (2.0 * e) for a, e in design.rdp)
    if design.metric == "mse":
        return {"gaussian": var}
    if design.metric == "mae":
        return {"gaussian": math.sqrt(2.0 * var / math.pi)}
    return {}
