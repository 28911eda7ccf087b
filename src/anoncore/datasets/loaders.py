"""Data for users and tests: a tiny toy table, loaders for the benchmark data in ``../shared/data``.

The benchmark files are never bundled: loaders read them from ``$ANONCORE_SHARED_DATA`` (default: the
``shared/data`` folder next to the repository). The embedded default for demos is the synthetic census
generator :func:`synthetic_census`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from anoncore.data.builders import interval_hierarchy, masking_hierarchy
from anoncore.data.hierarchy import Hierarchy
from anoncore.data.schema import Attribute, Schema
from anoncore.data.table import Table
from anoncore.datasets.census import (
    CENSUS_COLUMNS,
    CENSUS_QUASI_IDENTIFIERS,
    census_hierarchies,
    synthetic_census,
    synthetic_census_frame,
    synthetic_census_schema,
)

__all__ = [
    "ADULT_COLUMNS",
    "CENSUS_COLUMNS",
    "CENSUS_INCOME_ARX_COLUMNS",
    "CENSUS_INCOME_COLUMNS",
    "CENSUS_QUASI_IDENTIFIERS",
    "UCI_ADULT_COLUMNS",
    "UCI_ADULT_QUASI_IDENTIFIERS",
    "census_hierarchies",
    "load_adult_arx",
    "load_census_income",
    "load_census_income_arx",
    "load_uci_adult",
    "shared_data_dir",
    "synthetic_census",
    "synthetic_census_frame",
    "synthetic_census_schema",
    "toy_table",
    "uci_adult_hierarchies",
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


# ---------------------------------------------------------------------------------------------------------
# UCI Adult (raw files)

UCI_ADULT_COLUMNS = ("age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
                     "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week",
                     "native-country", "income")
#: The 10 quasi-identifiers of the CASTLE experiments (spec streams-castle-sabrew.md §5.1, Table 5.4).
UCI_ADULT_QUASI_IDENTIFIERS = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week",
                               "education", "marital-status", "occupation", "native-country")
UCI_ADULT_NUMERIC = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week")

# Hierarchies written for this project; heights follow Table 5.4 of the Wang thesis ("#levels" counts the
# leaf and root levels): education 16 leaves / 5 levels, marital status 7 / 4, occupation 14 / 3, native
# country 41 (the thesis says 40) / 5.
_ADULT_EDUCATION = {"*": {
    "Without-college": {
        "Elementary": {"Primary": ["Preschool", "1st-4th", "5th-6th"], "Middle-school": ["7th-8th", "9th"]},
        "Secondary": {"High-school-no-diploma": ["10th", "11th", "12th"], "High-school-graduate": ["HS-grad"]},
    },
    "With-college": {
        "Undergraduate": {"College-no-degree": ["Some-college"], "Associate": ["Assoc-voc", "Assoc-acdm"],
                          "Bachelor-degree": ["Bachelors"]},
        "Postgraduate": {"Graduate-degree": ["Masters", "Prof-school", "Doctorate"]},
    },
}}
_ADULT_MARITAL = {"*": {
    "Married": {"Spouse-present": ["Married-civ-spouse", "Married-AF-spouse"],
                "Spouse-away": ["Married-spouse-absent", "Separated"]},
    "Not-married": {"Formerly-married": ["Divorced", "Widowed"], "Single": ["Never-married"]},
}}
_ADULT_OCCUPATION = {"*": {
    "White-collar": ["Exec-managerial", "Prof-specialty", "Tech-support", "Sales", "Adm-clerical"],
    "Blue-collar": ["Craft-repair", "Machine-op-inspct", "Handlers-cleaners", "Transport-moving",
                    "Farming-fishing"],
    "Service": ["Other-service", "Priv-house-serv", "Protective-serv", "Armed-Forces"],
}}
_ADULT_COUNTRY = {"*": {
    "Americas": {
        "North-America": {"Anglo-America": ["United-States", "Canada"],
                          "US-territories": ["Puerto-Rico", "Outlying-US(Guam-USVI-etc)"]},
        "Latin-America": {
            "Caribbean": ["Cuba", "Jamaica", "Haiti", "Dominican-Republic", "Trinadad&Tobago"],
            "Central-America": ["Mexico", "Honduras", "Guatemala", "Nicaragua", "El-Salvador"],
            "South-America": ["Ecuador", "Columbia", "Peru"],
        },
    },
    "Europe-Asia": {
        "Europe": {"Western-Europe": ["England", "Scotland", "Ireland", "France", "Germany", "Holand-Netherlands"],
                   "Southern-Europe": ["Italy", "Portugal", "Greece", "Yugoslavia"],
                   "Eastern-Europe": ["Poland", "Hungary"]},
        "Asia": {"East-Asia": ["China", "Japan", "Taiwan", "Hong", "South"],
                 "South-East-Asia": ["Cambodia", "Philippines", "Vietnam", "Laos", "Thailand"],
                 "South-West-Asia": ["India", "Iran"]},
    },
}}


def _with_unknown(tree: dict[str, Any], height: int, token: str = "?") -> dict[str, Any]:
    """Add a chain ``Unknown-(h-1) -> ... -> Unknown-1 -> token`` under the root, keeping the tree balanced."""
    (root, sub), = tree.items()
    chain: Any = [token]
    for lvl in range(1, height):
        chain = {f"Unknown-{lvl}": chain}
    return {root: {**sub, **chain}} if height > 1 else {root: list(sub) + [token]}


def uci_adult_hierarchies(values: Mapping[str, Any] | None = None, missing: bool = False) -> dict[str, Hierarchy]:
    """Hierarchies of the 10 CASTLE quasi-identifiers of UCI Adult (written for this project).

    ================ ==================================================================== ======
    attribute        levels (leaf to root)                                                 height
    ================ ==================================================================== ======
    age              17..90; 5-year ``[15-19]``; 10-year; 20-year; ``*``                      4
    fnlwgt           value; width 10,000; 100,000; 500,000; ``*``                             4
    education-num    1..16; 2; 4; 8 levels; ``*``                                             4
    capital-gain     value; width 1,000; 10,000; 100,000; ``*``                               4
    capital-loss     value; width 500; 1,000; 5,000; ``*``                                    4
    hours-per-week   1..99; 5; 10; 20; 40 hours; ``*``                                        5
    education        16 values; 8 stages; 4 (elementary/secondary/undergraduate/
                     postgraduate); with/without college; ``*``                               4
    marital-status   7 values; spouse present/away, formerly married, single; married /
                     not married; ``*``                                                       3
    occupation       14 values; white-collar / blue-collar / service; ``*``                   2
    native-country   41 values; 9 sub-regions; 4 regions; Americas / Europe-Asia; ``*``       4
    ================ ==================================================================== ======

    Interval levels cover ``[start + i*w, start + (i+1)*w)`` with start 0 (age 15, education-num 1).
    ``values`` maps the numeric attributes with data-dependent domains (fnlwgt, capital-gain,
    capital-loss) to the values to cover; without it those three get no hierarchy. ``missing=True`` adds
    ``?`` (under its own chain of ``Unknown-*`` nodes) to education, marital-status, occupation and
    native-country.

    Examples
    --------
    >>> hs = uci_adult_hierarchies()
    >>> {k: h.height for k, h in hs.items()}["native-country"], hs["education"].n_leaves
    (4, 16)
    """
    from anoncore.data.builders import interval_hierarchy as ih

    hs: dict[str, Hierarchy] = {
        "age": ih(np.arange(17, 91), widths=[5, 10, 20], start=15, name="age"),
        "education-num": ih(np.arange(1, 17), widths=[2, 4, 8], start=1, name="education-num"),
        "hours-per-week": ih(np.arange(1, 100), widths=[5, 10, 20, 40], start=0, name="hours-per-week"),
    }
    widths = {"fnlwgt": [10_000, 100_000, 500_000], "capital-gain": [1_000, 10_000, 100_000],
              "capital-loss": [500, 1_000, 5_000]}
    for c, w in widths.items():
        if values is not None and c in values:
            hs[c] = ih(np.asarray(values[c], dtype=np.float64), widths=w, start=0, name=c)
    for c, tree, h in (("education", _ADULT_EDUCATION, 4), ("marital-status", _ADULT_MARITAL, 3),
                       ("occupation", _ADULT_OCCUPATION, 2), ("native-country", _ADULT_COUNTRY, 4)):
        hs[c] = Hierarchy.from_nested(_with_unknown(tree, h) if missing else tree, name=c)
    return hs


def _read_uci_adult(path: Path, skip_first: bool) -> pd.DataFrame:
    df = pd.read_csv(path, header=None, names=list(UCI_ADULT_COLUMNS), sep=",", skipinitialspace=True, dtype=str,
                     keep_default_na=False, na_values=[], skiprows=1 if skip_first else 0)
    df = df[df["income"].str.len() > 0]
    df["income"] = df["income"].str.rstrip(".")
    return df.reset_index(drop=True)


def load_uci_adult(
    which: str = "train",
    complete: bool = True,
    sensitive: str | None = "income",
    quasi_identifiers: Sequence[str] | None = None,
    folder: str | os.PathLike[str] | None = None,
) -> Table:
    """The raw UCI Adult files (15 attributes) with roles and project-built hierarchies.

    Parameters
    ----------
    which : {'train', 'test', 'all'}, default='train'
        ``adult.data`` (32,561 rows), ``adult.test`` (16,281) or both, train first (48,842).
    complete : bool, default=True
        Drop the rows with a missing value ``?`` (listed in ``Table.dropped_rows``): 30,162 train rows
        (the CASTLE thesis's "UCI-Adult"), 45,222 for ``'all'`` ("SFU-Adult"). With ``False`` the ``?`` is
        kept as a value of its own.
    sensitive : str or None, default='income'
        The sensitive attribute (the test split's trailing ``.`` of the income labels is removed).
    quasi_identifiers : sequence of str, default=None
        Defaults to the 10 CASTLE quasi-identifiers :data:`UCI_ADULT_QUASI_IDENTIFIERS` (minus
        ``sensitive``). Every other column is insensitive.
    folder : path, default=None
        Folder holding ``adult.data.gz`` and ``adult.test.gz`` (default ``<shared data>/uci-adult``).

    Numeric attributes: age, fnlwgt, education-num, capital-gain, capital-loss, hours-per-week. The
    hierarchies are :func:`uci_adult_hierarchies` (the fnlwgt and capital ones cover the loaded values).
    The quasi-identifiers come first in the table, in the order given.
    """
    if which not in ("train", "test", "all"):
        raise ValueError(f"The 'which' parameter of load_uci_adult must be 'train', 'test' or 'all'. "
                         f"Got {which!r} instead.")
    if sensitive is not None and sensitive not in UCI_ADULT_COLUMNS:
        raise ValueError(f"Unknown column {sensitive!r}; UCI Adult has {list(UCI_ADULT_COLUMNS)}.")
    base = Path(folder) if folder is not None else shared_data_dir() / "uci-adult"
    parts = []
    if which in ("train", "all"):
        parts.append(_read_uci_adult(_require(base / "adult.data.gz"), skip_first=False))
    if which in ("test", "all"):
        parts.append(_read_uci_adult(_require(base / "adult.test.gz"), skip_first=True))
    df = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    if sensitive is not None and sensitive not in UCI_ADULT_COLUMNS:
        raise ValueError(f"Unknown column {sensitive!r}; UCI Adult has {list(UCI_ADULT_COLUMNS)}.")
    qis = [q for q in (quasi_identifiers if quasi_identifiers is not None else UCI_ADULT_QUASI_IDENTIFIERS)
           if q != sensitive]
    for q in qis:
        if q not in UCI_ADULT_COLUMNS:
            raise ValueError(f"Unknown column {q!r}; UCI Adult has {list(UCI_ADULT_COLUMNS)}.")
    numeric_values = {c: np.unique(pd.to_numeric(df[c])) for c in ("fnlwgt", "capital-gain", "capital-loss")}
    hs = uci_adult_hierarchies(numeric_values, missing=not complete)
    order = qis + [c for c in UCI_ADULT_COLUMNS if c not in qis]
    attrs = []
    for c in order:
        role = "quasi_identifier" if c in qis else "sensitive" if c == sensitive else "insensitive"
        kind = "numeric" if c in UCI_ADULT_NUMERIC else "categorical"
        attrs.append(Attribute(c, role, kind, hierarchy=hs.get(c)))
    schema = Schema(tuple(attrs), missing="drop" if complete else "as_value")
    return Table.from_pandas(df, schema)


# ---------------------------------------------------------------------------------------------------------
# KDD census-income

CENSUS_INCOME_COLUMNS = (
    "age", "class_of_worker", "detailed_industry_recode", "detailed_occupation_recode", "education",
    "wage_per_hour", "enroll_in_edu_inst_last_wk", "marital_stat", "major_industry_code", "major_occupation_code",
    "race", "hispanic_origin", "sex", "member_of_a_labor_union", "reason_for_unemployment",
    "full_or_part_time_employment_stat", "capital_gains", "capital_losses", "dividends_from_stocks",
    "tax_filer_stat", "region_of_previous_residence", "state_of_previous_residence",
    "detailed_household_and_family_stat", "detailed_household_summary_in_household", "instance_weight",
    "migration_code_change_in_msa", "migration_code_change_in_reg", "migration_code_move_within_reg",
    "live_in_this_house_1_year_ago", "migration_prev_res_in_sunbelt", "num_persons_worked_for_employer",
    "family_members_under_18", "country_of_birth_father", "country_of_birth_mother", "country_of_birth_self",
    "citizenship", "own_business_or_self_employed", "fill_inc_questionnaire_for_veterans_admin",
    "veterans_benefits", "weeks_worked_in_year", "year", "income",
)
CENSUS_INCOME_NUMERIC = ("age", "wage_per_hour", "capital_gains", "capital_losses", "dividends_from_stocks",
                         "instance_weight", "num_persons_worked_for_employer", "weeks_worked_in_year")
#: The 9 columns of the ARX-format version, in file order (the last is the usual sensitive attribute).
CENSUS_INCOME_ARX_COLUMNS = ("age", "sex", "education", "marital_stat", "race", "class_of_worker",
                             "major_industry_code", "country_of_birth_self", "detailed_occupation_recode")


def _census_arx_hierarchy(base: Path, c: str, unknown_as: str | None = None) -> Hierarchy:
    path = _require(base / f"census_hierarchy_{c}.csv")
    if unknown_as is None:
        return Hierarchy.from_arx_csv(path, name=c)
    rows = [line.rstrip("\n").split(";") for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [[unknown_as if (i == 0 and v == "Unknown") else v for i, v in enumerate(r)] for r in rows]
    return Hierarchy.from_rows(rows, name=c)


def load_census_income(
    which: str = "all",
    sensitive: str | None = "detailed_occupation_recode",
    quasi_identifiers: Sequence[str] | None = None,
    columns: Sequence[str] | None = None,
    missing: str = "as_value",
    folder: str | os.PathLike[str] | None = None,
) -> Table:
    """The raw KDD census-income files (42 attributes, 299,285 rows) with roles.

    Parameters
    ----------
    which : {'train', 'test', 'all'}, default='all'
        199,523, 99,762 or 299,285 rows (train first).
    sensitive : str or None, default='detailed_occupation_recode'
    quasi_identifiers : sequence of str, default=None
        Defaults to the 8 quasi-identifiers of the ARX-format version (:data:`CENSUS_INCOME_ARX_COLUMNS`
        minus ``sensitive``); they and the sensitive attribute get the hierarchies of ``arx/`` when one
        exists (``?`` of ``country_of_birth_self`` is the ARX file's ``Unknown`` leaf). Other columns are
        insensitive (categorical ones with a flat hierarchy).
    columns : sequence of str, default=None
        Keep only these columns (must include the quasi-identifiers and the sensitive attribute); default all 42.
    missing : {'as_value', 'drop', 'error'}, default='as_value'
        Missing-value policy for ``?`` (almost all in the four migration columns, which are ``?`` for every
        1995 record).
    folder : path, default=None
        Folder of ``census_income_1994_1995_{train,test}.csv.gz`` (default ``<shared data>/census-income``).

    The label ``income`` loses its trailing ``.`` (``- 50000`` / ``50000+``); every value is stripped.
    """
    if which not in ("train", "test", "all"):
        raise ValueError(f"The 'which' parameter of load_census_income must be 'train', 'test' or 'all'. "
                         f"Got {which!r} instead.")
    base = Path(folder) if folder is not None else shared_data_dir() / "census-income"
    if sensitive is not None and sensitive not in CENSUS_INCOME_COLUMNS:
        raise ValueError(f"Unknown column {sensitive!r}; census-income has {list(CENSUS_INCOME_COLUMNS)}.")
    default_qis = [c for c in CENSUS_INCOME_ARX_COLUMNS if c != "detailed_occupation_recode"]
    qis = [q for q in (quasi_identifiers if quasi_identifiers is not None else default_qis) if q != sensitive]
    keep = list(columns) if columns is not None else list(CENSUS_INCOME_COLUMNS)
    for c in keep + qis:
        if c not in CENSUS_INCOME_COLUMNS:
            raise ValueError(f"Unknown column {c!r}; census-income has {list(CENSUS_INCOME_COLUMNS)}.")
    need = set(qis) | ({sensitive} if sensitive else set())
    if not need <= set(keep):
        raise ValueError(f"'columns' must include the quasi-identifiers and the sensitive attribute; missing "
                         f"{sorted(need - set(keep))}.")
    splits = {"train": ["train"], "test": ["test"], "all": ["train", "test"]}[which]
    parts = []
    for s in splits:
        p = _require(base / f"census_income_1994_1995_{s}.csv.gz")
        df = pd.read_csv(p, header=None, names=list(CENSUS_INCOME_COLUMNS), sep=",", skipinitialspace=True,
                         dtype=str, keep_default_na=False, na_values=[],
                         usecols=[CENSUS_INCOME_COLUMNS.index(c) for c in keep])
        parts.append(df)
    df = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    for c in df.columns:
        df[c] = df[c].str.strip()
    if "income" in df.columns:
        df["income"] = df["income"].str.rstrip(".")
    arx = base / "arx"
    order = [c for c in qis] + [c for c in keep if c not in qis]
    attrs = []
    for c in order:
        role = "quasi_identifier" if c in qis else "sensitive" if c == sensitive else "insensitive"
        kind = "numeric" if c in CENSUS_INCOME_NUMERIC else "categorical"
        h = None
        if c in CENSUS_INCOME_ARX_COLUMNS and c in need:
            h = _census_arx_hierarchy(arx, c, unknown_as="?" if c == "country_of_birth_self" else None)
            if kind == "numeric":
                kind = "categorical"  # ARX's labelled age levels, as in the ARX-format loader
        attrs.append(Attribute(c, role, kind, hierarchy=h))
    schema = Schema(tuple(attrs), missing=missing)
    return Table.from_pandas(df, schema)


def load_census_income_arx(sensitive: str | None = None, folder: str | os.PathLike[str] | None = None) -> Table:
    """The ARX-format census-income table (299,285 rows, 9 attributes) with its project-written hierarchies.

    Like :func:`load_adult_arx`: every column is a quasi-identifier with its hierarchy, in file order, except
    ``sensitive`` (usually ``'detailed_occupation_recode'``), which keeps its hierarchy. Age is categorical,
    as in ARX, so that its hierarchy's labels are used. The maximum levels of the 8 quasi-identifiers with
    the occupation code sensitive are ``[4, 1, 3, 2, 1, 2, 2, 2]``.
    """
    if sensitive is not None and sensitive not in CENSUS_INCOME_ARX_COLUMNS:
        raise ValueError(f"Unknown column {sensitive!r}; the ARX census has {list(CENSUS_INCOME_ARX_COLUMNS)}.")
    base = Path(folder) if folder is not None else shared_data_dir() / "census-income" / "arx"
    csv_path = _require(base / "census.csv.gz")
    attrs = []
    for c in CENSUS_INCOME_ARX_COLUMNS:
        h = _census_arx_hierarchy(base, c)
        attrs.append(Attribute(c, "sensitive" if c == sensitive else "quasi_identifier", "categorical", hierarchy=h))
    return Table.from_csv(csv_path, Schema(tuple(attrs)), sep=";")
