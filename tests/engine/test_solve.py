"""The solver-neutral model and its backends on hand-solvable problems."""

import numpy as np
import pytest

from optnoise import Neighborhood, NoiseDesign
from optnoise.engine import highs, lazy, race, scip
from optnoise.engine.highs import write_mps
from optnoise.engine.model import ModelBuilder
from optnoise.engine.solve import available_solvers, solve_model


def knapsack():
    # max 3a + 4b + 5c s.t. 2a + 3b + 4c <= 11.5, 0 <= a,b,c <= 10 integer -> a=4, b=1: 16
    mb = ModelBuilder()
    x = mb.add_vars(3, lb=0, ub=10, integer=True, name="x")
    mb.add_row(x, [2, 3, 4], upper=11.5)
    mb.set_objective(x, [-3, -4, -5])
    return mb.build()


def lp():
    # min -x - 2y s.t. x + y <= 1, x, y in [0, 1] -> y = 1, objective -2
    mb = ModelBuilder()
    x = mb.add_vars(2, lb=0.0, ub=1.0, name="xy")
    mb.add_row(x, [1.0, 1.0], upper=1.0)
    mb.set_objective(x, [-1.0, -2.0], offset=0.5)
    return mb.build()


@pytest.mark.parametrize("solver", ["auto", "highs", "scip", "cbc", "cvxpy"])
def test_backends_on_hand_solved_problems(solver):
    out = solve_model(lp(), solver=solver)
    assert out.status == "optimal"
    assert out.objective == pytest.approx(-1.5, abs=1e-7)
    np.testing.assert_allclose(out.x, [0, 1], atol=1e-7)
    out = solve_model(knapsack(), solver=solver)
    assert out.status == "optimal"
    assert out.objective == pytest.approx(-16.0)
    assert knapsack().residuals(out.x)["rows"] <= 1e-9


@pytest.mark.parametrize("solver", ["auto", "highs", "scip", "cbc", "cvxpy"])
def test_infeasible_status(solver):
    mb = ModelBuilder()
    x = mb.add_vars(1, lb=0.0, ub=1.0)
    mb.add_row(x, [1.0], lower=2.0)
    mb.set_objective(x, [1.0])
    out = solve_model(mb.build(), solver=solver)
    assert out.status == "infeasible"
    assert out.x is None


def test_batch_rows_and_blocks():
    mb = ModelBuilder()
    f = mb.add_vars(3, ub=1.0, name="f")
    rows = mb.add_rows([0, 0, 1, 1], [f[0], f[1], f[1], f[2]], [1, 1, 1, -1], lower=[1, 0], upper=[1, 0])
    assert rows.tolist() == [0, 1]
    m = mb.build()
    assert m.shape == (2, 3)
    assert m.block("f").tolist() == [0, 1, 2]
    assert m.size == {"rows": 2, "cols": 3, "integers": 0, "nonzeros": 4}
    with pytest.raises(ValueError, match="block"):
        m.block("g")
    with pytest.raises(IndexError):
        mb.add_row([7], [1.0])


def test_mps_needs_suffix(tmp_path):
    with pytest.raises(ValueError, match="mps"):
        write_mps(lp(), tmp_path / "model.lp")


def test_bad_solver_and_unavailable_commercial():
    with pytest.raises(ValueError, match="solver must be one of"):
        solve_model(lp(), solver="glpk")
    if "gurobi" not in available_solvers():
        with pytest.raises(ValueError, match="not available"):
            solve_model(lp(), solver="gurobi")


def test_highs_options_reach_the_solver_and_keep_the_optimum():
    d = NoiseDesign(n=32, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(3), privacy="pdp")
    ref = d.solve("highs")
    assert d.solve("highs", options={"mip_allow_restart": False}).distortion == pytest.approx(ref.distortion, abs=1e-9)
    # HiGHS alone (auto would let SCIP finish the proof): stops early, so the option took effect
    capped = d.solve("highs", options={"mip_max_nodes": 1})
    assert capped.status == "time_limit"
    assert capped.verify()


