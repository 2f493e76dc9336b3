"""Privacy constraints between pairs of output distributions, as rows of a :class:`~optnoise.engine.model.ModelBuilder`.

Every design in optnoise constrains pairs of probability masses: the noise
design of Kadam et al. (2024) compares ``f(eta)`` with ``f(eta + mu)`` for
every shift mu, a general mechanism compares ``P[x, y]`` with ``P[x', y]``
for every ordered neighbour pair ``(x, x')``, and clamped additive noise
compares affine images of the noise PMF. All of them are written here once,
on *entries*: entry ``i`` is the pair of model columns ``(first[i],
second[i])`` standing for ``p(o)`` and ``q(o)`` of one output ``o`` of one
ordered pair ``(P, Q)``, and ``group[i]`` names the pair, whose leakage is
budgeted as a whole.

Notions (``E = e^eps``):

``"pure"``
    ``p - E q <= 0`` for every entry: pure eps-DP (Kadam et al. (14c)).
``"dp"``
    ``p - E q - s <= 0`` with ``s >= 0`` and ``sum_{i in group} s_i <= delta``:
    the hockey stick ``sum_o [p(o) - E q(o)]_+ <= delta`` of Definition 1.
``"pdp"``
    Definition 2 per group: the mass ``p(o)`` of every output with
    ``p(o) > E q(o)`` counts against ``delta``; a MILP with one indicator per
    entry (``formulation="hull"``, the convex hull of each indicator's
    disjunction) or the big-M rows (13c)-(13h) (``formulation="bigm"``).
    ``shared`` maps entries to indicators shared between entries, which with
    ``"bigm"`` gives the published MILP (13) (``"pdp-kadam"``: one
    indicator per noise value for all shifts).

The budget is either a number (``delta``) or a model column ``t`` that the
objective minimises (``objective="delta"`` designs, Kadam et al. (15)). A
budget below ``1e-3`` is written relative to delta, so that the solver's
absolute tolerance acts relatively (the rule of :mod:`optnoise.privacy.verification`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from optnoise.engine.model import ModelBuilder
from optnoise.engine.tolerance import FEASIBILITY_TOL
from optnoise.engine.validation import check_choice, shown
from optnoise.privacy.verification import DELTA_RTOL

__all__ = ["PAIR_NOTIONS", "add_pair_rows", "hockey_sums"]

#: Smallest delta a budget row is scaled by: coefficients stay below 1e12, which solvers handle.
ROW_SCALE_FLOOR = 1e-12
#: What :func:`add_pair_rows` can impose on a set of entries.
PAIR_NOTIONS = ("pure", "dp", "pdp")


def hockey_sums(term: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Per group, the sum of its entries' positive ``term`` (``p - E q``): its hockey stick over the entries given."""
    return np.bincount(group, weights=np.maximum(term, 0.0), minlength=int(group.max(initial=-1)) + 1)


def _budget_rows(mb: ModelBuilder, cols: np.ndarray, group: np.ndarray, delta: float | None, t: int | None) -> None:
    """``sum_{i in g} cols[i] <= delta`` (or ``<= t``) for every group ``g`` present, in group order."""
    order = np.argsort(group, kind="stable")
    cols, group = cols[order], group[order]
    _, local = np.unique(group, return_inverse=True)
    G = int(local.max()) + 1 if local.size else 0
    if t is None:
        d = float(delta or 0.0)
        if 0.0 < d and FEASIBILITY_TOL > DELTA_RTOL * d:
            # A solver meets a row to an absolute tolerance (1e-9), which at a small delta would be a large
            # relative excess of the budget; written as sum / delta <= 1 it acts relatively on delta. Below
            # ROW_SCALE_FLOOR the coefficient would be too large for the solver; re-verification and the
            # exact repair then take over.
            scale = max(d, ROW_SCALE_FLOOR)
            mb.add_rows(local, cols, 1.0 / scale, upper=d / scale)
        else:
            mb.add_rows(local, cols, 1.0, upper=delta)
    else:
        rows = np.concatenate([local, np.arange(G)])
        allcols = np.concatenate([cols, np.full(G, t, dtype=np.int64)])
        vals = np.concatenate([np.ones(cols.size), -np.ones(G)])
        mb.add_rows(rows, allcols, vals, upper=0.0)


