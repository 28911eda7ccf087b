"""
core group-by primitives
"""

from typing import TypeVar, overload

import numpy as np
from numpy.typing import NDArray

def available_cores() -> int: ...
def idle_cores() -> int: ...
def running_elsewhere() -> int: ...
def region_threads(n_chunks: int, n_threads: int) -> int: ...
def class_histogram(
    values: NDArray[np.int32],
    labels: NDArray[np.int64],
    skip: NDArray[np.bool_],
    n_classes: int,
    n_values: int,
    n_threads: int = 1,
) -> NDArray[np.int64]:
    """
    Per-class histogram of a coded column, shape (n_classes, n_values).
    """

def class_min_max(
    codes: NDArray[np.int32], labels: NDArray[np.int64], skip: NDArray[np.bool_], n_classes: int, n_threads: int = 1
) -> tuple[NDArray[np.int32], NDArray[np.int32]]:
    """
    Per-class minimum and maximum code of every column; returns (lo, hi).
    """

def value_counts(values: NDArray[np.int32], n_values: int, n_threads: int = 1) -> NDArray[np.int64]:
    """
    Rows per value of a coded column (every value in [0, n_values)).
    """

def count_true(mask: NDArray[np.bool_], n_threads: int = 1) -> int:
    """
    The number of true values of a boolean array (C-contiguous), counted on n_threads threads.
    """

def class_sizes(
    labels: NDArray[np.int64], skip: NDArray[np.bool_], n_classes: int, n_threads: int = 1
) -> NDArray[np.int64]:
    """
    Rows per class, skipping rows flagged in skip (an empty skip skips nothing).
    """

def column_min_max(codes: NDArray[np.int32], n_threads: int) -> tuple[NDArray[np.int32], NDArray[np.int32]]:
    """
    Minimum and maximum of every column of a C-contiguous int32 matrix; returns (lo, hi).
    """

def dense_labels(
    codes: NDArray[np.int32], cardinality: NDArray[np.int64], n_threads: int = 1
) -> tuple[NDArray[np.int64], int]:
    """
    Dense first-appearance labels of the distinct rows of codes; returns (labels, n_classes).
    """

def gather_column(codes: NDArray[np.int32], column: int, rows: NDArray[np.int64], n_threads: int) -> NDArray[np.int32]:
    """
    codes[rows, column] (rows empty = all) as a contiguous int32 array.
    """

def gather_values(
    codes: NDArray[np.int32], column: int, values: NDArray[np.float64], rows: NDArray[np.int64], n_threads: int
) -> NDArray[np.float64]:
    """
    values[codes[rows, column]] (rows empty = all) as a float64 array.
    """

def levels_labels(
    codes: NDArray[np.int32],
    columns: NDArray[np.int64],
    maps: NDArray[np.int32],
    map_offsets: NDArray[np.int64],
    widths: NDArray[np.int64],
    n_threads: int,
) -> tuple[NDArray[np.int64], int, NDArray[np.int64]]:
    """
    Classes of full-domain generalization: dense first-appearance labels of the rows' mixed-radix keys maps[map_offsets[j] + codes[i, columns[j]]] (radix widths[j]); returns (labels, n_classes, first_rows).
    """

def publish_columns(
    labels: NDArray[np.int64],
    suppressed: NDArray[np.bool_],
    class_map: NDArray[np.int32],
    tokens: NDArray[np.int32],
    rows: NDArray[np.int64],
    index_bytes: int,
    n_threads: int,
) -> list[NDArray[np.int8] | NDArray[np.int16] | NDArray[np.int32]]:
    """
    Published dictionary indices of every quasi-identifier in one pass over the rows (rows empty = all): column j is tokens[j] where suppressed, else class_map[labels[row], j]. Returns a list of int8, int16 or int32 arrays (index_bytes 1, 2 or 4; every value must fit).
    """

