"""Static (one-shot) anonymization algorithms."""

from __future__ import annotations

from anoncore.static.burel import burel, likeness_model
from anoncore.static.lattice import (
    BestK,
    best_k,
    datafly,
    hellinger_t_closeness,
    improved_greedy,
    lattice_search,
    samarati,
    t_incognito,
)
from anoncore.static.mondrian import dmondrian, lmondrian, tmondrian
from anoncore.static.sabre import closeness_model, sabre

__all__ = [
    "BestK",
    "best_k",
    "burel",
    "closeness_model",
    "datafly",
    "dmondrian",
    "hellinger_t_closeness",
    "improved_greedy",
    "lattice_search",
    "likeness_model",
    "lmondrian",
    "sabre",
    "samarati",
    "t_incognito",
    "tmondrian",
]
