"""General mechanism design: known optima (GRS 2009, GS 2010), orderings, cross-checks, lazy rows, certification."""

import itertools
import json
import math
from fractions import Fraction

import cvxpy as cp
import numpy as np
import pytest
from scipy.optimize import linprog
from scipy.stats import chisquare

from optnoise import MechanismDesign, MechanismResult, Neighborhood, NoiseDesign, mechanism_delta
from optnoise.deploy.certified import CertifiedMechanism, load_design
from optnoise.deploy.certify import CertificationError
from optnoise.design.clamp import clamp_matrix
from optnoise.design.matrix import resolve_pairs
from optnoise.engine.solve import solve_model
from optnoise.privacy.exact import exp_bounds
from optnoise.privacy.noise_families import IntegerNoise
from optnoise.privacy.verification import dp_eps

# ---------------------------------------------------------------- independent references


def truncated_geometric(n: int, eps: float) -> np.ndarray:
    """The truncated geometric mechanism of Ghosh et al. (2009), written from its closed form."""
    a = math.exp(-eps)
    x = np.arange(n + 1)[:, None]
    z = np.arange(n + 1)[None, :]
    G = (1 - a) / (1 + a) * a ** np.abs(z - x)
    G[:, 0] = a ** np.arange(n + 1) / (1 + a)
    G[:, n] = a ** (n - np.arange(n + 1)) / (1 + a)
    return G


def loss_of(name: str, n: int) -> np.ndarray:
    x = np.arange(n + 1)[:, None]
    y = np.arange(n + 1)[None, :]
    return {"abs": np.abs(y - x), "sq": (y - x) ** 2.0, "er": (y != x) * 1.0}[name].astype(float)


def bayes_remap_loss(G: np.ndarray, prior: np.ndarray, L: np.ndarray) -> float:
    """The user's optimal deterministic remap of G's output z: argmin_y sum_x prior(x) G[x, z] L[x, y]."""
    joint = prior[:, None] * G  # (x, z)
    per_z_y = joint.T @ L  # (z, y): expected loss of answering y after seeing z
    return float(per_z_y.min(axis=1).sum())


def minimax_remap_loss(G: np.ndarray, L: np.ndarray) -> float:
    """Gupte-Sundararajan: min over stochastic remaps T[z, y] of max_x sum_z G[x, z] sum_y T[z, y] L[x, y]."""
    nz, ny = G.shape[1], L.shape[1]
    nx = G.shape[0]
    nv = nz * ny + 1  # T flattened, then the epigraph t
    c = np.zeros(nv)
    c[-1] = 1.0
    A_ub = np.zeros((nx, nv))
    for x in range(nx):
        A_ub[x, :-1] = (G[x][:, None] * L[x][None, :]).ravel()
        A_ub[x, -1] = -1.0
    A_eq = np.zeros((nz, nv))
    for z in range(nz):
        A_eq[z, z * ny : (z + 1) * ny] = 1.0
    bounds = [(0, None)] * (nv - 1) + [(None, None)]
    r = linprog(c, A_ub=A_ub, b_ub=np.zeros(nx), A_eq=A_eq, b_eq=np.ones(nz), bounds=bounds, method="highs")
    assert r.status == 0
    return float(r.fun)


def cvxpy_optimum(n, eps, delta, L, prior=None, minimax=False, pairs=None):
    """The (eps, delta)-DP mechanism LP written independently in cvxpy (hockey stick with cp.pos)."""
    C = L.shape[1]
    P = cp.Variable((n + 1, C), nonneg=True)
    pairs = resolve_pairs("adjacent", n) if pairs is None else pairs
    cons = [cp.sum(P, axis=1) == 1]
    E = math.exp(eps)
    for a, b in pairs:
        cons.append(cp.sum(cp.pos(P[a] - E * P[b])) <= delta)
    per_x = cp.sum(cp.multiply(P, L), axis=1)
    obj = cp.max(per_x) if minimax else (np.full(n + 1, 1 / (n + 1)) if prior is None else prior) @ per_x
    prob = cp.Problem(cp.Minimize(obj), cons)
    prob.solve(solver=cp.CLARABEL, tol_feas=1e-10, tol_gap_abs=1e-10, tol_gap_rel=1e-10)
    return float(prob.value)


# ---------------------------------------------------------------- known theorems


PRIORS = {
    "uniform": lambda n, rng: np.full(n + 1, 1 / (n + 1)),
    "dirichlet": lambda n, rng: rng.dirichlet(np.ones(n + 1)),
    "peaked": lambda n, rng: (lambda w: w / w.sum())(np.exp(-0.5 * ((np.arange(n + 1) - n / 3) / 1.5) ** 2)),
}


