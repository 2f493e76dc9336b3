"""The result of a general-mechanism design (:meth:`optnoise.MechanismDesign.solve`): a matrix ``P[x, y]``.

It shares its status rule, verification and accounting with noise results
(:class:`~optnoise.design.result.CheckedResult`, :class:`~optnoise.design.result.Accountable`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from optnoise.design.matrix import matrix_errors
from optnoise.design.result import Accountable, CheckedResult, run_certifier
from optnoise.engine.validation import check_choice, check_pmf, real_array, shown
from optnoise.plotting.designs import plot_mechanism
from optnoise.privacy import accounting
from optnoise.privacy.curves import mechanism_delta
from optnoise.privacy.verification import RESULT_STATUSES, dp_eps, pdp_rtol

if TYPE_CHECKING:
    from optnoise.design.mechanism import MechanismDesign

__all__ = ["MechanismResult"]


@dataclass
class MechanismResult(CheckedResult, Accountable):
    """The outcome of :meth:`MechanismDesign.solve`.

    Attributes
    ----------
    matrix : ndarray or None
        ``P[x, y]``, shape ``(n+1, m+1)``, rows summing to 1; ``None`` without a solution.
    status : str
        One of :data:`optnoise.privacy.verification.RESULT_STATUSES`: ``"optimal"``,
        ``"infeasible"``, ``"time_limit"``, ``"unbounded"``, ``"error"`` or
        ``"unverified"`` (the solver claimed a matrix that fails
        re-verification; ``message`` says why). ``"optimal"`` always implies
        :meth:`verify`.
    loss : float or None
        The design's loss of ``matrix`` (Bayes expectation, worst input for
        minimax; the Bayes loss for ``objective="delta"``).
    achieved : dict
        ``{"dp", "pdp"}``: delta of the matrix at the design's eps over its
        ordered pairs, recomputed with :func:`optnoise.privacy.curves.mechanism_delta`
        (PDP indicators with the relative eps slack of
        :func:`optnoise.privacy.verification.pdp_rtol`).
    actual : dict
        Errors of the released value (:func:`matrix_errors`).
    solve_time : float
        Seconds in the solver, over all rounds.
    model_size : dict
        Rows, columns, integers and nonzeros of the last model solved.
    rounds : int
        Models solved (lazy rows; 1 when the first model was already exact).
    gap, message, delta_objective, backend_objective
        As for :class:`optnoise.DesignResult`.
    """

    _SOLUTION = "matrix"

    design: MechanismDesign
    status: str
    matrix: np.ndarray | None
    solver: str
    solve_time: float
    model_size: dict[str, int]
    gap: float | None = None
    message: str = ""
    delta_objective: float | None = None
    backend_objective: float | None = None
    rounds: int = 1
    achieved: dict[str, float] = field(default_factory=dict)
    actual: dict[str, float] = field(default_factory=dict)
    loss: float | None = None
    bound: float | None = None
    #: Row multipliers of the final (restricted) LP and the (pair, output) entries it kept (``None``:
    #: the full model): the proof a cache entry stores and re-checks (:mod:`optnoise.design.proofs`).
    dual: np.ndarray | None = field(default=None, repr=False, compare=False)
    active: np.ndarray | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_choice("status", self.status, RESULT_STATUSES)
        if self.matrix is None:
            return
        d = self.design
        P = np.asarray(self.matrix, dtype=float)
        if P.shape != d.matrix_shape:
            raise ValueError(f"matrix must have shape (n+1, m+1) = {d.matrix_shape}; got {P.shape}")
        for x in range(P.shape[0]):
            check_pmf(f"matrix row {x}", P[x], atol=1e-6)
        self.matrix = P
        self.loss = d.loss_of(P)
        self.achieved = {
            "dp": float(mechanism_delta(P, d.pairs, dp_eps(d.eps, self._pure_target()), notion="dp")),
            "pdp": float(mechanism_delta(P, d.pairs, d.eps, notion="pdp", rtol=pdp_rtol(d.eps))),
        }
        self.actual = matrix_errors(P, d.outputs)
        # one place decides whether a claimed solution may keep its status (optnoise.privacy.verification)
        self._settle(
            self.loss,
            float(d.max_loss or 0.0) if d.objective == "delta" else None,
            measure="Bayes loss",
            cap_name="max_loss",
        )

    def release_pairs(self) -> accounting.ReleasePairs:
        """The rows ``(P[x], P[x'])`` of every ordered neighbour pair of the design."""
        if self.matrix is None:
            raise ValueError(f"this result has no matrix (status {self.status!r})")
        return accounting.mechanism_pairs(self.matrix, self.design.pairs)

    def _draw(self, *, baseline: Any, eps: Any, axes: Any, label: str | None) -> Any:
        d = self.design
        label = label or f"optimal ({d.privacy}, {d.loss})"
        if self.matrix is None:
            raise ValueError(f"this result has no matrix (status {self.status!r})")
        return plot_mechanism(
            self.matrix, d.pairs, outputs=d.outputs, baseline=baseline, eps=eps, axes=axes, label=label
        )

    def certify(self, **kwargs: Any) -> Any:
        """Exact certificate and exact sampler (a :class:`~optnoise.deploy.certified.CertifiedMechanism`).

        See :func:`optnoise.deploy.certify.certify_result` for the options.
        """
        return run_certifier(self, **kwargs)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (the keys of ``optnoise mechanism --format json``)."""
        d = self.design
        spec = d.spec()
        return {
            "n": d.n,
            "eps": d.eps,
            "delta": d.delta if d.objective != "delta" else self.delta_objective,
            "neighbors": spec["neighbors"],
            "directed": spec["directed"],
            "pairs": spec["pairs"],
            "outputs": d.outputs.tolist(),
            "loss_function": d.loss,
            "objective": d.objective,
            "prior": spec["prior"],
            "privacy": d.privacy,
            "max_loss": d.max_loss,
            "status": self.status,
            "verified": self.verify(),
            "matrix": None if self.matrix is None else self.matrix.tolist(),
            "loss": self.loss,
            "achieved": self.achieved,
            "actual": self.actual,
            "solver": self.solver,
            "solve_time_s": self.solve_time,
            "gap": self.gap,
            "bound": self.bound,
            "backend_objective": self.backend_objective,
            "model_size": self.model_size,
            "rounds": self.rounds,
            "message": self.message,
        }

    @classmethod
    def from_dict(cls, data: Any, *, design: MechanismDesign) -> MechanismResult:
        """Rebuild a result of ``design`` from :meth:`to_dict` output (re-verifies the matrix).

        Raises ``ValueError`` naming the field that is missing or malformed; a
        matrix that fails re-verification comes back ``"unverified"``.
        """
        common = cls._common_fields(data, "MechanismResult")
        if "matrix" not in data:
            raise ValueError("result lacks the field 'matrix'")
        rounds = data.get("rounds", 1)
        if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
            raise ValueError(f"result field 'rounds' must be a positive integer; got {shown(rounds)}")
        raw = data["matrix"]
        matrix = None if raw is None else real_array("result field 'matrix'", raw)
        delta = common.pop("delta")
        return cls(
            design=design,
            matrix=matrix,
            delta_objective=delta if design.objective == "delta" else None,
            rounds=rounds,
            **common,
        )

    def __repr__(self) -> str:
        loss = "None" if self.loss is None else f"{self.loss:.6g}"
        return (
            f"MechanismResult(status={self.status!r}, loss={loss}, "
            f"achieved={ {k: round(v, 6) for k, v in self.achieved.items()} }, solver={self.solver!r})"
        )
