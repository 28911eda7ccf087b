"""Experiment harness for SABRE_W (Cao thesis, ch. 6 §6.5; spec streams-castle-sabrew.md §5.2).

SABRE_W vs tMondrian_W vs tIncognito_W on the census-like stream (anoncore.datasets.synthetic_census_frame:
7 QI, SA = salary, 50 ordered values; every tuple its own person). Defaults k=6, t=0.35, omega=20,000, I=5,000.
Writes one CSV per experiment and one PNG per figure into ``--out``:

- fig6_4  I varied (omega fixed): AIL and time
- fig6_5  omega varied (I fixed): AIL and time
- fig6_6  t varied: AIL and time
- fig6_7  QI count 3..7: AIL and time

SABRE_W runs with SABRE-AK (the thesis's choice) and, as an extra line, SABRE-KNN retrieval (``method='knn'``).

AIL = mean over published tuples of the GLM IL of their class's generalization; the suppression rate is
reported (it is 0 on these streams). Time = process CPU seconds of push + flush. tIncognito_W is run on a shorter
stream (``--incognito-rows``) because it is two orders of magnitude slower (as the thesis reports); the table
marks the stream length of every row.

Usage: ``PYTHONPATH=src python benchmarks/sabre_w_experiments.py [--out bench_out/sabre_w] [--quick]``
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from anoncore.data.schema import Attribute, Schema
from anoncore.datasets import synthetic_census_frame, synthetic_census_schema
from anoncore.stream import SabreW


def census_stream(n: int, n_qi: int = 7, seed: int = 0) -> tuple[Schema, pd.DataFrame]:
    df = synthetic_census_frame(n, rng=seed)
    df["pid"] = np.arange(n, dtype=np.int64)
    base = synthetic_census_schema("salary", n_qi)
    return Schema((*base.attributes, Attribute("pid", "pid", "numeric"))), df


def run(schema: Schema, df: pd.DataFrame, baseline: str, batch: int = 50_000, **kw: Any) -> dict[str, Any]:
    method = "ak"
    if baseline == "sabre-knn":
        baseline, method = "sabre", "knn"
    s = SabreW(schema, baseline=baseline, method=method, rng=0, **kw)
    t0 = time.process_time()
    rel = [s.push(df.iloc[a:a + batch]) for a in range(0, len(df), batch)]
    rel.append(s.flush())
    cpu = time.process_time() - t0
    il = np.concatenate([r.il[~r.suppressed] for r in rel])
    sup = sum(r.n_suppressed for r in rel)
    cases = [c for _, c, _ in s.case_log_]
    name = {"sabre": "SABRE_W", "tmondrian": "tMondrian_W", "tincognito": "tIncognito_W"}[baseline]
    return {"algorithm": name + ("-KNN" if method == "knn" else ""),
            "n_rows": len(df), "ail": float(il.mean()) if il.size else float("nan"),
            "suppressed": sup / len(df), "seconds": cpu, "tuples_per_s": len(df) / cpu if cpu > 0 else float("nan"),
            "n_direct": cases.count("direct"), "n_indirect": cases.count("indirect"),
            "n_classes": int(sum(len(r.classes) for r in rel)), **kw}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="bench_out/sabre_w")
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--incognito-rows", type=int, default=30_000)
    ap.add_argument("--quick", action="store_true", help="smaller grids and streams (smoke run)")
    ap.add_argument("--only", default="", help="comma-separated experiment names")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows, irows = (20_000, 10_000) if args.quick else (args.rows, args.incognito_rows)
    d = {"k": 6, "t": 0.35, "omega": 20_000, "interval": 5_000}
    if args.quick:
        d = {"k": 6, "t": 0.35, "omega": 4_000, "interval": 1_000}
    om, iv = d["omega"], d["interval"]
    grids = {
        "fig6_4": ("interval", [om // 8, om // 4, om // 2, om]),
        "fig6_5": ("omega", [iv, 2 * iv, 4 * iv, 8 * iv]),
        "fig6_6": ("t", [0.15, 0.25, 0.35, 0.45, 0.55]),
        "fig6_7": ("n_qi", [3, 4, 5, 6, 7]),
    }
    only = set(filter(None, args.only.split(",")))
    for name, (param, values) in grids.items():
        if only and name not in only:
            continue
        res = []
        for v in values:
            for baseline in ("sabre", "sabre-knn", "tmondrian", "tincognito"):
                n = irows if baseline == "tincognito" else rows
                n_qi = v if param == "n_qi" else 7
                schema, df = census_stream(n, n_qi)
                kw = dict(d)
                if param != "n_qi":
                    kw[param] = v
                if kw["interval"] > kw["omega"]:
                    continue
                r = run(schema, df, baseline, **kw)
                r["n_qi"] = n_qi
                res.append(r)
                print(name, param, v, r["algorithm"], f"n={n} ail={r['ail']:.4f} s={r['seconds']:.2f}", flush=True)
        table = pd.DataFrame(res)
        table.to_csv(out / f"{name}.csv", index=False)
        _plot(table, param, name, out)


def _plot(table: pd.DataFrame, param: str, name: str, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(8, 3))
    for alg, g in table.groupby("algorithm"):
        ax[0].plot(g[param], g["ail"], marker="o", label=alg)
        ax[1].plot(g[param], g["seconds"], marker="o", label=alg)
    ax[0].set_xlabel(param)
    ax[0].set_ylabel("AIL (GLM)")
    ax[1].set_xlabel(param)
    ax[1].set_ylabel("CPU seconds")
    ax[1].set_yscale("log")
    ax[0].legend(fontsize=7)
    fig.suptitle(f"{name}: SABRE_W vs window baselines")
    fig.tight_layout()
    fig.savefig(out / f"{name}.png", dpi=80)
    plt.close(fig)


if __name__ == "__main__":
    main()
