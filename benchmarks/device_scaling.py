"""Thread scaling of the data-parallel phases on a many-core machine (run by device_scaling.sh).

Synthetic census tables of ``--rows`` rows (default 10M and 40M): encoding from Arrow strings
(``Table.from_arrow``), publishing (``Partition.to_arrow``), the audit (k-anonymity + distinct l-diversity)
and ``Partition.from_levels`` (no ``n_threads`` knob: timed once per table); then the lattice search on the
census-income rows a, c, e (when the data is found). Best of ``--repeat``; prints one line per measurement
and writes JSON to ``bench_out/device_scaling.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any


def best(f: Any, repeat: int) -> float:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        out.append(time.perf_counter() - t0)
    return min(out)


def arrow_strings(table: Any) -> Any:
    """The table's columns as Arrow large_string arrays, made in Arrow (a dictionary take, no Python strings)."""
    import pyarrow as pa

    cols = {}
    for c in table.columns:
        d = list(table.dictionary(c))
        text = [str(int(v)) if isinstance(v, float) and v.is_integer() else str(v) for v in d]
        arr = pa.DictionaryArray.from_arrays(pa.array(table.column(c)), pa.array(text, type=pa.large_string()))
        cols[c] = arr.cast(pa.large_string())
    return pa.table(cols)


def phases(n: int, threads: list[int], repeat: int) -> dict[str, Any]:
    import anoncore as ac
    from anoncore.datasets import synthetic_census
    from anoncore.models import DistinctLDiversity, KAnonymity

    t0 = time.perf_counter()
    table = synthetic_census(n, rng=1)
    t_gen = time.perf_counter() - t0
    arrow = arrow_strings(table)
    print(f"[{n:,} rows] generated in {t_gen:.1f} s, Arrow strings in {time.perf_counter() - t0 - t_gen:.1f} s",
          flush=True)
    levels = [1] * len(table.quasi_identifiers)
    t_fl = best(lambda: ac.Partition.from_levels(table, levels), repeat)
    print(f"[{n:,} rows] Partition.from_levels {t_fl * 1e3:9.1f} ms (no n_threads knob)", flush=True)
    p = ac.Partition.from_levels(table, levels)
    models = [KAnonymity(5), DistinctLDiversity(2)]
    cells = n * table.n_columns
    out: dict[str, Any] = {"from_levels_s": t_fl}
    base: dict[str, float] = {}
    for th in threads:
        r = {"encode": best(lambda th=th: ac.Table.from_arrow(arrow, table.schema, n_threads=th), repeat),
             "publish": best(lambda th=th: p.to_arrow(n_threads=th), repeat),
             "audit": best(lambda th=th: ac.audit(table, p, models, n_threads=th), repeat)}
        if th == threads[0]:
            base = dict(r)
        out[str(th)] = r
        print(f"[{n:,} rows] n_threads={th:2d}  " + "  ".join(
            f"{k} {v * 1e3:8.1f} ms ({base[k] / v:4.1f}x)" for k, v in r.items())
            + f"  encode {cells / r['encode'] / 1e6:6.0f} Mcells/s  publish {cells / r['publish'] / 1e6:6.0f} Mcells/s",
            flush=True)
    return out


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

            s = best(run, repeat)
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
    ap.add_argument("--out", default="bench_out/device_scaling.json")
    a = ap.parse_args()
    import anoncore

    threads = [int(x) for x in a.threads.split(",")]
    print(f"anoncore from {Path(anoncore.__file__).parent}, {os.cpu_count()} CPUs, load {os.getloadavg()}, "
          f"OpenMP {anoncore._core.has_openmp}", flush=True)
    res: dict[str, Any] = {"lattice": lattice_rows(threads, a.repeat)}
    for n in [int(float(x)) for x in a.rows.split(",")]:
        res[str(n)] = phases(n, threads, a.repeat)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
