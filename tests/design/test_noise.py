"""NoiseDesign: the paper's stated numbers, brute force, backends and the notion ordering."""

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import linprog

from optnoise import DesignResult, Neighborhood, NoiseDesign, cost_vector, modulo_errors, within_delta

BD3 = Neighborhood.bd(3, directed=True)


# ---------------------------------------------------------------- the paper's numbers (Kadam et al. 2024)


def test_vector_query_example_eq57():
    # n=4, eps=3, delta=0, shifts {0,1,2}^2 minus (0,0), directed, error rate
    shifts = [(a, b) for a in range(3) for b in range(3) if (a, b) != (0, 0)]
    # "highs": a deterministic backend, since the test compares the returned PMF itself
    res = NoiseDesign(n=4, eps=3.0, neighborhood=Neighborhood.shifts(shifts, directed=True)).solve("highs")
    assert res.status == "optimal"
    a, b, c = 0.0346, 0.0017, 0.6954
    eq57 = np.array(
        [
            [c, a, a, b, b],
            [a, a, a, b, b],
            [a, a, a, b, b],
            [b, b, b, b, b],
            [b, b, b, b, b],
        ]
    )
    np.testing.assert_allclose(res.pmf, eq57, atol=5e-5)
    marg = [0.7681, 0.1073, 0.1073, 0.0086, 0.0086]
    np.testing.assert_allclose(res.pmf.sum(axis=1), marg, atol=5e-5)
    np.testing.assert_allclose(res.pmf.sum(axis=0), marg, atol=5e-5)
    # Remark 4: the optimum is not the product of its marginals
    assert not np.allclose(res.pmf, np.outer(res.pmf.sum(1), res.pmf.sum(0)), atol=1e-3)


def test_scalar_optimum_n4_eps15():
    res = NoiseDesign(n=4, eps=1.5, neighborhood=Neighborhood.bd(2, directed=True)).solve("highs")
    np.testing.assert_allclose(res.pmf, [0.6469, 0.1443, 0.1443, 0.0322, 0.0322], atol=5e-5)


def step_lengths(pmf, rtol=1e-6):
    """Lengths of runs of equal masses: (1 for f(0), then the staircase steps)."""
    out, run = [1], 1
    for a, b in zip(pmf[1:-1], pmf[2:], strict=True):
        if abs(a - b) <= rtol * max(a, b, 1e-300):
            run += 1
        else:
            out.append(run)
            run = 1
    out.append(run)
    return tuple(out)


def kadam(delta, **kw):
    # "highs": the step lengths are those of one of several optimal PMFs, so the backend must not vary
    return NoiseDesign(n=8, eps=1.5, delta=delta, neighborhood=BD3, privacy="pdp-kadam", **kw).solve("highs")


def _boundary(pred, lo, hi, iters=30):
    """Bisection for the switch point of a monotone predicate (pred(lo) != pred(hi))."""
    a = pred(lo)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if pred(mid) == a:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def test_fig10_flat_region_and_step_lengths():
    # f(0) vs delta is piecewise linear with flat regions (Fig. 4/10). The paper reports the
    # region boundaries rounded to 4 decimals: 0.1212 (end of the first flat region),
    # 0.1238 and 0.1522 (starts of the next two), and the staircase at each boundary.
    f0 = lambda d: 1 - kadam(d).distortion  # noqa: E731
    flat0, flat1, flat2 = f0(0.0), f0(0.135), f0(0.156)
    assert flat0 < flat1 < flat2
    for d in np.linspace(0, 0.1212, 4):
        assert f0(float(d)) == pytest.approx(flat0, abs=1e-8)  # flat for delta in [0, 0.1212]
    end0 = _boundary(lambda d: f0(d) > flat0 + 1e-9, 0.10, 0.13)
    start1 = _boundary(lambda d: f0(d) >= flat1 - 1e-9, 0.12, 0.135)
    start2 = _boundary(lambda d: f0(d) >= flat2 - 1e-9, 0.14, 0.156)
    assert round(end0, 4) == 0.1212
    assert round(start1, 4) == 0.1238
    assert round(start2, 4) == 0.1522
    assert step_lengths(kadam(end0 - 1e-7).pmf) == (1, 3, 3, 2)
    assert step_lengths(kadam(start1 + 1e-7).pmf) == (1, 3, 2, 3)
    assert step_lengths(kadam(start2 + 1e-7).pmf) == (1, 3, 2, 2, 1)