@pytest.mark.parametrize("n,eps", [(3, 0.3), (8, 1.0), (15, 2.0), (12, 0.5)])
@pytest.mark.parametrize("prior", sorted(PRIORS))
@pytest.mark.parametrize("loss", ["abs", "sq"])
def test_ghosh_roughgarden_sundararajan_bayes_optimum(n, eps, prior, loss, rng):
    """GRS 2009: the pure-DP Bayesian optimum = truncated geometric + the user's optimal deterministic remap."""
    p = PRIORS[prior](n, rng)
    res = MechanismDesign(n=n, eps=eps, loss=loss, prior=p).solve()
    assert res.status == "optimal" and res.verify()
    ref = bayes_remap_loss(truncated_geometric(n, eps), p, loss_of(loss, n))
    assert res.loss == pytest.approx(ref, rel=1e-6)


def test_grs_remap_is_not_the_identity_somewhere(rng):
    """The test above has power: on a skewed prior the remap strictly improves on the plain geometric."""
    n, eps = 8, 0.5
    p = PRIORS["peaked"](n, rng)
    G, L = truncated_geometric(n, eps), loss_of("sq", n)
    plain = float(p @ (G * L).sum(axis=1))
    remapped = bayes_remap_loss(G, p, L)
    assert remapped < plain - 1e-3
    assert MechanismDesign(n=n, eps=eps, loss="sq", prior=p).solve().loss == pytest.approx(remapped, rel=1e-6)


@pytest.mark.parametrize("n,eps", [(3, 0.5), (6, 1.0), (10, 2.0), (8, 0.3)])
@pytest.mark.parametrize("loss", ["abs", "sq"])
def test_gupte_sundararajan_minimax_optimum(n, eps, loss):
    """GS 2010: the minimax optimum = geometric mechanism + an optimal randomized remap (a separate LP)."""
    res = MechanismDesign(n=n, eps=eps, loss=loss, objective="minimax").solve()
    assert res.status == "optimal" and res.verify()
    ref = minimax_remap_loss(truncated_geometric(n, eps), loss_of(loss, n))
    assert res.loss == pytest.approx(ref, rel=1e-6)
    # the loss is the worst input's
    per_x = (res.matrix * loss_of(loss, n)).sum(axis=1)
    assert res.loss == pytest.approx(per_x.max(), rel=1e-12)


# ---------------------------------------------------------------- cross-checks


@pytest.mark.parametrize(
    "n,eps,delta,loss,minimax",
    [(3, 1.0, 0.05, "abs", False), (4, 0.5, 0.1, "sq", False), (5, 1.5, 0.01, "er", False), (4, 1.0, 0.05, "sq", True)],
)
def test_lp_equals_independent_cvxpy_formulation(n, eps, delta, loss, minimax, rng):
    prior = None if minimax else rng.dirichlet(np.ones(n + 1))
    res = MechanismDesign(
        n=n, eps=eps, delta=delta, loss=loss, prior=prior, objective="minimax" if minimax else "bayes"
    ).solve()
    ref = cvxpy_optimum(n, eps, delta, loss_of(loss, n), prior=prior, minimax=minimax)
    assert res.loss == pytest.approx(ref, rel=1e-6, abs=1e-9)


def test_pdp_milp_equals_brute_force_over_leak_patterns():
    """Definition 2 per ordered pair: the MILP optimum equals the best LP over every fixed leak pattern."""
    n, eps, delta = 2, 0.7, 0.15
    outputs = 1  # outputs {0, 1}
    L = np.abs(np.arange(2)[None, :] - np.arange(3)[:, None]).astype(float)
    pairs = resolve_pairs("adjacent", n)
    K, C = len(pairs), 2
    E = math.exp(eps)
    best = math.inf
    for bits in itertools.product((0, 1), repeat=K * C):
        leak = np.array(bits).reshape(K, C)
        A, b = [], []
        for k, (a, bb) in enumerate(pairs):
            for y in range(C):
                if not leak[k, y]:
                    row = np.zeros((n + 1) * C)
                    row[a * C + y] += 1
                    row[bb * C + y] -= E
                    A.append(row)
                    b.append(0.0)
            row = np.zeros((n + 1) * C)
            for y in range(C):
                if leak[k, y]:
                    row[a * C + y] = 1.0
            A.append(row)
            b.append(delta)
        Aeq = np.kron(np.eye(n + 1), np.ones(C))
        r = linprog((L / (n + 1)).ravel(), A_ub=np.array(A), b_ub=b, A_eq=Aeq, b_eq=np.ones(n + 1), method="highs")
        if r.status == 0:
            best = min(best, r.fun)
    res = MechanismDesign(n=n, eps=eps, delta=delta, outputs=outputs, privacy="pdp").solve()
    assert res.status == "optimal" and res.verify()
    assert res.loss == pytest.approx(best, abs=1e-9)
    big = MechanismDesign(n=n, eps=eps, delta=delta, outputs=outputs, privacy="pdp").solve(formulation="bigm")
    assert big.loss == pytest.approx(best, abs=1e-9)