def add_pair_rows(
    mb: ModelBuilder,
    first: np.ndarray,
    second: np.ndarray,
    group: np.ndarray,
    *,
    eps: float,
    notion: str,
    delta: float | None = None,
    t: int | None = None,
    formulation: str = "hull",
    shared: np.ndarray | None = None,
) -> None:
    """Add the rows of ``notion`` over the entries ``(first[i], second[i])`` (see the module docstring).

    Parameters
    ----------
    mb : ModelBuilder
        Receives new variables (blocks ``s``, or ``y`` and ``u``) and rows.
    first, second : ndarray of int
        Model columns of ``p(o)`` and ``q(o)``, one entry per (pair, output).
    group : ndarray of int
        The pair of every entry; one budget row per group (sorted by group).
    eps : float
        Privacy level.
    notion : {"pure", "dp", "pdp"}
    delta : float, optional
        The budget; give either ``delta`` or ``t`` (``"pure"`` takes neither).
    t : int, optional
        Model column of a minimised delta.
    formulation : {"hull", "bigm"}
        The ``"pdp"`` MILP form.
    shared : ndarray of int, optional
        ``"pdp"`` with ``"bigm"`` only: the indicator of every entry. Entries
        mapped to one indicator must have the same ``first`` column; the
        indicator's budget group is that of its first entry.
    """
    check_choice("notion", notion, PAIR_NOTIONS)
    check_choice("formulation", formulation, ("hull", "bigm"))
    first = np.asarray(first, dtype=np.int64).ravel()
    second = np.asarray(second, dtype=np.int64).ravel()
    group = np.asarray(group, dtype=np.int64).ravel()
    if not first.shape == second.shape == group.shape:
        raise ValueError("first, second and group must have one entry each per (pair, output)")
    _PAIR_ROWS[notion](mb, first, second, group, float(np.exp(eps)), delta, t, formulation, shared)


def _one_budget(notion: str, delta: float | None, t: int | None) -> None:
    if (delta is None) == (t is None):
        raise ValueError(f"notion {shown(notion)} needs exactly one of delta and t")


def _pure_pair_rows(
    mb: ModelBuilder, first: np.ndarray, second: np.ndarray, group: np.ndarray, E: float, *_: Any
) -> None:
    """Pure eps-DP: ``p(o) <= e^eps q(o)`` for every entry (no budget)."""
    M = first.size
    mb.add_rows(np.repeat(np.arange(M), 2), np.stack([first, second], 1).ravel(), np.tile([1.0, -E], M), upper=0.0)


def _dp_pair_rows(
    mb: ModelBuilder,
    first: np.ndarray,
    second: np.ndarray,
    group: np.ndarray,
    E: float,
    delta: float | None,
    t: int | None,
    *_: Any,
) -> None:
    """(eps, delta)-DP: the excess ``s >= p(o) - e^eps q(o)`` of every entry, summed per group within the budget."""
    _one_budget("dp", delta, t)
    M = first.size
    s = mb.add_vars(M, lb=0.0, ub=1.0, name="s")
    rows = np.repeat(np.arange(M), 3)
    mb.add_rows(rows, np.stack([first, second, s], 1).ravel(), np.tile([1.0, -E, -1.0], M), upper=0.0)
    _budget_rows(mb, s, group, delta, t)


def _pdp_pair_rows(
    mb: ModelBuilder,
    first: np.ndarray,
    second: np.ndarray,
    group: np.ndarray,
    E: float,
    delta: float | None,
    t: int | None,
    formulation: str,
    shared: np.ndarray | None,
) -> None:
    """Definition 2: the leak indicators, as the hull or the big-M MILP."""
    _one_budget("pdp", delta, t)
    if formulation == "hull":
        if shared is not None:
            raise ValueError("shared indicators need formulation='bigm'")
        _hull_rows(mb, first, second, group, E, delta, t)
    else:
        _bigm_rows(mb, first, second, group, E, delta, t, shared)


