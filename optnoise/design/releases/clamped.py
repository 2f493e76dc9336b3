"""``release="clamp"``: ``clip(q + eta, 0, n)`` with ``eta`` on ``{-n..n}``, certified as its induced matrix."""

from __future__ import annotations

from typing import Any

import numpy as np

from optnoise.design.clamp import (
    CLAMP_METRICS,
    clamp_baseline,
    clamp_evaluation,
    clamp_matrix,
    clamp_model,
    clamp_model_size,
)
from optnoise.design.layout import PairLayout, matrix_layout
from optnoise.design.releases.lattice import LatticeRelease
from optnoise.engine.model import LinearModel
from optnoise.engine.validation import check_model_size, shown
from optnoise.plotting.designs import plot_mechanism
from optnoise.privacy import accounting
from optnoise.privacy.curves import mechanism_delta
from optnoise.privacy.neighborhood import neighbour_pairs
from optnoise.privacy.notions import NOTION_REGISTRY, Notion

__all__ = ["ClampRelease"]


class ClampRelease(LatticeRelease):
    """Scalar answers; the noise lives on ``{-n..n}`` (``pmf[i]`` is ``f(i - n)``) and the release is clipped.

    Its matrix ``P[q, y]`` is linear in ``f``, so a design stays an LP (``"dp"``) or MILP (``"pdp"``):
    :func:`optnoise.design.clamp.clamp_model`. The neighbours are the answer pairs ``q - q' = mu``
    inside ``{0..n}``; the metric is charged on the released error ``y - q``.
    """

    name = "clamp"
    summary = "clip(q + eta, 0, n) with eta in {-n..n} (scalar queries)"
    metrics = CLAMP_METRICS

    def noise_shape(self, n: int, dim: int) -> tuple[int, ...]:
        return (2 * n + 1,)

    def check(self, design: Any, notion: Notion, shape: Any) -> None:
        if design.neighborhood.dim != 1 or shape is not None:
            raise ValueError("release='clamp' is for scalar queries (no shape, scalar shifts)")
        if not notion.takes_eps or notion.shared:
            # the clamped model has per-shift rows only: no shared indicators and no budget rows
            ok = ", ".join(repr(k) for k, v in NOTION_REGISTRY.items() if v.takes_eps and not v.shared)
            raise ValueError(f"privacy for release='clamp' must be one of {ok}; got {shown(notion.name)}")

    def prepare(self, design: Any) -> None:
        # the answer pairs are listed only once a bound on the model they make has passed the limits
        nb = design.neighborhood
        bound = (1 if nb.directed else 2) * len(nb.raw) * (design.n + 1)
        check_model_size(
            self._size(design, bound, "hull"),
            what=f"the {design.privacy!r} model of this design",
        )
        design.pairs = neighbour_pairs(design.n, nb)

    def _size(self, design: Any, pairs: int, formulation: str) -> dict[str, int]:
        return clamp_model_size(
            design.n,
            pairs,
            privacy=design.notion.lp,
            pure=design.is_pure,
            delta_objective=design.objective == "delta",
            formulation=formulation,
        )

    def metric_cost(self, design: Any, metric: str) -> np.ndarray:
        e = np.arange(-design.n, design.n + 1)  # the released error y - q
        return {"er": (e != 0).astype(float), "mse": e**2.0, "mae": np.abs(e).astype(float)}[metric]

    def model_size(self, design: Any, formulation: str = "hull") -> dict[str, int]:
        return self._size(design, len(design.pairs), formulation)

    def build(self, design: Any, formulation: str = "hull") -> LinearModel:
        assert design.eps is not None  # release="clamp" excludes the budget notions
        return clamp_model(
            n=design.n,
            eps=design.eps,
            pairs=design.pairs,
            cost=design.cost,
            privacy=design.notion.lp,
            delta=design.delta,
            objective=design.objective,
            max_distortion=design.max_distortion,
            formulation=formulation,
        )

    def shift_list(self, design: Any) -> list[Any]:
        """The signed differences ``q - q'`` of the answer pairs (nothing wraps), e.g. ``[-1, 1]``."""
        return np.unique(design.pairs[:, 0] - design.pairs[:, 1]).tolist()

    def pair_layout(self, design: Any, resolve: Any) -> PairLayout:
        # certified as its induced matrix, sampled row by row
        n = design.n
        e = np.arange(n + 1)[None, :] - np.arange(n + 1)[:, None]
        rows = (design.cost[e + n] / (n + 1)).reshape(1, -1)
        embed = lambda pmf: clamp_matrix(pmf, n).ravel()  # noqa: E731
        return matrix_layout(design.pairs, np.arange(n + 1), rows, design.privacy, resolve, embed=embed)

    def evaluate(self, design: Any, pmf: np.ndarray, eps: float | None, pure: bool) -> tuple[float, dict, dict]:
        return clamp_evaluation(design, pmf, pure, eps=eps)

    def release_pairs(self, design: Any, pmf: np.ndarray) -> accounting.ReleasePairs:
        return accounting.mechanism_pairs(clamp_matrix(pmf, design.n), design.pairs)

    def single_delta(self, design: Any, pmf: np.ndarray, eps: float) -> float:
        return float(mechanism_delta(clamp_matrix(pmf, design.n), design.pairs, eps, notion="dp"))

    def draw(self, design: Any, pmf: np.ndarray, baseline: Any, **kw: Any) -> Any:
        n = design.n
        return plot_mechanism(clamp_matrix(pmf, n), design.pairs, noise=pmf, **kw, **clamp_baseline(baseline, n))
