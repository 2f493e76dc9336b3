"""Pictures (matplotlib): designs with their privacy profiles, sweeps, and how figures are written.

This layer imports nothing from the design code: results draw themselves by
handing it their PMF and shifts (:func:`plot_design`).
"""

from optnoise.plotting.designs import plot_design, plot_mechanism
from optnoise.plotting.files import PNG_METADATA, check_plot_path, save_figure
from optnoise.plotting.sweeps import plot_sweep, read_table

__all__ = [
    "plot_design",
    "plot_mechanism",
    "plot_sweep",
    "read_table",
    "save_figure",
    "check_plot_path",
    "PNG_METADATA",
]
