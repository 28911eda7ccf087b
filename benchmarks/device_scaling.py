"""Thread scaling of the data-parallel phases on a many-core machine (run by device_scaling.sh).

Per row count in ``--rows`` (default 10M and 40M synthetic census rows) and thread count in ``--threads``: the
generator (``synthetic_census``), encoding from Arrow strings (``Table.from_arrow``), ``Partition.from_levels``
(levels 1), publishing (``Partition.to_arrow``), the audit (k-anonymity + distinct l-diversity), the lattice
engine's build (the pass over the rows and the bottom's grouping, k=5, the table's cache cleared; and
``lattice_build_sens``, the same with the sensitive histograms of k=5 + distinct-3 + equal t 0.3) and BUREL
(3 QIs, beta 4); SABRE-KNN (t 0.35, k 6) at ``--knn-rows`` (default 1M: its retrieval is serial per bucket and
takes seconds per million rows); then the lattice search on the census-income rows a, c, e (when the data is
found). ``--phases`` picks phases, ``--large-phases`` those run at row counts above 10M (the cheap ones by
default). Best of ``--repeat`` (wall; the CPU time of the same run is kept too); prints one line per
measurement and a table (wall ms and speedup over the first thread count), and writes JSON to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "asv_benchmarks"))

ALL_PHASES = ("generate", "encode", "from_levels", "publish", "audit", "lattice_build", "lattice_build_sens", "burel",
              "sabre_knn")
CHEAP_PHASES = ("generate", "encode", "from_levels", "publish", "audit", "lattice_build", "lattice_build_sens")


def best(f: Any, repeat: int) -> tuple[float, float, float, int]:
    """(best wall, CPU time, system CPU time, minor page faults of that run) over ``repeat`` runs: system time
    and page faults growing with the threads point at the kernel (first touches of new pages), not the
    kernel's own loop."""
    import resource

    out = []
    for _ in range(repeat):
        r0, c0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.process_time(), time.perf_counter()
        f()
        wall, cpu, r1 = time.perf_counter() - t0, time.process_time() - c0, resource.getrusage(resource.RUSAGE_SELF)
        out.append((wall, cpu, r1.ru_stime - r0.ru_stime, r1.ru_minflt - r0.ru_minflt))
    return min(out)


def machine() -> str:
    """CPU model, kernel and transparent huge page mode (the page-fault cost of new buffers depends on it)."""
    import platform

    model = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                  if ln.startswith("model name")), "?") if Path("/proc/cpuinfo").exists() else "?"
    thp = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    return f"{model}, kernel {platform.release()}, THP {thp.read_text().strip() if thp.exists() else '?'}"


def arrow_strings(table: Any) -> Any:
    """The table's columns as Arrow large_string arrays, made in Arrow (a dictionary take, no Python strings)."""
    import pyarrow as pa
    from benchmarks.common import csv_text  # type: ignore[import-not-found]

    cols = {}
    for c in table.columns:
        text = pa.array(list(csv_text(table, c)), type=pa.large_string())
        arr = pa.DictionaryArray.from_arrays(pa.array(table.column(c)), text)
        cols[c] = arr.cast(pa.large_string())
    return pa.table(cols)


def phase_calls(n: int, phases: list[str]) -> dict[str, Any]:
    """One callable f(n_threads) per phase, on tables made once (with every core)."""
    import anoncore as ac
    from anoncore.datasets import synthetic_census
    from anoncore.models import DistinctLDiversity, KAnonymity

    t0 = time.perf_counter()
    table = synthetic_census(n, rng=1)
    print(f"[{n:,} rows] generated in {time.perf_counter() - t0:.1f} s (every core)", flush=True)
    levels = [1] * len(table.quasi_identifiers)
    calls: dict[str, Any] = {}
    if "generate" in phases:
        calls["generate"] = lambda th: synthetic_census(n, rng=1, n_threads=th)
    if "encode" in phases:
        arrow = arrow_strings(table)
        calls["encode"] = lambda th: ac.Table.from_arrow(arrow, table.schema, n_threads=th)
    if "from_levels" in phases:
        calls["from_levels"] = lambda th: ac.Partition.from_levels(table, levels, n_threads=th)
    p = ac.Partition.from_levels(table, levels)
    if "publish" in phases:
        calls["publish"] = lambda th: p.to_arrow(n_threads=th)
    if "audit" in phases:
        models = [KAnonymity(5), DistinctLDiversity(2)]
        calls["audit"] = lambda th: ac.audit(table, p, models, n_threads=th)
    if "lattice_build" in phases or "lattice_build_sens" in phases:
        from anoncore.models import EqualDistanceTCloseness
        from anoncore.static import lattice as lat

        def build(th: int, sens: bool = False) -> Any:
            lat._CACHE.of(table).clear()  # the bottom grouping is cached on the table: a first call each time
            models = [KAnonymity(5), DistinctLDiversity(3), EqualDistanceTCloseness(0.3)] if sens else [KAnonymity(5)]
            return lat.LatticeProblem.build(table, models, 0.02, "loss", n_threads=th)

        if "lattice_build_sens" in phases:
            calls["lattice_build_sens"] = lambda th: build(th, sens=True)

        if "lattice_build" in phases:
            calls["lattice_build"] = build
    if "burel" in phases:
        from anoncore.static.burel import likeness_model

        t3 = synthetic_census(n, rng=1, n_qi=3, numeric="box")
        calls["burel"] = lambda th: ac.burel(t3, likeness_model(beta=4.0), rng=0, n_threads=th)
    return calls


