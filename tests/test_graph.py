"""anoncore.graph: measures against networkx (spec social-network.md §12 item 21), pipeline invariants as
hypothesis properties (item 22), the Wiki-Vote-shaped graph and the experiment grid (item 23), input errors."""

from __future__ import annotations

import gzip
import importlib.util
import math
import re
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anoncore import Hierarchy
from anoncore.graph import (
    EdgeList,
    betweenness_centrality,
    closeness_centrality,
    compute_measure,
    contract,
    degree_centrality,
    degree_prestige,
    eigenvector_centrality,
    generalize_labels,
    information_loss,
    level_map,
    load_snap_edges,
    prominence_anonymize,
    proximity_prestige,
    random_labels,
    rank_prestige,
    sensitivity_index,
    wiki_vote_like,
    wiki_vote_taxonomy,
)
from anoncore.graph._input import as_graph

ROOT = Path(__file__).resolve().parents[1]
TYPES = [(d, w) for d in (True, False) for w in (False, True)]


def _random_graph(seed: int, n: int, p: float, directed: bool, weighted: bool) -> nx.Graph:
    g = nx.gnp_random_graph(n, p, seed=seed, directed=directed)
    rng = np.random.default_rng(seed)
    if weighted:  # small integer weights make equal-length paths (ties) common
        for u, v in g.edges:
            g[u][v]["weight"] = float(rng.integers(1, 4))
    return g


def _length_graph(g: nx.Graph, weighted: bool) -> nx.Graph:
    """A copy with edge attribute 'length' = 1/w (the default distance='inverse')."""
    h = g.copy()
    for u, v, d in h.edges(data=True):
        d["length"] = 1.0 / d["weight"] if weighted else 1.0
    return h


def _vec(d: dict, n: int) -> np.ndarray:
    return np.array([d[i] for i in range(n)], dtype=np.float64)


# ------------------------------------------------------------------------------------------------ item 21
@pytest.mark.parametrize(("directed", "weighted"), TYPES)
@pytest.mark.parametrize("gseed", [1, 2, 3])
def test_measures_equal_networkx(directed: bool, weighted: bool, gseed: int) -> None:
    n = 40
    g = _random_graph(gseed, n, 0.07, directed, weighted)
    h = _length_graph(g, weighted)
    wt = "weight" if weighted else None
    rev = h.reverse() if directed else h
    tol = {"rtol": 0, "atol": 1e-9}
    # degree / prestige: out- and in-degree (strength) over n-1
    deg = dict(g.out_degree(weight=wt)) if directed else dict(g.degree(weight=wt))
    np.testing.assert_allclose(degree_centrality(g), _vec(deg, n) / (n - 1), **tol)
    indeg = dict(g.in_degree(weight=wt)) if directed else dict(g.degree(weight=wt))
    np.testing.assert_allclose(degree_prestige(g), _vec(indeg, n) / (n - 1), **tol)
    # closeness out of each node: harmonic and Wasserman-Faust on the reversed graph in networkx's convention
    harm = _vec(nx.harmonic_centrality(rev, distance="length"), n) / (n - 1)
    np.testing.assert_allclose(closeness_centrality(g), harm, **tol)
    wf = _vec(nx.closeness_centrality(rev, distance="length"), n)
    np.testing.assert_allclose(closeness_centrality(g, variant="reachable"), wf, **tol)
    np.testing.assert_allclose(proximity_prestige(g), _vec(nx.closeness_centrality(h, distance="length"), n), **tol)
    # distance='weight': the weight is the length
    if weighted:
        ref = _vec(nx.closeness_centrality(g.reverse() if directed else g, distance="weight"), n)
        np.testing.assert_allclose(closeness_centrality(g, variant="reachable", distance="weight"), ref, **tol)
        ref = _vec(nx.betweenness_centrality(g, weight="weight"), n)
        np.testing.assert_allclose(betweenness_centrality(g, distance="weight"), ref, **tol)
    bc = _vec(nx.betweenness_centrality(h, weight="length" if weighted else None), n)
    np.testing.assert_allclose(betweenness_centrality(g), bc, **tol)
    pr = _vec(nx.pagerank(g, alpha=0.85, weight=wt, tol=1e-15, max_iter=10_000), n)
    np.testing.assert_allclose(rank_prestige(g).scores, pr, **tol)


