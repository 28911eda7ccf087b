"""Independent checker of a SABRE_W run (spec streams-castle-sabrew.md §8, SABRE_W items 1-5, 7; A37).

Written from the definitions only (Def. 6.1, Def. 6.2, Lemma 6.1, Def. 5.1, Lemmas 6.2-6.5); it shares no code
with anoncore.stream: the input stream is given as plain arrays, the output as the concatenated release, and the
EMD is computed here literally (ordered: cumulative differences over the whole domain; hierarchical: the
bottom-up definition with explicit child lists) and cross-checked against an LP in tests.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def emd_ordered_literal(p: list[float], q: list[float]) -> float:
    """EMD with ground distance |i - j| / (m - 1) over the whole domain (thesis Ch. 3)."""
    m = len(p)
    if m <= 1:
        return 0.0
    total, run = 0.0, 0.0
    for i in range(m - 1):
        run += q[i] - p[i]
        total += abs(run)
    return total / (m - 1)


def emd_hierarchical_literal(p: list[float], q: list[float], parent: list[int], height: list[int],
                             n_leaves: int) -> float:
    """EMD with ground distance h(LCA)/h(H): extra(leaf) = q - p; cost(n) = h(n)/h(H) min(pos, neg) per node."""
    nn = len(parent)
    root = next(v for v in range(nn) if parent[v] < 0)
    H = height[root]
    if H == 0:
        return 0.0
    kids: dict[int, list[int]] = {v: [] for v in range(nn)}
    for v in range(nn):
        if parent[v] >= 0:
            kids[parent[v]].append(v)
    cost = 0.0

    def extra(v: int) -> float:
        nonlocal cost
        if v < n_leaves:
            return q[v] - p[v]
        ex = [extra(c) for c in kids[v]]
        pos = sum(e for e in ex if e > 0)
        neg = sum(-e for e in ex if e < 0)
        cost += height[v] / H * min(pos, neg)
        return sum(ex)

    extra(root)
    return cost


def emd_lp(p: np.ndarray, q: np.ndarray, ground: np.ndarray) -> float:
    """EMD as a transportation LP (scipy), for cross-checking the literal formulas."""
    from scipy.optimize import linprog

    m = len(p)
    c = ground.reshape(-1)
    a_eq = []
    b_eq = []
    for i in range(m):  # mass leaving q_i
        row = np.zeros((m, m))
        row[i, :] = 1
        a_eq.append(row.reshape(-1))
        b_eq.append(q[i])
    for j in range(m):  # mass arriving at p_j
        row = np.zeros((m, m))
        row[:, j] = 1
        a_eq.append(row.reshape(-1))
        b_eq.append(p[j])
    res = linprog(c, A_eq=np.array(a_eq), b_eq=np.array(b_eq), bounds=(0, None), method="highs")
    return float(res.fun)


class Ground:
    """The global ground distance: ``Ground(m)`` ordered, or ``Ground(m, parent, height)`` hierarchical."""

    def __init__(self, m: int, parent: Any = None, height: Any = None):
        self.m = int(m)
        self.parent = None if parent is None else [int(x) for x in parent]
        self.height = None if height is None else [int(x) for x in height]

    def emd(self, q_counts: np.ndarray, p_counts: np.ndarray) -> float:
        q = (np.asarray(q_counts, float) / max(np.sum(q_counts), 1)).tolist()
        p = (np.asarray(p_counts, float) / max(np.sum(p_counts), 1)).tolist()
        if self.parent is None:
            return emd_ordered_literal(p, q)
        assert self.height is not None
        return emd_hierarchical_literal(p, q, self.parent, self.height, self.m)

    def matrix(self) -> np.ndarray:
        m = self.m
        if self.parent is None:
            i = np.arange(m)
            return np.abs(i[:, None] - i[None, :]) / max(m - 1, 1)
        assert self.height is not None
        root_h = max(self.height)

        def anc(v: int) -> list[int]:
            out = [v]
            while self.parent[out[-1]] >= 0:  # type: ignore[index]
                out.append(self.parent[out[-1]])  # type: ignore[index]
            return out

        g = np.zeros((m, m))
        for a in range(m):
            aa = anc(a)
            for b in range(m):
                if a == b:
                    continue
                bb = set(anc(b))
                lca = next(x for x in aa if x in bb)
                g[a, b] = self.height[lca] / root_h
        return g


def audit_sabre_w(stream: dict[str, Any], release: Any, *, omega: int, interval: int, t: float, k: int,
                  ground: Ground, leaf_ranges: list[tuple[np.ndarray, np.ndarray]] | None = None,
                  tol: float = 1e-9) -> dict[str, Any]:
    """Check a whole SABRE_W run.

    stream: ``position``, ``pid``, ``sa`` (global codes), ``num`` (n, dn), ``cat`` (n, dc), in arrival order.
    release: concatenated output with ``position``, ``suppressed``, ``ec``, ``emitted_at``, ``num_lo``, ``num_hi``,
    ``cat_node``. ``leaf_ranges[j] = (leaf_start, leaf_count)`` of categorical QI j's hierarchy.
    """
    rep: dict[str, Any] = {}
    pos_in = np.asarray(stream["position"])
    n = pos_in.size
    arrival_of = {int(p): i for i, p in enumerate(pos_in)}
    pos_out = np.asarray(release.position)
    # 1. exactly once
    rep["exactly_once"] = bool(pos_out.size == n and sorted(pos_out.tolist()) == sorted(pos_in.tolist()))
    if not rep["exactly_once"]:
        rep["passed"] = False
        return rep
    arr = np.array([arrival_of[int(p)] for p in pos_out])
    sup = np.asarray(release.suppressed)
    ec = np.asarray(release.ec)
    # 2. delay (Def. 6.2 / Lemma 6.1): left at most omega + I arrivals after its own arrival
    em = np.asarray(release.emitted_at)
    delay = em - (arr + 1)
    rep["max_delay"] = int(delay.max()) if delay.size else 0
    rep["delay"] = bool(np.all(delay <= omega + interval) and np.all(em >= arr + 1))
    pid = np.asarray(stream["pid"])[arr]
    sa = np.asarray(stream["sa"])[arr]
    rel = np.flatnonzero(~sup)
    classes: dict[int, list[int]] = {}
    for r in rel:
        classes.setdefault(int(ec[r]), []).append(int(r))
    # 3. k_s-anonymity (Def. 5.1): distinct persons per emitted class
    rep["min_persons"] = min((len({int(pid[r]) for r in rs}) for rs in classes.values()), default=None)
    rep["k"] = all(len({int(pid[r]) for r in rs}) >= k for rs in classes.values())
    # 4. truthfulness + one generalization per class
    ok = True
    num = np.asarray(stream["num"])[arr] if np.asarray(stream["num"]).size else np.zeros((n, 0))
    cat = np.asarray(stream["cat"])[arr] if np.asarray(stream["cat"]).size else np.zeros((n, 0), int)
    lo, hi, node = np.asarray(release.num_lo), np.asarray(release.num_hi), np.asarray(release.cat_node)
    for rs in classes.values():
        r0 = rs[0]
        for r in rs:
            if not (np.array_equal(lo[r], lo[r0]) and np.array_equal(hi[r], hi[r0])
                    and np.array_equal(node[r], node[r0])):
                ok = False
            for j in range(num.shape[1]):
                if not lo[r, j] <= num[r, j] <= hi[r, j]:
                    ok = False
            for j in range(cat.shape[1]):
                assert leaf_ranges is not None
                ls, lc = leaf_ranges[j]
                nd = int(node[r, j])
                if not (nd >= 0 and ls[nd] <= cat[r, j] < ls[nd] + lc[nd]):
                    ok = False
    rep["truthful"] = ok
    # 5. (omega, t)-closeness (Def. 6.1 item 2): some window of omega consecutive arrivals contains the class and
    #    its SA distribution is within t of the window's.
    sa_in = np.asarray(stream["sa"])
    wl = min(omega, n)
    worst = 0.0
    close = True
    logged = np.asarray(getattr(release, "window_start", np.full(pos_out.size, -1)))
    for rs in classes.values():
        a = arr[rs]
        q = np.bincount(sa[rs], minlength=ground.m)
        lo_s, hi_s = max(int(a.max()) - wl + 1, 0), min(int(a.min()), n - wl)
        starts = list(range(lo_s, hi_s + 1))
        first = int(logged[rs[0]])
        if first in starts:  # try the logged window first (then any other)
            starts.remove(first)
            starts.insert(0, first)
        best = np.inf
        for s in starts:
            e = ground.emd(q, np.bincount(sa_in[s:s + wl], minlength=ground.m))
            best = min(best, e)
            if e <= t + tol:
                break
        worst = max(worst, best)
        if not best <= t + tol:
            close = False
    rep["closeness"] = close
    rep["max_emd"] = worst
    rep["n_classes"] = len(classes)
    rep["n_suppressed"] = int(sup.sum())
    rep["passed"] = all(rep[x] for x in ("exactly_once", "delay", "k", "truthful", "closeness"))
    return rep


def check_case_log(case_log: list[tuple[int, str, float]], omega: int, interval: int) -> list[str]:
    """Lemmas 6.3-6.5 (spec §3.4 test oracles): returns the violations (empty when all hold)."""
    bad = []
    cases = [c for _, c, _ in case_log]
    if cases and cases[0] == "indirect":
        bad.append("INDIRECT at the first slide (Lemma 6.5)")
    if omega == interval and "indirect" in cases:
        bad.append("INDIRECT with omega == I (Lemma 6.3)")
    last = None
    for c in cases:
        if c == "indirect" and last == "indirect":
            bad.append("two INDIRECTs without a DIRECT between them (Lemma 6.4)")
        if c in ("direct", "indirect"):
            last = c
    for _, c, d in case_log:
        if c != "nothing" and d == 0.0 and c != "direct":
            bad.append("D = 0 but the case is not DIRECT")
    return bad
