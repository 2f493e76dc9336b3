"""Certified designs and mechanisms: exact weights, their certificate, an exact sampler, persistence.

A :class:`CertifiedDesign` (noise PMF) or :class:`CertifiedMechanism` (matrix;
also clamped noise, certified as its induced matrix) holds integer weights over
``2**bits`` whose exact check (:mod:`optnoise.privacy.exact`) gives
``certified_delta`` at ``eps``. Build one with ``result.certify()``
(:func:`optnoise.deploy.certify.certify_result`) or :func:`load_design`.

**Exact sampling.** :meth:`CertifiedDesign.sample` draws an integer uniformly
below ``2**bits`` and looks it up in the cumulative integer table
(:class:`~optnoise.deploy.sampler.SamplingTable`): ``P(eta) = w(eta) / 2**bits``
exactly. The default randomness is the operating system's CSPRNG
(``os.urandom``). A seeded ``numpy.random.Generator`` may be passed for
reproducible experiments; **seeded mode is not for deployment**.

**Save/load.** :meth:`~CertifiedDesign.save` writes the design file of
:mod:`optnoise.deploy.files`; :func:`load_design` refuses a file whose digest
does not match, any format version but the current one, and any certificate
field that differs from a fresh exact re-check of the problem the file names;
every refusal names the field.

**Composed designs.** A certified ``privacy="composed"`` design carries, beside the exact
single-release certificate, the k-fold guarantee it was made for (:attr:`~_Certified.composed`, the
file's ``composed`` block, :mod:`optnoise.deploy.composed`), recomputed from the exact weights when
certified, on every load and by :meth:`~_Certified.verify`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from optnoise.deploy import opendp
from optnoise.deploy.additive import ADDITIVE_FIELD, additive_from_dict
from optnoise.deploy.composed import BLOCK, check_composed_block, composed_block, composed_delta
from optnoise.deploy.files import (
    FILE_FIELDS,
    FORMAT,
    FORMAT_VERSION,
    OPTIONAL_FIELDS,
    certificate_block,
    check_certificate,
    design_document,
    design_from_spec,
    file_digest,
    read_certificate,
)
from optnoise.deploy.grid import CertifiedGrid
from optnoise.deploy.sampler import SamplingTable, check_answers, check_rng, draw_uniform
from optnoise.design.additive_eval import ADDITIVE
from optnoise.design.grid import GRID
from optnoise.design.layout import PairLayout
from optnoise.design.result import Accountable
from optnoise.engine.io import atomic_write_text, read_json
from optnoise.engine.validation import check_int, check_output_path, shown
from optnoise.plotting.designs import plot_design, plot_mechanism
from optnoise.privacy import accounting
from optnoise.privacy.exact import check_bounds, frac_str

__all__ = ["CertifiedDesign", "CertifiedMechanism", "load_design"]

#: Releases whose design files have a format of their own, by release name: (their extra field, their loader).
RELEASE_FORMATS: dict[str, tuple[str, Callable[..., Any]]] = {
    ADDITIVE: (ADDITIVE_FIELD, additive_from_dict),
    GRID: (ADDITIVE_FIELD, lambda data, design, bad: CertifiedGrid.of(additive_from_dict(data, design, bad))),
}


@dataclass(eq=False)
class _Certified:
    """What every certified object shares: exact weights, the certificate, persistence."""

    design: Any
    weights: np.ndarray
    bits: int
    eps: float
    delta: float
    certified_delta: Fraction
    repair: dict[str, Any] = field(default_factory=dict)
    solver: dict[str, Any] = field(default_factory=dict)
    composed: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        self.layout: PairLayout = self.design.pair_layout()
        w = np.asarray(self.weights, dtype=np.int64).reshape(self.layout.weights_shape)
        self.weights = w
        sums = w.reshape(self.layout.rows, self.layout.cols).sum(axis=1, dtype=np.int64)
        if np.any(sums != self.denominator):
            raise ValueError(
                f"weights must sum to 2**bits = {self.denominator} (in every row); they sum to {int(sums[0])}"
            )

    @property
    def notion(self) -> str:
        """The certified privacy notion (the design's)."""
        return self.design.privacy

    def _notion_text(self) -> str:
        """The notion for the summary: a composed design names its k releases beside its one-release notion."""
        if self.composed is None:
            return self.notion
        return f"composed ({self.composed['compositions']} releases; one release certified as {self.notion})"

    @property
    def n(self) -> int:
        return self.design.n

    @property
    def denominator(self) -> int:
        """``2**bits``."""
        return 1 << self.bits

    def _exact(self) -> np.ndarray:
        """The weights as exact fractions of ``2**bits`` (object array, the weights' shape)."""
        D = self.denominator
        out = np.empty(self.weights.size, dtype=object)
        out[:] = [Fraction(int(v), D) for v in self.weights.ravel()]
        return out.reshape(self.weights.shape)

    def _float(self) -> np.ndarray:
        """The weights as float probabilities (sampling uses the integers)."""
        return self.weights.astype(float) / float(self.denominator)

    def check(self) -> Fraction | float:
        """Re-run the exact check (:func:`exact_pair_delta`) on the weights."""
        return self.layout.check(self.weights.ravel(), self.denominator, check_bounds(self.eps))

    def composed_certificate(self, k: int, eps: float, delta: float, discretization: float) -> dict[str, Any]:
        """The composed block of these weights for ``k`` releases at (eps, delta) (:func:`composed_block`).

        Its ``composed_delta`` is recomputed, not checked against ``delta``: the caller refuses a miss.
        """
        return composed_block(self, k, eps, delta, discretization)

    def check_composed(self) -> float | None:
        """Recompute the composed delta of the weights (:mod:`optnoise.deploy.composed`); ``None`` if not composed."""
        c = self.composed
        if c is None:
            return None
        return composed_delta(self, c["compositions"], c["discretization"], c["eps"])

    def verify(self) -> bool:
        """True when the exact check reproduces ``certified_delta`` and it is within the target.

        For a composed design, the recomputed k-fold delta must also be within the composed target.
        """
        got = self.check()
        single = got == self.certified_delta and got <= Fraction(self.delta)
        if not single or self.composed is None:
            return single
        composed = self.check_composed()
        return composed is not None and composed <= self.composed["delta"]

    def to_opendp(
        self, *, rng: np.random.Generator | None = None, T: str = "i32", compositions: int | None = None
    ) -> Any:
        """An OpenDP measurement releasing with the exact sampler (``q + eta``, or row ``x``), the certificate its map.

        ``compositions=k`` (a composed design): one measurement releasing k answers with the composed
        guarantee. See :func:`optnoise.deploy.opendp.to_opendp` (needs ``pip install optnoise[opendp]``).
        """
        return opendp.to_opendp(self, rng=rng, T=T, compositions=compositions)

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (exact: weights and rationals as decimal strings), with its digest ``sha256``."""
        body = {
            "problem": self.design.spec(),
            "denominator_bits": self.bits,
            "shape": list(self.weights.shape),
            "weights": [str(int(v)) for v in self.weights.ravel()],
            "certificate": certificate_block(self.design, self.eps, self.delta, self.certified_delta),
            "repair": self.repair,
            "solver": self.solver,
        }
        if self.composed is not None:  # absent for single-release designs: their files are as before
            body["composed"] = self.composed
        return design_document(body)

    def save(self, path: str | os.PathLike) -> Path:
        """Write the design as JSON (see :func:`load_design`), atomically."""
        path = check_output_path("path", path)
        return atomic_write_text(path, json.dumps(self.to_dict(), indent=1))

    @classmethod
    def from_dict(cls, data: Any) -> Any:
        """Rebuild from :meth:`to_dict` output, re-proving the certificate exactly.

        Returns a :class:`CertifiedDesign` or a :class:`CertifiedMechanism`,
        whichever the problem's layout is (a
        :class:`~optnoise.deploy.additive.CertifiedAdditive` for
        ``release="additive"``). Raises ``ValueError`` naming the field:
        wrong format tag or version, a digest that does not match the
        canonical file, a malformed field, or a certificate that differs from
        a fresh exact re-check of the problem the file names.
        """

        def bad(name: str, why: str) -> ValueError:
            return ValueError(f"design file field {shown(name)}: {why}")

        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"design file is not an optnoise certified design (missing format tag {shown(FORMAT)})")
        version = data.get("format_version")
        if isinstance(version, bool) or not isinstance(version, int):
            raise bad("format_version", f"must be the integer {FORMAT_VERSION}; got {shown(version)}")
        if version > FORMAT_VERSION:
            raise bad(
                "format_version",
                f"{version} is newer than this optnoise supports ({FORMAT_VERSION}); upgrade optnoise to load it",
            )
        if version != FORMAT_VERSION:
            why = " (version 1 hashed only the weights; re-certify the design)" if version == 1 else ""
            raise bad("format_version", f"unknown version {version}; this optnoise reads {FORMAT_VERSION}{why}")
        problem = data.get("problem")
        # a release certified by its own format (q + eta on Z: finite weights, exact tails): its loader and field
        release = problem.get("release") if isinstance(problem, dict) else None
        special = RELEASE_FORMATS.get(release) if isinstance(release, str) else None
        fields = FILE_FIELDS + ((special[0],) if special else ())
        unknown = sorted(set(data) - set(fields) - set(OPTIONAL_FIELDS) - {"sha256"})
        if unknown:
            raise bad(unknown[0], "is not a field of the design format")
        missing = [k for k in fields + ("sha256",) if k not in data]
        if missing:
            raise bad(missing[0], "is missing")
        if not isinstance(data["sha256"], str) or data["sha256"] != file_digest(data):
            raise bad(
                "sha256",
                "does not match the digest of the file's canonical content: the file is corrupted or was edited "
                "(the digest detects changes; it is not a signature)",
            )
        if not isinstance(data["optnoise_version"], str):
            raise bad("optnoise_version", f"must be a string; got {shown(data['optnoise_version'])}")
        try:
            design = design_from_spec(data["problem"])
        except ValueError as exc:
            raise bad("problem", str(exc)) from None
        if special:
            return special[1](data, design, bad)
        layout = design.pair_layout()
        bits = data["denominator_bits"]
        if isinstance(bits, bool) or not isinstance(bits, int) or not 16 <= bits <= 62:
            raise bad("denominator_bits", f"must be an integer in [16, 62]; got {shown(bits)}")
        if data["shape"] != list(layout.weights_shape):
            raise bad("shape", f"must be the problem's shape {list(layout.weights_shape)}; got {shown(data['shape'])}")
        wtxt = data["weights"]
        if (
            not isinstance(wtxt, list)
            or len(wtxt) != layout.size
            or not all(isinstance(t, str) and t.isascii() and t.isdigit() and len(t) <= 20 for t in wtxt)
        ):
            raise bad("weights", f"must be {layout.size} non-negative integer strings")
        w = [int(t) for t in wtxt]
        sums = [sum(w[r * layout.cols : (r + 1) * layout.cols]) for r in range(layout.rows)]
        wrong = [s for s in sums if s != 1 << bits]
        if wrong:
            rows = " in every row" if layout.rows > 1 else ""
            raise bad("weights", f"must sum to 2**{bits}{rows}; they sum to {wrong[0]}")
        cert, eps, delta = read_certificate(data, design, bad)
        # the certificate is recomputed from the weights and the problem, and must be what the file says
        got = check_certificate(cert, design, eps, delta, layout.check(w, 1 << bits, check_bounds(eps)), bad)
        kind = CertifiedDesign if layout.kind == "pmf" else CertifiedMechanism
        repair = dict(data["repair"])
        out = kind(
            design=design,
            weights=np.array(w, dtype=np.int64),
            bits=bits,
            eps=eps,
            delta=delta,
            certified_delta=got,
            repair=repair,
            solver=dict(data["solver"]),
        )
        # the composed guarantee is recomputed from the weights too; files written before the ``composed``
        # block kept it in ``repair.composed``, which is checked the same way and then moved
        if BLOCK in data and BLOCK in repair:
            raise bad("repair.composed", "must not be given beside the field 'composed'")
        if BLOCK in data:
            out.composed = check_composed_block(out, data[BLOCK], BLOCK)
        elif BLOCK in repair:
            out.composed = check_composed_block(out, repair.pop(BLOCK), "repair.composed")
        return out

    @classmethod
    def load(cls, path: str | os.PathLike) -> Any:
        """Read a design file written by :meth:`save`; see :func:`load_design`."""
        return load_design(path)

    def _summary_lines(self, neighbours: Any, measure: str) -> list[str]:
        r = self.repair
        exact = frac_str(self.certified_delta) if self.certified_delta.denominator < 10**30 else "rational"
        single = f"eps={self.eps:g}  delta={float(self.certified_delta):.10g}"
        if self.composed is None:
            lines = [f"certified   {single}  (target {self.delta:g}, exact {exact})"]
        else:
            # a composed design's target is its k-fold guarantee; the single release is stated as proved,
            # without the internal rounding headroom it was checked against
            c = self.composed
            lines = [
                f"certified   {c['compositions']} releases (composed): eps={c['eps']:g}  "
                f"delta={c['composed_delta']:.6g} <= target {c['delta']:g}  (PLD accounting of the exact weights, "
                f"h={c['discretization']:g}; recomputed on load)",
                f"one release eps={self.eps:g}  delta={float(self.certified_delta):.10g}  (exact {exact})",
            ]
        return [
            f"neighbours  {neighbours}",
            *lines,
            f"weights     integers over 2^{self.bits}" + ("" if self.layout.rows == 1 else " (every row)"),
            f"repair      {r.get('method')}  mix_weight={r.get('mix_weight', 0):.3g}  margin={r.get('margin')}  "
            f"{measure} {r.get('distortion_solver', float('nan')):.10g} -> "
            f"{r.get('distortion_certified', float('nan')):.10g}  (loss {r.get('loss', 0):.3g})",
        ]

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(n={self.n}, shape={self.weights.shape}, notion={self.notion!r}, eps={self.eps:g}, "
            f"certified_delta={float(self.certified_delta):.6g}, bits={self.bits}, "
            f"repair={self.repair.get('method')!r})"
        )


@dataclass(eq=False, repr=False)
class CertifiedDesign(_Certified, Accountable):
    """A noise design with exact integer weights, an exact privacy certificate and an exact sampler.

    Build one with :meth:`DesignResult.certify` / :func:`certify_result`, or
    :func:`load_design`.

    Attributes
    ----------
    design : NoiseDesign
        The problem (n, shape, shifts, direction, metric, notion).
    weights : ndarray of int64, shape ``(n+1,)*d``
        The exact PMF is ``weights / 2**bits``.
    bits : int
        ``log2`` of the common denominator.
    eps, delta : float
        The certified target: the check is at ``eps``, and
        ``certified_delta <= delta``.
    certified_delta : Fraction
        Exact upper bound on the design's delta under its notion at ``eps``.
    repair : dict
        How the solver's PMF became ``weights``: method, mixing weight, margin,
        distortions and the loss (see the module docstring).
    solver : dict
        Solver name, status, gap, time and model size of the source result.
    """

    def __post_init__(self) -> None:
        super().__post_init__()
        self._table = SamplingTable(self.weights, self.bits)
        # coordinates of every flat noise index, for vector designs
        self._coords = np.indices(self.shape).reshape(len(self.shape), -1).T.astype(np.int64)

    # ------------------------------------------------------------------ properties
    @property
    def shape(self) -> tuple[int, ...]:
        return self.design.shape

    @property
    def pmf(self) -> np.ndarray:
        """The exact PMF as an object array of :class:`fractions.Fraction`."""
        return self._exact()

    @property
    def pmf_float(self) -> np.ndarray:
        """The PMF as floats (for plots and float accounting; sampling uses the integers)."""
        return self._float()

    @property
    def distortion(self) -> Fraction:
        """Exact ``sum_eta rho_eta w(eta) / D`` under the design's metric (costs are exact floats)."""
        cost = self.design.cost.ravel()
        num = sum(
            (Fraction(float(c)) * int(v) for c, v in zip(cost, self.weights.ravel(), strict=True) if v), Fraction(0)
        )
        return num / self.denominator

    # ------------------------------------------------------------------ sampling
    def _lookup(self, u: np.ndarray) -> np.ndarray:
        """Flat noise index of each draw (:class:`SamplingTable`)."""
        return self._table.lookup(u)

    def sample(self, size: int | tuple[int, ...] | None = None, *, rng: np.random.Generator | None = None) -> Any:
        """Draw noise values exactly from ``weights / 2**bits``.

        Parameters
        ----------
        size : int or tuple, optional
            Number/shape of draws; ``None`` draws one.
        rng : numpy.random.Generator, optional
            ``None`` (default): the OS CSPRNG, for deployment. A seeded
            Generator makes runs reproducible; it is **not** for deployment.

        Returns
        -------
        int, or ndarray of int64 with shape ``size`` (scalar designs) or
        ``size + (d,)`` (vector designs).
        """
        rng = check_rng(rng)
        raw: Any = size  # validated entry by entry below, whatever the caller passed
        dims = () if raw is None else ((raw,) if np.ndim(raw) == 0 else tuple(raw))
        shape = tuple(check_int("size", s, minimum=0) for s in dims)
        count = int(np.prod(shape)) if shape else 1
        flat = self._lookup(draw_uniform(count, self.bits, rng)) if count else np.zeros(0, dtype=np.int64)
        if self.design.dim == 1:
            out = flat.astype(np.int64, copy=False).reshape(shape)
        else:
            out = self._coords[flat].reshape(shape + (self.design.dim,))
        if size is None and self.design.dim == 1:
            return int(out)
        return out

    def release(self, q: Any, rng: np.random.Generator | None = None) -> Any:
        """Release ``q + eta (mod n+1)`` with ``eta`` drawn exactly from the certified PMF.

        Parameters
        ----------
        q : int or array_like
            True answers in ``{0..n}``: a scalar or any array for scalar
            designs; a vector of length d, or an array of shape ``(..., d)``, for
            vector designs. Each answer gets an independent noise draw.
        rng : numpy.random.Generator, optional
            ``None`` (default) uses the OS CSPRNG; a seeded Generator is for
            reproducible experiments only, never for deployment.

        Returns
        -------
        int or ndarray of int64, the shape of ``q``.
        """
        rng = check_rng(rng)
        d, n = self.design.dim, self.n
        arr = check_answers(q, n)
        if d > 1 and (arr.ndim == 0 or arr.shape[-1] != d):
            raise ValueError(f"q must have a last axis of length d = {d} for this vector design; got shape {arr.shape}")
        batch = arr.shape if d == 1 else arr.shape[:-1]
        noise = self.sample(batch if batch else 1, rng=rng)
        out = np.asarray(noise).ravel() + arr.ravel()  # both in [0, n]: at most one wrap
        np.subtract(out, n + 1, out=out, where=out > n)
        return int(out[0]) if arr.ndim == 0 else out.reshape(arr.shape)

    # ------------------------------------------------------------------ accounting and interop
    def release_pairs(self) -> accounting.ReleasePairs:
        """The pairs ``(f, f(.+mu))`` of the exact PMF (as floats, relative error ~1e-16)."""
        return accounting.noise_pairs(self.pmf_float, self.design.shifts)

    def _draw(self, *, baseline: Any, eps: Any, axes: Any, label: str | None) -> Any:
        label = label or f"certified ({self.notion}, eps={self.eps:g})"
        return plot_design(self.pmf_float, self.design.shifts, baseline=baseline, eps=eps, axes=axes, label=label)

    def summary(self) -> str:
        """A few human-readable lines."""
        d = self.design
        neighbours = d.neighborhood.describe(self.n) if d.dim == 1 else d.shifts.tolist()
        head = f"problem     n={self.n}  shape={self.shape}  notion={self._notion_text()}  metric={d.metric}"
        return "\n".join([head, *self._summary_lines(neighbours, "distortion")])


