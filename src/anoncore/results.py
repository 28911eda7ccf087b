"""Partition (what an algorithm publishes) and the Result returned by every algorithm."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from anoncore import _core
from anoncore._plain import plain as _plain
from anoncore.data.table import Table

if TYPE_CHECKING:
    from anoncore.audit import AuditReport

__all__ = ["Achieved", "Partition", "Result"]


def _readonly(a: NDArray[Any]) -> NDArray[Any]:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


def _fmt_num(x: float) -> str:
    """``20`` for integral floats, else the float's repr: the same numeric labels as the stream commands."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _decoded_strings(chunks: list[Any], threads: int, pa: Any, pc: Any) -> list[Any]:
    """The strings of dictionary arrays as ``large_string`` arrays, decoded in C++ on ``threads`` threads into
    one block of offsets and one of bytes (one allocation each, on huge pages: census-income's nine published
    columns took 12 ms of page faults as eighteen arrays, 3 ms as two blocks); an array whose indices have nulls
    or are not int8 / int16 / int32 is decoded by ``pyarrow.compute.take``."""
    kinds = {pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32}
    jobs: list[Any] = []
    for chunk in chunks:
        dictionary = chunk.dictionary.cast(pa.large_string())
        idx = chunk.indices
        if idx.null_count or dictionary.null_count or idx.type not in kinds:
            jobs.append(pc.take(dictionary, idx))
            continue
        index = np.frombuffer(idx.buffers()[1], dtype=kinds[idx.type], count=len(idx),
                              offset=idx.offset * idx.type.byte_width)
        offsets = np.frombuffer(dictionary.buffers()[1], dtype=np.int64, count=len(dictionary) + 1,
                                offset=dictionary.offset * 8)
        data = dictionary.buffers()[2]
        values = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8)
        starts = _core.core.dictionary_chunk_starts(index, offsets, values.size, threads)
        jobs.append((index, offsets, values, starts))
    todo = [j for j in jobs if isinstance(j, tuple)]
    all_offsets = np.empty(sum(len(j[0]) + 1 for j in todo), dtype=np.int64)
    all_data = np.empty(sum(int(j[3][-1]) for j in todo), dtype=np.uint8)
    out, at_o, at_d = [], 0, 0
    for job in jobs:
        if not isinstance(job, tuple):
            out.append(job)
            continue
        index, offsets, values, starts = job
        nbytes = int(starts[-1])
        o = all_offsets[at_o:at_o + len(index) + 1]
        d = all_data[at_d:at_d + nbytes]
        _core.core.decode_dictionary(index, offsets, values, starts, o, d, threads)
        out.append(pa.LargeStringArray.from_buffers(len(index), pa.py_buffer(o), pa.py_buffer(d)))
        at_o, at_d = at_o + len(index) + 1, at_d + nbytes
    return out


