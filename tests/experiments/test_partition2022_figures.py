"""Fast modes of every figure script of experiments/partition2022/."""

import pytest
from _figure_checks import run_fast, scripts

SCRIPTS = scripts("partition2022")


def test_scripts_found():
    assert {p.stem for p in SCRIPTS} >= {"fig1", "fig2", "fig3", "fig4"}


@pytest.mark.xdist_group("partition2022")
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_fast_mode_writes_png_and_csv(script, tmp_path):
    run_fast(script, tmp_path)