def encode_strings(
    offsets: NDArray[np.int64],
    data: NDArray[np.uint8],
    validity: NDArray[np.uint8],
    validity_offset: int,
    key_offsets: NDArray[np.int64],
    key_data: NDArray[np.uint8],
    key_codes: NDArray[np.int32],
    out: NDArray[np.int32],
    column: int,
    copy: NDArray[np.int32],
    n_threads: int,
) -> tuple[int, int, int, int]:
    """
    Writes into out[:, column] (and copy, unless it is empty) the codes of Arrow-layout strings looked up in a hash of the keys: key_codes of the matching key, -2 for null, -1 for a string that is no key. Returns (n_unknown, n_missing, least code, largest code).
    """

@overload
def gather_codes(
    index: NDArray[np.int8],
    map: NDArray[np.int32],
    validity: NDArray[np.uint8],
    validity_offset: int,
    out: NDArray[np.int32],
    column: int,
    copy: NDArray[np.int32],
    n_threads: int,
) -> tuple[int, int, int, int]:
    """
    out[i, column] = map[index[i]] (and copy[i], unless copy is empty); -2 where index[i] < 0 or the validity bitmap (Arrow bit order, empty = all valid) says null. Returns (n_unknown, n_missing, least code, largest code) (-1 and -2 codes included; an empty index gives int32's max and min).
    """
@overload
def gather_codes(
    index: NDArray[np.int16],
    map: NDArray[np.int32],
    validity: NDArray[np.uint8],
    validity_offset: int,
    out: NDArray[np.int32],
    column: int,
    copy: NDArray[np.int32],
    n_threads: int,
) -> tuple[int, int, int, int]: ...
@overload
def gather_codes(
    index: NDArray[np.int32],
    map: NDArray[np.int32],
    validity: NDArray[np.uint8],
    validity_offset: int,
    out: NDArray[np.int32],
    column: int,
    copy: NDArray[np.int32],
    n_threads: int,
) -> tuple[int, int, int, int]: ...
@overload
def gather_codes(
    index: NDArray[np.int64],
    map: NDArray[np.int32],
    validity: NDArray[np.uint8],
    validity_offset: int,
    out: NDArray[np.int32],
    column: int,
    copy: NDArray[np.int32],
    n_threads: int,
) -> tuple[int, int, int, int]: ...
_Index = TypeVar("_Index", np.int8, np.int16, np.int32)

def decode_dictionary(
    indices: NDArray[_Index],
    dict_offsets: NDArray[np.int64],
    dict_data: NDArray[np.uint8],
    chunk_starts: NDArray[np.int64],
    out_offsets: NDArray[np.int64],
    out_data: NDArray[np.uint8],
    n_threads: int,
) -> None:
    """
    The strings dict[indices[i]] of a dictionary column written in Arrow's large_string layout: out_offsets (n + 1 int64, from 0) and out_data (exactly chunk_starts[-1] bytes), chunk_starts from dictionary_chunk_starts (checked as the bytes are written). The dictionary is dict_offsets (m + 1 entries) over dict_data; indices int8, int16 or int32, each in [0, m).
    """
def dictionary_chunk_starts(
    indices: NDArray[_Index], dict_offsets: NDArray[np.int64], dict_bytes: int, n_threads: int
) -> NDArray[np.int64]:
    """
    Where each fixed chunk of the strings dict[indices[i]] starts in decode_dictionary's data, and, last, their bytes (int64, one entry per chunk and one more); every index checked.
    """
def select_columns(codes: NDArray[np.int32], columns: NDArray[np.int64], n_threads: int) -> NDArray[np.int32]:
    """
    A C-contiguous copy of the given columns of a row-major int32 code matrix, in the given order.
    """

def publish_codes(
    labels: NDArray[np.int64], suppressed: NDArray[np.bool_], class_map: NDArray[np.int32], token: int, n_threads: int
) -> NDArray[np.int32]:
    """
    Published dictionary index per row: token where suppressed (empty = none), else class_map[labels[i]].
    """
