"""What each budget notion (``profile``, ``rdp``, ``zcdp``) does with a :class:`~optnoise.privacy.budget.Budget`.

One object per notion, registered on its :class:`~optnoise.privacy.notions.Notion`
(``Notion.budget``), so that :class:`~optnoise.privacy.budget.Budget` looks its behaviour up
once instead of testing its ``privacy`` string in every method: a budget of a notion without
such an object cannot be built (``Budget.create`` refuses it), so no value falls into another
notion's branch.

A new budget notion subclasses :class:`BudgetKind`, implements the hooks it needs and is
registered with its fields in :mod:`optnoise.privacy.notions`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from optnoise.engine.validation import check_positive, shown
from optnoise.privacy.profile import check_profile, profile_excess, profile_satisfied
from optnoise.privacy.renyi import (
    ALPHA_MAX,
    RENYI_RTOL,
    achieved_rho,
    check_alphas,
    check_rdp,
    grid_margin,
    reference_log_pmf,
    renyi_curve,
    zcdp_alphas,
)
from optnoise.privacy.renyi_sup import solve_zcdp

if TYPE_CHECKING:
    from optnoise.privacy.budget import Budget
    from optnoise.privacy.renyi_solve import RenyiSolution

__all__ = ["BudgetKind", "ProfileKind", "RdpKind", "ZcdpKind", "EPS_INF_MAX", "max_shift_norm2"]

#: Largest ``D_inf`` budget of the zCDP search row: ``e^EPS_INF_MAX`` stays in float64's range, and no float64
#: PMF the solvers return (masses floored at e^-708) has a log mass ratio far above it.
EPS_INF_MAX = 700.0

#: ``on_grid(orders, eps_inf, time_limit, bound_inf)``: solve a Renyi design on a finite grid of orders.
GridSolver = Callable[[list[tuple[float, float]], "float | None", "float | None", bool], "RenyiSolution"]


class BudgetKind:
    """The behaviour of one budget notion; every hook takes the :class:`Budget` it serves.

    Attributes
    ----------
    conic : bool
        True when the design is convex but not linear (solved by :mod:`optnoise.privacy.renyi_solve`);
        False when the budget adds LP rows (:meth:`add_rows`).
    bound_inf : bool
        Whether the conic search bounds ``D_inf`` by the largest order's budget (every notion but zCDP,
        whose ``D_inf`` row is a search aid only, :attr:`Budget.eps_inf`).
    """

    conic = False
    bound_inf = True

    def create(self, n: int, shifts: np.ndarray, idx: np.ndarray, fields: dict[str, Any]) -> dict[str, Any]:
        """Validate and pop this notion's fields from ``fields``; the keywords of the :class:`Budget`."""
        raise NotImplementedError

    def spec(self, b: Budget) -> dict[str, Any]:
        """The budget as plain data (the design's ``spec()`` fields)."""
        raise NotImplementedError

    def orders(self, b: Budget) -> list[tuple[float, float]]:
        """``[(alpha, eps_alpha)]`` of a Renyi budget."""
        raise ValueError(f"orders apply to privacy 'rdp' or 'zcdp', not {shown(b.privacy)}")

    def eps_inf(self, b: Budget) -> float | None:
        """A ``D_inf`` row of the search (none by default)."""
        return None

    def model_size(self, b: Budget, K: int, N: int) -> dict[str, int]:
        """Rows, columns, integers and nonzeros of the whole model for ``K`` shifts and ``N`` noise values."""
        raise NotImplementedError

    def solve(
        self,
        b: Budget,
        on_grid: GridSolver,
        shape: tuple[int, ...],
        idx: np.ndarray,
        cost: np.ndarray,
        time_limit: float | None,
    ) -> RenyiSolution:
        """Solve a conic design with ``on_grid`` (see :meth:`Budget.solve_renyi`)."""
        raise ValueError(f"privacy={shown(b.privacy)} is not solved as a conic model")

    def achieved(self, b: Budget, pmf: np.ndarray, shifts: np.ndarray) -> dict[str, float]:
        raise NotImplementedError

    def satisfied(self, b: Budget, achieved: dict[str, float]) -> bool:
        raise NotImplementedError


class ProfileKind(BudgetKind):
    """``privacy="profile"``: the hockey stick at every listed ``(eps_j, delta_j)`` at once, LP rows."""

    def create(self, n: int, shifts: np.ndarray, idx: np.ndarray, fields: dict[str, Any]) -> dict[str, Any]:
        return {"profile": check_profile(fields.pop("profile"))}

    def spec(self, b: Budget) -> dict[str, Any]:
        return {"profile": [list(p) for p in b.profile or ()]}

    def model_size(self, b: Budget, K: int, N: int) -> dict[str, int]:
        rows, cols, nnz = 1, N, N
        for _, delta in b.profile or ():  # optnoise.privacy.profile.add_profile_rows
            if delta == 0.0:
                rows, nnz = rows + K * N, nnz + 2 * K * N
            else:
                rows, cols, nnz = rows + K * N + K, cols + K * N, nnz + 4 * K * N
        return {"rows": rows, "cols": cols, "integers": 0, "nonzeros": nnz}

    def achieved(self, b: Budget, pmf: np.ndarray, shifts: np.ndarray) -> dict[str, float]:
        pairs = b.profile or ()
        got, excess = profile_excess(pmf, shifts, pairs)
        return {"profile": excess, **{f"dp@{e:g}": float(v) for (e, _), v in zip(pairs, got, strict=True)}}

    def satisfied(self, b: Budget, achieved: dict[str, float]) -> bool:
        pairs = b.profile or ()
        return profile_satisfied([achieved[f"dp@{e:g}"] for e, _ in pairs], pairs)


