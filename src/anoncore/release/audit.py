"""Independent audit of a published release pair: (X,Y)-anonymity / (X,Y)-linkability on the join.

The audit re-derives everything from the published T1 and the earlier releases with pandas group-bys at
partition level (it shares no code with the TDS4SA kernel): T1 and every T_r are grouped by their X and join
values, matching partition pairs come from the vectorised predicates of :mod:`anoncore.release.join`, and
a(x), a(x, y), a_Y(x) are aggregated over the pairs with bag semantics (distinct values only inside a_Y).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from anoncore.data.hierarchy import Hierarchy
from anoncore.release._problem import KEY, Spec, resolve
from anoncore.release.join import _distinct, join_nodes, match_matrix, unique_rows

__all__ = ["ReleaseAudit", "audit_release", "join_statistics"]


@dataclass(frozen=True, slots=True)
class ReleaseAudit:
    """Outcome of :func:`audit_release`.

    Attributes
    ----------
    model : {'anonymity', 'linkability'}
    passed : bool
    value : float
        A_Y(X) (anonymity) or L_Y(X) = max over sensitive values (linkability).
    k : float
    per_value : dict
        Linkability: L_y(X) per sensitive value ``(table, attribute, value)``.
    n_x : int
        Number of distinct x values on the join.
    join_size : int
        Number of records of the join (bag semantics).
    """

    model: str
    passed: bool
    value: float
    k: float
    per_value: dict[tuple[str, str, str], float] = field(default_factory=dict)
    n_x: int = 0
    join_size: int = 0


def _codes(df: pd.DataFrame, cols: list[str]) -> np.ndarray:
    if not cols:
        return np.zeros((len(df), 0), dtype=np.int64)
    return np.stack([pd.factorize(df[c])[0] for c in cols], axis=1).astype(np.int64)


def _groups(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Group id per row and the first row of each group."""
    if m.shape[1] == 0:
        return np.zeros(m.shape[0], dtype=np.int64), np.zeros(1, dtype=np.int64)
    _, first, inv = unique_rows(m)
    return inv, first


def join_statistics(spec: Spec) -> pd.DataFrame:
    """One row per x on the join with ``a`` and, per the requirement, ``aY`` or ``a|<item index>`` columns."""
    tabs = spec.tables
    side_parts = []
    for s, df in enumerate(tabs):
        xs = spec.x1 if s == 0 else spec.xr[s - 1]
        js = spec.join_attrs(s)
        pid, first = _groups(_codes(df, list(dict.fromkeys(xs + js))))
        xid = _groups(_codes(df, xs))[0]
        jn = join_nodes(spec, s)
        side_parts.append({"pid": pid, "n": np.bincount(pid), "xid": xid[first], "jn": jn[first]})
    n_p1 = side_parts[0]["n"].size
    pairs = pd.DataFrame({"p0": np.arange(n_p1)})
    for r in range(1, len(tabs)):
        u1, c1 = _distinct(side_parts[0]["jn"])
        ur, cr = _distinct(side_parts[r]["jn"])
        ok = match_matrix(spec, r, u1, ur)
        ca, cb = np.nonzero(ok)
        combos = pd.DataFrame({"c1": ca, "cr": cb})
        left = pd.DataFrame({"p0": np.arange(n_p1), "c1": c1})
        right = pd.DataFrame({f"p{r}": np.arange(side_parts[r]["n"].size), "cr": cr})
        pr = left.merge(combos, on="c1").merge(right, on="cr")[["p0", f"p{r}"]]
        pairs = pairs.merge(pr, on="p0")
    xcols = []
    for s in range(len(tabs)):
        pairs[f"x{s}"] = side_parts[s]["xid"][pairs[f"p{s}"].to_numpy()]
        xcols.append(f"x{s}")
    pairs["x"] = pairs.groupby(xcols, sort=False).ngroup() if len(pairs) else np.zeros(0, dtype=np.int64)
    sizes = [side_parts[s]["n"][pairs[f"p{s}"].to_numpy()].astype(np.int64) for s in range(len(tabs))]
    a = np.prod(np.stack(sizes), axis=0) if len(pairs) else np.zeros(0, dtype=np.int64)
    pairs["a"] = a
    out = pairs.groupby("x").agg(a=("a", "sum"))
    if spec.model == "linkability":
        for i, (s, attr, val, _) in enumerate(spec.items):
            hit = (tabs[s][attr].astype(str) == val).to_numpy()
            cnt = np.bincount(side_parts[s]["pid"], weights=hit, minlength=side_parts[s]["n"].size).astype(np.int64)
            w = a // np.maximum(sizes[s], 1) * cnt[pairs[f"p{s}"].to_numpy()]
            out[f"a|{i}"] = pd.Series(w, index=pairs.index).groupby(pairs["x"]).sum()
        return out
    units = pairs[["x", "p0"] + [f"p{s}" for s in range(1, len(tabs))]]
    for s in range(len(tabs)):
        ys = spec.y[s]
        p = side_parts[s]
        if not ys:
            u = pd.DataFrame({f"p{s}": np.arange(p["n"].size), f"u{s}": 0, f"w{s}": 1})
        elif KEY in ys:
            u = pd.DataFrame({f"p{s}": np.arange(p["n"].size), f"u{s}": np.arange(p["n"].size), f"w{s}": p["n"]})
        else:
            yid = _groups(_codes(tabs[s], ys))[0]
            u = pd.DataFrame({f"p{s}": p["pid"], f"u{s}": yid, f"w{s}": 1}).drop_duplicates()
        units = units.merge(u, on=f"p{s}")
    ucols = [f"u{s}" for s in range(len(tabs))]
    units = units.drop_duplicates(["x"] + ucols)
    w = np.ones(len(units), dtype=np.int64)
    for s in range(len(tabs)):
        w = w * units[f"w{s}"].to_numpy().astype(np.int64)
    out["aY"] = pd.Series(w, index=units.index).groupby(units["x"]).sum()
    return out


