"""Streaming writers of a published table: CSV and Parquet in record batches, never a frame of Python strings.

:func:`published_arrow` gives the published table of a partition as Arrow columns whose labels are made once
per class or value (:meth:`anoncore.Partition.to_arrow`); :func:`write_published` streams its record batches
through ``pyarrow.csv.CSVWriter`` or ``pyarrow.parquet.ParquetWriter``. The values are those of the
command line's published table (``anoncore anonymize --output``): generalized quasi-identifiers, exact other
columns (numbers written as integers when every published value is one), the class id ``ec``, and with
``include_suppressed`` the suppressed rows fully suppressed, ``ec`` -1 and a column ``suppressed``.
"""

from __future__ import annotations

import csv
import io
import os
from typing import Any, BinaryIO, TextIO

import numpy as np

__all__ = ["SUPPRESSED_EC", "published_arrow", "write_published"]

#: The ``ec`` value of every suppressed row in a table published with ``include_suppressed``.
SUPPRESSED_EC = -1

_FORMATS = ("csv", "parquet")


def _fmt_float(v: float) -> str:
    return repr(float(v))


def published_arrow(partition: Any, include_suppressed: bool = False, suppressed_token: str = "*", *,
                    n_threads: int | None = None) -> Any:
    """The published table of ``partition`` as a ``pyarrow.Table`` (text columns dictionary-encoded).

    Numeric columns that are not quasi-identifiers are int64 when every published value is an integer,
    float64 otherwise; ``ec`` is int64 (:data:`SUPPRESSED_EC` on suppressed rows) and ``suppressed`` (only with
    ``include_suppressed``) is boolean.

    Examples
    --------
    >>> from anoncore import Partition
    >>> from anoncore.datasets import toy_table
    >>> p = Partition.from_levels(toy_table(), [1, 1])
    >>> published_arrow(p).column_names
    ['zip', 'age', 'disease', 'ec']
    """
    import pyarrow as pa

    table = partition.to_arrow(suppressed_token, include_suppressed, n_threads=n_threads)
    sup = np.asarray(partition.suppressed, dtype=bool)
    cols: list[Any] = []
    names: list[str] = []
    for name, col in zip(table.column_names, table.columns):
        if name == "ec":
            ec = col
            if include_suppressed and sup.any():
                ec = pa.array(np.where(sup, SUPPRESSED_EC, np.asarray(partition.labels, dtype=np.int64)))
            cols.append(ec)
        elif pa.types.is_floating(col.type):
            v = col.to_numpy()
            if v.size and bool(np.all(np.isfinite(v))) and bool(np.all(v == np.round(v))):
                col = pa.array(v.astype(np.int64))
            cols.append(col)
        else:
            cols.append(col)
        names.append(name)
    if include_suppressed:
        cols.append(pa.array(sup))
        names.append("suppressed")
    return pa.Table.from_arrays(cols, names=names)


def _csv_needs_quotes(text: str) -> bool:
    return any(ch in text for ch in ',"\r\n')


def _csv_text_batch(batch: Any, quote_all: bool) -> Any:
    """A record batch with every column as dictionary-encoded text formatted as pandas' ``to_csv`` writes it
    (``True``/``False``, floats by ``repr``); the labels are formatted once per distinct value."""
    import pyarrow as pa
    import pyarrow.compute as pc

    cols = []
    for col in batch.columns:
        t = col.type
        if pa.types.is_dictionary(t):
            cols.append(col)
        elif pa.types.is_boolean(t):
            idx = pc.cast(col, pa.int8())
            cols.append(pa.DictionaryArray.from_arrays(idx, pa.array(["False", "True"])))
        elif pa.types.is_floating(t):
            enc = pc.dictionary_encode(col)
            labels = [_fmt_float(x) for x in enc.dictionary.to_pylist()]
            cols.append(pa.DictionaryArray.from_arrays(enc.indices, pa.array(labels, type=pa.string())))
        else:
            cols.append(col)
    return pa.RecordBatch.from_arrays(cols, names=batch.schema.names)


