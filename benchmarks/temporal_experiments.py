"""Experiments for the temporal reposition model (anoncore.temporal; spec temporal-reposition.md A.4).

Writes CSV files and PNG plots into an output directory:

- suppression.csv / suppression.png: suppression rate versus w for repositioning, suppression only (w = 1) and
  merging w snapshots (the two alternatives P-TEMP rejects), for several l;
- queries.csv / queries.png: mean relative error of random window queries Q ^ [a, b] versus w, l and mu;
- anatomy_queries.csv: the same with an extra age range, answered on the Anatomy release (QIT + ST);
- shift.csv / shift.png: distribution of the reposition distance TS' - TS;
- modes.csv: information loss of the paper-faithful Figure 4 loop versus the corrected one;
- scaling.csv / scaling.png: kernel throughput versus stream length (linear-time check).

Usage: python benchmarks/temporal_experiments.py OUTDIR [--snapshots 200] [--size 200] [--n-sa 20] [--seed 0]
The default run takes a few seconds; raise --snapshots/--size for the large setting.
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import numpy as np


def _write(path: Path, rows: list[dict]) -> None:
    with path.open("w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(rows[0]))
        wr.writeheader()
        wr.writerows(rows)


def main(argv: list[str] | None = None) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from anoncore.temporal import (
        anatomize_stream,
        anatomy_window_query_error,
        make_temporal_stream,
        merge_snapshots,
        reposition_stream,
        suppression_only,
        window_query_error,
    )

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    ap.add_argument("--snapshots", type=int, default=200)
    ap.add_argument("--size", type=int, default=200)
    ap.add_argument("--n-sa", type=int, default=20)
    ap.add_argument("--skew", type=float, default=1.0)
    ap.add_argument("--beta", type=float, default=5.0)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    out = Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    df = make_temporal_stream(args.snapshots, args.size, args.n_sa, skew=args.skew, rng=args.seed, with_qi=True)
    ts, sa = df["ts"].to_numpy(), df["sa"].to_numpy()
    ws = [1, 2, 3, 5, 7, 10, 15]
    ls = [2, 4, 6]
    mus = ["linear", "quadratic", "exponential"]

    # 1. suppression rate: reposition vs suppression only vs merging
    rows = []
    for l in ls:
        base = float(np.mean(suppression_only(ts, sa, l)[0] < 0))
        for w in ws:
            rep = reposition_stream(ts, sa, l=l, w=w, mu="quadratic", beta=args.beta, n_sa=args.n_sa)
            merged = float(np.mean(merge_snapshots(ts, sa, l, w)[0] < 0))
            rows.append({"l": l, "w": w, "reposition": rep.suppression_rate, "suppression_only": base,
                         "merge": merged, "mean_shift": float(rep.shift.mean()) if rep.shift.size else 0.0})
    _write(out / "suppression.csv", rows)
    fig, axes = plt.subplots(1, len(ls), figsize=(4 * len(ls), 3.2), sharey=True)
    for ax, l in zip(np.atleast_1d(axes), ls):
        r = [x for x in rows if x["l"] == l]
        ax.plot(ws, [x["reposition"] for x in r], "o-", label="reposition (w)")
        ax.plot(ws, [x["suppression_only"] for x in r], "k--", label="suppression only")
        ax.plot(ws, [x["merge"] for x in r], "s:", label="merge w snapshots")
        ax.set_title(f"l = {l}")
        ax.set_xlabel("w")
    np.atleast_1d(axes)[0].set_ylabel("suppressed fraction")
    np.atleast_1d(axes)[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "suppression.png", dpi=120)
    plt.close(fig)

    # 2. window-query error vs w, l, mu (and the alternatives)
    rows = []
    for l in ls:
        for mu in mus:
            for w in ws:
                rep = reposition_stream(ts, sa, l=l, w=w, mu=mu, beta=args.beta, n_sa=args.n_sa)
                q = window_query_error(ts, sa, rep, n_queries=args.queries, max_length=10, rng=args.seed)
                rows.append({"l": l, "mu": mu, "w": w, "method": "reposition", "mean_error": q.mean_error,
                             "median_error": q.median_error})
        for w in ws:
            q = window_query_error(ts, sa, merge_snapshots(ts, sa, l, w), n_queries=args.queries, max_length=10,
                                   rng=args.seed)
            rows.append({"l": l, "mu": "-", "w": w, "method": "merge", "mean_error": q.mean_error,
                         "median_error": q.median_error})
        q = window_query_error(ts, sa, suppression_only(ts, sa, l), n_queries=args.queries, max_length=10,
                               rng=args.seed)
        rows.append({"l": l, "mu": "-", "w": 1, "method": "suppression_only", "mean_error": q.mean_error,
                     "median_error": q.median_error})
    _write(out / "queries.csv", rows)
    fig, axes = plt.subplots(1, len(ls), figsize=(4 * len(ls), 3.2), sharey=True)
    for ax, l in zip(np.atleast_1d(axes), ls):
        for mu in mus:
            r = [x for x in rows if x["l"] == l and x["mu"] == mu]
            ax.plot(ws, [x["mean_error"] for x in r], "o-", label=f"reposition, mu={mu}")
        r = [x for x in rows if x["l"] == l and x["method"] == "merge"]
        ax.plot(ws, [x["mean_error"] for x in r], "s:", label="merge w snapshots")
        so = next(x for x in rows if x["l"] == l and x["method"] == "suppression_only")["mean_error"]
        ax.axhline(so, color="k", ls="--", label="suppression only")
        ax.set_title(f"l = {l}")
        ax.set_xlabel("w")
    np.atleast_1d(axes)[0].set_ylabel("mean relative error of Q^[a,b]")
    np.atleast_1d(axes)[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "queries.png", dpi=120)
    plt.close(fig)

    # 2b. window queries with a QI range (age) answered on the Anatomy release of the repositioned stream
    rows = []
    age = df["age"].to_numpy()
    for l in ls:
        for w in ws:
            rep = reposition_stream(ts, sa, l=l, w=w, mu="quadratic", beta=args.beta, n_sa=args.n_sa)
            q = anatomy_window_query_error(ts, sa, age, anatomize_stream(rep), n_queries=args.queries // 3,
                                           max_length=10, rng=args.seed)
            rows.append({"l": l, "w": w, "mean_error": q.mean_error, "median_error": q.median_error})
    _write(out / "anatomy_queries.csv", rows)

    # 3. distribution of TS' - TS
    rows = []
    for mu in mus:
        rep = reposition_stream(ts, sa, l=4, w=7, mu=mu, beta=args.beta, n_sa=args.n_sa)
        vals, cnt = np.unique(rep.shift, return_counts=True)
        rows += [{"mu": mu, "shift": int(v), "count": int(c)} for v, c in zip(vals, cnt)]
    _write(out / "shift.csv", rows)
    fig, ax = plt.subplots(figsize=(5, 3.2))
    for k, mu in enumerate(mus):
        r = [x for x in rows if x["mu"] == mu and x["shift"] > 0]
        ax.bar(np.array([x["shift"] for x in r]) + 0.25 * (k - 1), [x["count"] for x in r], width=0.25, label=mu)
    ax.set_xlabel("TS' - TS (repositioned records only), l = 4, w = 7")
    ax.set_ylabel("records")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "shift.png", dpi=120)
    plt.close(fig)

    # 4. paper-faithful vs corrected
    rows = []
    for l in ls:
        for w in (3, 7):
            a = reposition_stream(ts, sa, l=l, w=w, mu="quadratic", beta=args.beta, n_sa=args.n_sa)
            b = reposition_stream(ts, sa, l=l, w=w, mu="quadratic", beta=args.beta, n_sa=args.n_sa,
                                  mode="paper_faithful")
            rows.append({"l": l, "w": w, "il_corrected": a.information_loss, "il_paper_faithful": b.information_loss,
                         "supp_corrected": a.suppression_rate, "supp_paper_faithful": b.suppression_rate})
    _write(out / "modes.csv", rows)

    # 5. scaling (kernel time is linear in the stream length)
    rows = []
    for k in (1, 2, 4, 8):
        d = make_temporal_stream(args.snapshots * k, args.size, args.n_sa, skew=args.skew, rng=args.seed)
        t0 = time.perf_counter()
        r = reposition_stream(d["ts"].to_numpy(), d["sa"].to_numpy(), l=4, w=7, mu="quadratic", beta=args.beta,
                              n_sa=args.n_sa)
        rows.append({"n_records": len(d), "kernel_seconds": r.stats["kernel_seconds"],
                     "total_seconds": time.perf_counter() - t0, "records_per_second": r.stats["records_per_second"]})
    _write(out / "scaling.csv", rows)
    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.plot([x["n_records"] for x in rows], [x["kernel_seconds"] for x in rows], "o-")
    ax.set_xlabel("records")
    ax.set_ylabel("kernel seconds")
    fig.tight_layout()
    fig.savefig(out / "scaling.png", dpi=120)
    plt.close(fig)
    print(f"wrote {sorted(p.name for p in out.iterdir())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
