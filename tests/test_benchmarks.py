"""Smoke tests of the benchmark scripts (their timings live in benchmarks/RESULTS.md, never here)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from optnoise import Neighborhood, NoiseDesign

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPTS = sorted(p.name for p in BENCH.glob("bench_*.py"))


def test_every_benchmark_is_listed():
    assert {
        "bench_additive.py",
        "bench_design.py",
        "bench_pdp_m10.py",
        "bench_pf_lp.py",
        "bench_portfolio.py",
        "bench_release.py",
        "bench_reproduce.py",
    } <= set(SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS)
def test_benchmark_help_runs(script):
    out = subprocess.run([sys.executable, str(BENCH / script), "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "usage" in out.stdout.lower()


def _pdp_m10():
    """The benchmark script as a module (benchmarks/ is not a package)."""
    spec = importlib.util.spec_from_file_location("bench_pdp_m10", BENCH / "bench_pdp_m10.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_pdp_m10_run_matches_library_solve():
    r = _pdp_m10().run(("hull, no restart", "er", 0.5, 0.2, 60.0, 1e-9))
    d = NoiseDesign(n=100, eps=0.5, delta=0.2, neighborhood=Neighborhood.bd(10, directed=True), privacy="pdp")
    ref = d.solve(time_limit=60)
    assert r["status"] == ref.status == "optimal"
    assert r["objective"] == pytest.approx(ref.distortion, abs=1e-8)
    assert r["to_1e-4"] is not None and r["to_1e-4"] <= r["seconds"]


def test_pdp_m10_auto_reports_its_proof_time_and_the_requested_gap():
    r = _pdp_m10().run(("auto", "er", 0.5, 0.2, 60.0, 1e-6))
    assert r["status"] == "optimal" and r["to_1e-4"] == r["seconds"]
    # f(0) = delta and the rest uniform is feasible (only the value 0 leaks, delta for every shift): er <= 1 - delta
    assert r["objective"] <= 0.8 + 1e-9
    d = NoiseDesign(n=100, eps=0.5, delta=0.2, neighborhood=Neighborhood.bd(10, directed=True), privacy="pdp")
    assert r["objective"] == pytest.approx(d.solve(solver="highs", mip_gap=1e-6).distortion, rel=1e-6)


def test_renyi_run_reports_a_proven_optimum_below_the_gaussian():
    spec = importlib.util.spec_from_file_location("bench_renyi", BENCH / "bench_renyi.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    r = mod.run(mod.BUDGETS["rdp [(2,.5),(8,1)]"], "circular-mse", "auto")
    assert r["status"] == "optimal" and r["verified"]
    assert r["gap"] <= 1e-6 and r["cost"] <= r["dg"]


def test_additive_full_lp_agrees_with_the_additive_design():
    """bench_additive's naive full LP (no tails, no symmetry) reaches the additive design's optimum at its L."""
    spec = importlib.util.spec_from_file_location("bench_additive", BENCH / "bench_additive.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    r = mod.optnoise_run(2, 120.0)
    assert r["status"] == "optimal" and r["verified"]
    full = mod.full_lp(2, r["L"], 120.0)
    assert full["status"] == "optimal"
    # two formulations of one problem: the boundary at L is inactive, so both reach the optimum on Z
    assert full["mse"] == pytest.approx(r["mse"], rel=1e-6)
    assert full["size"]["rows"] > r["size"]["rows"]  # every row of every shift, no reduction
