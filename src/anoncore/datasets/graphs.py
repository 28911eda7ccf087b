"""Graph data for :mod:`anoncore.graph` (also importable as ``anoncore.graph.datasets``): a seeded Wiki-Vote-shaped generator, its synthetic taxonomy, and a
SNAP edge-list loader.

Wiki-Vote (SNAP, Leskovec et al. 2010) has 7,115 nodes and 103,689 directed "votes" edges but no node
attributes and no weights. The prominence pipeline needs both, so anoncore documents one synthetic choice of
each ([RECON], spec social-network.md §6.3 "Dataset"):

* **Taxonomy** (:func:`wiki_vote_taxonomy`): a balanced "field of activity" tree of height 3,
  ``Any`` -> 4 domains -> 3 areas each -> 4 topics each (48 leaves, 65 nodes). Each node gets one topic,
  drawn with Zipf-like frequencies (a few popular topics, a long tail) from the seeded generator.
* **Weights** (:func:`wiki_vote_like` ``weighted=True``): an interaction count per edge,
  ``w = Geometric(1/2)`` (1, 2, 3, ... with mean 2), doubled when the vote is reciprocated (``v -> u`` also
  exists), so mutual ties are the strong ones.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from anoncore.data.hierarchy import Hierarchy

__all__ = [
    "WIKI_VOTE_EDGES",
    "WIKI_VOTE_NODES",
    "EdgeList",
    "load_snap_edges",
    "random_labels",
    "synthetic_weights",
    "wiki_vote_like",
    "wiki_vote_taxonomy",
]

WIKI_VOTE_NODES = 7_115
WIKI_VOTE_EDGES = 103_689

_DOMAINS = {
    "Science": ("Physics", "Biology", "Mathematics"),
    "Culture": ("Arts", "History", "Literature"),
    "Society": ("Politics", "Economics", "Law"),
    "Technology": ("Computing", "Engineering", "Medicine"),
}


@dataclass(frozen=True, slots=True)
class EdgeList:
    """A graph as arrays: nodes are ``0 .. n_nodes-1``; edge ``i`` is ``src[i] -> dst[i]`` with ``weight[i]``.

    ``weight`` is None for an unweighted graph. ``node_ids`` keeps the original node identifiers when the
    graph was read from a file (``node_ids[k]`` is the file's id of node ``k``).
    """

    n_nodes: int
    src: NDArray[np.int64] = field(repr=False)
    dst: NDArray[np.int64] = field(repr=False)
    weight: NDArray[np.float64] | None = field(default=None, repr=False)
    directed: bool = True
    node_ids: NDArray[Any] | None = field(default=None, repr=False)

    @property
    def n_edges(self) -> int:
        return int(self.src.size)

    def to_networkx(self) -> Any:
        """The same graph as a ``networkx.DiGraph`` / ``Graph`` (nodes ``0 .. n_nodes-1``, attribute ``weight``)."""
        import networkx as nx

        g: Any = nx.DiGraph() if self.directed else nx.Graph()
        g.add_nodes_from(range(self.n_nodes))
        if self.weight is None:
            g.add_edges_from(zip(self.src.tolist(), self.dst.tolist()))
        else:
            g.add_weighted_edges_from(zip(self.src.tolist(), self.dst.tolist(), self.weight.tolist()))
        return g

    def as_undirected(self) -> EdgeList:
        """The symmetrized graph: one undirected edge per connected pair; weights of ``u->v`` and ``v->u`` add."""
        lo = np.minimum(self.src, self.dst)
        hi = np.maximum(self.src, self.dst)
        key = lo * self.n_nodes + hi
        uniq, inv = np.unique(key, return_inverse=True)
        w = None
        if self.weight is not None:
            w = np.bincount(inv, weights=self.weight, minlength=uniq.size).astype(np.float64)
        return EdgeList(self.n_nodes, uniq // self.n_nodes, uniq % self.n_nodes, w, False, self.node_ids)

    def unweighted(self) -> EdgeList:
        return EdgeList(self.n_nodes, self.src, self.dst, None, self.directed, self.node_ids)


def _zipf_weights(n: int, s: float, rng: np.random.Generator) -> NDArray[np.float64]:
    w = 1.0 / np.arange(1, n + 1, dtype=np.float64) ** s
    rng.shuffle(w)
    return np.asarray(w / w.sum(), dtype=np.float64)


def wiki_vote_like(
    n_nodes: int = WIKI_VOTE_NODES,
    n_edges: int = WIKI_VOTE_EDGES,
    *,
    weighted: bool = False,
    in_exponent: float = 0.75,
    out_exponent: float = 0.9,
    voter_fraction: float = 0.36,
    rng: int | np.random.Generator | None = 0,
) -> EdgeList:
    """A seeded directed graph shaped like SNAP's Wiki-Vote (7,115 nodes, 103,689 edges by default).

    Edge targets are drawn with Zipf weights ``rank**-in_exponent`` (power-law in-degree, tail exponent about
    ``1 + 1/in_exponent``); sources only among ``voter_fraction`` of the nodes (in Wiki-Vote about a third of
    the users cast votes), with Zipf weights ``rank**-out_exponent``. Self-loops and repeated edges are
    dropped and drawing continues until exactly ``n_edges`` distinct edges exist; edges come out sorted by
    ``(src, dst)``.

    Parameters
    ----------
    n_nodes, n_edges : int
        Size of the graph; ``n_edges`` must not exceed what the voters can cast.
    weighted : bool, default=False
        Attach interaction counts: ``Geometric(1/2)``, doubled on reciprocated edges (module docstring).
    in_exponent, out_exponent : float
        Zipf exponents of the target and source popularity.
    voter_fraction : float
        Fraction of nodes that have out-edges.
    rng : int, Generator or None, default=0
        Seed or generator; the same seed gives the same graph.

    Returns
    -------
    EdgeList
    """
    gen = np.random.default_rng(rng)
    if n_nodes < 2:
        raise ValueError(f"The 'n_nodes' parameter of wiki_vote_like must be >= 2. Got {n_nodes!r} instead.")
    n_voters = max(1, round(voter_fraction * n_nodes))
    if n_edges < 0 or n_edges > n_voters * (n_nodes - 1):
        raise ValueError(
            f"The 'n_edges' parameter of wiki_vote_like must be in [0, {n_voters * (n_nodes - 1)}] for "
            f"{n_nodes} nodes and {n_voters} voters. Got {n_edges!r} instead."
        )
    p_in = _zipf_weights(n_nodes, in_exponent, gen)
    voters = np.sort(gen.choice(n_nodes, size=n_voters, replace=False))
    p_out = _zipf_weights(n_voters, out_exponent, gen)
    keys = np.empty(0, dtype=np.int64)
    while keys.size < n_edges:
        need = n_edges - keys.size
        m = int(need * 1.3) + 64
        s = voters[gen.choice(n_voters, size=m, p=p_out)]
        d = gen.choice(n_nodes, size=m, p=p_in)
        ok = s != d
        new = s[ok].astype(np.int64) * n_nodes + d[ok]
        _, first = np.unique(new, return_index=True)
        new = new[np.sort(first)]  # distinct, in draw order
        new = new[~np.isin(new, keys)][:need]
        keys = np.concatenate([keys, new])
    keys.sort()
    src, dst = keys // n_nodes, keys % n_nodes
    weight = synthetic_weights(src, dst, n_nodes, rng=gen) if weighted else None
    return EdgeList(n_nodes, src, dst, weight, True)


def synthetic_weights(src: Any, dst: Any, n_nodes: int, *, rng: int | np.random.Generator | None = 0
                      ) -> NDArray[np.float64]:
    """The documented synthetic interaction counts: ``Geometric(1/2)`` per edge, doubled when the edge is
    reciprocated (``dst -> src`` also exists). Use it to weight a real SNAP graph the same way."""
    gen = np.random.default_rng(rng)
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    w = gen.geometric(0.5, size=src.size).astype(np.float64)
    recip = np.isin(dst * n_nodes + src, src * n_nodes + dst)
    return np.asarray(np.where(recip, 2.0 * w, w), dtype=np.float64)


def wiki_vote_taxonomy() -> Hierarchy:
    """The synthetic 'field of activity' taxonomy (height 3, 48 leaves) used with :func:`wiki_vote_like`."""
    tree: dict[str, Any] = {
        "Any": {
            dom: {area: [f"{area}/t{i}" for i in range(1, 5)] for area in areas} for dom, areas in _DOMAINS.items()
        }
    }
    return Hierarchy.from_nested(tree, name="field")


def random_labels(
    n_nodes: int, taxonomy: Hierarchy, *, exponent: float = 1.0, rng: int | np.random.Generator | None = 0
) -> list[str]:
    """One leaf label per node, drawn with Zipf(``exponent``) frequencies over the taxonomy's leaves (seeded)."""
    gen = np.random.default_rng(rng)
    p = _zipf_weights(taxonomy.n_leaves, exponent, gen)
    codes = gen.choice(taxonomy.n_leaves, size=n_nodes, p=p)
    leaves = taxonomy.leaves
    return [leaves[c] for c in codes]


def load_snap_edges(
    path: str | os.PathLike[str], *, directed: bool = True, weighted: bool = False
) -> EdgeList:
    """Read a SNAP edge list (``# comment`` lines, then ``src dst [weight]`` separated by tabs or spaces).

    Node ids are relabelled ``0 .. n-1`` in increasing order of the file's ids (kept in ``node_ids``);
    the file is read with pyarrow's CSV reader (or pandas' when pyarrow is missing). Repeated edges and
    self-loops are rejected with the line's ids.

    Parameters
    ----------
    path : path-like
        The edge list, e.g. ``wiki-Vote.txt`` (plain or ``.gz``).
    directed : bool, default=True
    weighted : bool, default=False
        Read a third column as the edge weight.
    """
    cols = ["src", "dst", "weight"] if weighted else ["src", "dst"]
    df = _read_edge_table(os.fspath(path), cols)
    if len(df) == 0:
        raise ValueError(f"Edge list {os.fspath(path)!r} has no edges.")
    raw = np.concatenate([df["src"].to_numpy(), df["dst"].to_numpy()])
    ids, inv = np.unique(raw, return_inverse=True)
    m = len(df)
    src = inv[:m].astype(np.int64)
    dst = inv[m:].astype(np.int64)
    weight = df["weight"].to_numpy(dtype=np.float64) if weighted else None
    return EdgeList(int(ids.size), src, dst, weight, directed, ids)


def _read_edge_table(path: str, cols: list[str]) -> Any:
    import pandas as pd

    try:
        from pyarrow import csv as pacsv
    except ImportError:  # pragma: no cover - pyarrow is in the test extra
        df = pd.read_csv(path, sep=r"\s+", comment="#", header=None, names=cols, usecols=range(len(cols)))
        return df
    # SNAP files use tabs (sometimes spaces): normalise by reading with pandas' whitespace splitter only when
    # the tab-separated read does not give the expected columns.
    try:
        table = pacsv.read_csv(
            path,
            read_options=pacsv.ReadOptions(column_names=cols, skip_rows=_comment_lines(path)),
            parse_options=pacsv.ParseOptions(delimiter="\t"),
        )
        return table.to_pandas()
    except Exception:  # noqa: BLE001 - fall back to the whitespace splitter and let it report
        return pd.read_csv(path, sep=r"\s+", comment="#", header=None, names=cols, usecols=range(len(cols)))


def _comment_lines(path: str) -> int:
    import gzip

    opener: Any = gzip.open if path.endswith(".gz") else open
    n = 0
    with opener(path, "rt") as fh:
        for line in fh:
            if not line.startswith("#"):
                break
            n += 1
    return n
