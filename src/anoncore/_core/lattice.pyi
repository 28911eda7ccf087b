"""
lattice kernels: frequency sets with roll-up, node predicates, optimal search
"""

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

class BottomState:
    """
    An Engine's table-derived build (bottom classes); reused by a later Engine on the same table, hierarchies and sensitive column.
    """

class Criterion:
    """
    One privacy model instance: kernel id (models.hpp), a, b.
    """
    def __init__(self, kind: int, a: float, b: float = 0.0) -> None: ...
    @property
    def a(self) -> float: ...
    @property
    def b(self) -> float: ...
    @property
    def kind(self) -> int: ...

class EngineConfig:
    """
    The Engine's inputs, by name (see bind_lattice.cpp).
    """

    bottom: BottomState | None
    packed: bool
    def __init__(self) -> None: ...
    @property
    def aggregate(self) -> int: ...
    @aggregate.setter
    def aggregate(self, arg0: int) -> None: ...
    @property
    def codes(self) -> NDArray[np.int32]: ...
    @codes.setter
    def codes(self, arg0: ArrayLike) -> None: ...
    @property
    def counts(self) -> NDArray[np.int64]: ...
    @counts.setter
    def counts(self, arg0: ArrayLike) -> None: ...
    @property
    def criteria(self) -> list[Criterion]: ...
    @criteria.setter
    def criteria(self, arg0: Sequence[Criterion]) -> None: ...
    @property
    def gens(self) -> list[NDArray[np.int32]]: ...
    @gens.setter
    def gens(self, arg0: Sequence[ArrayLike]) -> None: ...
    @property
    def gs_factor(self) -> float: ...
    @gs_factor.setter
    def gs_factor(self, arg0: float) -> None: ...
    @property
    def heights(self) -> NDArray[np.int32]: ...
    @heights.setter
    def heights(self, arg0: ArrayLike) -> None: ...
    @property
    def leaf_counts(self) -> list[NDArray[np.int64]]: ...
    @leaf_counts.setter
    def leaf_counts(self, arg0: Sequence[ArrayLike]) -> None: ...
    @property
    def limit(self) -> int: ...
    @limit.setter
    def limit(self, arg0: int) -> None: ...
    @property
    def m(self) -> int: ...
    @m.setter
    def m(self, arg0: int) -> None: ...
    @property
    def metric(self) -> int: ...
    @metric.setter
    def metric(self, arg0: int) -> None: ...
    @property
    def n_threads(self) -> int: ...
    @n_threads.setter
    def n_threads(self, arg0: int) -> None: ...
    @property
    def nu_bases(self) -> list[NDArray[np.float64]]: ...
    @nu_bases.setter
    def nu_bases(self, arg0: Sequence[ArrayLike]) -> None: ...
    @property
    def qi_columns(self) -> NDArray[np.int64]: ...
    @qi_columns.setter
    def qi_columns(self, arg0: ArrayLike) -> None: ...
    @property
    def sa_codes(self) -> NDArray[np.int32]: ...
    @sa_codes.setter
    def sa_codes(self, arg0: ArrayLike) -> None: ...
    @property
    def sa_height(self) -> NDArray[np.int32]: ...
    @sa_height.setter
    def sa_height(self, arg0: ArrayLike) -> None: ...
    @property
    def sa_parent(self) -> NDArray[np.int32]: ...
    @sa_parent.setter
    def sa_parent(self, arg0: ArrayLike) -> None: ...
    @property
    def weights(self) -> list[float]: ...
    @weights.setter
    def weights(self, arg0: Sequence[float]) -> None: ...

class NodeResult:
    """
    What an evaluation of one node gives (see lattice.hpp).
    """
    @property
    def feasible(self) -> bool: ...
    @property
    def lower_bound(self) -> float: ...
    @property
    def metric(self) -> float: ...
    @property
    def n_classes(self) -> int: ...
    @property
    def partial(self) -> bool: ...
    @property
    def suppressed(self) -> int: ...
    @property
    def suppressed_size(self) -> int: ...

