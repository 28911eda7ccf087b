"""A few points of the lattice speed grid (benchmarks/lattice_grid.py, issue 21) beyond the ARX rows: large k
with a high suppression limit, the non-monotone DM with suppression, distinct-5 without suppression, and the
same on census-income. Each point times a repeat call (the table's bottom reused) and tracks the nodes
evaluated, so that a change of the search (bounds, pruning) shows apart from a change of the per-node cost."""

from __future__ import annotations

from typing import Any

from .bench_lattice import load_census_income_arx
from .common import adult

# name: (data, models, suppression limit, metric)
POINTS: dict[str, tuple[str, list[tuple[str, dict[str, Any]]], float, str]] = {
    "adult_k100_50_loss": ("adult", [("KAnonymity", {"k": 100})], 0.50, "loss"),
    "adult_k5_10_dm": ("adult", [("KAnonymity", {"k": 5})], 0.10, "dm"),
    "adult_k5_distinct5_0_loss": ("adult_occ", [("KAnonymity", {"k": 5}), ("DistinctLDiversity", {"l": 5})], 0.0,
                                  "loss"),
    "adult_k5_4_entropy_nm": ("adult", [("KAnonymity", {"k": 5})], 0.04, "entropy_nm"),
    "census_k100_50_loss": ("census", [("KAnonymity", {"k": 100})], 0.50, "loss"),
    "census_k5_10_dm": ("census", [("KAnonymity", {"k": 5})], 0.10, "dm"),
    "census_k5_distinct5_0_loss": ("census", [("KAnonymity", {"k": 5}), ("DistinctLDiversity", {"l": 5})], 0.0,
                                   "loss"),
}


def _models(spec: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    import anoncore.models as am

    return [getattr(am, name)(**params) for name, params in spec]


class LatticeGrid:
    params = (list(POINTS),)
    param_names = ("point",)
    timeout = 300

    def setup_cache(self) -> dict[str, Any]:
        return {"adult": adult(), "adult_occ": adult(sensitive="occupation"), "census": load_census_income_arx()}

    def setup(self, tables: dict[str, Any], point: str) -> None:
        data, spec, self.limit, self.metric = POINTS[point]
        self.table = tables[data]
        self.models = _models(spec)
        self._run()  # the bottom grouping, once: the timed calls are repeat calls

    def _run(self) -> Any:
        from anoncore.static.lattice import lattice_search

        return lattice_search(self.table, self.models, suppression_limit=self.limit, metric=self.metric,
                              n_threads=1)

    def time_lattice_search(self, tables: dict[str, Any], point: str) -> None:
        self._run()

    def track_nodes_evaluated(self, tables: dict[str, Any], point: str) -> int:
        return int(self._run().stats["nodes_evaluated"])
