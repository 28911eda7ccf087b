"""benchmarks/lattice_threads.py on a tiny synthetic table: the in-process and fresh-process timings are written,
and every thread count gives the same outcome (the script's exit status). The script imports the anoncore
this test imports (a dev build in src/, else the installed one)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_lattice_threads_fresh_process_column(tmp_path: Path) -> None:
    out = tmp_path / "lt.json"
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "lattice_threads.py"), "--threads", "1,2",
                          "--synthetic", "20000", "--only", "synthetic", "--fresh", "--out", str(out)],
                         check=False, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    res = json.loads(out.read_text())
    (name,) = [k for k in res if k.startswith("synthetic_20000")]
    for th in ("1", "2"):
        row = res[name][th]
        assert row["same"] and row["fresh_process_ms"] > 0 and row["first_ms"] > 0
    assert "fresh process" in run.stdout
