"""
stream kernels (CASTLE)
"""

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

class Castle:
    def __init__(
        self,
        k: int,
        delta: int,
        eta: int,
        mu: int,
        l: int,
        max_reuse: int,
        initial_tau: float,
        containment_range: bool,
        outlier_suppression: bool,
        seed: int,
        dom_lo: NDArray[np.float64],
        dom_hi: NDArray[np.float64],
        cats: Sequence[tuple[ArrayLike, ArrayLike, ArrayLike, int]],
    ) -> None: ...
    def checkpoint(self) -> bytes:
        """
        State as versioned bytes.
        """
    def restore_state(self, state: bytes) -> None:
        """
        Load checkpoint state bytes into this fresh Castle (range-checked).
        """
    def pending_positions(self) -> NDArray[np.int64]:
        """
        Positions of the pending tuples in arrival order.
        """
    def flush(self, paper: bool = False) -> dict[str, Any]:
        """
        End of stream (drain, or the thesis's protocol); returns the events.
        """
    def push(
        self,
        position: NDArray[np.int64],
        pid: NDArray[np.int64],
        sa: NDArray[np.int32],
        num: NDArray[np.float64],
        cat: NDArray[np.int32],
    ) -> dict[str, Any]:
        """
        Push a batch; returns the events it caused.
        """
    @property
    def containment_range(self) -> bool: ...
    @property
    def d_cat(self) -> int: ...
    @property
    def d_num(self) -> int: ...
    @property
    def delta(self) -> int: ...
    @property
    def eta(self) -> int: ...
    @property
    def initial_tau(self) -> float: ...
    @property
    def k(self) -> int: ...
    @property
    def l(self) -> int: ...
    @property
    def last_position(self) -> Any: ...
    @property
    def max_reuse(self) -> int: ...
    @property
    def mu(self) -> int: ...
    @property
    def n_arrivals(self) -> int: ...
    @property
    def n_open(self) -> int: ...
    @property
    def n_pending(self) -> int: ...
    @property
    def n_reuse(self) -> int: ...
    @property
    def n_threads(self) -> int:
        """
        Threads for split^k's block scans (<= 0: all cores); not part of the state.
        """
    @n_threads.setter
    def n_threads(self, arg1: int) -> None: ...
    @property
    def outlier_suppression(self) -> bool: ...
    @property
    def seed(self) -> int: ...
    @property
    def tau(self) -> float: ...
