"""pld() and compose(k) of additive results on Z, against dp-accounting on explicit PMFs (an independent route)."""

from __future__ import annotations

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld_lib

from optnoise import Neighborhood, NoiseDesign


@pytest.fixture(scope="module")
def sum_design():
    return NoiseDesign(release="additive", neighborhood=Neighborhood.bd(2), eps=1.0, delta=1e-6, metric="mse").solve()


def _explicit_pld(res, mu: int, periods: int = 400):
    """dp-accounting's PLD of f against f(. + mu) from the PMF written out far into both tails.

    The masses left beyond the range are below 1e-40 (of no weight at the checked deltas).
    """
    L, P = res.L, res.design.period
    x = np.arange(-L - periods * P, L + periods * P + 1)
    f, g = res.pmf_at(x), res.pmf_at(x + mu)
    keep = (f > 0) | (g > 0)
    p = {int(i): float(np.log(v)) for i, v in zip(x[keep], f[keep], strict=True) if v > 0}
    q = {int(i): float(np.log(v)) for i, v in zip(x[keep], g[keep], strict=True) if v > 0}
    # symmetric=False: this one ordered pair (the reverse order is the shift -mu)
    return pld_lib.from_two_probability_mass_functions(p, q, value_discretization_interval=1e-4, symmetric=False)


def test_pld_delta_is_exact_or_pessimistic_on_z(sum_design):
    res = sum_design
    got = res.compose(1).delta(1.0)
    # pessimistic: never below the exact hockey stick on Z (evaluate's lumped sums), and within its discretization
    assert res.achieved["dp"] <= got <= res.achieved["dp"] * (1 + 1e-4)
    # dp-accounting on the PMF written out: at eps away from the staircase's losses (which sit at multiples of
    # eps / 2 here, where a grid's pessimistic rounding moves whole atoms past eps)
    for mu in res.design.shifts.tolist():
        for eps in (0.3, 0.7):
            explicit = _explicit_pld(res, int(mu)).get_delta_for_epsilon(eps)
            assert res.pld(shift=int(mu)).get_delta_for_epsilon(eps) == pytest.approx(explicit, rel=1e-3)


def test_compose_k_matches_dp_accounting_on_explicit_pmfs(sum_design):
    res = sum_design
    ours = res.compose(10).epsilon(1e-6)
    explicit = max(_explicit_pld(res, int(mu)).self_compose(10).get_epsilon_for_delta(1e-6) for mu in (1, 2, -1, -2))
    assert ours == pytest.approx(explicit, rel=1e-3)
    # basic composition of ten (1, 1e-6) releases gives (10, 1e-5): the PLD is no looser (1% for its grid)
    assert res.compose(10).delta(10.0) <= 1e-5 * 1.01


def test_plot_is_refused_by_name(sum_design):
    with pytest.raises(ValueError, match="plot"):
        sum_design.plot()
