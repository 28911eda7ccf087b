"""Streams for CASTLE experiments: power-law synthetic streams and UCI Adult with the thesis's 10 QI.

The thesis (Cao 2010, §5.7.1, Table 5.4) uses UCI Adult with 10 potential quasi-identifiers but does not give
the hierarchies of its 4 categorical ones; the hierarchies below are built for this project to match the
leaf/level counts of Table 5.4 (education 16 leaves / 5 levels, marital-status 7 / 4, occupation 14 / 3,
native-country 41 / 5 — the raw file has 41 countries, the thesis says 40; we keep all 41). Numeric domains are
those of Table 5.4.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from anoncore.data.hierarchy import Hierarchy
from anoncore.data.schema import Attribute, Schema

__all__ = [
    "ADULT_NUMERIC_DOMAINS",
    "ADULT_QI",
    "adult_stream_schema",
    "load_uci_adult_stream",
    "power_law_stream",
]

#: Table 5.4 of the thesis: numeric QI and their declared domains.
ADULT_NUMERIC_DOMAINS: dict[str, tuple[float, float]] = {
    "age": (17, 90), "fnlwgt": (13492, 1490400), "education-num": (1, 16), "capital-gain": (0, 99999),
    "capital-loss": (0, 4356), "hours-per-week": (1, 99),
}
#: The 10 QI in the order used when varying the QI count (first q of them).
ADULT_QI = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week", "education",
            "marital-status", "occupation", "native-country")

_ADULT_COLUMNS = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
                  "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country",
                  "income"]

_EDUCATION = {"Any-education": {
    "Up-to-HS": {
        "No-HS-diploma": {"Elementary": ["Preschool", "1st-4th", "5th-6th"],
                          "Secondary-incomplete": ["7th-8th", "9th", "10th", "11th", "12th"]},
        "HS-level": {"HS-diploma": ["HS-grad"], "College-no-degree": ["Some-college"]},
    },
    "Post-secondary": {
        "Undergraduate": {"Associate": ["Assoc-acdm", "Assoc-voc"], "Bachelor-level": ["Bachelors"]},
        "Graduate": {"Master-level": ["Masters"], "Professional-doctoral": ["Prof-school", "Doctorate"]},
    },
}}
_MARITAL = {"Any-marital": {
    "Married": {"Spouse-present": ["Married-civ-spouse", "Married-AF-spouse"],
                "Spouse-away": ["Married-spouse-absent", "Separated"]},
    "Not-married": {"Previously-married": ["Divorced", "Widowed"], "Single": ["Never-married"]},
}}
_OCCUPATION = {"Any-occupation": {
    "White-collar": ["Exec-managerial", "Prof-specialty", "Adm-clerical", "Sales", "Tech-support"],
    "Blue-collar": ["Craft-repair", "Machine-op-inspct", "Handlers-cleaners", "Transport-moving", "Farming-fishing"],
    "Service": ["Other-service", "Protective-serv", "Priv-house-serv"],
    "Military": ["Armed-Forces"],
}}
_COUNTRY = {"Any-country": {
    "Americas": {
        "North-America": {"US-and-territories": ["United-States", "Outlying-US(Guam-USVI-etc)", "Puerto-Rico"],
                          "Canada-Mexico": ["Canada", "Mexico"]},
        "Latin-America": {"Central-America": ["Honduras", "Guatemala", "Nicaragua", "El-Salvador"],
                          "Caribbean": ["Cuba", "Jamaica", "Dominican-Republic", "Haiti", "Trinadad&Tobago"],
                          "South-America": ["Ecuador", "Columbia", "Peru"]},
    },
    "Europe": {
        "Western-Europe": {"British-Isles": ["England", "Ireland", "Scotland"],
                           "Continental-West": ["France", "Germany", "Holand-Netherlands"]},
        "Southern-Eastern-Europe": {"Southern-Europe": ["Greece", "Italy", "Portugal"],
                                    "Eastern-Europe": ["Poland", "Hungary", "Yugoslavia"]},
    },
    "Asia": {
        "East-Asia": {"China-region": ["China", "Hong", "Taiwan"], "Japan-Korea": ["Japan", "South"]},
        "South-Southeast-Asia": {"Southeast-Asia": ["Cambodia", "Laos", "Vietnam", "Thailand", "Philippines"],
                                 "South-West-Asia": ["India", "Iran"]},
    },
}}


def _hierarchies() -> dict[str, Hierarchy]:
    return {"education": Hierarchy.from_nested(_EDUCATION, name="education"),
            "marital-status": Hierarchy.from_nested(_MARITAL, name="marital-status"),
            "occupation": Hierarchy.from_nested(_OCCUPATION, name="occupation"),
            "native-country": Hierarchy.from_nested(_COUNTRY, name="native-country")}


def adult_stream_schema(n_qi: int = 10, sensitive: str | None = None, qi: tuple[str, ...] | None = None) -> Schema:
    """Schema of the UCI Adult stream: the first ``n_qi`` of :data:`ADULT_QI` (or ``qi``), a ``pid`` column.

    Examples
    --------
    >>> s = adult_stream_schema(4)
    >>> s.quasi_identifiers, s.with_role("pid")
    (('age', 'fnlwgt', 'education-num', 'capital-gain'), ('pid',))
    >>> adult_stream_schema(10)["native-country"].hierarchy.n_leaves
    41
    """
    hs = _hierarchies()
    names = tuple(qi) if qi is not None else ADULT_QI[:n_qi]
    attrs = []
    for name in names:
        if name in ADULT_NUMERIC_DOMAINS:
            attrs.append(Attribute(name, "quasi_identifier", "numeric", domain=ADULT_NUMERIC_DOMAINS[name]))
        else:
            attrs.append(Attribute(name, "quasi_identifier", "categorical", hierarchy=hs[name]))
    if sensitive is not None:
        if sensitive in hs:
            attrs.append(Attribute(sensitive, "sensitive", "categorical", hierarchy=hs[sensitive]))
        else:
            attrs.append(Attribute(sensitive, "sensitive", "numeric" if sensitive in ADULT_NUMERIC_DOMAINS
                                   else "categorical"))
    attrs.append(Attribute("pid", "pid", "numeric"))
    return Schema(tuple(attrs))


def load_uci_adult_stream(split: str = "train", folder: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """UCI Adult without rows holding '?', in file order, with a ``pid`` column (one tuple per person).

    ``split='train'`` gives ``adult.data`` (30,162 rows, the thesis's UCI-Adult); ``'all'`` appends the clean
    ``adult.test`` rows (45,222 rows, the thesis's SFU-Adult). Raises FileNotFoundError when the data is absent.
    """
    if split not in ("train", "all"):
        raise ValueError(f"The 'split' parameter of load_uci_adult_stream must be a str among {{'train', 'all'}}. "
                         f"Got {split!r} instead.")
    if folder is None:
        from anoncore.datasets import shared_data_dir

        base = Path(shared_data_dir()) / "uci-adult"
    else:
        base = Path(folder)
    files = [base / "adult.data.gz"] + ([base / "adult.test.gz"] if split == "all" else [])
    frames = []
    for f in files:
        if not f.exists():
            raise FileNotFoundError(f"UCI Adult file {f} not found (set ANONCORE_SHARED_DATA)")
        df = pd.read_csv(f, header=None, names=_ADULT_COLUMNS, sep=",", skipinitialspace=True, dtype=str,
                         comment="|", skip_blank_lines=True, keep_default_na=False)
        df = df[(df != "?").all(axis=1)]
        df = df[df["age"].str.len() > 0]
        frames.append(df)
    out = pd.concat(frames, ignore_index=True)
    out["income"] = out["income"].str.rstrip(".")
    for c in ADULT_NUMERIC_DOMAINS:
        out[c] = out[c].astype(np.int64)
    out["pid"] = np.arange(len(out), dtype=np.int64)
    return out


def power_law_stream(
    n: int,
    n_numeric: int = 6,
    n_categorical: int = 4,
    alpha: float = 1.2,
    n_values: int = 100,
    n_persons: int | None = None,
    rng: int | np.random.Generator | None = None,
) -> tuple[Schema, pd.DataFrame]:
    """A synthetic stream whose QI values follow p(v) = c / v**alpha on {1..n_values} (genzipf style, §5.7.1).

    Numeric QI take the value v (domain [1, n_values]); categorical QI have 16 leaves under 4 groups (3 levels)
    and pick leaf v-1 with the same law truncated to 16 values. ``n_persons=None`` gives every tuple its own
    person; otherwise pids are drawn uniformly from ``n_persons``. A column ``sa`` (8 values) is added.

    Examples
    --------
    >>> schema, df = power_law_stream(1000, n_numeric=2, n_categorical=1, rng=0)
    >>> df.shape, schema.quasi_identifiers
    ((1000, 5), ('x0', 'x1', 'c0'))
    """
    g = np.random.default_rng(rng)
    v = np.arange(1, n_values + 1)
    p = 1.0 / v ** float(alpha)
    p /= p.sum()
    data: dict[str, Any] = {}
    qi: dict[str, Any] = {}
    for j in range(n_numeric):
        data[f"x{j}"] = g.choice(v, n, p=p).astype(np.int64)
        qi[f"x{j}"] = {"kind": "numeric", "domain": (1, n_values)}
    leaves16 = np.arange(1, 17)
    p16 = 1.0 / leaves16 ** float(alpha)
    p16 /= p16.sum()
    for j in range(n_categorical):
        h = Hierarchy.from_nested({f"*{j}": {f"g{j}_{a}": [f"v{j}_{a}{b}" for b in range(4)] for a in range(4)}},
                                  name=f"c{j}")
        data[f"c{j}"] = np.asarray(h.leaves, dtype=object)[g.choice(16, n, p=p16)]
        qi[f"c{j}"] = h
    data["sa"] = g.integers(0, 8, n)
    data["pid"] = np.arange(n, dtype=np.int64) if n_persons is None else g.integers(0, n_persons, n)
    return Schema.build(qi, sensitive="sa", pid="pid"), pd.DataFrame(data)
