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
is at most the worst integer shift's (tested on sub-cells). Such an ``f`` is a point of the additive
Renyi design (:mod:`optnoise.design.additive_renyi`) on ``Neighborhood.bd(m)`` with each cell
charged its average cost (the density's exact cost), found by :func:`solve_upper_renyi`. Its family
bound (over noises on ``-L..L`` with fixed staircase tails) is *not* a bound over all densities, so it
is skipped.

**Lower bound** (over all densities). A pair of distributions with ``D_alpha <= eps_alpha`` has hockey
stick ``H_{e^eps} <= delta_alpha(eps)`` (:func:`conversion_delta`, Canonne, Kamath and Steinke 2020), so every
density meeting the budget at every real shift meets the (eps, delta) profile :func:`converted_profile`
there, and the proven lower bound of the continuous release for that profile
(:mod:`optnoise.design.continuous_bound`: cell masses and first moments, Jensen cuts, no shape assumed)
is a lower bound over all rdp/zcdp densities. It is valid and cheap, but loose: the conversion loses
the divergences' shape (measured: zcdp, rho = 0.5, mse, m = 2: upper 1.0146, lower 0.521, Gaussian 1.0).
The solve (:func:`optnoise.design.continuous.solve`) keeps the larger of it and the bound of
:mod:`optnoise.design.continuous_renyi_bound` (the Renyi sums of the cells and of the offset cells, by data
processing and joint convexity, relaxed by tangent planes; with the cells' first moments and Jensen cost
cuts): 0.779 in the same instance. The designs still end ``"feasible"`` with that gap. The additive Renyi
design's own bound (tangent cuts) is over its family (noises on ``-L..L`` with fixed staircase tails) and
is *not* used: it is not a bound over all densities.

Against the Gaussian (``res.baselines``, the same budget): zcdp, rho = 0.5, mse, upper 1.0146 at m = 2
and 1.00019 at m = 4 against 1.0 (the cell average charges ``w^2 / 12`` that the polish must win back;
the Gaussian's cell masses are the start), so the upper bound is within 0.02% of the Gaussian at m = 4,
not below it; finer m is where it would go below, at a cost in time (next paragraph).

Speed: the upper bound is a sequential LP from the Gaussian's cell masses (:func:`solve_upper_renyi`);
its model grows with the noise's width in cells (about ``m / sqrt(rho)``), so the automatic refinement for
these notions stops at :data:`MAX_AUTO_RESOLUTION_RENYI`.
"""

from __future__ import annotations

import copy
import math
import time
from types import SimpleNamespace
from typing import Any

import numpy as np
from scipy.special import ndtr

from optnoise.design.additive_eval import evaluate, normalised, renyi_excess, settled_result
from optnoise.design.additive_renyi import orders_of, polish, setup_renyi, solve_renyi, terms
from optnoise.engine.progress import time_left

__all__ = [
    "MAX_AUTO_RESOLUTION_RENYI",
    "gaussian_baseline",
    "converted_profile",
    "profile_view",
    "renyi_budget_kw",
    "setup_renyi_budget",
    "solve_upper_renyi",
]

#: The automatic refinement of an rdp/zcdp continuous design stops at this ``m`` (measured on the shared 2-core
#: machine, zcdp rho = 0.5, mse: m = 2 in 8 s, m = 4 in 60 s, m = 8 over 300 s).
MAX_AUTO_RESOLUTION_RENYI = 4


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


#: Widenings tried for the Gaussian seed of the upper bound (relative to the calibrated sigma), smallest first.
SEED_WIDENINGS = (0.0, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3)


def gaussian_cells(cells: Any, widen: float) -> np.ndarray:
    """Cell masses ``-L..L`` of ``N(0, sigma^2 (1 + widen)^2)``, ``sigma`` the design's reference, in cells.

    The calibrated Gaussian meets the budget at every real shift, so its cell masses meet it at the
    integer ones (post-processing); with the family's staircase tails beyond ``L`` (heavier than the
    Gaussian's) they may exceed it slightly, which a small widening absorbs (:func:`gaussian_seed`).
    """
    L = cells.renyi_support
    sd = math.sqrt(cells.sigma2) * (1.0 + widen)
    k = np.abs(np.arange(-L, L + 1, dtype=float))
    # upper-tail differences: no cancellation far out
    f = ndtr(-(k - 0.5) / sd) - ndtr(-(k + 0.5) / sd)
    f[k == 0] = 1.0 - 2.0 * ndtr(-0.5 / sd)
    return normalised(cells, f, L)


def gaussian_seed(cells: Any) -> tuple[np.ndarray, float] | None:
    """The least widening of :data:`SEED_WIDENINGS` whose cell masses (with tails) meet the budget, re-verified."""
    L = cells.renyi_support
    for widen in SEED_WIDENINGS:
        f = gaussian_cells(cells, widen)
        if renyi_excess(cells, evaluate(cells, f, L)["achieved"]) <= 0.0:
            return f, widen
    return None


def solve_upper_renyi(cells: Any, time_limit: float | None, options: Any) -> Any:
    """The upper bound at one resolution: the best feasible cell masses found (module docstring).

    The additive Renyi solve's conic step is slow and fails on many of these models (Clarabel, measured
    at m = 2 and 4 with rho = 2 and 0.5), so the start is the calibrated Gaussian's cell masses
    (:func:`gaussian_seed`, feasible) and the additive design's sequential LP
    (:func:`~optnoise.design.additive_renyi.polish`, which keeps every accepted point feasible) lowers
    its cost. The result is re-verified on all of Z (:func:`~optnoise.design.additive_eval.settled_result`);
    its family bound is not computed (it is not a bound over all densities).
    """
    t0 = time.perf_counter()
    seed = gaussian_seed(cells)
    if seed is None:  # not met by any widening: the additive solve's own route
        return solve_renyi(cells, time_limit, options, False, family_bound=False)
    f, widen = seed
    L = cells.renyi_support
    orders, eps_inf = orders_of(cells)
    f = polish(cells, terms(cells, L), f, orders, eps_inf, time_left(time_limit, t0), options)
    note = f"polished from the Gaussian's cell masses (sigma widened by {widen:g})"
    res = settled_result(cells, f, L, "feasible", None, note)
    res.solve_time = time.perf_counter() - t0
    return res


#: The (eps, delta) pairs a Renyi budget is relaxed to (:func:`converted_profile`): this many eps, evenly
#: up to where delta falls below :data:`PROFILE_DELTA_FLOOR`.
PROFILE_PAIRS = 16
PROFILE_DELTA_FLOOR = 1e-7


def conversion_delta(alpha: float, eps_alpha: float, eps: float) -> float:
    """``delta`` such that ``D_alpha(P || Q) <= eps_alpha`` implies ``H_{e^eps}(P || Q) <= delta`` (``alpha > 1``).

    Canonne, Kamath and Steinke (2020), Proposition 12: ``e^((alpha-1)(eps_alpha - eps)) (1 - 1/alpha)^alpha
    / (alpha - 1)``. It holds for each pair of distributions, so for every shift.
    """
    log = (alpha - 1.0) * (eps_alpha - eps) + alpha * math.log1p(-1.0 / alpha) - math.log(alpha - 1.0)
    return math.exp(min(log, 0.0))


def converted_profile(design: Any) -> list[tuple[float, float]]:
    """(eps, delta) pairs met by every density meeting the design's rdp/zcdp budget at every shift.

    For each eps, the least :func:`conversion_delta` over the orders (zCDP: a fine grid, every order
    being bounded); the eps are
    :data:`PROFILE_PAIRS` values up to where delta falls below :data:`PROFILE_DELTA_FLOOR`.
    """
    if design.rho is not None:
        orders = [(a, design.rho * a) for a in np.exp(np.linspace(math.log(1.001), math.log(4096.0), 400))]
    else:
        orders = [(a, e) for a, e in design.rdp if a > 1.0]
    if not orders:
        return []

    def delta(eps: float) -> float:
        return min(conversion_delta(a, e, eps) for a, e in orders)

    top = 1e-3
    while delta(top) >= PROFILE_DELTA_FLOOR and top < 1e3:
        top *= 1.25
    pairs = [(float(e), delta(float(e))) for e in np.linspace(0.0, top, PROFILE_PAIRS + 1)[1:]]
    return [(e, d) for e, d in pairs if d < 1.0]


def profile_view(design: Any) -> Any:
    """A copy of ``design`` that states the :func:`converted_profile` budget (for the dp/profile lower bound)."""
    view = copy.copy(design)
    view.privacy, view.profile, view.eps, view.delta = "profile", converted_profile(design), None, None
    return view


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
