"""
graph kernels: Brandes betweenness and closeness sums over CSR graphs
"""

import numpy as np
from numpy.typing import NDArray

def path_sweep(
    offsets: NDArray[np.int64],
    targets: NDArray[np.int64],
    lengths: NDArray[np.float64],
    sources: NDArray[np.int64],
    betweenness: bool,
    distances: bool,
    n_threads: int,
) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.float64], NDArray[np.float64]]:
    """
    Brandes dependencies summed over `sources` and per-source (reach, distance sum, harmonic sum).
    """