@dataclass(eq=False, repr=False)
class CertifiedMechanism(_Certified, Accountable):
    """A mechanism matrix with exact integer weights, an exact certificate and an exact sampler.

    Row ``x`` of ``weights`` (shape ``(n+1, m+1)``) sums to ``2**bits``; the
    released output for input ``x`` is ``outputs[y]`` with probability
    exactly ``weights[x, y] / 2**bits``. The certificate covers every ordered
    neighbour pair of the design (:func:`exact_pair_delta`). Build one with
    :meth:`MechanismResult.certify <optnoise.design.mechanism_result.MechanismResult.certify>`
    or :func:`load_design`.

    Attributes
    ----------
    design : MechanismDesign or NoiseDesign
        The problem (a clamped noise design is certified as its induced matrix).
    weights : ndarray of int64, shape ``(n+1, m+1)``
    bits, eps, delta, certified_delta, repair, solver
        As for :class:`CertifiedDesign`.
    """

    def __post_init__(self) -> None:
        super().__post_init__()
        self._tables: dict[int, SamplingTable] = {}

    @property
    def outputs(self) -> np.ndarray:
        """The released value of every column."""
        out = self.layout.outputs
        return np.arange(self.layout.cols) if out is None else out

    @property
    def matrix(self) -> np.ndarray:
        """The exact matrix as an object array of :class:`fractions.Fraction`."""
        return self._exact()

    @property
    def matrix_float(self) -> np.ndarray:
        """The matrix as floats (sampling uses the integers)."""
        return self._float()

    @property
    def loss(self) -> float:
        """The design's loss of the certified matrix (float)."""
        return self.layout.loss_of(self.matrix_float.ravel())

    def _table(self, x: int) -> SamplingTable:
        # one table per input, built on first use; small guides keep large matrices cheap
        if x not in self._tables:
            self._tables[x] = SamplingTable(self.weights[x], self.bits, guide_bits=10)
        return self._tables[x]

    def _lookup(self, x: int, u: np.ndarray) -> np.ndarray:
        """Output column of each draw ``u`` for input ``x``."""
        return self._table(x).lookup(u)

    def release(self, x: Any, rng: np.random.Generator | None = None) -> Any:
        """Release the mechanism's output for input(s) ``x``, drawn exactly from the certified rows.

        Parameters
        ----------
        x : int or array_like
            Inputs in ``{0..n}``; each gets an independent draw.
        rng : numpy.random.Generator, optional
            ``None`` (default) uses the OS CSPRNG; a seeded Generator is for
            reproducible experiments only, never for deployment.

        Returns
        -------
        The output value(s) (``outputs[y]``; Python ints for integer outputs),
        the shape of ``x``.
        """
        rng = check_rng(rng)
        arr = check_answers(x, self.n, "x")
        flat = arr.ravel()
        u = draw_uniform(flat.size, self.bits, rng)
        cols = np.empty(flat.size, dtype=np.int64)
        for v in np.unique(flat):
            sel = np.flatnonzero(flat == v)
            cols[sel] = self._lookup(int(v), u[sel])
        vals = self.outputs[cols]
        if arr.ndim == 0:
            v0 = vals[0]
            return int(v0) if float(v0) == int(v0) else float(v0)
        return vals.reshape(arr.shape)

    def release_pairs(self) -> accounting.ReleasePairs:
        """The rows ``(P[x], P[x'])`` of the exact matrix over the design's ordered neighbour pairs."""
        return accounting.mechanism_pairs(self.matrix_float, self.design.pairs)

    def _draw(self, *, baseline: Any, eps: Any, axes: Any, label: str | None) -> Any:
        label = label or f"certified ({self.notion}, eps={self.eps:g})"
        return plot_mechanism(
            self.matrix_float,
            self.design.pairs,
            outputs=self.outputs,
            baseline=baseline,
            eps=eps,
            axes=axes,
            label=label,
        )

    def summary(self) -> str:
        """A few human-readable lines."""
        d = self.design
        head = (
            f"problem     n={self.n}  outputs={self.layout.cols}  notion={self._notion_text()}  "
            f"loss={getattr(d, 'loss', getattr(d, 'metric', ''))}"
        )
        if hasattr(d, "describe_neighbors"):
            neighbours = d.describe_neighbors()
        else:  # a clamped noise design: its answer pairs
            neighbours = f"{d.neighborhood.describe()}: {len(self.layout.first)} ordered pairs of answers 0..{self.n}"
        return "\n".join([head, *self._summary_lines(neighbours, "loss")])


def load_design(path: str | os.PathLike) -> Any:
    """Load a certified design, re-proving its certificate exactly.

    Returns a :class:`CertifiedDesign` (noise PMF) or a
    :class:`CertifiedMechanism` (mechanism matrix, or clamped noise).

    Raises
    ------
    ValueError
        The path is not a path, the file is missing, not JSON (or nested too
        deeply), not a design, of another format version, its digest does not
        match, or a field is malformed or differs from a fresh exact re-check
        of the problem it names, or its composed block differs from a fresh recomputation
        (the message names the file and the field).
    """
    if not isinstance(path, (str, os.PathLike)) or not str(path).strip():
        raise ValueError(f"path must be the path of a design file; got {shown(path)}")
    data = read_json(path, "design file")
    try:
        return _Certified.from_dict(data)
    except ValueError as exc:  # name the file too: a script may load several
        msg, head = str(exc), "design file "
        where = f"{head}{shown(str(path))}"
        raise ValueError(f"{where} {msg[len(head) :]}" if msg.startswith(head) else f"{where}: {msg}") from None
