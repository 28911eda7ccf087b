"""Frequency sets: the distinct (quasi-identifier leaf codes, sensitive code) items of a table with row counts.

A frequency set is all the lattice search needs (the sensitive-value histogram of a class is the counts of its
items), so a table larger than memory is reduced partition by partition and the partial sets are merged by a
tree reduction. Items are kept in order of first appearance over the rows (partitions in order), which makes
the search on a frequency set give the same bits as the in-memory search on the rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from anoncore import _core
from anoncore.data.schema import Attribute, Schema
from anoncore.data.table import Table
from anoncore.distributed._encode import encode_frame, resolved_columns

__all__ = ["FrequencySet"]


_NO_WEIGHTS = np.zeros(0, dtype=np.int64)


def _packable(radix: list[int]) -> bool:
    """Whether the mixed-radix keys of these cardinalities fit in 63 bits (the item-set kernels' keys)."""
    space = 1
    for c in radix:
        space *= max(1, int(c))
    return space < 2**63


def _group(codes: NDArray[np.int32], counts: NDArray[np.int64] | None, radix: list[int]) -> tuple[NDArray[np.int32],
                                                                                                 NDArray[np.int64]]:
    """Distinct rows of ``codes`` (first appearance order) with summed counts (None: 1 per row)."""
    if codes.shape[0] == 0:
        return codes, np.zeros(0, dtype=np.int64) if counts is None else counts
    if _packable(radix):
        r = np.asarray([max(1, int(c)) for c in radix], dtype=np.int64)
        w = _NO_WEIGHTS if counts is None else np.ascontiguousarray(counts, dtype=np.int64)
        keys, tot, _ = _core.distributed.count_rows(np.ascontiguousarray(codes, dtype=np.int32), r, w, 0)
        return _core.distributed.unpack_keys(keys, r), tot
    # many columns: pandas groups the tuples
    if counts is None:
        counts = np.ones(codes.shape[0], dtype=np.int64)
    ids = pd.MultiIndex.from_arrays([codes[:, j] for j in range(codes.shape[1])]).factorize(sort=False)[0]
    G = int(ids.max()) + 1
    first = np.empty(G, dtype=np.int64)
    first[ids[::-1]] = np.arange(codes.shape[0] - 1, -1, -1, dtype=np.int64)  # the last write (first row) wins
    tot = np.bincount(ids, weights=counts, minlength=G)
    return np.ascontiguousarray(codes[first]), np.rint(tot).astype(np.int64)


@dataclass(frozen=True)
class FrequencySet:
    """Distinct items (quasi-identifier leaf codes, then the sensitive code) of a table with their row counts.

    Parameters
    ----------
    attributes : tuple of Attribute
        The quasi-identifiers (each with a hierarchy), then the sensitive attribute when there is one.
    codes : ndarray of int32, shape (n_items, len(attributes))
        Leaf codes in the hierarchies' pre-order leaf numbering (as a :class:`~anoncore.Table` codes them).
    counts : ndarray of int64, shape (n_items,)
        Rows per item, all > 0.
    sensitive : str or None
        The sensitive attribute (last column of ``codes``) or None.

    Build with :meth:`from_table`, :meth:`from_counts` (pre-aggregated counts) or :meth:`from_dask`.
    """

    attributes: tuple[Attribute, ...]
    codes: NDArray[np.int32]
    counts: NDArray[np.int64]
    sensitive: str | None = None

    @property
    def quasi_identifiers(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.attributes[: self.n_qi])

    @property
    def n_qi(self) -> int:
        return len(self.attributes) - (1 if self.sensitive is not None else 0)

    @property
    def n_items(self) -> int:
        return int(self.codes.shape[0])

    @property
    def n_rows(self) -> int:
        return int(self.counts.sum())

    def hierarchy(self, name: str) -> Any:
        return next(a.hierarchy for a in self.attributes if a.name == name)

    def _radix(self) -> list[int]:
        return [int(a.hierarchy.n_leaves) for a in self.attributes]  # type: ignore[union-attr]

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_counts(cls, frame: pd.DataFrame, schema: Schema, count: str = "count",
                    sensitive: str | None = None) -> FrequencySet:
        """A frequency set from pre-aggregated counts: one row per combination of the quasi-identifiers (and the
        sensitive attribute) with its number of rows in column ``count``.

        Examples
        --------
        >>> import pandas as pd
        >>> from anoncore.datasets.census import synthetic_census_schema
        >>> counts = pd.DataFrame({"sex": ["male", "female"], "n": [3, 4]})
        >>> schema = synthetic_census_schema(sensitive=None, n_qi=2)
        >>> schema = schema.replace_attribute("age", role="insensitive")
        >>> FrequencySet.from_counts(counts, schema, count="n").n_rows
        7
        """
        if count not in frame.columns:
            raise ValueError(f"FrequencySet.from_counts: no count column {count!r} (columns: {list(frame.columns)}).")
        qis, sa = resolved_columns(schema, sensitive)
        attrs = qis + ([sa] if sa is not None else [])
        w = pd.to_numeric(frame[count], errors="coerce").to_numpy(dtype=np.float64)
        bad = ~(np.isfinite(w) & (w >= 0) & (w == np.floor(w)))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"FrequencySet.from_counts: count {frame[count].iloc[i]!r} at row {i} is not an "
                             f"integer >= 0.")
        codes = encode_frame(frame, attrs, 0)
        keep = w > 0
        return cls._make(tuple(attrs), codes[keep], w[keep].astype(np.int64), sa.name if sa else None)

    @classmethod
    def from_table(cls, table: Table, sensitive: str | None = None) -> FrequencySet:
        """The frequency set of an encoded in-memory table (items in order of first appearance)."""
        qis = [table.attribute(q) for q in table.quasi_identifiers]
        for a in qis:
            if a.hierarchy is None:
                raise ValueError(f"Quasi-identifier {a.name!r} has no hierarchy.")
        cols = [table.qi_codes()]
        sa_name = None
        attrs = list(qis)
        if sensitive is not None:
            sa_name = table.sensitive_column(sensitive, caller="FrequencySet.from_table")
            attrs.append(table.attribute(sa_name))
            cols.append(table.column(sa_name).reshape(-1, 1))
        codes = np.ascontiguousarray(np.hstack(cols), dtype=np.int32)
        return cls._make(tuple(attrs), codes, np.ones(codes.shape[0], dtype=np.int64), sa_name)

    @classmethod
    def _make(cls, attrs: tuple[Attribute, ...], codes: NDArray[np.int32], counts: NDArray[np.int64],
              sa: str | None) -> FrequencySet:
        radix = [int(a.hierarchy.n_leaves) for a in attrs]  # type: ignore[union-attr]
        c, w = _group(np.ascontiguousarray(codes, dtype=np.int32), np.asarray(counts, dtype=np.int64), radix)
        return cls(attrs, c, w, sa)

    def merge(self, *others: FrequencySet) -> FrequencySet:
        """The frequency set of the rows of ``self`` followed by those of ``others`` (order kept)."""
        for o in others:
            if o.attributes != self.attributes or o.sensitive != self.sensitive:
                raise ValueError("FrequencySet.merge: the sets have different attributes.")
        codes = np.concatenate([self.codes] + [o.codes for o in others])
        counts = np.concatenate([self.counts] + [o.counts for o in others])
        return self._make(self.attributes, codes, counts, self.sensitive)

    @classmethod
    def from_dask(cls, ddf: Any, schema: Schema, sensitive: str | None = None, split_every: int = 8,
                  n_shards: int | None = None) -> FrequencySet:
        """The frequency set of a dask DataFrame: each partition is encoded with the hierarchies' leaf
        dictionaries and grouped on its worker by the C++ item-set kernel, its items are split into
        ``n_shards`` shards by a hash of the item, and every shard is merged by its own tree reduction
        (``split_every`` sets per merge), so the merges run on all the workers; the client interleaves the
        disjoint shards back into order of first appearance. ``n_shards=None``: two per worker of the current
        client (1 without one). The result does not depend on ``n_shards`` or ``split_every``.

        Raises
        ------
        ValueError
            On a value outside a hierarchy (naming column, partition and row), a missing column, a column whose
            dtype differs from the other partitions', an empty partition.
        """
        from dask.delayed import delayed

        qis, sa = resolved_columns(schema, sensitive)
        attrs = tuple(qis + ([sa] if sa is not None else []))
        meta: Any = getattr(ddf, "_meta", None)
        if meta is None:
            raise TypeError(f"FrequencySet.from_dask expects a dask DataFrame. Got {type(ddf).__name__} instead.")
        dtypes = {a.name: str(meta[a.name].dtype) for a in attrs if a.name in meta.columns}
        missing = [a.name for a in attrs if a.name not in meta.columns]
        if missing:
            raise ValueError(f"The data has no column {missing[0]!r} (columns: {list(map(str, meta.columns))}).")
        parts = ddf.to_delayed()
        sa_name = sa.name if sa is not None else None
        S = _n_shards(n_shards, len(parts))
        chunks = [delayed(_partition_items, nout=S)(p, i, attrs, dtypes, S) for i, p in enumerate(parts)]
        return _reduce(chunks, attrs, sa_name, S, split_every)

    @classmethod
    def from_parquet(cls, source: Any, schema: Schema, sensitive: str | None = None, split_every: int = 8,
                     n_shards: int | None = None, rows_per_task: int = 2_000_000,
                     storage_options: dict[str, Any] | None = None) -> FrequencySet:
        """The frequency set of Parquet files (a folder, a glob, a list of paths; any fsspec URL), read by
        ``dask.delayed`` tasks straight into Arrow: the text columns as dictionary arrays, whose small
        dictionaries are mapped to leaf codes once per row group and whose indices are gathered in C++ (no
        Python string per row). Tasks of about ``rows_per_task`` rows (whole row groups, files in sorted
        order) are grouped and merged as in :meth:`from_dask`, with the same result as
        ``from_dask(dask.dataframe.read_parquet(files))``; a partition here is a task, numbered in file order.

        Examples
        --------
        >>> import tempfile
        >>> from anoncore.datasets.census import synthetic_census_schema
        >>> from anoncore.distributed.publish import write_census_parquet
        >>> d = tempfile.mkdtemp()
        >>> _ = write_census_parquet(d, 1000, chunk_rows=400)
        >>> FrequencySet.from_parquet(d, synthetic_census_schema(), sensitive="salary").n_rows
        1000
        """
        from dask.delayed import delayed

        from anoncore.distributed._encode import parquet_units

        qis, sa = resolved_columns(schema, sensitive)
        attrs = tuple(qis + ([sa] if sa is not None else []))
        fs, units, kinds = parquet_units(source, [a.name for a in attrs], rows_per_task, storage_options)
        S = _n_shards(n_shards, len(units))
        chunks = [delayed(_unit_items, nout=S)(fs, u, i, attrs, kinds, S) for i, u in enumerate(units)]
        return _reduce(chunks, attrs, sa.name if sa is not None else None, S, split_every)