def _flat(n):
    """The error rate as a custom loss matrix, which takes the lazy path ("er" itself solves the full model)."""
    return 1.0 - np.eye(n + 1)


def test_lazy_rows_reach_the_full_models_optimum():
    for loss, eps, delta in (("abs", 2.0, 0.01), (_flat(60), 1.5, 0.001), ("sq", 3.0, 0.0)):
        d = MechanismDesign(n=60, eps=eps, delta=delta, loss=loss)
        assert d.initial_rows() is not None  # the lazy path is taken
        res = d.solve()
        full = solve_model(d.build_model())
        assert res.status == full.status == "optimal"
        assert res.loss == pytest.approx(full.objective, rel=1e-7, abs=1e-10)
        assert res.verify()
        assert res.model_size["rows"] < d.build_model().shape[0]


def test_lazy_rows_add_rows_when_the_start_is_too_small():
    d = MechanismDesign(n=40, eps=1.0, delta=0.01, loss=_flat(40))
    res = d.solve()
    assert res.rounds > 1
    assert res.loss == pytest.approx(solve_model(d.build_model()).objective, rel=1e-7)


def test_error_rate_solves_the_full_model_and_matches_its_optimum():
    # measured faster than the lazy rounds (benchmarks/RESULTS.md); the same optimum as the lazy path
    d = MechanismDesign(n=40, eps=1.0, delta=0.01, loss="er")
    assert d.initial_rows() is None
    res = d.solve()
    assert res.status == "optimal" and res.rounds == 1 and res.verify()
    lazy = MechanismDesign(n=40, eps=1.0, delta=0.01, loss=_flat(40)).solve()
    assert res.loss == pytest.approx(lazy.loss, rel=2e-6)


# ---------------------------------------------------------------- orderings on random instances


LOSS_TO_METRIC = {"abs": ("mae", "mae_mean"), "sq": ("mse", "mse_mean"), "er": ("er", "er")}
MODULO_METRIC = {"abs": "circular-mae", "sq": "circular-mse", "er": "er"}


@pytest.mark.parametrize("seed", range(6))
def test_orderings_on_random_instances(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 9))
    eps = float(rng.uniform(0.3, 2.0))
    delta = float(rng.choice([0.0, 0.01, 0.1]))
    loss = str(rng.choice(["abs", "sq", "er"]))
    metric, key = LOSS_TO_METRIC[loss]
    general = MechanismDesign(n=n, eps=eps, delta=delta, loss=loss).solve()
    clamp = NoiseDesign(
        n=n, eps=eps, delta=delta, neighborhood=Neighborhood.bd(1), privacy="dp", metric=metric, release="clamp"
    ).solve()
    modulo = NoiseDesign(
        n=n, eps=eps, delta=delta, neighborhood=Neighborhood.bd(1), privacy="dp", metric=MODULO_METRIC[loss]
    ).solve()
    tol = 1e-9
    assert general.loss <= clamp.distortion + tol  # clamped noise is one mechanism
    assert clamp.distortion == pytest.approx(clamp.actual[key], rel=1e-12)
    assert general.loss <= modulo.actual[key] + tol  # so is the modulo release
    pdp = MechanismDesign(n=n, eps=eps, delta=max(delta, 0.05), loss=loss, privacy="pdp").solve()
    dp = MechanismDesign(n=n, eps=eps, delta=max(delta, 0.05), loss=loss).solve()
    assert pdp.loss >= dp.loss - tol  # PDP implies DP
    pure = MechanismDesign(n=n, eps=eps, loss=loss).solve()
    assert pure.loss >= general.loss - tol  # pure eps-DP is the strictest
    assert pure.loss >= dp.loss - tol
    # and the clamped optimum never loses to the truncated geometric mechanism (pure DP)
    G = truncated_geometric(n, eps)
    geo = float(((G * loss_of(loss, n)).sum(axis=1)).mean())
    pure_clamp = NoiseDesign(
        n=n, eps=eps, neighborhood=Neighborhood.bd(1), privacy="dp", metric=metric, release="clamp"
    ).solve()
    assert pure.loss <= pure_clamp.distortion + tol <= geo + 2 * tol


