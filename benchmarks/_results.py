"""Shared by the benchmark scripts: the machine description and RESULTS.md sections.

Each script owns one section of ``benchmarks/RESULTS.md`` between
``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` and rewrites only that.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

RESULTS = Path(__file__).with_name("RESULTS.md")
HEADER = "# Benchmarks\n\nEach section is written by its own script.\n"


#: The 1-minute load average when the benchmark started (before its own work), for the record.
LOAD_AT_START = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def machine() -> str:
    """CPU model, core count, Python, numpy and OS, and the load when the run started, for the record."""
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import numpy

    return (
        f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, numpy {numpy.__version__}, "
        f"{platform.system()} {platform.release()}; load average {LOAD_AT_START:.1f} when the run started "
        "(wall times on a shared machine are noisy)"
    )


def write_section(name: str, body: str, path: Path = RESULTS) -> None:
    """Replace (or append) the ``name`` section of ``path`` with ``body``."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    block = f"{start}\n{body.strip()}\n{end}"
    old = path.read_text() if path.exists() else HEADER
    if start in old and end in old:
        new = old[: old.index(start)] + block + old[old.index(end) + len(end) :]
    else:
        new = old.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(new)


def fmt_row(cells) -> str:
    """One row of a Markdown table."""
    return "| " + " | ".join(str(c) for c in cells) + " |"
