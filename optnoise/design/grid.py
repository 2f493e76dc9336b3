"""The grid release of a real-valued query: ``w * (round(q / w) + eta)`` with an integer noise ``eta``.

A real query ``q`` (a clipped sum, a mean, a model statistic) whose answers on neighbouring
datasets differ by at most the sensitivity ``Delta`` is rounded to the grid of width
``w = Delta / m`` (``resolution=w``, ``m`` an integer up to :data:`MAX_STEPS`), an integer
noise ``eta`` is added to the cell index, and ``w * (k + eta)`` is released. Everything but
the rounding is the additive release on the integers (:mod:`optnoise.design.additive`) with
the neighbourhood ``Neighborhood.bd(m)``: this module only states the problem in the
integers, charges the cost of the real error, and scales the result back.

Exact rounding. The cell index is ``k(q) = floor(q m / Delta + 1/2)`` computed in exact
rational arithmetic on the floats ``q`` and ``Delta`` (:func:`cell_index`), so the grid width is
exactly ``Delta / m`` whatever float ``w`` was passed. If ``|q - q'| <= Delta`` as real
numbers, then ``q' m / Delta + 1/2 <= q m / Delta + 1/2 + m``, and as ``floor`` is monotone
and ``floor(x + m) = floor(x) + m`` for an integer ``m``, ``k(q') <= k(q) + m``; by symmetry
``|k(q) - k(q')| <= m``. No float operation is involved, so no rounding error can make the
integer sensitivity ``m + 1``: the integer noise designed for the shifts ``+-1..+-m`` gives
the guarantee for every pair of real answers at distance ``<= Delta``. The released float
``w * (k + eta)`` is a deterministic function of ``k + eta`` (post-processing).

The error model. The released error is ``w eta + r`` with the rounding error
``r = w k(q) - q`` in ``(-w/2, w/2]``. ``distortion`` is its expected cost with ``r``
**uniform** on the cell (the answer's position inside its cell is not known in advance and
is modelled as uniform, as for a quantiser): the cost of the integer noise value ``eta`` is
``c(eta) = E_r cost(w eta + r)``, linear in the PMF, so the LP minimises exactly what is
reported. In units of ``w`` (``u = r / w`` uniform on ``(-1/2, 1/2]``):

* ``"mse"``: ``w^2 (eta^2 + 1/12)``; ``"mae"``: ``w |eta|`` for ``eta != 0`` and ``w / 4`` at 0;
* ``"abs^p"``: ``w^p (F(eta + 1/2) - F(eta - 1/2))`` with ``F(y) = sign(y) |y|^(p+1) / (p+1)``;
* ``"exceed:t"`` (``t`` real, the real error's threshold): the share of the cell
  ``[eta - 1/2, eta + 1/2]`` outside ``[-t/w, t/w]``.

This average is also the exact cost of the continuous noise ``w (eta + u)`` (a piecewise-constant
density with the cell masses of ``eta``), itself (eps, delta)-DP for every real shift ``<= Delta``
when ``eta`` is for the shifts ``1..m``: so the grid release never beats the continuous optimum
(under pure DP the Geng-Viswanath staircase; a test checks it) and closes on it as ``m`` grows.

For ``abs^p`` with ``p >= 1`` the cost is convex in ``r``, so the worst answer position is a
cell edge: :attr:`GridResult.worst_case` reports ``w^p max_(s = +-1/2) E|eta + s|^p`` (for
``"mse"`` and a symmetric noise: ``distortion + w^2 / 6``).

Notions and budgets are passed to the additive design unchanged (``dp``, pure when
``delta = 0``, ``pdp``, ``profile``, ``composed`` with both objectives, and what the additive release
adds later); its refusals name ``release='grid'``. A composed design's ``max_distortion`` is in the
query's units (divided by ``w^p`` for the integer design, whose family is then re-fixed at that cap);
its composed guarantee holds for every pair of real answers at distance ``<= Delta`` because the rounded
answers differ by at most ``m`` cells (above), the shifts the integer noise is composed for.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from optnoise.design import additive
from optnoise.design.additive_composed import cap_family
from optnoise.design.additive_eval import AdditiveResult, additive_baselines, evaluate, parse_metric, settled_result
from optnoise.engine.validation import check_positive, shown
from optnoise.privacy.neighborhood import Neighborhood

__all__ = [
    "GRID",
    "GRID_METRICS",
    "MAX_STEPS",
    "GridResult",
    "cell_index",
    "grid_steps",
    "set_real_baselines",
    "installed_real_baselines",
    "setup",
    "model_size",
    "build",
    "solve",
    "spec",
    "describe",
    "from_spec",
]

#: The release name.
GRID = "grid"
#: The keywords only this release takes (:attr:`optnoise.design.releases.Release.fields`).
RELEASE_FIELDS = ("sensitivity", "resolution", "support")
#: The problem's required flags on the command line.
REQUIRED_FLAGS = ("eps", "sensitivity", "resolution")
#: ``optnoise sweep`` runs it (``--sensitivity``, ``--resolution`` and ``--support`` are grids there).
SWEEPABLE = True
#: Of the fields, the integer ones; the answers are reals (:class:`~optnoise.design.releases.Release`).
INTEGER_FIELDS, REAL_ANSWERS = ("support",), True
#: Metric names (``abs^p`` with ``0 < p <= 16``; ``exceed:t`` with a real ``t >= 0`` in the query's units).
GRID_METRICS = ("mse", "mae", "abs^p", "exceed:t")
#: Largest ``m = Delta / w``: the additive LP has ``m`` shifts per noise value (its size grows as ``m L``).
MAX_STEPS = 256
#: ``Delta / w`` is taken as the integer ``m`` when within this relative distance of it (float ``w``).
STEP_RTOL = 1e-9
#: Largest sensitivity and smallest resolution accepted (released values stay far inside the floats).
MAX_SENSITIVITY = 1e12
_EXCEED = re.compile(r"exceed:([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)$")
_REAL_BASELINES: list[Callable[..., dict[str, float]]] = []


def set_real_baselines(fn: Callable[..., dict[str, float]]) -> None:
    """Install the real-valued baselines (:func:`optnoise.mechanisms.real_baselines.real_baselines`).

    The design layer cannot import ``mechanisms`` (it sits above it); the mechanisms module installs
    itself here when imported (``import optnoise`` does), as :func:`~optnoise.design.result.set_certifier`.
    """
    _REAL_BASELINES[:] = [fn]


def installed_real_baselines(**kw: Any) -> dict[str, float]:
    """The installed real-valued baselines at ``kw`` (eps, delta, metric, sensitivity); ``{}`` when none is installed.

    For design modules (which cannot import ``mechanisms``), e.g. a continuous release's ``baselines``.
    """
    return _REAL_BASELINES[0](**kw) if _REAL_BASELINES else {}


# --------------------------------------------------------------------------------------------
# the grid and its exact rounding
# --------------------------------------------------------------------------------------------


def grid_steps(sensitivity: Any, resolution: Any) -> tuple[float, float, int]:
    """``(Delta, w, m)``: the checked sensitivity and resolution and ``m = Delta / w``, an integer.

    ``ValueError`` names the parameter, and for a ``w`` that does not divide ``Delta`` says
    which resolutions would.
    """
    delta_ = check_positive("sensitivity", sensitivity)
    if delta_ > MAX_SENSITIVITY:
        raise ValueError(f"sensitivity must be at most {MAX_SENSITIVITY:g}; got {shown(sensitivity)}")
    w = check_positive("resolution", resolution)
    ratio = delta_ / w
    m = round(ratio) if math.isfinite(ratio) else 0
    if m < 1 or abs(ratio - m) > STEP_RTOL * max(m, 1):
        lo, hi = max(1, math.floor(ratio)), max(1, math.ceil(ratio))
        opts = sorted({k for k in (lo, hi) if 1 <= k <= MAX_STEPS}) or [min(MAX_STEPS, max(1, lo))]
        alt = " or ".join(f"resolution={delta_ / k:.12g} (m = {k})" for k in opts)
        raise ValueError(
            f"resolution must divide the sensitivity: sensitivity / resolution = {ratio:.12g} is not an integer m; "
            f"use {alt}"
        )
    if m > MAX_STEPS:
        raise ValueError(
            f"resolution is too fine: m = sensitivity / resolution = {m} exceeds the cap {MAX_STEPS} (the LP grows "
            f"as m times the support); use resolution >= {delta_ / MAX_STEPS:.12g} (m <= {MAX_STEPS})"
        )
    return delta_, w, m


def cell_index(q: Any, sensitivity: float, m: int) -> int:
    """``floor(q m / Delta + 1/2)`` in exact rational arithmetic (module docstring: the proof of sensitivity m).

    ``q`` a finite real number (a Python or numpy float or integer); ``ValueError`` otherwise.
    """
    if isinstance(q, bool) or not isinstance(q, (int, float, np.integer, np.floating)):
        raise ValueError(f"q must be a finite real number; got {shown(q)}")
    if isinstance(q, (float, np.floating)) and not math.isfinite(float(q)):
        raise ValueError(f"q must be a finite real number; got {shown(q)}")
    x = (Fraction(int(q)) if isinstance(q, (int, np.integer)) else Fraction(float(q))) * m / Fraction(sensitivity)
    return math.floor(x + Fraction(1, 2))


def cell_value(k: int, sensitivity: float, m: int) -> float:
    """``k Delta / m``, correctly rounded to a float (the released value of the cell ``k``)."""
    return float(Fraction(k) * Fraction(sensitivity) / m)


# --------------------------------------------------------------------------------------------
# the cost of the real error, in units of w
# --------------------------------------------------------------------------------------------


def _power_cell(p: float, shift: float = 0.0) -> Callable[[np.ndarray], np.ndarray]:
    """``E |eta + shift + u|^p`` over ``u`` uniform on ``[-1/2, 1/2]`` (``shift = 0``), or ``|eta + shift|^p``."""
    if shift != 0.0:
        return lambda x: np.abs(np.asarray(x, dtype=float) + shift) ** p
    if p == 2.0:
        return lambda x: np.asarray(x, dtype=float) ** 2 + 1.0 / 12.0
    if p == 1.0:
        return lambda x: np.where(np.asarray(x) == 0, 0.25, np.abs(np.asarray(x, dtype=float)))

    def fn(x: np.ndarray) -> np.ndarray:
        y = np.asarray(x, dtype=float)
        F = lambda v: np.sign(v) * np.abs(v) ** (p + 1.0) / (p + 1.0)  # noqa: E731
        return F(y + 0.5) - F(y - 0.5)

    return fn


def _exceed_cell(t: float) -> Callable[[np.ndarray], np.ndarray]:
    """The share of ``[eta - 1/2, eta + 1/2]`` outside ``[-t, t]`` (``t`` in units of w)."""

    def fn(x: np.ndarray) -> np.ndarray:
        y = np.asarray(x, dtype=float)
        inside = np.clip(np.minimum(y + 0.5, t) - np.maximum(y - 0.5, -t), 0.0, 1.0)
        return 1.0 - inside

    return fn


def grid_cost(metric: Any, width: float) -> tuple[Any, float, float | None]:
    """The integer design's cost of ``metric`` in units of ``w``, the scale ``w^p`` and the power ``p``.

    Returns ``(cost, scale, p)``: the real distortion is ``scale`` times the integer design's;
    ``p`` is ``None`` for ``exceed:t``.
    """
    if isinstance(metric, str) and metric in ("mse", "mae") or (isinstance(metric, str) and metric.startswith("abs^")):
        try:
            p = parse_metric(metric, None).power
        except ValueError:
            p = None
        if p is not None:
            cost = dataclasses.replace(parse_metric(_power_cell(p), None), name=metric)
            return cost, width**p, p
    if isinstance(metric, str):
        mt = _EXCEED.match(metric)
        if mt and math.isfinite(float(mt.group(1))):
            t = float(mt.group(1)) / width
            # the cost is exactly 1 beyond |eta| > t + 1/2: exact geometric tail sums from there
            beyond = math.floor(t + 0.5) + 1 if t < 1e9 else None
            cost = parse_metric(_exceed_cell(t), None)
            if beyond is not None:
                cost = dataclasses.replace(cost, beyond=1.0, threshold=beyond)
            return dataclasses.replace(cost, name=metric), 1.0, None
    why = " (the error of a real query is never exactly 0: 'er' does not apply)" if metric == "er" else ""
    raise ValueError(
        f"metric must be one of {', '.join(GRID_METRICS)} for release='grid' (abs^p with 0 < p <= 16, e.g. 'abs^3'; "
        f"exceed:t with a real t >= 0 in the query's units, e.g. 'exceed:0.5'); got {shown(metric)}{why}"
    )


# --------------------------------------------------------------------------------------------
# the NoiseDesign hooks
# --------------------------------------------------------------------------------------------


def setup(design: Any, **kw: Any) -> None:
    """Validate and store a grid design on ``design`` (a :class:`NoiseDesign`): the additive design on bd(m)."""
    if kw["n"] is not None:
        raise ValueError("n does not apply to release='grid' (a real query: give sensitivity and resolution)")
    if kw["neighborhood"] is not None:
        raise ValueError(
            "neighborhood does not apply to release='grid': the sensitivity fixes it (shifts +-1..+-m, "
            "m = sensitivity / resolution)"
        )
    for name in ("sensitivity", "resolution"):
        if kw[name] is None:
            raise ValueError(f"{name} is required with release='grid' (e.g. sensitivity=1.0, resolution=0.125)")
    sens, res, m = grid_steps(kw["sensitivity"], kw["resolution"])
    width = float(Fraction(sens) / m)
    if not isinstance(kw["metric"], str):
        raise ValueError(f"metric must be a name for release='grid' (one of {', '.join(GRID_METRICS)})")
    cost, scale, power = grid_cost(kw["metric"], width)
    inner = {**kw, "neighborhood": Neighborhood.bd(m), "metric": "mae"}
    try:
        additive.setup(design, **inner)
    except ValueError as exc:
        raise ValueError(str(exc).replace("release='additive'", "release='grid'")) from None
    design.release, design.sensitivity, design.resolution, design.steps = GRID, sens, res, m
    design.width, design.scale, design.power = width, scale, power
    design.cost_of, design.metric, design.cost = cost, cost.name, None
    design.metric_arg = kw["metric"]
    if design.objective == "epsilon":  # composed: the integer design's cap is in units of w^p, its family re-fixed
        design.real_cap = design.max_distortion
        design.max_distortion = design.real_cap / scale
        cap_family(design)


def model_size(design: Any, L: int) -> dict[str, int]:
    """The additive model's size at support ``L`` (:func:`optnoise.design.additive.model_size`)."""
    return additive.model_size(design, L)


