"""The shipped data sets and their loader (optnoise.reproduce.datasets)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest

from optnoise.reproduce import datasets as D

REPO = Path(__file__).resolve().parents[2]


def test_load_dpbench_totals():
    x = D.load_dpbench("HEPTH")
    # Totals read off the raw file independently of the loader's reshaping.
    raw = np.load(REPO / "data" / "dpbench" / "HEPTH.n4096.npy")
    assert raw.shape == (4096,) and raw.sum() == 347_414
    assert x.shape == (1024,) and x.sum() == 347_414 and x.max() == 1571
    assert np.array_equal(x, raw.reshape(1024, 4).sum(1))
    assert D.load_dpbench("HEPTH", bins=4096).tolist() == raw.tolist()
    with pytest.raises(ValueError, match="name must be one of"):
        D.load_dpbench("NOPE")
    with pytest.raises(ValueError, match="bins must divide 4096"):
        D.load_dpbench("HEPTH", bins=1000)


@pytest.mark.parametrize("name", D.DPBENCH_DATASETS)
def test_every_dpbench_histogram_ships(name):
    x = D.load_dpbench(name, bins=4096)
    assert x.shape == (4096,) and np.all(x >= 0) and np.all(x == np.round(x)) and x.sum() > 0


def test_macbeth_word_counts_by_hand():
    text = D.load_macbeth()
    assert "Macbeth" in text
    top = D.macbeth_word_counts(3)
    assert [w for w, _ in top] == ["the", "and", "to"]
    # Independent count of one word with a plain word-boundary regex on the lower-cased text.
    assert top[0][1] == len(re.findall(r"(?<![a-z'])the(?![a-z])", text.lower()))


def test_load_meters_matches_readme():
    m = D.load_meters()
    assert m.wh.shape == m.observed.shape == (1014, 8760)
    assert m.household_ids[0] == "MAC000002" and list(m.household_ids) == sorted(m.household_ids)
    # README: 95.0% of household-hours are observed; hourly kWh mean 0.40, max 15.3.
    assert m.observed.mean() == pytest.approx(0.950, abs=5e-4)
    kwh = m.kwh
    assert np.nanmean(kwh) == pytest.approx(0.40, abs=5e-3)
    assert np.nanmax(kwh) == pytest.approx(15.3, abs=0.05)
    assert np.all(m.wh[~m.observed] == 0)


def test_override_and_missing_data(tmp_path, monkeypatch):
    monkeypatch.setenv("OPTNOISE_DATA", str(tmp_path))
    with pytest.raises(ValueError, match=r"data set 'dpbench' not found .*OPTNOISE_DATA"):
        D.load_dpbench("HEPTH")
    (tmp_path / "dpbench").mkdir()
    np.save(tmp_path / "dpbench" / "HEPTH.n4096.npy", np.arange(4096))
    assert D.load_dpbench("HEPTH", bins=1).tolist() == [sum(range(4096))]
    with pytest.raises(ValueError, match="data_dir must hold MEDCOST.n4096.npy"):
        D.load_dpbench("MEDCOST")
    with pytest.raises(ValueError, match="name must be one of"):
        D.data_dir("elsewhere")


def test_data_folder_is_small_and_documented():
    data = REPO / "data"
    size = sum(p.stat().st_size for p in data.rglob("*") if p.is_file())
    assert size < 20 * 2**20
    for name in D.DATASETS:
        assert (data / name / "README.md").is_file()


# Paths that leave the repository: a parent-directory hop towards a sibling
# folder, or the shared/ folder that only developers' machines have.
# The folder name is assembled so that this file does not itself name the path it forbids.
_SHARED = "shared" + "/"
_OUTSIDE = re.compile(rf"\.\./|\.\.\\|(?<![\w.]){_SHARED}(?:data|papers)")


def _python_files() -> list[Path]:
    return sorted(
        p for folder in ("optnoise", "experiments", "tests", "benchmarks") for p in (REPO / folder).rglob("*.py")
    )


def test_no_module_names_a_path_outside_the_repository():
    offenders = []
    for path in _python_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _OUTSIDE.search(node.value):
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno}: {node.value[:60]!r}")
    assert not offenders, "paths outside the repository:\n" + "\n".join(offenders)


def test_the_outside_path_check_can_fail():
    assert _OUTSIDE.search(".." + "/" + _SHARED + "data/dpbench")
    assert _OUTSIDE.search("see " + _SHARED + "data/macbeth/README.md")
    assert not _OUTSIDE.search("data/dpbench")
