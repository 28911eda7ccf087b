#!/usr/bin/env python
"""Rerun the beta-likeness chapter's experiments (Cao thesis, ch. 4, figures 4.4-4.9; spec sabre-burel.md §6.4).

Methods: BUREL (Hilbert retrieval, random seeds), LMondrian (Mondrian under beta-likeness) and DMondrian
(Mondrian under delta-disclosure with delta = ln(1 + min(beta, -ln max p))); for the face-to-face runs also SABRE-AK
and tMondrian (k = 1). Data: ``synthetic`` (``anoncore.datasets.synthetic_census``, the thesis's CENSUS shape; QI
candidates age, sex, education, marital_status, work_class as Table 4.3) or ``census-income`` (the SABRE
experiments' mapping: QI candidates age, sex, education, marital_stat, race, class_of_worker,
major_industry_code; SA detailed_occupation_recode, numeric codes). Numeric QIs publish [min, max] boxes.

Experiments (``--experiments``): ``beta`` (vary beta 1..5: AIL, time, achieved beta), ``qi`` (QI count 1..5),
``n`` (rows), ``query`` (median relative error of COUNT queries vs beta, lambda = 3, theta = 0.1), ``range``
(range-based beta-likeness, vary epsilon at beta = 4), ``face`` (Fig. 4.4 (a) matched t, (b) matched closeness,
(c) matched AIL; binary searches on beta and t). Results go to ``<out>/burel_<dataset>.csv`` and one PNG per
experiment.

Usage: ``python benchmarks/burel_experiments.py --dataset synthetic --n 500000 ``  (writes to ``bench_out/burel``)
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

import numpy as np

from anoncore.models import EnhancedBetaLikeness, KAnonymity
from anoncore.static.burel import likeness_model
from anoncore.static.sabre import closeness_model

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sabre_experiments import census_income, numeric_boxes, synthetic  # noqa: E402

from anoncore import Table  # noqa: E402
from anoncore.audit import audit  # noqa: E402
from anoncore.models import BasicBetaLikeness, OrderedDistanceTCloseness  # noqa: E402
from anoncore.static import burel, dmondrian, lmondrian, sabre, tmondrian  # noqa: E402
from anoncore.workload import count_query_error  # noqa: E402

QI_ORDER = {"synthetic": ("age", "sex", "education", "marital_status", "work_class"),
            "census-income": ("age", "sex", "education", "marital_stat", "race", "class_of_worker",
                              "major_industry_code")}
DEFAULT_BETA = 4.0
DEFAULT_QI = 3


def with_qis(table: Table, names: tuple[str, ...]) -> Table:
    """The table with exactly these quasi-identifiers (others insensitive), numeric QIs as [min, max] boxes."""
    from anoncore import Schema

    attrs = tuple(a if a.role != "quasi_identifier" or a.name in names else replace(a, role="insensitive")
                  for a in table.attributes)
    return numeric_boxes(Table.from_pandas(table.to_pandas(), Schema(attrs, missing=table.schema.missing)))


def sa_name(table: Table) -> str:
    return table.sensitive[0]


def achieved(tab: Table, res: Any) -> dict[str, float]:
    """Achieved privacy of any output, by the independent audit: basic beta (largest relative gain), whether
    enhanced beta-likeness holds at the largest gain, and the real closeness (ordered EMD)."""
    name = sa_name(tab)
    rep = audit(tab, res.partition, [BasicBetaLikeness(1.0, sensitive=name), EnhancedBetaLikeness(1e9, sensitive=name),
                                     OrderedDistanceTCloseness(1.0, sensitive=name)])
    return {"beta_basic": rep[0].achieved, "beta_enhanced": rep[1].achieved, "closeness": rep[2].achieved}


def run(name: str, fn: Callable[[], Any], tab: Table, repeat: int = 1) -> tuple[Any, dict[str, Any]]:
    best, res = math.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        res = fn()
        best = min(best, time.perf_counter() - t0)
    assert res is not None and res.achieved.get("passed", True), f"{name} output failed its own audit"
    row = {"method": name, "seconds": best, "ail": float(res.metrics["ail"]), "n_classes": res.partition.n_classes,
           "min_class": int(res.partition.class_sizes.min())}
    row.update(achieved(tab, res))
    return res, row


def beta_methods(beta: float, seed: int = 0, **kw: Any) -> dict[str, Callable[[Table], Any]]:
    return {"BUREL": lambda t: burel(t, likeness_model(beta=beta, **kw), rng=seed),
            "LMondrian": lambda t: lmondrian(t, likeness_model(beta=beta, **kw)),
            "DMondrian": lambda t: dmondrian(t, EnhancedBetaLikeness(beta))}


def bisect(lo: float, hi: float, ok: Callable[[float], bool], iters: int, geometric: bool = True) -> float:
    """Largest x in [lo, hi] with ok(x) (assumed monotone: ok on [lo, x*]); lo if none."""
    if ok(hi):
        return hi
    for _ in range(iters):
        mid = math.sqrt(lo * hi) if geometric else (lo + hi) / 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--dataset", choices=("synthetic", "census-income"), default="synthetic")
    ap.add_argument("--n", type=int, default=500_000)
    ap.add_argument("--face-n", type=int, default=100_000, help="rows for the face-to-face binary searches")
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=2, help="best-of-N timing")
    ap.add_argument("--experiments", default="beta,qi,n,query,range,face")
    ap.add_argument("--out", default="bench_out/burel")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    full = synthetic(args.n) if args.dataset == "synthetic" else census_income(args.n)
    order = QI_ORDER[args.dataset]
    base = with_qis(full, order[:DEFAULT_QI])
    rows: list[dict[str, Any]] = []
    exps = args.experiments.split(",")
    load = os.getloadavg()[0]

    def emit(row: dict[str, Any]) -> None:
        row.update({"dataset": args.dataset, "load": round(load, 2)})
        rows.append(row)
        print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()}, flush=True)

    def record(exp: str, param: str, value: Any, tab: Table, meths: dict[str, Callable[[Table], Any]],
               extra: Callable[[Any], dict[str, Any]] | None = None) -> None:
        for name, fn in meths.items():
            res, row = run(name, lambda fn=fn: fn(tab), tab, args.repeat)
            row.update({"experiment": exp, "param": param, "value": value, "n": tab.n_rows,
                        "n_qi": len(tab.quasi_identifiers)})
            if extra is not None:
                row.update(extra(res))
            emit(row)

    if "beta" in exps:
        for b in (1.0, 2.0, 3.0, 4.0, 5.0):
            record("beta", "beta", b, base, beta_methods(b))
    if "qi" in exps:
        for q in range(1, 6):
            record("qi", "n_qi", q, with_qis(full, order[:q]), beta_methods(DEFAULT_BETA))
    if "n" in exps:
        for frac in (0.2, 0.4, 0.6, 0.8, 1.0):
            sub = base.take(np.sort(np.random.default_rng(1).choice(base.n_rows, int(base.n_rows * frac),
                                                                    replace=False)))
            record("n", "n", sub.n_rows, sub, beta_methods(DEFAULT_BETA))
    if "query" in exps:
        for b in (1.0, 2.0, 3.0, 4.0, 5.0):
            record("query", "beta", b, base, beta_methods(b),
                   lambda r: {"query_error": count_query_error(r.partition, n_queries=args.queries, lam=3, theta=0.1,
                                                               rng=7)})
    if "range" in exps:
        for name, fn in beta_methods(DEFAULT_BETA).items():  # horizontal lines: plain enhanced beta-likeness
            if name == "DMondrian":
                continue
            res, row = run(name, lambda fn=fn: fn(base), base, 1)
            row.update({"experiment": "range", "param": "epsilon", "value": "enhanced", "n": base.n_rows,
                        "n_qi": DEFAULT_QI})
            emit(row)
        for eps in (0.0, 2.0, 4.0, 6.0, 8.0, 10.0):
            for name, fn in {"BUREL-range": lambda t, e=eps: burel(
                                 t, likeness_model(beta=DEFAULT_BETA, variant="range", epsilon=e), rng=0),
                             "LMondrian-range": lambda t, e=eps: lmondrian(
                                 t, likeness_model(beta=DEFAULT_BETA, variant="range", epsilon=e))}.items():
                res, row = run(name, lambda fn=fn: fn(base), base, 1)
                row.update({"experiment": "range", "param": "epsilon", "value": eps, "n": base.n_rows,
                            "n_qi": DEFAULT_QI})
                if name == "BUREL-range":
                    row.update({"n_merges": res.trace[2]["n_merges"], "n_violating": res.trace[2]["n_violating"]})
                emit(row)
    if "face" in exps:
        face(base if base.n_rows <= args.face_n else base.take(np.sort(np.random.default_rng(2).choice(
            base.n_rows, args.face_n, replace=False))), emit)
    fields = sorted({k for r in rows for k in r})
    csv_path = out / f"burel_{args.dataset}.csv"
    with open(csv_path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    plot(rows, out, args.dataset)
    print(f"wrote {csv_path}")
    return 0


def face(tab: Table, emit: Callable[[dict[str, Any]], None]) -> None:
    """Fig. 4.4: achieved (basic) beta of BUREL vs SABRE-AK and tMondrian (k = 1) at (a) matched t: t = BUREL's
    real closeness at beta; (b) matched closeness: SABRE / tMondrian at t, BUREL at the largest beta (binary
    search) whose real closeness is <= theirs; (c) matched AIL: BUREL at beta sets the level l = its AIL; SABRE
    and tMondrian at the largest t (binary search) whose AIL is still >= l."""
    def sab(t: float) -> Any:
        return sabre(tab, [KAnonymity(1), closeness_model(tab, t)], rng=0)

    def tmo(t: float) -> Any:
        return tmondrian(tab, [KAnonymity(1), closeness_model(tab, t)])

    def bur(b: float) -> Any:
        return burel(tab, likeness_model(beta=b), rng=0)

    def row(fig: str, param: str, value: float, name: str, res: Any, **kw: Any) -> None:
        r = {"experiment": "face", "figure": fig, "param": param, "value": value, "method": name, "n": tab.n_rows,
             "ail": float(res.metrics["ail"]), "n_classes": res.partition.n_classes, **achieved(tab, res), **kw}
        emit(r)

    for b in (1.0, 2.0, 3.0, 4.0, 5.0):  # (a)
        rb = bur(b)
        tb = achieved(tab, rb)["closeness"]
        row("a", "beta", b, "BUREL", rb, t=tb)
        t_use = max(tb, 1e-6)
        row("a", "beta", b, "SABRE", sab(min(t_use, 1.0)), t=t_use)
        row("a", "beta", b, "tMondrian", tmo(min(t_use, 1.0)), t=t_use)
    for t in (0.05, 0.1, 0.2, 0.3):  # (b)
        for name, fn in (("SABRE", sab), ("tMondrian", tmo)):
            r = fn(t)
            target = achieved(tab, r)["closeness"]
            row("b", "t", t, name, r, t=t)
            b = bisect(0.05, 50.0, lambda x: achieved(tab, bur(x))["closeness"] <= target + 1e-12, 8)
            row("b", "t", t, f"BUREL (vs {name})", bur(b), beta_searched=b, target_closeness=target)
    for b in (1.0, 3.0, 5.0):  # (c): the AIL level is BUREL's own at beta
        rb = bur(b)
        level = float(rb.metrics["ail"])
        row("c", "ail_level", round(level, 4), "BUREL", rb, beta=b)
        for name, fn in (("SABRE", sab), ("tMondrian", tmo)):
            # The least private t whose AIL is still >= BUREL's (so BUREL's AIL is no greater than theirs).
            t = bisect(0.002, 1.0, lambda x, fn=fn: fn(x).metrics["ail"] >= level - 1e-12, 9)
            row("c", "ail_level", round(level, 4), name, fn(t), t_searched=t)


def plot(rows: list[dict[str, Any]], out: Path, dataset: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ys = {"beta": ["ail", "seconds", "beta_basic"], "qi": ["ail", "seconds"], "n": ["ail", "seconds"],
          "query": ["query_error"], "range": ["ail"]}
    for exp, metrics in ys.items():
        sel = [r for r in rows if r["experiment"] == exp and isinstance(r.get("value"), (int, float))]
        if not sel:
            continue
        fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 3.3), squeeze=False)
        for ax, m in zip(axes[0], metrics):
            for name in dict.fromkeys(r["method"] for r in sel):
                pts = [(r["value"], r[m]) for r in sel if r["method"] == name and m in r]
                if pts:
                    ax.plot(*zip(*pts), marker="o", label=name)
            if exp == "range":
                for r in rows:
                    if r["experiment"] == "range" and r.get("value") == "enhanced":
                        ax.axhline(r["ail"], ls="--", lw=0.8, color="C0" if r["method"] == "BUREL" else "C1")
            ax.set_xlabel(sel[0]["param"])
            ax.set_ylabel(m)
            if m in ("seconds", "query_error"):
                ax.set_yscale("log")
        axes[0][0].legend(fontsize=7)
        fig.suptitle(f"BUREL experiments: {exp} ({dataset})", fontsize=9)
        fig.tight_layout()
        fig.savefig(out / f"burel_{dataset}_{exp}.png", dpi=80)
        plt.close(fig)
    face_rows = [r for r in rows if r["experiment"] == "face"]
    if face_rows:
        fig, axes = plt.subplots(1, 3, figsize=(12, 3.3))
        for ax, fig_id in zip(axes, "abc"):
            sel = [r for r in face_rows if r["figure"] == fig_id]
            for name in dict.fromkeys(r["method"] for r in sel):
                pts = [(r["value"], max(r["beta_basic"], 1e-3)) for r in sel if r["method"] == name]
                ax.plot(*zip(*pts), marker="o", label=name)
            ax.set_yscale("log")
            ax.set_xlabel(sel[0]["param"] if sel else "")
            ax.set_ylabel("achieved beta (basic)")
            ax.set_title(f"Fig. 4.4({fig_id})", fontsize=9)
            ax.legend(fontsize=6)
        fig.tight_layout()
        fig.savefig(out / f"burel_{dataset}_face.png", dpi=80)
        plt.close(fig)


if __name__ == "__main__":
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    raise SystemExit(main())
