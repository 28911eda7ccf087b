"""Encoded tables: every kept column becomes dense int32 codes; the dictionaries are kept to decode."""

from __future__ import annotations

import csv
import itertools
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from anoncore import _core
from anoncore.data import _encode as _enc
from anoncore.data.builders import flat_hierarchy
from anoncore.data.hierarchy import Hierarchy
from anoncore.data.schema import Attribute, Schema

__all__ = ["Table", "csv_columns"]


def _label(u: Any) -> str:
    if isinstance(u, (float, np.floating)) and float(u).is_integer():
        return str(int(u))
    return str(u)


def _readonly(a: NDArray[Any]) -> NDArray[Any]:
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Table:
    """A dictionary-encoded table ready for the kernels.

    Build it with :meth:`from_pandas`, :meth:`from_arrays` or :meth:`from_csv`. Identifier columns are
    dropped; every other declared column is encoded to ``int32`` codes (see ``docs/contracts.md``).

    Attributes
    ----------
    schema : Schema
        The resolved schema (identifiers removed, categorical attributes given a flat hierarchy when they
        had none).
    codes : ndarray of int32, shape (n_rows, n_columns)
        C-contiguous, read-only.
    columns : tuple of str
        Names of the columns of ``codes``.
    row_ids : ndarray of int64, shape (n_rows,)
        Position of each kept row in the input.
    dropped_rows : ndarray of int64
        Input positions removed by the ``missing='drop'`` policy (never silently: always listed here).
    """

    schema: Schema
    codes: NDArray[np.int32] = field(repr=False)
    columns: tuple[str, ...]
    # None: every input row kept in order (row_ids is then made on first use, not on every encoding)
    _row_ids: NDArray[np.int64] | None = field(repr=False)
    dropped_rows: NDArray[np.int64] = field(repr=False)
    _dicts: dict[str, Any] = field(repr=False, default_factory=dict)
    # The table's own memoised views (column, qi_codes, domain); caches of the algorithms live with them
    # (anoncore._tablecache), keyed weakly by the table.
    _cache: dict[Any, Any] = field(repr=False, default_factory=dict)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_pandas(cls, df: pd.DataFrame, schema: Schema, *, n_threads: int | None = None,
                    _where: Callable[[int], str] | None = None) -> Table:
        """Encode a DataFrame.

        Text, categorical and Arrow-backed columns, integer columns under a hierarchy and the integer or float
        columns of numeric attributes are encoded in C++ (a hash of the hierarchy's labels, or a dictionary of
        the column's values, ``n_threads`` threads over rows, None = every core; the codes do not depend on it);
        a value that does not resolve exactly takes the pandas path, which gives the same codes or the same
        error.

        Error messages name rows by their 0-based position in ``df`` ("row 27 (0-based)"); :meth:`from_csv`
        names them by file line instead. Empty cells (``""`` or blanks) are missing values, like NaN and the
        schema's ``missing_tokens``.

        Examples
        --------
        >>> import pandas as pd
        >>> from anoncore import Schema
        >>> df = pd.DataFrame({"age": [30, 41, 30], "disease": ["flu", "ulcer", "flu"]})
        >>> t = Table.from_pandas(df, Schema.build({"age": "numeric"}, sensitive="disease"))
        >>> t.n_rows, t.columns, t.codes.tolist()
        (3, ('age', 'disease'), [[0, 0], [1, 1], [0, 0]])
        """
        if not isinstance(df, pd.DataFrame):
            raise TypeError(f"Table.from_pandas expects a pandas DataFrame. Got {type(df).__name__} instead.")
        if not isinstance(schema, Schema):
            raise TypeError(f"schema must be a Schema. Got {type(schema).__name__} instead.")
        if len(df) == 0:
            raise ValueError("Found a table with 0 row(s) while a minimum of 1 is required.")
        cols = [str(c) for c in df.columns.tolist()]  # (a list: iterating an Arrow-backed Index is slow)
        dups = sorted({c for c in cols if cols.count(c) > 1})
        if dups:
            raise ValueError(f"The data has duplicate column name(s) {dups}: every column needs a distinct name.")
        where = _where if _where is not None else _row_position
        threads = _threads(n_threads, "Table.from_pandas")
        fast = _fast_encode(cls, dict(df.items()), schema, len(df), threads, _enc.source_of_series,
                            where)
        if fast is not None:
            return fast
        return cls._from_pandas_legacy(df, schema, where)

    @classmethod
    def from_arrow(cls, data: Any, schema: Schema, *, n_threads: int | None = None) -> Table:
        """Encode a ``pyarrow.Table`` or ``RecordBatch``.

        String and dictionary-of-string columns go to the C++ encoder without a copy of their data (the
        dictionary is mapped once, its indices gathered in place); other columns are converted as
        :meth:`from_pandas` would. The result equals ``Table.from_pandas(data.to_pandas(), schema)``.

        Examples
        --------
        >>> import pyarrow as pa
        >>> from anoncore import Schema
        >>> t = Table.from_arrow(pa.table({"zip": ["130", "148"], "d": ["a", "b"]}), Schema.build(["zip"], sensitive="d"))
        >>> t.codes.tolist()
        [[0, 0], [1, 1]]
        """
        import pyarrow as pa

        if not isinstance(data, (pa.Table, pa.RecordBatch)):
            raise TypeError(f"Table.from_arrow expects a pyarrow Table or RecordBatch. Got {type(data).__name__} "
                            f"instead.")
        if not isinstance(schema, Schema):
            raise TypeError(f"schema must be a Schema. Got {type(schema).__name__} instead.")
        if data.num_rows == 0:
            raise ValueError("Found a table with 0 row(s) while a minimum of 1 is required.")
        threads = _threads(n_threads, "Table.from_arrow")
        names = [str(c) for c in data.column_names]
        cols = dict(zip(names, data.columns))

        fast = _fast_encode(cls, cols, schema, data.num_rows, threads, _arrow_source, _row_position)
        if fast is not None:
            return fast
        return cls._from_pandas_legacy(data.to_pandas(), schema)

    @classmethod
    def _from_pandas_legacy(cls, df: pd.DataFrame, schema: Schema,
                            where: Callable[[int], str] | None = None) -> Table:
        """The pandas path: every column through pandas (factorize) and Python dictionaries."""
        if where is None:
            where = _row_position
        for a in schema.attributes:
            if a.name not in df.columns:
                raise ValueError(f"Unknown column {a.name!r}: it is declared in the schema but not in the data "
                                 f"(columns: {list(map(str, df.columns))}).")
        kept = [a for a in schema.attributes if a.role != "identifier"]
        if not kept:
            raise ValueError("The schema keeps no column: every attribute is an identifier.")
        n = len(df)
        # Missing values, decided once over every kept column.
        tokens = set(schema.missing_tokens)
        missing_by_col: dict[str, NDArray[np.bool_]] = {}
        any_missing = np.zeros(n, dtype=bool)
        for a in kept:
            m = _missing_mask(df[a.name], tokens)
            missing_by_col[a.name] = m
            any_missing |= m
        keep = np.ones(n, dtype=bool)
        if any_missing.any():
            if schema.missing == "error":
                for a in kept:
                    m = missing_by_col[a.name]
                    if m.any():
                        i = int(np.flatnonzero(m)[0])
                        raise ValueError(
                            f"Column {a.name!r} has {int(m.sum())} missing value(s) (first at {where(i)}: "
                            f"{df[a.name].iloc[i]!r}). Choose a missing-value policy: Schema(..., missing='drop' "
                            f"or 'as_value')."
                        )
            elif schema.missing == "drop":
                keep = ~any_missing
                if not keep.any():
                    raise ValueError("Every row has a missing value: the 'drop' policy leaves an empty table.")
        row_ids = np.flatnonzero(keep).astype(np.int64)
        dropped = np.flatnonzero(~keep).astype(np.int64)
        sub = df.iloc[row_ids] if dropped.size else df
        n_kept = len(row_ids)
        codes = np.empty((n_kept, len(kept)), dtype=np.int32)
        resolved: list[Attribute] = []
        dicts: dict[str, Any] = {}
        for j, a in enumerate(kept):
            m = missing_by_col[a.name][keep] if dropped.size else missing_by_col[a.name]
            col, ra, d = _encode_column(a, sub[a.name], m, schema, row_ids, where)
            codes[:, j] = col
            resolved.append(ra)
            dicts[a.name] = d
        rschema = replace(schema, attributes=tuple(resolved))
        return cls(
            schema=rschema,
            codes=_readonly(codes),
            columns=tuple(a.name for a in kept),
            _row_ids=None if dropped.size == 0 else _readonly(row_ids),
            dropped_rows=_readonly(dropped),
            _dicts=dicts,
        )

    @classmethod
    def from_arrays(
        cls, data: Mapping[str, Any] | NDArray[Any], schema: Schema, names: Sequence[str] | None = None
    ) -> Table:
        """Encode a mapping ``name -> 1-D array`` or a 2-D array with column ``names``.

        Examples
        --------
        >>> import numpy as np
        >>> from anoncore import Schema
        >>> t = Table.from_arrays({"zip": np.array(["130", "148"]), "d": np.array(["a", "b"])},
        ...                       Schema.build(["zip"], sensitive="d"))
        >>> t.n_rows
        2
        """
        if isinstance(data, Mapping):
            lens = {k: len(v) for k, v in data.items()}
            if len(set(lens.values())) > 1:
                raise ValueError(f"Columns have different lengths: {lens}.")
            df = pd.DataFrame({k: np.asarray(v) for k, v in data.items()})
        elif isinstance(data, np.ndarray):
            if data.ndim != 2:
                raise ValueError(f"A 2-D array is required. Got an array with {data.ndim} dimension(s).")
            if names is None or len(names) != data.shape[1]:
                raise ValueError("from_arrays with a 2-D array needs one name per column in 'names'.")
            df = pd.DataFrame(data, columns=list(names))
        else:
            raise TypeError(f"data must be a mapping of arrays or a 2-D numpy array. Got {type(data).__name__} instead.")
        return cls.from_pandas(df, schema)

    @classmethod
    def from_csv(cls, path: str | os.PathLike[str], schema: Schema, sep: str | None = None,
                 encoding: str = "utf-8", *, n_threads: int | None = None) -> Table:
        """Read a CSV file (``,`` or ARX's ``;``, detected from the header when ``sep`` is None and the schema
        gives no ``sep``).

        Every column is read as text; numeric attributes are converted after reading. Error messages name
        rows by their line in the file (the header is line 1). Columns the schema does not declare are left
        out (:func:`csv_columns` lists the file's columns). Empty cells are missing values; spaces at the
        start of a field are skipped.

        The file is parsed by pyarrow's CSV reader into Arrow string columns encoded in C++ (``n_threads``
        as in :meth:`from_pandas`); a file or value that path cannot take exactly (a bad value, bytes that
        are not ``encoding``, a quote after spaces, a short row) is read again with pandas, which gives the
        same table or the error message.

        Raises
        ------
        ValueError
            If the file does not exist, is not valid ``encoding`` (with the line and column of the first bad
            byte), looks tab-separated while ``sep`` is not a tab, has a column name twice, or any value is
            invalid (with its line).
        """
        if not os.path.exists(path):
            raise ValueError(f"Data file {os.fspath(path)!r} does not exist.")
        name = os.fspath(path)
        if sep is None:
            sep = schema.sep
        header = _read_header(name, encoding)
        if sep is None:
            sep = ";" if header.count(";") > header.count(",") else ","
        names = [h.strip().strip('"') for h in header.rstrip("\r\n").split(sep)]
        if sep != "\t" and len(names) == 1 and "\t" in header:
            raise ValueError(f"The header of {name!r} has one column for separator {sep!r} but holds tabs: the file "
                             f"looks tab-separated. Pass sep='\\t' (command line: --sep tab).")
        dups = sorted({c for c in names if names.count(c) > 1})
        if dups:
            raise ValueError(f"The header of {name!r} names column(s) {dups} more than once: every column needs a "
                             f"distinct name.")
        threads = _threads(n_threads, "Table.from_csv")
        where = _file_line(name)
        from anoncore.data import _csv

        kept = [a for a in schema.attributes if a.role != "identifier"]
        arrow = _csv.read_arrow(name, names, sep, encoding) if all(a.name in names for a in schema.attributes) else None
        # A column whose values are not all keys known in advance (no hierarchy or order, or a label that
        # starts with a space) would take a cell with leading spaces as a value of its own: look for them there;
        # elsewhere such a cell is no key and the file is read again trimmed when the encoding misses.
        open_cols = [arrow.column(a.name) for a in kept if arrow is not None and _takes_any_text(a)]
        trimmed = bool(open_cols) and _csv.leading_space(open_cols)
        if trimmed:
            arrow = _csv.read_arrow(name, names, sep, encoding, trimmed=True)
        for attempt in (0, 1):
            if arrow is None or arrow.num_rows == 0:
                break
            fast = _fast_encode(cls, dict(zip(names, arrow.columns)), schema, arrow.num_rows, threads,
                                _arrow_source, where)
            if fast is not None:
                return fast
            if attempt or trimmed or not _csv.leading_space([arrow.column(a.name) for a in kept]):
                break
            arrow = _csv.read_arrow(name, names, sep, encoding, trimmed=True)
        return cls._from_csv_pandas(name, schema, sep, encoding, n_threads, where)

    @classmethod
    def _from_csv_pandas(cls, name: str, schema: Schema, sep: str, encoding: str, n_threads: int | None,
                         where: Callable[[int], str]) -> Table:
        """:meth:`from_csv` through ``pandas.read_csv``: the reading that defines its values and messages."""
        try:
            df = pd.read_csv(name, sep=sep, dtype=str, keep_default_na=False, na_values=[], skipinitialspace=True,
                             quoting=csv.QUOTE_MINIMAL, encoding=encoding)
        except UnicodeDecodeError as exc:
            raise ValueError(_decode_error(name, sep, encoding, exc)) from None
        df.columns = [str(c).strip() for c in df.columns]
        return cls.from_pandas(df, schema, n_threads=n_threads, _where=where)

    @classmethod
    def _from_codes(
        cls, schema: Schema, codes: NDArray[np.integer[Any]], dictionaries: Mapping[str, Any] | None = None
    ) -> Table:
        """Wrap already-encoded codes (fast path for generators; no string round trip).

        ``codes`` has one column per kept (non-identifier) attribute of ``schema``, in schema order. A column
        with a hierarchy holds leaf codes; its dictionary is derived from the hierarchy (labels, or the float
        leaf values for numeric attributes). A column without a hierarchy needs ``dictionaries[name]``: the
        sorted float64 values of a numeric attribute or the value labels of a categorical one (which then
        gets a flat hierarchy, as in :meth:`from_pandas`).
        """
        if not isinstance(schema, Schema):
            raise TypeError(f"schema must be a Schema. Got {type(schema).__name__} instead.")
        codes = np.asarray(codes)
        kept = [a for a in schema.attributes if a.role != "identifier"]
        if codes.ndim != 2 or codes.shape[1] != len(kept):
            raise ValueError(f"codes must have shape (n_rows, {len(kept)}). Got {codes.shape}.")
        if codes.dtype.kind not in "iu":
            raise TypeError(f"codes must be an integer array. Got dtype {codes.dtype} instead.")
        if codes.shape[0] == 0:
            raise ValueError("Found a table with 0 row(s) while a minimum of 1 is required.")
        dictionaries = dict(dictionaries or {})
        if codes.dtype == np.int32 and codes.flags.c_contiguous:  # every column's range in one parallel pass
            from anoncore import _core

            col_lo, col_hi = (x.tolist() for x in _core.core.column_min_max(codes.astype(np.int32, copy=False), 0))
        else:
            col_lo, col_hi = codes.min(axis=0).tolist(), codes.max(axis=0).tolist()
        resolved: list[Attribute] = []
        dicts: dict[str, Any] = {}
        for j, a in enumerate(kept):
            h = a.hierarchy
            if h is not None:
                d: Any = (_readonly(np.array([float(x) for x in h.leaves])) if a.kind == "numeric" else h.leaves)
                if a.kind == "numeric" and np.any(np.diff(d) < 0):
                    raise ValueError(f"Attribute {a.name!r}: the leaves of a numeric hierarchy must be in increasing "
                                     f"order.")
            elif a.name in dictionaries:
                d = dictionaries[a.name]
                if a.kind == "numeric":
                    d = _readonly(np.asarray(d, dtype=np.float64).copy())
                    if np.any(np.diff(d) <= 0):
                        raise ValueError(f"The dictionary of numeric column {a.name!r} must be strictly increasing.")
                else:
                    d = tuple(str(x) for x in d)
                    h = flat_hierarchy(d, root="*" if "*" not in d else "<any>", name=a.name)
                    a = replace(a, hierarchy=h)
                    d = h.leaves
            else:
                raise ValueError(f"Column {a.name!r} has no hierarchy: Table._from_codes needs its dictionary.")
            lo, hi = int(col_lo[j]), int(col_hi[j])
            if lo < 0 or hi >= len(d):
                raise ValueError(f"Codes of column {a.name!r} must be in the range [0, {len(d) - 1}]. "
                                 f"Got values in [{lo}, {hi}].")
            resolved.append(a)
            dicts[a.name] = d
        return cls(
            schema=replace(schema, attributes=tuple(resolved)),
            codes=_readonly(np.ascontiguousarray(codes, dtype=np.int32)),
            columns=tuple(a.name for a in kept),
            _row_ids=None,
            dropped_rows=_readonly(np.zeros(0, dtype=np.int64)),
            _dicts=dicts,
        )

    # ------------------------------------------------------------------ access
    @property
    def row_ids(self) -> NDArray[np.int64]:
        """Position of each kept row in the input (read-only int64)."""
        if self._row_ids is not None:
            return self._row_ids
        ids = self._cache.get("row_ids")
        if ids is None:
            ids = self._cache["row_ids"] = _readonly(np.arange(self.n_rows, dtype=np.int64))
        return ids

    @property
    def n_rows(self) -> int:
        return int(self.codes.shape[0])

    @property
    def n_columns(self) -> int:
        return int(self.codes.shape[1])

    @property
    def attributes(self) -> tuple[Attribute, ...]:
        return self.schema.attributes

    @property
    def quasi_identifiers(self) -> tuple[str, ...]:
        return self.schema.quasi_identifiers

    @property
    def sensitive(self) -> tuple[str, ...]:
        return self.schema.sensitive

    def attribute(self, name: str) -> Attribute:
        return self.schema[name]

    def column_index(self, name: str) -> int:
        try:
            return self.columns.index(name)
        except ValueError:
            raise ValueError(f"Unknown column {name!r}; the table has {list(self.columns)}.") from None

    def column(self, name: str) -> NDArray[np.int32]:
        """Codes of one column, as a contiguous read-only int32 array."""
        key = ("col", name)
        if key not in self._cache:
            j = self.column_index(name)
            codes = self.codes
            if codes.shape[0] >= 1 << 17 and codes.dtype == np.int32 and codes.flags.c_contiguous:
                # a strided pass over the whole code matrix: on every core (10M rows: 29 -> 20 ms on two)
                col = _core.core.gather_column(codes, j, np.zeros(0, dtype=np.int64), 0)
            else:
                col = np.ascontiguousarray(codes[:, j])
            self._cache[key] = _readonly(col)
        return self._cache[key]  # type: ignore[no-any-return]

    def _hold_column(self, name: str, col: NDArray[np.int32]) -> None:
        """Keep ``col`` as :meth:`column`'s answer: a copy of the column's codes that its maker (an encoding
        kernel, the generator) wrote in the same pass as the code matrix. Made read-only."""
        j = self.column_index(name)
        if col.shape != (self.n_rows,) or col.dtype != np.int32 or not col.flags.c_contiguous:
            raise ValueError(f"a held column needs {self.n_rows} contiguous int32 codes; got {col.shape} {col.dtype}")
        if col.size and (col[0] != self.codes[0, j] or col[-1] != self.codes[-1, j]):
            raise ValueError(f"the held codes of {name!r} differ from the code matrix's column")
        self._cache[("col", name)] = _readonly(col)

    def _held_column(self, name: str) -> NDArray[np.int32] | None:
        """The contiguous codes of a column when :meth:`column` already holds them (no pass over the rows), else
        None."""
        return self._cache.get(("col", name))

    def qi_column_indices(self) -> NDArray[np.int64]:
        """The quasi-identifiers' columns of ``codes``, in the order of :attr:`quasi_identifiers` (read-only)."""
        key = ("qi_columns",)
        if key not in self._cache:
            idx = np.asarray([self.column_index(q) for q in self.quasi_identifiers], dtype=np.int64)
            self._cache[key] = _readonly(idx)
        return self._cache[key]  # type: ignore[no-any-return]

    def qi_codes(self) -> NDArray[np.int32]:
        """Codes of the quasi-identifiers, shape (n_rows, n_qi), C-contiguous, read-only."""
        key = ("qi",)
        if key not in self._cache:
            idx = self.qi_column_indices().tolist()
            if idx == list(range(self.codes.shape[1])) and self.codes.flags.c_contiguous:
                self._cache[key] = _readonly(self.codes.view())  # every column, in order: no copy
            else:
                from anoncore import _core

                # a row-by-row copy in C++ over the cores (census-income's 8 of 9 columns: 0.83 ms on one
                # thread, 0.47 ms on two; 2x numpy's take, 5-20x its fancy index)
                sel = _core.core.select_columns(self.codes, np.asarray(idx, dtype=np.int64), 0)
                self._cache[key] = _readonly(sel)
        return self._cache[key]  # type: ignore[no-any-return]

    def hierarchy(self, name: str) -> Hierarchy | None:
        return self.schema[name].hierarchy

    def cardinality(self, name: str) -> int:
        """Number of possible codes of a column (hierarchy leaves, or distinct numeric values)."""
        a = self.schema[name]
        if a.hierarchy is not None:
            return a.hierarchy.n_leaves
        return len(self._dicts[name])

    def dictionary(self, name: str) -> Any:
        """Decoded value of every code of a column (labels, or float64 values for numeric attributes)."""
        self.schema[name]
        return self._dicts[name]

    def numeric_values(self, name: str) -> NDArray[np.float64]:
        """Float value of every code of a numeric attribute."""
        a = self.schema[name]
        if a.kind != "numeric":
            raise ValueError(f"Attribute {name!r} is {a.kind}, not numeric.")
        return np.asarray(self._dicts[name], dtype=np.float64)

    def domain(self, name: str) -> tuple[float, float]:
        """Declared ``(L, U)`` of a numeric attribute, or else the range of its values in the data."""
        a = self.schema[name]
        if a.domain is not None:
            return a.domain
        key = ("domain", name)
        if key not in self._cache:
            v = self.numeric_values(name)[self.column(name)]
            self._cache[key] = (float(v.min()), float(v.max()))
        return self._cache[key]  # type: ignore[no-any-return]

    def sensitive_column(self, sensitive: str | None = None, caller: str = "this model") -> str:
        """Resolve which sensitive attribute a model protects (``Schema.sensitive_column``)."""
        return self.schema.sensitive_column(sensitive, caller)

    def decode(self, name: str, codes: Any) -> NDArray[Any]:
        d = self._dicts[name]
        arr = np.asarray(d, dtype=object if not isinstance(d, np.ndarray) else d.dtype)
        out: NDArray[Any] = arr[np.asarray(codes)]
        return out

    def to_pandas(self) -> pd.DataFrame:
        """The kept rows and columns, decoded (identifiers dropped)."""
        return pd.DataFrame({c: self.decode(c, self.codes[:, j]) for j, c in enumerate(self.columns)})

    def take(self, rows: Any) -> Table:
        """A table with only the given rows (same schema and dictionaries)."""
        rows = np.asarray(rows, dtype=np.int64)
        codes = np.ascontiguousarray(self.codes[rows])
        if codes.shape[0] == 0:
            raise ValueError("Found a table with 0 row(s) while a minimum of 1 is required.")
        return Table(self.schema, _readonly(codes), self.columns, _readonly(self.row_ids[rows].copy()),
                     self.dropped_rows, dict(self._dicts))

    def __repr__(self) -> str:
        return (f"Table(n_rows={self.n_rows}, quasi_identifiers={list(self.quasi_identifiers)}, "
                f"sensitive={list(self.sensitive)}, dropped_rows={self.dropped_rows.size})")


