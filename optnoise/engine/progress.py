"""Progress and time limits of the iterative solves (composed and Renyi designs).

A :class:`Progress` is a tqdm bar on stderr (shown only when the caller asks, ``verbose=True``)
and a deadline. The solves call :meth:`Progress.step` at each unit of work (an accounting check,
a search evaluation, a barrier stage); :meth:`Progress.check` raises :class:`OutOfTime` once the
deadline has passed, and the solve then returns the best point it has verified so far with
status ``"time_limit"``. Without a time limit nothing here depends on the clock, so a solve stays
reproducible (its own evaluation limits decide where it stops).
"""

from __future__ import annotations

import math
import sys
import time
from types import TracebackType
from typing import Any

__all__ = ["OutOfTime", "Progress", "time_left"]


def time_left(time_limit: float | None, start: float, floor: float = 1e-3) -> float | None:
    """Seconds left of ``time_limit`` since ``start`` (a :func:`time.perf_counter` value), at least ``floor``
    so that a last solve still gets a positive limit; ``None`` without a limit."""
    return None if time_limit is None else max(time_limit - (time.perf_counter() - start), floor)


class OutOfTime(Exception):
    """The solve's time limit has passed (caught by the solve, never seen by a caller)."""


class Progress:
    """A progress bar (``verbose``) and a deadline ``time_limit`` seconds from now (``None``: no deadline).

    ``share`` of the time limit is given to the work that :meth:`check` guards; the rest is kept
    for what follows it (proving a bound, re-verification).
    """

    def __init__(self, desc: str, *, verbose: bool, time_limit: float | None, share: float = 1.0, unit: str = "it"):
        from tqdm import tqdm

        self.t0 = time.perf_counter()
        self.time_limit = None if time_limit is None else float(time_limit)
        self.deadline = None if self.time_limit is None else self.t0 + share * self.time_limit
        self.bar: Any = tqdm(desc=desc, unit=unit, file=sys.stderr, disable=not verbose, leave=True, dynamic_ncols=True)

    @property
    def expired(self) -> bool:
        return self.deadline is not None and time.perf_counter() > self.deadline

    def check(self) -> None:
        """Raise :class:`OutOfTime` when the deadline has passed."""
        if self.expired:
            raise OutOfTime

    def step(self, n: int = 1, stage: str | None = None, *, check: bool = True) -> None:
        """Count ``n`` units of work (and name the stage), then :meth:`check` (unless ``check=False``:
        work that stops at its own time limit, e.g. a search inside a library call)."""
        self.bar.update(n)
        if stage is not None:
            self.stage(stage)
        if check:
            self.check()

    def stage(self, text: str) -> None:
        self.bar.set_postfix_str(text, refresh=True)

    def left(self, *, total: bool = False) -> float:
        """Seconds to the deadline (``total``: to the end of the whole time limit); ``inf`` without one."""
        if self.time_limit is None or self.deadline is None:
            return math.inf
        end = self.t0 + self.time_limit if total else self.deadline
        return max(0.0, end - time.perf_counter())

    def close(self) -> None:
        self.bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
