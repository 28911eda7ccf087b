"""Shared helpers of the static algorithms: parameter validation, the normalised QI space, SA kinds.

The QI space (spec sabre-burel.md §3.4, §8 item 11): one dimension per quasi-identifier, normalised to
[0, 1] by its domain: numeric values by ``(value - L) / (U - L)`` (``L, U`` from ``table.domain``), categorical
and ordinal values by their pre-order leaf rank over ``n_leaves - 1``. Used by the Hilbert keys (SABRE-AK,
BUREL), exact kNN (SABRE-KNN) and Mondrian's widest-dimension choice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from anoncore._tablecache import TableCache
from anoncore._validation import check_instance, check_option
from anoncore.data.hierarchy import Hierarchy
from anoncore.data.table import Table

__all__ = [
    "QISpace",
    "SensitiveInfo",
    "check_table",
    "closeness_from_models",
    "mondrian_hierarchies",
    "qi_space",
    "sensitive_info",
    "t_and_k",
    "warn_keyword_form",
]


@dataclass(frozen=True)
class QISpace:
    """Codes (n, d) plus normalised coordinate tables: coordinate of code c of QI j is
    ``values[offsets[j] + c]``."""

    codes: NDArray[np.int32]
    values: NDArray[np.float64]
    offsets: NDArray[np.int64]
    max_card: int


@dataclass(frozen=True)
class SensitiveInfo:
    """The sensitive column's codes, its number of codes and, for a categorical SA, its hierarchy arrays."""

    name: str
    codes: NDArray[np.int32]
    m: int
    hierarchy: Hierarchy | None

    def closeness_model(self, t: float) -> Any:
        """The t-closeness model with this attribute's ground distance (for the independent audit)."""
        from anoncore.models import HierarchicalDistanceTCloseness, OrderedDistanceTCloseness

        if self.hierarchy is None:
            return OrderedDistanceTCloseness(t, sensitive=self.name)
        return HierarchicalDistanceTCloseness(t, sensitive=self.name)

    @property
    def hierarchy_arrays(self) -> tuple[NDArray[np.int32], ...] | None:
        h = self.hierarchy
        if h is None:
            return None
        return tuple(np.ascontiguousarray(a, dtype=np.int32) for a in (h.parent, h.node_height, h.leaf_start,
                                                                          h.leaf_count))


def check_table(table: Any, caller: str) -> Table:
    tab = check_instance(table, "table", caller, Table, "an anoncore.Table (build one with Table.from_pandas)")
    if not tab.quasi_identifiers:
        raise ValueError(f"{caller} needs a table with at least one quasi-identifier.")
    return tab


def mondrian_hierarchies(table: Table, categorical_split: Any, caller: str) -> list[Any] | None:
    """The ``qi_hierarchies`` argument of the Mondrian kernel for ``categorical_split``.

    ``'rank'`` (the default of every Mondrian baseline): None, median cuts on the pre-order leaf rank for every
    QI. ``'hierarchy'``: for every categorical QI with a hierarchy, its (parent, leaf_start, leaf_count) arrays,
    so the kernel splits it into the children of the LCA of the partition's values; numeric QIs keep median cuts.
    """
    check_option(categorical_split, "categorical_split", caller, ("rank", "hierarchy"))
    if categorical_split == "rank":
        return None
    out: list[Any] = []
    for q in table.quasi_identifiers:
        h = table.hierarchy(q)
        if h is None or table.attribute(q).kind == "numeric":
            out.append(None)
        else:
            out.append(tuple(np.ascontiguousarray(a, dtype=np.int32) for a in (h.parent, h.leaf_start, h.leaf_count)))
    return out


#: Per-table cache of the QI coordinate spaces, dropped with the table.
_CACHE = TableCache("anoncore.static._space")