def build(design: Any, L: int) -> Any:
    """The additive LP/MILP at support ``L`` (costs in units of ``w^p``) and where its columns are."""
    return additive.build(design, L)


def solve(design: Any, **kw: Any) -> GridResult:
    """Solve the integer design (:func:`optnoise.design.additive.solve`) and report it on the reals."""
    try:
        res = additive.solve(design, **kw)
    except ValueError as exc:  # the additive refusals (unsupported options) name this release
        raise ValueError(str(exc).replace("release='additive'", "release='grid'")) from None
    return GridResult.of(res)


def spec(design: Any) -> dict[str, Any]:
    """The design as plain data (JSON-ready)."""
    out = additive.spec(design)
    for k in ("neighborhood", "shifts", "directed", "cost"):
        out.pop(k)
    out.update(
        release=GRID,
        sensitivity=design.sensitivity,
        resolution=design.resolution,
        steps=design.steps,
        metric=design.metric,
    )
    if design.objective == "epsilon":
        out["max_distortion"] = design.real_cap  # in the query's units, as given
    return out


def from_spec(data: dict[str, Any]) -> dict[str, Any]:
    """The :class:`NoiseDesign` keyword arguments of :func:`spec` output (``KeyError`` for a missing field)."""
    kw = {k: data[k] for k in ("sensitivity", "resolution", "metric", "privacy")}
    for k in ("eps", "delta", "support", "profile", "compositions", "discretization", "objective", "max_distortion"):
        if data.get(k) is not None:
            kw[k] = data[k]
    steps = data.get("steps")
    if steps is not None and grid_steps(kw["sensitivity"], kw["resolution"])[2] != steps:
        raise ValueError("spec 'steps' does not match sensitivity / resolution")
    return kw