@pytest.mark.parametrize(("directed", "weighted"), TYPES)
def test_eigenvector_equals_networkx(directed: bool, weighted: bool) -> None:
    n = 30
    g = _random_graph(7, n, 0.15, directed, weighted)
    nx.add_cycle(g, range(n), weight=1.0)  # strongly connected: a unique positive eigenvector
    if not weighted:
        for _, _, d in g.edges(data=True):
            d.pop("weight", None)
    ref = _vec(nx.eigenvector_centrality(g, weight="weight" if weighted else None, tol=1e-14, max_iter=100_000), n)
    np.testing.assert_allclose(eigenvector_centrality(g, tol=1e-14), ref, rtol=0, atol=1e-9)
    ref2 = _vec(nx.eigenvector_centrality_numpy(g, weight="weight" if weighted else None), n)
    np.testing.assert_allclose(eigenvector_centrality(g, tol=1e-14), np.abs(ref2), rtol=0, atol=1e-8)


@settings(max_examples=25)
@given(n=st.integers(3, 14), p=st.floats(0.05, 0.6), seed=st.integers(0, 10**6), directed=st.booleans(),
       weighted=st.booleans())
def test_path_measures_property(n: int, p: float, seed: int, directed: bool, weighted: bool) -> None:
    g = _random_graph(seed, n, p, directed, weighted)
    h = _length_graph(g, weighted)
    bc = _vec(nx.betweenness_centrality(h, weight="length" if weighted else None), n)
    np.testing.assert_allclose(betweenness_centrality(g), bc, rtol=0, atol=1e-9)
    np.testing.assert_allclose(proximity_prestige(g), _vec(nx.closeness_centrality(h, distance="length"), n),
                               rtol=0, atol=1e-9)


@pytest.mark.parametrize(("directed", "weighted"), TYPES)
def test_sampled_betweenness_is_subset_brandes(directed: bool, weighted: bool) -> None:
    n = 50
    g = _random_graph(5, n, 0.08, directed, weighted)
    h = _length_graph(g, weighted)
    k = 12
    got = betweenness_centrality(g, samples=k, rng=3, normalized=False)
    sources = np.sort(np.random.default_rng(3).choice(n, size=k, replace=False))
    ref = _vec(nx.betweenness_centrality_subset(h, sources.tolist(), list(range(n)), normalized=False,
                                                weight="length" if weighted else None), n)
    # networkx halves undirected subset sums too; anoncore scales the sample by n / k
    np.testing.assert_allclose(got, ref * n / k, rtol=1e-12, atol=1e-9)
    assert np.array_equal(got, betweenness_centrality(g, samples=k, rng=3, normalized=False))
    assert not np.array_equal(got, betweenness_centrality(g, samples=k, rng=4, normalized=False))


def test_kernels_identical_for_any_thread_count() -> None:
    el = wiki_vote_like(1500, 15_000, weighted=True, rng=2)
    for samples in (None, 100):
        one = betweenness_centrality(el, samples=samples, rng=1, n_threads=1)
        two = betweenness_centrality(el, samples=samples, rng=1, n_threads=2)
        four = betweenness_centrality(el, samples=samples, rng=1, n_threads=4)
        assert one.tobytes() == two.tobytes() == four.tobytes()
    assert closeness_centrality(el, n_threads=1).tobytes() == closeness_centrality(el, n_threads=3).tobytes()


def test_rank_prestige_sums_to_one_and_entropy_converges() -> None:
    for weighted in (False, True):
        el = wiki_vote_like(800, 6000, weighted=weighted, rng=4)
        rp = rank_prestige(el)
        assert rp.converged and math.isclose(rp.scores.sum(), 1.0, abs_tol=1e-12)
        assert rp.entropy.size == rp.n_iter == rp.l1.size
        assert abs(rp.entropy[-1] - rp.entropy[-2]) < 1e-10
        assert np.all(np.diff(rp.l1) <= 1e-15 + rp.l1[:-1])  # L1 change shrinks (geometric, factor <= damping)
        assert rp.entropy[-1] <= math.log(800)
        ent = rank_prestige(el, stop="entropy", tol=1e-9)
        assert ent.converged and ent.n_iter <= rp.n_iter


# ------------------------------------------------------------------------------------------- worked example
def _small_taxonomy() -> Hierarchy:
    return Hierarchy.from_nested({"Any": {"A": ["a1", "a2"], "B": ["b1", "b2"]}}, name="t")