_Triple = tuple[NDArray[np.uint64], NDArray[np.int64], NDArray[np.int64]]
_RANK_SHIFT = 40  # rank of an item: (partition << 40) + its position in the partition's list


def _n_shards(n_shards: int | None, n_parts: int) -> int:
    if n_shards is not None:
        if int(n_shards) < 1:
            raise ValueError(f"n_shards must be >= 1. Got {n_shards} instead.")
        return int(n_shards)
    try:
        from distributed import get_client

        n_workers = len(get_client().scheduler_info().get("workers", {}))
    except (ImportError, ValueError):
        n_workers = 1
    return max(1, min(2 * n_workers, 16, max(1, n_parts)))


def _radix_array(attrs: tuple[Attribute, ...]) -> NDArray[np.int64]:
    return np.asarray([max(1, int(a.hierarchy.n_leaves)) for a in attrs], dtype=np.int64)  # type: ignore[union-attr]


def _items_of(codes: NDArray[np.int32], i: int, attrs: tuple[Attribute, ...], S: int) -> Any:
    """The items of partition i, split into S shards (each in rank order); one FrequencySet when the keys do not
    fit in 63 bits."""
    radix = _radix_array(attrs)
    if not _packable([int(x) for x in radix]):
        fs = FrequencySet._make(attrs, codes, np.ones(codes.shape[0], dtype=np.int64), None)
        return (fs,) + (None,) * (S - 1) if S > 1 else fs
    items: _Triple = _core.distributed.count_rows(codes, radix, _NO_WEIGHTS, i << _RANK_SHIFT)
    if S == 1:
        return items
    shard = _core.distributed.shard_of(items[0], S)
    return tuple(tuple(x[shard == s] for x in items) for s in range(S))