@dataclass(frozen=True, eq=False, slots=True)
class Partition:
    """Rows grouped into equivalence classes, with each class's published generalization.

    Build with :meth:`from_levels` (full-domain generalization) or :meth:`from_labels` (any grouping; each
    class is published as its minimum bounding box: numeric ``[min, max]``, categorical lowest common
    ancestor).

    Attributes
    ----------
    table : Table
        The encoded input.
    labels : ndarray of int64, shape (n_rows,)
        Equivalence class id of every row, dense in ``0 .. n_classes-1``.
    suppressed : ndarray of bool, shape (n_rows,)
        Rows withheld from publication. They keep their class id (metrics such as ARX's DM* count them).
    n_classes : int
    gen_lo, gen_hi : ndarray of int32, shape (n_classes, n_qi)
        Published code range (inclusive) per class and quasi-identifier.
    gen_node : ndarray of int32, shape (n_classes, n_qi)
        Published hierarchy node per class and quasi-identifier (-1 for numeric attributes without a
        hierarchy).
    levels : tuple of int or None
        Full-domain generalization levels (in the order of ``table.quasi_identifiers``), when built from levels.
    """

    table: Table = field(repr=False)
    labels: NDArray[np.int64] = field(repr=False)
    suppressed: NDArray[np.bool_] = field(repr=False)
    n_classes: int
    gen_lo: NDArray[np.int32] = field(repr=False)
    gen_hi: NDArray[np.int32] = field(repr=False)
    gen_node: NDArray[np.int32] = field(repr=False)
    levels: tuple[int, ...] | None = None

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_levels(
        cls, table: Table, levels: Sequence[int], suppressed: NDArray[np.bool_] | None = None, *,
        n_threads: int | None = None,
    ) -> Partition:
        """Full-domain generalization: QI ``j`` of every row goes to its ancestor at ``levels[j]``.

        The rows are grouped in C++ over fixed-size row chunks with ``n_threads`` threads (None = every core the
        process may use); the classes are numbered in order of first appearance, whatever ``n_threads``.

        Examples
        --------
        >>> from anoncore.datasets import toy_table
        >>> p = Partition.from_levels(toy_table(), [1, 0])
        >>> p.n_classes, p.class_sizes.tolist()
        (3, [2, 2, 2])
        """
        from anoncore._validation import check_n_threads

        if not isinstance(table, Table):
            raise TypeError(f"table must be a Table. Got {type(table).__name__} instead.")
        qis = table.quasi_identifiers
        if not qis:
            raise ValueError("Partition.from_levels needs a table with at least one quasi-identifier.")
        levels = tuple(levels)
        if len(levels) != len(qis):
            raise ValueError(f"levels has {len(levels)} entries but the table has {len(qis)} quasi-identifiers "
                             f"{list(qis)}.")
        hs = []
        for q, lv in zip(qis, levels):
            if isinstance(lv, bool) or not isinstance(lv, (int, np.integer)):
                raise TypeError(f"The level of {q!r} must be an int. Got {_plain(lv)} instead.")
            h = table.hierarchy(q)
            if h is None:
                raise ValueError(f"Quasi-identifier {q!r} has no hierarchy, so it cannot be generalized by levels.")
            if not 0 <= lv <= h.height:
                raise ValueError(f"The level of {q!r} must be in the range [0, {h.height}]. Got {lv} instead.")
            hs.append(h)
        threads = check_n_threads(n_threads, "Partition.from_levels")
        sup = _check_suppressed(suppressed, table.n_rows)
        # Per QI: leaf code -> index of its ancestor at the level among the level's distinct ancestors, so the
        # rows' keys are small mixed-radix numbers (the same classes as grouping the ancestors themselves).
        nodes, maps = [], []
        for h, lv in zip(hs, levels):
            u, inv = np.unique(h.ancestor[:, lv], return_inverse=True)
            nodes.append(u.astype(np.int32))
            maps.append(inv.reshape(-1).astype(np.int32))
        widths = np.array([len(u) for u in nodes], dtype=np.int64)
        codes = np.ascontiguousarray(table.codes)
        cols = table.qi_column_indices()
        if math.prod(int(w) for w in widths) <= 1 << 62:
            offsets = np.concatenate([[0], np.cumsum([m.size for m in maps])]).astype(np.int64)
            labels, n_classes, first = _core.core.levels_labels(
                codes, cols, np.ascontiguousarray(np.concatenate(maps)), offsets, widths, threads)
            gen_node = np.empty((int(n_classes), len(qis)), dtype=np.int32)
            for j, u in enumerate(nodes):
                gen_node[:, j] = u[maps[j][codes[first, cols[j]]]]
        else:  # key space beyond 62 bits: group the generalized rows themselves
            qc = table.qi_codes()
            gen = np.empty_like(qc)
            for j, (h, lv) in enumerate(zip(hs, levels)):
                gen[:, j] = h.ancestor[qc[:, j], lv]
            card = np.array([h.n_nodes for h in hs], dtype=np.int64)
            labels, n_classes = _core.core.dense_labels(np.ascontiguousarray(gen), card, threads)
            gen_node = np.ascontiguousarray(gen[_first_rows(labels, n_classes)])
        gen_lo = np.empty_like(gen_node)
        gen_hi = np.empty_like(gen_node)
        for j, h in enumerate(hs):
            gen_lo[:, j] = h.leaf_start[gen_node[:, j]]
            gen_hi[:, j] = gen_lo[:, j] + h.leaf_count[gen_node[:, j]] - 1
        return cls(table, _readonly(labels), _readonly(sup), int(n_classes),
                   _readonly(gen_lo), _readonly(gen_hi), _readonly(gen_node), tuple(int(x) for x in levels))

    @classmethod
    def from_labels(
        cls, table: Table, labels: Any, suppressed: NDArray[np.bool_] | None = None
    ) -> Partition:
        """Any grouping of rows; each class is published as its minimum bounding box.

        ``labels`` may be any integer or string labels (one per row); they are renumbered densely in sorted
        order. The box is computed over the class's published (non-suppressed) rows.

        Examples
        --------
        >>> from anoncore.datasets import toy_table
        >>> p = Partition.from_labels(toy_table(), [0, 0, 1, 1, 2, 2])
        >>> p.to_pandas()["zip"].tolist()
        ['1305*', '1305*', '1485*', '1485*', '1306*', '1306*']
        """
        if not isinstance(table, Table):
            raise TypeError(f"table must be a Table. Got {type(table).__name__} instead.")
        lab = np.asarray(labels)
        if lab.ndim != 1 or lab.shape[0] != table.n_rows:
            raise ValueError(f"labels must be 1-D with one entry per row ({table.n_rows}). Got shape {lab.shape}.")
        if lab.dtype.kind == "f" and np.isnan(lab).any():
            raise ValueError("labels must not contain NaN.")
        dense = None
        if lab.dtype.kind in "iu" and lab.size:
            # Fast path (O(n)): labels already dense 0..C-1 are their own sorted renumbering.
            mx, mn = int(lab.max()), int(lab.min())
            if mn == 0 and mx < lab.size and np.all(np.bincount(lab.astype(np.int64), minlength=mx + 1) > 0):
                dense = np.array(lab, dtype=np.int64)  # a copy: the caller's array stays writeable
        if dense is None:
            _, dense = np.unique(lab, return_inverse=True)
            dense = np.ascontiguousarray(dense.reshape(-1), dtype=np.int64)
        n_classes = int(dense.max()) + 1
        sup = _check_suppressed(suppressed, table.n_rows)
        qc = table.qi_codes()
        lo, hi = _core.core.class_min_max(qc, dense, sup, n_classes)
        # Fully suppressed classes: publish the whole domain.
        empty = hi[:, 0] < 0 if qc.shape[1] else np.zeros(n_classes, dtype=bool)
        gen_node = np.full_like(lo, -1)
        for j, q in enumerate(table.quasi_identifiers):
            h = table.hierarchy(q)
            if h is None:
                lo[empty, j] = 0
                hi[empty, j] = table.cardinality(q) - 1
                continue
            lo[empty, j] = 0
            hi[empty, j] = h.n_leaves - 1
            node = h.lca_of_leaf_range(lo[:, j], hi[:, j])
            node[empty] = h.root
            gen_node[:, j] = node
            lo[:, j] = h.leaf_start[node]
            hi[:, j] = h.leaf_start[node] + h.leaf_count[node] - 1
        return cls(table, _readonly(dense), _readonly(sup), n_classes, _readonly(lo), _readonly(hi),
                   _readonly(gen_node), None)

    # ------------------------------------------------------------------ derived values
    @property
    def n_rows(self) -> int:
        return int(self.labels.shape[0])

    @property
    def n_suppressed(self) -> int:
        return int(self.suppressed.sum())

    @property
    def class_sizes(self) -> NDArray[np.int64]:
        """Published (non-suppressed) rows per class."""
        return _core.core.class_sizes(self.labels, self.suppressed, self.n_classes, 0)

    @property
    def class_sizes_all(self) -> NDArray[np.int64]:
        """Rows per class including suppressed ones."""
        return _core.core.class_sizes(self.labels, np.zeros(0, dtype=bool), self.n_classes, 0)

    def with_suppressed(self, suppressed: NDArray[np.bool_]) -> Partition:
        """The same classes with another suppression mask."""
        return Partition(self.table, self.labels, _readonly(_check_suppressed(suppressed, self.n_rows)),
                         self.n_classes, self.gen_lo, self.gen_hi, self.gen_node, self.levels)

    def class_labels(self, name: str) -> NDArray[Any]:
        """Published label of every class for quasi-identifier ``name`` (object array of str)."""
        t = self.table
        j = t.quasi_identifiers.index(name) if name in t.quasi_identifiers else None
        if j is None:
            raise ValueError(f"{name!r} is not a quasi-identifier of the table {list(t.quasi_identifiers)}.")
        h = t.hierarchy(name)
        if h is not None:
            return np.asarray(h.labels, dtype=object)[self.gen_node[:, j]]
        vals = t.numeric_values(name)
        lo, hi = vals[self.gen_lo[:, j]], vals[self.gen_hi[:, j]]
        return np.array([_fmt_num(a) if a == b else f"[{_fmt_num(a)}, {_fmt_num(b)}]" for a, b in zip(lo, hi)],
                        dtype=object)

    def to_pandas(self, suppressed_token: str = "*", include_suppressed: bool = True, *,
                  categorical: bool = False, n_threads: int | None = None) -> pd.DataFrame:
        """The published table: generalized quasi-identifiers, exact sensitive values.

        Suppressed rows show ``suppressed_token`` in every quasi-identifier (or are left out with
        ``include_suppressed=False``). A column ``ec`` gives the class id. With ``categorical=True`` the text
        columns are pandas categoricals built from :meth:`to_arrow` (no Python string per row; ``n_threads``
        as there); by default they are pandas' string columns (what pandas makes of Python strings: its Arrow
        string dtype where that is the default, as from pandas 3, built from :meth:`to_arrow` without a Python
        string per row; else object columns of str).
        """
        if categorical:
            df: pd.DataFrame = self.to_arrow(suppressed_token, include_suppressed, n_threads=n_threads).to_pandas()
            return df
        fast = self._to_pandas_from_arrow(suppressed_token, include_suppressed, n_threads)
        if fast is not None:
            return fast
        return self._to_pandas_from_labels(suppressed_token, include_suppressed)

    def _to_pandas_from_arrow(self, suppressed_token: str, include_suppressed: bool,
                              n_threads: int | None) -> pd.DataFrame | None:
        """:meth:`to_pandas`'s frame from :meth:`to_arrow` when pandas stores strings in Arrow (its dtype for a
        column of Python str): the dictionary columns decoded by :func:`_decoded_strings` (census-income's
        299,285 rows: 10 ms on two threads, against about 130 ms for a Python label per cell), the numeric ones
        as they are; None where pandas keeps Python objects or Arrow refuses a dictionary (labels that are not
        str), and :meth:`_to_pandas_from_labels` then makes the frame."""
        # (a Series infers the dtype a DataFrame's column gets: 35 against 190 us a call)
        inferred = pd.Series(np.array(["a"], dtype=object)).dtype
        if not (isinstance(inferred, pd.StringDtype) and inferred.storage == "pyarrow"):
            return None
        try:
            import pyarrow as pa
            import pyarrow.compute as pc
        except ImportError:  # pragma: no cover  (pandas' Arrow strings need pyarrow)
            return None
        from anoncore._validation import check_n_threads

        try:
            tb = self.to_arrow(suppressed_token, include_suppressed, n_threads=n_threads)
            threads = check_n_threads(n_threads, "to_pandas")
            chunks = [c for col in tb.columns if pa.types.is_dictionary(col.type) for c in col.chunks]
            decoded = iter(_decoded_strings(chunks, threads, pa, pc))
            cols = [pa.chunked_array([next(decoded) for _ in col.chunks], type=pa.large_string())
                    if pa.types.is_dictionary(col.type) else col for col in tb.columns]
            return pa.table(cols, names=tb.column_names).to_pandas(types_mapper={pa.large_string(): inferred}.get)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
            return None

    def _to_pandas_from_labels(self, suppressed_token: str, include_suppressed: bool) -> pd.DataFrame:
        """:meth:`to_pandas`'s frame from one Python label per cell (pandas infers the string columns' dtype)."""
        t = self.table
        out: dict[str, Any] = {}
        for c in t.columns:
            if c in t.quasi_identifiers:
                col = self.class_labels(c)[self.labels]
                if self.suppressed.any():
                    col = col.copy()
                    col[self.suppressed] = suppressed_token
                out[c] = col
            else:
                out[c] = t.decode(c, t.column(c))
        out["ec"] = self.labels
        df = pd.DataFrame(out)
        if not include_suppressed:
            df = df[~self.suppressed].reset_index(drop=True)
        return df

    def to_arrow(self, suppressed_token: str = "*", include_suppressed: bool = True, *,
                 n_threads: int | None = None) -> Any:
        """The published table as a ``pyarrow.Table`` of dictionary-encoded columns (needs the ``arrow`` extra).

        Each text column is a ``DictionaryArray``: the labels are made once per hierarchy node, class or value
        and the per-row indices are gathered in C++ from the class ids (``n_threads`` threads, None = every
        core; the output does not depend on it). The quasi-identifiers' indices are int8 when every
        quasi-identifier publishes at most 127 labels (the suppression token included), int16 up to 32,767,
        else int32. Numeric columns without a hierarchy that are not
        quasi-identifiers are float64; ``ec`` is the class id. The values are those of :meth:`to_pandas`.

        Examples
        --------
        >>> from anoncore.datasets import toy_table
        >>> p = Partition.from_levels(toy_table(), [1, 1])
        >>> p.to_arrow().num_rows == p.n_rows
        True
        """
        try:
            import pyarrow as pa
        except ImportError as exc:  # pragma: no cover
            raise ImportError("to_arrow needs pyarrow: pip install 'anoncore[arrow]'") from exc
        from anoncore._validation import check_n_threads

        threads = check_n_threads(n_threads, "to_arrow")
        t = self.table
        sup = self.suppressed
        any_sup = _core.core.count_true(np.ascontiguousarray(sup), threads) > 0
        rows = None if include_suppressed or not any_sup else np.flatnonzero(~sup)
        # the kernels read an empty row selection as "every row": no published row = every row, sliced to 0
        nothing = rows is not None and rows.size == 0
        rows = None if nothing else rows
        sel = np.zeros(0, dtype=np.int64) if rows is None else rows.astype(np.int64)
        labels = self.labels if rows is None else self.labels[rows]
        qis = t.quasi_identifiers
        # Every quasi-identifier's dictionary indices in one C++ pass over the rows.
        dicts: list[list[str]] = []
        maps, tokens = [], []
        for c in qis:
            values, class_map = self._class_dictionary(c)
            pos = {v: i for i, v in enumerate(values)}
            tok = pos.get(suppressed_token)
            if tok is None:
                tok = len(values)
                values.append(suppressed_token)
            dicts.append(values)
            maps.append(class_map)
            tokens.append(tok)
        class_map_all = (np.ascontiguousarray(np.stack(maps, axis=1), dtype=np.int32) if maps
                         else np.zeros((self.n_classes, 0), dtype=np.int32))
        # the narrowest index type that holds every dictionary (int8 below 128 labels: a quarter of int32's
        # memory and page faults, and pandas' own categorical codes without a cast)
        widest = max((len(d) for d in dicts), default=0)
        index_bytes = 1 if widest <= 127 else 2 if widest <= 32767 else 4
        idx = _core.core.publish_columns(np.ascontiguousarray(self.labels, dtype=np.int64),
                                         sup if any_sup else np.zeros(0, dtype=bool), class_map_all,
                                         np.asarray(tokens, dtype=np.int32), sel, index_bytes, threads)
        codes = np.ascontiguousarray(t.codes)
        names: list[str] = []
        arrays: list[Any] = []
        for c in t.columns:
            names.append(c)
            if c in qis:
                j = qis.index(c)
                # indices in range by construction: safe=False skips pyarrow's serial bounds pass
                arrays.append(pa.DictionaryArray.from_arrays(pa.array(idx[j]), pa.array(dicts[j], type=pa.string()),
                                                             safe=False))
                continue
            col = t.column_index(c)
            d = t.dictionary(c)
            if isinstance(d, np.ndarray):
                # the column's contiguous codes when the table holds them (the encoder's or generator's copy of
                # the sensitive column, or a search's): a read of n codes instead of every row's matrix line
                held = t._held_column(c)
                src, at = (codes, col) if held is None else (held.reshape(-1, 1), 0)
                if d.dtype == np.float64:
                    arrays.append(pa.array(_core.core.gather_values(src, at, np.ascontiguousarray(d), sel, threads)))
                else:
                    arrays.append(pa.array(d[_core.core.gather_column(src, at, sel, threads)]))
            else:  # the table's own column (cached, no copy) when every row is published
                cc = t.column(c) if rows is None else _core.core.gather_column(codes, col, sel, threads)
                arrays.append(pa.DictionaryArray.from_arrays(pa.array(cc), pa.array(list(d), type=pa.string()),
                                                             safe=False))
        names.append("ec")
        arrays.append(pa.array(labels))
        out = pa.Table.from_arrays(arrays, names=names)
        return out.slice(0, 0) if nothing else out

    def _class_dictionary(self, name: str) -> tuple[list[str], NDArray[np.int32]]:
        """Distinct published labels of a quasi-identifier and the index of each class's label among them
        (labels made once per hierarchy node or per distinct numeric range, never per row)."""
        t = self.table
        j = t.quasi_identifiers.index(name)
        h = t.hierarchy(name)
        if h is not None:
            nodes = self.gen_node[:, j]
            # the nodes used, ascending (a mark per hierarchy node: the classes are few, np.unique's sort is
            # slower at every size a hierarchy has)
            mark = np.zeros(len(h.labels), dtype=np.bool_)
            mark[nodes] = True
            first: dict[str, int] = {}
            node_idx = np.zeros(len(h.labels), dtype=np.int32)
            labels = h.labels
            for node in np.flatnonzero(mark).tolist():
                node_idx[node] = first.setdefault(labels[node], len(first))
            return list(first), node_idx[nodes]
        vals = t.numeric_values(name)
        pairs = np.stack([self.gen_lo[:, j], self.gen_hi[:, j]], axis=1)
        uniq, inv = np.unique(pairs, axis=0, return_inverse=True)
        text = [_fmt_num(vals[a]) if a == b else f"[{_fmt_num(vals[a])}, {_fmt_num(vals[b])}]"
                for a, b in uniq.tolist()]
        first2: dict[str, int] = {}
        remap = np.array([first2.setdefault(x, len(first2)) for x in text], dtype=np.int32)
        return list(first2), np.ascontiguousarray(remap[inv.ravel()])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Partition):
            return NotImplemented
        return (
            self.n_classes == other.n_classes
            and np.array_equal(self.labels, other.labels)
            and np.array_equal(self.suppressed, other.suppressed)
            and np.array_equal(self.gen_node, other.gen_node)
            and np.array_equal(self.gen_lo, other.gen_lo)
            and np.array_equal(self.gen_hi, other.gen_hi)
        )

    def __hash__(self) -> int:
        return hash((self.n_classes, self.labels.tobytes(), self.suppressed.tobytes()))

    def __repr__(self) -> str:
        lv = f", levels={list(self.levels)}" if self.levels is not None else ""
        return f"Partition(n_rows={self.n_rows}, n_classes={self.n_classes}, n_suppressed={self.n_suppressed}{lv})"


