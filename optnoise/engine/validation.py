"""Shared input validation.

Every public entry point funnels user input through these helpers so that a
mistake surfaces as one ``ValueError`` that names the parameter and the
allowed values, never as a solver traceback or a silent wrong answer.
"""

from __future__ import annotations

import math
import numbers
import os
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from optnoise.engine.io import check_writable_target
from optnoise.engine.shown import shown

__all__ = [
    "check_choice",
    "check_eps",
    "check_delta",
    "check_int",
    "check_positive",
    "check_finite",
    "check_pmf",
    "check_probability",
    "check_finite_array",
    "real_array",
    "check_int_array",
    "check_bool",
    "check_mapping",
    "check_model_size",
    "check_output_path",
    "check_jobs",
    "max_jobs",
    "parse_int",
    "parse_float",
    "MAX_SIZE",
    "MAX_SHIFTS",
    "MAX_ROWS",
    "MAX_COLS",
    "MAX_NONZEROS",
    "MAX_INTEGERS",
    "MAX_GRID_POINTS",
    "MAX_CELLS",
    "MAX_EPS",
    "MAX_EPS_REASON",
    "MAX_FINITE_EPS",
    "MAX_COST",
    "MAX_OUTPUT",
    "JOBS_PER_CORE",
]

# ------------------------------------------------------------------------------------------
# Documented limits. Bad input is refused against these *before* anything is expanded or
# allocated, so a typo never exhausts memory or hangs (README, "Limits").
# ------------------------------------------------------------------------------------------

#: Largest number of noise values ``(n+1)^d`` of a design.
MAX_SIZE = 2_000_000
#: Largest number of shifts a neighbourhood may list (``bd:MUBAR`` lists MUBAR of them).
MAX_SHIFTS = 100_000
#: Largest LP/MILP a design may build: rows, columns, nonzeros and integer columns.
MAX_ROWS = 10_000_000
MAX_COLS = 10_000_000
MAX_NONZEROS = 30_000_000
MAX_INTEGERS = 2_000_000
#: Largest number of points of a sweep grid (checked before the grid is materialised).
MAX_GRID_POINTS = 100_000
#: Largest number of (shift, noise value) pairs one accounting call holds in memory.
MAX_CELLS = 50_000_000
#: Largest eps of an LP/MILP design: e^eps is a model coefficient, and HiGHS refuses
#: coefficients above 1e15 (e^34.5 ~ 9.6e14); beyond it use a closed form or the exact checks.
MAX_EPS = 34.5
#: Why :data:`MAX_EPS` bounds eps, for ``check_eps(eps, maximum=MAX_EPS, why=MAX_EPS_REASON)``.
MAX_EPS_REASON = (
    "for an LP/MILP design: e^eps is a model coefficient and solvers refuse coefficients above 1e15; "
    "at such eps the optimum puts all but ~e^-eps of the mass on the true answer"
)
#: Largest eps of a computation that evaluates e^eps itself (beyond log(DBL_MAX) ~ 709.78 it
#: overflows a double); closed forms and accounting work in log space and take any finite eps.
MAX_FINITE_EPS = math.log(sys.float_info.max)
#: Largest magnitude of a custom cost entry (solvers treat ~1e20 as infinite).
MAX_COST = 1e15
#: Largest magnitude of a mechanism's output value: its losses ``|v - x|`` stay within :data:`MAX_COST`
#: and its reported squared errors finite (an output of 1e308 overflowed them to inf).
MAX_OUTPUT = 10**15
#: Local worker processes allowed per core (``jobs <= JOBS_PER_CORE * os.cpu_count()``, :func:`max_jobs`).
JOBS_PER_CORE = 4


def _as_float(name: str, value: Any) -> float:
    # bools and strings are refused rather than coerced ("12" is not the number 12 here)
    if isinstance(value, (bool, np.bool_, str, bytes)):
        raise ValueError(f"{name} must be a real number; got {shown(value)}")
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number; got {shown(value)}") from None
    return out


def check_finite(name: str, value: Any) -> float:
    """Return ``value`` as a float, refusing NaN and infinities."""
    out = _as_float(name, value)
    if not math.isfinite(out):
        raise ValueError(f"{name} must be finite; got {shown(value)}")
    return out


