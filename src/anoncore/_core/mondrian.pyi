"""
mondrian kernels: multidimensional median partitioning under monotone class models
"""

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

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
) -> dict[str, Any]:
    """
    Mondrian median splits kept only when every model accepts both halves; models are (name, value) pairs. qi_hierarchies (optional): per QI None or (parent, leaf_start, leaf_count) for hierarchy-based splits.
    """
