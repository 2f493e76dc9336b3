"""Optimal noise design for the modulo-addition mechanism (Kadam et al. 2024).

The released answer is ``q~ = q + eta (mod n+1)`` (coordinate-wise for
vector queries) with ``eta ~ f``. :class:`NoiseDesign` states the problem;
:meth:`NoiseDesign.solve` builds it once as a solver-neutral
:class:`~optnoise.model.LinearModel` and solves it with any backend of
:mod:`optnoise.solvers`.

Privacy notions (``privacy=``), for a neighbourhood's shift set M:

``"pdp"``
    Definition 2 taken literally: for every shift mu separately,
    ``sum_eta f(eta) 1[f(eta) > e^eps f(eta+mu)] <= delta``. MILP with one
    indicator per (mu, eta); an output with ``f(eta+mu) = 0 < f(eta)`` leaks.
``"pdp-kadam"``
    The published MILP (13a)-(13h) exactly as printed: one ``u(eta)`` and one
    ``y(eta)`` per noise value shared by all shifts; (13f)-(13g) for every
    shift; ``sum_eta y(eta) <= delta``. Needed to reproduce the paper's
    Theorem 3, Fig. 10 and Table 1. Its feasible set is contained in
    ``"pdp"``'s.
``"dp"``
    (eps, delta)-DP: for every shift, the hockey stick
    ``sum_eta [f(eta) - e^eps f(eta+mu)]_+ <= delta``. An LP.

With ``delta = 0`` all three are pure eps-DP and the model is the LP (14).
On one instance the optima satisfy ``dp <= pdp <= pdp-kadam``.

Budgets beyond one (eps, delta) (:mod:`optnoise.budget`; eps and delta unset):

``"profile"``
    ``profile=[(eps_1, delta_1), ...]``: the ``"dp"`` hockey stick at every
    listed pair at once, an LP (:mod:`optnoise.profile`).
``"rdp"`` / ``"zcdp"``
    ``rdp=[(alpha, eps_alpha), ...]`` or ``rho=...`` (optional ``alphas`` grid):
    a convex conic model solved through cvxpy (:mod:`optnoise.renyi`, which
    states how the finite alpha grid relates to the full zCDP guarantee).

Their PMFs are re-verified from the PMF alone, and a status ``"optimal"`` whose
PMF fails re-verification becomes ``"unverified"``. Composition accounting
of any result: :meth:`DesignResult.pld`, :meth:`DesignResult.compose`
(:mod:`optnoise.accounting`); pictures: :meth:`DesignResult.plot`.

Guarantee and tolerance. Every returned PMF is re-verified from the PMF
alone (:attr:`DesignResult.achieved`). Solvers meet constraints to about
``1e-9``; the PDP indicators are therefore evaluated with an absolute
slack of :data:`ACHIEVED_TOL` on ``f(eta) - e^eps f(eta+mu)``, and
:meth:`DesignResult.verify` accepts ``achieved <= delta + DELTA_TOL``. For a
guarantee that holds exactly for the distribution you sample, certify the
result (:mod:`optnoise.certify`).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from . import accounting, plotting
from ._validation import check_choice, check_delta, check_eps, check_int, check_positive
from .budget import BUDGET_NOTIONS, Budget
from .canonical import CANONICAL_TOL, lexicographic_minimax
from .certify import certify_result, register_spec_kind
from .model import LinearModel, ModelBuilder
from .neighborhood import Neighborhood
from .privacy import NOTIONS, achieved_deltas
from .solvers import MIP_REL_GAP, SOLVERS, SolverOutput, polish_with_highs, solve_model, write_mps
from .tolerance import ACHIEVED_TOL, DELTA_TOL

__all__ = [
    "NoiseDesign",
    "DesignResult",
    "METRICS",
    "OBJECTIVES",
    "ACHIEVED_TOL",
    "DELTA_TOL",
    "CANONICAL_TOL",
    "cost_vector",
    "modulo_errors",
]

#: Named distortion metrics; any cost array of shape ``(n+1,)*d`` is accepted too.
METRICS = ("er", "mse", "mae", "circular-mse", "circular-mae")
#: What to minimise.
OBJECTIVES = ("distortion", "delta")
#: Largest number of noise values a design may have.
MAX_SIZE = 2_000_000
#: Every value of ``privacy=``.
DESIGN_NOTIONS = NOTIONS + BUDGET_NOTIONS


def cost_vector(metric: str, n: int, dim: int = 1) -> np.ndarray:
    """Distortion ``rho_eta`` of every noise value, shape ``(n+1,)*dim`` (eq. (9)).

    ``"er"``: ``1[eta != 0]`` (Definition 3); ``"mse"``: ``sum_c eta_c^2``
    (Definition 4); ``"mae"``: ``sum_c eta_c``; ``"circular-*"``: the same with
    the wrapped distance ``min(eta_c, n+1-eta_c)``.
    """
    check_choice("metric", metric, METRICS)
    grids = list(np.meshgrid(*([np.arange(n + 1)] * dim), indexing="ij"))
    if metric == "er":
        return np.any(np.stack(grids) != 0, axis=0).astype(float)
    if metric.startswith("circular"):
        grids = [np.minimum(g, n + 1 - g) for g in grids]
    power = 2 if metric.endswith("mse") else 1
    return np.sum([g.astype(float) ** power for g in grids], axis=0)


def modulo_errors(pmf: np.ndarray) -> dict[str, float]:
    """Actual errors ``|q~ - q|`` of the modulo release, per true answer q.

    The noise metrics above charge ``eta``; the released answer's error is
    ``eta`` when ``q + eta <= n`` and ``n+1-eta`` when the sum wraps, so it
    depends on q. Returns the squared and absolute error averaged over a
    uniform q and at the worst q (summed over coordinates for vector queries),
    and the error rate ``1 - f(0)``, which is the same for every q.
    """
    pmf = np.asarray(pmf, dtype=float)
    n = pmf.shape[0] - 1
    q = np.arange(n + 1)[:, None]
    eta = np.arange(n + 1)[None, :]
    err = np.where(q + eta <= n, eta, n + 1 - eta).astype(float)  # err[q, eta]
    out = {"mse_mean": 0.0, "mse_worst": 0.0, "mae_mean": 0.0, "mae_worst": 0.0}
    for axis in range(pmf.ndim):
        marg = pmf.sum(axis=tuple(a for a in range(pmf.ndim) if a != axis))
        mse_q, mae_q = (err**2) @ marg, err @ marg
        out["mse_mean"] += float(mse_q.mean())
        out["mse_worst"] += float(mse_q.max())
        out["mae_mean"] += float(mae_q.mean())
        out["mae_worst"] += float(mae_q.max())
    out["er"] = float(1.0 - pmf.flat[0])
    return out


class NoiseDesign:
    """An optimal-noise problem for the modulo-(n+1) additive mechanism.

    Parameters
    ----------
    n : int
        Query answers lie in ``{0..n}`` (per coordinate).
    eps : float
        Privacy level, > 0.
    delta : float, optional
        Privacy slack in [0, 1]; 0 (the default) is pure eps-DP. Leave unset
        with ``objective="delta"``.
    neighborhood : Neighborhood
        Query shifts between neighbouring datasets; symmetric unless built
        with ``directed=True``.
    metric : str or array_like
        ``"er"``, ``"mse"``, ``"mae"``, ``"circular-mse"``, ``"circular-mae"``,
        or a cost array of shape ``(n+1,)*d``.
    privacy : {"pdp", "pdp-kadam", "dp", "profile", "rdp", "zcdp"}
        The notion to guarantee (see module docstring).
    objective : {"distortion", "delta"}
        Minimise the distortion at ``delta`` (13a), or minimise delta subject to
        ``distortion <= max_distortion`` (15a).
    max_distortion : float, optional
        The distortion cap for ``objective="delta"``.
    shape : tuple of int, optional
        ``(n+1,)*d`` for vector queries; inferred from the neighbourhood.
    profile, rdp, rho, alphas : optional
        The budget of ``privacy="profile"`` (``[(eps, delta), ...]``), ``"rdp"``
        (``[(alpha, eps_alpha), ...]``) or ``"zcdp"`` (``rho``, optional grid
        ``alphas``), held as :attr:`budget` (:class:`optnoise.budget.Budget`).
    """

    def __init__(
        self,
        *,
        n: int,
        eps: float | None = None,
        delta: float | None = None,
        neighborhood: Neighborhood,
        metric: str | Any = "er",
        privacy: str = "pdp",
        objective: str = "distortion",
        max_distortion: float | None = None,
        shape: tuple[int, ...] | None = None,
        profile: Any = None,
        rdp: Any = None,
        rho: float | None = None,
        alphas: Any = None,
    ) -> None:
        self.n = check_int("n", n, minimum=1)
        budget_fields = {"profile": profile, "rdp": rdp, "rho": rho, "alphas": alphas}
        self.budget: Budget | None = None
        self.eps: float | None = None  # None exactly for the budget notions
        if privacy in BUDGET_NOTIONS:
            if eps is not None or delta is not None or objective != "distortion":
                raise ValueError(
                    f"privacy={privacy!r} takes its budget instead of eps/delta, with objective='distortion'"
                )
        else:
            given = [k for k, v in budget_fields.items() if v is not None]
            if given:
                raise ValueError(f"{given[0]} applies only with privacy in {', '.join(BUDGET_NOTIONS)}")
            self.eps = check_eps(eps)
        if not isinstance(neighborhood, Neighborhood):
            raise ValueError(
                f"neighborhood must be a Neighborhood (e.g. Neighborhood.bd(3)); got {type(neighborhood).__name__}"
            )
        self.neighborhood = neighborhood
        self.privacy = check_choice("privacy", privacy, DESIGN_NOTIONS)
        self.objective = check_choice("objective", objective, OBJECTIVES)
        dim = neighborhood.dim
        if shape is not None:
            try:
                shape = tuple(int(s) for s in shape)
            except TypeError:
                raise ValueError(f"shape must be a tuple (n+1,)*d; got {shape!r}") from None
            if not shape or any(s != self.n + 1 for s in shape):
                raise ValueError(f"shape must be (n+1,)*d = ({self.n + 1},)*d; got {shape}")
            if len(shape) != dim:
                raise ValueError(f"shape has {len(shape)} coordinates but the neighbourhood's shifts have {dim}")
        self.shape = (self.n + 1,) * dim
        if (self.n + 1) ** dim > MAX_SIZE:
            raise ValueError(f"n is too large: (n+1)^d = {(self.n + 1) ** dim} noise values exceeds {MAX_SIZE}")
        self.shifts = neighborhood.resolve(self.n, dim)
        # delta is None exactly when it is what is minimised, max_distortion exactly when it is not.
        self.delta: float | None
        self.max_distortion: float | None
        if self.privacy in BUDGET_NOTIONS:
            self.budget = Budget.create(privacy, n=self.n, shifts=self.shifts, idx=self.shift_index(), **budget_fields)
            self.delta = self.max_distortion = None
        elif self.objective == "distortion":
            self.delta = 0.0 if delta is None else check_delta(delta)
            if max_distortion is not None:
                raise ValueError("max_distortion applies only with objective='delta'")
            self.max_distortion = None
        else:
            if delta is not None:
                raise ValueError("delta must be left unset with objective='delta' (it is what is minimised)")
            if max_distortion is None:
                raise ValueError("max_distortion is required with objective='delta'")
            self.delta = None
            self.max_distortion = check_positive("max_distortion", max_distortion, allow_zero=True)
        if isinstance(metric, str):
            self.metric = check_choice("metric", metric, METRICS)
            self.cost = cost_vector(metric, self.n, dim)
        else:
            try:
                cost = np.asarray(metric, dtype=float)
            except (TypeError, ValueError):
                raise ValueError(f"metric must be one of {', '.join(METRICS)} or a cost array") from None
            if cost.size != (self.n + 1) ** dim:
                raise ValueError(
                    f"metric cost array must have {(self.n + 1) ** dim} entries (shape {self.shape}); got {cost.size}"
                )
            if not np.all(np.isfinite(cost)):
                raise ValueError("metric cost array must be finite")
            self.metric = "custom"
            self.cost = cost.reshape(self.shape)

    # ------------------------------------------------------------------ helpers
    @property
    def dim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        """Number of noise values ``(n+1)^d``."""
        return int(np.prod(self.shape))

    @property
    def is_pure(self) -> bool:
        """Pure eps-DP (delta = 0 with the distortion objective): the LP (14)."""
        return self.objective == "distortion" and self.delta == 0.0

    def shift_index(self) -> np.ndarray:
        """``idx[m, eta]`` = flat index of ``eta + mu_m (mod n+1)``."""
        grids = np.indices(self.shape).reshape(self.dim, -1)  # (d, N)
        out = np.empty((len(self.shifts), self.size), dtype=np.int64)
        for m, mu in enumerate(self.shifts):
            moved = (grids + mu[:, None]) % (self.n + 1)
            out[m] = np.ravel_multi_index(tuple(moved), self.shape)
        return out

    def shift_list(self) -> list[Any]:
        """The resolved shifts as plain data: ints for scalar queries, lists for vector ones."""
        return self.shifts.tolist() if self.dim > 1 else self.shifts.ravel().tolist()

    def spec(self) -> dict[str, Any]:
        """The problem as plain data (JSON-ready)."""
        return {
            "n": self.n,
            "eps": self.eps,
            "delta": self.delta,
            "shape": list(self.shape),
            "neighborhood": self.neighborhood.to_dict(),
            "shifts": self.shift_list(),
            "directed": self.neighborhood.directed,
            "metric": self.metric,
            "cost": self.cost.ravel().tolist() if self.metric == "custom" else None,
            "privacy": self.privacy,
            "objective": self.objective,
            "max_distortion": self.max_distortion,
            **(self.budget.spec() if self.budget else {}),
        }

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> NoiseDesign:
        """Rebuild a design from :meth:`spec` output (fully re-validated).

        Raises ``ValueError`` when a field is missing or invalid, or when the
        stored ``shifts`` differ from what the neighbourhood resolves to.
        """
        if not isinstance(spec, dict):
            raise ValueError("spec must be a mapping (NoiseDesign.spec() output)")
        try:
            nb = Neighborhood.from_dict(spec["neighborhood"])
            metric: Any = spec["metric"]
            if metric == "custom":
                if spec.get("cost") is None:
                    raise ValueError("spec has metric 'custom' but no 'cost' array")
                metric = np.asarray(spec["cost"], dtype=float)
            objective = spec.get("objective", "distortion")
            kw: dict[str, Any] = {k: spec[k] for k in ("profile", "rdp", "rho", "alphas") if spec.get(k) is not None}
            if spec["privacy"] in BUDGET_NOTIONS:
                kw["eps"] = spec.get("eps")
            elif objective == "delta":
                kw["max_distortion"] = spec["max_distortion"]
            else:
                kw["delta"] = spec["delta"]
            shape = spec.get("shape")
            if "eps" not in kw:
                kw["eps"] = spec["eps"]
            design = cls(
                n=spec["n"],
                neighborhood=nb,
                metric=metric,
                privacy=spec["privacy"],
                objective=objective,
                shape=tuple(shape) if shape else None,
                **kw,
            )
        except KeyError as exc:
            raise ValueError(f"spec lacks the field {exc.args[0]!r}") from None
        shifts = spec.get("shifts")
        if shifts is not None and sorted(map(str, design.shift_list())) != sorted(map(str, shifts)):
            raise ValueError("spec 'shifts' do not match its neighbourhood")
        return design

    def replace(self, **changes: Any) -> NoiseDesign:
        """A copy with some :meth:`spec` fields changed (e.g. ``delta=``), re-validated."""
        spec = {**self.spec(), "shifts": None, **changes}
        if "cost" in changes and "metric" not in changes:
            spec["metric"] = "custom"
        return NoiseDesign.from_spec(spec)

    def key(self, **solve_options: Any) -> str:
        """Stable hash of the problem and solve options (cache key)."""
        blob = json.dumps({"spec": self.spec(), "opts": solve_options, "v": 1}, sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:24]

    def __repr__(self) -> str:
        d = f"delta={self.delta}" if self.objective == "distortion" else f"max_distortion={self.max_distortion}"
        budget = self.budget.describe() if self.budget else f"eps={self.eps}, {d}"
        return (
            f"NoiseDesign(n={self.n}, {budget}, neighborhood={self.neighborhood.describe()}, "
            f"metric={self.metric!r}, privacy={self.privacy!r}, objective={self.objective!r})"
        )

    # ------------------------------------------------------------------ model
    def build_model(self, *, formulation: str = "hull") -> LinearModel:
        """The LP/MILP of this design as a solver-neutral sparse model.

        Variable blocks: ``f`` (the PMF, flattened C-order), then per notion
        ``s`` (DP excess), ``y``/``u`` (PDP leak mass and indicators) and ``t``
        (delta, for ``objective="delta"``).

        ``formulation`` selects the ``"pdp"`` MILP: ``"hull"`` (default; the
        convex hull of each indicator's disjunction, see :meth:`_pdp_rows`) or
        ``"bigm"`` (the paper's linearisation applied per shift, the benchmark
        baseline). Both have the same optimum; other notions ignore it.
        """
        check_choice("formulation", formulation, ("hull", "bigm"))
        N, K = self.size, len(self.shifts)
        idx = self.shift_index()  # (K, N)
        if self.budget is not None and self.budget.is_conic:
            return self.budget.conic_model(self.cost, idx, self.shape)
        mb = ModelBuilder()
        f = mb.add_vars(N, lb=0.0, ub=1.0, name="f")
        mb.add_row(f, 1.0, lower=1.0, upper=1.0)  # (13b)
        cost = self.cost.ravel()
        if self.objective == "delta":
            t = mb.add_vars(1, lb=0.0, ub=1.0, name="t")
            mb.add_row(f, cost, upper=float(self.max_distortion or 0.0))  # (15b): set with objective="delta"
            mb.set_objective(t, [1.0])  # (15a)
        else:
            t = None
            mb.set_objective(f, cost)  # (13a)
        delta = self.delta
        if self.budget is not None:
            self.budget.add_rows(mb, f, idx)
            return mb.build()
        assert self.eps is not None  # every notion without a Budget has one (eps, delta)
        E = float(np.exp(self.eps))

        def budget_rows(cols_by_row: np.ndarray) -> None:
            """sum_eta cols[r, eta] <= delta, or <= t for the delta objective (13c)."""
            R, C = cols_by_row.shape
            rows = np.repeat(np.arange(R), C)
            if t is None:
                mb.add_rows(rows, cols_by_row.ravel(), 1.0, upper=delta)
            else:
                rows = np.concatenate([rows, np.arange(R)])
                cols = np.concatenate([cols_by_row.ravel(), np.repeat(t, R)])
                vals = np.concatenate([np.ones(R * C), -np.ones(R)])
                mb.add_rows(rows, cols, vals, upper=0.0)

        if self.is_pure:
            # (14c): f(eta) - e^eps f(eta+mu) <= 0 for every shift
            r = np.arange(K * N)
            mb.add_rows(
                np.repeat(r, 2),
                np.stack([np.tile(f, K), f[idx.ravel()]], 1).ravel(),
                np.tile([1.0, -E], K * N),
                upper=0.0,
            )
        elif self.privacy == "dp":
            s = mb.add_vars(K * N, lb=0.0, ub=1.0, name="s").reshape(K, N)
            # f(eta) - e^eps f(eta+mu) - s(mu, eta) <= 0 ; sum_eta s(mu, eta) <= delta
            r = np.arange(K * N)
            cols = np.stack([np.tile(f, K), f[idx.ravel()], s.ravel()], 1).ravel()
            mb.add_rows(np.repeat(r, 3), cols, np.tile([1.0, -E, -1.0], K * N), upper=0.0)
            budget_rows(s)
        else:
            if self.privacy == "pdp" and formulation == "hull":
                self._pdp_rows(mb, f, idx, E, budget_rows)
            else:
                self._bigm_rows(mb, f, idx, E, budget_rows, shared=self.privacy == "pdp-kadam")
            pair = self._reflection_pair()
            if pair is not None:
                # The reflection eta -> -eta maps feasible PMFs to feasible PMFs with the same
                # distortion, so one of every mirrored pair of optima has f(e1) >= f(-e1).
                mb.add_row(f[list(pair)], [1.0, -1.0], upper=0.0)
        return mb.build()

    def _reflection_pair(self) -> tuple[int, int] | None:
        """Flat indices ``(-e1, e1)`` when shifts and costs are symmetric under eta -> -eta."""
        shifts = {tuple(s) for s in self.shifts.tolist()}
        if {tuple((-np.asarray(s)) % (self.n + 1)) for s in shifts} != shifts:
            return None
        mirrored = np.flip(np.roll(self.cost, shift=-1, axis=tuple(range(self.dim))), axis=tuple(range(self.dim)))
        if not np.array_equal(mirrored, self.cost) or self.n < 2:
            return None
        e1 = np.zeros(self.dim, dtype=np.int64)
        e1[0] = 1
        return (
            int(np.ravel_multi_index(tuple(-e1 % (self.n + 1)), self.shape)),
            int(np.ravel_multi_index(tuple(e1), self.shape)),
        )

    def _pdp_rows(self, mb: ModelBuilder, f: np.ndarray, idx: np.ndarray, E: float, budget_rows: Any) -> None:
        """Definition 2 with one indicator per (mu, eta).

        ``y(mu, eta)`` is the mass of ``eta`` counted as leaking for shift mu:
        ``u = 0`` forces ``f(eta) <= e^eps f(eta+mu)`` and ``y = 0``; ``u = 1``
        forces ``y >= f(eta)``. Rows per (mu, eta):

        (a) ``f(eta) - e^eps f(eta+mu) - y <= 0``
        (b) ``y - U u <= 0``           with ``U = min(1, delta)``: a leaking mass is at most delta
        (c) ``f(eta) - y + u <= 1``

        Dropping integrality gives exactly the DP hockey-stick LP, so the
        relaxation is as tight as the convex notion and ``dp <= pdp`` is
        visible in the model itself.
        """
        K, N = idx.shape
        y = mb.add_vars(K * N, lb=0.0, ub=1.0, name="y").reshape(K, N)
        u = mb.add_vars(K * N, lb=0, ub=1, integer=True, name="u").reshape(K, N)
        ff = np.tile(f, K)
        r = np.arange(K * N)
        mb.add_rows(
            np.repeat(r, 3),
            np.stack([ff, f[idx.ravel()], y.ravel()], 1).ravel(),
            np.tile([1.0, -E, -1.0], K * N),
            upper=0.0,
        )
        U = 1.0 if self.delta is None else max(min(1.0, self.delta), 0.0)
        mb.add_rows(np.repeat(r, 2), np.stack([y.ravel(), u.ravel()], 1).ravel(), np.tile([1.0, -U], K * N), upper=0.0)
        mb.add_rows(
            np.repeat(r, 3),
            np.stack([ff, y.ravel(), u.ravel()], 1).ravel(),
            np.tile([1.0, -1.0, 1.0], K * N),
            upper=1.0,
        )
        budget_rows(y)

    def _bigm_rows(
        self, mb: ModelBuilder, f: np.ndarray, idx: np.ndarray, E: float, budget_rows: Any, *, shared: bool
    ) -> None:
        """The published linearisation (13c)-(13h), exactly as printed.

        ``shared=True`` is the paper's MILP (``"pdp-kadam"``): one ``u(eta)``,
        ``y(eta)`` for all shifts and one budget row. ``shared=False`` applies
        the same rows to every shift separately, the plain big-M form of
        Definition 2 (kept as the benchmark baseline for ``"pdp"``).
        """
        K, N = idx.shape
        G = 1 if shared else K
        y = mb.add_vars(G * N, lb=0.0, ub=1.0, name="y").reshape(G, N)
        u = mb.add_vars(G * N, lb=0, ub=1, integer=True, name="u").reshape(G, N)
        budget_rows(y)  # (13c) sum_eta y <= delta
        r = np.arange(G * N)
        fg, yr, ur = np.tile(f, G), y.ravel(), u.ravel()
        mb.add_rows(np.repeat(r, 2), np.stack([yr, ur], 1).ravel(), np.tile([1.0, -1.0], G * N), upper=0.0)  # (13c)
        mb.add_rows(
            np.repeat(r, 3), np.stack([ur, fg, yr], 1).ravel(), np.tile([1.0, 1.0, -1.0], G * N), upper=1.0
        )  # (13d)
        mb.add_rows(
            np.repeat(r, 3), np.stack([ur, fg, yr], 1).ravel(), np.tile([1.0, -1.0, 1.0], G * N), upper=1.0
        )  # (13e)
        rk = np.arange(K * N)
        uu = np.tile(u[0], K) if shared else u.ravel()
        ff, fm = np.tile(f, K), f[idx.ravel()]
        # (13f): f(eta) - e^eps f(eta+mu) - u <= 0
        mb.add_rows(np.repeat(rk, 3), np.stack([ff, fm, uu], 1).ravel(), np.tile([1.0, -E, -1.0], K * N), upper=0.0)
        # (13g): e^eps f(eta+mu) - f(eta) + e^eps u <= e^eps
        mb.add_rows(np.repeat(rk, 3), np.stack([fm, ff, uu], 1).ravel(), np.tile([E, -1.0, E], K * N), upper=E)

    def to_mps(self, path: str | os.PathLike) -> Path:
        """Write this design's model as an MPS file, for any external solver."""
        return write_mps(self.build_model(), path)

    # ------------------------------------------------------------------ solve
    def solve(
        self,
        solver: str = "highs",
        time_limit: float | None = None,
        *,
        mip_gap: float = MIP_REL_GAP,
        verbose: bool = False,
        cache: str | os.PathLike | None = None,
        formulation: str = "hull",
        options: dict[str, Any] | None = None,
        conic_solver: str = "clarabel",
        canonical: bool = False,
    ) -> DesignResult:
        """Build and solve the design; re-verify the PMF from scratch.

        Parameters
        ----------
        solver : {"highs", "cbc", "gurobi", "cplex", "cvxpy"}
        time_limit : float, optional
            Seconds; on expiry ``status == "time_limit"`` and the incumbent (if
            any) is returned with its ``gap``. With ``canonical=True`` it bounds
            all stages together.
        mip_gap : float
            Relative MILP gap counted as optimal.
        verbose : bool
            Show the solver log.
        cache : path, optional
            Folder of cached results keyed by :meth:`key`; a hit skips the solve.
        formulation : {"hull", "bigm"}
            MILP form for ``"pdp"`` (see :meth:`build_model`).
        options : dict, optional
            Raw HiGHS options (``solver="highs"`` only), e.g.
            ``{"mip_allow_restart": False}``, which helps some hard ``pdp``
            instances (``benchmarks/RESULTS.md``). The PMF is re-verified either way.
        conic_solver : {"clarabel", "scs"}
            ``rdp``/``zcdp`` designs are conic: they are solved through cvxpy with
            this solver (``solver`` must then be the default or ``"cvxpy"``) and
            are not cached.
        canonical : bool
            Return the canonical optimum instead of the solver's choice among
            tied optima: further lexicographic stages with the same backend
            keep the objective (distortion, or delta for ``objective="delta"``)
            at its first-stage optimum, with no slack added, so to the backend's
            feasibility tolerance (:data:`CANONICAL_TOL`, 1e-9 relative to
            ``max(1, |objective|)``; in practice ~1e-15), and minimise the sorted PMF, largest mass first
            (:func:`optnoise.canonical.lexicographic_minimax`, which explains the
            choice). It is unique for the LP notions; in Theorem 3(c)'s last
            segment it is the paper's (40)-(41). Costs up to ``(n+1)^d - 1``
            extra solves. ``DesignResult.canonical`` says whether it succeeded;
            when a stage fails or times out, the first-stage optimum is returned
            with ``canonical = False`` and the reason in ``message``. The
            reported objective is re-computed from the returned PMF;
            ``backend_objective`` stays the first stage's.
        """
        check_choice("solver", solver, SOLVERS)
        if self.budget is not None and self.budget.is_conic:
            if canonical:
                raise ValueError(f"canonical applies to the LP/MILP notions, not privacy={self.privacy!r}")
            return self._solve_conic(solver, time_limit=time_limit, verbose=verbose, conic_solver=conic_solver)
        opts: dict[str, Any] = {"solver": solver, "time_limit": time_limit, "mip_gap": mip_gap}
        if options:
            opts["options"] = dict(options)
        if formulation != "hull":
            opts["formulation"] = formulation
        if canonical:
            opts["canonical"] = True
        path = Path(cache) / f"{self.key(**opts)}.json" if cache is not None else None
        if path is not None and path.exists():
            try:
                return DesignResult.from_dict(json.loads(path.read_text()), design=self)
            except (ValueError, KeyError, json.JSONDecodeError):
                path.unlink(missing_ok=True)  # corrupt cache entry: solve again
        model = self.build_model(formulation=formulation)
        deadline = None if time_limit is None else time.perf_counter() + float(time_limit)

        def backend(m: LinearModel, limit: float | None, start: np.ndarray | None = None) -> SolverOutput:
            """One solve with the chosen backend (HiGHS-polished when it is another one)."""
            out = solve_model(
                m, solver=solver, time_limit=limit, mip_gap=mip_gap, verbose=verbose, options=options, start=start
            )
            raw = out.objective
            if solver != "highs" and out.x is not None:
                # PDP indicators are re-verified at 1e-8, finer than PuLP's ~8-digit solution files.
                out = polish_with_highs(m, out)
            return replace(out, info={**out.info, "backend_objective": raw})

        def stage(m: LinearModel, start: np.ndarray) -> SolverOutput:
            """One canonical stage, within what is left of ``time_limit``."""
            remaining = None if deadline is None else deadline - time.perf_counter()
            if remaining is not None and remaining <= 0:
                return SolverOutput("time_limit", None, None, None, None, 0.0, solver, message="time limit spent")
            return backend(m, remaining, start)

        out = backend(model, time_limit)
        res = self._result(model, out, solver, out.info["backend_objective"])
        if canonical:
            res = self._canonical(model, out, res, stage)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(res.to_dict()))
            os.replace(tmp, path)
        return res

    def _result(
        self,
        model: LinearModel,
        out: SolverOutput,
        solver: str,
        backend_objective: float | None,
        canonical: bool | None = None,
    ) -> DesignResult:
        """The :class:`DesignResult` of one solver output (PMF clipped and renormalised)."""
        pmf = None
        if out.x is not None:
            raw = out.x[model.block("f")]
            # Solver round-off can leave -1e-12 entries; the PMF is reported clipped and renormalised.
            clipped = np.clip(raw, 0.0, None)
            pmf = (clipped / clipped.sum()).reshape(self.shape)
        return DesignResult(
            design=self,
            status=out.status,
            pmf=pmf,
            solver=solver,
            solve_time=out.solve_time,
            model_size=model.size,
            gap=out.gap,
            message=out.message,
            delta_objective=(
                float(out.x[model.block("t")][0]) if (self.objective == "delta" and out.x is not None) else None
            ),
            backend_objective=backend_objective,
            canonical=canonical,
        ).mark_unverified()

    def _canonical(self, model: LinearModel, out: SolverOutput, first: DesignResult, run: Any) -> DesignResult:
        """The canonical optimum (see :meth:`solve`), or ``first`` marked non-canonical with the reason."""

        def keep(reason: str) -> DesignResult:
            first.canonical = False
            first.message = f"{first.message}; {reason}; the first-stage optimum is returned".lstrip("; ")
            return first

        if out.status != "optimal" or out.x is None or not first.verify():
            return keep(f"canonical stages skipped (first stage {out.status!r})")
        lex = lexicographic_minimax(model, out.x, "f", run, total=1.0)
        first.solve_time += lex.solve_time
        if lex.x is None:
            return keep(lex.message)
        stages = replace(out, x=lex.x, solve_time=first.solve_time, message=out.message)
        res = self._result(model, stages, first.solver, first.backend_objective, canonical=True)
        res.message = f"{out.message}; canonical optimum after {lex.stages} lexicographic stage(s)".lstrip("; ")
        # Re-check from the PMF alone: the backend holds the objective row to CANONICAL_TOL (its
        # feasibility tolerance) and the PMF is renormalised after clipping (the same again,
        # relative), hence twice CANONICAL_TOL.
        z = float(model.c @ out.x + model.offset)
        value = res.distortion if self.objective == "distortion" else res.delta_objective
        slack = 2 * CANONICAL_TOL * max(1.0, abs(z))
        if not (value is not None and value <= z + slack and res.verify()):
            return keep("the canonical PMF failed its re-verification")
        return res

    def _solve_conic(self, solver: str, *, time_limit: float | None, verbose: bool, conic_solver: str) -> DesignResult:
        """Solve an ``rdp``/``zcdp`` design through cvxpy (:mod:`optnoise.renyi`)."""
        if solver not in ("highs", "cvxpy") or self.budget is None:
            raise ValueError(f"solver must be 'cvxpy' (or the default) for privacy={self.privacy!r}; got {solver!r}")
        out, pmf, size = self.budget.solve_conic(
            self.cost, self.shift_index(), self.shape, time_limit=time_limit, verbose=verbose, conic_solver=conic_solver
        )
        return DesignResult(
            design=self,
            status=out.status,
            pmf=pmf,
            solver=f"cvxpy/{conic_solver}",
            solve_time=out.solve_time,
            model_size=size,
            gap=out.gap,
            message=out.message,
            backend_objective=out.objective,
        ).mark_unverified()