# ---------------------------------------------------------------- brute force over indicator patterns


def brute_force(n, shifts, eps, delta, cost, notion):
    """min cost.f over all leak patterns, one LP (scipy linprog) per pattern."""
    N, E = n + 1, np.exp(eps)
    K = len(shifts)
    best = np.inf
    patterns = itertools.product([0, 1], repeat=K * N if notion == "pdp" else N)
    for pat in patterns:
        u = np.array(pat).reshape(K, N) if notion == "pdp" else np.tile(np.array(pat), (K, 1))
        A, b = [], []
        for m, mu in enumerate(shifts):
            for eta in range(N):
                row = np.zeros(N)
                if u[m, eta] == 0:  # no leak: f(eta) <= e^eps f(eta+mu)
                    row[eta] += 1
                    row[(eta + mu) % N] -= E
                    A.append(row), b.append(0.0)
                elif notion == "pdp-kadam":  # (13g): u = 1 needs f(eta) >= e^eps f(eta+mu)
                    row[eta] -= 1
                    row[(eta + mu) % N] += E
                    A.append(row), b.append(0.0)
            A.append((u[m] == 1).astype(float)), b.append(delta)  # leak mass
        r = linprog(
            cost,
            A_ub=np.array(A),
            b_ub=np.array(b),
            A_eq=np.ones((1, N)),
            b_eq=[1.0],
            bounds=[(0, 1)] * N,
            method="highs",
        )
        if r.status == 0:
            best = min(best, r.fun)
    return best


@pytest.mark.parametrize("notion", ["pdp", "pdp-kadam"])
@pytest.mark.parametrize(
    "n, shifts, eps, delta, metric",
    [
        (3, [1, 3], 0.7, 0.2, "er"),
        (3, [1, 2], 1.2, 0.1, "mse"),
        (4, [2], 0.5, 0.3, "er"),
        (3, [1], 0.3, 0.05, "mae"),
        (4, [1, 4], 0.6, 0.15, "circular-mse"),  # symmetric shifts and cost: the symmetry-breaking row is active
    ],
)
@pytest.mark.parametrize("solver", ["highs", "scip"])
def test_milp_equals_brute_force(notion, n, shifts, eps, delta, metric, solver):
    cost = cost_vector(metric, n)
    d = NoiseDesign(
        n=n,
        eps=eps,
        delta=delta,
        neighborhood=Neighborhood.shifts(shifts, directed=True),
        metric=metric,
        privacy=notion,
    )
    assert (d._reflection_pair() is not None) == (sorted(shifts) == [1, n] and metric != "mae")
    want = brute_force(n, shifts, eps, delta, cost, notion)
    res = NoiseDesign(
        n=n,
        eps=eps,
        delta=delta,
        neighborhood=Neighborhood.shifts(shifts, directed=True),
        metric=metric,
        privacy=notion,
    ).solve(solver)
    assert res.status == "optimal" and res.backend == solver
    assert res.distortion == pytest.approx(want, abs=1e-7)
    assert res.backend_objective == pytest.approx(want, abs=1e-7)  # the backend's own optimum, before any refinement
    assert res.verify()


def test_dp_equals_hockey_stick_lp_by_cvxpy():
    cp = pytest.importorskip("cvxpy")
    n, shifts, eps, delta = 7, [1, 2, 6, 5], 0.8, 0.1
    f = cp.Variable(n + 1, nonneg=True)
    cons = [cp.sum(f) == 1]
    for mu in shifts:
        g = cp.hstack([f[(e + mu) % (n + 1)] for e in range(n + 1)])
        cons.append(cp.sum(cp.pos(f - np.exp(eps) * g)) <= delta)
    prob = cp.Problem(cp.Minimize(1 - f[0]), cons)
    prob.solve(solver=cp.CLARABEL)
    res = NoiseDesign(n=n, eps=eps, delta=delta, neighborhood=Neighborhood.bd(2), privacy="dp").solve()
    assert res.distortion == pytest.approx(prob.value, abs=1e-6)