@pytest.mark.parametrize(
    "options, word",
    [
        ({"no_such_option": 1}, "no_such_option"),
        ({"mip_allow_restart": "yes"}, "True or False"),
        ({"primal_feasibility_tolerance": "abc"}, "float"),
        ({"random_seed": -1}, "refused"),
        ({"threads": 1.5}, "int"),
        # issue 13: loosened tolerances, gap/termination options and non-finite values are refused up front
        ({"primal_feasibility_tolerance": 0.5}, "loosens a tolerance"),
        ({"mip_feasibility_tolerance": 1e-3}, "loosens a tolerance"),
        ({"dual_feasibility_tolerance": 1e-6}, "loosens a tolerance"),
        ({"kkt_tolerance": 1e-3}, "loosens a tolerance"),
        ({"mip_rel_gap": float("nan")}, "mip_gap"),
        ({"mip_abs_gap": 1.0}, "mip_gap"),
        ({"objective_bound": 0.5}, "before optimality"),
        ({"small_matrix_value": 0.5}, "coefficients"),
        ({"output_flag": True}, "stdout"),
        ({"random_seed": True}, "int"),
        ({"primal_feasibility_tolerance": float("nan")}, "finite"),
        ({1: 2}, "options must be a mapping"),
    ],
)
def test_bad_highs_options_are_value_errors(options, word):
    d = NoiseDesign(n=8, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(2), privacy="pdp")
    with pytest.raises(ValueError, match=word):
        d.solve(options=options)


@pytest.mark.parametrize("options", [[1], "presolve=off", 3])
def test_options_must_be_a_mapping(options):
    d = NoiseDesign(n=8, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(2), privacy="dp")
    with pytest.raises(ValueError, match="options must be a mapping"):
        d.solve(options=options)


def test_tighter_tolerances_are_accepted():
    d = NoiseDesign(n=8, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(2), privacy="pdp")
    res = d.solve(options={"primal_feasibility_tolerance": 1e-10, "mip_feasibility_tolerance": 1e-10})
    assert res.status == "optimal" and res.verify()


def test_highs_options_with_another_backend_are_refused():
    d = NoiseDesign(n=8, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(2), privacy="dp")
    with pytest.raises(ValueError, match="HiGHS options"):
        d.solve(solver="cbc", options={"random_seed": 1})


def test_banner_absorption_restores_stdout_across_threads(monkeypatch):
    # Concurrent first constructions must leave file descriptor 1 where it was; without the lock a
    # thread could save the redirected descriptor and restore it last.
    import os
    import threading
    from concurrent.futures import ThreadPoolExecutor

    before = os.fstat(1)
    for _ in range(50):
        monkeypatch.setattr(highs, "_banner_absorbed", False)  # as in a fresh process
        start = threading.Barrier(8)

        def first_construction(_, start=start):
            start.wait()
            highs.absorb_highs_banner()

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(first_construction, range(8)))
        after = os.fstat(1)
        assert (after.st_dev, after.st_ino) == (before.st_dev, before.st_ino)


def unbounded():
    mb = ModelBuilder()
    x = mb.add_vars(2, lb=0.0, ub=np.inf, integer=True, name="x")
    mb.add_row(x, [1.0, -1.0], upper=1.0)
    mb.set_objective(x, [-1.0, 0.0])
    return mb.build()


@pytest.mark.parametrize("solver", ["scip", "auto"])
def test_scip_and_auto_statuses(solver):
    assert solve_model(unbounded(), solver=solver).status in ("unbounded", "infeasible")  # SCIP may say either
    assert solve_model(unbounded(), solver="scip").status != "optimal"
    hard = NoiseDesign(n=64, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(10, directed=True), privacy="pdp")
    out = solve_model(hard.build_model(), solver=solver, time_limit=1.5)
    assert out.status == "time_limit"
    assert out.x is None or out.bound <= out.objective + 1e-9


def test_scip_points_are_refined_to_the_tight_tolerance():
    # SCIP works at its default 1e-6 feasibility, which would let PDP indicators sit on the wrong side of
    # f(eta) = e^eps f(eta+mu): every SCIP point is refined by HiGHS at 1e-9, and its gap recomputed
    d = NoiseDesign(n=16, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(3), metric="mse", privacy="pdp")
    model = d.build_model()
    out = solve_model(model, solver="scip")
    assert out.status == "optimal" and "refined by HiGHS" in out.message
    assert model.residuals(out.x)["rows"] <= 1e-8
    assert out.objective == pytest.approx(solve_model(model, solver="highs").objective, rel=1e-8)
    assert out.gap == pytest.approx(max(0.0, (out.objective - out.bound) / out.objective), abs=1e-15)
    res = d.solve(solver="scip")
    assert res.status == "optimal" and res.verify() and res.backend == "scip"


