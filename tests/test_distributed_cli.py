"""`anoncore anonymize --algorithm sabre|burel|*mondrian` and `anoncore audit --labels/--published` on Parquet
folders, on a local Dask cluster (2 worker processes)."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

from anoncore import Schema, Table, audit
from anoncore.cli import main
from anoncore.datasets.census import synthetic_census_frame
from anoncore.models import KAnonymity, OrderedDistanceTCloseness
from anoncore.results import Partition

N = 9_000


@pytest.fixture(scope="module")
def client(dask_client):  # (conftest: one local cluster of 2 workers for the modules that kill no worker)
    return dask_client


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cli17")
    df = synthetic_census_frame(N, 2)[["age", "sex", "race", "salary"]]
    d = tmp / "data"
    d.mkdir()
    for i in range(3):
        df.iloc[i * N // 3:(i + 1) * N // 3].to_parquet(d / f"part-{i}.parquet")
    (tmp / "sex.csv").write_text("male;*\nfemale;*\n")
    (tmp / "race.csv").write_text("".join(f"{r};*\n" for r in sorted(df["race"].unique())))
    (tmp / "age.csv").write_text("".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};*\n" for a in range(120)))
    (tmp / "salary.csv").write_text("".join(f"{s};*\n" for s in range(1, 51)))
    schema = tmp / "schema.toml"
    schema.write_text('[attributes.age]\nrole = "quasi_identifier"\nkind = "numeric"\nhierarchy = "age.csv"\n'
                      '[attributes.sex]\nrole = "quasi_identifier"\nhierarchy = "sex.csv"\n'
                      '[attributes.race]\nrole = "quasi_identifier"\nhierarchy = "race.csv"\n'
                      '[attributes.salary]\nrole = "sensitive"\nkind = "numeric"\nhierarchy = "salary.csv"\n')
    return tmp, d, schema, df


def _cli(argv):
    buf = io.StringIO()
    code = main(argv, stdout=buf)
    return code, buf.getvalue()


def test_anonymize_sabre_parts_then_audit_published(client, files, capsys):
    tmp, d, schema, _df = files
    out = tmp / "sabre_out"
    code, text = _cli(["anonymize", str(d), "--schema", str(schema), "--algorithm", "sabre", "-k", "4", "-t",
                       "0.3", "--parts", "3", "--output", str(out), "--scheduler", client.scheduler.address,
                       "--json"])
    assert code == 0, text
    doc = json.loads(text)
    assert doc["audit"]["passed"] and sum(doc["parts"]) == N and len(doc["parts"]) == 3
    assert "two_phase:" in capsys.readouterr().err  # a progress line per phase on stderr
    pub = dd.read_parquet(str(out)).compute()
    assert len(pub) == N and pub["ec"].nunique() == doc["n_classes"]
    # independent check: the in-memory audit of the published classes, against the input table
    sch = Schema.from_toml(str(schema))
    inp = dd.read_parquet(str(d)).compute()
    table = Table.from_pandas(inp, sch)
    assert sorted(pub["salary"]) == sorted(inp["salary"])
    # the published file keeps the rows in part order; audit its classes through --published
    code, text = _cli(["audit", str(out), "--schema", str(schema), "--model", "k=4", "--model", "t-ordered=0.3",
                       "--published", "--scheduler", client.scheduler.address, "--json"])
    assert code == 0, text
    rep = json.loads(text)
    assert rep["passed"] and rep["n_rows"] == N and rep["n_suppressed"] == 0
    assert rep["KAnonymity.k"] >= 4 and rep["OrderedDistanceTCloseness.t"] <= 0.3 + 1e-12
    assert rep["n_classes"] == doc["n_classes"] and table.n_rows == N


def test_audit_labels_column_fails_and_passes(client, files, capsys):
    """--labels COLUMN on Parquet: a grouping by sex alone is 2-anonymous but not 0.01-close; checked against
    the in-memory audit of the same classes."""
    tmp, _d, schema, df = files
    lab = tmp / "labelled"
    lab.mkdir()
    g = df.assign(cls=df["sex"].astype(str))
    g.loc[g.index[:10], "cls"] = "SUP"
    g.iloc[: N // 2].to_parquet(lab / "a.parquet")
    g.iloc[N // 2:].to_parquet(lab / "b.parquet")
    code, text = _cli(["audit", str(lab), "--schema", str(schema), "--model", "k=2", "--model", "t-ordered=0.01",
                       "--labels", "cls", "--suppressed-label", "SUP", "--scheduler", client.scheduler.address,
                       "--json"])
    rep = json.loads(text)
    assert code == 1 and not rep["passed"] and rep["n_suppressed"] == 10 and rep["n_classes"] == 2
    table = Table.from_pandas(g[["age", "sex", "race", "salary"]], Schema.from_toml(str(schema)))
    part = Partition.from_labels(table, g["cls"].to_numpy().astype(str), g["cls"].to_numpy() == "SUP")
    mem = audit(table, part, [KAnonymity(2), OrderedDistanceTCloseness(0.01)], reference="table")
    assert rep["KAnonymity.k"] == mem[0].achieved
    assert rep["OrderedDistanceTCloseness.t"] == pytest.approx(mem[1].achieved, abs=1e-12)
    code, text = _cli(["audit", str(lab), "--schema", str(schema), "--model", "k=2", "--labels", "nope",
                       "--scheduler", client.scheduler.address])
    assert code == 2 and "'nope' is not a column" in capsys.readouterr().err


@pytest.mark.parametrize("algorithm", ["burel", "lmondrian"])
def test_anonymize_beta_algorithms(client, files, algorithm):
    _tmp, d, schema, _ = files
    code, text = _cli(["anonymize", str(d), "--schema", str(schema), "--algorithm", algorithm, "--beta", "3",
                       "--parts", "2", "--scheduler", client.scheduler.address, "--json"])
    assert code == 0, text
    doc = json.loads(text)
    assert doc["audit"]["passed"] and doc["audit"]["EnhancedBetaLikeness.beta"] <= 3 + 1e-12
    assert np.sum(doc["parts"]) == N and doc["output"] is None


def test_usage_errors(client, files):
    tmp, d, schema, _ = files
    addr = client.scheduler.address
    code, _ = _cli(["anonymize", str(d), "--schema", str(schema), "--algorithm", "sabre", "-k", "4",
                    "--scheduler", addr])
    assert code == 2  # no -t
    code, _ = _cli(["anonymize", str(d), "--schema", str(schema), "--algorithm", "burel", "--beta", "2",
                    "--variant", "range", "--epsilon", "3", "--scheduler", addr])
    assert code == 2
    out = tmp / "never17"
    code, _ = _cli(["anonymize", str(d), "--schema", str(schema), "--algorithm", "sabre", "-k", "4", "-t", "0.3",
                    "--output", str(out), "--scheduler", "tcp://127.0.0.1:1"])
    assert code != 0 and not out.exists()