def _threads(n_threads: int | None, caller: str) -> int:
    from anoncore._validation import check_n_threads

    return check_n_threads(n_threads, caller)


def _missing_mask(s: pd.Series, tokens: set[str]) -> NDArray[np.bool_]:
    """Missing cells of a column for the pandas path: NaN / None, and in text columns the missing tokens."""
    m: NDArray[np.bool_] = s.isna().to_numpy()
    if s.dtype == object or isinstance(s.dtype, pd.StringDtype):
        stripped = s.astype(str).str.strip()
        m = m | (stripped == "").to_numpy()  # an empty cell is a missing value
        if tokens:
            m = m | stripped.isin(tokens).to_numpy()
    return m


def _fast_encode(cls: type[Table], columns: Mapping[str, Any], schema: Schema, n: int, threads: int,
                 source_of: Any, where: Callable[[int], str]) -> Table | None:
    """The C++ path of :meth:`Table.from_pandas` / :meth:`Table.from_arrow`; None hands the table to the pandas
    path (a value that is not an exact key, a missing value under ``missing='error'``, an unsupported column),
    which then gives the same codes or the error message. The kernels write straight into the code matrix."""
    for a in schema.attributes:
        if a.name not in columns:
            return None
    kept = [a for a in schema.attributes if a.role != "identifier"]
    if not kept:
        return None
    tokens = set(schema.missing_tokens)
    token = schema.missing_tokens[0] if schema.missing_tokens else "?"
    out = np.empty((n, len(kept)), dtype=np.int32)
    srcs: dict[str, Any] = {}
    n_missing: dict[str, int] = {}
    missing_masks: dict[str, NDArray[np.bool_]] = {}
    numeric_dicts: dict[str, NDArray[np.float64]] = {}
    extremes: dict[str, list[int]] = {}  # each encoded column's least and largest code, from its kernel
    # a sensitive column's codes also written contiguously by its kernel: the table's column(name) without the
    # strided gather of every row's matrix line (census-income: 0.9 ms), kept when nothing changes them after
    copies: dict[str, NDArray[np.int32] | None] = {}
    for j, a in enumerate(kept):
        col = columns[a.name]
        src = source_of(col)
        if (a.hierarchy is not None or a.kind == "numeric") and isinstance(src, pd.Series | None):
            # integers (a pandas column read from a CSV, an Arrow integer column): their text is the key (a
            # numeric attribute without hierarchy keeps the values present, ranked, as np.unique gives them)
            raw = src if src is not None else col
            coded = _enc.int_source(raw)
            if coded is None and a.kind == "numeric":  # numbers with a fraction or a missing value (NaN)
                coded = _enc.float_source(raw)
            src = coded if coded is not None else src
        if src is None or isinstance(src, pd.Series):
            series = col if isinstance(col, pd.Series) else col.to_pandas()
            srcs[a.name] = series
            missing_masks[a.name] = _missing_mask(series, tokens)
            n_missing[a.name] = int(missing_masks[a.name].sum())
            continue
        srcs[a.name] = src
        h = a.hierarchy
        if a.kind == "numeric":
            got = _numeric_mapping(a, src)
            if got is None:
                return None
            mapping, numeric_dicts[a.name] = got
        elif h is not None:
            # text: the leaves and the missing labels, made once per hierarchy; dictionaries: leaves only
            keys = _enc.hierarchy_keys(h, tokens) if isinstance(src, _enc.StringSource) else h.leaf_lookup()
        elif a.kind == "ordinal" and a.order is not None:
            mapping = {str(v): i for i, v in enumerate(a.order)}
        else:
            mapping = {}  # flat hierarchy: this pass finds the missing cells, the second one the codes
        if a.kind == "numeric" or h is None:
            if isinstance(src, _enc.StringSource):
                mapping.update(_enc.missing_keys(mapping, tokens))
            keys = mapping
        ext = extremes[a.name] = []
        # (not for numbers without a hierarchy: their codes are re-ranked below)
        cp = copies[a.name] = (np.empty(n, dtype=np.int32) if a.role == "sensitive" and
                               (h is not None or a.kind != "numeric") else None)
        _, unknown, missing = _enc.encode_source(src, keys, threads, out, j, ext, cp)
        if unknown and a.kind == "numeric" and h is not None:  # other spellings of the leaves ("30.0")
            got = _numeric_mapping(a, src, scan=True)
            if got is None:
                return None
            mapping = got[0]
            if isinstance(src, _enc.StringSource):  # (tokens do not apply to dictionaries, as above)
                mapping = mapping | _enc.missing_keys(mapping, tokens)
            _, unknown, missing = _enc.encode_source(src, mapping, threads, out, j, ext, cp)
        if unknown and not (h is None and a.kind == "categorical"):
            return None
        n_missing[a.name] = missing
    keep: NDArray[np.bool_] | None = None
    if any(n_missing.values()):
        if schema.missing == "error":
            return None
        any_missing = np.zeros(n, dtype=bool)
        for j, a in enumerate(kept):
            if n_missing[a.name]:
                m = missing_masks.get(a.name)
                any_missing |= m if m is not None else out[:, j] == _enc.MISSING
        if schema.missing == "drop":
            keep = ~any_missing
            if not keep.any():
                return None
            out = out[keep]
    row_ids = None if keep is None else np.flatnonzero(keep).astype(np.int64)
    dropped = np.zeros(0, dtype=np.int64) if keep is None else np.flatnonzero(~keep).astype(np.int64)
    resolved: list[Attribute] = []
    dicts: dict[str, Any] = {}
    lohi: tuple[NDArray[np.int32], NDArray[np.int32]] | None = None  # (a column's codes change only in its turn)
    for j, a in enumerate(kept):
        src = srcs[a.name]
        has_missing = keep is None and n_missing[a.name] > 0
        if isinstance(src, pd.Series):
            sub = src.iloc[row_ids].reset_index(drop=True) if keep is not None else src
            m = missing_masks[a.name] if keep is None else missing_masks[a.name][keep]
            col, ra, d = _encode_column(a, sub, m, schema, np.arange(n, dtype=np.int64) if row_ids is None else row_ids,
                                        where)
            out[:, j] = col
            resolved.append(ra)
            dicts[a.name] = d
            continue
        colv = out[:, j]
        if a.kind == "numeric":
            if has_missing:
                return None  # the pandas path words the error
            d = numeric_dicts[a.name]
            if a.domain is not None:
                if keep is None:  # the column's extremes as its kernel wrote them (no missing or unknown code)
                    lo_j, hi_j = extremes[a.name]
                else:  # rows dropped: every column's least and largest code in one pass on every core
                    if lohi is None:
                        lohi = _core.core.column_min_max(out, threads)
                    lo_j, hi_j = int(lohi[0][j]), int(lohi[1][j])
                if d[lo_j] < a.domain[0] or d[hi_j] > a.domain[1]:
                    return None
            if a.hierarchy is None:  # ranks among the values of the kept rows, as np.unique gives them
                present = np.bincount(colv, minlength=d.size) > 0
                if not present.all():
                    colv[:] = (np.cumsum(present) - 1).astype(np.int32)[colv]
                    d = d[present]
            resolved.append(a)
            dicts[a.name] = _readonly(d)
            continue
        h = a.hierarchy
        if h is None:
            if a.kind == "ordinal":
                if a.order is None:
                    return None
                values = [str(v) for v in a.order]
            else:
                labels = set(_enc.distinct_labels(src, keep))
                if has_missing:
                    labels.add(token)
                values = sorted(labels)
            h = flat_hierarchy(values, root="*" if "*" not in values else "<any>", name=a.name)
            a = replace(a, hierarchy=h)
            if a.kind != "ordinal":
                mapping = h.leaf_lookup()
                if isinstance(src, _enc.StringSource):
                    mapping.update(_enc.missing_keys(mapping, tokens))
                if keep is None:
                    unknown = _enc.encode_source(src, mapping, threads, out, j, copy=copies.get(a.name))[1]
                else:
                    full, unknown, _ = _enc.encode_source(src, mapping, threads)
                    colv[:] = full[keep]
                    unknown = int((colv == _enc.UNKNOWN).sum())
                if unknown:
                    return None  # a label the hierarchy builder changed (blanks): the pandas path resolves it
        if has_missing:
            tcode = h.leaf_lookup().get(token)
            if tcode is None:
                return None
            colv[colv == _enc.MISSING] = tcode
        resolved.append(a)
        dicts[a.name] = h.leaves
    table = cls(
        schema=replace(schema, attributes=tuple(resolved)),
        codes=_readonly(out),
        columns=tuple(a.name for a in kept),
        _row_ids=None if row_ids is None else _readonly(row_ids),
        dropped_rows=_readonly(dropped),
        _dicts=dicts,
    )
    for name, cp in copies.items():  # (not when rows were dropped, or missing cells took the token's code)
        if cp is not None and keep is None and not n_missing[name]:
            table._hold_column(name, cp)
    return table


