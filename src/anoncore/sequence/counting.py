"""Windowed pattern-occurrence counting (Bonomi, Fan, Jin, WSDM 2016, Definition 1).

All heavy lifting is in the C++ kernels of ``anoncore._core.sequence``; this module validates and encodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from anoncore import _core
from anoncore._validation import check_n_threads
from anoncore.sequence._taxonomy import as_tax
from anoncore.sequence._validation import (
    check_int,
    encode_patterns,
    encode_sequences,
)

__all__ = ["count_patterns", "pair_table", "total_embeddings"]


def total_embeddings(n: int, w: int, m: int) -> int:
    """Number N_m(n, w) of windowed length-m index tuples of a sequence of length n.

    Parameters
    ----------
    n : int
        Sequence length, ``n >= 0``.
    w : int
        Window (inclusive on the index difference), ``w >= 0``.
    m : int
        Pattern length, ``m >= 1``.

    Returns
    -------
    int
        ``sum_{i=1}^{n} C(min(w, n - i), m - 1)``, which equals the sum of ``f_S(q)`` over all ``q``.

    Notes
    -----
    Closed form ``C(n, m)`` if ``n <= w`` else ``(n - w) C(w, m-1) + C(w, m)``; O(m). Spec §1.2.

    Examples
    --------
    >>> total_embeddings(3, 2, 2)
    3
    >>> total_embeddings(6, 5, 3)
    20
    """
    n = check_int(n, "n", "total_embeddings", 0)
    w = check_int(w, "w", "total_embeddings", 0)
    m = check_int(m, "m", "total_embeddings", 1)
    return int(_core.sequence.total_embeddings(n, w, m))


def count_patterns(
    sequences: Sequence[Any],
    taxonomy: Any,
    patterns: Sequence[Sequence[Any]],
    w: int,
    *,
    generalization: npt.ArrayLike | None = None,
    n_threads: int | None = None,
) -> npt.NDArray[np.int64]:
    """Windowed embedding counts f_Ŝ(p) of each pattern in each (possibly generalized) sequence.

    Parameters
    ----------
    sequences : list of sequences of leaf labels (str) or leaf codes (int)
        One event sequence per user.
    taxonomy : Hierarchy
        Taxonomy whose leaves are the event symbols.
    patterns : list of tuples
        Patterns of equal length m. Entries are node labels or node ids (internal nodes allowed, so generalized
        patterns can be counted). Not deduplicated: one output column per given pattern.
    w : int
        Window: an occurrence is an index tuple ``i_1 < ... < i_m`` with ``i_m - i_1 <= w``.
    generalization : array-like of int of shape (n_leaves,), default=None
        Generalization map h (leaf code -> node id). Counting is over ``Ŝ[i] = h(S[i])`` with exact node equality,
        without materialising Ŝ. None means the identity.
    n_threads : int, default=None
        Threads (None = all cores).

    Returns
    -------
    ndarray of int64 of shape (n_users, n_patterns)

    Raises
    ------
    ValueError
        Unknown symbols, invalid map. A pattern longer than the window allows (m > w + 1) has no occurrence
        (Definition 1): its counts are 0.

    Notes
    -----
    Embeddings (index tuples), inclusive window (Definition 1; spec §1.2). m = 2 runs one O(n) pass for all patterns
    per user; m >= 3 runs the O(n·w·m) DP per pattern.

    Examples
    --------
    >>> from anoncore.data.hierarchy import Hierarchy
    >>> tax = Hierarchy.from_nested({"*": {"x": ["a", "b"]}})
    >>> count_patterns([["a", "a", "b"]], tax, [("a", "b")], w=2).tolist()
    [[2]]
    """
    caller = "count_patterns"
    tax = as_tax(taxonomy, caller)
    w = check_int(w, "w", caller, 0)
    pats = encode_patterns(patterns, tax, caller, nodes=True, dedupe=False)
    m = pats.shape[1]
    offsets, flat = encode_sequences(sequences, tax, caller)
    if generalization is None:
        gmap = np.arange(tax.n_leaves, dtype=np.int32)
    else:
        gmap = check_generalization(generalization, tax, caller)
    nt = check_n_threads(n_threads, caller)
    if m > w + 1:  # an occurrence spans at least m - 1 > w positions: none fits in the window (Definition 1)
        return np.zeros((offsets.size - 1, pats.shape[0]), dtype=np.int64)
    return np.asarray(_core.sequence.count_patterns(offsets, flat, gmap, pats, tax.n_nodes, w, nt))


def check_generalization(generalization: npt.ArrayLike, tax: Any, caller: str) -> npt.NDArray[np.int32]:
    """Validate a generalization map: one node per leaf, each an ancestor-or-self of its leaf (Definition 3.2)."""
    g = np.asarray(generalization)
    if g.ndim != 1 or g.shape[0] != tax.n_leaves or g.dtype.kind not in "iu":
        raise ValueError(
            f"The 'generalization' parameter of {caller} must be an int array of shape ({tax.n_leaves},). "
            f"Got shape {g.shape} and dtype {g.dtype} instead."
        )
    for a in range(tax.n_leaves):
        v = int(g[a])
        if not 0 <= v < tax.n_nodes or not tax.is_ancestor_or_self(v, a):
            raise ValueError(
                f"The 'generalization' parameter of {caller} maps leaf {tax.labels[a]!r} to node {v}, "
                "which is not the leaf itself or one of its ancestors."
            )
    return np.ascontiguousarray(g, dtype=np.int32)


def pair_table(
    sequences: Sequence[Any], taxonomy: Any, w: int, *, n_threads: int | None = None
) -> npt.NDArray[np.int64]:
    """Dense length-2 sufficient statistics T_2 (spec §5 H1): ``out[u, a, b]`` = windowed (a, b) embeddings.

    Parameters
    ----------
    sequences : list of sequences
        One sequence per user.
    taxonomy : Hierarchy
        Taxonomy whose leaves are the symbols.
    w : int
        Window.
    n_threads : int, default=None
        Threads.

    Returns
    -------
    ndarray of int64 of shape (n_users, n_leaves, n_leaves)

    Examples
    --------
    >>> from anoncore.data.hierarchy import Hierarchy
    >>> tax = Hierarchy.from_nested({"*": {"x": ["a", "b"]}})
    >>> pair_table([["a", "a", "b"]], tax, 2)[0].tolist()
    [[1, 2], [0, 0]]
    """
    caller = "pair_table"
    tax = as_tax(taxonomy, caller)
    w = check_int(w, "w", caller, 0)
    offsets, flat = encode_sequences(sequences, tax, caller)
    nt = check_n_threads(n_threads, caller)
    return np.asarray(_core.sequence.pair_table(offsets, flat, tax.n_leaves, w, nt))
