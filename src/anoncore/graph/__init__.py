"""Prominence-based anonymization of social networks (spec social-network.md, thesis ch. 6): centrality and
prestige measures, sensitivity index, taxonomy generalization of node labels, super nodes, Iloss."""

from __future__ import annotations

from anoncore.graph.datasets import (
    EdgeList,
    load_snap_edges,
    random_labels,
    synthetic_weights,
    wiki_vote_like,
    wiki_vote_taxonomy,
)
from anoncore.graph.measures import (
    MEASURES,
    RankPrestige,
    betweenness_centrality,
    closeness_centrality,
    combined_centrality,
    compute_measure,
    degree_centrality,
    degree_prestige,
    eigenvector_centrality,
    proximity_prestige,
    rank_prestige,
)
from anoncore.graph.pipeline import (
    ProminenceResult,
    SuperGraph,
    contract,
    generalize_labels,
    information_loss,
    level_map,
    prominence_anonymize,
    sensitivity_index,
)

__all__ = [
    "MEASURES",
    "EdgeList",
    "ProminenceResult",
    "RankPrestige",
    "SuperGraph",
    "betweenness_centrality",
    "closeness_centrality",
    "combined_centrality",
    "compute_measure",
    "contract",
    "degree_centrality",
    "degree_prestige",
    "eigenvector_centrality",
    "generalize_labels",
    "information_loss",
    "level_map",
    "load_snap_edges",
    "prominence_anonymize",
    "proximity_prestige",
    "random_labels",
    "rank_prestige",
    "sensitivity_index",
    "synthetic_weights",
    "wiki_vote_like",
    "wiki_vote_taxonomy",
]
