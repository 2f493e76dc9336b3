"""``optnoise compose``: the k-fold composed guarantee of a solved or certified design.

::

    optnoise compose --result res.json --compositions 10 --delta 1e-6   # composed eps at delta
    optnoise compose --result design.json --compositions 10 --eps 2     # composed delta at eps

``--result`` is the JSON of ``optnoise solve --format json`` or a certified design file
(``optnoise certify``, or ``optnoise mechanism --certify``). The composition is the adaptive one, from
the release's PLD (:meth:`optnoise.design.result.Accountable.compose`): dp-accounting's
pessimistic PLD of a dominating pair over every protected neighbouring pair, so the printed
value is an upper bound accurate to about ``k * discretization``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings
from typing import Any

from optnoise.cli.args import EXIT_OK, float_arg, int_arg
from optnoise.cli.deploy import result_from_file
from optnoise.deploy.certified import load_design
from optnoise.deploy.files import FORMAT
from optnoise.engine.io import read_json
from optnoise.engine.validation import check_delta, check_eps
from optnoise.privacy.accounting import (
    DISCRETIZATION,
    MAX_DISCRETIZATION,
    MIN_DISCRETIZATION,
    InfiniteLossWarning,
    check_compositions,
    check_discretization,
)

__all__ = ["add_compose_cli", "cmd_compose", "load_accountable"]


def add_compose_cli(sub: Any) -> None:
    p = sub.add_parser("compose", help="the k-fold composed (eps, delta) of a solved or certified design")
    p.add_argument("--result", required=True, help="solve/mechanism --format json output, or a certified design file")
    p.add_argument("--compositions", required=True, type=int_arg("compositions"), help="number of releases k")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--delta", type=float_arg("delta"), help="print the composed eps at this delta")
    what.add_argument("--eps", type=float_arg("eps"), help="print the composed delta at this eps (>= 0)")
    p.add_argument(
        "--discretization",
        type=float_arg("discretization"),
        default=DISCRETIZATION,
        help=f"PLD loss grid, in [{MIN_DISCRETIZATION:g}, {MAX_DISCRETIZATION:g}] (default {DISCRETIZATION:g})",
    )
    p.add_argument("--format", default="table", choices=("table", "json"))
    p.set_defaults(handler=cmd_compose)


def load_accountable(path: str) -> Any:
    """The result or certified design a file holds, as an object with ``compose(k)``."""
    data = read_json(path, "result file")
    if isinstance(data, dict) and data.get("format") == FORMAT:
        return load_design(path)  # re-proves the certificate
    if isinstance(data, dict) and "matrix" in data and "pmf" not in data:
        raise ValueError(
            "result: a mechanism's JSON does not state its problem fully; certify it "
            "(`optnoise mechanism ... --certify design.json`) and compose the design file"
        )
    return result_from_file(path)


def cmd_compose(a: argparse.Namespace) -> int:
    k = check_compositions(a.compositions, "compositions")
    h = check_discretization(a.discretization)
    delta = None if a.delta is None else check_delta(a.delta)  # flags first, then the file
    eps = None if a.eps is None else check_eps(a.eps, allow_zero=True)
    res = load_accountable(a.result)
    if getattr(res, "status", "optimal") in ("infeasible", "error", "unbounded"):
        raise ValueError(f"result file holds no solution (status {res.status!r})")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", InfiniteLossWarning)
        comp = res.compose(k, discretization=h)
    for w in caught:  # one line, not a Python warning with its source line
        if issubclass(w.category, InfiniteLossWarning):
            print(f"optnoise compose: note: {w.message}", file=sys.stderr)
    if delta is not None:
        value = comp.epsilon(delta)
        key, given = "epsilon", {"delta": delta}
    else:
        assert eps is not None  # argparse requires one of --delta and --eps
        value = float(comp.delta(eps))
        key, given = "delta", {"eps": eps}
    if a.format == "json":
        doc = {"compositions": k, **given, key: None if math.isinf(value) else value, "discretization": h}
        print(json.dumps(doc, indent=2))
    else:
        shown = "inf (mass of infinite privacy loss)" if math.isinf(value) else f"{value:.10g}"
        fixed = ", ".join(f"{name}={v:g}" for name, v in given.items())
        print(f"{k}-fold composition ({fixed}): {key} = {shown}")
    return EXIT_OK
