"""anoncore.distance.emd_to_reference: SABRE_W's row-batched EMD over a fixed global domain.

Two oracles: the numpy formulation SABRE_W used before the kernel (bit for bit: SABRE_W's decisions and
outputs depend on the exact values), and a transportation LP (scipy) for what the numbers mean.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy.optimize import linprog

from anoncore.data.hierarchy import Hierarchy
from anoncore.distance import emd_to_reference
from anoncore.stream._window import GroundMetric


def _numpy_emd(q: Any, p: Any, m: int, h: Hierarchy | None) -> Any:
    """The numpy formulation (as SABRE_W computed it before the kernel)."""
    q = np.asarray(q, dtype=np.float64)
    one = q.ndim == 1
    q2 = np.atleast_2d(q)
    qs = q2.sum(axis=1, keepdims=True)
    qs[qs == 0] = 1.0
    diff = q2 / qs - np.asarray(p, dtype=np.float64) / max(np.asarray(p, dtype=np.float64).sum(), 1.0)
    if h is None:
        out = np.zeros(q2.shape[0]) if m <= 1 else np.abs(np.cumsum(diff, axis=1)[:, :-1]).sum(axis=1) / (m - 1)
    else:
        H = int(h.node_height[-1])
        if H <= 0:
            out = np.zeros(diff.shape[0])
        else:
            cs = np.concatenate([np.zeros((diff.shape[0], 1)), np.cumsum(diff, axis=1)], axis=1)
            ls, lc = np.asarray(h.leaf_start, dtype=np.int64), np.asarray(h.leaf_count, dtype=np.int64)
            extra = cs[:, ls + lc] - cs[:, ls]
            par = np.asarray(h.parent, dtype=np.int64)
            child = np.flatnonzero(par >= 0)
            pos, neg = np.zeros_like(extra), np.zeros_like(extra)
            e = extra[:, child]
            np.add.at(pos.T, par[child], np.maximum(e, 0.0).T)
            np.add.at(neg.T, par[child], np.maximum(-e, 0.0).T)
            out = (np.asarray(h.node_height, dtype=np.float64) / H * np.minimum(pos, neg)).sum(axis=1)
    return out[0] if one else out


def _random_hierarchy(rng: np.random.Generator) -> Hierarchy:
    count = [0]

    def tree(depth: int) -> Any:
        count[0] += 1
        if depth == 0 or rng.random() < 0.2:
            return [f"l{count[0]}_{i}" for i in range(int(rng.integers(1, 5)))]
        return {f"n{count[0]}_{i}": tree(depth - 1) for i in range(int(rng.integers(1, 4)))}

    return Hierarchy.from_nested({"*": tree(int(rng.integers(0, 4)))})


def _bits(x: Any) -> Any:
    return np.asarray(x, dtype=np.float64).view(np.int64)


@pytest.mark.parametrize("m", [1, 2, 3, 7, 8, 9, 16, 17, 40, 129, 300])
def test_ordered_equals_the_numpy_formulation_bit_for_bit(m: int) -> None:
    rng = np.random.default_rng(m)
    q = rng.integers(0, 6, (300, m)).astype(float)
    q[::7] = 0  # rows without mass
    p = rng.integers(0, 30, m).astype(float)
    assert np.array_equal(_bits(emd_to_reference(q, p)), _bits(_numpy_emd(q, p, m, None)))
    assert np.array_equal(_bits(emd_to_reference(q[3], p)), _bits(_numpy_emd(q[3], p, m, None)))
    assert np.array_equal(_bits(emd_to_reference(q[3:4], p)), _bits(_numpy_emd(q[3:4], p, m, None)))


def test_hierarchical_equals_the_numpy_formulation_bit_for_bit() -> None:
    rng = np.random.default_rng(7)
    for _ in range(60):
        h = _random_hierarchy(rng)
        m = h.n_leaves
        q = rng.integers(0, 6, (int(rng.integers(1, 200)), m)).astype(float)
        q[::9] = 0
        p = rng.integers(0, 30, m).astype(float)
        assert np.array_equal(_bits(emd_to_reference(q, p, h)), _bits(_numpy_emd(q, p, m, h)))
        assert np.array_equal(_bits(emd_to_reference(q[0], p, h)), _bits(_numpy_emd(q[0], p, m, h)))
        g = GroundMetric(m, h)  # SABRE_W's ground metric calls it
        assert np.array_equal(_bits(g.emd(q, p)), _bits(_numpy_emd(q, p, m, h)))


def _lp_emd(q: Any, p: Any, ground: Any) -> float:
    m = len(p)
    a, b = q / q.sum(), p / p.sum()
    eq = np.zeros((2 * m, m * m))
    for i in range(m):
        eq[i, i * m:(i + 1) * m] = 1
        eq[m + i, i::m] = 1
    res = linprog(ground.ravel(), A_eq=eq, b_eq=np.concatenate([a, b]), bounds=(0, None), method="highs")
    assert res.success
    return float(res.fun)


def test_values_are_the_transport_cost_over_the_whole_domain() -> None:
    rng = np.random.default_rng(3)
    m = 6
    idx = np.arange(m)
    ordered = np.abs(idx[:, None] - idx[None, :]) / (m - 1)
    h = Hierarchy.from_nested({"*": {"A": {"a": ["v0", "v1"], "b": ["v2"]}, "B": ["v3", "v4", "v5"]}})
    lca = np.array([[h.node_height[h.lca(i, j)] for j in range(m)] for i in range(m)]) / h.node_height[-1]
    for _ in range(20):
        q = rng.integers(0, 5, m).astype(float) + (np.arange(m) == 0)
        p = rng.integers(0, 5, m).astype(float)
        p[rng.integers(0, m)] += 1
        p[2] = 0  # a value absent from the reference still counts in the ordered domain
        assert emd_to_reference(q, p) == pytest.approx(_lp_emd(q, p, ordered), abs=1e-9)
        assert emd_to_reference(q, p, h) == pytest.approx(_lp_emd(q, p, lca), abs=1e-9)


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="shape"):
        emd_to_reference(np.ones((2, 3)), np.ones(4))
    with pytest.raises(ValueError, match="non-negative"):
        emd_to_reference([1.0, -1.0, 0.0], [1.0, 1.0, 1.0])
    h = Hierarchy.from_nested({"*": ["a", "b"]})
    with pytest.raises(ValueError, match="leaves"):
        emd_to_reference(np.ones((2, 3)), np.ones(3), h)
