"""Writing figures: PNGs without timestamps or versions, output paths checked first."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

from optnoise.engine.io import atomic_write_bytes
from optnoise.engine.validation import shown

__all__ = ["check_plot_path", "save_figure", "PNG_METADATA"]


#: PNG metadata of every figure: no software version or timestamp, so the
#: bytes depend only on what is drawn.
PNG_METADATA: dict[str, Any] = {"Software": None}


def check_plot_path(path: str | os.PathLike) -> Path:
    """An output path ending in .png, .pdf or .svg."""
    p = Path(path)
    if p.suffix.lower() not in (".png", ".pdf", ".svg"):
        raise ValueError(f"plot path must end in .png, .pdf or .svg; got {shown(str(path))}")
    return p


def save_figure(fig: Any, path: str | os.PathLike) -> Path:
    """Write a figure (format by the suffix, 150 dpi, PNG metadata without software/time) and close it."""
    import matplotlib.pyplot as plt

    path = check_plot_path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()  # rendered first, then written like every output (never replacing a FIFO or a device)
    fmt = path.suffix.lower().lstrip(".")
    fig.savefig(buf, format=fmt, dpi=150, bbox_inches="tight", metadata=PNG_METADATA if fmt == "png" else None)
    plt.close(fig)
    atomic_write_bytes(path, buf.getvalue(), what="plot")
    return path
