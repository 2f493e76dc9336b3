"""The ``optnoise`` command line.

Sub-commands: ``solve``, ``sweep``, ``verify``, ``figures``, ``certify``,
``release``, ``mechanism`` (the optimal general mechanism,
:class:`~optnoise.mechanism_design.MechanismDesign`), ``mechanism-sweep`` and ``plot``.

Exit codes: 0 success; 1 a verification claim failed; 2 bad input (one line
on stderr naming the parameter and the allowed values); 3 the solver found
no optimal solution (infeasible, time limit or solver error; the status is
still printed); 4 the solver claimed a solution that failed re-verification
(status ``unverified``, the reason printed; a sweep with such a row); 130
interrupted (Ctrl-C; a sweep writes its finished rows first); 141 the output
pipe was closed (e.g. piped into ``head``).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import numpy as np

from optnoise._io import atomic_write_text, read_json
from optnoise._validation import (
    MAX_FINITE_EPS,
    check_delta,
    check_eps,
    check_int,
    check_output_path,
    check_pmf,
    check_positive,
    parse_float,
    parse_int,
    real_array,
)
from optnoise.certify import DEFAULT_BITS, MAX_LOSS, CertificationError, certify_result, load_design
from optnoise.design import METRICS, OBJECTIVES, RELEASES, DesignResult, NoiseDesign
from optnoise.mechanism_design import LOSSES, MECHANISM_NOTIONS, MECHANISM_OBJECTIVES, MechanismDesign
from optnoise.neighborhood import Neighborhood
from optnoise.privacy import NOTIONS, achieved_deltas
from optnoise.solvers import MIP_REL_GAP, SOLVERS, check_solve_args
from optnoise.sweep import (
    CONNECT_TIMEOUT,
    MECHANISM_ROW_KEYS,
    ROW_KEYS,
    SweepInterrupted,
    design_of,
    grid_points,
    mechanism_points,
    parse_grid,
    run_sweep,
)
from optnoise.tolerance import UNVERIFIED, check_tol, delta_allowance, pdp_rtol, within_delta

__all__ = ["main", "build_parser"]

_T = TypeVar("_T")

EXIT_OK, EXIT_CLAIM_FAILED, EXIT_USAGE, EXIT_NOT_OPTIMAL, EXIT_UNVERIFIED = 0, 1, 2, 3, 4
EXIT_INTERRUPTED, EXIT_BROKEN_PIPE, EXIT_INTERNAL = 130, 141, 70

#: Arguments that are values even though they start with "-": numbers, number lists and ranges
#: ("-1", "-1,2,3", "-0.5:1:3", "-1/2"), "-inf" and "-nan"; optnoise has no option that looks like one.
_NEGATIVE_VALUE = re.compile(r"^-(?:[0-9.]|inf|nan)", re.IGNORECASE)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit code 2, and negative number lists are values."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # argparse only treats "-1" or "-.5" as values; "--cost -1,2,3" would be read as an unknown option
        self._negative_number_matcher = _NEGATIVE_VALUE

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {' '.join(message.split())}\n")


def _arg(parse: Callable[[str, str], _T], name: str) -> Callable[[str], _T]:
    """An argparse type that parses strictly with ``parse`` (ASCII digits; a one-line error naming ``name``)."""

    def conv(text: str) -> _T:
        try:
            return parse(name, text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return conv


def _float(name: str) -> Callable[[str], float]:
    """A real number (``nan``/``inf`` parse, so that the range check names them)."""
    return _arg(parse_float, name)


def _int(name: str) -> Callable[[str], int]:
    """An integer in decimal, parsed exactly."""
    return _arg(parse_int, name)


def _highs_option(text: str) -> tuple[str, object]:
    """``NAME=VALUE``: ``true``/``false``, an ASCII integer or number, else the text itself."""
    name, sep, raw = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"highs-option must look like NAME=VALUE; got {text!r}")
    low = raw.strip().lower()
    if low in ("true", "false"):
        return name.strip(), low == "true"
    for parse in (parse_int, parse_float):
        try:
            return name.strip(), parse("highs-option", raw)
        except ValueError:
            pass
    return name.strip(), raw.strip()


def _add_solver_args(p: argparse.ArgumentParser) -> None:
    """The backend flags shared by every solving command."""
    p.add_argument(
        "--solver",
        default="auto",
        choices=SOLVERS,
        help="LP/MILP backend (default auto: HiGHS raced against SCIP on hard MILPs; highs is deterministic)",
    )
    p.add_argument("--time-limit", default=None, type=_float("time-limit"), help="seconds per solve")
    p.add_argument(
        "--mip-gap",
        default=MIP_REL_GAP,
        type=_float("mip-gap"),
        help=f"relative MILP gap counted as optimal (default {MIP_REL_GAP:g}; solvers' usual 1e-4)",
    )
    p.add_argument(
        "--highs-option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        type=_highs_option,
        help="raw HiGHS option, repeatable (e.g. mip_allow_restart=false)",
    )


def _add_problem_args(p: argparse.ArgumentParser, *, grid: bool = False) -> None:
    num = str if grid else _float
    p.add_argument(
        "--n",
        required=True,
        type=str if grid else _int("n"),
        help="answers lie in {0..n}" + (" (grid: 8 or 8,16 or 8:64:3)" if grid else ""),
    )
    p.add_argument(
        "--eps",
        required=True,
        type=num("eps") if not grid else str,
        help="privacy level > 0" + (" (grid: 0.1:3:30 or 0.5,1)" if grid else ""),
    )
    p.add_argument(
        "--delta",
        default=None,
        type=num("delta") if not grid else str,
        help="privacy slack in [0,1] (default 0: pure eps-DP)" + (" (grid)" if grid else ""),
    )
    p.add_argument(
        "--neighborhood",
        "--neighbourhood",
        required=True,
        action="append" if grid else "store",
        help="sd:MU, bd:MUBAR, shifts:1,3,5 or vector shifts:1/2,3/5 (with --dim)" + (" (repeatable)" if grid else ""),
    )
    p.add_argument(
        "--directed",
        action="store_true",
        help="use the shifts exactly as given (the paper's SD/BD sets); default adds -mu",
    )
    p.add_argument("--dim", type=_int("dim"), default=None, help="query dimension for vector shifts")
    p.add_argument("--metric", default="er", help=f"one of {', '.join(METRICS)}" + (" (comma list)" if grid else ""))
    if not grid:
        p.add_argument(
            "--cost", default=None, help="custom cost per noise value: a file (.json/.npy/.txt) or a comma list"
        )
    p.add_argument("--privacy", default="pdp", help=f"one of {', '.join(NOTIONS)}" + (" (comma list)" if grid else ""))
    p.add_argument(
        "--release",
        default="modulo",
        choices=RELEASES,
        help="q + eta (mod n+1) (default), or clip(q + eta, 0, n) with eta in {-n..n} (scalar queries, dp or pdp)",
    )
    p.add_argument(
        "--minimize",
        default="distortion",
        choices=OBJECTIVES,
        help="minimise the distortion (default) or delta under --max-distortion",
    )
    p.add_argument(
        "--max-distortion",
        default=None,
        type=num("max-distortion") if not grid else str,
        help="distortion cap for --minimize delta",
    )
    _add_solver_args(p)


def _add_sweep_args(p: argparse.ArgumentParser) -> None:
    """How a sweep runs and where its rows go."""
    p.add_argument("--jobs", type=_int("jobs"), default=1, help="parallel worker processes")
    p.add_argument("--backend", default="process", choices=("process", "dask"), help="parallel backend")
    p.add_argument("--scheduler", default=None, help="Dask scheduler address (with --backend dask)")
    p.add_argument(
        "--connect-timeout",
        type=_float("connect-timeout"),
        default=CONNECT_TIMEOUT,
        help=f"seconds to wait for the Dask scheduler (default {CONNECT_TIMEOUT:g})",
    )
    p.add_argument("--cache", default=".optnoise-cache", help="per-point result cache (resumes sweeps)")
    p.add_argument("--no-cache", action="store_true", help="disable the cache")
    p.add_argument("--out", default="-", help="output file (default: stdout)")
    p.add_argument("--format", default="csv", choices=("csv", "json"))
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    parser = _Parser(
        prog="optnoise",
        description="Optimal noise design for differential privacy.",
        epilog="exit codes: 0 ok, 1 claim failed, 2 bad input, 3 no optimal solution",
    )
    from optnoise import __version__

    parser.add_argument("--version", action="version", version=f"optnoise {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("solve", help="design the optimal noise PMF for one problem")
    _add_problem_args(p)
    p.add_argument("--format", default="table", choices=("table", "json"), help="output format")
    p.add_argument("--out", default=None, help="also write the JSON result to this file")
    p.add_argument("--mps", default=None, help="write the model as an MPS file and exit")
    p.add_argument("--plot", default=None, help="also draw the PMF and its privacy profile to this .png/.pdf/.svg")

    p = sub.add_parser("sweep", help="solve a grid of problems, one CSV row per point")
    _add_problem_args(p, grid=True)
    _add_sweep_args(p)

    p = sub.add_parser("verify", help="recompute a PMF's delta under each notion and check a claim")
    p.add_argument("--pmf", required=True, help="PMF file: JSON list (or solve --format json output), .npy, or text")
    p.add_argument("--eps", required=True, type=_float("eps"))
    p.add_argument("--delta", default=0.0, type=_float("delta"), help="claimed delta (default 0)")
    p.add_argument("--neighborhood", "--neighbourhood", required=True)
    p.add_argument("--directed", action="store_true")
    p.add_argument(
        "--privacy",
        default="pdp",
        choices=NOTIONS + ("all",),
        help="notion the claim is about (default pdp; 'all' checks every notion)",
    )
    p.add_argument(
        "--tol",
        default=0.0,
        type=_float("tol"),
        help="extra absolute slack on f(eta) - e^eps f(eta+mu) in PDP indicators (default 0); the shared "
        "tolerance rule (PDP indicators at eps * (1 + 1e-6) + 1e-12; delta * (1 + 1e-6) + 1e-12) always applies",
    )
    p.add_argument("--format", default="table", choices=("table", "json"))

    p = sub.add_parser("figures", help="regenerate the figures of a paper")
    p.add_argument("paper", help="kadam2024, pf2020, partition2022, count2020, composition2021, beyond or all")
    p.add_argument("--fast", action="store_true", help="coarse grids (seconds)")
    p.add_argument("--jobs", type=_int("jobs"), default=1, help="scripts run in parallel")
    p.add_argument("--out", default=None, help="output root (default figures/)")
    p.add_argument("--force", action="store_true", help="run every script, also those whose outputs are up to date")

    _add_certify_cli(sub)
    _add_mechanism_cli(sub)

    p = sub.add_parser("plot", help="plot columns of a sweep CSV (one line per --hue value)")
    p.add_argument("csv", help="a CSV written by `optnoise sweep`")
    p.add_argument("--x", required=True, help="column on the x axis (e.g. eps)")
    p.add_argument("--y", required=True, help="column on the y axis (e.g. distortion)")
    p.add_argument("--hue", default=None, help="column whose values get one line each (e.g. delta)")
    p.add_argument("--logx", action="store_true", help="logarithmic x axis")
    p.add_argument("--logy", action="store_true", help="logarithmic y axis")
    p.add_argument("--out", required=True, help="output image (.png, .pdf or .svg)")
    p.set_defaults(handler=_cmd_plot)
    return parser


# ---------------------------------------------------------------------------------------------


def _numbers(tokens: list[str], name: str, text: str) -> np.ndarray:
    try:
        return np.array([parse_float(name, v) for v in tokens], dtype=float)
    except ValueError:
        raise ValueError(f"{name} must hold numbers written in ASCII; could not parse {text[:80]!r}") from None


def _load_array(text: str, name: str) -> np.ndarray:
    """Numbers from a file (.npy, JSON list or solve output, whitespace/comma text) or an inline comma list."""
    path = Path(text)
    if not path.exists():
        if path.suffix in (".json", ".npy", ".txt", ".csv") or os.sep in text:
            raise ValueError(f"{name} file not found: {text!r}")
        items = text.split(",")
        if any(not t.strip() for t in items):
            raise ValueError(f"{name} list has an empty item: {text[:80]!r}")
        return _numbers(items, name, text)
    if path.is_dir():
        raise ValueError(f"{name} {text!r} is a directory, not a file")
    if path.suffix == ".npy":
        try:
            return real_array(name, np.load(path, allow_pickle=False))
        except (OSError, ValueError, EOFError) as exc:
            raise ValueError(f"{name} could not be read from {text!r}: {exc.__class__.__name__}") from None
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{name} could not be read from {text!r}: {exc.__class__.__name__}") from None
    if raw.lstrip()[:1] in ("[", "{") or raw.strip() in ("true", "false", "null"):
        data = read_json(path, f"{name} file")
        if isinstance(data, dict):
            if "pmf" not in data:
                raise ValueError(f"{name} file {text!r} is a JSON object without a 'pmf' key")
            data = data["pmf"]
        if not isinstance(data, list):
            raise ValueError(f"{name} file {text!r} must hold a JSON list of numbers; got {type(data).__name__}")
        return real_array(name, data)
    tokens = raw.replace(",", " ").split()
    if not tokens:
        raise ValueError(f"{name} file {text!r} holds no numbers")
    return _numbers(tokens, name, text)


def _design_from_args(a: argparse.Namespace) -> NoiseDesign:
    return design_of(
        {
            "n": a.n,
            "eps": a.eps,
            "delta": a.delta,
            "neighborhood": a.neighborhood,
            "directed": a.directed,
            "dim": a.dim,
            "metric": a.metric if a.cost is None else _load_array(a.cost, "cost"),
            "privacy": a.privacy,
            "objective": a.minimize,
            "max_distortion": a.max_distortion,
            "release": a.release,
        }
    )


def _solver_args(a: argparse.Namespace) -> dict[str, Any]:
    """The solve flags, validated before any work (so a bad option fails in one line, not after a solve)."""
    options, time_limit, mip_gap, _ = check_solve_args(
        a.solver, formulation="hull", options=dict(a.highs_option) or None, time_limit=a.time_limit, mip_gap=a.mip_gap
    )
    return {"solver": a.solver, "time_limit": time_limit, "mip_gap": mip_gap, "options": options}


def _fmt_pmf(pmf: np.ndarray) -> str:
    return np.array2string(pmf, precision=6, suppress_small=True, max_line_width=100)


def _print_status(res: Any, extra: str = "") -> None:
    """The table's status line of a design or mechanism result, and the reason when it is not plainly optimal."""
    gap = f"   gap {res.gap:.3g}" if res.gap else ""
    print(f"status      {res.status}{gap}   time {res.solve_time:.3f}s{extra}   model {res.model_size}")
    if res.status == UNVERIFIED or (res.status != "optimal" and res.message):
        print(f"reason      {' '.join(res.message.split())}")


