"""Reading a CSV file for :meth:`anoncore.Table.from_csv` with pyarrow's CSV reader.

The reader parses the file into Arrow string columns that go to the C++ encoder without Python strings.
It gives exactly the values of the pandas reading that :meth:`Table.from_csv` defines (``dtype=str``, no
NA values, blank lines skipped, ``skipinitialspace``, minimal quoting) or None, and the caller then reads
the file with pandas, which words every error (file lines of bad rows, the encoding of undecodable bytes):

- every cell is read as text (``""`` for an empty cell, never null);
- a cell that starts with a space: pandas skips spaces at the start of a field, before any quote. The file
  is read again with quoting off and every cell left-trimmed of spaces; this is pandas' reading when no
  cell holds a quote character, otherwise the pandas path reads the file;
- any error of the reader (invalid bytes, a row with too many or too few fields, an unknown encoding) hands
  the file to the pandas path.
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence
from typing import Any

__all__ = ["read_arrow"]


def _read(path: str, names: Sequence[str], sep: str, encoding: str, quoting: bool) -> Any:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    utf8 = codecs.lookup(encoding).name == "utf-8"
    read = pacsv.ReadOptions(column_names=list(names), skip_rows=1, encoding="utf8" if utf8 else encoding,
                             block_size=1 << 22)
    parse = pacsv.ParseOptions(delimiter=sep, quote_char='"' if quoting else False, double_quote=True,
                               newlines_in_values=quoting, ignore_empty_lines=True)
    convert = pacsv.ConvertOptions(column_types={n: pa.large_string() for n in names}, strings_can_be_null=False,
                                   quoted_strings_can_be_null=False, check_utf8=True)
    return pacsv.read_csv(path, read_options=read, parse_options=parse, convert_options=convert)


def read_arrow(path: str, names: Sequence[str], sep: str, encoding: str, trimmed: bool = False) -> Any:
    """The file as a ``pyarrow.Table`` of ``large_string`` columns named ``names`` (the header's, stripped), or
    None where the reader fails. ``trimmed=False``: quoted fields, no trimming (pandas' values unless a cell
    starts with a space, see :func:`leading_space`); ``trimmed=True``: pandas' values for a file with spaces
    at the start of fields, or None when a cell holds a quote character (pandas' quoting then decides)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if len(sep) != 1 or sep in '"\r\n' or len(set(names)) != len(names):
        return None
    try:
        table = _read(path, names, sep, encoding, quoting=not trimmed)
    except (pa.ArrowException, LookupError, UnicodeError, ValueError, OSError):
        return None
    if not trimmed:
        return table
    cols = []
    for c in table.columns:
        if pc.any(pc.match_substring(c, '"')).as_py():
            return None
        cols.append(pc.utf8_ltrim(c, characters=" ") if leading_space([c]) else c)
    return pa.table(cols, names=list(names))


def leading_space(columns: Sequence[Any]) -> bool:
    """Whether a cell of these Arrow string columns starts with a space (which pandas' reading skips)."""
    import pyarrow.compute as pc

    return any(pc.any(pc.starts_with(c, " ")).as_py() for c in columns)
