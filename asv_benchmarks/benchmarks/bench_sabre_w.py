"""asv: SABRE_W throughput and output quality (STYLE.md §2.10; issue 5 acceptance: SABRE_W on 500,000 tuples).

The census-like stream (anoncore.datasets.synthetic_census_frame, 7 QI, SA = salary with 50 values) at the
thesis's defaults k=6, t=0.35, omega=20,000, I=5,000. The 500,000-tuple acceptance case runs by default
(about 2 s per sample); the 1,000,000-tuple case only with ANONCORE_BENCH_LARGE=1.
"""

from __future__ import annotations

import numpy as np

from .common import require_large


def _stream(n_rows: int):  # type: ignore[no-untyped-def]
    from anoncore.datasets import synthetic_census_frame, synthetic_census_schema
    from anoncore.data.schema import Schema

    df = synthetic_census_frame(n_rows, rng=0)
    df["pid"] = np.arange(n_rows, dtype=np.int64)
    base = synthetic_census_schema("salary", 7)
    schema = Schema.build({}, pid="pid")
    schema = Schema(base.attributes + schema.attributes)
    return schema, df


def _run(s, df, batch: int):  # type: ignore[no-untyped-def]
    out = [s.push(df.iloc[a:a + batch]) for a in range(0, len(df), batch)]
    out.append(s.flush())
    return out


class SabreWCensus:
    """SABRE_W at the thesis's defaults on the census-like stream."""

    params = ([100_000, 500_000, 1_000_000], [6], [0.35], [20_000], [5_000])
    param_names = ["n_rows", "k", "t", "omega", "interval"]  # noqa: RUF012
    timeout = 600

    def setup(self, n_rows: int, k: int, t: float, omega: int, interval: int) -> None:
        require_large(n_rows, threshold=1_000_000)
        self.schema, self.df = _stream(n_rows)

    def _algo(self, k: int, t: float, omega: int, interval: int):  # type: ignore[no-untyped-def]
        from anoncore.stream import SabreW

        return SabreW(self.schema, omega=omega, interval=interval, t=t, k=k, rng=0)

    def time_sabre_w(self, n_rows: int, k: int, t: float, omega: int, interval: int) -> None:
        _run(self._algo(k, t, omega, interval), self.df, 50_000)

    def peakmem_sabre_w(self, n_rows: int, k: int, t: float, omega: int, interval: int) -> None:
        _run(self._algo(k, t, omega, interval), self.df, 50_000)

    def track_ail(self, n_rows: int, k: int, t: float, omega: int, interval: int) -> float:
        out = _run(self._algo(k, t, omega, interval), self.df, 50_000)
        il = np.concatenate([r.il[~r.suppressed] for r in out])
        return float(il.mean()) if il.size else 1.0

    track_ail.unit = "AIL (GLM)"  # type: ignore[attr-defined]

    def track_suppressed_fraction(self, n_rows: int, k: int, t: float, omega: int, interval: int) -> float:
        out = _run(self._algo(k, t, omega, interval), self.df, 50_000)
        return float(sum(r.n_suppressed for r in out) / n_rows)

    track_suppressed_fraction.unit = "fraction"  # type: ignore[attr-defined]
