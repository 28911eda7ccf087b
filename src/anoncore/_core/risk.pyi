"""
re-identification risk kernels
"""

import numpy as np
from numpy.typing import NDArray

def group_columns(
    codes: NDArray[np.int32], cols: NDArray[np.int64], cardinality: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.int64], int]:
    """
    Labels (first appearance) and class sizes of the rows grouped on the columns cols; (labels, sizes, n).
    """
