"""The C++ encoder (strings, categoricals, Arrow dictionaries) against the pandas path it replaces."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracles.tables import assert_same_table

from anoncore import Schema
from anoncore.data import _encode as enc
from anoncore.data.builders import flat_hierarchy
from anoncore.data.hierarchy import Hierarchy
from anoncore.data.table import Table

ALPHABET = st.sampled_from(["a", "b", "é", "日本", "", " ", "?", " a", "x y", "\u3000", "ß", "😀", "*"])
VALUES = st.lists(ALPHABET, min_size=1, max_size=4).map("".join)
NUMBERS = st.sampled_from(["1", "2", "10", "1.0", "-0", "0", "1e1", "?", " 3", "3", "x", ""])


def _hier(values: list[str]) -> Hierarchy:
    leaves = sorted({v.strip() for v in values if v.strip() and v.strip() != "<any>"})
    return flat_hierarchy(leaves or ["?"], root="<any>", name="h")


def _both(df: pd.DataFrame, schema: Schema, threads: int) -> tuple[Table | Exception, Table | Exception]:
    out: list[Table | Exception] = []
    for f in (lambda: Table.from_pandas(df, schema, n_threads=threads), lambda: Table._from_pandas_legacy(df, schema)):
        try:
            out.append(f())
        except ValueError as e:
            out.append(e)
    return out[0], out[1]


def _assert_paths_agree(df: pd.DataFrame, schema: Schema, threads: int) -> None:
    """The C++ path (from pandas and from Arrow) gives the pandas path's table, or its very error message."""
    fast, legacy = _both(df, schema, threads)
    if isinstance(legacy, Exception):
        assert isinstance(fast, Exception) and str(fast) == str(legacy)
    else:
        assert isinstance(fast, Table)
        assert_same_table(fast, legacy)
        fa = Table.from_arrow(pa.Table.from_pandas(df, preserve_index=False), schema, n_threads=threads)
        assert_same_table(fa, legacy)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(st.tuples(VALUES, VALUES, st.integers(0, 5), NUMBERS), min_size=1, max_size=60),
       missing=st.sampled_from(["error", "drop", "as_value"]), with_h=st.booleans(), cat=st.booleans(),
       threads=st.sampled_from([1, 2]), drop_leaf=st.booleans(), num_h=st.booleans(), num_cat=st.booleans())
def test_codes_match_the_pandas_path(rows, missing, with_h, cat, threads, drop_leaf, num_h, num_cat):
    df = pd.DataFrame(rows, columns=["s", "t", "n", "m"])
    df["m"] = df["m"].astype(object)
    if cat:
        df["t"] = df["t"].astype("category")
    if num_cat:  # numeric columns as pandas categoricals: of numeric text, and of integers
        df["m"] = df["m"].astype("category")
        df["n"] = df["n"].astype("category")
    vals = list(df["s"]) + ["?"]
    if drop_leaf and len(set(vals)) > 2:
        vals = [v for v in vals if v != vals[0]] + ["?"]  # a value outside the hierarchy
    attrs = {"s": {"kind": "categorical", "hierarchy": _hier(vals)} if with_h else "categorical",
             "t": "categorical", "n": "numeric",
             "m": {"kind": "numeric", "hierarchy": Hierarchy.from_rows([["0", "*"], ["1", "*"], ["3", "*"],
                                                                       ["10", "*"]])} if num_h else "numeric"}
    schema = Schema.build(attrs, missing=missing)
    _assert_paths_agree(df, schema, threads)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(st.tuples(VALUES, VALUES, NUMBERS), min_size=1, max_size=60),
       missing=st.sampled_from(["error", "drop", "as_value"]), sens=st.sampled_from(["s", "flat", "cat", "m"]),
       threads=st.sampled_from([1, 2]))