# ---------------------------------------------------------------- properties on random instances


def random_instances(seed, count):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(3, 9))
        k = int(rng.integers(1, 4))
        shifts = sorted(set(int(s) for s in rng.integers(1, n + 1, size=k)))
        yield (
            n,
            shifts,
            float(rng.uniform(0.2, 2.0)),
            float(rng.uniform(0.01, 0.4)),
            str(rng.choice(["er", "mse", "circular-mae"])),
            bool(rng.integers(2)),
        )


@pytest.mark.parametrize("inst", list(random_instances(7, 12)))
def test_notion_ordering_and_reverification(inst):
    n, shifts, eps, delta, metric, directed = inst
    nb = Neighborhood.shifts(shifts, directed=directed)
    vals = {}
    for notion in ("dp", "pdp", "pdp-kadam"):
        res = NoiseDesign(n=n, eps=eps, delta=delta, neighborhood=nb, metric=metric, privacy=notion).solve()
        assert res.status == "optimal"
        assert res.verify()
        assert within_delta(res.achieved[notion], delta)
        assert res.pmf.sum() == pytest.approx(1.0)
        vals[notion] = res.distortion
    assert vals["dp"] <= vals["pdp"] + 1e-7 <= vals["pdp-kadam"] + 2e-7


def test_pdp_strictly_better_than_kadam_on_symmetric_bd():
    # The README's example: n=8, symmetric BD(3), eps=1.5, delta=0.1238, error rate.
    nb = Neighborhood.bd(3)
    er = {
        p: NoiseDesign(n=8, eps=1.5, delta=0.1238, neighborhood=nb, privacy=p).solve().distortion
        for p in ("dp", "pdp", "pdp-kadam")
    }
    assert er["dp"] < er["pdp"] - 0.01
    assert er["pdp"] < er["pdp-kadam"] - 0.005


def test_pure_design_is_an_lp_and_notions_coincide():
    results = {}
    for p in ("dp", "pdp", "pdp-kadam"):
        d = NoiseDesign(n=9, eps=0.9, delta=0.0, neighborhood=Neighborhood.bd(3), privacy=p)
        assert not d.build_model().is_mip
        results[p] = d.solve().distortion
    assert results["dp"] == pytest.approx(results["pdp"]) == pytest.approx(results["pdp-kadam"])


# ---------------------------------------------------------------- backends


@pytest.mark.parametrize("privacy, delta", [("dp", 0.1), ("pdp", 0.1), ("pdp-kadam", 0.15), ("pdp", 0.0)])
def test_highs_and_cbc_agree(privacy, delta):
    d = NoiseDesign(n=6, eps=1.0, delta=delta, neighborhood=Neighborhood.bd(2), metric="mse", privacy=privacy)
    a, b = d.solve("highs"), d.solve("cbc")
    assert a.status == b.status == "optimal"
    assert a.backend_objective == pytest.approx(b.backend_objective, abs=1e-6)  # CBC's own optimum
    assert a.distortion == pytest.approx(b.distortion, abs=1e-6)
    assert b.verify() and within_delta(b.achieved[privacy], delta)


def test_cbc_solution_is_refined_to_exact_feasibility():
    # PuLP reads CBC's solution with ~8 significant digits; unrefined, f(0) of this PMF
    # exceeded e^eps f(0+mu) by 2e-8 and the re-verified delta jumped to f(0) = 0.68.
    d = NoiseDesign(n=8, eps=1.5, delta=0.12385, neighborhood=BD3, privacy="pdp-kadam")
    r = d.solve("cbc")
    assert r.verify()
    assert within_delta(r.achieved["pdp-kadam"], 0.12385)
    assert "refined by HiGHS" in r.message


def test_cvxpy_backend_on_lp():
    d = NoiseDesign(n=10, eps=0.7, delta=0.05, neighborhood=Neighborhood.bd(2), metric="mse", privacy="dp")
    assert d.solve("cvxpy").distortion == pytest.approx(d.solve("highs").distortion, abs=1e-6)


