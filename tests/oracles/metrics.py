"""Straight-from-the-definition information-loss metrics (slow, obviously correct) and ARX's class predicates.

Nothing here calls anoncore's kernels: the metrics work row by row on plain Python/numpy data read off the
Table and Partition (published code range, hierarchy node and suppression of every row), following
spec sabre-burel.md §2.4 (Cao's GLM), spec generalization-lattice.md §3.5 and ARX-ORACLES.md §6-§7.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np


# ------------------------------------------------------------------------------------------- row view
class Rows:
    """Per row and QI: code, published range [lo, hi], hierarchy node; per row: class id and suppression."""

    def __init__(self, table: Any, partition: Any) -> None:
        self.table = table
        self.qis = list(table.quasi_identifiers)
        lab = np.asarray(partition.labels)
        self.labels = [int(x) for x in lab]
        self.supp = [bool(x) for x in np.asarray(partition.suppressed)]
        self.n = len(self.labels)
        self.codes = [[int(x) for x in table.column(q)] for q in self.qis]
        self.lo = [[int(partition.gen_lo[c, j]) for c in self.labels] for j in range(len(self.qis))]
        self.hi = [[int(partition.gen_hi[c, j]) for c in self.labels] for j in range(len(self.qis))]
        self.node = [[int(partition.gen_node[c, j]) for c in self.labels] for j in range(len(self.qis))]

    def numeric(self, j: int) -> bool:
        return bool(self.table.attribute(self.qis[j]).kind == "numeric")

    def n_leaves(self, j: int) -> int:
        return int(self.table.cardinality(self.qis[j]))

    def width_share(self, j: int, r: int) -> float:
        q = self.qis[j]
        vals = self.table.numeric_values(q)
        lo_d, hi_d = self.table.domain(q)
        if hi_d == lo_d:
            return 0.0
        lo_v, hi_v = max(float(vals[self.lo[j][r]]), lo_d), min(float(vals[self.hi[j][r]]), hi_d)
        return max(0.0, hi_v - lo_v) / (hi_d - lo_d)


def _cell_loss(rows: Rows, j: int, r: int, variant: str) -> float:
    if rows.supp[r]:
        return 1.0
    if rows.numeric(j):
        return rows.width_share(j, r)
    leaves = rows.hi[j][r] - rows.lo[j][r] + 1  # leaves under the published node
    total = rows.n_leaves(j)
    if variant == "cao":
        return 0.0 if leaves == 1 else leaves / total
    return 0.0 if total == 1 else (leaves - 1) / (total - 1)


def ail(table: Any, partition: Any, weights: Any = None, variant: str = "cao") -> float:
    """Cao's AIL: Σ_G |G| Σ_i w_i IL_i(G) / |DB| summed row by row (suppressed rows cost 1 per attribute)."""
    rows = Rows(table, partition)
    d = len(rows.qis)
    w = [1.0 / d] * d if weights is None else list(weights)
    total = 0.0
    for r in range(rows.n):
        total += sum(w[j] * _cell_loss(rows, j, r, variant) for j in range(d))
    return total / rows.n


def ncp(table: Any, partition: Any, weights: Any = None) -> float:
    return ail(table, partition, weights, variant="ncp")


def _classes(rows: Rows) -> dict[int, list[int]]:
    cls: dict[int, list[int]] = defaultdict(list)
    for r, c in enumerate(rows.labels):
        cls[c].append(r)
    return cls


def dm(table: Any, partition: Any) -> int:
    """Bayardo-Agrawal: Σ over published classes |E|² + N per suppressed row."""
    rows = Rows(table, partition)
    total = 0
    for members in _classes(rows).values():
        kept = sum(1 for r in members if not rows.supp[r])
        total += kept * kept
    return total + rows.n * sum(rows.supp)


def dm_star(table: Any, partition: Any) -> int:
    rows = Rows(table, partition)
    return sum(len(m) ** 2 for m in _classes(rows).values())


def gs(g: float) -> tuple[float, float]:
    s_f = 2 * g if g < 0.5 else 1.0
    g_f = 1.0 if g <= 0.5 else 1 - 2 * (g - 0.5)
    return g_f, s_f


def aecs(table: Any, partition: Any, g: float = 0.5) -> float:
    rows = Rows(table, partition)
    g_f, s_f = gs(g)
    kept_classes = sum(1 for m in _classes(rows).values() if any(not rows.supp[r] for r in m))
    s = sum(rows.supp)
    denom = s_f * kept_classes + (g_f if s > 0 else 0.0)
    return rows.n / denom if denom else math.inf


