"""Slow, obviously correct references for SABRE, written straight from the definitions of the Cao thesis
(spec sabre-burel.md §2.2, §3.1-3.3): EMD as a transportation LP, CET^U as a maximum over the vertices of the
proportional polytope, bucket-level D as an LP over the bucket ground distance d^u, the greedy bucketization
and the recursive dichotomize. No code is shared with anoncore's kernels.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
from scipy.optimize import linprog

# --------------------------------------------------------------------------- ground distances


def ordered_ground(m: int) -> np.ndarray:
    """d_ij = |i - j| / (m - 1) over m ranks."""
    i = np.arange(m)
    return np.abs(i[:, None] - i[None, :]) / max(m - 1, 1)


def _ancestors(parent: np.ndarray, v: int) -> list[int]:
    out = [v]
    while parent[out[-1]] >= 0:
        out.append(int(parent[out[-1]]))
    return out


def _height(parent: np.ndarray, n_leaves: int) -> np.ndarray:
    nn = len(parent)
    h = np.zeros(nn, dtype=int)
    for leaf in range(n_leaves):
        for d, a in enumerate(_ancestors(parent, leaf)):
            h[a] = max(h[a], d)
    return h


def lca(parent: np.ndarray, a: int, b: int) -> int:
    anc = set(_ancestors(parent, a))
    for x in _ancestors(parent, b):
        if x in anc:
            return x
    raise AssertionError("no common ancestor")


def hierarchical_ground(parent: np.ndarray, n_leaves: int) -> np.ndarray:
    """d_ij = height(LCA(i, j)) / height(root) between leaves (heights recomputed from the parent array)."""
    h = _height(np.asarray(parent), n_leaves)
    H = h.max()
    d = np.zeros((n_leaves, n_leaves))
    for i in range(n_leaves):
        for j in range(n_leaves):
            d[i, j] = h[lca(parent, i, j)] / H if H else 0.0
    return d


# --------------------------------------------------------------------------- EMD as an LP


def emd_lp(p: np.ndarray, q: np.ndarray, d: np.ndarray) -> float:
    """min sum d_ij f_ij subject to sum_j f_ij = q_i, sum_i f_ij = p_j, f >= 0."""
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    m = len(p)
    a_eq = np.zeros((2 * m, m * m))
    for i in range(m):
        a_eq[i, i * m:(i + 1) * m] = 1.0
        a_eq[m + i, i::m] = 1.0
    b_eq = np.concatenate([q, p])
    res = linprog(d.reshape(-1), A_eq=a_eq, b_eq=b_eq, bounds=(0, None), method="highs")
    assert res.status == 0, res.message
    return float(res.fun)


def class_emds(sa: np.ndarray, labels: np.ndarray, d: np.ndarray) -> dict[int, float]:
    """EMD(P, Q_G) of every class, P over the whole table (values absent from the table are dropped, so the
    ordered distance is over the present values)."""
    m = d.shape[0]
    ref = np.bincount(sa, minlength=m).astype(float)
    present = ref > 0
    dd = d[np.ix_(present, present)]
    p = ref[present] / ref.sum()
    out = {}
    for c in np.unique(labels):
        h = np.bincount(sa[labels == c], minlength=m).astype(float)[present]
        out[int(c)] = emd_lp(p, h / h.sum(), dd)
    return out


# --------------------------------------------------------------------------- CET^U and D


def cet_upper_vertices(p: np.ndarray, members: list[int], d: np.ndarray) -> float:
    """max over l in B of sum_{i in B} d_li p_i (the proportional class that puts all the bucket's tuples on
    one value: the maximum of a convex function over the polytope is at a vertex)."""
    return max(sum(d[l, i] * p[i] for i in members) for l in members)


def cet_upper_thesis_cat(p: np.ndarray, members: list[int], parent: np.ndarray, n_leaves: int) -> float:
    """Theorem 3.2, categorical: (h(n)/h(H)) (sum p - min p), n = LCA of the members."""
    h = _height(np.asarray(parent), n_leaves)
    n = members[0]
    for v in members[1:]:
        n = lca(parent, n, v)
    return h[n] / h.max() * (sum(p[i] for i in members) - min(p[i] for i in members))


def bucket_ground(buckets: list[list[int]], d: np.ndarray) -> np.ndarray:
    """d^u_ij = max d_yz over y in V_i, z in V_j (0 on the diagonal)."""
    b = len(buckets)
    du = np.zeros((b, b))
    for i in range(b):
        for j in range(b):
            if i != j:
                du[i, j] = max(d[y, z] for y in buckets[i] for z in buckets[j])
    return du


def bucket_distance_lp(a: np.ndarray, totals: np.ndarray, du: np.ndarray) -> float:
    """D(G) = EMD(d(G, phi), d(DB, phi)) under d^u."""
    a = np.asarray(a, dtype=float)
    t = np.asarray(totals, dtype=float)
    return emd_lp(t / t.sum(), a / a.sum(), du)


# --------------------------------------------------------------------------- the two phases


def bucketize_reference(p: np.ndarray, t: float, children: Any, cet: Any, root: Any) -> tuple[list[Any], list[float]]:
    """Greedy loop of bucketCat/bucketNum: split the leaf with the largest dv until U < t.

    ``children(node)`` returns the node's children (empty when it cannot be split), ``cet(node)`` its bound,
    nodes compare by domain order for ties. Returns the final leaves (domain order) and U after each split.
    """
    leaves = [root]
    u = cet(root)
    trace = []
    while u >= t - 1e-15 and u >= t:
        best, best_dv = None, None
        for x in sorted(leaves):
            kids = children(x)
            if not kids:
                continue
            dv = cet(x) - sum(cet(c) for c in kids)
            if best_dv is None or dv > best_dv + 1e-12:
                best, best_dv = x, dv
        if best is None:
            break
        leaves.remove(best)
        leaves.extend(children(best))
        u = sum(cet(x) for x in leaves)
        trace.append(u)
    return sorted(leaves), trace


def numeric_split_children(p: np.ndarray, d: np.ndarray):  # type: ignore[no-untyped-def]
    """children() for bucketNum: the split point minimising the children's CET^U (leftmost on ties)."""

    def cet(node: tuple[int, int]) -> float:
        a, b = node
        return cet_upper_vertices(p, list(range(a, b + 1)), d)

    def children(node: tuple[int, int]) -> list[tuple[int, int]]:
        a, b = node
        if a == b:
            return []
        best, best_c = None, None
        for sp in range(a, b):
            c = cet((a, sp)) + cet((sp + 1, b))
            if best_c is None or c < best_c - 1e-12:
                best, best_c = sp, c
        return [(a, best), (best + 1, b)]

    return children, cet