def test_to_mps_round_trip(tmp_path):
    import highspy

    d = NoiseDesign(n=8, eps=1.5, delta=0.1238, neighborhood=BD3, privacy="pdp-kadam")
    path = d.to_mps(tmp_path / "kadam.mps")
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(path))
    h.run()
    assert h.getInfo().objective_function_value == pytest.approx(d.solve().distortion, abs=1e-7)


# ---------------------------------------------------------------- objectives and statuses


def test_minimise_delta_is_consistent_with_minimise_distortion():
    nb = Neighborhood.bd(2)
    r = NoiseDesign(n=6, eps=1.0, neighborhood=nb, privacy="dp", objective="delta", max_distortion=0.4).solve()
    assert r.status == "optimal"
    assert r.distortion <= 0.4 + 1e-7
    back = NoiseDesign(n=6, eps=1.0, delta=r.delta_objective, neighborhood=nb, privacy="dp").solve()
    assert back.distortion == pytest.approx(0.4, abs=1e-6)
    assert r.verify()


def test_infeasible_is_a_status():
    cost = np.ones(7)  # every noise value costs 1, so distortion <= 0.5 is impossible
    r = NoiseDesign(
        n=6, eps=1.0, neighborhood=Neighborhood.bd(2), metric=cost, privacy="pdp", objective="delta", max_distortion=0.5
    ).solve()
    assert r.status == "infeasible"
    assert r.pmf is None and not r.verify()


def test_time_limit_is_a_status_with_incumbent():
    d = NoiseDesign(n=120, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(10), privacy="pdp")
    r = d.solve(time_limit=1.0)
    assert r.status in ("time_limit", "optimal")
    if r.status == "time_limit" and r.pmf is not None:
        assert r.gap is not None and r.gap >= 0
        assert within_delta(r.achieved["pdp"], 0.1)


def test_cache_round_trip(tmp_path):
    d = NoiseDesign(n=8, eps=1.5, delta=0.1238, neighborhood=BD3, privacy="pdp-kadam")
    a = d.solve(cache=tmp_path)
    files = list(tmp_path.glob("*.json"))
    assert len(files) == 1
    b = d.solve(cache=tmp_path)
    np.testing.assert_array_equal(a.pmf, b.pmf)
    files[0].write_text("{not json")  # a corrupt entry is solved again, not trusted
    assert d.solve(cache=tmp_path).distortion == pytest.approx(a.distortion)
    json.loads(files[0].read_text())


# ---------------------------------------------------------------- metrics


def test_cost_vectors_hand_values():
    np.testing.assert_array_equal(cost_vector("er", 3), [0, 1, 1, 1])
    np.testing.assert_array_equal(cost_vector("mse", 3), [0, 1, 4, 9])
    np.testing.assert_array_equal(cost_vector("circular-mse", 4), [0, 1, 4, 4, 1])
    np.testing.assert_array_equal(cost_vector("circular-mae", 3), [0, 1, 2, 1])
    np.testing.assert_array_equal(cost_vector("mae", 2, dim=2), [[0, 1, 2], [1, 2, 3], [2, 3, 4]])


def test_custom_cost_equals_named_metric():
    nb = Neighborhood.bd(2)
    a = NoiseDesign(n=6, eps=1.0, delta=0.1, neighborhood=nb, metric="mse", privacy="dp").solve()
    b = NoiseDesign(n=6, eps=1.0, delta=0.1, neighborhood=nb, metric=np.arange(7.0) ** 2, privacy="dp").solve()
    assert a.distortion == pytest.approx(b.distortion)


