"""Centrality and prestige measures of spec social-network.md §6.2 on directed or undirected, weighted or
unweighted graphs.

Every function takes a graph in any form accepted by :func:`anoncore.graph.prominence_anonymize` (networkx
graph, :class:`~anoncore.graph.EdgeList`, edge array or ``(src, dst[, weight])``) and returns one float64
value per node, in node order (``list(G.nodes)`` for networkx graphs, ``0 .. n-1`` otherwise).

Each measure equals networkx's to 1e-9 (the test suite's oracle): the conventions below are networkx's where
networkx has the measure. Path-based measures read an edge of weight ``w`` as a path of length ``1 / w``
(``distance='inverse'``, the default: strong ties are short; Opsahl et al. 2010) or ``w``
(``distance='weight'``); unweighted graphs use unit lengths.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from anoncore._validation import check_float, check_int, check_n_threads, check_option
from anoncore.graph._input import GraphData, as_graph

__all__ = [
    "MEASURES",
    "RankPrestige",
    "betweenness_centrality",
    "closeness_centrality",
    "combined_centrality",
    "compute_measure",
    "degree_centrality",
    "degree_prestige",
    "eigenvector_centrality",
    "minmax",
    "proximity_prestige",
    "rank_prestige",
]

MEASURES = ("degree", "closeness", "betweenness", "eigenvector", "degree_prestige", "proximity_prestige",
            "rank_prestige", "combined")

Array = NDArray[np.float64]


def _graph(graph: Any, caller: str, kw: dict[str, Any]) -> GraphData:
    return as_graph(graph, caller, directed=kw.get("directed"), n_nodes=kw.get("n_nodes"),
                    weight=kw.get("weight", "weight"))


def _scale(n: int) -> float:
    return 1.0 / (n - 1) if n > 1 else 1.0


def degree_centrality(graph: Any, **graph_kw: Any) -> Array:
    """Degree centrality ``C_D(v) = deg(v) / (n - 1)``: out-degree on directed graphs, strength (sum of edge
    weights) on weighted ones (spec §6.2). ``graph_kw``: ``directed``, ``n_nodes`` (edge arrays), ``weight``
    (attribute name for networkx graphs)."""
    g = _graph(graph, "degree_centrality", graph_kw)
    s, _, w = g.arcs()
    return np.asarray(np.bincount(s, weights=w, minlength=g.n) * _scale(g.n), dtype=np.float64)


def degree_prestige(graph: Any, **graph_kw: Any) -> Array:
    """Degree prestige ``P_D(i) = in-degree(i) / (n - 1)`` (in-strength when weighted; degree when undirected)."""
    g = _graph(graph, "degree_prestige", graph_kw)
    _, d, w = g.arcs()
    return np.asarray(np.bincount(d, weights=w, minlength=g.n) * _scale(g.n), dtype=np.float64)


def _sweep(g: GraphData, sources: NDArray[np.int64], *, reverse: bool, betweenness: bool, distances: bool,
           distance: str, n_threads: int) -> tuple[Array, NDArray[np.int64], Array, Array]:
    from anoncore import _core

    off, tg, w = g.csr(reverse)
    lengths = np.empty(0, dtype=np.float64)
    if g.weighted:
        lengths = np.ascontiguousarray(1.0 / w if distance == "inverse" else w)
    bc, reach, ds, hs = _core.graph.path_sweep(off, tg, lengths, np.ascontiguousarray(sources, dtype=np.int64),
                                               betweenness, distances, n_threads)
    return bc, reach, ds, hs


def _wf(n: int, reach: NDArray[np.int64], dsum: Array) -> Array:
    """Wasserman-Faust closeness on the reachable set: (r / (n-1)) * (r / sum d); 0 where nothing is reached."""
    r = reach.astype(np.float64)
    out = np.zeros(n, dtype=np.float64)
    ok = dsum > 0
    out[ok] = (r[ok] / (n - 1)) * (r[ok] / dsum[ok]) if n > 1 else 0.0
    return out


def closeness_centrality(graph: Any, *, variant: str = "harmonic", distance: str = "inverse",
                         n_threads: int | None = None, **graph_kw: Any) -> Array:
    """Closeness centrality from the distances ``d(v, u)`` *out of* each node.

    ``variant='harmonic'`` (default; well defined on disconnected graphs, spec §6.2 [OPEN] resolved this way):
    ``sum_{u != v} 1 / d(v, u) / (n - 1)``. ``variant='reachable'``: Wasserman and Faust's closeness on the
    reachable set ``R_v``, ``(|R_v| / (n-1)) * (|R_v| / sum_{u in R_v} d(v, u))``, which is
    ``(n - 1) / sum_u d(v, u)`` on a strongly connected graph. One BFS / Dijkstra per node, O(n m).
    """
    caller = "closeness_centrality"
    check_option(variant, "variant", caller, ("harmonic", "reachable"))
    check_option(distance, "distance", caller, ("inverse", "weight"))
    nt = check_n_threads(n_threads, caller)
    g = _graph(graph, caller, graph_kw)
    _, reach, ds, hs = _sweep(g, np.arange(g.n), reverse=False, betweenness=False, distances=True,
                              distance=distance, n_threads=nt)
    if variant == "harmonic":
        return hs * _scale(g.n)
    return _wf(g.n, reach, ds)


def proximity_prestige(graph: Any, *, distance: str = "inverse", n_threads: int | None = None,
                       **graph_kw: Any) -> Array:
    """Proximity prestige ``P_P(i) = (|I_i| / (n-1)) / (sum_{j in I_i} d(j, i) / |I_i|)``, ``I_i`` the nodes that
    reach ``i`` (Wasserman and Faust; networkx's ``closeness_centrality`` on a directed graph)."""
    caller = "proximity_prestige"
    check_option(distance, "distance", caller, ("inverse", "weight"))
    nt = check_n_threads(n_threads, caller)
    g = _graph(graph, caller, graph_kw)
    _, reach, ds, _ = _sweep(g, np.arange(g.n), reverse=True, betweenness=False, distances=True,
                             distance=distance, n_threads=nt)
    return _wf(g.n, reach, ds)


def betweenness_centrality(graph: Any, *, samples: int | None = None, rng: int | np.random.Generator | None = None,
                           distance: str = "inverse", normalized: bool = True, n_threads: int | None = None,
                           **graph_kw: Any) -> Array:
    """Betweenness ``C_B(v) = sum_{s != v != t} sigma_st(v) / sigma_st`` by Brandes' algorithm (Dijkstra when
    weighted), normalized as networkx: ``/ ((n-1)(n-2))`` on directed graphs, and the same after halving the
    double-counted pairs on undirected ones.

    ``samples=k`` estimates it from ``k`` source nodes drawn without replacement by the seeded ``rng``
    (Brandes and Pich 2007), scaled by ``n / k``; ``samples=None`` is exact. O(k m) (times log n weighted),
    multi-threaded over sources, bit-identical for any ``n_threads``.
    """
    caller = "betweenness_centrality"
    check_option(distance, "distance", caller, ("inverse", "weight"))
    nt = check_n_threads(n_threads, caller)
    g = _graph(graph, caller, graph_kw)
    sources = betweenness_sources(g.n, samples, rng, caller)
    bc, _, _, _ = _sweep(g, sources, reverse=False, betweenness=True, distances=False, distance=distance,
                         n_threads=nt)
    bc = bc * (g.n / sources.size)
    if not g.directed:
        bc = bc / 2.0
    if normalized:
        bc = bc * (1.0 / ((g.n - 1) * (g.n - 2)) if g.n > 2 else 0.0)
        if not g.directed:
            bc = bc * 2.0
    return bc


def betweenness_sources(n: int, samples: int | None, rng: Any, caller: str) -> NDArray[np.int64]:
    """All nodes, or ``samples`` distinct nodes drawn by ``np.random.default_rng(rng)``, in increasing order."""
    if samples is None:
        return np.arange(n, dtype=np.int64)
    k = check_int(samples, "betweenness_samples", caller, 1, n)
    return np.sort(np.random.default_rng(rng).choice(n, size=k, replace=False)).astype(np.int64)


def eigenvector_centrality(graph: Any, *, tol: float = 1e-12, max_iter: int = 10_000, **graph_kw: Any) -> Array:
    """Eigenvector centrality ``x = lambda^-1 A^T x`` (a node is central when central nodes point to it), by
    networkx's power iteration on ``I + A^T`` (weighted adjacency), unit Euclidean norm. Stops when the L1
    change is below ``n * tol``; warns (``RuntimeWarning``) and returns the last iterate after ``max_iter``."""
    caller = "eigenvector_centrality"
    check_float(tol, "tol", caller, 0.0, math.inf, closed="neither")
    check_int(max_iter, "max_iter", caller, 1)
    g = _graph(graph, caller, graph_kw)
    s, d, w = g.arcs()
    x = np.full(g.n, 1.0 / g.n)
    for _ in range(max_iter):
        xlast = x
        x = xlast + np.bincount(d, weights=w * xlast[s], minlength=g.n)
        norm = math.sqrt(float(np.dot(x, x))) or 1.0
        x = x / norm
        if float(np.abs(x - xlast).sum()) < g.n * tol:
            return x
    warnings.warn(f"{caller}: power iteration did not converge in {max_iter} iterations; returning the last "
                  "iterate.", RuntimeWarning, stacklevel=2)
    return x


@dataclass(frozen=True, slots=True)
class RankPrestige:
    """Rank prestige (PageRank) and its convergence trace.

    ``scores`` sums to 1; ``entropy[t]`` is ``-sum_i pi_t(i) log pi_t(i)`` of the iterate after step ``t + 1``
    and ``l1[t]`` the L1 change of that step (spec §6.2, Fig 6.12)."""

    scores: Array = field(repr=False)
    entropy: Array = field(repr=False)
    l1: Array = field(repr=False)
    converged: bool
    n_iter: int


def _entropy(p: Array) -> float:
    q = p[p > 0]
    return float(-(q * np.log(q)).sum())


def rank_prestige(graph: Any, *, damping: float = 0.85, tol: float = 1e-12, max_iter: int = 1000,
                  stop: str = "l1", **graph_kw: Any) -> RankPrestige:
    """Rank prestige ``r_{t+1}(i) = (1 - d)/n + d (sum_{j -> i} w_ji r_t(j) / out_w(j) + D_t / n)``, with
    ``D_t`` the rank on nodes without out-edges, spread evenly (networkx's ``pagerank``). Undirected edges
    count both ways. Starts from ``1/n``; stops when the L1 change (``stop='l1'``) or the change of the
    rank-vector entropy (``stop='entropy'``) is below ``tol``. O(m) per iteration (CSR SpMV)."""
    caller = "rank_prestige"
    d = check_float(damping, "damping", caller, 0.0, 1.0, closed="left")
    check_float(tol, "tol", caller, 0.0, math.inf, closed="neither")
    check_int(max_iter, "max_iter", caller, 1)
    check_option(stop, "stop", caller, ("l1", "entropy"))
    g = _graph(graph, caller, graph_kw)
    s, t, w = g.arcs()
    out_w = np.bincount(s, weights=w, minlength=g.n)
    dangling = out_w == 0
    coef = w / out_w[s]
    x: Array = np.full(g.n, 1.0 / g.n)
    ent, l1s = [], []
    e_prev = _entropy(x)
    converged = False
    for _ in range(max_iter):
        xlast = x
        x = np.asarray(d * np.bincount(t, weights=coef * xlast[s], minlength=g.n), dtype=np.float64)
        x += (d * float(xlast[dangling].sum()) + (1.0 - d)) / g.n
        err = float(np.abs(x - xlast).sum())
        e = _entropy(x)
        ent.append(e)
        l1s.append(err)
        if (err if stop == "l1" else abs(e - e_prev)) < tol:
            converged = True
            break
        e_prev = e
    if not converged:
        warnings.warn(f"{caller}: did not converge in {max_iter} iterations; returning the last iterate.",
                      RuntimeWarning, stacklevel=2)
    return RankPrestige(x, np.asarray(ent), np.asarray(l1s), converged, len(ent))


def minmax(x: Any) -> Array:
    """Min-max normalisation to [0, 1]; a constant vector maps to zeros."""
    x = np.asarray(x, dtype=np.float64)
    lo, hi = float(x.min()), float(x.max())
    if not hi > lo:
        return np.zeros_like(x)
    return np.asarray(np.clip((x - lo) / (hi - lo), 0.0, 1.0), dtype=np.float64)


def combined_centrality(graph: Any, *, a: float = 0.5, combine: Sequence[str] = ("degree", "betweenness"),
                        **kw: Any) -> Array:
    """Combined centrality ``a * c1^ + (1 - a) * c2^`` of two measures after min-max normalisation ([RECON]:
    spec §6.3 step 1; default pair degree and betweenness). ``kw`` go to :func:`compute_measure`."""
    return compute_measure(graph, "combined", a=a, combine=combine, **kw)[0]


def _combine_pair(combine: Any, caller: str) -> tuple[str, str]:
    if isinstance(combine, str) or len(combine) != 2:
        raise ValueError(f"The 'combine' parameter of {caller} must be a pair of measure names. Got {combine!r} "
                         "instead.")
    base = tuple(m for m in MEASURES if m != "combined")
    return check_option(combine[0], "combine", caller, base), check_option(combine[1], "combine", caller, base)


def compute_measure(graph: Any, measure: str, *, a: float = 0.5, combine: Sequence[str] = ("degree", "betweenness"),
                    damping: float = 0.85, closeness: str = "harmonic", distance: str = "inverse",
                    betweenness_samples: int | None = None, rng: int | np.random.Generator | None = None,
                    n_threads: int | None = None, **graph_kw: Any) -> tuple[Array, RankPrestige | None]:
    """One measure by name (:data:`MEASURES`) with the pipeline's options; returns ``(scores, trace)`` where
    ``trace`` is the :class:`RankPrestige` of ``'rank_prestige'`` (else None)."""
    caller = "compute_measure"
    check_option(measure, "measure", caller, MEASURES)
    g = _graph(graph, caller, graph_kw)
    if measure == "degree":
        return degree_centrality(g), None
    if measure == "degree_prestige":
        return degree_prestige(g), None
    if measure == "closeness":
        return closeness_centrality(g, variant=closeness, distance=distance, n_threads=n_threads), None
    if measure == "proximity_prestige":
        return proximity_prestige(g, distance=distance, n_threads=n_threads), None
    if measure == "betweenness":
        return betweenness_centrality(g, samples=betweenness_samples, rng=rng, distance=distance,
                                      n_threads=n_threads), None
    if measure == "eigenvector":
        return eigenvector_centrality(g), None
    if measure == "rank_prestige":
        rp = rank_prestige(g, damping=damping)
        return rp.scores, rp
    m1, m2 = _combine_pair(combine, caller)
    a = check_float(a, "a", caller, 0.0, 1.0)
    opts = {"damping": damping, "closeness": closeness, "distance": distance, "betweenness_samples": betweenness_samples,
                "rng": rng, "n_threads": n_threads}
    c1, t1 = compute_measure(g, m1, **opts)  # type: ignore[arg-type]
    c2, t2 = compute_measure(g, m2, **opts)  # type: ignore[arg-type]
    return a * minmax(c1) + (1.0 - a) * minmax(c2), t1 or t2
