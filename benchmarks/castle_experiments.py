"""Experiment harness for CASTLE (Cao thesis, ch. 5 §5.7; spec streams-castle-sabrew.md §5.1).

Runs the thesis's experiments on UCI Adult (30,162 rows; "SFU-Adult" = + clean adult.test, 45,222 rows) and
power-law synthetic streams, writes one CSV per experiment and one PNG per figure into ``--out``:

- fig5_5  eta x mu (k=100, delta=10,000, 10 QI), both Adult variants: AIL
- fig5_6a QI count 4..10 (k=100, delta=10,000): AIL
- fig5_6b k in {25, 50, 100, 200, 400} (10 QI, delta=10,000): AIL
- fig5_7  power-law streams, delta x alpha (k=100): AIL
- fig5_8  transaction stream (Quest-style generator joined with UCI Adult, one tuple per item; dup = average
          transaction length 5, 10, 15; delta=10,000): (a) QI count 4..10 at k=100, (b) k at 4 QI: AIL
- fig5_9  workload error (median relative COUNT error per window of delta tuples, averaged over windows):
          (a) delta, (b) k, (d) theta, and lambda (QI predicates per query, 1..3; default 3), with 4 QI (age, fnlwgt, education-num, hours-per-week), SA = occupation
- fig5_12 distinct l-diversity, SA = occupation, 5 QI: AIL and workload error vs l

AIL is the mean, over released tuples, of the GLM IL of the generalization each was released with (A22 (a));
``ail_supp1`` also counts suppressed tuples with IL 1 (A22 (b)); the suppression rate is reported.

Usage: ``PYTHONPATH=src python benchmarks/castle_experiments.py [--out bench_out/castle] [--quick]``
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from anoncore.stream import Castle
from anoncore.stream.datasets import (
    ADULT_NUMERIC_DOMAINS,
    adult_stream_schema,
    expand_transactions,
    load_uci_adult_stream,
    power_law_stream,
    transaction_stream,
)


def run_castle(schema: Any, df: pd.DataFrame, batch: int = 10_000, **kw: Any) -> dict[str, Any]:
    c = Castle(schema, **kw)
    t0 = time.process_time()
    rel = [c.push(df.iloc[s:s + batch]) for s in range(0, len(df), batch)]
    rel.append(c.flush())
    cpu = time.process_time() - t0
    cl = pd.concat([r.clusters for r in rel], ignore_index=True)
    il = dict(zip(cl["gen_id"].tolist(), cl["il"].tolist()))
    pos = np.concatenate([r.position for r in rel])
    gen = np.concatenate([r.gen_id for r in rel])
    sup = np.concatenate([r.suppressed for r in rel])
    lo = np.concatenate([r.num_lo for r in rel])
    hi = np.concatenate([r.num_hi for r in rel])
    node = np.concatenate([r.cat_node for r in rel])
    til = np.array([il[g] if g >= 0 else 1.0 for g in gen.tolist()])
    n = len(df)
    return {
        "ail": float(til[~sup].mean()) if (~sup).any() else float("nan"),
        "ail_supp1": float(til.mean()),
        "suppressed": float(sup.mean()),
        "n_clusters": len(cl),
        "tuples_per_s_cpu": n / cpu if cpu > 0 else float("nan"),
        "_pos": pos, "_sup": sup, "_lo": lo, "_hi": hi, "_node": node,
    }


def workload_error(df: pd.DataFrame, res: dict[str, Any], qi: list[str], sa: str, window: int, theta: float,
                   lam: int = 3, n_queries: int = 500, seed: int = 0, ranges: str = "domain") -> float:
    """Query workload error of §5.7.2 ([82]): per tumbling window of `window` input positions, the median
    relative error of `n_queries` COUNT queries with predicates on `lam` random numeric QI and the SA, estimated
    assuming uniform values inside each published box; averaged over windows. Suppressed tuples count 0.

    ``ranges='domain'``: each predicate covers theta**(1/(lam+1)) of the declared domain width (Table 5.4);
    ``ranges='values'``: it covers that fraction of the attribute's distinct values (rank space), which keeps
    predicates inside the populated part of skewed attributes such as fnlwgt."""
    g = np.random.default_rng(seed)
    pos = res["_pos"] - 1  # positions are 1-based row numbers
    order = np.argsort(pos)
    lo = res["_lo"][order]
    hi = res["_hi"][order]
    sup = res["_sup"][order]
    vals = {q: df[q].to_numpy(dtype=float) for q in qi}
    sav = df[sa].to_numpy()
    sa_dom = np.array(sorted(set(sav.tolist())))
    frac = theta ** (1.0 / (lam + 1))
    distinct = {q: np.unique(vals[q]) for q in qi}
    errs = []
    for w0 in range(0, len(df) - window + 1, window):
        sl = slice(w0, w0 + window)
        per_q = []
        tries = 0
        while len(per_q) < n_queries and tries < 20 * n_queries:
            tries += 1
            attrs = g.choice(len(qi), lam, replace=False)
            act_m = np.ones(window, dtype=bool)
            est_p = np.where(sup[sl], 0.0, 1.0)
            for a in attrs:
                if ranges == "domain":
                    L, U = ADULT_NUMERIC_DOMAINS[qi[a]]
                    width = (U - L) * frac
                    r0 = g.uniform(L, U - width)
                    r1 = r0 + width
                else:
                    dv = distinct[qi[a]]
                    w = max(1, round(dv.size * frac))
                    i0 = int(g.integers(0, dv.size - w + 1))
                    r0, r1 = float(dv[i0]), float(dv[i0 + w - 1])
                v = vals[qi[a]][sl]
                act_m &= (v >= r0) & (v <= r1)
                a_lo = lo[sl, a]
                a_hi = hi[sl, a]
                # integer-valued attributes: the box [lo, hi] holds hi - lo + 1 values
                cover = np.clip(np.minimum(a_hi, np.floor(r1)) - np.maximum(a_lo, np.ceil(r0)) + 1, 0, None)
                est_p = est_p * np.where(sup[sl], 0.0, cover / (a_hi - a_lo + 1))
            k_sa = max(1, round(len(sa_dom) * frac))
            chosen = set(g.choice(sa_dom, k_sa, replace=False).tolist())
            in_sa = np.array([s in chosen for s in sav[sl].tolist()])
            act = int((act_m & in_sa).sum())
            if act == 0:
                continue
            est = float((est_p * in_sa).sum())
            per_q.append(abs(act - est) / act)
        if per_q:
            errs.append(float(np.median(per_q)))
    return float(np.mean(errs)) if errs else float("nan")


def _strip(r: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in r.items() if not k.startswith("_")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="bench_out/castle")
    ap.add_argument("--quick", action="store_true", help="smaller grids (CI smoke run)")
    ap.add_argument("--only", default="", help="comma-separated experiment names")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    only = set(filter(None, args.only.split(",")))
    want = lambda name: not only or name in only
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    uci = load_uci_adult_stream("train")
    sfu = load_uci_adult_stream("all")
    datasets = {"UCI-Adult": uci, "SFU-Adult": sfu}
    s10 = adult_stream_schema(10)

    def save(name: str, rows: list[dict[str, Any]], x: str, y: str, series: str | None, title: str) -> None:
        d = pd.DataFrame(rows)
        d.to_csv(out / f"{name}.csv", index=False)
        fig, ax = plt.subplots(figsize=(5, 3.5))
        if series:
            for key, grp in d.groupby(series):
                ax.plot(grp[x], grp[y], marker="o", label=f"{series}={key}")
            ax.legend(fontsize=7)
        else:
            ax.plot(d[x], d[y], marker="o")
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        ax.set_title(title, fontsize=9)
        fig.tight_layout()
        fig.savefig(out / f"{name}.png", dpi=120)
        plt.close(fig)
        print(d.to_string(index=False))

    if want("fig5_5"):
        rows = []
        etas = [10, 50, 100] if args.quick else [10, 25, 50, 75, 100]
        mus = [50, 100] if args.quick else [50, 100, 150]
        for dname, df in datasets.items():
            for eta in etas:
                for mu in mus:
                    r = run_castle(s10, df, k=100, delta=10_000, eta=eta, mu=mu, rng=0)
                    rows.append({"dataset": dname, "eta": eta, "mu": mu, **_strip(r)})
        d = pd.DataFrame(rows)
        d["series"] = d["dataset"] + " mu=" + d["mu"].astype(str)
        save("fig5_5", d.to_dict("records"), "eta", "ail", "series", "Fig 5.5: AIL vs eta (k=100, delta=10^4, 10 QI)")
    if want("fig5_6a"):
        rows = []
        for q in range(4, 11):
            r = run_castle(adult_stream_schema(q), uci, k=100, delta=10_000, eta=50, mu=100, rng=0)
            rows.append({"n_qi": q, **_strip(r)})
        save("fig5_6a", rows, "n_qi", "ail", None, "Fig 5.6(a): AIL vs QI count (UCI-Adult, k=100)")
    if want("fig5_6b"):
        rows = []
        for k in [25, 50, 100, 200, 400]:
            r = run_castle(s10, uci, k=k, delta=10_000, eta=50, mu=100, rng=0)
            rows.append({"k": k, **_strip(r)})
        save("fig5_6b", rows, "k", "ail", None, "Fig 5.6(b): AIL vs k (UCI-Adult, 10 QI)")
    if want("fig5_7"):
        rows = []
        n = 30_000 if args.quick else 100_000
        for alpha in [0.8, 1.2, 1.6]:
            schema, df = power_law_stream(n, n_numeric=6, n_categorical=4, alpha=alpha, rng=0)
            for delta in [1_000, 2_500, 5_000, 10_000]:
                r = run_castle(schema, df, batch=50_000, k=100, delta=delta, eta=50, mu=100, rng=0)
                rows.append({"alpha": alpha, "delta": delta, "n": n, **_strip(r)})
        save("fig5_7", rows, "delta", "ail", "alpha", "Fig 5.7: power-law stream, AIL vs delta (k=100)")
    if want("fig5_8"):
        rows = []
        n_tr = 3_000 if args.quick else 10_000
        for dup in [5, 10, 15]:
            trans = transaction_stream(n_tr, avg_len=dup, n_patterns=200, avg_pattern_len=4, n_items=1000,
                                       correlation=0.5, corruption=0.5, n_persons=40_000, rng=dup)
            stream = expand_transactions(trans, uci, rng=0)
            for q in range(4, 11):
                r = run_castle(adult_stream_schema(q), stream, batch=50_000, k=100, delta=10_000, eta=50, mu=100,
                               rng=0)
                rows.append({"panel": "a", "dup": dup, "n_qi": q, "k": 100, "n_tuples": len(stream), **_strip(r)})
            for k in [25, 50, 100, 200, 400]:
                r = run_castle(adult_stream_schema(4), stream, batch=50_000, k=k, delta=10_000, eta=50, mu=100,
                               rng=0)
                rows.append({"panel": "b", "dup": dup, "n_qi": 4, "k": k, "n_tuples": len(stream), **_strip(r)})
        d = pd.DataFrame(rows)
        d.to_csv(out / "fig5_8.csv", index=False)
        fig, axes = plt.subplots(1, 2, figsize=(8, 3))
        for ax, (panel, x) in zip(axes, [("a", "n_qi"), ("b", "k")]):
            for dup, g in d[d["panel"] == panel].groupby("dup"):
                ax.plot(g[x], g["ail"], marker="o", label=f"dup={dup}")
            ax.set_xlabel(x)
            ax.set_ylabel("AIL")
            ax.legend(fontsize=7)
        fig.suptitle("Fig 5.8: transaction stream (delta=10^4): (a) k=100, (b) 4 QI", fontsize=9)
        fig.tight_layout()
        fig.savefig(out / "fig5_8.png", dpi=120)
        plt.close(fig)
        print(d[["panel", "dup", "n_qi", "k", "n_tuples", "ail", "suppressed"]].to_string(index=False))
    qi4 = ["age", "fnlwgt", "education-num", "hours-per-week"]
    s4 = adult_stream_schema(qi=tuple(qi4))
    nq = 200 if args.quick else 1000
    if want("fig5_9"):
        rows = []
        for delta in [2_500, 5_000, 10_000, 15_000]:
            r = run_castle(s4, uci, k=100, delta=delta, eta=50, mu=100, rng=0)
            we = workload_error(uci, r, qi4, "occupation", window=delta, theta=0.1, n_queries=nq)
            wv = workload_error(uci, r, qi4, "occupation", window=delta, theta=0.1, n_queries=nq, ranges="values")
            rows.append({"panel": "a", "delta": delta, "k": 100, "theta": 0.1, "workload_error": we,
                         "workload_error_values": wv, **_strip(r)})
        for k in [25, 50, 100, 200, 400]:
            r = run_castle(s4, uci, k=k, delta=10_000, eta=50, mu=100, rng=0)
            we = workload_error(uci, r, qi4, "occupation", window=10_000, theta=0.1, n_queries=nq)
            wv = workload_error(uci, r, qi4, "occupation", window=10_000, theta=0.1, n_queries=nq, ranges="values")
            rows.append({"panel": "b", "delta": 10_000, "k": k, "theta": 0.1, "workload_error": we,
                         "workload_error_values": wv, **_strip(r)})
        r = run_castle(s4, uci, k=100, delta=10_000, eta=50, mu=100, rng=0)
        for theta in [0.05, 0.1, 0.2, 0.3]:
            we = workload_error(uci, r, qi4, "occupation", window=10_000, theta=theta, n_queries=nq)
            wv = workload_error(uci, r, qi4, "occupation", window=10_000, theta=theta, n_queries=nq, ranges="values")
            rows.append({"panel": "d", "delta": 10_000, "k": 100, "theta": theta, "workload_error": we,
                         "workload_error_values": wv, **_strip(r)})
        # lambda (predicates on lambda QI + the SA) is not given in the thesis (A26 suggests 3): sweep it
        for lam in [1, 2, 3]:
            we = workload_error(uci, r, qi4, "occupation", window=10_000, theta=0.1, lam=lam, n_queries=nq)
            wv = workload_error(uci, r, qi4, "occupation", window=10_000, theta=0.1, lam=lam, n_queries=nq,
                                ranges="values")
            rows.append({"panel": "lambda", "delta": 10_000, "k": 100, "theta": 0.1, "lambda": lam,
                         "workload_error": we, "workload_error_values": wv, **_strip(r)})
        d = pd.DataFrame(rows)
        d["lambda"] = d["lambda"].fillna(3).astype(int)
        d.to_csv(out / "fig5_9.csv", index=False)
        fig, axes = plt.subplots(1, 4, figsize=(12, 3))
        for ax, (panel, x) in zip(axes, [("a", "delta"), ("b", "k"), ("d", "theta"), ("lambda", "lambda")]):
            g = d[d["panel"] == panel]
            ax.plot(g[x], g["workload_error"], marker="o", label="domain ranges")
            ax.plot(g[x], g["workload_error_values"], marker="s", label="value-rank ranges")
            ax.legend(fontsize=6)
            ax.set_xlabel(x)
            ax.set_ylabel("workload error")
            ax.axhline(0.13, ls=":", c="grey")
        fig.suptitle("Fig 5.9: workload error (UCI-Adult, 4 QI, SA=occupation); dotted: 13%", fontsize=9)
        fig.tight_layout()
        fig.savefig(out / "fig5_9.png", dpi=120)
        plt.close(fig)
        print(d[["panel", "delta", "k", "theta", "lambda", "workload_error", "workload_error_values", "ail",
                 "suppressed"]].to_string(index=False))
    if want("fig5_12"):
        rows = []
        # 5 QI: the 4 query attributes plus marital-status; SA = occupation (14 values)
        s5 = adult_stream_schema(qi=(*qi4, "marital-status"), sensitive="occupation")
        for l in [1, 4, 8, 10, 12, 13]:
            r = run_castle(s5, uci, k=100, delta=10_000, eta=50, mu=100, l=l, rng=0)
            we = workload_error(uci, r, qi4, "occupation", window=10_000, theta=0.1, n_queries=nq, ranges="values")
            rows.append({"l": l, "workload_error_values": we, **_strip(r)})
        save("fig5_12", rows, "l", "ail", None, "Fig 5.13-style: AIL vs l (SA=occupation, 5 QI, k=100)")


if __name__ == "__main__":
    main()
