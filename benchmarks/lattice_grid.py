"""Speed of the optimal lattice search across ARX's configuration space (issue 21), sampled.

A grid over k in {2, 5, 10, 25, 50, 100}, suppression limits {0, 1, 4, 10, 25, 50 %}, every metric and every
model family, on Adult (30,162 rows, 9 QIs; 8 QIs + occupation for the models that need a sensitive
attribute) and census-income (299,285 rows, 8 QIs + detailed occupation), sampled in four blocks so that it
runs in minutes:

- ``k``: k-anonymity alone, every k x every limit x {loss, dm, dm_star};
- ``metric``: k = 5, limits {0, 4, 10, 50 %} x every metric;
- ``model``: k = 5 + every model family x limits {0, 4, 25 %}, Loss;
- ``cross``: k in {2, 25, 100} x {distinct-5, recursive-(4,3), equal t=0.2} x limits {1, 50 %}, Loss.

Each point: one first call (the table's caches cleared: the bottom grouping included) and the best of
``--repeat`` repeat calls (the bottom reused; wall and process CPU time, since a loaded machine stretches wall
time; the search's own CPU time, ``Engine.optimal`` alone, and publishing's wall time), the nodes evaluated, inferred (decided by tagging without an
evaluation) and in the lattice, the source classes rolled up per evaluated node (``stats["rollup_work"]``, a machine-independent cost)
and the search's time per evaluated node. ARX's per-node cost is taken from ARX-TIMINGS.md (in-process median / nodes
checked: Adult 0.15-0.84 ms, census-income 3.4-4.7 ms). Writes a CSV to ``--out`` and prints a summary.

    PYTHONPATH=src python benchmarks/lattice_grid.py                 # the whole sample (a few minutes)
    PYTHONPATH=src python benchmarks/lattice_grid.py --quick --table  # a third of it and the docs table
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "asv_benchmarks"))
if any((ROOT / "src" / "anoncore").glob("_core*.so")):
    sys.path.insert(0, str(ROOT / "src"))

KS = (2, 5, 10, 25, 50, 100)
LIMITS = (0.0, 0.01, 0.04, 0.10, 0.25, 0.50)
FAMILIES = ("k", "distinct3", "distinct5", "entropy3", "recursive43", "equal02", "hier02", "ordered02",
            "beta2", "delta2")
# ARX 3.9.2's per-node cost (ARX-TIMINGS.md: in-process median / transformations checked)
ARX_MS_PER_NODE = {"adult": (28.0 / 181, 432 / 517), "census": (17071 / 5090, 3871 / 824)}


def family_models(family: str, k: int) -> list[Any]:
    from anoncore import models as am

    extra = {"k": [], "distinct3": [am.DistinctLDiversity(3)], "distinct5": [am.DistinctLDiversity(5)],
             "entropy3": [am.EntropyLDiversity(3)], "recursive43": [am.RecursiveCLDiversity(4.0, 3)],
             "equal02": [am.EqualDistanceTCloseness(0.2)], "hier02": [am.HierarchicalDistanceTCloseness(0.2)],
             "ordered02": [am.OrderedDistanceTCloseness(0.2)], "beta2": [am.EnhancedBetaLikeness(2.0)],
             "delta2": [am.DeltaDisclosure(2.0)]}[family]
    return [am.KAnonymity(k), *extra]


# the points of the table in docs/lattice-speed.md (--table)
TABLE_POINTS = [(d, f, k, lim, m) for d in ("adult", "census") for f, k, lim, m in (
    ("k", 5, 0.0, "loss"), ("k", 5, 0.04, "loss"), ("k", 5, 0.10, "loss"), ("k", 5, 0.50, "loss"),
    ("k", 100, 0.50, "loss"), ("k", 5, 0.10, "dm"), ("k", 5, 0.10, "dm_star"), ("k", 5, 0.10, "entropy_nm"),
    ("k", 5, 0.10, "precision_nm"), ("k", 5, 0.10, "aecs"), ("k", 5, 0.10, "height"), ("distinct5", 5, 0.0, "loss"),
    ("recursive43", 5, 0.04, "loss"), ("equal02", 5, 0.04, "loss"), ("hier02", 5, 0.25, "loss"),
    ("beta2", 5, 0.04, "loss"), ("delta2", 5, 0.04, "loss"))]


def markdown(rows: list[dict[str, Any]]) -> str:
    """The TABLE_POINTS rows of a run as a markdown table."""
    by = {(r["data"], r["family"], r["k"], r["limit"], r["metric"]): r for r in rows}
    head = ("| data | models | limit | metric | evaluated / lattice | classes rolled up per node | search CPU | "
            "per node | whole call CPU |")
    out = [head, "|---|---|---:|---|---:|---:|---:|---:|---:|"]
    for key in TABLE_POINTS:
        r = by.get(key)
        if r is None:
            continue
        d, f, k, lim, m = key
        name = f"k={k}" if f == "k" else f"k={k} + {f}"
        if r.get("infeasible"):
            out.append(f"| {d} | {name} | {100 * lim:.0f} % | {m} | infeasible | | | | |")
            continue
        out.append(f"| {d} | {name} | {100 * lim:.0f} % | {m} | {r['evaluated']:,} / {r['lattice']:,} | "
                   f"{r['classes_per_node']:,} | {r['search_ms']:.1f} ms | {r['ms_per_node']:.3f} ms | "
                   f"{r['cpu_ms']:.1f} ms |")
    return "\n".join(out)


def grid(quick: bool) -> list[tuple[str, str, int, float, str]]:
    from anoncore.static.lattice import METRICS

    pts: list[tuple[str, str, int, float, str]] = []
    for data in ("adult", "census"):
        for k in KS:
            for lim in LIMITS:
                for metric in ("loss", "dm", "dm_star"):
                    pts.append((data, "k", k, lim, metric))
        for lim in (0.0, 0.04, 0.10, 0.50):
            for metric in METRICS:
                pts.append((data, "k", 5, lim, metric))
        for fam in FAMILIES:
            for lim in (0.0, 0.04, 0.25):
                pts.append((data, fam, 5, lim, "loss"))
        for k in (2, 25, 100):
            for fam in ("distinct5", "recursive43", "equal02"):
                for lim in (0.01, 0.50):
                    pts.append((data, fam, k, lim, "loss"))
    pts = list(dict.fromkeys(pts))
    return [p for i, p in enumerate(pts) if i % 3 == 0 or p in TABLE_POINTS] if quick else pts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--only", default=None, help="adult or census")
    ap.add_argument("--out", default="bench_out/lattice_grid.csv")
    ap.add_argument("--table", action="store_true", help="print the docs table (docs/lattice-speed.md)")
    ap.add_argument("--table-from", default=None, help="print the docs table of an earlier run's CSV, run nothing")
    a = ap.parse_args()
    if a.table_from:
        with open(a.table_from, newline="") as fh:
            rows = list(csv.DictReader(fh))
        for r in rows:
            r["k"], r["limit"], r["infeasible"] = int(r["k"]), float(r["limit"]), int(r["infeasible"])
            for c in ("evaluated", "lattice", "classes_per_node"):
                r[c] = int(r[c] or 0)
            for c in ("search_ms", "cpu_ms", "ms_per_node"):
                r[c] = float(r[c] or 0)
        print(markdown(rows))
        return 0
    from benchmarks.bench_lattice import load_census_income_arx  # type: ignore[import-not-found]
    from benchmarks.common import adult  # type: ignore[import-not-found]

    from anoncore import InfeasibleError
    from anoncore._tablecache import clear_table_caches
    from anoncore.static.lattice import LatticeProblem, lattice_search

    tables = {("adult", False): adult(), ("adult", True): adult(sensitive="occupation"),
              ("census", True): load_census_income_arx()}
    tables[("census", False)] = tables[("census", True)]
    print(f"{os.cpu_count()} CPUs, load {tuple(round(x, 1) for x in os.getloadavg())}", flush=True)
    rows: list[dict[str, Any]] = []
    t_all = time.perf_counter()
    for data, fam, k, lim, metric in grid(a.quick):
        if a.only and data != a.only:
            continue
        table = tables[(data, fam != "k")]
        models = family_models(fam, k)
        kw: dict[str, Any] = {"suppression_limit": lim, "metric": metric, "n_threads": a.threads}
        row: dict[str, Any] = {"data": data, "family": fam, "k": k, "limit": lim, "metric": metric}
        try:
            clear_table_caches(table)
            t0 = time.perf_counter()
            res = lattice_search(table, models, **kw)
            first = time.perf_counter() - t0
            rep, cpu = [], []
            for _ in range(a.repeat):
                t0, c0 = time.perf_counter(), time.process_time()
                again = lattice_search(table, models, **kw)
                rep.append(time.perf_counter() - t0)
                c_all = time.process_time() - c0
                problem = LatticeProblem.build(table, models, lim, metric, n_threads=a.threads)
                c0 = time.process_time()
                problem.engine.optimal(False)
                cpu.append((c_all, time.process_time() - c0, again.stats["publish_seconds"]))
        except InfeasibleError:
            row["infeasible"] = 1
            rows.append(row)
            print(f"{data:6s} {fam:11s} k={k:3d} {100 * lim:4.0f}% {metric:12s} infeasible", flush=True)
            continue
        st = res.stats
        ev = int(st["nodes_evaluated"])
        best = min(rep)
        c_all, c_search, c_pub = min(cpu)
        row.update(infeasible=0, first_ms=1e3 * first, repeat_ms=1e3 * best, cpu_ms=1e3 * c_all,
                   search_ms=1e3 * c_search, publish_ms=1e3 * c_pub,
                   evaluated=ev, inferred=int(st["nodes_inferred"]), lattice=int(st["lattice_size"]),
                   classes_per_node=int(st.get("rollup_work", 0)) // max(ev, 1),
                   search=st["search"], ms_per_node=1e3 * c_search / max(ev, 1),
                   levels=" ".join(map(str, res.partition.levels)), suppressed=res.achieved["n_suppressed"])
        lo, hi = ARX_MS_PER_NODE[data]
        row["arx_ms_per_node_lo"], row["arx_ms_per_node_hi"] = lo, hi
        rows.append(row)
        print(f"{data:6s} {fam:11s} k={k:3d} {100 * lim:4.0f}% {metric:12s} first {1e3 * first:8.1f} ms  "
              f"repeat {1e3 * best:8.1f} ms (CPU {1e3 * c_all:8.1f}, search {1e3 * c_search:8.1f})  evaluated {ev:5d}"
              f"  {row['ms_per_node']:6.3f} ms/node  {row['classes_per_node']:6d} classes/node ({st['search']})",
              flush=True)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    keys = list(dict.fromkeys(k for r in rows for k in r))
    with open(a.out, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    ok = [r for r in rows if not r.get("infeasible")]
    for data in ("adult", "census"):
        sub = [r for r in ok if r["data"] == data]
        if not sub:
            continue
        mpn = np.array([r["ms_per_node"] for r in sub])
        rep = np.array([r["cpu_ms"] for r in sub])
        print(f"{data}: {len(sub)} points, repeat call CPU median {np.median(rep):.1f} ms (max {rep.max():.1f}), "
              f"per node median {np.median(mpn):.3f} ms (max {mpn.max():.3f}); ARX {ARX_MS_PER_NODE[data][0]:.2f}-"
              f"{ARX_MS_PER_NODE[data][1]:.2f} ms per node")
    if a.table:
        print(markdown(rows))
    print(f"{len(rows)} points in {time.perf_counter() - t_all:.0f} s, load {os.getloadavg()[0]:.1f}; CSV {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
