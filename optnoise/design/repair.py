"""Exact repair of a solver's solution: rounding, uniform mixing, margin re-solves, the pure-DP fallback.

A solver meets the privacy rows only up to its feasibility tolerance (~1e-9),
and rounding a PMF to integers over ``D = 2**bits`` can break rows that are
tight at the optimum. :func:`exact_repair` finds integer weights whose exact
check (:func:`optnoise.privacy.exact.exact_pair_delta`) meets a target delta,
each candidate re-checked exactly:

a. *mix in uniform noise*: ``w = B + c`` with ``B`` the exact
   largest-remainder rounding of the solution to total ``D - c C``, i.e. the
   mixture ``(1-lam) p + lam * uniform`` of every row with ``lam = c C / D``.
   The uniform distribution has delta 0 for every eps under all notions, and
   ``h(o) - e^eps h'(o)`` decreases by ``lam (e^eps - 1) / C`` for every pair,
   so a pair that is non-leaking stays so and tight pairs become strictly
   non-leaking; the DP hockey stick is convex in ``lam`` and 0 at ``lam = 1``,
   so it decreases monotonically. The smallest ``c`` that certifies is found
   by doubling then bisection.
b. *re-solve with a margin* when (a) costs more loss than the budget (the PDP
   leak budget or a tight (13g) row that mixing cannot fix): for "dp" the
   design is re-solved (an LP) at ``delta - tau``; for "pdp" and "pdp-kadam"
   the LP with the solver's leak pattern fixed is solved with an absolute
   margin ``tau`` on each leak budget and, for pdp-kadam, on every (13g) row
   (:func:`_margin_solution`). Then (a) again. Margins escalate through
   :data:`MARGINS`; those that do not fit below a small delta are replaced by
   fractions of it (:data:`MARGIN_FRACTIONS`), so tiny deltas get margins too.
   At delta = 0 (pure eps-DP), when (a) does not certify, a noise PMF is first lifted to
   its *envelope* (:func:`pure_envelope`): the smallest PMF above it, up to normalisation,
   whose every ratio ``f(eta) / f(eta+mu)`` is at most ``e^eps``. A solver meets the ratio
   rows only to an absolute 1e-9, so the tail of a long staircase (masses down to 1e-30 at
   n = 600) comes back as zeros or noise; the envelope restores it exactly, at a distortion
   cost of the order of those tail masses, and then (a) adds the few units of uniform mass
   that make the integer rounding strict.
c. *fall back to pure eps-DP* when delta > 0 and nothing above certifies: the
   delta = 0 design has delta 0 under every notion, so it meets any target; it
   is solved, repaired by (a)-(b), and accepted if its loss is within budget.

Both users share it: the solve sequence (:mod:`optnoise.design.settle`)
repairs an ``"unverified"`` solution within :data:`optnoise.design.settle.REPAIR_RTOL`,
and :func:`optnoise.deploy.certify.certify_result` certifies a result exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from optnoise.design.layout import PairLayout
from optnoise.design.rows import ROW_SCALE_FLOOR
from optnoise.engine.model import ModelBuilder
from optnoise.engine.solve import solve_model
from optnoise.engine.tolerance import FEASIBILITY_TOL
from optnoise.privacy.exact import check_bounds, round_to_total
from optnoise.privacy.verification import DELTA_RTOL

__all__ = [
    "DEFAULT_BITS",
    "MAX_LOSS",
    "MARGINS",
    "MARGIN_FRACTIONS",
    "Repaired",
    "RepairFailed",
    "exact_repair",
    "pure_envelope",
    "solution_of",
]

#: Default denominator ``2**62``: rounding error ~2e-19, and every table fits in int64.
DEFAULT_BITS = 62
#: Default bound on the repair's loss increase, relative to ``max(1, |solver loss|)``.
MAX_LOSS = 1e-6
#: Margins tried, in order, when a re-solve is needed (step b).
MARGINS = (1e-9, 1e-8, 1e-7, 1e-6)
#: Margins as fractions of a delta too small for some of :data:`MARGINS` (step b).
MARGIN_FRACTIONS = (1e-6, 1e-4, 1e-2, 1e-1)
#: Relative slack when reading the solver's leak pattern (step b).
PATTERN_RTOL = 1e-9
#: Solver masses below this are solver noise and are set to 0 before rounding.
ZERO_TOL = 1e-15


@dataclass
class _Attempt:
    weights: np.ndarray | None
    delta: Fraction | float
    mix_units: int
    source: str
    margin: float | None
    note: str = ""


class _Certifier:
    """State shared by the repair steps of one :func:`exact_repair` call."""

    def __init__(self, layout: PairLayout, target: Fraction, bits: int) -> None:
        self.layout = layout
        self.target = target
        self.bits = bits
        self.D = 1 << bits
        self.C = layout.cols
        self.bounds: tuple[Fraction, Fraction] = (Fraction(0), Fraction(0))

    def weights_for(self, p: np.ndarray, c: int) -> np.ndarray:
        """``B + c`` where ``B`` rounds each row of ``p`` to total ``D - c C``.

        That is the mixture of every row with ``lam = cC/D`` of the uniform
        distribution on its outputs.
        """
        rows = p.reshape(self.layout.rows, self.C)
        return np.concatenate([round_to_total(row, self.D - c * self.C) for row in rows]) + c

    def delta_of(self, w: np.ndarray) -> Fraction | float:
        return self.layout.check(w, self.D, self.bounds)

    def loss_of(self, w: np.ndarray, base: float) -> float:
        return self.layout.loss_of(np.asarray(w, dtype=float) / self.D) - base

    def mix(self, p: np.ndarray, base: float, budget: float, source: str, margin: float | None) -> _Attempt:
        """Smallest uniform mixing (in units c) that certifies, searched by doubling then bisection.

        Stops once the mixing alone would cost more than ``budget`` loss.
        """
        w = self.weights_for(p, 0)
        dl = self.delta_of(w)
        if dl <= self.target:
            return _Attempt(w, dl, 0, source, margin)
        cmax = self.D // self.C
        # each unit of c moves mass C/D of every row to the uniform row: loss ~ c C (uniform loss - base) / D
        uniform = np.full(self.layout.size, 1.0 / self.C)
        slope = self.C * (self.layout.loss_of(uniform) - base) / self.D
        c_budget = cmax if (budget == math.inf or slope <= 0) else int(min(cmax, 2 * budget / slope + 1))
        lo, c = 0, 1
        while True:
            c = min(c, cmax)
            w = self.weights_for(p, c)
            dl = self.delta_of(w)
            if dl <= self.target:
                break
            lo = c
            if c >= cmax or c >= c_budget:
                return _Attempt(
                    None,
                    dl,
                    c,
                    source,
                    margin,
                    note=f"mixing up to weight {c * self.C / self.D:.3g} did not certify within the loss budget",
                )
            c *= 2
        hi, best = c, (w, dl)
        while hi - lo > max(1, hi // 32):  # bisection to within ~3% of the smallest certifying c
            mid = (lo + hi) // 2
            wm = self.weights_for(p, mid)
            dm = self.delta_of(wm)
            if dm <= self.target:
                hi, best = mid, (wm, dm)
            else:
                lo = mid
        return _Attempt(best[0], best[1], hi, source, margin)


def prepare(p: np.ndarray) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=float).ravel(), 0.0, None)
    p[p < ZERO_TOL] = 0.0
    return p


def _margin_solution(
    layout: PairLayout, eps: float, p: np.ndarray, target: float, tau: float, lam: float, solver: str
) -> np.ndarray | None:
    """Re-solve with a margin ``tau`` (repair step b); flat probabilities, or ``None`` without an optimum.

    dp: the design's own LP at ``delta = target - tau`` (``layout.resolve``).
    pure, pdp and pdp-kadam: first ``lam`` of uniform is mixed into every row
    of the solver's solution, so that no mass sits below the solver's
    absolute tolerance (a solver may leave masses of ~1e-10 that leak only
    within its tolerance). The leak pattern of that solution is read with a
    relative test (``P(o) > e^eps Q(o) (1 + PATTERN_RTOL)``, so a positive
    mass before a zero leaks) and fixed, which leaves an LP with *relative*
    margins on the ratio rows and an absolute margin on the leak budgets:

    * pdp: ``P(o) <= (1-tau) e^eps Q(o)`` for every non-leaking entry of
      every pair, and ``sum_{o leaking} P(o) <= target - tau`` per pair;
    * pdp-kadam (noise PMFs): with ``U`` the values leaking for some shift,
      ``f(eta) <= (1-tau) e^eps f(eta+mu)`` for eta not in U and (13g)
      ``f(eta) >= (1+tau) e^eps f(eta+mu)`` for eta in U, every mu, and
      ``sum_U f <= target - tau``.

    The objective is the design's loss (an epigraph variable when it is the
    maximum of several loss rows). Columns are scaled by the reference
    masses (``p = s x``) and each ratio row by its largest coefficient, so
    the LP's absolute feasibility tolerance acts relatively on ``p`` and the
    relative margins survive at every scale. Every feasible point is feasible
    for the design's notion at ``target - tau`` (pdp-kadam with ``u = 1_U``);
    the exact check decides in any case.
    """
    pure = target == 0.0
    shared = layout.shared
    if not layout.indicators and not pure:
        sol = layout.resolve(target - tau, solver)
        return None if sol is None else layout.embed(sol)
    R, C, N = layout.rows, layout.cols, layout.size
    first, second = layout.first, layout.second
    K = first.shape[0]
    E = float(np.exp(eps))
    rows_p = p.reshape(R, C)
    rows_p = (1.0 - lam) * rows_p / rows_p.sum(axis=1, keepdims=True) + lam / C
    p = rows_p.ravel()
    U = p[first] > E * (1.0 + PATTERN_RTOL) * p[second]  # (K, C) leak pattern
    if pure:
        U = np.zeros((K, C), dtype=bool)
    if shared:
        U = np.broadcast_to(U.any(axis=0), (K, C))
    scale = np.where(p > 0, p, 1.0)
    mb = ModelBuilder()
    x = mb.add_vars(N, lb=0.0, ub=1.0 / scale, name="x")
    mb.add_rows(np.repeat(np.arange(R), C), x, scale, lower=1.0, upper=1.0)
    loss = layout.loss * scale[None, :]
    if loss.shape[0] == 1:
        mb.set_objective(x, loss[0])
    else:  # min z with every loss row <= z
        z = mb.add_vars(1, lb=-np.inf, ub=np.inf, name="z")
        r, c = np.nonzero(loss)
        mb.add_rows(
            np.concatenate([r, np.arange(loss.shape[0])]),
            np.concatenate([x[c], np.full(loss.shape[0], z[0])]),
            np.concatenate([loss[r, c], -np.ones(loss.shape[0])]),
            upper=0.0,
        )
        mb.set_objective(z, [1.0])
    # ratio rows sign * (p(a) - factor p(b)) <= 0: non-leaking entries always; (13g) for pdp-kadam's U
    rows = np.ones((K, C), dtype=bool) if shared else ~U
    ks, cs = np.nonzero(rows)
    a, b = first[ks, cs], second[ks, cs]
    g13 = U[ks, cs] if shared else np.zeros(a.size, dtype=bool)
    sign = np.where(g13, -1.0, 1.0)
    ca, cb = scale[a], np.where(g13, (1.0 + tau) * E, (1.0 - tau) * E) * scale[b]
    top = np.maximum(ca, cb)
    r = np.arange(a.size)
    mb.add_rows(
        np.repeat(r, 2),
        np.stack([x[a], x[b]], 1).ravel(),
        np.stack([sign * ca / top, -sign * cb / top], 1).ravel(),
        upper=0.0,
    )
    budget_sets = U[:1] if shared else U
    for m in range(budget_sets.shape[0]):
        if budget_sets[m].any():
            cols = first[m][budget_sets[m]]
            # written relative to the target when the solver's absolute tolerance would be a large part of it
            rel = 1.0 / max(target, ROW_SCALE_FLOOR) if target > 0 and FEASIBILITY_TOL > DELTA_RTOL * target else 1.0
            mb.add_row(x[cols], scale[cols] * rel, upper=(target - tau) * rel)
    out = solve_model(mb.build(), solver=solver)
    if out.status != "optimal" or out.x is None:
        return None
    return np.clip(out.x[x] * scale, 0.0, None)


def solution_of(result: Any) -> np.ndarray | None:
    """The float solution a result holds: a mechanism's ``matrix`` or a noise design's ``pmf``."""
    matrix = getattr(result, "matrix", None)
    return matrix if matrix is not None else getattr(result, "pmf", None)


def _margin_plan(margins: tuple[float, ...], target: float) -> list[float]:
    """The absolute margins to try below ``target``.

    Margins at least half the target cannot leave a useful budget; when some
    of ``margins`` are dropped for that reason, fractions of the target
    (:data:`MARGIN_FRACTIONS`) take their place, so a delta of 1e-12 is
    re-solved with margins of 1e-18 .. 1e-13 instead of none.
    """
    if target == 0:
        return list(margins)
    kept = [t for t in margins if t < target / 2]
    if len(kept) == len(margins):
        return kept
    extra = [target * r for r in MARGIN_FRACTIONS if target * r not in kept]
    return sorted(set(kept + extra))


@dataclass
class Repaired:
    """Exact weights that certify a target, and how they were obtained.

    Attributes
    ----------
    weights : ndarray of object (Python int)
        Flat weights; every row of the layout sums to ``2**bits``.
    delta : Fraction
        Their exact certified delta (``<= target``).
    method : str
        ``"none"``, ``"mix-uniform"``, ``"pure-envelope[+mix-uniform]"``,
        ``"margin-resolve[+mix-uniform]"`` or ``"pure-fallback[+margin-resolve][+mix-uniform]"``.
    mix_units, mix_weight, margin
        The uniform mixture (units of ``1/D`` per output, and ``lam``) and the margin used.
    loss : float
        The design's loss of the weights (as floats).
    attempts : int
        Candidates checked.
    """

    weights: np.ndarray
    delta: Fraction
    method: str
    mix_units: int
    mix_weight: float
    margin: float | None
    loss: float
    attempts: int


class RepairFailed(ValueError):
    """No candidate certifies the target within the loss budget (the message says what was tried)."""


def pure_envelope(layout: PairLayout, p: np.ndarray, eps: float) -> np.ndarray | None:
    """The smallest ``g >= p`` (up to normalisation) with ``g[first] <= e^eps g[second]`` for every pair.

    In log space the rows read ``v[second] >= v[first] - eps``: a longest-path fixpoint,
    reached by relaxing every row until nothing moves (at most the length of the longest
    chain of tight rows; a few hundred sweeps at n = 10^4). The result satisfies every
    pure-DP ratio exactly up to float rounding (~1e-15 relative). Only one-row (noise PMF)
    layouts: rows of a matrix are normalised separately, which would move their ratios.
    ``None`` when ``p`` has no mass or the layout is a matrix.
    """
    if layout.rows != 1 or not np.any(p > 0):
        return None
    a, b = layout.first.ravel(), layout.second.ravel()
    with np.errstate(divide="ignore"):
        v = np.log(np.asarray(p, dtype=float).ravel())
    v -= v.max()
    for _ in range(layout.size + 1):
        lifted = np.full_like(v, -np.inf)
        np.maximum.at(lifted, b, v[a] - eps)
        new = np.maximum(v, lifted)
        if np.array_equal(new, v):
            break
        v = new
    g = np.exp(v)
    return g / g.sum()


def exact_repair(
    design: Any,
    p: np.ndarray,
    *,
    base: float,
    target: float,
    bits: int = DEFAULT_BITS,
    max_loss: float = MAX_LOSS,
    margins: tuple[float, ...] = MARGINS,
    solver: str = "highs",
) -> Repaired:
    """Exact weights for the flat solution ``p`` of ``design`` whose exact delta is at most ``target``.

    Steps (a)-(c) of the module docstring, the first candidate whose loss is within
    ``max_loss * max(1, |base|)`` of ``base`` (the solver's own loss) wins.

    Parameters
    ----------
    design
        A design with ``pair_layout()``, ``eps``, ``objective`` and ``replace()``.
    p : ndarray
        The solution, flat in the layout's order (``layout.embed`` of it), prepared by :func:`prepare`.
    base, target, bits, max_loss, margins, solver
        The reference loss, the delta to certify at ``design.eps``, ``log2`` of the denominator,
        the loss budget (relative), the re-solve margins and the re-solve backend.

    Raises
    ------
    RepairFailed
        No candidate certifies within the budget.
    """
    layout = design.pair_layout()
    cert = _Certifier(layout, Fraction(target), bits)
    cert.bounds = check_bounds(design.eps)
    budget = max_loss * max(1.0, abs(base))
    attempts: list[_Attempt] = []

    def accept(att: _Attempt) -> bool:
        attempts.append(att)
        return att.weights is not None and cert.loss_of(att.weights, base) <= budget

    def repaired(p0: np.ndarray, target: float, source: str) -> _Attempt | None:
        """Steps (a) then (b) on ``p0`` at ``target``: the first candidate within the loss budget."""
        att = cert.mix(p0, base, budget, source, None)
        if accept(att):
            return att
        if target == 0 and layout.rows == 1:
            lifted = pure_envelope(layout, p0, design.eps)
            if lifted is not None:
                # no prepare() here: the envelope's tail masses (down to 1e-300) are what makes its ratios exact
                att = cert.mix(lifted, base, budget, "pure-envelope" if source == "solver" else source, None)
                if accept(att):
                    return att
        # escalate: margin tau, first without, then with a pre-mix lam = tau (not for dp)
        lp_path = layout.indicators or target == 0
        plan = [(tau, lam) for tau in _margin_plan(margins, target) for lam in ((0.0, tau) if lp_path else (0.0,))]
        for tau, lam in plan:
            q = _margin_solution(layout, design.eps, p0, target, tau, lam, solver)
            if q is None:
                attempts.append(_Attempt(None, math.inf, 0, f"{source}+margin", tau, note="re-solve not optimal"))
                continue
            q = prepare(q)
            if target == 0 and layout.rows == 1:
                # the scaled re-solve meets each ratio to a relative 1e-9; the envelope makes it exact
                q = pure_envelope(layout, q, design.eps)
                if q is None:
                    continue
            att = cert.mix(q, base, budget, "margin-resolve" if source == "solver" else source, tau)
            if accept(att):
                return att
        return None

    chosen = repaired(p, target, "solver")
    if chosen is None and target > 0 and design.objective != "delta":
        # (c) the pure eps-DP design has delta 0 under every notion: it meets any target
        pure = design.replace(delta=0.0).solve(solver=solver)
        pure_sol = solution_of(pure)
        if pure.status in ("optimal", "unverified") and pure_sol is not None:
            chosen = repaired(prepare(layout.embed(pure_sol)), 0.0, "pure-fallback")
        else:
            attempts.append(_Attempt(None, math.inf, 0, "pure-fallback", None, note=f"status {pure.status}"))
    if chosen is None or chosen.weights is None or not isinstance(chosen.delta, Fraction):
        losses = [cert.loss_of(a.weights, base) for a in attempts if a.weights is not None]
        best = f"smallest certifying loss {min(losses):.3g}" if losses else "no candidate certified"
        raise RepairFailed(f"tried rounding, uniform mixing and {len(attempts) - 1} margin re-solve(s): {best}")
    if chosen.mix_units == 0 and chosen.source == "solver":
        method = "none"
    elif chosen.source == "solver":
        method = "mix-uniform"
    else:
        method = f"{chosen.source}+mix-uniform" if chosen.mix_units else chosen.source
        if chosen.source == "pure-fallback" and chosen.margin is not None:
            method = method.replace("pure-fallback", "pure-fallback+margin-resolve")
    return Repaired(
        weights=chosen.weights,
        delta=chosen.delta,
        method=method,
        mix_units=int(chosen.mix_units),
        mix_weight=chosen.mix_units * cert.C / cert.D,
        margin=chosen.margin,
        loss=layout.loss_of(np.asarray(chosen.weights, dtype=float) / cert.D),
        attempts=len(attempts),
    )
