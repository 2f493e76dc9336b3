"""Parameter sweeps: grids of designs solved in parallel, cached on disk, resumable.

Each grid point is one :class:`~optnoise.design.noise.NoiseDesign` (:func:`grid_points`)
or one :class:`~optnoise.design.mechanism.MechanismDesign`
(:func:`mechanism_points`), built and solved by :mod:`optnoise.cli.points` (whose names
are re-exported here). Results are cached per point (keyed by the
design's ``key()``), so an interrupted sweep
picks up where it stopped and a repeated one is instant. Points run in local
processes (``backend="process"``) or on a Dask cluster (``backend="dask"``).

>>> pts = grid_points(n=[8], eps=parse_grid("eps", "0.5:1.5:3"), delta=[0.0],
...                   neighborhoods=["bd:3"], directed=True)
>>> len(pts)
3
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from optnoise.cli.points import ACHIEVED_KEYS as ACHIEVED_KEYS  # re-exported: imported from here before the split
from optnoise.cli.points import MECHANISM_ROW_KEYS as MECHANISM_ROW_KEYS
from optnoise.cli.points import ROW_KEYS as ROW_KEYS
from optnoise.cli.points import design_of as design_of
from optnoise.cli.points import grid_points as grid_points
from optnoise.cli.points import is_cached as is_cached
from optnoise.cli.points import mechanism_of as mechanism_of
from optnoise.cli.points import mechanism_points as mechanism_points
from optnoise.cli.points import parse_grid as parse_grid
from optnoise.cli.points import run_point
from optnoise.engine.children import die_with_parent
from optnoise.engine.highs import one_highs_thread
from optnoise.engine.io import ensure_folder
from optnoise.engine.solve import check_solve_args
from optnoise.engine.tolerance import MIP_REL_GAP
from optnoise.engine.validation import check_choice, check_jobs, check_positive, shown
from optnoise.privacy.fields import BUDGET_FIELDS as BUDGET_FIELDS

# The point names of optnoise.cli.points (grid_points, parse_grid, run_point, ROW_KEYS, ...) are importable
# from here too, as before the split; they are documented (and listed in __all__) where they are defined.
__all__ = [
    "run_sweep",
    "BACKENDS",
    "CONNECT_TIMEOUT",
    "SweepInterrupted",
    "STOP_SIGNALS",
]

BACKENDS = ("process", "dask")

#: Seconds to wait for a Dask scheduler before giving up (``run_sweep(connect_timeout=)``).
CONNECT_TIMEOUT = 10.0


#: The signals that stop a sweep and hand back its finished rows: Ctrl-C, and SIGTERM (``kill``, a batch
#: system's stop, a container's shutdown), which would otherwise end the process with nothing written.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM during :func:`run_sweep`: the workers were stopped; ``rows`` holds the finished rows.

    A ``KeyboardInterrupt``, so code that does not know it stops as usual. ``signum`` is
    the signal that stopped the sweep. Finished points are also in the cache (when
    one is used), except those :func:`~optnoise.cli.points.is_cached` says are not, so running the sweep
    again resumes it.
    """

    def __init__(self, rows: list[dict[str, Any]], total: int, signum: int = signal.SIGINT) -> None:
        super().__init__(f"sweep interrupted after {len(rows)} of {total} points")
        self.rows = rows
        self.total = total
        self.signum = int(signum)


def _init_worker(parent: int | None = None) -> None:
    """Worker initializer: the worker ends with the sweep's process whatever stops it; Ctrl-C goes to the parent,
    which stops the workers itself; HiGHS keeps to one core."""
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    one_highs_thread()  # one solve per core: HiGHS' own MIP workers would oversubscribe them


class _Stop(threading.Event):
    """Set by a stop signal; ``signum`` is the signal that set it."""

    signum: int = int(signal.SIGINT)