def round10(x: float) -> float:
    return math.floor(x * 1e10) / 1e10 if x > 0 else 0.0


def aggregate(x: list[float], w: list[float], how: str) -> Any:
    d = len(x)
    if how == "sum":
        return sum(wj * xj for xj, wj in zip(x, w))
    if how == "arithmetic_mean":
        return sum((xj / d) * wj for xj, wj in zip(x, w))
    if how == "geometric_mean":
        p = 1.0
        for xj, wj in zip(x, w):
            p *= (wj * xj + 1) ** (1 / d)
        return p - 1
    v = [wj * xj for xj, wj in zip(x, w)]
    return max(v) if how == "maximum" else tuple(sorted(v, reverse=True))


def _arx_w(weights: Any, d: int) -> list[float]:
    if weights is None:
        return [1.0] * d
    m = max(weights)
    return [float(x) / m for x in weights]


def precision(table: Any, partition: Any, monotonic: bool = False, g: float = 0.5, weights: Any = None) -> float:
    """1 − Prec, Sweeney: per cell height(node)/height(H); suppressed cells cost sF (non-monotonic)."""
    rows = Rows(table, partition)
    g_f, s_f = gs(g)
    x = []
    for j, q in enumerate(rows.qis):
        h = table.hierarchy(q)
        tot = 0.0
        for r in range(rows.n):
            if h is None:
                c = rows.width_share(j, r)
            else:
                c = 0.0 if h.height == 0 else int(h.node_height[rows.node[j][r]]) / h.height
            if rows.supp[r] and not monotonic:
                tot += s_f
            else:
                tot += g_f * c
        x.append(tot / rows.n)
    return float(aggregate(x, _arx_w(weights, len(x)), "arithmetic_mean"))


def loss(table: Any, partition: Any, g: float = 0.5, how: str = "geometric_mean", weights: Any = None) -> Any:
    """ARX Loss (ARX-ORACLES §7.4), class by class."""
    rows = Rows(table, partition)
    g_f, s_f = gs(g)
    cls = _classes(rows)
    n = rows.n
    x = []
    for j in range(len(rows.qis)):
        size = rows.n_leaves(j)
        a = 0.0
        for members in cls.values():
            r0 = members[0]
            share = (rows.hi[j][r0] - rows.lo[j][r0] + 1) / size
            kept = sum(1 for r in members if not rows.supp[r])
            sup = len(members) - kept
            a += g_f * kept * share
            if sup:
                a += sup if s_f == 1 else sup * share + s_f * (sup - sup * share)
        mn = g_f * n / size
        x.append(round10(max(0.0, (a - mn) / (n - mn))) if n - mn > 0 else 0.0)
    return aggregate(x, _arx_w(weights, len(x)), how)


def non_uniform_entropy(table: Any, partition: Any, monotonic: bool = False, g: float = 0.5,
                        weights: Any = None) -> float:
    """Row by row: −Σ_rows log2(a_v / b(range)), plus the suppressed rows' entropy (non-monotonic)."""
    rows = Rows(table, partition)
    g_f, s_f = gs(g)
    cls = _classes(rows)
    x = []
    for j, q in enumerate(rows.qis):
        # Charged range of a class: published range extended to cover all its rows (lowest covering node).
        h = table.hierarchy(q)
        charged: dict[int, tuple[int, int]] = {}
        for c, members in cls.items():
            lo_c = min([rows.lo[j][members[0]]] + [rows.codes[j][r] for r in members])
            hi_c = max([rows.hi[j][members[0]]] + [rows.codes[j][r] for r in members])
            if h is not None and (lo_c, hi_c) != (rows.lo[j][members[0]], rows.hi[j][members[0]]):
                best = min((int(h.leaf_count[nd]), nd) for nd in range(h.n_nodes)
                           if h.leaf_start[nd] <= lo_c and h.leaf_start[nd] + h.leaf_count[nd] - 1 >= hi_c)[1]
                lo_c, hi_c = int(h.leaf_start[best]), int(h.leaf_start[best] + h.leaf_count[best] - 1)
            charged[c] = (lo_c, hi_c)
        a: dict[int, int] = defaultdict(int)
        for v in rows.codes[j]:
            a[v] += 1
        base = 0.0
        for r in range(rows.n):
            lo_r, hi_r = charged[rows.labels[r]]
            b = sum(cnt for v, cnt in a.items() if lo_r <= v <= hi_r)
            base += math.log2(a[rows.codes[j][r]] / b)
        c: dict[tuple[int, int], int] = defaultdict(int)
        for r in range(rows.n):
            if rows.supp[r]:
                c[(rows.lo[j][r], rows.hi[j][r])] += 1
        s = sum(c.values())
        supp_term = sum(cx * math.log2(cx / s) for cx in c.values())
        x.append(round10(-g_f * base) if monotonic else round10(-(g_f * base + s_f * supp_term)))
    return float(aggregate(x, _arx_w(weights, len(x)), "sum"))


