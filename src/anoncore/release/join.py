"""The lossy join of two (or more) releases (spec sequential-release.md B.1, Section 3.3 of the paper).

Predicates work on taxonomy node ids with anoncore's :class:`~anoncore.data.hierarchy.Hierarchy` numbering:
a node covers the leaf range ``[leaf_start, leaf_start + leaf_count)``, so ancestor-or-self and
same-generalization-path tests are two integer comparisons (the Euler-tour test on leaf positions), vectorised
with NumPy here and in C++ inside TDS4SA.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from anoncore.data.hierarchy import Hierarchy
from anoncore.release._problem import Spec, flat_taxonomy, node_codes

__all__ = ["consistent", "covers", "lossy_join", "match_matrix", "population_related"]


def covers(h: Hierarchy, a: Any, u: Any) -> NDArray[np.bool_]:
    """``a`` is an ancestor-or-self of ``u`` (node ids, broadcast)."""
    a = np.asarray(a, dtype=np.int64)
    u = np.asarray(u, dtype=np.int64)
    ls, lc = h.leaf_start, h.leaf_count
    return (ls[a] <= ls[u]) & (ls[u] + lc[u] <= ls[a] + lc[a])  # type: ignore[no-any-return]


def consistent(h: Hierarchy, u: Any, v: Any) -> NDArray[np.bool_]:
    """Consistency predicate: ``u`` and ``v`` lie on one generalization path (broadcast).

    Examples
    --------
    >>> from anoncore.data.hierarchy import Hierarchy
    >>> h = Hierarchy.from_nested({"ANY": {"Male": ["Single-Male", "Married-Male"], "Female": ["F"]}})
    >>> look = {lab: i for i, lab in enumerate(h.labels)}
    >>> bool(consistent(h, look["Male"], look["Single-Male"])), bool(consistent(h, look["Male"], look["F"]))
    (True, False)
    """
    u = np.asarray(u, dtype=np.int64)
    v = np.asarray(v, dtype=np.int64)
    ls, lc = h.leaf_start, h.leaf_count
    return (ls[u] < ls[v] + lc[v]) & (ls[v] < ls[u] + lc[u])  # type: ignore[no-any-return]


def match_matrix(spec: Spec, release: int, n1: NDArray[np.int32], nr: NDArray[np.int32]) -> NDArray[np.bool_]:
    """Which T1 join-value rows (``n1``, one column per T1 join slot) match which release rows (``nr``).

    Both predicates of Section 3.3: consistency on every common attribute, and no inherited inconsistency
    pair between distinct attributes. Returns a bool matrix of shape (len(n1), len(nr)).
    """
    s1 = spec.join_attrs(0)
    sr = spec.join_attrs(release)
    ok = np.ones((n1.shape[0], nr.shape[0]), dtype=bool)
    for a in spec.common[release - 1]:
        h = spec.tax[a]
        ok &= consistent(h, n1[:, s1.index(a)][:, None], nr[:, sr.index(a)][None, :])
    for r, a1, ar, pairs in spec.incons:
        if r != release:
            continue
        h1, hr = spec.tax[a1], spec.tax[ar]
        look1 = node_codes(h1, pd.Series([p[0] for p in pairs]), f"T1.{a1}")
        lookr = node_codes(hr, pd.Series([p[1] for p in pairs]), f"T{r + 1}.{ar}")
        u = n1[:, s1.index(a1)]
        w = nr[:, sr.index(ar)]
        for pa, pb in zip(look1, lookr):
            ok &= ~(covers(h1, pa, u)[:, None] & covers(hr, pb, w)[None, :])
    return ok


def join_nodes(spec: Spec, side: int, df: pd.DataFrame | None = None) -> NDArray[np.int32]:
    """Node ids of table ``side``'s join attributes, shape (n_rows, n_slots)."""
    df = spec.tables[side] if df is None else df
    cols = [node_codes(spec.tax[a], df[a], f"T{side + 1}.{a}") for a in spec.join_attrs(side)]
    if not cols:
        return np.zeros((len(df), 0), dtype=np.int32)
    return np.ascontiguousarray(np.stack(cols, axis=1), dtype=np.int32)


def unique_rows(m: NDArray[Any]) -> tuple[NDArray[Any], NDArray[np.int64], NDArray[np.int64]]:
    """Distinct rows in lexicographic order, first index of each, and the inverse (like np.unique(axis=0)).

    Rows of non-negative ints are packed into one int64 (mixed radix, first column most significant) and
    sorted in 1-D, which is an order of magnitude faster than ``np.unique(axis=0)`` on a million rows.
    """
    m = np.asarray(m)
    if m.shape[1] == 0:
        return m[:1], np.zeros(min(1, m.shape[0]), dtype=np.int64), np.zeros(m.shape[0], dtype=np.int64)
    hi = m.max(axis=0).astype(np.float64) + 1 if m.shape[0] else np.ones(m.shape[1])
    if m.shape[0] and m.min() >= 0 and float(np.prod(hi)) < 2.0**62:
        key = np.zeros(m.shape[0], dtype=np.int64)
        for j in range(m.shape[1]):
            key = key * np.int64(hi[j]) + m[:, j].astype(np.int64)
        _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    else:
        _, first, inv = np.unique(m, axis=0, return_index=True, return_inverse=True)
    return m[first], first.astype(np.int64), inv.reshape(-1).astype(np.int64)


