"""Partition-local encoding: every value is coded by its hierarchy's leaf dictionary, so no global pass."""

from __future__ import annotations

import os
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


# ---------------------------------------------------------------------- Parquet read straight into Arrow
def _arrow_kind(t: Any) -> str:
    """An Arrow type's family (as ``frequency._kind`` for pandas dtypes)."""
    import pyarrow as pa

    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_integer(t) or pa.types.is_floating(t):
        return "number"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "text"
    return str(t)


def parquet_files(source: Any, storage_options: dict[str, Any] | None = None) -> tuple[Any, list[str]]:
    """The filesystem and the sorted Parquet files of a folder, a glob, a path or a list of them (fsspec)."""
    import fsspec

    srcs = [source] if isinstance(source, (str, os.PathLike)) else list(source)
    if not srcs:
        raise ValueError("No Parquet file given.")
    fs = None
    files: list[str] = []
    for src in srcs:
        f, root = fsspec.core.url_to_fs(os.fspath(src), **(storage_options or {}))
        fs = fs or f
        if any(ch in root for ch in "*?["):
            found = sorted(f.glob(root))
        elif f.isdir(root):
            found = sorted(p for p in f.find(root) if p.endswith((".parquet", ".parq"))
                           and not os.path.basename(p).startswith((".", "_")))
        else:
            found = [root] if f.exists(root) else []
        if not found:
            raise FileNotFoundError(f"No Parquet file at {os.fspath(src)!r}.")
        files.extend(found)
    return fs, files


def parquet_units(source: Any, columns: list[str], rows_per_task: int,
                  storage_options: dict[str, Any] | None = None,
                  optional: tuple[str, ...] = ()) -> tuple[Any, list[tuple[str, list[int]]], dict[str, str]]:
    """Tasks of whole row groups (about ``rows_per_task`` rows, never across files) and the type family of
    every needed column (and of each ``optional`` one the first file has); a file that lacks a needed column
    or types a column differently raises."""
    import pyarrow.parquet as pq

    if int(rows_per_task) < 1:
        raise ValueError(f"rows_per_task must be >= 1. Got {rows_per_task} instead.")
    fs, files = parquet_files(source, storage_options)
    units: list[tuple[str, list[int]]] = []
    kinds: dict[str, str] = {}
    for f in files:
        with fs.open(f, "rb") as fh:
            md = pq.ParquetFile(fh).metadata
            schema = md.schema.to_arrow_schema()
        names = schema.names
        if not kinds:
            columns = list(columns) + [c for c in optional if c in names and c not in columns]
        missing = [c for c in columns if c not in names]
        if missing:
            raise ValueError(f"The file {f!r} has no column {missing[0]!r} (columns: {names}).")
        for c in columns:
            k = _arrow_kind(schema.field(c).type)
            if kinds.setdefault(c, k) != k:
                raise ValueError(f"Column {c!r} has type {schema.field(c).type} in {f!r} but {kinds[c]} in the "
                                 f"files before: give every file the same column types.")
        if md.num_rows == 0:
            raise ValueError(f"The file {f!r} is empty (partition {len(units)}): remove empty files.")
        cur: list[int] = []
        rows = 0
        for g in range(md.num_row_groups):
            cur.append(g)
            rows += md.row_group(g).num_rows
            if rows >= rows_per_task:
                units.append((f, cur))
                cur, rows = [], 0
        if cur:
            units.append((f, cur))
    return fs, units, kinds


_NO_BITS = np.zeros(0, dtype=np.uint8)
_NO_COPY = np.zeros(0, dtype=np.int32)  # (no contiguous copy of an encoded column)


def _integer_lut(h: Hierarchy) -> tuple[int, NDArray[np.int32]] | None:
    """(lowest leaf, leaf code of every integer from it, -1 where none) when the leaves are integers over a
    range of at most 2^20 values; else None."""
    try:
        leaf = np.array([float(x) for x in h.leaves])
    except ValueError:
        return None
    if leaf.size == 0 or not np.all(np.isfinite(leaf)) or not np.all(leaf == np.floor(leaf)):
        return None
    lo, hi = int(leaf.min()), int(leaf.max())
    if hi - lo >= 2**20:
        return None
    lut = np.full(hi - lo + 1, -1, dtype=np.int32)
    lut[leaf.astype(np.int64) - lo] = np.arange(leaf.size, dtype=np.int32)
    return lo, lut


def _dict_map(a: Attribute, labels: list[Any]) -> NDArray[np.int32]:
    """Leaf code of each dictionary entry (-1: not a leaf), as encode_column matches labels."""
    lookup = a.hierarchy.leaf_lookup()  # type: ignore[union-attr]
    out = np.empty(len(labels), dtype=np.int32)
    for k, u in enumerate(labels):
        lab = _label(u)
        code = lookup.get(lab)
        if code is None:
            code = lookup.get(lab.strip())
        out[k] = -1 if code is None else code
    return out


