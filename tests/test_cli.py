"""The command line: model-spec parser, `anoncore demo`, `anoncore audit`, JSON schema, exit codes."""

from __future__ import annotations

import importlib.util
import io
import json
from pathlib import Path

import numpy as np
import pytest

from anoncore._progress import Progress
from anoncore.cli import MODEL_SPECS, main, parse_model_spec

HAVE_AUDIT = importlib.util.find_spec("anoncore.audit") is not None
HAVE_METRICS = importlib.util.find_spec("anoncore.metrics") is not None

TOP_KEYS = {"anoncore_version", "schema_version", "command", "parameters", "result"}
RESULT_KEYS = {"table", "partition", "counts", "guarantees", "metrics", "timings", "notes"}


def run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    code = main(argv, stdout=out)
    return code, out.getvalue()


def run_json(argv: list[str]) -> tuple[int, dict]:
    code, text = run(argv)
    assert text.count("\n") == 1 and text.endswith("\n"), "--json must print exactly one line"
    return code, json.loads(text)


# ---------------------------------------------------------------------------------------------------------
# model specs

@pytest.mark.parametrize(
    ("text", "cls", "params", "sensitive"),
    [
        ("k=5", "KAnonymity", (5,), None),
        ("l-distinct=3", "DistinctLDiversity", (3,), None),
        ("l-entropy=2.5", "EntropyLDiversity", (2.5,), None),
        ("l-recursive=4,3", "RecursiveCLDiversity", (4.0, 3), None),
        ("t-equal=0.2", "EqualDistanceTCloseness", (0.2,), None),
        ("t-ordered=0.2@salary", "OrderedDistanceTCloseness", (0.2,), "salary"),
        ("t-hierarchical=0.2@occupation", "HierarchicalDistanceTCloseness", (0.2,), "occupation"),
        ("t-hellinger=0.1", "HellingerTCloseness", (0.1,), None),
        ("beta-basic=2", "BasicBetaLikeness", (2.0,), None),
        ("beta-enhanced=1.5@disease", "EnhancedBetaLikeness", (1.5,), "disease"),
        ("delta=1.5", "DeltaDisclosure", (1.5,), None),
        ("beta-semantic=2@disease", "SemanticBetaLikeness", (2.0,), "disease"),
        ("beta-range=2,0.5", "RangeBetaLikeness", (2.0, 0.5), None),
        ("T-Ordered = 0.25 @ salary-class", "OrderedDistanceTCloseness", (0.25,), "salary-class"),
    ],
)
def test_parse_model_spec(text: str, cls: str, params: tuple, sensitive: str | None) -> None:
    s = parse_model_spec(text)
    assert (s.class_name, s.params, s.sensitive) == (cls, params, sensitive)
    assert s.text == text
    assert type(s.params[0]) is type(params[0])


def test_every_spec_maps_to_a_model_class_name() -> None:
    assert {v[0] for v in MODEL_SPECS.values()} == {
        "KAnonymity", "DistinctLDiversity", "EntropyLDiversity", "RecursiveCLDiversity", "EqualDistanceTCloseness",
        "OrderedDistanceTCloseness", "HierarchicalDistanceTCloseness", "HellingerTCloseness", "BasicBetaLikeness",
        "EnhancedBetaLikeness", "SemanticBetaLikeness", "RangeBetaLikeness", "DeltaDisclosure",
        "AverageReidentificationRisk", "SampleUniqueness", "PopulationUniqueness", "KMap"}


