"""Distortion metrics of noise designs and the actual errors of their releases."""

from __future__ import annotations

import numpy as np

from optnoise.engine.validation import check_choice

__all__ = ["METRICS", "cost_vector", "modulo_errors", "reflection_pair"]


#: Named distortion metrics; any cost array of shape ``(n+1,)*d`` is accepted too.
METRICS = ("er", "mse", "mae", "circular-mse", "circular-mae")


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
    eta = np.arange(n + 1, dtype=float)
    out = {"mse_mean": 0.0, "mse_worst": 0.0, "mae_mean": 0.0, "mae_worst": 0.0}

    def per_q(weights: np.ndarray, power: int) -> np.ndarray:
        """``sum_eta err(q, eta)^power weights[eta]`` for every q, in O(n) memory.

        ``err = eta`` for ``eta <= n - q`` and ``n+1-eta`` above: a prefix sum plus a suffix sum
        (an (n+1) x (n+1) table would need 75 GiB at n = 10^5).
        """
        head = np.cumsum(eta**power * weights)  # head[k] = sum_{eta <= k}
        tail = np.concatenate([np.cumsum(((n + 1 - eta) ** power * weights)[::-1])[::-1], [0.0]])
        k = n - np.arange(n + 1)  # the last non-wrapping eta of each q
        return head[k] + tail[k + 1]

    for axis in range(pmf.ndim):
        marg = pmf.sum(axis=tuple(a for a in range(pmf.ndim) if a != axis))
        mse_q, mae_q = per_q(marg, 2), per_q(marg, 1)
        out["mse_mean"] += float(mse_q.mean())
        out["mse_worst"] += float(mse_q.max())
        out["mae_mean"] += float(mae_q.mean())
        out["mae_worst"] += float(mae_q.max())
    out["er"] = float(1.0 - pmf.flat[0])
    return out


def reflection_pair(shifts: np.ndarray, cost: np.ndarray, n: int) -> tuple[int, int] | None:
    """Flat indices ``(-e1, e1)`` of a modulo noise when shifts and costs are symmetric under eta -> -eta."""
    dim = cost.ndim
    shift_set = {tuple(s) for s in shifts.tolist()}
    if {tuple((-np.asarray(s)) % (n + 1)) for s in shift_set} != shift_set:
        return None
    mirrored = np.flip(np.roll(cost, shift=-1, axis=tuple(range(dim))), axis=tuple(range(dim)))
    if not np.array_equal(mirrored, cost) or n < 2:
        return None
    e1 = np.zeros(dim, dtype=np.int64)
    e1[0] = 1
    return (
        int(np.ravel_multi_index(tuple(-e1 % (n + 1)), cost.shape)),
        int(np.ravel_multi_index(tuple(e1), cost.shape)),
    )
