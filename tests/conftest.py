"""Shared test configuration."""

import os

import matplotlib
import numpy as np
import pytest
from hypothesis import HealthCheck, settings

matplotlib.use("Agg")

settings.register_profile("ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("long", max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20240554)


@pytest.fixture
def run_python(tmp_path):
    """Run ``source`` as a script in a fresh interpreter; return its stdout (the test fails on a non-zero exit)."""
    import subprocess
    import sys

    def run(source: str, timeout: float = 180) -> str:
        script = tmp_path / "script.py"
        script.write_text(source)
        out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=timeout)
        assert out.returncode == 0, out.stderr
        return out.stdout

    return run


@pytest.fixture(autouse=True)
def _sigint_is_not_left_ignored(request):
    """No test leaves SIGINT ignored where it was handled.

    An ignored SIGINT would make the later SIGINT tests of the same worker fail, and every child
    process they start inherit it. (Libraries may reset SIGINT to Python's own handler, as the
    notebook test's Jupyter client does; that is harmless.)
    """
    import signal

    before = signal.getsignal(signal.SIGINT)
    yield
    after = signal.getsignal(signal.SIGINT)
    if before is not signal.SIG_IGN:
        assert after is not signal.SIG_IGN, f"{request.node.nodeid} left SIGINT ignored (it was {before!r})"
