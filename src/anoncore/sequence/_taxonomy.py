"""Internal taxonomy view used by the sequence algorithms (plain parent arrays, contract node numbering).

Node ids follow ``docs/contracts.md``: leaves ``0..L-1`` in pre-order, internal nodes after them in post-order,
the root last. Every node covers the contiguous leaf range ``[leaf_start, leaf_start + leaf_count)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from anoncore.data.hierarchy import Hierarchy

__all__ = ["Tax", "as_tax", "tax_from_parent"]

_CACHE: dict[int, tuple[Hierarchy, Tax]] = {}  # Hierarchy objects are immutable

IntArray = npt.NDArray[np.int32]


@dataclass(frozen=True, slots=True)
class Tax:
    """Parent-array taxonomy with derived arrays (spec §2.1(d))."""

    parent: IntArray
    n_leaves: int
    depth: IntArray = field(repr=False)
    leaf_start: IntArray = field(repr=False)
    leaf_count: IntArray = field(repr=False)
    labels: tuple[str, ...] = field(repr=False)
    paths: tuple[tuple[int, ...], ...] = field(repr=False)  # root-to-leaf path of each leaf
    leaf_index: dict[str, int] = field(repr=False, default_factory=dict)  # leaf label -> code

    @property
    def n_nodes(self) -> int:
        return int(self.parent.shape[0])

    @property
    def root(self) -> int:
        return self.n_nodes - 1

    def is_ancestor_or_self(self, u: int, x: int) -> bool:
        """True when node u is x or an ancestor of x (Euler-interval containment)."""
        su, sx = int(self.leaf_start[u]), int(self.leaf_start[x])
        return (
            su <= sx
            and sx + int(self.leaf_count[x]) <= su + int(self.leaf_count[u])
            and (int(self.depth[u]) <= int(self.depth[x]))
        )

    def lca(self, u: int, v: int) -> int:
        """Lowest common ancestor by climbing, O(h_max)."""
        du, dv = int(self.depth[u]), int(self.depth[v])
        while du > dv:
            u, du = int(self.parent[u]), du - 1
        while dv > du:
            v, dv = int(self.parent[v]), dv - 1
        while u != v:
            u, v = int(self.parent[u]), int(self.parent[v])
        return u

    def child_toward(self, u: int, leaf: int) -> int:
        """The child of u on the path from u down to leaf (u must be a proper ancestor of leaf)."""
        return self.paths[leaf][int(self.depth[u]) + 1]

    def label_index(self) -> dict[str, int]:
        return self.leaf_index


def tax_from_parent(parent: Sequence[int] | npt.ArrayLike, labels: Sequence[str] | None = None) -> Tax:
    """Build a :class:`Tax` from a parent array in contract numbering (root = last node, parent -1)."""
    par = np.ascontiguousarray(np.asarray(parent, dtype=np.int64)).astype(np.int32)
    n = int(par.shape[0])
    if n == 0 or par[n - 1] != -1:
        raise ValueError("The taxonomy's root must be its last node (parent -1).")
    has_child = np.zeros(n, dtype=bool)
    for v in range(n - 1):
        p = int(par[v])
        if not (v < p < n):
            raise ValueError(
                f"The taxonomy's parent array must list children before parents; node {v} has parent {p}."
            )
        has_child[p] = True
    n_leaves = int(np.count_nonzero(~has_child))
    if n > 1 and (has_child[:n_leaves].any() or not has_child[n_leaves:].all()):
        raise ValueError("The taxonomy's leaves must be the nodes 0..n_leaves-1.")
    if n == 1:
        n_leaves = 1
    depth = np.zeros(n, dtype=np.int32)
    for v in range(n - 2, -1, -1):
        depth[v] = depth[par[v]] + 1
    leaf_start = np.full(n, np.iinfo(np.int32).max, dtype=np.int32)
    leaf_count = np.zeros(n, dtype=np.int32)
    for v in range(n_leaves):
        leaf_start[v] = v
        leaf_count[v] = 1
    for v in range(n - 1):  # children before parents: one increasing pass is post-order
        p = int(par[v])
        leaf_start[p] = min(leaf_start[p], leaf_start[v])
        leaf_count[p] += leaf_count[v]
    paths = []
    for a in range(n_leaves):
        path = [a]
        while par[path[-1]] != -1:
            path.append(int(par[path[-1]]))
        paths.append(tuple(reversed(path)))
    labs = tuple(str(x) for x in labels) if labels is not None else tuple(str(i) for i in range(n))
    if len(labs) != n:
        raise ValueError(f"The taxonomy has {n} nodes but {len(labs)} labels.")
    return Tax(
        parent=par,
        n_leaves=n_leaves,
        depth=depth,
        leaf_start=leaf_start,
        leaf_count=leaf_count,
        labels=labs,
        paths=tuple(paths),
        leaf_index={lab: i for i, lab in enumerate(labs[:n_leaves])},
    )


def as_tax(taxonomy: Any, caller: str) -> Tax:
    """Accept a Hierarchy (or an internal Tax) and return the internal view."""
    if isinstance(taxonomy, Tax):
        return taxonomy
    if isinstance(taxonomy, Hierarchy):
        key = id(taxonomy)
        hit = _CACHE.get(key)
        if hit is not None and hit[0] is taxonomy:
            return hit[1]
        tax = tax_from_parent(np.asarray(taxonomy.parent), list(taxonomy.labels))
        if len(_CACHE) > 64:
            _CACHE.clear()
        _CACHE[key] = (taxonomy, tax)
        return tax
    raise TypeError(
        f"The 'taxonomy' parameter of {caller} must be an instance of anoncore.data.Hierarchy. "
        f"Got {type(taxonomy).__name__} instead."
    )
