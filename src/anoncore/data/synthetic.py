"""The synthetic census generator (moved to :mod:`anoncore.datasets.census`; this path re-exports it)."""

from __future__ import annotations

from anoncore.datasets.census import (
    CENSUS_COLUMNS,
    CENSUS_QUASI_IDENTIFIERS,
    SALARY_MARGINAL,
    census_hierarchies,
    synthetic_census,
    synthetic_census_frame,
    synthetic_census_schema,
)

__all__ = [
    "CENSUS_COLUMNS",
    "CENSUS_QUASI_IDENTIFIERS",
    "SALARY_MARGINAL",
    "census_hierarchies",
    "synthetic_census",
    "synthetic_census_frame",
    "synthetic_census_schema",
]
