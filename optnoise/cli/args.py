"""Argument parsing and output helpers shared by the commands."""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import numpy as np

from optnoise.cli.points import ROW_KEYS
from optnoise.cli.sweeps import CONNECT_TIMEOUT
from optnoise.design.metrics import METRICS
from optnoise.design.noise import DESIGN_NOTIONS
from optnoise.design.releases import get_release, release_names
from optnoise.engine.io import atomic_write_text, read_bytes, read_json, read_text
from optnoise.engine.shown import clip, shown
from optnoise.engine.solve import SOLVERS, check_solve_args
from optnoise.engine.tolerance import MIP_REL_GAP
from optnoise.engine.validation import JOBS_PER_CORE, parse_float, parse_int, real_array
from optnoise.privacy.fields import BudgetField
from optnoise.privacy.notions import NOTION_REGISTRY, budget_fields, notion_names
from optnoise.privacy.verification import UNVERIFIED

__all__ = [
    "parsed_arg",
    "float_arg",
    "int_arg",
    "highs_option_arg",
    "add_solver_args",
    "add_exit_args",
    "add_budget_args",
    "add_problem_args",
    "add_sweep_args",
    "parse_numbers",
    "load_array",
    "solver_args",
    "format_pmf",
    "print_status",
    "exit_for",
    "write_rows",
    "silence_stdout",
]

#: Exit codes of every command (see the module docstring of optnoise.cli).
EXIT_OK, EXIT_CLAIM_FAILED, EXIT_USAGE, EXIT_NOT_OPTIMAL, EXIT_UNVERIFIED, EXIT_FEASIBLE = 0, 1, 2, 3, 4, 5
EXIT_INTERRUPTED, EXIT_BROKEN_PIPE, EXIT_INTERNAL, EXIT_TERMINATED = 130, 141, 70, 143
#: Longest error line a command prints: a backstop, since the values a message echoes are cut far earlier
#: (:func:`optnoise.engine.validation.shown`).
MAX_MESSAGE = 1000


_T = TypeVar("_T")


