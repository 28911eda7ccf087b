"""
lattice kernels: frequency sets with roll-up, node predicates, optimal search
"""

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

class BottomState:
    """
    An Engine's table-derived build (bottom classes); reused by a later Engine on the same table, hierarchies and sensitive column.
    """

class Engine:
    def __init__(
        self,
        codes: NDArray[np.int32],
        gens: Sequence[ArrayLike],
        heights: NDArray[np.int32],
        leaf_counts: Sequence[ArrayLike],
        nu_bases: Sequence[ArrayLike],
        sa_codes: NDArray[np.int32],
        m: int,
        sa_parent: NDArray[np.int32],
        sa_height: NDArray[np.int32],
        crit_kind: NDArray[np.int32],
        crit_a: NDArray[np.float64],
        crit_b: NDArray[np.float64],
        metric: int,
        aggregate: int,
        gs_factor: float,
        limit: int,
        n_threads: int,
        packed: bool = True,
        bottom: BottomState | None = None,
    ) -> None: ...
    def bottom_state(self) -> BottomState:
        """
        This Engine's BottomState, to build later Engines on the same table faster.
        """
    def cheap_lower_bound(self, levels: NDArray[np.int32]) -> float:
        """
        Monotone lower bound of the objective without grouping.
        """
    def classify(
        self, levels: NDArray[np.int32], clean: bool = False
    ) -> tuple[dict[str, Any], NDArray[np.int64], NDArray[np.bool_], NDArray[np.int64]]:
        """
        Row labels and suppression flags of a node, and the first row of every class (in label order); clean=True: the caller knows the node suppresses nothing (no class judged, only n_classes set).
        """
    def evaluate(self, levels: NDArray[np.int32]) -> dict[str, Any]:
        """
        Evaluate one node.
        """
    def evaluate_dm_cut(self, levels: NDArray[np.int32], cut: float) -> dict[str, Any]:
        """
        The optimal search's evaluation under the DM / DM* cut (grouping stops once its bound exceeds cut).
        """
    def evaluate_many(self, levels: NDArray[np.int32]) -> list[dict[str, Any]]:
        """
        Evaluate many nodes (parallel over nodes).
        """
    def optimal(self, with_trace: bool = False, sweep: bool = True) -> dict[str, Any]:
        """
        Globally optimal node (branch and bound with predictive tagging); sweep=False keeps the queue.
        """
    def suppression_loss_bound(self, levels: NDArray[np.int32]) -> float:
        """
        ARX Loss of the node with only the classes below the minimal size suppressed (lower bound).
        """
    @property
    def bottom_classes(self) -> int: ...
    @property
    def evaluations(self) -> int: ...
    @property
    def heights(self) -> list[int]: ...
    @property
    def metric_monotone(self) -> bool: ...
    @property
    def n_qi(self) -> int: ...
    @property
    def n_items(self) -> int: ...
    @property
    def n_rows(self) -> int: ...
    @property
    def predicate_monotone(self) -> bool: ...
    @property
    def primed_sources(self) -> int: ...
    @property
    def reused_bottom(self) -> bool: ...
    @property
    def rollup_work(self) -> int: ...

def level_sizes(heights: NDArray[np.int32]) -> list[float]:
    """
    Number of lattice nodes per height.
    """