def _hull_rows(
    mb: ModelBuilder,
    first: np.ndarray,
    second: np.ndarray,
    group: np.ndarray,
    E: float,
    delta: float | None,
    t: int | None,
) -> None:
    """Definition 2 with one indicator per entry.

    ``y`` is the mass of an entry counted as leaking: ``u = 0`` forces
    ``p <= E q`` and ``y = 0``; ``u = 1`` forces ``y >= p``. Rows per entry:

    (a) ``p - E q - y <= 0``
    (b) ``y - U u <= 0``           with ``U = min(1, delta)``: a leaking mass is at most delta
    (c) ``p - y + u <= 1``

    Dropping integrality gives exactly the DP hockey-stick LP, so the
    relaxation is as tight as the convex notion and ``dp <= pdp`` is
    visible in the model itself.
    """
    M = first.size
    y = mb.add_vars(M, lb=0.0, ub=1.0, name="y")
    u = mb.add_vars(M, lb=0, ub=1, integer=True, name="u")
    r = np.arange(M)
    mb.add_rows(np.repeat(r, 3), np.stack([first, second, y], 1).ravel(), np.tile([1.0, -E, -1.0], M), upper=0.0)
    U = 1.0 if delta is None else max(min(1.0, delta), 0.0)
    mb.add_rows(np.repeat(r, 2), np.stack([y, u], 1).ravel(), np.tile([1.0, -U], M), upper=0.0)
    mb.add_rows(np.repeat(r, 3), np.stack([first, y, u], 1).ravel(), np.tile([1.0, -1.0, 1.0], M), upper=1.0)
    _budget_rows(mb, y, group, delta, t)


def _bigm_rows(
    mb: ModelBuilder,
    first: np.ndarray,
    second: np.ndarray,
    group: np.ndarray,
    E: float,
    delta: float | None,
    t: int | None,
    shared: np.ndarray | None,
) -> None:
    """The published linearisation (13c)-(13h) of Kadam et al. (2024), per indicator.

    With ``shared`` mapping every shift's entry for noise value eta to one
    indicator this is the paper's MILP exactly as printed (``"pdp-kadam"``);
    without it each entry has its own indicator, the plain big-M form of
    Definition 2 (the benchmark baseline of the hull form).
    """
    M = first.size
    ind = np.arange(M) if shared is None else np.asarray(shared, dtype=np.int64).ravel()
    G = int(ind.max()) + 1
    lead = np.full(G, -1, dtype=np.int64)
    lead[ind[::-1]] = np.arange(M)[::-1]  # the first entry of every indicator
    if np.any(lead < 0):
        raise ValueError("shared must number the indicators 0..G-1 without gaps")
    fg = first[lead]
    y = mb.add_vars(G, lb=0.0, ub=1.0, name="y")
    u = mb.add_vars(G, lb=0, ub=1, integer=True, name="u")
    _budget_rows(mb, y, group[lead], delta, t)  # (13c) sum y <= delta
    r = np.arange(G)
    mb.add_rows(np.repeat(r, 2), np.stack([y, u], 1).ravel(), np.tile([1.0, -1.0], G), upper=0.0)  # (13c)
    mb.add_rows(np.repeat(r, 3), np.stack([u, fg, y], 1).ravel(), np.tile([1.0, 1.0, -1.0], G), upper=1.0)  # (13d)
    mb.add_rows(np.repeat(r, 3), np.stack([u, fg, y], 1).ravel(), np.tile([1.0, -1.0, 1.0], G), upper=1.0)  # (13e)
    rk = np.arange(M)
    uu = u[ind]
    # (13f): p - e^eps q - u <= 0
    mb.add_rows(np.repeat(rk, 3), np.stack([first, second, uu], 1).ravel(), np.tile([1.0, -E, -1.0], M), upper=0.0)
    # (13g): e^eps q - p + e^eps u <= e^eps
    mb.add_rows(np.repeat(rk, 3), np.stack([second, first, uu], 1).ravel(), np.tile([E, -1.0, E], M), upper=E)


#: The rows of each pair notion (:data:`PAIR_NOTIONS`).
_PAIR_ROWS: dict[str, Callable[..., None]] = {"pure": _pure_pair_rows, "dp": _dp_pair_rows, "pdp": _pdp_pair_rows}
