"""How error messages echo user input: :func:`shown` and :func:`clip`.

Kept apart from :mod:`optnoise.engine.validation` so that the file helpers
(:mod:`optnoise.engine.io`), which validation itself uses, can cut long paths
in their messages too without an import cycle.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_SHOWN", "clip", "shown"]

#: Characters of an input value echoed in an error message (:func:`shown`); the rest is counted, not printed.
MAX_SHOWN = 80


def shown(value: Any, limit: int = MAX_SHOWN) -> str:
    """``repr(value)`` for an error message, cut to ``limit`` characters when longer.

    The cut text ends in ``"... (N chars)"``, counting what was left out. Every message that
    echoes an input goes through this, so a 120 KB ``--cost`` list or a path of 5000 characters
    gives a one-line error, not a copy of the input. Integers too long to print (Python refuses
    ``str()`` beyond 4300 digits) are described by their number of digits. A numpy scalar is shown
    as the Python number it holds (``-0.01``, not ``np.float64(-0.01)``).
    """
    item = getattr(value, "item", None)
    if type(value).__module__ == "numpy" and getattr(value, "ndim", None) == 0 and item is not None:
        value = item()
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 3300:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    try:
        text = repr(value)
    except Exception:  # a broken __repr__ must not hide the error being reported
        text = f"<{type(value).__name__}>"
    return clip(text, limit)


def clip(text: str, limit: int = MAX_SHOWN) -> str:
    """``text`` cut to ``limit`` characters when longer: :func:`shown` without ``repr``.

    The cut text ends in ``"... (N chars)"``, counting what was left out.
    """
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} chars)"