def test_modulo_errors_by_simulation(rng):
    f = rng.dirichlet(np.ones(6))
    n = 5
    got = modulo_errors(f)
    sq = []
    for q in range(n + 1):
        out = (q + np.arange(n + 1)) % (n + 1)
        sq.append(np.sum(f * (out - q) ** 2))
    assert got["mse_mean"] == pytest.approx(np.mean(sq))
    assert got["mse_worst"] == pytest.approx(np.max(sq))
    assert got["er"] == pytest.approx(1 - f[0])
    # the noise metric charges eta^2 and is never below the actual error at q = 0
    assert np.sum(f * np.arange(n + 1) ** 2) == pytest.approx(sq[0])


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"eps": 0}, "eps"),
        ({"eps": float("nan")}, "eps"),
        ({"eps": float("inf")}, "eps"),
        ({"delta": 1.5}, "delta"),
        ({"delta": -0.1}, "delta"),
        ({"n": 0}, "n"),
        ({"n": 2.5}, "n"),
        ({"metric": "rmse"}, "metric"),
        ({"metric": np.ones(3)}, "cost array"),
        ({"privacy": "rdp"}, "privacy"),
        ({"objective": "accuracy"}, "objective"),
        ({"objective": "delta", "delta": None}, "max_distortion"),
        ({"objective": "delta", "max_distortion": 0.3}, "delta must be left unset"),
        ({"max_distortion": 0.3, "delta": None}, "max_distortion applies"),
        ({"neighborhood": "bd:3"}, "neighborhood"),
        ({"neighborhood": Neighborhood.bd(9)}, "out of range"),
        ({"shape": (9, 9)}, "shape"),
        ({"n": 10**7}, "too large"),
    ],
)
def test_bad_input(kwargs, match):
    base = dict(n=8, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(3))
    base.update(kwargs)
    if base.get("delta") is None:
        base.pop("delta")
    with pytest.raises(ValueError, match=match):
        NoiseDesign(**base)


def test_bad_solver_name():
    d = NoiseDesign(n=4, eps=1.0, neighborhood=Neighborhood.bd(1))
    with pytest.raises(ValueError, match="solver"):
        d.solve(solver="glpk")
    with pytest.raises(ValueError, match="time_limit"):
        d.solve(time_limit=-1)


@pytest.mark.parametrize("inst", list(random_instances(11, 4)))
def test_pdp_formulations_agree(inst):
    n, shifts, eps, delta, metric, directed = inst
    d = NoiseDesign(
        n=n,
        eps=eps,
        delta=delta,
        neighborhood=Neighborhood.shifts(shifts, directed=directed),
        metric=metric,
        privacy="pdp",
    )
    assert d.solve(formulation="bigm").distortion == pytest.approx(d.solve().distortion, abs=1e-7)


def test_modulo_errors_match_the_full_error_table(rng):
    # independent route: the (n+1) x (n+1) table err[q, eta] the O(n) prefix/suffix sums replace
    for n in (1, 6, 41):
        f = rng.dirichlet(np.ones(n + 1))
        q, eta = np.arange(n + 1)[:, None], np.arange(n + 1)[None, :]
        err = np.where(q + eta <= n, eta, n + 1 - eta).astype(float)
        got = modulo_errors(f)
        assert got["mse_mean"] == pytest.approx(float(((err**2) @ f).mean()), rel=1e-12)
        assert got["mse_worst"] == pytest.approx(float(((err**2) @ f).max()), rel=1e-12)
        assert got["mae_mean"] == pytest.approx(float((err @ f).mean()), rel=1e-12)
        assert got["mae_worst"] == pytest.approx(float((err @ f).max()), rel=1e-12)


def test_modulo_errors_at_n_1e5_need_linear_memory():
    f = np.zeros(100_001)
    f[0], f[1], f[-1] = 0.5, 0.25, 0.25
    got = modulo_errors(f)  # a (n+1)^2 table would need 75 GiB
    # by hand: q = 0 pays 1 (eta = 1) and n (eta = n, no wrap), q = n pays n (eta = 1 wraps) and 1, others 1 and 1
    n = 100_000
    assert got["mae_worst"] == pytest.approx(0.25 * (n + 1)) and got["er"] == pytest.approx(0.5)


# ---------------------------------------------------------------- issue 13: statuses mean what they say


def _loose_highs(monkeypatch):
    """HiGHS with loosened feasibility tolerances, as the (now refused) options used to produce."""
    import optnoise.engine.highs as S

    real = S.highs_instance

    def loose(model, **kw):
        h = real(model, **kw)
        for name in ("mip_feasibility_tolerance", "primal_feasibility_tolerance"):
            h.setOptionValue(name, 0.5)
        return h

    monkeypatch.setattr(S, "highs_instance", loose)


def test_loosened_tolerances_are_refused_up_front():
    d = NoiseDesign(n=8, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(3))
    for options in ({"primal_feasibility_tolerance": 0.5}, {"mip_feasibility_tolerance": 0.5}, {"mip_rel_gap": 0.5}):
        with pytest.raises(ValueError, match="options"):
            d.solve(options=options)


