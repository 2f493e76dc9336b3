"""Shared argument checks (optnoise/_validation.py)."""

import math
import sys

import numpy as np
import pytest

from optnoise.engine.validation import MAX_EPS, MAX_FINITE_EPS, check_eps


def test_check_eps_bounds_eps_only_when_asked():
    assert MAX_FINITE_EPS == pytest.approx(709.78, abs=0.01)  # log of the largest double, 1.797e308
    assert math.isfinite(math.exp(check_eps(MAX_FINITE_EPS, maximum=MAX_FINITE_EPS)))
    with np.errstate(over="ignore"):
        assert np.isinf(np.exp(MAX_FINITE_EPS + 1e-9))
    with pytest.raises(ValueError, match=r"eps must be <= 709.783 \(e\^eps must be a finite double\); got 1e\+25"):
        check_eps(1e25, maximum=MAX_FINITE_EPS)
    assert check_eps(1e25) == 1e25  # closed forms and accounting take any finite eps
    with pytest.raises(ValueError, match="must be finite"):
        check_eps(float("inf"))
    assert check_eps(0.0, allow_zero=True) == 0.0
    with pytest.raises(ValueError, match="> 0"):
        check_eps(0.0)


def test_check_eps_takes_a_tighter_bound_and_its_reason():
    assert check_eps(MAX_EPS, maximum=MAX_EPS, why="a reason") == MAX_EPS
    with pytest.raises(ValueError, match=r"eps2 must be <= 34.5 \(a reason\); got 35"):
        check_eps(35, "eps2", maximum=MAX_EPS, why="a reason")
    assert sys.float_info.max == pytest.approx(math.exp(MAX_FINITE_EPS))


def test_check_int_takes_ints_only():
    # NoiseDesign(n=8.0), Neighborhood.bd(2.0), shape=(9.0,) and compose(2.0) were accepted: floats, also
    # integral ones, and bools are refused by the one shared check; numpy integers are integers
    from optnoise.engine.validation import check_int

    assert check_int("n", 8) == 8 and check_int("n", np.int64(8)) == 8 and check_int("n", np.uint8(8)) == 8
    assert check_int("k", 2**70) == 2**70  # exact, no float round trip
    for bad in (8.0, np.float64(8.0), True, np.bool_(False), "8", None, 8 + 0j, [8]):
        with pytest.raises(ValueError, match=r"n must be an integer \(an int, not a float or bool\)"):
            check_int("n", bad)
    with pytest.raises(ValueError, match="k must be an integer >= 1 and <= 10; got 11"):
        check_int("k", 11, minimum=1, maximum=10)


def test_messages_cut_the_values_they_echo():
    # an error echoed the whole input: a 120 KB line for a long --cost
    from optnoise.engine.shown import MAX_SHOWN, clip, shown
    from optnoise.engine.validation import check_finite, parse_float, parse_int

    assert shown("abc") == "'abc'" and shown(1.5) == "1.5" and clip("abc") == "abc"
    long = "1," * 60000
    assert shown(long) == repr(long)[:MAX_SHOWN] + f"... ({len(long) + 2} chars)"
    assert shown(10**5000) == "an integer of about 5001 digits"  # str() refuses ints beyond 4300 digits
    for call in (
        lambda: check_finite("cost", long),
        lambda: parse_float("cost", long),
        lambda: parse_int("n", "x" * 5000),
        lambda: check_finite("eps", [1.0] * 100000),
    ):
        with pytest.raises(ValueError) as info:
            call()
        assert len(str(info.value)) < 200 and "chars)" in str(info.value)


def test_check_jobs_caps_local_workers():
    import os

    from optnoise.engine.validation import JOBS_PER_CORE, check_jobs, max_jobs

    assert max_jobs() == JOBS_PER_CORE * (os.cpu_count() or 1) and check_jobs(1) == 1
    for bad in (0, max_jobs() + 1, 2**64 + 1, 1.0):
        with pytest.raises(ValueError, match="jobs"):
            check_jobs(bad)
