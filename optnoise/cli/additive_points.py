"""Sweep rows of the releases that make their own (``additive``, ``grid``, ``continuous``): no ``n``.

A point's design is solved by :meth:`~optnoise.design.noise.NoiseDesign.solve` (which grows the
support ``L`` where the release has one) and its row (:func:`release_row_keys`) carries the release's
fields as given, every budget field, the support, the bound and gap, every achieved value, the released
errors and the distortion of each baseline (``baseline_<name>`` and all of them in ``baselines``).
The columns are derived from the release's :attr:`~optnoise.design.releases.Release.fields` and the
budget fields (:data:`~optnoise.privacy.fields.BUDGET_FIELDS`), so a new field reaches every row.

The cache (the folder of :func:`~optnoise.cli.sweeps.run_sweep`, one entry per design key, as for
the other rows: :func:`optnoise.engine.cache.load_entry`) stores the result's ``to_dict()`` and,
for an LP notion, the row multipliers of the LP at the result's support as the proof of its status.
It is read back with the release's :attr:`~optnoise.design.releases.Release.result_class`; a release
without one, or a notion outside its ``CACHED_NOTIONS`` (``continuous``: ``dp`` and ``profile``, whose bound
:func:`optnoise.design.continuous.read_back` re-proves by solving its lower-bound LP again from the stored
active entries), is solved again every time. On load no stored number is used: the PMF is
re-verified, the bound re-derived by weak duality on the rebuilt model
(:meth:`~optnoise.design.additive_eval.AdditiveResult.from_dict`) and the baselines computed afresh; an
entry that no longer proves its stored status is solved again. An ``"optimal"`` that stored data cannot
re-prove (a MILP's, ``pdp``; a conic one, ``rdp``/``zcdp``; a composed search's) is solved again, as
modulo MILP points are; ``"feasible"`` rows of every notion are read back.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from optnoise.design.additive_eval import notion_of
from optnoise.design.noise import DESIGN_NOTIONS
from optnoise.design.releases import Release, get_release
from optnoise.design.settle import backend_solve, proof_dual
from optnoise.engine.cache import entry_path, load_entry, store_entry
from optnoise.engine.tolerance import MIP_REL_GAP
from optnoise.privacy.fields import BUDGET_FIELD_NAMES
from optnoise.privacy.notions import get_notion

__all__ = [
    "ACHIEVED_KEYS",
    "ADDITIVE_ROW_KEYS",
    "BASELINE_NAMES",
    "additive_row",
    "cell",
    "release_row",
    "release_row_keys",
    "reproved_from_cache",
    "solve_cached",
]

#: The keys of a result's ``achieved`` that get a column ``achieved_<key>`` of their own: the value of
#: every notion, and the composed eps at the design's delta (the composed delta at eps is ``composed``).
ACHIEVED_KEYS = DESIGN_NOTIONS + ("composed_eps",)

#: The baselines with a column ``baseline_<name>`` of their own (every baseline is in ``baselines``).
BASELINE_NAMES = ("discrete_laplace", "discrete_gaussian")

#: The result's columns of a row, after the problem's.
RESULT_KEYS = (
    "support",
    "status",
    "distortion",
    "bound",
    "gap",
    *(f"achieved_{k.replace('-', '_')}" for k in ACHIEVED_KEYS),
    "achieved",
    "mse",
    "mae",
    "er",
    "tail_mass",
    *(f"baseline_{name}" for name in BASELINE_NAMES),
    "baselines",
    "solver",
    "backend",
    "solve_time_s",
    "support_note",
    "pmf",
    "error",
)


def _given(field: str) -> str:
    """The column of a release field as given: its name, or ``<name>_given`` where a result column has it
    (``support``: the support chosen; ``gap``: the proven gap reached)."""
    return f"{field}_given" if field in RESULT_KEYS else field


def release_row_keys(release: Release) -> tuple[str, ...]:
    """Columns of a row of ``release`` (CSV header order): its fields, every budget field, the result's."""
    return (
        "release",
        *(_given(f) for f in release.fields),
        "eps",
        "delta",
        *BUDGET_FIELD_NAMES,
        "objective",
        "max_distortion",
        "neighborhood",
        "directed",
        "shifts",
        "metric",
        "privacy",
        *RESULT_KEYS,
    )


#: Columns of an additive sweep row (CSV header order).
ADDITIVE_ROW_KEYS = release_row_keys(get_release("additive"))