# ---------------------------------------------------------------- re-verification


def test_achieved_is_mechanism_delta_and_within_tolerance():
    for privacy, delta in (("dp", 0.0), ("dp", 0.02), ("pdp", 0.1)):
        d = MechanismDesign(n=6, eps=0.8, delta=delta, privacy=privacy, neighbors="adjacent:2")
        res = d.solve()
        assert res.verify()
        # at delta = 0 every notion is read at the slackened eps of the tolerance rule (optnoise.privacy.verification)
        assert res.achieved["dp"] == mechanism_delta(res.matrix, d.pairs, dp_eps(0.8, delta == 0.0))
        assert res.achieved[privacy] <= delta + 1e-8
        np.testing.assert_allclose(res.matrix.sum(axis=1), 1.0, atol=1e-12)
        assert res.matrix.shape == (7, 7) and res.matrix.min() >= 0


def test_minimise_delta_objective():
    d0 = MechanismDesign(n=6, eps=1.0, delta=0.05, loss="sq").solve()
    d = MechanismDesign(n=6, eps=1.0, loss="sq", objective="delta", max_loss=d0.loss)
    res = d.solve()
    assert res.status == "optimal" and res.verify()
    assert res.delta_objective == pytest.approx(0.05, abs=1e-7)
    assert res.loss <= d0.loss + 1e-9
    # every mechanism has Bayes loss 1 under an all-ones loss matrix: a cap of 0.5 is infeasible
    # (a negative cap is refused up front, like max_distortion: test_max_loss_is_validated_like_max_distortion)
    bad = MechanismDesign(n=6, eps=1.0, objective="delta", loss=np.ones((7, 7)), max_loss=0.5).solve()
    assert bad.status == "infeasible" and bad.matrix is None and not bad.verify()


def test_outputs_loss_matrix_and_pairs():
    # outputs as values: a coarser range {0, 2, 4, 6}
    res = MechanismDesign(n=6, eps=1.0, delta=0.01, outputs=[0, 2, 4, 6], loss="sq").solve()
    assert res.matrix.shape == (7, 4)
    assert res.loss >= MechanismDesign(n=6, eps=1.0, delta=0.01, loss="sq").solve().loss - 1e-9
    # a custom loss matrix equal to "abs" gives the same optimum
    L = loss_of("abs", 5)
    assert MechanismDesign(n=5, eps=1.0, loss=L).solve().loss == pytest.approx(
        MechanismDesign(n=5, eps=1.0).solve().loss, rel=1e-9
    )
    # a pair list, symmetric by default, directed on request
    assert resolve_pairs([(0, 1), (2, 3)], 4).tolist() == [[0, 1], [1, 0], [2, 3], [3, 2]]
    assert resolve_pairs([(0, 1)], 4, directed=True).tolist() == [[0, 1]]
    within2 = [(0, 1), (1, 2), (2, 3), (0, 2), (1, 3)]
    assert resolve_pairs("adjacent:2", 3).tolist() == resolve_pairs(within2, 3).tolist()
    assert resolve_pairs("bd:1", 3).tolist() == resolve_pairs("adjacent", 3).tolist()
    nb = Neighborhood.from_data(np.array([1.0, 2.0, 3.0, 4.0]), lambda X: int(len(X)), n=6)
    assert resolve_pairs(nb, 6).tolist() == resolve_pairs("adjacent", 6).tolist()
    d = MechanismDesign(n=4, eps=1.0, delta=0.1, neighbors=[(0, 1)], directed=True)
    res = d.solve()
    assert res.achieved["dp"] <= 0.1 + 1e-9
    assert mechanism_delta(res.matrix, [(1, 0)], 1.0) > 0.1  # the reverse direction is not protected


# ---------------------------------------------------------------- clamped additive noise


def test_clamp_matrix_matches_integer_noise_clamping(rng):
    n = 5
    f = rng.dirichlet(np.ones(2 * n + 1))
    ref = IntegerNoise("x", {}, np.arange(-n, n + 1), f).clamped_matrix(n)
    np.testing.assert_allclose(clamp_matrix(f, n), ref, atol=1e-15)


