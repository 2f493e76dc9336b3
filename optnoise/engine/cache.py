"""On-disk cache of expensive results, shared by every caller.

Two layers over one store of JSON files ``<folder>/<key>.json``:

* plain data (:func:`cached`, :func:`cache_key`): lattice LPs and figure
  scripts store whatever JSON-ready dict they computed;
* design results (:func:`problem_key`, :func:`load_entry`,
  :func:`store_entry`): ``NoiseDesign.solve(cache=...)`` and
  ``MechanismDesign.solve(cache=...)`` (and so sweeps) store the problem's
  ``spec()`` beside the result's ``to_dict()`` and its *proof*: what makes an
  ``"optimal"`` status true (an LP's row multipliers, a MILP's proven bound;
  :mod:`optnoise.design.pipeline`). An entry is used only if its format is
  current, its stored spec equals the design's (the key already hashes the spec;
  comparing the stored one catches a replaced file) and the result rebuilt from
  it (which re-verifies it from scratch and re-checks its proof) is neither
  ``"unverified"`` nor ``"error"`` and still has the status it was stored with;
  otherwise the design is solved again and the entry overwritten. Unverified or
  failed results are never written.

Keys hash everything that determines the result (the problem, the solver and
its options, and :data:`CACHE_VERSION`), so a changed problem or option never
reads a stale entry. Writes are atomic (a temporary file renamed into place),
so parallel figure scripts or sweep workers sharing a folder never see half an
entry, and a corrupt entry is dropped and recomputed.

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
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from optnoise.engine.io import atomic_write_text, ensure_folder, read_json

__all__ = [
    "CACHE_VERSION",
    "CACHE_FORMAT",
    "cache_key",
    "cache_load",
    "cache_store",
    "cached",
    "problem_key",
    "entry_path",
    "load_entry",
    "store_entry",
]

#: Part of every key; raise it when a change to optnoise makes old entries wrong.
CACHE_VERSION = 1

#: Format of a design-result entry (checked on load); 3 adds the proof of an optimal status.
CACHE_FORMAT = 3

#: Statuses never stored nor served: a result that failed its re-verification (the layers above
#: call it "unverified") or a solver error is solved again rather than remembered.
UNCACHED_STATUSES = ("unverified", "error")

R = TypeVar("R")


def cache_key(kind: str, payload: Mapping[str, Any]) -> str:
    """A stable 24-hex-digit key of ``payload`` (plain data) for results of kind ``kind``."""
    blob = json.dumps({"kind": kind, "payload": payload, "v": CACHE_VERSION}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def _path(folder: str | os.PathLike, key: str) -> Path:
    return Path(folder) / f"{key}.json"


def _read(path: Path) -> dict[str, Any] | None:
    """The JSON object at ``path``, or ``None``: missing, unreadable or corrupt entries are a miss.

    Reads go through :func:`optnoise.engine.io.read_json` (regular files of bounded size only), so an
    entry replaced by a FIFO or linked to ``/dev/zero`` is refused at once instead of hanging; a
    regular file that is not a valid entry (truncated, nested too deeply) is removed.
    """
    if not os.path.lexists(path):
        return None
    try:
        data = read_json(path, "cache entry")
    except ValueError:
        if path.is_file() and not path.is_symlink():
            path.unlink(missing_ok=True)
        return None
    return data if isinstance(data, dict) else None


def _write(path: Path, text: str) -> None:
    """Store ``text`` at ``path``; an entry that cannot be written (a folder in the way) is skipped with a warning.

    The cache folder is optnoise's own: a link or a FIFO at an entry's path is removed, not followed
    (the output rule of :mod:`optnoise.engine.io` would refuse to replace a device behind it).
    """
    if path.is_symlink() or (path.exists() and not path.is_file() and not path.is_dir()):
        path.unlink(missing_ok=True)
    try:
        atomic_write_text(path, text, what="cache entry")
    except (ValueError, OSError) as exc:
        warnings.warn(f"cache entry not stored: {exc}", RuntimeWarning, stacklevel=3)


def cache_load(folder: str | os.PathLike, key: str) -> dict[str, Any] | None:
    """The entry stored under ``key``, or ``None`` (missing or unreadable; an unreadable one is removed)."""
    return _read(_path(folder, key))


def cache_store(folder: str | os.PathLike, key: str, data: Mapping[str, Any]) -> None:
    """Store ``data`` (JSON-ready) under ``key``, atomically."""
    path = _path(folder, key)
    path.parent.mkdir(parents=True, exist_ok=True)
    _write(path, json.dumps(data))


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


def problem_key(spec: dict[str, Any], options: dict[str, Any]) -> str:
    """Stable key of a problem's ``spec()`` and the solve options."""
    return cache_key("result", {"spec": spec, "opts": options})


def entry_path(cache: str | os.PathLike | None, key: str) -> Path | None:
    """The entry of ``key`` in the folder ``cache`` (created if needed); ``None`` without a cache."""
    return None if cache is None else _path(ensure_folder("cache", cache), key)


def load_entry(path: Path | None, spec: dict[str, Any], rebuild: Callable[[dict[str, Any]], R | None]) -> R | None:
    """The cached result at ``path``, or ``None`` when absent, stale, corrupt, unverifiable or unproven.

    ``rebuild`` turns the stored entry (``"result"``: its ``to_dict()``, ``"proof"``) back into a
    result, re-verifying it and re-checking its proof (``None`` when it cannot).
    """
    data = None if path is None else _read(path)
    if data is None or data.get("cache_format") != CACHE_FORMAT:
        return None
    if data.get("spec") != json.loads(json.dumps(spec)):
        return None
    try:
        res = rebuild(data)
    except (ValueError, KeyError, TypeError):
        return None
    # the rebuilt result was re-verified and its proof re-checked: an entry that fails either, or whose
    # status changed on the way, is solved again (and overwritten)
    stored = data.get("result", {}).get("status") if isinstance(data.get("result"), dict) else None
    if res is None or getattr(res, "status", None) in UNCACHED_STATUSES or res.status != stored:  # type: ignore[attr-defined]
        return None
    return res


def store_entry(path: Path | None, spec: dict[str, Any], result: Any, proof: dict[str, Any] | None = None) -> None:
    """Write ``result`` and its ``proof`` to ``path`` atomically (not without a cache, nor unverified or failed)."""
    if path is None or result.status in UNCACHED_STATUSES:
        return
    entry = {"cache_format": CACHE_FORMAT, "spec": spec, "result": result.to_dict(), "proof": proof}
    _write(path, json.dumps(entry))
