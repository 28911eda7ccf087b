"""`anoncore anonymize`: every algorithm end to end from files, audited, equal to the Python API."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anoncore import Partition
from anoncore.audit import audit
from anoncore.cli import main, parse_model_spec
from anoncore.datasets import synthetic_census
from anoncore.models import KAnonymity, OrderedDistanceTCloseness
from anoncore.static.sabre import closeness_model


def run_json(argv: list[str]) -> tuple[int, dict]:
    out = io.StringIO()
    code = main(argv, stdout=out)
    text = out.getvalue()
    assert text.count("\n") == 1, "--json must print exactly one line"
    return code, json.loads(text)


@pytest.fixture(scope="module")
def census_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, object]:
    """A 3,000-row synthetic census written as CSV + TOML schema + ARX hierarchy files."""
    d = tmp_path_factory.mktemp("census")
    table = synthetic_census(3000, rng=7)
    df = table.to_pandas()
    df.to_csv(d / "census.csv", index=False)
    lines = []
    for a in table.attributes:
        lines.append(f'[attributes."{a.name}"]\nrole = "{a.role}"\nkind = "{a.kind}"\n')
        if a.hierarchy is not None:
            rows = a.hierarchy.to_rows()
            (d / f"h_{a.name}.csv").write_text("".join(";".join(r) + "\n" for r in rows))
            lines.append(f'hierarchy = "h_{a.name}.csv"\n')
        if a.domain is not None:
            lines.append(f"domain = [{a.domain[0]}, {a.domain[1]}]\n")
    (d / "census.toml").write_text("".join(lines))
    return d / "census.csv", d / "census.toml", table


def _published(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


@pytest.mark.parametrize("method", ["ak", "knn"])
def test_sabre_from_files_equals_api_and_is_audited(census_files, tmp_path: Path, method: str) -> None:
    from anoncore.static.sabre import sabre

    data, schema, _ = census_files
    out = tmp_path / "pub.csv"
    code, doc = run_json(["anonymize", str(data), "--schema", str(schema), "--algorithm", "sabre", "-k", "6",
                          "-t", "0.35", "--method", method, "--seed", "3", "-o", str(out), "--json"])
    assert code == 0, doc
    res = doc["result"]
    assert doc["command"] == "anonymize" and res["guarantees"]["passed"] is True
    assert [m["spec"] for m in res["guarantees"]["models"]] == ["k=6", "t-ordered=0.35@salary"]
    # the same run through the Python API on the table the CLI reads gives the same classes
    from anoncore import Schema, Table

    t2 = Table.from_csv(data, Schema.from_toml(schema))
    api = sabre(t2, [KAnonymity(6), closeness_model(t2, 0.35)], method=method, rng=3)
    assert res["counts"]["n_classes"] == api.partition.n_classes
    pub = _published(out)
    # nothing lost: every input row is in the published file (SABRE suppresses nothing)
    assert len(pub) + res["counts"]["n_suppressed_rows"] == 3000
    assert np.array_equal(pub["ec"].astype(int).to_numpy(), api.partition.labels)
    # an independent check on the written file: classes of >= 6 rows, ordered EMD <= 0.35 on salary
    sizes = pub.groupby("ec").size()
    assert sizes.min() >= 6
    rep = audit(t2, Partition.from_labels(t2, pub["ec"].astype(int).to_numpy()),
                [KAnonymity(6), OrderedDistanceTCloseness(0.35, sensitive="salary")])
    assert rep.passed


def test_arx_readings_from_the_command_line_equal_api(census_files, tmp_path: Path) -> None:
    """`t-ordered-arx` and `delta-arx` (ARX's readings) search and audit as the API's models with those options."""
    from anoncore import Schema, Table
    from anoncore.models import DeltaDisclosure
    from anoncore.static.lattice import lattice_search

    data, schema, _ = census_files
    t2 = Table.from_csv(data, Schema.from_toml(schema))
    for spec, model, field in (("t-ordered-arx=0.2@salary", OrderedDistanceTCloseness(0.2, sensitive="salary",
                                                                                      order="string"),
                                ("order", "string")),
                               ("delta-arx=3@salary", DeltaDisclosure(3.0, sensitive="salary", absent="ignore"),
                                ("absent", "ignore"))):
        code, doc = run_json(["anonymize", str(data), "--schema", str(schema), "--algorithm", "flash",
                              "--model", "k=4", "--model", spec, "--suppression-limit", "0.05",
                              "-o", str(tmp_path / "pub.csv"), "--force", "--json"])
        assert code == 0, doc
        res = doc["result"]
        api = lattice_search(t2, [KAnonymity(4), model], suppression_limit=0.05)
        assert res["partition"]["levels"] == [int(x) for x in api.partition.levels], spec
        assert res["counts"]["n_suppressed_rows"] == api.partition.n_suppressed
        assert res["guarantees"]["passed"] is True
        fields = res["guarantees"]["models"][1]
        assert fields[field[0]] == field[1], fields
    # the text report keeps a space after a spec longer than its column
    out = io.StringIO()
    assert main(["anonymize", str(data), "--schema", str(schema), "--algorithm", "flash", "--model", "k=4",
                 "--model", "t-ordered-arx=0.2@salary", "--suppression-limit", "0.05", "-o", str(tmp_path / "pub.csv"),
                 "--force"], stdout=out) == 0
    text = out.getvalue()
    assert re.search(r"^  t-ordered-arx=0.2@salary +passed on salary", text, re.MULTILINE), text[-600:]


def test_arx_kmap_from_the_command_line_equals_api(census_files, tmp_path: Path) -> None:
    """`kmap-ztp=K,N` (ARX's estimated k-map) searches as the k-anonymity of the derived k and audits as KMap."""
    from anoncore import Schema, Table
    from anoncore.models import KMap
    from anoncore.static.lattice import lattice_search

    data, schema, _ = census_files
    t2 = Table.from_csv(data, Schema.from_toml(schema))
    model = KMap(12, population_size=20_000, estimator="zero_truncated_poisson")
    kd = model.derived(t2.n_rows).k
    assert kd < 12
    code, doc = run_json(["anonymize", str(data), "--schema", str(schema), "--algorithm", "flash",
                          "--model", "kmap-ztp=12,20000", "--suppression-limit", "0.05",
                          "-o", str(tmp_path / "pub.csv"), "--force", "--json"])
    assert code == 0, doc
    res = doc["result"]
    api = lattice_search(t2, [KAnonymity(kd)], suppression_limit=0.05)
    assert res["partition"]["levels"] == [int(x) for x in api.partition.levels]
    assert res["counts"]["n_suppressed_rows"] == api.partition.n_suppressed
    entry = res["guarantees"]["models"][0]
    assert (entry["model"], entry["estimator"], entry["passed"]) == ("KMap", "zero_truncated_poisson", True)
    assert entry["achieved"] >= kd and entry["derived_k"] == kd


def test_flash_levels_equal_api(census_files, tmp_path: Path) -> None:
    from anoncore import Schema, Table
    from anoncore.static.lattice import lattice_search

    data, schema, _ = census_files
    out = tmp_path / "pub.csv"
    code, doc = run_json(["anonymize", str(data), "--schema", str(schema), "--algorithm", "flash",
                          "--model", "k=5", "--model", "l-distinct=2@salary", "--suppression-limit", "0.02",
                          "--metric", "dm_star", "-o", str(out), "--include-suppressed", "--json"])
    assert code == 0
    res = doc["result"]
    t2 = Table.from_csv(data, Schema.from_toml(schema))
    from anoncore.models import DistinctLDiversity

    api = lattice_search(t2, [KAnonymity(5), DistinctLDiversity(2, sensitive="salary")], suppression_limit=0.02,
                         metric="dm_star")
    assert res["partition"]["levels"] == [int(x) for x in api.partition.levels]
    pub = _published(out)
    assert len(pub) == 3000  # suppressed rows kept, shown as '*'
    n_sup = int((pub[list(t2.quasi_identifiers)] == "*").all(axis=1).sum())
    assert n_sup == res["counts"]["n_suppressed_rows"] == api.partition.n_suppressed
    assert n_sup <= int(0.02 * 3000)
    kept = pub[~(pub[list(t2.quasi_identifiers)] == "*").all(axis=1)]
    assert kept.groupby(list(t2.quasi_identifiers)).size().min() >= 5
    assert kept.groupby(list(t2.quasi_identifiers))["salary"].nunique().min() >= 2


@pytest.mark.parametrize("alg", ["datafly", "samarati", "greedy"])
def test_heuristics_from_files(census_files, alg: str) -> None:
    data, schema, _ = census_files
    code, doc = run_json(["anonymize", str(data), "--schema", str(schema), "--algorithm", alg, "--model", "k=4",
                          "--suppression-limit", "0.05", "--json"])
    assert code == 0 and doc["result"]["guarantees"]["passed"] is True
    assert doc["result"]["counts"]["n_suppressed_rows"] <= 150
    assert len(doc["result"]["partition"]["levels"]) == 7


def test_tmondrian_text_report(census_files) -> None:
    data, schema, _ = census_files
    out = io.StringIO()
    code = main(["anonymize", str(data), "--schema", str(schema), "--algorithm", "tmondrian", "-k", "6", "-t",
                 "0.35"], stdout=out)
    text = out.getvalue()
    assert code == 0
    assert "computed by tmondrian" in text and "PASSED" in text


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--algorithm", "flash"], "needs at least one --model"),
        (["--algorithm", "sabre", "-k", "6"], "needs -t/--t"),
        (["--algorithm", "sabre", "-t", "1.5"], r"t must be a number in the range \(0, 1\]"),
        (["--algorithm", "sabre", "-t", "0.3", "--model", "k=2"], "--model is for the lattice algorithms"),
        (["--algorithm", "flash", "--model", "k=2", "--suppression-limit", "2"], r"the suppression limit must be a number in the range \[0, 1\]"),
        (["--algorithm", "nope", "--model", "k=2"], "invalid choice: 'nope'"),
        (["--algorithm", "flash", "--model", "k=2", "-o", "/nonexistent/dir/x.csv"], "does not exist"),
    ],
)
def test_bad_arguments_exit_2(census_files, extra: list[str], match: str,
                              capsys: pytest.CaptureFixture[str]) -> None:
    data, schema, _ = census_files
    code = main(["anonymize", str(data), "--schema", str(schema), *extra], stdout=io.StringIO())
    assert code == 2
    assert re.search(match, capsys.readouterr().err)


