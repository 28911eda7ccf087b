"""Static (one-shot) anonymization algorithms."""

from __future__ import annotations

from anoncore.static.burel import burel
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
from anoncore.static.sabre import sabre

__all__ = [
    "BestK",
    "best_k",
    "burel",
    "datafly",
    "dmondrian",
    "hellinger_t_closeness",
    "improved_greedy",
    "lattice_search",
    "lmondrian",
    "sabre",
    "samarati",
    "t_incognito",
    "tmondrian",
]
