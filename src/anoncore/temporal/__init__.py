"""Temporal snapshots: the reposition model that restores l-eligibility (Wang, Xu, Wong, Fu, ICDE 2010).

Each small snapshot of a temporal stream is usually too skewed on the sensitive attribute to be l-eligible. The
reposition model moves records forward by a few time instants (cost mu(d)) or suppresses them (cost beta_s) inside
a sliding window of w snapshots so that every published snapshot is l-eligible; a classical l-diversity method
(Anatomy here) then publishes each snapshot. See docs/temporal.md.
"""

from __future__ import annotations

from anoncore.temporal._anatomy import AnatomizedSnapshot, anatomize, anatomize_stream
from anoncore.temporal._cli import cli_main
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
from anoncore.temporal._queries import WindowQueryReport, merge_snapshots, suppression_only, window_query_error
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
from anoncore.temporal._synthetic import make_temporal_stream

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
    "cli_main",
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
