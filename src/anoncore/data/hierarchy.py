"""Generalization hierarchies (value generalization trees) as flat integer arrays.

A :class:`Hierarchy` is a rooted tree whose leaves are the values of an attribute. Node ids follow one
fixed numbering (see ``docs/contracts.md``): leaves are ``0 .. n_leaves-1`` in pre-order, internal nodes
follow in post-order (children before parents) and the root is the last node. Hence every node covers a
contiguous range of leaf codes, and one increasing loop over node ids is a post-order pass.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["Hierarchy"]

_Key = Hashable


def _readonly(a: NDArray[Any]) -> NDArray[Any]:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False, slots=True)
class Hierarchy:
    """A generalization hierarchy stored as flat arrays.

    Build one with :meth:`from_arx_csv`, :meth:`from_rows`, :meth:`from_nested`, :meth:`from_parent_map`,
    or the builders in :mod:`anoncore.data.builders`; do not call the constructor directly.

    Attributes
    ----------
    labels : tuple of str
        Label of every node, indexed by node id.
    parent : ndarray of int32, shape (n_nodes,)
        Parent node id; -1 for the root.
    node_height : ndarray of int32, shape (n_nodes,)
        Longest path from the node down to a leaf (leaves have height 0).
    node_depth : ndarray of int32, shape (n_nodes,)
        Distance from the root (the root has depth 0).
    leaf_start, leaf_count : ndarray of int32, shape (n_nodes,)
        The leaves under a node are the codes ``[leaf_start, leaf_start + leaf_count)``.
    ancestor : ndarray of int32, shape (n_leaves, height + 1)
        ``ancestor[v, l]`` is the first node on the path from leaf ``v`` upwards whose height is at least
        ``l``; on a balanced hierarchy this is the ARX generalization of ``v`` at level ``l``.
    name : str or None
        Optional name (usually the attribute's).

    Notes
    -----
    Heights follow the Cao thesis (spec sabre-burel.md §2.2): the hierarchical ground distance between two
    leaves is ``height(LCA) / height(root)``. On unbalanced trees a node's height is the longest path down.
    """

    labels: tuple[str, ...]
    parent: NDArray[np.int32] = field(repr=False)
    node_height: NDArray[np.int32] = field(repr=False)
    node_depth: NDArray[np.int32] = field(repr=False)
    leaf_start: NDArray[np.int32] = field(repr=False)
    leaf_count: NDArray[np.int32] = field(repr=False)
    ancestor: NDArray[np.int32] = field(repr=False)
    n_leaves: int
    name: str | None = None
    _leaf_index: dict[str, int] = field(default_factory=dict, repr=False)
    # arrays derived from the (frozen) hierarchy alone, computed once by the modules that need them
    _memo: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    # ------------------------------------------------------------------ construction
    @classmethod
    def _from_parent_keys(
        cls,
        parent_of: Mapping[_Key, _Key | None],
        label_of: Mapping[_Key, str],
        order: Sequence[_Key],
        name: str | None,
    ) -> Hierarchy:
        """Build from a key -> parent-key map (root maps to None); ``order`` fixes children order."""
        if not order:
            raise ValueError(f"Hierarchy {name or ''!s} is empty: it needs at least one value.".replace("  ", " "))
        roots = [k for k in order if parent_of[k] is None]
        if len(roots) != 1:
            shown = ", ".join(repr(label_of[r]) for r in roots[:5])
            raise ValueError(
                f"Hierarchy {name!r} must have exactly one root; found {len(roots)} ({shown})."
            )
        children: dict[_Key, list[_Key]] = {k: [] for k in order}
        for k in order:
            p = parent_of[k]
            if p is not None:
                if p not in children:
                    raise ValueError(f"Hierarchy {name!r}: parent {p!r} of {label_of[k]!r} is not a node.")
                children[p].append(k)
        root = roots[0]
        # Iterative pre-order walk for leaves, post-order for internal nodes.
        leaves: list[_Key] = []
        internal_post: list[_Key] = []
        seen: set[_Key] = set()
        stack: list[tuple[_Key, bool]] = [(root, False)]
        while stack:
            k, done = stack.pop()
            if done:
                internal_post.append(k)
                continue
            if k in seen:
                raise ValueError(f"Hierarchy {name!r} has a cycle through {label_of[k]!r}.")
            seen.add(k)
            ch = children[k]
            if not ch:
                leaves.append(k)
            else:
                stack.append((k, True))
                for c in reversed(ch):
                    stack.append((c, False))
        if len(seen) != len(order):
            unreachable = next(k for k in order if k not in seen)
            raise ValueError(f"Hierarchy {name!r}: node {label_of[unreachable]!r} is not connected to the root.")
        ids = {k: i for i, k in enumerate(leaves + internal_post)}
        n = len(ids)
        n_leaves = len(leaves)
        nodes = leaves + internal_post
        parent = np.full(n, -1, dtype=np.int32)
        for k, i in ids.items():
            p = parent_of[k]
            if p is not None:
                parent[i] = ids[p]
        height = np.zeros(n, dtype=np.int32)
        leaf_start = np.zeros(n, dtype=np.int32)
        leaf_count = np.zeros(n, dtype=np.int32)
        leaf_start[:n_leaves] = np.arange(n_leaves, dtype=np.int32)
        leaf_count[:n_leaves] = 1
        leaf_start[n_leaves:] = np.iinfo(np.int32).max
        for i in range(n - 1):  # post-order: children before parents
            p = parent[i]
            height[p] = max(height[p], height[i] + 1)
            leaf_count[p] += leaf_count[i]
            leaf_start[p] = min(leaf_start[p], leaf_start[i])
        depth = np.zeros(n, dtype=np.int32)
        for i in range(n - 2, -1, -1):  # parents after children: reverse order visits parents first
            depth[i] = depth[parent[i]] + 1
        H = int(height[n - 1])
        anc = np.empty((n_leaves, H + 1), dtype=np.int32)
        cur = np.arange(n_leaves, dtype=np.int32)
        for level in range(H + 1):
            while True:
                low = height[cur] < level
                if not low.any():
                    break
                cur = np.where(low, parent[cur], cur).astype(np.int32)
            anc[:, level] = cur
        labels = tuple(str(label_of[k]) for k in nodes)
        leaf_index: dict[str, int] = {}
        for i in range(n_leaves):
            lab = labels[i]
            if lab in leaf_index:
                raise ValueError(f"Hierarchy {name!r} has two leaves labelled {lab!r}.")
            leaf_index[lab] = i
        return cls(
            labels=labels,
            parent=_readonly(parent),
            node_height=_readonly(height),
            node_depth=_readonly(depth),
            leaf_start=_readonly(leaf_start),
            leaf_count=_readonly(leaf_count),
            ancestor=_readonly(anc),
            n_leaves=n_leaves,
            name=name,
            _leaf_index=leaf_index,
        )

    @classmethod
    def from_rows(cls, rows: Iterable[Sequence[Any]], name: str | None = None) -> Hierarchy:
        """Build from ARX-style rows ``[leaf, level1, ..., root]`` (one row per leaf).

        Column ``i`` holds the value at generalization level ``i``; every row must have the same length and
        the last column a single root value. A value at level ``i`` may have only one parent at level
        ``i + 1``.

        Examples
        --------
        >>> h = Hierarchy.from_rows([["20", "20-29", "*"], ["25", "20-29", "*"], ["31", "30-39", "*"]])
        >>> h.height, h.n_leaves, h.leaves
        (2, 3, ('20', '25', '31'))
        """
        rows = [[str(v).strip() for v in r] for r in rows]
        rows = [r for r in rows if any(v != "" for v in r)]
        if not rows:
            raise ValueError(f"Hierarchy {name!r} is empty: it needs at least one row.")
        firsts = [r[0] for r in rows]
        if len(set(firsts)) != len(firsts):
            dup = next(v for v in firsts if firsts.count(v) > 1)
            raise ValueError(f"Hierarchy {name!r} lists a leaf twice ({dup!r}).")
        width = len(rows[0])
        for i, r in enumerate(rows):
            if len(r) != width:
                raise ValueError(
                    f"Hierarchy {name!r} has ragged levels: row {i} ({r[0]!r}) has {len(r)} columns, "
                    f"row 0 has {width}."
                )
        parent_of: dict[_Key, _Key | None] = {}
        label_of: dict[_Key, str] = {}
        order: list[_Key] = []
        for r in rows:
            for lvl in range(width):
                key = (lvl, r[lvl])
                par = (lvl + 1, r[lvl + 1]) if lvl + 1 < width else None
                if key in parent_of:
                    if parent_of[key] != par:
                        other = parent_of[key]
                        raise ValueError(
                            f"Hierarchy {name!r}: node {r[lvl]!r} at level {lvl} has two parents "
                            f"({other[1] if isinstance(other, tuple) else None!r} and {r[lvl + 1] if par else None!r})."
                        )
                    continue
                parent_of[key] = par
                label_of[key] = r[lvl]
                order.append(key)
        return cls._from_parent_keys(parent_of, label_of, order, name)

    @classmethod
    def from_arx_csv(cls, path: str | os.PathLike[str], sep: str = ";", name: str | None = None) -> Hierarchy:
        """Read an ARX hierarchy file (no header, ``leaf;level1;...;*`` per line).

        Examples
        --------
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "sex.csv"
        >>> _ = p.write_text("Male;*\\nFemale;*\\n")
        >>> Hierarchy.from_arx_csv(p).leaves
        ('Male', 'Female')
        """
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh, delimiter=sep))
        if name is None:
            name = os.path.splitext(os.path.basename(os.fspath(path)))[0]
        return cls.from_rows(rows, name=name)

    @classmethod
    def from_parent_map(cls, parents: Mapping[Any, Any], name: str | None = None) -> Hierarchy:
        """Build from a ``child -> parent`` mapping; the root is the one node without a parent.

        Unbalanced trees are allowed. Labels must be unique across the whole tree.

        Examples
        --------
        >>> h = Hierarchy.from_parent_map({"flu": "resp", "sars": "resp", "resp": "*", "ulcer": "*"})
        >>> h.leaves, h.height
        (('flu', 'sars', 'ulcer'), 2)
        """
        if not isinstance(parents, Mapping):
            raise TypeError(f"parents must be a mapping child -> parent. Got {type(parents).__name__} instead.")
        if not parents:
            raise ValueError(f"Hierarchy {name!r} is empty: the parent map has no entry.")
        parent_of: dict[_Key, _Key | None] = {}
        order: list[_Key] = []
        for child, par in parents.items():
            c, p = str(child), str(par)
            if c == p:
                raise ValueError(f"Hierarchy {name!r}: node {c!r} is its own parent.")
            if c in parent_of and parent_of[c] is not None and parent_of[c] != p:
                raise ValueError(f"Hierarchy {name!r}: node {c!r} has two parents.")
            if c not in parent_of:
                order.append(c)
            parent_of[c] = p
            if p not in parent_of:
                parent_of[p] = None
                order.append(p)
        # Keep first-appearance order but make sure parents listed as keys later keep their parent.
        return cls._from_parent_keys(parent_of, {k: str(k) for k in order}, order, name)

    @classmethod
    def from_nested(cls, tree: Mapping[Any, Any], name: str | None = None) -> Hierarchy:
        """Build from a nested mapping ``{root: {child: {...}, leaf: None, ...}}``.

        A node's value is either a mapping of its children, a list of leaf labels, or ``None`` for a leaf.

        Examples
        --------
        >>> h = Hierarchy.from_nested({"*": {"R": ["flu", "sars"], "D": ["ulcer"]}})
        >>> h.leaves, [h.labels[h.parent[i]] for i in range(3)]
        (('flu', 'sars', 'ulcer'), ['R', 'R', 'D'])
        """
        if not isinstance(tree, Mapping):
            raise TypeError(f"tree must be a mapping. Got {type(tree).__name__} instead.")
        if len(tree) != 1:
            raise ValueError(f"Hierarchy {name!r}: a nested tree needs exactly one root; got {len(tree)}.")
        parent_of: dict[_Key, _Key | None] = {}
        order: list[_Key] = []

        def add(label: Any, par: str | None, sub: Any) -> None:
            lab = str(label)
            if lab in parent_of:
                raise ValueError(f"Hierarchy {name!r}: label {lab!r} appears twice.")
            parent_of[lab] = par
            order.append(lab)
            if sub is None:
                return
            if isinstance(sub, Mapping):
                if not sub:
                    return
                for k, v in sub.items():
                    add(k, lab, v)
            elif isinstance(sub, (list, tuple)):
                for k in sub:
                    add(k, lab, None)
            else:
                raise TypeError(f"Hierarchy {name!r}: children of {lab!r} must be a mapping, a list or None.")

        (root, sub), = tree.items()
        add(root, None, sub)
        return cls._from_parent_keys(parent_of, {k: str(k) for k in order}, order, name)

    # ------------------------------------------------------------------ basic properties
    @property
    def n_nodes(self) -> int:
        return len(self.labels)

    @property
    def root(self) -> int:
        return self.n_nodes - 1

    @property
    def height(self) -> int:
        """Height of the root (number of generalization levels above the leaves)."""
        return int(self.node_height[-1])

    @property
    def n_levels(self) -> int:
        """Number of levels including level 0 (the leaves)."""
        return self.height + 1

    @property
    def leaves(self) -> tuple[str, ...]:
        """Leaf labels in code (pre-order) order."""
        return self.labels[: self.n_leaves]

    @property
    def is_balanced(self) -> bool:
        return bool(np.all(self.node_depth[: self.n_leaves] == self.height))

    def children(self, node: int) -> list[int]:
        """Child node ids of ``node`` in order."""
        self._check_node(node)
        return [int(i) for i in np.flatnonzero(self.parent == node)]

    def parent_of(self, node: int) -> int:
        self._check_node(node)
        return int(self.parent[node])

    def depth(self, node: int) -> int:
        self._check_node(node)
        return int(self.node_depth[node])

    def leaf_code(self, label: Any) -> int:
        """Code of the leaf labelled ``label``; raises ValueError if it is not a leaf."""
        try:
            return self._leaf_index[str(label)]
        except KeyError:
            raise ValueError(f"Value {label!r} is not a leaf of hierarchy {self.name!r}.") from None

    def leaf_lookup(self) -> dict[str, int]:
        """A copy of the label -> leaf code mapping."""
        return dict(self._leaf_index)

    def node_ids(self, label: str) -> list[int]:
        """All node ids carrying ``label`` (labels may repeat across levels)."""
        return [i for i, lab in enumerate(self.labels) if lab == label]

    def level_nodes(self, level: int) -> NDArray[np.int32]:
        """Distinct nodes used by full-domain generalization to ``level``, in leaf order."""
        self._check_level(level)
        col = self.ancestor[:, level]
        _, idx = np.unique(col, return_index=True)
        return col[np.sort(idx)]

    def level_sizes(self) -> list[int]:
        """Number of distinct values at each level 0..height."""
        return [int(np.unique(self.ancestor[:, lv]).size) for lv in range(self.n_levels)]

    def generalize(self, codes: NDArray[np.integer[Any]], level: int) -> NDArray[np.int32]:
        """Node ids of the leaves ``codes`` generalized to ``level``."""
        self._check_level(level)
        out: NDArray[np.int32] = self.ancestor[np.asarray(codes), level]
        return out

    def lca(self, a: Any, b: Any) -> Any:
        """Lowest common ancestor of nodes ``a`` and ``b`` (scalars or arrays, vectorised)."""
        a = np.asarray(a, dtype=np.int64)
        b = np.asarray(b, dtype=np.int64)
        lo = np.minimum(self.leaf_start[a], self.leaf_start[b])
        hi = np.maximum(self.leaf_start[a] + self.leaf_count[a], self.leaf_start[b] + self.leaf_count[b]) - 1
        out = self.lca_of_leaf_range(lo, hi)
        # Single-child chains share a leaf range: climb until the node is an ancestor-or-self of both.
        top = np.minimum(self.node_depth[a], self.node_depth[b])
        while True:
            deep = self.node_depth[out] > top
            if not np.any(deep):
                break
            out = np.where(deep, self.parent[out], out).astype(np.int32)
        return int(out) if out.ndim == 0 else out

    def lca_of_leaf_range(self, lo: Any, hi: Any) -> NDArray[np.int32]:
        """Lowest node covering every leaf code in ``[lo, hi]`` (vectorised over arrays of ranges)."""
        lo = np.asarray(lo, dtype=np.int64)
        hi = np.asarray(hi, dtype=np.int64)
        cur: NDArray[np.int32] = lo.astype(np.int32, copy=True)
        while True:
            start = self.leaf_start[cur]
            bad = (start > lo) | (start + self.leaf_count[cur] - 1 < hi)
            if not np.any(bad):
                return cur
            cur = np.where(bad, self.parent[cur], cur).astype(np.int32)

    def to_rows(self) -> list[list[str]]:
        """ARX-style rows ``[leaf, level1, ..., root]`` (levels as in :attr:`ancestor`)."""
        return [[self.labels[n] for n in self.ancestor[v]] for v in range(self.n_leaves)]

    def _check_node(self, node: int) -> None:
        if not (0 <= int(node) < self.n_nodes):
            raise ValueError(f"Node id {node} is out of range [0, {self.n_nodes - 1}] for hierarchy {self.name!r}.")

    def _check_level(self, level: int) -> None:
        if isinstance(level, bool) or not isinstance(level, (int, np.integer)):
            raise TypeError(f"level must be an int. Got {type(level).__name__} instead.")
        if not (0 <= level <= self.height):
            raise ValueError(
                f"Level {level} is out of range [0, {self.height}] for hierarchy {self.name!r}."
            )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Hierarchy):
            return NotImplemented
        return self.labels == other.labels and np.array_equal(self.parent, other.parent)

    def __hash__(self) -> int:
        return hash((self.labels, self.parent.tobytes()))

    def __repr__(self) -> str:
        return (
            f"Hierarchy(name={self.name!r}, n_leaves={self.n_leaves}, n_nodes={self.n_nodes}, "
            f"height={self.height}, balanced={self.is_balanced})"
        )
