"""Sweeps: grids, caching and resume, process and Dask backends."""

import os
import time

import numpy as np
import pytest

from optnoise.cli.sweeps import grid_points, parse_grid, run_point, run_sweep


def test_parse_grid():
    assert parse_grid("eps", "0.1:0.3:3") == pytest.approx([0.1, 0.2, 0.3])
    assert parse_grid("delta", "0,0.1,0.2") == [0.0, 0.1, 0.2]
    assert parse_grid("eps", "1.5") == [1.5]
    assert parse_grid("n", "8,16", integer=True) == [8, 16]
    for bad in ("1:2", "a,b", "0:1:0", ""):
        with pytest.raises(ValueError, match="eps"):
            parse_grid("eps", bad)


def points():
    return grid_points(
        n=[6], eps=parse_grid("eps", "0.5:1.5:3"), delta=[0.0, 0.1], neighborhoods=["bd:2"], privacy=["dp"]
    )


def test_grid_validates_before_solving():
    with pytest.raises(ValueError, match="eps"):
        grid_points(n=[6], eps=[-1.0], delta=[0.0], neighborhoods=["bd:2"])
    assert len(points()) == 6


def test_cache_makes_the_sweep_resumable(tmp_path):
    pts = points()
    cache = tmp_path / "cache"
    first = run_sweep(pts[:3], cache=cache, progress=False)  # "interrupted" after 3 points
    assert len(list(cache.glob("*.json"))) == 3
    full = run_sweep(pts, cache=cache, progress=False)
    assert len(list(cache.glob("*.json"))) == 6
    for a, b in zip(first, full[:3], strict=True):
        assert a["distortion"] == b["distortion"]
    # solve times of cached points come from the cache, not a new solve
    again = run_sweep(pts, cache=cache, progress=False)
    assert [r["solve_time_s"] for r in again] == [r["solve_time_s"] for r in full]


def test_process_pool_matches_serial(tmp_path):
    pts = points()
    serial = run_sweep(pts, cache=None, progress=False)
    par = run_sweep(pts, cache=None, jobs=2, progress=False)
    np.testing.assert_allclose([r["distortion"] for r in serial], [r["distortion"] for r in par], atol=1e-9)


