"""On-disk cache of expensive results (design solves, lattice LPs), shared by every caller.

A result is stored as one JSON file ``<folder>/<key>.json``. The key is a hash of
everything that determines the result (the problem, the solver and its options,
and :data:`CACHE_VERSION`), so a changed problem or option never reads a stale
entry; bump :data:`CACHE_VERSION` when a formulation changes what a key means.
Writes are atomic (a temporary file renamed into place), so parallel figure
scripts or sweep workers sharing a folder never see half an entry, and a
corrupt entry is dropped and recomputed.

>>> import tempfile
>>> folder = tempfile.mkdtemp()
>>> key = cache_key("example", {"n": 8})
>>> cached(folder, key, lambda: {"answer": 42})
{'answer': 42}
>>> cached(folder, key, lambda: {"answer": 0})  # a hit: not recomputed
{'answer': 42}
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["CACHE_VERSION", "cache_key", "cache_load", "cache_store", "cached"]

#: Part of every key; raise it when a change to optnoise makes old entries wrong.
CACHE_VERSION = 1


def cache_key(kind: str, payload: Mapping[str, Any]) -> str:
    """A stable 24-hex-digit key of ``payload`` (plain data) for results of kind ``kind``."""
    blob = json.dumps({"kind": kind, "payload": payload, "v": CACHE_VERSION}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def _path(folder: str | os.PathLike, key: str) -> Path:
    return Path(folder) / f"{key}.json"


def cache_load(folder: str | os.PathLike, key: str) -> dict[str, Any] | None:
    """The entry stored under ``key``, or ``None`` (missing or unreadable; an unreadable one is removed)."""
    path = _path(folder, key)
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        path.unlink(missing_ok=True)
        return None
    return data if isinstance(data, dict) else None


def cache_store(folder: str | os.PathLike, key: str, data: Mapping[str, Any]) -> None:
    """Store ``data`` (JSON-ready) under ``key``, atomically."""
    path = _path(folder, key)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)


def cached(
    folder: str | os.PathLike | None,
    key: str,
    compute: Callable[[], dict[str, Any]],
    *,
    accept: Callable[[dict[str, Any]], bool] | None = None,
) -> dict[str, Any]:
    """``compute()``, or the entry stored under ``key`` in ``folder`` (``None``: no cache).

    A fresh result is stored only when ``accept(result)`` holds (default: always), so a
    solve that hit its time limit can be left out and retried next time.
    """
    if folder is None:
        return compute()
    hit = cache_load(folder, key)
    if hit is not None:
        return hit
    data = compute()
    if accept is None or accept(data):
        cache_store(folder, key, data)
    return data