def test_clamp_design_equals_independent_cvxpy_formulation():
    n, eps, delta = 4, 1.0, 0.05
    f = cp.Variable(2 * n + 1, nonneg=True)
    # P[q, y] as affine expressions of f, built from the definition of clip
    rows = []
    for q in range(n + 1):
        row = [0] * (n + 1)
        for i in range(2 * n + 1):
            y = min(max(q + i - n, 0), n)
            row[y] = row[y] + f[i]
        rows.append(row)
    E = math.exp(eps)
    cons = [cp.sum(f) == 1]
    for a, b in resolve_pairs("adjacent", n):
        cons.append(sum(cp.pos(rows[a][y] - E * rows[b][y]) for y in range(n + 1)) <= delta)
    obj = sum((y - q) ** 2 * rows[q][y] for q in range(n + 1) for y in range(n + 1)) / (n + 1)
    prob = cp.Problem(cp.Minimize(obj), cons)
    prob.solve(solver=cp.CLARABEL, tol_feas=1e-10, tol_gap_abs=1e-10, tol_gap_rel=1e-10)
    res = NoiseDesign(
        n=n, eps=eps, delta=delta, neighborhood=Neighborhood.bd(1), privacy="dp", metric="mse", release="clamp"
    ).solve()
    assert res.status == "optimal" and res.verify()
    assert res.pmf.shape == (2 * n + 1,)
    assert res.distortion == pytest.approx(prob.value, rel=1e-6)


def test_clamp_pdp_is_a_milp_at_least_dp():
    kw = dict(n=5, eps=1.0, delta=0.1, neighborhood=Neighborhood.bd(1), metric="mae", release="clamp")
    pdp = NoiseDesign(privacy="pdp", **kw)
    assert pdp.build_model().is_mip
    r_pdp, r_dp = pdp.solve(), NoiseDesign(privacy="dp", **kw).solve()
    assert r_pdp.verify() and r_dp.verify()
    assert r_pdp.distortion >= r_dp.distortion - 1e-9
    assert r_pdp.achieved["pdp"] <= 0.1 + 1e-8


# ---------------------------------------------------------------- certification and exact release


@pytest.fixture(scope="module")
def cert_dp():
    return MechanismDesign(n=6, eps=1.0, delta=0.02, loss="sq").solve().certify()


def test_certificates_hold_exactly():
    for kw in (dict(delta=0.02), dict(delta=0.0), dict(delta=0.1, privacy="pdp"), dict(objective="minimax")):
        res = MechanismDesign(n=5, eps=1.0, **kw).solve()
        cd = res.certify()
        assert isinstance(cd, CertifiedMechanism) and cd.verify()
        assert cd.certified_delta <= Fraction(kw.get("delta", 0.0))
        assert cd.weights.shape == (6, 6) and np.all(cd.weights.sum(axis=1) == 2**62)
        assert 0 <= cd.repair["loss"] <= 1e-6 * max(1, res.loss)
        # independent exact check of every ordered pair, with Fractions
        lo, _ = exp_bounds(1.0)
        worst = Fraction(0)
        for a, b in res.design.pairs:
            W = [Fraction(int(v), 2**62) for v in cd.weights[a]]
            V = [Fraction(int(v), 2**62) for v in cd.weights[b]]
            if res.design.privacy == "dp":
                tot = sum((max(Fraction(0), w - lo * v) for w, v in zip(W, V, strict=True)), Fraction(0))
            else:
                tot = sum((w for w, v in zip(W, V, strict=True) if w > lo * v), Fraction(0))
            worst = max(worst, tot)
        assert worst == cd.certified_delta


def test_clamped_noise_design_is_certified_as_its_matrix():
    res = NoiseDesign(
        n=6, eps=1.0, delta=0.02, neighborhood=Neighborhood.bd(1), privacy="dp", metric="mse", release="clamp"
    ).solve()
    cd = res.certify()
    assert isinstance(cd, CertifiedMechanism) and cd.verify() and cd.weights.shape == (7, 7)
    assert np.abs(cd.matrix_float - clamp_matrix(res.pmf, 6)).max() < 1e-6


def test_lookup_enumerates_exactly_the_weights():
    cd = MechanismDesign(n=4, eps=1.0, delta=0.05).solve().certify(bits=16, max_loss=math.inf)
    for x in range(5):
        counts = np.bincount(cd._lookup(x, np.arange(2**16, dtype=np.int64)), minlength=5)
        assert counts.tolist() == cd.weights[x].tolist()