def test_sensitive_column_written_with_the_codes(rows, missing, sens, threads):
    """A sensitive column's kernel also writes it contiguously, kept as the table's column(): it equals the code
    matrix's column and the pandas path's, with a hierarchy or a flat one built from the values, as a
    categorical, as numbers under a hierarchy, with missing cells and dropped rows; from pandas and Arrow."""
    df = pd.DataFrame(rows, columns=["q", "s", "m"])
    if sens == "cat":
        df["s"] = df["s"].astype("category")
    num_h = Hierarchy.from_rows([["0", "*"], ["1", "*"], ["3", "*"], ["10", "*"]])
    spec = {"s": _hier(list(df["s"].astype(str)) + ["?"]), "flat": None, "cat": _hier(list(df["s"].astype(str)) + ["?"]),
            "m": {"kind": "numeric", "hierarchy": num_h}}[sens]
    name = "m" if sens == "m" else "s"
    other = "s" if name == "m" else "m"
    schema = Schema.build({"q": "categorical"}, sensitive={name: spec}, insensitive=[other], missing=missing)
    fast, legacy = _both(df, schema, threads)
    if isinstance(legacy, Exception):
        return
    assert isinstance(fast, Table)
    for t in (fast, Table.from_arrow(pa.Table.from_pandas(df, preserve_index=False), schema, n_threads=threads)):
        j = t.column_index(name)
        np.testing.assert_array_equal(t.column(name), t.codes[:, j])
        np.testing.assert_array_equal(t.column(name), legacy.column(name))
        assert not t.column(name).flags.writeable


def test_sensitive_column_is_kept_from_the_kernel():
    """A table of strings keeps its sensitive column as its kernel wrote it (no gather on first use); with a
    missing cell coded as the token afterwards it is left to column() to gather."""
    df = pd.DataFrame({"q": ["x", "y", "x", "y"], "s": ["a", "b", "a", "c"]})
    schema = Schema.build({"q": "categorical"}, sensitive={"s": _hier(["a", "b", "c", "?"])})
    t = Table.from_pandas(df, schema)
    assert ("col", "s") in t._cache
    np.testing.assert_array_equal(t._cache[("col", "s")], t.codes[:, t.column_index("s")])
    df.loc[2, "s"] = None
    t2 = Table.from_pandas(df, Schema.build({"q": "categorical"}, sensitive={"s": _hier(["a", "b", "c", "?"])},
                                            missing="as_value"))
    assert ("col", "s") not in t2._cache
    np.testing.assert_array_equal(t2.column("s"), t2.codes[:, t2.column_index("s")])

INT_LEAVES = ["-3", "0", "1", "7", "120", "300"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=st.lists(st.sampled_from([-3, 0, 1, 7, 120, 300, 5, -4]), min_size=1, max_size=40),
       dtype=st.sampled_from(["int64", "int16", "uint16", "Int64", "Int64+NA", "int64[pyarrow]"]),
       threads=st.sampled_from([1, 2]), wide=st.booleans(), missing=st.sampled_from(["error", "drop"]))
def test_integer_columns_match_the_pandas_path(values, dtype, threads, wide, missing):
    """Integer columns (as pandas.read_csv gives them) under a hierarchy: the C++ path keys them by their text
    and gives the pandas path's codes, or its very error (a value outside the hierarchy, a missing cell)."""
    if dtype == "uint16":
        values = [abs(v) for v in values]
    leaves = INT_LEAVES + (["100000"] if wide else [])  # a range wider than the dictionary's limit
    if wide:
        values = values + [100000]
        dtype = {"int16": "int32", "uint16": "uint32"}.get(dtype, dtype)
    col = pd.Series(values, dtype=dtype.replace("+NA", ""))
    if dtype == "Int64+NA":
        col[0] = pd.NA
    num_leaves = sorted(leaves, key=int)
    schema = Schema.build({"c": {"kind": "categorical", "hierarchy": Hierarchy.from_rows([[v, "*"] for v in leaves])},
                           "n": {"kind": "numeric", "hierarchy": Hierarchy.from_rows([[v, "*"] for v in num_leaves])},
                           "x": "numeric"},  # no hierarchy: the values present, ranked
                          missing=missing)
    df = pd.DataFrame({"c": col, "n": col.copy(), "x": col.copy()})
    _assert_paths_agree(df, schema, threads)


FLOAT_LEAVES = ["-3", "0", "0.5", "1", "7.25", "120"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=st.lists(st.sampled_from([-3.0, 0.0, -0.0, 0.5, 1.0, 7.25, 120.0, 2.5, 1e20, float("nan")]),
                       min_size=1, max_size=40),
       dtype=st.sampled_from(["float64", "float32"]), threads=st.sampled_from([1, 2]),
       missing=st.sampled_from(["error", "drop", "as_value"]))
