"""The continuous release's result and its description as data (:mod:`optnoise.design.continuous`).

:class:`ContinuousResult` holds the bracket of a continuous design: the cells' integer design behind the
upper bound (a valid mechanism), the proven lower bound over all densities, and the accounting of the
mechanism through its cell masses (which covers every real shift, see the class docstring).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from optnoise.design.continuous_renyi import gaussian_baseline
from optnoise.design.grid import installed_real_baselines
from optnoise.design.result import Accountable
from optnoise.privacy.notions import get_notion

__all__ = ["CONTINUOUS", "ContinuousResult", "describe", "from_spec", "is_composed", "is_renyi", "spec"]

#: The release's name.
CONTINUOUS = "continuous"


def is_renyi(design: Any) -> bool:
    """Whether the design's notion is a Renyi one (rdp, zcdp), as the notion registry says."""
    return bool(get_notion(design.privacy).renyi)


def is_composed(design: Any) -> bool:
    """Whether the design's notion is the k-fold composed one, as the notion registry says."""
    return bool(get_notion(design.privacy).composed)


@dataclass
class ContinuousResult(Accountable):
    """A solved continuous design: a piecewise-constant density, its cost and a proven lower bound.

    ``pld()``, ``compose(k)`` and ``plot()`` account for the mechanism through its cell masses under
    the integer shifts ``+-1..+-m`` (:meth:`release_pairs`), the worst case over those shifts: at a
    real shift ``(j + theta) w`` every hockey stick (and every Renyi sum) of the density is the mixture
    ``(1 - theta)`` of shift ``j``'s and ``theta`` of shift ``j + 1``'s (module docstring), so a pair
    dominating every integer shift dominates every real shift ``|s| <= Delta``. ``certify()`` and
    ``to_opendp()`` refuse: :meth:`to_grid` gives the deployable release.

    Attributes
    ----------
    status : str
        ``"optimal"`` (proven within the requested ``gap``), ``"feasible"`` (a valid mechanism,
        proven gap larger), or the upper-bound solve's status when it failed.
    resolution : float
        Cell width ``w = sensitivity / m``; cell ``k`` is ``[(k - 1/2) w, (k + 1/2) w)``.
    support, pmf : ndarray
        Cell indices ``-L..L`` and their masses; ``tail`` (cell units) holds the rest.
    distortion : float
        Expected cost of the density (cell averages, tails included).
    bound : float or None
        Proven lower bound over all densities meeting the guarantee.
    gap : float or None
        ``(distortion - bound) / max(1, distortion)`` (:func:`~optnoise.engine.output.relative_gap`);
        ``history`` also holds the plain ratio ``(upper - lower) / upper`` per resolution.
    achieved : dict
        Re-verified deltas of the cell masses over the integer shifts ``1..m`` (which cover every
        real shift, module docstring).
    history : list of dict
        Per resolution tried: ``m``, ``upper``, ``lower``, cells and times.
    """

    design: Any
    status: str
    m: int
    resolution: float
    support: np.ndarray
    pmf: np.ndarray | None
    tail: Any
    distortion: float | None
    bound: float | None
    gap: float | None
    achieved: dict[str, Any]
    upper: Any
    history: list[dict[str, Any]] = field(default_factory=list)
    message: str = ""
    solve_time: float = 0.0
    _baselines: dict[str, float] | None = None
    #: What re-proves :attr:`bound` from stored data (a sweep's cache; :func:`optnoise.design.continuous.read_back`):
    #: the lower-bound LP's resolution ``m``, truncation ``K`` and active entries; ``None``: not re-provable.
    proof: dict[str, Any] | None = None
    #: ``"cache"`` for a result read back from a sweep's cache (empty for a fresh solve).
    backend: str = ""
    #: How the result was obtained beyond its history (a sweep's cache says it was read back).
    support_note: str = ""

    @property
    def release(self) -> str:
        return CONTINUOUS

    def pmf_at(self, k: Any) -> np.ndarray:
        """Cell masses at any integer cells (finite part or tail)."""
        return np.asarray(self.upper.pmf_at(k), dtype=float)

    def density(self, x: Any) -> np.ndarray:
        """The noise density at real points ``x``."""
        k = np.floor(np.asarray(x, dtype=float) / self.resolution + 0.5).astype(np.int64)
        return self.pmf_at(k) / self.resolution

    def verify(self) -> bool:
        """True when the cell masses meet the guarantee for every shift ``1..m`` (re-verified)."""
        return bool(self.pmf is not None and self.upper.verify())

    def release_pairs(self) -> Any:
        """The cell masses against themselves shifted by ``+-1..+-m`` cells, tails lumped exactly.

        Those of the integer design behind the upper bound
        (:meth:`~optnoise.design.additive_eval.AdditiveResult.release_pairs`): their dominating pair
        covers every real shift ``|s| <= Delta`` (class docstring).
        """
        if self.pmf is None:
            raise ValueError(f"this result has no density (status {self.status!r})")
        return self.upper.release_pairs()

    def _draw(self, *, baseline: Any, eps: Any, axes: Any, label: str | None) -> Any:
        from optnoise.plotting.designs import plot_real_density

        if baseline is not None:
            raise ValueError("baseline is not supported by plot() for release='continuous' (res.baselines lists them)")
        d = self.design
        label = label or f"upper bound ({d.privacy}, {d.metric}, m = {self.m})"
        return plot_real_density(
            self.support, self.pmf, self.resolution, self.release_pairs(), eps=eps, axes=axes, label=label
        )

    def grid_call(self) -> str:
        """The deployable counterpart of this design: the ``release="grid"`` call at the same resolution."""
        kw = _grid_kwargs(self)
        return "NoiseDesign(" + ", ".join(f"{k}={v!r}" for k, v in kw.items()) + ").solve()"

    def certify(self, **kwargs: Any) -> Any:
        """Refused: a continuous density cannot be sampled exactly in floating point; use :meth:`to_grid`.

        Why not a deployable path here: a floating-point sample of a real density leaks through the
        gaps and rounding of the floats (Mironov 2012, on textbook Laplace samplers), and the
        guarantee proven here is for exact reals. The grid release at the same resolution rounds the
        query onto the cells and adds an *integer* noise for the shifts ``1..m`` with the same
        budget: it has an exact certificate and an exact sampler (``res.to_grid().certify()``), and
        its distortion (rounding included) is what this design's upper bound charges per cell.
        """
        raise ValueError(self._refusal("certify()"))

    def to_opendp(self, **kwargs: Any) -> Any:
        """Refused, as :meth:`certify` (a continuous density has no exact sampler); use :meth:`to_grid`."""
        raise ValueError(self._refusal("to_opendp()"))

    def _refusal(self, what: str) -> str:
        return (
            f"{what} is not supported for release='continuous' (a real density cannot be sampled exactly in "
            f"floating point); deploy the grid release at the same resolution: {self.grid_call()}, "
            "or res.to_grid()"
        )

    def to_grid(self, **solve_kw: Any) -> Any:
        """Solve the grid release at this resolution with the same budget and metric (deployable; ``certify()``).

        ``solve_kw`` go to its ``solve``. A metric given as a function has no grid counterpart (``ValueError``).
        """
        return type(self.design)(**_grid_kwargs(self)).solve(**solve_kw)

    @property
    def baselines(self) -> dict[str, float]:
        """Laplace, analytic Gaussian, truncated Laplace and staircase calibrated to the same (eps, delta) (lazy).

        From :func:`optnoise.mechanisms.real_baselines.real_baselines`, which installs itself in
        :mod:`optnoise.design.grid` when imported (``import optnoise`` does): ``mechanisms`` sits
        above ``design``, which cannot import it. Empty until it is installed.
        """
        if self._baselines is None:
            d = self.design
            if is_renyi(d):  # the Gaussian calibrated to the same rdp/zcdp budget
                self._baselines = gaussian_baseline(d)
                return self._baselines
            if d.profile is not None or d.metric not in ("mae", "mse"):
                raise ValueError("baselines apply to privacy='dp' or 'composed' designs with metric 'mae' or 'mse'")
            kw = {"eps": d.eps, "delta": d.delta, "metric": d.metric, "sensitivity": d.sensitivity}
            if is_composed(d):  # the k-fold calibrated Gaussian and Laplace (their eps for "epsilon")
                kw.update(compositions=d.compositions, max_distortion=d.max_distortion)
            self._baselines = installed_real_baselines(**kw)
        return self._baselines

    def to_dict(self) -> dict[str, Any]:
        return {
            "release": CONTINUOUS,
            "design": spec(self.design),
            "status": self.status,
            "m": self.m,
            "resolution": self.resolution,
            "support": self.support.tolist(),
            "pmf": None if self.pmf is None else self.pmf.tolist(),
            "tail": None if self.tail is None else self.tail.to_dict(),
            "distortion": self.distortion,
            "bound": self.bound,
            "gap": self.gap,
            "achieved": self.achieved,
            "history": self.history,
            "message": self.message,
            "solve_time": self.solve_time,
        }


