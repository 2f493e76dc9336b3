"""The results of noise and mechanism designs, and what they share.

:class:`CheckedResult` is the part every result has: a target delta, the delta
it guarantees, :meth:`~CheckedResult.verify` and the status rule of
:mod:`optnoise.privacy.verification`. :class:`DesignResult` holds a noise PMF
(:meth:`optnoise.NoiseDesign.solve`); :class:`~optnoise.design.mechanism_result.MechanismResult`
(a mechanism matrix) is built on the same parts in :mod:`optnoise.design.mechanism_result`.

Certification lives in a layer above (:mod:`optnoise.deploy`), which registers
itself here (:func:`set_certifier`), so that ``result.certify()`` works while
nothing in the design layer imports deployment code.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from optnoise.design.composed import composed_achieved, composed_spec, single_delta
from optnoise.engine.output import relative_gap
from optnoise.engine.tolerance import settle_gap
from optnoise.engine.validation import check_choice, check_pmf, shown
from optnoise.privacy import accounting
from optnoise.privacy.verification import (
    RESULT_STATUSES,
    UNVERIFIED,
    CertificationError,
    settle_status,
    within_delta,
)

if TYPE_CHECKING:
    from optnoise.design.noise import NoiseDesign

__all__ = ["Accountable", "CheckedResult", "DesignResult", "run_certifier", "set_certifier"]

#: The function behind ``result.certify()``: :func:`optnoise.deploy.certify.certify_result`, set on import.
_certifier: Callable[..., Any] | None = None


def set_certifier(certify: Callable[..., Any]) -> None:
    """Install the function that ``DesignResult.certify()`` and ``MechanismResult.certify()`` call.

    :mod:`optnoise.deploy.certify` calls this when it is imported (``import optnoise`` does).
    """
    global _certifier
    _certifier = certify


def run_certifier(result: Any, **kwargs: Any) -> Any:
    """Certify ``result`` with the installed certifier (:func:`set_certifier`)."""
    if _certifier is None:  # only when optnoise.design was imported without the optnoise package
        raise RuntimeError("certification is not available: import optnoise (it loads optnoise.deploy)")
    return _certifier(result, **kwargs)


class CheckedResult:
    """What every design result shares: its target, the delta it guarantees, ``verify()`` and its status.

    Mixed into :class:`optnoise.DesignResult` (solution ``pmf``) and
    :class:`optnoise.MechanismResult` (solution ``matrix``), so that both are
    judged by the one rule of this module. The result class names its solution
    attribute in ``_SOLUTION`` and has ``design``, ``status``, ``message``,
    ``achieved`` and ``delta_objective``.
    """

    _SOLUTION = "pmf"
    design: Any
    status: str
    message: str
    achieved: dict[str, float]
    delta_objective: float | None

    @property
    def target(self) -> float | None:
        """The delta the solution must meet: the design's, or the minimised one (``objective="delta"``)."""
        return self.design.delta if self.design.objective != "delta" else self.delta_objective

    def _objective(self) -> float | None:
        """The value the design minimised, recomputed from the solution (distortion, loss, delta or eps)."""
        if self.design.objective == "delta":
            return self.delta_objective
        if self.design.objective == "epsilon":
            return getattr(self, "eps_objective", None)
        return getattr(self, "distortion", getattr(self, "loss", None))

    def _pure_target(self) -> bool:
        """True when the target delta is 0 (pure DP): every notion is then read at one slackened eps."""
        target = self.target
        return target is not None and float(target) == 0.0

    @property
    def delta(self) -> float | None:
        """The delta this solution guarantees under the design's notion (requested or minimised)."""
        if getattr(self, self._SOLUTION) is None:
            return None
        if self.design.objective == "delta":
            return self.achieved[self.design.privacy]
        return self.design.delta

    def verify(self) -> bool:
        """True when the re-verified delta of the design's notion meets its target.

        The rule is :func:`within_delta`: ``achieved <= target * (1 + 1e-6)``, purely relative (no
        absolute slack, so a target of 0 needs exactly 0; pure eps-DP is read at the slackened eps of
        :mod:`optnoise.privacy.verification`).
        """
        if getattr(self, self._SOLUTION) is None or self.target is None:
            return False
        return within_delta(self.achieved[self.design.privacy], float(self.target))

    def _verification(self, value: float | None, cap: float | None, **names: str) -> tuple[str, str]:
        """The status the solution may keep after re-verification, and why: the delta rule of
        :func:`optnoise.privacy.verification.settle_status` (a result kind with another notion overrides it)."""
        return settle_status(
            self.status,
            self.achieved[self.design.privacy],
            self.target,
            notion=self.design.privacy,
            value=value,
            cap=cap,
            **names,
        )

    def _settle(self, value: float | None, cap: float | None, **names: str) -> None:
        """Apply the rules of :mod:`optnoise.privacy.verification`: an unmet claim becomes ``"unverified"``
        with the reason, an ``"optimal"`` without a proven gap within ``OPTIMAL_GAP`` becomes ``"feasible"``."""
        status, why = self._verification(value, cap, **names)
        if status != self.status:
            self._demote(why)
            return
        bound = getattr(self, "bound", None)
        objective = self._objective()
        if bound is not None and objective is not None:
            self.gap = relative_gap(objective, bound)
        status, why = settle_gap(self.status, getattr(self, "gap", None))
        if status != self.status:
            self.status = status
            self.message = f"{self.message}; {why}".lstrip("; ")

    def _demote(self, why: str) -> None:
        """Status ``"unverified"``, with ``why`` before the solver's own message."""
        self.status = UNVERIFIED
        self.message = why + (f"; solver said: {self.message}" if self.message else "")

    @staticmethod
    def _common_fields(data: Any, what: str) -> dict[str, Any]:
        """The checked fields every result's ``to_dict()`` has, from ``data``; ``ValueError`` names a bad one.

        Returns ``status``, ``solver``, ``solve_time``, ``model_size``, ``gap``,
        ``message``, ``backend_objective`` and ``delta`` (the stored delta).
        """
        if not isinstance(data, dict):
            raise ValueError(f"result must be a JSON object ({what}.to_dict() output)")
        for name in ("status", "solver", "model_size"):
            if name not in data:
                raise ValueError(f"result lacks the field {shown(name)}")

        def number(name: str) -> float | None:
            v = data.get(name)
            if v is None:
                return None
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ValueError(f"result field {shown(name)} must be a finite number or null; got {shown(v)}")
            return float(v)

        status = data["status"]
        if not isinstance(status, str) or status not in RESULT_STATUSES:
            raise ValueError(f"result field 'status' must be one of {', '.join(RESULT_STATUSES)}; got {shown(status)}")
        if not isinstance(data["solver"], str):
            raise ValueError(f"result field 'solver' must be a string; got {shown(data['solver'])}")
        sizes = data["model_size"]
        if not isinstance(sizes, dict) or not all(isinstance(v, int) for v in sizes.values()):
            raise ValueError("result field 'model_size' must map names to integers")
        message = data.get("message", "")
        if not isinstance(message, str):
            raise ValueError(f"result field 'message' must be a string; got {shown(message)}")
        return {
            "status": status,
            "solver": data["solver"],
            "solve_time": number("solve_time_s") or 0.0,
            "model_size": dict(sizes),
            "gap": number("gap"),
            "message": message,
            "backend_objective": number("backend_objective"),
            "delta": number("delta"),
            "bound": number("bound"),
        }