def _children() -> list:
    psutil = pytest.importorskip("psutil")
    alive = [p for p in psutil.Process().children(recursive=True) if p.is_running() and p.status() != "zombie"]
    # only race processes count (multiprocessing's resource tracker, for one, is not ours)
    return [p for p in alive if "_child_main" in " ".join(p.cmdline())]


def test_auto_races_scip_and_reports_the_winner(monkeypatch):
    # With no solo phase the race starts at once, so a small MILP exercises it in about a second.
    monkeypatch.setattr(race, "AUTO_SOLO_SECONDS", 0.0)
    d = NoiseDesign(n=12, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(3), privacy="pdp")
    ref = d.solve("highs")
    res = d.solve("auto")
    assert res.status == "optimal" and res.solver == "auto" and res.backend in ("highs", "scip")
    assert "won the race" in res.message  # the race ran (SCIP was started)
    assert res.distortion == pytest.approx(ref.distortion, abs=1e-8)
    assert res.verify()
    assert res.to_dict()["backend"] == res.backend
    assert not _children()  # the loser was stopped


def test_auto_at_the_time_limit_keeps_the_best_incumbent_and_bound(monkeypatch):
    monkeypatch.setattr(race, "AUTO_SOLO_SECONDS", 0.0)
    hard = NoiseDesign(n=64, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(10, directed=True), privacy="pdp")
    model = hard.build_model()
    out = solve_model(model, solver="auto", time_limit=8.0)  # room for an incumbent on a loaded machine
    assert out.status == "time_limit" and out.info["race"]["highs"] == "time_limit"
    assert out.info["race"]["scip"] in ("time_limit", "stopped")  # "stopped": not answered 2 s after the limit
    assert out.x is not None and model.residuals(out.x)["rows"] <= 1e-8
    assert 0.8446734 - 1e-6 <= out.objective  # the known optimum (issue 17) bounds every incumbent
    assert out.bound <= 0.8446734 + 1e-6
    assert out.gap == pytest.approx((out.objective - out.bound) / max(1.0, out.objective))  # relative to max(1, obj)
    assert not _children()


def test_auto_lp_uses_the_hinted_algorithm():
    mb = ModelBuilder()
    x = mb.add_vars(2, lb=0.0, ub=1.0)
    mb.add_row(x, [1.0, 1.0], upper=1.0)
    mb.set_objective(x, [-1.0, -2.0])
    for hint in (None, "simplex", "ipm"):
        out = solve_model(mb.build(lp_algorithm=hint), solver="auto")
        assert out.status == "optimal" and out.objective == pytest.approx(-2.0) and out.solver == "highs"
    with pytest.raises(ValueError, match="lp_algorithm"):
        mb.build(lp_algorithm="barrier")


def test_auto_without_concurrency_stays_in_process(monkeypatch):
    monkeypatch.setattr(race, "AUTO_SOLO_SECONDS", 0.0)

    def no_process(*args, **kwargs):
        raise AssertionError("auto started a process with concurrent=False")

    monkeypatch.setattr(race, "ChildSolve", no_process)
    d = NoiseDesign(n=12, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(3), privacy="pdp")
    res = d.solve("auto", concurrent=False)
    assert res.status == "optimal" and res.backend == "highs"


def test_lazy_rounds_get_what_is_left_of_the_time_limit(monkeypatch):
    # HiGHS compares time_limit with the run time accumulated over all rounds of one instance, so a later
    # round must be given (run time so far + what is left), or it stops early (m=7 lattice LP: 518 s of 900)
    import scipy.sparse as sp

    real = highs.highs_instance
    seen = []

    def recording(model, **kw):
        h = real(model, **kw)
        base = h.setOptionValue

        class Spy:
            def __getattr__(self, name):
                return getattr(h, name)

            def __setattr__(self, name, value):
                setattr(h, name, value)

            def setOptionValue(self, name, value):
                if name == "time_limit":
                    seen.append((value, h.getRunTime()))
                return base(name, value)

            def getRunTime(self):
                return h.getRunTime() + 1000.0  # as if earlier rounds had run for 1000 s

        return Spy()

    monkeypatch.setattr(highs, "highs_instance", recording)
    mb = ModelBuilder()
    x = mb.add_vars(3, lb=0.0, ub=1.0)
    mb.set_objective(x, [-1.0, -1.0, -1.0])
    cuts = sp.csr_matrix(np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]]))
    out, added, rounds = lazy.solve_with_cuts(mb.build(), cuts, np.array([1.0, 1.0]), solver="highs", time_limit=50.0)
    assert out.status == "optimal" and rounds == 2 and out.objective == pytest.approx(-2.0)
    per_round = [v for v, _ in seen]  # one limit per round, set on the instance before it runs
    assert len(per_round) == 2 and all(v > 1000.0 for v in per_round)


