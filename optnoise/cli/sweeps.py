"""Parameter sweeps: grids of designs solved in parallel, cached on disk, resumable.

Each grid point is one :class:`~optnoise.design.noise.NoiseDesign` (:func:`grid_points`)
or one :class:`~optnoise.design.mechanism.MechanismDesign`
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
import math
import multiprocessing
import os
import signal
import threading
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from optnoise.design.mechanism import MechanismDesign
from optnoise.design.noise import NoiseDesign
from optnoise.engine.children import die_with_parent
from optnoise.engine.highs import one_highs_thread
from optnoise.engine.io import ensure_folder
from optnoise.engine.solve import check_solve_args
from optnoise.engine.tolerance import MIP_REL_GAP
from optnoise.engine.validation import (
    MAX_GRID_POINTS,
    MAX_SIZE,
    check_choice,
    check_finite,
    check_int,
    check_jobs,
    check_positive,
    parse_float,
    parse_int,
    shown,
)
from optnoise.privacy.neighborhood import Neighborhood

__all__ = [
    "BUDGET_FIELDS",
    "parse_grid",
    "grid_points",
    "mechanism_points",
    "mechanism_of",
    "run_point",
    "run_sweep",
    "BACKENDS",
    "ROW_KEYS",
    "MECHANISM_ROW_KEYS",
    "SweepInterrupted",
]

BACKENDS = ("process", "dask")

#: Seconds to wait for a Dask scheduler before giving up (``run_sweep(connect_timeout=)``).
CONNECT_TIMEOUT = 10.0


#: The budget fields a grid point may carry besides (eps, delta) (see :class:`~optnoise.design.noise.NoiseDesign`).
BUDGET_FIELDS = ("compositions", "rho", "rdp", "profile")


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`run_sweep`: the workers were stopped; ``rows`` holds the finished rows.

    A ``KeyboardInterrupt``, so code that does not know it stops as usual. Every
    finished point is also in the cache (when one is used), so running the
    sweep again resumes it.
    """

    def __init__(self, rows: list[dict[str, Any]], total: int) -> None:
        super().__init__(f"sweep interrupted after {len(rows)} of {total} points")
        self.rows = rows
        self.total = total


def _init_worker(parent: int | None = None) -> None:
    """Worker initializer: the worker ends with the sweep's process whatever stops it; Ctrl-C goes to the parent,
    which stops the workers itself; HiGHS keeps to one core."""
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    one_highs_thread()  # one solve per core: HiGHS' own MIP workers would oversubscribe them


