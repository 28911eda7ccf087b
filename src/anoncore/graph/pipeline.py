"""ProminenceAnonymize (spec social-network.md §6.3): generalize node labels along a taxonomy in proportion
to each node's prominence, merge the generalized nodes into super nodes, and measure the information loss.

Provenance: the premise ("a reputed person in the society needs more privacy") and the ingredients
(centrality / prestige measures, a taxonomy tree, super nodes, Iloss, Wiki-Vote) are the thesis's
(Babu 2013, ch. 6; Babu et al., Computers & Electrical Engineering 39 (2013) 1947-1961). The chapter's text
is not available, so the exact steps are anoncore's reconstruction ([RECON]); each open choice is a named
option (see docs/graph.md).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from anoncore._validation import check_bool, check_float, check_int, check_n_threads, check_option
from anoncore.data.hierarchy import Hierarchy
from anoncore.graph._input import GraphData, as_graph, node_labels
from anoncore.graph.measures import MEASURES, RankPrestige, compute_measure, minmax

__all__ = [
    "ProminenceResult",
    "SuperGraph",
    "contract",
    "generalize_labels",
    "information_loss",
    "level_map",
    "prominence_anonymize",
    "sensitivity_index",
]


def _ro(a: Any) -> Any:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, slots=True, eq=False)
class SuperGraph:
    """The masked graph: one node per super node.

    ``sizes[k]`` original nodes were merged into super node ``k``, labelled ``labels[k]`` (taxonomy node
    ``label_nodes[k]``); edge ``i`` is ``src[i] -> dst[i]`` with the summed weight of the original edges between
    the two groups (edge counts when the input is unweighted); ``src == dst`` is a self-loop holding the
    edges inside a group.
    """

    sizes: NDArray[np.int64] = field(repr=False)
    labels: tuple[str, ...] = field(repr=False)
    label_nodes: NDArray[np.int32] = field(repr=False)
    src: NDArray[np.int64] = field(repr=False)
    dst: NDArray[np.int64] = field(repr=False)
    weight: NDArray[np.float64] = field(repr=False)
    directed: bool = True

    @property
    def n_nodes(self) -> int:
        return int(self.sizes.size)

    @property
    def n_edges(self) -> int:
        return int(self.src.size)

    def to_networkx(self) -> Any:
        """A ``networkx.DiGraph`` / ``Graph`` with node attributes ``size`` and ``label``, edge attribute ``weight``."""
        import networkx as nx

        g: Any = nx.DiGraph() if self.directed else nx.Graph()
        for k in range(self.n_nodes):
            g.add_node(k, size=int(self.sizes[k]), label=self.labels[k])
        g.add_weighted_edges_from(zip(self.src.tolist(), self.dst.tolist(), self.weight.tolist()))
        return g

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SuperGraph):
            return NotImplemented
        return (self.labels == other.labels and self.directed == other.directed
                and all(np.array_equal(getattr(self, f), getattr(other, f))
                        for f in ("sizes", "label_nodes", "src", "dst", "weight")))

    def __repr__(self) -> str:
        return f"SuperGraph(n_nodes={self.n_nodes}, n_edges={self.n_edges}, directed={self.directed})"


@dataclass(frozen=True, slots=True, eq=False)
class ProminenceResult:
    """Output of :func:`prominence_anonymize`; arrays are in node order and read-only.

    Attributes
    ----------
    nodes : tuple
        Node ids in the order of the arrays (``list(G.nodes)`` for networkx input, ``0 .. n-1`` otherwise).
    measure : str
        The measure used (``'given'`` when scores were passed in).
    scores, si : ndarray of float64, shape (n,)
        The measure and the sensitivity index (its min-max normalisation).
    levels : ndarray of int32, shape (n,)
        Generalization level of each node, 0 .. taxonomy height.
    labels : tuple of str
        Published (generalized) label of each node; ``label_nodes`` the taxonomy node ids.
    group : ndarray of int64, shape (n,)
        Super node of each node in :attr:`masked`.
    masked : SuperGraph
        The masked graph.
    iloss : float
        Mean information loss per node, in [0, 1]; ``node_iloss`` per node.
    trace : RankPrestige or None
        Convergence trace of rank prestige when it was (part of) the measure.
    stats : dict
        Timings (not compared).
    """

    nodes: tuple[Any, ...] = field(repr=False)
    measure: str
    scores: NDArray[np.float64] = field(repr=False)
    si: NDArray[np.float64] = field(repr=False)
    levels: NDArray[np.int32] = field(repr=False)
    labels: tuple[str, ...] = field(repr=False)
    label_nodes: NDArray[np.int32] = field(repr=False)
    group: NDArray[np.int64] = field(repr=False)
    masked: SuperGraph
    iloss: float
    node_iloss: NDArray[np.float64] = field(repr=False)
    trace: RankPrestige | None = field(default=None, repr=False)
    stats: dict[str, float] = field(default_factory=dict, repr=False, compare=False)

    def labels_by_node(self) -> dict[Any, str]:
        """Published label of each original node."""
        return dict(zip(self.nodes, self.labels))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ProminenceResult):
            return NotImplemented
        arrays = ("scores", "si", "levels", "label_nodes", "group", "node_iloss")
        return (self.nodes == other.nodes and self.measure == other.measure and self.labels == other.labels
                and self.iloss == other.iloss and self.masked == other.masked
                and all(np.array_equal(getattr(self, f), getattr(other, f)) for f in arrays))

    def __repr__(self) -> str:
        return (f"ProminenceResult(measure={self.measure!r}, n_nodes={len(self.nodes)}, "
                f"n_super_nodes={self.masked.n_nodes}, iloss={self.iloss:.6g}, max_level={int(self.levels.max())})")


# ---------------------------------------------------------------------------------------------- pipeline steps
def sensitivity_index(scores: Any) -> NDArray[np.float64]:
    """SI: the measure min-max normalised to [0, 1] (spec §6.3 step 2); all zeros when every node scores the same."""
    x = np.asarray(scores, dtype=np.float64)
    if x.ndim != 1 or x.size == 0:
        raise ValueError("The scores must be a non-empty 1-D array.")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"The scores contain a non-finite value at node {int(np.flatnonzero(~np.isfinite(x))[0])}.")
    return minmax(x)


def level_map(si: Any, height: int, method: str = "linear") -> NDArray[np.int32]:
    """Generalization level per node from SI (spec §6.3 step 3): more sensitive, more general.

    ``'linear'``: ``ceil(SI * H)`` (SI = 0 stays at level 0). ``'quantile'``: ``H + 1`` equal-frequency buckets
    of SI's rank, ``floor((H + 1) * #{u : SI(u) < SI(v)} / n)``, so tied nodes share a level. Both are
    non-decreasing in SI."""
    check_option(method, "level_map", "level_map", ("linear", "quantile"))
    si = np.asarray(si, dtype=np.float64)
    height = check_int(height, "height", "level_map", 0)
    if method == "linear":
        g = np.ceil(si * height - 1e-12)  # guard against 0.30000000000000004 * 10 style round-up
        return np.asarray(np.clip(g, 0, height), dtype=np.int32)
    below = np.searchsorted(np.sort(si), si, side="left")
    return np.asarray(np.minimum((height + 1) * below // si.size, height), dtype=np.int32)


def generalize_labels(leaf_codes: Any, levels: Any, taxonomy: Hierarchy) -> NDArray[np.int32]:
    """Taxonomy node of each label generalized to its level: the ancestor at that height (spec §6.3 step 4)."""
    return np.asarray(taxonomy.ancestor[np.asarray(leaf_codes), np.asarray(levels)], dtype=np.int32)


def information_loss(label_nodes: Any, levels: Any, taxonomy: Hierarchy, method: str = "leaves") -> NDArray[np.float64]:
    """Per-node loss (spec §6.3 step 6): ``'leaves'`` ``(|leaves(x')| - 1) / |leaves(T)|`` (Xiao and Tao's
    ILoss), or ``'level'`` ``level / H``."""
    check_option(method, "iloss", "information_loss", ("leaves", "level"))
    if method == "leaves":
        return np.asarray((taxonomy.leaf_count[np.asarray(label_nodes)] - 1.0) / taxonomy.n_leaves, dtype=np.float64)
    h = taxonomy.height
    lv = np.asarray(levels, dtype=np.float64)
    return lv / h if h > 0 else np.zeros_like(lv)


def contract(g: GraphData, label_nodes: NDArray[np.int32], levels: NDArray[np.int32], taxonomy: Hierarchy,
             min_level: int = 1) -> tuple[NDArray[np.int64], SuperGraph]:
    """Super nodes (spec §6.3 step 5): nodes at level >= ``min_level`` with the same generalized label merge;
    the others stay single. Super nodes are numbered by their first node; edges are reduced by sort on
    (group(u), group(v)), weights summed, intra-group edges kept as self-loops."""
    n = g.n
    merge = levels >= min_level
    key = np.where(merge, label_nodes.astype(np.int64), taxonomy.n_nodes + np.arange(n, dtype=np.int64))
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    group = rank[inv.reshape(-1)]
    n_groups = int(first.size)
    sizes = np.bincount(group, minlength=n_groups).astype(np.int64)
    rep = np.empty(n_groups, dtype=np.int64)
    rep[group[::-1]] = np.arange(n - 1, -1, -1)  # first node of each group
    gl = label_nodes[rep].astype(np.int32)
    s, d = group[g.src], group[g.dst]
    if not g.directed:
        s, d = np.minimum(s, d), np.maximum(s, d)
    ekey = s * n_groups + d
    uk, einv = np.unique(ekey, return_inverse=True)
    w = np.bincount(einv.reshape(-1), weights=g.edge_weights(), minlength=uk.size)
    masked = SuperGraph(_ro(sizes), tuple(taxonomy.labels[int(x)] for x in gl), _ro(gl), _ro(uk // n_groups),
                        _ro(uk % n_groups), _ro(w.astype(np.float64)), g.directed)
    return group, masked


def _leaf_codes(labels: Sequence[Any], g: GraphData, taxonomy: Hierarchy, caller: str) -> NDArray[np.int32]:
    index = taxonomy.leaf_lookup()
    out = np.empty(len(labels), dtype=np.int32)
    for i, lab in enumerate(labels):
        c = index.get(str(lab))
        if c is None:
            inner = " (it is an inner node; labels must be leaves)" if str(lab) in taxonomy.labels else ""
            raise ValueError(f"Node {g.nodes[i]!r} has label {lab!r}, which is not a leaf of the taxonomy "
                             f"{taxonomy.name!r}{inner}.")
        out[i] = c
    return out


def prominence_anonymize(
    graph: Any,
    labels: Any,
    taxonomy: Hierarchy,
    measure: str | Any = "degree",
    *,
    a: float = 0.5,
    combine: Sequence[str] = ("degree", "betweenness"),
    damping: float = 0.85,
    closeness: str = "harmonic",
    distance: str = "inverse",
    level_map: str = "linear",
    merge: bool = True,
    merge_min_level: int = 1,
    iloss: str = "leaves",
    betweenness_samples: int | None = None,
    rng: int | np.random.Generator | None = None,
    n_threads: int | None = None,
    directed: bool | None = None,
    n_nodes: int | None = None,
    weight: str | None = "weight",
) -> ProminenceResult:
    """Prominence-based anonymization of node labels (spec social-network.md §6.3).

    Parameters
    ----------
    graph : networkx graph, EdgeList, array of shape (n_edges, 2 or 3), or tuple (src, dst[, weight])
        Directed or undirected, weighted or not; no self-loops, no repeated edges, positive weights.
    labels : mapping node -> str, or sequence of str in node order
        Each node's label: a leaf of ``taxonomy``.
    taxonomy : Hierarchy
        The taxonomy tree T of height H.
    measure : {'degree', 'closeness', 'betweenness', 'eigenvector', 'degree_prestige', \
'proximity_prestige', 'rank_prestige', 'combined'} or array of shape (n,), default='degree'
        The prominence measure, or precomputed scores.
    a : float in [0, 1], default=0.5
        Weight of the first measure of ``combine`` in the combined measure (Table 6.4's *a*, [RECON]).
    combine : pair of measure names, default=('degree', 'betweenness')
    damping : float in [0, 1), default=0.85
        Rank prestige's damping factor.
    closeness : {'harmonic', 'reachable'}, default='harmonic'
    distance : {'inverse', 'weight'}, default='inverse'
        Edge length for path measures on weighted graphs: ``1/w`` or ``w``.
    level_map : {'linear', 'quantile'}, default='linear'
    merge : bool, default=True
        Form super nodes; otherwise every node is its own super node.
    merge_min_level : int, default=1
        Only nodes generalized to at least this level merge ([RECON]: unmodified nodes keep their identity).
    iloss : {'leaves', 'level'}, default='leaves'
    betweenness_samples : int or None, default=None
        Number of sampled sources for betweenness (None: exact).
    rng : int, Generator or None
        Seeds the betweenness source sample.
    n_threads : int or None
        Threads of the path kernels (None: all cores); the output does not depend on it.
    directed, n_nodes : only for edge arrays
        Whether the edges are directed (default True) and the node count (default max id + 1).
    weight : str or None, default='weight'
        Edge attribute of networkx graphs holding weights (None: unweighted).

    Returns
    -------
    ProminenceResult

    Raises
    ------
    ValueError
        Empty graph, a node without a label, a label outside the taxonomy's leaves, a negative or zero
        weight, ``a`` outside [0, 1], an unknown option.
    TypeError
        A graph, labels or taxonomy of the wrong type.
    """
    caller = "prominence_anonymize"
    t0 = time.perf_counter()
    if not isinstance(taxonomy, Hierarchy):
        raise TypeError(f"The 'taxonomy' parameter of {caller} must be an anoncore Hierarchy. "
                        f"Got {type(taxonomy).__name__} instead.")
    check_float(a, "a", caller, 0.0, 1.0)
    check_float(damping, "damping", caller, 0.0, 1.0, closed="left")
    check_option(closeness, "closeness", caller, ("harmonic", "reachable"))
    check_option(distance, "distance", caller, ("inverse", "weight"))
    check_option(level_map, "level_map", caller, ("linear", "quantile"))
    check_option(iloss, "iloss", caller, ("leaves", "level"))
    check_bool(merge, "merge", caller)
    check_int(merge_min_level, "merge_min_level", caller, 0)
    check_n_threads(n_threads, caller)
    given = not isinstance(measure, str)
    if not given:
        check_option(measure, "measure", caller, MEASURES)
    g = as_graph(graph, caller, directed=directed, n_nodes=n_nodes, weight=weight)
    if betweenness_samples is not None:
        check_int(betweenness_samples, "betweenness_samples", caller, 1, g.n)
    codes = _leaf_codes(node_labels(labels, g, caller), g, taxonomy, caller)
    t1 = time.perf_counter()
    trace = None
    if given:
        scores = np.asarray(measure, dtype=np.float64)
        if scores.shape != (g.n,):
            raise ValueError(f"The scores given as 'measure' to {caller} must have shape ({g.n},). "
                             f"Got {scores.shape} instead.")
    else:
        scores, trace = compute_measure(g, measure, a=a, combine=combine, damping=damping, closeness=closeness,
                                        distance=distance, betweenness_samples=betweenness_samples, rng=rng,
                                        n_threads=n_threads)
    t2 = time.perf_counter()
    si = sensitivity_index(scores)
    levels = globals()["level_map"](si, taxonomy.height, level_map)
    gen = generalize_labels(codes, levels, taxonomy)
    node_loss = information_loss(gen, levels, taxonomy, iloss)
    group, masked = contract(g, gen, levels, taxonomy, merge_min_level if merge else taxonomy.height + 1)
    t3 = time.perf_counter()
    return ProminenceResult(
        nodes=g.nodes, measure="given" if given else str(measure), scores=_ro(scores), si=_ro(si),
        levels=_ro(levels), labels=tuple(taxonomy.labels[int(x)] for x in gen), label_nodes=_ro(gen),
        group=_ro(group), masked=masked, iloss=float(node_loss.mean()), node_iloss=_ro(node_loss), trace=trace,
        stats={"validate_s": t1 - t0, "measure_s": t2 - t1, "anonymize_s": t3 - t2, "total_s": t3 - t0},
    )
