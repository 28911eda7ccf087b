"""Synthetic census and benchmark-data loaders."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anoncore import Partition, Table
from anoncore.datasets import (
    CENSUS_COLUMNS,
    census_hierarchies,
    synthetic_census,
    synthetic_census_frame,
    synthetic_census_schema,
)

# ---------------------------------------------------------------------------------------------------------
# synthetic census: shape as in the Cao thesis Table 3.4 (spec sabre-burel.md §6.2)

THESIS_SHAPE = {  # attribute: (cardinality, hierarchy height)
    "age": (79, 4), "sex": (2, 1), "education": (17, 4), "marital_status": (6, 2), "race": (9, 1),
    "work_class": (10, 3), "birth_place": (83, 2),
}


@pytest.fixture(scope="module")
def census() -> Table:
    return synthetic_census(200_000, rng=7)


def _values(t: Table, c: str) -> np.ndarray:
    return t.numeric_values(c)[t.column(c)]


def test_domains_and_heights_match_the_thesis(census: Table) -> None:
    for c, (card, height) in THESIS_SHAPE.items():
        assert census.cardinality(c) == card, c
        assert census.hierarchy(c).height == height, c
        # every value of the domain occurs in 200k rows
        assert np.unique(census.column(c)).size == card, c
    assert census.cardinality("salary") == 50
    assert census.cardinality("occupation") == 23
    assert census.hierarchy("occupation").height == 2
    assert census.attribute("age").kind == census.attribute("education").kind == "numeric"
    assert census.attribute("salary").kind == "numeric"
    assert census.columns == CENSUS_COLUMNS
    assert census.quasi_identifiers == CENSUS_COLUMNS[:7]
    assert census.sensitive == ("salary",)


def test_salary_marginal_extremes(census: Table) -> None:
    # Cao thesis: least frequent salary class 49 at 0.2018 %, most frequent class 12 at 4.8402 %.
    freq = np.bincount(census.column("salary"), minlength=50) / census.n_rows
    sal = census.numeric_values("salary")
    assert sal[np.argmax(freq)] == 12
    assert sal[np.argmin(freq)] == 49
    assert freq.max() == pytest.approx(0.048402, abs=2e-4)
    assert freq.min() == pytest.approx(0.002018, abs=1e-4)
    assert np.all(freq > 0)


def test_salary_extremes_hold_for_small_samples() -> None:
    t = synthetic_census(10_000, rng=3)
    freq = np.bincount(t.column("salary"), minlength=50) / t.n_rows
    assert freq.max() == pytest.approx(0.048402, abs=5e-4)
    assert freq.min() == pytest.approx(0.002018, abs=5e-4)


def test_same_seed_same_table_other_seed_other_table() -> None:
    a = synthetic_census(5_000, rng=11)
    b = synthetic_census(5_000, rng=11)
    c = synthetic_census(5_000, rng=12)
    g = synthetic_census(5_000, rng=np.random.default_rng(11))
    assert np.array_equal(a.codes, b.codes)
    assert np.array_equal(a.codes, g.codes)
    assert not np.array_equal(a.codes, c.codes)


def test_frame_encodes_to_the_same_codes(seed: int) -> None:
    # The fast path (codes built from the integer draws) must equal the ordinary string encoding.
    df = synthetic_census_frame(3_000, rng=seed)
    slow = Table.from_pandas(df, synthetic_census_schema())
    fast = synthetic_census(3_000, rng=seed)
    assert np.array_equal(slow.codes, fast.codes)
    pd.testing.assert_frame_equal(fast.to_pandas().astype(str), slow.to_pandas().astype(str))
    assert df["age"].between(16, 94).all() and df["salary"].between(1, 50).all()


def test_dependencies_present(census: Table) -> None:
    edu, sal, age = _values(census, "education"), _values(census, "salary"), _values(census, "age")
    assert np.corrcoef(edu, sal)[0, 1] > 0.3
    df = census.to_pandas()
    never = df["marital_status"] == "never-married"
    assert never[age < 25].mean() > 0.6 > 0.15 > never[age >= 45].mean()
    widowed = df["marital_status"] == "widowed"
    assert widowed[age >= 75].mean() > 5 * widowed[age < 50].mean()
    # education raises the chance of a management/professional occupation
    prof = df["occupation"].isin(["manager", "engineer", "scientist", "teacher", "health-professional", "lawyer"])
    assert prof[edu >= 14].mean() > 3 * prof[edu <= 9].mean()
    # teenagers cannot hold a doctorate
    assert edu[age <= 18].max() <= 9


def test_schema_roles() -> None:
    s = synthetic_census_schema("occupation", n_qi=3)
    assert s.quasi_identifiers == ("age", "sex", "education")
    assert s.sensitive == ("occupation",)
    assert s["salary"].role == "insensitive" and s["race"].role == "insensitive"
    assert synthetic_census_schema(None).sensitive == ()
    t = synthetic_census(100, rng=0, sensitive="occupation", n_qi=5)
    assert t.quasi_identifiers == CENSUS_COLUMNS[:5] and t.sensitive == ("occupation",)


def test_full_domain_partition_on_census(census: Table) -> None:
    hs = census_hierarchies()
    top = [hs[c].height for c in census.quasi_identifiers]
    p = Partition.from_levels(census, top)
    assert p.n_classes == 1
    p0 = Partition.from_levels(census, [0] * 7)
    assert p0.n_classes == len(np.unique(census.qi_codes(), axis=0))


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"n": 0}, ValueError, r"The 'n' parameter of synthetic_census must be an int in the range \[1, inf\)"),
        ({"n": 2.5}, TypeError, "must be an int"),
        ({"n": 10, "sensitive": "age"}, ValueError, "'salary', 'occupation' or None"),
        ({"n": 10, "n_qi": 8}, ValueError, r"in the range \[1, 7\]. Got 8"),
        ({"n": 10, "n_qi": 0}, ValueError, r"in the range \[1, 7\]. Got 0"),
    ],
)
def test_bad_arguments(kwargs: dict, exc: type, match: str) -> None:
    with pytest.raises(exc, match=match):
        synthetic_census(**kwargs)


def test_single_row() -> None:
    t = synthetic_census(1, rng=0)
    assert t.n_rows == 1


# ---------------------------------------------------------------------------------------------------------
# Table._from_codes validation


def test_from_codes_rejects_out_of_range_codes() -> None:
    s = synthetic_census_schema()
    codes = np.array(synthetic_census(10, rng=0).codes)
    codes[3, 1] = 2  # sex has 2 values
    with pytest.raises(ValueError, match=r"Codes of column 'sex' must be in the range \[0, 1\]"):
        Table._from_codes(s, codes)
    with pytest.raises(ValueError, match=r"shape \(n_rows, 9\)"):
        Table._from_codes(s, codes[:, :4])
    with pytest.raises(TypeError, match="integer array"):
        Table._from_codes(s, codes.astype(float))