def test_worked_example_star() -> None:
    # Star 0 -> {1, 2, 3, 4} plus 1 -> 2; degree: 4/4, 1/4, 0 ... => SI = 1, .25, 0, 0, 0 ; H = 2
    g = nx.DiGraph([(0, 1), (0, 2), (0, 3), (0, 4), (1, 2)])
    labels = {0: "a1", 1: "a2", 2: "b1", 3: "b2", 4: "a1"}
    r = prominence_anonymize(g, labels, _small_taxonomy(), "degree")
    np.testing.assert_allclose(r.si, [1.0, 0.25, 0.0, 0.0, 0.0])
    assert r.levels.tolist() == [2, 1, 0, 0, 0]  # linear: ceil(SI * 2)
    assert r.labels == ("Any", "A", "b1", "b2", "a1")
    # Iloss = mean((|leaves| - 1) / 4) = (3/4 + 1/4) / 5
    assert r.iloss == pytest.approx(0.2)
    # no two merged nodes share a label: 5 super nodes, the same edges
    assert r.masked.n_nodes == 5 and r.masked.sizes.tolist() == [1] * 5
    q = prominence_anonymize(g, labels, _small_taxonomy(), "degree", level_map="quantile")
    # quantile: ranks below = 4, 3, 0, 0, 0 of 5 -> floor(3 * r / 5) = 2, 1, 0, 0, 0
    assert q.levels.tolist() == [2, 1, 0, 0, 0]
    lv = prominence_anonymize(g, labels, _small_taxonomy(), "degree", iloss="level")
    assert lv.iloss == pytest.approx((1.0 + 0.5) / 5)


def test_worked_example_super_nodes() -> None:
    # 0, 1 -> level 1 with labels a1, a2 -> both "A": one super node of size 2 with a self-loop 0->1 (weight 2)
    g = nx.DiGraph()
    g.add_weighted_edges_from([(0, 1, 2.0), (1, 2, 1.0), (0, 3, 3.0), (2, 3, 0.5)])
    labels = ["a1", "a2", "b1", "b2"]
    scores = np.array([1.0, 1.0, 0.0, 0.0])
    r = prominence_anonymize(g, labels, _small_taxonomy(), scores, level_map="linear")
    assert r.measure == "given" and r.levels.tolist() == [2, 2, 0, 0]
    assert r.group.tolist() == [0, 0, 1, 2]
    m = r.masked
    assert m.sizes.tolist() == [2, 1, 1] and m.labels == ("Any", "b1", "b2")
    edges = {(int(s), int(d)): float(w) for s, d, w in zip(m.src, m.dst, m.weight)}
    assert edges == {(0, 0): 2.0, (0, 1): 1.0, (0, 2): 3.0, (1, 2): 0.5}
    nxm = m.to_networkx()
    assert nxm.nodes[0]["size"] == 2 and nxm[0][0]["weight"] == 2.0
    # merge=False keeps every node
    assert prominence_anonymize(g, labels, _small_taxonomy(), scores, merge=False).masked.n_nodes == 4


# ------------------------------------------------------------------------------------------------ item 22
@st.composite
def _instances(draw):  # type: ignore[no-untyped-def]
    n = draw(st.integers(1, 25))
    directed = draw(st.booleans())
    weighted = draw(st.booleans())
    seed = draw(st.integers(0, 10**6))
    g = _random_graph(seed, n, draw(st.floats(0.0, 0.5)), directed, weighted)
    height = draw(st.integers(0, 3))
    fan = draw(st.integers(1, 3))

    def build(prefix: str, h: int) -> dict | list:
        if h == 1:
            return [f"{prefix}{i}" for i in range(fan)]
        return {f"{prefix}{i}": build(f"{prefix}{i}.", h - 1) for i in range(fan)}

    tax = Hierarchy.from_nested({"root": build("n", height)} if height else {"root": None}, name="tx")
    rng = np.random.default_rng(seed)
    labels = [tax.leaves[int(c)] for c in rng.integers(0, tax.n_leaves, size=n)]
    scores = rng.choice([0.0, 1.0, 2.5, 7.0], size=n) if draw(st.booleans()) else rng.random(n)
    return g, labels, tax, scores


