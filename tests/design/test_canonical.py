"""Canonical optima (NoiseDesign.solve(canonical=True), optnoise.design.canonical): the paper's closed forms,
the primary objective kept, lexicographic minimality, uniqueness across backends, honest failures."""

import numpy as np
import pytest

import optnoise.design.pipeline as design_module
from optnoise import Neighborhood, NoiseDesign
from optnoise.design.canonical import CANONICAL_TOL, CanonicalOutcome, lexicographic_minimax
from optnoise.engine.model import ModelBuilder
from optnoise.engine.output import SolverOutput
from optnoise.engine.solve import solve_model
from optnoise.mechanisms import closed_form

#: The primary objective of a canonical solve may differ from the plain one by this (relative, floor 1).
PRIMARY_TOL = 2 * CANONICAL_TOL


def lex_le(a, b, tol=1e-8):
    """True when the masses of ``a``, sorted from the largest down, are lexicographically <= those of ``b``."""
    sa, sb = np.sort(np.ravel(a))[::-1], np.sort(np.ravel(b))[::-1]
    for x, y in zip(sa, sb, strict=True):
        if x < y - tol:
            return True
        if x > y + tol:
            return False
    return True


# ---------------------------------------------------------------- against hand values and the closed forms


def test_lexicographic_minimax_hand_case():
    """Over {f >= 0, sum f = 1, f_0 >= 1/2} with no objective, the most even point is (1/2, 1/10 x 5)."""
    mb = ModelBuilder()
    f = mb.add_vars(6, lb=0.0, ub=1.0, name="f")
    mb.add_row(f, 1.0, lower=1.0, upper=1.0)
    mb.add_row(f[:1], [1.0], lower=0.5)
    model = mb.build()
    x0 = np.array([0.5, 0.5, 0, 0, 0, 0])  # a vertex: the solver's kind of answer
    out = lexicographic_minimax(model, x0, "f", lambda m, start: solve_model(m), total=1.0)
    assert out.message == ""
    np.testing.assert_allclose(out.x, [0.5, 0.1, 0.1, 0.1, 0.1, 0.1], atol=1e-12)


@pytest.mark.parametrize(
    "n, mu_bar, eps, deltas",
    [
        (11, 5, 1.0, (0.01, 0.1044, 0.2, 0.29, 0.5, 0.9)),  # flat 0, linear, flat (1,1), segment b
        (15, 5, 1.0, (0.05, 0.12, 0.2, 0.7)),  # b = 3: flat (1,1), (2,1), (2,2), segment b
    ],
)
def test_canonical_optimum_is_the_closed_form_where_that_is_the_most_even_optimum(n, mu_bar, eps, deltas):
    """Theorem 3: flat regions (unique PMF) and segment b ((40)-(41)); linear regions with j = h (the
    staircase of the next flat region with the remaining mass spread evenly over its last group)."""
    nb = Neighborhood.bd(mu_bar, directed=True)
    for d in deltas:
        r = NoiseDesign(n=n, eps=eps, delta=d, neighborhood=nb, privacy="pdp-kadam").solve(canonical=True)
        assert r.canonical is True, r.message
        np.testing.assert_allclose(r.pmf, closed_form.bd_pmf(n, mu_bar, eps, delta=d), atol=1e-8, err_msg=str(d))


def test_canonical_optimum_is_more_even_than_the_closed_form_in_a_linear_region_with_j_below_h():
    """n=15, mu_bar=5, eps=1, delta=0.0997 lies in the linear region before flat (2,1): bd_pmf keeps a
    singleton last group (0.01642 after five 0.01349); the canonical optimum spreads that mass (0.01398 x 6)."""
    n, mu_bar, eps, d = 15, 5, 1.0, 0.0997
    r = NoiseDesign(n=n, eps=eps, delta=d, neighborhood=Neighborhood.bd(mu_bar, directed=True), privacy="pdp-kadam")
    res = r.solve(canonical=True)
    ref = closed_form.bd_pmf(n, mu_bar, eps, delta=d)
    assert res.pmf[0] == pytest.approx(ref[0], abs=1e-9)
    assert res.achieved["pdp-kadam"] <= d + 1e-9 and r.solve().distortion == pytest.approx(1 - ref[0], abs=1e-9)
    assert lex_le(res.pmf, ref) and not np.allclose(res.pmf, ref, atol=1e-6)
    np.testing.assert_allclose(res.pmf[10:], np.full(6, res.pmf[10]), atol=1e-9)


# ---------------------------------------------------------------- the primary objective and minimality


def random_designs(seed, count):
    rng = np.random.default_rng(seed)
    for i in range(count):
        n = int(rng.integers(3, 9))
        shifts = sorted({int(s) for s in rng.integers(1, n + 1, size=int(rng.integers(1, 4)))})
        nb = Neighborhood.shifts(shifts, directed=bool(rng.integers(2)))
        privacy = ("dp", "pdp", "pdp-kadam")[i % 3]
        eps = float(np.round(rng.uniform(0.3, 2.0), 2))
        metric = str(rng.choice(["er", "circular-mse", "mae"]))
        if i % 4 == 3:  # minimise delta under a distortion cap halfway between pure DP's and 0
            cap = float(NoiseDesign(n=n, eps=eps, neighborhood=nb, metric=metric).solve().distortion) / 2
            yield dict(
                n=n, eps=eps, neighborhood=nb, metric=metric, privacy=privacy, objective="delta", max_distortion=cap
            )
        else:
            delta = float(np.round(rng.uniform(0.0, 0.6), 3))
            yield dict(n=n, eps=eps, delta=delta, neighborhood=nb, metric=metric, privacy=privacy)


