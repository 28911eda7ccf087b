"""Distances between sensitive-value distributions, and SABRE's bucket bounds.

The pairwise helpers take two distributions (or counts, normalised here) over the same m sensitive values:
``p`` is the reference ("holes", usually the whole table) and ``q`` the class ("earth"). The class-vectorised
kernels used by :func:`anoncore.audit` live in ``anoncore._core.distance`` and work on integer counts.

References
----------
.. [1] N. Li, T. Li, S. Venkatasubramanian, "t-Closeness: Privacy beyond k-anonymity and l-diversity",
   ICDE 2007, doi:10.1109/ICDE.2007.367856.
.. [2] J. Cao, "Privacy-Preserving Data Publication for Static and Streaming Data", PhD thesis, NUS, 2010
   (spec sabre-burel.md §2.2-2.3 and §3).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from anoncore import _core
from anoncore._validation import check_bool, check_float, check_instance, check_n_threads, check_option
from anoncore.data.hierarchy import Hierarchy

__all__ = [
    "bucket_emd",
    "cet_upper_bounds",
    "emd_equal",
    "emd_hierarchical",
    "emd_ordered",
    "emd_to_reference",
    "hellinger",
    "js_divergence",
    "kl_divergence",
]


def _distribution(x: Any, name: str, caller: str) -> NDArray[np.float64]:
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            f"The {name!r} parameter of {caller} must be an array-like of non-negative numbers. Got {x!r} instead."
        ) from None
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"The {name!r} parameter of {caller} must be a non-empty 1-D array. Got shape {a.shape}.")
    if not np.all(np.isfinite(a)) or np.any(a < 0) or a.sum() <= 0:
        raise ValueError(
            f"The {name!r} parameter of {caller} must hold finite non-negative numbers with a positive sum."
        )
    return np.ascontiguousarray(a / a.sum())


def _pair(p: Any, q: Any, caller: str) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    pa, qa = _distribution(p, "p", caller), _distribution(q, "q", caller)
    if pa.shape != qa.shape:
        raise ValueError(f"p and q of {caller} must have the same length. Got {pa.size} and {qa.size}.")
    return pa, qa


def _check_hierarchy(hierarchy: Any, caller: str, m: int) -> Hierarchy:
    h = check_instance(hierarchy, "hierarchy", caller, Hierarchy, "a Hierarchy")
    if h.n_leaves != m:
        raise ValueError(f"The distributions of {caller} have {m} values but the hierarchy has {h.n_leaves} leaves.")
    return h


def emd_equal(p: Any, q: Any) -> float:
    """EMD with equal ground distance (total variation distance) between two distributions.

    Parameters
    ----------
    p, q : array-like of shape (m,)
        Non-negative weights (normalised to sum 1).

    Returns
    -------
    float
        ``0.5 * sum(|p - q|)``.

    Examples
    --------
    >>> round(emd_equal([0.4, 0.6], [0.5, 0.5]), 12)
    0.1
    """
    pa, qa = _pair(p, q, "emd_equal")
    return float(_core.distance.emd_equal(pa, qa))


def emd_ordered(p: Any, q: Any) -> float:
    """EMD with ordered ground distance |i - j| / (m' - 1).

    Only the m' values with positive weight in p or q count (spec sabre-burel.md §2.2, the closed form
    ``sum_i |sum_{j<=i} (q_j - p_j)| / (m' - 1)``).

    Parameters
    ----------
    p, q : array-like of shape (m,)
        Weights in increasing order of the values.

    Returns
    -------
    float

    Examples
    --------
    >>> round(emd_ordered([1, 1, 1, 1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0, 0, 0, 0]), 4)
    0.375
    """
    pa, qa = _pair(p, q, "emd_ordered")
    return float(_core.distance.emd_ordered(pa, qa))


def emd_hierarchical(p: Any, q: Any, hierarchy: Hierarchy) -> float:
    """EMD with hierarchical ground distance height(LCA) / height(root).

    Parameters
    ----------
    p, q : array-like of shape (n_leaves,)
        Weights indexed by leaf code (pre-order leaf index).
    hierarchy : Hierarchy

    Returns
    -------
    float

    Examples
    --------
    >>> from anoncore import Hierarchy
    >>> h = Hierarchy.from_nested({"RD": {"R": ["a", "b", "c"], "D": ["d", "e", "f"]}})
    >>> emd_hierarchical([1] * 6, [1, 1, 1, 0, 0, 0], h)
    0.5
    """
    pa, qa = _pair(p, q, "emd_hierarchical")
    h = _check_hierarchy(hierarchy, "emd_hierarchical", pa.size)
    return float(_core.distance.emd_hierarchical(pa, qa, h.parent, h.node_height, h.n_leaves))


def emd_to_reference(q: Any, p: Any, hierarchy: Hierarchy | None = None, *,
                     n_threads: int | None = None) -> NDArray[np.float64]:
    """EMD of every row of ``q`` against ``p`` over a fixed global domain of m values (SABRE_W, spec A31).

    ``q`` holds counts per value, shape (rows, m) or (m,); ``p`` reference counts (m,). Each row is normalised by
    its total (a row without mass is compared as all zeros) and ``p`` by ``max(total, 1)``. Unlike
    :func:`emd_ordered`, every value of the domain counts: the ordered ground distance is ``|i - j| / (m - 1)``
    whether or not a value occurs; with ``hierarchy`` it is ``height(LCA) / height(root)`` over its leaves.
    Returns one EMD per row: an array of shape (rows,), or one numpy float for a 1-D ``q``. The arithmetic is
    numpy's formulation of these sums, operation for operation (SABRE_W's outputs depend on it bit for bit).

    Examples
    --------
    >>> emd_to_reference([[1, 0, 0], [0, 0, 1]], [0, 0, 1]).tolist()
    [1.0, 0.0]
    """
    caller = "emd_to_reference"
    try:
        qa = np.asarray(q, dtype=np.float64)
        pa = np.asarray(p, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"The 'q' and 'p' parameters of {caller} must be array-likes of counts.") from None
    one = qa.ndim == 1
    q2 = np.ascontiguousarray(np.atleast_2d(qa))
    if q2.ndim != 2 or pa.shape != (q2.shape[1],) or q2.shape[1] == 0:
        raise ValueError(f"{caller} needs q of shape (rows, m) or (m,) and p of shape (m,). "
                         f"Got {qa.shape} and {pa.shape}.")
    if not (np.all(np.isfinite(q2)) and np.all(q2 >= 0) and np.all(np.isfinite(pa)) and np.all(pa >= 0)):
        raise ValueError(f"The counts of {caller} must be finite and non-negative.")
    n_threads = check_n_threads(n_threads, caller)
    pa = np.ascontiguousarray(pa)
    if hierarchy is None:
        out = _core.distance.emd_rows_ordered(q2, pa, n_threads)
    else:
        h = _check_hierarchy(hierarchy, caller, q2.shape[1])
        parent, height, start, count = (np.ascontiguousarray(a, dtype=np.int32)
                                         for a in (h.parent, h.node_height, h.leaf_start, h.leaf_count))
        out = _core.distance.emd_rows_hierarchical(q2, pa, parent, height, start, count, n_threads)
    return out[0] if one else out


def hellinger(p: Any, q: Any) -> float:
    """Hellinger distance normalised by 1/sqrt(2), in [0, 1] (spec generalization-lattice.md §5.2).

    Parameters
    ----------
    p, q : array-like of shape (m,)

    Returns
    -------
    float

    Examples
    --------
    >>> hellinger([1, 0], [0, 1])
    1.0
    """
    pa, qa = _pair(p, q, "hellinger")
    return float(_core.distance.hellinger(pa, qa))


def kl_divergence(p: Any, q: Any, base: float = 2) -> float:
    """Kullback-Leibler divergence KL(p || q) = sum p log(p / q); +inf when q misses a value of p.

    Parameters
    ----------
    p, q : array-like of shape (m,)
    base : float, default=2
        Logarithm base.

    Returns
    -------
    float

    Examples
    --------
    >>> round(kl_divergence([0.4, 0.6], [0.5, 0.5]), 4)
    0.029
    """
    pa, qa = _pair(p, q, "kl_divergence")
    return float(_core.distance.kl_divergence(pa, qa, check_float(base, "base", "kl_divergence", 1, None, closed="neither")))


def js_divergence(p: Any, q: Any, base: float = 2) -> float:
    """Jensen-Shannon divergence (KL(p || m) + KL(q || m)) / 2 with m = (p + q) / 2.

    Parameters
    ----------
    p, q : array-like of shape (m,)
    base : float, default=2

    Returns
    -------
    float

    Examples
    --------
    >>> round(js_divergence([0.4, 0.6], [0.5, 0.5]), 4)
    0.0073
    """
    pa, qa = _pair(p, q, "js_divergence")
    return float(_core.distance.js_divergence(pa, qa, check_float(base, "base", "js_divergence", 1, None, closed="neither")))


# ----------------------------------------------------------------------------------------------- SABRE bounds
def _counts(x: Any, name: str, caller: str, ndim: int) -> NDArray[np.int64]:
    a = np.asarray(x)
    if a.dtype == bool or not np.issubdtype(a.dtype, np.integer):
        raise TypeError(f"The {name!r} parameter of {caller} must be an array of integer counts. Got {a.dtype}.")
    if a.ndim != ndim or a.size == 0:
        raise ValueError(f"The {name!r} parameter of {caller} must be a non-empty {ndim}-D array. Got shape {a.shape}.")
    if np.any(a < 0):
        raise ValueError(f"The {name!r} parameter of {caller} must hold non-negative counts.")
    return np.ascontiguousarray(a, dtype=np.int64)


def _buckets(bucket_of: Any, m: int, caller: str) -> tuple[NDArray[np.int32], int]:
    b = np.asarray(bucket_of)
    if b.dtype == bool or not np.issubdtype(b.dtype, np.integer):
        raise TypeError(f"The 'bucket_of' parameter of {caller} must be an array of integer bucket ids.")
    if b.shape != (m,):
        raise ValueError(f"The 'bucket_of' parameter of {caller} must have shape ({m},). Got {b.shape}.")
    if np.any(b < -1):
        raise ValueError(f"The 'bucket_of' parameter of {caller} must hold bucket ids >= 0 (or -1 for none).")
    n_buckets = int(b.max()) + 1 if b.size else 0
    if n_buckets == 0:
        raise ValueError(f"The 'bucket_of' parameter of {caller} assigns no value to a bucket.")
    return np.ascontiguousarray(b, dtype=np.int32), n_buckets


def cet_upper_bounds(reference: Any, bucket_of: Any, hierarchy: Hierarchy | None = None, *,
                     tight: bool = False) -> NDArray[np.float64]:
    """SABRE's per-bucket worst-case transport cost CET^U (spec sabre-burel.md §3.1, Theorem 3.2).

    Parameters
    ----------
    reference : array-like of int, shape (m,)
        Counts of the sensitive values in the table (values with count 0 are not present and ignored).
    bucket_of : array-like of int, shape (m,)
        Bucket id of every value (0 .. n_buckets-1), or -1 for values in no bucket.
    hierarchy : Hierarchy, default=None
        None: ordered (numerical) SA with ground distance |rank_i - rank_j| / (m' - 1) over the present
        values. A Hierarchy: categorical SA with ground distance height(LCA) / height(root).
    tight : bool, default=False
        Categorical only. False: the thesis formula (h(n)/h(H)) (sum p - min p) with n the LCA of the
        bucket's present values (an upper bound, tight when all pairs in the bucket have their LCA at n).
        True: the exact maximum max_l sum_i d(l, i) p_i (spec §8 item 4). The ordered bound is always exact.

    Returns
    -------
    ndarray of float64, shape (n_buckets,)
        Their sum U bounds the EMD of every proportional class (Theorem 3.3).

    Examples
    --------
    >>> from anoncore import Hierarchy
    >>> h = Hierarchy.from_nested({"RD": {"R": ["SARS", "pneumonia", "bronchitis"],
    ...                                   "D": ["gastric flu", "gastric ulcer", "intestinal cancer"]}})
    >>> cet_upper_bounds([5, 3, 2, 4, 2, 2], [0, 0, 0, 1, 1, 1], h) * 18
    array([4., 3.])
    """
    caller = "cet_upper_bounds"
    ref = _counts(reference, "reference", caller, 1)
    if ref.sum() <= 0:
        raise ValueError(f"The 'reference' parameter of {caller} must have a positive total.")
    b, nb = _buckets(bucket_of, ref.size, caller)
    check_bool(tight, "tight", caller)
    if hierarchy is None:
        return _core.distance.cet_upper_ordered(ref, b, nb)
    h = _check_hierarchy(hierarchy, caller, ref.size)
    return _core.distance.cet_upper_hierarchical(
        ref, b, nb, h.parent, h.node_height, h.leaf_start, h.leaf_count, tight)


def bucket_emd(counts: Any, reference: Any, bucket_of: Any, hierarchy: Hierarchy | None = None, *,
               method: str = "auto", n_threads: int | None = None) -> NDArray[np.float64]:
    """SABRE's bucket-level EMD D(G) = EMD(d(G, phi), d(DB, phi)) per class (spec sabre-burel.md §3.3).

    The ground distance between buckets i != j is the largest distance between a value of i and a value of j.
    Closed forms: ordered SA with buckets that are contiguous runs of present values; categorical SA with
    buckets whose lowest common ancestors form an antichain (SABRE's buckets are hierarchy nodes). Other
    buckets use the generic fallback, an exact transportation solver (successive shortest paths).

    Parameters
    ----------
    counts : array-like of int, shape (n_classes, n_buckets)
        Rows of each class taken from each bucket.
    reference : array-like of int, shape (m,)
        Counts of the sensitive values in the table.
    bucket_of : array-like of int, shape (m,)
        Bucket id of every value, or -1 (only for values absent from the reference).
    hierarchy : Hierarchy, default=None
        None for an ordered SA, else the SA hierarchy.
    method : {'auto', 'closed_form', 'general'}, default='auto'
        'auto' uses the closed form when the buckets allow it and the generic solver otherwise;
        'closed_form' refuses other buckets; 'general' always runs the generic solver.
    n_threads : int, default=None
        None uses all cores.

    Returns
    -------
    ndarray of float64, shape (n_classes,)
        NaN for a class with no row.

    Raises
    ------
    ValueError
        With ``method='closed_form'``, when the buckets do not have the shape a closed form needs (not
        contiguous, or nested nodes).

    Examples
    --------
    >>> from anoncore import Hierarchy
    >>> h = Hierarchy.from_nested({"RD": {"R": ["SARS", "pneumonia", "bronchitis"],
    ...                                   "D": ["gastric flu", "gastric ulcer", "intestinal cancer"]}})
    >>> round(float(bucket_emd([[3, 2]], [5, 3, 2, 4, 2, 2], [0, 0, 0, 1, 1, 1], h)[0] * 45), 12)
    2.0
    """
    caller = "bucket_emd"
    ref = _counts(reference, "reference", caller, 1)
    if ref.sum() <= 0:
        raise ValueError(f"The 'reference' parameter of {caller} must have a positive total.")
    b, nb = _buckets(bucket_of, ref.size, caller)
    cnt = _counts(counts, "counts", caller, 2)
    if cnt.shape[1] != nb:
        raise ValueError(f"The 'counts' parameter of {caller} must have {nb} columns (one per bucket). "
                         f"Got {cnt.shape[1]}.")
    nt = check_n_threads(n_threads, caller)
    present = ref > 0
    if np.any(present & (b < 0)):
        raise ValueError(f"Every value present in the reference must be in a bucket ({caller}).")
    totals = np.bincount(b[present], weights=ref[present], minlength=nb).astype(np.int64)
    empty = np.flatnonzero(totals == 0)
    if empty.size:
        raise ValueError(f"Bucket {int(empty[0])} has no value present in the reference ({caller}).")
    check_option(method, "method", caller, ("auto", "closed_form", "general"))
    h = None if hierarchy is None else _check_hierarchy(hierarchy, caller, ref.size)
    codes = np.arange(ref.size)
    members = [codes[present & (b == i)] for i in range(nb)]
    lo_c = np.array([g.min() for g in members])
    hi_c = np.array([g.max() for g in members])
    if h is None:
        ranks = np.cumsum(present) - 1
        lo, hi = ranks[lo_c].astype(np.int32), ranks[hi_c].astype(np.int32)
        closed = bool(np.all(hi - lo + 1 == np.array([g.size for g in members])))
        if closed and method != "general":
            order = np.argsort(lo, kind="stable")
            return _core.distance.bucket_emd_ordered(
                np.ascontiguousarray(cnt[:, order]), np.ascontiguousarray(totals[order]),
                np.ascontiguousarray(lo[order]), np.ascontiguousarray(hi[order]), int(present.sum()), nt)
        if method == "closed_form":
            raise ValueError(f"The buckets of {caller} must be contiguous runs of present values for the closed "
                             "form of an ordered SA.")
        scale = max(int(present.sum()) - 1, 1)
        ground = np.maximum(hi[None, :] - lo[:, None], hi[:, None] - lo[None, :]) / scale
    else:
        nodes = np.asarray(h.lca_of_leaf_range(lo_c, hi_c), dtype=np.int32)
        start = h.leaf_start[nodes].astype(np.int64)
        end = start + h.leaf_count[nodes]
        order = np.argsort(start, kind="stable")
        closed = not np.any(start[order][1:] < end[order][:-1])
        if closed and method != "general":
            return _core.distance.bucket_emd_hierarchical(
                cnt, totals, np.ascontiguousarray(nodes), h.parent, h.node_height, h.n_leaves, nt)
        if method == "closed_form":
            raise ValueError(f"The buckets of {caller} must be disjoint hierarchy subtrees (an antichain of nodes) "
                             "for the closed form.")
        pres = codes[present]
        pair = h.node_height[h.lca(pres[:, None], pres[None, :])] / max(h.height, 1)
        where = {int(v): k for k, v in enumerate(pres)}
        ground = np.zeros((nb, nb))
        for i in range(nb):
            for j in range(nb):
                if i != j:
                    ground[i, j] = pair[np.ix_([where[int(v)] for v in members[i]],
                                               [where[int(v)] for v in members[j]])].max()
    np.fill_diagonal(ground, 0.0)
    return _core.distance.emd_general(
        cnt, totals, np.ascontiguousarray(ground, dtype=np.float64), nt)


