"""Progress bars, deadlines, and how messages show numpy scalars."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from optnoise.engine.progress import OutOfTime, Progress
from optnoise.engine.shown import shown
from optnoise.engine.validation import check_pmf


def test_deadline_raises_only_after_its_share(capsys):
    with Progress("work", verbose=False, time_limit=0.2, share=0.5) as p:
        p.step()
        time.sleep(0.15)
        with pytest.raises(OutOfTime):
            p.step()
        assert 0.0 < p.left(total=True) <= 0.1
        p.step(check=False)  # counted, not checked
    assert capsys.readouterr().err == ""


def test_no_time_limit_never_expires(capsys):
    with Progress("work", verbose=True, time_limit=None) as p:
        p.step(3, stage="stage one")
        assert p.left() == math.inf and not p.expired
    err = capsys.readouterr().err
    assert "work" in err and "stage one" in err


def test_numpy_scalars_are_shown_as_numbers():
    assert shown(np.float64(-0.01)) == "-0.01"
    assert shown(np.int64(7)) == "7"
    with pytest.raises(ValueError) as info:
        check_pmf("pmf", [1.01, -0.01])
    assert "np.float64" not in str(info.value) and "-0.01" in str(info.value)
