"""asv suite for sequential releases (anoncore.release, P-SEQ): TDS4SA on UCI Adult.

* ``AnonymityScale``: Set A enlarged (spec B.6 item 8), Top6, Y = K1, k = 40, at 200K and 1,000,000 records
  per table (the 1M case only with ANONCORE_BENCH_LARGE=1; target: under 20 s).
* ``LinkabilitySetB``: the paper's slowest run (Set B, Y = the top categorical attribute, k = 90%) at Adult
  size (target: under 20 s; the paper took < 450 s on a Pentium IV).

``track_`` methods report the preprocessing / generalization split and records accessed per record.
A missing UCI Adult folder makes ``setup`` raise NotImplementedError (asv: skipped).
"""

from __future__ import annotations

import math
from typing import ClassVar

from .common import require_large


def _adult():  # type: ignore[no-untyped-def]
    from anoncore.release.adult import adult_taxonomies, load_adult_release

    try:
        return load_adult_release(), adult_taxonomies()
    except FileNotFoundError as exc:
        raise NotImplementedError(str(exc)) from exc


class AnonymityScale:
    params: ClassVar[tuple[list[int], ...]] = ([200_000, 1_000_000],)
    param_names: ClassVar[list[str]] = ["records_per_table"]
    timeout = 600

    def setup(self, n: int) -> None:
        from anoncore.release import XYAnonymity
        from anoncore.release.adult import CATEGORICAL, JOIN, SET_A_TOP, T2_ATTRS, enlarge

        require_large(n)
        df, self.tax = _adult()
        big = enlarge(df, math.ceil(n / len(df)), q=1, rng=0).iloc[:n]
        self.t1 = big[list(CATEGORICAL) + ["income"]].reset_index(drop=True)
        self.t2 = big[list(T2_ATTRS)].reset_index(drop=True)
        x = [f"T1.{a}" for a in SET_A_TOP] + [f"T1.{a}" for a in JOIN] + [f"T2.{a}" for a in T2_ATTRS]
        self.req = XYAnonymity(list(dict.fromkeys(x)), ["K1"], 40)
        self.res = None

    def _run(self):  # type: ignore[no-untyped-def]
        from anoncore.release import tds4sa

        return tds4sa(self.t1, self.t2, self.req, taxonomies=self.tax, class_column="income")

    def _cached(self):  # type: ignore[no-untyped-def]
        if self.res is None:
            self.res = self._run()
        return self.res

    def time_tds4sa(self, n: int) -> None:
        self._run()

    def peakmem_tds4sa(self, n: int) -> None:
        self._run()

    def track_distortion(self, n: int) -> float:
        return float(self._cached().metrics["distortion"])

    track_distortion.unit = "levels/record"  # type: ignore[attr-defined]

    def track_preprocess_seconds(self, n: int) -> float:
        st = self._cached().stats
        return float(st["time_encode"] + st["time_preprocess"])

    track_preprocess_seconds.unit = "s"  # type: ignore[attr-defined]

    def track_generalize_seconds(self, n: int) -> float:
        return float(self._cached().stats["time_generalize"])

    track_generalize_seconds.unit = "s"  # type: ignore[attr-defined]

    def track_refine_accesses_per_record(self, n: int) -> float:
        return float(self._cached().stats["refine_accesses_per_record"])

    track_refine_accesses_per_record.unit = "accesses/record"  # type: ignore[attr-defined]


class LinkabilitySetB:
    timeout = 300

    def setup(self) -> None:
        from anoncore.release import XYLinkability
        from anoncore.release.adult import CATEGORICAL, CONTINUOUS, SET_A_TOP, T2_ATTRS

        df, self.tax = _adult()
        self.t1 = df[list(CONTINUOUS) + list(CATEGORICAL) + ["income"]]
        self.t2 = df[list(T2_ATTRS)]
        y = SET_A_TOP[0]
        vc = self.t1[y].value_counts()
        order = sorted(vc.index, key=lambda v: (vc[v], str(v)))
        x = [f"T1.{a}" for a in self.t1.columns if a not in (y, "income")]
        x += [f"T2.{a}" for a in T2_ATTRS if a not in ("race", "native-country", y)]
        self.req = XYLinkability(x, [f"T1.{y}"], 0.9, values={y: order[: len(order) // 2]})
        self.cont = list(CONTINUOUS)
        self.res = None

    def _run(self):  # type: ignore[no-untyped-def]
        from anoncore.release import tds4sa

        return tds4sa(self.t1, self.t2, self.req, taxonomies=self.tax, class_column="income", continuous=self.cont)

    def time_tds4sa(self) -> None:
        self._run()

    def track_refine_accesses_per_record(self) -> float:
        if self.res is None:
            self.res = self._run()
        return float(self.res.stats["refine_accesses_per_record"])

    track_refine_accesses_per_record.unit = "accesses/record"  # type: ignore[attr-defined]

    def track_generalize_seconds(self) -> float:
        if self.res is None:
            self.res = self._run()
        return float(self.res.stats["time_generalize"])

    track_generalize_seconds.unit = "s"  # type: ignore[attr-defined]
