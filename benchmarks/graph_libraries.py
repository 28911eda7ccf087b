"""Time networkx, igraph, rustworkx and networkit on the Wiki-Vote-shaped graph (docs/graph.md, "Libraries").

Usage: ``PYTHONPATH=src python benchmarks/graph_libraries.py [--repeat 3]``. Prints one CSV row per
(library, measure, graph): best wall time of ``--repeat`` runs. networkx's exact betweenness is extrapolated
from 200 sampled sources (x n/200), since the full run takes minutes.
"""

# ruff: noqa: B023  (each lambda runs inside its own loop iteration)
from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from anoncore.graph.datasets import wiki_vote_like


def _best(fn: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    el = wiki_vote_like(weighted=True)
    n = el.n_nodes
    edges = list(zip(el.src.tolist(), el.dst.tolist()))
    w = el.weight.tolist()  # type: ignore[union-attr]
    rows: list[tuple[str, str, str, float]] = []

    import networkx as nx

    g = el.to_networkx()
    for wt in (None, "weight"):
        kind = "weighted" if wt else "unweighted"
        t = _best(lambda: nx.betweenness_centrality(g, k=200, weight=wt, seed=1), 1) * n / 200
        rows.append(("networkx", "betweenness (extrapolated)", kind, t))
        rows.append(("networkx", "pagerank", kind, _best(lambda: nx.pagerank(g, weight=wt), args.repeat)))
    rows.append(("networkx", "harmonic", "unweighted", _best(lambda: nx.harmonic_centrality(g), 1)))

    import igraph as ig

    h = ig.Graph(n=n, edges=edges, directed=True)
    h.es["weight"] = w
    for wt in (None, "weight"):
        kind = "weighted" if wt else "unweighted"
        rows.append(("igraph", "betweenness", kind, _best(lambda: h.betweenness(weights=wt), args.repeat)))
        rows.append(("igraph", "harmonic", kind,
                     _best(lambda: h.harmonic_centrality(mode="out", weights=wt), args.repeat)))
        rows.append(("igraph", "pagerank", kind, _best(lambda: h.pagerank(weights=wt), args.repeat)))

    import rustworkx as rx

    r = rx.PyDiGraph()
    r.add_nodes_from(range(n))
    r.add_edges_from([(a, b, x) for (a, b), x in zip(edges, w)])
    rows.append(("rustworkx", "betweenness", "unweighted",
                 _best(lambda: rx.digraph_betweenness_centrality(r, normalized=True, parallel_threshold=50),
                       args.repeat)))
    rows.append(("rustworkx", "closeness", "unweighted",
                 _best(lambda: rx.closeness_centrality(r, wf_improved=True), args.repeat)))
    rows.append(("rustworkx", "pagerank", "weighted", _best(lambda: rx.pagerank(r, weight_fn=float), args.repeat)))

    import networkit as nk

    nk.setNumberOfThreads(args.threads)
    k = nk.Graph(n, weighted=True, directed=True)
    for (a, b), x in zip(edges, w):
        k.addEdge(a, b, x)
    ku = nk.graphtools.toUnweighted(k)
    for gg, kind in ((ku, "unweighted"), (k, "weighted")):
        rows.append(("networkit", "betweenness", kind,
                     _best(lambda: nk.centrality.Betweenness(gg, normalized=True).run(), args.repeat)))
        rows.append(("networkit", "harmonic", kind,
                     _best(lambda: nk.centrality.HarmonicCloseness(gg, normalized=True).run(), args.repeat)))
        rows.append(("networkit", "pagerank", kind, _best(lambda: nk.centrality.PageRank(gg).run(), args.repeat)))

    from anoncore.graph import betweenness_centrality, closeness_centrality, rank_prestige

    for gg, kind in ((el.unweighted(), "unweighted"), (el, "weighted")):
        for nt in (1, args.threads):
            rows.append((f"anoncore ({nt} thread{'s' if nt > 1 else ''})", "betweenness", kind,
                         _best(lambda: betweenness_centrality(gg, n_threads=nt), args.repeat)))
        rows.append(("anoncore (1 thread)", "harmonic", kind,
                     _best(lambda: closeness_centrality(gg, n_threads=1), args.repeat)))
        rows.append(("anoncore", "pagerank", kind, _best(lambda: rank_prestige(gg, tol=1e-10), args.repeat)))

    print("library,measure,graph,seconds")
    for lib, meas, kind, t in rows:
        print(f"{lib},{meas},{kind},{t:.3f}")


if __name__ == "__main__":
    main()
