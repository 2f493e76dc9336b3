"""The ``optnoise`` command line.

Sub-commands: ``solve``, ``sweep``, ``verify``, ``figures``, ``certify``,
``release`` and ``plot``.

Exit codes: 0 success; 1 a verification claim failed; 2 bad input (one line
on stderr naming the parameter and the allowed values); 3 the solver found
no optimal solution (infeasible, time limit or solver error; the status is
still printed).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from ._validation import check_int, check_pmf
from .certify import DEFAULT_BITS, MAX_LOSS, CertificationError, certify_result, load_design
from .design import METRICS, OBJECTIVES, DesignResult, NoiseDesign
from .neighborhood import Neighborhood
from .privacy import NOTIONS
from .solvers import MIP_REL_GAP, SOLVERS

__all__ = ["main", "build_parser"]

EXIT_OK, EXIT_CLAIM_FAILED, EXIT_USAGE, EXIT_NOT_OPTIMAL = 0, 1, 2, 3


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _float(name: str):
    def conv(text: str) -> float:
        try:
            return float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number; got {text!r}") from None

    return conv


def _highs_option(text: str) -> tuple[str, object]:
    name, sep, raw = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"highs-option must look like NAME=VALUE; got {text!r}")
    low = raw.strip().lower()
    if low in ("true", "false"):
        return name.strip(), low == "true"
    for kind in (int, float):
        try:
            return name.strip(), kind(raw)
        except ValueError:
            pass
    return name.strip(), raw


def _add_problem_args(p: argparse.ArgumentParser, *, grid: bool = False) -> None:
    num = str if grid else _float
    p.add_argument(
        "--n",
        required=True,
        type=str if grid else int,
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
    p.add_argument("--dim", type=int, default=None, help="query dimension for vector shifts")
    p.add_argument("--metric", default="er", help=f"one of {', '.join(METRICS)}" + (" (comma list)" if grid else ""))
    if not grid:
        p.add_argument(
            "--cost", default=None, help="custom cost per noise value: a file (.json/.npy/.txt) or a comma list"
        )
    p.add_argument("--privacy", default="pdp", help=f"one of {', '.join(NOTIONS)}" + (" (comma list)" if grid else ""))
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
    p.add_argument("--solver", default="highs", choices=SOLVERS, help="LP/MILP backend (default highs)")
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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    parser = _Parser(
        prog="optnoise",
        description="Optimal noise design for differential privacy.",
        epilog="exit codes: 0 ok, 1 claim failed, 2 bad input, 3 no optimal solution",
    )
    from . import __version__

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
    p.add_argument("--jobs", type=int, default=1, help="parallel worker processes")
    p.add_argument("--backend", default="process", choices=("process", "dask"), help="parallel backend")
    p.add_argument("--scheduler", default=None, help="Dask scheduler address (with --backend dask)")
    p.add_argument("--cache", default=".optnoise-cache", help="per-point result cache (resumes sweeps)")
    p.add_argument("--no-cache", action="store_true", help="disable the cache")
    p.add_argument("--out", default="-", help="output file (default: stdout)")
    p.add_argument("--format", default="csv", choices=("csv", "json"))
    p.add_argument("--quiet", action="store_true", help="no progress bar")

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
        help="absolute slack on f(eta) - e^eps f(eta+mu) in PDP indicators (default 0: exact)",
    )
    p.add_argument("--format", default="table", choices=("table", "json"))

    p = sub.add_parser("figures", help="regenerate the figures of a paper")
    p.add_argument("paper", help="kadam2024, pf2020, partition2022, count2020, composition2021, beyond or all")
    p.add_argument("--fast", action="store_true", help="coarse grids (seconds)")
    p.add_argument("--jobs", type=int, default=1, help="scripts run in parallel")
    p.add_argument("--out", default=None, help="output root (default figures/)")

    _add_certify_cli(sub)

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
        return np.array([float(v) for v in tokens])
    except ValueError:
        raise ValueError(f"{name} must hold numbers; could not parse {text!r}") from None


def _load_array(text: str, name: str) -> np.ndarray:
    """Numbers from a file (.npy, JSON list or solve output, whitespace/comma text) or an inline comma list."""
    path = Path(text)
    if not path.exists():
        if path.suffix in (".json", ".npy", ".txt", ".csv"):
            raise ValueError(f"{name} file not found: {text!r}")
        return _numbers(text.split(","), name, text)
    try:
        if path.suffix == ".npy":
            return np.asarray(np.load(path, allow_pickle=False), dtype=float)
        raw = path.read_text()
    except (OSError, ValueError) as exc:
        raise ValueError(f"{name} could not be read from {text!r}: {exc}") from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError:
        return _numbers(raw.replace(",", " ").split(), name, text)
    if isinstance(data, dict):
        if "pmf" not in data:
            raise ValueError(f"{name} file {text!r} is a JSON object without a 'pmf' key")
        data = data["pmf"]
    try:
        return np.asarray(data, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must hold numbers; could not parse {text!r}") from None


def _design_from_args(a: argparse.Namespace) -> NoiseDesign:
    from .sweep import design_of

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
        }
    )


def _fmt_pmf(pmf: np.ndarray) -> str:
    return np.array2string(pmf, precision=6, suppress_small=True, max_line_width=100)


def _cmd_solve(a: argparse.Namespace) -> int:
    from .plotting import check_plot_path, save_figure

    if a.plot:
        check_plot_path(a.plot)
    design = _design_from_args(a)
    if a.mps:
        path = design.to_mps(a.mps)
        print(f"wrote {path}")
        return EXIT_OK
    res = design.solve(
        solver=a.solver, time_limit=a.time_limit, mip_gap=a.mip_gap, options=dict(a.highs_option) or None
    )
    d = res.to_dict()
    if a.out:
        Path(a.out).write_text(json.dumps(d, indent=2))
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
        print(f"notion      {design.privacy}   metric {design.metric}   solver {a.solver}")
        print(
            f"status      {res.status}"
            + (f"   gap {res.gap:.3g}" if res.gap else "")
            + f"   time {res.solve_time:.3f}s   model {res.model_size}"
        )
        if res.pmf is not None:
            print(f"distortion  {res.distortion:.10g}")
            if design.objective == "delta":
                print(f"min delta   {res.delta:.10g}")
            print("achieved    " + "  ".join(f"{k}={v:.6g}" for k, v in res.achieved.items()))
            print("actual      " + "  ".join(f"{k}={v:.6g}" for k, v in res.actual.items()))
            print("pmf         " + _fmt_pmf(res.pmf).replace("\n", "\n            "))
    return EXIT_OK if res.status == "optimal" else EXIT_NOT_OPTIMAL


def _cmd_sweep(a: argparse.Namespace) -> int:
    import csv

    from .sweep import ROW_KEYS, grid_points, parse_grid, run_sweep

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
    )
    rows = run_sweep(
        points,
        solver=a.solver,
        time_limit=a.time_limit,
        mip_gap=a.mip_gap,
        options=dict(a.highs_option) or None,
        jobs=a.jobs,
        backend=a.backend,
        scheduler=a.scheduler,
        cache=None if a.no_cache else a.cache,
        progress=not a.quiet,
    )
    out = sys.stdout if a.out == "-" else open(a.out, "w", newline="")
    try:
        if a.format == "json":
            json.dump(rows, out, indent=1)
            out.write("\n")
        else:
            w = csv.DictWriter(out, fieldnames=list(ROW_KEYS))
            w.writeheader()
            w.writerows(rows)
    finally:
        if out is not sys.stdout:
            out.close()
    return EXIT_OK


def _cmd_verify(a: argparse.Namespace) -> int:
    from ._validation import check_delta, check_eps
    from .privacy import achieved_deltas

    eps = check_eps(a.eps)
    delta = check_delta(a.delta)
    pmf = check_pmf("pmf", _load_array(a.pmf, "pmf"), atol=1e-9)
    if pmf.ndim > 1 and len(set(pmf.shape)) != 1:
        raise ValueError(f"pmf must have shape (n+1,)*d; got {pmf.shape}")
    n = pmf.shape[0] - 1
    nb = Neighborhood.parse(a.neighborhood, directed=a.directed, dim=pmf.ndim)
    got = achieved_deltas(pmf, nb.resolve(n, pmf.ndim), eps, tol=a.tol)
    notions = NOTIONS if a.privacy == "all" else (a.privacy,)
    ok = all(got[k] <= delta for k in notions)
    if a.format == "json":
        print(
            json.dumps(
                {
                    "n": n,
                    "eps": eps,
                    "delta": delta,
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
            mark = ("ok  " if got[k] <= delta else "FAIL") if k in notions else "    "
            print(f"{mark} {k:10s} delta({eps:g}) = {got[k]:.10g}   (claim {delta:g})")
    return EXIT_OK if ok else EXIT_CLAIM_FAILED


def _cmd_figures(a: argparse.Namespace) -> int:
    from .figures import PAPERS, run_figures

    if a.paper != "all" and a.paper not in PAPERS:
        raise ValueError(f"paper must be one of {', '.join(PAPERS)} or 'all'; got {a.paper!r}")
    if a.jobs < 1:
        raise ValueError(f"jobs must be an integer >= 1; got {a.jobs}")
    results = run_figures(a.paper, fast=a.fast, jobs=a.jobs, out=a.out)
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
        "--bits", type=int, default=DEFAULT_BITS, help=f"denominator 2^bits (16..62, default {DEFAULT_BITS})"
    )
    p.add_argument(
        "--max-loss",
        type=float,
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
    p.add_argument("--count", type=int, default=1, help="independent releases of each value (default 1)")
    p.add_argument("--seed", type=int, default=None, help="seed a numpy Generator (reproducible; NOT for deployment)")
    p.add_argument("--format", default="text", choices=("text", "json"), help="output format")
    p.set_defaults(handler=_cmd_release)


def _result_from_file(path: str) -> DesignResult:
    """A :class:`DesignResult` from `optnoise solve --format json` output."""
    try:
        data = json.loads(Path(path).read_text())
    except OSError as exc:
        raise ValueError(f"result file could not be read from {path!r}: {exc.__class__.__name__}") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ValueError(f"result file {path!r} is not valid JSON") from None
    if not isinstance(data, dict):
        raise ValueError(f"result file {path!r} must be a JSON object from `optnoise solve --format json`")
    try:
        if data["metric"] == "custom":
            raise ValueError(
                "result file has a custom cost array, which solve JSON does not store; "
                "certify from the problem flags with --cost instead"
            )
        pmf = data["pmf"]
        if pmf is not None:
            pmf = check_pmf("pmf", pmf, atol=1e-6)
        dim = 1 if pmf is None else pmf.ndim
        shifts = data["shifts"]
        # the JSON holds the resolved shift set: use it exactly, as a directed set
        nb = Neighborhood.shifts([tuple(s) if isinstance(s, list) else s for s in shifts], directed=True)
        kw: dict[str, Any] = {}
        if data.get("objective", "distortion") == "delta":
            kw["max_distortion"] = data["max_distortion"]
        else:
            kw["delta"] = data["delta"]
        design = NoiseDesign(
            n=data["n"],
            eps=data["eps"],
            neighborhood=nb,
            metric=data["metric"],
            privacy=data["privacy"],
            objective=data.get("objective", "distortion"),
            shape=(int(data["n"]) + 1,) * dim if pmf is not None else None,
            **kw,
        )
        return DesignResult.from_dict(data, design=design)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"result file {path!r} lacks a field of `optnoise solve --format json`: {exc}") from None


def _cmd_certify(a: argparse.Namespace) -> int:
    flags = [k for k in ("n", "eps", "neighborhood") if getattr(a, k) is not None]
    if a.result is not None:
        if flags:
            raise ValueError(f"result: give either --result FILE or the problem flags, not both (got --{flags[0]})")
        res = _result_from_file(a.result)
    else:
        missing = [k for k in ("n", "eps", "neighborhood") if getattr(a, k) is None]
        if missing:
            raise ValueError(
                f"certify needs --result FILE or the problem flags --n, --eps, --neighborhood (missing --{missing[0]})"
            )
        res = _design_from_args(a).solve(solver=a.solver, time_limit=a.time_limit)
    if res.status != "optimal":
        print(f"optnoise certify: error: cannot certify a result with status {res.status!r}", file=sys.stderr)
        return EXIT_NOT_OPTIMAL
    try:
        cd = certify_result(res, bits=a.bits, max_loss=a.max_loss, solver=a.solver)
    except CertificationError as exc:
        print("optnoise certify: certificate failed: " + " ".join(str(exc).split()), file=sys.stderr)
        return EXIT_CLAIM_FAILED
    if a.out:
        cd.save(a.out)
    if a.format == "json":
        d = cd.to_dict()
        if a.out:
            d["path"] = str(a.out)
        print(json.dumps(d, indent=1))
    else:
        print(cd.summary())
        if a.out:
            print(f"wrote       {a.out}")
    return EXIT_OK


def _parse_values(text: str, dim: int, n: int) -> np.ndarray:
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise ValueError(f"value must be answers in {{0..{n}}} such as 3 or 1/2; got {text!r}")
    try:
        rows = [[int(v) for v in it.split("/")] for it in items]
    except ValueError:
        raise ValueError(f"value must be integers in {{0..{n}}} (vectors as a/b); got {text!r}") from None
    if any(len(r) != dim for r in rows):
        raise ValueError(f"value must have {dim} coordinate(s) per answer (a/b for vectors); got {text!r}")
    return np.array(rows, dtype=np.int64).reshape(len(rows), dim)


def _cmd_release(a: argparse.Namespace) -> int:
    count = check_int("count", a.count, minimum=1, maximum=10**8)
    cd = load_design(a.design)
    vals = _parse_values(a.value, cd.design.dim, cd.n)
    q = np.repeat(vals[None, :, :], count, axis=0)  # (count, values, d)
    if cd.design.dim == 1:
        q = q[..., 0]
    rng = None if a.seed is None else np.random.default_rng(check_int("seed", a.seed, minimum=0))
    out = np.asarray(cd.release(q, rng=rng))
    if a.format == "json":
        print(json.dumps({"design": str(a.design), "seeded": a.seed is not None, "released": out.tolist()}))
        return EXIT_OK
    lines = []
    for row in out.reshape(count, -1, cd.design.dim) if cd.design.dim > 1 else out.reshape(count, -1, 1):
        lines.append(",".join("/".join(str(int(v)) for v in ans) for ans in row))
    print("\n".join(lines))
    return EXIT_OK


def _cmd_plot(a: argparse.Namespace) -> int:
    from .plotting import check_plot_path, plot_sweep, save_figure

    check_plot_path(a.out)
    fig = plot_sweep(a.csv, x=a.x, y=a.y, hue=a.hue, logx=a.logx, logy=a.logy)
    path = save_figure(fig, a.out)
    print(f"wrote {path}")
    return EXIT_OK


_COMMANDS = {"solve": _cmd_solve, "sweep": _cmd_sweep, "verify": _cmd_verify, "figures": _cmd_figures}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # usage errors (one line, code 2), --help and --version (0)
        return int(exc.code or 0)
    handler = _COMMANDS.get(args.command) or getattr(args, "handler", None)
    if handler is None:  # argparse requires a sub-command, so this is a programming error
        raise RuntimeError(f"no handler for command {args.command!r}")
    try:
        return int(handler(args))
    except ValueError as exc:
        msg = " ".join(str(exc).split())
        print(f"optnoise {args.command}: error: {msg}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("optnoise: interrupted (cached sweep points are kept; run again to resume)", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
