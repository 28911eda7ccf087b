"""Temporal snapshots: the reposition model that restores l-eligibility (Wang, Xu, Wong, Fu, ICDE 2010).

Each small snapshot of a temporal stream is usually too skewed on the sensitive attribute to be l-eligible. The
reposition model moves records forward by a few time instants (cost mu(d)) or suppresses them (cost beta_s) inside
a sliding window of w snapshots so that every published snapshot is l-eligible; a classical l-diversity method
(Anatomy here) then publishes each snapshot. See docs/temporal.md.

Examples
--------
>>> import numpy as np
>>> from anoncore.temporal import make_temporal_stream, reposition_stream, anatomize_stream
>>> df = make_temporal_stream(n_snapshots=30, snapshot_size=40, n_sa=8, rng=0)
>>> res = reposition_stream(df["ts"].to_numpy(), df["sa"].to_numpy(), l=4, w=3, mu="quadratic", beta=3.0)
>>> times, counts = res.snapshot_counts(8)
>>> bool(np.all(4 * counts.max(axis=1) <= counts.sum(axis=1)))   # every published snapshot is 4-eligible
True
>>> bool(np.all(res.shift >= 0))                                  # records only move forward
True
>>> rel = anatomize_stream(res)                                   # l-diverse Anatomy groups per snapshot
>>> bool((4 * rel.st.groupby("group")["count"].max() <= rel.st.groupby("group")["count"].sum()).all())
True
"""

from __future__ import annotations

from anoncore.datasets.temporal import make_temporal_stream
from anoncore.temporal._anatomy import AnatomizedSnapshot, anatomize, anatomize_stream
from anoncore.temporal._cost import Mu
from anoncore.temporal._counts import (
    CountSolution,
    CountTraceStep,
    is_l_eligible,
    level,
    level_sweep,
    min_suppression,
    optimal_reposition_counts,
)
from anoncore.temporal._queries import (
    WindowQueryReport,
    anatomy_window_query_error,
    merge_snapshots,
    suppression_only,
    window_query_error,
)
from anoncore.temporal._stream import (
    PublishedSnapshot,
    Repositioner,
    TemporalResult,
    TraceStep,
    WindowResult,
    WindowState,
    information_loss,
    reposition_stream,
    reposition_window,
)

__all__ = [
    "AnatomizedSnapshot",
    "CountSolution",
    "CountTraceStep",
    "Mu",
    "PublishedSnapshot",
    "Repositioner",
    "TemporalResult",
    "TraceStep",
    "WindowQueryReport",
    "WindowResult",
    "WindowState",
    "anatomize",
    "anatomize_stream",
    "anatomy_window_query_error",
    "information_loss",
    "is_l_eligible",
    "level",
    "level_sweep",
    "make_temporal_stream",
    "merge_snapshots",
    "min_suppression",
    "optimal_reposition_counts",
    "reposition_stream",
    "reposition_window",
    "suppression_only",
    "window_query_error",
]