@pytest.mark.xdist_group("dask")
def test_dask_local_cluster(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    pts = points()
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        rows = run_sweep(pts, backend="dask", scheduler=cluster.scheduler_address, cache=tmp_path, progress=False)
    serial = [run_point(p) for p in pts]
    np.testing.assert_allclose([r["distortion"] for r in rows], [r["distortion"] for r in serial], atol=1e-9)


def test_backend_errors():
    with pytest.raises(ValueError, match="backend"):
        run_sweep(points(), backend="ray", progress=False)
    with pytest.raises(ValueError, match="scheduler"):
        run_sweep(points(), scheduler="tcp://x:1", progress=False)


def test_process_pool_after_a_milp_solve_in_the_parent(run_python):
    # HiGHS' thread scheduler does not survive fork(): with the former fork-based pool, workers forked
    # from a pytest process that had solved MILPs hung in highs::parallel::sync (a race, seen in the
    # suite). This runs the same sequence in a fresh interpreter: a MILP in the parent, then a
    # two-worker sweep, whose stdout must hold nothing but the script's own line.
    out = run_python(
        "from optnoise import Neighborhood, NoiseDesign\n"
        "from optnoise.cli.sweeps import grid_points, run_sweep\n"
        "if __name__ == '__main__':\n"
        "    NoiseDesign(n=8, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(3, directed=True),\n"
        "                privacy='pdp').solve()\n"
        "    pts = grid_points(n=[6, 8], eps=[0.5, 1.0], delta=[0.1], neighborhoods=['bd:2'], directed=True,\n"
        "                      privacy=['pdp'])\n"
        "    rows = run_sweep(pts, jobs=2, progress=False)\n"
        "    print(len(rows), sorted({r['status'] for r in rows}))\n"
    )
    assert out.strip() == "4 ['optimal']"


def test_parallel_sweeps_keep_auto_in_one_process(monkeypatch, tmp_path):
    # jobs > 1 already uses the cores: each worker's "auto" must not start a second solver process.
    distributed = pytest.importorskip("dask.distributed")
    from optnoise.design.noise import NoiseDesign

    seen = []
    real = NoiseDesign.solve

    def spy(self, *args, **kwargs):
        seen.append(kwargs.get("concurrent"))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(NoiseDesign, "solve", spy)
    pts = points()[:2]
    run_sweep(pts, cache=None, progress=False)
    assert seen == [True, True]
    seen.clear()
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        run_sweep(pts, backend="dask", scheduler=cluster.scheduler_address, cache=None, progress=False)
    assert seen == [False, False]


# ---------------------------------------------------------------- issue 13


def test_grids_are_capped_before_they_are_materialised():
    with pytest.raises(ValueError, match="more than 100000 points"):
        parse_grid("eps", "1:2:100000000")  # used to run for minutes
    with pytest.raises(ValueError, match="eps"):
        parse_grid("eps", "1,,2")  # an empty item is a typo
    with pytest.raises(ValueError, match="n"):
        parse_grid("n", "\u0668", integer=True)  # non-ASCII digits are refused
    with pytest.raises(ValueError, match="grid has 1000000 points"):
        grid_points(n=list(range(1, 1001)), eps=[0.5] * 1000, delta=[0.0], neighborhoods=["bd:1"])


def test_interrupted_sweep_returns_the_finished_rows(interrupt_sweep_at, tmp_path):
    import optnoise.cli.sweeps as S

    pts = points()
    interrupt_sweep_at(3)
    with pytest.raises(KeyboardInterrupt) as info:
        run_sweep(pts, cache=tmp_path, progress=False)
    stop = info.value
    assert isinstance(stop, S.SweepInterrupted)
    assert len(stop.rows) == 2 and stop.total == 6
    assert len(list(tmp_path.glob("*.json"))) == 2  # finished points are cached: the sweep resumes


def test_unverified_rows_are_flagged(monkeypatch):
    # a "solver" that claims optimality for the point mass at 0, which leaks under every shift
    import optnoise.design.settle as D
    from optnoise.engine.output import SolverOutput

    def fake(model, **kw):
        x = np.zeros(model.shape[1])
        x[model.block("f")[0]] = 1.0
        return SolverOutput("optimal", x, 0.0, 0.0, 0.0, 0.0, "highs", message="Optimal")

    monkeypatch.setattr(D, "solve_model", fake)
    row = run_point({"n": 6, "eps": 1.0, "delta": 0.1, "neighborhood": "bd:2", "privacy": "dp"})
    assert row["status"] == "unverified" and "re-verification failed" in row["error"]
    assert row["achieved_dp"] > 0.1


def test_ctrl_c_during_a_pool_only_sets_a_flag():
    # A KeyboardInterrupt raised inside concurrent.futures can leave a future's lock held and hang the exit.
    import os
    import signal

    from optnoise.cli.sweeps import _stop_signals

    # Python's own handler, as in a terminal, even under a runner that ignores SIGINT (a shell starts
    # background jobs that way); with SIGINT ignored, _stop_signals rightly changes nothing
    runner = signal.signal(signal.SIGINT, signal.default_int_handler)
    term = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        before = signal.getsignal(signal.SIGINT)
        for sig in (signal.SIGINT, signal.SIGTERM):  # SIGTERM as Ctrl-C (issue 32)
            with _stop_signals() as interrupted:
                assert not interrupted.is_set()
                os.kill(os.getpid(), sig)  # no KeyboardInterrupt here, nor the end of the process
                assert interrupted.wait(timeout=5) and interrupted.signum == sig
            assert signal.getsignal(signal.SIGINT) is before
            assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)
    finally:
        signal.signal(signal.SIGINT, runner)
        signal.signal(signal.SIGTERM, term)


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="HiGHS' default is one thread on one core")
def test_sweep_workers_keep_highs_to_one_thread(run_python):
    # two workers on two cores: HiGHS' own MIP workers (one per core by default) would oversubscribe them.
    # Unpinned, the worker's first solve would fix HiGHS at all cores and one_highs_thread() would fail.
    out = run_python(
        "import signal\n"
        "from optnoise import Neighborhood, NoiseDesign\n"
        "from optnoise.engine.highs import one_highs_thread\n"
        "from optnoise.cli.sweeps import _init_worker\n"
        "_init_worker()\n"
        "NoiseDesign(n=8, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(3), privacy='pdp').solve('highs')\n"
        "print(one_highs_thread(), signal.getsignal(signal.SIGINT) is signal.SIG_IGN)\n"
    )
    assert out.split() == ["True", "True"]


