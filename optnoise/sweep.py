"""Parameter sweeps: grids of designs solved in parallel, cached on disk, resumable.

Each grid point is one :class:`~optnoise.design.NoiseDesign` (:func:`grid_points`)
or one :class:`~optnoise.mechanism_design.MechanismDesign`
(:func:`mechanism_points`). Results are cached per point (keyed by the
design's ``key()``), so an interrupted sweep
picks up where it stopped and a repeated one is instant. Points run in local
processes (``backend="process"``) or on a Dask cluster (``backend="dask"``).

>>> pts = grid_points(n=[8], eps=parse_grid("eps", "0.5:1.5:3"), delta=[0.0],
...                   neighborhoods=["bd:3"], directed=True)
>>> len(pts)
3
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import numpy as np

from ._validation import check_choice, check_int, check_positive
from .design import NoiseDesign
from .mechanism_design import MechanismDesign
from .neighborhood import Neighborhood
from .solvers import MIP_REL_GAP, check_highs_options

__all__ = [
    "parse_grid",
    "grid_points",
    "mechanism_points",
    "mechanism_of",
    "run_point",
    "run_sweep",
    "BACKENDS",
    "ROW_KEYS",
    "MECHANISM_ROW_KEYS",
]

BACKENDS = ("process", "dask")

#: Columns of a sweep row (CSV header order).
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
    "status",
    "distortion",
    "achieved_pdp",
    "achieved_pdp_kadam",
    "achieved_dp",
    "mse_mean",
    "mse_worst",
    "solver",
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


def parse_grid(name: str, text: str | float | Sequence[float], *, integer: bool = False) -> list[Any]:
    """Parse ``start:stop:count`` (inclusive linspace), ``a,b,c`` or one value (ints with ``integer=True``)."""
    if isinstance(text, (int, float, np.number)):
        values = [float(text)]
    elif not isinstance(text, str):
        values = [float(v) for v in text]
    else:
        s = text.strip()
        try:
            if ":" in s:
                parts = s.split(":")
                if len(parts) != 3:
                    raise ValueError
                start, stop, count = float(parts[0]), float(parts[1]), int(parts[2])
                if count < 1:
                    raise ValueError
                values = list(np.linspace(start, stop, count))
            else:
                values = [float(p) for p in s.split(",") if p.strip()]
        except ValueError:
            raise ValueError(
                f"{name} must be a number, a list 'a,b,c' or a range 'start:stop:count'; got {text!r}"
            ) from None
    if not values:
        raise ValueError(f"{name} grid is empty")
    if integer:
        return [check_int(name, v, minimum=1) for v in values]
    return [float(v) for v in values]


def grid_points(
    *,
    n: Iterable[int],
    eps: Iterable[float],
    delta: Iterable[float] | None = None,
    neighborhoods: Iterable[str],
    directed: bool = False,
    metric: Iterable[str] = ("er",),
    privacy: Iterable[str] = ("pdp",),
    objective: str = "distortion",
    max_distortion: Iterable[float] | None = None,
    dim: int | None = None,
    release: str = "modulo",
) -> list[dict[str, Any]]:
    """The Cartesian product of the grids, as plain dicts (validated eagerly).

    Every point is turned into a :class:`NoiseDesign` once here, so a bad value
    anywhere in the grid fails before any solving starts.
    """
    pts = []
    second = list((delta or []) if objective == "distortion" else (max_distortion or []))
    if not second:
        raise ValueError(
            "max_distortion is required with objective='delta'" if objective == "delta" else "delta grid is empty"
        )
    for nn, e, s, nb, met, pv in itertools.product(n, eps, second, neighborhoods, metric, privacy):
        p = {
            "n": int(nn),
            "eps": float(e),
            "neighborhood": nb,
            "directed": bool(directed),
            "metric": met,
            "privacy": pv,
            "objective": objective,
            "dim": dim,
        }
        p["delta" if objective == "distortion" else "max_distortion"] = float(s)
        if release != "modulo":
            p["release"] = release
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
    pts = []
    for nn, e, v, nb, ls, pv in itertools.product(n, eps, second, neighbors, loss, privacy):
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
    import json

    return {
        "n": design.n,
        "eps": design.eps,
        "delta": res.to_dict()["delta"],
        "neighbors": point.get("neighbors", "adjacent"),
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
        "error": "",
    }


def design_of(point: dict[str, Any]) -> NoiseDesign:
    """The :class:`NoiseDesign` of a grid point (or of the CLI's ``solve`` flags).

    ``metric`` may be a name or a cost array; ``delta`` and ``max_distortion``
    are passed through, so :class:`NoiseDesign` checks that they fit the objective.
    """
    nb = Neighborhood.parse(point["neighborhood"], directed=point.get("directed", False), dim=point.get("dim"))
    return NoiseDesign(
        n=point["n"],
        eps=point["eps"],
        delta=point.get("delta"),
        neighborhood=nb,
        metric=point.get("metric", "er"),
        privacy=point.get("privacy", "pdp"),
        objective=point.get("objective", "distortion"),
        max_distortion=point.get("max_distortion"),
        release=point.get("release", "modulo"),
    )


def run_point(
    point: dict[str, Any],
    solver: str = "highs",
    time_limit: float | None = None,
    cache: str | None = None,
    mip_gap: float = MIP_REL_GAP,
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Solve one grid point and return its CSV row (top-level, so it pickles).

    Mechanism points (``kind == "mechanism"``) give a :data:`MECHANISM_ROW_KEYS` row.
    """
    import json

    if point.get("kind") == "mechanism":
        mech = mechanism_of(point)
        mres = mech.solve(solver=solver, time_limit=time_limit, cache=cache, mip_gap=mip_gap, options=options)
        return _mechanism_row(point, mech, mres, solver)
    design = design_of(point)
    res = design.solve(solver=solver, time_limit=time_limit, cache=cache, mip_gap=mip_gap, options=options)
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
        "status": res.status,
        "distortion": res.distortion,
        "achieved_pdp": res.achieved.get("pdp"),
        "achieved_pdp_kadam": res.achieved.get("pdp-kadam"),
        "achieved_dp": res.achieved.get("dp"),
        "mse_mean": res.actual.get("mse_mean"),
        "mse_worst": res.actual.get("mse_worst"),
        "solver": solver,
        "solve_time_s": res.solve_time,
        "gap": res.gap,
        "pmf": json.dumps(d["pmf"]),
        "error": "",
    }