def _grid_kwargs(res: ContinuousResult) -> dict[str, Any]:
    """The ``NoiseDesign`` keywords of the grid release with ``res``'s budget, metric and resolution."""
    d = res.design
    if d.metric == "custom":
        raise ValueError("metric must be a name for the grid release (this design's metric is a function)")
    kw: dict[str, Any] = {
        "release": "grid",
        "sensitivity": d.sensitivity,
        "resolution": res.resolution,
        "metric": d.metric,
        "privacy": d.privacy,
    }
    budget = {"eps": d.eps, "delta": d.delta, "profile": d.profile, "rdp": d.rdp, "rho": d.rho, "alphas": d.alphas}
    budget.update(compositions=d.compositions, discretization=d.discretization)
    if d.objective == "epsilon":  # both releases read the cap in the query's units
        budget.update(objective="epsilon", max_distortion=d.max_distortion)
    kw.update({k: (list(v) if isinstance(v, tuple) else v) for k, v in budget.items() if v is not None})
    return kw


def spec(design: Any) -> dict[str, Any]:
    """The design as plain data (JSON-ready)."""
    return {
        "release": CONTINUOUS,
        "sensitivity": design.sensitivity,
        "resolution": design.resolution,
        "gap": design.target_gap,
        "eps": design.eps,
        "delta": design.delta,
        "metric": design.metric,
        "privacy": design.privacy,
        "objective": design.objective,
        **({"profile": [list(p) for p in design.profile]} if design.profile is not None else {}),
        **_renyi_spec(design),
        **(
            {"compositions": design.compositions, "discretization": design.discretization}
            if is_composed(design)
            else {}
        ),
        **({"max_distortion": design.max_distortion} if design.objective == "epsilon" else {}),
    }


