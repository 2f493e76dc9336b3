"""Fixtures of the command-line tests."""

from __future__ import annotations

from collections.abc import Callable

import pytest


@pytest.fixture
def interrupt_sweep_at(monkeypatch) -> Callable[[int], list]:
    """``interrupt_sweep_at(k)``: the sweep's k-th point raises ``KeyboardInterrupt`` (Ctrl-C) instead of solving.

    Returns the list of the points started so far (cleared by the caller to interrupt a second sweep).
    """
    import optnoise.cli.sweeps as S

    real = S.run_point
    calls: list = []

    def patch(k: int) -> list:
        def stop_at(p, *a, **kw):
            calls.append(p)
            if len(calls) == k:
                raise KeyboardInterrupt
            return real(p, *a, **kw)

        monkeypatch.setattr(S, "run_point", stop_at)
        return calls

    return patch
