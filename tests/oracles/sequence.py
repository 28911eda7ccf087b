"""Brute-force oracles for anoncore.sequence, written straight from the definitions (Bonomi, Fan, Jin, WSDM 2016).

Nothing here imports anoncore: inputs are plain Python lists (sequences of leaf ids, taxonomy as a parent list
with the root's parent -1, cost tables as dict-of-dict or nested lists).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence


def count_embeddings(seq: Sequence[int], pattern: Sequence[int], w: int) -> int:
    """Definition 1: number of index tuples i_1 < ... < i_m with i_m - i_1 <= w and seq[i_k] == pattern[k]."""
    m = len(pattern)
    total = 0
    for idx in itertools.combinations(range(len(seq)), m):
        if idx[-1] - idx[0] <= w and all(seq[i] == pattern[k] for k, i in enumerate(idx)):
            total += 1
    return total


def total_tuples(n: int, w: int, m: int) -> int:
    """N_m(n, w) by enumerating index tuples."""
    return sum(1 for idx in itertools.combinations(range(n), m) if idx[-1] - idx[0] <= w)


def path_to_root(parent: Sequence[int], x: int) -> list[int]:
    out = [x]
    while parent[out[-1]] != -1:
        out.append(parent[out[-1]])
    return out


def mutual_information(
    seq: Sequence[int], patterns: Sequence[Sequence[int]], w: int, h: Sequence[int], base: float = 2.0
) -> float:
    """Ĩ(h) = Σ_p P̃[p] log(1 / P̃[h(p)]) with P̃ = count / N, counting h(p) in Ŝ = h(S) (spec §1.4)."""
    pats = list(dict.fromkeys(tuple(p) for p in patterns))
    m = len(pats[0])
    N = total_tuples(len(seq), w, m)
    if N == 0:
        return 0.0
    gen = [h[x] for x in seq]
    total = 0.0
    for p in pats:
        fp = count_embeddings(seq, p, w)
        if fp == 0:
            continue
        fimg = count_embeddings(gen, [h[x] for x in p], w)
        total += (fp / N) * math.log(N / fimg, base)
    return total


def entropy(seq: Sequence[int], patterns: Sequence[Sequence[int]], w: int, base: float = 2.0) -> float:
    pats = list(dict.fromkeys(tuple(p) for p in patterns))
    N = total_tuples(len(seq), w, len(pats[0]))
    total = 0.0
    for p in pats:
        fp = count_embeddings(seq, p, w)
        if fp:
            total += (fp / N) * math.log(N / fp, base)
    return total


def utility_loss(seq: Sequence[int], h: Sequence[int], cost: Sequence[Sequence[float]]) -> float:
    """Definition 4: Σ_i c(S[i], h(S[i]))."""
    return float(sum(cost[x][h[x]] for x in seq))


def optimum(
    seq: Sequence[int],
    patterns: Sequence[Sequence[int]],
    w: int,
    eps: float,
    parent: Sequence[int],
    n_leaves: int,
    cost: Sequence[Sequence[float]],
    base: float = 2.0,
) -> float:
    """Minimum UL over every valid global map (h(a) ancestor-or-self of a) with Ĩ(h) <= eps (g-MULG)."""
    occ = sorted(set(seq))
    best = math.inf
    tol = eps + 1e-12 * max(1.0, eps)
    for combo in itertools.product(*[path_to_root(parent, a) for a in occ]):
        h = list(range(n_leaves))
        for a, v in zip(occ, combo):
            h[a] = v
        ul = utility_loss(seq, h, cost)
        if ul < best and mutual_information(seq, patterns, w, h, base) <= tol:
            best = ul
    return best


def lcgp_min_cost(
    p1: Sequence[int],
    p2: Sequence[int],
    parent: Sequence[int],
    cost: Sequence[Sequence[float]],
    freq: Sequence[float],
) -> float:
    """Problem 2 by brute force: min Σ_a c(a, h(a)) f(a) over valid maps of the leaf symbols with h(p1) = h(p2)."""
    syms = sorted(set(p1) | set(p2))
    best = math.inf
    for combo in itertools.product(*[path_to_root(parent, a) for a in syms]):
        h = dict(zip(syms, combo))
        if all(h[a] == h[b] for a, b in zip(p1, p2)):
            best = min(best, sum(cost[a][h[a]] * freq[a] for a in syms))
    return best


# ---------------------------------------------------------------------------------------------- spec data
#: T_toy (spec §1.3) as a nested mapping, and user A's sequence of the spec's running example.
TOY_TREE = {"All": {"Alcohol": ["Wine", "Beer"], "Snack": ["Cookies", "Chips"], "Dairy": ["Milk", "Cheese"]}}
S_A = ["Beer", "Chips", "Wine", "Cheese", "Beer", "Chips", "Milk", "Cookies", "Beer", "Chips", "Cookies", "Milk",
       "Wine", "Cheese", "Milk", "Chips"]
