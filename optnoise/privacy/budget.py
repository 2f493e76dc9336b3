"""Privacy budgets beyond one (eps, delta): privacy profiles, Renyi DP and zCDP.

:class:`Budget` is what ``NoiseDesign(privacy="profile" | "rdp" | "zcdp", ...)``
holds instead of ``eps``/``delta``: it validates the budget, contributes its
constraints to the design's model (LP rows from :mod:`optnoise.privacy.profile`), solves
an rdp/zcdp design (:mod:`optnoise.privacy.renyi_solve`: a log-barrier method with a
certified lower bound, or the conic model of :mod:`optnoise.privacy.renyi` through cvxpy),
and re-verifies a PMF against it from the PMF alone, with the tolerances those modules
document.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from optnoise.engine.model import LinearModel, ModelBuilder
from optnoise.engine.validation import shown
from optnoise.privacy.budget_kinds import EPS_INF_MAX, BudgetKind
from optnoise.privacy.fields import fields_of
from optnoise.privacy.notions import NOTION_REGISTRY, budget_fields, get_notion
from optnoise.privacy.profile import add_profile_rows
from optnoise.privacy.renyi import build_renyi_model, reference_log_pmf
from optnoise.privacy.renyi_solve import RenyiSolution, solve_renyi_design

__all__ = ["BUDGET_NOTIONS", "Budget", "EPS_INF_MAX"]

#: The built-in notions whose budget is not one (eps, delta) (a registered notion with a ``budget`` is one too).
BUDGET_NOTIONS = tuple(k for k, v in NOTION_REGISTRY.items() if v.budget is not None)
#: The fields a :class:`Budget` of the built-in notions holds (:mod:`optnoise.privacy.fields`).
_FIELDS = fields_of(BUDGET_NOTIONS)


@dataclass(frozen=True)
class Budget:
    """A validated ``profile`` / ``rdp`` / ``zcdp`` budget for the modulo release on ``{0..n}^dim``.

    Attributes
    ----------
    privacy : {"profile", "rdp", "zcdp"}
    profile : tuple of tuple, or None
        The ``(eps, delta)`` pairs of ``privacy="profile"``.
    rdp : tuple of tuple, or None
        The ``(alpha, eps_alpha)`` pairs of ``privacy="rdp"``.
    rho : float or None
    alphas : tuple of float, or None
        The zCDP grid, resolved (default :func:`optnoise.privacy.renyi.zcdp_alphas` up to
        past the reference Gaussian's ``D_inf / rho``).
    sigma2 : float or None
        Variance of the reference discrete Gaussian that meets an rdp/zcdp budget.
    """

    privacy: str
    profile: tuple[tuple[float, float], ...] | None = None
    rdp: tuple[tuple[float, float], ...] | None = None
    rho: float | None = None
    alphas: tuple[float, ...] | None = None
    sigma2: float | None = None

    @classmethod
    def create(cls, privacy: str, *, n: int, shifts: np.ndarray, idx: np.ndarray, **fields: Any) -> Budget:
        """Validate the budget fields (``profile``, ``rdp``, ``rho``, ``alphas``) of a notion.

        ``shifts`` are the resolved shifts (k, d) and ``idx`` the design's
        :meth:`~optnoise.design.noise.NoiseDesign.shift_index`.
        """
        kind = _kind_of(privacy)
        unused = {f.name: fields.get(f.name) for f in budget_fields()}
        out = cls(privacy, **kind.create(n, shifts, idx, unused))
        given = [k for k, v in unused.items() if v is not None]
        if given:
            raise ValueError(f"{given[0]} does not apply with privacy={shown(privacy)}")
        return out

    @property
    def kind(self) -> BudgetKind:
        """The notion's budget behaviour (:mod:`optnoise.privacy.budget_kinds`), looked up in the registry."""
        return _kind_of(self.privacy)

    # ------------------------------------------------------------------ description
    def spec(self) -> dict[str, Any]:
        """The budget as plain data (the design's ``spec()`` fields)."""
        return self.kind.spec(self)

    def describe(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.spec().items() if k != "alphas")

    def orders(self) -> list[tuple[float, float]]:
        """``[(alpha, eps_alpha)]`` of an rdp/zcdp budget (zCDP: ``eps_alpha = rho alpha`` on the grid)."""
        return self.kind.orders(self)

    @property
    def eps_inf(self) -> float | None:
        """The zCDP search's ``D_inf <= rho * max(alphas)`` (at most :data:`EPS_INF_MAX`).

        It keeps the search away from orders beyond the grid; it is not part of rho-zCDP, so no
        bound relies on it (:mod:`optnoise.privacy.renyi_sup`).
        """
        return self.kind.eps_inf(self)

    @property
    def is_conic(self) -> bool:
        return self.kind.conic

    def model_size(self, K: int, N: int) -> dict[str, int]:
        """Rows, columns, integers and nonzeros of the model for ``K`` shifts and ``N`` noise values."""
        return self.kind.model_size(self, K, N)

    # ------------------------------------------------------------------ models
    def add_rows(self, mb: ModelBuilder, f: np.ndarray, idx: np.ndarray) -> None:
        """The LP rows of a profile budget (see :func:`optnoise.privacy.profile.add_profile_rows`)."""
        add_profile_rows(mb, f, idx, self.profile or ())

    def conic_model(self, cost: np.ndarray, idx: np.ndarray, shape: tuple[int, ...]) -> LinearModel:
        """The conic model of an rdp/zcdp budget (:func:`optnoise.privacy.renyi.build_renyi_model`)."""
        log_ref = reference_log_pmf(shape[0] - 1, len(shape), float(self.sigma2 or 1.0))
        return build_renyi_model(cost, idx, self.orders(), log_ref, eps_inf=self.eps_inf)

    def solve_renyi(
        self,
        cost: np.ndarray,
        idx: np.ndarray,
        shape: tuple[int, ...],
        *,
        method: str = "barrier",
        time_limit: float | None = None,
        verbose: bool = False,
        conic_solver: str = "clarabel",
    ) -> RenyiSolution:
        """Solve an rdp/zcdp design (:func:`optnoise.privacy.renyi_solve.solve_renyi_design`).

        ``method="barrier"``: the log-barrier method, whose result carries a certified lower
        bound and is ``"optimal"`` only with a proven gap within ``OPTIMAL_GAP``; ``"cvxpy"``: the
        conic model through cvxpy (``conic_solver``, ``verbose``), its point bounded by tangent cuts.
        The reference discrete Gaussian (variance :attr:`sigma2`) scales the conic model, starts the
        barrier path and is the barrier method's first incumbent.

        zCDP: the grid is refined and the PMF mixed with the uniform one until rho holds at *every*
        order, and the bound is one of the rho-zCDP problem
        (:func:`optnoise.privacy.renyi_sup.solve_zcdp`); rdp: exactly the listed orders.
        """

        def on_grid(
            orders: list[tuple[float, float]], eps_inf: float | None, limit: float | None, bound_inf: bool
        ) -> RenyiSolution:
            return solve_renyi_design(
                cost,
                idx,
                shape,
                orders,
                float(self.sigma2 or 1.0),
                eps_inf=eps_inf,
                method=method,
                time_limit=limit,
                verbose=verbose,
                conic_solver=conic_solver,
                bound_inf=bound_inf,
            )

        return self.kind.solve(self, on_grid, shape, idx, cost, time_limit)

    # ------------------------------------------------------------------ re-verification
    def achieved(self, pmf: np.ndarray, shifts: np.ndarray) -> dict[str, float]:
        """The budget re-verified from the PMF alone.

        ``profile``: ``{"profile": largest relative excess over the delta_j (0 if none),
        "dp@<eps_j>": delta_f(eps_j)}``; ``rdp``: ``{"rdp": largest D_alpha / eps_alpha,
        "rdp@<alpha>": D_alpha}``; ``zcdp``: ``{"zcdp": achieved rho (a bound on the sup of
        D_alpha / alpha over every alpha > 1, :func:`optnoise.privacy.renyi.achieved_rho`),
        "alpha*": where, "grid_margin": m_grid}``.
        """
        return self.kind.achieved(self, pmf, shifts)

    def satisfied(self, achieved: dict[str, float]) -> bool:
        """Whether :meth:`achieved` output meets the budget within the documented tolerances.

        profile: :func:`optnoise.privacy.profile.profile_satisfied`; rdp: every listed
        ``D_alpha <= eps_alpha (1 + RENYI_RTOL)`` (the listed orders are the whole guarantee);
        zcdp: the certified ``sup_{alpha > 1} D_alpha / alpha <= rho (1 + RENYI_RTOL)``, over every
        order, not only the grid (``RENYI_RTOL`` is float64's evaluation error, never a grid margin).
        """
        return self.kind.satisfied(self, achieved)


def _kind_of(privacy: str) -> BudgetKind:
    """The budget behaviour of ``privacy``; a ``ValueError`` listing the budget notions for any other value."""
    kind = get_notion(privacy).budget
    if kind is None:
        known = ", ".join(repr(k) for k, v in NOTION_REGISTRY.items() if v.budget is not None)
        raise ValueError(f"privacy must be one of {known} for a Budget; got {shown(privacy)}")
    return kind