def test_a_solution_that_fails_reverification_is_unverified(monkeypatch):
    # issue 13, section 1: at delta = 0.1 the loosened solve reported distortion 0.688 < the true optimum
    # 0.712 with verify() False and status "optimal"
    d = NoiseDesign(n=8, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(3))
    truth = d.solve("highs")
    assert truth.status == "optimal" and truth.verify()
    _loose_highs(monkeypatch)
    res = d.solve("highs")  # HiGHS alone: the test is about its loosened tolerances
    assert res.status == "unverified" and not res.verify()
    assert res.distortion < truth.distortion - 1e-3  # the bogus point is "better" than the optimum
    assert "re-verification failed" in res.message and "pdp" in res.message
    assert res.to_dict()["verified"] is False
    with pytest.raises(ValueError, match="status 'unverified'"):
        res.certify()


def test_a_result_built_with_a_leaking_pmf_is_unverified():
    d = NoiseDesign(n=8, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(3))
    point_mass = np.zeros(9)
    point_mass[0] = 1.0
    res = DesignResult(design=d, status="optimal", pmf=point_mass, solver="highs", solve_time=0.0, model_size={})
    assert res.status == "unverified" and res.achieved["pdp"] == 1.0
    # statuses that claim no solution are kept as they are
    assert DesignResult(
        design=d, status="infeasible", pmf=None, solver="highs", solve_time=0, model_size={}
    ).status == ("infeasible")


def test_small_deltas_are_honoured():
    # issue 13, section 2: DELTA_TOL was an absolute 1e-6, so at delta = 1e-9 a PMF with dp 1.03e-8 was
    # "optimal" and verify() True
    d9 = NoiseDesign(
        n=500, eps=0.1, delta=1e-9, neighborhood=Neighborhood.shifts([1, 2]), privacy="dp", metric="circular-mae"
    )
    d8 = d9.replace(delta=1.03e-8)
    tenfold = d8.solve()
    assert tenfold.status == "optimal" and tenfold.achieved["dp"] > 1e-8
    res = DesignResult(design=d9, status="optimal", pmf=tenfold.pmf, solver="highs", solve_time=0.0, model_size={})
    assert res.status == "unverified" and not res.verify()
    # the design itself is solved to the relative rule (HiGHS' absolute tolerance would leave dp ~1.03e-8)
    good = d9.solve()
    assert good.status == "optimal" and good.achieved["dp"] <= 1e-9 * (1 + 1e-6) + 1e-12
    # and so is a 1e-12 MILP
    tiny = NoiseDesign(n=30, eps=1.0, delta=1e-12, neighborhood=Neighborhood.shifts([11], directed=True), metric="mse")
    for notion in ("pdp", "pdp-kadam", "dp"):
        r = tiny.replace(privacy=notion).solve()
        assert r.status == "optimal" and r.achieved[notion] <= 2e-12


def test_spurious_infeasible_is_retried_and_never_reported():
    # issue 13, section 4: eps = 1e-10 returned "infeasible" although the uniform PMF is feasible
    d = NoiseDesign(n=10, eps=1e-10, neighborhood=Neighborhood.sd(5), metric="mse")
    res = d.solve()
    assert res.status == "optimal" and res.verify()
    assert "re-solved" in res.message
    # independent check: with eps ~ 0 and the symmetric shift 5 generating Z_11, optimal noise is ~uniform
    np.testing.assert_allclose(res.pmf, np.full(11, 1 / 11), atol=1e-6)


def test_persistent_spurious_infeasible_is_an_error(monkeypatch):
    import optnoise.design.settle as D
    from optnoise.engine.output import SolverOutput

    monkeypatch.setattr(
        D, "solve_model", lambda *a, **k: SolverOutput("infeasible", None, None, None, None, 0.0, "highs")
    )
    res = NoiseDesign(n=6, eps=1.0, neighborhood=Neighborhood.bd(2)).solve()
    assert res.status == "error" and "uniform PMF is feasible" in res.message
    # with the delta objective and a cap below the uniform PMF's distortion, infeasible is genuine
    cost = np.ones(7)
    capped = NoiseDesign(
        n=6, eps=1.0, neighborhood=Neighborhood.bd(2), metric=cost, objective="delta", max_distortion=0.5
    )
    assert not capped.uniform_is_feasible()
    assert capped.solve().status == "infeasible"