def test_refinement_keeps_the_backends_own_objective():
    # backend_objective is the objective as the backend reported it, before the HiGHS refinement
    d = NoiseDesign(n=16, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(3), metric="mse", privacy="pdp")
    model = d.build_model()
    out = solve_model(model, solver="scip")
    raw = out.info["backend_objective"]
    assert raw is not None and raw == pytest.approx(out.objective, rel=1e-6)
    again = highs.refine_with_highs(model, out)
    assert again.info["backend_objective"] == raw  # a second refinement does not overwrite it
    assert d.solve(solver="scip").backend_objective == pytest.approx(raw, rel=1e-9)


# ---------------------------------------------------------------- one core per solver (issue 17)


def test_scip_runs_milps_without_cutting_planes():
    # measured faster on every pdp MILP of the benchmarks (SCIP_MILP_CUTS); LPs keep SCIP's defaults
    pyscipopt = pytest.importorskip("pyscipopt")
    milp = NoiseDesign(n=8, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(3), privacy="pdp").build_model()
    lp = NoiseDesign(n=8, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(3), privacy="dp").build_model()
    assert milp.is_mip and not lp.is_mip
    default = pyscipopt.Model().getParam("separating/gomory/freq")
    assert default >= 0
    assert scip.scip_instance(milp)[0].getParam("separating/gomory/freq") == -1
    assert scip.scip_instance(milp, cuts=True)[0].getParam("separating/gomory/freq") == default
    assert scip.scip_instance(lp)[0].getParam("separating/gomory/freq") == default
    out = solve_model(milp, solver="scip")
    assert out.status == "optimal"
    assert out.objective == pytest.approx(solve_model(milp, solver="highs").objective, rel=1e-7)


_THREADS_PREAMBLE = (
    "from optnoise import Neighborhood, NoiseDesign\n"
    "from optnoise.engine.highs import solve_highs, one_highs_thread\n"
    "m = NoiseDesign(n=8, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(3), privacy='pdp').build_model()\n"
)


def test_one_highs_thread_fixes_a_fresh_process_at_one_thread(run_python):
    # HiGHS fixes its thread count at a process's first solve; a later different `threads` is an error
    body = (
        "print(one_highs_thread(), one_highs_thread())\n"
        "print(solve_highs(m, None, 1e-9, False).status, solve_highs(m, None, 1e-9, False, {'threads': 2}).status)\n"
    )
    assert run_python(_THREADS_PREAMBLE + body).split() == ["True", "True", "optimal", "error"]


@pytest.mark.skipif((__import__("os").cpu_count() or 1) < 2, reason="HiGHS' default is one thread on one core")
def test_one_highs_thread_changes_nothing_after_a_first_solve(run_python):
    body = "print(solve_highs(m, None, 1e-9, False).status, one_highs_thread())\n"
    assert run_python(_THREADS_PREAMBLE + body).split() == ["optimal", "False"]


def test_race_processes_run_highs_on_one_thread():
    # a MILP racer runs in a process fixed at one thread, so asking it for two is HiGHS' error;
    # without one_thread (the lattice LP's race) the child keeps HiGHS' default and takes two
    model = NoiseDesign(n=8, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(3), privacy="pdp").build_model()
    outs = []
    for options, one_thread in ((None, True), ({"threads": 2}, True), ({"threads": 2}, False)):
        child = race.ChildSolve("highs", model, None, 1e-9, False, options=options, one_thread=one_thread)
        try:
            out = None
            for _ in range(600):
                out = child.poll(0.1)
                if out is not None:
                    break
        finally:
            child.stop()
        outs.append(out.status if out is not None else "no answer")
    assert outs == ["optimal", "error", "optimal"]


