"""
sequence kernels: windowed pattern-occurrence counting
"""

from typing import TypeAlias

import numpy as np
from numpy.typing import NDArray

# (gen, mi, entropy, epsilon, utility_loss, n_evaluations, pattern_counts)
_UserBatch: TypeAlias = tuple[
    NDArray[np.int32],
    NDArray[np.float64],
    NDArray[np.float64],
    NDArray[np.float64],
    NDArray[np.float64],
    NDArray[np.int64],
    NDArray[np.int64],
]

def bottom_up_batch(
    offsets: NDArray[np.int64],
    symbols: NDArray[np.int32],
    parent: NDArray[np.int32],
    depth: NDArray[np.int32],
    leaf_start: NDArray[np.int32],
    leaf_count: NDArray[np.int32],
    n_leaves: int,
    cost: NDArray[np.float64],
    pattern_offsets: NDArray[np.int64],
    patterns: NDArray[np.int32],
    epsilon: float,
    relative: bool,
    log_base: float,
    delta_ul: bool,
    use_pair_table: bool,
    w: int,
    n_threads: int = 1,
) -> _UserBatch:
    """
    Bottom-Up (Algorithm 3) per user; returns (gen, mi, entropy, epsilon, utility_loss, n_evaluations, pattern_counts).
    """

def count_patterns(
    offsets: NDArray[np.int64],
    symbols: NDArray[np.int32],
    gen_map: NDArray[np.int32],
    patterns: NDArray[np.int32],
    n_nodes: int,
    w: int,
    n_threads: int = 1,
) -> NDArray[np.int64]:
    """
    Windowed embedding counts (n_users, n_patterns) of node patterns in gen_map[S] for each user.
    """

def pair_table(
    offsets: NDArray[np.int64], symbols: NDArray[np.int32], n_leaves: int, w: int, n_threads: int = 1
) -> NDArray[np.int64]:
    """
    Dense windowed pair counts (n_users, n_leaves, n_leaves).
    """

def top_down_batch(
    offsets: NDArray[np.int64],
    symbols: NDArray[np.int32],
    parent: NDArray[np.int32],
    depth: NDArray[np.int32],
    leaf_start: NDArray[np.int32],
    leaf_count: NDArray[np.int32],
    n_leaves: int,
    cost: NDArray[np.float64],
    pattern_offsets: NDArray[np.int64],
    patterns: NDArray[np.int32],
    epsilon: float,
    relative: bool,
    log_base: float,
    sigma_s_shortcut: bool,
    prune: bool,
    tie_last: bool,
    use_pair_table: bool,
    w: int,
    n_threads: int = 1,
    dedupe: bool = True,
) -> _UserBatch:
    """
    Top-Down (Algorithm 1) per user; returns (gen, mi, entropy, epsilon, utility_loss, n_evaluations, pattern_counts).
    """

def total_embeddings(n: int, w: int, m: int) -> int:
    """
    N_m(n, w): number of windowed length-m index tuples (saturates at 2**63 - 1).
    """

def unigram_counts(
    offsets: NDArray[np.int64], symbols: NDArray[np.int32], n_leaves: int, n_threads: int = 1
) -> NDArray[np.int64]:
    """
    Per-user symbol counts (n_users, n_leaves).
    """