_PLAIN_NUMBER = r"^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$"


def _numeric_mapping(a: Attribute, src: Any, scan: bool = False) -> tuple[dict[str, int], NDArray[np.float64]] | None:
    """Text -> code of a numeric column given as text or as a dictionary of text or numbers (a value that is not
    a plain number is left out: the pandas path parses and checks it), or None when the hierarchy's leaves are
    not increasing. With a hierarchy and ``scan=False`` only the leaves' own text is a key; ``scan=True`` adds
    every spelling in the data ("30.0")."""
    import re

    import pyarrow.compute as pc

    plain = re.compile(_PLAIN_NUMBER)
    if a.hierarchy is not None:
        # the leaves' own text: an exact match is that leaf; any other spelling ("30.0") takes the pandas path
        leaf_vals = np.array([float(x) for x in a.hierarchy.leaves])
        if np.any(np.diff(leaf_vals) <= 0):
            return None
        if not scan:
            return {lab: i for i, lab in enumerate(a.hierarchy.leaves) if plain.match(lab)}, leaf_vals
    # the distinct texts: a dictionary's labels (a pandas categorical of numbers: their text), else the column's
    texts = (list(src.labels) if isinstance(src, _enc.DictSource)
             else [v for v in pc.unique(src.array).to_pylist() if v is not None])
    if a.hierarchy is None:
        leaf_vals = np.unique(np.array([float(t) for t in texts if plain.match(t)], dtype=np.float64))
    index = {v: i for i, v in enumerate(leaf_vals.tolist())}
    mapping: dict[str, int] = {}
    for t in texts:
        if plain.match(t) is None:
            continue  # missing tokens are added by the caller; anything else goes to the pandas path
        code = index.get(float(t))
        if code is not None:
            mapping[t] = code
    return mapping, leaf_vals


