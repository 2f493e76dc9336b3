"""Child processes that end with their parent, whatever signal ends it.

The ``solver="auto"`` race (:mod:`optnoise.engine.race`), the lazy-row LP race
(:mod:`optnoise.engine.lazy`) and local sweep workers (:mod:`optnoise.cli.sweeps`)
run solves in child processes. When the parent is stopped by ``SIGTERM`` or
``SIGKILL`` it runs no cleanup, and a child left behind would solve on at 100% CPU.
:func:`die_with_parent`, called first thing in every child, prevents that twice over:

* on Linux, ``prctl(PR_SET_PDEATHSIG, SIGKILL)``: the kernel kills the child the
  moment its parent exits (strictly, the parent *thread* that started it: every
  optnoise parent starts and stops its children in one thread);
* everywhere, a daemon thread that checks ``os.getppid()`` every
  :data:`WATCH_SECONDS` and exits when the parent is gone (orphans are re-parented).

Either one ends the child within a second; the multiprocessing resource tracker of a
sweep then sees its last writer gone and exits too.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

__all__ = ["WATCH_SECONDS", "die_with_parent"]

#: How often the watchdog thread checks that the parent is alive.
WATCH_SECONDS = 0.5
_PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int | None = None) -> None:
    """End this process when ``parent`` (default: the current parent) ends; see the module docstring.

    ``parent`` is the pid the caller knows to be its parent; when this process has already
    been re-parented (the parent died before this call), it exits at once.
    """
    expected = os.getppid() if parent is None else int(parent)
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):  # no prctl: the watchdog below still ends the child
            pass
    if os.getppid() != expected:  # the parent died before the death signal was armed
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(WATCH_SECONDS)
            if os.getppid() != expected:
                os._exit(1)

    threading.Thread(target=watch, name="optnoise-die-with-parent", daemon=True).start()