@pytest.mark.skipif(not HAVE_AUDIT, reason="anoncore.models not merged yet")
def test_specs_build_the_models() -> None:
    from anoncore import models

    m = parse_model_spec("t-ordered=0.2@salary").build()
    assert isinstance(m, models.OrderedDistanceTCloseness) and m.t == 0.2 and m.sensitive == "salary"
    assert parse_model_spec("k=7").build() == models.KAnonymity(7)
    r = parse_model_spec("l-recursive=4,3").build()
    assert (r.c, r.l) == (4.0, 3)
    b = parse_model_spec("beta-range=2,0.5@salary").build()
    assert isinstance(b, models.RangeBetaLikeness) and (b.beta, b.epsilon, b.sensitive) == (2.0, 0.5, "salary")
    # ARX's readings (docs/arx-differences.md)
    assert parse_model_spec("t-ordered-arx=0.3@salary").build() == models.OrderedDistanceTCloseness(
        0.3, sensitive="salary", order="string")
    assert parse_model_spec("delta-arx=1.5").build() == models.DeltaDisclosure(1.5, absent="ignore")
    assert parse_model_spec("delta-arx=1.5").to_dict()["parameters"] == {"delta": 1.5, "absent": "ignore"}


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("k", r"must look like NAME=VALUE"),
        ("foo=1", r"unknown model 'foo'.*known models: k, l-distinct"),
        ("k=0", r"k must be an int in the range \[1, inf\). Got 0"),
        ("k=2.5", r"k must be an int. Got '2.5'"),
        ("l-distinct=x", r"l must be an int"),
        ("l-entropy=0.5", r"l must be a number in the range \[1, inf\). Got 0.5"),
        ("t-equal=1.5", r"t must be a number in the range \(0, 1\]. Got 1.5"),
        ("t-hellinger=0", r"t must be a number in the range \(0, 1\]. Got 0"),
        ("t-ordered=nan", r"t must be a number in the range"),
        ("beta-basic=-1", r"beta must be a number in the range \(0, inf\)"),
        ("delta=0", r"delta must be a number in the range \(0, inf\)"),
        ("beta-range=2,-1", r"epsilon must be a number in the range \[0, inf\)"),
        ("l-recursive=4", r"takes 2 value\(s\) \(c,l\), got 1"),
        ("t-equal=", r"takes 1 value\(s\) \(t\), got 0"),
        ("k=5@salary", r"k does not use a sensitive attribute"),
        ("t-equal=0.2@", r"the column after '@' is empty"),
    ],
)
def test_parse_model_spec_rejects(text: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        parse_model_spec(text)


def test_parse_model_spec_type() -> None:
    with pytest.raises(TypeError, match="must be a str"):
        parse_model_spec(5)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------------------
# demo

def test_demo_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run_json(["demo", "--rows", "3000", "--seed", "4", "--json", "--head", "3"])
    assert code == 0
    assert set(doc) == TOP_KEYS
    assert doc["schema_version"] == "1" and doc["command"] == "demo"
    assert doc["parameters"]["rows"] == 3000 and doc["parameters"]["seed"] == 4
    res = doc["result"]
    assert RESULT_KEYS | {"published_head"} == set(res)
    assert res["counts"]["n_rows"] == 3000
    assert len(res["published_head"]) == 3
    assert {"age", "salary", "ec"} <= set(res["published_head"][0])
    assert res["guarantees"]["k"] >= 5  # classes below 5 rows are suppressed by default
    assert set(res["timings"]) >= {"generate", "partition", "total"}
    assert res["guarantees"]["audited"] is HAVE_AUDIT
    assert (res["metrics"] is not None) is HAVE_METRICS
    # piped: no progress bar, nothing on stderr
    assert capsys.readouterr().err == ""


def test_demo_searches_the_optimal_node_and_passes_its_audit() -> None:
    from anoncore.datasets import synthetic_census
    from anoncore.models import DistinctLDiversity, KAnonymity, OrderedDistanceTCloseness
    from anoncore.static.lattice import lattice_search

    code, doc = run_json(["demo", "--rows", "5000", "--seed", "2", "--json", "--no-metrics"])
    assert code == 0
    res = doc["result"]
    assert res["partition"]["source"] == "algorithm" and res["partition"]["algorithm"] == "flash"
    assert res["guarantees"]["passed"] is True
    assert [m["spec"] for m in res["guarantees"]["models"]] == ["k=5", "l-distinct=3", "t-ordered=0.3"]
    ref = lattice_search(synthetic_census(5000, rng=2), [KAnonymity(5), DistinctLDiversity(3),
                                                         OrderedDistanceTCloseness(0.3)], suppression_limit=0.02)
    assert res["partition"]["levels"] == [int(x) for x in ref.partition.levels]
    assert res["counts"]["n_suppressed_rows"] == ref.partition.n_suppressed <= 100  # default limit 2 %
    code, doc = run_json(["demo", "--rows", "5000", "--seed", "2", "--json", "--no-metrics", "--model", "k=10",
                          "--model", "beta-basic=3", "--suppression-limit", "0.05"])
    assert code == 0 and doc["result"]["counts"]["n_suppressed_rows"] <= 250
    assert doc["result"]["guarantees"]["k"] >= 10


def test_demo_counts_match_an_independent_group_by() -> None:
    from anoncore import Partition
    from anoncore.datasets import synthetic_census

    code, doc = run_json(["demo", "--rows", "4000", "--seed", "9", "--levels", "1,0,1,1,1,1,1", "--json",
                          "--suppress-below", "3", "--no-metrics"])
    assert code == 0
    c = doc["result"]["counts"]
    published = Partition.from_levels(synthetic_census(4000, rng=9), [1, 0, 1, 1, 1, 1, 1]).to_pandas()
    qis = ["age", "sex", "education", "marital_status", "race", "work_class", "birth_place"]
    sizes = published.groupby(qis).size()
    assert c["n_classes"] == len(sizes)
    assert c["n_suppressed_rows"] == int(sizes[sizes < 3].sum())
    assert c["n_published_classes"] == int((sizes >= 3).sum())
    assert c["min_class_size"] == int(sizes[sizes >= 3].min())
    assert doc["result"]["partition"]["levels"] == [1, 0, 1, 1, 1, 1, 1]


def test_demo_text() -> None:
    code, text = run(["demo", "--rows", "2000", "--head", "4"])
    assert code == 0
    assert "Published table" in text and "k-anonymity achieved" in text
    assert "birth_place" in text and "Timings" in text


@pytest.mark.skipif(not HAVE_AUDIT, reason="anoncore.audit not merged yet")
def test_demo_audit_models() -> None:
    code, doc = run_json(["demo", "--rows", "3000", "--json", "--model", "k=5", "--model", "l-distinct=2@salary"])
    assert code == 0
    g = doc["result"]["guarantees"]
    assert [m["spec"] for m in g["models"]] == ["k=5", "l-distinct=2@salary"]
    assert g["models"][0]["passed"] is True  # suppression below 5 guarantees k = 5


# ---------------------------------------------------------------------------------------------------------
# audit

TOY_CSV = "zip,age,disease,ec\n13053,28,flu,a\n13058,28,cancer,a\n14853,50,flu,b\n14850,50,ulcer,b\n" \
          "13068,30,cancer,c\n13067,30,flu,c\n"


@pytest.fixture()
def toy_files(tmp_path: Path) -> tuple[Path, Path]:
    data = tmp_path / "toy.csv"
    data.write_text(TOY_CSV)
    (tmp_path / "zip.csv").write_text("".join(
        f"{z};{z[:4]}*;{z[:3]}**;*\n" for z in ["13053", "13058", "14853", "14850", "13068", "13067"]))
    (tmp_path / "age.csv").write_text("".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};*\n" for a in range(20, 60)))
    schema = tmp_path / "schema.toml"
    schema.write_text('[attributes.zip]\nrole = "quasi_identifier"\nhierarchy = "zip.csv"\n'
                      '[attributes.age]\nrole = "quasi_identifier"\nhierarchy = "age.csv"\n'
                      '[attributes.disease]\nrole = "sensitive"\n')
    return data, schema


def test_audit_levels_json(toy_files: tuple[Path, Path]) -> None:
    data, schema = toy_files
    code, doc = run_json(["audit", str(data), "--schema", str(schema), "--model", "k=2", "--model",
                          "l-distinct=2", "--levels", "1,0", "--json"])
    assert set(doc) == TOP_KEYS and doc["command"] == "audit"
    res = doc["result"]
    assert RESULT_KEYS == set(res)
    # zip at level 1 (1305*, 1485*, 1306*) and exact age: three classes of two rows each
    assert res["counts"]["n_classes"] == 3 and res["counts"]["min_class_size"] == 2
    assert res["guarantees"]["k"] == 2
    assert res["partition"] == {"source": "levels", "levels": [1, 0], "suppress_below": 0}
    assert [m["spec"] for m in doc["parameters"]["models"]] == ["k=2", "l-distinct=2"]
    if HAVE_AUDIT:
        assert code == 0 and res["guarantees"]["passed"] is True
        assert [m["passed"] for m in res["guarantees"]["models"]] == [True, True]
    else:
        assert code == 0 and res["guarantees"]["audited"] is False


@pytest.mark.skipif(not HAVE_AUDIT, reason="anoncore.audit not merged yet")
def test_audit_failing_model_exit_code(toy_files: tuple[Path, Path]) -> None:
    data, schema = toy_files
    code, doc = run_json(["audit", str(data), "--schema", str(schema), "--model", "k=3", "--levels", "1,0",
                          "--json"])
    assert code == 1 and doc["result"]["guarantees"]["passed"] is False


def test_audit_labels_column_and_file(toy_files: tuple[Path, Path], tmp_path: Path) -> None:
    data, schema = toy_files
    code, doc = run_json(["audit", str(data), "--schema", str(schema), "--model", "k=2", "--labels", "ec", "--json"])
    assert code == 0
    assert doc["result"]["counts"]["n_classes"] == 3
    assert doc["result"]["partition"]["labels"] == "column 'ec'"
    lab = tmp_path / "labels.txt"
    lab.write_text("ec\n0\n0\n0\n1\n1\n1\n")  # header line + one label per data row
    code, doc = run_json(["audit", str(data), "--schema", str(schema), "--model", "k=3", "--labels", str(lab),
                          "--json"])
    assert code == 0
    assert doc["result"]["counts"]["n_classes"] == 2 and doc["result"]["guarantees"]["k"] == 3
    lab.write_text("0\n0\n0\n1\n1\nx\n")
    code, doc = run_json(["audit", str(data), "--schema", str(schema), "--model", "k=3", "--labels", str(lab),
                          "--suppressed-label", "x", "--json"])
    c = doc["result"]["counts"]
    assert (c["n_suppressed_rows"], c["n_published_classes"], c["min_class_size"]) == (1, 2, 2)


def test_audit_text_report(toy_files: tuple[Path, Path]) -> None:
    data, schema = toy_files
    code, text = run(["audit", str(data), "--schema", str(schema), "--model", "k=2", "--levels", "2,1"])
    assert code == 0
    assert "Partition: full-domain generalization, levels [2, 1]" in text
    assert "k = 2" in text


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        ([], "the following arguments are required: COMMAND"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        (["demo", "--rows", "0"], "expected an int >= 1. Got 0"),
        (["demo", "--model", "k=0"], r"k must be an int in the range \[1, inf\)"),
        (["demo", "--levels", "1,0"], r"--levels needs 7 values"),
        (["demo", "--levels", "1,a"], "levels must be comma-separated ints"),
        (["demo", "--suppression-limit", "1.5"], r"the suppression limit must be a number in the range \[0, 1\]"),
        (["audit", "DATA", "--model", "k=2", "--levels", "1,0"], "the following arguments are required: --schema"),
        (["audit", "{data}", "--schema", "{schema}", "--levels", "1,0"], "required: --model"),
        (["audit", "{data}", "--schema", "{schema}", "--model", "k=2"], "one of the arguments --levels --labels"),
        (["audit", "{data}", "--schema", "{schema}", "--model", "k=2", "--levels", "1,0", "--labels", "ec"],
         "not allowed with argument"),
        (["audit", "{data}", "--schema", "{schema}", "--model", "foo=2", "--levels", "1,0"], "unknown model 'foo'"),
        (["audit", "{data}", "--schema", "{schema}", "--model", "k=2", "--levels", "1,0,0"],
         r"--levels needs 2 values \(one per quasi-identifier \['zip', 'age'\]\)"),
        (["audit", "{data}", "--schema", "{schema}", "--model", "k=2", "--levels", "1,7"],
         r"The level of 'age' must be in the range \[0, 2\]"),
        (["audit", "missing.csv", "--schema", "{schema}", "--model", "k=2", "--levels", "1,0"],
         "data file 'missing.csv' does not exist"),
        (["audit", "{data}", "--schema", "nope.toml", "--model", "k=2", "--levels", "1,0"],
         "schema file 'nope.toml' does not exist"),
        (["audit", "{data}", "--schema", "{schema}", "--model", "k=2", "--labels", "nocol"],
         "is neither a column of"),
        (["audit", "{data}", "--schema", "{schema}", "--model", "k=2", "--labels", "ec", "--suppress-below", "2"],
         "--suppress-below works with --levels"),
        (["audit", "{data}", "--schema", "{schema}", "--model", "l-distinct=2@zip", "--levels", "1,0"],
         "sensitive attribute 'zip'"),
    ],
)
def test_bad_arguments_exit_2(argv: list[str], match: str, toy_files: tuple[Path, Path],
                              capsys: pytest.CaptureFixture[str]) -> None:
    data, schema = toy_files
    argv = [a.format(data=data, schema=schema) for a in argv]
    code, out = run(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert out == ""
    import re

    assert re.search(match, err), err


def test_labels_file_wrong_length(toy_files: tuple[Path, Path], tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    data, schema = toy_files
    lab = tmp_path / "short.txt"
    lab.write_text("0\n1\n")
    code, _ = run(["audit", str(data), "--schema", str(schema), "--model", "k=2", "--labels", str(lab)])
    assert code == 2
    assert "has 2 labels, but the data has 6 rows" in capsys.readouterr().err


def test_help_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["--version"])[0] == 0
    assert "anoncore" in capsys.readouterr().out
    assert run(["audit", "--help"])[0] == 0
    assert "--labels COLUMN_OR_FILE" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------------------
# progress helper

class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_draws_on_a_terminal_only() -> None:
    tty = _Tty()
    with Progress(4, "work", stream=tty, min_interval=0.0) as p:
        for _ in range(4):
            p.advance(step="step")
    text = tty.getvalue()
    assert "work [" in text and "100.0% 4/4" in text and text.endswith("\n")
    piped = io.StringIO()
    with Progress(4, "work", stream=piped) as p:
        p.advance(4)
    assert piped.getvalue() == "" and p.done == 4


def test_json_strict_numbers() -> None:
    from anoncore.cli._common import _jsonable

    doc = _jsonable({"a": np.float64("nan"), "b": np.inf, "c": np.int32(3), "d": (1.5, -np.inf), "e": np.bool_(1)})
    assert doc == {"a": None, "b": "inf", "c": 3, "d": [1.5, "-inf"], "e": True}
    json.dumps(doc, allow_nan=False)


def test_published_head_equals_the_published_table() -> None:
    from anoncore import Partition
    from anoncore.cli._common import _published_head
    from anoncore.datasets import synthetic_census

    t = synthetic_census(500, rng=2)
    p = Partition.from_levels(t, [1, 0, 1, 1, 0, 1, 1])
    p = p.with_suppressed(p.class_sizes_all[p.labels] < 2)
    assert p.n_suppressed > 0
    import pandas as pd

    pd.testing.assert_frame_equal(_published_head(p, 40), p.to_pandas().head(40))


def test_audit_adult_from_files(data_dir: Path, tmp_path: Path) -> None:
    # ARX Adult, all 9 attributes quasi-identifiers, levels [1,0,1,1,3,2,2,0,1] in file order, classes under
    # 5 rows suppressed: 1,046 published classes and 906 suppressed rows (ARX-ORACLES.md §7.3). The CLI must
    # agree with the Python API on the same partition.
    from anoncore import Partition
    from anoncore.audit import audit
    from anoncore.datasets import ADULT_COLUMNS, load_adult_arx
    from anoncore.models import KAnonymity

    adult = data_dir / "adult"
    lines = [f'[attributes."{c}"]\nrole = "quasi_identifier"\nhierarchy = "{adult / f"adult_hierarchy_{c}.csv"}"\n'
             for c in ADULT_COLUMNS]
    schema = tmp_path / "adult.toml"
    schema.write_text("".join(lines))
    levels = [1, 0, 1, 1, 3, 2, 2, 0, 1]
    code, doc = run_json(["audit", str(adult / "adult.csv"), "--schema", str(schema), "--model", "k=2",
                          "--levels", ",".join(map(str, levels)), "--suppress-below", "5", "--json"])
    res = doc["result"]
    c = res["counts"]
    assert (c["n_rows"], c["n_published_classes"], c["n_suppressed_rows"]) == (30_162, 1_046, 906)
    t = load_adult_arx()
    p = Partition.from_levels(t, levels)
    p = p.with_suppressed(p.class_sizes_all[p.labels] < 5)
    ref = audit(t, p, [KAnonymity(2)]).to_dict()["models"][0]
    got = dict(res["guarantees"]["models"][0])
    assert got.pop("spec") == "k=2"
    got.pop("violating_truncated", None)
    ref["violating"] = ref["violating"][:100]
    assert got == json.loads(json.dumps(ref))
    assert code == (0 if ref["passed"] else 1)
    sizes = p.class_sizes
    assert res["guarantees"]["k"] == int(sizes[sizes > 0].min()) == 5