def _distinct(rows: NDArray[np.int32]) -> tuple[NDArray[np.int32], NDArray[np.int64]]:
    if rows.shape[1] == 0:
        return np.zeros((1, 0), dtype=np.int32), np.zeros(rows.shape[0], dtype=np.int64)
    u, _, inv = unique_rows(rows)
    return u, inv


def dangling(spec: Spec, t1: pd.DataFrame | None = None) -> list[tuple[int, int]]:
    """Per release r: (T1 records with no match in T_r, T_r records with no match in T1)."""
    u1, inv1 = _distinct(join_nodes(spec, 0, t1))
    out = []
    for r in range(1, len(spec.tables)):
        ur, invr = _distinct(join_nodes(spec, r))
        m = match_matrix(spec, r, u1, ur)
        lone1 = np.asarray(~m.any(axis=1), dtype=bool)
        lone_r = np.asarray(~m.any(axis=0), dtype=bool)
        out.append((int(lone1[inv1].sum()), int(lone_r[invr].sum())))
    return out


def _spec_for(t1: pd.DataFrame, t2: pd.DataFrame | Sequence[pd.DataFrame], taxonomies: Mapping[str, Hierarchy] | None,
              join: Sequence[str] | None, inconsistent: Sequence[Any] | None) -> Spec:
    from anoncore.release._problem import _inconsistent

    tables = [t1.reset_index(drop=True)] + ([t2] if isinstance(t2, pd.DataFrame) else list(t2))
    tables = [t.reset_index(drop=True) for t in tables]
    tax = dict(taxonomies or {})
    common = []
    for r, df in enumerate(tables[1:], start=1):
        shared = list(join) if join is not None else [a for a in tables[0].columns if a in df.columns]
        for a in shared:
            for i in (0, r):
                if a not in tables[i].columns:
                    raise ValueError(f"Join attribute {a!r} is missing from T{i + 1} {list(map(str, tables[i].columns))}.")
        common.append(shared)
    incons = _inconsistent(inconsistent, tables, "lossy_join")
    for a in {a for c in common for a in c} | {x for _, a1, ar, _ in incons for x in (a1, ar)}:
        if a not in tax:
            tax[a] = flat_taxonomy(a, pd.concat([d[a] for d in tables if a in d.columns]).astype(str).unique())
    return Spec(tables, tax, [], [], [[] for _ in tables[1:]], common, incons, "anonymity", 1.0,
                [[] for _ in tables], [], None)


def population_related(
    t1: pd.DataFrame, t2: pd.DataFrame | Sequence[pd.DataFrame], taxonomies: Mapping[str, Hierarchy] | None = None,
    join: Sequence[str] | None = None, inconsistent: Sequence[Any] | None = None,
) -> bool:
    """True iff every record of each table has at least one match in the other (Section 3.3).

    Examples
    --------
    >>> import pandas as pd
    >>> t1 = pd.DataFrame({"Job": ["Banker", "Clerk"]})
    >>> population_related(t1, pd.DataFrame({"Job": ["Banker", "Clerk"]}))
    True
    >>> population_related(t1, pd.DataFrame({"Job": ["Banker", "Banker"]}))
    False
    """
    spec = _spec_for(t1, t2, taxonomies, join, inconsistent)
    return all(a == 0 and b == 0 for a, b in dangling(spec))


def lossy_join(
    t1: pd.DataFrame, t2: pd.DataFrame, taxonomies: Mapping[str, Hierarchy] | None = None,
    join: Sequence[str] | None = None, inconsistent: Sequence[Any] | None = None,
) -> pd.DataFrame:
    """Materialize the join of ``t1`` and ``t2``: every matching record pair, as a bag (spec B.6 item 11).

    A common attribute ``A`` keeps two columns ``T1.A`` and ``T2.A``; the others keep their names. Columns
    ``_r1`` / ``_r2`` give the record positions. Size is |T1| x |T2| at worst: use on small tables.

    Examples
    --------
    >>> import pandas as pd
    >>> t1 = pd.DataFrame({"Name": ["Alice", "Alice", "Bob", "Bob", "Cathy"],
    ...                    "Job": ["Banker", "Banker", "Clerk", "Driver", "Engineer"]})
    >>> t2 = pd.DataFrame({"Job": ["Banker", "Banker", "Clerk", "Driver", "Engineer"],
    ...                    "Disease": ["Cancer", "Cancer", "HIV", "Cancer", "HIV"]})
    >>> len(lossy_join(t1, t2))
    7
    """
    spec = _spec_for(t1, t2, taxonomies, join, inconsistent)
    n1, n2 = join_nodes(spec, 0), join_nodes(spec, 1)
    u1, inv1 = _distinct(n1)
    u2, inv2 = _distinct(n2)
    m = match_matrix(spec, 1, u1, u2)
    i, j = np.nonzero(m[inv1][:, inv2])
    common = set(spec.tables[0].columns) & set(spec.tables[1].columns)
    out: dict[str, Any] = {}
    for c in spec.tables[0].columns:
        out[f"T1.{c}" if c in common else c] = spec.tables[0][c].to_numpy()[i]
    for c in spec.tables[1].columns:
        out[f"T2.{c}" if c in common else c] = spec.tables[1][c].to_numpy()[j]
    out["_r1"], out["_r2"] = i, j
    return pd.DataFrame(out)
