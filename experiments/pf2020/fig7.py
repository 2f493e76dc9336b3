"""Fig. 7 (Appendix G) of McKenna & Sheldon (2020): EM vs PF on both tasks at a fixed EM error.

Mode (left) and median (right) on HEPTH, ADULTFRANK, MEDCOST, SEARCHLOGS and
PATENT (1024 bins; the authors' bar-chart datasets, without INCOME), each at
the eps where EM's expected error is 50 quality units, as in Fig. 3(c) and
the authors' ``get_bar``; bar labels give EM/PF. Quality units: mode q = 2 x
(x = count), median minus the individuals to move to make the bin the median.
"""

import os  # noqa: E402
import sys  # noqa: E402

import matplotlib.pyplot as plt

from optnoise.reproduce.datasets import DPBENCH_BAR_DATASETS
from optnoise.reproduce.figures import FigureScript

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _pf2020 import BAR_TOLERANCES, bar_panel  # noqa: E402

#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`): see ``_pf2020.REAL_DATA_TOLERANCES``.
TOLERANCES = {"fig7": BAR_TOLERANCES}


def main(argv=None) -> int:
    fs = FigureScript("pf2020", "fig7", argv, description=__doc__)
    datasets = fs.grid(full=DPBENCH_BAR_DATASETS, fast=("MEDCOST", "PATENT"))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    rows = []
    for ax, task in zip(axes, ("mode", "median"), strict=True):
        rows += bar_panel(ax, datasets, task)
    axes[0].legend(loc="upper center", ncol=2)
    fig.tight_layout()
    fs.save(fig, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