def _open_text(path: str | os.PathLike[str], encoding: str = "utf-8") -> Any:
    p = os.fspath(path)
    if p.endswith(".gz"):
        import gzip

        return gzip.open(p, "rt", encoding=encoding, newline="")
    return open(p, encoding=encoding, newline="")


def _open_binary(path: str) -> Any:
    if path.endswith(".gz"):
        import gzip

        return gzip.open(path, "rb")
    return open(path, "rb")


def _takes_any_text(a: Attribute) -> bool:
    """Whether the encoder takes any text of a column as a value (so a leading space would go unnoticed)."""
    if a.kind == "numeric":
        return False
    labels = a.hierarchy.leaves if a.hierarchy is not None else a.order
    return labels is None or any(str(v).startswith(" ") for v in labels)


def _file_line(name: str) -> Callable[[int], str]:
    """Row ``i`` of a CSV file (blank lines skipped) is named by its line: the header is line 1."""
    return lambda i: f"line {i + 2} of {name!r}"


def _arrow_source(col: Any) -> Any:
    """The encoder's source of an Arrow column, or the column as pandas (for the pandas path)."""
    src = _enc.source_of_arrow(col)
    return src if src is not None else col.to_pandas()


def _row_position(i: int) -> str:
    return f"row {i} (0-based)"


