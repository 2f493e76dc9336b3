"""Small file helpers shared by the cache, the design files and the CLI.

* :func:`atomic_write_text` writes through a uniquely named temporary file in
  the target's folder and renames it into place, so concurrent writers of one
  path (sweep workers, parallel figure scripts) never see a half-written file
  and never trip over each other's temporary file.
* :func:`read_json` turns every way a JSON file can be unreadable (missing,
  not UTF-8, malformed, nested deeper than the parser's recursion limit) into
  one ``ValueError`` that names what was being read.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["atomic_write_text", "ensure_folder", "read_json"]


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` to ``path`` atomically (unique temporary file + ``os.replace``).

    Raises ``ValueError`` naming the path when it cannot be written (a folder,
    a missing or read-only directory).
    """
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{str(path)!r} is a directory; give a file path")
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise ValueError(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def read_json(path: str | os.PathLike[str], what: str) -> Any:
    """The JSON value stored in ``path``; ``ValueError`` naming ``what`` if it cannot be read."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{what} could not be read from {str(path)!r}: {exc.__class__.__name__}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{what} {str(path)!r} is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise ValueError(f"{what} {str(path)!r} is nested too deeply to be a valid file") from None


def ensure_folder(name: str, folder: Any) -> Path:
    """The folder ``folder``, created if needed; a path that is a file or cannot be created is refused."""
    if not isinstance(folder, (str, os.PathLike)) or not str(folder).strip():
        raise ValueError(f"{name} must be a folder path; got {folder!r}")
    path = Path(folder)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{name} must be a folder; {str(path)!r} is a file")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"{name} folder {str(path)!r} cannot be created: {exc.strerror or exc}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ValueError(f"{name} folder {str(path)!r} is not writable")
    return path