def test_k_larger_than_table_is_refused(census_files, capsys: pytest.CaptureFixture[str]) -> None:
    data, schema, _ = census_files
    code = main(["anonymize", str(data), "--schema", str(schema), "--algorithm", "sabre", "-k", "5000", "-t",
                 "0.3"], stdout=io.StringIO())
    assert code == 2  # a bad argument value (docs/cli.md, exit codes)
    assert "-k 5000 is larger than the table (3000 rows)" in capsys.readouterr().err


def test_unknown_sensitive_column_is_refused(census_files, capsys: pytest.CaptureFixture[str]) -> None:
    data, schema, _ = census_files
    code = main(["anonymize", str(data), "--schema", str(schema), "--algorithm", "sabre", "-t", "0.3",
                 "--sensitive", "income"], stdout=io.StringIO())
    assert code == 2
    assert "income" in capsys.readouterr().err


@pytest.mark.parametrize(("alg", "extra", "spec"), [
    ("burel", [], "beta-enhanced=4.0@salary"),
    ("burel", ["--variant", "range", "--epsilon", "2"], "beta-range=4.0,2.0@salary"),
    ("lmondrian", ["--variant", "basic"], "beta-basic=4.0@salary"),
    ("dmondrian", [], "beta-enhanced=4.0@salary"),
])
def test_beta_likeness_algorithms_from_files(census_files, tmp_path: Path, alg: str, extra: list[str],
                                             spec: str) -> None:
    from anoncore import Schema, Table
    from anoncore.models import EnhancedBetaLikeness

    data, schema, _ = census_files
    out = tmp_path / "pub.csv"
    code, doc = run_json(["anonymize", str(data), "--schema", str(schema), "--algorithm", alg, "--beta", "4",
                          *extra, "--seed", "2", "-o", str(out), "--json"])
    assert code == 0, doc
    res = doc["result"]
    assert [m["spec"] for m in res["guarantees"]["models"]] == [spec] and res["guarantees"]["passed"] is True
    pub = _published(out)
    assert len(pub) + res["counts"]["n_suppressed_rows"] == 3000
    # independent re-check of the written file against the model the algorithm guarantees
    t2 = Table.from_csv(data, Schema.from_toml(schema))
    rep = audit(t2, Partition.from_labels(t2, pub["ec"].astype(int).to_numpy()), [parse_model_spec(spec).build()])
    assert rep.passed
    if alg != "lmondrian":  # enhanced, range-based and delta-disclosure all imply enhanced beta-likeness
        assert audit(t2, Partition.from_labels(t2, pub["ec"].astype(int).to_numpy()),
                     [EnhancedBetaLikeness(4.0, sensitive="salary")]).passed