def test_release_distribution_chi_square(cert_dp):
    cd = cert_dp
    for x in (0, 3, 6):
        out = cd.release(np.full(200_000, x), rng=np.random.default_rng(x))
        obs = np.bincount(out, minlength=7)
        assert chisquare(obs, cd.matrix_float[x] * 200_000).pvalue > 1e-3
    # the test has power: row 3's draws against row 2's probabilities fail
    out = cd.release(np.full(200_000, 3), rng=np.random.default_rng(9))
    assert chisquare(np.bincount(out, minlength=7), cd.matrix_float[2] * 200_000).pvalue < 1e-6
    v = cd.release(2)
    assert isinstance(v, int) and 0 <= v <= 6
    assert cd.release([[0, 6], [1, 2]]).shape == (2, 2)
    for bad in (7, -1, 2.5, "3", []):
        with pytest.raises(ValueError, match="x must be"):
            cd.release(bad)
    with pytest.raises(ValueError, match="rng must be None"):
        cd.release(3, rng=1)


def test_release_of_output_values():
    cd = MechanismDesign(n=4, eps=1.0, delta=0.05, outputs=[0.0, 1.5, 4.0]).solve().certify()
    out = cd.release(np.arange(5).repeat(100), rng=np.random.default_rng(1))
    assert set(np.unique(out).tolist()) <= {0.0, 1.5, 4.0}


def test_save_load_round_trip_and_tamper(cert_dp, tmp_path):
    path = cert_dp.save(tmp_path / "mech.json")
    back = load_design(path)
    assert isinstance(back, CertifiedMechanism) and back.verify()
    assert np.array_equal(back.weights, cert_dp.weights) and back.certified_delta == cert_dp.certified_delta
    assert back.design.spec() == cert_dp.design.spec()
    data = json.loads(path.read_text())
    data["weights"][0], data["weights"][1] = data["weights"][1], data["weights"][0]
    (tmp_path / "bad.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match="sha256"):
        load_design(tmp_path / "bad.json")


def test_certify_refuses_what_it_cannot_certify():
    res = MechanismDesign(n=4, eps=1.0, objective="delta", loss=np.ones((5, 5)), max_loss=0.5).solve()
    with pytest.raises(CertificationError, match="has no matrix"):
        res.certify()
    good = MechanismDesign(n=5, eps=1.0, delta=0.05).solve()
    with pytest.raises(CertificationError, match="cannot certify"):
        good.certify(delta=0.0, max_loss=0.0)


# ---------------------------------------------------------------- the problem object


def test_spec_round_trip_replace_and_cache(tmp_path):
    nb = Neighborhood.bd(2)
    for d in (
        MechanismDesign(n=5, eps=1.0, delta=0.1, loss="er", prior=np.arange(6) / 15, privacy="pdp"),
        MechanismDesign(n=5, eps=1.0, neighbors=[(0, 1), (3, 4)], directed=True, outputs=[0, 5]),
        MechanismDesign(n=5, eps=1.0, neighbors=nb, loss=loss_of("sq", 5), objective="minimax"),
        MechanismDesign(n=5, eps=1.0, objective="delta", max_loss=1.0),
    ):
        back = MechanismDesign.from_spec(json.loads(json.dumps(d.spec())))
        assert back.spec() == d.spec() and back.key() == d.key()
    d = MechanismDesign(n=5, eps=1.0, delta=0.1)
    assert d.replace(delta=0.2).delta == 0.2 and d.key() != d.replace(delta=0.2).key()
    with pytest.raises(ValueError, match="pairs"):
        MechanismDesign.from_spec({**d.spec(), "pairs": [[0, 1]]})
    r1 = d.solve(cache=tmp_path)
    r2 = d.solve(cache=tmp_path)
    assert isinstance(r2, MechanismResult) and r2.loss == r1.loss and len(list(tmp_path.iterdir())) == 1
    assert MechanismResult.from_dict(r1.to_dict(), design=d).achieved == r1.achieved


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(n=0, eps=1.0), "n must be"),
        (dict(n=5, eps=0.0), "eps must be"),
        (dict(n=5, eps=1.0, delta=2.0), "delta must be"),
        (dict(n=5, eps=1.0, privacy="pdp-kadam"), "privacy must be one of"),
        (dict(n=5, eps=1.0, objective="median"), "objective must be one of"),
        (dict(n=5, eps=1.0, loss="huber"), "loss must be one of"),
        (dict(n=5, eps=1.0, loss=np.ones((3, 3))), "loss matrix must have shape"),
        (dict(n=5, eps=1.0, outputs=0), "outputs must be"),
        (dict(n=5, eps=1.0, outputs=[1, 1, 2]), "outputs must be distinct"),
        (dict(n=5, eps=1.0, neighbors="nearby"), "neighbors must be"),
        (dict(n=5, eps=1.0, neighbors="adjacent:9"), "K <= n"),
        (dict(n=5, eps=1.0, neighbors=[(0, 9)]), "inputs in 0..n"),
        (dict(n=5, eps=1.0, neighbors=[(1, 1)]), "two different inputs"),
        (dict(n=5, eps=1.0, neighbors="adjacent", directed=True), "directed applies"),
        (dict(n=5, eps=1.0, prior=[0.5, 0.5]), "prior must have"),
        (dict(n=5, eps=1.0, prior=np.ones(6)), "prior must sum to 1"),
        (dict(n=5, eps=1.0, objective="minimax", prior=np.ones(6) / 6), "prior applies"),
        (dict(n=5, eps=1.0, objective="delta"), "max_loss is required"),
        (dict(n=5, eps=1.0, objective="delta", delta=0.1, max_loss=1.0), "delta must be left"),
        (dict(n=5, eps=1.0, max_loss=1.0), "max_loss applies only"),
        (dict(n=3000, eps=1.0), "too large"),
    ],
)
def test_bad_input_names_the_parameter(kw, match):
    with pytest.raises(ValueError, match=match):
        MechanismDesign(**kw)


