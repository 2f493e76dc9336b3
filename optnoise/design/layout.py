"""How checks, repairs and samplers see a design's probabilities: pairs of distributions."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from optnoise.engine.validation import shown
from optnoise.privacy.exact import exact_pair_delta
from optnoise.privacy.notions import get_notion

__all__ = ["PairLayout", "pmf_layout", "matrix_layout"]


@dataclass(frozen=True, eq=False)
class PairLayout:
    """How the exact check, the repair and the sampler see a design's probabilities.

    The certified object is a flat vector of ``rows * cols`` integer weights:
    ``rows`` distributions of ``cols`` outputs each, every row summing to the
    common denominator ``2**bits``. A noise PMF is one row
    (:func:`pmf_layout`); a mechanism matrix ``P[x, y]`` has one row per
    input (:func:`matrix_layout`). Built by the design's ``pair_layout()``.

    Attributes
    ----------
    kind : {"pmf", "matrix"}
        Sampled as additive modulo noise (:class:`CertifiedDesign`) or row by
        row (:class:`CertifiedMechanism`).
    weights_shape : tuple of int
        Shape of the weights array (the PMF's, or ``(rows, cols)``).
    rows, cols : int
        Number of distributions and of outputs of each.
    first, second : ndarray of int, shape (K, cols)
        Pair ``k`` compares the flat entries ``first[k]`` with ``second[k]``
        (:func:`exact_pair_delta`).
    loss : ndarray, shape (r, rows * cols)
        Loss rows: the design's loss of a flat probability vector ``p`` is
        ``max(loss @ p)`` (one row for a distortion or Bayes loss, one per
        input for a minimax loss).
    notion : str
        The privacy notion checked.
    embed : callable
        Maps the design's float solution (its ``pmf`` or ``matrix``) to the
        flat vector checked here.
    resolve : callable
        ``resolve(delta, solver)``: the design re-solved at a smaller delta
        (repair step b for ``"dp"``), as a float solution, or ``None``.
    outputs : ndarray, optional
        The released value of every column (``"matrix"`` layouts).
    """

    kind: str
    weights_shape: tuple[int, ...]
    rows: int
    cols: int
    first: np.ndarray
    second: np.ndarray
    loss: np.ndarray
    notion: str
    embed: Callable[[np.ndarray], np.ndarray]
    resolve: Callable[[float, str], np.ndarray | None]
    outputs: np.ndarray | None = None

    @property
    def indicators(self) -> bool:
        """The notion bounds the mass of leaking outputs (Definition 2), not the hockey stick."""
        return get_notion(self.notion, "notion").indicators

    @property
    def shared(self) -> bool:
        """One leak indicator per output shared by every pair (``"pdp-kadam"``)."""
        return get_notion(self.notion, "notion").shared

    @property
    def size(self) -> int:
        """Number of weights ``rows * cols``."""
        return self.rows * self.cols

    def loss_of(self, p: np.ndarray) -> float:
        """The design's loss of the flat probabilities ``p``."""
        return float(np.max(self.loss @ np.asarray(p, dtype=float)))

    def check(self, weights: Any, denominator: int, bounds: tuple[Fraction, Fraction]) -> Fraction | float:
        """The exact certified delta of integer weights (:func:`exact_pair_delta`)."""
        return exact_pair_delta(weights, self.first, self.second, denominator, self.notion, bounds)


def pmf_layout(
    index: np.ndarray,
    cost: np.ndarray,
    notion: str,
    resolve: Callable[[float, str], np.ndarray | None],
) -> PairLayout:
    """The layout of a noise PMF: one row, one pair per shift (``index`` as :meth:`NoiseDesign.shift_index`)."""
    index = np.asarray(index, dtype=np.int64)
    K, N = index.shape
    cost = np.asarray(cost, dtype=float)
    return PairLayout(
        kind="pmf",
        weights_shape=cost.shape,
        rows=1,
        cols=N,
        first=np.broadcast_to(np.arange(N), (K, N)),
        second=index,
        loss=cost.reshape(1, N),
        notion=notion,
        embed=lambda sol: np.asarray(sol, dtype=float).ravel(),
        resolve=resolve,
    )


def matrix_layout(
    pairs: np.ndarray,
    outputs: np.ndarray,
    loss: np.ndarray,
    notion: str,
    resolve: Callable[[float, str], np.ndarray | None],
    *,
    embed: Callable[[np.ndarray], np.ndarray] | None = None,
) -> PairLayout:
    """The layout of a mechanism matrix ``P[x, y]``: one row per input, one pair per ordered neighbour pair.

    ``loss`` holds the loss rows over the flattened matrix (see :class:`PairLayout`).
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    outputs = np.asarray(outputs)
    C = outputs.size
    loss = np.atleast_2d(np.asarray(loss, dtype=float))
    R = loss.shape[1] // C
    if notion not in ("dp", "pdp"):
        raise ValueError(f"notion must be one of 'dp', 'pdp' for a mechanism matrix; got {shown(notion)}")
    y = np.arange(C)
    return PairLayout(
        kind="matrix",
        weights_shape=(R, C),
        rows=R,
        cols=C,
        first=pairs[:, :1] * C + y[None, :],
        second=pairs[:, 1:] * C + y[None, :],
        loss=loss,
        notion=notion,
        embed=embed or (lambda sol: np.asarray(sol, dtype=float).ravel()),
        resolve=resolve,
        outputs=outputs,
    )