def _exit_for(status: str) -> int:
    if status == "optimal":
        return EXIT_OK
    return EXIT_UNVERIFIED if status == UNVERIFIED else EXIT_NOT_OPTIMAL


def _solve_with_flags(design: Any, a: argparse.Namespace) -> tuple[Any, dict[str, Any]] | None:
    """``--mps`` (write the model, return ``None``), else solve with the solver flags and honour ``--out``."""
    out_path = None if a.out is None else check_output_path("out", a.out)
    mps_path = None if a.mps is None else check_output_path("mps", a.mps)
    if mps_path is not None:
        print(f"wrote {design.to_mps(mps_path)}")
        return None
    res = design.solve(**_solver_args(a))
    d = res.to_dict()
    if out_path is not None:
        atomic_write_text(out_path, json.dumps(d, indent=2))
    return res, d


def _cmd_solve(a: argparse.Namespace) -> int:
    from optnoise.plotting import check_plot_path, save_figure

    if a.plot:
        check_plot_path(a.plot)
    design = _design_from_args(a)
    solved = _solve_with_flags(design, a)
    if solved is None:
        return EXIT_OK
    res, d = solved
    if a.plot and res.pmf is not None:
        save_figure(res.plot(), a.plot)
    if a.format == "json":
        print(json.dumps(d, indent=2))
    else:
        print(
            f"problem     n={design.n}  eps={design.eps:g}  "
            + (
                f"delta={design.delta:g}"
                if design.objective == "distortion"
                else f"minimise delta s.t. {design.metric} <= {design.max_distortion:g}"
            )
        )
        print(f"neighbours  {design.neighborhood.describe(design.n)}")
        won = f" (won: {res.backend})" if a.solver == "auto" else ""
        print(f"notion      {design.privacy}   metric {design.metric}   solver {a.solver}{won}")
        _print_status(res)
        if res.pmf is not None:
            print(f"distortion  {res.distortion:.10g}")
            if design.objective == "delta":
                print(f"min delta   {res.delta:.10g}")
            print("achieved    " + "  ".join(f"{k}={v:.6g}" for k, v in res.achieved.items()))
            print("actual      " + "  ".join(f"{k}={v:.6g}" for k, v in res.actual.items()))
            print("pmf         " + _fmt_pmf(res.pmf).replace("\n", "\n            "))
    if res.status == UNVERIFIED:
        print(f"optnoise solve: unverified: {' '.join(res.message.split())}", file=sys.stderr)
    return _exit_for(res.status)


