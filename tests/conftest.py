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
def _sigint_handler_is_restored(request):
    """Every test leaves SIGINT's handler as it found it.

    A test (or a library it drives) that leaves SIGINT ignored makes the later SIGINT tests of the
    same worker fail, and every child process they start inherit the ignored signal.
    """
    import signal

    before = signal.getsignal(signal.SIGINT)
    yield
    after = signal.getsignal(signal.SIGINT)
    assert after is before, f"{request.node.nodeid} changed SIGINT's handler from {before!r} to {after!r}"
