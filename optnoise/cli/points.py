"""Sweep points: the grids of designs a sweep solves, and the row of each solved point.

Each grid point is a plain dict (it pickles, and keys the cache): one
:class:`~optnoise.design.noise.NoiseDesign` (:func:`grid_points`, :func:`design_of`)
or one :class:`~optnoise.design.mechanism.MechanismDesign` (:func:`mechanism_points`,
:func:`mechanism_of`). :func:`run_point` solves one and returns its row
(:data:`ROW_KEYS`, :data:`MECHANISM_ROW_KEYS`). The budget fields of a point and
the columns of a row are derived from :data:`optnoise.privacy.fields.BUDGET_FIELDS`,
so every budget field is in every row. :mod:`optnoise.cli.sweeps` runs the points.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from optnoise.cli.additive_points import ACHIEVED_KEYS, cell, release_row, reproved_from_cache, solve_cached
from optnoise.design.mechanism import MechanismDesign
from optnoise.design.noise import NoiseDesign
from optnoise.design.releases import LatticeRelease, get_release, release_field_names
from optnoise.engine.tolerance import MIP_REL_GAP
from optnoise.engine.validation import (
    MAX_GRID_POINTS,
    MAX_SIZE,
    check_finite,
    check_int,
    parse_float,
    parse_int,
    shown,
)
from optnoise.privacy.fields import BUDGET_FIELD_NAMES
from optnoise.privacy.neighborhood import Neighborhood
from optnoise.privacy.notions import budget_fields
from optnoise.privacy.renyi import RENYI_NOTIONS

__all__ = [
    "ACHIEVED_KEYS",
    "ROW_KEYS",
    "MECHANISM_ROW_KEYS",
    "parse_grid",
    "grid_points",
    "mechanism_points",
    "mechanism_of",
    "design_of",
    "run_point",
    "is_cached",
]


def is_cached(row: dict[str, Any]) -> bool:
    """Whether a finished sweep row's point is in the cache (when one is used), so that a re-run skips it.

    Rows flagged ``unverified`` or ``error`` are never stored, and rdp/zcdp designs of the modulo and
    clamp releases are not cached (:meth:`~optnoise.design.noise.NoiseDesign.solve`); a row of a release
    that makes its own rows says itself (:func:`~optnoise.cli.additive_points.reproved_from_cache`).
    """
    if row.get("release") is not None and not isinstance(get_release(row["release"]), LatticeRelease):
        return reproved_from_cache(row)
    return row.get("status") not in ("unverified", "error") and row.get("privacy") not in RENYI_NOTIONS


#: Columns of a sweep row (CSV header order): every budget field
#: (:data:`~optnoise.privacy.fields.BUDGET_FIELDS`) in every row, the ``achieved_<key>`` columns of
#: :data:`ACHIEVED_KEYS` and ``achieved``, all that the result re-verified (a JSON object, e.g. a composed
#: design's or each Renyi order's).
ROW_KEYS = (
    "n",
    "eps",
    "delta",
    "neighborhood",
    "directed",
    "shifts",
    "metric",
    "privacy",
    "objective",
    "max_distortion",
    *BUDGET_FIELD_NAMES,
    "status",
    "distortion",
    *(f"achieved_{k.replace('-', '_')}" for k in ACHIEVED_KEYS),
    "achieved",
    "mse_mean",
    "mse_worst",
    "solver",
    "backend",
    "solve_time_s",
    "gap",
    "pmf",
    "error",
)


#: Columns of a mechanism sweep row (CSV header order).
MECHANISM_ROW_KEYS = (
    "n",
    "eps",
    "delta",
    "neighbors",
    "directed",
    "loss_function",
    "objective",
    "privacy",
    "max_loss",
    "status",
    "loss",
    "achieved_dp",
    "achieved_pdp",
    "mse_mean",
    "mse_worst",
    "mae_mean",
    "er",
    "solver",
    "solve_time_s",
    "rounds",
    "gap",
    "matrix",
    "error",
)


def parse_grid(
    name: str, text: str | float | Sequence[float], *, integer: bool = False, maximum: int | None = MAX_SIZE
) -> list[Any]:
    """Parse ``start:stop:count`` (inclusive linspace), ``a,b,c`` or one value (ints with ``integer=True``).

    Numbers are parsed strictly (ASCII digits, no empty items), and a range's
    ``count`` and a list's length are checked against :data:`MAX_GRID_POINTS`
    before anything is materialised. An integer grid's values are checked to be
    in ``1..maximum``; with ``maximum=None`` only to be integers, for a field whose
    range the design states (``compositions``: :func:`grid_points` builds every
    point's design, whose refusal names the real cap).
    """

    def bounded(value: int) -> float:
        """A range end of an integer grid, as the float that ``linspace`` takes."""
        if maximum is not None:
            check_int(name, value, maximum=maximum)
        elif abs(value) > 2**53:  # beyond any cap a design has, and beyond what floats hold exactly
            raise ValueError(f"{name} must be an integer of at most 2**53; got {shown(value)}")
        return float(value)

    def check(v: Any) -> Any:
        if not integer:
            return float(v)
        return check_int(name, v, minimum=1, maximum=maximum) if maximum is not None else check_int(name, v)

    def malformed() -> ValueError:
        return ValueError(f"{name} must be a number, a list 'a,b,c' or a range 'start:stop:count'; got {shown(text)}")

    values: list[Any]
    raw: Any = text  # a number, a text or a sequence; each branch checks what it gets
    if isinstance(raw, (int, float, np.number)) and not isinstance(raw, (bool, np.bool_)):
        values = [raw if integer else float(raw)]
    elif not isinstance(raw, str):
        try:
            # given numbers keep their type for an integer grid, so that check_int refuses 8.0 as the API does
            values = [v if integer else check_finite(name, v) for v in raw]
        except TypeError:
            raise ValueError(f"{name} must be a number, a list of numbers or a 'start:stop:count' text") from None
    elif ":" in raw:
        parts = raw.strip().split(":")
        if len(parts) != 3:
            raise malformed()
        try:
            ends = [parse_int(name, t) if integer else parse_float(name, t) for t in parts[:2]]
            count = parse_int(name, parts[2])
        except ValueError:
            raise malformed() from None
        start, stop = [bounded(int(v)) for v in ends] if integer else ends
        if count < 1:
            raise ValueError(f"{name} range 'start:stop:count' needs a count >= 1; got {shown(text)}")
        if count > MAX_GRID_POINTS:
            raise ValueError(f"{name} grid has more than {MAX_GRID_POINTS} points")
        values = list(np.linspace(start, stop, count))
        if integer:  # a range of integers must land on integers (8:64:3 does, 1:10:4 does not)
            off = [v for v in values if not float(v).is_integer()]
            if off:
                raise ValueError(
                    f"{name} takes integers, but the range {shown(text)} has points that are not "
                    f"({float(off[0]):g}, ...): choose start, stop and count so that every point is an integer "
                    "(e.g. 2:10:5), or list the values (2,3,5)"
                )
            values = [int(v) for v in values]
    else:
        if raw.count(",") >= MAX_GRID_POINTS:
            raise ValueError(f"{name} grid has more than {MAX_GRID_POINTS} points")
        items = [p.strip() for p in raw.strip().split(",")]
        try:
            if any(not p for p in items):
                raise ValueError
            values = [parse_int(name, p) if integer else parse_float(name, p) for p in items]
        except ValueError:
            raise malformed() from None
    if not values:
        raise ValueError(f"{name} grid is empty")
    if len(values) > MAX_GRID_POINTS:
        raise ValueError(f"{name} grid has more than {MAX_GRID_POINTS} points")
    return [check(v) for v in values]


def grid_points(
    *,
    n: Iterable[int] | None,
    eps: Iterable[float] | None,
    delta: Iterable[float] | None = None,
    neighborhoods: Iterable[str | None],
    directed: bool = False,
    metric: Iterable[str] = ("er",),
    privacy: Iterable[str] = ("pdp",),
    objective: str = "distortion",
    max_distortion: Iterable[float] | None = None,
    dim: int | None = None,
    release: str = "modulo",
    release_fields: Mapping[str, Iterable[Any]] | None = None,
    **budget: Any,
) -> list[dict[str, Any]]:
    """The Cartesian product of the grids, as plain dicts (validated eagerly).

    ``eps`` and ``delta`` may be ``None`` (not part of the problem, e.g. eps for a
    zCDP design). ``budget`` holds budget fields by name (:data:`~optnoise.privacy.fields.BUDGET_FIELDS`):
    those of one number (``compositions``, ``rho``, ``discretization``) are grids
    (iterables of values) like ``eps``; ``profile``, ``rdp`` and ``alphas`` are one
    value for every point. ``release_fields`` holds grids of the release's own fields
    (:attr:`~optnoise.design.releases.Release.fields`: ``sensitivity``, ``resolution``, ``support``,
    ``gap``), each an axis of the product. Every point is turned into a :class:`NoiseDesign` once
    here, so a bad value anywhere in the grid fails before any solving starts.
    """
    names = [f.name for f in budget_fields()]
    unknown = sorted(set(budget) - set(names))
    if unknown:
        raise ValueError(f"{unknown[0]} is not a budget field; the budget fields are {', '.join(names)}")
    if objective != "distortion" and not max_distortion:
        raise ValueError(f"max_distortion is required with objective={shown(objective)}")
    second = list(max_distortion or []) if objective != "distortion" else list(delta if delta is not None else [None])
    axes: list[list[Any]] = [
        list(n) if n is not None else [None],
        list(eps) if eps is not None else [None],
        second,
        list(neighborhoods),
        list(metric),
        list(privacy),
    ]
    own = {k: list(v) for k, v in (release_fields or {}).items()}
    taken = get_release(release).fields
    for k in own:
        if k not in taken:
            raise ValueError(
                f"{k} does not apply to release={shown(release)} (its fields: {', '.join(taken) or 'none'})"
            )
    axes += list(own.values())
    fields = budget_fields()
    # the budget fields, in table order: a grid axis for the numbers, one value (an axis of one) for the rest
    axes += [
        list(budget[f.name]) if f.grid and budget.get(f.name) is not None else [budget.get(f.name)] for f in fields
    ]
    if any(not a for a in axes):
        raise ValueError("every grid must have at least one value")
    total = math.prod(len(a) for a in axes)  # checked before the product is materialised
    if total > MAX_GRID_POINTS:
        raise ValueError(f"the grid has {total} points; at most {MAX_GRID_POINTS} are accepted")
    pts = []
    for nn, e, s, nb, met, pv, *rest in itertools.product(*axes):
        mine, values = rest[: len(own)], rest[len(own) :]
        p: dict[str, Any] = {
            "n": None if nn is None else int(nn),
            "eps": None if e is None else float(e),
            "neighborhood": nb,
            "directed": bool(directed),
            "metric": met,
            "privacy": pv,
            "objective": objective,
            "dim": dim,
        }
        p["delta" if objective == "distortion" else "max_distortion"] = None if s is None else float(s)
        if get_release(release).in_spec:
            p["release"] = release
        p.update({k: v for k, v in zip(own, mine, strict=True)})
        # a value is passed on as given (NoiseDesign refuses e.g. compositions=2.5, rather than truncating it)
        p.update({f.name: v for f, v in zip(fields, values, strict=True) if v is not None})
        design_of(p)
        pts.append(p)
    return pts


def mechanism_points(
    *,
    n: Iterable[int],
    eps: Iterable[float],
    delta: Iterable[float] | None = None,
    neighbors: Iterable[Any] = ("adjacent",),
    directed: bool = False,
    loss: Iterable[str] = ("abs",),
    objective: str = "bayes",
    privacy: Iterable[str] = ("dp",),
    max_loss: Iterable[float] | None = None,
) -> list[dict[str, Any]]:
    """The Cartesian product of mechanism-design grids, as plain dicts (validated eagerly, as :func:`grid_points`)."""
    second = list((delta or [0.0]) if objective != "delta" else (max_loss or []))
    if not second:
        raise ValueError("max_loss is required with objective='delta'")
    axes: list[list[Any]] = [list(n), list(eps), second, list(neighbors), list(loss), list(privacy)]
    total = math.prod(len(a) for a in axes)  # checked before the product is materialised
    if total > MAX_GRID_POINTS:
        raise ValueError(f"the grid has {total} points; at most {MAX_GRID_POINTS} are accepted")
    pts = []
    for nn, e, v, nb, ls, pv in itertools.product(*axes):
        p = {
            "kind": "mechanism",
            "n": int(nn),
            "eps": float(e),
            "neighbors": nb,
            "directed": bool(directed),
            "loss": ls,
            "objective": objective,
            "privacy": pv,
        }
        p["delta" if objective != "delta" else "max_loss"] = float(v)
        mechanism_of(p)
        pts.append(p)
    return pts


def mechanism_of(point: dict[str, Any]) -> MechanismDesign:
    """The :class:`MechanismDesign` of a mechanism grid point (or of the CLI's ``mechanism`` flags)."""
    return MechanismDesign(
        n=point["n"],
        eps=point["eps"],
        delta=point.get("delta", 0.0),
        neighbors=point.get("neighbors", "adjacent"),
        outputs=point.get("outputs"),
        loss=point.get("loss", "abs"),
        objective=point.get("objective", "bayes"),
        prior=point.get("prior"),
        privacy=point.get("privacy", "dp"),
        max_loss=point.get("max_loss"),
        directed=point.get("directed", False),
    )


def _mechanism_row(point: dict[str, Any], design: MechanismDesign, res: Any, solver: str) -> dict[str, Any]:
    """The :data:`MECHANISM_ROW_KEYS` row of a solved mechanism point."""
    return {
        "n": design.n,
        "eps": design.eps,
        "delta": res.to_dict()["delta"],
        "neighbors": point.get("label", point.get("neighbors", "adjacent")),
        "directed": design.directed,
        "loss_function": design.loss,
        "objective": design.objective,
        "privacy": design.privacy,
        "max_loss": design.max_loss,
        "status": res.status,
        "loss": res.loss,
        "achieved_dp": res.achieved.get("dp"),
        "achieved_pdp": res.achieved.get("pdp"),
        "mse_mean": res.actual.get("mse_mean"),
        "mse_worst": res.actual.get("mse_worst"),
        "mae_mean": res.actual.get("mae_mean"),
        "er": res.actual.get("er"),
        "solver": solver,
        "solve_time_s": res.solve_time,
        "rounds": res.rounds,
        "gap": res.gap,
        "matrix": json.dumps(None if res.matrix is None else res.matrix.tolist()),
        # a flagged row: why the solver's claim was not accepted (status "unverified" or "error")
        "error": res.message if res.status in ("unverified", "error") else "",
    }


def design_of(point: dict[str, Any]) -> NoiseDesign:
    """The :class:`NoiseDesign` of a grid point (or of the CLI's ``solve`` flags).

    ``metric`` may be a name or a cost array; ``delta`` and ``max_distortion``
    are passed through, so :class:`NoiseDesign` checks that they fit the objective.
    """
    text = point.get("neighborhood")
    rel = get_release(point.get("release") or "modulo")
    if text is None and "neighborhood" in rel.required:  # a real query's sensitivity fixes it instead
        raise ValueError(f"neighborhood is required (e.g. --neighborhood bd:1) with --release {rel.name}")
    nb = None if text is None else Neighborhood.parse(text, directed=point.get("directed", False), dim=point.get("dim"))
    # a budget field is passed only when given, so that NoiseDesign names the one that does not fit the notion
    budget = {f.name: point[f.name] for f in budget_fields() if point.get(f.name) is not None}
    return NoiseDesign(
        n=point["n"],
        eps=point.get("eps"),
        delta=point.get("delta"),
        neighborhood=nb,
        metric=point.get("metric", "er"),
        privacy=point.get("privacy", "pdp"),
        objective=point.get("objective", "distortion"),
        max_distortion=point.get("max_distortion"),
        release=rel.name,
        # every release field given, so that NoiseDesign names one this release does not take
        **{k: point[k] for k in release_field_names() if point.get(k) is not None},
        **budget,
    )


def run_point(
    point: dict[str, Any],
    solver: str = "auto",
    time_limit: float | None = None,
    cache: str | None = None,
    mip_gap: float = MIP_REL_GAP,
    options: dict[str, Any] | None = None,
    concurrent: bool = True,
) -> dict[str, Any]:
    """Solve one grid point and return its CSV row (top-level, so it pickles).

    ``concurrent`` is passed to :meth:`NoiseDesign.solve`: ``False`` in parallel sweeps, whose
    workers already use the cores.

    Mechanism points (``kind == "mechanism"``) give a :data:`MECHANISM_ROW_KEYS` row.
    """
    if point.get("kind") == "mechanism":
        mech = mechanism_of(point)
        mres = mech.solve(
            solver=solver, time_limit=time_limit, cache=cache, mip_gap=mip_gap, options=options, concurrent=concurrent
        )
        return _mechanism_row(point, mech, mres, solver)
    design = design_of(point)
    if not isinstance(design.rel, LatticeRelease):  # a module release (additive, grid, ...) makes its own row
        solved = solve_cached(
            design, cache, solver=solver, time_limit=time_limit, mip_gap=mip_gap, options=options, concurrent=concurrent
        )
        return release_row(point, design, solved, solver)
    res = design.solve(
        solver=solver, time_limit=time_limit, cache=cache, mip_gap=mip_gap, options=options, concurrent=concurrent
    )
    d = res.to_dict()
    return {
        "n": design.n,
        "eps": design.eps,
        "delta": d["delta"],
        "neighborhood": point["neighborhood"],
        "directed": design.neighborhood.directed,
        "shifts": " ".join(map(str, d["shifts"])),
        "metric": design.metric,
        "privacy": design.privacy,
        "objective": design.objective,
        "max_distortion": design.max_distortion,
        **{k: cell(d.get(k)) for k in BUDGET_FIELD_NAMES},
        "status": res.status,
        "distortion": res.distortion,
        **{f"achieved_{k.replace('-', '_')}": res.achieved.get(k) for k in ACHIEVED_KEYS},
        "achieved": json.dumps({k: float(v) for k, v in res.achieved.items()}),
        "mse_mean": res.actual.get("mse_mean"),
        "mse_worst": res.actual.get("mse_worst"),
        "solver": solver,
        "backend": res.backend,
        "solve_time_s": res.solve_time,
        "gap": res.gap,
        "pmf": json.dumps(d["pmf"]),
        # a flagged row: why the solver's claim was not accepted (status "unverified" or "error")
        "error": res.message if res.status in ("unverified", "error") else "",
    }
