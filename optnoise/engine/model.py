"""A solver-neutral sparse linear model (LP/MILP) and a small builder for it.

Every optimisation in optnoise (noise design, the permute-and-flip LP, the
partition-selection LP, the count-query LP) is written once as a
:class:`LinearModel` and handed to a thin backend in :mod:`optnoise.engine.solve`::

    minimise    c @ x + offset
    subject to  row_lower <= A @ x <= row_upper
                col_lower <=     x <= col_upper
                x[j] integer where integrality[j]

Convex extensions. A model may also carry *cones* over its columns
(:class:`PowerCones`, :class:`RelEntrCones`): it is then a convex conic
program that only the ``"cvxpy"`` backend solves (Clarabel or SCS). The
Renyi-DP and zCDP designs of :mod:`optnoise.privacy.renyi` are built this way.

Example
-------
>>> mb = ModelBuilder()
>>> x = mb.add_vars(2, lb=0.0, ub=1.0, name="x")
>>> mb.add_row(x, [1.0, 1.0], upper=1.0)
>>> mb.set_objective(x, [-1.0, -2.0])
>>> model = mb.build()
>>> model.shape
(1, 2)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from optnoise.engine.validation import shown

__all__ = ["LinearModel", "ModelBuilder", "PowerCones", "RelEntrCones"]


@dataclass(frozen=True)
class PowerCones:
    """Elementwise 3-D power cones ``x^a y^(1-a) >= |c z|``, ``x, y >= 0``, ``0 < a < 1``.

    ``x``, ``y``, ``z`` are column indices, ``alpha`` the exponents ``a`` and
    ``scale`` the coefficients ``c`` (a scale keeps cone entries of order 1
    where the unscaled cone would need huge numbers).
    """

    x: np.ndarray
    y: np.ndarray
    z: np.ndarray
    alpha: np.ndarray
    scale: np.ndarray


@dataclass(frozen=True)
class RelEntrCones:
    """Elementwise relative entropy ``x log(x / y) <= t`` (exponential cones; column indices)."""

    x: np.ndarray
    y: np.ndarray
    t: np.ndarray


@dataclass(frozen=True)
class LinearModel:
    """A minimisation LP/MILP in sparse row form (see module docstring)."""

    c: np.ndarray
    A: sp.csr_matrix
    row_lower: np.ndarray
    row_upper: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    integrality: np.ndarray
    offset: float = 0.0
    blocks: dict[str, np.ndarray] = field(default_factory=dict)
    #: Which LP algorithm solves this problem class fastest (``"simplex"`` or ``"ipm"``), as measured
    #: in ``benchmarks/``; used by ``solver="auto"``. ``None``: dual simplex.
    lp_algorithm: str | None = None
    cones: tuple[PowerCones | RelEntrCones, ...] = ()

    @property
    def shape(self) -> tuple[int, int]:
        """(number of rows, number of columns)."""
        return self.A.shape

    @property
    def is_mip(self) -> bool:
        """True when any variable is integer."""
        return bool(np.any(self.integrality))

    @property
    def is_conic(self) -> bool:
        """True when the model carries cones (solvable by the ``"cvxpy"`` backend only)."""
        return bool(self.cones)

    @property
    def size(self) -> dict[str, int]:
        """Rows, columns, integer columns and nonzeros, for reports."""
        return {
            "rows": int(self.A.shape[0]),
            "cols": int(self.A.shape[1]),
            "integers": int(np.count_nonzero(self.integrality)),
            "nonzeros": int(self.A.nnz),
            **({"cones": sum(int(np.size(c.x)) for c in self.cones)} if self.cones else {}),
        }

    def block(self, name: str) -> np.ndarray:
        """Column indices of a named variable block (as given to ``add_vars``)."""
        try:
            return self.blocks[name]
        except KeyError:
            raise ValueError(f"block must be one of {sorted(self.blocks)}; got {shown(name)}") from None

    def dual_bound(self, y: Any) -> float | None:
        """A lower bound on the LP's optimum from any row multipliers ``y`` (weak duality), or ``None``.

        For every ``y``, ``L(y) = offset + sum_i (y_i row_lower_i if y_i > 0 else y_i row_upper_i)
        + sum_j min over col_lower_j <= x_j <= col_upper_j of (c - A^T y)_j x_j`` is at most
        ``c @ x + offset`` for every feasible ``x``: it needs no accuracy from whoever computed
        ``y`` (a multiplier whose row side is infinite is taken as 0, which keeps the bound
        valid). ``None`` when it is ``-inf`` (a reduced cost of the wrong sign on an unbounded
        column) or ``y`` is not a finite vector of one entry per row. The float evaluation is
        rounded down by a relative ``1e-14`` of its terms, so float error cannot overstate it.
        Integer columns are relaxed: for a MILP this is a bound of its LP relaxation.
        """
        try:
            yv = np.asarray(y, dtype=float).ravel()
        except (TypeError, ValueError):
            return None
        if yv.shape != (self.shape[0],) or not np.all(np.isfinite(yv)):
            return None
        yv = np.where(
            (yv > 0) & np.isfinite(self.row_lower), yv, np.where((yv < 0) & np.isfinite(self.row_upper), yv, 0.0)
        )
        row_terms = np.where(yv > 0, yv * np.where(np.isfinite(self.row_lower), self.row_lower, 0.0), 0.0) + np.where(
            yv < 0, yv * np.where(np.isfinite(self.row_upper), self.row_upper, 0.0), 0.0
        )
        r = np.asarray(self.c, dtype=float) - self.A.T @ yv
        lo, hi = self.col_lower, self.col_upper
        if np.any((r > 0) & ~np.isfinite(lo)) or np.any((r < 0) & ~np.isfinite(hi)):
            return None
        col_terms = np.where(
            r > 0, r * np.where(np.isfinite(lo), lo, 0.0), np.where(r < 0, r * np.where(np.isfinite(hi), hi, 0.0), 0.0)
        )
        terms = np.concatenate([row_terms, col_terms, [float(self.offset)]])
        value = float(np.sum(terms))
        return value - 1e-14 * float(np.sum(np.abs(terms))) - 1e-300

    def residuals(self, x: np.ndarray) -> dict[str, float]:
        """Largest violation of rows, bounds and integrality by ``x`` (for checks)."""
        ax = self.A @ x
        row = np.maximum(self.row_lower - ax, ax - self.row_upper)
        col = np.maximum(self.col_lower - x, x - self.col_upper)
        xi = x[self.integrality]
        return {
            "rows": float(np.max(row, initial=0.0)),
            "bounds": float(np.max(col, initial=0.0)),
            "integrality": float(np.max(np.abs(xi - np.round(xi)), initial=0.0)),
        }


class ModelBuilder:
    """Accumulates variables, rows and an objective; ``build()`` returns a :class:`LinearModel`.

    Rows are added in batches of COO triplets, so a formulation over
    thousands of noise values stays vectorised.
    """

    def __init__(self) -> None:
        self._lb: list[np.ndarray] = []
        self._ub: list[np.ndarray] = []
        self._int: list[np.ndarray] = []
        self._n = 0
        self._rows: list[np.ndarray] = []
        self._cols: list[np.ndarray] = []
        self._vals: list[np.ndarray] = []
        self._rlo: list[np.ndarray] = []
        self._rup: list[np.ndarray] = []
        self._m = 0
        self._obj: tuple[np.ndarray, np.ndarray] = (np.zeros(0, dtype=np.int64), np.zeros(0))
        self._offset = 0.0
        self._blocks: dict[str, np.ndarray] = {}
        self._cones: list[PowerCones | RelEntrCones] = []

    @classmethod
    def from_model(cls, model: LinearModel) -> ModelBuilder:
        """A builder holding ``model``'s variables, rows, objective and blocks, to be extended."""
        mb = cls()
        mb._lb, mb._ub, mb._int = [model.col_lower.copy()], [model.col_upper.copy()], [model.integrality.copy()]
        mb._n = int(model.shape[1])
        coo = model.A.tocoo()
        mb._rows, mb._cols, mb._vals = [coo.row.astype(np.int64)], [coo.col.astype(np.int64)], [coo.data.copy()]
        mb._rlo, mb._rup = [model.row_lower.copy()], [model.row_upper.copy()]
        mb._m = int(model.shape[0])
        nz = np.nonzero(model.c)[0]
        mb._obj = (nz.astype(np.int64), model.c[nz].astype(float))
        mb._offset = float(model.offset)
        mb._blocks = {k: v.copy() for k, v in model.blocks.items()}
        return mb

    @property
    def num_vars(self) -> int:
        return self._n

    @property
    def num_rows(self) -> int:
        return self._m

    def add_vars(
        self,
        count: int,
        *,
        lb: Any = 0.0,
        ub: Any = np.inf,
        integer: bool = False,
        name: str | None = None,
    ) -> np.ndarray:
        """Add ``count`` variables; returns their column indices."""
        idx = np.arange(self._n, self._n + count, dtype=np.int64)
        self._lb.append(np.broadcast_to(np.asarray(lb, dtype=float), (count,)).copy())
        self._ub.append(np.broadcast_to(np.asarray(ub, dtype=float), (count,)).copy())
        self._int.append(np.full(count, bool(integer)))
        self._n += count
        if name is not None:
            self._blocks[name] = idx
        return idx

    def add_rows(self, rows: Any, cols: Any, vals: Any, *, lower: Any = -np.inf, upper: Any = np.inf) -> np.ndarray:
        """Add a batch of rows from COO triplets.

        ``rows`` are local row numbers ``0..m-1`` of this batch; ``lower`` and
        ``upper`` broadcast to ``m``. Returns the global indices of the new rows.
        """
        rows = np.asarray(rows, dtype=np.int64).ravel()
        cols = np.asarray(cols, dtype=np.int64).ravel()
        vals = np.broadcast_to(np.asarray(vals, dtype=float), rows.shape).ravel()
        if rows.shape != cols.shape:
            raise ValueError("rows and cols must have the same length")
        m = int(rows.max()) + 1 if rows.size else 0
        lo = np.broadcast_to(np.asarray(lower, dtype=float), (m,)).copy()
        up = np.broadcast_to(np.asarray(upper, dtype=float), (m,)).copy()
        if cols.size and (cols.min() < 0 or cols.max() >= self._n):
            raise IndexError("column index out of range")
        self._rows.append(rows + self._m)
        self._cols.append(cols)
        self._vals.append(vals)
        self._rlo.append(lo)
        self._rup.append(up)
        out = np.arange(self._m, self._m + m, dtype=np.int64)
        self._m += m
        return out

    def add_row(self, cols: Any, vals: Any, *, lower: float = -np.inf, upper: float = np.inf) -> int:
        """Add a single row ``lower <= sum vals * x[cols] <= upper``."""
        cols = np.asarray(cols, dtype=np.int64).ravel()
        return int(self.add_rows(np.zeros(cols.size, dtype=np.int64), cols, vals, lower=lower, upper=upper)[0])

    def _cone_cols(self, *arrays: Any) -> list[np.ndarray]:
        out = [np.asarray(a, dtype=np.int64).ravel() for a in arrays]
        if len({a.size for a in out}) != 1:
            raise ValueError("cone column arrays must have equal lengths")
        for a in out:
            if a.size and (a.min() < 0 or a.max() >= self._n):
                raise IndexError("column index out of range")
        return out

    def add_power_cones(self, x: Any, y: Any, z: Any, alpha: Any, scale: Any = 1.0) -> None:
        """Add ``x^a y^(1-a) >= |c z|`` elementwise over column arrays, ``0 < a < 1`` (``a``, ``c`` broadcast)."""
        cx, cy, cz = self._cone_cols(x, y, z)
        a = np.broadcast_to(np.asarray(alpha, dtype=float), cx.shape).copy()
        c = np.broadcast_to(np.asarray(scale, dtype=float), cx.shape).copy()
        if np.any(~(a > 0)) or np.any(~(a < 1)):
            raise ValueError("power cone alpha must lie in (0, 1)")
        if not np.all(np.isfinite(c)):
            raise ValueError("power cone scale must be finite")
        self._cones.append(PowerCones(cx, cy, cz, a, c))

    def add_rel_entr(self, x: Any, y: Any, t: Any) -> None:
        """Add ``x log(x / y) <= t`` elementwise over column arrays."""
        cx, cy, ct = self._cone_cols(x, y, t)
        self._cones.append(RelEntrCones(cx, cy, ct))

    def set_objective(self, cols: Any, vals: Any, *, offset: float = 0.0) -> None:
        """Minimise ``sum vals * x[cols] + offset`` (replaces any earlier objective)."""
        cols = np.asarray(cols, dtype=np.int64).ravel()
        vals = np.broadcast_to(np.asarray(vals, dtype=float), cols.shape)
        self._obj = (cols, vals.astype(float))
        self._offset = float(offset)

    def build(self, *, lp_algorithm: str | None = None) -> LinearModel:
        """Freeze the model; ``lp_algorithm`` is the :attr:`LinearModel.lp_algorithm` hint."""
        if lp_algorithm not in (None, "simplex", "ipm"):
            raise ValueError(f"lp_algorithm must be None, 'simplex' or 'ipm'; got {shown(lp_algorithm)}")
        c = np.zeros(self._n)
        np.add.at(c, *self._obj)
        if self._rows:
            rows = np.concatenate(self._rows)
            cols = np.concatenate(self._cols)
            vals = np.concatenate(self._vals)
            A = sp.csr_matrix((vals, (rows, cols)), shape=(self._m, self._n))
            A.sum_duplicates()
            rlo = np.concatenate(self._rlo)
            rup = np.concatenate(self._rup)
        else:
            A = sp.csr_matrix((0, self._n))
            rlo = rup = np.zeros(0)

        def cat(xs: list[np.ndarray], dt: Any) -> np.ndarray:
            return np.concatenate(xs) if xs else np.zeros(0, dtype=dt)

        return LinearModel(
            c=c,
            A=A,
            row_lower=rlo,
            row_upper=rup,
            col_lower=cat(self._lb, float),
            col_upper=cat(self._ub, float),
            integrality=cat(self._int, bool),
            offset=self._offset,
            blocks=dict(self._blocks),
            lp_algorithm=lp_algorithm,
            cones=tuple(self._cones),
        )
