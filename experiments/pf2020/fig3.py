"""Fig. 3 of McKenna & Sheldon (2020): EM vs PF on real data (DPBench, 1024 bins).

(a) mode and (b) median on HEPTH: exact expected error (from the pmfs) against
eps, linear from 1e-4 to where EM's error is 1 quality unit, log y axis cut at
1 (the authors' notebook). Errors are in the authors' quality units: mode
scores a bin by q = 2 x (x = count; the standard mechanisms on 2 x are the
monotonic variant of Remark 1 on x), median by minus the individuals to add
or remove to make the bin the median. The marked point is where EM needs the
largest multiple of PF's privacy budget to match PF's error (the paper's
worked examples; the numbers themselves were lost from the text).
(c) mode on HEPTH, ADULTFRANK, MEDCOST, SEARCHLOGS, PATENT at the eps where
EM's expected error is 50 quality units (the authors' ``get_bar``); bar
labels give EM/PF.
"""

import os  # noqa: E402
import sys  # noqa: E402

import matplotlib.pyplot as plt

from optnoise.reproduce.datasets import DPBENCH_BAR_DATASETS
from optnoise.reproduce.figures import FigureScript

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _pf2020 import BAR_TOLERANCES, REAL_DATA_TOLERANCES, bar_panel, real_data_panel  # noqa: E402

#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`): see ``_pf2020.REAL_DATA_TOLERANCES``.
TOLERANCES = {
    "fig3a": REAL_DATA_TOLERANCES,
    "fig3b": REAL_DATA_TOLERANCES,
    "fig3c": BAR_TOLERANCES,
}


def main(argv=None) -> int:
    fs = FigureScript("pf2020", "fig3a", argv, description=__doc__)
    n = fs.grid(full=100, fast=6)
    for name, task in (("fig3a", "mode"), ("fig3b", "median")):
        fig, ax = plt.subplots(figsize=(5.5, 4))
        rows = real_data_panel(ax, "HEPTH", task, n, annotate=not fs.fast)
        ax.legend(loc="lower left")
        fs.save(fig, rows, name=name)
    datasets = fs.grid(full=DPBENCH_BAR_DATASETS, fast=("MEDCOST", "PATENT"))
    fig, ax = plt.subplots(figsize=(5.5, 4))
    rows = bar_panel(ax, datasets, "mode")
    ax.legend(loc="upper center", ncol=2)
    fs.save(fig, rows, name="fig3c")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
