"""On-disk result caches: one JSON file per (problem, solve options), keyed by a stable hash.

``NoiseDesign.solve(cache=...)`` and ``MechanismDesign.solve(cache=...)``
(and so sweeps) share these helpers: a hit skips the solve, the result is
rebuilt from its JSON (which re-verifies it from scratch), a file that cannot
be rebuilt is deleted and solved again, and a new entry is written atomically
(a temporary file, then a rename), so a sweep interrupted mid-write leaves no
half-written entry.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["problem_key", "cache_path", "load_cached", "store_cached"]

R = TypeVar("R")


def problem_key(spec: dict[str, Any], options: dict[str, Any]) -> str:
    """Stable hash (24 hex digits) of a problem's ``spec()`` and the solve options."""
    blob = json.dumps({"spec": spec, "opts": options, "v": 1}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def cache_path(cache: str | os.PathLike | None, key: str) -> Path | None:
    """The entry of ``key`` in the folder ``cache`` (``None`` without a cache)."""
    return None if cache is None else Path(cache) / f"{key}.json"


def load_cached(path: Path | None, rebuild: Callable[[dict[str, Any]], R]) -> R | None:
    """The cached result at ``path`` rebuilt by ``rebuild``, or ``None`` (no entry, or a corrupt one, deleted)."""
    if path is None or not path.exists():
        return None
    try:
        return rebuild(json.loads(path.read_text()))
    except (ValueError, KeyError, TypeError, json.JSONDecodeError):
        path.unlink(missing_ok=True)  # corrupt cache entry: solve again
        return None


def store_cached(path: Path | None, data: dict[str, Any]) -> None:
    """Write ``data`` (a result's ``to_dict()``) to ``path`` atomically; nothing without a cache."""
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)
