"""Scale of anoncore.distributed: N rows of the synthetic census read from Parquet, k-anonymity with a
suppression limit, metric DM*, on a local Dask cluster with 1 and with 2 workers, end to end: the frequency
set (read, encode, group, merge), the optimal search on it, and publishing the generalized table to Parquet
(read again, generalize, suppress, write; atomic). Peak memory of every worker and of the client; the optimum
checked against the in-memory search on the first --check-rows rows, run both ways.

    python benchmarks/distributed_scale.py --rows 10000000 --workers 1 2
    python benchmarks/distributed_scale.py --rows 100000000 --workers 1 2 --check-rows 20000000

The data folder (--data) holds files of --chunk rows (``write_census_parquet``, chunk i drawn with seed
(0, i)), written once and reused; a run on N rows reads its first N / chunk files, so the first 20M rows of
the 100M run are the 20M run's rows. Writes bench_out/distributed_scale.csv (ignored by git).
"""

from __future__ import annotations

import argparse
import csv
import os
import resource
import shutil
import time


def _vm_hwm() -> int:
    """Peak resident memory of this process (bytes; Linux VmHWM)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def ensure_data(folder: str, rows: int, chunk: int) -> list[str]:
    need = -(-rows // chunk)
    os.makedirs(folder, exist_ok=True)
    have = sorted(f for f in os.listdir(folder) if f.endswith(".parquet"))
    if len(have) < need:
        import numpy as np
        import pyarrow.parquet as pq

        if have and pq.ParquetFile(os.path.join(folder, have[0])).metadata.num_rows != chunk:
            raise SystemExit(f"{folder} holds files of another chunk size; pass --data or --chunk to match.")
        from anoncore.datasets.census import synthetic_census_frame

        t0 = time.perf_counter()
        for i in range(len(have), need):  # the same files write_census_parquet would write
            df = synthetic_census_frame(chunk, np.random.default_rng([0, i]))
            df.to_parquet(os.path.join(folder, f"part-{i:05d}.parquet"), index=False)
        print(f"wrote {need - len(have)} files of {chunk:,} rows in {time.perf_counter() - t0:.1f} s")
    files = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".parquet"))[:need]
    if rows % chunk:
        raise SystemExit("--rows must be a multiple of --chunk")
    return files


def run_cluster(files: list[str], n_workers: int, args: argparse.Namespace, publish_to: str | None) -> dict:
    import distributed

    from anoncore.datasets.census import synthetic_census_schema
    from anoncore.distributed import FrequencySet, lattice_search
    from anoncore.distributed.publish import publish_parquet
    from anoncore.models import KAnonymity

    schema = synthetic_census_schema()
    sensitive = None if args.no_sensitive else "salary"
    with distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                  memory_limit=args.memory_limit, dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        client.run(lambda: None)
        load0 = os.getloadavg()[0]
        wcpu0, ccpu0 = client.run(_cpu), _cpu()
        t0 = time.perf_counter()
        freq = FrequencySet.from_parquet(files, schema, sensitive=sensitive, split_every=args.split_every)
        t1 = time.perf_counter()
        res = lattice_search(freq, [KAnonymity(args.k)], suppression_limit=args.suppression, metric="dm_star")
        t2 = time.perf_counter()
        pub = {"n_published": -1}
        if publish_to is not None:
            pub = publish_parquet(files, schema, res, publish_to, overwrite=True)
        t3 = time.perf_counter()
        wcpu1, ccpu1 = client.run(_cpu), _cpu()
        peaks = client.run(_vm_hwm)
        load1 = os.getloadavg()[0]
    if publish_to is not None:
        shutil.rmtree(publish_to, ignore_errors=True)
    return {"rows": freq.n_rows, "workers": n_workers, "items": freq.n_items, "freq_s": round(t1 - t0, 2),
            "search_s": round(t2 - t1, 2), "publish_s": round(t3 - t2, 2) if publish_to else "",
            "total_s": round(t3 - t0, 2), "worker_cpu_s": round(sum(wcpu1[k] - wcpu0[k] for k in wcpu1), 1),
            "client_cpu_s": round(ccpu1 - ccpu0, 1),
            "peak_worker_gib": round(max(peaks.values()) / 2**30, 3), "peak_client_gib": round(_vm_hwm() / 2**30, 3),
            "load_1min": f"{load0:.1f}-{load1:.1f}", "levels": " ".join(map(str, res.levels)), "score": res.score,
            "suppressed": res.n_suppressed, "published": pub["n_published"]}


def check_in_memory(files: list[str], rows: int, args: argparse.Namespace) -> dict:
    """The in-memory search on the first ``rows`` rows (categoricals from Arrow dictionaries) against the
    distributed search on the same files."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from anoncore import Table
    from anoncore.datasets.census import synthetic_census_schema
    from anoncore.models import KAnonymity
    from anoncore.static.lattice import lattice_search as memory_search

    schema = synthetic_census_schema()
    text = ["sex", "marital_status", "race", "work_class", "birth_place", "occupation"]
    tabs, n = [], 0
    for f in files:
        if n >= rows:
            break
        t = pq.read_table(f, read_dictionary=text)
        tabs.append(t.slice(0, rows - n))
        n += tabs[-1].num_rows
    df = pa.concat_tables(tabs, promote_options="permissive").to_pandas()
    del tabs
    t0 = time.perf_counter()
    table = Table.from_pandas(df, schema)
    del df
    t1 = time.perf_counter()
    mem = memory_search(table, [KAnonymity(args.k)], suppression_limit=args.suppression, metric="dm_star")
    t2 = time.perf_counter()
    return {"rows": n, "workers": 0, "freq_s": round(t1 - t0, 2), "search_s": round(t2 - t1, 2),
            "total_s": round(t2 - t0, 2), "levels": " ".join(map(str, mem.partition.levels)),
            "score": mem.metrics["dm_star"], "suppressed": mem.achieved["n_suppressed"],
            "peak_client_gib": round(_vm_hwm() / 2**30, 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--chunk", type=int, default=2_000_000)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--memory-limit", default="4GiB")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--suppression", type=float, default=0.04)
    ap.add_argument("--split-every", type=int, default=16)
    ap.add_argument("--no-sensitive", action="store_true", help="frequency set of the QIs only (k-anonymity "
                    "needs no sensitive attribute); default: with salary, as a search with l/t models needs")
    ap.add_argument("--no-publish", action="store_true", help="time the frequency set and the search only")
    ap.add_argument("--check-rows", type=int, default=0, help="in-memory search on the first N rows, both ways")
    ap.add_argument("--data", default="bench_out/census_parquet")
    ap.add_argument("--out", default="bench_out/distributed_scale.csv")
    args = ap.parse_args()

    os.makedirs("bench_out", exist_ok=True)
    files = ensure_data(args.data, max(args.rows, args.check_rows), args.chunk)
    rows = []
    for nw in args.workers:
        pub = None if args.no_publish else f"bench_out/published_{args.rows}_{nw}"
        row = run_cluster(files[: args.rows // args.chunk], nw, args, pub)
        print(row, flush=True)
        rows.append(row)
    if args.check_rows:
        sub = files[: -(-args.check_rows // args.chunk)]
        dist = run_cluster(sub, max(args.workers), args, None)
        dist["check"] = "distributed"
        mem = check_in_memory(sub, args.check_rows, args)
        mem["check"] = "in memory"
        same = (dist["levels"], dist["score"], dist["suppressed"]) == (mem["levels"], mem["score"], mem["suppressed"])
        dist["same_optimum"] = mem["same_optimum"] = same
        print(dist, flush=True)
        print(mem, flush=True)
        print(f"check on the first {args.check_rows:,} rows: same optimum (levels, DM*, suppressed): {same}")
        rows += [dist, mem]
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(dict.fromkeys(k for r in rows for k in r)))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