def test_solve_arguments_are_validated():
    d = MechanismDesign(n=3, eps=1.0)
    with pytest.raises(ValueError, match="solver must be one of"):
        d.solve(solver="glpk")
    with pytest.raises(ValueError, match="formulation must be one of"):
        d.solve(formulation="tight")
    with pytest.raises(ValueError, match="options"):
        d.solve(options={"no_such_option": 1})


# ---------------------------------------------------------------- limits, model sizes, repairs (issue 13's rules)


@pytest.mark.parametrize("privacy,delta", [("dp", 0.0), ("dp", 0.05), ("pdp", 0.05)])
@pytest.mark.parametrize("objective", ["bayes", "minimax", "delta"])
def test_model_size_estimates_are_exact(privacy, delta, objective):
    kw = dict(max_loss=1.0) if objective == "delta" else dict(delta=delta)
    d = MechanismDesign(n=6, eps=1.0, privacy=privacy, objective=objective, neighbors="adjacent:2", **kw)
    for formulation in ("hull", "bigm"):
        assert d.model_size(formulation) == d.build_model(formulation=formulation).size
    for n in (1, 2, 5):
        for objective2 in ("distortion", "delta"):
            kw2 = dict(max_distortion=1.0) if objective2 == "delta" else dict(delta=delta)
            c = NoiseDesign(
                n=n,
                eps=1.0,
                neighborhood=Neighborhood.bd(1),
                privacy=privacy,
                release="clamp",
                objective=objective2,
                **kw2,
            )
            for formulation in ("hull", "bigm"):
                assert c.model_size(formulation) == c.build_model(formulation=formulation).size


def test_oversized_designs_are_refused_before_building():
    import time

    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="too large"):
        MechanismDesign(n=1_000_000, eps=1.0, outputs=1, neighbors="adjacent:1000000")
    with pytest.raises(ValueError, match="too large"):
        NoiseDesign(n=1_000_000, eps=1.0, neighborhood=Neighborhood.bd(1000), privacy="dp", release="clamp")
    with pytest.raises(ValueError, match="eps must be <="):
        MechanismDesign(n=5, eps=40.0)
    with pytest.raises(ValueError, match="loss matrix entries must have magnitude"):
        MechanismDesign(n=2, eps=1.0, loss=np.full((3, 3), 1e20))
    assert time.perf_counter() - t0 < 5


def test_statuses_follow_the_tolerance_rule():
    d = MechanismDesign(n=4, eps=1.0, delta=0.01)
    res = d.solve()
    bad = MechanismResult(
        design=d, status="optimal", matrix=np.eye(5), solver="highs", solve_time=0.0, model_size={}
    )  # the identity leaks everything
    assert bad.status == "unverified" and not bad.verify() and "re-verification failed" in bad.message
    assert MechanismResult.from_dict(res.to_dict(), design=d).status == "optimal"
    with pytest.raises(ValueError, match="status must be one of"):
        MechanismResult(design=d, status="great", matrix=None, solver="highs", solve_time=0.0, model_size={})
    with pytest.raises(ValueError, match="matrix row"):
        MechanismResult(design=d, status="optimal", matrix=np.ones((5, 5)), solver="x", solve_time=0, model_size={})


