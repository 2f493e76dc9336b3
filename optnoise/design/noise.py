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
:mod:`optnoise.privacy.verification`: ``achieved <= delta * (1 + 1e-6)`` (purely relative,
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

from optnoise.design.clamp import clamp_evaluation
from optnoise.design.composed import NO_MODEL
from optnoise.design.layout import PairLayout
from optnoise.design.metrics import reflection_pair
from optnoise.design.releases import Release, get_release, release_names
from optnoise.design.result import DesignResult
from optnoise.engine.cache import problem_key
from optnoise.engine.highs import write_mps
from optnoise.engine.model import LinearModel
from optnoise.engine.tolerance import MIP_REL_GAP
from optnoise.engine.validation import check_choice, shown
from optnoise.privacy.budget import Budget
from optnoise.privacy.neighborhood import Neighborhood
from optnoise.privacy.notions import Notion, budget_fields, get_notion, notion_names

__all__ = ["NoiseDesign", "OBJECTIVES", "RELEASES", "DESIGN_NOTIONS"]

#: What to minimise (``"epsilon"``: the composed eps of ``privacy="composed"``, under ``max_distortion``).
OBJECTIVES = ("distortion", "delta", "epsilon")
#: How noise is added: ``q + eta (mod n+1)``, ``clip(q + eta, 0, n)`` with eta on ``{-n..n}``, or ``q + eta`` on Z
#: (the built-in releases; :func:`optnoise.design.releases.release_names` lists every registered one).
RELEASES = release_names()
#: Every built-in value of ``privacy=`` (:func:`optnoise.privacy.notions.notion_names` lists every registered one).
DESIGN_NOTIONS = notion_names()
#: Keywords that only some releases take (each release lists its own in ``Release.fields``).
RELEASE_FIELDS = ("support", "sensitivity", "resolution", "gap")


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
        ``"continuous"``: ``q + X`` for a real query, over all densities, with ``sensitivity``, ``resolution``
        and ``gap`` (:mod:`optnoise.design.continuous`).
    compositions, discretization : optional
        ``privacy="composed"``: k, and the accounting grid h (default 1e-4) of the k-fold guarantee;
        ``objective="epsilon"`` minimises the composed eps (:mod:`optnoise.design.composed`).
    profile, rdp, rho, alphas : optional
        The budget of ``privacy="profile"`` (``[(eps, delta), ...]``), ``"rdp"``
        (``[(alpha, eps_alpha), ...]``) or ``"zcdp"`` (``rho``, optional grid
        ``alphas``), held as :attr:`budget` (:class:`optnoise.privacy.budget.Budget`).
    """

    # set by the release's setup (optnoise.design.releases)
    n: int  # None for release="additive" (no range)
    support: int | None
    eps: float | None
    delta: float | None
    max_distortion: float | None
    neighborhood: Neighborhood
    privacy: str
    notion: Notion
    objective: str
    release: str
    rel: Release
    shifts: np.ndarray
    shape: tuple[int, ...]
    metric: str
    cost: np.ndarray
    budget: Budget | None
    compositions: Any
    discretization: Any
    pairs: np.ndarray

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
        gap: float | None = None,
    ) -> None:
        kw = {k: v for k, v in locals().items() if k not in ("self", "__class__", "release")}
        # the release and the notion are looked up once; everything below reads them
        self.rel = get_release(release)
        for name in RELEASE_FIELDS:  # a keyword of another release is refused by name, never ignored
            if kw[name] is not None and name not in self.rel.fields:
                takes = [r for r in release_names() if name in get_release(r).fields]
                raise ValueError(f"{name} applies only with release in {', '.join(takes)}; got {shown(release)}")
        self.rel.setup(self, **kw)
        self.notion = get_notion(self.privacy)

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
        return self.rel.model_size(self, formulation)

    def shift_list(self) -> list[Any]:
        """The resolved shifts as plain data: ints for scalar queries, lists for vector ones.

        For ``release="clamp"`` these are the signed differences ``q - q'`` of the
        answer pairs (nothing wraps), e.g. ``[-1, 1]`` for a symmetric BD(1).
        """
        return self.rel.shift_list(self)

    def spec(self) -> dict[str, Any]:
        """The problem as plain data (JSON-ready)."""
        return self.rel.spec(self)

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> NoiseDesign:
        """Rebuild a design from :meth:`spec` output (fully re-validated).

        Raises ``ValueError`` when a field is missing or invalid, or when the
        stored ``shifts`` differ from what the neighbourhood resolves to.
        """
        if not isinstance(spec, dict):
            raise ValueError("spec must be a mapping (NoiseDesign.spec() output)")
        try:
            own = get_release(spec.get("release", "modulo")).spec_kwargs(spec)
            if own is not None:  # a release that rebuilds its keywords itself
                return cls(release=spec["release"], **own)
            nb = Neighborhood.from_dict(spec["neighborhood"])
            metric: Any = spec["metric"]
            if metric == "custom":
                if spec.get("cost") is None:
                    raise ValueError("spec has metric 'custom' but no 'cost' array")
                metric = np.asarray(spec["cost"], dtype=float)
            objective = spec.get("objective", "distortion")
            kw: dict[str, Any] = {f.name: spec[f.name] for f in budget_fields() if spec.get(f.name) is not None}
            kw.update({k: spec[k] for k in ("max_distortion", "support") if spec.get(k)})
            if not get_notion(spec["privacy"]).takes_eps:
                kw["eps"] = spec.get("eps")
            elif objective == "delta":
                kw["max_distortion"] = spec["max_distortion"]
            else:
                kw["delta"] = spec["delta"]
            release = spec.get("release", "modulo")
            rel = get_release(release)
            if "eps" not in kw:
                kw["eps"] = spec["eps"]
            design = cls(
                n=spec["n"] if rel.takes_n else None,
                neighborhood=nb,
                metric=metric,
                privacy=spec["privacy"],
                objective=objective,
                shape=rel.spec_shape(spec),
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
        return self.rel.describe(self)

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
        if self.notion.composed:
            raise ValueError(NO_MODEL)
        return self.rel.build(self, formulation)

    def _reflection_pair(self) -> tuple[int, int] | None:
        """Flat indices ``(-e1, e1)`` when shifts and costs are symmetric (:func:`~.metrics.reflection_pair`)."""
        return reflection_pair(self.shifts, self.cost, self.n)

    def pair_layout(self) -> PairLayout:
        """How :mod:`optnoise.deploy.certify` checks, repairs and samples this design's PMF."""

        def resolve(delta: float, solver: str) -> np.ndarray | None:
            res = self.replace(objective="distortion", delta=delta, max_distortion=None).solve(solver=solver)
            # an "unverified" PMF may still certify: the exact check decides
            return None if res.status not in ("optimal", "unverified") or res.pmf is None else res.pmf

        return self.rel.pair_layout(self, resolve)

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
        return self.rel.solve(self, **{k: v for k, v in locals().items() if k != "self"})

    def uniform_is_feasible(self) -> bool:
        """True when the uniform PMF is feasible, so that ``"infeasible"`` can only be a solver artefact.

        The uniform PMF has delta 0 under every notion at every eps; it meets the
        distortion objective's constraints always, and the delta objective's cap
        when the mean cost is within it.
        """
        if self.objective == "distortion":
            return True
        return float(np.mean(self.cost)) <= float(self.max_distortion or 0.0)
