"""asv suite for anoncore.sequence (STYLE.md §2.10).

Data: location-like synthetic sequences (69 areas binned 10 to a group), 1,000 users x 10,000 events, 4 sensitive
patterns per user sampled among those with windowed frequency >= 10, m = 2, w = 10 (the paper's Table 1 defaults).
"""

from __future__ import annotations

import time

import numpy as np

N_EVENTS = 10_000
W = 10


def _data(n_users: int):  # type: ignore[no-untyped-def]
    from anoncore.sequence import sample_sensitive_patterns
    from anoncore.sequence.synthetic import location_like

    seqs, tax = location_like(n_users, N_EVENTS, rng=0)
    pats = sample_sensitive_patterns(seqs, tax, 4, W, m=2, f_min=10, rng=1)
    return seqs, tax, pats


class Counting:
    """Windowed counting of 4 patterns per user (m = 2, w = 10) over 1,000 users x 10,000 events."""

    params = [[1, 2]]  # noqa: RUF012 (asv reads class attributes)
    param_names = ["n_threads"]  # noqa: RUF012
    timeout = 120

    def setup_cache(self):  # type: ignore[no-untyped-def]
        seqs, tax, _ = _data(1000)
        flat = np.concatenate(seqs).astype(np.int32)
        offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([len(s) for s in seqs])
        # 4 shared patterns: the first four sampled ones of user 0
        pats = np.array([[0, 1], [2, 3], [1, 1], [5, 7]], dtype=np.int32)
        return seqs, tax, offsets, flat, pats

    def setup(self, cache, n_threads):  # type: ignore[no-untyped-def]
        self.seqs, self.tax, self.offsets, self.flat, self.pats = cache
        self.gmap = np.arange(self.tax.n_leaves, dtype=np.int32)

    def time_count_patterns(self, cache, n_threads):  # type: ignore[no-untyped-def]
        from anoncore.sequence import count_patterns

        count_patterns(self.seqs, self.tax, self.pats.tolist(), W, n_threads=n_threads)

    def time_kernel_count_patterns(self, cache, n_threads):  # type: ignore[no-untyped-def]
        from anoncore import _core

        _core.sequence.count_patterns(
            self.offsets, self.flat, self.gmap, self.pats, self.tax.n_nodes, W, n_threads
        )

    def time_kernel_pair_table(self, cache, n_threads):  # type: ignore[no-untyped-def]
        from anoncore import _core

        _core.sequence.pair_table(self.offsets, self.flat, self.tax.n_leaves, W, n_threads)

    def peakmem_count_patterns(self, cache, n_threads):  # type: ignore[no-untyped-def]
        from anoncore.sequence import count_patterns

        count_patterns(self.seqs, self.tax, self.pats.tolist(), W, n_threads=n_threads)

    def track_kernel_mevents_per_second(self, cache, n_threads):  # type: ignore[no-untyped-def]
        from anoncore import _core

        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            _core.sequence.count_patterns(
                self.offsets, self.flat, self.gmap, self.pats, self.tax.n_nodes, W, n_threads
            )
            best = min(best, time.perf_counter() - t0)
        return self.flat.shape[0] / best / 1e6

    track_kernel_mevents_per_second.unit = "Mevents/s"  # type: ignore[attr-defined]


class Sanitize:
    """Top-Down and Bottom-Up (C++ batch kernels) over the same data (relative epsilon 0.5, linear cost).

    ``counting='table'`` is the library default (Ĩ from the pair table, independent of n); ``'scan'`` re-mines the
    generalized patterns over the sequence for every Ĩ evaluation (the paper's cost model; 1,000 users only with
    ANONCORE_BENCH_LARGE=1).
    """

    params = [["top_down", "bottom_up"], [100, 1000], ["table", "scan"]]  # noqa: RUF012
    param_names = ["method", "n_users", "counting"]  # noqa: RUF012
    timeout = 300

    def setup_cache(self):  # type: ignore[no-untyped-def]
        return _data(1000)

    def setup(self, cache, method, n_users, counting):  # type: ignore[no-untyped-def]
        from .common import LARGE

        if counting == "scan" and n_users >= 1000 and not LARGE:
            raise NotImplementedError("large case: set ANONCORE_BENCH_LARGE=1")
        seqs, tax, pats = cache
        self.seqs, self.tax, self.pats = seqs[:n_users], tax, [p.tolist() for p in pats[:n_users]]

    def _run(self, method, counting):  # type: ignore[no-untyped-def]
        from anoncore.sequence import sanitize

        return sanitize(self.seqs, self.tax, self.pats, 0.5, W, method=method, counting=counting, n_threads=1)

    def time_sanitize(self, cache, method, n_users, counting):  # type: ignore[no-untyped-def]
        self._run(method, counting)

    def peakmem_sanitize(self, cache, method, n_users, counting):  # type: ignore[no-untyped-def]
        self._run(method, counting)

    def track_normalized_utility_loss(self, cache, method, n_users, counting):  # type: ignore[no-untyped-def]
        return float(self._run(method, counting).normalized_utility_loss.mean())

    track_normalized_utility_loss.unit = "UL/n"  # type: ignore[attr-defined]

    def track_mi_evaluations_per_user(self, cache, method, n_users, counting):  # type: ignore[no-untyped-def]
        return float(np.mean([u.stats["mi_evaluations"] for u in self._run(method, counting).users]))

    track_mi_evaluations_per_user.unit = "evaluations"  # type: ignore[attr-defined]