@pytest.mark.parametrize("eps", [2.0, 3.0])
def test_pure_dp_tails_below_tolerance_are_repaired(eps):
    """Pure DP at n = 20: the optimal tails (~e^-(eps n)) are below the solver's tolerance; results still verify."""
    for metric, loss in (("mse", "sq"), ("er", "er")):
        c = NoiseDesign(
            n=20, eps=eps, neighborhood=Neighborhood.bd(1), privacy="dp", metric=metric, release="clamp"
        ).solve()
        g = MechanismDesign(n=20, eps=eps, loss=loss).solve()
        for res in (c, g):
            assert res.status == "optimal" and res.verify() and (res.gap or 0.0) <= 1e-6
        # both within 1e-6 of the truncated geometric mechanism (GRS: uniform prior, identity remap for these)
        G = truncated_geometric(20, eps)
        geo = float(((G * loss_of(loss, 20)).sum(axis=1)).mean())
        assert c.distortion == pytest.approx(geo, rel=2e-6)
        assert g.loss <= geo * (1 + 2e-6)


def test_max_loss_is_validated_like_max_distortion():
    # mechanism --objective delta --max-loss -1 solved an infeasible model (exit 3) where
    # solve --max-distortion -1 was refused (exit 2): MechanismDesign now refuses it itself
    for bad in (-1.0, -1e-12, float("nan"), float("inf"), "0.5", True):
        with pytest.raises(ValueError, match="max_loss"):
            MechanismDesign(n=4, eps=1.0, objective="delta", max_loss=bad)
    with pytest.raises(ValueError, match="max_distortion"):
        NoiseDesign(n=4, eps=1.0, neighborhood=Neighborhood.bd(1), objective="delta", max_distortion=-1.0)
    assert MechanismDesign(n=4, eps=1.0, objective="delta", max_loss=0).max_loss == 0.0


def test_integer_outputs_are_exact_and_bounded():
    # [0, 2**64 + 1] became the float 1.8e19; outputs of 1e308 overflowed every loss with RuntimeWarnings
    import warnings

    from optnoise.engine.validation import MAX_OUTPUT

    with pytest.raises(ValueError, match=rf"outputs must be integers in \[-{MAX_OUTPUT}, {MAX_OUTPUT}\]"):
        MechanismDesign(n=4, eps=1.0, outputs=[0, 2**64 + 1])
    with pytest.raises(ValueError, match="outputs must be an integer >= 1"):
        MechanismDesign(n=4, eps=1.0, outputs=2**64 + 1)
    with pytest.raises(ValueError, match="outputs must be an integer m"):
        MechanismDesign(n=4, eps=1.0, outputs=3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the refusals come before any overflow
        for outputs in ([0.0, 1e308], [0.0, -1e300], [0, 10**16]):
            with pytest.raises(ValueError, match="outputs must"):
                MechanismDesign(n=4, eps=1.0, outputs=outputs, loss="er")
        with pytest.raises(ValueError, match="loss 'sq' of these outputs reaches 1e\\+16"):
            MechanismDesign(n=4, eps=1.0, outputs=[0, 10**8], loss="sq")
        big = MechanismDesign(n=4, eps=1.0, outputs=[0, MAX_OUTPUT - 4], loss="abs")
        assert big.outputs.dtype == np.int64 and int(big.outputs[1]) == MAX_OUTPUT - 4
        res = big.solve()
        assert res.status == "optimal" and np.isfinite(list(res.actual.values())).all()
    # integers in range keep their exact value, up to the bound itself
    assert int(MechanismDesign(n=4, eps=1.0, outputs=[0, MAX_OUTPUT]).outputs[1]) == MAX_OUTPUT


def test_spec_directed_must_be_a_boolean():
    spec = MechanismDesign(n=4, eps=1.0, neighbors="sd:1").spec()
    assert MechanismDesign.from_spec(spec).directed is False
    for bad in (0, 1, None, "false"):
        with pytest.raises(ValueError, match="directed must be True or False"):
            MechanismDesign.from_spec(dict(spec, directed=bad))


@pytest.mark.parametrize(("metric", "loss"), [("mse", "sq"), ("mae", "abs")])
def test_noise_metric_names_are_mechanism_losses(metric, loss):
    # issue 29: one vocabulary; the stored name stays the loss's, so spec() and older files are unchanged
    a = MechanismDesign(n=5, eps=1.0, loss=metric)
    b = MechanismDesign(n=5, eps=1.0, loss=loss)
    assert a.loss == loss and a.spec() == b.spec()
    x = np.arange(6.0)[:, None] - np.arange(6.0)[None, :]
    np.testing.assert_array_equal(a.loss_matrix, x**2 if metric == "mse" else np.abs(x))
