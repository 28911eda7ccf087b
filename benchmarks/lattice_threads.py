"""Thread scaling of the optimal lattice search: every ARX row at 1, 2, 4, ... threads (issue 16).

Times the optimal search on every configuration of ``shared/data/adult/ARX-TIMINGS.md`` (Adult 1-8 with 6b,
census-income a-e) and, with ``--synthetic ROWS``, on a synthetic census table (k=5 + distinct-3 +
equal-distance t=0.3, 2 %, Loss), at each thread count of ``--threads``. For each case and thread count: the
best of ``--repeat`` first calls (the table's caches cleared before each call, so the bottom grouping is
included) and of as many repeat calls (the bottom reused), the nodes evaluated, and the ratio to one thread
(above 1: faster). The thread counts are interleaved within each round, so that a change of the machine's
load hits them alike. Every thread count must give the same levels, score and suppressed rows (a difference
is printed as DIFFERENT and makes the exit status 1). Writes JSON to ``--out``.

    PYTHONPATH=src python benchmarks/lattice_threads.py --threads 1,2
    python benchmarks/lattice_threads.py --threads 1,2,4,8,16 --synthetic 2e7 --synthetic-threads 1,4,16
    python benchmarks/lattice_threads.py --threads 1,2 --synthetic 1e7 --only synthetic --fresh  # + fresh process

With ``--fresh`` the synthetic case's search is also timed as the first call of a fresh Python process (the table
generated there, untimed), where the kernel zeroes every page the search touches first. The in-process columns
of such a run are not comparable with a run without it: the children's memory churn changes them (10M rows, one
thread's first call 4.3 -> 3.7 s on the 2-core machine).
    bash benchmarks/lattice_threads.sh    # the same on the device machine (16 cores): build, run, JSON to $OUT
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "asv_benchmarks"))
if os.environ.get("ANONCORE_INSTALLED") != "1" and any((ROOT / "src" / "anoncore").glob("_core*.so")):
    sys.path.insert(0, str(ROOT / "src"))  # a dev build; otherwise the installed anoncore


def cases(synthetic: int, only: str | None) -> dict[str, tuple[Any, list[Any], float, str]]:
    from benchmarks.bench_lattice import (  # type: ignore[import-not-found]
        ADULT_CONFIGS,
        CENSUS_CONFIGS,
        _models,
        load_census_income_arx,
    )
    from benchmarks.common import adult  # type: ignore[import-not-found]

    adult_cfg = dict(ADULT_CONFIGS)
    adult_cfg["6b_k5_ordered02_4_loss"] = (True, [("KAnonymity", {"k": 5}),
                                                  ("OrderedDistanceTCloseness", {"t": 0.2})], 0.04, "loss")
    out: dict[str, tuple[Any, list[Any], float, str]] = {}
    plain, occ = adult(), adult(sensitive="occupation")
    for name, (with_sa, spec, limit, metric) in adult_cfg.items():
        out[f"adult_{name}"] = (occ if with_sa else plain, _models(spec), limit, metric)
    try:
        census = load_census_income_arx()
    except Exception as exc:  # noqa: BLE001  (data not carried: say so and go on)
        print(f"census-income rows skipped: {exc}", flush=True)
        census = None
    if census is not None:
        for name, (spec, limit, metric) in CENSUS_CONFIGS.items():
            out[f"census_{name}"] = (census, _models(spec), limit, metric)
    if synthetic:
        name, case = synthetic_case(synthetic)
        out[name] = case
    if only:
        out = {k: v for k, v in out.items() if re.search(only, k)}
    return out


def synthetic_case(rows: int) -> tuple[str, tuple[Any, list[Any], float, str]]:
    """The synthetic census case: k=5 + distinct-3 + equal-distance t=0.3, 2 %, Loss."""
    from anoncore.datasets import synthetic_census
    from anoncore.models import DistinctLDiversity, EqualDistanceTCloseness, KAnonymity

    t0 = time.perf_counter()
    table = synthetic_census(rows, rng=1)
    print(f"synthetic census {rows:,} rows generated in {time.perf_counter() - t0:.1f} s", flush=True)
    return (f"synthetic_{rows}_k5_distinct3_equal03_2_loss",
            (table, [KAnonymity(5), DistinctLDiversity(3), EqualDistanceTCloseness(0.3)], 0.02, "loss"))


def fresh_child(rows: int, threads: int) -> int:
    """--fresh's child process: the synthetic table generated (untimed), then one lattice_search timed, the
    process's first: its last output line is the seconds."""
    from anoncore.static import lattice as L

    _, (table, models, limit, metric) = synthetic_case(rows)
    t0 = time.perf_counter()
    L.lattice_search(table, models, suppression_limit=limit, metric=metric, n_threads=threads)
    print(time.perf_counter() - t0, flush=True)
    return 0