@contextmanager
def _stop_signals(stop: _Stop | None = None, *, raise_now: bool = False) -> Iterator[_Stop]:
    """While a sweep runs, Ctrl-C and SIGTERM (:data:`STOP_SIGNALS`) set a flag; ``raise_now`` also raises.

    In the process pool a signal only sets the flag, which the wait loop polls: a
    ``KeyboardInterrupt`` raised at an arbitrary point of the parent can land
    while it holds a future's lock inside ``concurrent.futures``; the pool's
    manager thread then blocks on that lock for good, and so does the
    interpreter's exit, which joins it (seen once under load: Ctrl-C did not
    stop a sweep within 30 s). Polling the flag stops the workers from a known
    point instead. With ``raise_now`` (points solved in this process, or on Dask)
    SIGTERM raises ``KeyboardInterrupt`` as Ctrl-C does (whose handler is left
    alone), so both end in :class:`SweepInterrupted` with the finished rows. Outside
    the main thread nothing changes, nor for an ignored SIGINT or a SIGTERM
    handler of the caller's own.
    """
    stop = _Stop() if stop is None else stop

    def handler(signum: int, frame: Any) -> None:
        stop.signum = signum
        stop.set()
        if raise_now:
            raise KeyboardInterrupt

    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in STOP_SIGNALS:
            current = signal.getsignal(sig)
            if sig == signal.SIGINT and (raise_now or current in (signal.SIG_IGN, None)):
                continue
            if sig == signal.SIGTERM and current is not signal.SIG_DFL:
                continue
            previous[sig] = signal.signal(sig, handler)
    try:
        yield stop
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Stop a process pool now: cancel pending points and kill running workers (no waiting for solves)."""
    procs = list(getattr(pool, "_processes", {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)  # shutdown() forgets it
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        if proc.is_alive():
            proc.kill()
    for proc in procs:
        proc.join(timeout=2)
    # The pool's manager thread closes its wake-up pipe once it sees the killed workers; the interpreter's
    # exit hook writes to that pipe, and on Python < 3.12 the two race (the hook saw it open, then wrote
    # to a closed descriptor: "OSError: Bad file descriptor" printed after our one-line message).
    # Waiting for the thread here ends the race before exit.
    if manager is not None:
        manager.join(timeout=2)


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
        On Ctrl-C or SIGTERM (a ``KeyboardInterrupt``; :data:`STOP_SIGNALS`): workers are
        stopped within about a second, and the exception's ``rows`` holds every finished
        row (cached unless :func:`~optnoise.cli.points.is_cached` says otherwise) and ``signum`` the signal. A row
        whose solve failed re-verification has status ``"unverified"`` and the reason in its
        ``error`` column.
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
    # run_point's solve arguments, the same for every point
    solve: dict[str, Any] = {
        "solver": solver,
        "time_limit": time_limit,
        "cache": None if cache is None else str(Path(cache)),
        "mip_gap": mip_gap,
        "options": options,
    }
    rows: list[dict[str, Any] | None] = [None] * len(points)
    bar = tqdm(total=len(points), desc="sweep", unit="pt", disable=not progress)

    def finished() -> list[dict[str, Any]]:
        return [r for r in rows if r is not None]

    # never more workers than points: a worker without a point is only start-up cost
    jobs = max(1, min(jobs, len(points)))
    pooled = backend == "process" and jobs > 1
    stop = _Stop()
    try:
        with _stop_signals(stop, raise_now=not pooled):
            if pooled:
                _run_pool(points, rows, bar, jobs, stop, solve)
            elif backend == "process":
                for i, p in enumerate(points):
                    rows[i] = run_point(p, **solve, concurrent=True)
                    bar.update()
            else:
                _run_dask(points, rows, bar, jobs, scheduler, connect_timeout, solve)
    except KeyboardInterrupt:
        bar.close()
        raise SweepInterrupted(finished(), len(points), stop.signum) from None
    bar.close()
    return finished()


def _run_pool(
    points: Sequence[dict[str, Any]],
    rows: list[dict[str, Any] | None],
    bar: Any,
    jobs: int,
    stop: _Stop,
    solve: dict[str, Any],
) -> None:
    """Solve the points (``run_point(point, **solve)``) in ``jobs`` spawned worker processes; a stop signal
    (``stop``) stops them at once."""
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
        futs = {pool.submit(run_point, p, **solve, concurrent=False): i for i, p in enumerate(points)}
        pending = set(futs)
        while pending and not stop.is_set():
            done, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
            for fut in done:
                rows[futs[fut]] = fut.result()
                bar.update()
        if stop.is_set():
            raise KeyboardInterrupt
    except BaseException:
        _stop_pool(pool)  # never wait for running solves on Ctrl-C or an error
        raise
    pool.shutdown(wait=True)


def _run_dask(
    points: Sequence[dict[str, Any]],
    rows: list[dict[str, Any] | None],
    bar: Any,
    jobs: int,
    scheduler: str | None,
    connect_timeout: float,
    solve: dict[str, Any],
) -> None:
    """Solve the points (``run_point(point, **solve)``) on a Dask cluster (a local one without ``scheduler``)."""
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
                **solve,
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
