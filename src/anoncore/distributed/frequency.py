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

from anoncore.data.schema import Attribute, Schema
from anoncore.data.table import Table
from anoncore.distributed._encode import encode_frame, resolved_columns

__all__ = ["FrequencySet"]


def _group(codes: NDArray[np.int32], counts: NDArray[np.int64], radix: list[int]) -> tuple[NDArray[np.int32],
                                                                                          NDArray[np.int64]]:
    """Distinct rows of ``codes`` (first appearance order) with summed counts."""
    if codes.shape[0] == 0:
        return codes, counts
    space = 1
    for c in radix:
        space *= max(1, int(c))
    if space < 2**63:
        key = np.zeros(codes.shape[0], dtype=np.int64)
        for j, c in enumerate(radix):
            key = key * max(1, int(c)) + codes[:, j].astype(np.int64)
        ids, _ = pd.factorize(key, sort=False)
    else:  # many columns: pandas groups the tuples
        ids = pd.MultiIndex.from_arrays([codes[:, j] for j in range(codes.shape[1])]).factorize(sort=False)[0]
    G = int(ids.max()) + 1
    first = np.empty(G, dtype=np.int64)
    first[ids[::-1]] = np.arange(codes.shape[0] - 1, -1, -1, dtype=np.int64)  # the last write (first row) wins
    tot = np.bincount(ids, weights=counts, minlength=G)
    return np.ascontiguousarray(codes[first]), np.rint(tot).astype(np.int64) if tot.dtype != np.int64 else tot


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
    def from_dask(cls, ddf: Any, schema: Schema, sensitive: str | None = None, split_every: int = 8) -> FrequencySet:
        """The frequency set of a dask DataFrame: each partition is encoded with the hierarchies' leaf
        dictionaries and grouped on its worker, and the partial sets are merged by dask's tree reduction
        (``dask.bag.Bag.reduction``, ``split_every`` sets per merge).

        Raises
        ------
        ValueError
            On a value outside a hierarchy (naming column, partition and row), a missing column, a column whose
            dtype differs from the other partitions', an empty partition.
        """
        import dask.bag as db
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
        chunks = [delayed(_partition_items)(p, i, attrs, dtypes, sa_name) for i, p in enumerate(parts)]
        bag = db.from_delayed(chunks)  # type: ignore[no-untyped-call]
        out = bag.reduction(_merge_seq, _merge_seq, split_every=split_every).compute()
        if out is None or out.n_items == 0:
            raise ValueError("The data has no row.")
        return out  # type: ignore[no-any-return]


def _kind(dtype: str) -> str:
    """A dtype's family (numbers of any width agree; strings and objects agree)."""
    if any(t in dtype for t in ("int", "float", "uint")):
        return "number"
    if dtype in ("object", "str", "string", "category") or dtype.startswith("string"):
        return "text"
    return dtype


def _partition_items(df: pd.DataFrame, i: int, attrs: tuple[Attribute, ...], dtypes: dict[str, str],
                     sa: str | None) -> list[FrequencySet]:
    if len(df) == 0:
        raise ValueError(f"Partition {i} is empty: remove empty files or repartition the data.")
    for a in attrs:
        if a.name in df.columns and a.name in dtypes and _kind(str(df[a.name].dtype)) != _kind(dtypes[a.name]):
            raise ValueError(f"Column {a.name!r} has dtype {df[a.name].dtype} in partition {i} but {dtypes[a.name]} "
                             f"in the others: give every file the same column types.")
    codes = encode_frame(df, list(attrs), i)
    return [FrequencySet._make(attrs, codes, np.ones(len(df), dtype=np.int64), sa)]


def _merge_seq(seq: Any) -> FrequencySet | None:
    lst = [x for x in seq if x is not None]
    if not lst:
        return None
    first: FrequencySet = lst[0]
    return first if len(lst) == 1 else first.merge(*lst[1:])
