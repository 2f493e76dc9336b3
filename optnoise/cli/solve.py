"""``optnoise solve`` and ``optnoise verify``: design noise, check a PMF."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from optnoise.cli.args import (
    EXIT_CLAIM_FAILED,
    EXIT_OK,
    budget_args,
    exit_for,
    format_pmf,
    load_array,
    print_status,
    solver_args,
)
from optnoise.cli.points import design_of
from optnoise.design.continuous import ContinuousResult
from optnoise.design.noise import NoiseDesign
from optnoise.design.releases import LatticeRelease
from optnoise.engine.io import atomic_write_text
from optnoise.engine.tolerance import FEASIBILITY_TOL, check_tol
from optnoise.engine.validation import MAX_FINITE_EPS, check_delta, check_eps, check_output_path, check_pmf
from optnoise.privacy.curves import NOTIONS, achieved_deltas
from optnoise.privacy.neighborhood import Neighborhood
from optnoise.privacy.verification import UNVERIFIED, delta_allowance, pdp_rtol, within_delta

__all__ = ["design_from_args", "progress_args", "solve_with_flags", "cmd_solve", "cmd_verify"]


def design_from_args(a: argparse.Namespace) -> NoiseDesign:
    return design_of(
        {
            "n": a.n,
            "eps": a.eps,
            "delta": a.delta,
            "neighborhood": a.neighborhood,
            "directed": a.directed,
            "dim": a.dim,
            "metric": a.metric if a.cost is None else load_array(a.cost, "cost"),
            "privacy": a.privacy,
            "objective": a.minimize,
            "max_distortion": a.max_distortion,
            "release": a.release,
            "support": getattr(a, "support", None),  # solve only
            "sensitivity": getattr(a, "sensitivity", None),
            "resolution": getattr(a, "resolution", None),
            "gap": getattr(a, "gap", None),  # solve only
            **budget_args(a),
        }
    )


def solve_with_flags(design: Any, a: argparse.Namespace) -> tuple[Any, dict[str, Any]] | None:
    """``--mps`` (write the model, return ``None``), else solve with the solver flags and honour ``--out``."""
    out_path = None if a.out is None else check_output_path("out", a.out)
    mps_path = None if a.mps is None else check_output_path("mps", a.mps)
    if mps_path is not None:
        print(f"wrote {design.to_mps(mps_path)}")
        return None
    res = design.solve(**solver_args(a), **progress_args(design, a))
    d = res.to_dict()
    if out_path is not None:
        atomic_write_text(out_path, json.dumps(d, indent=2))
    return res, d


def progress_args(design: Any, a: argparse.Namespace) -> dict[str, Any]:
    """``verbose=True`` (a progress bar on stderr) for the iterative solves when stderr is a terminal and
    ``--quiet`` is not given: composed designs and the Renyi log-barrier method, whose verbose output is
    that bar alone (the LP/MILP and cvxpy solvers' verbose output is their log, on stdout). Scripts and
    pipes get no bar, so an error stays one line on stderr."""
    if getattr(a, "quiet", True) or not sys.stderr.isatty():
        return {}
    iterative = getattr(getattr(design, "notion", None), "composed", False) or (
        getattr(design, "budget", None) is not None and design.budget.is_conic and a.solver == "auto"
    )
    return {"verbose": True} if iterative else {}


def target_text(design: Any) -> str:
    """What the design guarantees and minimises, for the table output."""
    if design.budget is not None:
        head = design.budget.describe()
    elif getattr(design, "compositions", None) is not None:
        eps = "eps minimised" if design.eps is None else f"eps={design.eps:g}"
        head = f"{design.compositions}-fold composition at {eps}, delta={design.delta:g}"
    else:
        head = f"eps={design.eps:g}"
        if design.objective == "distortion":
            head += f"  delta={design.delta:g}"
    if design.objective == "distortion":
        return head
    what = "delta" if design.objective == "delta" else "the composed eps"
    return f"{head}  (minimise {what} s.t. {design.metric} <= {design.max_distortion:g})"


def cmd_solve(a: argparse.Namespace) -> int:
    from optnoise.plotting.files import check_plot_path, save_figure

    if a.plot:
        check_plot_path(a.plot)
    design = design_from_args(a)
    if not isinstance(design.rel, LatticeRelease):  # a module release (additive, grid) prints its own table
        return _solve_additive(design, a)
    if a.compare:
        raise ValueError("compare is supported for --release additive only (for now)")
    solved = solve_with_flags(design, a)
    if solved is None:
        return EXIT_OK
    res, d = solved
    if a.plot and res.pmf is not None:
        save_figure(res.plot(), a.plot)
    if a.format == "json":
        print(json.dumps(d, indent=2))
    else:
        print(f"problem     n={design.n}  {target_text(design)}")
        print(f"neighbours  {design.neighborhood.describe(design.n)}")
        won = f" (won: {res.backend})" if a.solver == "auto" else ""
        print(f"notion      {design.privacy}   metric {design.metric}   solver {a.solver}{won}")
        print_status(res)
        if res.pmf is not None:
            print(f"distortion  {res.distortion:.10g}")
            if design.objective == "delta":
                print(f"min delta   {res.delta:.10g}")
            print("achieved    " + "  ".join(f"{k}={v:.6g}" for k, v in res.achieved.items()))
            print("actual      " + "  ".join(f"{k}={v:.6g}" for k, v in res.actual.items()))
            print("pmf         " + format_pmf(res.pmf).replace("\n", "\n            "))
    if res.status == UNVERIFIED:
        print(f"optnoise solve: unverified: {' '.join(res.message.split())}", file=sys.stderr)
    return exit_for(res.status, a.require_optimal)


def _solve_additive(design: Any, a: argparse.Namespace) -> int:
    """``solve --release additive``: the noise on -L..L, its staircase tails, and ``--compare``'s baselines."""
    if a.plot or a.mps:
        raise ValueError(f"{'plot' if a.plot else 'mps'} is not yet supported for --release {design.release}")
    out_path = None if a.out is None else check_output_path("out", a.out)
    res = design.solve(**solver_args(a))
    d = res.to_dict()
    if a.compare:
        d["baselines"] = res.baselines
    if out_path is not None:
        atomic_write_text(out_path, json.dumps(d, indent=2))
    if a.format == "json":
        print(json.dumps(d, indent=2))
    elif isinstance(res, ContinuousResult):
        _print_continuous(design, res, d, a)
    else:
        for line in design.rel.problem_lines(design):
            print(line)
        print(f"notion      {design.privacy}   metric {design.metric}   solver {a.solver}")
        print_status(res)
        print(f"support     {res.support_note}")
        if res.pmf is not None and res.tail is not None:
            print(f"distortion  {res.distortion:.10g}")
            if design.objective == "epsilon":
                print(
                    f"eps         {res.achieved['composed_eps']:.10g}   (least composed eps found; bound {res.bound})"
                )
            _print_baselines(_value(design, res), d["baselines"] if a.compare else {})
            print("achieved    " + "  ".join(f"{k}={v}" for k, v in res.achieved.items()))
            print("actual      " + "  ".join(f"{k}={v:.6g}" for k, v in res.actual.items()))
            print(f"pmf         eta = {-res.L}..{res.L}")
            print("            " + format_pmf(res.pmf).replace("\n", "\n            "))
            t = res.tail
            print(f"tail        f(x + {t.period}) = {t.factor:.6g} f(x) beyond +-{res.L}; mass {t.mass:.6g}")
    if res.status == UNVERIFIED:
        print(f"optnoise solve: unverified: {' '.join(res.message.split())}", file=sys.stderr)
    return exit_for(res.status)


def _value(design: Any, res: Any) -> float:
    """What the design minimised: the distortion, or the composed eps (``objective="epsilon"``)."""
    return float(res.achieved["composed_eps"] if design.objective == "epsilon" else res.distortion)


def _print_baselines(distortion: float, baselines: dict[str, float]) -> None:
    for name, value in baselines.items():
        gain = f"  (design {100 * (1 - distortion / value):.3g}% lower)" if value > 0 else ""
        print(f"  vs {name:18s} {value:.10g}{gain}")


def _print_continuous(design: Any, res: ContinuousResult, d: dict[str, Any], a: argparse.Namespace) -> None:
    """The table of ``solve --release continuous``: the bracket (upper, proven lower bound, gap) and the cells."""
    for line in design.rel.problem_lines(design):
        print(line)
    print(f"notion      {design.privacy}   metric {design.metric}   solver {a.solver}")
    gap = "" if res.gap is None else f"   gap {res.gap:.3g}"
    print(f"status      {res.status}{gap}   time {res.solve_time:.3f}s")
    if res.status != "optimal" and res.message:
        print(f"reason      {' '.join(res.message.split())}")
    if res.pmf is None or res.distortion is None:
        return
    print(f"resolution  w = {res.resolution:.10g} (m = {res.m} cells per sensitivity)")
    epsilon = design.objective == "epsilon"
    print(f"distortion  {res.distortion:.10g}" + ("" if epsilon else "   (upper bound: this mechanism)"))
    if epsilon:
        print(f"eps         {_value(design, res):.10g}   (least composed eps: this mechanism)")
    bound = "none" if res.bound is None else f"{res.bound:.10g}"
    print(f"bound       {bound}   (proven lower bound{' on the eps' if epsilon else ''} over all densities)")
    if a.compare:
        _print_baselines(_value(design, res), d["baselines"])
    print("achieved    " + "  ".join(f"{k}={v}" for k, v in res.achieved.items()))
    for row in res.history:
        low = "none" if row["lower"] is None else f"{row['lower']:.8g}"
        print(f"  m = {row['m']:<4d} upper {row['upper']:.8g}   lower {low}")
    print(f"cells       k = {int(res.support[0])}..{int(res.support[-1])} (masses f_k of [(k-1/2)w, (k+1/2)w))")
    print("            " + format_pmf(res.pmf).replace("\n", "\n            "))


def cmd_verify(a: argparse.Namespace) -> int:
    eps = check_eps(a.eps, maximum=MAX_FINITE_EPS)  # the leak checks evaluate e^eps, which overflows beyond it
    delta = check_delta(a.delta)
    tol = check_tol("tol", a.tol, maximum=FEASIBILITY_TOL)
    pmf = check_pmf("pmf", load_array(a.pmf, "pmf"), atol=1e-9)
    if pmf.ndim > 1 and len(set(pmf.shape)) != 1:
        raise ValueError(f"pmf must have shape (n+1,)*d; got {pmf.shape}")
    if pmf.shape[0] < 2:
        raise ValueError(f"pmf must have at least 2 entries per coordinate (answers 0..n with n >= 1); got {pmf.shape}")
    n = pmf.shape[0] - 1
    nb = Neighborhood.parse(a.neighborhood, directed=a.directed, dim=pmf.ndim)
    # the tolerance rule shared with DesignResult.verify() and sweeps (optnoise.privacy.verification)
    got = achieved_deltas(pmf, nb.resolve(n, pmf.ndim), eps, tol=tol, rtol=pdp_rtol(eps), pure=delta == 0.0)
    notions = {"all": NOTIONS}.get(a.privacy, (a.privacy,))
    passed = {k: within_delta(got[k], delta) for k in NOTIONS}
    ok = all(passed[k] for k in notions)
    if a.format == "json":
        print(
            json.dumps(
                {
                    "n": n,
                    "eps": eps,
                    "delta": delta,
                    "allowed": delta_allowance(delta),
                    "neighborhood": nb.describe(n),
                    "achieved": got,
                    "checked": list(notions),
                    "ok": ok,
                },
                indent=2,
            )
        )
    else:
        print(f"neighbours  {nb.describe(n)}")
        for k in NOTIONS:
            mark = ("ok  " if passed[k] else "FAIL") if k in notions else "    "
            print(f"{mark} {k:10s} delta({eps:g}) = {got[k]:.10g}   (claim {delta:g})")
    return EXIT_OK if ok else EXIT_CLAIM_FAILED