def encode_arrow_column(a: Attribute, col: Any, partition: int, out: NDArray[np.int32], j: int,
                        post: NDArray[np.int32] | None = None) -> None:
    """Leaf codes of an Arrow column (chunked; dictionary, string or numeric chunks) into out[:, j]; errors name
    the column, the partition and the row as encode_column's. ``post``: write ``post[leaf code]`` instead (the
    map is applied to the small per-chunk tables, not to the rows)."""

    def then(table: NDArray[np.int32]) -> NDArray[np.int32]:
        if post is None:
            return table
        return np.where(table >= 0, post[np.maximum(table, 0)], -1).astype(np.int32)

    import pyarrow as pa
    import pyarrow.compute as pc

    from anoncore import _core
    from anoncore.data._encode import DictSource, source_of_arrow

    h: Hierarchy = a.hierarchy  # type: ignore[assignment]
    start = 0
    for chunk in col.chunks:
        n = len(chunk)
        if n == 0:
            continue
        dst = out[start:start + n]
        if chunk.null_count:
            i = int(np.flatnonzero(chunk.is_null().to_numpy(zero_copy_only=False))[0])
            raise ValueError(f"Column {a.name!r} has a missing value in partition {partition}, row {start + i}.")
        t = chunk.type
        if a.kind == "numeric" and not pa.types.is_dictionary(t) and (pa.types.is_integer(t) or pa.types.is_floating(t)):
            vals = chunk.to_numpy()
            lut = _integer_lut(h) if pa.types.is_integer(t) else None
            if lut is not None:
                idx = vals.astype(np.int64, copy=False) - lut[0]
                ok = idx.size == 0 or (int(idx.min()) >= 0 and int(idx.max()) < lut[1].size)
                unknown = -1
                if ok:
                    unknown, *_ = _core.core.gather_codes(idx, then(lut[1]), _NO_BITS, 0, dst, j, _NO_COPY, 1)
                if unknown != 0:
                    bad = (idx < 0) | (idx >= lut[1].size)
                    bad[~bad] = lut[1][idx[~bad]] < 0
                    i = int(np.flatnonzero(bad)[0])
                    raise ValueError(f"Value {vals[i].item()!r} of column {a.name!r} (partition {partition}, row {start + i}) "
                                     f"is missing from its hierarchy {h.name!r}.")
            else:
                codes = encode_column(a, pd.Series(vals), partition, start)
                dst[:, j] = codes if post is None else post[codes]
        else:
            if not pa.types.is_dictionary(t):
                if not (pa.types.is_string(t) or pa.types.is_large_string(t)):
                    chunk = chunk.cast(pa.large_string())
                chunk = pc.dictionary_encode(chunk)
            src = source_of_arrow(chunk)
            if not isinstance(src, DictSource):
                codes = encode_column(a, chunk.to_pandas(), partition, start)
                dst[:, j] = codes if post is None else post[codes]
            else:
                table = then(_dict_map(a, src.labels))
                unknown, *_ = _core.core.gather_codes(src.index, table, src.validity, src.validity_offset, dst, j,
                                                      _NO_COPY, 1)
                if unknown:
                    i = int(np.flatnonzero(dst[:, j] == -1)[0])
                    raise ValueError(f"Value {_label(src.labels[int(src.index[i])])!r} of column {a.name!r} (partition "
                                     f"{partition}, row {start + i}) is missing from its hierarchy {h.name!r}.")
        start += n


def read_parquet_unit(fs: Any, unit: tuple[str, list[int]], columns: list[str], text: list[str]) -> Any:
    """The row groups of one task as an Arrow table, the text columns as dictionary arrays."""
    import pyarrow.parquet as pq

    path, groups = unit
    with fs.open(path, "rb") as fh:
        pf = pq.ParquetFile(fh, read_dictionary=text)
        return pf.read_row_groups(groups, columns=columns, use_threads=False)


def encode_parquet_unit(fs: Any, unit: tuple[str, list[int]], partition: int, attrs: list[Attribute],
                        kinds: dict[str, str]) -> NDArray[np.int32]:
    """(n_rows, len(attrs)) leaf codes of one Parquet task."""
    names = [a.name for a in attrs]
    tab = read_parquet_unit(fs, unit, names, [c for c in names if kinds.get(c) == "text"])
    out = np.empty((tab.num_rows, len(attrs)), dtype=np.int32)
    for j, a in enumerate(attrs):
        col = tab.column(a.name)
        k = _arrow_kind(col.type)
        if k != kinds.get(a.name, k):
            raise ValueError(f"Column {a.name!r} has type {col.type} in partition {partition} ({unit[0]!r}) but "
                             f"{kinds[a.name]} in the others: give every file the same column types.")
        encode_arrow_column(a, col, partition, out, j)
    return out