def evaluate(spec: Spec) -> ReleaseAudit:
    st = join_statistics(spec)
    k = spec.k
    if spec.model == "anonymity":
        v = float(st["aY"].min()) if len(st) else float("inf")
        return ReleaseAudit("anonymity", v >= k, v, k, {}, len(st), int(st["a"].sum()))
    per: dict[tuple[str, str, str], float] = {}
    ok = True
    for i, (s, attr, val, ky) in enumerate(spec.items):
        lv = float((st[f"a|{i}"] / st["a"]).max()) if len(st) else 0.0
        per[(f"T{s + 1}", attr, val)] = lv
        ok = ok and lv <= ky + 1e-12
    v = max(per.values()) if per else 0.0
    return ReleaseAudit("linkability", ok, v, k, per, len(st), int(st["a"].sum()))


def audit_release(
    t1: pd.DataFrame, t2: pd.DataFrame | Sequence[pd.DataFrame], requirement: Any,
    taxonomies: Mapping[str, Hierarchy] | None = None, class_column: str | None = None,
    continuous: Sequence[str] | None = None, join: Sequence[str] | None = None,
    inconsistent: Sequence[Any] | None = None,
) -> ReleaseAudit:
    """Check an (X,Y)-privacy requirement on the join of a published T1 with the earlier release(s).

    ``t1`` holds published values: taxonomy node labels (any level) on categorical attributes and any
    labels (e.g. intervals) on continuous ones, which are compared for equality only.

    Examples
    --------
    >>> import pandas as pd
    >>> from anoncore.release import XYLinkability
    >>> t1 = pd.DataFrame({"Name": ["Alice", "Alice", "Bob", "Bob", "Cathy"],
    ...                    "Job": ["Banker", "Banker", "Clerk", "Driver", "Engineer"]})
    >>> t2 = pd.DataFrame({"Job": ["Banker", "Banker", "Clerk", "Driver", "Engineer"],
    ...                    "Disease": ["Cancer", "Cancer", "HIV", "Cancer", "HIV"]})
    >>> r = audit_release(t1, t2, XYLinkability(["Name"], ["Disease"], k=0.9))
    >>> r.passed, r.value
    (False, 1.0)
    """
    spec = resolve(t1, t2, requirement, taxonomies, class_column, continuous, join, inconsistent,
                   "audit_release", published=True)
    return evaluate(spec)