class _RenyiKind(BudgetKind):
    """The two Renyi notions: a conic model on a grid of orders."""

    conic = True

    def model_size(self, b: Budget, K: int, N: int) -> dict[str, int]:
        # conic (optnoise.privacy.renyi): an estimate, about two cone entries per (order, shift, eta)
        J = len(self.orders(b)) + 1
        return {"rows": 1 + 2 * J * K * N, "cols": N + 2 * J * K * N, "integers": 0, "nonzeros": 6 * J * K * N}


class RdpKind(_RenyiKind):
    """``privacy="rdp"``: ``D_alpha <= eps_alpha`` at exactly the listed orders."""

    def create(self, n: int, shifts: np.ndarray, idx: np.ndarray, fields: dict[str, Any]) -> dict[str, Any]:
        rdp = check_rdp(fields.pop("rdp"))
        mu2 = max_shift_norm2(n, shifts)
        return {"rdp": rdp, "sigma2": max(a * mu2 / (2.0 * e) for a, e in rdp)}

    def spec(self, b: Budget) -> dict[str, Any]:
        return {"rdp": [list(p) for p in b.rdp or ()]}

    def orders(self, b: Budget) -> list[tuple[float, float]]:
        return list(b.rdp or ())

    def solve(
        self,
        b: Budget,
        on_grid: GridSolver,
        shape: tuple[int, ...],
        idx: np.ndarray,
        cost: np.ndarray,
        time_limit: float | None,
    ) -> RenyiSolution:
        return on_grid(self.orders(b), self.eps_inf(b), time_limit, self.bound_inf)

    def achieved(self, b: Budget, pmf: np.ndarray, shifts: np.ndarray) -> dict[str, float]:
        orders = self.orders(b)
        vals = np.atleast_1d(renyi_curve(pmf, shifts, [a for a, _ in orders]))
        ratio = max(float(v) / e for v, (_, e) in zip(vals, orders, strict=True))
        return {"rdp": ratio, **{f"rdp@{a:g}": float(v) for (a, _), v in zip(orders, vals, strict=True)}}

    def satisfied(self, b: Budget, achieved: dict[str, float]) -> bool:
        return achieved["rdp"] <= 1.0 + RENYI_RTOL


class ZcdpKind(_RenyiKind):
    """``privacy="zcdp"``: ``D_alpha <= rho alpha`` at every order > 1, searched on a refined grid."""

    bound_inf = False

    def create(self, n: int, shifts: np.ndarray, idx: np.ndarray, fields: dict[str, Any]) -> dict[str, Any]:
        rho = fields.pop("rho")
        if rho is None:
            raise ValueError("rho is required with privacy='zcdp' (a float > 0)")
        rho = check_positive("rho", rho)
        sigma2 = max_shift_norm2(n, shifts) / (2.0 * rho)
        alphas = fields.pop("alphas")
        if alphas is None:
            # past the reference Gaussian's D_inf / rho, so that the D_inf row does not bind near it
            ls = reference_log_pmf(n, shifts.shape[1], sigma2)
            dinf = float(np.max(ls[None, :] - ls[idx]))
            alphas = zcdp_alphas(max(ALPHA_MAX, 1.25 * dinf / rho))
        return {"rho": rho, "alphas": check_alphas(alphas), "sigma2": sigma2}

    def spec(self, b: Budget) -> dict[str, Any]:
        return {"rho": b.rho, "alphas": list(b.alphas or ())}

    def orders(self, b: Budget) -> list[tuple[float, float]]:
        if b.rho is None:
            return super().orders(b)
        return [(a, b.rho * a) for a in b.alphas or ()]

    def eps_inf(self, b: Budget) -> float | None:
        if b.rho is None or not b.alphas:
            return None
        return min(b.rho * max(b.alphas), EPS_INF_MAX)

    def solve(
        self,
        b: Budget,
        on_grid: GridSolver,
        shape: tuple[int, ...],
        idx: np.ndarray,
        cost: np.ndarray,
        time_limit: float | None,
    ) -> RenyiSolution:
        # shift m moves output 0 to idx[m, 0]: that output's coordinates are the shift
        shifts = np.stack(np.unravel_index(np.asarray(idx)[:, 0], shape), axis=1)
        rho = float(b.rho or 0.0)

        def grid(alphas: tuple[float, ...], limit: float | None) -> RenyiSolution:
            return on_grid([(a, rho * a) for a in alphas], min(rho * max(alphas), EPS_INF_MAX), limit, self.bound_inf)

        return solve_zcdp(grid, cost, shifts, rho, tuple(b.alphas or ()), time_limit=time_limit)

    def achieved(self, b: Budget, pmf: np.ndarray, shifts: np.ndarray) -> dict[str, float]:
        rho_hat, where = achieved_rho(pmf, shifts)
        return {"zcdp": rho_hat, "alpha*": where, "grid_margin": grid_margin(b.alphas or (1.0,))}

    def satisfied(self, b: Budget, achieved: dict[str, float]) -> bool:
        return achieved["zcdp"] <= float(b.rho or 0.0) * (1.0 + RENYI_RTOL)


def max_shift_norm2(n: int, shifts: np.ndarray) -> float:
    """Largest squared length of a shift, each coordinate as a circular distance on ``{0..n}``."""
    d = np.minimum(shifts, n + 1 - shifts).astype(float)
    return float(np.max(np.sum(d * d, axis=1)))
