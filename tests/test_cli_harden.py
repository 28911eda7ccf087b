"""Hardening of the command line (issue 18): outputs never over an input, never half written, suppressed rows
published fully suppressed and audited, clear errors on bad input."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import anoncore
from anoncore.cli import main
from anoncore.datasets import synthetic_census

# the folder holding the anoncore this test process imports (the source tree with a dev build, or site-packages
# in CI), so that subprocesses run the same build
SRC = str(Path(anoncore.__file__).resolve().parents[1])


def run(argv: list[str]) -> tuple[int, str, str]:
    out = io.StringIO()
    err = io.StringIO()
    old = sys.stderr
    sys.stderr = err
    try:
        code = main(argv, stdout=out)
    finally:
        sys.stderr = old
    return code, out.getvalue(), err.getvalue()


def write_census(d: Path, n: int, rng: int = 7) -> tuple[Path, Path]:
    """A synthetic census as CSV + TOML schema + ARX hierarchy files."""
    table = synthetic_census(n, rng=rng)
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


@pytest.fixture(scope="module")
def census(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return write_census(tmp_path_factory.mktemp("census"), 2000)


def _anon(data: Path, schema: Path, *extra: str) -> list[str]:
    return ["anonymize", str(data), "--schema", str(schema), "--algorithm", "flash", "--model", "k=5",
            "--suppression-limit", "0.05", *extra]


# ------------------------------------------------------------------------------------------ item 3: -o safety
def test_anonymize_refuses_output_over_input(census: tuple[Path, Path], tmp_path: Path) -> None:
    data, schema = census
    copy = tmp_path / "in.csv"
    copy.write_bytes(data.read_bytes())
    before = copy.read_bytes()
    code, _, err = run(_anon(copy, schema, "-o", str(copy), "--force"))
    assert code == 2 and "is the input file" in err and "Traceback" not in err
    assert copy.read_bytes() == before
    # the same file through another name (hard link: same inode) and a hierarchy file are refused too
    link = tmp_path / "link.csv"
    os.link(copy, link)
    code, _, err = run(_anon(copy, schema, "-o", str(link), "--force"))
    assert code == 2 and "is the input file" in err
    hier = schema.parent / "h_age.csv"
    hb = hier.read_bytes()
    code, _, err = run(_anon(data, schema, "-o", str(hier), "--force"))
    assert code == 2 and hier.read_bytes() == hb


def test_anonymize_refuses_existing_output_without_force(census: tuple[Path, Path], tmp_path: Path) -> None:
    data, schema = census
    out = tmp_path / "out.csv"
    out.write_text("keep me\n")
    code, _, err = run(_anon(data, schema, "-o", str(out)))
    assert code == 2 and "already exists" in err and "--force" in err
    assert out.read_text() == "keep me\n"
    code, _, err = run(_anon(data, schema, "-o", str(out), "--force"))
    assert code == 0, err
    assert out.read_text().startswith("age,")
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]


def _stream_args(src: Path, out: Path, *extra: str) -> list[str]:
    return ["stream", str(src), "--algorithm", "castle", "--numeric", "age=0:100", "--pid", "pid",
            "--sensitive", "disease", "--k", "3", "--delta", "5", "-o", str(out), *extra]


def test_stream_refuses_output_over_input(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    src.write_text("pid,age,disease\n" + "".join(f"{i},{20 + i % 7},flu\n" for i in range(30)))
    before = src.read_bytes()
    code, _, err = run(_stream_args(src, src, "--force"))
    assert code == 2 and "is the input file" in err
    assert src.read_bytes() == before  # the old code truncated it to 0 bytes
    out = tmp_path / "out.jsonl"
    out.write_text("old\n")
    code, _, err = run(_stream_args(src, out))
    assert code == 2 and "already exists" in err and out.read_text() == "old\n"
    code, _, err = run(_stream_args(src, out, "--force"))
    assert code == 0 and len(out.read_text().splitlines()) == 30


def test_sequence_and_temporal_refuse_output_over_input(tmp_path: Path) -> None:
    tax = tmp_path / "tax.json"
    tax.write_text(json.dumps({"All": {"A": ["a1", "a2"], "B": ["b1", "b2"]}}))
    ev = tmp_path / "ev.jsonl"
    ev.write_text(json.dumps({"user": "u", "events": ["a1", "b1", "a2", "b2", "a1", "b1"]}) + "\n")
    before = ev.read_bytes()
    base = ["sequence", str(ev), "--taxonomy", str(tax), "--pattern", "a1,b1", "--epsilon", "0.5", "--w", "2"]
    code, _, err = run([*base, "-o", str(ev), "--force"])
    assert code == 2 and ev.read_bytes() == before
    code, _, err = run([*base, "-o", str(tax), "--force"])
    assert code == 2 and "is the input file" in err
    out = tmp_path / "seq.jsonl"
    out.write_text("old")
    assert run([*base, "-o", str(out)])[0] == 2 and out.read_text() == "old"
    assert run([*base, "-o", str(out), "--force"])[0] == 0 and json.loads(out.read_text())["user"] == "u"
    # temporal
    src = tmp_path / "t.csv"
    pd.DataFrame({"ts": np.repeat(np.arange(10), 6), "sa": np.tile(list("abcdef"), 10)}).to_csv(src, index=False)
    tb = src.read_bytes()
    code, _, err = run(["temporal", str(src), "--l", "2", "--w", "2", "-o", str(src), "--force"])
    assert code == 2 and src.read_bytes() == tb
    out = tmp_path / "t_out.csv"
    out.write_text("old")
    assert run(["temporal", str(src), "--l", "2", "--w", "2", "-o", str(out)])[0] == 2
    assert out.read_text() == "old"
    assert run(["temporal", str(src), "--l", "2", "--w", "2", "-o", str(out), "--force"])[0] == 0
    assert len(pd.read_csv(out)) == 60


# ------------------------------------------------------------------------------------------ item 4: Ctrl-C
def _interrupt_during_write(argv: list[str], folder: Path, target: str) -> subprocess.CompletedProcess[str]:
    """Start the CLI, send SIGINT as soon as the temporary output file appears, return the finished process.

    A signal can be lost before Python sees it (one CI run of the stream command went on to write its whole
    output: a SIGINT landing while a library's own handler is installed); the process then keeps writing. So
    while it is still running 200 ms after a signal and its temporary file has grown since, the signal is sent
    again, as a user presses Ctrl-C again. (A process that got the signal stops writing and removes the file
    within microseconds: it is never signalled twice.)"""
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-c", "import sys; from anoncore.cli import main; sys.exit(main())",
                             *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    seen = False
    deadline = time.monotonic() + 120
    part: list[Path] = []
    while proc.poll() is None and time.monotonic() < deadline:
        part = [p for p in folder.iterdir() if p.name.startswith(f".{target}.") and p.name.endswith(".part")]
        if part and part[0].stat().st_size > 0:
            seen = True
            proc.send_signal(signal.SIGINT)
            break
        time.sleep(0.001)
    for _ in range(10 if seen else 0):
        try:
            size = part[0].stat().st_size
            proc.wait(timeout=0.2)
            break
        except FileNotFoundError:  # renamed or removed: the process is finishing either way
            break
        except subprocess.TimeoutExpired:
            try:
                grown = part[0].stat().st_size > size
            except FileNotFoundError:
                break
            if grown:
                proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert seen, f"the output was never being written (rc {proc.returncode}): {err}"
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


@pytest.fixture(scope="module")
def big_census(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return write_census(tmp_path_factory.mktemp("big"), 300_000, rng=3)


def test_sigint_during_anonymize_write_leaves_no_truncated_file(big_census: tuple[Path, Path],
                                                                tmp_path: Path) -> None:
    data, schema = big_census
    out = tmp_path / "pub.csv"
    out.write_text("previous complete file\n")
    p = _interrupt_during_write(_anon(data, schema, "-o", str(out), "--force", "--no-metrics",
                                      "--include-suppressed"), tmp_path, "pub.csv")
    assert p.returncode == 130, p.stderr
    assert "Traceback" not in p.stderr and "interrupted" in p.stderr
    assert out.read_text() == "previous complete file\n"  # the old file is intact, not half replaced
    assert [x.name for x in tmp_path.iterdir()] == ["pub.csv"]  # no temporary file left behind


def test_sigint_during_stream_write_leaves_no_output(tmp_path: Path) -> None:
    src = tmp_path / "in.csv"
    n = 400_000
    pd.DataFrame({"pid": np.arange(n), "age": 20 + np.arange(n) % 50, "disease": "flu"}).to_csv(src, index=False)
    out = tmp_path / "out.jsonl"
    p = _interrupt_during_write(_stream_args(src, out, "--batch-size", "2000"), tmp_path, "out.jsonl")
    assert p.returncode == 130, p.stderr
    assert "Traceback" not in p.stderr
    assert sorted(x.name for x in tmp_path.iterdir()) == ["in.csv"]


def test_anonymize_writes_nothing_when_the_audit_fails(census: tuple[Path, Path], tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # an algorithm whose output violates its models (a bug the audit must catch) publishes nothing
    from anoncore.cli import anonymize as mod
    from anoncore.results import Partition

    class Fake:
        algorithm = "fake"

        def __init__(self, table: object) -> None:
            self.parameters: dict[str, object] = {}
            self.achieved: dict[str, object] = {}
            self.stats: dict[str, object] = {}
            self.partition = Partition.from_labels(table, np.arange(table.n_rows))  # type: ignore[attr-defined]

    alg = mod.ALGORITHMS["flash"]
    monkeypatch.setitem(mod.ALGORITHMS, "flash", mod.Algorithm("flash", alg.help, lambda t, a: Fake(t), alg.models,
                                                               alg.needs))
    out = tmp_path / "pub.csv"
    code, text, _ = run(_anon(*census, "-o", str(out)))
    assert code == 1 and "FAILED" in text and "was not written" in text
    assert not out.exists()


# ------------------------------------------------------------------------------------------ item 5: suppressed rows
def _adult_schema(data_dir: Path, tmp_path: Path, sensitive: str = "occupation") -> Path:
    from anoncore.datasets import ADULT_COLUMNS

    adult = data_dir / "adult"
    lines = []
    for c in ADULT_COLUMNS:
        role = "sensitive" if c == sensitive else "quasi_identifier"
        lines.append(f'[attributes."{c}"]\nrole = "{role}"\nhierarchy = "{adult / f"adult_hierarchy_{c}.csv"}"\n')
    p = tmp_path / "adult.toml"
    p.write_text("".join(lines))
    return p


@pytest.mark.parametrize("models", [["k=5", "l-distinct=2@occupation"], ["k=3", "t-hierarchical=0.35@occupation"]])
def test_include_suppressed_round_trip_audit_on_adult(data_dir: Path, tmp_path: Path, models: list[str]) -> None:
    schema = _adult_schema(data_dir, tmp_path)
    out = tmp_path / "adult_pub.csv"
    margs = [x for m in models for x in ("--model", m)]
    code, text, err = run(["anonymize", str(data_dir / "adult" / "adult.csv"), "--schema", str(schema),
                           "--algorithm", "flash", *margs, "--suppression-limit", "0.04", "-o", str(out),
                           "--include-suppressed", "--json", "--no-metrics"])
    assert code == 0, err
    doc = json.loads(text)
    n_sup = doc["result"]["counts"]["n_suppressed_rows"]
    assert n_sup > 0
    pub = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert len(pub) == 30_162  # every row published or flagged suppressed: nothing lost
    flagged = pub["suppressed"] == "True"
    assert int(flagged.sum()) == n_sup
    qis = [c for c in pub.columns if c not in ("occupation", "ec", "suppressed")]
    assert (pub.loc[flagged, qis] == "*").all().all()  # fully suppressed: every QI at the root
    assert set(pub.loc[flagged, "ec"]) == {"-1"}  # one marker, never classes of their own
    assert not (pub.loc[~flagged, qis] == "*").all(axis=1).any()
    # the published file passes the audit of the same models, read back from the file alone
    code, text, err = run(["audit", str(out), "--schema", str(schema), "--published", *margs, "--json"])
    assert code == 0, err
    res = json.loads(text)["result"]
    assert res["guarantees"]["passed"] is True
    assert res["counts"]["n_suppressed_rows"] == n_sup
    assert res["counts"]["n_published_classes"] == doc["result"]["counts"]["n_published_classes"]
    # an independent check of k on the file: every published class has >= k rows
    k = int(models[0].split("=")[1])
    assert pub.loc[~flagged].groupby("ec").size().min() >= k


def test_published_audit_catches_a_tampered_file(census: tuple[Path, Path], tmp_path: Path) -> None:
    data, schema = census
    out = tmp_path / "pub.csv"
    code, _, err = run(_anon(data, schema, "-o", str(out), "--include-suppressed"))
    assert code == 0, err
    pub = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert run(["audit", str(out), "--schema", str(schema), "--published", "--model", "k=5"])[0] == 0
    pub.loc[pub.index[:3], "ec"] = "99999"  # three rows moved into a class of their own
    pub.to_csv(out, index=False)
    code, text, _ = run(["audit", str(out), "--schema", str(schema), "--published", "--model", "k=5"])
    assert code == 1 and "FAILED" in text


# ------------------------------------------------------------------------------------------ item 13: messages
SMALL_TOML = """[attributes.age]
role = "quasi_identifier"
kind = "numeric"
[attributes.zip]
role = "quasi_identifier"
hierarchy = "zip.csv"
[attributes.disease]
role = "sensitive"
"""


def _small(tmp_path: Path, rows: list[str], toml: str = SMALL_TOML, sep: str = ",") -> tuple[Path, Path]:
    (tmp_path / "zip.csv").write_text("130;13*;*\n148;14*;*\n")
    data = tmp_path / "d.csv"
    data.write_text(sep.join(["age", "zip", "disease"]) + "\n" + "".join(r + "\n" for r in rows))
    schema = tmp_path / "s.toml"
    schema.write_text(toml)
    return data, schema


def _audit(data: Path, schema: Path, *extra: str) -> tuple[int, str, str]:
    return run(["audit", str(data), "--schema", str(schema), "--model", "k=1", "--labels", "disease", *extra])


def test_errors_name_file_lines(tmp_path: Path) -> None:
    rows = [f"{30 + i},130,flu" for i in range(40)]
    rows[27] = "old,130,flu"  # data row 27 (0-based) is line 29 of the file
    data, schema = _small(tmp_path, rows)
    code, _, err = _audit(data, schema)
    assert code == 1 and "line 29 of" in err and "'old'" in err
    from anoncore import Schema, Table

    with pytest.raises(ValueError, match=r"row 27 \(0-based\)"):
        Table.from_pandas(pd.read_csv(data, dtype=str), Schema.from_toml(schema))


def test_every_value_missing_from_a_hierarchy_is_reported_with_its_line(tmp_path: Path) -> None:
    rows = [f"{30 + i},130,flu" for i in range(10)]
    rows[3] = "33,150,flu"
    rows[5] = "35,999,flu"
    rows[8] = "38,150,flu"
    data, schema = _small(tmp_path, rows)
    code, _, err = _audit(data, schema)
    assert code == 1
    assert "2 values in all are missing" in err
    assert "'150' (line 5 of" in err and "2 rows" in err and "'999' (line 7 of" in err


def test_non_utf8_input_names_line_and_column_and_encoding_reads_it(tmp_path: Path) -> None:
    (tmp_path / "zip.csv").write_text("130;13*;*\n148;14*;*\n")
    data = tmp_path / "d.csv"
    data.write_bytes(b"age,zip,disease\n30,130,flu\n31,148,flu\n32,130,caf\xe9\n")
    schema = tmp_path / "s.toml"
    schema.write_text(SMALL_TOML)
    code, _, err = _audit(data, schema)
    assert code == 1 and "Line 4 of" in err and "column 'disease'" in err and "--encoding" in err
    code, text, err = _audit(data, schema, "--encoding", "latin-1", "--json")
    assert code == 0, err
    assert json.loads(text)["result"]["counts"]["n_rows"] == 3


def test_empty_cells_are_missing_values(tmp_path: Path) -> None:
    toml = 'missing = "drop"\n' + SMALL_TOML
    data, schema = _small(tmp_path, ["30,130,flu", "31,,flu", "32,148,", "33,148,cold"], toml)
    code, text, err = _audit(data, schema, "--json")
    assert code == 0, err
    c = json.loads(text)["result"]["counts"]
    assert (c["n_rows"], c["n_dropped_rows"]) == (2, 2)


def test_tab_separated_input_suggests_sep(tmp_path: Path) -> None:
    data, schema = _small(tmp_path, ["30\t130\tflu", "31\t148\tflu"], sep="\t")
    code, _, err = _audit(data, schema)
    assert code == 1 and "tab-separated" in err and "--sep tab" in err
    code, _, err = _audit(data, schema, "--sep", "tab")
    assert code == 0, err


def test_from_pandas_duplicate_columns_is_a_clear_error() -> None:
    from anoncore import Schema, Table

    df = pd.DataFrame([[1, 2, "a"]], columns=["age", "age", "d"])
    with pytest.raises(ValueError, match=r"duplicate column name\(s\) \['age'\]"):
        Table.from_pandas(df, Schema.build({"age": "numeric"}, sensitive="d"))


def test_messages_show_plain_numbers_and_name_the_parameter() -> None:
    from anoncore.models import EntropyLDiversity, KAnonymity
    from anoncore.static.sabre import closeness_model, sabre

    for make in (lambda: KAnonymity(np.float64("inf")), lambda: EntropyLDiversity(np.float64(0.5))):
        with pytest.raises((TypeError, ValueError)) as ei:
            make()
        assert "np.float64" not in str(ei.value) and "Got " in str(ei.value)
    with pytest.raises(ValueError, match="The 'rng' parameter of sabre"):
        census = synthetic_census(100, rng=0)
        sabre(census, [KAnonymity(2), closeness_model(census, 0.5)], rng=-1)


# ------------------------------------------------------------------------------------------ item 14: silent acceptance
def test_duplicated_header_column_is_refused(tmp_path: Path) -> None:
    (tmp_path / "zip.csv").write_text("130;13*;*\n")
    data = tmp_path / "d.csv"
    data.write_text("age,zip,disease,zip\n30,130,flu,130\n")
    schema = tmp_path / "s.toml"
    schema.write_text(SMALL_TOML)
    code, _, err = _audit(data, schema)
    assert code == 1 and "names column(s) ['zip'] more than once" in err


def test_schema_sep_is_used(tmp_path: Path) -> None:
    data, schema = _small(tmp_path, ["30|130|flu", "31|148|flu"], 'sep = "|"\n' + SMALL_TOML, sep="|")
    code, text, err = _audit(data, schema, "--json")
    assert code == 0, err
    assert json.loads(text)["result"]["counts"]["n_rows"] == 2
    from anoncore import Schema

    with pytest.raises(ValueError, match="'sep' of a Schema must be one character"):
        Schema.from_dict({"sep": ";;", "attributes": {"a": {"role": "qi"}}})


def test_numeric_domain_narrower_than_the_data_is_refused(tmp_path: Path) -> None:
    toml = SMALL_TOML.replace('kind = "numeric"\n', 'kind = "numeric"\ndomain = [0, 35]\n')
    data, schema = _small(tmp_path, ["30,130,flu", "41,148,flu", "33,130,flu"], toml)
    code, _, err = _audit(data, schema)
    assert code == 1 and "'41' (line 3 of" in err and "outside its declared domain [0, 35]" in err


def test_k_larger_than_the_table_with_full_suppression_publishes_nothing(census: tuple[Path, Path],
                                                                         tmp_path: Path) -> None:
    data, schema = census
    out = tmp_path / "pub.csv"
    code, _, err = run(["anonymize", str(data), "--schema", str(schema), "--algorithm", "flash", "--model",
                        "k=5000", "--suppression-limit", "1", "-o", str(out)])
    assert code == 2 and "larger than the table (2000 rows)" in err
    assert not out.exists()


def test_columns_left_out_by_the_schema_are_reported(census: tuple[Path, Path], tmp_path: Path) -> None:
    data, schema = census
    df = pd.read_csv(data)
    df.insert(0, "name", [f"p{i}" for i in range(len(df))])
    wide = tmp_path / "wide.csv"
    df.to_csv(wide, index=False)
    code, text, err = run(_anon(wide, schema, "--json"))
    assert code == 0, err
    notes = json.loads(text)["result"]["notes"]
    assert any("['name']" in n and "not in the schema" in n for n in notes)


# ------------------------------------------------------------------------------------------ item 15: interface
def test_bad_values_exit_2_as_documented(census: tuple[Path, Path], tmp_path: Path) -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text()
    assert "| 2 | bad arguments" in doc and "| 130 | interrupted" in doc
    data, schema = census
    # a value the command can check before any work: exit 2 with the argparse-style message
    cases = [
        ["anonymize", str(data), "--schema", str(schema), "--algorithm", "sabre", "-t", "0.3", "-k", "99999"],
        ["anonymize", str(data), "--schema", str(schema), "--algorithm", "flash", "--model", "k=0"],
        ["temporal", "demo", "--l", "1", "--w", "2", "-o", str(tmp_path / "t.csv")],
        ["temporal", "demo", "--l", "2", "--w", "0", "-o", str(tmp_path / "t.csv")],
        ["temporal", "demo", "--l", "2", "--w", "10000000000", "-o", str(tmp_path / "t.csv")],
    ]
    for argv in cases:
        code, _, err = run(argv)
        assert code == 2, (argv, err)
        assert "error:" in err and "Traceback" not in err


def test_anonymize_reads_stdin_and_writes_stdout(census: tuple[Path, Path], tmp_path: Path) -> None:
    data, schema = census
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", "import sys; from anoncore.cli import main; sys.exit(main())",  # noqa: PLW1510
                        "anonymize", "-", "--schema", str(schema), "--algorithm", "flash", "--model", "k=5",
                        "--suppression-limit", "0.05", "-o", "-"],
                       input=data.read_text(), capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert not (tmp_path / "-").exists()  # the old code created a file named '-'
    pub = pd.read_csv(io.StringIO(p.stdout))
    assert list(pub.columns)[:2] == ["age", "sex"] and "ec" in pub.columns
    assert pub.groupby("ec").size().min() >= 5
    assert "Audit" in p.stderr and "PASSED" in p.stderr  # the report moves to stderr


def test_numeric_labels_are_the_same_in_anonymize_and_stream(tmp_path: Path) -> None:
    from anoncore import Partition, Schema, Table
    from anoncore.stream._common import number_label

    df = pd.DataFrame({"age": [30, 39.5, 47, 30], "d": ["a", "b", "a", "b"]})
    t = Table.from_pandas(df, Schema.build({"age": "numeric"}, sensitive="d"))
    p = Partition.from_labels(t, np.array([0, 0, 0, 1]))
    labels = list(p.class_labels("age"))
    assert labels == [f"[{number_label(30.0)}, {number_label(47.0)}]", "30"] == ["[30, 47]", "30"]
    p2 = Partition.from_labels(t, np.array([0, 0, 1, 1]))
    assert list(p2.class_labels("age")) == ["[30, 39.5]", "[30, 47]"]


def test_temporal_is_in_the_cli_synopsis_and_docs() -> None:
    root = Path(__file__).resolve().parents[1]
    assert "anoncore temporal INPUT" in (root / "docs" / "cli.md").read_text()
    assert "proposed" not in (root / "docs" / "temporal.md").read_text().lower()
    from anoncore.cli import build_parser

    assert "temporal" in build_parser().format_help()


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("command", ["stream", "sequence", "temporal"])
def test_progress_is_drawn_on_a_terminal(command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if command == "stream":
        src = tmp_path / "in.csv"
        src.write_text("pid,age,disease\n" + "".join(f"{i},{20 + i % 7},flu\n" for i in range(50)))
        argv = _stream_args(src, tmp_path / "o.jsonl", "--batch-size", "10")
    elif command == "sequence":
        tax = tmp_path / "tax.json"
        tax.write_text(json.dumps({"All": {"A": ["a1", "a2"], "B": ["b1", "b2"]}}))
        ev = tmp_path / "ev.jsonl"
        ev.write_text(json.dumps({"user": "u", "events": ["a1", "b1", "a2", "b2", "a1", "b1"]}) + "\n")
        argv = ["sequence", str(ev), "--taxonomy", str(tax), "--pattern", "a1,b1", "--epsilon", "0.5", "--w", "2",
                "-o", str(tmp_path / "s.jsonl")]
    else:
        argv = ["temporal", "demo", "--l", "2", "--w", "2", "-o", str(tmp_path / "t.csv")]
    tty = _Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    assert main(argv, stdout=io.StringIO()) == 0
    assert f"anoncore {command}" in tty.getvalue()


# ------------------------------------------------------------------------------------------ item 6: temporal inputs
def _temporal_csv(tmp_path: Path, ts: list[str], sa: list[str], extra: dict[str, list[str]] | None = None) -> Path:
    df = pd.DataFrame({"id": [f"r{i}" for i in range(len(ts))], "ts": ts, "sa": sa, **(extra or {})})
    p = tmp_path / "t.csv"
    df.to_csv(p, index=False)
    return p


def _temporal(src: Path, tmp_path: Path, *extra: str) -> tuple[int, str, str]:
    return run(["temporal", str(src), "--l", "2", "--w", "2", "-o", str(tmp_path / "out.csv"), "--force", *extra])


def test_temporal_refuses_bad_timestamps(tmp_path: Path) -> None:
    base_sa = ["a", "b"] * 5
    for ts, what in ((["0", "0", "1", "1", "2", "", "3", "3", "4", "4"], "line 7"),
                     (["0", "0", "1", "1", "2", "0.5", "3", "3", "4", "4"], "'0.5'"),
                     (["0", "0", "1", "1", "2", "nan", "3", "3", "4", "4"], "'nan'")):
        code, _, err = _temporal(_temporal_csv(tmp_path, ts, base_sa), tmp_path)
        assert code == 1 and "integer time instants" in err and what in err, err
    # 2**63 - 1 used to hang forever (the stream is processed instant by instant)
    ts = ["0", "0", "1", "1", "2", "2", "3", "3", "4", str(2**63 - 1)]
    t0 = time.monotonic()
    code, _, err = _temporal(_temporal_csv(tmp_path, ts, base_sa), tmp_path)
    assert code == 1 and "span" in err and time.monotonic() - t0 < 30


def test_temporal_refuses_same_column_empty_sa_and_needs_scipy_message(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    src = _temporal_csv(tmp_path, [str(i // 2) for i in range(10)], ["a", "b"] * 5)
    code, _, err = run(["temporal", str(src), "--ts", "ts", "--sa", "ts", "--l", "2", "--w", "2", "-o",
                        str(tmp_path / "o.csv")])
    assert code == 2 and "same column" in err
    src = _temporal_csv(tmp_path, [str(i // 2) for i in range(10)], ["a", "b", "a", "", "a", "b", "a", "b", "a", "b"])
    code, _, err = _temporal(src, tmp_path)
    assert code == 1 and "empty on line 5" in err and "codes >= 0" not in err
    src = _temporal_csv(tmp_path, [str(i // 2) for i in range(10)], ["a", "b"] * 5)
    monkeypatch.setitem(sys.modules, "scipy.optimize", None)  # as in a plain install without scipy
    code, _, err = _temporal(src, tmp_path, "--first-window", "milp")
    assert code == 2 and "anoncore[milp]" in err


def test_temporal_output_withholds_suppressed_values_and_anatomy_publishes_qi_only(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    n = 300
    ts = np.sort(rng.integers(0, 30, n)).astype(str)
    sa = rng.choice(list("abcd"), n, p=[0.7, 0.1, 0.1, 0.1])
    src = _temporal_csv(tmp_path, list(ts), list(sa), {"age": list(rng.integers(20, 60, n).astype(str))})
    code, _, err = _temporal(src, tmp_path, "--l", "3", "--anatomy", "--qi", "age")
    assert code == 0, err
    out = pd.read_csv(tmp_path / "out.csv", dtype=str, keep_default_na=False)
    sup = out["suppressed"] == "True"
    assert sup.any() and (out.loc[sup, "sa"] == "").all() and (out.loc[~sup, "sa"] != "").all()
    qit = pd.read_csv(tmp_path / "out.qit.csv")
    assert "id" not in qit.columns and "age" in qit.columns and "sa" not in qit.columns
    code, _, err = _temporal(src, tmp_path, "--anatomy")
    assert code == 2 and "--qi" in err


# ------------------------------------------------------------------------------------------ item 8
def test_count_patterns_longer_than_the_window_count_zero() -> None:
    from anoncore.data.hierarchy import Hierarchy
    from anoncore.sequence.counting import count_patterns

    tax = Hierarchy.from_nested({"*": {"x": ["a", "b"], "y": ["c"]}})
    seqs = [["a", "b", "c", "a", "b", "c"], ["c"], []]
    got = count_patterns(seqs, tax, [("a", "b", "c"), ("a", "a", "a")], w=1)
    assert got.shape == (3, 2) and not got.any()
    # brute force at the boundary m = w + 1: an occurrence i1 < i2 < i3 with i3 - i1 <= 2
    import itertools

    want = sum(1 for c in itertools.combinations(range(6), 3) if c[2] - c[0] <= 2
               and [seqs[0][i] for i in c] == ["a", "b", "c"])
    assert count_patterns(seqs[:1], tax, [("a", "b", "c")], w=2).tolist() == [[want]]


# ------------------------------------------------------------------------------------------ item 7: lattice size
def test_lattice_size_is_guarded_up_front(census: tuple[Path, Path]) -> None:
    from anoncore import Schema, Table
    from anoncore.models import KAnonymity
    from anoncore.static.lattice import lattice_search, lattice_size

    data, schema = census
    t = Table.from_csv(data, Schema.from_toml(schema))
    size = lattice_size([t.hierarchy(q).height for q in t.quasi_identifiers])
    assert size > 100
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=rf"has {size:,} nodes .* more than max_nodes=100; .*strategy='datafly'"):
        lattice_search(t, [KAnonymity(5)], max_nodes=100)
    assert time.perf_counter() - t0 < 1.0  # refused before any work
    with pytest.raises(ValueError, match="more than max_nodes"):
        lattice_search(t, [KAnonymity(5)], strategy="exhaustive", max_nodes=size - 1)
    # at the limit, and for the heuristics, it runs
    assert lattice_search(t, [KAnonymity(5)], max_nodes=size).partition.levels is not None
    assert lattice_search(t, [KAnonymity(5)], strategy="datafly", max_nodes=1).partition.levels is not None
    with pytest.raises(ValueError, match="'max_nodes' parameter"):
        lattice_search(t, [KAnonymity(5)], max_nodes=0)
    code, _, err = run(["anonymize", str(data), "--schema", str(schema), "--algorithm", "flash", "--model", "k=5",
                        "--max-nodes", "100"])
    assert code == 1 and "more than max_nodes=100" in err and "--algorithm datafly" in err
    assert run(["anonymize", str(data), "--schema", str(schema), "--algorithm", "flash", "--model", "k=5",
                "--max-nodes", "0"])[0] == 0


def test_the_command_line_refuses_a_200m_node_lattice_by_default(tmp_path: Path) -> None:
    from anoncore.data.builders import interval_hierarchy
    from anoncore.static.lattice import DEFAULT_MAX_NODES

    rng = np.random.default_rng(0)
    # 8 numeric QIs with hierarchies of height 10 (9 interval levels and the root): 11**8 = 214,358,881 nodes
    h = interval_hierarchy(range(1024), [2 ** j for j in range(1, 10)])
    assert h.height == 10 and 11**8 > DEFAULT_MAX_NODES
    (tmp_path / "h.csv").write_text("".join(";".join(r) + "\n" for r in h.to_rows()))
    df = pd.DataFrame({f"q{i}": rng.integers(0, 1024, 50) for i in range(8)})
    df["s"] = "x"
    df.to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "s.toml").write_text("".join(f'[attributes.q{i}]\nrole = "qi"\nkind = "numeric"\nhierarchy = "h.csv"\n'
                                             for i in range(8)) + '[attributes.s]\nrole = "sensitive"\n')
    t0 = time.perf_counter()
    code, _, err = run(["anonymize", str(tmp_path / "d.csv"), "--schema", str(tmp_path / "s.toml"), "--algorithm",
                        "flash", "--model", "k=2"])
    assert code == 1 and "has 214,358,881 nodes" in err and "datafly" in err
    assert time.perf_counter() - t0 < 10.0


# ------------------------------------------------------------------------------------------ items 16, 17
def test_synthetic_census_box_form_equals_the_harness_tables() -> None:
    from dataclasses import replace

    from anoncore import Schema, Table
    from anoncore.metrics import ail
    from anoncore.models import KAnonymity
    from anoncore.static.sabre import closeness_model, sabre

    def knn(tab: Table) -> Any:
        return sabre(tab, [KAnonymity(6), closeness_model(tab, 0.35)], method="knn", rng=0)

    h = synthetic_census(3000, rng=5)
    b = synthetic_census(3000, rng=5, numeric="box")
    assert np.array_equal(h.codes, b.codes)
    assert [a.name for a in b.attributes if a.hierarchy is None] == ["age", "education", "salary"]
    # the benchmark harness's construction, written out independently: drop the numeric hierarchies, re-encode
    attrs = tuple(replace(a, hierarchy=None) if a.kind == "numeric" else a for a in h.attributes)
    ref = Table.from_pandas(h.to_pandas(), Schema(attrs))
    rb = knn(b)
    rr = knn(ref)
    assert np.array_equal(rb.partition.labels, rr.partition.labels)
    assert ail(b, rb.partition) == pytest.approx(ail(ref, rr.partition))
    # published as [min, max] boxes, not through the hierarchy
    assert all(x.startswith("[") or x.isdigit() for x in rb.partition.class_labels("age"))
    assert ail(b, rb.partition) < ail(h, knn(h).partition)
    with pytest.raises(ValueError, match="'numeric' parameter of synthetic_census"):
        synthetic_census(10, rng=0, numeric="boxes")


def test_tmondrian_dimension_rule_raw_cuts_the_widest_raw_range() -> None:
    from anoncore import Attribute, Schema, Table
    from anoncore.audit import audit
    from anoncore.models import KAnonymity, OrderedDistanceTCloseness
    from anoncore.static.mondrian import tmondrian

    # age spans 0..99 (raw width 99), x spans 0..1 (raw width 1): normalised, x is as wide as age; raw, age wins
    rng = np.random.default_rng(0)
    n = 400
    df = pd.DataFrame({"x": rng.integers(0, 2, n), "age": rng.integers(0, 100, n), "s": rng.integers(0, 5, n)})
    schema = Schema((Attribute("x", "quasi_identifier", "numeric"), Attribute("age", "quasi_identifier", "numeric"),
                     Attribute("s", "sensitive", "numeric")))
    t = Table.from_pandas(df, schema)
    models = [KAnonymity(150), OrderedDistanceTCloseness(1.0)]
    raw = tmondrian(t, models, dimension_rule="raw")
    norm = tmondrian(t, models)
    assert raw.parameters["dimension_rule"] == "raw"
    # one cut of 400 rows into two classes of >= 150 (no room for a second): raw cuts age at its median, normalised cuts x (first widest)
    assert raw.partition.n_classes == 2 and norm.partition.n_classes == 2
    assert all(lab == "[0, 1]" for lab in raw.partition.class_labels("x"))
    assert all(lab in ("0", "1") for lab in norm.partition.class_labels("x"))
    for r in (raw, norm):
        assert audit(t, r.partition, [KAnonymity(150), OrderedDistanceTCloseness(1.0)]).passed
    with pytest.raises(ValueError, match="'dimension_rule' parameter of tmondrian"):
        tmondrian(t, models, dimension_rule="widest")


def test_release_and_graph_follow_the_output_rules(tmp_path: Path) -> None:
    # the rules are checked before any input is parsed, so placeholder inputs are enough
    for name in ("t1.csv", "t2.csv", "schema.json", "edges.txt", "labels.csv", "tax.json"):
        (tmp_path / name).write_text("placeholder\n")
    t1 = tmp_path / "t1.csv"
    code, _, err = run(["release", str(t1), str(tmp_path / "t2.csv"), "--schema", str(tmp_path / "schema.json"),
                        "-o", str(t1), "--force"])
    assert code == 2 and "is the input file" in err and t1.read_text() == "placeholder\n"
    out = tmp_path / "out.csv"
    out.write_text("old\n")
    code, _, err = run(["release", str(t1), str(tmp_path / "t2.csv"), "--schema", str(tmp_path / "schema.json"),
                        "-o", str(out)])
    assert code == 2 and "already exists" in err and out.read_text() == "old\n"
    g = ["graph", str(tmp_path / "edges.txt"), "--labels", str(tmp_path / "labels.csv"), "--taxonomy",
         str(tmp_path / "tax.json")]
    code, _, err = run([*g, "--mapping", str(tmp_path / "labels.csv"), "--force"])
    assert code == 2 and "is the input file" in err
    (tmp_path / "pub.nodes.csv").write_text("old\n")
    code, _, err = run([*g, "-o", str(tmp_path / "pub")])
    assert code == 2 and "already exists" in err and (tmp_path / "pub.nodes.csv").read_text() == "old\n"


def test_risk_histograms_follow_the_output_rules(census: tuple[Path, Path], tmp_path: Path) -> None:
    data, schema = census
    before = data.read_bytes()
    code, _, err = run(["risk", str(data), "--schema", str(schema), "--histogram", str(data), "--force"])
    assert code == 2 and "is the input file" in err and data.read_bytes() == before
    png = tmp_path / "r.png"
    png.write_bytes(b"old")
    code, _, err = run([*_anon(data, schema, "--risk-histogram", str(png))])
    assert code == 2 and "already exists" in err and png.read_bytes() == b"old"