@pytest.mark.parametrize("spec", list(random_designs(11, 16)), ids=lambda s: f"{s['privacy']}-{s.get('objective')}")
def test_canonical_keeps_the_primary_objective_and_is_lexicographically_smallest(spec):
    d = NoiseDesign(**spec)
    plain, canon = d.solve(), d.solve(canonical=True)
    assert plain.status == canon.status == "optimal"
    assert canon.canonical is True, canon.message
    assert canon.verify()
    if d.objective == "distortion":
        assert abs(canon.distortion - plain.distortion) <= PRIMARY_TOL * max(1.0, plain.distortion)
    else:
        assert abs(canon.delta_objective - plain.delta_objective) <= PRIMARY_TOL
        assert canon.distortion <= spec["max_distortion"] + 1e-8
    # equal up to round-off: under load the auto race may answer from HiGHS once and from SCIP once
    assert canon.backend_objective == pytest.approx(plain.backend_objective, rel=1e-12, abs=1e-15)
    assert lex_le(canon.pmf, plain.pmf)


@pytest.mark.parametrize("neighborhood", [Neighborhood.bd(2), Neighborhood.shifts([1, 3])], ids=["bd2", "1,3"])
def test_canonical_lp_optimum_is_unique_across_backends_and_keeps_symmetry(neighborhood):
    """An LP's lexicographic minimax point is unique: the simplex (HiGHS) and an interior-point
    method (Clarabel through cvxpy) reach the same PMF, and a reflection-symmetric problem gets a
    symmetric one."""
    pytest.importorskip("cvxpy")
    d = NoiseDesign(n=7, eps=0.6, delta=0.15, neighborhood=neighborhood, metric="er", privacy="dp")
    a, b = d.solve(canonical=True), d.solve(solver="cvxpy", canonical=True)
    assert a.canonical and b.canonical
    np.testing.assert_allclose(a.pmf, b.pmf, atol=1e-6)
    if neighborhood.directed is False and neighborhood.describe().startswith("BD"):
        np.testing.assert_allclose(a.pmf[1:], a.pmf[1:][::-1], atol=1e-9)


# ---------------------------------------------------------------- statuses, cache


def test_failed_stage_returns_the_first_stage_optimum_and_says_so(monkeypatch):
    d = NoiseDesign(n=8, eps=1.5, delta=0.6, neighborhood=Neighborhood.bd(3, directed=True), privacy="pdp-kadam")
    plain = d.solve()
    monkeypatch.setattr(
        design_module,
        "lexicographic_minimax",
        lambda *a, **k: CanonicalOutcome(None, 1, 0.0, "canonical stage 1 ended 'time_limit' (Time limit reached)"),
    )
    res = d.solve(canonical=True)
    assert res.status == "optimal" and res.canonical is False
    np.testing.assert_array_equal(res.pmf, plain.pmf)
    assert "canonical stage 1 ended 'time_limit'" in res.message and "first-stage optimum is returned" in res.message


def test_a_stage_that_fails_is_reported_by_lexicographic_minimax():
    mb = ModelBuilder()
    f = mb.add_vars(3, lb=0.0, ub=1.0, name="f")
    mb.add_row(f, 1.0, lower=1.0, upper=1.0)
    model = mb.build()

    def fail(m, start):
        return SolverOutput("infeasible", None, None, None, None, 0.01, "highs", message="Infeasible")

    out = lexicographic_minimax(model, np.array([1.0, 0, 0]), "f", fail, total=1.0)
    assert out.x is None and out.stages == 1 and "stage 1 ended 'infeasible'" in out.message


def test_canonical_of_an_infeasible_design_is_not_attempted():
    d = NoiseDesign(
        n=6, eps=1.0, neighborhood=Neighborhood.bd(2), metric=np.ones(7), objective="delta", max_distortion=0.5
    )
    res = d.solve(canonical=True)
    assert res.status == "infeasible" and res.pmf is None and res.canonical is False


def test_canonical_time_limit_bounds_all_stages():
    d = NoiseDesign(n=16, eps=1.0, delta=0.1, neighborhood=Neighborhood.shifts([1, 3, 5, 6], directed=True))
    res = d.solve(canonical=True, time_limit=1e-6)
    assert res.canonical is not True
    assert res.status in ("time_limit", "optimal")


def test_canonical_results_are_cached_apart_from_plain_ones(tmp_path):
    d = NoiseDesign(n=8, eps=1.5, delta=0.6, neighborhood=Neighborhood.bd(3, directed=True), privacy="pdp-kadam")
    plain, canon = d.solve(cache=tmp_path), d.solve(cache=tmp_path, canonical=True)
    assert len(list(tmp_path.glob("*.json"))) == 2
    again = d.solve(cache=tmp_path, canonical=True)
    assert again.canonical is True and plain.canonical is None
    np.testing.assert_array_equal(again.pmf, canon.pmf)
