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
from optnoise.engine.validation import check_choice, check_positive, shown
from optnoise.privacy.fields import fields_of
from optnoise.privacy.profile import add_profile_rows, check_profile, profile_excess, profile_satisfied
from optnoise.privacy.renyi import (
    ALPHA_MAX,
    RENYI_NOTIONS,
    RENYI_RTOL,
    achieved_rho,
    build_renyi_model,
    check_alphas,
    check_rdp,
    grid_margin,
    reference_log_pmf,
    renyi_curve,
    zcdp_alphas,
)
from optnoise.privacy.renyi_solve import RenyiSolution, solve_renyi_design
from optnoise.privacy.renyi_sup import solve_zcdp

__all__ = ["BUDGET_NOTIONS", "Budget"]

#: Notions whose budget is not one (eps, delta).
BUDGET_NOTIONS = ("profile",) + RENYI_NOTIONS
#: The fields a :class:`Budget` holds (:mod:`optnoise.privacy.fields`).
_FIELDS = fields_of(BUDGET_NOTIONS)
#: Largest ``D_inf`` budget of the zCDP search row: ``e^EPS_INF_MAX`` stays in float64's range, and no float64
#: PMF the solvers return (masses floored at e^-708) has a log mass ratio far above it.
EPS_INF_MAX = 700.0


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
        check_choice("privacy", privacy, BUDGET_NOTIONS)
        unused = {k: fields.get(k) for k in _FIELDS}
        if privacy == "profile":
            out = cls(privacy, profile=check_profile(unused.pop("profile")))
        elif privacy == "rdp":
            rdp = check_rdp(unused.pop("rdp"))
            mu2 = _max_shift_norm2(n, shifts)
            out = cls(privacy, rdp=rdp, sigma2=max(a * mu2 / (2.0 * e) for a, e in rdp))
        else:
            rho = unused.pop("rho")
            if rho is None:
                raise ValueError("rho is required with privacy='zcdp' (a float > 0)")
            rho = check_positive("rho", rho)
            sigma2 = _max_shift_norm2(n, shifts) / (2.0 * rho)
            alphas = unused.pop("alphas")
            if alphas is None:
                # past the reference Gaussian's D_inf / rho, so that the D_inf row does not bind near it
                ls = reference_log_pmf(n, shifts.shape[1], sigma2)
                dinf = float(np.max(ls[None, :] - ls[idx]))
                alphas = zcdp_alphas(max(ALPHA_MAX, 1.25 * dinf / rho))
            out = cls(privacy, rho=rho, alphas=check_alphas(alphas), sigma2=sigma2)
        given = [k for k, v in unused.items() if v is not None]
        if given:
            raise ValueError(f"{given[0]} does not apply with privacy={shown(privacy)}")
        return out

    # ------------------------------------------------------------------ description
    def spec(self) -> dict[str, Any]:
        """The budget as plain data (the design's ``spec()`` fields)."""
        if self.privacy == "profile":
            return {"profile": [list(p) for p in self.profile or ()]}
        if self.privacy == "rdp":
            return {"rdp": [list(p) for p in self.rdp or ()]}
        return {"rho": self.rho, "alphas": list(self.alphas or ())}

    def describe(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.spec().items() if k != "alphas")

    def orders(self) -> list[tuple[float, float]]:
        """``[(alpha, eps_alpha)]`` of an rdp/zcdp budget (zCDP: ``eps_alpha = rho alpha`` on the grid)."""
        if self.privacy == "rdp":
            return list(self.rdp or ())
        if self.privacy == "zcdp" and self.rho is not None:
            return [(a, self.rho * a) for a in self.alphas or ()]
        raise ValueError(f"orders apply to privacy 'rdp' or 'zcdp', not {shown(self.privacy)}")

    @property
    def eps_inf(self) -> float | None:
        """The zCDP search's ``D_inf <= rho * max(alphas)`` (at most :data:`EPS_INF_MAX`).

        It keeps the search away from orders beyond the grid; it is not part of rho-zCDP, so no
        bound relies on it (:mod:`optnoise.privacy.renyi_sup`).
        """
        if self.privacy != "zcdp" or self.rho is None or not self.alphas:
            return None
        return min(self.rho * max(self.alphas), EPS_INF_MAX)

    @property
    def is_conic(self) -> bool:
        return self.privacy in RENYI_NOTIONS

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

        def on_grid(orders: list[tuple[float, float]], eps_inf: float | None, limit: float | None) -> RenyiSolution:
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
                bound_inf=self.privacy != "zcdp",
            )

        if self.privacy != "zcdp":
            return on_grid(self.orders(), self.eps_inf, time_limit)
        # shift m moves output 0 to idx[m, 0]: that output's coordinates are the shift
        shifts = np.stack(np.unravel_index(np.asarray(idx)[:, 0], shape), axis=1)
        rho = float(self.rho or 0.0)

        def grid(alphas: tuple[float, ...], limit: float | None) -> RenyiSolution:
            return on_grid([(a, rho * a) for a in alphas], min(rho * max(alphas), EPS_INF_MAX), limit)

        return solve_zcdp(grid, cost, shifts, rho, tuple(self.alphas or ()), time_limit=time_limit)

    # ------------------------------------------------------------------ re-verification
    def achieved(self, pmf: np.ndarray, shifts: np.ndarray) -> dict[str, float]:
        """The budget re-verified from the PMF alone.

        ``profile``: ``{"profile": largest relative excess over the delta_j (0 if none),
        "dp@<eps_j>": delta_f(eps_j)}``; ``rdp``: ``{"rdp": largest D_alpha / eps_alpha,
        "rdp@<alpha>": D_alpha}``; ``zcdp``: ``{"zcdp": achieved rho (a bound on the sup of
        D_alpha / alpha over every alpha > 1, :func:`optnoise.privacy.renyi.achieved_rho`),
        "alpha*": where, "grid_margin": m_grid}``.
        """
        if self.privacy == "profile":
            pairs = self.profile or ()
            got, excess = profile_excess(pmf, shifts, pairs)
            return {"profile": excess, **{f"dp@{e:g}": float(v) for (e, _), v in zip(pairs, got, strict=True)}}
        if self.privacy == "rdp":
            orders = self.orders()
            vals = np.atleast_1d(renyi_curve(pmf, shifts, [a for a, _ in orders]))
            ratio = max(float(v) / e for v, (_, e) in zip(vals, orders, strict=True))
            return {"rdp": ratio, **{f"rdp@{a:g}": float(v) for (a, _), v in zip(orders, vals, strict=True)}}
        rho_hat, where = achieved_rho(pmf, shifts)
        return {"zcdp": rho_hat, "alpha*": where, "grid_margin": grid_margin(self.alphas or (1.0,))}

    def satisfied(self, achieved: dict[str, float]) -> bool:
        """Whether :meth:`achieved` output meets the budget within the documented tolerances.

        profile: :func:`optnoise.privacy.profile.profile_satisfied`; rdp: every listed
        ``D_alpha <= eps_alpha (1 + RENYI_RTOL)`` (the listed orders are the whole guarantee);
        zcdp: the certified ``sup_{alpha > 1} D_alpha / alpha <= rho (1 + RENYI_RTOL)``, over every
        order, not only the grid (``RENYI_RTOL`` is float64's evaluation error, never a grid margin).
        """
        if self.privacy == "profile":
            pairs = self.profile or ()
            return profile_satisfied([achieved[f"dp@{e:g}"] for e, _ in pairs], pairs)
        if self.privacy == "rdp":
            return achieved["rdp"] <= 1.0 + RENYI_RTOL
        return achieved["zcdp"] <= float(self.rho or 0.0) * (1.0 + RENYI_RTOL)


def _max_shift_norm2(n: int, shifts: np.ndarray) -> float:
    """Largest squared length of a shift, each coordinate as a circular distance on ``{0..n}``."""
    d = np.minimum(shifts, n + 1 - shifts).astype(float)
    return float(np.max(np.sum(d * d, axis=1)))