# ---------------------------------------------------------------- unbounded counts


def test_jobs_are_validated_and_capped():
    # --jobs 2**64+1 was an internal error (OverflowError) and --jobs 1000 started a worker per point
    from optnoise.engine.validation import JOBS_PER_CORE, check_jobs, max_jobs

    assert max_jobs() == JOBS_PER_CORE * (os.cpu_count() or 1)
    assert check_jobs(max_jobs()) == max_jobs() and check_jobs(np.int64(1)) == 1
    for bad in (0, -1, max_jobs() + 1, 2**64 + 1, 2.0, True, "2"):
        with pytest.raises(ValueError, match="jobs"):
            run_sweep([], jobs=bad, progress=False)
    with pytest.raises(ValueError, match=rf"jobs must be an integer >= 1 and <= {max_jobs()}.*per core"):
        check_jobs(1000 * max_jobs())


def test_no_more_workers_than_points(monkeypatch):
    import optnoise.cli.sweeps as S
    from optnoise.engine.validation import max_jobs

    started = []

    class Pool(S.ProcessPoolExecutor):
        def __init__(self, *args, **kwargs):
            started.append(kwargs["max_workers"])
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(S, "ProcessPoolExecutor", Pool)
    pts = points()[:2]
    rows = run_sweep(pts, jobs=max_jobs(), cache=None, progress=False)
    assert started == [2] and [r["status"] for r in rows] == ["optimal", "optimal"]
    started.clear()
    run_sweep(pts[:1], jobs=2, cache=None, progress=False)  # one point: solved in this process, no pool
    assert started == []


def test_integer_grids_keep_integers():
    # check_int refuses floats such as 8.0, so an integer grid must hand it integers, and given floats are refused
    assert parse_grid("n", "8:64:3", integer=True) == [8, 36, 64]
    assert all(type(v) is int for v in parse_grid("n", "8,16", integer=True))
    assert parse_grid("n", [8, np.int64(16)], integer=True) == [8, 16]
    for bad in ("1:10:3", "8.0"):  # 1, 5.5, 10 is not an integer grid
        with pytest.raises(ValueError, match="n"):
            parse_grid("n", bad, integer=True)
    with pytest.raises(ValueError, match="n must be an integer"):
        parse_grid("n", [8.0], integer=True)


def test_stopping_a_pool_waits_for_its_manager_thread():
    # CI once printed "OSError: Bad file descriptor" after an interrupted sweep's message: the pool's
    # manager thread closed its wake-up pipe while the interpreter's exit hook was writing to it
    import multiprocessing
    import threading
    from concurrent.futures import ProcessPoolExecutor

    from optnoise.cli.sweeps import _stop_pool

    pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
    fut = pool.submit(time.sleep, 60)
    manager = pool._executor_manager_thread
    assert manager is not None and manager.is_alive()
    t0 = time.monotonic()
    _stop_pool(pool)
    assert time.monotonic() - t0 < 5
    assert not manager.is_alive()
    assert manager not in threading.enumerate()
    assert fut.done()
