"""UCI Adult as two sequential releases (spec sequential-release.md B.4): Taxation T1 and Immigration T2.

The taxonomies are this project's own (written for anoncore; the authors' trees are not redistributable and
not reproducible from the paper, B.6 item 19). Leaf and level counts follow Table 2 where they can:
education 16 leaves / 5 levels, occupation 14 / 3, work-class 8 / 5, marital-status 7 / 4, relationship
6 / 3, sex 2 / 2, race 5 / 3, native-country 41 / 5 (the paper says 40).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from anoncore.data.hierarchy import Hierarchy

__all__ = ["CATEGORICAL", "CONTINUOUS", "SET_A_TOP", "SET_B_TOP", "T2_ATTRS", "adult_taxonomies", "enlarge",
           "load_adult_release"]

#: Taxation attributes of T1 in Table 2 order (continuous first), then the common ones.
CONTINUOUS = ("age", "capital-gain", "capital-loss", "education-num", "fnlwgt", "hours-per-week")
CATEGORICAL = ("education", "occupation", "workclass", "marital-status", "relationship", "sex")
JOIN = ("marital-status", "relationship", "sex")
T2_ATTRS = ("marital-status", "relationship", "sex", "native-country", "race")
#: Attributes of T1 ranked by discriminative power (Section 6.1): Set A Top6, Set B Top7.
SET_A_TOP = ("marital-status", "relationship", "sex", "education", "occupation", "workclass")
SET_B_TOP = ("capital-gain", "age", "marital-status", "education-num", "relationship", "hours-per-week", "sex")

_WORKCLASS = {"ANY": {
    "Employed": {
        "Private-sector": {"Company": ["Private"], "Self-employed": ["Self-emp-not-inc", "Self-emp-inc"]},
        "Public-sector": {"Federal": ["Federal-gov"], "Non-federal": ["Local-gov", "State-gov"]},
    },
    "Not-employed": {"Unpaid": {"No-pay": ["Without-pay"], "Never": ["Never-worked"]}},
}}
_RELATIONSHIP = {"ANY": {"Family": ["Husband", "Wife", "Own-child", "Other-relative"],
                         "Non-family": ["Not-in-family", "Unmarried"]}}
_RACE = {"ANY": {"White-group": ["White"], "Non-white": ["Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other"]}}
_SEX = {"ANY": ["Male", "Female"]}


def adult_taxonomies() -> dict[str, Hierarchy]:
    """Taxonomies of the 8 categorical attributes (roots are ``ANY``)."""
    from anoncore.datasets.loaders import _ADULT_COUNTRY, _ADULT_EDUCATION, _ADULT_MARITAL, _ADULT_OCCUPATION

    def any_root(tree: dict[str, Any]) -> dict[str, Any]:
        (_, sub), = tree.items()
        return {"ANY": sub}

    trees = {"education": any_root(_ADULT_EDUCATION), "occupation": any_root(_ADULT_OCCUPATION),
             "workclass": _WORKCLASS, "marital-status": any_root(_ADULT_MARITAL), "relationship": _RELATIONSHIP,
             "sex": _SEX, "native-country": any_root(_ADULT_COUNTRY), "race": _RACE}
    return {a: Hierarchy.from_nested(t, name=a) for a, t in trees.items()}


def load_adult_release(folder: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """The 45,222 complete UCI Adult records (train then test) with a ``split`` column and ``income``.

    Continuous attributes are int64; the rest are strings.
    """
    from anoncore.datasets.loaders import _read_uci_adult, _require, shared_data_dir

    base = Path(folder) if folder is not None else shared_data_dir() / "uci-adult"
    parts = []
    for name, skip, split in (("adult.data.gz", False, "train"), ("adult.test.gz", True, "test")):
        df = _read_uci_adult(_require(base / name), skip_first=skip)
        df = df[~(df == "?").any(axis=1)].copy()
        df["split"] = split
        parts.append(df)
    df = pd.concat(parts, ignore_index=True)
    for c in CONTINUOUS:
        df[c] = pd.to_numeric(df[c]).astype(np.int64)
    return df


def enlarge(df: pd.DataFrame, alpha: int, q: int = 1, rng: Any = None,
            attrs: tuple[str, ...] = CATEGORICAL + ("native-country", "race")) -> pd.DataFrame:
    """Scalability data (Section 6.1, Figure 5): ``alpha - 1`` variations per record.

    A variation copies the record and gives ``q`` attributes chosen uniformly from ``attrs`` a value drawn
    uniformly from that attribute's domain. Variations are made on the underlying table, before the
    projection into T1 and T2, so the two releases stay population related (spec B.6 item 8; the paper's
    ``q`` is unspecified).
    """
    rng = np.random.default_rng(rng)
    n = len(df)
    out = pd.concat([df] * alpha, ignore_index=True)
    m = n * (alpha - 1)
    if m == 0:
        return out
    pick = np.stack([rng.permutation(len(attrs))[:q] for _ in range(1)] * m) if q == len(attrs) else \
        rng.integers(0, len(attrs), size=(m, q))
    for j, a in enumerate(attrs):
        dom = np.asarray(sorted(df[a].unique()), dtype=object)
        rows = np.flatnonzero((pick == j).any(axis=1)) + n
        if rows.size:
            col = out[a].to_numpy(dtype=object).copy()
            col[rows] = dom[rng.integers(0, dom.size, rows.size)]
            out[a] = col
    return out