def _labels_need_quotes(table: Any) -> bool:
    import pyarrow as pa

    for col in table.columns:
        if pa.types.is_dictionary(col.type):
            for chunk in col.chunks:
                if any(_csv_needs_quotes(x) for x in chunk.dictionary.to_pylist() if x is not None):
                    return True
        elif pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            return True
    return False


def _header_line(names: list[str]) -> bytes:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(names)
    return buf.getvalue().encode("utf-8")


def write_published(partition: Any, dest: str | os.PathLike[str] | BinaryIO | TextIO, *,
                    format: str | None = None, include_suppressed: bool = False, suppressed_token: str = "*",
                    chunk_rows: int = 65_536, n_threads: int | None = None) -> int:
    """Write the published table of ``partition`` as CSV or Parquet, ``chunk_rows`` rows at a time.

    ``dest`` is a path or an open file (binary for Parquet; text or binary for CSV). ``format`` is ``'csv'`` or
    ``'parquet'``; None takes it from a path's suffix (``.parquet`` / ``.pq``, else CSV). CSV fields are
    quoted as pandas' ``to_csv`` quotes them when no label holds a comma, quote or line break; otherwise every
    text field is quoted (the values read back are the same). Returns the number of rows written.

    Examples
    --------
    >>> import io
    >>> from anoncore import Partition
    >>> from anoncore.datasets import toy_table
    >>> buf = io.StringIO()
    >>> write_published(Partition.from_levels(toy_table(), [1, 1]), buf)
    6
    >>> buf.getvalue().splitlines()[0]
    'zip,age,disease,ec'
    """
    from anoncore._validation import check_option

    path = os.fspath(dest) if isinstance(dest, (str, os.PathLike)) else None
    if format is None:
        format = "parquet" if path is not None and path.lower().endswith((".parquet", ".pq")) else "csv"
    format = check_option(format, "format", "write_published", list(_FORMATS))
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, int) or chunk_rows < 1:
        raise ValueError(f"The 'chunk_rows' parameter of write_published must be an int in the range [1, inf). "
                         f"Got {chunk_rows!r} instead.")
    table = published_arrow(partition, include_suppressed, suppressed_token, n_threads=n_threads)
    batches = table.to_batches(max_chunksize=chunk_rows)
    if format == "parquet":
        _write_parquet(table.schema, batches, dest)
    else:
        _write_csv(table, batches, dest)
    return int(table.num_rows)


def _write_parquet(schema: Any, batches: list[Any], dest: Any) -> None:
    import pyarrow.parquet as pq

    with pq.ParquetWriter(dest, schema) as w:
        for b in batches:
            w.write_batch(b)


def _write_csv(table: Any, batches: list[Any], dest: Any) -> None:
    import pyarrow.csv as pacsv

    quote_all = _labels_need_quotes(table)
    opts = pacsv.WriteOptions(include_header=False, quoting_style="needed" if quote_all else "none")
    text = isinstance(dest, io.TextIOBase) or (not isinstance(dest, (str, os.PathLike))
                                                 and "b" not in getattr(dest, "mode", "b"))
    fh: Any = dest
    own = isinstance(dest, (str, os.PathLike))
    if own:
        fh = open(dest, "wb")  # noqa: SIM115  (closed below)
    try:
        header = _header_line(list(table.column_names))
        first = _csv_text_batch(batches[0], quote_all) if batches else None
        schema = first.schema if first is not None else None
        if text:
            fh.write(header.decode("utf-8"))
        else:
            fh.write(header)
        if first is None:
            return
        sink = io.BytesIO() if text else fh
        with pacsv.CSVWriter(sink, schema, write_options=opts) as w:
            for i, b in enumerate(batches):
                w.write_batch(first if i == 0 else _csv_text_batch(b, quote_all))
                if text:
                    fh.write(sink.getvalue().decode("utf-8"))
                    sink.seek(0)
                    sink.truncate()
        if text and sink.getvalue():
            fh.write(sink.getvalue().decode("utf-8"))
    finally:
        if own:
            fh.close()
