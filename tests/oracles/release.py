"""Brute-force oracle for sequential releases: materialize the join record by record, count by definition.

Independent of anoncore.release: ancestors by walking parent pointers (no leaf intervals), the join by a
double loop over records (star join over several releases by a product), a(x), a_Y(x) with Python sets and
l_y(x) with dict counters (Definitions 3.1 and 3.2, bag semantics for a(x), spec B.6 item 11).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from typing import Any

import pandas as pd

KEY = "__key__"


def node_of(h: Any, label: Any) -> int:
    return list(h.labels).index(str(label))


def ancestors(h: Any, node: int) -> set[int]:
    out = {node}
    while h.parent[node] >= 0:
        node = int(h.parent[node])
        out.add(node)
    return out


def same_path(h: Any, u: int, v: int) -> bool:
    return u in ancestors(h, v) or v in ancestors(h, u)


def record_match(t1row: dict, trrow: dict, common: list[str], tax: dict, incons: list) -> bool:
    for a in common:
        h = tax[a]
        if not same_path(h, node_of(h, t1row[a]), node_of(h, trrow[a])):
            return False
    for a1, ar, pairs in incons:
        u, w = node_of(tax[a1], t1row[a1]), node_of(tax[ar], trrow[ar])
        for va, vb in pairs:
            if node_of(tax[a1], va) in ancestors(tax[a1], u) and node_of(tax[ar], vb) in ancestors(tax[ar], w):
                return False
    return True


def materialize(t1: pd.DataFrame, rels: list[pd.DataFrame], common: list[list[str]], tax: dict,
                incons: list[list] | None = None) -> list[tuple[int, ...]]:
    """All matching record tuples (i1, i2, ..., ip) of the star join (bag: one entry per record tuple)."""
    incons = incons or [[] for _ in rels]
    r1 = t1.to_dict("records")
    rr = [r.to_dict("records") for r in rels]
    out = []
    for i, a in enumerate(r1):
        lists = [[j for j, b in enumerate(rr[r]) if record_match(a, b, common[r], tax, incons[r])]
                 for r in range(len(rels))]
        for combo in itertools.product(*lists):
            out.append((i, *combo))
    return out


def _value(tables: list[pd.DataFrame], rows: tuple[int, ...], t: int, a: str) -> Any:
    return rows[t] if a == KEY else str(tables[t].iloc[rows[t]][a])


def join_counts(tables: list[pd.DataFrame], join: list[tuple[int, ...]], x: list[tuple[int, str]],
                y: list[tuple[int, str]]) -> tuple[dict, dict, dict]:
    """a(x), a_Y(x) (distinct Y tuples) and a(x, y) per single (table, attribute, value) on the join."""
    a: dict = defaultdict(int)
    ys: dict = defaultdict(set)
    axy: dict = defaultdict(int)
    for rows in join:
        xv = tuple(_value(tables, rows, t, c) for t, c in x)
        a[xv] += 1
        ys[xv].add(tuple(_value(tables, rows, t, c) for t, c in y))
        for t, c in y:
            if c != KEY:
                axy[(xv, (t, c, _value(tables, rows, t, c)))] += 1
    return dict(a), {k: len(v) for k, v in ys.items()}, dict(axy)


def anonymity(tables: list[pd.DataFrame], join: list, x: list, y: list) -> float:
    _, ay, _ = join_counts(tables, join, x, y)
    return float(min(ay.values())) if ay else float("inf")


def linkability(tables: list[pd.DataFrame], join: list, x: list, items: list[tuple[int, str, str]]) -> dict:
    """L_y(X) per item (table, attribute, value)."""
    ycols = sorted({(t, c) for t, c, _ in items})
    a, _, axy = join_counts(tables, join, x, ycols)
    out = {}
    for t, c, v in items:
        out[(t, c, v)] = max((axy.get((xv, (t, c, v)), 0) / n for xv, n in a.items()), default=0.0)
    return out


def entropy_gain(classes_before: list, children: list[list]) -> float:
    """Eq. 2 by definition on lists of class labels."""
    import math

    def ent(lst: list) -> float:
        n = len(lst)
        return -sum(c / n * math.log2(c / n) for c in pd.Series(lst).value_counts()) if n else 0.0

    n = len(classes_before)
    return ent(classes_before) - sum(len(ch) / n * ent(ch) for ch in children if ch)
