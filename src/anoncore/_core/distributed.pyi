"""
item sets of anoncore.distributed: grouping, sharding, merging (packed mixed-radix keys)
"""

from typing import TypeAlias

import numpy as np
from numpy.typing import NDArray

_Items: TypeAlias = tuple[NDArray[np.uint64], NDArray[np.int64], NDArray[np.int64]]

def count_rows(
    codes: NDArray[np.int32], radix: NDArray[np.int64], weights: NDArray[np.int64], rank_base: int
) -> _Items:
    """
    Distinct rows of codes as mixed-radix keys in order of first appearance, with summed weights (empty: 1 per row) and ranks rank_base + position; returns (keys, counts, ranks).
    """

def interleave_by_rank(parts: list[_Items]) -> _Items:
    """
    Disjoint item sets, each in rank order, interleaved into one set in rank order.
    """

def is_member(keys: NDArray[np.uint64], set: NDArray[np.uint64]) -> NDArray[np.bool_]:
    """
    Whether each key is one of set.
    """

def merge_items(parts: list[_Items]) -> _Items:
    """
    Union of (keys, counts, ranks) item sets: counts summed, the smallest rank kept, in rank order.
    """

def shard_of(keys: NDArray[np.uint64], n_shards: int) -> NDArray[np.int32]:
    """
    Shard of every key: a hash of the key modulo n_shards.
    """

def unpack_keys(keys: NDArray[np.uint64], radix: NDArray[np.int64]) -> NDArray[np.int32]:
    """
    Codes (n_keys, len(radix)) of mixed-radix keys.
    """