@pytest.mark.parametrize("eps", [36.0, 43.5, 50.0, 1e3])
def test_large_eps_is_refused_with_a_reason(eps):
    # issue 13: eps above about 43 ended in status "error"
    with pytest.raises(ValueError, match="eps must be <= 34.5"):
        NoiseDesign(n=8, eps=eps, neighborhood=Neighborhood.bd(3))


def test_largest_accepted_eps_solves_correctly():
    # at eps = 34.5 (e^eps ~ 9.6e14) the solve still verifies and matches the closed form: on the symmetric
    # SD(1) ring Z_5 the pure-DP error-rate optimum is the two-sided geometric f(eta) ~ e^(-eps d(eta)), so
    # 1 - f(0) = (2 e^-eps + 2 e^-2eps) / (1 + 2 e^-eps + 2 e^-2eps)
    for eps in (30.0, 34.5):
        res = NoiseDesign(n=4, eps=eps, neighborhood=Neighborhood.bd(1), privacy="dp").solve()
        e = np.exp(-eps)
        assert res.status == "optimal" and res.verify()
        assert res.distortion == pytest.approx((2 * e + 2 * e * e) / (1 + 2 * e + 2 * e * e), rel=1e-9)


def test_huge_costs_are_refused_and_scaled_costs_solve():
    with pytest.raises(ValueError, match="magnitude"):
        NoiseDesign(n=4, eps=1.0, neighborhood=Neighborhood.bd(1), metric=[1e300, 1, 1, 1, 1])
    base = NoiseDesign(n=4, eps=1.0, neighborhood=Neighborhood.bd(1), metric="mse").solve()
    scaled = NoiseDesign(n=4, eps=1.0, neighborhood=Neighborhood.bd(1), metric=cost_vector("mse", 4) * 1e12).solve()
    np.testing.assert_allclose(scaled.pmf, base.pmf, atol=1e-9)


# ---------------------------------------------------------------- issue 13: sizes


def test_oversized_inputs_fail_before_anything_is_built():
    with pytest.raises(ValueError, match="mu_bar"):
        Neighborhood.bd(10**9)  # used to build 10^9 shifts (23 GB)
    with pytest.raises(ValueError, match="too large.*nonzeros|too large.*rows"):
        NoiseDesign(n=1999999, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(10), privacy="pdp")
    with pytest.raises(ValueError, match="out of range"):
        Neighborhood.shifts([2**70]).resolve(8)  # used to wrap around to [[1], [8]]
    with pytest.raises(ValueError, match="out of range"):
        NoiseDesign(n=8, eps=1.0, neighborhood=Neighborhood.shifts([2**63]))


@pytest.mark.parametrize("inst", list(random_instances(13, 8)))
def test_model_size_estimate_is_exact(inst):
    n, shifts, eps, delta, metric, directed = inst
    nb = Neighborhood.shifts(shifts, directed=directed)
    for privacy, d in (("dp", 0.0), ("dp", delta), ("pdp", delta), ("pdp-kadam", delta)):
        design = NoiseDesign(n=n, eps=eps, delta=d, neighborhood=nb, metric=metric, privacy=privacy)
        for formulation in ("hull", "bigm"):
            assert design.model_size(formulation) == design.build_model(formulation=formulation).size
    dd = NoiseDesign(n=n, eps=eps, neighborhood=nb, privacy="pdp", objective="delta", max_distortion=0.5)
    assert dd.model_size() == dd.build_model().size


# ---------------------------------------------------------------- issue 13: cache


def _write_many(path, tag, count):
    from optnoise.engine.io import atomic_write_text

    for i in range(count):
        atomic_write_text(path, json.dumps({"writer": tag, "i": i, "pad": "x" * 2000}))


def test_concurrent_cache_writers_never_collide(tmp_path):
    # issue 13: a shared fixed "<key>.tmp" made two processes writing one entry fail with FileNotFoundError
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    path = tmp_path / "entry.json"
    procs = [ctx.Process(target=_write_many, args=(path, t, 300)) for t in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0]
    assert json.loads(path.read_text())["i"] == 299  # complete, never half-written
    assert [p.name for p in tmp_path.iterdir()] == ["entry.json"]  # no temporary file left


