"""Experiment harness for anoncore.sequence (Bonomi, Fan, Jin, WSDM 2016, §6; spec sequence-sanitization.md §4).

Reproduces the *shape* of the paper's study on synthetic data: an MSNBC-like 17-category page-visit stream with a
placeholder category taxonomy, and a location-like stream over 69 areas binned 10 to a group. Defaults follow the
paper's Table 1 (m = 2, w = 10, f_min = 10, |P| = 4, relative epsilon 0.5); each sweep varies one parameter.

Writes ``sequence_experiments.csv`` and one PNG per sweep into ``--out`` (default ``benchmarks/out/sequence``).
The default size runs in well under a minute; use ``--users 36 --length 10000 --runs 5`` for a paper-sized run.

Usage::

    PYTHONPATH=src python benchmarks/sequence_experiments.py [--users 8] [--length 2000] [--runs 1] [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import os
import time
from collections.abc import Iterable
from typing import Any

import numpy as np

from anoncore.sequence import sample_sensitive_patterns, sanitize
from anoncore.sequence.synthetic import location_like, msnbc_like

DEFAULTS: dict[str, Any] = {
    "eps": 0.5, "w": 10, "m": 2, "n_patterns": 4, "cost": "linear", "f_min": 10, "counting": "table",
}  # fmt: skip
# (label, method, trace): the Python reference implementations (traced) of both algorithms, which compare the
# algorithms on equal footing, and the C++ Top-Down batch kernel (untraced, identical maps).
METHODS = (
    ("top_down", "top_down", True),
    ("bottom_up", "bottom_up", True),
    ("top_down_cpp", "top_down", False),
)


def run_point(
    dataset: str, seqs: list[np.ndarray], tax: Any, run: int, **kw: Any
) -> Iterable[dict[str, Any]]:
    p = {**DEFAULTS, **kw}
    pats = sample_sensitive_patterns(
        seqs, tax, p["n_patterns"], p["w"], m=p["m"], f_min=p["f_min"], rng=1000 + run
    )
    pats_l = [x.tolist() for x in pats]
    for label, method, trace in METHODS:
        t0 = time.perf_counter()
        res = sanitize(
            seqs,
            tax,
            pats_l,
            p["eps"],
            p["w"],
            method=method,
            cost=p["cost"],
            counting=p["counting"],
            trace=trace,
            n_threads=1,
        )
        dt = time.perf_counter() - t0
        yield {
            "dataset": dataset,
            "method": label,
            "run": run,
            **{k: p[k] for k in ("eps", "w", "m", "n_patterns", "cost", "counting")},
            "length": int(np.mean([len(s) for s in seqs])),
            "n_users": len(seqs),
            "ul_per_event": float(res.normalized_utility_loss.mean()),
            "mi_over_entropy": float(
                np.mean([u.mi / u.entropy if u.entropy > 0 else 0.0 for u in res.users])
            ),
            "seconds_per_user": dt / len(seqs),
        }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--users", type=int, default=8)
    ap.add_argument("--length", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--out", default=os.path.join("benchmarks", "out", "sequence"))
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    datasets = {
        "msnbc-like": msnbc_like(args.users, args.length, rng=0),
        "location-like": location_like(args.users, args.length, rng=0),
    }
    sweeps: dict[str, list[dict[str, Any]]] = {
        "eps": [
            {"eps": e, "cost": c}
            for c in ("linear", "exponential", "iloss")
            for e in (0.1, 0.3, 0.5, 0.7, 0.9)
        ],
        "w": [{"w": w} for w in (2, 5, 10, 20)],
        "m": [{"m": m} for m in (1, 2, 3)],
        "n_patterns": [{"n_patterns": k} for k in (1, 2, 4, 8)],
        # per-candidate recounting over the sequence (the paper's setting) to show the dependence on n
        "length": [{"length": n, "counting": "scan"} for n in (500, 1000, 2000, 4000, 8000)],
    }
    rows: list[dict[str, Any]] = []
    for name, (seqs, tax) in datasets.items():
        for sweep, points in sweeps.items():
            for point in points:
                kw = dict(point)
                use = seqs
                if "length" in kw:
                    n = kw.pop("length")
                    use = (
                        location_like(args.users, n, rng=0)[0]
                        if name == "location-like"
                        else msnbc_like(args.users, n, rng=0)[0]
                    )
                for run in range(args.runs):
                    for row in run_point(name, use, tax, run, **kw):
                        row["sweep"] = sweep
                        rows.append(row)
                print(f"{name:14s} {sweep:10s} {point}", flush=True)
    path = os.path.join(args.out, "sequence_experiments.csv")
    with open(path, "w", newline="") as fh:
        wr = csv.DictWriter(fh, fieldnames=list(rows[0]))
        wr.writeheader()
        wr.writerows(rows)
    print("wrote", path)
    plot(rows, args.out)


def plot(rows: list[dict[str, Any]], out: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    param = {"eps": "eps", "w": "w", "m": "m", "n_patterns": "n_patterns", "length": "length"}
    for sweep, key in param.items():
        sub = [r for r in rows if r["sweep"] == sweep]
        fig, axes = plt.subplots(2, 2, figsize=(10, 7))
        for col, ds in enumerate(("msnbc-like", "location-like")):
            for method, _, _ in METHODS:
                costs = sorted({r["cost"] for r in sub}) if sweep == "eps" else ["linear"]
                for cost in costs:
                    pts = [
                        r for r in sub if r["dataset"] == ds and r["method"] == method and r["cost"] == cost
                    ]
                    xs = sorted({r[key] for r in pts})
                    ul = [np.mean([r["ul_per_event"] for r in pts if r[key] == x]) for x in xs]
                    tm = [np.mean([r["seconds_per_user"] for r in pts if r[key] == x]) * 1e3 for x in xs]
                    short = {"top_down": "TD", "bottom_up": "BU", "top_down_cpp": "TD c++"}[method]
                    label = short + (f" {cost}" if sweep == "eps" else "")
                    style = {"top_down": "-o", "bottom_up": "--s", "top_down_cpp": ":^"}[method]
                    axes[0, col].plot(xs, ul, style, label=label)
                    axes[1, col].plot(xs, tm, style, label=label)
            axes[0, col].set_title(f"{ds}: utility loss / event")
            axes[1, col].set_title(f"{ds}: time per user (ms)")
            axes[1, col].set_xlabel(key)
            axes[1, col].set_yscale("log")
            axes[0, col].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(out, f"sequence_{sweep}.png"), dpi=90)
        plt.close(fig)


if __name__ == "__main__":
    main()
