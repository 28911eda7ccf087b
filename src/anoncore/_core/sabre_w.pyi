"""
SABRE_W kernels: SABRE on a window under the global ground distance, person merge, Hilbert keys
"""

from typing import Any

import numpy as np
from numpy.typing import NDArray

def bucket_num_global(reference: NDArray[np.int64], t: float) -> dict[str, Any]:
    """
    Global-metric bucketNum (ordered SA).
    """

def hilbert_keys(coords: NDArray[np.float64], bits: int) -> NDArray[np.uint64]:
    """
    Hilbert key of every row of normalised coordinates.
    """

def merge_for_persons(labels: NDArray[np.int64], n_labels: int, pids: NDArray[np.int64], k: int) -> int:
    """
    Merge consecutive classes until each covers k distinct pids (in place); -1 if impossible.
    """

def window_sabre(
    sa: NDArray[np.int32],
    m: int,
    hierarchy: Any,
    keys: NDArray[np.uint64],
    pids: NDArray[np.int64],
    t: float,
    k: int,
    seed: int,
    slices: bool,
    coords: NDArray[np.float64],
    knn: bool,
) -> dict[str, Any]:
    """
    SABRE on one window's not-yet-output tuples under the global metric, then the person merge.
    """
