"""BUREL, LMondrian and DMondrian on CENSUS-shaped data (3 QI: age, sex, education; SA salary, 50 classes) at
the thesis's default beta = 4 (spec sabre-burel.md §6.4). Numeric QIs publish [min, max] boxes.

Targets on the 2-core development machine: BUREL 500K < 0.5 s and faster than LMondrian side by side.
The 500,000- and 1,000,000-row cases run only with ANONCORE_BENCH_LARGE=1 (below: 100,000 rows).
"""

from __future__ import annotations

from anoncore.models import EnhancedBetaLikeness
from anoncore.static.burel import likeness_model

from .common import require_large, synthetic


def census3(n_rows: int):  # type: ignore[no-untyped-def]
    """synthetic_census with 3 QIs and numeric QIs without hierarchies ([min, max] boxes)."""
    from dataclasses import replace

    from anoncore import Schema, Table

    tab = synthetic(n_rows, seed=0, n_qi=3)
    attrs = tuple(replace(a, hierarchy=None) if a.kind == "numeric" else a for a in tab.attributes)
    return Table.from_pandas(tab.to_pandas(), Schema(attrs, missing=tab.schema.missing))


class _Census3Case:
    """One algorithm on census3(n_rows): `run()` is the public call; asv skips this base (leading underscore)."""

    params = ([100_000, 500_000],)
    param_names = ("n_rows",)
    timeout = 600

    def setup(self, n_rows: int) -> None:
        require_large(n_rows)
        self.table = census3(n_rows)

    def run(self):  # type: ignore[no-untyped-def]
        raise NotImplementedError

    def track_ail(self, n_rows: int) -> float:
        return float(self.run().metrics["ail"])

    track_ail.unit = "AIL"  # type: ignore[attr-defined]


class Burel(_Census3Case):
    """BUREL (enhanced beta-likeness, beta = 4, Hilbert retrieval with random seeds)."""

    params = ([100_000, 500_000, 1_000_000],)

    def run(self):  # type: ignore[no-untyped-def]
        from anoncore.static import burel

        return burel(self.table, likeness_model(beta=4.0), rng=0)

    def time_burel(self, n_rows: int) -> None:
        self.run()

    def peakmem_burel(self, n_rows: int) -> None:
        self.run()

    def time_kernel_burel(self, n_rows: int) -> None:
        from anoncore import _core
        from anoncore.static import _space

        sp = _space.qi_space(self.table)
        sa = self.table.column("salary")
        _core.burel.burel(sa, self.table.cardinality("salary"), sp.codes, sp.values, sp.offsets, sp.max_card, 4.0,
                          True, False, 0, 0, 0)


class BurelRange(_Census3Case):
    """BUREL range-based (epsilon = 6 salary classes, beta = 4): the merge post-processing."""

    def run(self):  # type: ignore[no-untyped-def]
        from anoncore.static import burel

        return burel(self.table, likeness_model(beta=4.0, variant="range", epsilon=6), rng=0)

    def time_burel_range(self, n_rows: int) -> None:
        self.run()


class LMondrian(_Census3Case):
    """LMondrian (beta = 4), the baseline BUREL must beat side by side."""

    def run(self):  # type: ignore[no-untyped-def]
        from anoncore.static import lmondrian

        return lmondrian(self.table, likeness_model(beta=4.0))

    def time_lmondrian(self, n_rows: int) -> None:
        self.run()


class DMondrian(_Census3Case):
    """DMondrian (delta = ln(1 + min(4, -ln max p)))."""

    def run(self):  # type: ignore[no-untyped-def]
        from anoncore.static import dmondrian

        return dmondrian(self.table, EnhancedBetaLikeness(4.0))

    def time_dmondrian(self, n_rows: int) -> None:
        self.run()
