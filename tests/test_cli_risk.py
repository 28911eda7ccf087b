"""`anoncore risk` and the risk section of `anoncore anonymize`: equal to the Python API, PNG and JSON."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from anoncore import Partition, Schema, Table
from anoncore.cli import main
from anoncore.datasets import synthetic_census
from anoncore.risk import quasi_identifier_analysis, risk_profile


def run_json(argv: list[str]) -> tuple[int, dict]:
    out = io.StringIO()
    code = main(argv, stdout=out)
    text = out.getvalue()
    assert text.count("\n") == 1, "--json must print exactly one line"
    return code, json.loads(text)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("riskcli")
    table = synthetic_census(1500, rng=3)
    table.to_pandas().to_csv(d / "census.csv", index=False)
    lines = []
    for a in table.attributes:
        lines.append(f'[attributes."{a.name}"]\nrole = "{a.role}"\nkind = "{a.kind}"\n')
        if a.hierarchy is not None:
            (d / f"h_{a.name}.csv").write_text("".join(";".join(r) + "\n" for r in a.hierarchy.to_rows()))
            lines.append(f'hierarchy = "h_{a.name}.csv"\n')
        if a.domain is not None:
            lines.append(f"domain = [{a.domain[0]}, {a.domain[1]}]\n")
    (d / "census.toml").write_text("".join(lines))
    return d / "census.csv", d / "census.toml"


def test_risk_command_equals_api(files, tmp_path: Path) -> None:
    data, schema = files
    t = Table.from_csv(data, Schema.from_toml(schema))
    lv = [1] * len(t.quasi_identifiers)
    png = tmp_path / "risk.png"
    code, doc = run_json(["risk", str(data), "--schema", str(schema), "--levels", ",".join(map(str, lv)),
                          "--threshold", "0.1", "--population-size", "150000", "--histogram", str(png),
                          "--qi-analysis", "--qi-max-size", "2", "--json"])
    assert code == 0 and doc["command"] == "risk"
    risk = doc["result"]["risk"]
    before = risk_profile(t, threshold=0.1, population_size=150000, compare_estimators=True)
    after = risk_profile(Partition.from_levels(t, lv), threshold=0.1, population_size=150000,
                         compare_estimators=True)
    assert risk["before"] == json.loads(json.dumps(before.to_dict()))
    assert risk["after"] == json.loads(json.dumps(after.to_dict()))
    assert sum(risk["after"]["histogram"]["records"]) == t.n_rows
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    qi = doc["result"]["quasi_identifiers"]
    assert [q["attributes"] for q in qi] == [list(q.attributes) for q in quasi_identifier_analysis(t, max_size=2)]


def test_risk_text_and_errors(files, capsys: pytest.CaptureFixture[str]) -> None:
    data, schema = files
    out = io.StringIO()
    assert main(["risk", str(data), "--schema", str(schema)], stdout=out) == 0
    assert "prosecutor" in out.getvalue() and "sample uniques" in out.getvalue()
    assert main(["risk", str(data), "--schema", str(schema), "--threshold", "2"], stdout=io.StringIO()) == 2
    assert main(["risk", str(data), "--schema", str(schema), "--population-size", "10"], stdout=io.StringIO()) == 2
    assert "smaller than" in capsys.readouterr().err
    assert main(["risk", str(data), "--schema", str(schema), "--levels", "1"], stdout=io.StringIO()) == 2
    assert main(["risk", "nope.csv", "--schema", str(schema)], stdout=io.StringIO()) == 2


def test_anonymize_report_has_risk_before_and_after(files, tmp_path: Path) -> None:
    data, schema = files
    png = tmp_path / "a.png"
    code, doc = run_json(["anonymize", str(data), "--schema", str(schema), "--algorithm", "flash", "--model", "k=5",
                          "--suppression-limit", "0.02", "--risk-histogram", str(png), "--json"])
    assert code == 0
    risk = doc["result"]["risk"]
    t = Table.from_csv(data, Schema.from_toml(schema))
    assert risk["before"]["prosecutor"]["highest_risk"] == risk_profile(t).prosecutor.highest_risk
    # the published partition is 5-anonymous: no record above 1/5
    assert risk["after"]["prosecutor"]["highest_risk"] <= 0.2
    assert risk["after"]["n_records"] + risk["after"]["n_suppressed"] == t.n_rows
    assert png.exists() and risk["histogram_png"] == str(png)
    out = io.StringIO()
    assert main(["anonymize", str(data), "--schema", str(schema), "--algorithm", "flash", "--model", "k=5"],
                stdout=out) == 0
    assert "[before]" in out.getvalue() and "[after]" in out.getvalue()


def test_audit_command_checks_risk_models(files) -> None:
    data, schema = files
    t = Table.from_csv(data, Schema.from_toml(schema))
    levels = [1] * len(t.quasi_identifiers)
    lv = ",".join(map(str, levels))
    code, doc = run_json(["audit", str(data), "--schema", str(schema), "--levels", lv, "--model", "avg-risk=0.5",
                          "--model", "sample-uniqueness=0.01", "--model", "population-uniqueness=0.01,1000000",
                          "--no-metrics", "--json"])
    prof = risk_profile(Partition.from_levels(t, levels), population_size=1e6)
    models = {m["model"]: m for m in doc["result"]["guarantees"]["models"]}
    assert models["AverageReidentificationRisk"]["achieved"] == pytest.approx(prof.prosecutor.average_risk)
    assert models["SampleUniqueness"]["achieved"] == pytest.approx(prof.sample_uniqueness)
    assert prof.population is not None
    assert models["PopulationUniqueness"]["achieved"] == pytest.approx(prof.population.uniqueness)
    assert code == (0 if all(m["passed"] for m in models.values()) else 1)
