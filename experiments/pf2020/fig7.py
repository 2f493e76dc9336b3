"""Fig. 7 (Appendix G) of McKenna & Sheldon (2020): EM vs PF on both tasks at a fixed PF error.

Mode (left) and median (right) on HEPTH, ADULTFRANK, MEDCOST, SEARCHLOGS and
PATENT (1024 bins), each at the eps where PF's expected error is 50, as for
Fig. 3(c) (the authors' notebook fixes EM's instead, see ``fig3c_em``; its bar
charts exclude INCOME, and so do these); bar labels give EM/PF.
Mode: q = counts, monotonic variant, errors in counts; median: sensitivity 1.
"""

import os  # noqa: E402
import sys  # noqa: E402

import matplotlib.pyplot as plt

from optnoise.datasets import DPBENCH_BAR_DATASETS
from optnoise.figures import FigureScript

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _pf2020 import bar_panel  # noqa: E402


def main(argv=None) -> int:
    fs = FigureScript("pf2020", "fig7", argv, description=__doc__)
    datasets = fs.grid(full=DPBENCH_BAR_DATASETS, fast=("MEDCOST", "ADULTFRANK"))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    rows = []
    for ax, task in zip(axes, ("mode", "median"), strict=False):
        rows += bar_panel(ax, datasets, task)
    axes[0].legend(loc="upper center", ncol=2)
    fig.tight_layout()
    fs.save(fig, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