def test_float_columns_match_the_pandas_path(values, dtype, threads, missing):
    """Float columns of numeric attributes (with and without hierarchy) take the dictionary path (distinct
    values ranked by pandas.factorize, their text as the pandas path reads it): the same codes or the same
    error, NaN a missing value under every policy."""
    col = pd.Series(values, dtype=dtype)
    schema = Schema.build({"n": {"kind": "numeric", "hierarchy": Hierarchy.from_rows([[v, "*"] for v in FLOAT_LEAVES])},
                           "x": "numeric"}, missing=missing)
    _assert_paths_agree(pd.DataFrame({"n": col, "x": col.copy()}), schema, threads)


def test_integer_columns_take_the_cpp_path(monkeypatch):
    """Adult as pandas.read_csv parses it (age as int64) encodes without the pandas path, to the same codes."""
    from anoncore.datasets import load_adult_arx

    t = load_adult_arx()
    df = pd.DataFrame({c: np.asarray(t.decode(c, t.column(c))).astype(str) for c in t.columns})
    df["age"] = df["age"].astype(np.int64)
    src = enc.int_source(df["age"])
    assert src is not None and src.index.dtype == np.int8 and src.labels[0] == str(df["age"].min())
    monkeypatch.setattr(Table, "_from_pandas_legacy", classmethod(lambda *a, **k: pytest.fail("pandas path")))
    for threads in (1, 2):
        got = Table.from_pandas(df, t.schema, n_threads=threads)
        np.testing.assert_array_equal(got.codes, t.codes)
        np.testing.assert_array_equal(Table.from_arrow(pa.Table.from_pandas(df), t.schema, n_threads=threads).codes,
                                      t.codes)
    assert enc.int_source(pd.Series([0, 10_000])) is None  # wider than max(4096, n // 4): the pandas path
    assert enc.int_source(pd.Series([1.0, 2.0])) is None
    fs = enc.float_source(pd.Series([2.5, np.nan, -0.0, 2.5, 30.0]))
    assert fs is not None and fs.index.tolist() == [1, -1, 0, 1, 2] and fs.labels == ["0", "2.5", "30"]
    assert enc.float_source(pd.Series(np.arange(5000) + 0.5)) is None  # more distinct values than max(4096, n // 16)


def test_threads_give_the_same_codes_on_many_rows():
    rng = np.random.default_rng(3)
    labels = np.array([f"v{i}é" for i in range(300)], dtype=object)
    df = pd.DataFrame({"a": labels[rng.integers(0, 300, 300_000)], "b": labels[rng.integers(0, 5, 300_000)]})
    schema = Schema.build({"a": "categorical", "b": "categorical"})
    t1 = Table.from_pandas(df, schema, n_threads=1)
    t2 = Table.from_pandas(df, schema, n_threads=2)
    assert_same_table(t1, t2)
    assert_same_table(t1, Table._from_pandas_legacy(df, schema))


def test_arrow_dictionary_and_categorical_codes_are_not_copied():
    cat = pd.Categorical(["b", "a", None, "b"], categories=["a", "b", "zz"])
    ser = pd.Series(cat)
    src = enc.source_of_series(ser)
    assert isinstance(src, enc.DictSource) and np.shares_memory(src.index, ser.array._ndarray)
    arr = pa.array(["x", "y", None, "x"]).dictionary_encode()
    asrc = enc.source_of_arrow(arr)
    assert isinstance(asrc, enc.DictSource)
    assert np.shares_memory(asrc.index, np.frombuffer(arr.indices.buffers()[1], dtype=np.int32))
    codes, unknown, missing = enc.encode_source(asrc, {"x": 7, "y": 9}, 1)
    assert (unknown, missing) == (0, 1)
    assert codes.tolist() == [7, 9, enc.MISSING, 7]
    s = enc.source_of_arrow(pa.array(["x", "q", None], type=pa.large_string()))
    assert enc.encode_source(s, {"x": 3}, 2)[0].tolist() == [3, enc.UNKNOWN, enc.MISSING]