def from_spec(data: dict[str, Any]) -> dict[str, Any]:
    """The :class:`NoiseDesign` keyword arguments of :func:`spec` output (``KeyError`` for a missing field)."""
    if not isinstance(data["metric"], str) or data["metric"] == "custom":
        raise ValueError(
            "spec 'metric' must be a metric name: a continuous design with a cost function cannot be rebuilt"
        )
    kw = {k: data[k] for k in ("sensitivity", "metric", "privacy")}
    optional = ("resolution", "gap", "eps", "delta", "profile", "rdp", "rho", "alphas")
    for k in (*optional, "compositions", "discretization", "objective", "max_distortion"):
        if data.get(k) is not None:
            kw[k] = data[k]
    return kw


def _renyi_spec(design: Any) -> dict[str, Any]:
    """The rdp/zcdp budget fields of :func:`spec` (none for the other notions)."""
    out: dict[str, Any] = {}
    if design.rdp is not None:
        out["rdp"] = [list(p) for p in design.rdp]
    if design.rho is not None:
        out["rho"] = design.rho
    if design.alphas is not None:
        out["alphas"] = list(design.alphas)
    return out


def describe(design: Any) -> str:
    budget = (
        f"profile={list(design.profile)}" if design.profile is not None else f"eps={design.eps}, delta={design.delta}"
    )
    if is_renyi(design):
        budget = ", ".join(f"{k}={v}" for k, v in _renyi_spec(design).items())
    if is_composed(design):
        budget += f", compositions={design.compositions}" + (
            f", objective='epsilon', max_distortion={design.max_distortion}" if design.objective == "epsilon" else ""
        )
    return (
        f"NoiseDesign(release='continuous', sensitivity={design.sensitivity}, {budget}, metric={design.metric!r}, "
        f"privacy={design.privacy!r}, resolution={design.resolution}, gap={design.target_gap})"
    )