# ------------------------------------------------------------------------------------------- ARX predicates
def arx_violating_classes(partition: Any, sa_codes: np.ndarray | None, sa_hierarchy: Any,
                          models: list[dict[str, Any]]) -> np.ndarray:
    """Boolean per class: violates one of the ARX models (ARX-ORACLES §5-§6; no research subsets)."""
    labels = np.asarray(partition.labels)
    n_classes = int(partition.n_classes)
    sizes = np.bincount(labels, minlength=n_classes)
    bad = np.zeros(n_classes, dtype=bool)
    min_size = 1
    for m in models:
        if m["type"] == "k-anonymity":
            min_size = max(min_size, int(m["k"]))
        elif "l" in m:
            min_size = max(min_size, math.ceil(m["l"]))
    bad |= sizes < min_size
    if sa_codes is None:
        return bad
    m_vals = int(sa_codes.max()) + 1
    hist = np.zeros((n_classes, m_vals), dtype=np.int64)
    np.add.at(hist, (labels, sa_codes), 1)
    glob = hist.sum(axis=0)
    n_all = int(glob.sum())
    for m in models:
        t = m["type"]
        if t == "recursive-(c,l)-diversity":
            c, l_ = float(m["c"]), int(m["l"])
            for e in range(n_classes):
                f = sorted((int(x) for x in hist[e] if x > 0), reverse=True)
                if len(f) < l_ or not f[0] < c * sum(f[l_ - 1:]):
                    bad[e] = True
        elif t == "t-closeness" and m["ground_distance"] == "hierarchical":
            h = sa_hierarchy
            for e in range(n_classes):
                q_cnt = int(sizes[e])
                extra = {v: int(glob[v]) * q_cnt - int(hist[e, v]) * n_all for v in range(m_vals)}
                cost = 0.0
                for node in range(h.n_leaves, h.n_nodes):  # post-order: children first
                    kids = [c for c in range(h.n_nodes) if int(h.parent[c]) == node]
                    pos = sum(extra[c] for c in kids if extra[c] > 0)
                    neg = sum(-extra[c] for c in kids if extra[c] < 0)
                    extra[node] = pos - neg
                    cost += (int(h.node_height[node]) / h.height) * min(pos, neg)
                if cost / (n_all * q_cnt) > float(m["t"]):
                    bad[e] = True
        elif t == "entropy-l-diversity" and m.get("estimator", "shannon").lower() == "shannon":
            l_ = float(m["l"])
            for e in range(n_classes):
                f = [int(x) for x in hist[e] if x > 0]
                n_e = sum(f)
                if len(f) < math.ceil(l_) or not sum(x * math.log(x) for x in f) <= n_e * (math.log(n_e) - math.log(l_)):
                    bad[e] = True
        elif t == "t-closeness" and m["ground_distance"] == "equal":
            p_glob = glob / n_all
            for e in range(n_classes):
                if 0.5 * float(np.abs(hist[e] / sizes[e] - p_glob).sum()) > float(m["t"]):
                    bad[e] = True
        elif t in ("basic-beta-likeness", "enhanced-beta-likeness"):
            beta = float(m["beta"])
            for e in range(n_classes):
                for v in range(m_vals):
                    if hist[e, v] == 0:
                        continue
                    p = glob[v] / n_all
                    qv = hist[e, v] / sizes[e]
                    bound = beta if t == "basic-beta-likeness" else min(beta, -math.log(p))
                    if (qv - p) / p > bound:
                        bad[e] = True
        elif t == "k-anonymity":
            pass
        else:
            raise NotImplementedError(t)
    return bad
