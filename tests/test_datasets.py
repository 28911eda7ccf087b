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
    assert never[age < 25].mean() > 0.6
    assert never[age >= 45].mean() < 0.15
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


# ---------------------------------------------------------------------------------------------------------
# loaders: row counts from shared/data/*/README*.md


@pytest.fixture(scope="module")
def uci_all(data_dir: Path) -> Table:
    from anoncore.datasets import load_uci_adult

    return load_uci_adult("all")


@pytest.mark.slow
def test_uci_adult_counts(data_dir: Path, uci_all: Table) -> None:
    from anoncore.datasets import load_uci_adult

    # uci-adult/README.md "Counts": 30,162 complete train rows (2,399 with a '?'), 45,222 train+test.
    train = load_uci_adult("train")
    assert (train.n_rows, train.dropped_rows.size) == (30_162, 2_399)
    assert (uci_all.n_rows, uci_all.dropped_rows.size) == (45_222, 3_620)
    raw_test = load_uci_adult("test", complete=False)
    assert (raw_test.n_rows, raw_test.dropped_rows.size) == (16_281, 0)
    # '>50K' labels over complete + incomplete test rows: 3,846 (README); trailing '.' removed.
    assert int((raw_test.to_pandas()["income"] == ">50K").sum()) == 3_846
    assert set(raw_test.dictionary("income")) == {"<=50K", ">50K"}
    # '?' is kept as a value of its own with complete=False (occupation: 966 '?' in the test split).
    occ = raw_test.to_pandas()["occupation"]
    assert (occ == "?").sum() > 0 and raw_test.hierarchy("occupation").height == 2


def test_uci_adult_schema(uci_all: Table) -> None:
    from anoncore.datasets import UCI_ADULT_QUASI_IDENTIFIERS

    assert uci_all.quasi_identifiers == UCI_ADULT_QUASI_IDENTIFIERS
    assert uci_all.sensitive == ("income",)
    for c in ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"):
        assert uci_all.attribute(c).kind == "numeric"
    assert uci_all.domain("age") == (17.0, 90.0)
    # Leaves per Table 5.4 of the Wang thesis (native-country: 41 observed values, the thesis says 40).
    leaves = {"education": 16, "marital-status": 7, "occupation": 14, "native-country": 41}
    heights = {"education": 4, "marital-status": 3, "occupation": 2, "native-country": 4}
    for c, n in leaves.items():
        assert uci_all.cardinality(c) == n
        assert uci_all.hierarchy(c).height == heights[c]
        assert np.unique(uci_all.column(c)).size == n
    p = Partition.from_levels(uci_all, [uci_all.hierarchy(q).height for q in uci_all.quasi_identifiers])
    assert p.n_classes == 1


def test_uci_adult_train_equals_arx_adult(data_dir: Path) -> None:
    # uci-adult/README.md: complete train rows, 9 columns, equal ARX's adult.csv row for row.
    from anoncore.datasets import ADULT_COLUMNS, load_adult_arx, load_uci_adult

    arx = load_adult_arx().to_pandas()
    raw = load_uci_adult("train", sensitive=None).to_pandas().rename(columns={"income": "salary-class"})
    assert len(raw) == len(arx) == 30_162
    for c in ADULT_COLUMNS:
        col = raw[c].map(lambda v: f"{v:g}" if isinstance(v, float) else str(v))
        assert (col.to_numpy() == arx[c].astype(str).to_numpy()).all(), c


def test_uci_adult_sensitive_occupation(data_dir: Path) -> None:
    from anoncore.datasets import load_uci_adult

    t = load_uci_adult("test", sensitive="occupation")
    assert t.sensitive == ("occupation",) and "occupation" not in t.quasi_identifiers
    assert len(t.quasi_identifiers) == 9


def test_census_income_arx(data_dir: Path) -> None:
    from anoncore.datasets import load_census_income_arx

    # census-income/arx/README-arx.md: 299,285 rows; max levels [4,1,3,2,1,2,2,2]; 90,565 distinct QI
    # combinations, 82,313 of them with fewer than 5 rows, covering 110,233 rows.
    t = load_census_income_arx(sensitive="detailed_occupation_recode")
    assert t.n_rows == 299_285
    assert [t.hierarchy(q).height for q in t.quasi_identifiers] == [4, 1, 3, 2, 1, 2, 2, 2]
    p = Partition.from_levels(t, [0] * 8)
    sizes = p.class_sizes
    assert p.n_classes == 90_565
    assert int((sizes < 5).sum()) == 82_313
    assert int(sizes[sizes < 5].sum()) == 110_233
    assert t.cardinality("detailed_occupation_recode") == 47


