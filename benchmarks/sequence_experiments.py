"""Experiment harness for anoncore.sequence (Bonomi, Fan, Jin, WSDM 2016, §6; spec sequence-sanitization.md §4).

Reproduces the *shape* of the paper's study on synthetic data: an MSNBC-like 17-category page-visit stream with a
placeholder category taxonomy, and a location-like stream over 69 areas binned 10 to a group. Defaults follow the
paper's Table 1 (m = 2, w = 10, f_min = 10, |P| = 4, relative epsilon 0.5); each sweep varies one parameter.

Writes ``sequence_experiments.csv`` and one PNG per sweep into ``--out`` (default ``bench_out/sequence``).
Timing follows the paper's cost model by default: every Ĩ evaluation re-mines the generalized patterns over the
sequence (``counting='scan'``, O(n·w·m) per evaluation, like the paper's black-box miner), Top-Down uses the paper's
Σ_S shortcut (``sigma_s_shortcut=True``), and both algorithms run as the C++ batch kernels on one thread. The
``eps_table`` sweep repeats the ε sweep with the library's default pair-table counting (evaluation independent of n).
``--python`` adds the traced Python references (same maps, slower). The default size runs in about a minute; use
``--users 32 --length 20000 --runs 5`` for a paper-sized run.

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
    "eps": 0.5, "w": 10, "m": 2, "n_patterns": 4, "cost": "linear", "f_min": 10, "counting": "scan",
}  # fmt: skip
# (label, method, trace, options): C++ batch kernels (untraced). Top-Down as the library runs it (Σ_S shortcut,
# identical candidates of a pass evaluated once), as the paper's listing runs it (every symbol's candidate evaluated;
# same output), and without the Σ_S shortcut (Algorithm 1 over the whole alphabet, paper listing).
METHODS: list[tuple[str, str, bool, dict[str, Any]]] = [
    ("top_down", "top_down", False, {}),
    ("top_down_paper", "top_down", False, {"dedupe": False}),
    ("top_down_no_shortcut", "top_down", False, {"sigma_s_shortcut": False, "dedupe": False}),
    ("bottom_up", "bottom_up", False, {}),
]
PY_METHODS: list[tuple[str, str, bool, dict[str, Any]]] = [
    ("top_down_py", "top_down", True, {}),
    ("bottom_up_py", "bottom_up", True, {}),
]
SHORT = {"top_down": "TD", "top_down_paper": "TD paper", "top_down_no_shortcut": "TD no-Σ_S", "bottom_up": "BU", "top_down_py": "TD py",
         "bottom_up_py": "BU py"}  # fmt: skip
STYLE = {"top_down": "-o", "top_down_paper": "-.v", "top_down_no_shortcut": ":^", "bottom_up": "--s", "top_down_py": "-.x",
         "bottom_up_py": "-.+"}  # fmt: skip


def run_point(
    dataset: str, seqs: list[np.ndarray], tax: Any, run: int, **kw: Any
) -> Iterable[dict[str, Any]]:
    p = {**DEFAULTS, **kw}
    pats = sample_sensitive_patterns(
        seqs, tax, p["n_patterns"], p["w"], m=p["m"], f_min=p["f_min"], rng=1000 + run
    )
    pats_l = [x.tolist() for x in pats]
    for label, method, trace, opts in METHODS:
        dt = float("inf")
        for _ in range(2):  # best of 2 (shared machine)
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
                **opts,
            )
            dt = min(dt, time.perf_counter() - t0)
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
            "mi_evaluations_per_user": float(np.mean([u.stats["mi_evaluations"] for u in res.users])),
        }


def _num(v: str) -> Any:
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return v


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--users", type=int, default=8)
    ap.add_argument("--length", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--out", default=os.path.join("bench_out", "sequence"))
    ap.add_argument("--python", action="store_true", help="also time the traced Python references")
    ap.add_argument("--replot", action="store_true", help="only redraw the plots from --out's CSV")
    args = ap.parse_args(argv)
    if args.replot:
        with open(os.path.join(args.out, "sequence_experiments.csv"), newline="") as fh:
            rows = [{k: _num(v) for k, v in r.items()} for r in csv.DictReader(fh)]
        labels = {r["method"] for r in rows}
        METHODS.extend(m for m in PY_METHODS if m[0] in labels)
        plot(rows, args.out)
        return
    if args.python:
        METHODS.extend(PY_METHODS)
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
        "eps_table": [{"eps": e, "counting": "table"} for e in (0.1, 0.3, 0.5, 0.7, 0.9)],
        "w": [{"w": w} for w in (2, 5, 10, 20)],
        "m": [{"m": m} for m in (1, 2, 3)],
        "n_patterns": [{"n_patterns": k} for k in (1, 2, 4, 8)],
        # per-evaluation re-mining over the sequence (the paper's setting) shows the dependence on n
        "length": [{"length": n} for n in (1000, 2000, 4000, 8000, 16000)],
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

    param = {
        "eps": "eps",
        "eps_table": "eps",
        "w": "w",
        "m": "m",
        "n_patterns": "n_patterns",
        "length": "length",
    }
    for sweep, key in param.items():
        sub = [r for r in rows if r["sweep"] == sweep]
        fig, axes = plt.subplots(3, 2, figsize=(10, 10))
        for col, ds in enumerate(("msnbc-like", "location-like")):
            for method, _, _, _ in METHODS:
                costs = sorted({r["cost"] for r in sub}) if sweep == "eps" else ["linear"]
                for cost in costs:
                    pts = [
                        r for r in sub if r["dataset"] == ds and r["method"] == method and r["cost"] == cost
                    ]
                    xs = sorted({r[key] for r in pts})
                    ul = [np.mean([r["ul_per_event"] for r in pts if r[key] == x]) for x in xs]
                    tm = [np.mean([r["seconds_per_user"] for r in pts if r[key] == x]) * 1e3 for x in xs]
                    label = SHORT[method] + (f" {cost}" if sweep == "eps" else "")
                    style = STYLE[method]
                    axes[0, col].plot(xs, ul, style, label=label)
                    axes[1, col].plot(xs, tm, style, label=label)
                    ev = [np.mean([r["mi_evaluations_per_user"] for r in pts if r[key] == x]) for x in xs]
                    axes[2, col].plot(xs, ev, style, label=label)
            axes[0, col].set_title(f"{ds}: utility loss / event")
            axes[1, col].set_title(f"{ds}: time per user (ms)")
            axes[2, col].set_title(f"{ds}: Ĩ evaluations per user")
            axes[2, col].set_xlabel(key)
            if sweep != "length":  # linear axes show the dependence on n
                axes[1, col].set_yscale("log")
                axes[2, col].set_yscale("log")
            axes[0, col].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(out, f"sequence_{sweep}.png"), dpi=60)
        plt.close(fig)


if __name__ == "__main__":
    main()