def fresh_first(rows: int, threads: int) -> float:
    """The seconds of the synthetic case's lattice_search as the first call of a fresh Python process."""
    import subprocess

    out = subprocess.run([sys.executable, __file__, "--fresh-child", str(rows), str(threads)], check=True,
                         capture_output=True, text=True, env=os.environ.copy()).stdout
    return float(out.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="1,2,4,8,16")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--synthetic", type=float, default=0, help="rows of the synthetic case (0: none)")
    ap.add_argument("--synthetic-repeat", type=int, default=1)
    ap.add_argument("--synthetic-threads", default=None, help="thread counts of the synthetic case (default: --threads)")
    ap.add_argument("--only", default=None, help="regular expression on the case names")
    ap.add_argument("--fresh", action="store_true",
                    help="also time the synthetic case's lattice_search as a fresh process's first call (the "
                         "kernel then zeroes every page the search touches first)")
    ap.add_argument("--fresh-child", nargs=2, type=int, help=argparse.SUPPRESS)
    ap.add_argument("--out", default="bench_out/lattice_threads.json")
    a = ap.parse_args()
    if a.fresh_child:
        return fresh_child(*a.fresh_child)
    import anoncore
    from anoncore._tablecache import clear_table_caches
    from anoncore.static import lattice as L

    all_threads = [int(x) for x in a.threads.split(",")]
    print(f"anoncore from {Path(anoncore.__file__).parent}, {os.cpu_count()} CPUs, load "
          f"{tuple(round(x, 1) for x in os.getloadavg())}, OpenMP {anoncore._core.has_openmp}", flush=True)
    res: dict[str, Any] = {}
    bad = 0
    for name, (table, models, limit, metric) in cases(int(a.synthetic), a.only).items():
        syn = name.startswith("synthetic")
        repeat = a.synthetic_repeat if syn else a.repeat
        threads = [int(x) for x in a.synthetic_threads.split(",")] if syn and a.synthetic_threads else all_threads
        first: dict[int, list[float]] = {t: [] for t in threads}
        again: dict[int, list[float]] = {t: [] for t in threads}
        outcome: dict[int, Any] = {}
        fresh: dict[int, list[float]] = {t: [] for t in threads}
        phases: dict[int, dict[str, float]] = {}
        for _ in range(repeat):
            for th in threads:
                if syn and a.fresh:
                    fresh[th].append(fresh_first(table.n_rows, th))
                clear_table_caches(table)
                t0 = time.perf_counter()
                r1 = L.lattice_search(table, models, suppression_limit=limit, metric=metric, n_threads=th)
                first[th].append(time.perf_counter() - t0)
                if first[th][-1] == min(first[th]):  # the engine's seconds per phase in the best first call
                    phases[th] = dict(r1.stats["phase_seconds"], search=r1.stats["seconds"])
                t0 = time.perf_counter()
                L.lattice_search(table, models, suppression_limit=limit, metric=metric, n_threads=th)
                again[th].append(time.perf_counter() - t0)
                outcome[th] = (list(r1.partition.levels), float(r1.metrics[metric]).hex(),
                               int(np.count_nonzero(r1.partition.suppressed)), int(r1.stats["nodes_evaluated"]))
        row: dict[str, Any] = {}
        base = threads[0]
        for th in threads:
            f, g = min(first[th]), min(again[th])
            same = outcome[th][:3] == outcome[base][:3]
            bad += not same
            row[str(th)] = {"first_ms": 1e3 * f, "repeat_ms": 1e3 * g, "nodes_evaluated": outcome[th][3],
                            "same": same, "phase_seconds": phases[th]}
            fr = ""
            if fresh[th]:
                row[str(th)]["fresh_process_ms"] = 1e3 * min(fresh[th])
                fr = f"  fresh process {1e3 * min(fresh[th]):9.1f} ms ({min(fresh[base]) / min(fresh[th]):4.2f}x)"
            print(f"{name:44s} n_threads={th:2d}  first {1e3 * f:9.1f} ms ({min(first[base]) / f:4.2f}x)  "
                  f"repeat {1e3 * g:9.1f} ms ({min(again[base]) / g:4.2f}x)  evaluated {outcome[th][3]:5d}{fr}"
                  f"{'' if same else '  DIFFERENT ' + str(outcome[th][:3])}", flush=True)
            if syn:  # where the first call's time went (ms; "other": the search less its timed phases)
                ph = phases[th]
                timed = sum(v for k, v in ph.items() if k not in ("build", "search"))
                par = sum(v for k, v in ph.items() if k.endswith("_par"))
                print("    phases ms: " + "  ".join(f"{k} {1e3 * v:7.1f}" for k, v in ph.items() if k != "search")
                      + f"  other {1e3 * (ph['search'] - timed):7.1f}  (the search on one thread: "
                      f"{1e3 * (ph['search'] - par):7.1f})", flush=True)
        row["levels"], row["score"], row["suppressed"] = outcome[base][:3]
        res[name] = row
    res["load_after"] = os.getloadavg()
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(res, indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
