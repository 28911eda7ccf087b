"""Re-identification risk: attacker models, uniqueness estimators, quasi-identifier analysis, and a lattice
search under the risk-based privacy models (see ``docs/risk.md``)."""

from __future__ import annotations

from anoncore.risk.estimators import ESTIMATORS, PopulationEstimate, frequencies, population_uniques
from anoncore.risk.kmap import KMAP_ESTIMATORS, DerivedK, derived_k
from anoncore.risk.profile import (
    HISTOGRAM_EDGES,
    AttackerRisk,
    RiskProfile,
    class_counts,
    record_risks,
    risk_profile,
)
from anoncore.risk.quasi_identifiers import QuasiIdentifierScore, quasi_identifier_analysis
from anoncore.risk.search import risk_lattice_search

__all__ = [
    "ESTIMATORS",
    "HISTOGRAM_EDGES",
    "KMAP_ESTIMATORS",
    "AttackerRisk",
    "DerivedK",
    "PopulationEstimate",
    "QuasiIdentifierScore",
    "RiskProfile",
    "class_counts",
    "derived_k",
    "frequencies",
    "population_uniques",
    "quasi_identifier_analysis",
    "record_risks",
    "risk_lattice_search",
    "risk_profile",
]
