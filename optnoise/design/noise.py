"""Optimal noise design for the modulo-addition mechanism (Kadam et al. 2024).

The released answer is ``q~ = q + eta (mod n+1)`` (coordinate-wise for
vector queries) with ``eta ~ f``. :class:`NoiseDesign` states the problem;
:meth:`NoiseDesign.solve` builds it once as a solver-neutral
:class:`~optnoise.engine.model.LinearModel` and solves it with any backend of
:mod:`optnoise.engine.solve`.

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

Budgets beyond one (eps, delta) (:mod:`optnoise.privacy.budget`; eps and delta unset):

``"profile"``
    ``profile=[(eps_1, delta_1), ...]``: the ``"dp"`` hockey stick at every
    listed pair at once, an LP (:mod:`optnoise.privacy.profile`).
``"rdp"`` / ``"zcdp"``
    ``rdp=[(alpha, eps_alpha), ...]`` or ``rho=...`` (optional ``alphas`` grid):
    convex, solved with a certified lower bound (:mod:`optnoise.privacy.renyi_solve`;
    :mod:`optnoise.privacy.renyi` relates the finite alpha grid to the full zCDP guarantee).

``"composed"``: ``compositions=k``; the k-fold composition is (eps, delta)-DP (:mod:`optnoise.design.composed`).

Their PMFs are re-verified from the PMF alone, and a status ``"optimal"`` whose
PMF fails re-verification becomes ``"unverified"``. Composition accounting
of any result: :meth:`DesignResult.pld`, :meth:`DesignResult.compose`
(:mod:`optnoise.privacy.accounting`); pictures: :meth:`DesignResult.plot`.

Guarantee and tolerance. Every returned PMF is re-verified from the PMF
alone (:attr:`DesignResult.achieved`) and judged by the one rule of
:mod:`optnoise.engine.tolerance`: ``achieved <= delta * (1 + 1e-6)`` (purely relative,
no absolute slack); PDP indicators, and every notion at delta = 0, are read at
``eps * (1 + 1e-6) + 1e-12``. A
solver's "optimal" that fails the rule is reported as ``"unverified"`` with the
reason (:attr:`DesignResult.message`), never as optimal. For a guarantee that
holds exactly for the distribution you sample, certify the result
(:mod:`optnoise.deploy.certify`).

Limits. Bad input is refused before anything is built: ``(n+1)^d <= 2e6``
noise values, ``eps <= 34.5`` (e^eps is a model coefficient), custom costs of
magnitude ``<= 1e15``, and a model-size estimate (:meth:`NoiseDesign.model_size`)
within the limits of :mod:`optnoise.engine.validation`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from optnoise.design import additive, grid, pipeline
from optnoise.design.clamp import CLAMP_METRICS, clamp_evaluation, clamp_matrix, clamp_model, clamp_model_size
from optnoise.design.composed import COMPOSED, NO_MODEL, check_composed_args, composed_spec, lp_notion
from optnoise.design.layout import PairLayout, matrix_layout, pmf_layout
from optnoise.design.metrics import METRICS, cost_vector, reflection_pair
from optnoise.design.result import DesignResult
from optnoise.design.rows import add_pair_rows
from optnoise.engine.cache import problem_key
from optnoise.engine.highs import write_mps
from optnoise.engine.model import LinearModel, ModelBuilder
from optnoise.engine.tolerance import MIP_REL_GAP
from optnoise.engine.validation import (
    MAX_COST,
    MAX_EPS,
    MAX_EPS_REASON,
    MAX_SIZE,
    check_choice,
    check_delta,
    check_eps,
    check_int,
    check_model_size,
    check_positive,
    real_array,
    shown,
)
from optnoise.privacy.budget import BUDGET_NOTIONS, Budget
from optnoise.privacy.curves import NOTIONS
from optnoise.privacy.fields import BUDGET_FIELD_NAMES
from optnoise.privacy.neighborhood import Neighborhood, neighbour_pairs

__all__ = ["NoiseDesign", "OBJECTIVES", "RELEASES", "DESIGN_NOTIONS"]

#: What to minimise (``"epsilon"``: the composed eps of ``privacy="composed"``, under ``max_distortion``).
OBJECTIVES = ("distortion", "delta", "epsilon")
#: How noise is added: ``q + eta (mod n+1)``, ``clip(q + eta, 0, n)`` with eta on ``{-n..n}``, or ``q + eta`` on Z.
RELEASES = ("modulo", "clamp", additive.ADDITIVE, grid.GRID)
#: Releases designed by one module of hooks (setup, model_size, build, solve, spec, describe).
HOOKS = {additive.ADDITIVE: additive, grid.GRID: grid}
#: Every value of ``privacy=``.
DESIGN_NOTIONS = NOTIONS + BUDGET_NOTIONS + (COMPOSED,)


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
    privacy : {"pdp", "pdp-kadam", "dp", "profile", "rdp", "zcdp", "composed"}
        The notion to guarantee (see module docstring); default ``"pdp"``, ``"dp"`` for ``release="additive"``.
    objective : {"distortion", "delta", "epsilon"}
        Minimise the distortion at ``delta`` (13a), or minimise delta subject to
        ``distortion <= max_distortion`` (15a).
    max_distortion : float, optional
        The distortion cap for ``objective="delta"``.
    shape : tuple of int, optional
        ``(n+1,)*d`` for vector queries; inferred from the neighbourhood.
    release : {"modulo", "clamp"}
        ``"modulo"`` (default): the release ``q + eta (mod n+1)`` above.
        ``"clamp"``: scalar queries only; the noise lives on ``eta in {-n..n}`` (``pmf[i]`` is
        ``f(i - n)``, shape ``(2n+1,)``) and the release is ``clip(q + eta, 0, n)``, with no
        wrap-around. Its matrix ``P[q, y]`` is linear in ``f``, so the design stays an LP (``"dp"``)
        or MILP (``"pdp"``; ``"pdp-kadam"`` is the modulo MILP and does not apply):
        :func:`optnoise.design.clamp.clamp_model`. The neighbours are the answer pairs
        ``q - q' = mu`` inside ``{0..n}`` (:func:`optnoise.privacy.neighborhood.neighbour_pairs`);
        the metric (``"er"``, ``"mse"``, ``"mae"``, or a cost per released error ``y - q = -n..n``)
        is charged on the released error, averaged over a uniform answer. Certified as its induced
        matrix (:class:`~optnoise.deploy.certified.CertifiedMechanism`).
        ``"additive"``: ``q + eta`` on all integers, no ``n`` (:mod:`optnoise.design.additive`;
        ``support=L`` optionally fixes the finite part of the noise). ``"grid"``: a real query of sensitivity
        ``sensitivity`` rounded to the grid of width ``resolution``, no ``n`` (:mod:`optnoise.design.grid`).
    compositions, discretization : optional
        ``privacy="composed"``: k, and the accounting grid h (default 1e-4) of the k-fold guarantee;
        ``objective="epsilon"`` minimises the composed eps (:mod:`optnoise.design.composed`).
    profile, rdp, rho, alphas : optional
        The budget of ``privacy="profile"`` (``[(eps, delta), ...]``), ``"rdp"``
        (``[(alpha, eps_alpha), ...]``) or ``"zcdp"`` (``rho``, optional grid
        ``alphas``), held as :attr:`budget` (:class:`optnoise.privacy.budget.Budget`).
    """

    def __init__(
        self,
        *,
        n: int | None = None,
        eps: float | None = None,
        delta: float | None = None,
        neighborhood: Neighborhood | None = None,
        metric: str | Any = "er",
        privacy: str | None = None,
        objective: str = "distortion",
        max_distortion: float | None = None,
        shape: tuple[int, ...] | None = None,
        release: str = "modulo",
        profile: Any = None,
        rdp: Any = None,
        rho: float | None = None,
        alphas: Any = None,
        compositions: int | None = None,
        discretization: float | None = None,
        support: int | None = None,
        sensitivity: float | None = None,
        resolution: float | None = None,
    ) -> None:
        grid.refuse_grid_args(release, sensitivity=sensitivity, resolution=resolution)
        if release in HOOKS:
            return HOOKS[release].setup(self, **{k: v for k, v in locals().items() if k not in ("self", "__class__")})
        if n is None or support is not None:
            why = f"n is required with release={shown(release)}" if n is None else "support needs release='additive'"
            raise ValueError(f"{why}; release='additive' (q + eta on all integers) takes support and no n")
        self.n, self.support = check_int("n", n, minimum=1), None
        privacy = "pdp" if privacy is None else privacy  # release="additive" defaults to "dp"
        composed = check_composed_args(privacy, compositions, discretization, objective, eps, delta, max_distortion)
        self.compositions, self.discretization = composed["compositions"], composed["discretization"]
        budget_fields = {"profile": profile, "rdp": rdp, "rho": rho, "alphas": alphas}
        self.budget: Budget | None = None
        self.eps: float | None = None  # None exactly for the budget notions
        if privacy in BUDGET_NOTIONS:
            if eps is not None or delta is not None or objective != "distortion":
                raise ValueError(
                    f"privacy={privacy!r} takes its budget instead of eps/delta, with objective='distortion'"
                )
            if release != "modulo":
                raise ValueError(f"release must be 'modulo' with privacy={shown(privacy)}; got {shown(release)}")
        else:
            given = [k for k, v in budget_fields.items() if v is not None]
            if given:
                raise ValueError(f"{given[0]} applies only with privacy in {', '.join(BUDGET_NOTIONS)}")
            self.eps = None if objective == "epsilon" else check_eps(eps, maximum=MAX_EPS, why=MAX_EPS_REASON)
        if not isinstance(neighborhood, Neighborhood):
            raise ValueError(f"neighborhood must be a Neighborhood, e.g. Neighborhood.bd(3); got {shown(neighborhood)}")
        self.neighborhood = neighborhood
        self.privacy = check_choice("privacy", privacy, DESIGN_NOTIONS)
        self.objective = check_choice("objective", objective, OBJECTIVES)
        self.release = check_choice("release", release, RELEASES)
        dim = neighborhood.dim
        if self.release == "clamp":
            if dim != 1 or shape is not None:
                raise ValueError("release='clamp' is for scalar queries (no shape, scalar shifts)")
            if self.privacy == "pdp-kadam":
                raise ValueError("privacy for release='clamp' must be one of 'dp', 'pdp' ('pdp-kadam' is modulo only)")
        if shape is not None:
            try:
                shape = tuple(check_int("shape", s, minimum=1) for s in shape)
            except TypeError:
                raise ValueError(f"shape must be a tuple (n+1,)*d; got {shown(shape)}") from None
            if not shape or any(s != self.n + 1 for s in shape):
                raise ValueError(f"shape must be (n+1,)*d = ({self.n + 1},)*d; got {shape}")
            if len(shape) != dim:
                raise ValueError(f"shape has {len(shape)} coordinates but the neighbourhood's shifts have {dim}")
        # sizes are compared as exact Python integers before anything of that size is allocated
        if (self.n + 1) ** dim > MAX_SIZE:
            raise ValueError(
                f"n is too large: (n+1)^d = {(self.n + 1) ** dim if dim < 64 else 'more than 2^64'} noise values "
                f"exceeds the limit {MAX_SIZE}"
            )
        self.shifts = neighborhood.resolve(self.n, dim)
        self.shape = (2 * self.n + 1,) if self.release == "clamp" else (self.n + 1,) * dim
        # delta is None exactly when it is what is minimised, max_distortion exactly when it is not.
        self.delta: float | None
        self.max_distortion: float | None
        if self.privacy in BUDGET_NOTIONS:
            # every budget has at least one row per (shift, eta): refuse an oversized design before shift_index()
            K, N = len(self.shifts), self.size
            check_model_size(
                {"rows": 1 + K * N, "cols": N, "integers": 0, "nonzeros": N + 2 * K * N},
                what=f"the {self.privacy!r} model of this design",
            )
            self.budget = Budget.create(privacy, n=self.n, shifts=self.shifts, idx=self.shift_index(), **budget_fields)
            self.delta = self.max_distortion = None
        elif self.objective == "distortion":
            self.delta = 0.0 if delta is None else check_delta(delta)
            if max_distortion is not None:
                raise ValueError("max_distortion applies only with objective='delta'")
            self.max_distortion = None
        else:  # objective "delta", or "epsilon" (privacy="composed": its delta is checked)
            if delta is not None and self.objective == "delta":
                raise ValueError("delta must be left unset with objective='delta' (it is what is minimised)")
            if max_distortion is None:
                raise ValueError(f"max_distortion is required with objective={self.objective!r}")
            self.delta = composed["delta"]
            self.max_distortion = check_positive("max_distortion", max_distortion, allow_zero=True)
        if self.release == "clamp":
            # the answer pairs are listed only once a bound on the model they make has passed the limits
            bound = (1 if neighborhood.directed else 2) * len(neighborhood.raw) * (self.n + 1)
            notion, delta_obj = lp_notion(self.privacy), self.objective == "delta"
            check_model_size(
                clamp_model_size(self.n, bound, privacy=notion, pure=self.is_pure, delta_objective=delta_obj),
                what=f"the {self.privacy!r} model of this design",
            )
            self.pairs = neighbour_pairs(self.n, neighborhood)
        if isinstance(metric, str) and self.release == "clamp":
            self.metric = check_choice("metric", metric, CLAMP_METRICS)
            e = np.arange(-self.n, self.n + 1)  # the released error y - q
            self.cost = {"er": (e != 0).astype(float), "mse": e**2.0, "mae": np.abs(e).astype(float)}[metric]
        elif isinstance(metric, str):
            self.metric = check_choice("metric", metric, METRICS)
            self.cost = cost_vector(metric, self.n, dim)
        else:
            try:
                cost = real_array("metric", metric)
            except ValueError:
                raise ValueError(f"metric must be one of {', '.join(METRICS)} or a cost array") from None
            if cost.size != self.size:
                raise ValueError(
                    f"metric cost array must have {self.size} entries (shape {self.shape}); got {cost.size}"
                )
            if not np.all(np.isfinite(cost)):
                raise ValueError("metric cost array must be finite")
            if np.max(np.abs(cost)) > MAX_COST:
                raise ValueError(
                    f"metric cost array entries must have magnitude <= {MAX_COST:g} (solvers treat ~1e20 as "
                    f"infinite); got {float(np.max(np.abs(cost))):g}. Rescale it: multiplying every cost by one "
                    "positive factor leaves the optimal PMF unchanged"
                )
            self.metric = "custom"
            self.cost = cost.reshape(self.shape)
        # The model's size follows from N, the shifts and the notion; an oversized one is refused here,
        # before any (K, N) array is allocated.
        check_model_size(self.model_size(), what=f"the {self.privacy!r} model of this design")

    # ------------------------------------------------------------------ helpers
    @property
    def dim(self) -> int:
        return len(self.shape) if self.shape else 1  # release="additive": scalar, no shape

    @property
    def size(self) -> int:
        """Number of noise values: ``(n+1)^d``, or ``2n+1`` for ``release="clamp"``."""
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

    def model_size(self, formulation: str = "hull") -> dict[str, int]:
        """Rows, columns, integer columns and nonzeros of :meth:`build_model`, computed without building it.

        Exact (a test compares it with the built model); the constructor checks
        it against the documented limits (:func:`optnoise.engine.validation.check_model_size`).
        """
        check_choice("formulation", formulation, ("hull", "bigm"))
        if self.release in HOOKS:
            return HOOKS[self.release].model_size(self, self.support or additive.initial_support(self))
        if self.release == "clamp":
            notion, dobj, form = lp_notion(self.privacy), self.objective == "delta", formulation
            return clamp_model_size(
                self.n, len(self.pairs), privacy=notion, pure=self.is_pure, delta_objective=dobj, formulation=form
            )
        N, K = self.size, len(self.shifts)
        rows, cols, nnz, ints = 1, N, N, 0  # f and (13b)
        if self.budget is not None and not self.budget.is_conic:
            for _, delta in self.budget.profile or ():  # optnoise.privacy.profile.add_profile_rows
                if delta == 0.0:
                    rows, nnz = rows + K * N, nnz + 2 * K * N
                else:
                    rows, cols, nnz = rows + K * N + K, cols + K * N, nnz + 4 * K * N
            return {"rows": rows, "cols": cols, "integers": 0, "nonzeros": nnz}
        if self.budget is not None:
            # conic (optnoise.privacy.renyi): an estimate, about two cone entries per (order, shift, eta)
            J = len(self.budget.orders()) + 1
            return {
                "rows": rows + 2 * J * K * N,
                "cols": cols + 2 * J * K * N,
                "integers": 0,
                "nonzeros": 6 * J * K * N,
            }
        t = 0
        if self.objective == "delta":
            t = 1
            rows, cols, nnz = rows + 1, cols + 1, nnz + N  # t and the distortion cap (15b)

        def budget(R: int, C: int) -> tuple[int, int]:
            return R, R * C + R * t  # rows, nonzeros of budget_rows

        if self.is_pure:
            rows, nnz = rows + K * N, nnz + 2 * K * N
        elif self.privacy in ("dp", COMPOSED):  # a composed design solves (eps, delta) LPs of this size
            br, bn = budget(K, N)
            rows, cols, nnz = rows + K * N + br, cols + K * N, nnz + 3 * K * N + bn
        else:
            if self.privacy == "pdp" and formulation == "hull":
                br, bn = budget(K, N)
                rows, cols, nnz, ints = rows + 3 * K * N + br, cols + 2 * K * N, nnz + 8 * K * N + bn, K * N
            else:
                G = 1 if self.privacy == "pdp-kadam" else K
                br, bn = budget(G, N)
                rows += 3 * G * N + 2 * K * N + br
                cols += 2 * G * N
                nnz += 8 * G * N + 6 * K * N + bn
                ints = G * N
            if self._reflection_pair() is not None:
                rows, nnz = rows + 1, nnz + 2
        return {"rows": rows, "cols": cols, "integers": ints, "nonzeros": nnz}

    def shift_list(self) -> list[Any]:
        """The resolved shifts as plain data: ints for scalar queries, lists for vector ones.

        For ``release="clamp"`` these are the signed differences ``q - q'`` of the
        answer pairs (nothing wraps), e.g. ``[-1, 1]`` for a symmetric BD(1).
        """
        if self.release == "clamp":
            return np.unique(self.pairs[:, 0] - self.pairs[:, 1]).tolist()
        return self.shifts.tolist() if self.dim > 1 else self.shifts.ravel().tolist()

    def spec(self) -> dict[str, Any]:
        """The problem as plain data (JSON-ready)."""
        if self.release in HOOKS:
            return HOOKS[self.release].spec(self)
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
            **({"release": self.release} if self.release != "modulo" else {}),
            **(self.budget.spec() if self.budget else {}),
            **composed_spec(self),
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
            if spec.get("release") == grid.GRID:
                return cls(release=grid.GRID, **grid.from_spec(spec))
            nb = Neighborhood.from_dict(spec["neighborhood"])
            metric: Any = spec["metric"]
            if metric == "custom":
                if spec.get("cost") is None:
                    raise ValueError("spec has metric 'custom' but no 'cost' array")
                metric = np.asarray(spec["cost"], dtype=float)
            objective = spec.get("objective", "distortion")
            kw: dict[str, Any] = {k: spec[k] for k in BUDGET_FIELD_NAMES if spec.get(k) is not None}
            kw.update({k: spec[k] for k in ("max_distortion", "support") if spec.get(k)})
            if spec["privacy"] in BUDGET_NOTIONS:
                kw["eps"] = spec.get("eps")
            elif objective == "delta":
                kw["max_distortion"] = spec["max_distortion"]
            else:
                kw["delta"] = spec["delta"]
            release = spec.get("release", "modulo")
            shape = spec.get("shape") if release == "modulo" else None
            if "eps" not in kw:
                kw["eps"] = spec["eps"]
            design = cls(
                n=spec["n"] if spec.get("release") != additive.ADDITIVE else None,
                neighborhood=nb,
                metric=metric,
                privacy=spec["privacy"],
                objective=objective,
                shape=tuple(shape) if shape else None,
                release=release,
                **kw,
            )
        except KeyError as exc:
            raise ValueError(f"spec lacks the field {shown(exc.args[0])}") from None
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
        return problem_key(self.spec(), solve_options)

    def __repr__(self) -> str:
        if self.release in HOOKS:
            return HOOKS[self.release].describe(self)
        d = f"delta={self.delta}" if self.objective == "distortion" else f"max_distortion={self.max_distortion}"
        budget = self.budget.describe() if self.budget else f"eps={self.eps}, {d}"
        if self.privacy == COMPOSED:
            budget = ", ".join(f"{k}={v}" for k, v in composed_spec(self, describe=True).items())
        return (
            f"NoiseDesign(n={self.n}, {budget}, neighborhood={self.neighborhood.describe()}, "
            f"metric={self.metric!r}, privacy={self.privacy!r}, objective={self.objective!r}"
            + (f", release={self.release!r})" if self.release != "modulo" else ")")
        )

    # ------------------------------------------------------------------ model
    def build_model(self, *, formulation: str = "hull") -> LinearModel:
        """The LP/MILP of this design as a solver-neutral sparse model.

        Variable blocks: ``f`` (the PMF, flattened C-order), then per notion
        ``s`` (DP excess), ``y``/``u`` (PDP leak mass and indicators) and ``t``
        (delta, for ``objective="delta"``).

        ``formulation`` selects the ``"pdp"`` MILP: ``"hull"`` (default; the
        convex hull of each indicator's disjunction, see
        :mod:`optnoise.design.rows`) or
        ``"bigm"`` (the paper's linearisation applied per shift, the benchmark
        baseline). Both have the same optimum; other notions ignore it.
        """
        check_choice("formulation", formulation, ("hull", "bigm"))
        if self.privacy == COMPOSED:
            raise ValueError(NO_MODEL)
        if self.release in HOOKS:  # at the given support, or the first one grown from
            return HOOKS[self.release].build(self, self.support or additive.initial_support(self))[0]
        if self.release == "clamp":
            assert self.eps is not None  # release="clamp" excludes the budget notions
            return clamp_model(
                n=self.n,
                eps=self.eps,
                pairs=self.pairs,
                cost=self.cost,
                privacy=self.privacy,
                delta=self.delta,
                objective=self.objective,
                max_distortion=self.max_distortion,
                formulation=formulation,
            )
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
        if self.budget is not None:
            self.budget.add_rows(mb, f, idx)
            return mb.build()
        assert self.eps is not None  # every notion without a Budget has one (eps, delta)
        notion = "pure" if self.is_pure else "dp" if self.privacy == "dp" else "pdp"
        # one entry per (shift, eta): f(eta) against f(eta + mu), budgeted per shift
        add_pair_rows(
            mb,
            np.tile(f, K),
            f[idx.ravel()],
            np.repeat(np.arange(K), N),
            eps=self.eps,
            notion=notion,
            delta=None if (t is not None or notion == "pure") else self.delta,
            t=None if t is None else int(t[0]),
            formulation="bigm" if self.privacy == "pdp-kadam" else formulation,
            shared=np.tile(np.arange(N), K) if self.privacy == "pdp-kadam" else None,
        )
        if notion == "pdp":
            pair = self._reflection_pair()
            if pair is not None:
                # The reflection eta -> -eta maps feasible PMFs to feasible PMFs with the same
                # distortion, so one of every mirrored pair of optima has f(e1) >= f(-e1).
                mb.add_row(f[list(pair)], [1.0, -1.0], upper=0.0)
        return mb.build()

    def _reflection_pair(self) -> tuple[int, int] | None:
        """Flat indices ``(-e1, e1)`` when shifts and costs are symmetric (:func:`~.metrics.reflection_pair`)."""
        return reflection_pair(self.shifts, self.cost, self.n)

    def pair_layout(self) -> PairLayout:
        """How :mod:`optnoise.deploy.certify` checks, repairs and samples this design's PMF."""
        if self.release in HOOKS:
            raise ValueError(f"release={self.release!r} designs are certified by result.certify() (deploy/additive.py)")

        def resolve(delta: float, solver: str) -> np.ndarray | None:
            res = self.replace(objective="distortion", delta=delta, max_distortion=None).solve(solver=solver)
            # an "unverified" PMF may still certify: the exact check decides
            return None if res.status not in ("optimal", "unverified") or res.pmf is None else res.pmf

        if self.release == "clamp":  # certified as its induced matrix, sampled row by row
            e = np.arange(self.n + 1)[None, :] - np.arange(self.n + 1)[:, None]
            rows = (self.cost[e + self.n] / (self.n + 1)).reshape(1, -1)
            return matrix_layout(
                self.pairs,
                np.arange(self.n + 1),
                rows,
                self.privacy,
                resolve,
                embed=lambda pmf: clamp_matrix(pmf, self.n).ravel(),
            )
        return pmf_layout(self.shift_index(), self.cost, self.privacy, resolve)

    def clamp_evaluation(self, pmf: np.ndarray, pure: bool | None = None) -> tuple[float, dict, dict]:
        """Distortion, achieved deltas and released errors of a clamped PMF (:func:`~.clamp.clamp_evaluation`)."""
        return clamp_evaluation(self, pmf, pure)

    def to_mps(self, path: str | os.PathLike) -> Path:
        """Write this design's model as an MPS file, for any external solver."""
        return write_mps(self.build_model(), path)

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
        conic_solver: str = "clarabel",
        canonical: bool = False,
        concurrent: bool = True,
    ) -> DesignResult:
        """Build and solve the design; re-verify the PMF from scratch.

        Parameters
        ----------
        solver : {"auto", "highs", "scip", "cbc", "gurobi", "cplex", "cvxpy"}
            ``"auto"`` (default) races HiGHS and SCIP on MILPs and reports the winner in
            :attr:`DesignResult.backend` (see :func:`optnoise.engine.solve.solve_model`). Degenerate
            designs have many optimal PMFs and the two backends may return different ones: use
            ``"highs"`` (or ``canonical=True``) where the returned PMF must not vary between runs.
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
            A cached entry is used only if its stored spec equals this design's
            and its PMF passes re-verification; otherwise it is solved again.
        formulation : {"hull", "bigm"}
            MILP form for ``"pdp"`` (see :meth:`build_model`).
        options : dict, optional
            Raw HiGHS options (``solver="highs"``, or HiGHS' side of ``"auto"``), e.g.
            ``{"mip_allow_restart": False}``, which helps some hard ``pdp``
            instances (``benchmarks/RESULTS.md``). Options that loosen a
            tolerance beyond what re-verification absorbs are refused
            (:data:`optnoise.engine.highs.HIGHS_OPTION_LIMITS`).
        concurrent : bool
            ``solver="auto"`` only: ``False`` solves in this process alone (sweep workers do,
            so that parallel sweeps do not start more processes than cores).
        conic_solver : {"clarabel", "scs"}
            ``rdp``/``zcdp`` designs (not cached): ``solver="auto"`` proves its gap with
            a certified bound (:mod:`optnoise.privacy.renyi_solve`); ``"cvxpy"`` is the
            conic cross-check with this solver, its point bounded by tangent cuts.
        canonical : bool
            Return the canonical optimum instead of the solver's choice among
            tied optima: further lexicographic stages with the same backend
            keep the objective (distortion, or delta for ``objective="delta"``)
            at its first-stage optimum, with no slack added, so to the backend's
            feasibility tolerance (:data:`CANONICAL_TOL`, 1e-9 relative to
            ``max(1, |objective|)``; in practice ~1e-15), and minimise the sorted PMF, largest mass first
            (:func:`optnoise.design.canonical.lexicographic_minimax`, which explains the
            choice). It is unique for the LP notions; in Theorem 3(c)'s last
            segment it is the paper's (40)-(41). Costs up to ``(n+1)^d - 1``
            extra solves. ``DesignResult.canonical`` says whether it succeeded;
            when a stage fails or times out, the first-stage optimum is returned
            with ``canonical = False`` and the reason in ``message``. The
            reported objective is re-computed from the returned PMF;
            ``backend_objective`` stays the first stage's.

        Notes
        -----
        Statuses mean what they say. A PMF that fails re-verification is
        ``"unverified"`` (:attr:`DesignResult.message` says why), never
        ``"optimal"``. With the distortion objective the uniform PMF is always
        feasible, so a solver's ``"infeasible"`` is a numerical artefact: HiGHS
        is then re-run robustly (:data:`ROBUST_RETRIES`: presolve off, then
        tighter tolerances and another scaling), as it is after ``"unverified"``
        or ``"error"``; an ``"infeasible"`` that survives is reported as
        ``"error"``, never as infeasible.
        """
        if self.release in HOOKS:
            return HOOKS[self.release].solve(self, **{k: v for k, v in locals().items() if k != "self"})
        return pipeline.solve_noise(
            self,
            solver,
            time_limit,
            mip_gap=mip_gap,
            verbose=verbose,
            cache=cache,
            formulation=formulation,
            options=options,
            conic_solver=conic_solver,
            canonical=canonical,
            concurrent=concurrent,
        )

    def uniform_is_feasible(self) -> bool:
        """True when the uniform PMF is feasible, so that ``"infeasible"`` can only be a solver artefact.

        The uniform PMF has delta 0 under every notion at every eps; it meets the
        distortion objective's constraints always, and the delta objective's cap
        when the mean cost is within it.
        """
        if self.objective == "distortion":
            return True
        return float(np.mean(self.cost)) <= float(self.max_distortion or 0.0)
