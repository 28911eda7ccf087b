"""Scale of anoncore.distributed: N rows of the synthetic census read from Parquet, k-anonymity with a
suppression limit, metric DM*, on a local Dask cluster with 1 and with 2 workers; peak worker memory; the
optimum checked against the in-memory search on the first --check-rows rows.

    python benchmarks/distributed_scale.py --rows 10000000 --chunk 1000000 --workers 1 2
    python benchmarks/distributed_scale.py --rows 100000000 --chunk 2000000 --workers 2 --memory-limit 4GiB

Writes bench_out/distributed_scale.csv (ignored by git). The data folder is reused when it has the rows.
"""

from __future__ import annotations

import argparse
import csv
import os
import time


def worker_peak_rss(client):
    """Peak resident memory (bytes) of every worker process since it started (Linux: VmHWM)."""
    def hwm() -> int:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
        return 0
    return client.run(hwm)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--chunk", type=int, default=1_000_000)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--memory-limit", default="4GiB")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--suppression", type=float, default=0.04)
    ap.add_argument("--check-rows", type=int, default=0, help="in-memory search on the first N rows, both ways")
    ap.add_argument("--data", default="bench_out/census_parquet")
    args = ap.parse_args()

    import dask.dataframe as dd
    import distributed
    import pandas as pd

    from anoncore import Table
    from anoncore.datasets.census import synthetic_census_schema
    from anoncore.distributed import FrequencySet, lattice_search
    from anoncore.distributed.publish import write_census_parquet
    from anoncore.models import KAnonymity
    from anoncore.static.lattice import lattice_search as memory_search

    os.makedirs("bench_out", exist_ok=True)
    data = f"{args.data}_{args.rows}"
    if not os.path.isdir(data):
        t0 = time.perf_counter()
        write_census_parquet(data, args.rows, chunk_rows=args.chunk, seed=0)
        print(f"wrote {args.rows:,} rows in {time.perf_counter() - t0:.1f} s")
    schema = synthetic_census_schema()
    models = [KAnonymity(args.k)]
    rows = []
    for nw in args.workers:
        with distributed.LocalCluster(n_workers=nw, threads_per_worker=1, processes=True,
                                      memory_limit=args.memory_limit, dashboard_address=None) as cluster, \
                distributed.Client(cluster) as client:
            t0 = time.perf_counter()
            freq = FrequencySet.from_dask(dd.read_parquet(data), schema, sensitive="salary")
            t1 = time.perf_counter()
            res = lattice_search(freq, models, suppression_limit=args.suppression, metric="dm_star")
            t2 = time.perf_counter()
            peak = max(worker_peak_rss(client).values())
        row = {"rows": freq.n_rows, "workers": nw, "items": freq.n_items, "freq_s": round(t1 - t0, 2),
               "search_s": round(t2 - t1, 2), "total_s": round(t2 - t0, 2), "peak_worker_gib": round(peak / 2**30, 3),
               "levels": " ".join(map(str, res.levels)), "score": res.score, "suppressed": res.n_suppressed}
        print(row)
        rows.append(row)
    if args.check_rows:
        files = sorted(os.path.join(data, f) for f in os.listdir(data))
        parts, n = [], 0
        for f in files:
            if n >= args.check_rows:
                break
            df = pd.read_parquet(f)
            parts.append(df.iloc[: args.check_rows - n])
            n += len(parts[-1])
        df = pd.concat(parts, ignore_index=True)
        t0 = time.perf_counter()
        mem = memory_search(Table.from_pandas(df, schema), models, suppression_limit=args.suppression, metric="dm_star")
        t_mem = time.perf_counter() - t0
        freq = FrequencySet.from_table(Table.from_pandas(df, schema), sensitive="salary")
        res = lattice_search(freq, models, suppression_limit=args.suppression, metric="dm_star")
        same = (res.levels, res.score, res.n_suppressed) == (mem.partition.levels, mem.metrics["dm_star"],
                                                             mem.achieved["n_suppressed"])
        print(f"check on {len(df):,} rows: in memory {t_mem:.1f} s, same optimum: {same}")
        rows.append({"rows": len(df), "workers": 0, "total_s": round(t_mem, 2), "levels": " ".join(
            map(str, mem.partition.levels)), "score": mem.metrics["dm_star"], "suppressed": mem.achieved[
            "n_suppressed"], "same_optimum": same})
    with open("bench_out/distributed_scale.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=sorted({k for r in rows for k in r}))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
