"""asv suite for the temporal reposition model (anoncore.temporal, P-TEMP).

The headline case is the bulk window driver on 10,000,000 records in snapshots of 1,000 (w = 7, 20 SA values,
l = 4), run only with ANONCORE_BENCH_LARGE=1; default sizes keep a sample around one second or less.
"""

from __future__ import annotations

import os

import numpy as np

LARGE = os.environ.get("ANONCORE_BENCH_LARGE", "") == "1"


def _stream(n_records: int, snapshot_size: int, n_sa: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    from anoncore.temporal import make_temporal_stream

    df = make_temporal_stream(max(1, n_records // snapshot_size), snapshot_size, n_sa, rng=seed)
    return df["ts"].to_numpy(), df["sa"].to_numpy()


class BulkWindowDriver:
    """Whole-stream loop in C++ (Repositioner.run): throughput and quality."""

    params = ([100_000, 1_000_000, 10_000_000], ["linear", "quadratic"], ["corrected", "paper_faithful"])
    param_names = ["n_records", "mu", "mode"]
    timeout = 600

    def setup(self, n_records: int, mu: str, mode: str) -> None:
        if n_records >= 10_000_000 and not LARGE:
            raise NotImplementedError("large case: set ANONCORE_BENCH_LARGE=1")
        self.ts, self.sa = _stream(n_records, 1_000, 20)

    def _run(self, mu: str, mode: str):  # type: ignore[no-untyped-def]
        from anoncore.temporal import reposition_stream

        return reposition_stream(self.ts, self.sa, l=4, w=7, mu=mu, beta=5.0, mode=mode, n_sa=20)

    def time_run(self, n_records: int, mu: str, mode: str) -> None:
        self._run(mu, mode)

    def peakmem_run(self, n_records: int, mu: str, mode: str) -> None:
        self._run(mu, mode)

    def track_suppression_rate(self, n_records: int, mu: str, mode: str) -> float:
        return float(self._run(mu, mode).suppression_rate)

    track_suppression_rate.unit = "fraction"  # type: ignore[attr-defined]

    def track_records_per_second(self, n_records: int, mu: str, mode: str) -> float:
        return float(self._run(mu, mode).stats["records_per_second"])

    track_records_per_second.unit = "records/s"  # type: ignore[attr-defined]

    def track_information_loss_per_record(self, n_records: int, mu: str, mode: str) -> float:
        return float(self._run(mu, mode).information_loss / self.ts.size)

    track_information_loss_per_record.unit = "IL/record"  # type: ignore[attr-defined]


class WindowSize:
    """Effect of the window size w (publication delay) on time and suppression."""

    params = ([1, 3, 7, 15], [4, 6])
    param_names = ["w", "l"]

    def setup(self, w: int, l: int) -> None:
        self.ts, self.sa = _stream(200_000, 500, 20, seed=1)

    def _run(self, w: int, l: int):  # type: ignore[no-untyped-def]
        from anoncore.temporal import reposition_stream

        return reposition_stream(self.ts, self.sa, l=l, w=w, mu="quadratic", beta=5.0, n_sa=20)

    def time_run(self, w: int, l: int) -> None:
        self._run(w, l)

    def track_suppression_rate(self, w: int, l: int) -> float:
        return float(self._run(w, l).suppression_rate)

    track_suppression_rate.unit = "fraction"  # type: ignore[attr-defined]


class PushDriver:
    """Snapshot-at-a-time Python API (Repositioner.push): per-snapshot overhead."""

    params = ([100, 1_000],)
    param_names = ["snapshot_size"]

    def setup(self, snapshot_size: int) -> None:
        ts, sa = _stream(200 * snapshot_size, snapshot_size, 20, seed=2)
        self.snaps = [sa[ts == t] for t in range(200)]

    def time_push(self, snapshot_size: int) -> None:
        from anoncore.temporal import Repositioner

        rep = Repositioner(4, 7, "quadratic", 5.0, n_sa=20)
        for s in self.snaps:
            rep.push(s)
        rep.flush()


class Anatomy:
    """Anatomy publication of a repositioned stream."""

    params = ([100_000],)
    param_names = ["n_records"]

    def setup(self, n_records: int) -> None:
        from anoncore.temporal import reposition_stream

        ts, sa = _stream(n_records, 1_000, 20, seed=3)
        self.res = reposition_stream(ts, sa, l=4, w=7, mu="quadratic", beta=5.0, n_sa=20)

    def time_anatomize_stream(self, n_records: int) -> None:
        from anoncore.temporal import anatomize_stream

        anatomize_stream(self.res)