def knn_call(n: int) -> Any:
    import anoncore as ac
    from anoncore.datasets import synthetic_census
    from anoncore.models import KAnonymity
    from anoncore.static.sabre import closeness_model

    t = synthetic_census(n, rng=0, numeric="box")
    models = [KAnonymity(6), closeness_model(t, 0.35)]
    return lambda th: ac.sabre(t, models, method="knn", rng=0, n_threads=th)


def scale(label: str, calls: dict[str, Any], threads: list[int], repeat: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, f in calls.items():
        row: dict[str, Any] = {}
        for th in threads:
            wall, cpu, sys_s, faults = best(lambda f=f, th=th: f(th), repeat)
            row[str(th)] = {"wall_s": wall, "cpu_s": cpu, "sys_s": sys_s, "minflt": faults}
            base = row[str(threads[0])]["wall_s"]
            print(f"[{label}] {name:12s} n_threads={th:2d}  wall {wall * 1e3:9.1f} ms  cpu {cpu * 1e3:9.1f} ms  "
                  f"(sys {sys_s * 1e3:7.1f} ms, {faults:8d} faults)  {base / wall:5.2f}x", flush=True)
        out[name] = row
    return out


def table(results: dict[str, Any], threads: list[int]) -> str:
    """Compact table: wall ms and speedup over the first thread count, one line per (rows, phase)."""
    head = f"{'rows':>11s} {'phase':12s} " + " ".join(f"{'t=' + str(t):>16s}" for t in threads)
    lines = [head]
    for label, phases in results.items():
        for name, row in phases.items():
            base = row[str(threads[0])]["wall_s"]
            cells = " ".join(f"{row[str(t)]['wall_s'] * 1e3:8.0f} ({base / row[str(t)]['wall_s']:4.1f}x)"
                             if str(t) in row else " " * 16 for t in threads)
            lines.append(f"{label:>11s} {name:12s} {cells}")
    return "\n".join(lines)


def lattice_rows(threads: list[int], repeat: int) -> dict[str, Any]:
    from anoncore._tablecache import clear_table_caches
    from anoncore.datasets import load_census_income_arx
    from anoncore.models import HierarchicalDistanceTCloseness, KAnonymity, RecursiveCLDiversity
    from anoncore.static import lattice as L

    try:
        census = load_census_income_arx(sensitive="detailed_occupation_recode")
    except Exception as exc:  # noqa: BLE001  (data not carried: say so and go on)
        print(f"census-income rows skipped: {exc}", flush=True)
        return {}
    rows = {"a": ([KAnonymity(5)], 0.04, "dm_star"),
            "c": ([KAnonymity(5), HierarchicalDistanceTCloseness(0.2)], 0.04, "loss"),
            "e": ([KAnonymity(5), RecursiveCLDiversity(4.0, 3)], 0.04, "loss")}
    out: dict[str, Any] = {}
    for name, (models, limit, metric) in rows.items():
        ref = None
        for th in threads:
            def run(th: int = th, models: Any = models, limit: float = limit, metric: str = metric) -> Any:
                clear_table_caches(census)
                return L.lattice_search(census, models, suppression_limit=limit, metric=metric, n_threads=th)

            s = best(run, repeat)[0]
            levels = run().partition.levels
            ref = levels if ref is None else ref
            out[f"{name}_{th}"] = s
            print(f"census {name} n_threads={th:2d}  first call {s * 1e3:8.1f} ms  levels {list(levels)}"
                  f"{'' if levels == ref else '  DIFFERENT LEVELS'}", flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="10000000,40000000")
    ap.add_argument("--threads", default="1,2,4,8,16")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--phases", default=",".join(ALL_PHASES))
    ap.add_argument("--large-phases", default=",".join(CHEAP_PHASES),
                    help="phases run at row counts above 10M")
    ap.add_argument("--knn-rows", type=int, default=1_000_000)
    ap.add_argument("--no-lattice", action="store_true", help="skip the census-income lattice rows")
    ap.add_argument("--lattice-threads", default=None, help="thread counts of the lattice rows (default --threads)")
    ap.add_argument("--out", default="bench_out/device_scaling.json")
    a = ap.parse_args()
    import anoncore

    threads = [int(x) for x in a.threads.split(",")]
    phases = [p for p in a.phases.split(",") if p]
    unknown = set(phases) - set(ALL_PHASES)
    if unknown:
        ap.error(f"unknown phases {sorted(unknown)}; choose from {list(ALL_PHASES)}")
    print(f"anoncore from {Path(anoncore.__file__).parent}, {len(os.sched_getaffinity(0))} cores, "
          f"load {os.getloadavg()}, OpenMP {anoncore._core.has_openmp}\n{machine()}", flush=True)
    res: dict[str, Any] = {}
    if not a.no_lattice:
        lt = [int(x) for x in a.lattice_threads.split(",")] if a.lattice_threads else threads
        res["lattice"] = lattice_rows(lt, a.repeat)
    scaled: dict[str, Any] = {}
    if "sabre_knn" in phases and a.knn_rows > 0:
        scaled[f"{a.knn_rows:,}"] = scale(f"{a.knn_rows:,} rows", {"sabre_knn": knn_call(a.knn_rows)}, threads, 1)
    for n in [int(float(x)) for x in a.rows.split(",")]:
        ph = [p for p in phases if p != "sabre_knn" and (n <= 10_000_000 or p in a.large_phases.split(","))]
        scaled[f"{n:,}"] = scale(f"{n:,} rows", phase_calls(n, ph), threads, a.repeat)
    res["phases"] = scaled
    print(f"load after {os.getloadavg()}\n" + table(scaled, threads), flush=True)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
