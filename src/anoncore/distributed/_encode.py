"""Partition-local encoding: every value is coded by its hierarchy's leaf dictionary, so no global pass."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from anoncore.data.hierarchy import Hierarchy
from anoncore.data.schema import Attribute, Schema
from anoncore.data.table import _label


def resolved_columns(schema: Schema, sensitive: str | None) -> tuple[list[Attribute], Attribute | None]:
    """The quasi-identifiers and the sensitive attribute, each with the hierarchy that codes it."""
    if not isinstance(schema, Schema):
        raise TypeError(f"schema must be a Schema. Got {type(schema).__name__} instead.")
    qis = [schema[q] for q in schema.quasi_identifiers]
    if not qis:
        raise ValueError("anoncore.distributed needs a schema with at least one quasi-identifier.")
    for a in qis:
        if a.hierarchy is None:
            raise ValueError(f"Quasi-identifier {a.name!r} has no hierarchy: anoncore.distributed codes every value "
                             f"by its hierarchy's leaf dictionary (no global pass); give it one.")
    sa = None
    if sensitive is not None:
        sa = schema[schema.sensitive_column(sensitive, caller="anoncore.distributed")]
        if sa.hierarchy is None:
            raise ValueError(f"Sensitive attribute {sa.name!r} has no hierarchy: anoncore.distributed codes every "
                             f"value by a hierarchy's leaf dictionary; give it one (a flat one for a nominal "
                             f"attribute: anoncore.data.builders.flat_hierarchy).")
    return qis, sa


def encode_column(a: Attribute, s: pd.Series, partition: int, offset: int = 0) -> NDArray[np.int32]:
    """Leaf codes of one column of one partition; a value outside the hierarchy raises a ValueError naming the
    column, the partition and the row (its position in the partition)."""
    h: Hierarchy = a.hierarchy  # type: ignore[assignment]
    miss = s.isna().to_numpy()
    if miss.any():
        i = int(np.flatnonzero(miss)[0])
        raise ValueError(f"Column {a.name!r} has a missing value in partition {partition}, row {i + offset}.")
    if a.kind == "numeric":
        num = pd.to_numeric(s, errors="coerce").to_numpy(dtype=np.float64)
        leaf_vals = np.array([float(x) for x in h.leaves])
        pos = np.minimum(np.searchsorted(leaf_vals, num), leaf_vals.size - 1)
        bad = ~(np.isfinite(num) & (leaf_vals[pos] == num))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"Value {s.iloc[i]!r} of column {a.name!r} (partition {partition}, row {i + offset}) is "
                             f"missing from its hierarchy {h.name!r}.")
        return np.asarray(pos, dtype=np.int32)
    codes_u, uniques = pd.factorize(s, sort=False)
    lookup = h.leaf_lookup()
    mapped = np.empty(len(uniques), dtype=np.int32)
    for i, u in enumerate(uniques):
        lab = _label(u)
        code = lookup.get(lab)
        if code is None:
            code = lookup.get(lab.strip())
        if code is None:
            row = int(np.flatnonzero(codes_u == i)[0])
            raise ValueError(f"Value {lab!r} of column {a.name!r} (partition {partition}, row {row + offset}) is "
                             f"missing from its hierarchy {h.name!r}.")
        mapped[i] = code
    return np.asarray(mapped[codes_u], dtype=np.int32)


def encode_frame(df: pd.DataFrame, attrs: list[Attribute], partition: int) -> NDArray[np.int32]:
    """(n_rows, len(attrs)) leaf codes of one partition."""
    missing = [a.name for a in attrs if a.name not in df.columns]
    if missing:
        raise ValueError(f"Partition {partition} has no column {missing[0]!r} (columns: {list(map(str, df.columns))}).")
    out = np.empty((len(df), len(attrs)), dtype=np.int32)
    for j, a in enumerate(attrs):
        out[:, j] = encode_column(a, df[a.name], partition)
    return out


def decode_labels(h: Hierarchy, nodes: NDArray[Any]) -> NDArray[Any]:
    """Labels of hierarchy nodes."""
    labels = np.asarray(h.labels, dtype=object)
    return np.asarray(labels[nodes])
