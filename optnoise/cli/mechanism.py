"""``optnoise mechanism``: the optimal general mechanism P[x, y]."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from optnoise.cli.args import (
    EXIT_CLAIM_FAILED,
    EXIT_OK,
    add_exit_args,
    add_solver_args,
    add_sweep_args,
    exit_for,
    float_arg,
    format_pmf,
    int_arg,
    load_array,
    parse_numbers,
    print_status,
)
from optnoise.cli.points import MECHANISM_ROW_KEYS, mechanism_points, parse_grid
from optnoise.cli.solve import solve_with_flags
from optnoise.cli.sweep import run_sweep_command
from optnoise.deploy.certify import CertificationError
from optnoise.design.matrix import LOSSES
from optnoise.design.mechanism import MECHANISM_NOTIONS, MECHANISM_OBJECTIVES, MechanismDesign
from optnoise.engine.validation import check_jobs, check_output_path, parse_int, shown
from optnoise.privacy.verification import UNVERIFIED

__all__ = [
    "add_mechanism_args",
    "add_mechanism_cli",
    "parse_neighbors",
    "parse_outputs",
    "mechanism_from_args",
    "cmd_mechanism",
    "cmd_mechanism_sweep",
]


def add_mechanism_args(p: argparse.ArgumentParser, *, grid: bool = False) -> None:
    """The flags of a :class:`MechanismDesign` (grids and comma lists with ``grid``)."""
    grid_note = " (grid)" if grid else ""
    p.add_argument("--n", required=True, type=str if grid else int_arg("n"), help="inputs lie in {0..n}" + grid_note)
    p.add_argument("--eps", required=True, type=str if grid else float_arg("eps"), help="privacy level > 0" + grid_note)
    p.add_argument(
        "--delta",
        default=None if grid else 0.0,
        type=str if grid else float_arg("delta"),
        help="privacy slack in [0,1] (default 0: pure eps-DP)" + grid_note,
    )
    p.add_argument(
        "--neighbors",
        "--neighbours",
        default=None if grid else "adjacent",
        action="append" if grid else "store",
        help="adjacent (default), adjacent:K, sd:MU, bd:MUBAR, shifts:A,B or pairs:0-1,2-3"
        + (" (repeatable)" if grid else ""),
    )
    p.add_argument("--directed", action="store_true", help="pair lists and shift specs as given (no reversed pairs)")
    loss_note = " (comma list)" if grid else ", or a matrix file"
    p.add_argument("--loss", default="abs", help=f"one of {', '.join(LOSSES)}" + loss_note)
    p.add_argument("--objective", default="bayes", choices=MECHANISM_OBJECTIVES, help="what to minimise")
    p.add_argument(
        "--privacy", default="dp", help=f"one of {', '.join(MECHANISM_NOTIONS)}" + (" (comma list)" if grid else "")
    )
    p.add_argument(
        "--max-loss",
        default=None,
        type=str if grid else float_arg("max-loss"),
        help="Bayes-loss cap for --objective delta" + grid_note,
    )
    if not grid:
        p.add_argument("--outputs", default=None, help="m (outputs 0..m, default n) or a comma list of output values")
        p.add_argument("--prior", default=None, help="input prior: a file (.json/.npy/.txt) or a comma list")
    add_solver_args(p)


def add_mechanism_cli(sub: Any) -> None:
    """Add the ``mechanism`` and ``mechanism-sweep`` sub-commands."""
    p = sub.add_parser(
        "mechanism",
        help="design the optimal general (non-additive) mechanism P[x, y] for one problem",
        description="The best mechanism over all conditional matrices P[x, y] for inputs 0..n "
        "(optnoise.MechanismDesign). Exit 0 optimal or feasible (5 with --require-optimal), 1 --certify failed, "
        "2 bad input, 3 not optimal, 4 unverified.",
    )
    add_mechanism_args(p)
    p.add_argument("--format", default="table", choices=("table", "json"), help="output format")
    p.add_argument("--out", default=None, help="also write the JSON result to this file")
    p.add_argument("--mps", default=None, help="write the (full) model as an MPS file and exit")
    p.add_argument("--certify", default=None, metavar="FILE", help="certify exactly and write the design file")
    add_exit_args(p)
    p.set_defaults(handler=cmd_mechanism)

    p = sub.add_parser("mechanism-sweep", help="solve a grid of mechanism designs, one CSV row per point")
    add_mechanism_args(p, grid=True)
    add_sweep_args(p)
    add_exit_args(p, sweep=True)
    p.set_defaults(handler=cmd_mechanism_sweep)


def parse_neighbors(text: str) -> Any:
    """``pairs:0-1,2-3`` as a list of pairs; every other spec is passed on as text."""
    kind, sep, body = text.partition(":")
    if kind.strip().lower() != "pairs":
        return text
    items = [item.strip() for item in body.split(",")]
    try:
        pairs = [tuple(parse_int("neighbors", v) for v in item.split("-")) for item in items]
    except ValueError:
        pairs = []
    if not sep or not pairs or any(len(pr) != 2 for pr in pairs):
        raise ValueError(f"neighbors 'pairs:' must list pairs like 0-1,1-2; got {shown(text)}")
    return pairs


def parse_outputs(text: str) -> Any:
    """``--outputs``: one integer m (outputs 0..m), or a comma list of output values.

    A list of integer literals stays a list of exact Python integers (``18446744073709551617``
    is not rounded to a float, and :class:`MechanismDesign` refuses it as out of range); a list
    with any other number is parsed as floats.
    """
    items = [t.strip() for t in text.split(",")]
    if not text.strip() or any(not t for t in items):
        raise ValueError(f"outputs must be an integer m or a comma list of values; got {shown(text)}")
    try:
        ints = [parse_int("outputs", t) for t in items]
    except ValueError:
        return parse_numbers(items, "outputs", text)
    return ints[0] if len(ints) == 1 else ints


def mechanism_from_args(a: argparse.Namespace) -> MechanismDesign:
    loss: Any = a.loss if a.loss in LOSSES else load_array(a.loss, "loss")
    outputs = None if a.outputs is None else parse_outputs(a.outputs)
    return MechanismDesign(
        n=a.n,
        eps=a.eps,
        delta=a.delta,
        neighbors=parse_neighbors(a.neighbors),
        outputs=outputs,
        loss=loss,
        objective=a.objective,
        prior=None if a.prior is None else load_array(a.prior, "prior"),
        privacy=a.privacy,
        max_loss=a.max_loss,
        directed=a.directed,
    )


def cmd_mechanism(a: argparse.Namespace) -> int:
    design_path = None if a.certify is None else check_output_path("certify", a.certify)
    design = mechanism_from_args(a)
    solved = solve_with_flags(design, a)
    if solved is None:
        return EXIT_OK
    res, d = solved
    cd = None
    if design_path is not None and res.status == "optimal":
        try:
            cd = res.certify(solver=a.solver)
        except CertificationError as exc:
            print("optnoise mechanism: certificate failed: " + " ".join(str(exc).split()), file=sys.stderr)
            return EXIT_CLAIM_FAILED
        cd.save(design_path)
        d["certified_delta"] = float(cd.certified_delta)
        d["design_file"] = str(design_path)
    if a.format == "json":
        print(json.dumps(d, indent=2))
    else:
        target = (
            f"delta={design.delta:g}"
            if design.objective != "delta"
            else f"minimise delta s.t. Bayes {design.loss} <= {design.max_loss:g}"
        )
        print(f"problem     n={design.n}  eps={design.eps:g}  {target}  outputs={design.outputs.size}")
        print(f"neighbours  {design.describe_neighbors()}")
        print(f"notion      {design.privacy}   loss {design.loss}   objective {design.objective}   solver {a.solver}")
        print_status(res, f"   rounds {res.rounds}")
        if res.matrix is not None and res.loss is not None:
            print(f"loss        {res.loss:.10g}")
            if design.objective == "delta" and res.delta is not None:
                print(f"min delta   {res.delta:.10g}")
            print("achieved    " + "  ".join(f"{k}={v:.6g}" for k, v in res.achieved.items()))
            print("actual      " + "  ".join(f"{k}={v:.6g}" for k, v in res.actual.items()))
            print("matrix      " + format_pmf(res.matrix).replace("\n", "\n            "))
        if cd is not None:
            print(f"certified   delta={float(cd.certified_delta):.10g}   wrote {design_path}")
    if res.status == UNVERIFIED:
        print(f"optnoise mechanism: unverified: {' '.join(res.message.split())}", file=sys.stderr)
    return exit_for(res.status, a.require_optimal)


def cmd_mechanism_sweep(a: argparse.Namespace) -> int:
    if a.out != "-":
        check_output_path("out", a.out)  # before any solve: a typo must not cost the whole sweep
    check_jobs(a.jobs)
    points = mechanism_points(
        n=parse_grid("n", a.n, integer=True),
        eps=parse_grid("eps", a.eps),
        delta=parse_grid("delta", a.delta) if a.delta is not None else None,
        neighbors=[parse_neighbors(t) for t in (a.neighbors or ["adjacent"])],
        directed=a.directed,
        loss=[v.strip() for v in a.loss.split(",")],
        objective=a.objective,
        privacy=[v.strip() for v in a.privacy.split(",")],
        max_loss=parse_grid("max-loss", a.max_loss) if a.max_loss is not None else None,
    )
    for p in points:  # rows show the neighbour spec as given
        if not isinstance(p["neighbors"], str):
            p["label"] = "pairs:" + ",".join(f"{x}-{y}" for x, y in p["neighbors"])
    return run_sweep_command(points, a, MECHANISM_ROW_KEYS)
