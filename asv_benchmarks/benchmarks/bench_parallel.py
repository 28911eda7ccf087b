"""Thread scaling of the data-parallel phases (issue 16): the synthetic census generator,
Partition.from_levels, the audit, BUREL, SABRE-KNN, the lattice search and its engine build on synthetic rows,
by n_threads (publishing and encoding: bench_encode.py).

Outputs do not depend on n_threads (tests/test_core_parallel.py); these time it at 1, 2, 4, ... threads up to
the machine's cores. Million-row cases (1M, 10M, 40M) run only with ANONCORE_BENCH_LARGE=1.
"""

from __future__ import annotations

import anoncore as ac
from anoncore.models import DistinctLDiversity, EqualDistanceTCloseness, KAnonymity

from .common import require_large, synthetic, thread_counts

THREADS = thread_counts()
ROWS = [200_000, 1_000_000, 10_000_000, 40_000_000]  # 1M and up only with ANONCORE_BENCH_LARGE=1


class Generate:
    """synthetic_census (C++ draws over fixed 65,536-row chunks)."""

    params = (ROWS, THREADS)
    param_names = ("n_rows", "n_threads")
    timeout = 300

    def setup(self, n_rows: int, n_threads: int) -> None:
        require_large(n_rows)

    def time_synthetic_census(self, n_rows: int, n_threads: int) -> None:
        synthetic(n_rows, seed=1, n_threads=n_threads)


class GroupAndAudit:
    """Partition.from_levels (levels 1) and the audit (k-anonymity + distinct l-diversity) of its partition."""

    params = (ROWS, THREADS)
    param_names = ("n_rows", "n_threads")
    timeout = 300

    def setup(self, n_rows: int, n_threads: int) -> None:
        require_large(n_rows)
        self.table = synthetic(n_rows, seed=1)
        self.levels = [1] * len(self.table.quasi_identifiers)
        self.partition = ac.Partition.from_levels(self.table, self.levels)
        self.models = [KAnonymity(5), DistinctLDiversity(2)]

    def time_from_levels(self, n_rows: int, n_threads: int) -> None:
        ac.Partition.from_levels(self.table, self.levels, n_threads=n_threads)

    def time_audit(self, n_rows: int, n_threads: int) -> None:
        ac.audit(self.table, self.partition, self.models, n_threads=n_threads)


class TwoPhase:
    """BUREL (3 QIs, beta 4; retrieval parallel over its buckets) and SABRE-KNN (t 0.35, k 6)."""

    params = ([100_000, 1_000_000, 10_000_000], THREADS)
    param_names = ("n_rows", "n_threads")
    timeout = 600

    def setup(self, n_rows: int, n_threads: int) -> None:
        require_large(n_rows)
        self.t3 = synthetic(n_rows, seed=0, n_qi=3, numeric="box")
        self.t7 = synthetic(n_rows, seed=0, numeric="box")

    def time_burel(self, n_rows: int, n_threads: int) -> None:
        from anoncore.static.burel import likeness_model

        ac.burel(self.t3, likeness_model(beta=4.0), rng=0, n_threads=n_threads)

    def time_sabre_knn(self, n_rows: int, n_threads: int) -> None:
        from anoncore.static.sabre import closeness_model

        ac.sabre(self.t7, [KAnonymity(6), closeness_model(self.t7, 0.35)], method="knn", rng=0, n_threads=n_threads)


class LatticeSynthetic:
    """The optimal lattice search on synthetic rows (k=5 + distinct-3 + equal t 0.3, 2 %, Loss) as a first call
    (the table's cached bottom cleared); track_serial_ms: its phases that ran on one thread (sets below the
    parallel grain and the search's own steps, stats["phase_seconds"]), the bound of many-thread runs."""

    params = (ROWS, THREADS)
    param_names = ("n_rows", "n_threads")
    timeout = 600

    def setup(self, n_rows: int, n_threads: int) -> None:
        require_large(n_rows)
        self.table = synthetic(n_rows, seed=1)
        self.models = [KAnonymity(5), DistinctLDiversity(3), EqualDistanceTCloseness(0.3)]

    def _run(self, n_threads: int):  # type: ignore[no-untyped-def]
        from anoncore._tablecache import clear_table_caches
        from anoncore.static.lattice import lattice_search

        clear_table_caches(self.table)
        return lattice_search(self.table, self.models, suppression_limit=0.02, metric="loss", n_threads=n_threads)

    def time_lattice_search_first_call(self, n_rows: int, n_threads: int) -> None:
        self._run(n_threads)

    def track_serial_ms(self, n_rows: int, n_threads: int) -> float:
        st = self._run(n_threads).stats
        par = sum(v for k, v in st["phase_seconds"].items() if k.endswith("_par"))
        return 1e3 * (st["seconds"] - par)


class LatticeBuild:
    """The lattice engine's build for k-anonymity alone (the rows' pass and the bottom's grouping: in halves on two
    threads up to 393,216 rows, else partitioned by hash), a first call on the table each time (its cached
    bottom cleared)."""

    params = (ROWS, THREADS)
    param_names = ("n_rows", "n_threads")
    timeout = 600

    def setup(self, n_rows: int, n_threads: int) -> None:
        require_large(n_rows)
        self.table = synthetic(n_rows, seed=1)

    def time_engine_build_k_anonymity(self, n_rows: int, n_threads: int) -> None:
        from anoncore._tablecache import clear_table_caches
        from anoncore.static.lattice import LatticeProblem

        clear_table_caches(self.table)
        LatticeProblem.build(self.table, [KAnonymity(5)], 0.02, "loss", n_threads=n_threads)
