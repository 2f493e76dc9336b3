"""File helpers shared by the cache, the design files, the figures and the CLI: every read and write goes here.

* **Writes** (:func:`atomic_write_text`, :func:`atomic_write_bytes`) go through a uniquely
  named temporary file in the target's folder, renamed into place, so concurrent writers of
  one path (sweep workers, parallel figure scripts) never see a half-written file. They never
  replace what is not a regular file: a FIFO, a device, a socket or a folder at the path is
  refused in one line (as root, replacing ``/dev/full`` would destroy the device node); a
  symbolic link is followed and its target replaced, so the link stays. New files follow the
  umask (``0o666 & ~umask``); a replaced regular file keeps its mode.
* **Reads** (:func:`read_bytes`, :func:`read_text`, :func:`read_json`) accept regular files
  only, at most :data:`MAX_INPUT_BYTES` long, checked on the open file before anything is
  read: ``/dev/zero`` is refused instead of read forever, and a FIFO is refused instead of
  waited on. Every way a file can be unreadable (missing, not UTF-8, malformed JSON, nested
  deeper than the parser's recursion limit) is one ``ValueError`` naming what was read.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from optnoise.engine.shown import shown

__all__ = [
    "MAX_INPUT_BYTES",
    "atomic_write_bytes",
    "atomic_write_text",
    "check_writable_target",
    "ensure_folder",
    "read_bytes",
    "read_json",
    "read_text",
]

#: Largest file any optnoise command reads (result and design files, PMF and cost arrays, cache entries).
MAX_INPUT_BYTES = 256 * 2**20


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a directory"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def check_writable_target(path: str | os.PathLike[str], what: str = "output") -> Path:
    """The regular file that writing ``path`` will replace: ``path``, or the target of the link at ``path``.

    Refuses (``ValueError``, one line) a path whose target exists and is not a regular file.
    """
    p = Path(path)
    target = Path(os.path.realpath(p)) if p.is_symlink() else p
    try:
        mode = target.stat().st_mode
    except FileNotFoundError:
        return target
    except OSError as exc:
        raise ValueError(f"{what} {shown(str(path))} cannot be used: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        raise ValueError(f"{what} {shown(str(path))} is {_kind(mode)}, not a regular file: refusing to replace it")
    return target


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, what: str = "output") -> Path:
    """Write ``data`` to ``path`` atomically (module docstring); returns ``path``.

    Raises ``ValueError`` naming the path when it cannot be written (a non-regular file,
    a missing or read-only directory).
    """
    target = check_writable_target(path, what)
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise ValueError(f"cannot write {shown(str(path))}: {exc.strerror or exc}") from None
    try:
        os.fchmod(fd, mode)  # mkstemp creates 0600; the file gets the mode it would have had
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(path)


def atomic_write_text(path: str | os.PathLike[str], text: str, what: str = "output") -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; see :func:`atomic_write_bytes`."""
    return atomic_write_bytes(path, text.encode("utf-8"), what)


def read_bytes(path: str | os.PathLike[str], what: str) -> bytes:
    """The bytes of the regular file ``path`` (at most :data:`MAX_INPUT_BYTES`); ``ValueError`` naming ``what``."""
    try:
        # O_NONBLOCK: opening a FIFO for reading must not wait for a writer before we can refuse it
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise ValueError(f"{what} could not be read from {shown(str(path))}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"{what} {shown(str(path))} is {_kind(st.st_mode)}, not a regular file")
        if st.st_size > MAX_INPUT_BYTES:
            raise ValueError(
                f"{what} {shown(str(path))} is {st.st_size} bytes, more than the {MAX_INPUT_BYTES} bytes optnoise reads"
            )
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(MAX_INPUT_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_INPUT_BYTES:  # it grew while we read it
        raise ValueError(f"{what} {shown(str(path))} is more than the {MAX_INPUT_BYTES} bytes optnoise reads")
    return data


def read_text(path: str | os.PathLike[str], what: str) -> str:
    """The UTF-8 text of the regular file ``path``; see :func:`read_bytes`."""
    try:
        return read_bytes(path, what).decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{what} {shown(str(path))} is not UTF-8 text") from None


def read_json(path: str | os.PathLike[str], what: str) -> Any:
    """The JSON value stored in ``path``; ``ValueError`` naming ``what`` if it cannot be read."""
    text = read_text(path, what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{what} {shown(str(path))} is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise ValueError(f"{what} {shown(str(path))} is nested too deeply to be a valid file") from None


def ensure_folder(name: str, folder: Any) -> Path:
    """The folder ``folder``, created if needed; a path that is a file or cannot be created is refused."""
    if not isinstance(folder, (str, os.PathLike)) or not str(folder).strip():
        raise ValueError(f"{name} must be a folder path; got {shown(folder)}")
    path = Path(folder)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{name} must be a folder; {shown(str(path))} is a file")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"{name} folder {shown(str(path))} cannot be created: {exc.strerror or exc}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ValueError(f"{name} folder {shown(str(path))} is not writable")
    return path
