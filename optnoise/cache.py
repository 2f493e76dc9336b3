"""On-disk result caches: one JSON entry per (problem, solve options), keyed by a stable hash.

``NoiseDesign.solve(cache=...)`` and ``MechanismDesign.solve(cache=...)`` (and
so sweeps) share these helpers. An entry stores the cache format, the
problem's ``spec()`` and the result's ``to_dict()``. It is used only if its
format is current, its stored spec equals the design's (the key already hashes
the spec; comparing the stored one catches a replaced file) and the result
rebuilt from it (which re-verifies it from scratch) is neither
``"unverified"`` nor ``"error"``; otherwise the design is solved again and the
entry overwritten. Entries are written atomically, and unverified or failed
results are never written.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ._io import atomic_write_text, ensure_folder, read_json
from .tolerance import UNVERIFIED

__all__ = ["CACHE_FORMAT", "problem_key", "entry_path", "load_entry", "store_entry"]

#: Bump when a change makes cached results of older versions wrong.
CACHE_FORMAT = 2

R = TypeVar("R")


def problem_key(spec: dict[str, Any], options: dict[str, Any]) -> str:
    """Stable hash (24 hex digits) of a problem's ``spec()`` and the solve options."""
    blob = json.dumps({"spec": spec, "opts": options, "v": 1}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def entry_path(cache: str | os.PathLike | None, key: str) -> Path | None:
    """The entry of ``key`` in the folder ``cache`` (created if needed); ``None`` without a cache."""
    return None if cache is None else ensure_folder("cache", cache) / f"{key}.json"


def load_entry(path: Path | None, spec: dict[str, Any], rebuild: Callable[[dict[str, Any]], R]) -> R | None:
    """The cached result at ``path``, or ``None`` when absent, stale, corrupt or unverifiable.

    ``rebuild`` turns the stored ``to_dict()`` back into a result (re-verifying it).
    """
    if path is None or not path.exists():
        return None
    try:
        data = read_json(path, "cache entry")
        if not isinstance(data, dict) or data.get("cache_format") != CACHE_FORMAT:
            return None
        if data.get("spec") != json.loads(json.dumps(spec)):
            return None
        res = rebuild(data["result"])
    except (ValueError, KeyError, TypeError):
        return None
    # the rebuilt result was re-verified: an entry that fails is solved again (and overwritten)
    return None if getattr(res, "status", None) in (UNVERIFIED, "error") else res


def store_entry(path: Path | None, spec: dict[str, Any], result: Any) -> None:
    """Write ``result`` to ``path`` atomically, unless there is no cache or it is unverified or failed."""
    if path is None or result.status in (UNVERIFIED, "error"):
        return
    entry = {"cache_format": CACHE_FORMAT, "spec": spec, "result": result.to_dict()}
    atomic_write_text(path, json.dumps(entry))