def _partition_items(df: pd.DataFrame, i: int, attrs: tuple[Attribute, ...], dtypes: dict[str, str],
                     S: int) -> Any:
    if len(df) == 0:
        raise ValueError(f"Partition {i} is empty: remove empty files or repartition the data.")
    for a in attrs:
        if a.name in df.columns and a.name in dtypes and _kind(str(df[a.name].dtype)) != _kind(dtypes[a.name]):
            raise ValueError(f"Column {a.name!r} has dtype {df[a.name].dtype} in partition {i} but {dtypes[a.name]} "
                             f"in the others: give every file the same column types.")
    return _items_of(encode_frame(df, list(attrs), i), i, attrs, S)


def _unit_items(fs: Any, unit: Any, i: int, attrs: tuple[Attribute, ...], kinds: dict[str, str],
                S: int) -> Any:
    from anoncore.distributed._encode import encode_parquet_unit

    return _items_of(encode_parquet_unit(fs, unit, i, list(attrs), kinds), i, attrs, S)


def _merge_triples(*parts: Any) -> Any:
    lst = [p for p in parts if p is not None]
    if not lst:
        return None
    if isinstance(lst[0], FrequencySet):
        first: FrequencySet = lst[0]
        return first if len(lst) == 1 else first.merge(*lst[1:])
    return lst[0] if len(lst) == 1 else _core.distributed.merge_items(list(lst))