@pytest.mark.slow
def test_census_income_raw(data_dir: Path) -> None:
    from anoncore.datasets import CENSUS_INCOME_ARX_COLUMNS, load_census_income

    # census-income/README.md: test split 99,762 rows with 42 attributes, 6,186 labelled '50000+.'.
    t = load_census_income("test")
    assert t.n_rows == 99_762 and t.n_columns == 42
    assert int((t.to_pandas()["income"] == "50000+").sum()) == 6_186
    assert t.cardinality("country_of_birth_self") == 43  # incl. '?'
    # train+test: 299,285 rows, 5,157 with '?' in country_of_birth_self (the only '?' among these columns).
    t2 = load_census_income("all", columns=list(CENSUS_INCOME_ARX_COLUMNS) + ["year"], missing="drop")
    assert t2.n_rows + t2.dropped_rows.size == 299_285
    assert t2.dropped_rows.size == 5_157
    assert t2.n_columns == 10


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda d: d.load_uci_adult("dev"), "The 'which' parameter of load_uci_adult must be"),
        (lambda d: d.load_uci_adult(sensitive="salary"), "Unknown column 'salary'"),
        (lambda d: d.load_census_income("x"), "The 'which' parameter of load_census_income must be"),
        (lambda d: d.load_census_income(columns=["age"]), "must include the quasi-identifiers"),
        (lambda d: d.load_census_income_arx(sensitive="income"), "Unknown column 'income'"),
    ],
)
def test_loader_bad_arguments(call, match: str) -> None:  # type: ignore[no-untyped-def]
    import anoncore.datasets as d

    with pytest.raises(ValueError, match=match):
        call(d)


def test_loader_missing_folder(tmp_path: Path) -> None:
    from anoncore.datasets import load_census_income_arx, load_uci_adult

    with pytest.raises(FileNotFoundError, match="ANONCORE_SHARED_DATA"):
        load_uci_adult(folder=tmp_path)
    with pytest.raises(FileNotFoundError, match="census.csv.gz"):
        load_census_income_arx(folder=tmp_path)


def test_from_codes_with_dictionaries() -> None:
    from anoncore import Schema

    s = Schema.build({"age": "numeric", "zip": None}, sensitive="disease")
    codes = np.array([[0, 1, 0], [1, 0, 1], [1, 1, 1]], dtype=np.int64)
    t = Table._from_codes(s, codes, {"age": [30.0, 41.0], "zip": ["130", "148"], "disease": ["flu", "ulcer"]})
    ref = Table.from_pandas(pd.DataFrame({"age": [30, 41, 41], "zip": ["148", "130", "148"],
                                          "disease": ["flu", "ulcer", "ulcer"]}), s)
    pd.testing.assert_frame_equal(t.to_pandas(), ref.to_pandas())
    assert t.hierarchy("zip").height == 1 and t.codes.dtype == np.int32 and not t.codes.flags.writeable
    with pytest.raises(ValueError, match="needs its dictionary"):
        Table._from_codes(s, codes, {"age": [30.0, 41.0]})
    with pytest.raises(ValueError, match="strictly increasing"):
        Table._from_codes(s, codes, {"age": [41.0, 30.0], "zip": ["130", "148"], "disease": ["flu", "ulcer"]})


def test_every_generator_and_loader_is_in_one_package() -> None:
    """anoncore.datasets holds every data source; the old module paths re-export the same objects."""
    import anoncore.data.synthetic as old_census
    import anoncore.datasets as ds
    import anoncore.sequence.synthetic as old_sequences
    import anoncore.stream.datasets as old_streams
    import anoncore.temporal._synthetic as old_temporal

    for old in (old_census, old_sequences, old_streams, old_temporal):
        assert old.__all__, old.__name__
        for name in old.__all__:
            assert getattr(ds, name) is getattr(old, name), (old.__name__, name)
            assert name in ds.__all__
    assert ds.make_temporal_stream.__module__ == "anoncore.datasets.temporal"
    assert ds.power_law_stream.__module__ == "anoncore.datasets.streams"
    assert ds.msnbc_like.__module__ == "anoncore.datasets.sequences"
    assert ds.synthetic_census.__module__ == "anoncore.datasets.census"
    assert ds.load_adult_arx.__module__ == "anoncore.datasets.loaders"