class SearchResult:
    """
    The optimal search's result (see lattice.hpp).
    """
    @property
    def evaluated(self) -> int: ...
    @property
    def feasible(self) -> bool: ...
    @property
    def inferred(self) -> int: ...
    @property
    def levels(self) -> list[int]: ...
    @property
    def popped(self) -> int: ...
    @property
    def result(self) -> NodeResult: ...
    @property
    def swept(self) -> bool: ...
    @property
    def trace(self) -> list[tuple[list[int], int, NodeResult]]:
        """
        (levels, how, NodeResult) per step; how: 0 evaluated, 1 inferred feasible, 2 inferred infeasible.
        """

class Engine:
    def __init__(self, config: EngineConfig) -> None: ...
    def bottom_state(self) -> BottomState:
        """
        This Engine's BottomState, to build later Engines on the same table faster.
        """
    def set_table_criteria(self, avg_risk: float = -1.0, sample_uniqueness: float = -1.0,
                           min_kept_size: Sequence[int] = []) -> None:
        """
        Table-level criteria judged on each node's published classes (negative / empty: not set); min_kept_size has one entry per suppressed-row count 0..limit. Before any evaluation.
        """
    def set_population(self, population: Engine, kmap_k: int = 0, delta_min: float = -1.0,
                       delta_max: float = 2.0) -> None:
        """
        Exact k-map / delta-presence with a research subset: this Engine's rows are the subset, population an Engine on the population table (same hierarchies, packed keys). Before any evaluation.
        """
    def cheap_lower_bound(self, levels: NDArray[np.int32]) -> float:
        """
        Monotone lower bound of the objective without grouping.
        """
    def classify(
        self, levels: NDArray[np.int32], clean: bool = False
    ) -> tuple[NodeResult, NDArray[np.int64], NDArray[np.bool_], NDArray[np.int64]]:
        """
        Row labels and suppression flags of a node, and the first row of every class (in label order); clean=True: the caller knows the node suppresses nothing (no class judged, only n_classes set).
        """
    def evaluate(self, levels: NDArray[np.int32], early: bool = False) -> NodeResult:
        """
        Evaluate one node; early=True: judged as the search judges (stopped once infeasible: suppressed and suppressed_size are then lower bounds).
        """
    def evaluate_dm_cut(self, levels: NDArray[np.int32], cut: float) -> NodeResult:
        """
        The optimal search's evaluation under the DM / DM* cut (grouping stops once its bound exceeds cut).
        """
    def evaluate_many(self, levels: NDArray[np.int32]) -> list[NodeResult]:
        """
        Evaluate many nodes (parallel over nodes).
        """
    def optimal(self, with_trace: bool = False, sweep: bool = True) -> SearchResult:
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
    def load_aware(self) -> bool: ...
    @load_aware.setter
    def load_aware(self, arg: bool, /) -> None: ...
    @property
    def n_rows(self) -> int: ...
    @property
    def parallel_grain(self) -> int: ...
    @parallel_grain.setter
    def parallel_grain(self, arg: int, /) -> None: ...
    @property
    def phase_seconds(self) -> dict[str, float]: ...
    @property
    def predicate_monotone(self) -> bool: ...
    @property
    def primed_sources(self) -> int: ...
    @property
    def reused_bottom(self) -> bool: ...
    @property
    def rollup_work(self) -> int: ...

def group_keys(
    keys: NDArray[np.uint64], weights: NDArray[np.int64], n_threads: int, rows: bool = True, grain: int = 65536
) -> tuple[NDArray[np.int32], NDArray[np.uint64], NDArray[np.int64]]:
    """
    The lattice engine's packed grouping: (ids, keys, counts) of the keys' groups by first appearance (weights empty: 1 each); one thread runs the serial grouping, more the parallel one as for the bottom's rows (rows=True) or a roll-up's classes (same output).
    """

def level_sizes(heights: NDArray[np.int32]) -> list[float]:
    """
    Number of lattice nodes per height.
    """
