"""Synthetic census: the embedded default table, shaped like the Cao thesis's CENSUS extract.

The thesis (spec ``sabre-burel.md`` §6.2, Table 3.4) describes a 500,000-row IPUMS extract that is not
redistributable: age (79 values, numeric, hierarchy height 4), sex (2, height 1), education (17, numeric,
height 4), marital status (6, height 2), race (9, height 1), work class (10, height 3), birth place (83,
height 2) and a 50-class salary (the sensitive attribute; most frequent class 12 at 4.8402 %, least
frequent class 49 at 0.2018 %). This module generates a table of that shape with the dependencies one
expects in census data, plus an ``occupation`` attribute (23 values, hierarchy height 2) for categorical
sensitive-attribute use.

The generative model (every probability table below was written for this project; they are plausible,
not fitted to any survey):

1. ``age`` from a fixed marginal (flat 16-55, then declining), ``sex`` and ``race`` independent of age.
2. ``marital_status`` given age (never married falls with age, widowed rises after 55, divorce peaks in
   middle age).
3. ``education`` given age (younger cohorts are more educated; people under 25 cannot have finished the
   higher levels yet).
4. ``birth_place`` given race (share born abroad and region of birth depend on race).
5. ``work_class`` given age band and education band (teenagers and the retired are mostly not in the
   labour force; government and incorporated self-employment rise with education).
6. ``occupation`` given education band, sex and whether the person works.
7. ``salary`` class from a latent score (education, a concave age profile, sex, occupation and work
   class effects, Gaussian noise) cut at the quantiles of the target 50-class marginal, so the marginal
   matches the thesis's extremes up to rounding of ``n``.

Every draw is one vectorised pass over ``n`` uniforms; conditional categorical draws use a single
``searchsorted`` over the row-shifted cumulative tables, so 1,000,000 rows take a few hundred
milliseconds and the output depends only on the seed.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from anoncore._validation import check_int
from anoncore.data.builders import interval_hierarchy
from anoncore.data.hierarchy import Hierarchy
from anoncore.data.schema import Attribute, Schema
from anoncore.data.table import Table

__all__ = [
    "CENSUS_COLUMNS",
    "CENSUS_QUASI_IDENTIFIERS",
    "SALARY_MARGINAL",
    "census_hierarchies",
    "synthetic_census",
    "synthetic_census_frame",
    "synthetic_census_schema",
]

#: The seven quasi-identifier candidates, in the thesis's order (the default QI set is a prefix).
CENSUS_QUASI_IDENTIFIERS = ("age", "sex", "education", "marital_status", "race", "work_class", "birth_place")
#: Every column of the synthetic census, in table order.
CENSUS_COLUMNS = CENSUS_QUASI_IDENTIFIERS + ("occupation", "salary")

AGES = np.arange(16, 95)  # 79 values
EDUCATION_LEVELS = np.arange(1, 18)  # 17 ordered levels, see _EDUCATION_NAMES
SALARY_CLASSES = np.arange(1, 51)  # 50 ordered classes

#: Meaning of the education levels 1..17 (documentation only; the attribute is numeric).
EDUCATION_NAMES = (
    "no schooling", "grades 1-4", "grades 5-6", "grades 7-8", "grade 9", "grade 10", "grade 11",
    "grade 12 no diploma", "high school graduate", "some college <1 year", "some college 1+ years",
    "associate vocational", "associate academic", "bachelor", "master", "professional degree", "doctorate",
)

SEXES = ("male", "female")
RACES = ("white", "black", "american-indian-alaska-native", "chinese", "japanese", "other-asian-pacific",
         "other-race", "two-major-races", "three-or-more-races")
MARITAL = {"*": {
    "married": ["married-spouse-present", "married-spouse-absent"],
    "previously-married": ["separated", "divorced", "widowed"],
    "single": ["never-married"],
}}
WORK_CLASS = {"*": {
    "employed": {
        "private": ["private-for-profit", "private-nonprofit"],
        "government": ["federal-government", "state-government", "local-government"],
    },
    "self-or-not-working": {
        "self-employed": ["self-employed-incorporated", "self-employed-not-incorporated"],
        "not-paid": ["without-pay", "never-worked", "not-in-labour-force"],
    },
}}
# Rough 1990s populations (millions) only set the relative frequency of US birth states.
_US_STATES = {
    "us-northeast": {"Connecticut": 3.3, "Maine": 1.2, "Massachusetts": 6.0, "New Hampshire": 1.1,
                     "Rhode Island": 1.0, "Vermont": 0.6, "New Jersey": 7.7, "New York": 18.0,
                     "Pennsylvania": 11.9},
    "us-midwest": {"Illinois": 11.4, "Indiana": 5.5, "Michigan": 9.3, "Ohio": 10.8, "Wisconsin": 4.9,
                   "Iowa": 2.8, "Kansas": 2.5, "Minnesota": 4.4, "Missouri": 5.1, "Nebraska": 1.6,
                   "North Dakota": 0.6, "South Dakota": 0.7},
    "us-south": {"Delaware": 0.7, "District of Columbia": 0.6, "Florida": 12.9, "Georgia": 6.5,
                 "Maryland": 4.8, "North Carolina": 6.6, "South Carolina": 3.5, "Virginia": 6.2,
                 "West Virginia": 1.8, "Alabama": 4.0, "Kentucky": 3.7, "Mississippi": 2.6, "Tennessee": 4.9,
                 "Arkansas": 2.4, "Louisiana": 4.2, "Oklahoma": 3.1, "Texas": 17.0},
    "us-west": {"Arizona": 3.7, "Colorado": 3.3, "Idaho": 1.0, "Montana": 0.8, "Nevada": 1.2,
                "New Mexico": 1.5, "Utah": 1.7, "Wyoming": 0.5, "Alaska": 0.55, "California": 29.8,
                "Hawaii": 1.1, "Oregon": 2.8, "Washington": 4.9},
}
_FOREIGN = {
    "other-americas": {"Canada": 3, "Mexico": 10, "Cuba": 3, "Dominican Republic": 2, "Jamaica": 1.5,
                       "Haiti": 1, "El Salvador": 1.5, "Guatemala": 1, "Colombia": 1.2, "Brazil": 0.8},
    "europe": {"United Kingdom": 2, "Ireland": 1, "Germany": 3, "Italy": 2.5, "Poland": 1.5, "France": 0.8,
               "Greece": 0.7, "Portugal": 0.8, "Russia": 1.5, "Netherlands": 0.5},
    "asia": {"China": 3, "Japan": 1.5, "Korea": 2, "Philippines": 3, "India": 2.5, "Vietnam": 2,
             "Taiwan": 1, "Iran": 1, "Pakistan": 0.7},
    "africa-oceania": {"Nigeria": 1, "Egypt": 0.7, "Australia": 0.8},
}
OCCUPATION = {"*": {
    "management-professional": ["manager", "engineer", "scientist", "teacher", "health-professional",
                                "lawyer"],
    "technical-sales-office": ["technician", "sales", "clerical"],
    "service": ["protective-service", "food-service", "personal-care", "cleaning"],
    "farming-fishing": ["farmer", "farm-worker", "fishing-forestry"],
    "craft-repair": ["construction-trade", "mechanic", "precision-production"],
    "operators-labourers": ["machine-operator", "transport-driver", "labourer"],
    "no-occupation": ["none"],
}}


def _salary_marginal() -> NDArray[np.float64]:
    """The 50-class salary marginal: rises to class 12 (4.8402 %), decays to class 49 (0.2018 %).

    Class 50 is the top-coded class and carries a small bump, as top codes do. Classes other than 12 and
    49 are rescaled so that the vector sums to one.
    """
    p12, p49 = 0.048402, 0.002018  # Cao thesis Table 3.4 text (spec sabre-burel.md §6.2)
    i = SALARY_CLASSES.astype(np.float64)
    p = np.empty(50)
    up = i <= 12
    p[up] = p12 * (0.3588 + 0.6412 * (i[up] - 1) / 11)
    dn = (i >= 12) & (i <= 49)
    p[dn] = p12 * (p49 / p12) ** (((i[dn] - 12) / 37) ** 1.2)
    p[49] = 2.2 * p49
    rest = np.ones(50, dtype=bool)
    rest[[11, 48]] = False
    p[rest] *= (1.0 - p12 - p49) / p[rest].sum()
    p[11], p[48] = p12, p49
    p.setflags(write=False)
    return p


#: Target probability of salary classes 1..50 (index 0 is class 1).
SALARY_MARGINAL = _salary_marginal()


# ---------------------------------------------------------------------- hierarchies
def _birth_place_tree() -> dict[str, Any]:
    regions: dict[str, Any] = {}
    for r, states in _US_STATES.items():
        regions[r] = list(states)
    for r, countries in _FOREIGN.items():
        regions[r] = list(countries)
    return {"*": regions}


@functools.lru_cache(maxsize=1)
def census_hierarchies() -> dict[str, Hierarchy]:
    """The generalization hierarchies of the synthetic census (written for this project).

    ========== ===================================================================== ======
    attribute  levels (leaf to root)                                                  height
    ========== ===================================================================== ======
    age        16..94; 5-year ``[15-19]``; 10-year; 20-year ``[15-34]``; ``*``         4
    sex        value; ``*``                                                            1
    education  1..17; 3 levels ``[1-3]``; 6 ``[1-6]``; 12 ``[1-12]``; ``*``              4
    marital    value; married / previously-married / single; ``*``                     2
    race       value; ``*``                                                            1
    work_class value; private / government / self-employed / not-paid; employed /
               self-or-not-working; ``*``                                              3
    birth_pl.  state or country; 4 US census regions + 4 world regions; ``*``          2
    occupation value; 7 major groups; ``*``                                            2
    salary     class 1..50; 5 classes ``[1-5]``; 10 classes; ``*``                       3
    ========== ===================================================================== ======

    Examples
    --------
    >>> hs = census_hierarchies()
    >>> [hs[c].height for c in ("age", "sex", "education", "marital_status", "race", "work_class",
    ...                         "birth_place")]
    [4, 1, 4, 2, 1, 3, 2]
    """
    hs = {
        "age": interval_hierarchy(AGES, widths=[5, 10, 20], start=15, name="age"),
        "sex": Hierarchy.from_nested({"*": list(SEXES)}, name="sex"),
        "education": interval_hierarchy(EDUCATION_LEVELS, widths=[3, 6, 12], start=1, name="education"),
        "marital_status": Hierarchy.from_nested(MARITAL, name="marital_status"),
        "race": Hierarchy.from_nested({"*": list(RACES)}, name="race"),
        "work_class": Hierarchy.from_nested(WORK_CLASS, name="work_class"),
        "birth_place": Hierarchy.from_nested(_birth_place_tree(), name="birth_place"),
        "occupation": Hierarchy.from_nested(OCCUPATION, name="occupation"),
        "salary": interval_hierarchy(SALARY_CLASSES, widths=[5, 10], start=1, name="salary"),
    }
    return hs


def synthetic_census_schema(sensitive: str | None = "salary", n_qi: int = 7) -> Schema:
    """Schema of the synthetic census.

    Parameters
    ----------
    sensitive : {'salary', 'occupation'} or None, default='salary'
        The sensitive attribute; the other one is published as insensitive. ``None`` makes both insensitive.
    n_qi : int, default=7
        The first ``n_qi`` of :data:`CENSUS_QUASI_IDENTIFIERS` are quasi-identifiers (the thesis varies the QI
        set as a prefix); the remaining ones are insensitive.

    Examples
    --------
    >>> s = synthetic_census_schema("occupation", n_qi=3)
    >>> s.quasi_identifiers, s.sensitive
    (('age', 'sex', 'education'), ('occupation',))
    """
    if sensitive not in ("salary", "occupation", None):
        raise ValueError(f"The 'sensitive' parameter of synthetic_census_schema must be 'salary', 'occupation' "
                         f"or None. Got {sensitive!r} instead.")
    n_qi = check_int(n_qi, "n_qi", "synthetic_census_schema", 1, len(CENSUS_QUASI_IDENTIFIERS))
    hs = census_hierarchies()
    numeric = {"age": (16.0, 94.0), "education": (1.0, 17.0), "salary": (1.0, 50.0)}
    attrs = []
    for j, c in enumerate(CENSUS_COLUMNS):
        if c in CENSUS_QUASI_IDENTIFIERS:
            role = "quasi_identifier" if j < n_qi else "insensitive"
        else:
            role = "sensitive" if c == sensitive else "insensitive"
        if c in numeric:
            attrs.append(Attribute(c, role, "numeric", hierarchy=hs[c], domain=numeric[c]))
        else:
            attrs.append(Attribute(c, role, "categorical", hierarchy=hs[c]))
    return Schema(tuple(attrs))


# ---------------------------------------------------------------------- conditional tables
def _cdf_rows(w: NDArray[np.float64]) -> NDArray[np.float64]:
    """Row-normalised cumulative table (last column exactly 1)."""
    w = np.atleast_2d(np.asarray(w, dtype=np.float64))
    c = np.cumsum(w / w.sum(axis=1, keepdims=True), axis=1)
    c[:, -1] = 1.0
    return c


_GUIDE = 1024  # guide-table resolution for the conditional draws


def _guide(cdf: NDArray[np.float64]) -> NDArray[np.intp]:
    """Guide table (Chen and Asau): ``guide[c, b]`` is the category of ``u = b / _GUIDE`` under row ``c``."""
    grid = np.arange(_GUIDE, dtype=np.float64) / _GUIDE
    return np.stack([np.searchsorted(row, grid, side="right") for row in cdf]).astype(np.intp)


def _draw(cdf: NDArray[np.float64], guide: NDArray[np.intp], cond: NDArray[np.intp] | None,
          u: NDArray[np.float64]) -> NDArray[np.intp]:
    """Inverse-CDF draw of one category per row from row ``cond[i]`` of ``cdf`` with uniforms ``u``.

    The guide table gives the category at the left end of ``u``'s bin; a few vectorised steps move the
    rows whose bin holds a category boundary to the first category with ``cdf > u``.
    """
    k = cdf.shape[1]
    b = (u * _GUIDE).astype(np.intp)
    base = np.zeros(u.shape[0], dtype=np.intp) if cond is None else np.asarray(cond, dtype=np.intp) * k
    j = guide.ravel()[(base // k) * _GUIDE + b] if cond is not None else guide[0][b]
    flat = cdf.ravel()
    active = np.flatnonzero(flat[base + j] <= u)
    while active.size:
        j[active] += 1
        still = flat[base[active] + j[active]] <= u[active]
        active = active[still]
    return j  # type: ignore[no-any-return]


def _draw_from(tables: dict[str, Any], key: str, cond: NDArray[np.intp] | None,
               u: NDArray[np.float64]) -> NDArray[np.intp]:
    cdf, guide = tables[key]
    return _draw(cdf, guide, cond, u)


def _age_weights() -> NDArray[np.float64]:
    a = AGES.astype(np.float64)
    w = np.where(a <= 55, 1.0, 1.0 - 0.5 * (a - 55) / 15)
    old = a > 70
    w[old] = 0.5 * np.exp(-(a[old] - 70) / 8.0)
    w[a <= 17] = 0.8
    return w


def _marital_given_age() -> NDArray[np.float64]:
    """Rows: ages 16..94; columns in leaf order of MARITAL."""
    a = AGES.astype(np.float64)
    never = 0.04 + 0.94 / (1 + np.exp((a - 26) / 3.5))
    widowed = 0.005 + 0.5 / (1 + np.exp(-(a - 76) / 6))
    divorced = 0.02 + 0.13 * np.exp(-0.5 * ((a - 50) / 12) ** 2)
    separated = 0.005 + 0.025 * np.exp(-0.5 * ((a - 38) / 10) ** 2)
    absent = np.full_like(a, 0.015)
    married = np.clip(1 - never - widowed - divorced - separated - absent, 0.01, None)
    return np.stack([married, absent, separated, divorced, widowed, never], axis=1)


def _education_given_age() -> NDArray[np.float64]:
    base = np.array([0.6, 1.0, 1.5, 3.0, 2.5, 3.0, 3.5, 2.5, 30.0, 6.0, 12.0, 3.5, 4.0, 16.0, 6.0, 2.0, 1.2])
    lv = EDUCATION_LEVELS.astype(np.float64)
    rows = []
    for a in (int(x) for x in AGES):
        # Cohort effect: older people have less schooling.
        lam = 0.35 - 0.012 * max(0, a - 30)
        w = base * np.exp(lam * (lv - 9) / 4)
        cap = {16: 6, 17: 7, 18: 9, 19: 10, 20: 11, 21: 13, 22: 14, 23: 15, 24: 16}.get(int(a), 17)
        w[lv > cap] = 0.0
        if a <= 18:
            w[lv == cap] *= 6  # still in school: mostly at the level of their age
        rows.append(w)
    return np.array(rows)


def _birth_place_given_race() -> tuple[NDArray[np.float64], list[str]]:
    labels: list[str] = []
    region_of: list[str] = []
    weight: list[float] = []
    for r, d in list(_US_STATES.items()) + list(_FOREIGN.items()):
        for k, v in d.items():
            labels.append(k)
            region_of.append(r)
            weight.append(float(v))
    w = np.array(weight)
    reg = np.array(region_of)
    us = np.char.startswith(reg.astype(str), "us-")
    # Born abroad, and the split over world regions, per race (RACES order).
    abroad = [0.07, 0.07, 0.03, 0.65, 0.35, 0.70, 0.45, 0.15, 0.10]
    world = {  # other-americas, europe, asia, africa-oceania
        "white": (0.40, 0.55, 0.02, 0.03), "black": (0.75, 0.03, 0.01, 0.21),
        "american-indian-alaska-native": (0.9, 0.05, 0.03, 0.02), "chinese": (0.03, 0.01, 0.95, 0.01),
        "japanese": (0.03, 0.01, 0.95, 0.01), "other-asian-pacific": (0.02, 0.01, 0.95, 0.02),
        "other-race": (0.9, 0.03, 0.05, 0.02), "two-major-races": (0.5, 0.2, 0.25, 0.05),
        "three-or-more-races": (0.5, 0.2, 0.25, 0.05),
    }
    foreign_regions = list(_FOREIGN)
    rows = []
    for race, pa in zip(RACES, abroad):
        row = np.where(us, w / w[us].sum() * (1 - pa), 0.0)
        for fr, share in zip(foreign_regions, world[race]):
            m = reg == fr
            row[m] = w[m] / w[m].sum() * pa * share
        rows.append(row)
    return np.array(rows), labels


# Work-class leaves, in the tree's order.
_WC_LEAVES = ("private-for-profit", "private-nonprofit", "federal-government", "state-government",
              "local-government", "self-employed-incorporated", "self-employed-not-incorporated",
              "without-pay", "never-worked", "not-in-labour-force")
_WC_WORKING = np.array([1, 1, 1, 1, 1, 1, 1, 1, 0, 0], dtype=bool)
_AGE_BANDS = np.array([16, 20, 25, 35, 45, 55, 62, 67, 95])  # 8 bands [16,20) ... [67,95)


def _edu_band(edu: NDArray[np.int64]) -> NDArray[np.intp]:
    """0: below high school, 1: high school, 2: some college/associate, 3: bachelor or more."""
    return np.searchsorted(np.array([9, 10, 14]), edu, side="right").astype(np.intp)


def _work_class_given_ageband_eduband() -> NDArray[np.float64]:
    rows = []
    nilf = [0.55, 0.25, 0.15, 0.14, 0.16, 0.28, 0.55, 0.85]
    never = [0.25, 0.08, 0.03, 0.01, 0.01, 0.01, 0.01, 0.01]
    self_emp = [0.01, 0.03, 0.07, 0.10, 0.12, 0.13, 0.14, 0.15]
    for b in range(8):
        for e in range(4):
            gov = [0.05, 0.10, 0.15, 0.25][e] * (0.3 if b == 0 else 1.0)
            nonprofit = [0.03, 0.05, 0.08, 0.12][e]
            inc = [0.15, 0.25, 0.30, 0.40][e]
            n_e = nilf[b] * [1.6, 1.0, 0.8, 0.6][e]
            work = max(0.0, 1 - n_e - never[b])
            s = self_emp[b]
            emp = work * (1 - s - 0.005)
            row = [emp * (1 - gov - nonprofit), emp * nonprofit, emp * gov * 0.2, emp * gov * 0.3,
                   emp * gov * 0.5, work * s * inc, work * s * (1 - inc), work * 0.005, never[b], n_e]
            rows.append(row)
    return np.array(rows)


_OCC_LEAVES = [leaf for g in OCCUPATION["*"].values() for leaf in g]
_OCC_GROUP = np.array([gi for gi, g in enumerate(OCCUPATION["*"].values()) for _ in g])


def _occupation_given_eduband_sex_working() -> NDArray[np.float64]:
    # Major-group propensity per education band (groups in OCCUPATION order, 'no-occupation' last).
    grp = np.array([
        [0.04, 0.15, 0.25, 0.08, 0.20, 0.28],
        [0.10, 0.28, 0.18, 0.04, 0.18, 0.22],
        [0.22, 0.36, 0.14, 0.02, 0.14, 0.12],
        [0.62, 0.26, 0.05, 0.01, 0.03, 0.03],
    ])
    # Within-group leaf weights and a multiplier for women (occupational segregation).
    within = {"manager": 3, "engineer": 1.5, "scientist": 0.6, "teacher": 2, "health-professional": 1.8,
              "lawyer": 0.5, "technician": 1, "sales": 2, "clerical": 2.5, "protective-service": 0.6,
              "food-service": 1.5, "personal-care": 1, "cleaning": 1.2, "farmer": 0.8, "farm-worker": 1,
              "fishing-forestry": 0.3, "construction-trade": 1.5, "mechanic": 1, "precision-production": 1,
              "machine-operator": 1.3, "transport-driver": 1, "labourer": 1.2, "none": 1}
    female = {"engineer": 0.2, "teacher": 2.5, "health-professional": 2.0, "clerical": 3.0,
              "personal-care": 3.0, "protective-service": 0.3, "construction-trade": 0.05, "mechanic": 0.05,
              "transport-driver": 0.2, "farmer": 0.3, "fishing-forestry": 0.2, "labourer": 0.4,
              "machine-operator": 0.8}
    rows = []
    for e in range(4):
        for sex in SEXES:
            for working in (False, True):
                w = np.zeros(len(_OCC_LEAVES))
                for i, leaf in enumerate(_OCC_LEAVES):
                    g = _OCC_GROUP[i]
                    if leaf == "none":
                        w[i] = 0.0 if working else 0.85
                        continue
                    m = female.get(leaf, 1.0) if sex == "female" else 1.0
                    gsum = sum(within[x] for x, gg in zip(_OCC_LEAVES, _OCC_GROUP) if gg == g)
                    w[i] = grp[e, g] * within[leaf] / gsum * m * (1.0 if working else 0.15 / 0.85)
                rows.append(w)
    return np.array(rows)


@functools.lru_cache(maxsize=1)
def _tables() -> dict[str, Any]:
    bp, bp_labels = _birth_place_given_race()
    out: dict[str, Any] = {
        "age": _cdf_rows(_age_weights()),
        "sex": _cdf_rows(np.array([0.49, 0.51])),
        "race": _cdf_rows(np.array([0.80, 0.11, 0.01, 0.01, 0.005, 0.03, 0.03, 0.012, 0.003])),
        "marital": _cdf_rows(_marital_given_age()),
        "education": _cdf_rows(_education_given_age()),
        "birth_place": _cdf_rows(bp),
        "birth_place_labels": bp_labels,
        "work_class": _cdf_rows(_work_class_given_ageband_eduband()),
        "occupation": _cdf_rows(_occupation_given_eduband_sex_working()),
        "salary_cuts": np.cumsum(SALARY_MARGINAL)[:-1],
    }
    for key in ("age", "sex", "race", "marital", "education", "birth_place", "work_class", "occupation"):
        out[key] = (out[key], _guide(out[key]))
    return out


# Salary latent-score effects.
_OCC_SALARY = np.array([0.9, 0.5, -0.1, -0.5, -0.6, 0.2, 0.1, -0.3, -0.2, -0.4, -0.3, -0.2, 0.5,
                        -0.8, 0.1, 0.0, 0.1, 0.1, 0.2, 0.0, 0.1, -0.2, -1.2])  # _OCC_LEAVES order
_WC_SALARY = np.array([0.0, -0.1, 0.2, 0.1, 0.05, 0.5, -0.1, -1.0, -1.2, -1.0])  # _WC_LEAVES order


def _generate(n: int, rng: int | np.random.Generator | None) -> dict[str, NDArray[np.intp]]:
    """Draw the columns as 0-based indexes into the generator's own value lists (the numpy reference of the
    C++ path, :func:`_generate_codes`, which gives the same rows)."""
    n = check_int(n, "n", "synthetic_census", 1)
    gen = np.random.default_rng(rng)
    t = _tables()
    u = gen.random((7, n))
    age = _draw_from(t, "age", None, u[0])
    sex = _draw_from(t, "sex", None, u[1])
    race = _draw_from(t, "race", None, u[2])
    marital = _draw_from(t, "marital", age, u[3])
    edu = _draw_from(t, "education", age, u[4])
    birth = _draw_from(t, "birth_place", race, u[5])
    band = np.searchsorted(_AGE_BANDS, AGES[age], side="right") - 1
    eb = _edu_band(EDUCATION_LEVELS[edu])
    wc = _draw_from(t, "work_class", band * 4 + eb, u[6])
    working = _WC_WORKING[wc]
    u2 = gen.random(n)
    occ = _draw_from(t, "occupation", (eb * 2 + sex) * 2 + working, u2)
    # Salary: latent score cut at the quantiles of the target marginal.
    a = AGES[age].astype(np.float64)
    noise = gen.standard_normal(n)
    score = (0.16 * EDUCATION_LEVELS[edu] - 0.7 * ((a - 50.0) / 20.0) ** 2 + 0.25 * (sex == 0)
             + _OCC_SALARY[occ] + _WC_SALARY[wc] + 0.55 * noise)
    if n > 1:
        cuts = np.quantile(score, t["salary_cuts"], method="inverted_cdf")
        salary = np.searchsorted(cuts, score, side="left")
    else:
        salary = np.searchsorted(t["salary_cuts"], np.array([0.5]))
    return {"age": age, "sex": sex, "education": edu, "marital_status": marital, "race": race,
            "work_class": wc, "birth_place": birth, "occupation": occ, "salary": salary}


_CHUNK = 1 << 16  # rows per chunk of the C++ path (fixed: the rows never depend on the thread count)


@functools.lru_cache(maxsize=2)
def _model(codes: bool) -> Any:
    """The C++ generator's tables: draws in the order of :func:`_generate`, score terms computed by the same
    numpy expressions per value (so every term rounds as in the reference), code maps (codes or identity)."""
    from anoncore import _core

    t = _tables()
    a = AGES.astype(np.float64)
    terms = [0.16 * EDUCATION_LEVELS, 0.7 * ((a - 50.0) / 20.0) ** 2, 0.25 * (np.arange(2) == 0),
             _OCC_SALARY, _WC_SALARY]
    keys = ("age", "sex", "race", "marital", "education", "birth_place", "work_class", "occupation")
    vals = _values()
    maps = ([_code_maps()[c] for c in CENSUS_COLUMNS] if codes
            else [np.arange(len(vals[c]), dtype=np.int32) for c in CENSUS_COLUMNS])
    return _core.datasets.CensusModel(
        [np.ascontiguousarray(t[k][0]) for k in keys], [np.ascontiguousarray(t[k][1], dtype=np.int64) for k in keys],
        _GUIDE, (np.searchsorted(_AGE_BANDS, AGES, side="right") - 1).astype(np.int64),
        _edu_band(EDUCATION_LEVELS).astype(np.int64), _WC_WORKING.astype(np.int64),
        [np.ascontiguousarray(x, dtype=np.float64) for x in terms], 0.55,
        [np.ascontiguousarray(m, dtype=np.int32) for m in maps])


def _cut_ranks(n: int) -> NDArray[np.int64]:
    """0-based ranks of numpy's ``quantile(..., method='inverted_cdf')`` at the salary cuts (its own formula)."""
    index = n * _tables()["salary_cuts"] - 1
    previous = np.floor(index)
    res = np.where(index - previous == 0, previous, previous + 1).astype(np.intp)
    res[res < 0] = 0
    return np.asarray(res, dtype=np.int64)