def qi_space(table: Table, normalized: bool = True) -> QISpace:
    """Codes and coordinate tables of the quasi-identifiers (cached on the table): normalised to [0, 1] by
    default; with ``normalized=False`` the raw values (numeric) and pre-order leaf ranks (categorical), the
    "raw widths" of Mondrian's dimension rule."""
    key = ("qi_space",) if normalized else ("qi_space", "raw")
    cached = _CACHE.of(table).get(key)
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    tabs: list[NDArray[np.float64]] = []
    for q in table.quasi_identifiers:
        a = table.attribute(q)
        if a.kind == "numeric":
            v = table.numeric_values(q)
            if not normalized:
                tabs.append(np.asarray(v, dtype=np.float64).copy())
                continue
            lo, hi = table.domain(q)
            lo, hi = min(lo, float(v.min())), max(hi, float(v.max()))
            tabs.append((v - lo) / (hi - lo) if hi > lo else np.zeros_like(v))
        else:
            card = table.cardinality(q)
            tabs.append(np.arange(card, dtype=np.float64) / (max(card - 1, 1) if normalized else 1.0))
    offsets = np.zeros(len(tabs) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([t.size for t in tabs])
    space = QISpace(table.qi_codes(), np.ascontiguousarray(np.concatenate(tabs)), offsets,
                    int(max(t.size for t in tabs)))
    _CACHE.of(table)[key] = space
    return space


def closeness_from_models(table: Table, models: Any, caller: str) -> tuple[float, int, str | None]:
    """``(t, k, sensitive)`` of the models of a t-closeness algorithm (SABRE, tMondrian): one t-closeness model
    with the ground distance of the sensitive attribute (``OrderedDistanceTCloseness`` for a numeric or ordinal
    attribute, ``HierarchicalDistanceTCloseness`` for a categorical one) and at most one ``KAnonymity``."""
    from anoncore.models import (
        HierarchicalDistanceTCloseness,
        KAnonymity,
        OrderedDistanceTCloseness,
        PrivacyModel,
    )

    mlist = [models] if isinstance(models, PrivacyModel) else list(models)
    ts = [m for m in mlist if isinstance(m, (OrderedDistanceTCloseness, HierarchicalDistanceTCloseness))]
    ks = [m for m in mlist if isinstance(m, KAnonymity)]
    if len(ts) != 1 or len(ks) > 1 or len(ts) + len(ks) != len(mlist):
        raise ValueError(f"The 'models' parameter of {caller} must hold one OrderedDistanceTCloseness or "
                         f"HierarchicalDistanceTCloseness and at most one KAnonymity. Got {mlist!r} instead.")
    tm = ts[0]
    sa = sensitive_info(table, tm.sensitive, caller)
    want = type(sa.closeness_model(float(tm.t)))
    if type(tm) is not want:
        kind = table.attribute(sa.name).kind
        raise ValueError(f"{caller} measures t-closeness on the {kind} attribute {sa.name!r} with the "
                         f"{'hierarchical' if want is HierarchicalDistanceTCloseness else 'ordered'} ground distance; "
                         f"pass {want.__name__}(t, sensitive={sa.name!r}), not {type(tm).__name__}.")
    return float(tm.t), int(ks[0].k) if ks else 1, tm.sensitive


def warn_keyword_form(caller: str, models: Any, *keywords: Any) -> None:
    """DeprecationWarning for the keyword form of the previous release (no models, parameters as keywords)."""
    if models is None and any(v is not None for v in keywords):
        from anoncore.static._shape import deprecated_call

        new = ("[KAnonymity(k), closeness_model(table, t)]" if caller in ("sabre", "tmondrian")
               else "[EnhancedBetaLikeness(beta)]" if caller == "dmondrian"
               else "[likeness_model(beta, variant, ...)] or the model itself, e.g. [EnhancedBetaLikeness(beta)]")
        deprecated_call(f"{caller}(table, <keywords>) without models", f"{caller}(table, {new}, ...)", stacklevel=4)


def t_and_k(table: Table, models: Any, t: Any, k: Any, sensitive: Any, caller: str) -> tuple[Any, Any, Any]:
    """The (t, k, sensitive) of a t-closeness algorithm called with ``models`` or with the keyword form."""
    if models is not None:
        if t is not None or k is not None or sensitive is not None:
            raise TypeError(f"{caller}() takes either 'models' or the keywords t/k/sensitive, not both.")
        return closeness_from_models(table, models, caller)
    if t is None:
        raise TypeError(f"{caller}() missing its models, e.g. [KAnonymity(k), OrderedDistanceTCloseness(t)].")
    return t, 1 if k is None else k, sensitive


def sensitive_info(table: Table, sensitive: str | None, caller: str) -> SensitiveInfo:
    """Resolve the sensitive attribute: numeric/ordinal -> ordered distance; categorical -> its hierarchy."""
    name = table.sensitive_column(sensitive, caller=caller)
    a = table.attribute(name)
    h: Hierarchy | None = None
    if a.kind == "categorical":
        if a.hierarchy is None:
            raise ValueError(f"{caller} needs a hierarchy for the categorical sensitive attribute {name!r} (the "
                             f"ground distance of the EMD is height(LCA) / height(root)); declare one in the "
                             f"schema, or declare the attribute numeric or ordinal for the ordered distance.")
        h = a.hierarchy
    return SensitiveInfo(name, table.column(name), table.cardinality(name), h)