@pytest.mark.parametrize(("extra", "match"), [
    (["--algorithm", "burel"], "needs --beta"),
    (["--algorithm", "burel", "--beta", "0"], r"beta must be a number in the range \(0, inf\)"),
    (["--algorithm", "burel", "--beta", "2", "--variant", "range"], "needs --epsilon"),
    (["--algorithm", "burel", "--beta", "2", "--epsilon", "-1"], r"epsilon must be a number in the range \[0, inf\)"),
    (["--algorithm", "burel", "--beta", "2", "--epsilon", "1"], "--epsilon is for --variant range only"),
    (["--algorithm", "dmondrian", "--beta", "2", "--variant", "basic"], "enhanced beta-likeness only"),
])
def test_beta_bad_arguments(census_files, extra: list[str], match: str, capsys: pytest.CaptureFixture[str]) -> None:
    data, schema, _ = census_files
    code = main(["anonymize", str(data), "--schema", str(schema), *extra], stdout=io.StringIO())
    assert code == 2
    assert re.search(match, capsys.readouterr().err)


@pytest.mark.parametrize("argv", [["--algorithm", "flash", "--model", "k=5", "--suppression-limit", "0.02"],
                                  ["--algorithm", "burel", "--beta", "4"],
                                  ["--algorithm", "sabre", "-t", "0.35", "-k", "4"],
                                  ["--algorithm", "dmondrian", "--beta", "4"]])
def test_anonymize_audits_once(census_files, monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> None:
    """The algorithm's finisher audits the partition; the command reuses that report instead of auditing again."""
    import importlib

    data, schema, _ = census_files
    calls: list[int] = []
    audit_mod = importlib.import_module("anoncore.audit")
    finish_mod = importlib.import_module("anoncore.static._finish")
    real = audit_mod.audit

    def counting(*a: object, **kw: object) -> object:
        calls.append(1)
        return real(*a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(audit_mod, "audit", counting)
    monkeypatch.setattr(finish_mod, "audit", counting)
    code, doc = run_json(["anonymize", str(data), "--schema", str(schema), *argv, "--json"])
    assert code == 0 and doc["result"]["guarantees"]["passed"] is True
    assert len(calls) == 1