def _generate_codes(n: int, rng: int | np.random.Generator | None, n_threads: int | None, *,
                    codes: bool = True, caller: str = "synthetic_census",
                    salary: NDArray[np.int32] | None = None) -> NDArray[np.int32]:
    """The rows of :func:`_generate` as an (n, 9) int32 matrix (codes, or generator indexes with codes=False).
    ``salary`` (n int32, when given) receives the last column contiguously, written in the same pass.

    The uniforms are numpy's: with a PCG64 generator (``default_rng``) every stream is split into spans of
    rows, each span's eight streams reached with ``advance`` on their own bit generators, and the C++ kernel
    draws them through numpy's bit generator interface on its threads (no Python, no GIL per chunk); other bit
    generators draw them in one call. The normals are drawn in one numpy call (their stream position is known
    only sequentially), on a thread of their own beside the kernel. The generator the caller passed ends in the
    same state as after :func:`_generate`.
    """
    from concurrent.futures import ThreadPoolExecutor

    from anoncore import _core
    from anoncore._validation import check_n_threads

    n = check_int(n, "n", caller, 1)
    threads = check_n_threads(n_threads, caller) or _available_cores()
    gen = np.random.default_rng(rng)
    model = _model(codes)
    out = np.empty((n, len(CENSUS_COLUMNS)), dtype=np.int32)
    score = np.empty(n, dtype=np.float64)
    bitgen: Any = gen.bit_generator
    pcg = type(bitgen) is np.random.PCG64
    base: dict[str, Any] = dict(bitgen.state)

    def normals(z: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
        if pcg:
            bitgen.advance(8 * n)
        z = gen.standard_normal(n) if z is None else gen.standard_normal(out=z)
        if pcg:  # advance() resets the 32-bit buffer, which drawing doubles leaves alone
            st = bitgen.state
            st["has_uint32"], st["uinteger"] = base["has_uint32"], base["uinteger"]
            bitgen.state = st
        return z

    if pcg:
        # spans of whole chunks, about eight per thread (taken by the threads as they free up); each span's eight
        # streams on bit generators of their own, positioned with advance (k n + the span's first row)
        n_chunks = (n + _CHUNK - 1) // _CHUNK
        n_spans = max(1, min(n_chunks, 8 * threads if threads > 1 else 1))
        bounds = np.array([min(n, (n_chunks * j // n_spans) * _CHUNK) for j in range(n_spans + 1)], dtype=np.int64)
        seq = np.random.SeedSequence(0)  # (a placeholder seed: every state is set from the caller's)
        gens = []
        for j in range(n_spans):
            for k in range(8):
                bg: Any = np.random.PCG64(seq)
                bg.state = base
                bg.advance(k * n + int(bounds[j]))
                gens.append(bg)
        spans = _core.datasets.CensusSpans(model, gens, bounds, out, score)
        if threads <= 1 or n_chunks <= 1:
            noise = normals()
            spans.draw(1)
        else:
            # the normals' array is first touched by every thread (40M rows on 16 cores: the kernel zeroing
            # 320 MB on the one thread that draws them cost about as much as the drawing); the normals are drawn
            # on a core of their own while the other threads draw the spans, and that thread then takes spans too
            z = np.empty(n, dtype=np.float64)
            _core.datasets.fill_zero(z, threads)

            def side() -> None:
                normals(z)
                spans.draw(1)

            with ThreadPoolExecutor(max_workers=1) as pool:
                fut = pool.submit(side)
                spans.draw(threads - 1)
                fut.result()
            noise = z
    else:
        u_all = np.empty((8, n), dtype=np.float64)
        gen.random(out=u_all[:7])
        gen.random(out=u_all[7])

        def chunk(c: int) -> None:
            i0, i1 = c * _CHUNK, min(n, (c + 1) * _CHUNK)
            _core.datasets.census_rows(model, np.ascontiguousarray(u_all[:, i0:i1]), out[i0:i1], score[i0:i1])

        with ThreadPoolExecutor(max_workers=threads) as pool:
            list(pool.map(chunk, range((n + _CHUNK - 1) // _CHUNK)))
        noise = normals()
    if n > 1:
        _core.datasets.census_salary(model, score, noise, _cut_ranks(n), out,
                                     np.zeros(0, dtype=np.int32) if salary is None else salary, threads)
    else:
        out[0, 8] = _salary_single(codes)
        if salary is not None:
            salary[0] = out[0, 8]
    return out


def _salary_single(codes: bool) -> int:
    """The salary of a one-row table (the reference's median class)."""
    k = int(np.searchsorted(_tables()["salary_cuts"], np.array([0.5]))[0])
    return int(_code_maps()["salary"][k]) if codes else k


def _available_cores() -> int:
    """Cores this process may run on (its affinity mask), as the kernels' n_threads=None."""
    import os

    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover (not Linux)
        return os.cpu_count() or 1


def _values() -> dict[str, list[str]]:
    """The generator's value lists (as hierarchy labels), per column."""
    t = _tables()
    return {
        "age": [str(v) for v in AGES], "sex": list(SEXES), "education": [str(v) for v in EDUCATION_LEVELS],
        "marital_status": [leaf for g in MARITAL["*"].values() for leaf in g], "race": list(RACES),
        "work_class": list(_WC_LEAVES), "birth_place": list(t["birth_place_labels"]),
        "occupation": list(_OCC_LEAVES), "salary": [str(v) for v in SALARY_CLASSES],
    }


@functools.lru_cache(maxsize=1)
def _code_maps() -> dict[str, NDArray[np.int32]]:
    """Generator index -> hierarchy leaf code, per column."""
    hs = census_hierarchies()
    out = {}
    for c, vals in _values().items():
        lk = hs[c].leaf_lookup()
        m = np.array([lk[v] for v in vals], dtype=np.int32)
        m.setflags(write=False)
        out[c] = m
    return out


def synthetic_census(
    n: int, rng: int | np.random.Generator | None = None, *, sensitive: str | None = "salary", n_qi: int = 7,
    numeric: str = "hierarchy", n_threads: int | None = None,
) -> Table:
    """Generate ``n`` rows of the synthetic census as an encoded :class:`~anoncore.Table`.

    Parameters
    ----------
    n : int
        Number of rows (at least 1).
    rng : int, numpy.random.Generator or None, default=None
        Seed or generator; the same seed gives the same table.
    sensitive : {'salary', 'occupation'} or None, default='salary'
        Which attribute is sensitive (see :func:`synthetic_census_schema`).
    n_qi : int, default=7
        Number of quasi-identifiers (a prefix of :data:`CENSUS_QUASI_IDENTIFIERS`).
    numeric : {'hierarchy', 'box'}, default='hierarchy'
        ``'hierarchy'``: the numeric attributes (age, education, salary) carry their interval hierarchies, so
        full-domain searches can generalize them and every algorithm publishes them through the hierarchy
        (a class's value is the lowest interval node covering it). ``'box'``: no hierarchy on the numeric
        attributes, so classes publish them as ``[min, max]`` boxes, the minimum bounding boxes of the SABRE
        thesis (Cao, ch. 3-6), which its AIL figures use; the lattice search then needs ``'hierarchy'``.
        Same rows and codes either way.
    n_threads : int or None, default=None
        Threads for the draws (C++ over spans of whole 65,536-row chunks; None = every core the process may use).
        The rows depend only on ``n`` and the seed, never on ``n_threads``: they are those of the numpy
        reference draw (the same stream of uniforms and normals, see :func:`_generate`).

    Returns
    -------
    Table
        Columns :data:`CENSUS_COLUMNS`; codes are built directly from the integer draws.

    Examples
    --------
    >>> t = synthetic_census(1000, rng=0)
    >>> t.n_rows, t.quasi_identifiers[:3], t.sensitive
    (1000, ('age', 'sex', 'education'), ('salary',))
    >>> [t.cardinality(c) for c in t.columns]
    [79, 2, 17, 6, 9, 10, 83, 23, 50]
    """
    if numeric not in ("hierarchy", "box"):
        raise ValueError(f"The 'numeric' parameter of synthetic_census must be 'hierarchy' or 'box'. Got "
                         f"{numeric!r} instead.")
    schema = synthetic_census_schema(sensitive, n_qi)
    # the salary codes also written contiguously by the kernel: the table's column("salary") (read by a
    # search or audit on salary, and by publishing) without a strided pass over every row's matrix line
    n = check_int(n, "n", "synthetic_census", 1)
    salary = np.empty(n, dtype=np.int32)
    codes = _generate_codes(n, rng, n_threads, salary=salary)
    if numeric == "box":
        from dataclasses import replace

        dicts = {a.name: np.array([float(x) for x in a.hierarchy.leaves]) for a in schema.attributes
                 if a.kind == "numeric" and a.hierarchy is not None}
        schema = replace(schema, attributes=tuple(replace(a, hierarchy=None) if a.name in dicts else a
                                                  for a in schema.attributes), _by_name={})
        table = Table._from_codes(schema, codes, dicts)
    else:
        table = Table._from_codes(schema, codes)
    table._hold_column("salary", salary)
    return table


def synthetic_census_frame(n: int, rng: int | np.random.Generator | None = None) -> pd.DataFrame:
    """The same rows as :func:`synthetic_census` (same ``n`` and seed), decoded into a DataFrame.

    Numeric columns (age, education, salary) are int64; the others are strings.

    Examples
    --------
    >>> df = synthetic_census_frame(5, rng=1)
    >>> list(df.columns) == list(CENSUS_COLUMNS)
    True
    """
    idx = _generate_codes(n, rng, None, codes=False, caller="synthetic_census_frame")
    vals = _values()
    out: dict[str, Any] = {}
    for j, c in enumerate(CENSUS_COLUMNS):
        if c in ("age", "education", "salary"):
            out[c] = np.asarray(vals[c], dtype=np.int64)[idx[:, j]]
        else:
            out[c] = np.asarray(vals[c], dtype=object)[idx[:, j]]
    return pd.DataFrame(out)