@contextmanager
def _sigint_as_flag() -> Iterator[threading.Event]:
    """While the pool runs, Ctrl-C only sets a flag that the wait loop polls.

    A ``KeyboardInterrupt`` raised at an arbitrary point of the parent can land
    while it holds a future's lock inside ``concurrent.futures``; the pool's
    manager thread then blocks on that lock for good, and so does the
    interpreter's exit, which joins it (seen once under load: Ctrl-C did not
    stop a sweep within 30 s). Polling the flag stops the workers from a known
    point instead. Outside the main thread, or when SIGINT is ignored, nothing
    changes.
    """
    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) in (
        signal.SIG_IGN,
        None,
    ):
        yield stop
        return
    previous = signal.signal(signal.SIGINT, lambda signum, frame: stop.set())
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, previous)


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Stop a process pool now: cancel pending points and kill running workers (no waiting for solves)."""
    procs = list(getattr(pool, "_processes", {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        if proc.is_alive():
            proc.kill()
    for proc in procs:
        proc.join(timeout=2)


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


def parse_grid(name: str, text: str | float | Sequence[float], *, integer: bool = False) -> list[Any]:
    """Parse ``start:stop:count`` (inclusive linspace), ``a,b,c`` or one value (ints with ``integer=True``).

    Numbers are parsed strictly (ASCII digits, no empty items), and a range's
    ``count`` and a list's length are checked against :data:`MAX_GRID_POINTS`
    before anything is materialised.
    """

    def num(t: str) -> float:
        return float(check_int(name, parse_int(name, t), maximum=MAX_SIZE)) if integer else parse_float(name, t)

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
    else:
        s = raw.strip()
        try:
            if ":" in s:
                parts = s.split(":")
                if len(parts) != 3:
                    raise ValueError
                start, stop = num(parts[0]), num(parts[1])
                count = parse_int(name, parts[2])
                if count < 1:
                    raise ValueError
                if count > MAX_GRID_POINTS:
                    raise OverflowError
                values = list(np.linspace(start, stop, count))
                if integer:  # a range of integers must land on integers (8:64:3 does, 1:10:4 does not)
                    if not all(float(v).is_integer() for v in values):
                        raise ValueError
                    values = [int(v) for v in values]
            else:
                if s.count(",") >= MAX_GRID_POINTS:
                    raise OverflowError
                items = [p.strip() for p in s.split(",")]
                if any(not p for p in items):
                    raise ValueError
                values = [parse_int(name, p) if integer else parse_float(name, p) for p in items]
        except OverflowError:
            raise ValueError(f"{name} grid has more than {MAX_GRID_POINTS} points") from None
        except ValueError:
            raise ValueError(
                f"{name} must be a number, a list 'a,b,c' or a range 'start:stop:count'; got {shown(text)}"
            ) from None
    if not values:
        raise ValueError(f"{name} grid is empty")
    if len(values) > MAX_GRID_POINTS:
        raise ValueError(f"{name} grid has more than {MAX_GRID_POINTS} points")
    if integer:
        return [check_int(name, v, minimum=1, maximum=MAX_SIZE) for v in values]
    return [float(v) for v in values]


def grid_points(
    *,
    n: Iterable[int],
    eps: Iterable[float] | None,
    delta: Iterable[float] | None = None,
    neighborhoods: Iterable[str],
    directed: bool = False,
    metric: Iterable[str] = ("er",),
    privacy: Iterable[str] = ("pdp",),
    objective: str = "distortion",
    max_distortion: Iterable[float] | None = None,
    dim: int | None = None,
    release: str = "modulo",
    compositions: Iterable[int] | None = None,
    rho: Iterable[float] | None = None,
    rdp: Any = None,
    profile: Any = None,
) -> list[dict[str, Any]]:
    """The Cartesian product of the grids, as plain dicts (validated eagerly).

    ``eps``, ``delta``, ``compositions`` and ``rho`` may be ``None`` (not part of the
    problem, e.g. eps for a zCDP design); ``rdp`` and ``profile`` are one budget for
    every point. Every point is turned into a :class:`NoiseDesign` once here, so a bad
    value anywhere in the grid fails before any solving starts.
    """
    pts = []
    if objective != "distortion" and not max_distortion:
        raise ValueError(f"max_distortion is required with objective={shown(objective)}")
    second = list(max_distortion or []) if objective != "distortion" else list(delta if delta is not None else [None])
    axes: list[list[Any]] = [
        list(n),
        list(eps) if eps is not None else [None],
        second,
        list(neighborhoods),
        list(metric),
        list(privacy),
        list(compositions) if compositions is not None else [None],
        list(rho) if rho is not None else [None],
    ]
    if any(not a for a in axes):
        raise ValueError("every grid must have at least one value")
    total = math.prod(len(a) for a in axes)  # checked before the product is materialised
    if total > MAX_GRID_POINTS:
        raise ValueError(f"the grid has {total} points; at most {MAX_GRID_POINTS} are accepted")
    for nn, e, s, nb, met, pv, k, r in itertools.product(*axes):
        p: dict[str, Any] = {
            "n": int(nn),
            "eps": None if e is None else float(e),
            "neighborhood": nb,
            "directed": bool(directed),
            "metric": met,
            "privacy": pv,
            "objective": objective,
            "dim": dim,
        }
        p["delta" if objective == "distortion" else "max_distortion"] = None if s is None else float(s)
        if release != "modulo":
            p["release"] = release
        for key, value in (("compositions", k), ("rho", r), ("rdp", rdp), ("profile", profile)):
            if value is not None:
                p[key] = int(value) if key == "compositions" else (float(value) if key == "rho" else value)
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
    import json

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
    nb = Neighborhood.parse(point["neighborhood"], directed=point.get("directed", False), dim=point.get("dim"))
    # a budget field is passed only when given, so that NoiseDesign names the one that does not fit the notion
    budget = {k: point[k] for k in BUDGET_FIELDS if point.get(k) is not None}
    return NoiseDesign(
        n=point["n"],
        eps=point.get("eps"),
        delta=point.get("delta"),
        neighborhood=nb,
        metric=point.get("metric", "er"),
        privacy=point.get("privacy", "pdp"),
        objective=point.get("objective", "distortion"),
        max_distortion=point.get("max_distortion"),
        release=point.get("release", "modulo"),
        support=point.get("support"),
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
    import json

    if point.get("kind") == "mechanism":
        mech = mechanism_of(point)
        mres = mech.solve(
            solver=solver, time_limit=time_limit, cache=cache, mip_gap=mip_gap, options=options, concurrent=concurrent
        )
        return _mechanism_row(point, mech, mres, solver)
    design = design_of(point)
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
        "status": res.status,
        "distortion": res.distortion,
        "achieved_pdp": res.achieved.get("pdp"),
        "achieved_pdp_kadam": res.achieved.get("pdp-kadam"),
        "achieved_dp": res.achieved.get("dp"),
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


def run_sweep(
    points: Sequence[dict[str, Any]],
    *,
    solver: str = "auto",
    time_limit: float | None = None,
    mip_gap: float = MIP_REL_GAP,
    options: dict[str, Any] | None = None,
    jobs: int = 1,
    backend: str = "process",
    scheduler: str | None = None,
    cache: str | os.PathLike | None = ".optnoise-cache",
    progress: bool = True,
    connect_timeout: float = CONNECT_TIMEOUT,
) -> list[dict[str, Any]]:
    """Solve every point; rows come back in the order of ``points``.

    Parameters
    ----------
    solver : str
        As in :meth:`NoiseDesign.solve`. With ``jobs > 1`` (or Dask) the ``"auto"`` portfolio runs
        HiGHS alone in each worker, so that no worker starts a second solver process: the cores
        are already busy with one point each.
    jobs : int
        Worker processes (``backend="process"``), or workers of the local
        Dask cluster started when ``backend="dask"`` has no ``scheduler``:
        1 to :func:`~optnoise.engine.validation.max_jobs` (4 per core), and
        never more are started than there are points.
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
    connect_timeout : float
        Seconds to wait for the Dask ``scheduler`` (default 10); an unreachable
        one is a ``ValueError``, not a hang.

    Raises
    ------
    SweepInterrupted
        On Ctrl-C (a ``KeyboardInterrupt``): workers are stopped within about a
        second, and the exception's ``rows`` holds every finished row (each also
        cached). A row whose solve failed re-verification has status
        ``"unverified"`` and the reason in its ``error`` column.
    """
    from tqdm import tqdm

    backend = check_choice("backend", backend, BACKENDS)
    jobs = check_jobs(jobs)
    # Checked before any work starts, so a typo fails in one line rather than once per point.
    options, time_limit, mip_gap, _ = check_solve_args(
        solver, formulation="hull", options=options, time_limit=time_limit, mip_gap=mip_gap
    )
    connect_timeout = check_positive("connect_timeout", connect_timeout)
    if scheduler is not None and backend != "dask":
        raise ValueError("scheduler is only used with backend 'dask'")
    if scheduler is not None and (not isinstance(scheduler, str) or not scheduler.strip()):
        raise ValueError(f"scheduler must be an address such as 'tcp://host:8786'; got {shown(scheduler)}")
    if cache is not None:
        ensure_folder("cache", cache)  # a cache path that is a file, or cannot be created, fails before any solve
    cache_s = None if cache is None else str(Path(cache))
    rows: list[dict[str, Any] | None] = [None] * len(points)
    bar = tqdm(total=len(points), desc="sweep", unit="pt", disable=not progress)

    def finished() -> list[dict[str, Any]]:
        return [r for r in rows if r is not None]

    # never more workers than points: a worker without a point is only start-up cost
    jobs = max(1, min(jobs, len(points)))
    try:
        if backend == "process" and jobs == 1:
            for i, p in enumerate(points):
                rows[i] = run_point(p, solver, time_limit, cache_s, mip_gap, options, True)
                bar.update()
        elif backend == "process":
            # HiGHS' global thread scheduler does not survive fork(): forked children of a process that
            # had solved MILPs were seen spinning for good in highs::parallel::sync. Spawned workers start
            # clean. Workers ignore Ctrl-C; the parent stops them at once (see below).
            pool = ProcessPoolExecutor(
                max_workers=jobs,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_init_worker,
                initargs=(os.getpid(),),
            )
            try:
                with _sigint_as_flag() as interrupted:
                    futs = {
                        pool.submit(run_point, p, solver, time_limit, cache_s, mip_gap, options, False): i
                        for i, p in enumerate(points)
                    }
                    pending = set(futs)
                    while pending and not interrupted.is_set():
                        done, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
                        for fut in done:
                            rows[futs[fut]] = fut.result()
                            bar.update()
                    if interrupted.is_set():
                        raise KeyboardInterrupt
            except BaseException:
                _stop_pool(pool)  # never wait for running solves on Ctrl-C or an error
                raise
            pool.shutdown(wait=True)
        else:
            _run_dask(
                points, rows, bar, jobs, scheduler, connect_timeout, solver, time_limit, cache_s, mip_gap, options
            )
    except KeyboardInterrupt:
        bar.close()
        raise SweepInterrupted(finished(), len(points)) from None
    bar.close()
    return finished()


def _run_dask(
    points: Sequence[dict[str, Any]],
    rows: list[dict[str, Any] | None],
    bar: Any,
    jobs: int,
    scheduler: str | None,
    connect_timeout: float,
    solver: str,
    time_limit: float | None,
    cache_s: str | None,
    mip_gap: float,
    options: dict[str, Any] | None,
) -> None:
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
        try:
            client = Client(scheduler, timeout=connect_timeout)
        except (OSError, TimeoutError) as exc:
            raise ValueError(
                f"scheduler: could not connect to {shown(scheduler)} within {connect_timeout:g} s "
                f"({exc.__class__.__name__}); check the address or raise --connect-timeout"
            ) from None
        with client:
            if cluster is not None:
                client.run(one_highs_thread)  # one solve per worker process, one core each
            futs = client.map(
                run_point,
                list(points),
                solver=solver,
                time_limit=time_limit,
                cache=cache_s,
                mip_gap=mip_gap,
                options=options,
                concurrent=False,
                pure=False,
            )
            index = {f.key: i for i, f in enumerate(futs)}
            try:
                for fut in dask_completed(futs):
                    rows[index[fut.key]] = fut.result()
                    bar.update()
            except KeyboardInterrupt:
                client.cancel(futs)
                raise
    finally:
        if cluster is not None:
            cluster.close()
