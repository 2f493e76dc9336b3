"""Fast modes of every figure script of experiments/count2020/."""
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "experiments" / "count2020"
SCRIPTS = sorted(p for p in ROOT.glob("*.py") if not p.name.startswith("_"))


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"count2020_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_scripts_found():
    assert {p.stem for p in SCRIPTS} >= {"fig1", "fig2", "fig3", "fig4"}


@pytest.mark.xdist_group("count2020")
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_fast_mode_writes_png_and_csv(script, tmp_path):
    assert _load(script).main(["--fast", "--out", str(tmp_path)]) == 0
    pngs = list(tmp_path.glob("*.png"))
    assert pngs, "no PNG written"
    for png in pngs:
        assert png.stat().st_size > 1000
        csv = png.with_suffix(".csv")
        assert csv.exists() and len(csv.read_text().splitlines()) > 1
