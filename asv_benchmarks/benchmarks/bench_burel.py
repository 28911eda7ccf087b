"""BUREL, LMondrian and DMondrian on CENSUS-shaped data (3 QI: age, sex, education; SA salary, 50 classes) at
the thesis's default beta = 4 (spec sabre-burel.md §6.4). Numeric QIs publish [min, max] boxes.

Targets on the 2-core development machine: BUREL 500K < 0.5 s and faster than LMondrian side by side.
The 500,000- and 1,000,000-row cases run only with ANONCORE_BENCH_LARGE=1 (below: 100,000 rows).
"""

from __future__ import annotations

from .common import require_large, synthetic


def census3(n_rows: int):  # type: ignore[no-untyped-def]
    """synthetic_census with 3 QIs and numeric QIs without hierarchies ([min, max] boxes)."""
    from dataclasses import replace

    from anoncore import Schema, Table

    tab = synthetic(n_rows, seed=0, n_qi=3)
    attrs = tuple(replace(a, hierarchy=None) if a.kind == "numeric" else a for a in tab.attributes)
    return Table.from_pandas(tab.to_pandas(), Schema(attrs, missing=tab.schema.missing))


class Burel:
    """BUREL (enhanced beta-likeness, beta = 4, Hilbert retrieval with random seeds)."""

    params = [[100_000, 500_000, 1_000_000]]
    param_names = ["n_rows"]
    timeout = 600

    def setup(self, n_rows: int) -> None:
        require_large(n_rows)
        self.table = census3(n_rows)

    def time_burel(self, n_rows: int) -> None:
        from anoncore.static import burel

        burel(self.table, beta=4.0, rng=0)

    def peakmem_burel(self, n_rows: int) -> None:
        from anoncore.static import burel

        burel(self.table, beta=4.0, rng=0)

    def track_ail(self, n_rows: int) -> float:
        from anoncore.static import burel

        return float(burel(self.table, beta=4.0, rng=0).metrics["ail"])

    track_ail.unit = "AIL"  # type: ignore[attr-defined]

    def time_kernel_burel(self, n_rows: int) -> None:
        from anoncore import _core
        from anoncore.static import _space

        sp = _space.qi_space(self.table)
        sa = self.table.column("salary")
        _core.burel.burel(sa, self.table.cardinality("salary"), sp.codes, sp.values, sp.offsets, sp.max_card, 4.0,
                          True, False, 0, 0, 0)


class BurelRange:
    """BUREL range-based (epsilon = 6 salary classes, beta = 4): the merge post-processing."""

    params = [[100_000, 500_000]]
    param_names = ["n_rows"]
    timeout = 600

    def setup(self, n_rows: int) -> None:
        require_large(n_rows)
        self.table = census3(n_rows)

    def time_burel_range(self, n_rows: int) -> None:
        from anoncore.static import burel

        burel(self.table, beta=4.0, variant="range", epsilon=6, rng=0)

    def track_ail(self, n_rows: int) -> float:
        from anoncore.static import burel

        return float(burel(self.table, beta=4.0, variant="range", epsilon=6, rng=0).metrics["ail"])

    track_ail.unit = "AIL"  # type: ignore[attr-defined]


class LMondrian:
    """LMondrian (beta = 4), the baseline BUREL must beat side by side."""

    params = [[100_000, 500_000]]
    param_names = ["n_rows"]
    timeout = 600

    def setup(self, n_rows: int) -> None:
        require_large(n_rows)
        self.table = census3(n_rows)

    def time_lmondrian(self, n_rows: int) -> None:
        from anoncore.static import lmondrian

        lmondrian(self.table, beta=4.0)

    def track_ail(self, n_rows: int) -> float:
        from anoncore.static import lmondrian

        return float(lmondrian(self.table, beta=4.0).metrics["ail"])

    track_ail.unit = "AIL"  # type: ignore[attr-defined]


class DMondrian:
    """DMondrian (delta = ln(1 + min(4, -ln max p)))."""

    params = [[100_000, 500_000]]
    param_names = ["n_rows"]
    timeout = 600

    def setup(self, n_rows: int) -> None:
        require_large(n_rows)
        self.table = census3(n_rows)

    def time_dmondrian(self, n_rows: int) -> None:
        from anoncore.static import dmondrian

        dmondrian(self.table, beta=4.0)

    def track_ail(self, n_rows: int) -> float:
        from anoncore.static import dmondrian

        return float(dmondrian(self.table, beta=4.0).metrics["ail"])

    track_ail.unit = "AIL"  # type: ignore[attr-defined]