def cell(value: Any) -> Any:
    """A value in a row: numbers as they are, lists (pairs, orders) as JSON."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    return json.dumps(value) if isinstance(value, (list, tuple)) else value


def reproved_from_cache(row: dict[str, Any]) -> bool:
    """Whether a finished row of these releases is read back from the cache (module docstring)."""
    release = get_release(row.get("release"))
    if row.get("status") in ("unverified", "error") or not _reads_back(release, row.get("privacy")):
        return False
    notion = get_notion(row.get("privacy"))
    # an "optimal" proven by a MILP, a conic program or a composed search: no stored proof re-proves it
    return row.get("status") != "optimal" or not (notion.indicators or notion.renyi or notion.composed)


def _reads_back(release: Release, privacy: Any) -> bool:
    """Whether the release reads its results back (a ``result_class``) for this notion (its ``cached_notions``)."""
    notions = release.cached_notions
    return release.result_class is not None and (notions is None or privacy in notions)


def _proof(res: Any, options: dict[str, Any] | None) -> dict[str, Any] | None:
    """Row multipliers proving ``res``'s bound on the LP at its support (``None`` for a MILP or no solution).

    The LP at ``L`` is solved again with HiGHS; its row duals, or the multipliers of the optimal basis
    in scaled variables (:func:`~optnoise.design.settle.proof_dual`), whichever proves more.
    """
    if res.release == "continuous":  # its bound's LP, recorded by the solve (continuous.lower_proof)
        return getattr(res, "proof", None)
    notion = notion_of(res.design)
    if res.pmf is None or res.status != "optimal" or notion.renyi or notion.composed:
        return None  # the LP at L is not the problem of a conic or composed design: it proves nothing there
    at_L = res.design if res.design.support == res.L else res.design.replace(support=res.L)
    model = at_L.build_model()
    if model.is_mip:
        return None
    out = backend_solve(model, "highs", None, MIP_REL_GAP, False, options, concurrent=False)
    # HiGHS' own multipliers, or those of the basis found in scaled variables: whichever bounds higher
    # (either is a valid proof; which one is tight depends on how far the staircase's masses spread)
    found = [] if out.dual is None else [(model.dual_bound(out.dual), out.dual)]
    scaled = proof_dual(model, out.x)
    found += [] if scaled is None else [scaled]
    found = [(b, y) for b, y in found if b is not None]
    if not found:
        return None
    y = max(found, key=lambda by: by[0])[1]
    return {"kind": "lp-dual", "dual": np.asarray(y, dtype=float).tolist()}


def solve_cached(design: Any, cache: str | None, **solve: Any) -> Any:
    """``design.solve(**solve)``, or its cache entry re-proved (module docstring); a fresh result is stored."""
    result_class = design.rel.result_class
    if not _reads_back(design.rel, design.privacy):  # results this release cannot read back: solved every time
        return design.solve(**solve)
    opts = {k: solve.get(k) for k in ("solver", "time_limit", "mip_gap", "options")}
    path = entry_path(cache, design.key(**opts))

    def rebuild(entry: dict[str, Any]) -> Any:
        res = result_class.from_dict(
            entry["result"], design=design, recheck=False, proof=entry.get("proof"), backend="cache"
        )
        # the optimum at L is re-proved above; how L was chosen is what the solve that stored it found
        res.support_note = f"{res.support_note} (cached: the optimum at this L re-proved on reading)".lstrip()
        return res

    hit = load_entry(path, design.spec(), rebuild)
    if hit is not None:
        return hit
    res = design.solve(**solve)
    if path is not None:
        store_entry(path, design.spec(), res, _proof(res, solve.get("options")))
    return res


def _baselines(res: Any) -> dict[str, float]:
    """The result's calibrated baselines; none where the release has none for this design."""
    if res.pmf is None:
        return {}
    try:
        return dict(res.baselines)
    except ValueError:  # e.g. a continuous design's profile: no baseline is calibrated to it
        return {}


def release_row(point: dict[str, Any], design: Any, res: Any, solver: str) -> dict[str, Any]:
    """The :func:`release_row_keys` row of a solved point of a release that makes its own rows."""
    got = dict(res.achieved)
    base = _baselines(res)
    actual = getattr(res, "actual", None) or {}
    shifts = getattr(design, "shifts", None)
    L = getattr(res, "L", None)
    return {
        "release": design.rel.name,
        **{_given(f): cell(point.get(f)) for f in design.rel.fields},
        "eps": design.eps,
        "delta": design.delta,
        **{k: cell(getattr(design, k, None)) for k in BUDGET_FIELD_NAMES},
        "objective": design.objective,
        "max_distortion": design.max_distortion,
        "neighborhood": point.get("neighborhood"),
        "directed": None if design.neighborhood is None else design.neighborhood.directed,
        "shifts": None if shifts is None else " ".join(map(str, np.asarray(shifts).tolist())),
        "metric": design.metric,
        "privacy": design.privacy,
        "support": L if L is not None else int(res.support[-1]),
        "status": res.status,
        "distortion": res.distortion,
        "bound": res.bound,
        "gap": res.gap,
        **{f"achieved_{k.replace('-', '_')}": cell(got.get(k)) for k in ACHIEVED_KEYS},
        "achieved": json.dumps(got),
        "mse": actual.get("mse"),
        "mae": actual.get("mae"),
        "er": actual.get("er"),
        "tail_mass": None if res.tail is None else res.tail.mass,
        **{f"baseline_{name}": base.get(name) for name in BASELINE_NAMES},
        "baselines": json.dumps(base),
        "solver": solver,
        "backend": getattr(res, "backend", None) or solver,
        "solve_time_s": res.solve_time,
        "support_note": getattr(res, "support_note", ""),
        "pmf": json.dumps(res.to_dict()["pmf"]),
        "error": res.message if res.status in ("unverified", "error") else "",
    }


#: The row of an additive point (the name before other releases made rows too).
additive_row = release_row