def dichotomize_reference(root: list[int], accept: Any) -> list[list[int]]:
    """Procedure dichotomize (recursive, depth-first, left child = ceil(a/2))."""
    if all(x < 2 for x in root):
        return [list(root)]
    left = [(x + 1) // 2 for x in root]
    right = [x - y for x, y in zip(root, left)]
    if accept(left) and accept(right):
        return dichotomize_reference(left, accept) + dichotomize_reference(right, accept)
    return [list(root)]


def frac(x: float, limit: int = 10_000) -> Fraction:
    return Fraction(x).limit_denominator(limit)



# --------------------------------------------------------------------------- query workload and OLAP KL


def count_exact_reference(qi: np.ndarray, sa: np.ndarray, dims: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                          sa_lo: np.ndarray, sa_hi: np.ndarray) -> np.ndarray:
    out = []
    for q in range(len(dims)):
        ok = (sa >= sa_lo[q]) & (sa <= sa_hi[q])
        for i, j in enumerate(dims[q]):
            ok &= (qi[:, j] >= lo[q, i]) & (qi[:, j] <= hi[q, i])
        out.append(int(ok.sum()))
    return np.array(out)


def count_estimate_reference(labels: np.ndarray, sa: np.ndarray, gen_lo: np.ndarray, gen_hi: np.ndarray,
                             dims: np.ndarray, lo: np.ndarray, hi: np.ndarray, sa_lo: np.ndarray,
                             sa_hi: np.ndarray) -> np.ndarray:
    """Every tuple of class c contributes prod_i |R_i cap box_i| / |box_i| when its SA is in range."""
    out = []
    for q in range(len(dims)):
        est = 0.0
        for r in range(len(sa)):
            if not sa_lo[q] <= sa[r] <= sa_hi[q]:
                continue
            c = labels[r]
            f = 1.0
            for i, j in enumerate(dims[q]):
                a, b = gen_lo[c, j], gen_hi[c, j]
                pts = set(range(a, b + 1)) & set(range(lo[q, i], hi[q, i] + 1))
                f *= len(pts) / (b - a + 1)
            est += f
        out.append(est)
    return np.array(out)


def olap_kl_reference(qi: np.ndarray, sa: np.ndarray, labels: np.ndarray, gen_lo: np.ndarray, gen_hi: np.ndarray,
                      dims: tuple[int, ...], cards: list[int], m: int) -> float:
    """alpha: counts per (cell, SA); beta: every tuple spread uniformly over the cells of its class's box."""
    import itertools as it

    alpha: dict[tuple[int, ...], float] = {}
    beta: dict[tuple[int, ...], float] = {}
    for r in range(len(sa)):
        key = tuple(int(qi[r, j]) for j in dims) + (int(sa[r]),)
        alpha[key] = alpha.get(key, 0.0) + 1
        c = labels[r]
        ranges = [range(gen_lo[c, j], gen_hi[c, j] + 1) for j in dims]
        vol = float(np.prod([len(x) for x in ranges]))
        for cell in it.product(*ranges):
            k2 = tuple(cell) + (int(sa[r]),)
            beta[k2] = beta.get(k2, 0.0) + 1 / vol
    n = len(sa)
    return sum(a / n * np.log(a / beta[k]) for k, a in alpha.items())


def hilbert_index_reference(cell: list[int], bits: int) -> int:
    """Hilbert index of one grid cell, Skilling's (2004) AxesToTranspose written literally (with branches),
    then the transposed bits interleaved most significant first."""
    x = [int(v) for v in cell]
    n = len(x)
    top = 1 << (bits - 1)
    q = top
    while q > 1:
        p = q - 1
        for i in range(n):
            if x[i] & q:
                x[0] ^= p
            else:
                t = (x[0] ^ x[i]) & p
                x[0] ^= t
                x[i] ^= t
        q >>= 1
    for i in range(1, n):
        x[i] ^= x[i - 1]
    t = 0
    q = top
    while q > 1:
        if x[n - 1] & q:
            t ^= q - 1
        q >>= 1
    x = [v ^ t for v in x]
    key = 0
    for b in range(bits - 1, -1, -1):
        for i in range(n):
            key = (key << 1) | ((x[i] >> b) & 1)
    return key