def test_sliced_arrow_columns_keep_their_offset():
    arr = pa.array(["a", None, "b", "c", None, "a"], type=pa.large_string()).slice(1, 4)
    s = enc.source_of_arrow(arr)
    assert enc.encode_source(s, {"a": 0, "b": 1, "c": 2}, 1)[0].tolist() == [enc.MISSING, 1, 2, enc.MISSING]
    d = pa.array(["a", None, "b", "c", None, "a"]).dictionary_encode().slice(2, 4)
    ds = enc.source_of_arrow(d)
    assert enc.encode_source(ds, {"a": 0, "b": 1, "c": 2}, 1)[0].tolist() == [1, 2, enc.MISSING, 0]


def test_value_outside_the_hierarchy_names_column_and_row():
    h = flat_hierarchy(["a", "b"], root="*", name="h")
    df = pd.DataFrame({"s": ["a", "b", "c", "a"]})
    schema = Schema.build({"s": {"kind": "categorical", "hierarchy": h}})
    with pytest.raises(ValueError, match="'c'.*column 's'"):
        Table.from_pandas(df, schema)
    with pytest.raises(ValueError, match="'c'.*column 's'"):
        Table.from_arrow(pa.Table.from_pandas(df), schema)


def test_from_arrow_rejects_other_types():
    with pytest.raises(TypeError, match="pyarrow Table or RecordBatch"):
        Table.from_arrow(pd.DataFrame({"a": [1]}), Schema.build(["a"]))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("include", [True, False])
def test_to_arrow_matches_to_pandas(threads, include):
    from anoncore.datasets import synthetic_census
    from anoncore.results import Partition

    t = synthetic_census(3000, rng=5)
    rng = np.random.default_rng(1)
    for p in (Partition.from_levels(t, [1, 0, 1, 1, 1, 1, 1]),
              Partition.from_labels(t, rng.integers(0, 40, t.n_rows))):
        p = p.with_suppressed(rng.random(t.n_rows) < 0.1)
        # the frame made from one Python label per cell (to_pandas itself is made from to_arrow where pandas
        # stores strings in Arrow)
        ref = p._to_pandas_from_labels("*", include)
        arrow = p.to_arrow(include_suppressed=include, n_threads=threads)
        assert arrow.column_names == list(ref.columns)
        for c in ref.columns:
            got = arrow.column(c).to_pylist()
            assert got == ref[c].tolist(), c
        for c in t.quasi_identifiers:
            assert str(arrow.schema.field(c).type).startswith("dictionary")
        cat = p.to_pandas(include_suppressed=include, categorical=True, n_threads=threads)
        assert isinstance(cat[t.quasi_identifiers[0]].dtype, pd.CategoricalDtype)
        for c in ref.columns:
            assert cat[c].tolist() == ref[c].tolist(), c


@settings(max_examples=40, deadline=None)
@given(labels=st.lists(st.text(alphabet="ab\x00é", max_size=12), min_size=1, max_size=40),
       n=st.integers(0, 20_000), dtype=st.sampled_from([np.int8, np.int16, np.int32]), seed=st.integers(0, 2**16))
def test_decode_dictionary_equals_arrow_take(labels, n, dtype, seed):
    """The C++ decode of a dictionary column equals pyarrow's take of its dictionary, at any thread count."""
    from anoncore import _core

    labels = labels[: int(np.iinfo(dtype).max)]
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(labels), n).astype(dtype)
    dictionary = pa.array(labels, type=pa.large_string())
    offsets = np.frombuffer(dictionary.buffers()[1], dtype=np.int64, count=len(labels) + 1)
    data = dictionary.buffers()[2]
    values = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8)
    want = [labels[i] for i in idx.tolist()]
    nbytes = sum(len(s.encode()) for s in want)
    for threads in (1, 2, 3):
        starts = _core.core.dictionary_chunk_starts(idx, offsets, values.size, threads)
        assert starts[0] == 0 and starts[-1] == nbytes and np.all(np.diff(starts) >= 0)
        off = np.full(n + 1, -7, dtype=np.int64)
        dat = np.zeros(nbytes, dtype=np.uint8)
        _core.core.decode_dictionary(idx, offsets, values, starts, off, dat, threads)
        got = pa.LargeStringArray.from_buffers(n, pa.py_buffer(off), pa.py_buffer(dat))
        assert got.to_pylist() == want


