"""
twophase kernels: SABRE bucketization, EC-size tree, Hilbert keys, retrieval
"""

from typing import Any

import numpy as np
from numpy.typing import NDArray

class TwoPhaseResult:
    """
    SABRE's or BUREL's labels, buckets, EC recipes and timings.
    """
    @property
    def buckets(self) -> dict[str, Any]: ...
    @property
    def hilbert_bits(self) -> int: ...
    @property
    def labels(self) -> NDArray[np.int64]: ...
    @property
    def leaves(self) -> NDArray[np.int64]: ...
    @property
    def n_rejected(self) -> int: ...
    @property
    def n_tree_nodes(self) -> int: ...
    @property
    def seconds(self) -> tuple[float, float, float, float]: ...

def bucket_distance(
    counts: NDArray[np.int64],
    sizes: NDArray[np.int64],
    node: NDArray[np.int32],
    lo: NDArray[np.int32],
    hi: NDArray[np.int32],
    n_present: int,
    hierarchy: Any = None,
    n_leaves: int = 0,
) -> NDArray[np.float64]:
    """
    Bucket-level EMD D(G) of each row of counts (closed forms of spec §3.3).
    """

def bucketize(
    reference: NDArray[np.int64], t: float, hierarchy: Any = None, tight: bool = False
) -> dict[str, Any]:
    """
    SABRE bucketCat (hierarchy given) or bucketNum.
    """

def ec_sizes(
    sizes: NDArray[np.int64],
    node: NDArray[np.int32],
    lo: NDArray[np.int32],
    hi: NDArray[np.int32],
    n_present: int,
    u: float,
    t: float,
    k: int,
    hierarchy: Any = None,
    n_leaves: int = 0,
) -> NDArray[np.int64]:
    """
    SABRE ECSize/dichotomize: leaf arrays in depth-first order.
    """

def hilbert_bits(n_dims: int, max_card: int) -> int: ...
def hilbert_index(cells: NDArray[np.uint32], bits: int) -> NDArray[np.uint64]:
    """
    Hilbert index of grid cells (n, d).
    """

def hilbert_keys(
    qi: NDArray[np.int32],
    coord_values: NDArray[np.float64],
    coord_offsets: NDArray[np.int64],
    bits: int,
    n_threads: int = 1,
) -> NDArray[np.uint64]:
    """
    Hilbert key of every row over normalised QI coordinates.
    """

def retrieve_hilbert(
    bucket_of_row: NDArray[np.int32],
    n_buckets: int,
    leaves: NDArray[np.int64],
    keys: NDArray[np.uint64],
    seed: int,
    policy: int = 0,
    n_threads: int = 1,
) -> NDArray[np.int64]:
    """
    Hilbert-neighbour materialization of EC recipes (SABRE-AK, BUREL).
    """

def sabre(
    sa: NDArray[np.int32],
    m: int,
    qi: NDArray[np.int32],
    coord_values: NDArray[np.float64],
    coord_offsets: NDArray[np.int64],
    max_card: int,
    t: float,
    k: int,
    tight: bool,
    knn: bool,
    policy: int,
    seed: int,
    n_threads: int,
    hierarchy: Any = None,
) -> TwoPhaseResult:
    """
    SABRE end to end: row labels, buckets, EC recipes, timings.
    """

def sort_bucket_key_row(
    bucket_of_row: NDArray[np.int32], n_buckets: int, keys: NDArray[np.uint64], n_threads: int = 1
) -> tuple[NDArray[np.int64], NDArray[np.uint64]]:
    """
    Rows ordered by (bucket, key, row) and their keys (the retrieval's radix sort).
    """