def _first_rows(labels: NDArray[np.int64], n_classes: int) -> NDArray[np.int64]:
    first = np.empty(n_classes, dtype=np.int64)
    first[labels[::-1]] = np.arange(labels.shape[0] - 1, -1, -1, dtype=np.int64)
    return first


def _check_suppressed(suppressed: Any, n_rows: int) -> NDArray[np.bool_]:
    if suppressed is None:
        return np.zeros(n_rows, dtype=bool)
    s = np.asarray(suppressed)
    if s.dtype != np.bool_:
        raise TypeError(f"suppressed must be a boolean mask. Got dtype {s.dtype} instead.")
    if s.shape != (n_rows,):
        raise ValueError(f"suppressed must have shape ({n_rows},). Got {s.shape} instead.")
    return np.ascontiguousarray(s)


class Achieved(dict[str, Any]):
    """``Result.achieved``: the same keys for every static algorithm, as measured by the run's audit.

    ``'passed'`` (every model passed the audit), ``'k'`` (smallest published class), ``'n_classes'``
    (classes with a published row), ``'n_suppressed'``; for every audited model its achieved value under
    ``'<ModelClass>.<parameter>'`` (e.g. ``'EnhancedBetaLikeness.beta'``) and under the bare parameter name
    (``'t'``, ``'beta'``, ``'l'``, ``'delta'``, ...; the first model with that parameter wins); plus what an
    algorithm adds (the lattice searches: ``'levels'``). The old names ``'audit_passed'`` (lattice) and
    ``'beta_basic'`` (BUREL) still read, with a :class:`DeprecationWarning`, for one release.
    """

    _ALIASES: ClassVar[dict[str, str]] = {"audit_passed": "passed", "beta_basic": "BasicBetaLikeness.beta"}

    def _alias(self, key: Any) -> Any:
        if isinstance(key, str) and key in self._ALIASES and not dict.__contains__(self, key):
            new = self._ALIASES[key]
            warnings.warn(f"Result.achieved[{key!r}] is deprecated; use achieved[{new!r}].", DeprecationWarning,
                          stacklevel=3)
            return new
        return key

    def __getitem__(self, key: Any) -> Any:
        return dict.__getitem__(self, self._alias(key))

    def get(self, key: Any, default: Any = None) -> Any:
        return dict.get(self, self._alias(key), default)

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key) or (isinstance(key, str) and key in self._ALIASES
                                                and dict.__contains__(self, self._ALIASES[key]))


