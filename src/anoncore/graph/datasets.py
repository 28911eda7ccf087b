"""Graph data for :mod:`anoncore.graph` (a re-export of :mod:`anoncore.datasets.graphs`)."""

from __future__ import annotations

from anoncore.datasets.graphs import (
    WIKI_VOTE_EDGES,
    WIKI_VOTE_NODES,
    EdgeList,
    load_snap_edges,
    random_labels,
    synthetic_weights,
    wiki_vote_like,
    wiki_vote_taxonomy,
)

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