def _reduce(chunks: list[Any], attrs: tuple[Attribute, ...], sa: str | None, S: int,
            split_every: int) -> FrequencySet:
    """Per shard, a tree reduction (partitions in order) of the partitions' items; the client interleaves the
    shards into rank order (order of first appearance over the rows)."""
    from dask.base import compute
    from dask.delayed import delayed

    if int(split_every) < 2:
        raise ValueError(f"split_every must be >= 2. Got {split_every} instead.")
    if not chunks:
        raise ValueError("The data has no row.")
    roots = []
    for s in range(S):
        level = [c[s] if S > 1 else c for c in chunks]
        while len(level) > 1:
            level = [delayed(_merge_triples)(*level[j:j + split_every]) for j in range(0, len(level), split_every)]
        if len(level) == 1 and len(chunks) == 1:
            level = [delayed(_merge_triples)(level[0])]
        roots.append(level[0])
    shards = [x for x in compute(*roots) if x is not None]  # type: ignore[no-untyped-call]
    if shards and isinstance(shards[0], FrequencySet):
        out: FrequencySet = shards[0]
        if out.n_items == 0:
            raise ValueError("The data has no row.")
        return FrequencySet(out.attributes, out.codes, out.counts, sa)
    keys, counts, _ = _core.distributed.interleave_by_rank(shards)
    if keys.size == 0:
        raise ValueError("The data has no row.")
    return FrequencySet(attrs, _core.distributed.unpack_keys(keys, _radix_array(attrs)), counts, sa)


def _kind(dtype: str) -> str:
    """A dtype's family (numbers of any width agree; strings and objects agree)."""
    if any(t in dtype for t in ("int", "float", "uint")):
        return "number"
    if dtype in ("object", "str", "string", "category") or dtype.startswith("string"):
        return "text"
    return dtype
