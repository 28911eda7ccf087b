"""The experiment grid of thesis Tables 6.2-6.4 (spec social-network.md §6.3, §12 item 23) on the
Wiki-Vote-shaped graph: Iloss for every measure x network type (6.2), for betweenness (6.3) and for the
combined measure over a grid of *a* (6.4), each with both level maps; plus the distributions and convergence
figures (6.7, 6.8, 6.10, 6.12).

Usage::

    PYTHONPATH=src python benchmarks/graph_experiments.py [--out bench_out/graph] [--snap wiki-Vote.txt]

Writes ``graph_grid.csv`` and ``graph_iloss.png``, ``graph_distributions.png``, ``graph_entropy.png`` into
the (git-ignored) output folder. With ``--snap`` the real SNAP file replaces the synthetic graph (the
synthetic taxonomy, labels and weights are kept). The thesis's numbers are not available, so there is
nothing to match: the tables are the shape of the thesis's, filled by anoncore.
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path
from typing import Any

import numpy as np

from anoncore.graph import (
    EdgeList,
    compute_measure,
    load_snap_edges,
    prominence_anonymize,
    random_labels,
    synthetic_weights,
    wiki_vote_like,
    wiki_vote_taxonomy,
)
from anoncore.graph.measures import minmax

TABLE_62 = ("degree", "closeness", "eigenvector", "degree_prestige", "proximity_prestige", "rank_prestige")
LEVEL_MAPS = ("linear", "quantile")


def network_types(base: EdgeList) -> dict[str, EdgeList]:
    """The four network types of the grid from one weighted directed graph (undirected: weights of u->v and
    v->u add)."""
    return {
        "unweighted undirected": base.unweighted().as_undirected(),
        "unweighted directed": base.unweighted(),
        "weighted undirected": base.as_undirected(),
        "weighted directed": base,
    }


def run_grid(
    n_nodes: int = 7115,
    n_edges: int = 103_689,
    *,
    a_values: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0),
    betweenness_samples: int | None = None,
    rng: int = 0,
    base: EdgeList | None = None,
    extras: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Run the grid; one row per (table, network, measure, a, level map). ``extras`` (if given) receives the
    raw scores and rank traces for the figures."""
    if base is None:
        base = wiki_vote_like(n_nodes, n_edges, weighted=True, rng=rng)
    tax = wiki_vote_taxonomy()
    labels = random_labels(base.n_nodes, tax, rng=rng + 1)
    rows: list[dict[str, Any]] = []
    for net, el in network_types(base).items():
        scores: dict[str, np.ndarray] = {}
        secs: dict[str, float] = {}
        for m in (*TABLE_62, "betweenness"):
            t = time.perf_counter()
            s, trace = compute_measure(el, m, betweenness_samples=betweenness_samples, rng=rng)
            secs[m] = time.perf_counter() - t
            scores[m] = s
            if extras is not None and trace is not None:
                extras.setdefault("trace", {})[net] = trace
        if extras is not None:
            extras.setdefault("scores", {})[net] = scores
        jobs: list[tuple[str, str, float | None, np.ndarray, float]] = []
        jobs += [("6.2", m, None, scores[m], secs[m]) for m in TABLE_62]
        jobs.append(("6.2", "combined", 0.5, 0.5 * minmax(scores["degree"]) + 0.5 * minmax(scores["betweenness"]),
                     secs["degree"] + secs["betweenness"]))
        jobs.append(("6.3", "betweenness", None, scores["betweenness"], secs["betweenness"]))
        for a in a_values:
            comb = a * minmax(scores["degree"]) + (1 - a) * minmax(scores["betweenness"])
            jobs.append(("6.4", "combined", a, comb, secs["degree"] + secs["betweenness"]))
        for table, m, a, s, sec in jobs:
            for lm in LEVEL_MAPS:
                t = time.perf_counter()
                r = prominence_anonymize(el, labels, tax, s, level_map=lm)
                rows.append({
                    "table": table, "network": net, "measure": m, "a": a, "level_map": lm,
                    "iloss": r.iloss, "mean_level": float(r.levels.mean()),
                    "generalized": int((r.levels > 0).sum()), "super_nodes": r.masked.n_nodes,
                    "n_nodes": el.n_nodes, "n_edges": el.n_edges,
                    "measure_s": sec, "anonymize_s": time.perf_counter() - t,
                })
    return rows


