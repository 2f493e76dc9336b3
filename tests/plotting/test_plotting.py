"""Pictures: design plots and sweep plots render with labelled axes (tested by rendering)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from optnoise import Neighborhood, NoiseDesign  # noqa: E402
from optnoise.plotting.designs import plot_design
from optnoise.plotting.files import save_figure
from optnoise.plotting.sweeps import plot_sweep
from optnoise.privacy.noise_families import discrete_gaussian_noise


def _png_ok(path) -> None:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_result_plot_with_baseline(tmp_path):
    res = NoiseDesign(n=24, eps=1.0, delta=1e-3, neighborhood=Neighborhood.bd(1), metric="circular-mse", privacy="dp")
    res = res.solve()
    fig = res.plot(baseline=discrete_gaussian_noise(2.0))
    ax_pmf, ax_prof = fig.axes[:2]
    assert ax_pmf.get_xlabel() and ax_pmf.get_ylabel() and ax_prof.get_xlabel() == "eps"
    assert "delta" in ax_prof.get_ylabel() and ax_prof.get_yscale() == "log"
    assert len(ax_prof.get_lines()) == 2 and len(ax_pmf.get_lines()) == 2
    # the drawn profile is the design's delta(eps)
    x, y = ax_prof.get_lines()[0].get_data()
    i = int(np.argmin(np.abs(x - 1.0)))
    from optnoise.privacy.curves import delta_dp

    assert y[i] == pytest.approx(delta_dp(res.pmf, res.design.shifts, x[i]))
    # delta = 0 (or float rounding below 1e-15) is not drawn on the log axis, and the axis spans the grid
    true = np.array([delta_dp(res.pmf, res.design.shifts, e) for e in x])
    assert np.array_equal(np.isnan(y), true <= 1e-15)
    assert ax_prof.get_xlim() == (x[0], x[-1])
    # a pure eps-DP design: the curve stops at eps (no flat line at a floor), the axis goes on
    pure = NoiseDesign(n=8, eps=1.0, neighborhood=Neighborhood.bd(1), metric="er", privacy="dp").solve()
    x, y = pure.plot().axes[1].get_lines()[0].get_data()
    assert np.all(np.isfinite(y[x < 0.99])) and np.all(np.isnan(y[x > 1.0 + 1e-6])) and x[-1] > 1.05
    _png_ok(save_figure(fig, tmp_path / "design.png"))


def test_vector_and_certified_plots(tmp_path):
    nb = Neighborhood.shifts([(1, 0), (0, 1)])
    res = NoiseDesign(n=4, eps=1.0, neighborhood=nb, metric="mse", privacy="dp").solve()
    _png_ok(save_figure(res.plot(), tmp_path / "vector.png"))
    cd = NoiseDesign(n=8, eps=1.0, neighborhood=Neighborhood.bd(1), privacy="dp").solve().certify()
    _png_ok(save_figure(cd.plot(baseline=np.full(9, 1 / 9)), tmp_path / "certified.png"))
    plt.close("all")


def test_plot_sweep_lines_per_hue(tmp_path):
    rows = [{"eps": str(e), "delta": str(d), "distortion": str(1 / e + d)} for e in (0.5, 1, 2) for d in (0, 0.1)]
    rows.append({"eps": "3", "delta": "0", "distortion": ""})  # a failed point is left out
    fig = plot_sweep(rows, x="eps", y="distortion", hue="delta")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "eps" and ax.get_ylabel() == "distortion"
    assert len(ax.get_lines()) == 2 and all(len(line.get_xdata()) == 3 for line in ax.get_lines())
    _png_ok(save_figure(fig, tmp_path / "sweep.png"))
    with pytest.raises(ValueError, match="column 'nope'"):
        plot_sweep(rows, x="eps", y="nope")
    with pytest.raises(ValueError, match="must end in"):
        save_figure(fig, tmp_path / "x.jpg")
    with pytest.raises(ValueError, match="baseline PMF"):
        plot_design(np.full(5, 0.2), [1], baseline=np.full(4, 0.25))
    plt.close("all")