@settings(max_examples=60)
@given(inst=_instances(), method=st.sampled_from(["linear", "quantile"]), min_level=st.integers(0, 3))
def test_pipeline_invariants(inst, method: str, min_level: int) -> None:  # type: ignore[no-untyped-def]
    g, labels, tax, scores = inst
    r = prominence_anonymize(g, labels, tax, scores, level_map=method, merge_min_level=min_level)
    n = g.number_of_nodes()
    # levels monotone in SI
    order = np.argsort(r.si, kind="stable")
    assert np.all(np.diff(r.levels[order]) >= 0)
    assert np.all((r.levels >= 0) & (r.levels <= tax.height))
    # ancestor-or-self: the original leaf lies in the published node's leaf range
    codes = np.array([tax.leaf_code(x) for x in labels])
    lo = tax.leaf_start[r.label_nodes]
    assert np.all((lo <= codes) & (codes < lo + tax.leaf_count[r.label_nodes]))
    assert all(r.labels[i] == tax.labels[r.label_nodes[i]] for i in range(n))
    # Iloss in [0, 1], monotone when every level rises
    assert 0.0 <= r.iloss <= 1.0
    for how in ("leaves", "level"):
        up = np.minimum(r.levels + 1, tax.height)
        before = information_loss(generalize_labels(codes, r.levels, tax), r.levels, tax, how)
        after = information_loss(generalize_labels(codes, up, tax), up, tax, how)
        assert np.all(after >= before) and after.mean() >= before.mean()
    # contraction conserves node count (sizes) and total edge weight (self-loops included)
    m = r.masked
    assert m.sizes.sum() == n and np.array_equal(np.bincount(r.group, minlength=m.n_nodes), m.sizes)
    total = sum(d.get("weight", 1.0) for _, _, d in g.edges(data=True))
    assert math.isclose(m.weight.sum(), total, rel_tol=1e-12, abs_tol=1e-12)
    # members of one super node share the published label; merged ones sit at level >= min_level
    for k in range(m.n_nodes):
        members = np.flatnonzero(r.group == k)
        assert len({r.labels[i] for i in members}) == 1
        if members.size > 1:
            assert np.all(r.levels[members] >= min_level)


@settings(max_examples=40)
@given(si=st.lists(st.floats(0, 1), min_size=1, max_size=40), h=st.integers(0, 5),
       method=st.sampled_from(["linear", "quantile"]))
def test_level_map_monotone(si: list[float], h: int, method: str) -> None:
    s = np.array(si)
    lv = level_map(s, h, method)
    for i in range(s.size):
        for j in range(s.size):
            if s[i] <= s[j]:
                assert lv[i] <= lv[j]
    if method == "linear":
        assert np.all((lv == 0) == (s * h <= 1e-12)) if h else np.all(lv == 0)


def test_contract_undirected_canonical_edges() -> None:
    g = as_graph(nx.Graph([(0, 1), (1, 2), (2, 3)]), "t")
    tax = _small_taxonomy()
    codes = np.array([0, 1, 2, 3])
    levels = np.array([1, 1, 1, 0], dtype=np.int32)
    group, m = contract(g, generalize_labels(codes, levels, tax), levels, tax)
    assert group.tolist() == [0, 0, 1, 2]
    assert sorted(zip(m.src.tolist(), m.dst.tolist(), m.weight.tolist())) == [(0, 0, 1.0), (0, 1, 1.0), (1, 2, 1.0)]
    assert not m.directed and m.to_networkx().number_of_edges() == 3


# ------------------------------------------------------------------------------------------------ item 23
def test_wiki_vote_like_shape() -> None:
    el = wiki_vote_like()
    assert (el.n_nodes, el.n_edges) == (7115, 103_689)
    keys = el.src * el.n_nodes + el.dst
    assert np.unique(keys).size == el.n_edges and not np.any(el.src == el.dst)
    indeg = np.bincount(el.dst, minlength=el.n_nodes)
    # heavy tail: a power-law CCDF is straight on log-log axes; the slope of the top decade is about -1/0.75 + 1
    ks = np.arange(10, 300)
    ccdf = np.array([(indeg >= k).mean() for k in ks])
    slope = np.polyfit(np.log(ks), np.log(ccdf), 1)[0]
    assert -2.5 < slope < -0.6, slope
    assert indeg.max() > 20 * indeg.mean()
    again = wiki_vote_like()
    assert np.array_equal(again.src, el.src) and np.array_equal(again.dst, el.dst)
    w = wiki_vote_like(weighted=True)
    assert np.array_equal(w.src, el.src) is False or w.weight is not None
    assert w.weight is not None and w.weight.min() >= 1 and np.all(w.weight == np.round(w.weight))
    tax = wiki_vote_taxonomy()
    assert (tax.n_leaves, tax.height, tax.n_nodes) == (48, 3, 65)
    labels = random_labels(el.n_nodes, tax, rng=0)
    assert len(labels) == el.n_nodes and set(labels) <= set(tax.leaves)


