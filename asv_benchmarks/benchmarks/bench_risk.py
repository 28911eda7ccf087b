"""Re-identification risk profile (anoncore.risk) on census-income.

Target (issue 21): the risk profile of census-income (299,285 rows, 8 QIs) in under 50 ms: the prosecutor,
journalist and marketer summaries, the risk distribution and histogram, sample uniqueness, and population
uniqueness by Dankar et al.'s rule (Pitman at this sampling fraction; the other estimators are not run) for N = 2.6e8 (about the US population
of 1994-95). ``time_profile_first_call`` groups the rows anew (the table's cached classes are cleared);
``time_profile_partition`` profiles a published full-domain generalization.
"""

from __future__ import annotations

import anoncore as ac
from anoncore.risk import population_uniques, quasi_identifier_analysis, risk_profile

POPULATION = 2.6e8
LEVELS = [2, 1, 1, 1, 1, 1, 1, 1]  # a mid-lattice node of the 8 QIs (maximum levels [4, 1, 3, 2, 1, 2, 2, 2])


def census():  # type: ignore[no-untyped-def]
    from anoncore.datasets import load_census_income_arx

    try:
        return load_census_income_arx(sensitive="detailed_occupation_recode")
    except FileNotFoundError as exc:
        raise NotImplementedError(str(exc)) from exc



def _profile_cache():  # type: ignore[no-untyped-def]
    """The risk profile's per-table cache of QI classes (cleared to time a first call)."""
    import importlib

    return importlib.import_module("anoncore.risk.profile")._CACHE

class RiskCensusIncome:
    """Risk profile of census-income (sample 299,285 records of a population of 2.6e8)."""

    timeout = 300

    def setup(self) -> None:
        self.table = census()
        self.partition = ac.Partition.from_levels(self.table, LEVELS)
        self.sizes = risk_profile(self.table).distribution

    def time_profile_first_call(self) -> None:
        _profile_cache().clear(self.table)
        risk_profile(self.table, population_size=POPULATION)

    def time_profile_cached_classes(self) -> None:
        risk_profile(self.table, population_size=POPULATION)

    def time_profile_sample_only(self) -> None:
        _profile_cache().clear(self.table)
        risk_profile(self.table)

    def time_profile_partition(self) -> None:
        risk_profile(self.partition, population_size=POPULATION)

    def time_estimators(self) -> None:
        sizes = [s for s, r in self.sizes for _ in range(r // s)]
        population_uniques(sizes, POPULATION)

    def time_qi_analysis_pairs(self) -> None:
        quasi_identifier_analysis(self.table, max_size=2)

    def peakmem_profile_first_call(self) -> None:
        _profile_cache().clear(self.table)
        risk_profile(self.table, population_size=POPULATION)

    def track_sample_uniqueness(self) -> float:
        return float(risk_profile(self.table).sample_uniqueness)

    track_sample_uniqueness.unit = "fraction"  # type: ignore[attr-defined]

    def track_population_uniqueness(self) -> float:
        p = risk_profile(self.table, population_size=POPULATION).population
        assert p is not None
        return float(p.uniqueness)

    track_population_uniqueness.unit = "fraction"  # type: ignore[attr-defined]


class RiskSearchAdult:
    """Optimal search under risk-based models on Adult (issue 21): the engine judges average risk, sample
    uniqueness and k-map from each node's class sizes; population uniqueness is the Python fallback."""

    params = (["avg_risk_0.05", "k3_uniqueness_0", "k2_kmap_5_estimated", "population_uniqueness_0.01"],)
    param_names = ("models",)
    timeout = 300

    def setup_cache(self):  # type: ignore[no-untyped-def]
        from anoncore.datasets import load_adult_arx

        try:
            return load_adult_arx()
        except FileNotFoundError as exc:
            raise NotImplementedError(str(exc)) from exc

    def _models(self, name: str):  # type: ignore[no-untyped-def]
        from anoncore.models import (
            AverageReidentificationRisk,
            KAnonymity,
            KMap,
            PopulationUniqueness,
            SampleUniqueness,
        )

        return {"avg_risk_0.05": [AverageReidentificationRisk(0.05)],
                "k3_uniqueness_0": [KAnonymity(3), SampleUniqueness(0.0)],
                "k2_kmap_5_estimated": [KAnonymity(2), KMap(5, population_size=1e6)],
                "population_uniqueness_0.01": [PopulationUniqueness(0.01, population_size=POPULATION)]}[name]

    def time_risk_lattice_search(self, table, models: str) -> None:  # type: ignore[no-untyped-def]
        from anoncore.risk import risk_lattice_search

        risk_lattice_search(table, self._models(models), 0.04, "loss")
