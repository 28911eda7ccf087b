"""Data for users and tests: a tiny toy table, loaders for the benchmark data in ``../shared/data``.

The benchmark files are never bundled: loaders read them from ``$ANONCORE_SHARED_DATA`` (default: the
``shared/data`` folder next to the repository). The embedded default for demos is the synthetic census
generator :func:`synthetic_census`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from anoncore.data.builders import interval_hierarchy, masking_hierarchy
from anoncore.data.hierarchy import Hierarchy
from anoncore.data.schema import Attribute, Schema
from anoncore.data.synthetic import (
    CENSUS_COLUMNS,
    CENSUS_QUASI_IDENTIFIERS,
    census_hierarchies,
    synthetic_census,
    synthetic_census_frame,
    synthetic_census_schema,
)
from anoncore.data.table import Table

__all__ = [
    "ADULT_COLUMNS",
    "CENSUS_COLUMNS",
    "CENSUS_QUASI_IDENTIFIERS",
    "census_hierarchies",
    "load_adult_arx",
    "shared_data_dir",
    "synthetic_census",
    "synthetic_census_frame",
    "synthetic_census_schema",
    "toy_table",
]

ADULT_COLUMNS = ("sex", "age", "race", "marital-status", "education", "native-country", "workclass",
                 "occupation", "salary-class")


def shared_data_dir() -> Path:
    """Folder of the benchmark data: ``$ANONCORE_SHARED_DATA`` or ``<repo>/../shared/data``."""
    env = os.environ.get("ANONCORE_SHARED_DATA")
    if env:
        return Path(env)
    here = Path(__file__).resolve()
    for parent in here.parents:
        cand = parent.parent / "shared" / "data"
        if (parent / "pyproject.toml").exists() and cand.exists():
            return cand
    # A git worktree may sit deeper than the repository (e.g. <root>/wt/<branch>): take the nearest
    # ancestor that holds shared/data.
    for parent in here.parents:
        cand = parent / "shared" / "data"
        if cand.is_dir():
            return cand
    return Path.cwd().parent / "shared" / "data"


def _require(path: Path) -> Path:
    if not path.exists():
        raise FileNotFoundError(
            f"Benchmark data {str(path)!r} not found. Set ANONCORE_SHARED_DATA to the folder holding "
            f"adult/, uci-adult/ and census-income/."
        )
    return path


def toy_table() -> Table:
    """Six patients (zip, age; disease sensitive): small enough to check by hand.

    Examples
    --------
    >>> toy_table().to_pandas()["zip"].tolist()[:2]
    ['13053', '13058']
    """
    df = pd.DataFrame({
        "zip": ["13053", "13058", "14853", "14850", "13068", "13067"],
        "age": [28, 28, 50, 50, 30, 30],
        "disease": ["flu", "cancer", "flu", "ulcer", "cancer", "flu"],
    })
    schema = Schema((
        Attribute("zip", "quasi_identifier", "categorical", hierarchy=masking_hierarchy(df["zip"], name="zip")),
        Attribute("age", "quasi_identifier", "numeric",
                  hierarchy=interval_hierarchy(range(20, 60), widths=[10, 20], name="age")),
        Attribute("disease", "sensitive"),
    ))
    return Table.from_pandas(df, schema)


def load_adult_arx(sensitive: str | None = None, folder: str | os.PathLike[str] | None = None) -> Table:
    """ARX's Adult (30,162 rows, 9 attributes) with its ARX-format hierarchies.

    Every attribute is a quasi-identifier with its hierarchy, in file order (the order of ARX's levels
    vectors), except ``sensitive``, which becomes the sensitive attribute (keeping its hierarchy for the
    hierarchical EMD). Age is declared categorical, as in ARX, so that its hierarchy's labels are used.
    """
    base = Path(folder) if folder is not None else shared_data_dir() / "adult"
    csv_path = _require(base / "adult.csv")
    if sensitive is not None and sensitive not in ADULT_COLUMNS:
        raise ValueError(f"Unknown column {sensitive!r}; Adult has {list(ADULT_COLUMNS)}.")
    attrs = []
    for c in ADULT_COLUMNS:
        h = Hierarchy.from_arx_csv(_require(base / f"adult_hierarchy_{c}.csv"), name=c)
        attrs.append(Attribute(c, "sensitive" if c == sensitive else "quasi_identifier", "categorical", hierarchy=h))
    return Table.from_csv(csv_path, Schema(tuple(attrs)), sep=";")
