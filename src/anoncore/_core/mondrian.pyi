"""
mondrian kernels: multidimensional median partitioning under monotone class models
"""

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

class MondrianResult:
    """
    Row labels and split counters of a Mondrian partition.
    """
    @property
    def labels(self) -> NDArray[np.int64]: ...
    @property
    def n_classes(self) -> int: ...
    @property
    def n_refused(self) -> int: ...
    @property
    def n_splits(self) -> int: ...

def partition(
    qi: NDArray[np.int32],
    coord_values: NDArray[np.float64],
    coord_offsets: NDArray[np.int64],
    sa: NDArray[np.int32],
    m: int,
    models: Sequence[tuple[str, float]],
    hierarchy: Any = None,
    groups: Any = None,
    qi_hierarchies: Any = None,
    reference: NDArray[np.int64] | None = None,
) -> MondrianResult:
    """
    Mondrian median splits kept only when every model accepts both halves; models are (name, value) pairs. qi_hierarchies (optional): per QI None or (parent, leaf_start, leaf_count) for hierarchy-based splits. reference (optional): int64 counts per sensitive code that the models measure against (default: the rows').
    """
