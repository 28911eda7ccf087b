"""
core group-by primitives
"""

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