def run_sweep(
    points: Sequence[dict[str, Any]],
    *,
    solver: str = "highs",
    time_limit: float | None = None,
    mip_gap: float = MIP_REL_GAP,
    options: dict[str, Any] | None = None,
    jobs: int = 1,
    backend: str = "process",
    scheduler: str | None = None,
    cache: str | os.PathLike | None = ".optnoise-cache",
    progress: bool = True,
) -> list[dict[str, Any]]:
    """Solve every point; rows come back in the order of ``points``.

    Parameters
    ----------
    jobs : int
        Worker processes (``backend="process"``), or workers of the local
        Dask cluster started when ``backend="dask"`` has no ``scheduler``.
        Workers are spawned, not forked (HiGHS' thread pool does not survive
        ``fork``), so a script that calls this with ``jobs > 1`` needs the
        usual ``if __name__ == "__main__":`` guard.
    mip_gap : float
        Relative MILP gap counted as optimal (as in :meth:`NoiseDesign.solve`).
    options : dict, optional
        Raw HiGHS options (as in :meth:`NoiseDesign.solve`).
    backend : {"process", "dask"}
    scheduler : str, optional
        Address of a running Dask scheduler (``tcp://host:8786``).
    cache : path or None
        Per-point result cache; ``None`` disables caching (and resuming).
    """
    from tqdm import tqdm

    backend = check_choice("backend", backend, BACKENDS)
    jobs = check_int("jobs", jobs, minimum=1)
    # Checked before any work starts, so a typo fails in one line rather than once per point.
    mip_gap = check_positive("mip_gap", mip_gap, allow_zero=True)
    check_highs_options(options, solver)
    if time_limit is not None:
        time_limit = check_positive("time_limit", time_limit)
    if scheduler is not None and backend != "dask":
        raise ValueError("scheduler is only used with backend 'dask'")
    cache_s = None if cache is None else str(Path(cache))
    rows: list[dict[str, Any] | None] = [None] * len(points)
    bar = tqdm(total=len(points), desc="sweep", unit="pt", disable=not progress)
    if backend == "process" and jobs == 1:
        for i, p in enumerate(points):
            rows[i] = run_point(p, solver, time_limit, cache_s, mip_gap, options)
            bar.update()
    elif backend == "process":
        # HiGHS' global thread scheduler does not survive fork(): forked children of a process that
        # had solved MILPs were seen spinning for good in highs::parallel::sync. Spawned workers start clean.
        with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            futs = {
                pool.submit(run_point, p, solver, time_limit, cache_s, mip_gap, options): i
                for i, p in enumerate(points)
            }
            for fut in as_completed(futs):
                rows[futs[fut]] = fut.result()
                bar.update()
    else:
        try:
            from dask.distributed import Client, LocalCluster
            from dask.distributed import as_completed as dask_completed
        except ImportError:
            raise ValueError("backend 'dask' needs dask[distributed]: pip install 'optnoise[dask]'") from None
        cluster = None
        if scheduler is None:
            cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None)
            scheduler = cluster.scheduler_address
        try:
            with Client(scheduler) as client:
                futs = client.map(
                    run_point,
                    list(points),
                    solver=solver,
                    time_limit=time_limit,
                    cache=cache_s,
                    mip_gap=mip_gap,
                    options=options,
                    pure=False,
                )
                index = {f.key: i for i, f in enumerate(futs)}
                for fut in dask_completed(futs):
                    rows[index[fut.key]] = fut.result()
                    bar.update()
        finally:
            if cluster is not None:
                cluster.close()
    bar.close()
    return [r for r in rows if r is not None]
