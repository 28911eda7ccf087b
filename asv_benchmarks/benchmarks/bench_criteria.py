"""Audit (class-vectorised criteria kernels) on Adult and on large synthetic tables.

Targets (issue: foundation): Adult audit with k, distinct-l, hierarchical-t and enhanced-beta under 20 ms
end to end (encoding excluded); 1,000,000 rows under 0.5 s.
"""

from __future__ import annotations

import numpy as np

import anoncore as ac

from .common import adult, require_large, synthetic

ADULT_LEVELS_8 = [1, 0, 1, 1, 3, 2, 2, 1]  # 8 QI (occupation sensitive)


def _models(sa: str | None = None) -> list:
    return [
        ac.KAnonymity(5),
        ac.DistinctLDiversity(3, sensitive=sa),
        ac.HierarchicalDistanceTCloseness(0.2, sensitive=sa),
        ac.EnhancedBetaLikeness(2.0, sensitive=sa),
    ]


class AuditAdult:
    """Audit of the Adult partition at levels [1,0,1,1,3,2,2,0,1] (k=5 suppression) and an 8-QI variant."""

    timeout = 120

    def setup(self) -> None:
        t9 = adult()
        p = ac.Partition.from_levels(t9, [1, 0, 1, 1, 3, 2, 2, 0, 1])
        sizes = p.class_sizes
        self.p9 = p.with_suppressed(sizes[p.labels] < 5)
        self.t9 = t9
        self.t8 = adult("occupation")
        self.p8 = ac.Partition.from_levels(self.t8, ADULT_LEVELS_8)
        self.models8 = _models()

    def time_audit_k_9qi(self) -> None:
        ac.audit(self.t9, self.p9, [ac.KAnonymity(5)])

    def time_audit_four_models(self) -> None:
        ac.audit(self.t8, self.p8, self.models8)

    def track_adult_classes(self) -> int:
        return int(self.p9.n_classes - np.count_nonzero(np.bincount(self.p9.labels[self.p9.suppressed])))

    track_adult_classes.unit = "classes"  # type: ignore[attr-defined]


class AuditSynthetic:
    """Audit of synthetic census tables (salary sensitive) grouped on 3 generalized QIs."""

    params = [[100_000, 1_000_000], [1, 2]]
    param_names = ["n_rows", "n_threads"]
    timeout = 300

    def setup(self, n_rows: int, n_threads: int) -> None:
        require_large(n_rows)
        self.t = synthetic(n_rows, seed=0)
        qis = self.t.quasi_identifiers
        levels = [min(1, self.t.hierarchy(q).height) for q in qis]  # type: ignore[union-attr]
        self.p = ac.Partition.from_levels(self.t, levels)
        self.models = [ac.KAnonymity(2), ac.DistinctLDiversity(2), ac.OrderedDistanceTCloseness(0.5),
                       ac.EnhancedBetaLikeness(4.0)]

    def time_audit(self, n_rows: int, n_threads: int) -> None:
        ac.audit(self.t, self.p, self.models, n_threads=n_threads)

    def peakmem_audit(self, n_rows: int, n_threads: int) -> None:
        ac.audit(self.t, self.p, self.models, n_threads=n_threads)