class Accountable:
    """``pld()``, ``compose(k)`` and ``plot()`` of every result kind, from the mechanism it releases.

    A subclass says what it releases (:meth:`release_pairs`: the ordered pairs of output
    distributions its neighbourhood protects, :class:`optnoise.privacy.accounting.ReleasePairs`)
    and how to draw it (:meth:`_draw`). Modulo noise releases ``(f, f(.+mu))`` per shift;
    clamped noise and general mechanisms release the rows ``(P[x], P[x'])`` of their
    matrix per ordered neighbour pair. The PLD is a dominating pair of all of them (valid
    for adaptive composition whatever pair each round uses); a directed neighbourhood
    protects its listed order only (see :mod:`optnoise.privacy.accounting`).
    """

    def release_pairs(self) -> accounting.ReleasePairs:
        """The ordered pairs of output distributions this release protects."""
        raise NotImplementedError

    def pld(self, *, discretization: float = accounting.DISCRETIZATION, shift: Any = None) -> Any:
        """dp-accounting ``PrivacyLossDistribution`` of this release (:mod:`optnoise.privacy.accounting`).

        Default: a dominating pair of every protected pair. ``shift=mu`` (modulo noise) or
        ``shift=x - x'`` (a matrix): the pairs of that one shift, its listed order and the
        reverse when the neighbourhood lists it too; its curve never exceeds the default's.
        Warns (:class:`~optnoise.privacy.accounting.InfiniteLossWarning`) on mass of
        infinite privacy loss.
        """
        return accounting.result_pld(None, None, discretization, shift, pairs=self.release_pairs())

    def compose(self, k: int, *, discretization: float = accounting.DISCRETIZATION) -> accounting.Composition:
        """k-fold adaptive composition: an object with ``.epsilon(delta)`` and ``.delta(eps)``.

        ``k`` is an integer in ``1..MAX_COMPOSITIONS`` (:data:`optnoise.privacy.accounting.MAX_COMPOSITIONS`).
        """
        return accounting.compose_pairs(self.release_pairs(), k, discretization=discretization)

    def plot(self, *, baseline: Any = None, eps: Any = None, ax: Any = None, label: str | None = None) -> Any:
        """Draw the release (noise PMF or matrix) and its privacy profile ``delta(eps)``.

        See :func:`optnoise.plotting.designs.plot_design` (modulo noise) and
        :func:`optnoise.plotting.designs.plot_mechanism` (clamped noise, matrices).
        """
        return self._draw(baseline=baseline, eps=eps, axes=ax, label=label)

    def _draw(self, *, baseline: Any, eps: Any, axes: Any, label: str | None) -> Any:
        raise NotImplementedError


