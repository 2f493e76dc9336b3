"""Real-valued baselines: published values, and every closed form against an independent numerical route."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting.pld.privacy_loss_mechanism import GaussianPrivacyLoss, LaplacePrivacyLoss
from scipy import integrate, optimize

from optnoise.mechanisms.real_baselines import real_baselines, truncated_laplace_width


def _staircase_moment(eps: float, gamma: float, p: int, sens: float = 1.0, steps: int = 400) -> float:
    """``E|X|^p`` of the Geng-Viswanath staircase by quadrature of its density, step by step."""
    b = math.exp(-eps)
    a = (1 - b) / (2 * sens * (gamma + (1 - gamma) * b))
    total = 0.0
    for k in range(steps):
        lo, mid, hi = k * sens, (k + gamma) * sens, (k + 1) * sens
        total += a * b**k * integrate.quad(lambda x: x**p, lo, mid)[0]
        total += a * b ** (k + 1) * integrate.quad(lambda x: x**p, mid, hi)[0]
    return 2 * total


def test_staircase_published_l1_at_eps_1():
    assert real_baselines(eps=1.0, delta=0.0, metric="mae")["staircase"] == pytest.approx(0.95952, abs=5e-6)


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("metric,p", [("mae", 1), ("mse", 2)])
def test_staircase_closed_form_is_the_numerical_optimum_over_gamma(eps, metric, p):
    best = optimize.minimize_scalar(
        lambda g: _staircase_moment(eps, g, p, steps=80),
        bounds=(1e-6, 1 - 1e-6),
        method="bounded",
        options={"xatol": 1e-7},
    )
    got = real_baselines(eps=eps, delta=0.0, metric=metric)["staircase"]
    assert got == pytest.approx(best.fun, rel=1e-6)
    if metric == "mae":  # gamma* = 1 / (1 + e^(eps/2)) (Geng-Viswanath)
        assert best.x == pytest.approx(1 / (1 + math.exp(eps / 2)), abs=1e-4)


@pytest.mark.parametrize("eps,delta", [(1.0, 0.0), (1.0, 1e-6), (0.5, 0.05), (2.0, 0.3)])
def test_laplace_is_the_least_scale_meeting_delta_by_dp_accounting(eps, delta):
    sens = 2.5
    got = real_baselines(eps=eps, delta=delta, metric="mae", sensitivity=sens)["laplace"]  # = the scale b
    exact = LaplacePrivacyLoss(got, sensitivity=sens).get_delta_for_epsilon(eps)
    assert exact == pytest.approx(delta, abs=1e-12)
    assert LaplacePrivacyLoss(got * (1 - 1e-6), sensitivity=sens).get_delta_for_epsilon(eps) > delta  # least
    assert real_baselines(eps=eps, delta=delta, metric="mse", sensitivity=sens)["laplace"] == pytest.approx(2 * got**2)


@pytest.mark.parametrize("eps,delta", [(1.0, 1e-6), (0.5, 0.05), (3.0, 1e-3)])
def test_analytic_gaussian_by_dp_accounting(eps, delta):
    var = real_baselines(eps=eps, delta=delta, metric="mse", sensitivity=0.5)["gaussian"]
    sigma = math.sqrt(var)
    assert GaussianPrivacyLoss(sigma, sensitivity=0.5).get_delta_for_epsilon(eps) == pytest.approx(delta, rel=1e-7)
    assert GaussianPrivacyLoss(sigma * (1 - 1e-5), sensitivity=0.5).get_delta_for_epsilon(eps) > delta
    mae = real_baselines(eps=eps, delta=delta, metric="mae", sensitivity=0.5)["gaussian"]
    assert mae == pytest.approx(sigma * math.sqrt(2 / math.pi))


def _tlap(eps: float, delta: float, sens: float):
    lam, A = sens / eps, truncated_laplace_width(eps, delta, sens)
    B = 1 / integrate.quad(lambda x: math.exp(-abs(x) / lam), -A, A, points=[0])[0]  # normalised numerically
    return lam, A, (lambda x: B * math.exp(-abs(x) / lam) if abs(x) <= A else 0.0)


@pytest.mark.parametrize("eps,delta", [(1.0, 1e-3), (0.5, 0.2), (2.0, 0.5), (1.0, 0.6), (0.3, 0.75)])
def test_truncated_laplace_delta_and_costs_by_quadrature(eps, delta):
    sens = 1.5
    lam, A, f = _tlap(eps, delta, sens)
    # the hockey stick of the shift by Delta, integrated numerically over the union of both supports
    lo, hi = -A, A + sens
    brk = sorted({-A, 0.0, sens, A, A + sens, sens - A})
    hs = integrate.quad(lambda x: max(f(x) - math.exp(eps) * f(x - sens), 0.0), lo, hi, points=brk, limit=200)[0]
    assert hs == pytest.approx(delta, rel=1e-7)
    got = real_baselines(eps=eps, delta=delta, metric="mae", sensitivity=sens)["truncated_laplace"]
    assert got == pytest.approx(integrate.quad(lambda x: abs(x) * f(x), -A, A, points=[0])[0], rel=1e-9)
    got = real_baselines(eps=eps, delta=delta, metric="mse", sensitivity=sens)["truncated_laplace"]
    assert got == pytest.approx(integrate.quad(lambda x: x * x * f(x), -A, A, points=[0])[0], rel=1e-9)


def test_ordering_and_pure_limits():
    pure = real_baselines(eps=1.0, delta=0.0, metric="mse")
    assert pure["gaussian"] == math.inf and pure["truncated_laplace"] == pure["laplace"] == 2.0
    assert pure["staircase"] < pure["laplace"]
    approx = real_baselines(eps=1.0, delta=0.1, metric="mae")
    assert "staircase" not in approx  # no closed form for delta > 0 (module docstring)
    assert approx["truncated_laplace"] < approx["laplace"] < 1.0


@pytest.mark.parametrize(
    "kw,name",
    [
        ({"eps": 0.0, "delta": 0.1, "metric": "mse"}, "eps"),
        ({"eps": 1.0, "delta": 1.0, "metric": "mse"}, "delta"),
        ({"eps": 1.0, "delta": -0.1, "metric": "mse"}, "delta"),
        ({"eps": 1.0, "delta": 0.1, "metric": "er"}, "metric"),
        ({"eps": 1.0, "delta": 0.1, "metric": "mse", "sensitivity": math.nan}, "sensitivity"),
        ({"eps": 1.0, "delta": 0.1, "metric": "mse", "sensitivity": -1.0}, "sensitivity"),
    ],
)
def test_bad_input_names_the_parameter(kw, name):
    with pytest.raises(ValueError, match=name):
        real_baselines(**kw)


def test_the_grid_release_reports_them():
    from optnoise import NoiseDesign

    res = NoiseDesign(release="grid", sensitivity=2.0, resolution=0.5, eps=1.0, delta=1e-3, metric="mae").solve(
        solver="highs"
    )
    want = real_baselines(eps=1.0, delta=1e-3, metric="mae", sensitivity=2.0)
    assert {k: res.baselines[k] for k in want} == want
    assert np.isfinite(res.baselines["discrete_laplace"])
