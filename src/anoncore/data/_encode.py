"""Column encoding at memory speed: raw columns (strings, categoricals, Arrow arrays) to leaf codes in C++.

Strings reach the kernel as Arrow buffers (offsets + bytes + validity bitmap, viewed through numpy, never as
Python objects); dictionary-coded columns (pandas categoricals, Arrow dictionary arrays) have their small
dictionary mapped once and their codes gathered in place (no copy of the codes). The kernels write ``-2`` for
a missing cell and ``-1`` for a value that is no key; the caller (``Table``) applies the missing-value policy
and falls back to the pandas path, which words the error messages, whenever a value does not resolve exactly.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from anoncore import _core

MISSING = -2
UNKNOWN = -1

_EMPTY_U8 = np.zeros(0, dtype=np.uint8)
_NO_COPY = np.zeros(0, dtype=np.int32)  # (the kernels' "no contiguous copy")
_INT32_MAX, _INT32_MIN = 2**31 - 1, -(2**31)  # (np.iinfo costs microseconds a call, once a column)


@dataclass(frozen=True, slots=True)
class StringSource:
    """A column of strings in Arrow layout (``pyarrow.LargeStringArray``, or a ``ChunkedArray`` of them: each
    chunk is encoded in place, never concatenated)."""

    array: Any
    tokens_apply: bool = True  # missing tokens and blanks count as missing (text columns, as in the pandas path)


@dataclass(frozen=True, slots=True)
class DictSource:
    """A dictionary-coded column: ``index`` (int8..int64, -1 = missing) into ``labels``."""

    index: NDArray[Any]
    labels: list[str]
    validity: NDArray[np.uint8]
    validity_offset: int


@dataclass(frozen=True, slots=True)
class KeySet:
    """Text keys of an encoding made once: the mapping and its Arrow-layout key arrays for the kernel."""

    mapping: dict[str, int]
    offsets: NDArray[np.int64]
    data: NDArray[np.uint8]
    codes: NDArray[np.int32]


_HIERARCHY_KEYS: OrderedDict[tuple[int, frozenset[str]], tuple[Any, KeySet]] = OrderedDict()


def hierarchy_keys(h: Any, tokens: set[str]) -> KeySet:
    """The keys of a text column with hierarchy ``h``: its leaf labels and the labels that count as missing,
    made once per hierarchy and token set (a hierarchy is immutable; the 64 most recent are kept)."""
    key = (id(h), frozenset(tokens))
    got = _HIERARCHY_KEYS.get(key)
    if got is not None and got[0] is h:
        _HIERARCHY_KEYS.move_to_end(key)
        return got[1]
    mapping = h.leaf_lookup()
    mapping.update(missing_keys(mapping, tokens))
    ks = KeySet(mapping, *_keys(mapping))
    for a in (ks.offsets, ks.data, ks.codes):
        a.setflags(write=False)
    _HIERARCHY_KEYS[key] = (h, ks)
    while len(_HIERARCHY_KEYS) > 64:
        _HIERARCHY_KEYS.popitem(last=False)
    return ks


def _label(u: Any) -> str:
    if isinstance(u, (float, np.floating)) and float(u).is_integer():
        return str(int(u))
    return str(u)


def _np_buffer(buf: Any, dtype: Any, count: int, offset: int) -> NDArray[Any]:
    """A zero-copy numpy view of ``count`` items of an Arrow buffer, from item ``offset``."""
    return np.frombuffer(buf, dtype=dtype, count=count, offset=offset * np.dtype(dtype).itemsize)


def _validity(arr: Any) -> tuple[NDArray[np.uint8], int]:
    buf = arr.buffers()[0]
    if buf is None or arr.null_count == 0:
        return _EMPTY_U8, 0
    return np.frombuffer(buf, dtype=np.uint8), int(arr.offset)


def source_of_series(s: pd.Series) -> StringSource | DictSource | None:
    """The fast-path source of a pandas column, or None when only the pandas path can encode it."""
    import pyarrow as pa

    dt = s.dtype
    if isinstance(dt, pd.CategoricalDtype):
        cat = s.array
        return DictSource(np.asarray(cat.codes), [_label(c) for c in cat.categories], _EMPTY_U8, 0)
    if isinstance(dt, pd.StringDtype) or (dt == object and pd.api.types.infer_dtype(s, skipna=True) in ("string", "empty")):
        try:
            # the array, not the Series: pyarrow then asks it for its Arrow data without probing the Series
            arr = pa.array(s.array, type=pa.large_string(), from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            return None
        if isinstance(arr, pa.ChunkedArray) and arr.num_chunks <= 1:
            arr = arr.combine_chunks() if arr.num_chunks == 0 else arr.chunk(0)
        return StringSource(arr)
    return None


def int_source(s: pd.Series) -> DictSource | None:
    """A column of integers without missing values as a dictionary of its value range: ``index`` = value - least
    value (int8 / int16 / int32), ``labels`` = each value's decimal text (what the pandas path looks up). None
    when the column is not of integers, has a missing value, or spans more than ``max(4096, n // 4)`` values
    (the labels are made in Python, one per value of the range)."""
    dt = s.dtype
    if isinstance(dt, np.dtype):
        if dt.kind not in "iu":
            return None
        values = s.to_numpy()
    elif pd.api.types.is_integer_dtype(dt) and not isinstance(dt, pd.CategoricalDtype):
        if s.hasnans:
            return None
        values = s.to_numpy(dtype=np.int64)
    else:
        return None
    n = len(values)
    if n == 0:
        return None
    lo, hi = int(values.min()), int(values.max())
    span = hi - lo + 1
    if span > max(4096, n // 4):
        return None
    idx_type = np.int8 if span <= 127 else np.int16 if span <= 32767 else np.int32
    index = np.empty(n, dtype=idx_type)
    # values - lo lies in [0, span) in the column's own type: the cast to the narrow index is exact
    np.subtract(values, values.dtype.type(lo), out=index, casting="unsafe")
    return DictSource(index, [str(v) for v in range(lo, hi + 1)], _EMPTY_U8, 0)


def float_source(s: pd.Series) -> DictSource | None:
    """A numpy float column as a dictionary of its distinct values: ``index`` = the value's rank among them
    (``pandas.factorize`` with sorting; -1, a missing cell, for NaN), ``labels`` = each value's text as the
    pandas path reads it (``30`` for 30.0, else Python's shortest round-trip repr). None when the column is not
    numpy float, or has more than ``max(4096, n // 16)`` distinct values (the labels are made in Python)."""
    dt = s.dtype
    if not isinstance(dt, np.dtype) or dt.kind != "f" or len(s) == 0:
        return None
    codes, uniques = pd.factorize(s.to_numpy(), sort=True, use_na_sentinel=True)
    if len(uniques) > max(4096, len(s) // 16):
        return None
    index = codes.astype(np.int8 if len(uniques) <= 127 else np.int16 if len(uniques) <= 32767 else np.int32)
    return DictSource(index, [_label(u) for u in uniques.tolist()], _EMPTY_U8, 0)


def source_of_arrow(col: Any) -> StringSource | DictSource | None:
    """The fast-path source of an Arrow column (Array or ChunkedArray), or None."""
    import pyarrow as pa

    if isinstance(col, pa.ChunkedArray):
        if col.num_chunks > 1 and pa.types.is_large_string(col.type):
            return StringSource(col)
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    t = col.type
    if pa.types.is_dictionary(t):
        vt = t.value_type
        if not (pa.types.is_string(vt) or pa.types.is_large_string(vt)) or not pa.types.is_signed_integer(t.index_type):
            return None
        idx = col.indices
        index = _np_buffer(idx.buffers()[1], idx.type.to_pandas_dtype(), len(idx), idx.offset)
        validity, voff = _validity(idx)
        labels = [("" if v is None else v) for v in col.dictionary.to_pylist()]
        # tokens do not apply to dictionary columns, as for pandas categoricals (what to_pandas gives)
        return DictSource(index, labels, validity, voff)
    if pa.types.is_string(t):
        col = col.cast(pa.large_string())
    if pa.types.is_large_string(col.type):
        return StringSource(col)
    return None


def _keys(mapping: Mapping[str, int]) -> tuple[NDArray[np.int64], NDArray[np.uint8], NDArray[np.int32]]:
    raw = [k.encode("utf-8", "surrogatepass") for k in mapping]
    offsets = np.zeros(len(raw) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in raw], out=offsets[1:])
    data = np.frombuffer(b"".join(raw), dtype=np.uint8) if raw else _EMPTY_U8
    return offsets, np.ascontiguousarray(data), np.fromiter(mapping.values(), dtype=np.int32, count=len(raw))


def encode_source(src: StringSource | DictSource, mapping: Mapping[str, int] | KeySet, n_threads: int,
                  out: NDArray[np.int32] | None = None, column: int = 0,
                  extremes: list[int] | None = None,
                  copy: NDArray[np.int32] | None = None) -> tuple[NDArray[np.int32], int, int]:
    """Codes of a column: ``mapping[value]``, ``-2`` for a null cell, ``-1`` for a value not in ``mapping``.

    ``mapping`` (or a :class:`KeySet` made once) already gives ``-2`` to the labels that count as missing.
    The codes go to ``out[:, column]`` (a new array when ``out`` is None) and, when given, to the contiguous
    ``copy`` too, in the same pass. Returns ``(out, n_unknown, n_missing)``; ``extremes``, when given,
    receives ``[least, largest]`` code written (-1 and -2 included), found by the kernels' own pass.
    ``n_threads=0``: every core.
    """
    keyset = mapping if isinstance(mapping, KeySet) else None
    labels: Mapping[str, int] = keyset.mapping if keyset is not None else mapping  # type: ignore[assignment]
    n = len(src.index) if isinstance(src, DictSource) else len(src.array)
    if out is None:
        out = np.empty(n, dtype=np.int32)
    if isinstance(src, DictSource):
        table = np.fromiter((labels.get(lab, UNKNOWN) for lab in src.labels), dtype=np.int32, count=len(src.labels))
        unknown, missing, lo, hi = _core.core.gather_codes(src.index, table, src.validity, src.validity_offset, out,
                                                           column, _NO_COPY if copy is None else copy, n_threads)
        if extremes is not None:
            extremes[:] = [lo, hi]
        return out, unknown, missing
    ko, kd, kc = (keyset.offsets, keyset.data, keyset.codes) if keyset is not None else _keys(labels)
    chunks = src.array.chunks if hasattr(src.array, "chunks") else [src.array]
    unknown = missing = 0
    lo, hi = _INT32_MAX, _INT32_MIN
    start = 0
    for arr in chunks:
        m = len(arr)
        if m == 0:
            continue
        bufs = arr.buffers()
        offsets = _np_buffer(bufs[1], np.int64, m + 1, arr.offset)
        data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else _EMPTY_U8
        validity, voff = _validity(arr)
        u, k, clo, chi = _core.core.encode_strings(offsets, data, validity, voff, ko, kd, kc, out[start:start + m],
                                                   column, _NO_COPY if copy is None else copy[start:start + m],
                                                   n_threads)
        unknown += u
        missing += k
        lo, hi = min(lo, clo), max(hi, chi)
        start += m
    if extremes is not None:
        extremes[:] = [lo, hi]
    return out, unknown, missing


def distinct_labels(src: StringSource | DictSource, keep: NDArray[np.bool_] | None) -> list[str]:
    """The distinct non-null values of the column over the rows in ``keep`` (all rows when None)."""
    if isinstance(src, DictSource):
        idx = src.index if keep is None else src.index[keep]
        present = np.flatnonzero(np.bincount(idx[idx >= 0].astype(np.int64), minlength=len(src.labels)))
        if src.validity.size:
            import pyarrow as pa  # noqa: F401  (validity only comes from Arrow)

            valid = np.unpackbits(src.validity, bitorder="little")[src.validity_offset:src.validity_offset + len(src.index)]
            idx = src.index[(valid == 1) if keep is None else ((valid == 1) & keep)]
            present = np.flatnonzero(np.bincount(idx[idx >= 0].astype(np.int64), minlength=len(src.labels)))
        return [src.labels[i] for i in present]
    import pyarrow.compute as pc

    arr = src.array if keep is None else src.array.filter(keep)
    return [v for v in pc.unique(arr).to_pylist() if v is not None]


def missing_keys(labels: Iterable[str], tokens: Iterable[str]) -> dict[str, int]:
    """Keys that mark a missing text cell: each label (and token, and the empty string) that counts as missing."""
    out: dict[str, int] = {}
    toks = set(tokens)
    for lab in list(labels) + list(toks) + [""]:
        if is_missing_text(lab, toks):
            out[lab] = MISSING
    return out


def is_missing_text(label: str, tokens: set[str]) -> bool:
    """Whether a text cell counts as missing (the rule of ``Table.from_pandas``): blank, or a missing token."""
    stripped = label.strip()
    return stripped == "" or stripped in tokens