#: Arguments that are values even though they start with "-": numbers, number lists and ranges
#: ("-1", "-1,2,3", "-0.5:1:3", "-1/2"), "-inf" and "-nan"; optnoise has no option that looks like one.
_NEGATIVE_VALUE = re.compile(r"^-(?:[0-9.]|inf|nan)", re.IGNORECASE)


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help, with the default of every flag whose help does not state it already."""

    @staticmethod
    def states_default(action: argparse.Action) -> bool:
        """Whether the help of ``action`` must state its default (a flag's, unless it is none, off or empty)."""
        unset = action.default in (None, False, argparse.SUPPRESS) or action.default == []
        return bool(action.option_strings) and not unset

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if not self.states_default(action) or "default" in text:
            return action.help
        return f"{text} (default %(default)s)"


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit code 2, negative number lists are values, and the help
    states every default."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)
        # argparse only treats "-1" or "-.5" as values; "--cost -1,2,3" would be read as an unknown option
        self._negative_number_matcher = _NEGATIVE_VALUE

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        # argparse prints no help line for a flag without help; one with a default still gets one, to state it
        if not action.help and action.option_strings and HelpFormatter.states_default(action):
            action.help = "default %(default)s"
        return action

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        # argparse's own message echoes the whole value; this one cuts it like every other message
        if action.choices is not None and value not in action.choices:
            allowed = ", ".join(repr(c) for c in action.choices)
            raise argparse.ArgumentError(action, f"invalid choice: {shown(value)} (choose from {allowed})")

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {clip(' '.join(message.split()), MAX_MESSAGE)}\n")


def parsed_arg(parse: Callable[[str, str], _T], name: str) -> Callable[[str], _T]:
    """An argparse type that parses strictly with ``parse`` (ASCII digits; a one-line error naming ``name``)."""

    def conv(text: str) -> _T:
        try:
            return parse(name, text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return conv


def float_arg(name: str) -> Callable[[str], float]:
    """A real number (``nan``/``inf`` parse, so that the range check names them)."""
    return parsed_arg(parse_float, name)


def int_arg(name: str) -> Callable[[str], int]:
    """An integer in decimal, parsed exactly."""
    return parsed_arg(parse_int, name)


def highs_option_arg(text: str) -> tuple[str, object]:
    """``NAME=VALUE``: ``true``/``false``, an ASCII integer or number, else the text itself."""
    name, sep, raw = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"highs-option must look like NAME=VALUE; got {shown(text)}")
    low = raw.strip().lower()
    if low in ("true", "false"):
        return name.strip(), low == "true"
    for parse in (parse_int, parse_float):
        try:
            return name.strip(), parse("highs-option", raw)
        except ValueError:
            pass
    return name.strip(), raw.strip()


def add_solver_args(p: argparse.ArgumentParser) -> None:
    """The backend flags shared by every solving command."""
    p.add_argument(
        "--solver",
        default="auto",
        choices=SOLVERS,
        help="LP/MILP backend (default auto: HiGHS raced against SCIP on hard MILPs; highs is deterministic)",
    )
    p.add_argument(
        "--time-limit", default=None, type=float_arg("time-limit"), help="seconds per solve (default: no limit)"
    )
    p.add_argument(
        "--mip-gap",
        default=MIP_REL_GAP,
        type=float_arg("mip-gap"),
        help=f"relative MILP gap counted as optimal (default {MIP_REL_GAP:g}; solvers' usual 1e-4)",
    )
    p.add_argument(
        "--highs-option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        type=highs_option_arg,
        help="raw HiGHS option, repeatable (e.g. mip_allow_restart=false)",
    )


def add_exit_args(p: argparse.ArgumentParser, *, sweep: bool = False) -> None:
    """``--require-optimal``: exit 5 for a result that is re-verified but not proven optimal."""
    what = "any row is not 'optimal'" if sweep else "the result is 'feasible' (re-verified, not proven optimal)"
    p.add_argument(
        "--require-optimal",
        action="store_true",
        help=f"exit {EXIT_FEASIBLE} when {what}; by default a re-verified guarantee exits {EXIT_OK}, "
        "whether 'optimal' or 'feasible'",
    )


def _field_type(field: BudgetField, grid: bool) -> Callable[[str], Any]:
    """How ``--NAME`` of a budget field is read: numbers strictly; grids, pairs and lists as text (parsed later)."""
    if grid or not field.grid:
        return str
    return int_arg(field.name) if field.kind == "int" else float_arg(field.name)


def add_budget_args(p: argparse.ArgumentParser, *, grid: bool = False) -> None:
    """One flag ``--NAME`` per field of every registered notion (:func:`~optnoise.privacy.notions.budget_fields`)."""
    for field in budget_fields():
        note = (" (grid)" if field.grid else " (one value for every point)") if grid else ""
        p.add_argument(
            f"--{field.name}",
            default=None,
            type=_field_type(field, grid),
            help=f"--privacy {field.notion}: {field.help}{note}",
        )


def add_release_field_args(p: argparse.ArgumentParser) -> None:
    """One grid flag ``--NAME`` per field of every sweepable release (its
    :attr:`~optnoise.design.releases.Release.fields`)."""
    owners: dict[str, list[str]] = {}
    for rel in map(get_release, release_names()):
        for name in rel.fields if rel.sweepable else ():
            owners.setdefault(name, []).append(rel.name)
    for name, rels in owners.items():
        kind = "integers" if any(name in get_release(r).integer_fields for r in rels) else "numbers"
        p.add_argument(
            f"--{name}",
            default=None,
            help=f"--release {' or '.join(rels)}: the design's {name} (grid of {kind}: 1 or 1,2 or 1:4:4)",
        )


def add_problem_args(p: argparse.ArgumentParser, *, grid: bool = False) -> None:
    num = str if grid else float_arg
    p.add_argument(
        "--n",
        default=None,
        type=str if grid else int_arg("n"),
        help="answers lie in {0..n}"
        + (" (grid: 8 or 8,16 or 8:64:3)" if grid else "")
        + "; required, but none with --release additive",
    )
    p.add_argument(
        "--eps",
        default=None,
        type=num("eps") if not grid else str,
        help=f"privacy level > 0, required unless --privacy is one of {', '.join(_budget_notions())} (which take "
        "their own budget) or with --minimize epsilon" + (" (grid: 0.1:3:30 or 0.5,1)" if grid else ""),
    )
    p.add_argument(
        "--delta",
        default=None,
        type=num("delta") if not grid else str,
        help="privacy slack in [0,1] (default 0: pure eps-DP)" + (" (grid)" if grid else ""),
    )
    if not grid:  # the grid release (a real query): its sensitivity fixes the neighbourhood
        p.add_argument(
            "--sensitivity", default=None, type=float_arg("sensitivity"), help="--release grid or continuous: Delta"
        )
        p.add_argument(
            "--resolution", default=None, type=float_arg("resolution"), help="--release grid or continuous: w = Delta/m"
        )
    p.add_argument(
        "--neighborhood",
        "--neighbourhood",
        action="append" if grid else "store",
        help="sd:MU, bd:MUBAR, shifts:1,3,5 or vector shifts:1/2,3/5 (with --dim)"
        + (" (repeatable; required unless the release's sensitivity fixes it)" if grid else ""),
    )
    p.add_argument(
        "--directed",
        action="store_true",
        help="use the shifts exactly as given (the paper's SD/BD sets); default adds -mu",
    )
    p.add_argument(
        "--dim", type=int_arg("dim"), default=None, help="query dimension for vector shifts (default: the shifts')"
    )
    p.add_argument(
        "--metric",
        default="er",
        help=f"one of {', '.join(METRICS)}"
        + (" (comma list)" if grid else "; --release grid: mse, mae, abs^p, exceed:t"),
    )
    if not grid:
        p.add_argument(
            "--cost",
            default=None,
            help="custom cost per noise value: a file (.json/.npy/.txt) or a comma list (default: --metric's)",
        )
    p.add_argument(
        "--privacy",
        default=None,
        help=f"one of {', '.join(notion_names())}"
        + (" (comma list)" if grid else "")
        + "; default "
        + ", ".join(f"{r.default_privacy} (--release {r.name})" for r in map(get_release, release_names())),
    )
    add_budget_args(p, grid=grid)
    p.add_argument(
        "--release",
        default="modulo",
        choices=release_names(),
        help="; ".join(f"{r.name}: {r.summary}" for r in map(get_release, release_names())),
    )
    p.add_argument(
        "--minimize",
        default="distortion",
        choices=CLI_OBJECTIVES,
        help="minimise the distortion (default), or delta (or, with --privacy composed, the composed epsilon) "
        "under --max-distortion",
    )
    p.add_argument(
        "--max-distortion",
        default=None,
        type=num("max-distortion") if not grid else str,
        help="distortion cap for --minimize delta or epsilon (required there)",
    )
    add_solver_args(p)


#: Every built-in value of ``--privacy`` (the flag takes every registered notion, :func:`notion_names`).
CLI_NOTIONS = DESIGN_NOTIONS


def _budget_notions() -> tuple[str, ...]:
    return tuple(k for k, v in NOTION_REGISTRY.items() if not v.takes_eps)


#: Every value of ``--minimize``.
CLI_OBJECTIVES = ("distortion", "delta", "epsilon")


def parse_pairs(text: str | None, name: str) -> list[tuple[float, float]] | None:
    """``"A:B,C:D"`` as ``[(A, B), (C, D)]`` (``--rdp``, ``--profile``); ``None`` when not given."""
    if text is None:
        return None
    out = []
    for item in str(text).split(","):
        parts = item.split(":")
        if len(parts) != 2:
            raise ValueError(f"{name} must be a comma list of X:Y pairs (e.g. 2:0.5,8:1); got {shown(item)}")
        out.append((parse_float(name, parts[0]), parse_float(name, parts[1])))
    return out


def parse_field(field: BudgetField, text: Any) -> Any:
    """A budget field's pairs (``X:Y,X:Y``) or list of reals (``A,B,C``) from its flag's text; numbers as given."""
    if text is None or field.grid:
        return text
    if field.kind == "pairs":
        return parse_pairs(text, field.name)
    items = str(text).split(",")
    if any(not t.strip() for t in items):
        raise ValueError(f"{field.name} list has an empty item: {shown(text)}")
    return [float(v) for v in parse_numbers(items, field.name, str(text))]


def budget_args(a: argparse.Namespace) -> dict[str, Any]:
    """The budget fields (:data:`~optnoise.privacy.fields.BUDGET_FIELDS`) whose flags were given."""
    kw = {f.name: parse_field(f, getattr(a, f.name, None)) for f in budget_fields()}
    return {k: v for k, v in kw.items() if v is not None}


def add_sweep_args(p: argparse.ArgumentParser) -> None:
    """How a sweep runs and where its rows go."""
    p.add_argument(
        "--jobs",
        type=int_arg("jobs"),
        default=1,
        help=f"parallel worker processes: 1..{JOBS_PER_CORE} per core (at most one per point; default 1)",
    )
    p.add_argument("--backend", default="process", choices=("process", "dask"), help="parallel backend")
    p.add_argument("--scheduler", default=None, help="Dask scheduler address (with --backend dask)")
    p.add_argument(
        "--connect-timeout",
        type=float_arg("connect-timeout"),
        default=CONNECT_TIMEOUT,
        help=f"seconds to wait for the Dask scheduler (default {CONNECT_TIMEOUT:g})",
    )
    p.add_argument("--cache", default=".optnoise-cache", help="per-point result cache (resumes sweeps)")
    p.add_argument("--no-cache", action="store_true", help="disable the cache")
    p.add_argument("--out", default="-", help="output file (default: stdout)")
    p.add_argument("--format", default="csv", choices=("csv", "json"))
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def parse_numbers(tokens: list[str], name: str, text: str) -> np.ndarray:
    try:
        return np.array([parse_float(name, v) for v in tokens], dtype=float)
    except ValueError:
        raise ValueError(f"{name} must hold numbers written in ASCII; could not parse {shown(text)}") from None


def load_array(text: str, name: str) -> np.ndarray:
    """Numbers from a file (.npy, JSON list or solve output, whitespace/comma text) or an inline comma list."""
    path = Path(text)
    try:
        exists = path.exists()
    except OSError:  # e.g. a long inline list is no valid file name (ENAMETOOLONG)
        exists = False
    if not exists:
        if path.suffix in (".json", ".npy", ".txt", ".csv") or os.sep in text:
            raise ValueError(f"{name} file not found: {shown(text)}")
        items = text.split(",")
        if any(not t.strip() for t in items):
            raise ValueError(f"{name} list has an empty item: {shown(text)}")
        return parse_numbers(items, name, text)
    if path.is_dir():
        raise ValueError(f"{name} {shown(text)} is a directory, not a file")
    if path.suffix == ".npy":
        blob = read_bytes(path, f"{name} file")  # regular files of bounded size only (optnoise.engine.io)
        try:
            return real_array(name, np.load(io.BytesIO(blob), allow_pickle=False))
        except (OSError, ValueError, EOFError) as exc:
            raise ValueError(f"{name} could not be read from {shown(text)}: {exc.__class__.__name__}") from None
    raw = read_text(path, f"{name} file")
    if raw.lstrip()[:1] in ("[", "{") or raw.strip() in ("true", "false", "null"):
        data = read_json(path, f"{name} file")
        if isinstance(data, dict):
            if "pmf" not in data:
                raise ValueError(f"{name} file {shown(text)} is a JSON object without a 'pmf' key")
            data = data["pmf"]
        if not isinstance(data, list):
            raise ValueError(f"{name} file {shown(text)} must hold a JSON list of numbers; got {type(data).__name__}")
        return real_array(name, data)
    tokens = raw.replace(",", " ").split()
    if not tokens:
        raise ValueError(f"{name} file {shown(text)} holds no numbers")
    return parse_numbers(tokens, name, text)


def solver_args(a: argparse.Namespace) -> dict[str, Any]:
    """The solve flags, validated before any work (so a bad option fails in one line, not after a solve)."""
    options, time_limit, mip_gap, _ = check_solve_args(
        a.solver, formulation="hull", options=dict(a.highs_option) or None, time_limit=a.time_limit, mip_gap=a.mip_gap
    )
    return {"solver": a.solver, "time_limit": time_limit, "mip_gap": mip_gap, "options": options}


def format_pmf(pmf: np.ndarray) -> str:
    return np.array2string(pmf, precision=6, suppress_small=True, max_line_width=100)


def print_status(res: Any, extra: str = "") -> None:
    """The table's status line of a design or mechanism result, and the reason when it is not plainly optimal."""
    gap = f"   gap {res.gap:.3g}" if res.gap else ""
    print(f"status      {res.status}{gap}   time {res.solve_time:.3f}s{extra}   model {res.model_size}")
    if res.status == UNVERIFIED or (res.status != "optimal" and res.message):
        print(f"reason      {' '.join(res.message.split())}")


def exit_for(status: str, require_optimal: bool = True) -> int:
    """The exit code of a command that printed one result with ``status`` (module docstring of optnoise.cli).

    A ``feasible`` result meets its guarantee (re-verified) without a proof of optimality: it
    exits 0 unless ``require_optimal`` (``--require-optimal``; the default here, for the
    commands that refuse such a result, e.g. ``certify`` without ``--allow-suboptimal``).
    """
    if status == "optimal":
        return EXIT_OK
    if status == "feasible":
        return EXIT_FEASIBLE if require_optimal else EXIT_OK
    return EXIT_UNVERIFIED if status == UNVERIFIED else EXIT_NOT_OPTIMAL


def write_rows(rows: list[dict[str, Any]], fmt: str, out: str, keys: Sequence[str] = ROW_KEYS) -> None:
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


def silence_stdout() -> None:
    """After a broken pipe, point stdout at the null device so the interpreter's final flush stays quiet."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):  # stdout replaced (tests) or already closed
        pass