@dataclass(frozen=True, slots=True)
class Result:
    """What an anonymization algorithm returns.

    Attributes
    ----------
    algorithm : str
    partition : Partition
        The published grouping (rows, classes, generalizations, suppressed rows).
    parameters : dict
        The parameters the algorithm ran with.
    achieved : dict
        Achieved privacy values as measured by the independent audit (e.g. ``{'k': 6, 't': 0.31}``).
    metrics : dict
        Information-loss values under named metrics.
    trace : tuple
        Algorithm-specific steps (search path, split history).
    stats : dict
        Timings and counters; not part of equality.
    audit : AuditReport or None
        The run's one audit of its partition against its models (:func:`anoncore.audit.audit`), from which
        ``achieved`` is read; None only for results built by hand. Not part of equality.
    """

    algorithm: str
    partition: Partition
    parameters: dict[str, Any] = field(default_factory=dict)
    achieved: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    trace: tuple[Any, ...] = field(default=(), repr=False)
    stats: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    audit: AuditReport | None = field(default=None, compare=False, repr=False)

    @property
    def suppressed(self) -> NDArray[np.bool_]:
        return self.partition.suppressed

    def to_pandas(self, **kwargs: Any) -> pd.DataFrame:
        return self.partition.to_pandas(**kwargs)

    def to_arrow(self, **kwargs: Any) -> Any:
        """The published table as a ``pyarrow.Table`` (:meth:`Partition.to_arrow`)."""
        return self.partition.to_arrow(**kwargs)
