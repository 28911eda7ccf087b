"""anoncore.distributed in one process (issue 17): a frequency set of synthetic census rows, the optimal search
on its counts (k=5, 4 %, DM*, as in memory), and the item-set merge that the tree reduction runs on the workers.

The end-to-end run on a local Dask cluster (100M rows from Parquet, 1 and 2 workers, peak memory per worker) is
``benchmarks/distributed_scale.py``: a cluster's start-up and Parquet files do not fit asv's timing loop.
"""

from __future__ import annotations

from typing import Any

from .common import require_large, synthetic


class FrequencySetSearch:
    params = ([100_000, 1_000_000],)
    param_names = ("n_rows",)
    timeout = 300

    def setup(self, n_rows: int) -> None:
        from anoncore import _core
        from anoncore.distributed import FrequencySet

        require_large(n_rows, threshold=1_000_000)
        self.table = synthetic(n_rows, seed=1)
        self.freq = FrequencySet.from_table(self.table, sensitive="salary")
        codes = self.table.qi_codes()
        radix = (codes.max(axis=0).astype("int64") + 1)
        half = n_rows // 2
        self.parts: list[Any] = [_core.distributed.count_rows(codes[:half].copy(), radix, _no_weights(), 0),
                                 _core.distributed.count_rows(codes[half:].copy(), radix, _no_weights(), 1 << 40)]

    def time_from_table(self, n_rows: int) -> None:
        from anoncore.distributed import FrequencySet

        FrequencySet.from_table(self.table, sensitive="salary")

    def time_search_on_counts(self, n_rows: int) -> None:
        from anoncore.distributed import lattice_search
        from anoncore.models import KAnonymity

        lattice_search(self.freq, [KAnonymity(5)], suppression_limit=0.04, metric="dm_star", n_threads=1)

    def time_merge_items(self, n_rows: int) -> None:
        from anoncore import _core

        _core.distributed.merge_items(self.parts)

    def track_items(self, n_rows: int) -> int:
        return int(self.freq.n_items)


def _no_weights() -> Any:
    import numpy as np

    return np.zeros(0, dtype=np.int64)
