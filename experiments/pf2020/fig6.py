"""Fig. 6 (Appendix G) of McKenna & Sheldon (2020): EM vs PF on the median task of five more datasets.

MEDCOST, ADULTFRANK, INCOME, SEARCHLOGS and PATENT (the authors' line-plot
datasets other than HEPTH, which is Fig. 3(b)), 1024 bins. q = minus the
individuals to add or remove to make the bin the (lower) median, sensitivity 1,
standard mechanisms. Exact expected errors against eps, linear from 1e-4 to
where EM's error is 1, log y axis cut at 1; the marked point is where EM needs
the largest multiple of PF's budget.
"""

import os  # noqa: E402
import sys  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _pf2020 import REAL_DATA_TOLERANCES, appendix_grid  # noqa: E402

#: Tolerances of ``optnoise figures check`` (:mod:`optnoise.reproduce.compare`): see ``_pf2020.REAL_DATA_TOLERANCES``.
TOLERANCES = {"fig6": REAL_DATA_TOLERANCES}


def main(argv=None) -> int:
    return appendix_grid("fig6", "median", argv, __doc__)


if __name__ == "__main__":
    raise SystemExit(main())