def test_decode_dictionary_refuses_bad_input():
    from anoncore import _core

    offsets = np.array([0, 1, 3], dtype=np.int64)
    data = np.frombuffer(b"abc", dtype=np.uint8)

    def decode(idx, starts, nbytes, offs=offsets):
        _core.core.decode_dictionary(idx, offs, data, np.asarray(starts, dtype=np.int64),
                                     np.zeros(len(idx) + 1, dtype=np.int64), np.zeros(nbytes, dtype=np.uint8), 1)

    with pytest.raises(IndexError, match="outside the dictionary"):
        decode(np.array([0, 2], dtype=np.int8), [0, 3], 3)
    with pytest.raises(IndexError, match="outside the dictionary"):
        _core.core.dictionary_chunk_starts(np.array([-1], dtype=np.int16), offsets, 3, 2)
    with pytest.raises(ValueError, match="must not decrease"):
        decode(np.array([0], dtype=np.int32), [0, 1], 1, np.array([0, 2, 1], dtype=np.int64))
    with pytest.raises(ValueError, match="past the dictionary"):
        _core.core.dictionary_chunk_starts(np.array([0], dtype=np.int32), np.array([0, 4], dtype=np.int64), 3, 1)
    # starts that do not fit the strings: refused before or as the bytes are written, never written past
    with pytest.raises(ValueError, match="from 0 to out_data's size"):
        decode(np.array([1, 0], dtype=np.int8), [0, 3], 4)
    with pytest.raises(ValueError, match="too few bytes"):
        decode(np.array([1, 0], dtype=np.int8), [0, 2], 2)
    with pytest.raises(ValueError, match="more bytes than its strings"):
        decode(np.array([1, 0], dtype=np.int8), [0, 4], 4)
    with pytest.raises(ValueError, match="out_offsets has length"):
        _core.core.decode_dictionary(np.array([1], dtype=np.int8), offsets, data, np.array([0, 2], dtype=np.int64),
                                     np.zeros(3, dtype=np.int64), np.zeros(2, dtype=np.uint8), 1)


def _published_partitions():
    """Partitions of every kind to_pandas publishes: hierarchies and numeric ranges as quasi-identifiers,
    text, hierarchical and numeric other columns, suppressed rows, Adult and census-income's search results."""
    from anoncore.datasets import load_adult_arx, synthetic_census
    from anoncore.models import KAnonymity
    from anoncore.results import Partition
    from anoncore.static.lattice import lattice_search

    rng = np.random.default_rng(4)
    out = []
    for numeric in ("hierarchy", "box"):
        t = synthetic_census(2500, rng=7, numeric=numeric)
        p = Partition.from_labels(t, rng.integers(0, 30, t.n_rows))
        out += [p, p.with_suppressed(rng.random(t.n_rows) < 0.2)]
    out.append(Partition.from_levels(synthetic_census(2500, rng=8, sensitive=None), [2, 1, 1, 1, 1, 1, 1]))
    out.append(lattice_search(load_adult_arx(), [KAnonymity(5)], suppression_limit=0.04, metric="dm_star").partition)
    return out


@pytest.mark.parametrize("include", [True, False])
def test_to_pandas_equals_the_frame_of_one_label_per_cell(include):
    """to_pandas's frame (decoded from to_arrow where pandas stores strings in Arrow) equals the frame made from
    one Python label per cell, dtypes and index included; every row suppressed gives the empty frame."""
    for p in _published_partitions():
        for token in ("*", "suppressed"):
            got = p.to_pandas(suppressed_token=token, include_suppressed=include, n_threads=2)
            pd.testing.assert_frame_equal(got, p._to_pandas_from_labels(token, include))
    p = _published_partitions()[0]
    p = p.with_suppressed(np.ones(p.n_rows, dtype=bool))
    got = p.to_pandas(include_suppressed=include)
    pd.testing.assert_frame_equal(got, p._to_pandas_from_labels("*", include))
    assert len(got) == (p.n_rows if include else 0)


