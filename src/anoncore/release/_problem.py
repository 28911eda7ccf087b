"""Requirements, name resolution and validation for sequential releases (spec sequential-release.md, B.1).

Everything that can be wrong with the input is found here, before any work: unknown or ambiguous names, X
and Y overlapping, thresholds out of range, values outside their taxonomies, missing values, a join
attribute missing from one table, Y spanning both tables for linkability (B.6 item 13).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from anoncore._validation import check_float, check_int
from anoncore.data.hierarchy import Hierarchy

__all__ = ["Spec", "XYAnonymity", "XYLinkability", "resolve"]

KEY = "__key__"


@dataclass(frozen=True, slots=True)
class XYAnonymity:
    """(X,Y)-anonymity (Definition 3.1): every x on X co-occurs with at least ``k`` distinct Y values.

    Parameters
    ----------
    x, y : sequence of str
        Attribute names on the join. ``"T1.A"`` / ``"T2.A"`` name one table's column; a bare name of a
        column in one table names that column; a bare common attribute in ``x`` means both copies (the
        paper's recommendation). ``"K1"``, ``"K2"``, ... are the record keys of T1, T2, ...
    k : int
        At least 1.
    """

    x: tuple[str, ...]
    y: tuple[str, ...]
    k: int

    def __init__(self, x: Sequence[str], y: Sequence[str], k: int) -> None:
        object.__setattr__(self, "x", _names(x, "x", "XYAnonymity"))
        object.__setattr__(self, "y", _names(y, "y", "XYAnonymity"))
        object.__setattr__(self, "k", check_int(k, "k", "XYAnonymity", 1))


@dataclass(frozen=True, slots=True)
class XYLinkability:
    """(X,Y)-linkability (Definition 3.2): ``l_y(x) = a(x, y) / a(x) <= k`` for every sensitive value y.

    Parameters
    ----------
    x : sequence of str
        As in :class:`XYAnonymity`.
    y : sequence of str
        Sensitive attributes, all from one table (Lemma 4.2; spec B.6 item 13).
    k : float
        Default threshold in (0, 1].
    values : mapping of str to sequence, default=None
        Sensitive values per attribute of ``y`` (the value-level specification Y = U Y_i); an attribute
        not listed has all its values sensitive.
    thresholds : mapping of (str, value) to float, default=None
        Per-value thresholds k_y in (0, 1] overriding ``k``.
    """

    x: tuple[str, ...]
    y: tuple[str, ...]
    k: float
    values: Mapping[str, tuple[Any, ...]] | None = field(default=None, compare=False)
    thresholds: Mapping[tuple[str, Any], float] | None = field(default=None, compare=False)

    def __init__(self, x: Sequence[str], y: Sequence[str], k: float,
                 values: Mapping[str, Sequence[Any]] | None = None,
                 thresholds: Mapping[tuple[str, Any], float] | None = None) -> None:
        object.__setattr__(self, "x", _names(x, "x", "XYLinkability"))
        object.__setattr__(self, "y", _names(y, "y", "XYLinkability"))
        check_float(k, "k", "XYLinkability", 0, 1, closed="right")
        object.__setattr__(self, "k", float(k))
        if values is not None:
            if not isinstance(values, Mapping):
                raise TypeError(f"The 'values' parameter of XYLinkability must be a mapping. Got {values!r} instead.")
            values = {str(a): tuple(v) for a, v in values.items()}
        object.__setattr__(self, "values", values)
        if thresholds is not None:
            if not isinstance(thresholds, Mapping):
                raise TypeError("The 'thresholds' parameter of XYLinkability must be a mapping (attr, value) -> float.")
            for key, t in thresholds.items():
                if not (isinstance(key, tuple) and len(key) == 2):
                    raise ValueError(f"thresholds keys must be (attribute, value) pairs. Got {key!r} instead.")
                check_float(t, f"threshold of {key!r}", "XYLinkability", 0, 1, closed="right")
            thresholds = {(str(a), v): float(t) for (a, v), t in thresholds.items()}
        object.__setattr__(self, "thresholds", thresholds)


def _names(v: Any, what: str, caller: str) -> tuple[str, ...]:
    if isinstance(v, str) or not isinstance(v, Sequence):
        raise TypeError(f"The {what!r} parameter of {caller} must be a sequence of attribute names. Got {v!r} instead.")
    out = tuple(str(a) for a in v)
    if not out:
        raise ValueError(f"The {what!r} parameter of {caller} must name at least one attribute.")
    return out


# ----------------------------------------------------------------------------------------- resolved spec
@dataclass
class Spec:
    """A validated problem: which columns play which role in which table (0 = T1, r = T_{r+1})."""

    tables: list[pd.DataFrame]
    tax: dict[str, Hierarchy]
    x1: list[str]
    x1_cont: list[bool]
    xr: list[list[str]]                 # per release r >= 1 (index r-1)
    common: list[list[str]]             # per release: categorical attributes shared with T1 (consistency)
    incons: list[tuple[int, str, str, list[tuple[str, str]]]]  # (release, T1 attr, Tr attr, value pairs)
    model: str
    k: float
    y: list[list[str]]                  # per table: Y attributes (KEY for the record key)
    items: list[tuple[int, str, str, float]]  # linkability: (table, attribute, value label, k_y)
    class_column: str | None
    requirement: Any = None
    raw_t1: Any = None

    @property
    def n_rel(self) -> int:
        return len(self.tables) - 1

    def join_attrs(self, side: int) -> list[str]:
        """Join attributes of table ``side`` (T1: with every release), in slot order."""
        out: list[str] = []
        if side == 0:
            for r in range(self.n_rel):
                out += [a for a in self.common[r] if a not in out]
            for _, a1, _, _ in self.incons:
                if a1 not in out:
                    out.append(a1)
        else:
            out = list(self.common[side - 1])
            for r, _, ar, _ in self.incons:
                if r == side and ar not in out:
                    out.append(ar)
        return out


def node_lookup(h: Hierarchy) -> dict[str, int]:
    """Label -> node id, preferring the lowest id (leaves first) when labels repeat across levels."""
    memo: dict[str, int] | None = h._memo.get("release_node_lookup")
    if memo is None:
        memo = {}
        for i, lab in enumerate(h.labels):
            memo.setdefault(lab, i)
        h._memo["release_node_lookup"] = memo
    return memo


def node_codes(h: Hierarchy, values: pd.Series, where: str) -> np.ndarray:
    """Node ids of the labels in ``values``; a clear error naming one value outside the taxonomy."""
    look = node_lookup(h)
    if isinstance(values.dtype, pd.CategoricalDtype):
        inv, uniq = values.cat.codes.to_numpy(), values.cat.categories
    else:
        inv, uniq = pd.factorize(values)
    ids = np.empty(len(uniq), dtype=np.int32)
    for i, u in enumerate(uniq):
        if str(u) not in look:
            raise ValueError(f"Value {str(u)!r} of {where} is outside the taxonomy of {h.name!r}.")
        ids[i] = look[str(u)]
    out: np.ndarray = ids[inv]
    return out


def flat_taxonomy(name: str, values: Sequence[Any]) -> Hierarchy:
    """ANY -> {values} for a categorical attribute given without a taxonomy (a value "ANY" is the root)."""
    vals = sorted({str(v) for v in values} - {"ANY"})
    return Hierarchy.from_nested({"ANY": vals}, name=name)


def _split_name(name: str, n_tables: int) -> tuple[int | None, str]:
    if len(name) >= 2 and name[0] == "K" and name[1:].isdigit():
        t = int(name[1:]) - 1
        if not 0 <= t < n_tables:
            raise ValueError(f"Key {name!r} names no table (there are {n_tables}).")
        return t, KEY
    if name.startswith("T") and "." in name and name[1:name.index(".")].isdigit():
        t = int(name[1:name.index(".")]) - 1
        if not 0 <= t < n_tables:
            raise ValueError(f"Attribute {name!r} names table T{t + 1}, but there are {n_tables} tables.")
        return t, name[name.index(".") + 1:]
    return None, name


def _locate(name: str, tables: list[pd.DataFrame], what: str, expand: bool) -> list[tuple[int, str]]:
    t, a = _split_name(name, len(tables))
    if t is not None:
        if a != KEY and a not in tables[t].columns:
            raise ValueError(f"Attribute {a!r} of {what} ({name!r}) is not a column of T{t + 1} "
                             f"{list(map(str, tables[t].columns))}.")
        return [(t, a)]
    hits = [(i, a) for i, df in enumerate(tables) if a in df.columns]
    if not hits:
        raise ValueError(f"Attribute {a!r} of {what} is not a column of any table.")
    if len(hits) > 1 and not expand:
        raise ValueError(f"Attribute {a!r} of {what} is in several tables; qualify it as "
                         + " or ".join(f"'T{i + 1}.{a}'" for i, _ in hits) + ".")
    return hits


def _is_cont(df: pd.DataFrame, a: str, tax: Mapping[str, Hierarchy], continuous: Sequence[str] | None) -> bool:
    if continuous is not None:
        return a in continuous
    return a not in tax and pd.api.types.is_numeric_dtype(df[a])


def resolve(
    t1: Any, rels: Any, requirement: Any, taxonomies: Mapping[str, Hierarchy] | None, class_column: str | None,
    continuous: Sequence[str] | None, join: Sequence[str] | None, inconsistent: Sequence[Any] | None, caller: str,
    published: bool = False,
) -> Spec:
    """Validate everything and return the resolved :class:`Spec` (no heavy work)."""
    tables = [_frame(t1, "t1", caller)]
    if isinstance(rels, pd.DataFrame):
        rels = [rels]
    if not isinstance(rels, Sequence) or not rels:
        raise TypeError(f"The 't2' parameter of {caller} must be a DataFrame or a non-empty list of DataFrames.")
    tables += [_frame(r, f"t{i + 2}", caller) for i, r in enumerate(rels)]
    if not isinstance(requirement, (XYAnonymity, XYLinkability)):
        raise TypeError(f"The 'requirement' parameter of {caller} must be an XYAnonymity or XYLinkability. "
                        f"Got {type(requirement).__name__} instead.")
    tax = dict(taxonomies or {})
    for a, h in tax.items():
        if not isinstance(h, Hierarchy):
            raise TypeError(f"The taxonomy of {a!r} must be a Hierarchy. Got {type(h).__name__} instead.")
    if class_column is not None and class_column not in tables[0].columns:
        raise ValueError(f"class_column {class_column!r} is not a column of T1.")
    # join attributes: common categorical columns (continuous attributes never match, Section 3.3)
    common: list[list[str]] = []
    for r, df in enumerate(tables[1:], start=1):
        shared = [a for a in tables[0].columns if a in df.columns and a != class_column]
        if join is not None:
            for a in join:
                for i in (0, r):
                    if a not in tables[i].columns:
                        raise ValueError(f"Join attribute {a!r} is missing from T{i + 1} "
                                         f"{list(map(str, tables[i].columns))}.")
            shared = [a for a in join]
        common.append([a for a in shared if not _is_cont(tables[0], a, tax, continuous)])
    # X
    x_sides: list[list[str]] = [[] for _ in tables]
    for name in requirement.x:
        for t, a in _locate(name, tables, "x", expand=True):
            if a == KEY:
                raise ValueError(f"A record key ({name!r}) cannot be in x.")
            if a == class_column:
                raise ValueError(f"The class column {a!r} cannot be in x.")
            if a not in x_sides[t]:
                x_sides[t].append(a)
    y_sides: list[list[str]] = [[] for _ in tables]
    for name in requirement.y:
        for t, a in _locate(name, tables, "y", expand=False):
            if a in x_sides[t]:
                raise ValueError(f"x and y must be disjoint; T{t + 1}.{a} is in both.")
            if a == class_column:
                raise ValueError(f"The class column {a!r} cannot be in y.")
            if a not in y_sides[t]:
                y_sides[t].append(a)
    x1 = x_sides[0]
    x1_cont = [_is_cont(tables[0], a, tax, continuous) for a in x1]
    for a, c in zip(x1, x1_cont):
        if c and not published and not pd.api.types.is_numeric_dtype(tables[0][a]):
            raise ValueError(f"Continuous attribute {a!r} of T1 must be numeric. Got dtype {tables[0][a].dtype}.")
    incons = _inconsistent(inconsistent, tables, caller)
    # taxonomies for every categorical attribute that is generalized or matched
    need = {a for a, c in zip(x1, x1_cont) if not c}
    for r in range(len(common)):
        need |= set(common[r])
    for _, a1, ar, _ in incons:
        need |= {a1, ar}
    for a in sorted(need):
        if a not in tax:
            vals = pd.concat([df[a] for df in tables if a in df.columns]).astype(str).unique()
            tax[a] = flat_taxonomy(a, vals)
    used = [a for t in range(len(tables)) for a in x_sides[t] + y_sides[t]]
    used += [a for r in range(len(common)) for a in common[r]] + ([class_column] if class_column else [])
    for t, df in enumerate(tables):
        for a in set(used) & set(df.columns):
            if df[a].isna().any():
                bad = int(np.flatnonzero(df[a].isna().to_numpy())[0])
                raise ValueError(f"Column {a!r} of T{t + 1} has a missing value (row {bad}); remove or fill it.")
    raw_t1 = tables[0].copy()
    for t, df in enumerate(tables):  # one hash pass per column; later factorizations read the codes
        for a in set(used) & set(df.columns):
            if not pd.api.types.is_numeric_dtype(df[a]) and not isinstance(df[a].dtype, pd.CategoricalDtype):
                df[a] = df[a].astype(str).astype("category")
    items = _items(requirement, tables, y_sides) if isinstance(requirement, XYLinkability) else []
    if isinstance(requirement, XYLinkability):
        sides = [t for t in range(len(tables)) if y_sides[t]]
        if len(sides) > 1:
            raise ValueError("(X,Y)-linkability with y spanning several tables is not anti-monotone (Lemma 4.2 "
                             "needs Y from one table; spec B.6 item 13), so TDS4SA's pruning would be unsafe. "
                             f"Got y from tables {[f'T{s + 1}' for s in sides]}.")
        if any(KEY in ys for ys in y_sides):
            raise ValueError("A record key cannot be a linkability y (every l_y(x) would be trivial).")
    elif len(tables) > 2:
        raise ValueError("(X,Y)-anonymity is developed for one previous release only (the paper extends "
                         "linkability to several, Section 7); pass a single t2.")
    k = float(requirement.k)
    spec = Spec(tables, tax, x1, x1_cont, x_sides[1:], common, incons,
                "anonymity" if isinstance(requirement, XYAnonymity) else "linkability", k, y_sides, items,
                class_column, requirement)
    spec.raw_t1 = raw_t1
    _check_values(spec, published)
    return spec


def _frame(t: Any, what: str, caller: str) -> pd.DataFrame:
    if not isinstance(t, pd.DataFrame):
        raise TypeError(f"The {what!r} parameter of {caller} must be a pandas DataFrame. Got {type(t).__name__} instead.")
    if len(t) == 0:
        raise ValueError(f"Found a table {what} with 0 rows while a minimum of 1 is required.")
    return t.reset_index(drop=True)


def _inconsistent(spec: Sequence[Any] | None, tables: list[pd.DataFrame], caller: str) -> list[Any]:
    """Inconsistency pairs ``("T1.A", a, "T2.B", b)``, grouped per attribute pair."""
    if not spec:
        return []
    groups: dict[tuple[int, str, str], list[tuple[str, str]]] = {}
    for item in spec:
        if not (isinstance(item, Sequence) and len(item) == 4):
            raise ValueError(f"Each entry of 'inconsistent' must be ('T1.A', a, 'Tr.B', b). Got {item!r} instead.")
        n1, v1, n2, v2 = item
        (t1, a1), = _locate(str(n1), tables, "inconsistent", expand=False)
        (t2, a2), = _locate(str(n2), tables, "inconsistent", expand=False)
        if t1 != 0 or t2 == 0:
            raise ValueError(f"Inconsistency pairs relate a T1 attribute to a previous release's attribute "
                             f"(star join, Section 7). Got {item!r}.")
        if a1 == a2:
            raise ValueError(f"Inconsistency applies to distinct attributes; {a1!r} is matched by consistency.")
        groups.setdefault((t2, a1, a2), []).append((str(v1), str(v2)))
    return [(r, a1, a2, pairs) for (r, a1, a2), pairs in groups.items()]


def _items(req: XYLinkability, tables: list[pd.DataFrame], y_sides: list[list[str]]) -> list[Any]:
    out = []
    values = dict(req.values or {})
    thr = dict(req.thresholds or {})
    for t, attrs in enumerate(y_sides):
        for a in attrs:
            present = sorted(tables[t][a].astype(str).unique())
            chosen = [str(v) for v in values.pop(a, present)]
            for v in chosen:
                if v not in present:
                    raise ValueError(f"Sensitive value {v!r} of {a!r} does not occur in T{t + 1}.")
            for v in chosen:
                out.append((t, a, v, float(thr.pop((a, v), thr.pop((a, _num(v)), req.k)))))
    if values:
        raise ValueError(f"'values' names attributes that are not in y: {sorted(values)}.")
    if thr:
        raise ValueError(f"'thresholds' names values that are not sensitive: {sorted(map(str, thr))}.")
    return out


def _num(v: str) -> Any:
    try:
        return int(v)
    except ValueError:
        return v


def _check_values(spec: Spec, published: bool) -> None:
    t1 = spec.tables[0]
    for a, c in zip(spec.x1, spec.x1_cont):
        if c:
            continue
        if published:
            node_codes(spec.tax[a], t1[a], f"T1.{a}")
            continue
        h = spec.tax[a]
        leaves = set(h.leaves)
        uniq = pd.unique(t1[a])
        bad = [u for u in uniq if str(u) not in leaves]
        if bad:
            v = bad[0]
            raise ValueError(f"Value {v!r} of T1.{a} is not a leaf of its taxonomy {h.name!r} (T1 must hold raw "
                             "values on the generalization attributes).")
    for side in range(len(spec.tables)):
        for a in spec.join_attrs(side):
            node_codes(spec.tax[a], spec.tables[side][a], f"T{side + 1}.{a}")
    for r, a1, ar, pairs in spec.incons:
        for v1, v2 in pairs:
            node_codes(spec.tax[a1], pd.Series([v1]), f"the inconsistency pair on T1.{a1}")
            node_codes(spec.tax[ar], pd.Series([v2]), f"the inconsistency pair on T{r + 1}.{ar}")
