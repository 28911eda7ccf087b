"""
core group-by primitives
"""

from typing import overload

import numpy as np
from numpy.typing import NDArray

def class_histogram(
    values: NDArray[np.int32],
    labels: NDArray[np.int64],
    skip: NDArray[np.bool_],
    n_classes: int,
    n_values: int,
) -> NDArray[np.int64]:
    """
    Per-class histogram of a coded column, shape (n_classes, n_values).
    """

def class_min_max(
    codes: NDArray[np.int32], labels: NDArray[np.int64], skip: NDArray[np.bool_], n_classes: int
) -> tuple[NDArray[np.int32], NDArray[np.int32]]:
    """
    Per-class minimum and maximum code of every column; returns (lo, hi).
    """

def class_sizes(labels: NDArray[np.int64], skip: NDArray[np.bool_], n_classes: int) -> NDArray[np.int64]:
    """
    Rows per class, skipping rows flagged in skip (an empty skip skips nothing).
    """

def dense_labels(codes: NDArray[np.int32], cardinality: NDArray[np.int64]) -> tuple[NDArray[np.int64], int]:
    """
    Dense first-appearance labels of the distinct rows of codes; returns (labels, n_classes).
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
    n_threads: int,
) -> tuple[int, int]:
    """
    Writes into out[:, column] the codes of Arrow-layout strings looked up in a hash of the keys: key_codes of the matching key, -2 for null, -1 for a string that is no key. Returns (n_unknown, n_missing).
    """

@overload
def gather_codes(
    index: NDArray[np.int8],
    map: NDArray[np.int32],
    validity: NDArray[np.uint8],
    validity_offset: int,
    out: NDArray[np.int32],
    column: int,
    n_threads: int,
) -> tuple[int, int]:
    """
    out[i, column] = map[index[i]]; -2 where index[i] < 0 or the validity bitmap (Arrow bit order, empty = all valid) says null. Returns (n_unknown, n_missing) (-1 and -2 codes written).
    """
@overload
def gather_codes(
    index: NDArray[np.int16],
    map: NDArray[np.int32],
    validity: NDArray[np.uint8],
    validity_offset: int,
    out: NDArray[np.int32],
    column: int,
    n_threads: int,
) -> tuple[int, int]: ...
@overload
def gather_codes(
    index: NDArray[np.int32],
    map: NDArray[np.int32],
    validity: NDArray[np.uint8],
    validity_offset: int,
    out: NDArray[np.int32],
    column: int,
    n_threads: int,
) -> tuple[int, int]: ...
@overload
def gather_codes(
    index: NDArray[np.int64],
    map: NDArray[np.int32],
    validity: NDArray[np.uint8],
    validity_offset: int,
    out: NDArray[np.int32],
    column: int,
    n_threads: int,
) -> tuple[int, int]: ...
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