def test_snap_loader(tmp_path: Path) -> None:
    text = "# Directed graph: toy\n# FromNodeId\tToNodeId\n30\t10\n10\t20\n20\t30\n10\t30\n"
    p = tmp_path / "toy.txt"
    p.write_text(text)
    el = load_snap_edges(p)
    assert el.n_nodes == 3 and el.n_edges == 4 and el.node_ids.tolist() == [10, 20, 30]
    assert list(zip(el.src.tolist(), el.dst.tolist())) == [(2, 0), (0, 1), (1, 2), (0, 2)]
    gz = tmp_path / "toy.txt.gz"
    with gzip.open(gz, "wt") as fh:
        fh.write(text)
    assert np.array_equal(load_snap_edges(gz).dst, el.dst)
    sp = tmp_path / "spaces.txt"
    sp.write_text("# c\n1 2 0.5\n2 3 2\n")
    ws = load_snap_edges(sp, weighted=True)
    assert ws.weight.tolist() == [0.5, 2.0]
    r = prominence_anonymize(el, {10: "a1", 20: "b1", 30: "b2"}, _small_taxonomy(), "betweenness")
    assert r.nodes == (10, 20, 30)
    (tmp_path / "empty.txt").write_text("# nothing\n")
    with pytest.raises(ValueError, match="has no edges"):
        load_snap_edges(tmp_path / "empty.txt")


