"""
temporal kernels: reposition model and OptimalReposition window driver
"""

from typing import Any

import numpy as np
from numpy.typing import NDArray

class Stream:
    trace_enabled: bool
    track_il: bool
    def __init__(
        self,
        l: int,
        w: int,
        n_sa: int,
        kind: int,
        c: float,
        p: float,
        table: NDArray[np.float64],
        beta: NDArray[np.float64],
        mode: int,
    ) -> None: ...
    def flush(self) -> None:
        """
        Pop every remaining slot.
        """
    def load(
        self,
        lo: int,
        hi: int,
        ids: NDArray[np.int64],
        ts: NDArray[np.int64],
        sa: NDArray[np.int32],
        slot: NDArray[np.int64],
        suppressed: NDArray[np.bool_],
    ) -> None:
        """
        Replace the window by an optimised state of slots [lo, hi].
        """
    def push(self, sa: NDArray[np.int32], ids: NDArray[np.int64]) -> None:
        """
        Push the next snapshot.
        """
    def run(
        self,
        ts: NDArray[np.int64],
        sa: NDArray[np.int32],
        id_offset: int,
        out_slot: NDArray[np.int64],
        flush: bool,
    ) -> None:
        """
        Whole-stream loop in C++; out_slot[id] = published slot (untouched if suppressed).
        """
    def start_at(self, t: int) -> None:
        """
        Start an empty window at time t.
        """
    def state(
        self,
    ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int32], NDArray[np.int64], NDArray[np.bool_]]:
        """
        Window records: (ids, ts, sa, slot, suppressed).
        """
    def take_popped(
        self,
    ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int32], NDArray[np.int64]]:
        """
        Popped records since the last call: (ids, ts, sa, slot); slot -1 means suppressed.
        """
    def window_il(self) -> float:
        """
        IL of the current window (Eq. 1-2).
        """
    @property
    def counters(self) -> dict[str, Any]: ...
    @property
    def hi(self) -> int: ...
    @property
    def last_il_final(self) -> float: ...
    @property
    def last_il_initial(self) -> float: ...
    @property
    def last_trace(self) -> list[Any]: ...
    @property
    def lo(self) -> int: ...
    @property
    def n_records(self) -> int: ...

def eligible_level(counts: NDArray[np.int64], l: int) -> int:
    """
    Largest L with sum_s min(c_s, L) >= l*L (minimum suppression).
    """
