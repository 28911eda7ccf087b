"""Slow, literal references for BUREL and the beta-likeness family (Cao thesis ch. 4; spec sabre-burel.md §2.3,
§4): the bound f, brute-force minimum bucketization, eligibility, and per-class checks straight from
Definitions 4.2-4.5 with fractions and explicit loops."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

SLACK = 1e-12


def f(p: float, beta: float, enhanced: bool = True) -> float:
    """f(p) = p (1 + min{beta, -ln p}) (Definition 4.3), or p (1 + beta) (basic)."""
    return p * (1.0 + (min(beta, -math.log(p)) if enhanced else beta))


def combinable(sorted_counts: list[int], b: int, e: int, beta: float, enhanced: bool, strict: bool) -> bool:
    """Bucket of the values b..e (0-based, inclusive) of the frequency-sorted counts: total share vs f(p_b)."""
    n = sum(sorted_counts)
    share = sum(sorted_counts[b:e + 1]) / n
    lim = f(sorted_counts[b] / n, beta, enhanced)
    return share < lim * (1 - SLACK) if strict else share <= lim * (1 + SLACK)


def min_buckets_brute_force(sorted_counts: list[int], beta: float, enhanced: bool, strict: bool) -> int:
    """Fewest buckets over every partition of the sorted values into contiguous runs (2^(m-1) of them)."""
    m = len(sorted_counts)
    best = m
    for cuts in itertools.product([False, True], repeat=m - 1):
        starts = [0] + [i + 1 for i, c in enumerate(cuts) if c]
        ends = [s - 1 for s in starts[1:]] + [m - 1]
        if all(combinable(sorted_counts, b, e, beta, enhanced, strict) for b, e in zip(starts, ends)):
            best = min(best, len(starts))
    return best


def class_rows(labels: np.ndarray) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for r, c in enumerate(labels.tolist()):
        out.setdefault(int(c), []).append(r)
    return out


def shares(sa: np.ndarray, rows: list[int] | None = None) -> dict[int, Fraction]:
    vals = sa.tolist() if rows is None else [int(sa[r]) for r in rows]
    n = len(vals)
    out: dict[int, Fraction] = {}
    for v in vals:
        out[int(v)] = out.get(int(v), Fraction(0)) + Fraction(1, n)
    return out


def group_ok(p: Fraction, q: Fraction, beta: float, enhanced: bool = True) -> bool:
    """(q - p)/p <= beta (and <= -ln p when enhanced), for a positive gain; tolerance 1e-12 for the float side."""
    if q <= p:
        return True
    if p == 0:
        return False
    gain = float((q - p) / p)
    bound = min(beta, -math.log(float(p))) if enhanced else beta
    return gain <= bound + SLACK


def classes_satisfy_groups(sa: np.ndarray, labels: np.ndarray, groups: list[list[int]], beta: float,
                           enhanced: bool = True) -> bool:
    """Every class satisfies the bound on every group of sensitive values (a group = a set of codes)."""
    P = shares(sa)
    for rows in class_rows(labels).values():
        Q = shares(sa, rows)
        for g in groups:
            p = sum((P.get(v, Fraction(0)) for v in g), Fraction(0))
            q = sum((Q.get(v, Fraction(0)) for v in g), Fraction(0))
            if not group_ok(p, q, beta, enhanced):
                return False
    return True


def max_basic_beta(sa: np.ndarray, labels: np.ndarray) -> Fraction:
    """Largest (q - p)/p over classes and values with q > p (achieved basic beta), exactly."""
    P = shares(sa)
    best = Fraction(0)
    for rows in class_rows(labels).values():
        for v, q in shares(sa, rows).items():
            if q > P[v]:
                best = max(best, (q - P[v]) / P[v])
    return best


def semantic_groups(parent: np.ndarray, depth: np.ndarray, n_leaves: int, level: int) -> list[list[int]]:
    """Leaves under every node at depth >= level, by walking parents (leaves are nodes 0..n_leaves-1)."""
    groups: dict[int, list[int]] = {}
    for leaf in range(n_leaves):
        x = leaf
        while x >= 0:
            if depth[x] >= level:
                groups.setdefault(int(x), []).append(leaf)
            x = int(parent[x])
    return list(groups.values())


def range_groups(values: dict[int, float], epsilon: float, relative: bool) -> list[list[int]]:
    """Every run of consecutive present values (code -> value) whose width is at most epsilon."""
    order = sorted(values, key=lambda c: (values[c], c))
    out = []
    for i in range(len(order)):
        for j in range(i, len(order)):
            lo, hi = values[order[i]], values[order[j]]
            width = (hi - lo) / lo if relative else hi - lo
            if width <= epsilon:
                out.append(order[i:j + 1])
    return out


def eligible(recipe: list[int], bounds: list[float]) -> bool:
    """Theorem 4.1: x_j / |G| <= f(p_{l_j}) for every bucket j (non-empty G)."""
    size = sum(recipe)
    return size > 0 and all(x <= b * size * (1 + SLACK) for x, b in zip(recipe, bounds))


def delta_ok(sa: np.ndarray, labels: np.ndarray, delta: float) -> bool:
    """delta-disclosure: |ln(q/p)| < delta for every value of the table in every class."""
    P = shares(sa)
    for rows in class_rows(labels).values():
        Q = shares(sa, rows)
        for v, p in P.items():
            q = Q.get(v, Fraction(0))
            if q == 0 or abs(math.log(float(q / p))) >= delta:
                return False
    return True