def test_race_scip_starts_from_the_callers_start_only(monkeypatch):
    # SCIP's search must not depend on how far HiGHS got alone (a machine-dependent point)
    monkeypatch.setattr(race, "AUTO_SOLO_SECONDS", 0.5)
    real = race.ChildSolve.submit
    starts = {}

    def recording(self, *args, **kwargs):
        starts[self.backend] = kwargs.get("start")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(race.ChildSolve, "submit", recording)
    hard = NoiseDesign(n=64, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(10, directed=True), privacy="pdp")
    out = solve_model(hard.build_model(), solver="auto", time_limit=3.0)
    assert out.status == "time_limit" and set(starts) == {"highs", "scip"}
    assert starts["scip"] is None
    assert starts["highs"] is not None  # HiGHS resumes from its own incumbent of the solo phase
    assert not _children()


def test_race_processes_of_a_quick_solve_are_stopped(monkeypatch):
    # the processes start halfway through the solo phase; a solve that ends before the race leaves none
    monkeypatch.setattr(race, "AUTO_SOLO_SECONDS", 2.0)
    spawned = []
    real = race.ChildSolve.__init__

    def recording(self, *args, **kwargs):
        spawned.append(args[0])
        real(self, *args, **kwargs)

    monkeypatch.setattr(race.ChildSolve, "__init__", recording)
    model = NoiseDesign(n=64, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(10, directed=True), privacy="pdp")
    out = solve_model(model.build_model(), solver="auto", time_limit=1.5)  # ends in the solo phase
    assert out.status == "time_limit" and out.solver == "highs" and "race" not in out.info
    assert spawned == ["highs", "scip"]  # started at 1 s, stopped at the limit
    assert not _children()


def test_cut_rows_come_back_in_model_order():
    # round 1 adds x0 + x1 <= 1 (cut 2); round 2 adds cut 0 or 1: the returned rows must follow the model's order,
    # or HiGHS' multipliers (out.dual) do not line up with model + cuts[added] (a bound of -2.5 instead of -1)
    import dataclasses

    import scipy.sparse as sp

    mb = ModelBuilder()
    x = mb.add_vars(2, lb=0.0, ub=1.0)
    mb.set_objective(x, [-1.0, -1.0])
    model = mb.build()
    cuts = sp.csr_matrix(np.array([[1.0, -1.0], [-1.0, 1.0], [1.0, 1.0]]))
    upper = np.array([0.5, 0.5, 1.0])
    out, added, rounds = lazy.solve_with_cuts(model, cuts, upper, solver="highs", concurrent=False)
    assert out.status == "optimal" and out.objective == pytest.approx(-1.0)
    final = dataclasses.replace(
        model,
        A=sp.vstack([model.A, cuts[added]], format="csr"),
        row_lower=np.full(added.size, -np.inf),
        row_upper=upper[added],
    )
    assert rounds >= 2 and added[0] == 2
    assert final.dual_bound(out.dual) == pytest.approx(-1.0, abs=1e-9)


def test_cuts_follow_a_separation_rule_and_raw_options(monkeypatch):
    # separate(x) decides which cut rows to add (here never cut 1, though violated): the rounds end when it returns
    # none; raw HiGHS options reach the instance, their "solver" replacing the model's LP algorithm in round one
    import scipy.sparse as sp

    given = []
    real = highs.highs_instance

    def recording(model, **kw):
        given.append(kw.get("options"))
        return real(model, **kw)

    monkeypatch.setattr(highs, "highs_instance", recording)
    mb = ModelBuilder()
    x = mb.add_vars(2, lb=0.0, ub=1.0)
    mb.set_objective(x, [-1.0, -1.0])
    model = mb.build()
    cuts = sp.csr_matrix(np.array([[1.0, 1.0], [1.0, 0.0]]))
    upper = np.array([1.5, 0.25])
    seen = []

    def only_the_first(xv):
        seen.append(xv.copy())
        return np.nonzero(cuts[:1] @ xv - upper[:1] > 1e-9)[0]

    options = {"solver": "ipm", "random_seed": 3}
    out, added, rounds = lazy.solve_with_cuts(
        model, cuts, upper, solver="auto", concurrent=False, separate=only_the_first, options=options
    )
    assert out.status == "optimal" and out.objective == pytest.approx(-1.5)
    assert added.tolist() == [0] and rounds == 2 and len(seen) == 2
    assert given == [options]
    with pytest.raises(ValueError, match="not a HiGHS option"):
        lazy.solve_with_cuts(model, cuts, upper, solver="highs", options={"no_such_option": 1})
