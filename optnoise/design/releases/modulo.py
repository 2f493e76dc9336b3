"""``release="modulo"``: ``q + eta (mod n+1)`` coordinate-wise, the release of Kadam et al. (2024)."""

from __future__ import annotations

from typing import Any

import numpy as np

from optnoise.design.layout import PairLayout, pmf_layout
from optnoise.design.metrics import cost_vector, reflection_pair
from optnoise.design.releases.lattice import LatticeRelease, modulo_evaluation
from optnoise.design.rows import add_pair_rows
from optnoise.engine.model import LinearModel, ModelBuilder
from optnoise.plotting.designs import plot_design
from optnoise.privacy import accounting
from optnoise.privacy.curves import achieved_deltas
from optnoise.privacy.verification import pdp_rtol

__all__ = ["ModuloRelease"]


class ModuloRelease(LatticeRelease):
    """Noise on ``{0..n}^d``, added modulo ``n+1``: every shift is a cyclic permutation of the noise."""

    name = "modulo"
    summary = "q + eta (mod n+1), coordinate-wise (the default)"
    in_spec = False
    cyclic = True

    def noise_shape(self, n: int, dim: int) -> tuple[int, ...]:
        return (n + 1,) * dim

    def spec_shape(self, spec: dict[str, Any]) -> tuple[int, ...] | None:
        shape = spec.get("shape")
        return tuple(shape) if shape else None

    def metric_cost(self, design: Any, metric: str) -> np.ndarray:
        return cost_vector(metric, design.n, design.dim)

    def model_size(self, design: Any, formulation: str = "hull") -> dict[str, int]:
        N, K = design.size, len(design.shifts)
        if design.budget is not None:
            return design.budget.model_size(K, N)
        notion = design.notion
        rows, cols, nnz, ints = 1, N, N, 0  # f and (13b)
        t = 0
        if design.objective == "delta":
            t = 1
            rows, cols, nnz = rows + 1, cols + 1, nnz + N  # t and the distortion cap (15b)

        def budget(R: int, C: int) -> tuple[int, int]:
            return R, R * C + R * t  # rows, nonzeros of budget_rows

        if design.is_pure:
            rows, nnz = rows + K * N, nnz + 2 * K * N
        elif not notion.indicators:  # a composed design solves (eps, delta) LPs of this size
            br, bn = budget(K, N)
            rows, cols, nnz = rows + K * N + br, cols + K * N, nnz + 3 * K * N + bn
        else:
            if not notion.shared and formulation == "hull":
                br, bn = budget(K, N)
                rows, cols, nnz, ints = rows + 3 * K * N + br, cols + 2 * K * N, nnz + 8 * K * N + bn, K * N
            else:
                G = 1 if notion.shared else K
                br, bn = budget(G, N)
                rows += 3 * G * N + 2 * K * N + br
                cols += 2 * G * N
                nnz += 8 * G * N + 6 * K * N + bn
                ints = G * N
            if reflection_pair(design.shifts, design.cost, design.n) is not None:
                rows, nnz = rows + 1, nnz + 2
        return {"rows": rows, "cols": cols, "integers": ints, "nonzeros": nnz}

    def build(self, design: Any, formulation: str = "hull") -> LinearModel:
        N, K = design.size, len(design.shifts)
        idx = design.shift_index()  # (K, N)
        if design.budget is not None and design.budget.is_conic:
            return design.budget.conic_model(design.cost, idx, design.shape)
        mb = ModelBuilder()
        f = mb.add_vars(N, lb=0.0, ub=1.0, name="f")
        mb.add_row(f, 1.0, lower=1.0, upper=1.0)  # (13b)
        cost = design.cost.ravel()
        if design.objective == "delta":
            t = mb.add_vars(1, lb=0.0, ub=1.0, name="t")
            mb.add_row(f, cost, upper=float(design.max_distortion or 0.0))  # (15b): set with objective="delta"
            mb.set_objective(t, [1.0])  # (15a)
        else:
            t = None
            mb.set_objective(f, cost)  # (13a)
        if design.budget is not None:
            design.budget.add_rows(mb, f, idx)
            return mb.build()
        assert design.eps is not None  # every notion without a Budget has one (eps, delta)
        shared = design.notion.shared
        rows = "pure" if design.is_pure else design.notion.lp
        # one entry per (shift, eta): f(eta) against f(eta + mu), budgeted per shift
        add_pair_rows(
            mb,
            np.tile(f, K),
            f[idx.ravel()],
            np.repeat(np.arange(K), N),
            eps=design.eps,
            notion=rows,
            delta=None if (t is not None or design.is_pure) else design.delta,
            t=None if t is None else int(t[0]),
            formulation="bigm" if shared else formulation,
            shared=np.tile(np.arange(N), K) if shared else None,
        )
        pair = reflection_pair(design.shifts, design.cost, design.n)
        if not design.is_pure and design.notion.indicators and pair is not None:
            # The reflection eta -> -eta maps feasible PMFs to feasible PMFs with the same
            # distortion, so one of every mirrored pair of optima has f(e1) >= f(-e1).
            mb.add_row(f[list(pair)], [1.0, -1.0], upper=0.0)
        return mb.build()

    def pair_layout(self, design: Any, resolve: Any) -> PairLayout:
        return pmf_layout(design.shift_index(), design.cost, design.privacy, resolve)

    def evaluate(self, design: Any, pmf: np.ndarray, eps: float | None, pure: bool) -> tuple[float, dict, dict]:
        distortion, actual = modulo_evaluation(design, pmf)
        if eps is None:
            return distortion, {}, actual
        return distortion, achieved_deltas(pmf, design.shifts, eps, rtol=pdp_rtol(eps), pure=pure), actual

    def release_pairs(self, design: Any, pmf: np.ndarray) -> accounting.ReleasePairs:
        return accounting.noise_pairs(np.asarray(pmf, dtype=float).reshape(design.shape), design.shifts)

    def single_delta(self, design: Any, pmf: np.ndarray, eps: float) -> float:
        return float(achieved_deltas(np.asarray(pmf).reshape(design.shape), design.shifts, eps)["dp"])

    def draw(self, design: Any, pmf: np.ndarray, baseline: Any, **kw: Any) -> Any:
        return plot_design(pmf, design.shifts, baseline=baseline, **kw)