@dataclass
class DesignResult:
    """The outcome of :meth:`NoiseDesign.solve`.

    Attributes
    ----------
    pmf : ndarray or None
        The noise PMF, shape ``(n+1,)`` or ``(n+1,)*d``; ``None`` without a solution.
    status : str
        ``"optimal"``, ``"infeasible"``, ``"time_limit"``, ``"unbounded"`` or ``"error"``.
    distortion : float or None
        ``sum_eta rho_eta f(eta)`` under the design's metric.
    achieved : dict
        ``{"pdp", "pdp-kadam", "dp"}``: delta of the returned PMF at the design's
        eps, recomputed from the PMF alone (PDP indicators with slack
        :data:`ACHIEVED_TOL`).
    actual : dict
        Errors of the released answer under the modulo wrap-around
        (:func:`modulo_errors`).
    solve_time : float
        Seconds in the solver.
    model_size : dict
        Rows, columns, integers and nonzeros of the model.
    gap : float or None
        Relative MILP gap of the incumbent (0 or tiny when optimal).
    delta_objective : float or None
        The minimised delta as the solver reports it (``objective="delta"``).
    backend_objective : float or None
        The objective as the chosen backend reported it, before the HiGHS
        polish that non-HiGHS solutions get (see :func:`optnoise.solvers.polish_with_highs`);
        with ``canonical=True``, the first stage's.
    canonical : bool or None
        ``None`` unless the canonical optimum was requested; then ``True`` when
        the PMF is the canonical optimum, ``False`` when a canonical stage failed
        and the first-stage optimum is returned (reason in ``message``).
    """

    design: NoiseDesign
    status: str
    pmf: np.ndarray | None
    solver: str
    solve_time: float
    model_size: dict[str, int]
    gap: float | None = None
    message: str = ""
    delta_objective: float | None = None
    backend_objective: float | None = None
    canonical: bool | None = None
    achieved: dict[str, float] = field(default_factory=dict)
    actual: dict[str, float] = field(default_factory=dict)
    distortion: float | None = None

    def __post_init__(self) -> None:
        if self.pmf is not None:
            self.pmf = np.asarray(self.pmf, dtype=float).reshape(self.design.shape)
            self.distortion = float(np.sum(self.design.cost * self.pmf))
            if self.design.budget is not None:
                self.achieved = self.design.budget.achieved(self.pmf, self.design.shifts)
            else:
                assert self.design.eps is not None  # a design without a Budget has one eps
                self.achieved = achieved_deltas(self.pmf, self.design.shifts, self.design.eps, tol=ACHIEVED_TOL)
            self.actual = modulo_errors(self.pmf)

    @property
    def delta(self) -> float | None:
        """The delta this PMF guarantees under the design's notion (requested or minimised)."""
        if self.pmf is None:
            return None
        if self.design.objective == "delta":
            return self.achieved[self.design.privacy]
        return self.design.delta

    def verify(self, tol: float = DELTA_TOL) -> bool:
        """True when the re-verified delta of the design's notion is within ``tol`` of its target."""
        if self.pmf is None:
            return False
        if self.design.budget is not None:
            return self.design.budget.satisfied(self.achieved)
        target = self.design.delta if self.design.objective == "distortion" else self.delta_objective
        if target is None:
            return False
        return bool(self.achieved[self.design.privacy] <= float(target) + tol)

    def mark_unverified(self) -> DesignResult:
        """A budget design (profile/rdp/zcdp) whose PMF fails re-verification is ``"unverified"``, not ``"optimal"``.

        The PMF is kept and the message says what failed. Returns ``self``.
        """
        if self.design.budget is not None and self.status == "optimal" and not self.verify():
            self.status = "unverified"
            why = f"the PMF fails re-verification of its {self.design.privacy} budget: {self.achieved}"
            self.message = f"{self.message}; {why}" if self.message else why
        return self

    def pld(self, *, discretization: float = accounting.DISCRETIZATION, shift: Any = None) -> Any:
        """dp-accounting ``PrivacyLossDistribution`` of this PMF (see :mod:`optnoise.accounting`).

        Default: a dominating pair of every ``(f, f(. + mu))`` of the
        neighbourhood (both orders of each neighbouring pair when it is
        symmetric), valid for adaptive composition whatever shift each round
        uses. ``shift=mu``: that one pair's PLD (remove and add directions).
        Warns (:class:`~optnoise.accounting.InfiniteLossWarning`) on mass of
        infinite privacy loss.
        """
        return accounting.result_pld(self._require_pmf(), self.design.shifts, discretization, shift)

    def compose(self, k: int, *, discretization: float = accounting.DISCRETIZATION) -> accounting.Composition:
        """k-fold composition of this design: an object with ``.epsilon(delta)`` and ``.delta(eps)``."""
        return accounting.compose(self._require_pmf(), self.design.shifts, k, discretization=discretization)

    def plot(self, *, baseline: Any = None, eps: Any = None, ax: Any = None, label: str | None = None) -> Any:
        """Draw the PMF and its privacy profile delta(eps); see :func:`optnoise.plotting.plot_design`."""
        label = label or f"optimal ({self.design.privacy}, {self.design.metric})"
        return plotting.plot_design(
            self._require_pmf(), self.design.shifts, baseline=baseline, eps=eps, axes=ax, label=label
        )

    def _require_pmf(self) -> np.ndarray:
        if self.pmf is None:
            raise ValueError(f"this result has no PMF (status {self.status!r})")
        return self.pmf

    def certify(self, **kwargs: Any) -> Any:
        """Exact certificate and exact sampler for this PMF; see :func:`optnoise.certify.certify_result`."""
        return certify_result(self, **kwargs)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary; keys include the CLI's contract keys."""
        d = self.design
        return {
            "n": d.n,
            "eps": d.eps,
            "delta": d.delta if d.objective == "distortion" else self.delta_objective,
            "shifts": d.shift_list(),
            "directed": d.neighborhood.directed,
            "metric": d.metric,
            "privacy": d.privacy,
            "objective": d.objective,
            "max_distortion": d.max_distortion,
            **(d.budget.spec() if d.budget else {}),
            "status": self.status,
            "pmf": None if self.pmf is None else self.pmf.tolist(),
            "distortion": self.distortion,
            "achieved": self.achieved,
            "actual": self.actual,
            "solver": self.solver,
            "solve_time_s": self.solve_time,
            "gap": self.gap,
            "backend_objective": self.backend_objective,
            "canonical": self.canonical,
            "model_size": self.model_size,
            "message": self.message,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, design: NoiseDesign) -> DesignResult:
        """Rebuild a result of ``design`` from :meth:`to_dict` output (re-verifies the PMF)."""
        pmf = None if data["pmf"] is None else np.asarray(data["pmf"], dtype=float)
        return cls(
            design=design,
            status=data["status"],
            pmf=pmf,
            solver=data["solver"],
            solve_time=float(data["solve_time_s"]),
            model_size=dict(data["model_size"]),
            gap=data.get("gap"),
            message=data.get("message", ""),
            backend_objective=data.get("backend_objective"),
            canonical=data.get("canonical"),
            delta_objective=data["delta"] if design.objective == "delta" else None,
        )

    def __repr__(self) -> str:
        dist = "None" if self.distortion is None else f"{self.distortion:.6g}"
        return (
            f"DesignResult(status={self.status!r}, distortion={dist}, "
            f"achieved={ {k: round(v, 6) for k, v in self.achieved.items()} }, solver={self.solver!r})"
        )


register_spec_kind("noise", NoiseDesign.from_spec)
