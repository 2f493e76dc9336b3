"""The data sets optnoise ships, found and loaded in one place.

The repository's top-level ``data/`` folder holds every data set the figures
use (each sub-folder has a README with provenance, licence and what was
changed):

``dpbench``
    DPBench 1-D histograms, 4096 bins each (permute-and-flip experiments).
``macbeth``
    The text of Macbeth (composition paper, Fig. 6).
``meters``
    Hourly smart-meter readings of 1,014 London households in 2013, the
    public stand-in for the optimum-noise paper's Fig. 14 pipeline.

``$OPTNOISE_DATA`` overrides the location: when it is set, data set ``name``
is read from ``$OPTNOISE_DATA/<name>``. Nothing outside these two places is
ever consulted, so a fresh clone reproduces every figure by itself.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from optnoise.engine.validation import check_choice, check_int

__all__ = [
    "DATASETS",
    "DPBENCH_BAR_DATASETS",
    "DPBENCH_DATASETS",
    "DPBENCH_LINE_DATASETS",
    "MeterData",
    "data_dir",
    "data_fingerprint",
    "load_dpbench",
    "load_macbeth",
    "load_meters",
    "macbeth_word_counts",
]

#: The data sets under ``data/``.
DATASETS = ("dpbench", "macbeth", "meters")

#: DPBench datasets of the permute-and-flip line plots (Figs. 3(a,b), 5, 6), in the authors' order.
DPBENCH_LINE_DATASETS = ("HEPTH", "MEDCOST", "ADULTFRANK", "INCOME", "SEARCHLOGS", "PATENT")
#: DPBench datasets of the permute-and-flip bar plots (Figs. 3(c), 7).
DPBENCH_BAR_DATASETS = ("HEPTH", "ADULTFRANK", "MEDCOST", "SEARCHLOGS", "PATENT")
#: Every DPBench histogram shipped in ``data/dpbench``.
DPBENCH_DATASETS = (*DPBENCH_LINE_DATASETS, "NETTRACE")

#: Tokenisation of the Macbeth word counts: lower-case, then maximal runs of
#: letters a-z keeping inner apostrophes ("call'd" is one word).
_WORD_RE = re.compile(r"[a-z]+(?:'[a-z]+)*")

# The repository root: an editable install (and every checkout) keeps the
# package next to data/.
_REPO_DATA = Path(__file__).resolve().parents[2] / "data"


def data_dir(name: str) -> Path:
    """Folder of data set ``name`` (one of :data:`DATASETS`).

    ``$OPTNOISE_DATA/<name>`` when that variable is set, else
    ``<repository>/data/<name>``. Raises ``ValueError`` naming the folder and
    the override when it does not exist.
    """
    name = check_choice("name", name, DATASETS)
    env = os.environ.get("OPTNOISE_DATA")
    base = Path(env) if env else _REPO_DATA
    folder = base / name
    if not folder.is_dir():
        where = "$OPTNOISE_DATA" if env else "the repository's data/ folder"
        raise ValueError(
            f"data set {name!r} not found at {folder} (looked in {where}); "
            "set OPTNOISE_DATA to a folder holding dpbench/, macbeth/ and meters/"
        )
    return folder


def data_fingerprint() -> str:
    """SHA-256 of every data file (names and bytes) under the data root in use (``$OPTNOISE_DATA`` or ``data/``).

    Part of the key under which the figure runner records a script's outputs, so changed data
    makes every figure be drawn again.
    """
    import hashlib

    env = os.environ.get("OPTNOISE_DATA")
    base = Path(env) if env else _REPO_DATA
    h = hashlib.sha256(str(env).encode())
    for f in sorted(p for p in base.rglob("*") if p.is_file()) if base.is_dir() else []:
        h.update(str(f.relative_to(base)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def _file(name: str, filename: str, data_dir_: str | os.PathLike[str] | None) -> Path:
    folder = Path(data_dir_) if data_dir_ is not None else data_dir(name)
    path = folder / filename
    if not path.is_file():
        raise ValueError(f"data_dir must hold {filename}; not found in {folder}")
    return path


def load_dpbench(name: str, *, bins: int = 1024, data_dir: str | os.PathLike[str] | None = None) -> np.ndarray:
    """A DPBench 1-D histogram, its 4096 bins summed in groups of adjacent bins to ``bins``.

    ``bins=1024`` sums groups of 4 adjacent bins, as McKenna & Sheldon (2020,
    Sec. 6) did.

    Parameters
    ----------
    name : str
        One of :data:`DPBENCH_DATASETS`.
    bins : int
        Number of output bins; must divide 4096.
    data_dir : path, optional
        Folder holding ``<name>.n4096.npy`` (default: :func:`data_dir` ``("dpbench")``).
    """
    name = check_choice("name", name, DPBENCH_DATASETS)
    bins = check_int("bins", bins, minimum=1, maximum=4096)
    if 4096 % bins:
        raise ValueError(f"bins must divide 4096; got {bins}")
    x = np.load(_file("dpbench", f"{name}.n4096.npy", data_dir)).astype(np.float64)
    return x.reshape(bins, -1).sum(axis=1)


def load_macbeth(*, data_dir: str | os.PathLike[str] | None = None) -> str:
    """The text of Shakespeare's Macbeth (ASCII, as shipped in ``data/macbeth``)."""
    return _file("macbeth", "shakespeare-macbeth.txt", data_dir).read_text(encoding="ascii")


def macbeth_word_counts(
    k: int | None = None, *, data_dir: str | os.PathLike[str] | None = None
) -> list[tuple[str, int]]:
    """Word counts of Macbeth, most frequent first (ties by first appearance).

    Lower-cased, words are maximal runs of letters a-z with inner apostrophes;
    no stop words are removed. ``k`` keeps the ``k`` most frequent.
    """
    if k is not None:
        k = check_int("k", k, minimum=1)
    words = _WORD_RE.findall(load_macbeth(data_dir=data_dir).lower())
    return Counter(words).most_common(k)


@dataclass(frozen=True)
class MeterData:
    """Hourly smart-meter readings (see ``data/meters/README.md``).

    Attributes
    ----------
    household_ids : ndarray of str, shape (H,)
        LCL household ids, sorted.
    wh : ndarray of uint16, shape (H, 8760)
        Energy used in each hour of 2013, in Wh; 0 where not observed.
    observed : ndarray of bool, shape (H, 8760)
        Whether both half-hour readings of that hour exist.
    """

    household_ids: np.ndarray
    wh: np.ndarray
    observed: np.ndarray

    @property
    def kwh(self) -> np.ndarray:
        """Hourly kWh with NaN where not observed."""
        return np.where(self.observed, self.wh / 1000.0, np.nan)


def load_meters(*, data_dir: str | os.PathLike[str] | None = None) -> MeterData:
    """The London smart-meter stand-in data of the Fig. 14 pipeline (1,014 homes, 2013)."""
    with np.load(_file("meters", "lcl2013_hourly.npz", data_dir)) as z:
        return MeterData(household_ids=z["household_ids"], wh=z["wh"], observed=z["observed"])
