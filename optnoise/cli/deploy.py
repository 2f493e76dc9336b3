"""``optnoise certify`` and ``optnoise release``: exact certificates and exact draws."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import Any

import numpy as np

from optnoise.cli.args import EXIT_CLAIM_FAILED, EXIT_OK, add_problem_args, exit_for, float_arg, int_arg, solver_args
from optnoise.cli.solve import design_from_args
from optnoise.deploy.certified import load_design
from optnoise.deploy.certify import CertificationError
from optnoise.deploy.grid import MAX_GRID_ANSWER
from optnoise.design.noise import NoiseDesign
from optnoise.design.releases import LatticeRelease, get_release
from optnoise.design.repair import DEFAULT_BITS, MAX_LOSS
from optnoise.design.result import DesignResult
from optnoise.engine.io import read_json
from optnoise.engine.tolerance import MIP_REL_GAP
from optnoise.engine.validation import (
    check_int,
    check_output_path,
    check_pmf,
    check_positive,
    parse_int,
    shown,
)
from optnoise.privacy.fields import BUDGET_FIELD_NAMES
from optnoise.privacy.neighborhood import Neighborhood
from optnoise.privacy.notions import budget_fields, get_notion
from optnoise.privacy.verification import UNVERIFIED

__all__ = [
    "add_certify_cli",
    "result_from_file",
    "cmd_certify",
    "refuse_same_file",
    "parse_values",
    "format_value",
    "cmd_release",
    "MAX_RELEASES",
    "RELEASE_CHUNK",
]

#: Largest number of releases (``--count`` x answers) one ``optnoise release`` draws. Draws are streamed
#: (:data:`RELEASE_CHUNK` at a time), so memory does not depend on it; the cap bounds the output
#: (10^8 lines of text, about a gigabyte) and the time (a few minutes).
MAX_RELEASES = 10**8
#: Releases drawn and written at a time: memory stays at a few megabytes whatever ``--count`` is.
RELEASE_CHUNK = 1 << 16


def add_certify_cli(sub: Any) -> None:
    """Add the ``certify`` and ``release`` sub-commands to the ``optnoise`` parser."""
    p = sub.add_parser(
        "certify",
        help="certify a solved design exactly and write a deployable design file",
        description="Certify either a result file of `optnoise solve --format json --out FILE` (--result FILE) "
        "or a problem given by the solve flags (solved first). Exit 1 when the requested "
        "(eps, delta) cannot be certified, 3 when the solve is not optimal.",
    )
    p.add_argument("--result", default=None, help="JSON result of `optnoise solve --format json --out FILE`")
    add_problem_args(p)
    for action in p._actions:  # the problem flags are required only without --result
        if action.dest in ("n", "eps", "neighborhood"):  # (--neighborhood is optional for --release grid)
            action.required = False
    p.add_argument("--out", default=None, help="write the certified design (JSON) to this file")
    p.add_argument(
        "--bits",
        type=int_arg("bits"),
        default=DEFAULT_BITS,
        help=f"denominator 2^bits (16..62, default {DEFAULT_BITS})",
    )
    p.add_argument(
        "--max-loss",
        type=float_arg("max-loss"),
        default=MAX_LOSS,
        help=f"largest relative distortion loss from repair (default {MAX_LOSS:g})",
    )
    p.add_argument(
        "--allow-suboptimal",
        action="store_true",
        help="certify the solution of a feasible or time-limited result (it meets the guarantee, optimality "
        "is not proven); composed designs (feasible for k >= 2) are certified without it",
    )
    p.add_argument("--format", default="table", choices=("table", "json"), help="output format")
    p.set_defaults(handler=cmd_certify)

    p = sub.add_parser(
        "release",
        help="release noisy answers from a certified design file",
        description="Adds exact noise from a certified design to the answer(s). Default randomness "
        "is the OS CSPRNG; --seed is for reproducible experiments only.",
    )
    p.add_argument("--design", required=True, help="certified design file (from `optnoise certify --out`)")
    p.add_argument(
        "--value",
        "--answer",
        required=True,
        help="true answer(s) in {0..n}: 3, a comma list 3,5, or vectors 1/2 or 1/2,3/4 (any 64-bit integers for an "
        "additive design)",
    )
    p.add_argument(
        "--count",
        type=int_arg("count"),
        default=1,
        help=f"independent releases of each value (default 1; count x values at most {MAX_RELEASES:.0e}, streamed)",
    )
    p.add_argument(
        "--seed", type=int_arg("seed"), default=None, help="seed a numpy Generator (reproducible; NOT for deployment)"
    )
    p.add_argument("--format", default="text", choices=("text", "json"), help="output format")
    p.set_defaults(handler=cmd_release)


#: Fields of a result file that state a budget besides (eps, delta), of the built-in notions (a file is read
#: with those of every registered notion, :func:`optnoise.privacy.notions.budget_fields`).
RESULT_BUDGET_FIELDS = BUDGET_FIELD_NAMES


def result_from_file(path: str) -> DesignResult:
    """A :class:`DesignResult` from `optnoise solve --format json` output (re-verified on load).

    Parsed strictly, each refusal naming the field: ``n`` and every shift are
    JSON integers (``8.0`` is refused, as by the Python API), ``directed`` is a
    JSON boolean (``0``, ``null`` or ``"false"`` are refused, not read as a
    truth value), and the stored shift set must be the one that ``directed``
    and ``n`` give (a symmetric result lists both signs of every shift).
    """
    data = read_json(path, "result file")
    if not isinstance(data, dict):
        raise ValueError(f"result file {shown(path)} must be a JSON object from `optnoise solve --format json`")
    if not get_release(data.get("release", "modulo")).deployable:
        spec = data.get("design")
        _refuse_continuous(spec.get("sensitivity") if isinstance(spec, dict) else None, data.get("resolution"))
    if not isinstance(get_release(data.get("release", "modulo")), LatticeRelease):
        return _additive_from_file(path, data)
    missing = [k for k in ("n", "metric", "privacy", "shifts", "directed", "pmf") if k not in data]
    if missing:
        raise ValueError(
            f"result file {shown(path)} lacks the field {shown(missing[0])} of `optnoise solve --format json`"
        )
    if data["metric"] == "custom":
        raise ValueError(
            "result file has a custom cost array, which solve JSON does not store; "
            "certify from the problem flags with --cost instead"
        )
    n = check_int("result file field 'n'", data["n"], minimum=1)
    directed = data["directed"]
    if not isinstance(directed, bool):  # 0, null and "false" are not read as a truth value
        raise ValueError(f"result file field 'directed' must be a JSON boolean, true or false; got {shown(directed)}")
    pmf = data["pmf"]
    if pmf is not None:
        pmf = check_pmf("result file field 'pmf'", pmf, atol=1e-6)
    dim = 1 if pmf is None else pmf.ndim
    release = data.get("release", "modulo")
    shifts = data["shifts"]
    if not isinstance(shifts, list) or not shifts:
        raise ValueError("result file field 'shifts' must be a non-empty list")
    # the JSON holds the resolved shift set: use it exactly, with its direction
    try:
        nb = Neighborhood.shifts([_json_shift(s) for s in shifts], directed=directed)
    except ValueError as exc:
        raise ValueError(f"result file field 'shifts': {exc}") from None
    objective = data.get("objective", "distortion")
    privacy = data["privacy"]
    # the budget a result states besides (eps, delta): profile/rdp/zcdp budgets and the composed target
    kw: dict[str, Any] = {f.name: data[f.name] for f in budget_fields() if data.get(f.name) is not None}
    if get_notion(privacy).takes_eps:
        if objective != "epsilon":
            kw["eps"] = data["eps"]
        if objective == "distortion":
            kw["delta"] = data.get("delta")
        else:
            kw["max_distortion"] = data.get("max_distortion")
            if objective == "epsilon":
                kw["delta"] = data.get("delta")
    design = NoiseDesign(
        n=n,
        neighborhood=nb,
        metric=data["metric"],
        privacy=privacy,
        objective=objective,
        shape=get_release(release).spec_shape({"shape": (n + 1,) * dim}) if pmf is not None else None,
        release=release,
        **kw,
    )
    if sorted(map(str, design.shift_list())) != sorted(map(str, shifts)):
        raise ValueError(
            f"result file field 'shifts' {shown(shifts)} is not the shift set of a "
            f"{'directed' if directed else 'symmetric'} neighbourhood at n = {n} ({shown(design.shift_list())}); "
            "the file was edited or 'directed' does not belong to it"
        )
    return DesignResult.from_dict(data, design=design)


def _refuse_continuous(sensitivity: Any, resolution: Any) -> None:
    """Refuse to certify a continuous design, naming the deployable grid release (``ContinuousResult.certify``)."""
    sens = f" --sensitivity {sensitivity!r}" if isinstance(sensitivity, float | int) else " --sensitivity DELTA"
    res = f" --resolution {resolution!r}" if isinstance(resolution, float | int) else " --resolution W"
    raise ValueError(
        "release: a continuous design cannot be certified (a real density has no exact sampler in floating "
        f"point); certify the grid release at the same resolution: optnoise certify --release grid{sens}{res} "
        "with the same budget and metric"
    )


def _additive_from_file(path: str, data: dict[str, Any]) -> Any:
    """An :class:`~optnoise.design.additive_eval.AdditiveResult` from `optnoise solve --release additive
    --format json` output: its ``problem`` rebuilt (re-validated), the PMF re-verified and the bound
    re-derived by a fresh solve at its support (:meth:`AdditiveResult.from_dict`); nothing stored is trusted."""
    problem, release = data.get("problem"), data["release"]
    if not isinstance(problem, dict) or problem.get("release") != release:
        raise ValueError(
            f"result file {shown(path)} lacks the field 'problem' (the {release} design's spec) of "
            f"`optnoise solve --release {release} --format json`"
        )
    try:
        design = NoiseDesign.from_spec(problem)
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"result file field 'problem': {' '.join(str(exc).split())}") from None
    result_class = get_release(release).result_class  # the release's own result format (additive, grid)
    if result_class is None:
        raise ValueError(f"result file field 'release': {shown(release)} results are not read back from a file")
    return result_class.from_dict(data, design=design)


def _json_shift(s: Any) -> Any:
    """One shift of a result file: an integer, or a list of integers (a vector shift) as a tuple."""
    return tuple(s) if isinstance(s, list) else s


def refuse_same_file(in_name: str, in_path: Any, out_name: str, out_path: Any) -> None:
    """Refuse an output path that is the input file (after links and relative paths), before any work.

    Writing the output would replace the input it is made from (``certify --result r.json --out r.json``).
    """
    if in_path is None or out_path is None:
        return
    same = os.path.realpath(in_path) == os.path.realpath(out_path)
    if not same and os.path.exists(in_path) and os.path.exists(out_path):
        try:
            same = os.path.samefile(in_path, out_path)  # hard links
        except OSError:
            same = False
    if same:
        raise ValueError(
            f"{out_name} {shown(str(out_path))} is the {in_name} file {shown(str(in_path))}: writing it would "
            f"overwrite the input; give another --{out_name} path"
        )


def cmd_certify(a: argparse.Namespace) -> int:
    refuse_same_file("result", a.result, "out", a.out)
    out_path = None if a.out is None else check_output_path("out", a.out)
    bits = check_int("bits", a.bits, minimum=16, maximum=62)
    # inf accepts any repair (documented in certify_result); NaN and negative values are refused
    max_loss = math.inf if a.max_loss == math.inf else check_positive("max_loss", a.max_loss, allow_zero=True)
    solve_kw = solver_args(a)  # validated even with --result, where they would be silently unused
    flags = [k for k in ("n", "eps", "neighborhood", "sensitivity", "resolution") if getattr(a, k, None) is not None]
    rel = get_release(getattr(a, "release", None) or "modulo")
    needed = rel.required
    if not rel.deployable:  # before solving: it could not be certified anyway
        _refuse_continuous(a.sensitivity, a.resolution)
    if a.result is not None:
        if flags:
            raise ValueError(f"result: give either --result FILE or the problem flags, not both (got --{flags[0]})")
        if solve_kw["options"] or solve_kw["time_limit"] is not None or solve_kw["mip_gap"] != MIP_REL_GAP:
            raise ValueError(
                "highs-option, time-limit and mip-gap apply when certify solves the problem from its flags, "
                "not with --result (the result is already solved)"
            )
        res = result_from_file(a.result)
    else:
        missing = [k for k in needed if getattr(a, k) is None]
        if missing:
            raise ValueError(
                f"certify needs --result FILE or the problem flags {', '.join('--' + k for k in needed)} "
                f"(missing --{missing[0]})"
            )
        res = design_from_args(a).solve(**solve_kw)
    composed = getattr(getattr(res.design, "notion", None), "composed", False)
    unproven = res.status in ("feasible", "time_limit")
    suboptimal = (res.status == "feasible" and composed) or (a.allow_suboptimal and unproven)
    if res.status != "optimal" and not suboptimal:
        why = f": {' '.join(res.message.split())}" if res.status == UNVERIFIED else ""
        hint = "; pass --allow-suboptimal to certify its solution" if unproven else ""
        print(
            f"optnoise certify: error: cannot certify a result with status {res.status!r}{why}{hint}", file=sys.stderr
        )
        return exit_for(res.status)
    try:
        # res.certify routes composed designs through their own check (single release + composition)
        kw = {} if composed else {"allow_suboptimal": suboptimal}
        cd = res.certify(bits=bits, max_loss=max_loss, solver=a.solver, **kw)
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


def parse_values(text: str, dim: int, n: int | None) -> np.ndarray:
    """Answers ``3``, ``3,5`` or vectors ``1/2,3/4``: ASCII integers in ``{0..n}``, compared exactly.

    ``n=None`` (an additive design: ``q + eta`` on all integers) takes any integer whose release
    stays within 64 bits (``|q| <= 2**62``).
    """
    if n is None:
        return _integer_values(text)
    items = [t.strip() for t in text.split(",")]
    if not text.strip() or any(not t for t in items):
        raise ValueError(f"value must be answers in {{0..{n}}} such as 3 or 1/2 (comma-separated); got {shown(text)}")
    if len(items) > 10**6:
        raise ValueError("value lists more than 10^6 answers")
    try:
        rows = [[parse_int("value", v) for v in it.split("/")] for it in items]
    except ValueError:
        raise ValueError(f"value must be integers in {{0..{n}}} (vectors as a/b); got {shown(text)}") from None
    if any(len(r) != dim for r in rows):
        raise ValueError(f"value must have {dim} coordinate(s) per answer (a/b for vectors); got {shown(text)}")
    if any(not 0 <= v <= n for r in rows for v in r):
        raise ValueError(f"q must be integers in [0, n] = [0, {n}]; got {shown(text)}")
    return np.array(rows, dtype=np.int64).reshape(len(rows), dim)


#: Largest |answer| of an additive release: ``q + eta`` must stay a 64-bit integer (the noise's
#: tail mass beyond 2**62 is far below anything a CSPRNG draws).
MAX_ADDITIVE_ANSWER = 2**62


def _integer_values(text: str) -> np.ndarray:
    """Answers of an additive design: ASCII integers (a leading minus allowed), comma-separated."""
    items = [t.strip() for t in text.split(",")]
    if not text.strip() or any(not t for t in items):
        raise ValueError(f"value must be integer answers such as 5000 or 3,-2 (comma-separated); got {shown(text)}")
    if len(items) > 10**6:
        raise ValueError("value lists more than 10^6 answers")
    try:
        rows = [parse_int("value", t) for t in items]
    except ValueError:
        raise ValueError(f"value must be integers (an additive design: any integer); got {shown(text)}") from None
    if any(abs(v) > MAX_ADDITIVE_ANSWER for v in rows):
        raise ValueError(
            f"value must be integers with |q| <= 2**62 (the release is a 64-bit integer); got {shown(text)}"
        )
    return np.array(rows, dtype=np.int64).reshape(len(rows), 1)


def real_values(text: str) -> np.ndarray:
    """Answers of a grid design: finite decimal numbers, comma-separated (rounded to the grid exactly)."""
    items = [t.strip() for t in text.split(",")]
    if not text.strip() or any(not t for t in items) or len(items) > 10**6:
        raise ValueError(f"value must be real answers such as 3.7 or 1.5,-2 (comma-separated); got {shown(text)}")
    try:
        rows = [float(t) for t in items]
    except ValueError:
        raise ValueError(f"value must be real numbers (a grid design); got {shown(text)}") from None
    if not all(math.isfinite(v) and abs(v) <= MAX_GRID_ANSWER for v in rows):
        raise ValueError(f"value must be finite with |q| <= {MAX_GRID_ANSWER:g}; got {shown(text)}")
    return np.array(rows, dtype=float).reshape(len(rows), 1)


def format_value(v: Any) -> str:
    """A released value: an integer as such; a mechanism's non-integer output value in full."""
    f = float(v)
    return str(int(f)) if f.is_integer() else repr(f)