def problem_lines(design: Any) -> list[str]:
    """The ``problem`` and ``neighbours`` lines ``optnoise solve`` prints for this release."""
    w = f"w = {design.sensitivity:g}/{design.steps}"
    return [
        f"problem     w (round(q/w) + eta), {w} (release grid)  {additive.budget_text(design)}",
        f"neighbours  |q - q'| <= {design.sensitivity:g}: cells +-1..+-{design.steps}; pmf in cells",
    ]


def describe(design: Any) -> str:
    """The additive description with the grid's parameters in place of its neighbourhood."""
    text = additive.describe(design).replace(f", neighborhood={design.neighborhood.describe()}", "")
    return text.replace(
        f"release={additive.ADDITIVE!r}",
        f"release={GRID!r}, sensitivity={design.sensitivity}, resolution={design.resolution}",
    )


# --------------------------------------------------------------------------------------------
# the result
# --------------------------------------------------------------------------------------------


def _expected(design: Any, pmf: np.ndarray, L: int, fn: Callable[[np.ndarray], np.ndarray]) -> float:
    """``E c(eta)`` for the noise ``pmf`` on ``-L..L`` plus its tails (the additive evaluation's exact sums)."""
    other = copy.copy(design)
    other.cost_of = parse_metric(fn, None)
    return float(evaluate(other, pmf, L)["distortion"])


