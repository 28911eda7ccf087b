"""Streaming CSV / Parquet writers of a published table against the command line's pandas frame (the oracle)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anoncore import Partition, Schema, Table
from anoncore.cli import _common as _cli
from anoncore.cli.anonymize import published_frame
from anoncore.data.writers import published_arrow, write_published


def _label_frame(p: Partition, include: bool) -> pd.DataFrame:
    """The command line's frame, its partition's table made from one Python label per cell (Partition.to_pandas
    is itself made from to_arrow, which the writers stream, where pandas stores strings in Arrow)."""
    from unittest import mock

    def labels(self: Partition, suppressed_token: str = "*", include_suppressed: bool = True, **_: object) -> pd.DataFrame:
        return self._to_pandas_from_labels(suppressed_token, include_suppressed)

    with mock.patch.object(Partition, "to_pandas", labels):
        return _cli._readable(published_frame(p, include))


def _oracle_csv(p: Partition, include: bool) -> str:
    return str(_label_frame(p, include).to_csv(index=False, lineterminator="\n"))


def _table(n: int, rng: np.random.Generator, odd: bool) -> Table:
    words = ["a", "b b", "c,d", 'q"r'] if odd else ["a", "b", "c"]
    df = pd.DataFrame({"age": rng.integers(20, 30, n).astype(str), "zip": rng.choice(["130", "148", "150"], n),
                       "w": rng.choice(["1.5", "2", "0.1", "1e-05"] if odd else ["1", "2"], n),
                       "d": rng.choice(words, n)})
    schema = Schema.build({"age": "numeric", "zip": None}, sensitive="d", insensitive=["w"])
    schema = schema.replace_attribute("w", kind="numeric")
    return Table.from_pandas(df, schema)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 300), seed=st.integers(0, 10**6), include=st.booleans(), odd=st.booleans(),
       chunk=st.sampled_from([1, 7, 64, 65_536]), frac=st.sampled_from([0.0, 0.2, 1.0]))
def test_csv_equals_the_pandas_frame(n, seed, include, odd, chunk, frac):
    rng = np.random.default_rng(seed)
    t = _table(n, rng, odd)
    p = Partition.from_labels(t, rng.integers(0, max(1, n // 5), n)).with_suppressed(rng.random(n) < frac)
    ref = _oracle_csv(p, include)
    buf = io.StringIO()
    assert write_published(p, buf, include_suppressed=include, chunk_rows=chunk) == len(ref.splitlines()) - 1
    got = buf.getvalue()
    if not odd and "," not in "".join(p.class_labels("age")):
        assert got == ref  # no label needs quoting: pandas' bytes
    read: dict[str, object] = {"dtype": str, "keep_default_na": False}
    pd.testing.assert_frame_equal(pd.read_csv(io.StringIO(got), **read), pd.read_csv(io.StringIO(ref), **read))
    raw = io.BytesIO()
    write_published(p, raw, include_suppressed=include, chunk_rows=chunk)
    assert raw.getvalue().decode() == got


@pytest.mark.parametrize("include", [False, True])
def test_parquet_equals_the_pandas_frame(tmp_path: Path, include: bool) -> None:
    rng = np.random.default_rng(4)
    t = _table(500, rng, True)
    p = Partition.from_labels(t, rng.integers(0, 50, 500)).with_suppressed(rng.random(500) < 0.1)
    path = tmp_path / "pub.parquet"
    write_published(p, path, include_suppressed=include, chunk_rows=64)
    got = pd.read_parquet(path)
    ref = _label_frame(p, include)
    assert list(got.columns) == list(ref.columns)
    for c in ref.columns:
        assert got[c].tolist() == ref[c].tolist(), c
    if include:
        assert got["suppressed"].dtype == bool and (got.loc[got["suppressed"], "ec"] == -1).all()
        assert (got.loc[got["suppressed"], "age"] == "*").all()


def test_published_arrow_types_and_no_python_frame(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(5)
    t = _table(200, rng, True)
    p = Partition.from_labels(t, rng.integers(0, 20, 200))
    monkeypatch.setattr(Partition, "to_pandas", lambda *a, **k: (_ for _ in ()).throw(AssertionError("frame")))
    a = published_arrow(p, include_suppressed=True)
    assert pa.types.is_dictionary(a.schema.field("age").type) and a.schema.field("ec").type == pa.int64()
    assert a.schema.field("w").type == pa.float64() and a.schema.field("suppressed").type == pa.bool_()
    write_published(p, io.BytesIO(), include_suppressed=True)
    with pytest.raises(ValueError, match="'format' parameter"):
        write_published(p, io.BytesIO(), format="xlsx")


@pytest.mark.parametrize("algorithm", ["flash", "sabre"])
def test_cli_output_csv_and_parquet_hold_the_published_frame(tmp_path: Path, algorithm: str) -> None:
    """anonymize -o writes (through the temporary file) what published_frame gives, as CSV or Parquet; the
    suppressed rows are flagged and `audit --published` passes on both."""
    from tests.test_cli_harden import run, write_census

    from anoncore.data.schema import Schema

    data, schema = write_census(tmp_path, 1500, rng=11)
    extra = (["--model", "k=5", "--suppression-limit", "0.05"] if algorithm == "flash" else ["-k", "5", "-t", "0.5"])
    base = ["anonymize", str(data), "--schema", str(schema), "--algorithm", algorithm, *extra, "--no-metrics",
            "--include-suppressed"]
    csv_out, pq_out = tmp_path / "pub.csv", tmp_path / "pub.parquet"
    for out in (csv_out, pq_out):
        code, _, err = run([*base, "-o", str(out)])
        assert code == 0, err
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no temporary file left
    table = Table.from_csv(data, Schema.from_toml(schema))
    got_csv = pd.read_csv(csv_out, dtype=str, keep_default_na=False)
    got_pq = pd.read_parquet(pq_out)
    assert list(got_csv.columns) == list(got_pq.columns) and got_csv.columns[-1] == "suppressed"
    for c in got_csv.columns:
        assert got_csv[c].tolist() == got_pq[c].astype(str).tolist(), c
    assert len(got_pq) == table.n_rows
    sup = got_pq["suppressed"].to_numpy()
    assert (got_pq.loc[sup, "ec"] == -1).all() and (got_pq.loc[sup, table.quasi_identifiers[0]] == "*").all()
    code, _, err = run(["audit", str(csv_out), "--schema", str(schema), "--published", "--model", "k=5"])
    assert code == 0, err


def test_to_arrow_of_a_fully_suppressed_partition_without_suppressed_rows_is_empty() -> None:
    rng = np.random.default_rng(6)
    t = _table(20, rng, False)
    p = Partition.from_labels(t, rng.integers(0, 4, 20)).with_suppressed(np.ones(20, dtype=bool))
    a = p.to_arrow(include_suppressed=False)
    assert a.num_rows == 0 and a.column_names == list(p.to_pandas(include_suppressed=False).columns)
    assert write_published(p, io.StringIO()) == 0