def _read_header(path: str, encoding: str) -> str:
    try:
        with _open_text(path, encoding) as fh:
            return str(fh.readline())
    except UnicodeDecodeError as exc:
        raise ValueError(_decode_error(path, None, encoding, exc)) from None
    except LookupError:
        raise ValueError(f"Unknown encoding {encoding!r} (e.g. 'utf-8', 'latin-1', 'cp1252').") from None


def _decode_error(path: str, sep: str | None, encoding: str, exc: UnicodeDecodeError) -> str:
    """Where the first byte that is not valid ``encoding`` is: file line and column."""
    with _open_binary(path) as fh:
        header = fh.readline()
        for ln, raw in enumerate(itertools.chain([header], fh), start=1):
            try:
                raw.decode(encoding)
            except UnicodeDecodeError as e:
                hdr = header.decode(encoding, errors="replace").rstrip("\r\n")
                if sep is None:
                    sep = ";" if hdr.count(";") > hdr.count(",") else ","
                field = raw[:e.start].count(sep.encode())
                cols = hdr.split(sep)
                col = f"column {cols[field].strip()!r}" if ln > 1 and field < len(cols) else f"field {field + 1}"
                return (f"Line {ln} of {path!r} ({col}, byte {e.start + 1} of the line: "
                        f"{raw[e.start:e.end]!r}) is not valid {encoding}. Give the file's encoding, e.g. "
                        f"encoding='latin-1' (command line: --encoding latin-1).")
    return f"{path!r} is not valid {encoding}: {exc}. Give the file's encoding (command line: --encoding)."


