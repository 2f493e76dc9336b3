"""The ``solver="auto"`` portfolio on MILPs: HiGHS alone, then HiGHS and SCIP raced in two processes."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from optnoise.engine import conic, highs
from optnoise.engine.backend import Backend, SolveRequest
from optnoise.engine.children import die_with_parent
from optnoise.engine.highs import LP_ALGORITHMS, highs_output, one_highs_thread, set_start, solve_highs
from optnoise.engine.model import LinearModel
from optnoise.engine.output import SolverOutput, relative_gap
from optnoise.engine.scip import solve_scip
from optnoise.engine.tolerance import MIP_REL_GAP

__all__ = ["AUTO_SOLO_SECONDS", "child_main", "is_proof", "race_solvers", "solve_auto", "BACKEND"]


#: Seconds HiGHS works alone (in the caller's process, all its threads) before ``solver="auto"``
#: races HiGHS and SCIP in two processes. Most designs are solved within it, so they pay neither
#: the processes' start-up (about 1 s) nor the second core.
AUTO_SOLO_SECONDS = 1.0


#: Seconds past the time limit that a race waits for its processes' answers before stopping them.
_RACE_GRACE_SECONDS = 2.0


#: Marks a race's second process as finished without a proof (stopped, nothing more to poll).
NO_CHILD: Any = object()


def child_main(parent: int | None = None) -> None:
    """Body of the second process of a race (``python -c``): read the job from stdin, write the output to stdout.

    A fresh interpreter rather than ``multiprocessing``: a spawned ``multiprocessing`` child re-imports
    the caller's ``__main__``, which fails for code typed at a prompt or a script without a
    ``__main__`` guard, and a forked one inherits HiGHS' thread pool, which does not survive ``fork``.
    The solver's log goes to stderr so that stdout carries only the pickled result.
    """
    import pickle

    die_with_parent(parent)  # a parent stopped by SIGTERM or SIGKILL must not leave this solve running
    result = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    backend, model, deadline, mip_gap, verbose, start, options, one_thread = pickle.load(sys.stdin.buffer)
    if one_thread:
        one_highs_thread()  # one core per racer (HiGHS, and SCIP's HiGHS refinement)
    try:
        limit = None if deadline is None else max(deadline - time.time(), 1e-3)
        if backend == "scip":
            out = solve_scip(model, limit, mip_gap, verbose, start=start)
        else:
            out = solve_highs(model, limit, mip_gap, verbose, options, start)
    except Exception as exc:  # reported to the parent as a status, never raised there
        out = SolverOutput("error", None, None, None, None, 0.0, backend, message=f"{type(exc).__name__}: {exc}")
    pickle.dump(out, result)
    result.close()


class ChildSolve:
    """``backend`` ("scip" or "highs") solving ``model`` in a child interpreter until ``deadline`` (``time.time()``).

    ``one_thread`` fixes the child's HiGHS at one thread (:func:`one_highs_thread`), as a MILP race
    does. The lattice LP's race leaves HiGHS' default: its interior point measured faster with it
    (m = 6, k = 12, eps = 0.1: 52-58 s against 59-61 s with one thread).
    """

    def __init__(
        self,
        backend: str,
        model: LinearModel | None = None,
        deadline: float | None = None,
        mip_gap: float = MIP_REL_GAP,
        verbose: bool = False,
        *,
        start: np.ndarray | None = None,
        options: Mapping[str, Any] | None = None,
        one_thread: bool = False,
    ) -> None:
        import subprocess

        self.backend = backend
        self._verbose = bool(verbose)
        self._writer: threading.Thread | None = None
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                f"from optnoise.engine.race import child_main; child_main({os.getpid()})",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None if verbose else subprocess.DEVNULL,
        )
        if model is not None:
            self.submit(model, deadline, mip_gap, start=start, options=options, one_thread=one_thread)

    def submit(
        self,
        model: LinearModel,
        deadline: float | None,
        mip_gap: float,
        *,
        start: np.ndarray | None = None,
        options: Mapping[str, Any] | None = None,
        one_thread: bool = False,
    ) -> None:
        """Hand the job to the child; without ``model`` at construction, the child imports meanwhile."""
        import pickle

        job = (self.backend, model, deadline, mip_gap, self._verbose, start, dict(options or {}), bool(one_thread))
        # Written from a thread: the pipe holds 64 KiB and the child reads only once it has imported.
        self._writer = threading.Thread(target=self._send, args=(pickle.dumps(job),), daemon=True)
        self._writer.start()

    def _send(self, job: bytes) -> None:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(job)
            self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass  # the child was stopped

    def poll(self, timeout: float) -> SolverOutput | None:
        """The child's output once it has finished, else ``None`` after waiting up to ``timeout``."""
        import pickle
        import select

        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            return None
        data = self.proc.stdout.read()
        self.proc.wait()
        try:
            out = pickle.loads(data)
        except Exception:
            out = None
        if isinstance(out, SolverOutput):
            return out
        return SolverOutput(
            "error", None, None, None, None, 0.0, self.backend, message=f"child process ended ({self.proc.returncode})"
        )

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        if self._writer is not None:
            self._writer.join(timeout=1.0)
        assert self.proc.stdout is not None
        self.proc.stdout.close()


def is_proof(out: SolverOutput | None) -> bool:
    return out is not None and out.status in ("optimal", "infeasible", "unbounded")


