"""
BUREL kernels: DPpartition, biSplit, BUREL end to end, extended beta-likeness merges
"""

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .sabre import TwoPhaseResult

def burel(
    sa: NDArray[np.int32],
    m: int,
    qi: NDArray[np.int32],
    coord_values: NDArray[np.float64],
    coord_offsets: NDArray[np.int64],
    max_card: int,
    beta: float,
    enhanced: bool,
    strict: bool,
    policy: int,
    seed: int,
    n_threads: int,
    balanced: bool = False,
) -> TwoPhaseResult:
    """
    BUREL end to end: row labels, buckets, EC recipes, timings.
    """

def dp_partition(
    reference: NDArray[np.int64], beta: float, enhanced: bool = True, strict: bool = False
) -> dict[str, Any]:
    """
    DPpartition: minimum number of frequency-contiguous buckets.
    """

def ec_sizes(
    sizes: NDArray[np.int64], bound: NDArray[np.float64], balanced: bool = False
) -> NDArray[np.int64]:
    """
    biSplit (or the balanced split): EC-tree leaves in depth-first order.
    """

def f(p: float, beta: float, enhanced: bool = True) -> float:
    """
    The beta-likeness bound f(p) = p (1 + min{beta, -ln p}) (basic: p (1 + beta)).
    """

def merge(
    hist: NDArray[np.int64],
    reference: NDArray[np.int64],
    groups: NDArray[np.int32],
    beta: float,
    box_lo: NDArray[np.int32],
    box_hi: NDArray[np.int32],
    coord_values: NDArray[np.float64],
    coord_offsets: NDArray[np.int64],
    categorical: NDArray[np.uint8],
    parent: NDArray[np.int32],
    leaf_start: NDArray[np.int32],
    leaf_count: NDArray[np.int32],
    node_offsets: NDArray[np.int64],
    n_leaves: NDArray[np.int32],
) -> dict[str, Any]:
    """
    Merge post-processing for semantic / range-based beta-likeness: old class -> new class.
    """