@dataclasses.dataclass
class GridResult(AdditiveResult):
    """A solved grid design: the integer noise (``support``, ``pmf``, ``tail``: in units of ``w``) and its real cost.

    ``distortion`` and ``bound`` are in the query's units (the metric of ``w eta + r``, rounding
    included, ``r`` uniform on the cell: module docstring); ``gap``, ``status`` and ``achieved``
    are the integer design's (the scale ``w^p`` changes no ratio). ``actual`` holds the real
    ``mse`` and ``mae`` (rounding included) and ``er`` (``P(eta != 0)``).
    """

    @classmethod
    def of(cls, res: AdditiveResult) -> GridResult:
        """The grid result of the integer design's result (``res.design`` a grid design)."""
        d = res.design
        out = cls(**{f.name: getattr(res, f.name) for f in dataclasses.fields(AdditiveResult)})
        if out.distortion is not None:
            out.distortion = d.scale * out.distortion
        if out.bound is not None and d.objective != "epsilon":  # the epsilon form's bound is an eps
            out.bound = d.scale * out.bound
        if out._baselines is not None:  # a composed solve's: distortions in units of w^p, or eps
            out._baselines = {k: v * (d.scale if d.objective != "epsilon" else 1.0) for k, v in out._baselines.items()}
            if d.metric in ("mse", "mae"):  # the k-fold calibrated real Gaussian and Laplace on the unrounded query
                cap = getattr(d, "real_cap", None)
                out._baselines.update(
                    installed_real_baselines(
                        eps=d.eps,
                        delta=d.delta,
                        metric=d.metric,
                        sensitivity=d.sensitivity,
                        compositions=d.compositions,
                        max_distortion=cap,
                    )
                )
        if out.pmf is not None:
            out.actual = {
                "mse": d.width**2 * _expected(d, out.pmf, out.L, _power_cell(2.0)),
                "mae": d.width * _expected(d, out.pmf, out.L, _power_cell(1.0)),
                "er": out.actual.get("er", math.nan),
            }
        return out

    @property
    def release(self) -> str:
        return GRID

    @property
    def resolution(self) -> float:
        """The grid width ``w`` as given (the rounding uses ``sensitivity / m`` exactly)."""
        return float(self.design.resolution)

    @property
    def sensitivity(self) -> float:
        return float(self.design.sensitivity)

    @property
    def steps(self) -> int:
        """``m = sensitivity / resolution``: the integer sensitivity of the rounded query."""
        return int(self.design.steps)

    @property
    def worst_case(self) -> float | None:
        """The distortion at the worst answer position in its cell (``abs^p``, ``p >= 1``; else ``None``)."""
        d = self.design
        if self.pmf is None or d.power is None or d.power < 1.0:
            return None
        half = [_expected(d, self.pmf, self.L, _power_cell(d.power, s)) for s in (-0.5, 0.5)]
        return d.scale * max(half)

    @property
    def baselines(self) -> dict[str, float]:
        """The discrete Laplace and Gaussian on the grid (rounding included) and, for ``dp`` with one
        (eps, delta) and ``mse``/``mae``, the real-valued baselines on the unrounded query
        (:func:`optnoise.mechanisms.real_baselines.real_baselines`)."""
        if self._baselines is None:
            d = self.design
            out = {k: d.scale * v for k, v in additive_baselines(d).items()}
            if d.profile is None and d.privacy == "dp" and d.metric in ("mse", "mae"):
                out.update(
                    installed_real_baselines(eps=d.eps, delta=d.delta, metric=d.metric, sensitivity=d.sensitivity)
                )
            self._baselines = out
        return self._baselines

    def release_value(self, q: Any, eta: int) -> float:
        """``w (k(q) + eta)``: the released value of the answer ``q`` with the noise ``eta`` (exact rounding)."""
        d = self.design
        return cell_value(cell_index(q, d.sensitivity, d.steps) + int(eta), d.sensitivity, d.steps)

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out.update(release=GRID, resolution=self.resolution, sensitivity=self.sensitivity, steps=self.steps)
        return out

    @classmethod
    def from_dict(
        cls, data: Any, *, design: Any, recheck: bool = True, proof: Any = None, backend: str = ""
    ) -> GridResult:
        """Rebuild from :meth:`to_dict` output (:meth:`AdditiveResult.from_dict`: nothing stored is trusted)."""
        if not isinstance(data, dict) or data.get("release") != GRID:
            raise ValueError(f"a grid result must be a JSON object with release {GRID!r} (GridResult.to_dict())")
        units = {**data, "release": additive.ADDITIVE}
        res = AdditiveResult.from_dict(units, design=design, recheck=False, proof=proof, backend=backend)
        if res.pmf is not None and res.gap is None and recheck:
            at_L = design if design.support == res.L else design.replace(support=res.L)
            fresh = additive.solve(at_L, solver="highs")
            if fresh.bound is not None and fresh.status in ("optimal", "feasible", "time_limit"):
                res = settled_result(design, res.pmf, res.L, str(data["status"]), fresh.bound, "")
                res.backend, res.support_note = backend, str(data.get("support_note") or "")
        return cls.of(res)


#: The class a grid result is read back with (:attr:`optnoise.design.releases.Release.result_class`).
RESULT = GridResult