def _grid_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("graph_experiments", ROOT / "benchmarks" / "graph_experiments.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def test_experiment_grid_runs(tmp_path: Path) -> None:
    mod = _grid_module()
    rows = mod.run_grid(n_nodes=400, n_edges=3000, a_values=(0.0, 0.5, 1.0), rng=0)
    types = {r["network"] for r in rows}
    assert types == {"unweighted undirected", "unweighted directed", "weighted undirected", "weighted directed"}
    tables = {r["table"] for r in rows}
    assert tables == {"6.2", "6.3", "6.4"}
    measures = {r["measure"] for r in rows if r["table"] == "6.2"}
    assert {"degree", "closeness", "eigenvector", "rank_prestige", "combined"} <= measures
    assert all(0.0 <= r["iloss"] <= 1.0 for r in rows)
    assert {r["a"] for r in rows if r["table"] == "6.4"} == {0.0, 0.5, 1.0}
    mod.write_outputs(rows, tmp_path, plots=False)
    assert (tmp_path / "graph_grid.csv").read_text().count("\n") == len(rows) + 1


# ------------------------------------------------------------------------------------------------ errors
def _toy() -> tuple[nx.DiGraph, dict]:
    return nx.DiGraph([(0, 1), (1, 2)]), {0: "a1", 1: "a2", 2: "b1"}


@pytest.mark.parametrize(
    ("change", "exc", "match"),
    [
        ({"labels": {0: "a1", 1: "a2"}}, ValueError, r"Node 2 has no label"),
        ({"labels": ["a1", "a2"]}, ValueError, r"2 entries for 3 nodes \(node 2 has no label\)"),
        ({"labels": {0: "a1", 1: "zz", 2: "b1"}}, ValueError, r"Node 1 has label 'zz', which is not a leaf"),
        ({"labels": {0: "a1", 1: "A", 2: "b1"}}, ValueError, r"inner node"),
        ({"labels": "a1"}, TypeError, r"'labels' parameter"),
        ({"a": 1.5}, ValueError, r"The 'a' parameter of prominence_anonymize must be a float in the range \[0.0, 1.0\]"),
        ({"a": -0.1}, ValueError, r"'a' parameter"),
        ({"a": True}, TypeError, r"'a' parameter"),
        ({"damping": 1.0}, ValueError, r"'damping' parameter"),
        ({"measure": "pagerank"}, ValueError, r"'measure' parameter .* Got 'pagerank'"),
        ({"level_map": "log"}, ValueError, r"'level_map' parameter"),
        ({"iloss": "x"}, ValueError, r"'iloss' parameter"),
        ({"closeness": "x"}, ValueError, r"'closeness' parameter"),
        ({"merge_min_level": -1}, ValueError, r"'merge_min_level' parameter"),
        ({"merge": 1}, TypeError, r"'merge' parameter"),
        ({"betweenness_samples": 0}, ValueError, r"'betweenness_samples' parameter"),
        ({"betweenness_samples": 4}, ValueError, r"range \[1, 3\]"),
        ({"taxonomy": {"Any": ["a"]}}, TypeError, r"'taxonomy' parameter .* Hierarchy"),
        ({"measure": np.ones(2)}, ValueError, r"must have shape \(3,\)"),
        ({"n_threads": 0}, ValueError, r"'n_threads' parameter"),
    ],
)
def test_invalid_parameters(change: dict, exc: type, match: str) -> None:
    g, labels = _toy()
    kw = {"graph": g, "labels": labels, "taxonomy": _small_taxonomy(), "measure": "degree"}
    kw.update(change)
    with pytest.raises(exc, match=match):
        prominence_anonymize(**kw)


@pytest.mark.parametrize(
    ("graph", "exc", "match"),
    [
        (nx.DiGraph(), ValueError, r"is empty: it needs at least one node"),
        (np.empty((0, 2)), ValueError, r"is empty"),
        (np.array([[0, 1, 2.0], [1, 2, -1.0]]), ValueError, r"Edge \(1, 2\) .* has weight -1.0, which is negative"),
        (np.array([[0, 1, 0.0]]), ValueError, r"weight 0.0, which is not a positive finite number"),
        (np.array([[0, 1, np.nan]]), ValueError, r"not a positive finite number"),
        (np.array([[0, 1], [1, 1]]), ValueError, r"self-loop at node 1"),
        (np.array([[0, 1], [0, 1]]), ValueError, r"repeats the edge \(0, 1\)"),
        (np.array([[0, -1]]), ValueError, r"non-negative integers"),
        (nx.MultiDiGraph([(0, 1)]), TypeError, r"multigraphs"),
        ("edges.txt", TypeError, r"'graph' parameter"),
    ],
)
def test_invalid_graphs(graph, exc: type, match: str) -> None:  # type: ignore[no-untyped-def]
    labels = ["a1", "a2", "b1"]
    with pytest.raises(exc, match=match):
        prominence_anonymize(graph, labels[: max(1, len(getattr(graph, "nodes", labels)))], _small_taxonomy())


def test_negative_weight_on_networkx_graph_and_partial_weights() -> None:
    g = nx.DiGraph()
    g.add_edge("x", "y", weight=-2.0)
    with pytest.raises(ValueError, match=r"Edge \('x', 'y'\) .* weight -2.0, which is negative"):
        prominence_anonymize(g, {"x": "a1", "y": "a2"}, _small_taxonomy())
    g = nx.DiGraph()
    g.add_edge("x", "y", weight=1.0)
    g.add_edge("y", "z")
    with pytest.raises(ValueError, match=r"Edge \('y', 'z'\) has no 'weight' attribute"):
        prominence_anonymize(g, {"x": "a1", "y": "a2", "z": "b1"}, _small_taxonomy())
    r = prominence_anonymize(g, {"x": "a1", "y": "a2", "z": "b1"}, _small_taxonomy(), weight=None)
    assert r.masked.weight.sum() == 2.0


def test_edge_array_forms_agree() -> None:
    el = wiki_vote_like(300, 2000, weighted=True, rng=3)
    tax = wiki_vote_taxonomy()
    labels = random_labels(el.n_nodes, tax, rng=1)
    a = prominence_anonymize(el, labels, tax, "rank_prestige")
    b = prominence_anonymize((el.src, el.dst, el.weight), labels, tax, "rank_prestige", n_nodes=el.n_nodes)
    c = prominence_anonymize(np.column_stack([el.src, el.dst, el.weight]), labels, tax, "rank_prestige",
                             n_nodes=el.n_nodes)
    d = prominence_anonymize(el.to_networkx(), labels, tax, "rank_prestige")
    assert a == b == c == d
    assert a.trace is not None and a.trace.converged
    assert a != prominence_anonymize(el, labels, tax, "degree")


def test_every_measure_runs_on_every_network_type() -> None:
    base = wiki_vote_like(300, 2500, weighted=True, rng=5)
    tax = wiki_vote_taxonomy()
    labels = random_labels(base.n_nodes, tax, rng=2)
    for el in (base, base.unweighted(), base.as_undirected(), base.unweighted().as_undirected()):
        for m in ("degree", "closeness", "betweenness", "eigenvector", "degree_prestige", "proximity_prestige",
                  "rank_prestige", "combined"):
            r = prominence_anonymize(el, labels, tax, m, betweenness_samples=50 if m == "betweenness" else None,
                                     rng=0)
            assert r.masked.sizes.sum() == el.n_nodes and 0 <= r.iloss <= 1
            s, _ = compute_measure(el, m, betweenness_samples=50 if m == "betweenness" else None, rng=0)
            assert np.array_equal(s, r.scores)


def test_docs_example_runs() -> None:
    text = (ROOT / "docs" / "graph.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert blocks
    for block in blocks:
        exec(compile(block, "docs/graph.md", "exec"), {})  # noqa: S102 - the page's own example


def test_edge_list_helpers() -> None:
    el = EdgeList(3, np.array([0, 1]), np.array([1, 0]), np.array([1.0, 2.0]))
    und = el.as_undirected()
    assert und.n_edges == 1 and und.weight.tolist() == [3.0] and not und.directed
    assert sensitivity_index([2.0, 2.0]).tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="non-finite"):
        sensitivity_index([1.0, np.inf])


# ------------------------------------------------------------------------------------------------ CLI
def _cli_files(tmp_path: Path) -> tuple[str, str, str]:
    edges = tmp_path / "edges.txt"
    edges.write_text("# toy\n1\t2\n1\t3\n1\t4\n2\t3\n4\t1\n")
    labels = tmp_path / "labels.csv"
    labels.write_text("node,label\n1,a1\n2,a2\n3,b1\n4,b2\n")
    tax = tmp_path / "tax.json"
    tax.write_text('{"Any": {"A": ["a1", "a2"], "B": ["b1", "b2"]}}')
    return str(edges), str(labels), str(tax)


def test_cli_graph(tmp_path: Path) -> None:
    import io
    import json

    import pandas as pd

    from anoncore.cli import main

    edges, labels, tax = _cli_files(tmp_path)
    buf = io.StringIO()
    prefix = str(tmp_path / "out")
    assert main(["graph", edges, "--labels", labels, "--taxonomy", tax, "--json", "-o", prefix,
                 "--mapping", str(tmp_path / "map.csv")], stdout=buf) == 0
    doc = json.loads(buf.getvalue())
    res = doc["result"]
    assert doc["command"] == "graph" and res["n_nodes"] == 4 and res["n_edges"] == 5
    g = nx.DiGraph([(1, 2), (1, 3), (1, 4), (2, 3), (4, 1)])
    ref = prominence_anonymize(g, {1: "a1", 2: "a2", 3: "b1", 4: "b2"}, _small_taxonomy())
    assert res["iloss"] == pytest.approx(ref.iloss) and res["super_nodes"] == ref.masked.n_nodes
    nodes = pd.read_csv(prefix + ".nodes.csv")
    e = pd.read_csv(prefix + ".edges.csv")
    assert nodes["size"].sum() == 4 and e["weight"].sum() == 5
    mp = pd.read_csv(tmp_path / "map.csv")
    assert mp["node"].tolist() == [1, 2, 3, 4] and mp["label"].tolist() == list(ref.labels)
    buf = io.StringIO()
    assert main(["graph", edges, "--labels", labels, "--taxonomy", tax, "--measure", "betweenness"], stdout=buf) == 0
    assert "Iloss" in buf.getvalue()


def test_cli_graph_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import io

    from anoncore.cli import main

    edges, labels, tax = _cli_files(tmp_path)
    bad = tmp_path / "bad.csv"
    bad.write_text("node,label\n1,a1\n2,a2\n3,b1\n")
    assert main(["graph", edges, "--labels", str(bad), "--taxonomy", tax], stdout=io.StringIO()) == 1
    err = capsys.readouterr().err
    assert "anoncore graph: error: Node 4 has no label" in err and "Traceback" not in err
    assert main(["graph", edges, "--labels", labels, "--taxonomy", tax, "--a", "2", "--measure", "combined"],
                stdout=io.StringIO()) == 1
    assert "'a' parameter" in capsys.readouterr().err
    assert main(["graph", str(tmp_path / "none.txt"), "--labels", labels, "--taxonomy", tax],
                stdout=io.StringIO()) == 1
    assert "does not exist" in capsys.readouterr().err
    assert main(["graph", edges, "--taxonomy", tax], stdout=io.StringIO()) == 2
