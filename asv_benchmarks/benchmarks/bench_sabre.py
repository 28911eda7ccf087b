"""SABRE-AK, SABRE-KNN and tMondrian on CENSUS-shaped data (7 QI, 50 salary classes), spec sabre-burel.md §6.5.

Targets on the 2-core development machine: SABRE-AK 100K < 0.2 s, 1M < 2 s; SABRE-KNN within 5x of SABRE-AK.
Million-row cases run only with ANONCORE_BENCH_LARGE=1.
"""

from __future__ import annotations

import numpy as np

from .common import require_large, synthetic

# Interval widths of the numeric attributes' hierarchies (heights 4 with the root, as in Table 3.4), so that
# full-domain baselines (tIncognito) can run on the stand-in too.
_WIDTHS = {"age": [5, 10, 20], "education": [2, 4, 8]}
_CARDS = (("age", 79, "numeric"), ("sex", 2, "cat"), ("education", 17, "numeric"), ("marital", 6, "cat"),
          ("race", 9, "cat"), ("workclass", 10, "cat"), ("birthplace", 83, "cat"))


def _grouped(name: str, card: int, fanout: int = 3):  # type: ignore[no-untyped-def]
    from anoncore import Hierarchy

    vals = [f"{name}{i}" for i in range(card)]
    level, tree, lv = list(vals), {}, 0
    while len(level) > 1:
        new = []
        for gi in range(0, len(level), fanout):
            nm = f"{name}_{lv}_{gi}"
            tree[nm] = level[gi:gi + fanout]
            new.append(nm)
        level, lv = new, lv + 1

    def nest(x):  # type: ignore[no-untyped-def]
        return {c: nest(c) for c in tree[x]} if x in tree else None

    return Hierarchy.from_nested({level[0]: nest(level[0])}), vals


def census_like(n_rows: int, seed: int = 0):  # type: ignore[no-untyped-def]
    """Fallback when anoncore.datasets.synthetic_census is not available: correlated QIs, salary SA."""
    import pandas as pd

    from anoncore import Attribute, Schema, Table, interval_hierarchy

    rng = np.random.default_rng(seed)
    z = rng.normal(size=n_rows)
    data, attrs = {}, []
    for name, card, kind in _CARDS:
        x = np.clip(((z * 0.6 + rng.normal(size=n_rows)) * card / 5 + card / 2).astype(int), 0, card - 1)
        if kind == "numeric":
            data[name] = x
            attrs.append(Attribute(name, "quasi_identifier", "numeric",
                                   hierarchy=interval_hierarchy(range(card), widths=_WIDTHS[name], name=name)))
        else:
            h, vals = _grouped(name, card)
            data[name] = np.asarray(vals)[x]
            attrs.append(Attribute(name, "quasi_identifier", "categorical", hierarchy=h))
    data["salary"] = np.clip(((z + rng.normal(size=n_rows) * 0.8) * 10 + 25).astype(int), 0, 49)
    attrs.append(Attribute("salary", "sensitive", "numeric"))
    return Table.from_pandas(pd.DataFrame(data), Schema(tuple(attrs)))


def numeric_boxes(table):  # type: ignore[no-untyped-def]
    """The table with its numeric QIs' hierarchies dropped, so that classes publish numeric [min, max] boxes
    (SABRE's minimum bounding boxes) rather than hierarchy intervals."""
    from dataclasses import replace

    from anoncore import Schema, Table

    attrs = tuple(replace(a, hierarchy=None) if a.kind == "numeric" else a for a in table.attributes)
    if attrs == table.attributes:
        return table
    return Table.from_pandas(table.to_pandas(), Schema(attrs, missing=table.schema.missing))


def census(n_rows: int):  # type: ignore[no-untyped-def]
    try:
        tab = synthetic(n_rows, seed=0)
    except (NotImplementedError, TypeError):
        tab = census_like(n_rows)
    return numeric_boxes(tab)


class SabreAK:
    """SABRE-AK at the thesis defaults (t = 0.35, k = 6, 7 QI)."""

    params = [[100_000, 1_000_000]]
    param_names = ["n_rows"]
    timeout = 600

    def setup(self, n_rows: int) -> None:
        require_large(n_rows)
        self.table = census(n_rows)

    def time_sabre_ak(self, n_rows: int) -> None:
        from anoncore.static import sabre

        sabre(self.table, t=0.35, k=6, method="ak", rng=0)

    def peakmem_sabre_ak(self, n_rows: int) -> None:
        from anoncore.static import sabre

        sabre(self.table, t=0.35, k=6, method="ak", rng=0)

    def track_ail(self, n_rows: int) -> float:
        from anoncore.metrics import ail
        from anoncore.static import sabre

        return float(ail(self.table, sabre(self.table, t=0.35, k=6, method="ak", rng=0).partition))

    track_ail.unit = "AIL"  # type: ignore[attr-defined]

    def time_kernel_sabre_ak(self, n_rows: int) -> None:
        from anoncore import _core
        from anoncore.static import _space

        sa = _space.sensitive_info(self.table, None, "bench")
        sp = _space.qi_space(self.table)
        _core.twophase.sabre(sa.codes, sa.m, sp.codes, sp.values, sp.offsets, sp.max_card, 0.35, 6, False, False, 0,
                             0, 0, sa.hierarchy_arrays)


class SabreKNN:
    """SABRE-KNN at the thesis defaults on 100,000 rows."""

    params = [[100_000]]
    param_names = ["n_rows"]
    timeout = 600

    def setup(self, n_rows: int) -> None:
        self.table = census(n_rows)

    def time_sabre_knn(self, n_rows: int) -> None:
        from anoncore.static import sabre

        sabre(self.table, t=0.35, k=6, method="knn", rng=0)

    def track_ail(self, n_rows: int) -> float:
        from anoncore.metrics import ail
        from anoncore.static import sabre

        return float(ail(self.table, sabre(self.table, t=0.35, k=6, method="knn", rng=0).partition))

    track_ail.unit = "AIL"  # type: ignore[attr-defined]


class TMondrian:
    """tMondrian (t = 0.35, k = 6) on 100,000 rows."""

    params = [[100_000]]
    param_names = ["n_rows"]
    timeout = 600

    def setup(self, n_rows: int) -> None:
        self.table = census(n_rows)

    def time_tmondrian(self, n_rows: int) -> None:
        from anoncore.static import tmondrian

        tmondrian(self.table, t=0.35, k=6)

    def track_ail(self, n_rows: int) -> float:
        from anoncore.metrics import ail
        from anoncore.static import tmondrian

        return float(ail(self.table, tmondrian(self.table, t=0.35, k=6).partition))

    track_ail.unit = "AIL"  # type: ignore[attr-defined]