def csv_columns(path: str | os.PathLike[str], sep: str | None = None, encoding: str = "utf-8") -> list[str]:
    """The column names in the header of a CSV file (separator detected as :meth:`Table.from_csv` does)."""
    header = _read_header(os.fspath(path), encoding)
    if sep is None:
        sep = ";" if header.count(";") > header.count(",") else ","
    return [h.strip().strip('"') for h in header.rstrip("\r\n").split(sep)]


def _hierarchy_misses(a: Attribute, h: Any, labels: Sequence[str], bad: NDArray[np.int64],
                      first: NDArray[np.int64], counts: NDArray[np.int64], where: Callable[[int], str]) -> str:
    """The message for values of column ``a`` that are not leaves of its hierarchy: every one (up to 10) with
    the first row holding it and its number of rows."""
    order = bad[np.argsort(first[bad], kind="stable")]
    shown = [f"{labels[i]!r} ({where(int(first[i]))}"
             + (f", {int(counts[i])} rows)" if counts[i] > 1 else ")") for i in order[:10]]
    more = f", and {order.size - 10} more" if order.size > 10 else ""
    hname = f" {h.name!r}" if h.name else ""
    lead = f"Value {labels[order[0]]!r} of column {a.name!r} is missing from its hierarchy{hname}"
    if order.size == 1:
        return f"{lead} ({shown[0][len(repr(labels[order[0]])) + 2:]}."
    return f"{lead}; {order.size} values in all are missing: {', '.join(shown)}{more}."