def cmd_release(a: argparse.Namespace) -> int:
    count = check_int("count", a.count, minimum=1, maximum=MAX_RELEASES)
    seed = None if a.seed is None else check_int("seed", a.seed, minimum=0, maximum=2**128)
    cd = load_design(a.design)
    rel = getattr(cd.design, "release", None)
    reals = isinstance(rel, str) and get_release(rel).real_answers  # a mechanism design has no release
    vals = real_values(a.value) if reals else parse_values(a.value, cd.design.dim, getattr(cd, "n", None))
    if count * len(vals) > MAX_RELEASES:
        raise ValueError(f"count x values = {count * len(vals)} releases exceeds the limit {MAX_RELEASES} (10^8)")
    rng = None if seed is None else np.random.default_rng(seed)
    dim = cd.design.dim
    # draws are made and written RELEASE_CHUNK at a time, so memory does not grow with --count; a seeded
    # stream gives the same values whatever the chunking (each answer takes the next draw of the Generator)
    rows_per_chunk = max(1, RELEASE_CHUNK // len(vals))
    out = sys.stdout
    if a.format == "json":
        head = json.dumps({"design": str(a.design), "seeded": seed is not None})
        out.write(head[:-1] + ', "released": [')
    first = True
    for start in range(0, count, rows_per_chunk):
        rows = min(rows_per_chunk, count - start)
        q = np.broadcast_to(vals[None, :, :], (rows, *vals.shape))  # (rows, values, d): no copy per release
        drawn = np.asarray(cd.release(q[..., 0] if dim == 1 else q, rng=rng))
        if a.format == "json":
            text = json.dumps(drawn.tolist())[1:-1]
            out.write(text if first else ", " + text)
        else:
            out.write(_release_lines(drawn.reshape(rows, len(vals), dim)) + "\n")
        first = False
    if a.format == "json":
        out.write("]}\n")
    return EXIT_OK


def _release_lines(drawn: np.ndarray) -> str:
    """Text lines of released answers, shape ``(rows, values, d)``: values comma-separated, coordinates a/b."""
    fmt = str if drawn.dtype.kind in "iu" else format_value  # integers print as such, fast
    if drawn.shape[1:] == (1, 1):  # one scalar answer per line (the common case, ten times faster)
        return "\n".join(map(fmt, drawn.ravel().tolist()))
    if drawn.shape[2] == 1:  # scalar answers: no "/" level
        return "\n".join(",".join(map(fmt, row)) for row in drawn[:, :, 0].tolist())
    return "\n".join(",".join("/".join(map(fmt, ans)) for ans in row) for row in drawn.tolist())
