"""
information-loss metric kernels (per quasi-identifier, vectorised over classes)
"""

import numpy as np
from numpy.typing import NDArray

class ClassSummary:
    """
    Row/suppression/class counts, DM and DM* of a partition.
    """
    @property
    def dm(self) -> int: ...
    @property
    def dm_star(self) -> int: ...
    @property
    def n_kept_classes(self) -> int: ...
    @property
    def n_rows(self) -> int: ...
    @property
    def n_suppressed(self) -> int: ...

def class_summary(kept: NDArray[np.int64], supp: NDArray[np.int64]) -> ClassSummary:
    """
    Row/suppression/class counts, DM and DM* of the classes.
    """

def node_cost_sums(
    kept: NDArray[np.int64],
    supp: NDArray[np.int64],
    gen_node: NDArray[np.int32],
    col: int,
    node_cost: NDArray[np.int64],
) -> tuple[int, int]:
    """
    (Σ kept·node_cost[node], Σ supp·node_cost[node]) of one QI.
    """

def nu_entropy_terms(
    column: NDArray[np.int32],
    n_codes: int,
    kept: NDArray[np.int64],
    supp: NDArray[np.int64],
    base_lo: NDArray[np.int32],
    base_hi: NDArray[np.int32],
    gen_lo: NDArray[np.int32],
    gen_hi: NDArray[np.int32],
    col: int,
    with_suppressed_term: bool,
) -> tuple[float, float]:
    """
    (base, suppressed term) of ARX's non-uniform entropy for one QI (both <= 0).
    """

def range_cost_sums(
    kept: NDArray[np.int64],
    supp: NDArray[np.int64],
    gen_lo: NDArray[np.int32],
    gen_hi: NDArray[np.int32],
    col: int,
    cost: int,
) -> tuple[int, int]:
    """
    (Σ kept·cost, Σ supp·cost) of the code ranges of one QI; cost 0 = hi-lo+1, 1 = Cao, 2 = hi-lo.
    """

def value_width_sums(
    kept: NDArray[np.int64],
    supp: NDArray[np.int64],
    gen_lo: NDArray[np.int32],
    gen_hi: NDArray[np.int32],
    col: int,
    values: NDArray[np.float64],
    lower: float,
    upper: float,
) -> tuple[float, float]:
    """
    (Σ kept·width, Σ supp·width) of the published numeric intervals of one QI, clipped to [lower, upper].
    """
