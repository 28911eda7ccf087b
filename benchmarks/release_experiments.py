"""Reproduce the UCI Adult experiments of Wang & Fung, "Anonymizing Sequential Releases" (spec B.4).

Writes CSV and PNG files shaped like Figures 1-8 into ``bench_out/release/`` (ignored by git):

* fig1_setA_distortion, fig2_setA_error: (X,Y)-anonymity on Set A, Top3..Top6, k in {40..200};
* fig3_setB_distortion, fig4_setB_error: the same on Set B, Top1/3/5/7;
* fig5_scalability_anonymity: Set A enlarged to 200K..1M records per table, Top6, Y = K1, k = 40;
* fig6_setA_linkability, fig7_setB_linkability: (X,Y)-linkability, Top1..Top4 Y, k in {10%..90%};
* fig8_scalability_linkability: Top1, k = 90%, Set A enlarged (Y values inherited).

Usage: ``PYTHONPATH=src python benchmarks/release_experiments.py [--quick] [--no-scale] [--out DIR] [--plot-only]``.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd

from anoncore.exceptions import InfeasibleError
from anoncore.release import (
    XYAnonymity,
    XYLinkability,
    classification_error,
    kanonymize_t1,
    remove_attributes,
    tds4sa,
)
from anoncore.release._problem import resolve
from anoncore.release.adult import (
    CATEGORICAL,
    CONTINUOUS,
    JOIN,
    SET_A_TOP,
    SET_B_TOP,
    T2_ATTRS,
    adult_taxonomies,
    enlarge,
    load_adult_release,
)
from anoncore.release.audit import join_statistics

KS = (40, 80, 120, 160, 200)
LINK_KS = (0.1, 0.3, 0.5, 0.7, 0.9)
CLASS = "income"


def anonymity_x(top: tuple[str, ...]) -> list[str]:
    """TopN: the N top T1 attributes, every join attribute (both copies) and every T2 attribute."""
    return list(dict.fromkeys([f"T1.{a}" for a in top] + [f"T1.{a}" for a in JOIN] + [f"T2.{a}" for a in T2_ATTRS]))


def linkability_setup(t1: pd.DataFrame, n_y: int) -> tuple[list[str], list[str], dict[str, list[str]]]:
    """Y = the top n_y categorical T1 attributes, sensitive values = the floor(n/2) least frequent values of
    each (ties by value); X = all other attributes of T1 and T2 except Class, T2.Ra, T2.Nc and T2.A for
    A in Y (spec B.6 items 6, 7)."""
    ys = list(SET_A_TOP[:n_y])
    values = {}
    for a in ys:
        vc = t1[a].value_counts()
        order = sorted(vc.index, key=lambda v: (vc[v], str(v)))
        values[a] = order[: len(order) // 2]
    x = [f"T1.{a}" for a in t1.columns if a not in ys and a not in (CLASS, "split")]
    x += [f"T2.{a}" for a in T2_ATTRS if a not in ("race", "native-country") and a not in ys]
    return x, [f"T1.{a}" for a in ys], values


def k1_violation_fraction(res, t2: pd.DataFrame, x: list[str], k: int, tax: dict) -> float:
    """XYE(row)'s output judged against Y = K1: the fraction of X values with >= k distinct {K1, K2} but < k
    distinct K1 (the paper reports 5.5% for Top6, k = 200)."""
    pub = res.published.drop(columns=[CLASS, "split"], errors="ignore")
    spec = resolve(pub, t2, XYAnonymity(x, ["K1"], k), tax, None, [], None, None, "experiments", published=True)
    st = join_statistics(spec)
    return float((st["aY"] < k).mean())


def run_anonymity(df: pd.DataFrame, tax: dict, set_name: str, ks: tuple[int, ...], rows: list[dict]) -> None:
    cont = list(CONTINUOUS) if set_name == "B" else []
    t1 = df[cont + list(CATEGORICAL) + [CLASS]]
    t2 = df[list(T2_ATTRS)]
    train = (df["split"] == "train").to_numpy()
    tops = (3, 4, 5, 6) if set_name == "A" else (1, 3, 5, 7)
    ranking = SET_A_TOP if set_name == "A" else SET_B_TOP
    base = {"set": set_name, "model": "anonymity"}
    rows.append(dict(base, method="BLE", error=classification_error(t1, CLASS, train)))
    rows.append(dict(base, method="RJE", error=classification_error(remove_attributes(t1, JOIN), CLASS, train)))
    for k in ks:
        t0 = time.perf_counter()
        kae = kanonymize_t1(t1, cont + list(CATEGORICAL), k, taxonomies=tax, class_column=CLASS, continuous=cont)
        rows.append(dict(base, method="KAE", k=k, error=classification_error(kae.published, CLASS, train),
                         distortion=kae.metrics["distortion"], distortion_cat=kae.metrics["distortion_categorical"],
                         distortion_cont=kae.metrics["distortion_continuous"], seconds=time.perf_counter() - t0))
    for n in tops:
        x = anonymity_x(ranking[:n])
        for k in ks:
            for method, y in (("XYE", ["K1"]), ("XYE(row)", ["K1", "K2"])):
                t0 = time.perf_counter()
                res = tds4sa(t1, t2, XYAnonymity(x, y, k), taxonomies=tax, class_column=CLASS, continuous=cont)
                sec = time.perf_counter() - t0
                join_any = float(np.mean([(res.published[a] == "ANY").mean() for a in JOIN]))
                row = dict(base, method=method, top=n, k=k, error=classification_error(res.published, CLASS, train),
                           distortion=res.metrics["distortion"], distortion_cat=res.metrics["distortion_categorical"],
                           distortion_cont=res.metrics["distortion_continuous"], achieved=res.achieved["A_Y"],
                           join_attrs_at_any=join_any, specializations=len(res.trace), seconds=sec,
                           preprocess_s=res.stats["time_preprocess"] + res.stats["time_encode"],
                           generalize_s=res.stats["time_generalize"])
                if method == "XYE(row)":
                    row["k1_violation_fraction"] = k1_violation_fraction(res, t2, x, k, tax)
                rows.append(row)
                print(f"  set {set_name} top{n} k={k} {method}: error {row['error']:.4f} distortion "
                      f"{row['distortion']:.3f} ({sec:.2f} s)", flush=True)


def run_linkability(df: pd.DataFrame, tax: dict, set_name: str, ks: tuple[float, ...], rows: list[dict]) -> None:
    cont = list(CONTINUOUS) if set_name == "B" else []
    t1 = df[cont + list(CATEGORICAL) + [CLASS]]
    t2 = df[list(T2_ATTRS)]
    train = (df["split"] == "train").to_numpy()
    base = {"set": set_name, "model": "linkability"}
    rows.append(dict(base, method="BLE", error=classification_error(t1, CLASS, train)))
    rows.append(dict(base, method="RJE", error=classification_error(remove_attributes(t1, JOIN), CLASS, train)))
    for n_y in (1, 2, 3, 4):
        x, y, values = linkability_setup(t1, n_y)
        rows.append(dict(base, method="RSE", top=n_y,
                         error=classification_error(remove_attributes(t1, [a[3:] for a in y]), CLASS, train)))
        for k in ks:
            t0 = time.perf_counter()
            try:
                res = tds4sa(t1, t2, XYLinkability(x, y, k, values=values), taxonomies=tax, class_column=CLASS,
                             continuous=cont)
            except InfeasibleError:
                rows.append(dict(base, method="XYE", top=n_y, k=k, infeasible=True))
                print(f"  set {set_name} Y=top{n_y} k={k}: infeasible (Corollary 4.2)", flush=True)
                continue
            sec = time.perf_counter() - t0
            rows.append(dict(base, method="XYE", top=n_y, k=k, error=classification_error(res.published, CLASS, train),
                             achieved=res.achieved["L_Y"], specializations=len(res.trace), seconds=sec,
                             preprocess_s=res.stats["time_preprocess"] + res.stats["time_encode"],
                             generalize_s=res.stats["time_generalize"], infeasible=False))
            print(f"  set {set_name} Y=top{n_y} k={k}: error {rows[-1]['error']:.4f} ({sec:.2f} s)", flush=True)


def run_scalability(df: pd.DataFrame, tax: dict, sizes: list[int], out: Path, rows: list[dict]) -> None:
    alpha = math.ceil(max(sizes) / len(df))
    for model in ("anonymity", "linkability"):
        # linkability: Y values inherited (Figure 8), so marital-status is not varied
        attrs = tuple(a for a in CATEGORICAL + ("native-country", "race") if model == "anonymity" or a != "marital-status")
        big = enlarge(df, alpha, q=1, rng=0, attrs=attrs)
        for n in sizes:
            part = big.iloc[:n]
            t0 = time.perf_counter()
            t1p, t2p = out / f"scale_t1_{n}.parquet", out / f"scale_t2_{n}.parquet"
            part[list(CATEGORICAL) + [CLASS]].to_parquet(t1p)
            part[list(T2_ATTRS)].to_parquet(t2p)
            t1, t2 = pd.read_parquet(t1p), pd.read_parquet(t2p)
            io = time.perf_counter() - t0
            if model == "anonymity":
                req = XYAnonymity(anonymity_x(SET_A_TOP), ["K1"], 40)
            else:
                x, y, values = linkability_setup(t1, 1)
                req = XYLinkability(x, y, 0.9, values=values)
            t0 = time.perf_counter()
            res = tds4sa(t1, t2, req, taxonomies=tax, class_column=CLASS)
            total = time.perf_counter() - t0
            t0 = time.perf_counter()
            res.published.to_parquet(out / f"scale_out_{n}.parquet")
            io += time.perf_counter() - t0
            for p in (t1p, t2p, out / f"scale_out_{n}.parquet"):
                p.unlink()
            st = res.stats
            rows.append({"model": model, "records": n, "reading_writing_s": io,
                             "preprocessing_s": st["time_encode"] + st["time_preprocess"],
                             "generalization_s": st["time_generalize"], "audit_s": st["time_audit"], "tds4sa_s": total,
                             "total_s": total + io, "refine_accesses_per_record": st["refine_accesses_per_record"],
                             "specializations": len(res.trace)})
            print(f"  scale {model} n={n}: tds4sa {total:.2f} s (generalization {st['time_generalize']:.2f} s), "
                  f"io {io:.2f} s", flush=True)


def plot(out: Path, anon: pd.DataFrame, link: pd.DataFrame, scale: pd.DataFrame | None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def bars(ax, table: pd.DataFrame, title: str, ylabel: str, ylim: tuple[float, float] | None = None) -> None:
        table = table.set_axis([f"Top{int(i)}" for i in table.index])
        table.plot.bar(ax=ax, rot=0)
        ax.set_title(title)
        ax.set_ylabel(ylabel)
        if ylim is not None:  # the paper's axis range, so the bars compare with its figure
            ax.set_ylim(min(ylim[0], float(table.min().min()) - 0.5), max(ylim[1], float(table.max().max()) + 0.5))
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))

    for s, fig_d, fig_e in (("A", 1, 2), ("B", 3, 4)):
        a = anon[anon["set"] == s]
        xy = a[a["method"] == "XYE"].groupby("top")
        kad = a[a["method"] == "KAE"]
        cols = {"XYD": xy["distortion"].mean(), "KAD": pd.Series(kad["distortion"].mean(), index=xy.size().index)}
        if s == "B":
            cols = {"XYD categorical": xy["distortion_cat"].mean(), "XYD continuous": xy["distortion_cont"].mean(),
                    "KAD categorical": pd.Series(kad["distortion_cat"].mean(), index=xy.size().index),
                    "KAD continuous": pd.Series(kad["distortion_cont"].mean(), index=xy.size().index)}
        d = pd.DataFrame(cols)
        d.to_csv(out / f"fig{fig_d}_set{s}_distortion.csv")
        fig, ax = plt.subplots(figsize=(6, 4))
        bars(ax, d, f"Figure {fig_d}: distortion, Set {s} (avg over k)", "distortion per record",
             (0, 10) if s == "A" else (0, 14))
        fig.savefig(out / f"fig{fig_d}_set{s}_distortion.png", dpi=120, bbox_inches="tight")
        plt.close(fig)
        e = pd.DataFrame({"XYE": xy["error"].mean(),
                          "XYE(row)": a[a["method"] == "XYE(row)"].groupby("top")["error"].mean()})
        for m in ("BLE", "RJE", "KAE"):
            e[m] = a[a["method"] == m]["error"].mean()
        (e * 100).to_csv(out / f"fig{fig_e}_set{s}_error.csv")
        fig, ax = plt.subplots(figsize=(6, 4))
        bars(ax, e * 100, f"Figure {fig_e}: classification error, Set {s} (avg over k)", "error (%)",
             (13, 23) if s == "A" else (13, 19))
        fig.savefig(out / f"fig{fig_e}_set{s}_error.png", dpi=120, bbox_inches="tight")
        plt.close(fig)
    for s, fig_n in (("A", 6), ("B", 7)):
        lk = link[link["set"] == s]
        ok = lk[(lk["method"] == "XYE") & (lk["infeasible"] == False)]
        e = pd.DataFrame({"XYE": ok.groupby("top")["error"].mean(),
                          "RSE": lk[lk["method"] == "RSE"].groupby("top")["error"].mean()})
        for m in ("BLE", "RJE"):
            e[m] = lk[lk["method"] == m]["error"].mean()
        e = e * 100
        e["infeasible_k"] = lk[lk["method"] == "XYE"].groupby("top")["infeasible"].sum()
        e.to_csv(out / f"fig{fig_n}_set{s}_linkability.csv")
        fig, ax = plt.subplots(figsize=(6, 4))
        bars(ax, e.drop(columns="infeasible_k"), f"Figure {fig_n}: linkability, Set {s} (avg over feasible k)",
             "error (%)", (12, 26) if s == "A" else (12, 18))
        fig.savefig(out / f"fig{fig_n}_set{s}_linkability.png", dpi=120, bbox_inches="tight")
        plt.close(fig)
    if scale is not None:
        for model, fig_n in (("anonymity", 5), ("linkability", 8)):
            sc = scale[scale["model"] == model].set_index("records")
            sc.to_csv(out / f"fig{fig_n}_scalability_{model}.csv")
            fig, ax = plt.subplots(figsize=(6, 4))
            for c in ("reading_writing_s", "preprocessing_s", "generalization_s", "total_s"):
                ax.plot(sc.index, sc[c], marker="o", label=c.replace("_s", ""))
            ax.set_xlabel("records per table")
            ax.set_ylabel("seconds")
            ax.set_title(f"Figure {fig_n}: scalability, {model}")
            ax.legend()
            fig.savefig(out / f"fig{fig_n}_scalability_{model}.png", dpi=120, bbox_inches="tight")
            plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="bench_out/release")
    ap.add_argument("--quick", action="store_true", help="k in {40, 200} and {0.1, 0.9} only")
    ap.add_argument("--no-scale", action="store_true")
    ap.add_argument("--sizes", default="200000,400000,600000,800000,1000000")
    ap.add_argument("--plot-only", action="store_true", help="redraw the figures from the CSVs of a previous run")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.plot_only:
        scale_csv = out / "scalability_runs.csv"
        plot(out, pd.read_csv(out / "anonymity_runs.csv"), pd.read_csv(out / "linkability_runs.csv"),
             pd.read_csv(scale_csv) if scale_csv.exists() else None)
        print(f"wrote {out}")
        return
    df = load_adult_release()
    tax = adult_taxonomies()
    ks = (40, 200) if args.quick else KS
    lks = (0.1, 0.9) if args.quick else LINK_KS
    anon_rows: list[dict] = []
    link_rows: list[dict] = []
    scale_rows: list[dict] = []
    for s in ("A", "B"):
        print(f"(X,Y)-anonymity, Set {s}", flush=True)
        run_anonymity(df, tax, s, ks, anon_rows)
        print(f"(X,Y)-linkability, Set {s}", flush=True)
        run_linkability(df, tax, s, lks, link_rows)
    anon, link = pd.DataFrame(anon_rows), pd.DataFrame(link_rows)
    anon.to_csv(out / "anonymity_runs.csv", index=False)
    link.to_csv(out / "linkability_runs.csv", index=False)
    scale = None
    if not args.no_scale:
        print("scalability", flush=True)
        run_scalability(df, tax, [int(v) for v in args.sizes.split(",")], out, scale_rows)
        scale = pd.DataFrame(scale_rows)
        scale.to_csv(out / "scalability_runs.csv", index=False)
    plot(out, anon, link, scale)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
