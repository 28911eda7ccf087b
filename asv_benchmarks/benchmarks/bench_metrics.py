"""Information-loss metrics (anoncore.metrics) on a published Adult partition and on 1,000,000 rows."""

from __future__ import annotations

import numpy as np

from .common import adult, require_large

_METRICS = ("ail", "ncp", "dm", "dm_star", "precision", "aecs", "loss", "non_uniform_entropy")
_LEVELS = [1, 0, 1, 1, 3, 2, 2, 0, 1]


def _k_suppressed(table, levels, k):  # type: ignore[no-untyped-def]
    from anoncore import Partition

    p = Partition.from_levels(table, levels)
    return p.with_suppressed((p.class_sizes_all < k)[np.asarray(p.labels)])


class MetricsAdult:
    """Each metric on Adult (30,162 rows) at ARX's k = 5 optimum levels, k-violating classes suppressed."""

    params = [list(_METRICS)]
    param_names = ["metric"]
    timeout = 120

    def setup(self, metric: str) -> None:
        self.table = adult()
        self.partition = _k_suppressed(self.table, _LEVELS, 5)

    def time_metric(self, metric: str) -> None:
        from anoncore.metrics import information_loss

        information_loss(self.table, self.partition, metrics=[metric])

    def track_value(self, metric: str) -> float:
        from anoncore.metrics import information_loss

        return float(information_loss(self.table, self.partition, metrics=[metric])[metric])  # type: ignore[arg-type]

    track_value.unit = "loss"  # type: ignore[attr-defined]


class MetricsMillion:
    """Each metric on 1,000,000 rows resampled from Adult (same levels, k = 5)."""

    params = [list(_METRICS)]
    param_names = ["metric"]
    timeout = 300

    def setup(self, metric: str) -> None:
        require_large(1_000_000)
        base = adult()
        self.table = base.take(np.random.default_rng(0).integers(0, base.n_rows, 1_000_000))
        self.partition = _k_suppressed(self.table, _LEVELS, 5)

    def time_metric(self, metric: str) -> None:
        from anoncore.metrics import information_loss

        information_loss(self.table, self.partition, metrics=[metric])