def test_to_pandas_takes_arrow_only_where_pandas_stores_strings_in_arrow():
    import warnings

    p = _published_partitions()[1]
    inferred = pd.DataFrame({"x": np.array(["a"], dtype=object)}).dtypes["x"]
    arrow_strings = isinstance(inferred, pd.StringDtype) and inferred.storage == "pyarrow"
    assert (p._to_pandas_from_arrow("*", True, None) is not None) == arrow_strings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (pandas 3 warns that the option goes away in pandas 4)
        try:
            ctx = pd.option_context("future.infer_string", False)
        except (KeyError, pd.errors.OptionError):  # pragma: no cover
            pytest.skip("this pandas has no future.infer_string option")
        with ctx:
            assert p._to_pandas_from_arrow("*", True, None) is None  # Python objects: the label per cell
            got = p.to_pandas()
            assert got[p.table.quasi_identifiers[0]].dtype == object
            pd.testing.assert_frame_equal(got, p._to_pandas_from_labels("*", True))


@pytest.mark.parametrize("n_values, index_type", [(126, pa.int8()), (127, pa.int16()), (32766, pa.int16()),
                                                   (32767, pa.int32())])
def test_to_arrow_index_width_follows_the_largest_dictionary(n_values, index_type):
    """The quasi-identifiers' indices take the narrowest signed type that holds every label and the suppression
    token (126 values + "*" = 127 labels: int8; one more: int16); the values are those of to_pandas."""
    from anoncore.results import Partition

    rng = np.random.default_rng(n_values)
    n = max(2 * n_values, 300)
    vals = np.concatenate([np.arange(n_values), rng.integers(0, n_values, n - n_values)])
    df = pd.DataFrame({"q": [f"v{v}" for v in vals], "s": rng.integers(0, 3, n).astype(str)})
    schema = Schema.build({"q": "categorical"}, sensitive="s")
    t = Table.from_pandas(df, schema)
    p = Partition.from_levels(t, [0]).with_suppressed(rng.random(n) < 0.2)
    want = p._to_pandas_from_labels("*", True)["q"].tolist()  # one Python label per cell (not via to_arrow)
    for threads in (1, 2):
        got = p.to_arrow(n_threads=threads)
        assert got.schema.field("q").type == pa.dictionary(index_type, pa.string())
        assert got.column("q").to_pylist() == want
        assert p.to_pandas(categorical=True, n_threads=threads)["q"].tolist() == want


def test_publish_columns_refuses_values_beyond_the_index_type():
    from anoncore import _core

    labels = np.array([0, 1], dtype=np.int64)
    cm = np.array([[3], [200]], dtype=np.int32)
    assert _core.core.publish_columns(labels, np.zeros(0, bool), cm, np.array([5], np.int32), np.zeros(0, np.int64),
                                      2, 1)[0].tolist() == [3, 200]
    with pytest.raises(ValueError, match="fit the index type"):
        _core.core.publish_columns(labels, np.zeros(0, bool), cm, np.array([5], np.int32), np.zeros(0, np.int64), 1, 1)
    with pytest.raises(ValueError, match="index_bytes"):
        _core.core.publish_columns(labels, np.zeros(0, bool), cm, np.array([5], np.int32), np.zeros(0, np.int64), 3, 1)


def test_publish_codes_kernel():
    from anoncore import _core

    labels = np.array([2, 0, 1, 2], dtype=np.int64)
    out = _core.core.publish_codes(labels, np.array([False, True, False, False]), np.array([5, 6, 7], np.int32), 9, 2)
    assert out.tolist() == [7, 9, 6, 7]
    with pytest.raises(IndexError):
        _core.core.publish_codes(np.array([3], np.int64), np.zeros(0, bool), np.array([1], np.int32), 0, 1)


def test_clean_tables_take_the_cpp_path(monkeypatch):
    """Strings, categoricals, numeric text and Arrow dictionaries encode without the pandas path."""
    from anoncore.datasets import synthetic_census

    t = synthetic_census(2000, rng=2)
    df = pd.DataFrame({c: np.asarray(t.decode(c, t.column(c))).astype(str).astype(object) for c in t.columns})
    df["sex"] = df["sex"].astype("category")
    ref = Table._from_pandas_legacy(df, t.schema)

    def boom(*args, **kwargs):
        raise AssertionError("the pandas path was taken")

    monkeypatch.setattr(Table, "_from_pandas_legacy", classmethod(boom))
    numeric_cat = df.assign(age=df["age"].astype("category"), salary=df["salary"].astype("category"))
    for threads in (1, 2):
        assert_same_table(Table.from_pandas(df, t.schema, n_threads=threads), ref)
        assert_same_table(Table.from_pandas(numeric_cat, t.schema, n_threads=threads), ref)  # numbers as categories
        arrow = pa.Table.from_pandas(df, preserve_index=False)
        i = arrow.column_names.index("race")
        arrow = arrow.set_column(i, "race", arrow.column("race").dictionary_encode())
        assert_same_table(Table.from_arrow(arrow, t.schema, n_threads=threads), ref)
    drop = Schema(t.schema.attributes, missing="drop")
    df2 = df.copy()
    df2.loc[3, "race"] = "?"
    df2.loc[5, "age"] = "?"
    monkeypatch.undo()
    ref2 = Table._from_pandas_legacy(df2, drop)
    monkeypatch.setattr(Table, "_from_pandas_legacy", classmethod(boom))
    got = Table.from_pandas(df2, drop)
    assert_same_table(got, ref2)
    assert got.dropped_rows.tolist() == [3, 5]


