"""Slow, obviously correct oracles for the distance and criteria kernels, written from the definitions.

EMD is solved as the transportation LP (scipy.optimize.linprog, HiGHS) with an explicit ground-distance
matrix; the criteria are computed value by value from lists of sensitive values. Nothing here calls anoncore.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
from scipy.optimize import linprog


# ------------------------------------------------------------------------------------------- trees
def ancestors(parent: Sequence[int], v: int) -> list[int]:
    """v, parent(v), ..., root."""
    out = [v]
    while parent[out[-1]] >= 0:
        out.append(parent[out[-1]])
    return out


def heights(parent: Sequence[int]) -> list[int]:
    """Longest path down to a leaf, by brute force over all leaves."""
    n = len(parent)
    h = [0] * n
    children = {p for p in parent if p >= 0}
    for v in range(n):
        if v in children:
            continue
        for d, a in enumerate(ancestors(parent, v)):
            h[a] = max(h[a], d)
    return h


def lca(parent: Sequence[int], a: int, b: int) -> int:
    anc = set(ancestors(parent, a))
    return next(x for x in ancestors(parent, b) if x in anc)


# ------------------------------------------------------------------------------ ground distances
def equal_ground(m: int) -> np.ndarray:
    return 1.0 - np.eye(m)


def ordered_ground(present: np.ndarray) -> np.ndarray:
    """|rank_i - rank_j| / (m' - 1) over the present values; absent values are far from everything (they carry
    no mass in either distribution, so their distances never matter)."""
    m = present.size
    ranks = np.cumsum(present) - 1
    mp = int(present.sum())
    d = np.full((m, m), 10.0)
    for i in range(m):
        for j in range(m):
            if present[i] and present[j]:
                d[i, j] = abs(ranks[i] - ranks[j]) / (mp - 1) if mp > 1 else 0.0
    return d


def hierarchical_ground(parent: Sequence[int], n_leaves: int) -> np.ndarray:
    h = heights(parent)
    root = next(v for v in range(len(parent)) if parent[v] < 0)
    H = h[root]
    d = np.zeros((n_leaves, n_leaves))
    for i in range(n_leaves):
        for j in range(n_leaves):
            d[i, j] = h[lca(parent, i, j)] / H if H > 0 else 0.0
    return d


# ----------------------------------------------------------------------------------------- EMD
def emd_lp(p: np.ndarray, q: np.ndarray, d: np.ndarray) -> float:
    """min sum d_ij f_ij s.t. sum_j f_ij = q_i, sum_i f_ij = p_j, f >= 0 (masses must have equal totals)."""
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    m = p.size
    a_eq = np.zeros((2 * m, m * m))
    for i in range(m):
        a_eq[i, i * m:(i + 1) * m] = 1.0  # out of earth i
        a_eq[m + i, i::m] = 1.0  # into hole i
    res = linprog(d.reshape(-1), A_eq=a_eq, b_eq=np.concatenate([q, p]), bounds=(0, None), method="highs")
    assert res.status == 0, res.message
    return float(res.fun)


def emd_equal(p: np.ndarray, q: np.ndarray) -> float:
    return emd_lp(p, q, equal_ground(len(p)))


def emd_ordered(p: np.ndarray, q: np.ndarray) -> float:
    present = (np.asarray(p) > 0) | (np.asarray(q) > 0)
    return emd_lp(p, q, ordered_ground(present))


def emd_hierarchical(p: np.ndarray, q: np.ndarray, parent: Sequence[int], n_leaves: int) -> float:
    return emd_lp(p, q, hierarchical_ground(parent, n_leaves))


def hellinger(p: np.ndarray, q: np.ndarray) -> float:
    return math.sqrt(sum((math.sqrt(a) - math.sqrt(b)) ** 2 for a, b in zip(p, q)) / 2.0)


def kl(p: np.ndarray, q: np.ndarray, base: float = 2.0) -> float:
    s = 0.0
    for a, b in zip(p, q):
        if a > 0:
            if b == 0:
                return math.inf
            s += a * math.log(a / b, base)
    return s


def js(p: np.ndarray, q: np.ndarray, base: float = 2.0) -> float:
    mid = [(a + b) / 2 for a, b in zip(p, q)]
    return (kl(p, mid, base) + kl(q, mid, base)) / 2


# ------------------------------------------------------------------------------------- criteria
def class_counts(values: Sequence[int]) -> Counter[int]:
    return Counter(int(v) for v in values)


def distinct_l(values: Sequence[int]) -> int:
    return len(set(values))


def entropy(values: Sequence[int]) -> float:
    n = len(values)
    return -sum(c / n * math.log(c / n) for c in class_counts(values).values())


def recursive_ratio(values: Sequence[int], l: int) -> float:
    r = sorted(class_counts(values).values(), reverse=True)
    if len(r) < l:
        return math.inf
    return r[0] / sum(r[l - 1:])


def beta(values: Sequence[int], reference: Sequence[int], enhanced: bool) -> float:
    n, total = len(values), sum(reference)
    best = 0.0
    for v, c in class_counts(values).items():
        p, q = reference[v] / total, c / n
        if q > p:
            gain = (q - p) / p
            if enhanced and gain > -math.log(p):
                return math.inf
            best = max(best, gain)
    return best


def delta(values: Sequence[int], reference: Sequence[int]) -> float:
    n, total = len(values), sum(reference)
    cnt = class_counts(values)
    best = 0.0
    for v, r in enumerate(reference):
        if r == 0:
            continue
        if cnt.get(v, 0) == 0:
            return math.inf
        best = max(best, abs(math.log((cnt[v] / n) / (r / total))))
    return best


def distribution(values: Sequence[int], m: int) -> np.ndarray:
    out = np.zeros(m)
    for v in values:
        out[int(v)] += 1
    return out / out.sum()


# --------------------------------------------------------------------------------- SABRE bounds
def cet_upper_bruteforce(reference: Sequence[int], bucket: Sequence[int], d: np.ndarray) -> float:
    """max over proportional classes of the in-bucket transport cost: EMD is convex in Q, so the maximum is at
    a vertex of the simplex, i.e. all of the bucket's mass on one value; each vertex is solved as an LP."""
    total = sum(reference)
    members = [v for v in bucket if reference[v] > 0]
    if len(members) <= 1:
        return 0.0
    p = np.array([reference[v] / total for v in members])
    sub = d[np.ix_(members, members)]
    best = 0.0
    for i in range(len(members)):
        q = np.zeros(len(members))
        q[i] = p.sum()
        best = max(best, emd_lp(p, q, sub))
    return best


def bucket_ground(buckets: Sequence[Sequence[int]], d: np.ndarray) -> np.ndarray:
    """d^u_ij = max distance between a value of bucket i and one of bucket j (0 on the diagonal)."""
    nb = len(buckets)
    du = np.zeros((nb, nb))
    for i in range(nb):
        for j in range(nb):
            if i != j:
                du[i, j] = max(d[a, b] for a in buckets[i] for b in buckets[j])
    return du


def bucket_emd(counts: Sequence[int], totals: Sequence[int], du: np.ndarray) -> float:
    a = np.asarray(counts, dtype=float)
    b = np.asarray(totals, dtype=float)
    return emd_lp(b / b.sum(), a / a.sum(), du)
