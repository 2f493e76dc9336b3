"""Releases on the answers ``{0..n}`` that share one construction, LP pipeline and spec: modulo and clamp.

:func:`setup_lattice` is ``NoiseDesign``'s constructor for them (it was the body of
``NoiseDesign.__init__``); :class:`LatticeRelease` the hooks they share. A subclass says what
differs: the noise shape, what it refuses, the cost of a named metric, its model and size,
its neighbour pairs, its accounting pairs, its actual errors and its certification layout.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from optnoise.design import pipeline
from optnoise.design.composed import check_composed_args, composed_spec
from optnoise.design.metrics import METRICS, modulo_errors
from optnoise.design.releases.base import Release
from optnoise.engine.validation import (
    MAX_COST,
    MAX_EPS,
    MAX_EPS_REASON,
    MAX_SIZE,
    check_choice,
    check_delta,
    check_eps,
    check_int,
    check_model_size,
    check_positive,
    real_array,
    shown,
)
from optnoise.privacy.budget import Budget
from optnoise.privacy.neighborhood import Neighborhood
from optnoise.privacy.notions import NOTION_REGISTRY, Notion, get_notion

__all__ = ["LatticeRelease", "setup_lattice"]


class LatticeRelease(Release):
    """A release of answers in ``{0..n}`` (per coordinate) solved by :func:`optnoise.design.pipeline.solve_noise`.

    Attributes
    ----------
    metrics : tuple of str
        The named metrics it takes.
    """

    metrics: tuple[str, ...] = METRICS

    def setup(self, design: Any, **kw: Any) -> None:
        setup_lattice(design, self, **kw)

    # ---- what a subclass says
    def noise_shape(self, n: int, dim: int) -> tuple[int, ...]:
        raise NotImplementedError

    def check(self, design: Any, notion: Notion, shape: Any) -> None:
        """Refuse what this release does not take (called before anything is sized)."""

    def prepare(self, design: Any) -> None:
        """Release-specific attributes (e.g. neighbour pairs), set once the budget is known."""

    def metric_cost(self, design: Any, metric: str) -> np.ndarray:
        raise NotImplementedError

    def spec(self, design: Any) -> dict[str, Any]:
        return {
            "n": design.n,
            "eps": design.eps,
            "delta": design.delta,
            "shape": list(design.shape),
            "neighborhood": design.neighborhood.to_dict(),
            "shifts": design.shift_list(),
            "directed": design.neighborhood.directed,
            "metric": design.metric,
            "cost": design.cost.ravel().tolist() if design.metric == "custom" else None,
            "privacy": design.privacy,
            "objective": design.objective,
            "max_distortion": design.max_distortion,
            **({"release": self.name} if self.in_spec else {}),
            **(design.budget.spec() if design.budget else {}),
            **composed_spec(design),
        }

    def describe(self, design: Any) -> str:
        d = f"delta={design.delta}" if design.objective == "distortion" else f"max_distortion={design.max_distortion}"
        budget = design.budget.describe() if design.budget else f"eps={design.eps}, {d}"
        if design.notion.composed:
            budget = ", ".join(f"{k}={v}" for k, v in composed_spec(design, describe=True).items())
        return (
            f"NoiseDesign(n={design.n}, {budget}, neighborhood={design.neighborhood.describe()}, "
            f"metric={design.metric!r}, privacy={design.privacy!r}, objective={design.objective!r}"
            + (f", release={self.name!r})" if self.in_spec else ")")
        )

    def solve(self, design: Any, **kw: Any) -> Any:
        return pipeline.solve_noise(design, kw.pop("solver"), kw.pop("time_limit"), **kw)


def setup_lattice(
    design: Any,
    release: LatticeRelease,
    *,
    n: int | None,
    eps: float | None,
    delta: float | None,
    neighborhood: Neighborhood,
    metric: Any,
    privacy: str | None,
    objective: str,
    max_distortion: float | None,
    shape: tuple[int, ...] | None,
    support: int | None,
    compositions: int | None = None,
    discretization: float | None = None,
    **budget_kw: Any,
) -> None:
    """Validate and store a ``{0..n}`` design on ``design`` (``NoiseDesign``'s keywords, see its docstring)."""
    self = design
    if n is None or support is not None:
        why = f"n is required with release={shown(release.name)}" if n is None else "support needs release='additive'"
        raise ValueError(f"{why}; release='additive' (q + eta on all integers) takes support and no n")
    self.n, self.support = check_int("n", n, minimum=1), None
    privacy = release.default_privacy if privacy is None else privacy
    notion = get_notion(privacy)
    composed = check_composed_args(privacy, compositions, discretization, objective, eps, delta, max_distortion)
    self.compositions, self.discretization = composed["compositions"], composed["discretization"]
    # the fields of a Budget (a composed design's are checked above)
    budget_fields_given = {f.name: budget_kw.get(f.name) for n in _budget_notions() for f in n.fields}
    self.budget = None
    self.eps = None  # None exactly for the budget notions
    if not notion.takes_eps:
        if eps is not None or delta is not None or objective != "distortion":
            raise ValueError(f"privacy={privacy!r} takes its budget instead of eps/delta, with objective='distortion'")
    else:
        given = [k for k, v in budget_fields_given.items() if v is not None]
        if given:
            raise ValueError(f"{given[0]} applies only with privacy in {', '.join(_owners(given[0]))}")
        self.eps = None if objective == "epsilon" else check_eps(eps, maximum=MAX_EPS, why=MAX_EPS_REASON)
    if not isinstance(neighborhood, Neighborhood):
        raise ValueError(
            f"neighborhood must be a Neighborhood (e.g. Neighborhood.bd(3)); got {type(neighborhood).__name__}"
        )
    self.neighborhood = neighborhood
    self.privacy, self.notion = notion.name, notion
    self.objective = check_choice("objective", objective, ("distortion", "delta", "epsilon"))
    self.release = release.name
    dim = neighborhood.dim
    release.check(self, notion, shape)
    if shape is not None:
        try:
            shape = tuple(check_int("shape", s, minimum=1) for s in shape)
        except TypeError:
            raise ValueError(f"shape must be a tuple (n+1,)*d; got {shown(shape)}") from None
        if not shape or any(s != self.n + 1 for s in shape):
            raise ValueError(f"shape must be (n+1,)*d = ({self.n + 1},)*d; got {shape}")
        if len(shape) != dim:
            raise ValueError(f"shape has {len(shape)} coordinates but the neighbourhood's shifts have {dim}")
    # sizes are compared as exact Python integers before anything of that size is allocated
    if (self.n + 1) ** dim > MAX_SIZE:
        raise ValueError(
            f"n is too large: (n+1)^d = {(self.n + 1) ** dim if dim < 64 else 'more than 2^64'} noise values "
            f"exceeds the limit {MAX_SIZE}"
        )
    self.shifts = neighborhood.resolve(self.n, dim)
    self.shape = release.noise_shape(self.n, dim)
    # delta is None exactly when it is what is minimised, max_distortion exactly when it is not.
    if not notion.takes_eps:
        # every budget has at least one row per (shift, eta): refuse an oversized design before shift_index()
        K, N = len(self.shifts), self.size
        check_model_size(
            {"rows": 1 + K * N, "cols": N, "integers": 0, "nonzeros": N + 2 * K * N},
            what=f"the {self.privacy!r} model of this design",
        )
        idx = self.shift_index()
        self.budget = Budget.create(privacy, n=self.n, shifts=self.shifts, idx=idx, **budget_fields_given)
        self.delta = self.max_distortion = None
    elif self.objective == "distortion":
        self.delta = 0.0 if delta is None else check_delta(delta)
        if max_distortion is not None:
            raise ValueError("max_distortion applies only with objective='delta'")
        self.max_distortion = None
    else:  # objective "delta", or "epsilon" (privacy="composed": its delta is checked)
        if delta is not None and self.objective == "delta":
            raise ValueError("delta must be left unset with objective='delta' (it is what is minimised)")
        if max_distortion is None:
            raise ValueError(f"max_distortion is required with objective={self.objective!r}")
        self.delta = composed["delta"]
        self.max_distortion = check_positive("max_distortion", max_distortion, allow_zero=True)
    release.prepare(self)
    if isinstance(metric, str):
        self.metric = check_choice("metric", metric, release.metrics)
        self.cost = release.metric_cost(self, metric)
    else:
        try:
            cost = real_array("metric", metric)
        except ValueError:
            raise ValueError(f"metric must be one of {', '.join(METRICS)} or a cost array") from None
        if cost.size != self.size:
            raise ValueError(f"metric cost array must have {self.size} entries (shape {self.shape}); got {cost.size}")
        if not np.all(np.isfinite(cost)):
            raise ValueError("metric cost array must be finite")
        if np.max(np.abs(cost)) > MAX_COST:
            raise ValueError(
                f"metric cost array entries must have magnitude <= {MAX_COST:g} (solvers treat ~1e20 as "
                f"infinite); got {float(np.max(np.abs(cost))):g}. Rescale it: multiplying every cost by one "
                "positive factor leaves the optimal PMF unchanged"
            )
        self.metric = "custom"
        self.cost = cost.reshape(self.shape)
    # The model's size follows from N, the shifts and the notion; an oversized one is refused here,
    # before any (K, N) array is allocated.
    check_model_size(self.model_size(), what=f"the {self.privacy!r} model of this design")


def _budget_notions() -> list[Notion]:
    return [v for v in NOTION_REGISTRY.values() if not v.takes_eps]


def _owners(field: str) -> tuple[str, ...]:
    """The notions that take ``field`` (the allowed values of ``privacy`` for it)."""
    return tuple(k for k, v in NOTION_REGISTRY.items() if field in v.field_names())


def modulo_evaluation(design: Any, pmf: np.ndarray) -> tuple[float, dict[str, float]]:
    """Distortion and actual errors of a noise PMF charged per noise value."""
    return float(np.sum(design.cost * pmf)), modulo_errors(pmf)
