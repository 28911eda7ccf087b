"""Table.from_csv on pyarrow's CSV reader against its pandas reading (the oracle: ``_from_csv_pandas``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracles.tables import assert_same_table

from anoncore import Schema
from anoncore.data.builders import flat_hierarchy
from anoncore.data.hierarchy import Hierarchy
from anoncore.data.table import Table, _file_line

CELL = st.sampled_from(["a", "b", "é", "a b", "", " ", "?", " a", "  b", "b ", '"a"', ' "b"', '"a;b"', '"x""y"',
                        "日本", "c", "*"])
NUM = st.sampled_from(["1", "2", "10", " 3", "3", "1.0", "?", "", "x", '"2"'])


def _oracle(path: Path, schema: Schema, sep: str = ",", encoding: str = "utf-8") -> Table | Exception:
    name = os.fspath(path)
    try:
        return Table._from_csv_pandas(name, schema, sep, encoding, 1, _file_line(name))
    except ValueError as e:
        return e


def _check(path: Path, schema: Schema, sep: str | None = None, encoding: str = "utf-8") -> Table | None:
    ref = _oracle(path, schema, sep or ",", encoding)
    try:
        got: Table | Exception = Table.from_csv(path, schema, sep=sep, encoding=encoding, n_threads=2)
    except ValueError as e:
        got = e
    if isinstance(ref, Exception):
        assert isinstance(got, Exception) and str(got) == str(ref)
        return None
    assert isinstance(got, Table), got
    assert_same_table(got, ref)
    return got


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(CELL, CELL, NUM), min_size=1, max_size=30),
       missing=st.sampled_from(["error", "drop", "as_value"]), with_h=st.booleans(), blank=st.booleans(),
       header_space=st.booleans())
def test_from_csv_equals_its_pandas_reading(tmp_path_factory, rows, missing, with_h, blank, header_space):
    path = tmp_path_factory.mktemp("csv") / "d.csv"
    lines = [("s, t, n" if header_space else "s,t,n")] + [";".join(r).replace(";", ",") for r in rows]
    if blank:
        lines.insert(2, "")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    leaves = ["a", "b", "é", "a b", "日本", "c", "?"]
    attrs = {"s": {"kind": "categorical", "hierarchy": flat_hierarchy(leaves, root="<any>")} if with_h
             else "categorical", "t": "categorical",
             "n": {"kind": "numeric", "hierarchy": Hierarchy.from_rows([["1", "*"], ["2", "*"], ["3", "*"],
                                                                        ["10", "*"]])}}
    _check(path, Schema.build(attrs, missing=missing))


def test_clean_files_take_the_arrow_path(tmp_path, monkeypatch, data_dir):
    """Adult, census-income, a ', '-separated file (spaces skipped) and a file with quoted fields never reach
    the pandas reading."""
    from anoncore.datasets import load_adult_arx, load_census_income_arx

    data = Path(data_dir)
    adult, census = load_adult_arx(), load_census_income_arx(sensitive="detailed_occupation_recode")
    refs = {"adult": Table._from_csv_pandas(str(data / "adult" / "adult.csv"), adult.schema, ";", "utf-8", 1,
                                            _file_line("x"))}
    spaced = tmp_path / "spaced.csv"
    spaced.write_text("age, zip, disease\n30, 130, flu\n31, 148,  cold\n32,130,flu\n", encoding="utf-8")
    quoted = tmp_path / "quoted.csv"
    quoted.write_text('age,zip,disease\n30,"130","flu, bad"\n31,148,"cold"\n', encoding="utf-8")
    small = Schema.build({"age": "numeric", "zip": flat_hierarchy(["130", "148"])}, sensitive="disease")
    small_refs = {p: Table._from_csv_pandas(str(p), small, ",", "utf-8", 1, _file_line("x")) for p in (spaced, quoted)}

    def boom(*args, **kwargs):
        raise AssertionError("the pandas reading was used")

    monkeypatch.setattr(Table, "_from_csv_pandas", classmethod(boom))
    assert_same_table(Table.from_csv(data / "adult" / "adult.csv", adult.schema, sep=";"), refs["adult"])
    got = Table.from_csv(data / "census-income" / "arx" / "census.csv.gz", census.schema, sep=";")
    assert_same_table(got, census)
    for p, ref in small_refs.items():
        assert_same_table(Table.from_csv(p, small), ref)
    assert list(Table.from_csv(spaced, small).dictionary("disease")) == ["cold", "flu"]


def test_errors_keep_their_file_lines_and_encoding(tmp_path):
    hz = flat_hierarchy(["130", "148"])
    schema = Schema.build({"age": "numeric", "zip": hz}, sensitive="disease")
    bad = tmp_path / "bad.csv"
    bad.write_text("age,zip,disease\n30,130,flu\n31,999,flu\n33,148,flu\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"'999' of column 'zip' is missing from its hierarchy.*line 3 of"):
        Table.from_csv(bad, Schema.build({"age": "numeric", "zip": hz}, sensitive="disease"))
    bad.write_text("age,zip,disease\n30,130,flu\nold,148,flu\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"holds 'old' \(line 3 of"):
        Table.from_csv(bad, schema)
    latin = tmp_path / "latin.csv"
    latin.write_bytes(b"age,zip,disease\n30,130,flu\n32,130,caf\xe9\n")
    with pytest.raises(ValueError, match=r"Line 3 of .*column 'disease'.*not valid utf-8"):
        Table.from_csv(latin, schema)
    t = Table.from_csv(latin, schema, encoding="latin-1")
    assert list(t.dictionary("disease")) == ["café", "flu"]
    short = tmp_path / "short.csv"
    short.write_text("age,zip,disease\n30,130,flu\n31,148\n", encoding="utf-8")
    _check(short, Schema.build({"age": "numeric", "zip": hz}, sensitive="disease", missing="drop"))
    long = tmp_path / "long.csv"
    long.write_text("age,zip,disease\n30,130,flu\n31,148,flu,extra\n", encoding="utf-8")
    _check(long, schema)
    empty = tmp_path / "empty.csv"
    empty.write_text("age,zip,disease\n", encoding="utf-8")
    with pytest.raises(ValueError, match="0 row"):
        Table.from_csv(empty, schema)