def _solve_cached(cache, count):
    d = NoiseDesign(n=8, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(2), privacy="dp")
    for _ in range(count):
        for f in Path(cache).glob("*.json"):  # force a fresh solve and write every time
            f.unlink(missing_ok=True)
        assert d.solve(cache=cache).status == "optimal"


def test_concurrent_solves_share_a_cache(tmp_path):
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_solve_cached, args=(tmp_path, 60)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
    assert [p.exitcode for p in procs] == [0, 0]


def test_cache_must_be_a_folder(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    d = NoiseDesign(n=4, eps=1.0, neighborhood=Neighborhood.bd(1))
    with pytest.raises(ValueError, match="cache must be a folder"):
        d.solve(cache=f)
    with pytest.raises(ValueError, match="cache must be a folder"):
        d.solve(cache="/etc/passwd")


# ---------------------------------------------------------------- release="clamp" (issue 14)


def test_release_modulo_is_the_default_and_leaves_the_spec_unchanged():
    d = NoiseDesign(n=6, eps=1.0, neighborhood=Neighborhood.bd(1), privacy="dp")
    assert d.release == "modulo" and "release" not in d.spec() and d.shape == (7,)
    assert d.solve().to_dict()["release"] == "modulo"


def test_release_clamp_problem_and_round_trip():
    d = NoiseDesign(
        n=5, eps=1.0, delta=0.05, neighborhood=Neighborhood.bd(1), privacy="dp", metric="mae", release="clamp"
    )
    assert d.shape == (11,) and d.size == 11 and d.cost.tolist() == [5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5]
    assert d.pairs.tolist() == [[0, 1], [1, 0], [1, 2], [2, 1], [2, 3], [3, 2], [3, 4], [4, 3], [4, 5], [5, 4]]
    back = NoiseDesign.from_spec(json.loads(json.dumps(d.spec())))
    assert back.spec() == d.spec() and back.release == "clamp" and back.key() == d.key()
    assert d.replace(delta=0.1).release == "clamp"
    res = d.solve()
    again = DesignResult.from_dict(json.loads(json.dumps(res.to_dict())), design=d)
    assert again.distortion == res.distortion and again.achieved == res.achieved and again.verify()
    assert "release='clamp'" in repr(d)
    custom = NoiseDesign(
        n=3, eps=1.0, neighborhood=Neighborhood.bd(1), privacy="dp", metric=np.ones(7), release="clamp"
    )
    assert custom.metric == "custom" and custom.solve().status == "optimal"


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(release="wrap"), "release must be one of"),
        (dict(release="clamp", privacy="pdp-kadam"), "privacy for release='clamp'"),
        (dict(release="clamp", metric="circular-mse"), "metric must be one of"),
        (dict(release="clamp", metric=np.ones(6)), "metric cost array must have 13 entries"),
        (dict(release="clamp", neighborhood=Neighborhood.shifts([(1, 0)])), "scalar queries"),
    ],
)
def test_release_clamp_bad_input(kw, match):
    base = dict(n=6, eps=1.0, neighborhood=Neighborhood.bd(1), privacy="dp")
    with pytest.raises(ValueError, match=match):
        NoiseDesign(**{**base, **kw})


def test_integer_parameters_are_ints():
    # NoiseDesign(n=8.0, ...) and shape=(9.0,) were accepted; numpy integers are integers
    nb = Neighborhood.bd(3)
    for kw, word in (
        ({"n": 8.0}, "n"),
        ({"n": True}, "n"),
        ({"shape": (9.0,)}, "shape"),
        ({"shape": (True,)}, "shape"),
    ):
        with pytest.raises(ValueError, match=rf"{word} must be an integer \(an int, not a float or bool\)"):
            NoiseDesign(**{"n": 8, "eps": 1.0, "neighborhood": nb, **kw})
    d = NoiseDesign(n=np.int64(8), eps=1.0, neighborhood=nb, shape=(np.int32(9),))
    assert d.n == 8 and type(d.n) is int and d.shape == (9,)
