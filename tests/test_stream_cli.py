"""`anoncore stream`: the CLI equals the library run, its output passes an independent audit, checkpoints resume
exactly, and bad input gives clear errors (docs/castle.md, docs/cli.md)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from anoncore import Hierarchy, Schema
from anoncore.cli import main
from anoncore.stream import Castle
from anoncore.stream._cli import ALGORITHMS

EDU = {"*": {"school": ["hs", "college"], "univ": ["ba", "ms", "phd"]}}


def _files(tmp: Path, n: int = 150, seed: int = 3, persons: int | None = None) -> tuple[Path, Path, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "pid": np.arange(n) if persons is None else rng.integers(0, persons, n),
        "age": rng.integers(17, 91, n),
        "edu": rng.choice(["hs", "college", "ba", "ms", "phd"], n),
        "disease": rng.choice(["flu", "hiv", "cold"], n),
    })
    src = tmp / "in.csv"
    df.to_csv(src, index=False)
    h = tmp / "edu.csv"
    h.write_text("hs;school;*\ncollege;school;*\nba;univ;*\nms;univ;*\nphd;univ;*\n")
    return src, h, df


def _args(src: Path, h: Path, *extra: str) -> list[str]:
    return ["stream", str(src), "--algorithm", "castle", "--numeric", "age=17:90", "--categorical", f"edu={h}",
            "--pid", "pid", "--sensitive", "disease", "--k", "4", "--delta", "20", "--eta", "5", "--mu", "10",
            "--seed", "7", "--batch-size", "37", *extra]


def _run(argv: list[str], capsys: Any) -> tuple[int, str, str]:
    out = io.StringIO()
    code = main(argv, stdout=out)
    return code, out.getvalue(), capsys.readouterr().err


def _audit(df: pd.DataFrame, out: pd.DataFrame, suppressed: list[int], k: int) -> None:
    """Independent of the algorithm: exactly once, truthfulness, >= k distinct persons per published QI vector."""
    n = len(df)
    pos = out["position"].tolist() + suppressed
    assert sorted(pos) == list(range(1, n + 1))  # every input row released or reported suppressed, once
    h = Hierarchy.from_nested(EDU, name="edu")
    for _, r in out.iterrows():
        src = df.iloc[int(r["position"]) - 1]
        lab = str(r["age"])
        lo, hi = (float(x) for x in lab.strip("[]").split(",")) if lab.startswith("[") else (float(lab),) * 2
        assert lo <= src["age"] <= hi
        node = h.labels.index(str(r["edu"]))
        assert h.leaf_lookup()[src["edu"]] in range(h.leaf_start[node], h.leaf_start[node] + h.leaf_count[node])
        assert r["disease"] == src["disease"]
    pids = df["pid"].to_numpy()[out["position"].to_numpy() - 1]
    groups = out.assign(pid=pids).groupby(["age", "edu"])["pid"].nunique()
    assert (groups >= k).all()


def test_cli_equals_library_and_passes_audit(tmp_path: Path, capsys: Any) -> None:
    src, h, df = _files(tmp_path)
    sup = tmp_path / "sup.csv"
    code, text, err = _run(_args(src, h, "--suppressed", str(sup)), capsys)
    assert code == 0, err
    out = pd.read_json(io.StringIO(text), lines=True)
    supp = pd.read_csv(sup)
    summary = json.loads(err.strip().splitlines()[-1].removeprefix("anoncore stream: "))
    assert summary["input_rows"] == 150 and summary["released"] == len(out)
    assert summary["suppressed"] == len(supp)
    _audit(df, out, supp["position"].tolist(), k=4)
    # the same stream through the library, same seed and batches
    schema = Schema.build({"age": {"kind": "numeric", "domain": (17, 90)}, "edu": Hierarchy.from_nested(EDU)},
                          sensitive="disease", pid="pid")
    c = Castle(schema, k=4, delta=20, eta=5, mu=10, rng=7)
    rel = [c.push(df.iloc[s:s + 37]) for s in range(0, 150, 37)] + [c.flush()]
    lib = pd.concat([r.to_pandas() for r in rel], ignore_index=True)
    assert out["position"].tolist() == lib["position"].tolist()
    assert out["age"].astype(str).tolist() == lib["age"].tolist() and out["ec"].tolist() == lib["ec"].tolist()


def test_jsonl_stdin_to_csv_with_ranges_and_time_column(tmp_path: Path, capsys: Any, monkeypatch: Any) -> None:
    _src, h, df = _files(tmp_path, n=60)
    df = df.assign(t=np.arange(60) * 3 + 10)
    lines = "".join(json.dumps(r) + "\n" for r in df.to_dict(orient="records"))
    monkeypatch.setattr("sys.stdin", io.StringIO(lines))
    outp = tmp_path / "o.csv"
    code, _, err = _run(["stream", "-", "--algorithm", "castle", "--input-format", "jsonl", "--numeric",
                         "age=17:90", "--categorical", f"edu={h}", "--pid", "pid", "--time", "t", "--k", "3",
                         "--delta", "30", "--output-format", "csv", "--ranges", "-o", str(outp)], capsys)
    assert code == 0, err
    out = pd.read_csv(outp)
    assert {"position", "age_lo", "age_hi", "edu", "ec"} <= set(out.columns)
    assert set(out["position"]) <= set(df["t"])
    m = df.set_index("t").loc[out["position"]]
    assert ((out["age_lo"].to_numpy() <= m["age"].to_numpy()) & (m["age"].to_numpy() <= out["age_hi"].to_numpy())).all()


def test_schema_file(tmp_path: Path, capsys: Any) -> None:
    src, h, _ = _files(tmp_path, n=40)
    toml = tmp_path / "s.toml"
    toml.write_text(f'[attributes.age]\nrole = "qi"\nkind = "numeric"\ndomain = [17, 90]\n'
                    f'[attributes.edu]\nrole = "qi"\nhierarchy = "{h.name}"\n'
                    f'[attributes.pid]\nrole = "pid"\nkind = "numeric"\n')
    code, text, err = _run(["stream", str(src), "--algorithm", "castle", "--schema", str(toml), "--k", "2",
                            "--delta", "10"], capsys)
    assert code == 0, err
    assert len(text.splitlines()) + json.loads(err.splitlines()[-1].split(": ", 1)[1])["suppressed"] == 40


def test_checkpoint_resume_after_a_failure_equals_uninterrupted(tmp_path: Path, capsys: Any) -> None:
    src, h, df = _files(tmp_path, n=200, persons=60)  # duplicate persons
    ref_out = tmp_path / "ref.jsonl"
    assert _run(_args(src, h, "-o", str(ref_out)), capsys)[0] == 0
    # the first run dies on a bad row (an unknown category at row 120): the checkpoint keeps the last good batch
    bad = df.copy()
    bad.loc[119, "edu"] = "kindergarten"
    bad_src = tmp_path / "bad.csv"
    bad.to_csv(bad_src, index=False)
    out = tmp_path / "out.jsonl"
    ck = tmp_path / "state.ck"
    code, _, err = _run(_args(bad_src, h, "-o", str(out), "--checkpoint", str(ck)), capsys)
    assert code == 1
    assert "'kindergarten'" in err and "Input rows 112-148" in err and "stay in the checkpoint" in err
    # fixed input, same command: resumes after row 111 and the output file ends exactly as the uninterrupted one
    code, _, err = _run(_args(src, h, "-o", str(out), "--checkpoint", str(ck)), capsys)
    assert code == 0, err
    assert '"resumed_after_rows": 111' in err
    assert out.read_text() == ref_out.read_text()


def test_bad_row_without_checkpoint_flushes_what_was_received(tmp_path: Path, capsys: Any) -> None:
    _src, h, df = _files(tmp_path, n=100)
    bad = df.copy()
    bad.loc[80, "age"] = 200  # outside the declared domain
    bad_src = tmp_path / "bad.csv"
    bad.to_csv(bad_src, index=False)
    sup = tmp_path / "sup.csv"
    code, text, err = _run(_args(bad_src, h, "--suppressed", str(sup)), capsys)
    assert code == 1
    assert "outside its declared domain" in err and "Input rows 75-100" in err and "were flushed" in err
    out = pd.read_json(io.StringIO(text), lines=True)
    # rows 1-74 (two good batches) are all released or suppressed: nothing lost
    assert sorted(out["position"].tolist() + pd.read_csv(sup)["position"].tolist()) == list(range(1, 75))


@pytest.mark.parametrize(("extra", "code", "match"), [
    (["--numeric", "age=90:17", "--pid", "pid", "--k", "2", "--delta", "5"], 2, "LO <= HI"),
    (["--numeric", "age", "--pid", "pid", "--k", "2", "--delta", "5"], 2, "expects NAME=LO:HI"),
    (["--categorical", "edu=/nonexistent.csv", "--pid", "pid", "--k", "2", "--delta", "5"], 2, "does not exist"),
    (["--numeric", "age=17:90", "--k", "2", "--delta", "5"], 2, "--pid is required"),
    (["--numeric", "age=17:90", "--pid", "pid", "--k", "2"], 2, "castle needs --delta"),
    (["--numeric", "age=17:90", "--pid", "person", "--k", "2", "--delta", "5"], 1, r"lacks column\(s\) \['person'\]"),
    (["--numeric", "age=17:90", "--pid", "pid", "--k", "0", "--delta", "5"], 1, r"'k' parameter of Castle"),
    (["--schema", "/nonexistent.toml", "--k", "2", "--delta", "5"], 2, "does not exist"),
])
def test_bad_arguments_and_input(tmp_path: Path, capsys: Any, extra: list[str], code: int, match: str) -> None:
    import re

    src, _, _ = _files(tmp_path, n=20)
    got, _, err = _run(["stream", str(src), "--algorithm", "castle", *extra], capsys)
    assert got == code, err
    assert re.search(match, err), err


def test_out_of_order_positions_and_missing_pid(tmp_path: Path, capsys: Any) -> None:
    p = tmp_path / "t.csv"
    p.write_text("pid,t,v\n1,1,5\n2,3,6\n3,2,7\n")
    code, _, err = _run(["stream", str(p), "--algorithm", "castle", "--numeric", "v=0:10", "--pid", "pid",
                         "--time", "t", "--k", "2", "--delta", "5"], capsys)
    assert code == 1 and "strictly increasing" in err
    p.write_text("pid,v\n1,5\n,6\n")
    code, _, err = _run(["stream", str(p), "--algorithm", "castle", "--numeric", "v=0:10", "--pid", "pid",
                         "--k", "2", "--delta", "5"], capsys)
    assert code == 1 and "pid column 'pid' has a missing value" in err


def test_delta_below_k_warns_and_suppresses_everything(tmp_path: Path, capsys: Any) -> None:
    src, _h, _ = _files(tmp_path, n=30)
    code, text, err = _run(["stream", str(src), "--algorithm", "castle", "--numeric", "age=17:90", "--pid", "pid",
                            "--k", "10", "--delta", "3"], capsys)
    assert code == 0 and "warning: delta + 1 = 4 < k = 10" in err
    assert text == "" and '"suppressed": 30' in err


def test_registry_is_a_name_to_factory_dict() -> None:
    alg = ALGORITHMS["castle"]
    assert {o.name for o in alg.options} >= {"k", "delta", "eta", "mu"}
    s = Schema.build({"v": {"kind": "numeric", "domain": (0, 9)}}, pid="pid")
    c = alg.factory(s, k=2, delta=3, eta=50, mu=100, l=None, max_reuse=None, rng=0)
    c.push({"v": [1, 2], "pid": [1, 2]})
    assert alg.restore(c.checkpoint()).n_pending_ == 2


@pytest.mark.parametrize("algorithm", ["sabre_w", "tmondrian_w"])
def test_window_algorithms_from_the_cli_equal_the_library(tmp_path: Path, algorithm: str, capsys: Any) -> None:
    from anoncore.stream import SabreW, SabreWRelease

    rng = np.random.default_rng(11)
    n = 400
    df = pd.DataFrame({"pid": rng.integers(0, 150, n), "age": rng.integers(17, 91, n),
                       "edu": rng.choice(["hs", "college", "ba", "ms", "phd"], n), "salary": rng.integers(1, 9, n)})
    src = tmp_path / "in.csv"
    df.to_csv(src, index=False)
    (tmp_path / "edu.csv").write_text("hs;school;*\ncollege;school;*\nba;univ;*\nms;univ;*\nphd;univ;*\n")
    schema = tmp_path / "s.toml"
    schema.write_text('[attributes.pid]\nrole = "pid"\nkind = "numeric"\n'
                      '[attributes.age]\nrole = "qi"\nkind = "numeric"\ndomain = [17, 90]\n'
                      '[attributes.edu]\nrole = "qi"\nhierarchy = "edu.csv"\n'
                      '[attributes.salary]\nrole = "sensitive"\nkind = "ordinal"\norder = [1, 2, 3, 4, 5, 6, 7, 8]\n')
    sup = tmp_path / "sup.csv"
    code, text, err = _run(["stream", str(src), "--algorithm", algorithm, "--schema", str(schema), "--k", "3",
                            "--omega", "100", "--interval", "50", "--t", "0.3", "--seed", "5", "--batch-size", "70",
                            "--suppressed", str(sup)], capsys)
    assert code == 0, err
    out = pd.read_json(io.StringIO(text), lines=True)
    supp = pd.read_csv(sup)
    # every input row exactly once, published or reported suppressed
    assert sorted(out["position"].tolist() + supp["position"].tolist()) == list(range(1, n + 1))
    # >= k distinct persons per published class, counted from the input file (not the algorithm's output)
    persons = df["pid"].to_numpy()[out["position"].to_numpy() - 1]
    assert (out.assign(p=persons).groupby("ec")["p"].nunique() >= 3).all()
    # the library on the same batches gives the same release
    lib = SabreW(Schema.from_toml(schema), omega=100, interval=50, t=0.3, k=3, rng=5,
                 baseline="sabre" if algorithm == "sabre_w" else "tmondrian")
    rels = [lib.push(df.iloc[a:a + 70]) for a in range(0, n, 70)] + [lib.flush()]
    ref = SabreWRelease.concat(rels).to_pandas()
    assert out["position"].tolist() == ref["position"].tolist()
    assert out["ec"].tolist() == ref["ec"].tolist()


def test_window_algorithm_needs_its_parameters(tmp_path: Path, capsys: Any) -> None:
    src, _h, _ = _files(tmp_path)
    code, _, err = _run(["stream", str(src), "--algorithm", "sabre_w", "--numeric", "age=17:90", "--pid", "pid",
                         "--k", "3", "--omega", "100", "--interval", "50"], capsys)
    assert code == 2 and "sabre_w needs --t" in err
    code, _, err = _run(["stream", str(src), "--algorithm", "sabre_w", "--numeric", "age=17:90", "--pid", "pid",
                         "--k", "3", "--omega", "100", "--interval", "50", "--t", "0.3", "--flush-mode", "paper"],
                        capsys)
    assert code == 2 and "--flush-mode paper is not available for sabre_w" in err