def race_solvers(
    model: LinearModel,
    time_limit: float | None,
    mip_gap: float,
    verbose: bool,
    options: Mapping[str, Any] | None,
    concurrent: bool,
    start: np.ndarray | None = None,
) -> SolverOutput:
    """HiGHS alone for :data:`AUTO_SOLO_SECONDS`, then HiGHS and SCIP side by side, one core each.

    The solo phase runs in this process with HiGHS' default threads; halfway through it, two child
    processes start and import optnoise meanwhile. If HiGHS has not finished by the end of the
    phase, it is stopped and both solvers go on in the two processes (see
    :func:`child_main`): HiGHS on one thread (:func:`one_highs_thread`) and SCIP, which is
    single-threaded. HiGHS runs up to one MIP worker per core, so left in this process beside SCIP
    it took part of SCIP's core, and a process fixes HiGHS' thread count at its first solve: only a
    fresh one can have one thread. HiGHS resumes from its solo incumbent; SCIP starts from the
    caller's ``start`` only, so that its search does not depend on how far HiGHS got in its first
    second (a machine-dependent point: pdp, n = 64, ``|M| = 10``, error rate, SCIP proved in 19 s
    from one such incumbent and not in 58 s from another, 27 s from none).
    The first proof (optimal, infeasible or unbounded) wins and the other process is killed. When
    both stop at the time limit, the best incumbent is returned with the best dual bound (the solo
    phase's included).
    """
    t0 = time.perf_counter()
    deadline = None if time_limit is None else time.time() + time_limit
    h = highs.highs_instance(model, time_limit=time_limit, mip_gap=mip_gap, verbose=verbose, options=options)
    set_start(h, model, start)
    h.HandleUserInterrupt = True
    h.startSolve()
    if not concurrent:
        h.wait(-1.0)
        return highs_output(h, model, time.perf_counter() - t0)
    children: dict[str, ChildSolve] = {}
    racing = stopped = False
    try:
        done, _ = h.wait(AUTO_SOLO_SECONDS / 2)
        if not done:
            # the processes import optnoise (about a second) while HiGHS works on alone
            children = {name: ChildSolve(name, verbose=verbose) for name in ("highs", "scip")}
            done, _ = h.wait(AUTO_SOLO_SECONDS / 2)
        if not done:
            h.cancelSolve()
            h.wait()
        stopped = True
        solo = highs_output(h, model, time.perf_counter() - t0)
        if done or is_proof(solo) or (deadline is not None and time.time() >= deadline):
            return solo
        first = solo.x if solo.x is not None else start
        children["highs"].submit(model, deadline, mip_gap, start=first, options=options, one_thread=True)
        children["scip"].submit(model, deadline, mip_gap, start=start, one_thread=True)
        racing = True
    finally:
        if not racing:
            for child in children.values():
                child.stop()
        if not stopped:  # interrupted (Ctrl-C) in the solo phase
            h.cancelSolve()
            h.wait()
    outs: dict[str, SolverOutput | None] = dict.fromkeys(children)
    try:
        while not any(is_proof(o) for o in outs.values()) and any(o is None for o in outs.values()):
            if deadline is not None and time.time() > deadline + _RACE_GRACE_SECONDS:
                break  # a process that has not answered by now (a busy machine) is not waited for
            for name, child in children.items():
                if outs[name] is None:
                    outs[name] = child.poll(0.02)
    finally:
        for child in children.values():
            child.stop()
    seconds = time.perf_counter() - t0
    race = {name: (out.status if out is not None else "stopped") for name, out in outs.items()}
    for out in outs.values():
        if is_proof(out):
            assert out is not None
            message = f"{out.message} (won the race; {race})"
            return replace(out, solve_time=seconds, message=message, info={**out.info, "race": race})
    candidates = [solo, *(o for o in outs.values() if o is not None)]
    found = [o for o in candidates if o.x is not None and o.objective is not None]
    best = min(found, key=lambda o: o.objective) if found else solo  # type: ignore[arg-type, return-value]
    bounds = [o.bound for o in candidates if o.bound is not None and np.isfinite(o.bound)]
    bound = max(bounds) if bounds else None
    return replace(
        best,
        status="time_limit" if found or "time_limit" in race.values() else best.status,
        bound=bound,
        gap=relative_gap(best.objective, bound),
        solve_time=seconds,
        message=f"{best.message} (best incumbent; {race})",
        info={**best.info, "race": race},
    )


def solve_auto(model: LinearModel, req: SolveRequest) -> SolverOutput:
    """``solver="auto"``: cvxpy for a conic model, the race on a MILP, HiGHS' measured best algorithm on an LP."""
    if model.is_conic:
        return conic.BACKEND.solve(model, req)
    if model.is_mip:
        return race_solvers(
            model, req.time_limit, req.mip_gap, req.verbose, req.options, bool(req.concurrent), req.start
        )
    algorithm = {"solver": LP_ALGORITHMS[model.lp_algorithm or "simplex"]}
    return solve_highs(model, req.time_limit, req.mip_gap, req.verbose, {**algorithm, **(req.options or {})})


#: The default portfolio: the first proof of HiGHS and SCIP on MILPs, HiGHS on LPs, cvxpy on cones.
BACKEND = Backend("auto", solve_auto, warm_start=True, cones=True, highs_options=True)
