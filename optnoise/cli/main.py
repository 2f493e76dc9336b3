"""The ``optnoise`` command line.

Sub-commands: ``solve``, ``sweep``, ``verify``, ``figures``, ``certify``,
``release``, ``compose`` (the k-fold composed guarantee of a design), ``mechanism`` (the optimal general mechanism,
:class:`~optnoise.design.mechanism.MechanismDesign`), ``mechanism-sweep`` and ``plot``.

Exit codes (:data:`EXIT_CODES`): 0 success, also for a ``feasible`` result, which
meets its guarantee (re-verified) without a proof of optimality (a looser
``--mip-gap``, a composed design; bound and gap printed); 1 a verification claim
failed; 2 bad input (one line on stderr naming the parameter and the allowed
values); 3 the solver found no optimal solution (infeasible, time limit or
solver error; the status is still printed); 4 the solver claimed a solution that
failed re-verification (status ``unverified``, the reason printed; a sweep with
such a row); 5 with ``--require-optimal``: the result is ``feasible``, not proven
optimal (a sweep: some row is not ``optimal``), and ``certify`` refusing a
feasible result without ``--allow-suboptimal``; 70 an internal error (a bug,
reported in one line); 130 interrupted (Ctrl-C; a sweep writes its finished rows
first); 141 the output pipe was closed (e.g. piped into ``head``); 143 a sweep
was terminated (SIGTERM; it writes its finished rows first).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from optnoise.cli.args import (
    EXIT_BROKEN_PIPE,
    EXIT_CLAIM_FAILED,
    EXIT_FEASIBLE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_NOT_OPTIMAL,
    EXIT_OK,
    EXIT_TERMINATED,
    EXIT_UNVERIFIED,
    EXIT_USAGE,
    MAX_MESSAGE,
    Parser,
    add_exit_args,
    add_problem_args,
    add_release_field_args,
    add_sweep_args,
    float_arg,
    int_arg,
    silence_stdout,
)
from optnoise.cli.compose import add_compose_cli
from optnoise.cli.deploy import add_certify_cli
from optnoise.cli.figures import cmd_figures, cmd_plot
from optnoise.cli.mechanism import add_mechanism_cli
from optnoise.cli.solve import cmd_solve, cmd_verify
from optnoise.cli.sweep import cmd_sweep
from optnoise.engine.shown import clip, shown
from optnoise.privacy.curves import NOTIONS

__all__ = ["main", "build_parser", "EXIT_CODES"]

#: Every exit code a command can return, with its meaning (the epilog of ``optnoise --help``; the CLI guide's
#: table lists the same codes).
EXIT_CODES = {
    EXIT_OK: "ok: optimal, or feasible (guarantee re-verified, optimality not proven)",
    EXIT_CLAIM_FAILED: "a verification claim failed",
    EXIT_USAGE: "bad input",
    EXIT_NOT_OPTIMAL: "no optimal solution (infeasible, time limit, error)",
    EXIT_UNVERIFIED: "unverified",
    EXIT_FEASIBLE: "feasible but not proven optimal, with --require-optimal (certify: without --allow-suboptimal)",
    EXIT_INTERNAL: "internal error",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
    EXIT_BROKEN_PIPE: "output pipe closed",
    EXIT_TERMINATED: "sweep terminated (SIGTERM)",
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    parser = Parser(
        prog="optnoise",
        description="Optimal noise design for differential privacy.",
        epilog="exit codes: " + "; ".join(f"{code} {meaning}" for code, meaning in EXIT_CODES.items()),
    )
    from optnoise import __version__

    parser.add_argument("--version", action="version", version=f"optnoise {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    p = sub.add_parser("solve", help="design the optimal noise PMF for one problem")
    add_problem_args(p)
    p.add_argument("--format", default="table", choices=("table", "json"), help="output format")
    p.add_argument("--out", default=None, help="also write the JSON result to this file")
    p.add_argument("--mps", default=None, help="write the model as an MPS file and exit")
    p.add_argument("--plot", default=None, help="also draw the PMF and its privacy profile to this .png/.pdf/.svg")
    p.add_argument(
        "--support",
        type=int_arg("support"),
        default=None,
        help="--release additive or grid: the finite part -L..L of the noise (default grown)",
    )
    p.add_argument(
        "--gap",
        type=float_arg("gap"),
        default=None,
        help="--release continuous: the proven relative gap to refine to, in (0, 1) (default 1e-3)",
    )
    p.add_argument(
        "--compare",
        action="store_true",
        help="also print the baselines calibrated to the same guarantee (Laplace, Gaussian, ...)",
    )
    p.add_argument(
        "--quiet", action="store_true", help="no progress bar (composed and rdp/zcdp solves show one on a terminal)"
    )
    add_exit_args(p)

    p = sub.add_parser("sweep", help="solve a grid of problems, one CSV row per point")
    add_problem_args(p, grid=True)
    add_release_field_args(p)
    add_sweep_args(p)
    add_exit_args(p, sweep=True)

    p = sub.add_parser("verify", help="recompute a PMF's delta under each notion and check a claim")
    p.add_argument("--pmf", required=True, help="PMF file: JSON list (or solve --format json output), .npy, or text")
    p.add_argument("--eps", required=True, type=float_arg("eps"))
    p.add_argument("--delta", default=0.0, type=float_arg("delta"), help="claimed delta (default 0)")
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
        type=float_arg("tol"),
        help="extra absolute slack on f(eta) - e^eps f(eta+mu) in PDP indicators, at most 1e-9 (default 0); "
        "the shared tolerance rule (PDP indicators, and every notion at delta = 0, at eps * (1 + 1e-6) + 1e-12; "
        "delta * (1 + 1e-6) for delta > 0) always applies",
    )
    p.add_argument("--format", default="table", choices=("table", "json"))

    p = sub.add_parser(
        "figures",
        help="regenerate the figures of a paper, or check regenerated CSVs against the committed ones",
    )
    p.add_argument(
        "paper",
        help="kadam2024, pf2020, partition2022, count2020, composition2021, beyond or all; or check: compare "
        "every CSV under figures/ (or --out) with the committed one within the tolerances its script declares "
        "(exit 1 on a difference beyond them)",
    )
    p.add_argument("--fast", action="store_true", help="coarse grids (seconds)")
    p.add_argument("--jobs", type=int_arg("jobs"), default=1, help="scripts run in parallel (1..4 per core; default 1)")
    p.add_argument("--out", default=None, help="output root (default figures/)")
    p.add_argument("--force", action="store_true", help="run every script, also those whose outputs are up to date")
    p.add_argument("--against", default=None, help="check: the git revision to compare with (default HEAD)")
    p.add_argument("--reference", default=None, help="check: a folder laid out like figures/ to compare with")

    add_certify_cli(sub)
    add_mechanism_cli(sub)
    add_compose_cli(sub)

    p = sub.add_parser("plot", help="plot columns of a sweep CSV (one line per --hue value)")
    p.add_argument("csv", help="a CSV written by `optnoise sweep`")
    p.add_argument("--x", required=True, help="column on the x axis (e.g. eps)")
    p.add_argument("--y", required=True, help="column on the y axis (e.g. distortion)")
    p.add_argument("--hue", default=None, help="column whose values get one line each (e.g. delta)")
    p.add_argument("--logx", action="store_true", help="logarithmic x axis")
    p.add_argument("--logy", action="store_true", help="logarithmic y axis")
    p.add_argument("--out", required=True, help="output image (.png, .pdf or .svg)")
    p.set_defaults(handler=cmd_plot)
    return parser


# ---------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------
# CLI: `optnoise mechanism` and `optnoise mechanism-sweep`
# --------------------------------------------------------------------------------------------


_COMMANDS = {"solve": cmd_solve, "sweep": cmd_sweep, "verify": cmd_verify, "figures": cmd_figures}


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
        silence_stdout()
        print(f"optnoise {args.command}: output closed early (broken pipe)", file=sys.stderr)
        return EXIT_BROKEN_PIPE
    except ValueError as exc:
        # messages cut the values they echo (optnoise.engine.validation.shown); this cap is the backstop
        msg = clip(" ".join(str(exc).split()), MAX_MESSAGE)
        print(f"optnoise {args.command}: error: {msg}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:  # e.g. the disk filled up while writing an output file
        where = shown(str(exc.filename)) if exc.filename else "file"
        print(f"optnoise {args.command}: error: {exc.strerror or exc} ({where})", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        # a sweep interrupted while it solves writes its finished rows and says what is cached
        # (optnoise.cli.sweep); one interrupted here, before or after its points ran, wrote nothing
        print(f"optnoise {args.command}: interrupted (nothing was written)", file=sys.stderr)
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
