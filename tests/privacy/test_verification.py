"""The one re-verification rule (optnoise.privacy.verification) and the statuses it decides."""

import math

import numpy as np
import pytest

from optnoise import Neighborhood, NoiseDesign, delta_pdp, delta_pdp_kadam
from optnoise.engine.tolerance import check_tol
from optnoise.privacy.curves import pdp_leak
from optnoise.privacy.verification import (
    DELTA_RTOL,
    PDP_EPS_ATOL,
    PDP_EPS_RTOL,
    UNVERIFIED,
    delta_allowance,
    pdp_rtol,
    settle_status,
    within_delta,
)


def test_rule_is_relative_to_delta():
    assert (DELTA_RTOL, PDP_EPS_RTOL, PDP_EPS_ATOL) == (1e-6, 1e-6, 1e-12)
    # the delta rule has no absolute slack: a zero target allows exactly zero
    assert delta_allowance(0.0) == 0.0
    assert delta_allowance(0.1238) == 0.1238 * (1 + 1e-6)
    # the README's flow: 0.12380000000000005 meets 0.1238
    assert within_delta(0.12380000000000005, 0.1238)
    # issue 13: at delta = 1e-9 a dp of 1.03e-8 (10x) used to pass the absolute 1e-6 slack
    assert not within_delta(1.03e-8, 1e-9)
    assert within_delta(1e-9 * (1 + 5e-7), 1e-9)
    assert not within_delta(1e-9 * (1 + 2e-3), 1e-9)
    # issue 24: no absolute slack: a claim of 1e-15 (or 0) is not met by 9e-13
    assert within_delta(0.0, 0.0) and not within_delta(1e-12, 0.0) and not within_delta(9e-13, 1e-15)
    assert within_delta(1e-15 * (1 + 5e-7), 1e-15) and not within_delta(1e-15 * (1 + 2e-6), 1e-15)
    for bad in (math.nan, math.inf):
        assert not within_delta(bad, 0.5)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, -1.0, "1e-8", True, None, [1e-8]])
def test_tolerances_must_be_finite_and_non_negative(bad):
    with pytest.raises(ValueError, match="tol must be a finite number >= 0"):
        check_tol("tol", bad)


def test_settle_status():
    assert settle_status("optimal", 0.1, 0.1, notion="pdp") == ("optimal", "")
    status, why = settle_status("optimal", 0.825, 0.0, notion="pdp")
    assert status == UNVERIFIED and "0.825" in why and "pdp" in why
    assert settle_status("time_limit", 0.2, 0.1, notion="dp")[0] == UNVERIFIED
    assert settle_status("time_limit", 0.05, 0.1, notion="dp") == ("time_limit", "")
    assert settle_status("infeasible", None, 0.1, notion="dp") == ("infeasible", "")
    assert settle_status("optimal", math.inf, 0.1, notion="pdp-kadam")[0] == UNVERIFIED
    assert settle_status("optimal", 0.0, None, notion="dp")[0] == UNVERIFIED


def test_pdp_slack_is_relative_to_eps():
    # the indicators are read at eps (1 + 1e-6) + 1e-12: pdp_rtol is that, as a ratio slack
    for eps in (1e-10, 0.5, 3.0, 34.5):
        assert math.log1p(pdp_rtol(eps)) == pytest.approx(eps * 1e-6 + 1e-12, rel=1e-9)
    assert pdp_rtol(1e-10) < 2e-12  # a tiny eps is still checked at 1.01e-10, not at some absolute floor


def test_pdp_ratio_slack_is_an_eps_slack(rng):
    # independent route: a relative slack r on the ratio is the same test at eps + log1p(r)
    for _ in range(50):
        p, q = rng.dirichlet(np.ones(12)), rng.dirichlet(np.ones(12))
        for eps, r in ((0.3, 1e-9), (1.0, 1e-3), (2.5, 0.2)):
            assert pdp_leak(p, q, eps, rtol=r) == pdp_leak(p, q, eps + math.log1p(r))


def test_a_mass_next_to_a_zero_always_leaks():
    # an absolute slack would hide infinite-loss outputs at small delta; the relative one does not
    f = np.array([0.0, 0.5, 0.5 - 5e-9, 5e-9])  # f(3) = 5e-9 precedes f(0) = 0: infinite privacy loss
    assert delta_pdp(f, [1], 1.0, rtol=pdp_rtol(1.0)) == 0.5  # f(2) and f(3) leak
    assert delta_pdp(f, [1], 1.0, tol=1e-8) == 0.5 - 5e-9  # the old absolute 1e-8 slack hid f(3)


def test_results_use_the_rule():
    res = NoiseDesign(
        n=8, eps=1.5, delta=0.1238, neighborhood=Neighborhood.bd(3, directed=True), privacy="pdp-kadam"
    ).solve()
    assert res.status == "optimal" and res.verify()
    assert res.verify() == within_delta(res.achieved["pdp-kadam"], 0.1238)
    # exact ties of the ratio rows are read with the slack, so the staircase does not "leak"
    assert delta_pdp_kadam(res.pmf, res.design.shifts, 1.5) == math.inf  # tol = rtol = 0: exact
    assert res.achieved["pdp-kadam"] == pytest.approx(0.1238, rel=1e-12)
