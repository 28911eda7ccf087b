"""Input normalisation and validation for :mod:`anoncore.graph`: every accepted graph form becomes a
:class:`GraphData` (nodes ``0 .. n-1``, arcs as int64 arrays, optional positive float64 weights)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from anoncore._validation import check_int
from anoncore.graph.datasets import EdgeList

__all__ = ["GraphData", "as_graph"]


@dataclass(frozen=True, slots=True)
class GraphData:
    """A validated graph: ``n`` nodes, edges ``src[i] -> dst[i]`` (each undirected edge once), weights or None."""

    n: int
    src: NDArray[np.int64] = field(repr=False)
    dst: NDArray[np.int64] = field(repr=False)
    weight: NDArray[np.float64] | None = field(repr=False)
    directed: bool
    nodes: tuple[Any, ...] = field(repr=False)

    @property
    def weighted(self) -> bool:
        return self.weight is not None

    def edge_weights(self) -> NDArray[np.float64]:
        return self.weight if self.weight is not None else np.ones(self.src.size, dtype=np.float64)

    def arcs(self, reverse: bool = False) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
        """Arcs (both directions of every undirected edge), optionally reversed."""
        s, d, w = self.src, self.dst, self.edge_weights()
        if not self.directed:
            s, d, w = np.concatenate([s, d]), np.concatenate([d, s]), np.concatenate([w, w])
        return (d, s, w) if reverse else (s, d, w)

    def csr(self, reverse: bool = False) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
        """(offsets, targets, weights) of the arcs sorted by (source, target)."""
        s, d, w = self.arcs(reverse)
        order = np.lexsort((d, s))
        off = np.zeros(self.n + 1, dtype=np.int64)
        np.cumsum(np.bincount(s, minlength=self.n), out=off[1:])
        return off, np.ascontiguousarray(d[order]), np.ascontiguousarray(w[order])


def _from_networkx(g: Any, weight: str | None, caller: str) -> GraphData:
    if g.is_multigraph():
        raise TypeError(f"{caller} does not accept multigraphs ({type(g).__name__}); merge parallel edges into one "
                        "weighted edge first.")
    nodes = tuple(g.nodes)
    index = {v: i for i, v in enumerate(nodes)}
    edges = list(g.edges(data=True))
    src = np.fromiter((index[u] for u, _, _ in edges), dtype=np.int64, count=len(edges))
    dst = np.fromiter((index[v] for _, v, _ in edges), dtype=np.int64, count=len(edges))
    w = None
    if weight is not None and edges:
        has = [weight in d for _, _, d in edges]
        if all(has):
            w = np.array([d[weight] for _, _, d in edges], dtype=np.float64)
        elif any(has):
            u, v, _ = edges[has.index(False)]
            raise ValueError(f"Edge ({u!r}, {v!r}) has no {weight!r} attribute while other edges have one; give every "
                             f"edge a weight or pass weight=None to {caller}.")
    return _finish(len(nodes), src, dst, w, bool(g.is_directed()), nodes, caller)


def as_graph(graph: Any, caller: str, *, directed: bool | None = None, n_nodes: int | None = None,
             weight: str | None = "weight") -> GraphData:
    """Normalise ``graph`` (networkx graph, :class:`EdgeList`, ``(m, 2|3)`` array or ``(src, dst[, weight])``)."""
    if isinstance(graph, GraphData):
        return graph
    if hasattr(graph, "is_directed") and hasattr(graph, "edges") and hasattr(graph, "nodes"):
        return _from_networkx(graph, weight, caller)
    if isinstance(graph, EdgeList):
        ids = tuple(graph.node_ids.tolist()) if graph.node_ids is not None else tuple(range(graph.n_nodes))
        d = graph.directed if directed is None else directed
        return _finish(graph.n_nodes, graph.src, graph.dst, graph.weight, d, ids, caller)
    if isinstance(graph, tuple) and len(graph) in (2, 3):
        cols = [np.asarray(c) for c in graph]
    else:
        try:
            arr = np.asarray(graph)
        except Exception:  # noqa: BLE001
            arr = None
        if arr is None or arr.ndim != 2 or arr.shape[1] not in (2, 3) or arr.dtype == object:
            raise TypeError(f"The 'graph' parameter of {caller} must be a networkx graph, an EdgeList, an array of "
                            f"shape (n_edges, 2 or 3) or a tuple (src, dst[, weight]). Got {type(graph).__name__} "
                            "instead.")
        cols = [arr[:, j] for j in range(arr.shape[1])]
    if any(c.ndim != 1 or c.size != cols[0].size for c in cols):
        raise ValueError(f"The edge arrays given to {caller} must be 1-D and of equal length.")
    for name, c in zip(("src", "dst"), cols[:2]):
        if c.size and (not np.issubdtype(c.dtype, np.number) or np.any(c != np.floor(c)) or c.min() < 0):
            raise ValueError(f"The {name!r} node ids given to {caller} must be non-negative integers.")
    src = cols[0].astype(np.int64)
    dst = cols[1].astype(np.int64)
    top = int(max(src.max(initial=-1), dst.max(initial=-1))) + 1
    if n_nodes is None:
        n = top
    else:
        n = check_int(n_nodes, "n_nodes", caller, 0)
        if n < top:
            raise ValueError(f"Edge arrays given to {caller} mention node {top - 1}, but n_nodes={n}.")
    w = cols[2].astype(np.float64) if len(cols) == 3 else None
    return _finish(n, src, dst, w, True if directed is None else bool(directed), tuple(range(n)), caller)


def _finish(n: int, src: NDArray[Any], dst: NDArray[Any], w: NDArray[Any] | None, directed: bool,
            nodes: tuple[Any, ...], caller: str) -> GraphData:
    if n == 0:
        raise ValueError(f"The graph given to {caller} is empty: it needs at least one node.")
    src = np.ascontiguousarray(src, dtype=np.int64)
    dst = np.ascontiguousarray(dst, dtype=np.int64)
    loops = np.flatnonzero(src == dst)
    if loops.size:
        v = nodes[int(src[loops[0]])]
        raise ValueError(f"The graph given to {caller} has a self-loop at node {v!r}; remove self-loops first.")
    if w is not None:
        w = np.ascontiguousarray(w, dtype=np.float64)
        bad = np.flatnonzero(~(np.isfinite(w) & (w > 0)))
        if bad.size:
            i = int(bad[0])
            what = "negative" if w[i] < 0 else "not a positive finite number"
            raise ValueError(f"Edge ({nodes[int(src[i])]!r}, {nodes[int(dst[i])]!r}) given to {caller} has weight "
                             f"{float(w[i])!r}, which is {what}; edge weights must be positive.")
    lo, hi = (src, dst) if directed else (np.minimum(src, dst), np.maximum(src, dst))
    key = lo * n + hi
    uniq, counts = np.unique(key, return_counts=True)
    if uniq.size != key.size:
        k = int(uniq[np.argmax(counts > 1)])
        raise ValueError(f"The graph given to {caller} repeats the edge ({nodes[k // n]!r}, {nodes[k % n]!r}); "
                         "merge repeated edges into one weighted edge first.")
    return GraphData(n, src, dst, w, directed, nodes)


def node_labels(labels: Any, g: GraphData, caller: str) -> list[Any]:
    """Labels in node order from a mapping node -> label or a sequence of length n."""
    if isinstance(labels, Mapping):
        out = []
        for v in g.nodes:
            if v not in labels:
                raise ValueError(f"Node {v!r} has no label: the 'labels' mapping given to {caller} must give every "
                                 f"node a leaf of the taxonomy.")
            out.append(labels[v])
        return out
    if isinstance(labels, (str, bytes)) or not hasattr(labels, "__len__"):
        raise TypeError(f"The 'labels' parameter of {caller} must be a mapping node -> label or a sequence of "
                        f"labels in node order. Got {type(labels).__name__} instead.")
    seq = list(labels)
    if len(seq) != g.n:
        which = g.nodes[len(seq)] if len(seq) < g.n else None
        extra = f" (node {which!r} has no label)" if which is not None else ""
        raise ValueError(f"The 'labels' given to {caller} have {len(seq)} entries for {g.n} nodes{extra}.")
    return seq
