"""Top-Down (Algorithm 1), Bottom-Up (Algorithm 3) and brute force over one UserProblem (spec §2.2–2.5)."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from anoncore.sequence._problem import UserProblem, mi_tolerance
from anoncore.sequence.lcgp import lcgp_union_find

__all__ = ["TraceEvent", "bottom_up", "brute_force", "top_down"]

IntArray = npt.NDArray[np.int32]


@dataclass(frozen=True, slots=True)
class TraceEvent:
    """One step of an algorithm trace.

    action is one of ``start`` (initial map), ``feasible`` / ``infeasible`` / ``skipped`` (a Top-Down candidate;
    skipped = not evaluated because its UL exceeds the best feasible so far), ``accepted`` (a Top-Down refinement),
    ``merge`` (a Bottom-Up merge, ``distance`` = d_g), ``complete`` (a Bottom-Up greedy completion move).
    ``node_from``/``node_to`` are taxonomy node ids (-1 when not applicable); ``moved`` the leaf codes whose image
    changes; ``mi`` is NaN when not evaluated.
    """

    iteration: int
    action: str
    node_from: int
    node_to: int
    moved: tuple[int, ...]
    utility_loss: float
    mi: float
    distance: float = math.nan


def _order(prob: UserProblem, symbols: IntArray) -> list[int]:
    f = prob.unigram
    return sorted((int(a) for a in symbols), key=lambda a: (-int(f[a]), a))


def top_down(
    prob: UserProblem,
    eps: float,
    *,
    sigma_s_shortcut: bool = True,
    prune: bool = True,
    tie: str = "last",
    dedupe: bool = True,
) -> tuple[IntArray, list[TraceEvent]]:
    """Algorithm 1 as cleaned in spec §2.3. ``tie='last'``: an equal-UL feasible candidate evaluated later replaces
    the current best (the paper's literal ``UL > UL*`` skip test); ``tie='first'``: the first one is kept.
    ``dedupe``: symbols of one pass that yield the same candidate (same target node v) are evaluated once; without
    it every symbol's candidate is evaluated as in the paper's listing (same output, more Ĩ evaluations)."""
    tax = prob.tax
    tol = mi_tolerance(eps)
    trace: list[TraceEvent] = []
    occ = prob.occurring
    h_s = prob.identity()
    h_s[prob.sigma_s] = tax.root
    if sigma_s_shortcut and prob.mi(h_s) <= tol:
        h = h_s
        active = _order(prob, np.intersect1d(prob.sigma_s, occ))
    else:
        h = prob.all_root()
        active = _order(prob, occ)
    cur_ul = prob.ul(h)
    trace.append(TraceEvent(0, "start", -1, -1, (), cur_ul, prob.mi(h)))
    f = prob.unigram.tolist()
    cost = prob.cost.tolist()
    leaf_start = tax.leaf_start.tolist()
    leaf_count = tax.leaf_count.tolist()
    it = 0
    while active:
        it += 1
        best_ul = math.inf
        best: IntArray | None = None
        best_ev: TraceEvent | None = None
        removed: set[int] = set()
        hl = h.tolist()
        cache: dict[int, tuple[tuple[int, ...], float, float]] = {}  # v -> (moved, UL, Ĩ or NaN)
        for a in active:
            if a in removed:
                continue
            u = hl[a]
            if u == a:
                removed.add(a)
                continue
            v = tax.child_toward(u, a)
            hit = cache.get(v) if dedupe else None
            if hit is None:
                lo = leaf_start[v]
                moved = tuple(x for x in range(lo, lo + leaf_count[v]) if hl[x] == u)
                delta = 0.0  # sequential sum (mirrored by the C++ kernel)
                for x in moved:
                    if f[x]:
                        delta += f[x] * (cost[x][v] - cost[x][u])
                ul = cur_ul + delta
                val = math.nan
            else:
                moved, ul, val = hit
            if ul > best_ul or (tie == "first" and ul == best_ul):
                trace.append(TraceEvent(it, "skipped", u, v, moved, ul, math.nan))
                cache[v] = (moved, ul, val)
                continue
            g = h.copy()
            g[list(moved)] = v
            if math.isnan(val):  # identical candidate maps within a pass are evaluated once
                val = prob.mi(g)
            cache[v] = (moved, ul, val)
            if val <= tol:
                trace.append(TraceEvent(it, "feasible", u, v, moved, ul, val))
                best_ul, best = ul, g
                best_ev = TraceEvent(it, "accepted", u, v, moved, ul, val)
            else:
                trace.append(TraceEvent(it, "infeasible", u, v, moved, ul, val))
                if prune:  # Corollary 1: every leaf of L_T(v) leaves the candidate set
                    removed.update(range(leaf_start[v], leaf_start[v] + leaf_count[v]))
        active = [a for a in active if a not in removed]
        if best is None or best_ev is None:
            break
        h = best
        cur_ul = prob.ul(h)  # recomputed from scratch each pass (no drift)
        trace.append(
            TraceEvent(it, "accepted", best_ev.node_from, best_ev.node_to, best_ev.moved, cur_ul, best_ev.mi)
        )
        active = [a for a in active if int(h[a]) != a]
    return h, trace


def _greedy_complete(
    prob: UserProblem, h: IntArray, eps: float, trace: list[TraceEvent], it: int
) -> IntArray:
    """R-BU3 (spec §6 B5): move whole image classes to proper ancestors until Ĩ ≤ ε.

    Candidates (u -> v) are enumerated by class u ascending, then v from the parent upwards; the feasible one with
    least UL wins (first in that order on ties). Ĩ is evaluated in increasing (UL, order) so the search stops at the
    first feasible candidate; only when none is feasible are all evaluated for the ΔĨ/ΔUL and least-ΔUL rules.
    """
    tax = prob.tax
    tol = mi_tolerance(eps)
    cur_mi = prob.mi(h)
    cur_ul = prob.ul(h)
    while cur_mi > tol:
        it += 1
        classes = sorted({int(x) for x in h[prob.occurring]} - {tax.root})
        cands: list[tuple[int, int, IntArray, float]] = []
        for u in classes:
            v = int(tax.parent[u])
            while v != -1:
                g = h.copy()
                g[h == u] = v
                cands.append((u, v, g, prob.ul(g)))
                v = int(tax.parent[v])
        if not cands:  # pragma: no cover - all-root has Ĩ = 0, so some class is below the root
            raise RuntimeError(
                "anoncore internal error: greedy completion found no move (please report this bug)"
            )
        mis: list[float] = [math.nan] * len(cands)
        chosen = -1
        for i in sorted(range(len(cands)), key=lambda i: (cands[i][3], i)):
            mis[i] = prob.mi(cands[i][2])
            if mis[i] <= tol:
                chosen = i
                break
        if chosen < 0:
            best_ratio, best_dul = -1, -1
            r_val, d_val = -math.inf, math.inf
            for i, (_, _, _, ul) in enumerate(cands):
                d_mi = cur_mi - mis[i]
                d_ul = ul - cur_ul
                if d_mi > 0:
                    ratio = math.inf if d_ul <= 0 else d_mi / d_ul
                    if best_ratio < 0 or ratio > r_val:
                        best_ratio, r_val = i, ratio
                if best_dul < 0 or d_ul < d_val:
                    best_dul, d_val = i, d_ul
            chosen = best_ratio if best_ratio >= 0 else best_dul
        u, v, g, ul = cands[chosen]
        moved = tuple(np.flatnonzero(h == u).tolist())
        h = g
        cur_mi, cur_ul = mis[chosen], ul
        trace.append(TraceEvent(it, "complete", u, v, moved, ul, cur_mi))
    return h


def bottom_up(prob: UserProblem, eps: float, *, distance: str = "dg") -> tuple[IntArray, list[TraceEvent]]:
    """Algorithm 3 with R-BU1 (check first), R-BU2 (merge equal centroids), R-BU3 (greedy completion) and the
    image-wise update h ← λ∘h (spec §2.5). Pair ties: lexicographically smallest (i, j) in cluster order."""
    tax = prob.tax
    tol = mi_tolerance(eps)
    trace: list[TraceEvent] = []
    h = prob.identity()
    cur_mi = prob.mi(h)
    trace.append(TraceEvent(0, "start", -1, -1, (), prob.ul(h), cur_mi))
    if cur_mi <= tol:  # R-BU1
        return h, trace
    pats = prob.patterns
    clusters: list[list[int]] = [[k] for k in range(pats.shape[0])]
    f = prob.unigram.astype(np.float64)
    it = 0
    while True:
        # R-BU2: clusters whose centroids coincide are merged (order of first appearance kept).
        merged: dict[tuple[int, ...], list[int]] = {}
        for c in clusters:
            key = tuple(h[pats[c[0]]].tolist())
            merged.setdefault(key, []).extend(c)
        clusters = list(merged.values())
        if len(clusters) == 1:
            h = _greedy_complete(prob, h, eps, trace, it)
            break
        best: tuple[float, int, int, dict[int, int]] | None = None
        for i in range(len(clusters)):
            ci = tuple(h[pats[clusters[i][0]]].tolist())
            for j in range(i + 1, len(clusters)):
                cj = tuple(h[pats[clusters[j][0]]].tolist())
                _, lam = lcgp_union_find(ci, cj, tax)
                syms = np.unique(pats[clusters[i] + clusters[j]])
                if distance == "dg":
                    d = 0.0
                    for a in syms.tolist():
                        img = int(h[a])
                        d += float(prob.cost[a, lam.get(img, img)]) * float(f[a])
                else:  # delta_ul: marginal UL change of the global map
                    g = h.copy()
                    for src, dst in lam.items():
                        g[h == src] = dst
                    d = prob.ul(g) - prob.ul(h)
                if best is None or d < best[0]:
                    best = (d, i, j, lam)
        assert best is not None
        d, i, j, lam = best
        g = h.copy()
        for src, dst in lam.items():  # image-wise update h ← λ∘h
            g[h == src] = dst
        moved = tuple(np.flatnonzero(g != h).tolist())
        h = g
        it += 1
        clusters[i] = clusters[i] + clusters[j]
        del clusters[j]
        cur_mi = prob.mi(h)
        trace.append(TraceEvent(it, "merge", -1, -1, moved, prob.ul(h), cur_mi, d))
        if cur_mi <= tol:
            break
    return h, trace


def brute_force(
    prob: UserProblem, eps: float, *, require_sanitized: bool = False, max_maps: int = 2_000_000
) -> tuple[IntArray, float]:
    """Exact g-MULG by enumerating every valid map on the occurring symbols (spec §2.2). First minimum wins."""
    tax = prob.tax
    tol = mi_tolerance(eps)
    occ = prob.occurring.tolist()
    choices = [tax.paths[a] for a in occ]
    total = 1
    for c in choices:
        total *= len(c)
    if total > max_maps:
        raise ValueError(
            f"brute_force would enumerate {total} generalization maps, more than max_maps={max_maps}."
        )
    best_ul = math.inf
    best: IntArray | None = None
    base = prob.identity()
    for combo in itertools.product(*choices):
        g = base.copy()
        g[occ] = combo
        ul = prob.ul(g)
        if ul >= best_ul:
            continue
        if require_sanitized and any(all(int(g[x]) == int(x) for x in p) for p in prob.patterns):
            continue
        if prob.mi(g) <= tol:
            best_ul, best = ul, g
    assert best is not None  # all-root is always feasible
    return best, best_ul
