"""``AdditiveResult.to_dict`` / ``from_dict``: a result read back trusts no stored number."""

import math

import numpy as np
import pytest

from optnoise import Neighborhood, NoiseDesign
from optnoise.design.additive_eval import AdditiveResult


def design(eps=1.0, delta=0.0, D=1, metric="mse"):
    return NoiseDesign(release="additive", neighborhood=Neighborhood.bd(D), eps=eps, delta=delta, metric=metric)


def laplace_dict(alpha, L, status="optimal"):
    """A result written by hand (not by a solver): the discrete Laplace ``alpha^|x|`` on -L..L."""
    x = np.arange(-L, L + 1)
    pmf = (1 - alpha) / (1 + alpha) * alpha ** np.abs(x)
    return {"release": "additive", "status": status, "support": x.tolist(), "pmf": pmf.tolist()}


def test_a_hand_written_discrete_laplace_is_re_proved_optimal():
    a = math.exp(-1.0)
    res = AdditiveResult.from_dict(laplace_dict(a, 20), design=design())
    # the tails are derived from the finite part, exactly: the distortion is the closed form
    assert res.distortion == pytest.approx(2 * a / (1 - a) ** 2, rel=1e-12)
    assert res.tail is not None and res.tail.mass == pytest.approx(2 * a**21 / (1 + a), rel=1e-9)
    assert res.achieved["dp"] <= 1e-12
    assert res.status == "optimal" and res.gap is not None and res.gap <= 1e-6  # a fresh solve at L = 20


def test_an_unproven_claim_comes_back_feasible():
    # the pure eps = 1 noise meets (1, 0.01)-DP, but that target's optimum is far lower
    res = AdditiveResult.from_dict(laplace_dict(math.exp(-1.0), 15), design=design(delta=0.01))
    assert res.status == "feasible" and res.gap > 0.1 and res.achieved["dp"] <= 1e-12
    # without a fresh solve or a proof nothing proves 'optimal'
    exact = AdditiveResult.from_dict(laplace_dict(math.exp(-1.0), 20), design=design(), recheck=False)
    assert exact.status == "feasible" and "not proven" in exact.message
    # a leaky noise claiming 'optimal' is flagged
    leaky = AdditiveResult.from_dict(laplace_dict(math.exp(-2.0), 20), design=design(), recheck=False)
    assert leaky.status == "unverified" and leaky.achieved["dp"] > 0.1


def test_round_trip_of_a_solved_result():
    d = design(eps=1.0, delta=1e-6, D=2, metric="mae")
    res = d.solve()
    back = AdditiveResult.from_dict(res.to_dict(), design=d)
    assert back.status == res.status == "optimal"
    assert back.distortion == pytest.approx(res.distortion, rel=1e-12)
    assert back.achieved == pytest.approx(res.achieved, rel=1e-9, abs=1e-15)
    assert np.array_equal(back.support, res.support)
    assert NoiseDesign.from_spec(res.to_dict()["problem"]).key() == d.key()


@pytest.mark.parametrize(
    "edit,match",
    [
        (lambda d: d.update(support=d["support"][1:]), "support"),
        (lambda d: d.update(pmf=d["pmf"][1:]), "pmf"),
        (lambda d: d.update(pmf=[0.5] * len(d["pmf"])), "sum to 1"),
        (lambda d: d.update(release="modulo"), "release"),
        (lambda d: d.pop("status"), "status"),
    ],
)
def test_malformed_fields_are_named(edit, match):
    data = laplace_dict(math.exp(-1.0), 5)
    edit(data)
    with pytest.raises(ValueError, match=match):
        AdditiveResult.from_dict(data, design=design(), recheck=False)
