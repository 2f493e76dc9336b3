"""Sweep rows of ``--release additive`` points: ``q + eta`` on the integers, no ``n``, cached and resumable.

A point's design is solved by :meth:`~optnoise.design.noise.NoiseDesign.solve` (which grows the
support ``L``) and its row (:data:`ADDITIVE_ROW_KEYS`) carries the support, the bound and gap, every
achieved value, the released errors and the distortion of each baseline (``baseline_<name>``,
:attr:`~optnoise.design.additive_eval.AdditiveResult.baselines`).

The cache (the folder of :func:`~optnoise.cli.sweeps.run_sweep`, one entry per design key, as for
the other rows: :func:`optnoise.engine.cache.load_entry`) stores the result's ``to_dict()`` and,
for an LP, the row multipliers of the LP at the result's support as the proof of its status. On
load no stored number is used: the PMF is re-verified, the bound re-derived by weak duality on the
rebuilt model (:meth:`~optnoise.design.additive_eval.AdditiveResult.from_dict`) and the baselines
computed afresh; an entry that no longer proves its stored status is solved again. A MILP's
(``pdp``) ``"optimal"`` cannot be re-proved from stored data, so such points are solved again, as
modulo MILP points are.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from optnoise.design.additive_eval import AdditiveResult
from optnoise.design.settle import backend_solve, proof_dual
from optnoise.engine.cache import entry_path, load_entry, store_entry
from optnoise.engine.tolerance import MIP_REL_GAP

__all__ = ["ADDITIVE_ROW_KEYS", "BASELINE_NAMES", "additive_row", "solve_cached"]

#: The baselines of every additive row, each a column ``baseline_<name>`` (its calibrated distortion).
BASELINE_NAMES = ("discrete_laplace", "discrete_gaussian")

#: Columns of an additive sweep row (CSV header order).
ADDITIVE_ROW_KEYS = (
    "release",
    "eps",
    "delta",
    "profile",
    "neighborhood",
    "directed",
    "shifts",
    "metric",
    "privacy",
    "support",
    "status",
    "distortion",
    "bound",
    "gap",
    "achieved_dp",
    "achieved_pdp",
    "achieved_profile",
    "achieved",
    "mse",
    "mae",
    "er",
    "tail_mass",
    *(f"baseline_{name}" for name in BASELINE_NAMES),
    "solver",
    "backend",
    "solve_time_s",
    "support_note",
    "pmf",
    "error",
)


def _proof(res: AdditiveResult, options: dict[str, Any] | None) -> dict[str, Any] | None:
    """Row multipliers proving ``res``'s bound on the LP at its support (``None`` for a MILP or no solution).

    The LP at ``L`` is solved again with HiGHS; its row duals, or the multipliers of the optimal basis
    in scaled variables (:func:`~optnoise.design.settle.proof_dual`), whichever proves more.
    """
    if res.pmf is None or res.status != "optimal":
        return None
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


def solve_cached(design: Any, cache: str | None, **solve: Any) -> AdditiveResult:
    """``design.solve(**solve)``, or its cache entry re-proved (module docstring); a fresh result is stored."""
    opts = {k: solve.get(k) for k in ("solver", "time_limit", "mip_gap", "options")}
    path = entry_path(cache, design.key(**opts))

    def rebuild(entry: dict[str, Any]) -> AdditiveResult:
        res = AdditiveResult.from_dict(
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


def additive_row(point: dict[str, Any], design: Any, res: AdditiveResult, solver: str) -> dict[str, Any]:
    """The :data:`ADDITIVE_ROW_KEYS` row of a solved additive point."""
    d = res.to_dict()
    got = {k: v for k, v in res.achieved.items()}
    base = res.baselines if res.pmf is not None else {}
    return {
        "release": "additive",
        "eps": design.eps,
        "delta": design.delta,
        "profile": json.dumps([list(p) for p in design.profile]) if design.profile is not None else None,
        "neighborhood": point["neighborhood"],
        "directed": design.neighborhood.directed,
        "shifts": " ".join(map(str, design.shifts.tolist())),
        "metric": design.metric,
        "privacy": design.privacy,
        "support": res.L,
        "status": res.status,
        "distortion": res.distortion,
        "bound": res.bound,
        "gap": res.gap,
        "achieved_dp": got.get("dp"),
        "achieved_pdp": got.get("pdp"),
        "achieved_profile": None if got.get("profile") is None else json.dumps(got["profile"]),
        "achieved": json.dumps(got),
        "mse": res.actual.get("mse"),
        "mae": res.actual.get("mae"),
        "er": res.actual.get("er"),
        "tail_mass": None if res.tail is None else res.tail.mass,
        **{f"baseline_{name}": base.get(name) for name in BASELINE_NAMES},
        "solver": solver,
        "backend": res.backend,
        "solve_time_s": res.solve_time,
        "support_note": res.support_note,
        "pmf": json.dumps(d["pmf"]),
        "error": res.message if res.status in ("unverified", "error") else "",
    }