def _first_and_counts(codes: NDArray[Any], n: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Per value code in [0, n): the position of its first row and its number of rows."""
    first = np.full(n, -1, dtype=np.int64)
    pos = np.arange(codes.size, dtype=np.int64)
    ok = codes >= 0
    first[codes[ok][::-1]] = pos[ok][::-1]
    counts = np.bincount(codes[ok], minlength=n).astype(np.int64)
    return first, counts


def _encode_column(
    a: Attribute, s: pd.Series, missing: NDArray[np.bool_], schema: Schema,
    rows: NDArray[np.int64] | None = None, where: Callable[[int], str] = _row_position,
) -> tuple[NDArray[np.int32], Attribute, Any]:
    """Encode one column; returns (codes, resolved attribute, dictionary). ``rows[i]`` is the input position of
    row ``i`` of ``s`` and ``where(position)`` names it in messages."""
    if rows is None:
        rows = np.arange(len(s), dtype=np.int64)
    has_missing = bool(missing.any())  # only possible under 'as_value' at this point
    token = schema.missing_tokens[0] if schema.missing_tokens else "?"
    if a.kind == "numeric":
        if has_missing:
            raise ValueError(f"Column {a.name!r} is numeric: missing='as_value' cannot keep its missing values; "
                             f"use missing='drop' or declare it categorical.")
        num = pd.to_numeric(s, errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isfinite(num)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"Column {a.name!r} is numeric but holds {s.iloc[i]!r} ({where(int(rows[i]))}"
                             f"{'' if bad.sum() == 1 else f'; {int(bad.sum())} such rows'}).")
        if a.domain is not None:
            lo, hi = a.domain
            out = (num < lo) | (num > hi)
            if out.any():
                i = int(np.flatnonzero(out)[0])
                raise ValueError(f"Column {a.name!r} holds {s.iloc[i]!r} ({where(int(rows[i]))}), outside its "
                                 f"declared domain [{lo:g}, {hi:g}] ({int(out.sum())} row(s) outside; data range "
                                 f"[{num.min():g}, {num.max():g}]): widen the domain.")
        if a.hierarchy is None:
            uniq, inv = np.unique(num, return_inverse=True)
            return inv.astype(np.int32), a, _readonly(uniq)
        leaf_vals = np.array([float(x) for x in a.hierarchy.leaves])
        if np.any(np.diff(leaf_vals) < 0):
            raise ValueError(f"Attribute {a.name!r}: the leaves of a numeric hierarchy must be in increasing order.")
        uniq, inv = np.unique(num, return_inverse=True)
        pos = np.searchsorted(leaf_vals, uniq)
        pos = np.minimum(pos, leaf_vals.size - 1)
        ok = leaf_vals[pos] == uniq
        if not ok.all():
            first, counts = _first_and_counts(inv.ravel(), uniq.size)
            first = np.where(first >= 0, rows[np.maximum(first, 0)], -1)
            raise ValueError(_hierarchy_misses(a, a.hierarchy, [_label(v) for v in uniq],
                                               np.flatnonzero(~ok), first, counts, where))
        return pos[inv].astype(np.int32), a, _readonly(leaf_vals)
    # categorical / ordinal
    codes_u, uniques = pd.factorize(s, sort=False, use_na_sentinel=True)
    labels = [_label(u) for u in uniques]
    if has_missing:
        # Map every missing cell to the missing token as a value of its own.
        labels = labels + [token]
        codes_u = np.where(missing, len(labels) - 1, codes_u)
    h = a.hierarchy
    if h is None:
        if a.kind == "ordinal":
            if a.order is None:
                raise ValueError(f"Ordinal attribute {a.name!r} needs an 'order' or a hierarchy.")
            values = [str(v) for v in a.order]
        else:
            values = sorted(set(labels))
        h = flat_hierarchy(values, root="*" if "*" not in values else "<any>", name=a.name)
        a = replace(a, hierarchy=h)
    lookup = h.leaf_lookup()
    mapped = np.empty(len(labels), dtype=np.int32)
    misses = []
    for i, lab in enumerate(labels):
        code = lookup.get(lab)
        if code is None:
            code = lookup.get(lab.strip())
        if code is None:
            misses.append(i)
            code = -1
        mapped[i] = code
    if misses:
        first, counts = _first_and_counts(np.asarray(codes_u), len(labels))
        first = np.where(first >= 0, rows[np.maximum(first, 0)], -1)
        raise ValueError(_hierarchy_misses(a, h, labels, np.asarray(misses, dtype=np.int64), first, counts, where))
    if (codes_u < 0).any():
        i = int(np.flatnonzero(codes_u < 0)[0])
        raise ValueError(f"Column {a.name!r} has a missing value at {where(int(rows[i]))}.")
    return mapped[codes_u], a, h.leaves
