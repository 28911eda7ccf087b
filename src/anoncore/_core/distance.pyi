"""
distance kernels: EMD, Hellinger, KL, JS, SABRE bucket bounds
"""

import numpy as np
from numpy.typing import NDArray

def bucket_emd_hierarchical(
    counts: NDArray[np.int64],
    totals: NDArray[np.int64],
    bucket_node: NDArray[np.int32],
    parent: NDArray[np.int32],
    height: NDArray[np.int32],
    n_leaves: int,
    n_threads: int = 0,
) -> NDArray[np.float64]:
    """
    SABRE bucket-level EMD per class, categorical SA (bucket nodes form an antichain).
    """

def bucket_emd_ordered(
    counts: NDArray[np.int64],
    totals: NDArray[np.int64],
    lo: NDArray[np.int32],
    hi: NDArray[np.int32],
    n_present: int,
    n_threads: int = 0,
) -> NDArray[np.float64]:
    """
    SABRE bucket-level EMD per class, ordered SA (buckets are sorted rank intervals).
    """

def cet_upper_hierarchical(
    reference: NDArray[np.int64],
    bucket_of: NDArray[np.int32],
    n_buckets: int,
    parent: NDArray[np.int32],
    height: NDArray[np.int32],
    leaf_start: NDArray[np.int32],
    leaf_count: NDArray[np.int32],
    tight: bool = False,
) -> NDArray[np.float64]:
    """
    SABRE CET^U per bucket for a categorical SA.
    """

def cet_upper_ordered(
    reference: NDArray[np.int64], bucket_of: NDArray[np.int32], n_buckets: int
) -> NDArray[np.float64]:
    """
    SABRE CET^U per bucket for an ordered SA.
    """

def emd_equal(p: NDArray[np.float64], q: NDArray[np.float64]) -> float:
    """
    EMD with equal ground distance between two distributions.
    """

def emd_equal_classes(
    hist: NDArray[np.int64], sizes: NDArray[np.int64], reference: NDArray[np.int64], n_threads: int = 0
) -> NDArray[np.float64]:
    """
    Per-class EMD with equal ground distance.
    """

def emd_general(
    counts: NDArray[np.int64], totals: NDArray[np.int64], ground: NDArray[np.float64], n_threads: int = 0
) -> NDArray[np.float64]:
    """
    Exact EMD per class under an arbitrary metric ground distance (transportation).
    """

def emd_hierarchical(
    p: NDArray[np.float64],
    q: NDArray[np.float64],
    parent: NDArray[np.int32],
    height: NDArray[np.int32],
    n_leaves: int,
) -> float:
    """
    EMD with hierarchical ground distance.
    """

def emd_hierarchical_classes(
    hist: NDArray[np.int64],
    sizes: NDArray[np.int64],
    reference: NDArray[np.int64],
    parent: NDArray[np.int32],
    height: NDArray[np.int32],
    n_leaves: int,
    n_threads: int = 0,
) -> NDArray[np.float64]:
    """
    Per-class EMD with hierarchical ground distance (integer-exact, one post-order pass).
    """

def emd_ordered(p: NDArray[np.float64], q: NDArray[np.float64]) -> float:
    """
    EMD with ordered ground distance between two distributions.
    """

def emd_ordered_classes(
    hist: NDArray[np.int64], sizes: NDArray[np.int64], reference: NDArray[np.int64], n_threads: int = 0
) -> NDArray[np.float64]:
    """
    Per-class EMD with ordered ground distance over the values present in the reference.
    """

def emd_rows_hierarchical(
    q: NDArray[np.float64],
    p: NDArray[np.float64],
    parent: NDArray[np.int32],
    height: NDArray[np.int32],
    leaf_start: NDArray[np.int32],
    leaf_count: NDArray[np.int32],
    n_threads: int = 0,
) -> NDArray[np.float64]:
    """
    Hierarchical EMD height(LCA)/height(root) of each row of q against p (numpy's arithmetic).
    """

def emd_rows_ordered(q: NDArray[np.float64], p: NDArray[np.float64], n_threads: int = 0) -> NDArray[np.float64]:
    """
    Ordered EMD |i - j| / (m - 1) over the whole domain of each row of q against p (numpy's arithmetic).
    """

def hellinger(p: NDArray[np.float64], q: NDArray[np.float64]) -> float:
    """
    Hellinger distance (normalised by 1/sqrt(2)).
    """

def hellinger_classes(
    hist: NDArray[np.int64], sizes: NDArray[np.int64], reference: NDArray[np.int64], n_threads: int = 0
) -> NDArray[np.float64]:
    """
    Per-class Hellinger distance (normalised by 1/sqrt(2)).
    """

def js_classes(
    hist: NDArray[np.int64],
    sizes: NDArray[np.int64],
    reference: NDArray[np.int64],
    base: float,
    n_threads: int = 0,
) -> NDArray[np.float64]:
    """
    Per-class Jensen-Shannon divergence in the given log base.
    """

def js_divergence(p: NDArray[np.float64], q: NDArray[np.float64], base: float) -> float:
    """
    JS(p, q) in the given log base.
    """

def kl_classes(
    hist: NDArray[np.int64],
    sizes: NDArray[np.int64],
    reference: NDArray[np.int64],
    base: float,
    n_threads: int = 0,
) -> NDArray[np.float64]:
    """
    Per-class KL(class || reference) in the given log base.
    """

def kl_divergence(p: NDArray[np.float64], q: NDArray[np.float64], base: float) -> float:
    """
    KL(p || q) in the given log base.
    """