def check_positive(name: str, value: Any, *, allow_zero: bool = False) -> float:
    """A finite real number > 0 (or >= 0 with ``allow_zero``)."""
    out = check_finite(name, value)
    if out < 0 or (out == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite number {bound}; got {shown(value)}")
    return out


def check_eps(
    value: Any,
    name: str = "eps",
    *,
    allow_zero: bool = False,
    maximum: float | None = None,
    why: str = "e^eps must be a finite double",
) -> float:
    """Privacy parameter epsilon: finite and > 0 (>= 0 when ``allow_zero``), at most ``maximum`` if given.

    Closed forms and accounting handle any finite eps; callers that compute ``e^eps`` itself pass
    ``maximum=MAX_FINITE_EPS``, and LP/MILP designs :data:`MAX_EPS`. ``why`` explains the bound in
    the error message.
    """
    out = check_positive(name, value, allow_zero=allow_zero)
    if maximum is not None and out > maximum:
        raise ValueError(f"{name} must be <= {maximum:g} ({why}); got {shown(value)}")
    return out


def check_probability(name: str, value: Any) -> float:
    """A finite number in [0, 1]."""
    out = check_finite(name, value)
    if not 0.0 <= out <= 1.0:
        raise ValueError(f"{name} must be in [0, 1]; got {shown(value)}")
    return out


def check_delta(value: Any, name: str = "delta") -> float:
    """Privacy parameter delta in [0, 1]."""
    return check_probability(name, value)


def check_int(
    name: str,
    value: Any,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int:
    """An integer within bounds: a Python ``int`` or a numpy integer, compared exactly.

    Floats (also integral ones such as ``8.0``), bools, strings and other types
    are refused, not coerced: a float where a count or size belongs is a
    mistake upstream (a division, a JSON ``8.0``), and ``True`` is not 1.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer (an int, not a float or bool); got {shown(value)}")
    out = int(value)
    if minimum is not None and out < minimum:
        hi = f" and <= {maximum}" if maximum is not None else ""
        raise ValueError(f"{name} must be an integer >= {minimum}{hi}; got {shown(value)}")
    if maximum is not None and out > maximum:
        lo = f">= {minimum} and " if minimum is not None else ""
        raise ValueError(f"{name} must be an integer {lo}<= {maximum}; got {shown(value)}")
    return out


def max_jobs() -> int:
    """Largest number of local worker processes: :data:`JOBS_PER_CORE` per core of this machine.

    Each sweep worker runs one single-threaded solve, so more workers than cores
    only time-share them; a few per core still overlap solves with their I/O
    (cache writes, process start-up) and allow for a core count that
    under-reports, while a typo such as ``--jobs 1000`` no longer forks a
    thousand processes.
    """
    return JOBS_PER_CORE * (os.cpu_count() or 1)


def check_jobs(value: Any, name: str = "jobs") -> int:
    """Number of local worker processes: an integer in ``[1, max_jobs()]`` (:func:`max_jobs`)."""
    try:
        return check_int(name, value, minimum=1, maximum=max_jobs())
    except ValueError as exc:
        cores = os.cpu_count() or 1
        raise ValueError(
            f"{exc} (at most {JOBS_PER_CORE} worker processes per core; this machine has {cores})"
        ) from None


def check_choice(name: str, value: Any, choices: Iterable[str]) -> str:
    """One of a fixed set of strings."""
    choices = tuple(choices)
    if not isinstance(value, str) or value not in choices:
        allowed = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {allowed}; got {shown(value)}")
    return value


def real_array(name: str, value: Any) -> np.ndarray:
    """``value`` as a float array; bools, strings and other non-numbers are refused, not coerced."""
    try:
        raw = np.asarray(value)
        if raw.dtype.kind == "O":  # ragged, huge ints or mixed objects: only plain numbers are accepted
            if not all(isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) for v in raw.ravel()):
                raise TypeError
        elif raw.dtype.kind not in "iuf":
            raise TypeError
        return np.asarray(raw, dtype=float)
    except (TypeError, ValueError, OverflowError, RecursionError):
        raise ValueError(f"{name} must be an array of real numbers; got {type(value).__name__}") from None


def check_pmf(name: str, pmf: Any, *, atol: float = 1e-9) -> np.ndarray:
    """A finite, non-negative array (at least 1-D) that sums to 1 within ``atol``."""
    arr = real_array(name, pmf)
    if arr.ndim == 0:
        raise ValueError(f"{name} must be an array of probabilities, not a single number; got {shown(pmf)}")
    if arr.size == 0:
        raise ValueError(f"{name} must be a non-empty array of probabilities")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values (no NaN or inf)")
    if np.any(arr < 0):
        raise ValueError(f"{name} must be non-negative; its smallest entry is {shown(arr.min())}")
    total = float(arr.sum())
    if abs(total - 1.0) > atol:
        raise ValueError(f"{name} must sum to 1 (within {atol:g}); it sums to {shown(total)}")
    return arr


def check_finite_array(name: str, value: Any, *, ndim: int = 1, min_size: int = 1) -> np.ndarray:
    """A float array of exactly ``ndim`` dimensions, at least ``min_size`` entries, no NaN or inf."""
    arr = real_array(name, value)
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-dimensional array; got shape {arr.shape}")
    if arr.size < min_size:
        raise ValueError(f"{name} must have at least {min_size} entries; got {arr.size}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values (no NaN or inf)")
    return arr


def check_int_array(name: str, value: Any, *, minimum: int | None = None, maximum: int | None = None) -> np.ndarray:
    """An int64 array of exact integers within bounds.

    Python integers of any size are compared exactly *before* conversion, so
    ``2**70`` is refused as out of range instead of overflowing; bools,
    strings, non-integral and non-finite floats are refused.
    """
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be integers; got {shown(value)}") from None
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iufO":
        raise ValueError(f"{name} must be integers; got {shown(value)}")
    if arr.dtype.kind == "O":
        flat = arr.ravel().tolist()
        if not all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in flat):
            raise ValueError(f"{name} must be integers; got {shown(value)}")
        ints = [int(v) for v in flat]
    elif arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise ValueError(f"{name} must be integers; got {shown(value)}")
        ints = [int(v) for v in arr.ravel().tolist()]
    else:
        ints = [int(v) for v in arr.ravel().tolist()]
    lo = -(2**63) if minimum is None else minimum
    hi = 2**63 - 1 if maximum is None else maximum
    bad = [v for v in ints if v < lo or v > hi]
    if bad:
        raise ValueError(f"{name} must be integers in [{lo}, {hi}]; got {bad[0]}")
    return np.array(ints, dtype=np.int64).reshape(arr.shape)


def check_bool(name: str, value: Any) -> bool:
    """A real boolean (``True``/``False``); strings such as ``"false"`` are refused, not coerced."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ValueError(f"{name} must be True or False; got {shown(value)}")


def check_mapping(name: str, value: Any) -> dict[str, Any]:
    """A mapping with string keys (e.g. solver options), copied into a dict."""
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise ValueError(f"{name} must be a mapping of names to values; got {type(value).__name__}")
    return dict(value)


def check_model_size(size: Mapping[str, int], *, what: str = "the model") -> None:
    """Refuse a model whose estimated ``rows``, ``cols``, ``nonzeros`` or ``integers`` exceed the limits.

    Called with an estimate *before* a model is built, so an oversized problem
    costs nothing but this message.
    """
    limits = {"rows": MAX_ROWS, "cols": MAX_COLS, "nonzeros": MAX_NONZEROS, "integers": MAX_INTEGERS}
    for key, limit in limits.items():
        if int(size.get(key, 0)) > limit:
            parts = ", ".join(f"{k}={int(size.get(k, 0))}" for k in limits)
            raise ValueError(
                f"{what} is too large: {key} = {int(size[key])} exceeds the limit {limit} ({parts}); "
                "reduce n, the number of shifts, or use privacy='dp' (an LP)"
            )


_INT_RE = re.compile(r"[+-]?[0-9]+")
_FLOAT_RE = re.compile(r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)", re.IGNORECASE)
#: Longest integer literal parsed (far beyond any meaningful size; refused before conversion).
_MAX_DIGITS = 400


def parse_int(name: str, text: Any) -> int:
    """An integer written in ASCII decimal (optional sign), parsed exactly.

    Refuses what ``int()`` would silently accept: non-ASCII digits (``"١"``),
    underscores, empty text, and literals longer than 400 digits.
    """
    if not isinstance(text, str):
        raise ValueError(f"{name} must be an integer written in decimal; got {shown(text)}")
    s = text.strip()
    if not _INT_RE.fullmatch(s):
        raise ValueError(f"{name} must be an integer written with ASCII digits 0-9; got {shown(text)}")
    if len(s) > _MAX_DIGITS:
        raise ValueError(f"{name} is too large: {len(s)} digits")
    return int(s)


def parse_float(name: str, text: Any) -> float:
    """A real number written in ASCII (``1``, ``-0.5``, ``1e-9``, ``inf``, ``nan``).

    ``nan`` and ``inf`` parse (so that the range check names them); non-ASCII
    digits, underscores and empty text are refused.
    """
    if not isinstance(text, str):
        raise ValueError(f"{name} must be a number; got {shown(text)}")
    s = text.strip()
    if len(s) > _MAX_DIGITS or not _FLOAT_RE.fullmatch(s):
        raise ValueError(f"{name} must be a number written with ASCII digits (e.g. 0.5 or 1e-9); got {shown(text)}")
    return float(s)


def check_output_path(name: str, path: Any) -> Path:
    """A file path that can be written: a regular file or none yet, in an existing writable directory.

    Checked before any work starts, so a typo in an output path fails in one
    line instead of after a long solve.
    """
    if not isinstance(path, (str, os.PathLike)) or not str(path).strip():
        raise ValueError(f"{name} must be a file path; got {shown(path)}")
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"{name} {shown(str(p))} is a directory; give a file path")
    p = check_writable_target(p, name)  # a FIFO, device or socket is never replaced; a link is followed
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise ValueError(f"{name} {shown(str(p))}: the directory {shown(str(parent))} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise ValueError(f"{name} {shown(str(p))} is not writable")
    return p
