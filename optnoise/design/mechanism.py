"""Optimal mechanisms without wrap-around: the LP over the whole conditional matrix ``P[x, y]``.

A mechanism for a query with answers ``x in {0..n}`` is a row-stochastic
matrix ``P[x, y] = Pr(output y | input x)``. The best possible mechanism for
a loss ``L[x, y]`` under (eps, delta)-DP over a set of ordered neighbour
pairs ``(x, x')`` is the linear program

    minimise    sum_x prior(x) sum_y L[x, y] P[x, y]                   ("bayes")
                (or max_x sum_y L[x, y] P[x, y], via an epigraph row,    "minimax")
    subject to  sum_y P[x, y] = 1,  P >= 0,
                sum_y [P[x, y] - e^eps P[x', y]]_+ <= delta   for every ordered pair,

the hockey stick written with one slack per (pair, output)
(:mod:`optnoise.design.rows`); ``privacy="pdp"`` counts instead the mass of
every output with ``P[x, y] > e^eps P[x', y]`` (Definition 2 of Kadam et
al. 2024, one indicator per (pair, output): a MILP); ``objective="delta"``
minimises delta subject to a cap on the Bayes loss. :class:`MechanismDesign`
states the problem and :meth:`MechanismDesign.solve` solves it through
:mod:`optnoise.engine.solve`; the result's matrix is re-verified with
:func:`optnoise.privacy.curves.mechanism_delta`, certified exactly with
:func:`optnoise.deploy.certify.certify_result` and sampled exactly with
:meth:`optnoise.deploy.certified.CertifiedMechanism.release`.

Known optima, used as tests: for pure eps-DP count queries (adjacent
neighbours), the Bayesian optimum for any prior and any loss monotone in
``|y - x|`` is the truncated geometric mechanism followed by the user's
optimal deterministic remap (Ghosh, Roughgarden and Sundararajan 2009); the
minimax optimum is the geometric mechanism followed by an optimal randomized
remap (Gupte and Sundararajan 2010).

Lazy rows. The full LP has ``(#pairs) (m+1)`` privacy rows; for n = 500 and
adjacent neighbours that is half a million, which HiGHS' simplex does not
finish (or presolves into numerical trouble) within minutes. The optimum of
an (eps, delta) design puts almost no mass far from the cheap outputs, so
:meth:`MechanismDesign.solve` starts from the rows of the
``2 w0 + 1`` cheapest outputs of both inputs of every pair, with
``w0 = ceil(ln(1/delta) / eps) + 2`` (``1e-12`` in place of delta for pure
DP), solves, adds every missing row the solution violates (and its
neighbours), and repeats. Each restricted model is a relaxation of the full
one (rows and their slacks dropped), and the loop stops only when the
solution satisfies every row of the full model, so the result is the full
model's optimum. In a restricted model, an entry that appears in no row is
useful only as the cheapest such entry of its row, so the others are left
out. Small designs (the initial rows already cover half of all) solve the
full model at once, and so does the error rate: its flat loss spreads the
optimum over far outputs, so the lazy rounds cost more than the full model
by dual simplex (measured in ``benchmarks/RESULTS.md``).

Clamped additive noise (``NoiseDesign(..., release="clamp")``) is the same
LP with ``P`` tied to a noise PMF on ``{-n..n}``: :func:`clamp_model`.
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy.ndimage import binary_dilation

from optnoise.design.layout import PairLayout, matrix_layout
from optnoise.design.matrix import (
    add_matrix_rows,
    canonical_loss,
    loss_matrix,
    output_values,
    pair_count_bound,
    pair_rows_size,
    resolve_pairs,
    size_dict,
)
from optnoise.design.mechanism_result import MechanismResult
from optnoise.design.pipeline import cached_result
from optnoise.design.settle import IPM_ROWS, backend_solve, first_options, normalised_rows, repaired_result, settle
from optnoise.engine.cache import problem_key
from optnoise.engine.highs import write_mps
from optnoise.engine.model import LinearModel, ModelBuilder
from optnoise.engine.progress import time_left
from optnoise.engine.solve import check_solve_args
from optnoise.engine.tolerance import MIP_REL_GAP
from optnoise.engine.validation import (
    MAX_EPS,
    MAX_EPS_REASON,
    MAX_SIZE,
    check_choice,
    check_delta,
    check_eps,
    check_int,
    check_model_size,
    check_pmf,
    check_positive,
    shown,
)
from optnoise.privacy.neighborhood import Neighborhood
from optnoise.privacy.notions import get_notion
from optnoise.privacy.verification import delta_allowance

__all__ = ["MechanismDesign", "MECHANISM_OBJECTIVES", "MECHANISM_NOTIONS"]

#: What :class:`MechanismDesign` minimises.
MECHANISM_OBJECTIVES = ("bayes", "minimax", "delta")
#: Privacy notions of mechanism designs (pure eps-DP is ``delta = 0`` under either).
MECHANISM_NOTIONS = ("dp", "pdp")
#: A missing row is added when the solution violates it by more than this (absolute).
LAZY_TOL = 1e-12
#: Mass level below which a pure-DP design's tail is treated as zero when choosing the first rows.
PURE_DEPTH = 1e-12
#: Rounds of lazy rows before the full model is solved instead.
MAX_ROUNDS = 50


class MechanismDesign:
    """The optimal mechanism ``P[x, y]`` for inputs ``0..n`` over all (non-additive) mechanisms.

    Parameters
    ----------
    n : int
        Inputs (true answers) lie in ``{0..n}``.
    eps : float
        Privacy level, > 0.
    delta : float
        Privacy slack in [0, 1]; 0 (default) is pure eps-DP. Leave at 0 with
        ``objective="delta"`` (delta is what is minimised).
    neighbors : str, Neighborhood or list of pairs
        Which inputs are neighbours (:func:`resolve_pairs`): ``"adjacent"``
        (default), ``"adjacent:K"``, ``"sd:MU"``, ``"bd:MUBAR"``,
        ``"shifts:A,B"``, a :class:`~optnoise.privacy.neighborhood.Neighborhood`, or a
        list of pairs (symmetric unless ``directed=True``).
    outputs : int or array_like, optional
        An integer m (outputs ``0..m``; default ``m = n``) or the output values.
    loss : {"abs", "sq", "er", "mae", "mse"} or array_like
        ``|v_y - x|``, ``(v_y - x)^2``, ``1[v_y != x]``, or a matrix ``L[x, y]``
        of shape ``(n+1, m+1)``. ``"mae"`` and ``"mse"``, the names of noise designs'
        metrics, are ``"abs"`` and ``"sq"`` (:data:`~optnoise.design.matrix.LOSS_OF_METRIC`).
    objective : {"bayes", "minimax", "delta"}
        Expected loss under ``prior``; worst-input loss; or the smallest delta
        with Bayes loss at most ``max_loss``.
    prior : array_like, optional
        Distribution of the input (``"bayes"``, ``"delta"``); uniform by default.
    privacy : {"dp", "pdp"}
        (eps, delta)-DP per ordered pair (hockey stick, an LP) or
        (eps, delta)-PDP per ordered pair (Definition 2, a MILP).
    max_loss : float, optional
        The Bayes-loss cap of ``objective="delta"``: finite and >= 0 (as
        :class:`~optnoise.design.noise.NoiseDesign`'s ``max_distortion``).
    directed : bool
        Pair lists and shift specs are used as given (no reversed pairs).
    """

    def __init__(
        self,
        *,
        n: int,
        eps: float,
        delta: float = 0.0,
        neighbors: Any = "adjacent",
        outputs: Any = None,
        loss: Any = "abs",
        objective: str = "bayes",
        prior: Any = None,
        privacy: str = "dp",
        max_loss: float | None = None,
        directed: bool = False,
    ) -> None:
        self.n = check_int("n", n, minimum=1, maximum=MAX_SIZE)
        self.eps = check_eps(eps, maximum=MAX_EPS, why=MAX_EPS_REASON)
        self.delta = check_delta(delta)
        self.privacy = check_choice("privacy", privacy, MECHANISM_NOTIONS)
        self.objective = check_choice("objective", objective, MECHANISM_OBJECTIVES)
        if not isinstance(directed, (bool, np.bool_)):
            raise ValueError(f"directed must be True or False; got {shown(directed)}")
        self.directed = bool(directed)
        self.outputs = output_values(outputs, self.n)
        if (self.n + 1) * self.outputs.size > MAX_SIZE:
            raise ValueError(
                f"n and outputs are too large: the matrix has (n+1)(m+1) = {(self.n + 1) * self.outputs.size} "
                f"entries, more than the limit {MAX_SIZE}"
            )
        self.neighbors = neighbors
        # the model's size follows from the number of pairs: an oversized one is refused before they are listed
        bound = pair_count_bound(neighbors, self.n, self.directed)
        if bound is not None:
            check_model_size(self._full_size(bound), what=f"the {self.privacy!r} model of this design")
        self.pairs = resolve_pairs(neighbors, self.n, directed=self.directed)
        self.loss = canonical_loss(loss) if isinstance(loss, str) else "custom"
        self.loss_matrix = loss_matrix(loss, self.n, self.outputs)
        if prior is None:
            self.prior = None
        else:
            if self.objective == "minimax":
                raise ValueError("prior applies to objective 'bayes' or 'delta', not 'minimax'")
            p = check_pmf("prior", prior, atol=1e-9)
            if p.shape != (self.n + 1,):
                raise ValueError(f"prior must have n+1 = {self.n + 1} entries; got shape {p.shape}")
            self.prior = p
        if self.objective == "delta":
            if self.delta != 0.0:
                raise ValueError("delta must be left at 0 with objective='delta' (it is what is minimised)")
            if max_loss is None:
                raise ValueError("max_loss is required with objective='delta'")
            # a cap on an expected loss, validated like NoiseDesign's max_distortion: finite and >= 0
            self.max_loss: float | None = check_positive("max_loss", max_loss, allow_zero=True)
        else:
            if max_loss is not None:
                raise ValueError("max_loss applies only with objective='delta'")
            self.max_loss = None
        check_model_size(self.model_size(), what=f"the {self.privacy!r} model of this design")

    # ------------------------------------------------------------------ helpers
    @property
    def m(self) -> int:
        """Outputs are indexed ``0..m``."""
        return int(self.outputs.size - 1)

    @property
    def matrix_shape(self) -> tuple[int, int]:
        """Shape ``(n+1, m+1)`` of the matrix."""
        return (self.n + 1, self.outputs.size)

    @property
    def dim(self) -> int:
        """Inputs are scalars (for the CLI's release command)."""
        return 1

    @property
    def is_pure(self) -> bool:
        """Pure eps-DP: delta = 0 and delta is not what is minimised."""
        return self.objective != "delta" and self.delta == 0.0

    @property
    def weights(self) -> np.ndarray | None:
        """The input weights of the Bayes loss (the prior, uniform by default); ``None`` for minimax."""
        if self.objective == "minimax":
            return None
        return np.full(self.n + 1, 1.0 / (self.n + 1)) if self.prior is None else self.prior

    def loss_of(self, P: np.ndarray) -> float:
        """The design's loss of a matrix: Bayes expectation, or the worst input for ``"minimax"``."""
        per_x = (np.asarray(P, dtype=float) * self.loss_matrix).sum(axis=1)
        w = self.weights
        return float(per_x.max()) if w is None else float(per_x @ w)

    def _full_size(self, pairs: int, formulation: str = "hull") -> dict[str, int]:
        R, C = self.n + 1, self.outputs.size
        rows, cols, nnz = R, R * C, R * C  # P and its row sums
        if self.objective == "minimax":  # z and one epigraph row per input
            rows, cols, nnz = rows + R, cols + 1, nnz + R * C + R
        elif self.objective == "delta":  # t and the Bayes-loss cap
            rows, cols, nnz = rows + 1, cols + 1, nnz + R * C
        pr, pc, pn, pi = pair_rows_size(
            pairs, C, "pure" if self.is_pure else self.privacy, formulation, self.objective == "delta"
        )
        return size_dict(rows + pr, cols + pc, nnz + pn, pi)

    def model_size(self, formulation: str = "hull") -> dict[str, int]:
        """Rows, columns, integers and nonzeros of the full model (:meth:`build_model`), without building it.

        Exact (a test compares it with the built model). The constructor checks
        it against the limits of :mod:`optnoise.engine.validation`; the lazy solve's
        models are smaller.
        """
        check_choice("formulation", formulation, ("hull", "bigm"))
        return self._full_size(len(self.pairs), formulation)

    def describe_neighbors(self) -> str:
        """One line: the neighbour relation and its number of ordered pairs."""
        if isinstance(self.neighbors, str):
            label = self.neighbors
        elif isinstance(self.neighbors, Neighborhood):
            label = self.neighbors.describe()
        else:
            label = "pairs" + (", directed" if self.directed else ", symmetric")
        return f"{label}: {self.pairs.shape[0]} ordered pairs of inputs 0..{self.n}"

    def spec(self) -> dict[str, Any]:
        """The problem as plain data (JSON-ready)."""
        if isinstance(self.neighbors, str):
            nb: Any = self.neighbors
        elif isinstance(self.neighbors, Neighborhood):
            nb = {"neighborhood": self.neighbors.to_dict()}
        else:
            nb = self.pairs.tolist()
        default_out = self.outputs.dtype.kind == "i" and np.array_equal(self.outputs, np.arange(self.outputs.size))
        return {
            "kind": "mechanism",
            "n": self.n,
            "eps": self.eps,
            "delta": self.delta,
            "neighbors": nb,
            "directed": self.directed if not isinstance(nb, list) else True,
            "pairs": self.pairs.tolist(),
            "outputs": self.m if default_out else self.outputs.tolist(),
            "loss": self.loss,
            "loss_matrix": self.loss_matrix.tolist() if self.loss == "custom" else None,
            "objective": self.objective,
            "prior": None if self.prior is None else self.prior.tolist(),
            "privacy": self.privacy,
            "max_loss": self.max_loss,
        }

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> MechanismDesign:
        """Rebuild a design from :meth:`spec` output (fully re-validated; the stored pairs must match)."""
        if not isinstance(spec, dict):
            raise ValueError("spec must be a mapping (MechanismDesign.spec() output)")
        try:
            nb = spec["neighbors"]
            if isinstance(nb, dict):
                nb = Neighborhood.from_dict(nb["neighborhood"])
            loss = spec["loss"]
            if loss == "custom":
                if spec.get("loss_matrix") is None:
                    raise ValueError("spec has loss 'custom' but no 'loss_matrix'")
                loss = spec["loss_matrix"]
            design = cls(
                n=spec["n"],
                eps=spec["eps"],
                delta=spec.get("delta", 0.0),
                neighbors=nb,
                outputs=spec.get("outputs"),
                loss=loss,
                objective=spec.get("objective", "bayes"),
                prior=spec.get("prior"),
                privacy=spec.get("privacy", "dp"),
                max_loss=spec.get("max_loss"),
                directed=spec.get("directed", False),  # a boolean, checked by the constructor (not bool(...))
            )
        except KeyError as exc:
            raise ValueError(f"spec lacks the field {shown(exc.args[0])}") from None
        pairs = spec.get("pairs")
        if pairs is not None and sorted(map(tuple, pairs)) != sorted(map(tuple, design.pairs.tolist())):
            raise ValueError("spec 'pairs' do not match its neighbors")
        return design

    def replace(self, **changes: Any) -> MechanismDesign:
        """A copy with some :meth:`spec` fields changed (e.g. ``delta=``), re-validated."""
        return MechanismDesign.from_spec({**self.spec(), "pairs": None, **changes})

    def key(self, **solve_options: Any) -> str:
        """Stable hash of the problem and solve options (cache key)."""
        return problem_key(self.spec(), solve_options)

    def __repr__(self) -> str:
        d = f"delta={self.delta}" if self.objective != "delta" else f"max_loss={self.max_loss}"
        return (
            f"MechanismDesign(n={self.n}, eps={self.eps}, {d}, neighbors={self.describe_neighbors()!r}, "
            f"outputs={self.outputs.size}, loss={self.loss!r}, objective={self.objective!r}, privacy={self.privacy!r})"
        )

    # ------------------------------------------------------------------ model
    def initial_rows(self) -> np.ndarray | None:
        """The (pair, output) entries the lazy solve starts from, or ``None`` for the full model.

        Entry ``(k, y)`` of pair ``(x, x')`` is included when ``y`` is among the
        ``2 w0 + 1`` cheapest outputs of ``x`` or of ``x'`` (module docstring).
        """
        if self.loss == "er":
            # a flat loss spreads the optimum over far outputs: the lazy rounds (3 at n = 100 and 500)
            # cost more than the full model by dual simplex (0.85 s and 21 s against 4.2 s and 60 s,
            # benchmarks/RESULTS.md)
            return None
        depth = self.delta if self.objective != "delta" and self.delta > 0 else PURE_DEPTH
        w0 = int(math.ceil(math.log(1.0 / depth) / self.eps)) + 2
        if 2 * w0 + 1 >= self.outputs.size:
            return None
        near = self._rank() <= 2 * w0
        active = near[self.pairs[:, 0]] | near[self.pairs[:, 1]]
        return None if active.mean() > 0.5 else active

    def _rank(self) -> np.ndarray:
        """``rank[x, y]``: position of output y among x's outputs by loss, ties broken by ``|v_y - x|``.

        The tie-break keeps the lazy rows of a flat loss (the error rate) in a band around the diagonal.
        """
        dist = np.abs(np.asarray(self.outputs, dtype=float)[None, :] - np.arange(self.n + 1)[:, None])
        order = np.lexsort((dist, self.loss_matrix), axis=1)
        return np.argsort(order, axis=1, kind="stable")

    def _model(self, active: np.ndarray | None, formulation: str) -> tuple[LinearModel, np.ndarray]:
        """The model restricted to ``active`` entries, and the flat matrix index of each ``P`` column."""
        R, C = self.matrix_shape
        if active is None:
            used = np.ones((R, C), dtype=bool)
        else:
            used = np.zeros((R, C), dtype=bool)
            ks, ys = np.nonzero(active)
            used[self.pairs[ks, 0], ys] = True
            used[self.pairs[ks, 1], ys] = True
            # an entry in no privacy row is useful only as the cheapest such entry of its row
            free = np.where(used, R * C, self._rank())
            best = np.argmin(free, axis=1)
            has = free[np.arange(R), best] < R * C
            used[np.arange(R)[has], best[has]] = True
        entries = np.flatnonzero(used.ravel())
        mb = ModelBuilder()
        P = mb.add_vars(entries.size, lb=0.0, ub=1.0, name="P")
        flat = np.full(R * C, -1, dtype=np.int64)
        flat[entries] = P
        cols = flat.reshape(R, C)
        xs = entries // C
        mb.add_rows(xs, P, 1.0, lower=1.0, upper=1.0)  # rows of P sum to 1
        add_matrix_rows(
            mb,
            cols,
            self.loss_matrix,
            self.weights,
            self.pairs,
            active,
            eps=self.eps,
            privacy=self.privacy,
            delta=self.delta,
            objective=self.objective,
            max_loss=self.max_loss,
            formulation=formulation,
        )
        return mb.build(lp_algorithm=self._lp_algorithm(mb.num_rows, full=active is None)), entries

    def build_model(self, *, formulation: str = "hull", active: np.ndarray | None = None) -> LinearModel:
        """The LP/MILP as a solver-neutral sparse model.

        Variable blocks: ``P`` (the matrix entries kept, C order; all of them
        for the full model), ``z`` (minimax epigraph) or ``t`` (minimised
        delta), then ``s`` (DP excess) or ``y``/``u`` (PDP leak mass and
        indicators), one per (pair, output) entry of ``active`` (default: all,
        the full model).
        """
        check_choice("formulation", formulation, ("hull", "bigm"))
        if active is not None:
            active = np.asarray(active, dtype=bool)
            if active.shape != (self.pairs.shape[0], self.outputs.size):
                raise ValueError(f"active must have shape (pairs, m+1) = {(self.pairs.shape[0], self.outputs.size)}")
        return self._model(active, formulation)[0]

    def to_mps(self, path: str | os.PathLike) -> Path:
        """Write the full model as an MPS file, for any external solver."""
        return write_mps(self.build_model(), path)

    def pair_layout(self) -> PairLayout:
        """How :mod:`optnoise.deploy.certify` checks, repairs and samples this design's matrix."""
        R, C = self.matrix_shape
        L = self.loss_matrix
        w = self.weights
        if w is None:  # minimax: one loss row per input
            rows = np.zeros((R, R * C))
            rows[np.repeat(np.arange(R), C), np.arange(R * C)] = L.ravel()
        else:
            rows = (w[:, None] * L).reshape(1, R * C)

        def resolve(delta: float, solver: str) -> np.ndarray | None:
            objective = "bayes" if self.objective == "delta" else self.objective
            res = self.replace(objective=objective, delta=delta, max_loss=None).solve(solver=solver)
            return None if res.status != "optimal" else res.matrix

        return matrix_layout(self.pairs, self.outputs, rows, self.privacy, resolve)

    # ------------------------------------------------------------------ solve
    def solve(
        self,
        solver: str = "auto",
        time_limit: float | None = None,
        *,
        mip_gap: float = MIP_REL_GAP,
        verbose: bool = False,
        cache: str | os.PathLike | None = None,
        formulation: str = "hull",
        options: dict[str, Any] | None = None,
        concurrent: bool = True,
    ) -> MechanismResult:
        """Solve the design (lazy rows, see the module docstring) and re-verify the matrix.

        Parameters are those of :meth:`optnoise.NoiseDesign.solve`:
        ``solver``, ``time_limit`` (seconds over all rounds), ``mip_gap``,
        ``verbose``, ``cache`` (folder of results keyed by :meth:`key`; see
        :mod:`optnoise.engine.cache`), ``formulation`` (``"hull"`` or ``"bigm"`` for
        ``"pdp"``), raw HiGHS ``options`` and ``concurrent``. With
        ``solver="auto"`` (default) the LPs run on HiGHS (the algorithm chosen
        by size, see :data:`optnoise.design.settle.IPM_ROWS`) and the ``"pdp"`` MILPs race HiGHS
        against SCIP (:func:`optnoise.engine.solve.solve_model`); ``"highs"`` is
        deterministic.

        Notes
        -----
        Statuses mean what they say, as for :meth:`optnoise.NoiseDesign.solve`:
        a matrix that fails re-verification (:mod:`optnoise.privacy.verification`) is
        ``"unverified"``, never ``"optimal"``; for the loss objectives it is
        first replaced by its exact repair when that costs at most
        :data:`optnoise.design.settle.REPAIR_RTOL` (relative). Uniform rows are always feasible with a
        loss objective, so a solver's ``"infeasible"`` there is retried
        (:func:`optnoise.design.settle.settle`) and, if it persists, reported as ``"error"``.
        """
        options, time_limit, mip_gap, opts = check_solve_args(
            solver, formulation=formulation, options=options, time_limit=time_limit, mip_gap=mip_gap
        )

        def compute() -> MechanismResult:
            return self._settle(solver, time_limit, mip_gap, verbose, formulation, options, concurrent)

        return cached_result(self, cache, opts, lambda data: MechanismResult.from_dict(data, design=self), compute)

    def _settle(
        self,
        solver: str,
        time_limit: float | None,
        mip_gap: float,
        verbose: bool,
        formulation: str,
        options: dict[str, Any] | None,
        concurrent: bool,
    ) -> MechanismResult:
        """The lazy-row solve, settled by the one sequence of :func:`optnoise.design.settle.settle`.

        Every re-solve is a whole lazy solve with the re-solve's HiGHS options. Uniform rows are
        feasible with a loss objective, so there a solver's ``"infeasible"`` is a numerical failure.
        """
        loss_objective = self.objective != "delta"
        res, _ = settle(
            lambda opts: (self._solve_lazy(solver, time_limit, mip_gap, verbose, formulation, opts, concurrent), None),
            is_mip=get_notion(self.privacy).indicators and not self.is_pure,
            lp_algorithm=self._lp_algorithm(self.model_size(formulation)["rows"], full=self.initial_rows() is None),
            solver=solver,
            options=options,
            repair=(lambda r: repaired_result(self, r)) if loss_objective else None,
            feasible="uniform rows are feasible" if loss_objective else None,
        )
        return res

    def _lp_algorithm(self, rows: int, *, full: bool) -> str | None:
        """The HiGHS LP algorithm a model of this design starts with (``None``: HiGHS' default, dual simplex).

        The error rate's full model solves fastest by dual simplex, also when large (see
        :meth:`initial_rows`); other LPs of :data:`~optnoise.design.settle.IPM_ROWS` rows or more by
        interior point (with crossover, a vertex).
        """
        if full and self.loss == "er":
            return "simplex"
        return "ipm" if rows >= IPM_ROWS else None

    def _solve_lazy(
        self,
        solver: str,
        time_limit: float | None,
        mip_gap: float,
        verbose: bool,
        formulation: str,
        options: dict[str, Any] | None,
        concurrent: bool = True,
    ) -> MechanismResult:
        R, C = self.matrix_shape
        E = float(np.exp(self.eps))
        a, b = self.pairs[:, 0], self.pairs[:, 1]
        # a missing row violated by less than this cannot move the re-verified delta past its allowance
        d = self.delta if self.objective != "delta" else 0.0
        tol = min(LAZY_TOL, (delta_allowance(d) - d) / C)
        active = self.initial_rows()
        start = time.perf_counter()
        total, rounds = 0.0, 0
        while True:
            rounds += 1
            if rounds > MAX_ROUNDS:
                active = None  # give up on lazy rows: the full model
            model, entries = self._model(active, formulation)
            left = time_left(time_limit, start)
            first = first_options(model, solver, options)
            out = backend_solve(model, solver, left, mip_gap, verbose, first, concurrent=concurrent)
            backend_objective = out.info.get("backend_objective", out.objective)  # before any refinement
            total += out.solve_time
            P: np.ndarray | None = None
            if out.x is not None:
                flat = np.zeros(R * C)
                flat[entries] = out.x[model.block("P")]
                P = flat.reshape(R, C)
            if P is None or out.status != "optimal" or active is None:
                break
            viol = (P[a] - E * P[b] > tol) & ~active
            if not viol.any():
                break
            # every row of the cells (x, y) around a violation, in a window over inputs and outputs
            # that doubles every round, so that a growing support is caught in a few rounds
            hot = np.zeros((R, C), dtype=bool)
            ks, ys = np.nonzero(viol)
            hot[a[ks], ys] = hot[b[ks], ys] = True
            w = min(max(R, C), 2 ** (rounds + 1) - 1)
            hot = binary_dilation(hot, structure=np.ones((2 * w + 1, 2 * w + 1), dtype=bool))
            active = active | hot[a] | hot[b]
        message = out.message
        if P is not None and active is not None and out.status != "optimal":
            if np.any((P[a] - E * P[b] > tol) & ~active):
                P, message = None, f"{message}; the incumbent of the restricted model violates missing rows"
        matrix = None if P is None else normalised_rows(P, R)
        delta_objective = None
        if self.objective == "delta" and out.x is not None:
            delta_objective = float(out.x[model.block("t")][0])
        return MechanismResult(
            design=self,
            status="error" if out.status == "optimal" and matrix is None else out.status,
            matrix=matrix,
            solver=solver,
            solve_time=total,
            model_size=model.size,
            gap=out.gap,
            message=message,
            delta_objective=delta_objective,
            backend_objective=backend_objective,
            rounds=rounds,
            bound=out.bound if out.status in ("optimal", "feasible", "time_limit") else None,
            dual=out.dual if out.status == "optimal" and not model.is_mip else None,
            active=active,
        )
