"""The price of anonymizing in parts: SABRE, BUREL and tMondrian run by ``anoncore.distributed.two_phase`` on
1, 2, 4 and 8 parts against the single-machine run, on census-income (299,285 rows) and the synthetic census
(1,000,000 rows by default). Information loss (AIL, the static algorithms' metric; and DM, the sum of squared
class sizes) of the collected labels on the in-memory table, the distributed audit against the whole table's
sensitive distribution, and wall times. Writes bench_out/distributed_twophase.csv.

    PYTHONPATH=src python benchmarks/distributed_twophase.py [--rows 1000000] [--parts 1 2 4 8] [--skip-income]
"""

from __future__ import annotations

import argparse
import csv
import os
import time

import numpy as np
import pandas as pd


def _frame(table):  # the decoded table, the columns of its schema
    return pd.DataFrame({c: table.decode(c, table.column(c)) for c in table.columns})


def main() -> None:
    import dask.dataframe as dd
    import distributed

    from anoncore import Table, audit
    from anoncore.datasets.census import synthetic_census_frame, synthetic_census_schema
    from anoncore.distributed.twophase import two_phase
    from anoncore.metrics import ail
    from anoncore.models import (
        EnhancedBetaLikeness,
        HierarchicalDistanceTCloseness,
        KAnonymity,
        OrderedDistanceTCloseness,
    )
    from anoncore.results import Partition
    from anoncore.static import burel, sabre, tmondrian

    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--parts", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--skip-income", action="store_true")
    ap.add_argument("--skip-synthetic", action="store_true")
    ap.add_argument("--algorithms", nargs="+", default=["sabre", "burel", "tmondrian"])
    ap.add_argument("--out", default="bench_out/distributed_twophase.csv")
    args = ap.parse_args()
    os.makedirs(os.path.dirname(args.out), exist_ok=True)

    datasets = []
    if not args.skip_income:
        from anoncore.datasets.loaders import load_census_income

        t = load_census_income()
        datasets.append(("census-income", _frame(t), t.schema, HierarchicalDistanceTCloseness))
    if not args.skip_synthetic:
        df = synthetic_census_frame(args.rows, 0)
        datasets.append((f"synthetic-{args.rows}", df, synthetic_census_schema(n_qi=7), OrderedDistanceTCloseness))

    rows = []
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    with distributed.Client(cluster):
        for name, df, schema, tmodel in datasets:
            table = Table.from_pandas(df, schema)
            ddf = dd.from_pandas(df, npartitions=args.partitions, sort=False).persist()
            algos = {"sabre": ([KAnonymity(6), tmodel(0.3)], sabre, {"rng": 0}),
                     "burel": ([EnhancedBetaLikeness(4)], burel, {"rng": 0}),
                     "tmondrian": ([KAnonymity(6), tmodel(0.3)], tmondrian, {})}
            for alg in args.algorithms:
                models, memory, kw = algos[alg]
                t0 = time.perf_counter()
                mem = memory(table, models, **kw)
                sec = time.perf_counter() - t0
                sizes = mem.partition.class_sizes
                base = {"dataset": name, "rows": len(df), "algorithm": alg}
                rows.append({**base, "run": "memory", "parts": 1, "split": "", "ail": mem.metrics["ail"],
                             "dm": float((sizes.astype(float) ** 2).sum()), "classes": mem.partition.n_classes,
                             "passed": mem.achieved["passed"], "seconds": sec})
                print(rows[-1], flush=True)
                splits = ["hilbert", "rows"] if alg in ("sabre", "burel") else ["hilbert"]
                for split in splits:
                    for p in args.parts:
                        if split == "rows" and p == 1:
                            continue
                        t0 = time.perf_counter()
                        res = two_phase(ddf, schema, models, algorithm=alg, n_parts=p, split=split, rng=0)
                        rep = res.audit(schema)
                        sec = time.perf_counter() - t0
                        part = Partition.from_labels(table, res.labels())
                        sizes = part.class_sizes
                        mem_audit = audit(table, part, res.models, reference="table").passed
                        rows.append({**base, "run": "dask", "parts": res.n_parts, "split": split,
                                     "ail": ail(table, part), "dm": float((sizes.astype(float) ** 2).sum()),
                                     "classes": res.n_classes, "passed": bool(rep["passed"] and mem_audit),
                                     "seconds": sec})
                        print(rows[-1], flush=True)
            del ddf
    cluster.close()
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print("wrote", args.out, "load", os.getloadavg(), np.__version__)


if __name__ == "__main__":
    main()