def _write_rows(rows: list[dict[str, Any]], fmt: str, out: str, keys: Sequence[str] = ROW_KEYS) -> None:
    if fmt == "json":
        text = json.dumps(rows, indent=1) + "\n"
    else:
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=list(keys), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
        text = buf.getvalue()
    if out == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        atomic_write_text(out, text)


def _cmd_sweep(a: argparse.Namespace) -> int:
    if a.out != "-":
        check_output_path("out", a.out)  # before any solve: a typo must not cost the whole sweep
    check_int("jobs", a.jobs, minimum=1)  # before the grid is built
    points = grid_points(
        n=parse_grid("n", a.n, integer=True),
        eps=parse_grid("eps", a.eps),
        delta=parse_grid("delta", a.delta) if a.delta is not None else ([0.0] if a.minimize == "distortion" else None),
        neighborhoods=a.neighborhood,
        directed=a.directed,
        metric=[m.strip() for m in a.metric.split(",")],
        privacy=[p.strip() for p in a.privacy.split(",")],
        objective=a.minimize,
        max_distortion=parse_grid("max-distortion", a.max_distortion) if a.max_distortion is not None else None,
        dim=a.dim,
        release=a.release,
    )
    return _run_sweep_command(points, a, ROW_KEYS)


def _run_sweep_command(points: list[dict[str, Any]], a: argparse.Namespace, keys: Sequence[str]) -> int:
    """Solve a sweep's points with the command's flags, write its rows (``keys``), and pick the exit code."""
    jobs = check_int("jobs", a.jobs, minimum=1)
    try:
        rows = run_sweep(
            points,
            **_solver_args(a),
            jobs=jobs,
            backend=a.backend,
            scheduler=a.scheduler,
            cache=None if a.no_cache else a.cache,
            progress=not a.quiet,
            connect_timeout=a.connect_timeout,
        )
    except SweepInterrupted as stop:
        _write_rows(stop.rows, a.format, a.out, keys)
        kept = "" if a.no_cache else "; they are cached, so running the sweep again resumes it"
        print(
            f"optnoise {a.command}: interrupted: wrote the {len(stop.rows)} of {stop.total} finished rows{kept}",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    _write_rows(rows, a.format, a.out, keys)
    flagged = sum(r["status"] == UNVERIFIED for r in rows)
    if flagged:
        print(
            f"optnoise {a.command}: {flagged} row(s) have status {UNVERIFIED!r} (reason in the 'error' column)",
            file=sys.stderr,
        )
        return EXIT_UNVERIFIED
    return EXIT_OK


def _cmd_verify(a: argparse.Namespace) -> int:
    eps = check_eps(a.eps, maximum=MAX_FINITE_EPS)  # the leak checks evaluate e^eps, which overflows beyond it
    delta = check_delta(a.delta)
    tol = check_tol("tol", a.tol)
    pmf = check_pmf("pmf", _load_array(a.pmf, "pmf"), atol=1e-9)
    if pmf.ndim > 1 and len(set(pmf.shape)) != 1:
        raise ValueError(f"pmf must have shape (n+1,)*d; got {pmf.shape}")
    if pmf.shape[0] < 2:
        raise ValueError(f"pmf must have at least 2 entries per coordinate (answers 0..n with n >= 1); got {pmf.shape}")
    n = pmf.shape[0] - 1
    nb = Neighborhood.parse(a.neighborhood, directed=a.directed, dim=pmf.ndim)
    # the tolerance rule shared with DesignResult.verify() and sweeps (optnoise.tolerance)
    got = achieved_deltas(pmf, nb.resolve(n, pmf.ndim), eps, tol=tol, rtol=pdp_rtol(eps))
    notions = NOTIONS if a.privacy == "all" else (a.privacy,)
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


def _cmd_figures(a: argparse.Namespace) -> int:
    from optnoise.figures import PAPERS, run_figures

    if a.paper != "all" and a.paper not in PAPERS:
        raise ValueError(f"paper must be one of {', '.join(PAPERS)} or 'all'; got {a.paper!r}")
    jobs = check_int("jobs", a.jobs, minimum=1, maximum=64)
    if a.out is not None and Path(a.out).exists() and not Path(a.out).is_dir():
        raise ValueError(f"out must be a folder; {a.out!r} is a file")
    results = run_figures(a.paper, fast=a.fast, jobs=jobs, out=a.out, force=a.force)
    failed = [s for s, rc, _ in results if rc != 0]
    for s, rc, dt in results:
        print(f"{'ok  ' if rc == 0 else 'FAIL'} {s.parent.name}/{s.name}  {dt:.1f}s")
    if failed:
        print(f"{len(failed)} script(s) failed", file=sys.stderr)
        return EXIT_CLAIM_FAILED
    return EXIT_OK


# --------------------------------------------------------------------------------------------
# CLI: `optnoise certify` and `optnoise release`
# --------------------------------------------------------------------------------------------


def _add_certify_cli(sub: Any) -> None:
    """Add the ``certify`` and ``release`` sub-commands to the ``optnoise`` parser."""
    p = sub.add_parser(
        "certify",
        help="certify a solved design exactly and write a deployable design file",
        description="Certify either a result file of `optnoise solve --format json --out FILE` (--result FILE) "
        "or a problem given by the solve flags (solved first). Exit 1 when the requested "
        "(eps, delta) cannot be certified, 3 when the solve is not optimal.",
    )
    p.add_argument("--result", default=None, help="JSON result of `optnoise solve --format json --out FILE`")
    _add_problem_args(p)
    for action in p._actions:  # the problem flags are required only without --result
        if action.dest in ("n", "eps", "neighborhood"):
            action.required = False
    p.add_argument("--out", default=None, help="write the certified design (JSON) to this file")
    p.add_argument(
        "--bits", type=_int("bits"), default=DEFAULT_BITS, help=f"denominator 2^bits (16..62, default {DEFAULT_BITS})"
    )
    p.add_argument(
        "--max-loss",
        type=_float("max-loss"),
        default=MAX_LOSS,
        help=f"largest relative distortion loss from repair (default {MAX_LOSS:g})",
    )
    p.add_argument("--format", default="table", choices=("table", "json"), help="output format")
    p.set_defaults(handler=_cmd_certify)

    p = sub.add_parser(
        "release",
        help="release noisy answers from a certified design file",
        description="Adds exact noise from a certified design to the answer(s). Default randomness "
        "is the OS CSPRNG; --seed is for reproducible experiments only.",
    )
    p.add_argument("--design", required=True, help="certified design file (from `optnoise certify --out`)")
    p.add_argument(
        "--value", required=True, help="true answer(s) in {0..n}: 3, a comma list 3,5, or vectors 1/2 or 1/2,3/4"
    )
    p.add_argument("--count", type=_int("count"), default=1, help="independent releases of each value (default 1)")
    p.add_argument(
        "--seed", type=_int("seed"), default=None, help="seed a numpy Generator (reproducible; NOT for deployment)"
    )
    p.add_argument("--format", default="text", choices=("text", "json"), help="output format")
    p.set_defaults(handler=_cmd_release)


def _result_from_file(path: str) -> DesignResult:
    """A :class:`DesignResult` from `optnoise solve --format json` output (re-verified on load)."""
    data = read_json(path, "result file")
    if not isinstance(data, dict):
        raise ValueError(f"result file {path!r} must be a JSON object from `optnoise solve --format json`")
    missing = [k for k in ("n", "eps", "metric", "privacy", "shifts", "pmf") if k not in data]
    if missing:
        raise ValueError(f"result file {path!r} lacks the field {missing[0]!r} of `optnoise solve --format json`")
    if data["metric"] == "custom":
        raise ValueError(
            "result file has a custom cost array, which solve JSON does not store; "
            "certify from the problem flags with --cost instead"
        )
    pmf = data["pmf"]
    if pmf is not None:
        pmf = check_pmf("result file field 'pmf'", pmf, atol=1e-6)
    dim = 1 if pmf is None else pmf.ndim
    release = data.get("release", "modulo")
    shifts = data["shifts"]
    if not isinstance(shifts, list) or not shifts:
        raise ValueError("result file field 'shifts' must be a non-empty list")
    # the JSON holds the resolved shift set: use it exactly, as a directed set
    nb = Neighborhood.shifts([tuple(s) if isinstance(s, list) else s for s in shifts], directed=True)
    objective = data.get("objective", "distortion")
    kw: dict[str, Any] = {}
    if objective == "delta":
        kw["max_distortion"] = data.get("max_distortion")
    else:
        kw["delta"] = data.get("delta")
    n = check_int("result file field 'n'", data["n"], minimum=1)
    design = NoiseDesign(
        n=n,
        eps=data["eps"],
        neighborhood=nb,
        metric=data["metric"],
        privacy=data["privacy"],
        objective=objective,
        shape=(n + 1,) * dim if pmf is not None and release == "modulo" else None,
        release=release,
        **kw,
    )
    return DesignResult.from_dict(data, design=design)


def _cmd_certify(a: argparse.Namespace) -> int:
    out_path = None if a.out is None else check_output_path("out", a.out)
    bits = check_int("bits", a.bits, minimum=16, maximum=62)
    # inf accepts any repair (documented in certify_result); NaN and negative values are refused
    max_loss = math.inf if a.max_loss == math.inf else check_positive("max_loss", a.max_loss, allow_zero=True)
    solve_kw = _solver_args(a)  # validated even with --result, where they would be silently unused
    flags = [k for k in ("n", "eps", "neighborhood") if getattr(a, k) is not None]
    if a.result is not None:
        if flags:
            raise ValueError(f"result: give either --result FILE or the problem flags, not both (got --{flags[0]})")
        if solve_kw["options"] or solve_kw["time_limit"] is not None or solve_kw["mip_gap"] != MIP_REL_GAP:
            raise ValueError(
                "highs-option, time-limit and mip-gap apply when certify solves the problem from its flags, "
                "not with --result (the result is already solved)"
            )
        res = _result_from_file(a.result)
    else:
        missing = [k for k in ("n", "eps", "neighborhood") if getattr(a, k) is None]
        if missing:
            raise ValueError(
                f"certify needs --result FILE or the problem flags --n, --eps, --neighborhood (missing --{missing[0]})"
            )
        res = _design_from_args(a).solve(**solve_kw)
    if res.status != "optimal":
        why = f": {' '.join(res.message.split())}" if res.status == UNVERIFIED else ""
        print(f"optnoise certify: error: cannot certify a result with status {res.status!r}{why}", file=sys.stderr)
        return _exit_for(res.status)
    try:
        cd = certify_result(res, bits=bits, max_loss=max_loss, solver=a.solver)
    except CertificationError as exc:
        print("optnoise certify: certificate failed: " + " ".join(str(exc).split()), file=sys.stderr)
        return EXIT_CLAIM_FAILED
    if out_path is not None:
        cd.save(out_path)
    if a.format == "json":
        d = cd.to_dict()
        if out_path is not None:
            d["path"] = str(out_path)
        print(json.dumps(d, indent=1))
    else:
        print(cd.summary())
        if out_path is not None:
            print(f"wrote       {out_path}")
    return EXIT_OK


def _parse_values(text: str, dim: int, n: int) -> np.ndarray:
    """Answers ``3``, ``3,5`` or vectors ``1/2,3/4``: ASCII integers in ``{0..n}``, compared exactly."""
    items = [t.strip() for t in text.split(",")]
    if not text.strip() or any(not t for t in items):
        raise ValueError(f"value must be answers in {{0..{n}}} such as 3 or 1/2 (comma-separated); got {text!r}")
    if len(items) > 10**6:
        raise ValueError("value lists more than 10^6 answers")
    try:
        rows = [[parse_int("value", v) for v in it.split("/")] for it in items]
    except ValueError:
        raise ValueError(f"value must be integers in {{0..{n}}} (vectors as a/b); got {text[:80]!r}") from None
    if any(len(r) != dim for r in rows):
        raise ValueError(f"value must have {dim} coordinate(s) per answer (a/b for vectors); got {text[:80]!r}")
    if any(not 0 <= v <= n for r in rows for v in r):
        raise ValueError(f"q must be integers in [0, n] = [0, {n}]; got {text[:80]!r}")
    return np.array(rows, dtype=np.int64).reshape(len(rows), dim)


def _fmt_value(v: Any) -> str:
    """A released value: an integer as such; a mechanism's non-integer output value in full."""
    f = float(v)
    return str(int(f)) if f.is_integer() else repr(f)


def _cmd_release(a: argparse.Namespace) -> int:
    count = check_int("count", a.count, minimum=1, maximum=10**8)
    seed = None if a.seed is None else check_int("seed", a.seed, minimum=0, maximum=2**128)
    cd = load_design(a.design)
    vals = _parse_values(a.value, cd.design.dim, cd.n)
    if count * len(vals) > 10**8:
        raise ValueError(f"count x values = {count * len(vals)} releases exceeds 10^8")
    q = np.repeat(vals[None, :, :], count, axis=0)  # (count, values, d)
    if cd.design.dim == 1:
        q = q[..., 0]
    rng = None if seed is None else np.random.default_rng(seed)
    out = np.asarray(cd.release(q, rng=rng))
    if a.format == "json":
        print(json.dumps({"design": str(a.design), "seeded": seed is not None, "released": out.tolist()}))
        return EXIT_OK
    lines = []
    for row in out.reshape(count, -1, cd.design.dim) if cd.design.dim > 1 else out.reshape(count, -1, 1):
        lines.append(",".join("/".join(_fmt_value(v) for v in ans) for ans in row))
    print("\n".join(lines))
    return EXIT_OK


# --------------------------------------------------------------------------------------------
# CLI: `optnoise mechanism` and `optnoise mechanism-sweep`
# --------------------------------------------------------------------------------------------


def _add_mechanism_args(p: argparse.ArgumentParser, *, grid: bool = False) -> None:
    """The flags of a :class:`MechanismDesign` (grids and comma lists with ``grid``)."""
    grid_note = " (grid)" if grid else ""
    p.add_argument("--n", required=True, type=str if grid else _int("n"), help="inputs lie in {0..n}" + grid_note)
    p.add_argument("--eps", required=True, type=str if grid else _float("eps"), help="privacy level > 0" + grid_note)
    p.add_argument(
        "--delta",
        default=None if grid else 0.0,
        type=str if grid else _float("delta"),
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
        type=str if grid else _float("max-loss"),
        help="Bayes-loss cap for --objective delta" + grid_note,
    )
    if not grid:
        p.add_argument("--outputs", default=None, help="m (outputs 0..m, default n) or a comma list of output values")
        p.add_argument("--prior", default=None, help="input prior: a file (.json/.npy/.txt) or a comma list")
    _add_solver_args(p)


def _add_mechanism_cli(sub: Any) -> None:
    """Add the ``mechanism`` and ``mechanism-sweep`` sub-commands."""
    p = sub.add_parser(
        "mechanism",
        help="design the optimal general (non-additive) mechanism P[x, y] for one problem",
        description="The best mechanism over all conditional matrices P[x, y] for inputs 0..n "
        "(optnoise.MechanismDesign). Exit 0 optimal, 1 --certify failed, 2 bad input, 3 not optimal, "
        "4 unverified.",
    )
    _add_mechanism_args(p)
    p.add_argument("--format", default="table", choices=("table", "json"), help="output format")
    p.add_argument("--out", default=None, help="also write the JSON result to this file")
    p.add_argument("--mps", default=None, help="write the (full) model as an MPS file and exit")
    p.add_argument("--certify", default=None, metavar="FILE", help="certify exactly and write the design file")
    p.set_defaults(handler=_cmd_mechanism)

    p = sub.add_parser("mechanism-sweep", help="solve a grid of mechanism designs, one CSV row per point")
    _add_mechanism_args(p, grid=True)
    _add_sweep_args(p)
    p.set_defaults(handler=_cmd_mechanism_sweep)


def _parse_neighbors(text: str) -> Any:
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
        raise ValueError(f"neighbors 'pairs:' must list pairs like 0-1,1-2; got {text[:80]!r}")
    return pairs


def _mechanism_from_args(a: argparse.Namespace) -> MechanismDesign:
    loss: Any = a.loss if a.loss in LOSSES else _load_array(a.loss, "loss")
    outputs: Any = None
    if a.outputs is not None:
        vals = _numbers(a.outputs.split(","), "outputs", a.outputs)
        outputs = int(vals[0]) if vals.size == 1 and float(vals[0]).is_integer() else vals
    return MechanismDesign(
        n=a.n,
        eps=a.eps,
        delta=a.delta,
        neighbors=_parse_neighbors(a.neighbors),
        outputs=outputs,
        loss=loss,
        objective=a.objective,
        prior=None if a.prior is None else _load_array(a.prior, "prior"),
        privacy=a.privacy,
        max_loss=a.max_loss,
        directed=a.directed,
    )


def _cmd_mechanism(a: argparse.Namespace) -> int:
    design_path = None if a.certify is None else check_output_path("certify", a.certify)
    design = _mechanism_from_args(a)
    solved = _solve_with_flags(design, a)
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
        _print_status(res, f"   rounds {res.rounds}")
        if res.matrix is not None and res.loss is not None:
            print(f"loss        {res.loss:.10g}")
            if design.objective == "delta" and res.delta is not None:
                print(f"min delta   {res.delta:.10g}")
            print("achieved    " + "  ".join(f"{k}={v:.6g}" for k, v in res.achieved.items()))
            print("actual      " + "  ".join(f"{k}={v:.6g}" for k, v in res.actual.items()))
            print("matrix      " + _fmt_pmf(res.matrix).replace("\n", "\n            "))
        if cd is not None:
            print(f"certified   delta={float(cd.certified_delta):.10g}   wrote {design_path}")
    if res.status == UNVERIFIED:
        print(f"optnoise mechanism: unverified: {' '.join(res.message.split())}", file=sys.stderr)
    return _exit_for(res.status)


def _cmd_mechanism_sweep(a: argparse.Namespace) -> int:
    if a.out != "-":
        check_output_path("out", a.out)  # before any solve: a typo must not cost the whole sweep
    check_int("jobs", a.jobs, minimum=1)
    points = mechanism_points(
        n=parse_grid("n", a.n, integer=True),
        eps=parse_grid("eps", a.eps),
        delta=parse_grid("delta", a.delta) if a.delta is not None else None,
        neighbors=[_parse_neighbors(t) for t in (a.neighbors or ["adjacent"])],
        directed=a.directed,
        loss=[v.strip() for v in a.loss.split(",")],
        objective=a.objective,
        privacy=[v.strip() for v in a.privacy.split(",")],
        max_loss=parse_grid("max-loss", a.max_loss) if a.max_loss is not None else None,
    )
    for p in points:  # rows show the neighbour spec as given
        if not isinstance(p["neighbors"], str):
            p["label"] = "pairs:" + ",".join(f"{x}-{y}" for x, y in p["neighbors"])
    return _run_sweep_command(points, a, MECHANISM_ROW_KEYS)


def _cmd_plot(a: argparse.Namespace) -> int:
    from optnoise.plotting import check_plot_path, plot_sweep, save_figure

    check_plot_path(a.out)
    fig = plot_sweep(a.csv, x=a.x, y=a.y, hue=a.hue, logx=a.logx, logy=a.logy)
    path = save_figure(fig, a.out)
    print(f"wrote {path}")
    return EXIT_OK


_COMMANDS = {"solve": _cmd_solve, "sweep": _cmd_sweep, "verify": _cmd_verify, "figures": _cmd_figures}


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at the null device so the interpreter's final flush stays quiet."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):  # stdout replaced (tests) or already closed
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code.

    Every error is one line on stderr: bad input exits 2, a closed output
    pipe 141, Ctrl-C 130; an unexpected exception (a bug) is reported in one
    line with exit 70 (``OPTNOISE_DEBUG=1`` re-raises it with its traceback).
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # usage errors (one line, code 2), --help and --version (0)
        return int(exc.code or 0) if not isinstance(exc.code, str) else EXIT_USAGE
    handler = _COMMANDS.get(args.command) or getattr(args, "handler", None)
    if handler is None:  # argparse requires a sub-command, so this is a programming error
        raise RuntimeError(f"no handler for command {args.command!r}")
    try:
        try:
            return int(handler(args))
        finally:
            sys.stdout.flush()  # a closed pipe surfaces here, inside the handlers below
    except BrokenPipeError:
        _silence_stdout()
        print(f"optnoise {args.command}: output closed early (broken pipe)", file=sys.stderr)
        return EXIT_BROKEN_PIPE
    except ValueError as exc:
        msg = " ".join(str(exc).split())
        print(f"optnoise {args.command}: error: {msg}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:  # e.g. the disk filled up while writing an output file
        print(f"optnoise {args.command}: error: {exc.strerror or exc} ({exc.filename or 'file'})", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("optnoise: interrupted (cached sweep points are kept; run again to resume)", file=sys.stderr)
        return EXIT_INTERRUPTED
    except RecursionError:
        print(f"optnoise {args.command}: error: input nested too deeply", file=sys.stderr)
        return EXIT_USAGE
    except Exception as exc:  # a bug: still one line, never a traceback, unless asked for
        if os.environ.get("OPTNOISE_DEBUG"):
            raise
        print(
            f"optnoise {args.command}: internal error: {exc.__class__.__name__}: {' '.join(str(exc).split())[:300]} "
            "(please report; OPTNOISE_DEBUG=1 shows the traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":
    raise SystemExit(main())