@settings(max_examples=60, deadline=None)
@given(keys=st.lists(st.text(alphabet="ab\x00é", max_size=40), min_size=0, max_size=30, unique=True),
       extra=st.lists(st.text(alphabet="ab\x00é", max_size=40), max_size=30), seed=st.integers(0, 2**16))
def test_string_lookup_equals_a_dict_at_every_length(keys, extra, seed):
    """Keys of 0..40 bytes sharing prefixes and suffixes (the word compare of short keys, memcmp of long ones)
    give exactly a Python dict's lookup; rows in runs and shuffled."""
    rng = np.random.default_rng(seed)
    mapping = {k: i * 3 + 1 for i, k in enumerate(keys)}
    pool = keys + extra + ["a" * 16, "a" * 15 + "b", "b" + "a" * 15, "a" * 32, "a" * 31 + "b", "a" * 33]
    values = [pool[i] for i in rng.integers(0, len(pool), 200)]
    values += sorted(values)  # runs of one value
    src = enc.source_of_arrow(pa.array(values, type=pa.large_string()))
    got, unknown, missing = enc.encode_source(src, mapping, 2)
    want = [mapping.get(v, enc.UNKNOWN) for v in values]
    assert got.tolist() == want
    assert (unknown, missing) == (want.count(enc.UNKNOWN), 0)


@pytest.mark.parametrize("limit", [8, 16, 24, 32])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(data=st.data(), seed=st.integers(0, 2**16))
def test_narrow_key_lookup_equals_a_dict(limit, data, seed):
    """Keys of at most 8, 16, 24 or 32 bytes take the kernel's word lookup: a string is its zero-extended words
    (masked by its length) and its
    length ("a" and "a\x00" differ), a longer string is unknown, the last strings of the buffer are read
    without the 8-byte loads; nulls and a sliced array too. The result is exactly a Python dict's lookup."""
    text = st.text(alphabet="ab\x00é", max_size=limit).filter(lambda s: len(s.encode()) <= limit)
    keys = data.draw(st.lists(text, min_size=1, max_size=30, unique=True))
    extra = data.draw(st.lists(st.text(alphabet="ab\x00é", max_size=limit + 4), max_size=20))
    rng = np.random.default_rng(seed)
    mapping = {k: i * 3 + 1 for i, k in enumerate(keys)}
    pool = keys + extra + ["a" * limit, "a" * (limit - 1) + "\x00", "a" * (limit + 1), "", "\x00"]
    values: list[str | None] = [pool[i] for i in rng.integers(0, len(pool), 300)]
    values[int(rng.integers(0, 300))] = None
    values.append(keys[-1])  # the buffer ends with a key (read without the word loads)
    for arr in (pa.array(values, type=pa.large_string()), pa.array(["zz"] * 7 + values, type=pa.large_string())[7:]):
        got, unknown, missing = enc.encode_source(enc.source_of_arrow(arr), mapping, 2)
        want = [enc.MISSING if v is None else mapping.get(v, enc.UNKNOWN) for v in values]
        assert got.tolist() == want
        assert (unknown, missing) == (want.count(enc.UNKNOWN), 1)