def write_outputs(rows: list[dict[str, Any]], out: Path, *, plots: bool = True,
                  extras: dict[str, Any] | None = None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "graph_grid.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    if plots:
        _plots(rows, out, extras or {})


def _plots(rows: list[dict[str, Any]], out: Path, extras: dict[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    nets = list(dict.fromkeys(r["network"] for r in rows))
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.5))
    t62 = [r for r in rows if r["table"] in ("6.2", "6.3") and r["level_map"] == "linear"]
    ms = list(dict.fromkeys(r["measure"] for r in t62))
    width = 0.8 / len(nets)
    for j, net in enumerate(nets):
        vals = [next(r["iloss"] for r in t62 if r["network"] == net and r["measure"] == m) for m in ms]
        axes[0].bar(np.arange(len(ms)) + j * width, vals, width, label=net)
    axes[0].set_xticks(np.arange(len(ms)) + 0.4 - width / 2, ms, rotation=30, ha="right")
    axes[0].set_ylabel("Iloss")
    axes[0].set_title("Tables 6.2 / 6.3: Iloss by measure (linear level map)")
    axes[0].legend(fontsize=8)
    for net in nets:
        for lm, style in (("linear", "-o"), ("quantile", "--s")):
            pts = sorted((r["a"], r["iloss"]) for r in rows
                         if r["table"] == "6.4" and r["network"] == net and r["level_map"] == lm)
            axes[1].plot(*zip(*pts), style, label=f"{net} ({lm})")
    axes[1].set_xlabel("a (weight of degree in the combined measure)")
    axes[1].set_ylabel("Iloss")
    axes[1].set_title("Table 6.4: Iloss for various a")
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "graph_iloss.png", dpi=120)
    plt.close(fig)
    scores = extras.get("scores", {})
    if scores:
        net = "weighted directed"
        s = scores[net]
        fig, axes = plt.subplots(1, 3, figsize=(14, 4))
        axes[0].hist(s["betweenness"], bins=80, log=True)
        axes[0].set_title("Fig 6.7: betweenness distribution")
        axes[1].hist(0.5 * minmax(s["degree"]) + 0.5 * minmax(s["betweenness"]), bins=80, log=True)
        axes[1].set_title("Fig 6.8: combined centrality (a = 0.5)")
        for name in ("unweighted directed", "weighted directed"):
            r = np.sort(scores[name]["rank_prestige"])[::-1]
            axes[2].loglog(np.arange(1, r.size + 1), r, label=name)
        axes[2].set_title("Figs 6.10 / 6.13: node rank (power law)")
        axes[2].set_xlabel("rank order")
        axes[2].legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / "graph_distributions.png", dpi=120)
        plt.close(fig)
    traces = extras.get("trace", {})
    if traces:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4))
        for name, tr in traces.items():
            axes[0].plot(np.arange(1, tr.n_iter + 1), tr.entropy, label=name)
            axes[1].semilogy(np.arange(1, tr.n_iter + 1), tr.l1, label=name)
        axes[0].set_title("Fig 6.12: rank-vector entropy per iteration")
        axes[1].set_title("Fig 6.9: L1 change of the rank per iteration")
        for ax in axes:
            ax.set_xlabel("iteration")
            ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / "graph_entropy.png", dpi=120)
        plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="bench_out/graph")
    ap.add_argument("--snap", help="a SNAP edge list to use instead of the synthetic graph")
    ap.add_argument("--samples", type=int, default=None, help="sampled betweenness sources (default: exact)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    base = None
    if args.snap:
        el = load_snap_edges(args.snap)
        w = synthetic_weights(el.src, el.dst, el.n_nodes, rng=args.seed)
        base = EdgeList(el.n_nodes, el.src, el.dst, w, True, el.node_ids)
    extras: dict[str, Any] = {}
    t = time.perf_counter()
    rows = run_grid(betweenness_samples=args.samples, rng=args.seed, base=base, extras=extras)
    total = time.perf_counter() - t
    write_outputs(rows, Path(args.out), extras=extras)
    print(f"{len(rows)} rows in {total:.1f} s -> {args.out}/graph_grid.csv")
    print(f"{'table':5} {'network':22} {'measure':19} {'a':>5} {'linear':>8} {'quantile':>8} {'measure_s':>9}")
    for r in rows:
        if r["level_map"] != "linear":
            continue
        q = next(x for x in rows if x["level_map"] == "quantile" and all(
            x[k] == r[k] for k in ("table", "network", "measure", "a")))
        a = "" if r["a"] is None else f"{r['a']:.2f}"
        print(f"{r['table']:5} {r['network']:22} {r['measure']:19} {a:>5} {r['iloss']:8.4f} {q['iloss']:8.4f} "
              f"{r['measure_s']:9.2f}")


if __name__ == "__main__":
    main()