@dataclass
class DesignResult(CheckedResult, Accountable):
    """The outcome of :meth:`NoiseDesign.solve`.

    Attributes
    ----------
    pmf : ndarray or None
        The noise PMF, shape ``(n+1,)`` or ``(n+1,)*d``; ``None`` without a solution.
    status : str
        ``"optimal"``, ``"feasible"`` (re-verified, optimality not proven: see ``gap``),
        ``"infeasible"``, ``"time_limit"``, ``"unbounded"``, ``"error"`` or ``"unverified"``:
        the solver claimed a solution whose PMF fails re-verification
        (:mod:`optnoise.privacy.verification`); ``message`` says why. ``"optimal"`` always
        implies :meth:`verify` and a proven gap within ``OPTIMAL_GAP``.
    message : str
        The solver's raw status, and why a status was changed or a re-solve run.
    distortion : float or None
        ``sum_eta rho_eta f(eta)`` under the design's metric.
    achieved : dict
        ``{"pdp", "pdp-kadam", "dp"}``: delta of the returned PMF at the design's
        eps, recomputed from the PMF alone (PDP indicators with the relative
        eps slack of :func:`optnoise.privacy.verification.pdp_rtol`).
    actual : dict
        Errors of the released answer under the modulo wrap-around
        (:func:`modulo_errors`), or of the clamped release
        (:func:`optnoise.design.matrix.matrix_errors`; ``achieved`` then has
        ``"dp"`` and ``"pdp"`` of the induced matrix).
    solve_time : float
        Seconds in the solver.
    model_size : dict
        Rows, columns, integers and nonzeros of the model.
    bound : float or None
        A proven lower bound on the objective (distortion, or delta for ``objective="delta"``):
        a MILP solver's dual bound, an LP's weak-duality bound from its row multipliers
        (:meth:`optnoise.engine.model.LinearModel.dual_bound`), or for ``rdp``/``zcdp`` the
        certified Lagrangian bound of :mod:`optnoise.privacy.renyi_problem`.
    gap : float or None
        Relative gap ``(objective - bound) / objective`` of the returned solution; ``"optimal"``
        needs it within :data:`optnoise.engine.tolerance.OPTIMAL_GAP`.
    delta_objective : float or None
        The minimised delta as the solver reports it (``objective="delta"``).
    backend_objective : float or None
        The objective as the chosen backend reported it, before the HiGHS
        refinement that non-HiGHS solutions get (see :func:`optnoise.engine.highs.refine_with_highs`);
        with ``canonical=True``, the first stage's.
    canonical : bool or None
        ``None`` unless the canonical optimum was requested; then ``True`` when
        the PMF is the canonical optimum, ``False`` when a canonical stage failed
        and the first-stage optimum is returned (reason in ``message``).
    eps_objective : float or None
        ``privacy="composed"`` with ``objective="epsilon"``: the least composed eps found, the
        eps the result guarantees at the design's delta.
    bound_method : str
        ``privacy="composed"``: the method that proved ``bound``, ``"tradeoff"``
        (:mod:`optnoise.design.composed_tradeoff`) or ``"lp"``; ``""`` otherwise.

    Composed designs (``privacy="composed"``, :mod:`optnoise.design.composed`): ``achieved``
    holds ``"composed"`` (delta at eps of the k-fold composition by the design's accounting,
    ``compose(k, discretization=design.discretization)``; the exact hockey stick at k = 1),
    ``"composed_eps"`` (that accounting's eps at the design's delta) and ``"dp"`` (the exact
    single-release delta at eps); :meth:`verify` judges ``"composed"`` against delta by the
    tolerance rule, and, for ``objective="epsilon"``, the distortion against ``max_distortion``.
    Status ``"optimal"`` only with a proof (k = 1), else ``"feasible"`` with ``bound`` and ``gap``.
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
    backend: str = ""
    bound: float | None = None
    dual: np.ndarray | None = field(default=None, repr=False, compare=False)
    eps_objective: float | None = None
    bound_method: str = ""

    def __post_init__(self) -> None:
        self.backend = self.backend or self.solver
        check_choice("status", self.status, RESULT_STATUSES)
        if self.pmf is None:
            return
        d = self.design
        self.pmf = check_pmf("pmf", self.pmf, atol=1e-6)
        if self.pmf.size != d.size:
            raise ValueError(f"pmf must have {d.size} entries (shape {d.shape}); got {self.pmf.size}")
        self.pmf = self.pmf.reshape(d.shape)
        if d.notion.composed:
            self.distortion, self.actual = d.rel.errors(d, self.pmf)
            eps = d.eps if d.objective != "epsilon" else self.eps_objective
            self.achieved = composed_achieved(d, self.pmf, eps)
            self._settle(self.distortion, float(d.max_distortion or 0.0) if d.objective == "epsilon" else None)
            return
        if d.budget is not None:
            self.distortion, self.actual = d.rel.errors(d, self.pmf)
            self.achieved = d.budget.achieved(self.pmf, d.shifts)
        else:
            assert d.eps is not None  # a design without a budget has one eps
            self.distortion, self.achieved, self.actual = d.rel.evaluate(d, self.pmf, d.eps, self._pure_target())
            # a registered notion that solves another's rows is judged by that notion's delta
            self.achieved.setdefault(d.privacy, self.achieved.get(d.notion.lp, math.nan))
        # one place decides whether a claimed solution may keep its status (optnoise.privacy.verification)
        self._settle(self.distortion, float(d.max_distortion or 0.0) if d.objective == "delta" else None)

    def _verification(self, value: float | None, cap: float | None, **names: str) -> tuple[str, str]:
        """A budget (profile, rdp, zcdp) has no single target delta: its own re-verification decides
        (:meth:`optnoise.privacy.budget.Budget.satisfied`); every other notion, the delta rule."""
        d = self.design
        if d.budget is None:
            return super()._verification(value, cap, **names)
        if self.status in ("optimal", "feasible", "time_limit") and not d.budget.satisfied(self.achieved):
            return UNVERIFIED, (
                f"re-verification failed: the PMF does not meet its {d.privacy} budget ({d.budget.describe()})"
            )
        return self.status, ""

    def verify(self) -> bool:
        """True when the re-verified delta of the design's notion meets its target.

        The rule is :func:`optnoise.privacy.verification.within_delta`:
        ``achieved <= target * (1 + 1e-6)`` (purely relative); a budget notion
        (profile, rdp, zcdp) is judged by :meth:`optnoise.privacy.budget.Budget.satisfied`.
        """
        if self.pmf is not None and self.design.budget is not None:
            return bool(self.design.budget.satisfied(self.achieved))
        return super().verify()

    def release_pairs(self) -> accounting.ReleasePairs:
        """Modulo noise: ``(f, f(.+mu))`` per shift; clamped noise: the rows of its matrix per answer pair."""
        pmf, d = self._require_pmf(), self.design
        return d.rel.release_pairs(d, pmf)

    def _draw(self, *, baseline: Any, eps: Any, axes: Any, label: str | None) -> Any:
        d, f = self.design, self._require_pmf()
        kw = {"eps": eps, "axes": axes, "label": label or f"optimal ({d.privacy}, {d.metric})"}
        return d.rel.draw(d, f, baseline, **kw)

    def _require_pmf(self) -> np.ndarray:
        if self.pmf is None:
            raise ValueError(f"this result has no PMF (status {shown(self.status)})")
        return self.pmf

    def certify(self, **kwargs: Any) -> Any:
        """Exact certificate and exact sampler for this PMF; see :func:`optnoise.deploy.certify.certify_result`.

        A composed design is certified as its single release, and the composed guarantee of the
        certified weights is recomputed (:func:`optnoise.design.composed.certify_composed`).
        """
        if self.design.notion.composed:
            return self._certify_composed(**kwargs)
        return run_certifier(self, **kwargs)

    def _certify_composed(self, **kwargs: Any) -> Any:
        """Certify a composed result: its single release exactly, and the composed guarantee that implies.

        The exact weights are certified (:func:`optnoise.deploy.certify.certify_result`) for the
        single-release ``"dp"`` problem at eps and ``delta1`` = the PMF's own single-release delta with
        1e-3 relative headroom for the rounding (at k = 1: the design's delta). The k-fold composition
        of the certified weights is then recomputed by the design's accounting; if it no longer meets
        (eps, delta), ``CertificationError`` is raised. The returned design states the single-release
        problem; ``cd.composed`` (the design file's ``composed`` block, :mod:`optnoise.deploy.composed`)
        states the composed guarantee (``compositions``, ``eps``, ``delta``, ``discretization`` and the
        certified weights' composed delta), which ``cd.verify()`` and every load recompute. A clamped
        design is certified as its induced matrix, and its composition accounted from that matrix.
        """
        d, pmf = self.design, self._require_pmf()
        if self.status not in ("optimal", "feasible"):
            raise CertificationError(f"cannot certify a composed result with status {self.status!r}")
        eps, k, delta = float(d.eps or self.eps_objective or 0.0), int(d.compositions), float(d.delta or 0.0)
        delta1 = delta if k == 1 else min(1.0, max(single_delta(d, pmf, eps) * (1 + 1e-3), 1e-15))
        fields = {"privacy": "dp", "compositions": None, "discretization": None, "max_distortion": None}
        single = d.replace(objective="distortion", eps=eps, delta=delta1, **fields)
        # the single-release problem at the PMF's own delta: the exact check of the certifier decides
        one = DesignResult(single, "optimal", pmf, self.solver, self.solve_time, self.model_size)
        if one.status != "optimal":
            raise CertificationError(f"the single-release check of the composed design failed: {one.message}")
        cd = run_certifier(one, **kwargs)
        # recomputed from the certified weights as released (the induced matrix of a clamped design)
        block = cd.composed_certificate(k, eps, delta, float(d.discretization))
        got = block["composed_delta"]
        if not got <= delta:
            raise CertificationError(
                f"the certified weights' {k}-fold composition has delta {got:.6g} > {d.delta:g} at eps = {eps:g} "
                f"(h = {d.discretization:g}): rounding broke the composed guarantee"
            )
        cd.composed = block
        cd.solver.update(status=self.status, gap=self.gap)
        return cd

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary; keys include the CLI's contract keys."""
        d = self.design
        return {
            "n": d.n,
            "eps": self.eps_objective if d.objective == "epsilon" else d.eps,
            "delta": self.delta_objective if d.objective == "delta" else d.delta,
            "shifts": d.shift_list(),
            "directed": d.neighborhood.directed,
            "metric": d.metric,
            "privacy": d.privacy,
            "objective": d.objective,
            "max_distortion": d.max_distortion,
            "release": d.release,
            **(d.budget.spec() if d.budget else {}),
            **composed_spec(d),
            "status": self.status,
            "verified": self.verify(),
            "pmf": None if self.pmf is None else self.pmf.tolist(),
            "distortion": self.distortion,
            "achieved": self.achieved,
            "actual": self.actual,
            "solver": self.solver,
            "backend": self.backend,
            "solve_time_s": self.solve_time,
            "gap": self.gap,
            "bound": self.bound,
            **({"bound_method": self.bound_method} if d.notion.composed else {}),
            "backend_objective": self.backend_objective,
            "canonical": self.canonical,
            "model_size": self.model_size,
            "message": self.message,
        }

    @classmethod
    def from_dict(cls, data: Any, *, design: NoiseDesign, recheck: bool = True) -> DesignResult:
        """Rebuild a result of ``design`` from :meth:`to_dict` output (re-verifies the PMF).

        Raises ``ValueError`` naming the field that is missing or malformed; a
        PMF that fails re-verification comes back ``"unverified"``. A stored bound,
        gap or status is not trusted: ``recheck`` re-derives the bound (an LP or MILP
        is solved again; :func:`optnoise.design.proofs.recheck`), so an unproven
        ``"optimal"`` comes back ``"feasible"``. The cache uses ``recheck=False``.
        """
        common = cls._common_fields(data, "DesignResult")
        if "pmf" not in data:
            raise ValueError("result lacks the field 'pmf'")
        raw = data["pmf"]
        pmf = None if raw is None else check_pmf("result field 'pmf'", raw, atol=1e-6)
        canonical = data.get("canonical")
        if canonical is not None and not isinstance(canonical, bool):
            raise ValueError(f"result field 'canonical' must be true, false or null; got {shown(canonical)}")
        delta = common.pop("delta")
        eps_objective = None
        if design.objective == "epsilon":
            e = data.get("eps")
            if isinstance(e, bool) or not isinstance(e, (int, float)) or not math.isfinite(e):
                raise ValueError(f"result field 'eps' must be a finite number (the minimised eps); got {shown(e)}")
            eps_objective = float(e)
        res = cls(
            design=design,
            pmf=pmf,
            backend=str(data.get("backend") or ""),
            canonical=canonical,
            delta_objective=delta if design.objective == "delta" else None,
            eps_objective=eps_objective,
            bound_method=data["bound_method"] if isinstance(data.get("bound_method"), str) else "",
            **common,
        )
        if recheck:
            from optnoise.design.proofs import recheck as recheck_proof

            recheck_proof(res)
        return res

    def __repr__(self) -> str:
        dist = "None" if self.distortion is None else f"{self.distortion:.6g}"
        return (
            f"DesignResult(status={self.status!r}, distortion={dist}, "
            f"achieved={ {k: round(v, 6) for k, v in self.achieved.items()} }, solver={self.solver!r}, "
            f"backend={self.backend!r})"
        )