def test_hierarchy_keys_are_made_once_per_hierarchy_and_token_set():
    h = flat_hierarchy(["a", "b", "NA", "?"], root="*", name="h")
    df = pd.DataFrame({"c": ["a", "NA", "?", "b"]})
    first = enc.hierarchy_keys(h, {"?"})
    assert enc.hierarchy_keys(h, {"?"}) is first and enc.hierarchy_keys(h, {"NA"}) is not first
    for tokens in (("?",), ("NA",), ("?",)):
        schema = Schema.build({"c": h}, missing="drop", missing_tokens=tokens)
        fast, legacy = _both(df, schema, 1)
        assert isinstance(fast, Table) and isinstance(legacy, Table)
        assert_same_table(fast, legacy)
        assert fast.dropped_rows.tolist() == [2 if tokens == ("?",) else 1]


def test_select_columns_kernel_and_qi_codes():
    from dataclasses import replace

    from anoncore import _core
    from anoncore.datasets import synthetic_census

    rng = np.random.default_rng(2)
    c = rng.integers(0, 9, (1000, 6)).astype(np.int32)
    for idx in ([0, 2, 5], [5, 0, 0, 3], []):
        got = _core.core.select_columns(c, np.asarray(idx, dtype=np.int64), 2)
        assert got.flags.c_contiguous and np.array_equal(got, c[:, idx].reshape(1000, len(idx)))
    with pytest.raises(IndexError):
        _core.core.select_columns(c, np.array([6], dtype=np.int64), 1)
    t = synthetic_census(500, rng=3)
    first = replace(t.schema, attributes=tuple(sorted(t.schema.attributes, key=lambda a: a.role != "sensitive")))
    moved = Table.from_pandas(t.to_pandas().astype(str), first)
    idx = [moved.column_index(c) for c in moved.quasi_identifiers]
    assert moved.columns[0] == t.sensitive[0] and idx != list(range(moved.n_columns))  # a copy is needed
    q = moved.qi_codes()
    assert q.flags.c_contiguous and np.array_equal(q, moved.codes[:, idx]) and np.array_equal(q, t.qi_codes())


@pytest.mark.parametrize("n_labels", [900, 40_000])
def test_many_labels_past_the_sparse_index_budget(n_labels, monkeypatch):
    """Hierarchies of up to 1,024 short labels keep the short-key index at most 1/32 full; larger ones fill it
    more (up to half) and probe further: both give the pandas path's codes, and a value outside the
    hierarchy is still refused with its column and row."""
    rng = np.random.default_rng(n_labels)
    leaves = [f"v{i:05d}" if i % 3 else f"long-label-{i:05d}-{'x' * (i % 40)}" for i in range(n_labels)]
    h = flat_hierarchy(leaves, root="*", name="h")
    vals = np.asarray(leaves, dtype=object)[rng.integers(0, n_labels, 3 * n_labels)]
    df = pd.DataFrame({"q": vals, "s": rng.integers(0, 3, vals.size).astype(str)})
    schema = Schema.build({"q": {"kind": "categorical", "hierarchy": h}}, sensitive="s")
    ref = Table._from_pandas_legacy(df, schema)
    assert len(set(ref.column("q").tolist())) > n_labels // 2
    monkeypatch.setattr(Table, "_from_pandas_legacy", classmethod(lambda *a, **k: pytest.fail("pandas path")))
    for threads in (1, 2):
        assert_same_table(Table.from_pandas(df, schema, n_threads=threads), ref)
    monkeypatch.undo()
    bad = df.copy()
    bad.loc[7, "q"] = "v99999"
    with pytest.raises(ValueError, match="'v99999'.*column 'q'"):
        Table.from_pandas(bad, schema)


@pytest.mark.parametrize("d", [1, 3, 9, 16, 17, 23])
def test_column_min_max_kernel_matches_numpy(d):
    """The numeric columns' domain check reads every column's extremes in one parallel pass (a compile-time
    column count up to 16, a loop beyond): against numpy, across chunk boundaries, at 1 and 2 threads."""
    from anoncore import _core

    rng = np.random.default_rng(d)
    for n in (1, 65_535, 65_537, 200_003):
        m = rng.integers(-(2**31), 2**31 - 1, size=(n, d), dtype=np.int64).astype(np.int32)
        for threads in (1, 2):
            lo, hi = _core.core.column_min_max(m, threads)
            np.testing.assert_array_equal(lo, m.min(axis=0))
            np.testing.assert_array_equal(hi, m.max(axis=0))
