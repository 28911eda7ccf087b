"""SABRE and tMondrian: kernels against the definitional oracles, privacy of every output, determinism, bad
input. Golden examples live in tests/golden/test_golden_sabre.py."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles.sabre import (
    bucket_distance_lp,
    bucket_ground,
    bucketize_reference,
    cet_upper_thesis_cat,
    cet_upper_vertices,
    class_emds,
    dichotomize_reference,
    hierarchical_ground,
    hilbert_index_reference,
    numeric_split_children,
    ordered_ground,
)
from oracles.tables import random_qi_columns

from anoncore import Attribute, Hierarchy, InfeasibleError, Schema, Table, _core
from anoncore.datasets import toy_table
from anoncore.models import KAnonymity
from anoncore.static import sabre, tmondrian
from anoncore.static.sabre import closeness_model

tw = _core.sabre
_ = InfeasibleError


# --------------------------------------------------------------------------- generators
def random_hierarchy(rng: np.random.Generator, m: int, height: int) -> Hierarchy:
    """Leaves v0..v{m-1}; each level groups consecutive nodes into runs of 1-3 (chains allowed)."""
    level: list[Any] = [f"v{i}" for i in range(m)]
    names: list[Any] = list(level)
    tree: dict[str, Any] = {}
    for lv in range(height):
        groups, i = [], 0
        while i < len(level):
            s = int(rng.integers(1, 4))
            groups.append(level[i:i + s])
            i += s
        if lv == height - 1:
            groups = [level]
        new = []
        for g_i, g in enumerate(groups):
            name = f"n{lv}_{g_i}"
            tree[name] = g
            new.append(name)
        level = new
    names = level
    assert len(names) == 1

    def nest(x: str) -> Any:
        if x not in tree:
            return None
        return {c: nest(c) for c in tree[x]}

    return Hierarchy.from_nested({names[0]: nest(names[0])})


def harrays(h: Hierarchy) -> tuple[np.ndarray, ...]:
    return tuple(np.ascontiguousarray(a, dtype=np.int32) for a in (h.parent, h.node_height, h.leaf_start,
                                                                      h.leaf_count))


def random_table(seed: int, n: int, n_qi: int, m: int, categorical_sa: bool, sa_height: int = 2) -> Table:
    rng = np.random.default_rng(seed)
    data, attrs = random_qi_columns(rng, n, n_qi, 10)
    sa_vals = rng.integers(0, m, n)
    if categorical_sa:
        h = random_hierarchy(rng, m, sa_height)
        data["s"] = np.array([f"v{i}" for i in sa_vals])
        attrs.append(Attribute("s", "sensitive", "categorical", hierarchy=h))
    else:
        data["s"] = sa_vals
        attrs.append(Attribute("s", "sensitive", "numeric"))
    return Table.from_pandas(pd.DataFrame(data), Schema(tuple(attrs)))


def ground_of(tab: Table) -> np.ndarray:
    h = tab.hierarchy("s")
    a = tab.attribute("s")
    if a.kind == "categorical":
        return hierarchical_ground(h.parent, h.n_leaves)
    return ordered_ground(tab.cardinality("s"))


# --------------------------------------------------------------------------- CET^U and D against the oracles
@settings(max_examples=60)
@given(st.integers(0, 10**6), st.integers(1, 9))
def test_cet_numeric_equals_vertex_max(seed: int, m: int) -> None:
    rng = np.random.default_rng(seed)
    counts = rng.integers(1, 20, m).astype(np.int64)
    p = counts / counts.sum()
    d = ordered_ground(m)
    b = tw.bucketize(counts, 1e-9)  # t tiny: split down to singletons, reporting the bound of every step
    root = cet_upper_vertices(p, list(range(m)), d)
    assert b["root_cet"] == pytest.approx(root, abs=1e-12)


@settings(max_examples=60)
@given(st.integers(0, 10**6), st.integers(2, 9), st.floats(0.01, 1.0))
def test_bucket_num_equals_reference_greedy(seed: int, m: int, t: float) -> None:
    rng = np.random.default_rng(seed)
    counts = rng.integers(1, 20, m).astype(np.int64)
    p = counts / counts.sum()
    children, cet = numeric_split_children(p, ordered_ground(m))
    leaves, trace = bucketize_reference(p, t, children, cet, (0, m - 1))
    b = tw.bucketize(counts, t)
    assert list(zip(b["lo"].tolist(), b["hi"].tolist())) == leaves
    np.testing.assert_allclose(b["u_trace"], trace, atol=1e-12)
    np.testing.assert_allclose(b["cet"], [cet(x) for x in leaves], atol=1e-12)
    assert b["u"] < t


@settings(max_examples=60)
@given(st.integers(0, 10**6), st.integers(2, 9), st.integers(1, 3), st.floats(0.01, 1.0))
def test_bucket_cat_bounds_and_stop(seed: int, m: int, height: int, t: float) -> None:
    rng = np.random.default_rng(seed)
    h = random_hierarchy(rng, m, height)
    counts = rng.integers(0, 20, m).astype(np.int64)
    counts[rng.integers(0, m)] += 1
    p = counts / counts.sum()
    d = hierarchical_ground(h.parent, h.n_leaves)
    for tight in (False, True):
        b = tw.bucketize(counts, t, harrays(h), tight)
        present = [v for v in range(m) if counts[v] > 0]
        assert b["u"] < t or len(b["size"]) == len(present)
        assert sorted(np.flatnonzero(b["bucket_of"] >= 0).tolist()) == present
        for j, nd in enumerate(b["node"]):
            members = [v for v in present if b["bucket_of"][v] == j]
            # every bucket is the set of present values under one hierarchy node
            lo, cnt = h.leaf_start[nd], h.leaf_count[nd]
            assert members == [v for v in present if lo <= v < lo + cnt]
            want = cet_upper_vertices(p, members, d) if tight else cet_upper_thesis_cat(p, members, h.parent,
                                                                                       h.n_leaves)
            assert b["cet"][j] == pytest.approx(want, abs=1e-12)
            assert b["cet"][j] >= cet_upper_vertices(p, members, d) - 1e-12  # a valid upper bound
        assert b["u"] == pytest.approx(sum(b["cet"]), abs=1e-12)


@settings(max_examples=60)
@given(st.integers(0, 10**6), st.integers(2, 10), st.integers(1, 5))
def test_bucket_distance_ordered_equals_lp(seed: int, m: int, nb: int) -> None:
    rng = np.random.default_rng(seed)
    nb = min(nb, m)
    cuts = np.sort(rng.choice(np.arange(1, m), nb - 1, replace=False)) if nb > 1 else np.array([], dtype=int)
    lo = np.concatenate([[0], cuts]).astype(np.int32)
    hi = np.concatenate([cuts - 1, [m - 1]]).astype(np.int32)
    buckets = [list(range(a, b + 1)) for a, b in zip(lo, hi)]
    totals = rng.integers(1, 30, nb).astype(np.int64)
    rows = rng.integers(0, 10, (5, nb)).astype(np.int64)
    rows[:, 0] += 1
    du = bucket_ground(buckets, ordered_ground(m))
    got = tw.bucket_distance(rows, totals, np.full(nb, -1, dtype=np.int32), lo, hi, m)
    want = [bucket_distance_lp(r, totals, du) for r in rows]
    np.testing.assert_allclose(got, want, atol=1e-9)


@settings(max_examples=60)
@given(st.integers(0, 10**6), st.integers(2, 9), st.integers(1, 3), st.floats(0.01, 1.0))
def test_bucket_distance_hierarchical_equals_lp(seed: int, m: int, height: int, t: float) -> None:
    rng = np.random.default_rng(seed)
    h = random_hierarchy(rng, m, height)
    counts = rng.integers(1, 20, m).astype(np.int64)
    b = tw.bucketize(counts, t, harrays(h))
    nb = len(b["size"])
    buckets = [np.flatnonzero(b["bucket_of"] == j).tolist() for j in range(nb)]
    du = bucket_ground(buckets, hierarchical_ground(h.parent, h.n_leaves))
    rows = rng.integers(0, 10, (5, nb)).astype(np.int64)
    rows[:, 0] += 1
    got = tw.bucket_distance(rows, b["size"], b["node"], b["lo"], b["hi"], 0, harrays(h), h.n_leaves)
    want = [bucket_distance_lp(r, b["size"], du) for r in rows]
    np.testing.assert_allclose(got, want, atol=1e-9)


@settings(max_examples=40)
@given(st.integers(0, 10**6), st.integers(2, 6), st.floats(0.05, 1.0), st.integers(1, 6))
def test_ec_sizes_equals_reference_dichotomize(seed: int, m: int, t: float, k: int) -> None:
    rng = np.random.default_rng(seed)
    counts = rng.integers(1, 12, m).astype(np.int64)
    b = tw.bucketize(counts, t)
    nb = len(b["size"])
    buckets = [list(range(a, c + 1)) for a, c in zip(b["lo"], b["hi"])]
    du = bucket_ground(buckets, ordered_ground(m))

    def accept(a: list[int]) -> bool:
        return sum(a) >= k and bucket_distance_lp(np.array(a), b["size"], du) + b["u"] <= t + 1e-9

    want = dichotomize_reference(b["size"].tolist(), accept)
    got = tw.ec_sizes(b["size"], np.full(nb, -1, dtype=np.int32), b["lo"], b["hi"], m, b["u"], t, k)
    assert got.tolist() == want


# --------------------------------------------------------------------------- Hilbert keys
@pytest.mark.parametrize(("d", "bits"), [(1, 4), (2, 1), (2, 3), (3, 2), (4, 2)])
def test_hilbert_bijection_and_adjacency(d: int, bits: int) -> None:
    side = 1 << bits
    cells = np.array(np.meshgrid(*[np.arange(side)] * d, indexing="ij")).reshape(d, -1).T
    keys = tw.hilbert_index(np.ascontiguousarray(cells, dtype=np.uint32), bits)
    assert sorted(keys.tolist()) == list(range(side**d))  # a bijection onto [0, 2^(d bits))
    order = cells[np.argsort(keys)]
    steps = np.abs(np.diff(order, axis=0)).sum(axis=1)
    assert np.all(steps == 1)  # consecutive keys are neighbouring cells


def test_hilbert_bits_cap() -> None:
    assert tw.hilbert_bits(7, 83) == 7
    assert tw.hilbert_bits(20, 1000) == 3
    assert tw.hilbert_bits(100, 10) == 1


# --------------------------------------------------------------------------- privacy of every output
def _check_output(tab: Table, res: Any, t: float, k: int) -> None:
    part = res.partition
    assert part.labels.shape == (tab.n_rows,) and not part.suppressed.any()
    sizes = part.class_sizes
    assert sizes.sum() == tab.n_rows and sizes.min() >= k
    emds = class_emds(tab.column("s").astype(np.int64), part.labels, ground_of(tab))
    assert max(emds.values()) <= t + 1e-9
    assert res.achieved["t"] == pytest.approx(max(emds.values()), abs=1e-9)
    assert res.achieved["k"] == sizes.min() and res.achieved["passed"]
    # boxes contain their rows
    qc = tab.qi_codes()
    assert np.all(part.gen_lo[part.labels] <= qc) and np.all(qc <= part.gen_hi[part.labels])


table_cases = st.tuples(st.integers(0, 10**6), st.integers(1, 60), st.integers(1, 3), st.integers(1, 7),
                        st.booleans(), st.floats(0.05, 1.0), st.integers(1, 8))


@settings(max_examples=80)
@given(table_cases, st.sampled_from([("ak", "random"), ("knn", "random"), ("ak", "min_key"), ("knn", "min_key"),
                                     ("ak", "slices")]))
@pytest.mark.slow
def test_sabre_output_is_k_anonymous_and_t_close(case: tuple[Any, ...], variant: tuple[str, str]) -> None:
    seed, n, n_qi, m, cat, t, k = case
    tab = random_table(seed, n, n_qi, m, cat)
    k = min(k, n)
    res = sabre(tab, [KAnonymity(k), closeness_model(tab, t)], method=variant[0], seed_policy=variant[1], rng=seed)
    _check_output(tab, res, t, k)
    b = res.trace[0]
    assert b["u"] < t
    # Every class holds exactly its recipe, and Theorem 3.4 holds: EMD(P, Q_G) <= D(G) + U, with D recomputed
    # by LP over the bucket ground distance d^u.
    dic = [str(int(x)) if isinstance(x, float) and x.is_integer() else str(x) for x in tab.dictionary("s")]
    code = {lab: i for i, lab in enumerate(dic)}
    buckets = [[code[v] for v in vals] for vals in b["buckets"]]
    bucket_of = np.full(len(dic), -1)
    for j, vals in enumerate(buckets):
        bucket_of[vals] = j
    sa = tab.column("s").astype(np.int64)
    labels = res.partition.labels
    recipes = res.stats["recipes"]
    counts = np.zeros((res.partition.n_classes, len(buckets)), dtype=np.int64)
    np.add.at(counts, (labels, bucket_of[sa]), 1)
    assert np.array_equal(counts, recipes)
    g = ground_of(tab)
    du = bucket_ground(buckets, g)
    emds = class_emds(sa, labels, g)
    for c in range(res.partition.n_classes):
        assert emds[c] <= bucket_distance_lp(counts[c], np.array(b["bucket_sizes"]), du) + b["u"] + 1e-9


@settings(max_examples=30)
@given(table_cases)
def test_tmondrian_output_is_k_anonymous_and_t_close(case: tuple[Any, ...]) -> None:
    seed, n, n_qi, m, cat, t, k = case
    tab = random_table(seed, n, n_qi, m, cat)
    k = min(k, n)
    _check_output(tab, tmondrian(tab, [KAnonymity(k), closeness_model(tab, t)]), t, k)


def test_knn_first_class_is_exact_neighbourhood() -> None:
    # One bucket (t = 1): with the deterministic min-key seed, the first class is the seed plus its a - 1
    # nearest rows (Euclidean over the normalised QI space).
    tab = random_table(5, 200, 3, 3, False)
    res = sabre(tab, [KAnonymity(7), closeness_model(tab, 1.0)], method="knn", seed_policy="min_key")
    from anoncore.static._space import qi_space

    sp = qi_space(tab)
    coords = np.stack([sp.values[sp.offsets[j] + sp.codes[:, j]] for j in range(sp.codes.shape[1])], axis=1)
    first = np.flatnonzero(res.partition.labels == 0)
    inside = set(first.tolist())
    # the seed is the member whose distance to every other member is the largest radius's centre: try each
    ok = False
    for x in first:
        dist = np.sqrt(((coords - coords[x]) ** 2).sum(axis=1))
        r = dist[first].max()
        outside = np.array([i for i in range(tab.n_rows) if i not in inside])
        if outside.size == 0 or dist[outside].min() >= r - 1e-12:
            ok = True
            break
    assert ok


@settings(max_examples=25)
@given(st.integers(0, 10**6), st.integers(20, 160), st.integers(1, 4), st.sampled_from([0.15, 0.3, 1.0]),
       st.integers(1, 5), st.sampled_from(["random", "min_key"]))
def test_knn_every_class_is_an_exact_neighbourhood(seed: int, n: int, n_qi: int, t: float, k: int,
                                                    policy: str) -> None:
    # SABRE-KNN materializes the classes in order; when class e is formed, the rows of classes >= e are the
    # remaining ones. Class e is exact iff one of its members x (the seed) has, in every bucket, the class's
    # members of that bucket among its nearest remaining rows: max distance to them <= min distance to the
    # remaining rows of the bucket outside the class (brute force over the normalised QI space).

    tab = random_table(seed, n, n_qi, 6, False)
    res = sabre(tab, [KAnonymity(min(k, n)), closeness_model(tab, t)], method="knn", seed_policy=policy, rng=seed)
    ctx = _knn_context(tab, res)
    for e in range(res.partition.n_classes):
        assert _knn_class_is_exact(ctx, e), f"class {e} is not the seed's exact nearest remaining neighbours"


def _knn_context(tab: Table, res: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Normalised QI coordinates, bucket and class label of every row, for _knn_class_is_exact."""
    from anoncore.static._space import qi_space

    sp = qi_space(tab)
    coords = np.stack([sp.values[sp.offsets[j] + sp.codes[:, j]] for j in range(sp.codes.shape[1])], axis=1)
    dic = [str(int(x)) if isinstance(x, float) and x.is_integer() else str(x) for x in tab.dictionary("s")]
    code = {lab: i for i, lab in enumerate(dic)}
    bucket_of = np.full(len(dic), -1)
    for j, vals in enumerate(res.trace[0]["buckets"]):
        bucket_of[[code[v] for v in vals]] = j
    return coords, bucket_of[tab.column("s").astype(np.int64)], res.partition.labels


def _knn_class_is_exact(ctx: tuple[np.ndarray, np.ndarray, np.ndarray], e: int) -> bool:
    # Brute force over the normalised QI space: one member x of class e (the seed) has, in every bucket, the
    # class's members of that bucket among its nearest rows of classes >= e (the remaining ones when e formed).
    coords, brow, labels = ctx
    members = np.flatnonzero(labels == e)
    others = np.flatnonzero(labels > e)
    for x in members:
        dist = ((coords - coords[x]) ** 2).sum(axis=1)
        good = True
        for b in np.unique(brow[members]):
            inb = members[brow[members] == b]
            outb = others[brow[others] == b]
            if outb.size and dist[inb].max() > dist[outb].min() + 1e-12:
                good = False
                break
        if good:
            return True
    return False


@pytest.mark.parametrize("card", [300, 70_000])
def test_knn_exact_with_wide_code_types(card: int) -> None:
    # The k-d trees store QI codes in the narrowest unsigned type (8, 16 or 32 bits by the largest
    # cardinality): a QI with 300 distinct values takes the 16-bit path, one with 70,000 the 32-bit path.
    # Classes checked by brute force: all of them on the small table, the first, last and 20 random on the big.
    rng = np.random.default_rng(card)
    n = max(card, 600)
    data = {"q0": rng.permutation(n) % card, "q1": rng.integers(0, 4, n), "s": rng.integers(0, 12, n)}
    attrs = (Attribute("q0", "quasi_identifier", "numeric"), Attribute("q1", "quasi_identifier", "numeric"),
             Attribute("s", "sensitive", "numeric"))
    tab = Table.from_pandas(pd.DataFrame(data), Schema(attrs))
    assert tab.cardinality("q0") == card
    res = sabre(tab, [KAnonymity(4), closeness_model(tab, 0.3)], method="knn", rng=3)
    assert res.achieved["passed"] and res.achieved["t"] <= 0.3 and res.partition.class_sizes.min() >= 4
    ctx = _knn_context(tab, res)
    n_classes = res.partition.n_classes
    classes = range(n_classes) if n_classes <= 200 else sorted({0, n_classes - 1, *rng.choice(n_classes, 20).tolist()})
    for e in classes:
        assert _knn_class_is_exact(ctx, e), f"class {e} is not the seed's exact nearest remaining neighbours"


def test_knn_not_worse_than_ak_on_average() -> None:
    # SABRE-KNN picks exact neighbours: its boxes are at most as wide as SABRE-AK's on average (spec §9 D.21).
    tab = random_table(11, 3000, 3, 8, False)
    w = {}
    for method in ("ak", "knn"):
        part = sabre(tab, [KAnonymity(4), closeness_model(tab, 0.3)], method=method, rng=1).partition
        w[method] = float(((part.gen_hi - part.gen_lo)[part.labels]).mean())
    assert w["knn"] <= w["ak"] * 1.05


# --------------------------------------------------------------------------- determinism
@pytest.mark.parametrize("method", ["ak", "knn"])
def test_deterministic_for_a_seed_and_thread_count(method: str) -> None:
    tab = random_table(3, 2000, 3, 10, True, 3)
    a = sabre(tab, [KAnonymity(3), closeness_model(tab, 0.3)], method=method, rng=42, n_threads=1)
    b = sabre(tab, [KAnonymity(3), closeness_model(tab, 0.3)], method=method, rng=42, n_threads=2 if _core.has_openmp else 1)
    c = sabre(tab, [KAnonymity(3), closeness_model(tab, 0.3)], method=method, rng=np.random.default_rng(42))
    assert a == b == c
    d = sabre(tab, [KAnonymity(3), closeness_model(tab, 0.3)], method=method, rng=43)
    assert not np.array_equal(a.partition.labels, d.partition.labels)
    # a different seed changes only the materialization
    assert a.trace == d.trace


def test_tmondrian_deterministic() -> None:
    tab = random_table(4, 500, 3, 6, False)
    assert tmondrian(tab, [KAnonymity(3), closeness_model(tab, 0.3)]) == tmondrian(tab, [KAnonymity(3), closeness_model(tab, 0.3)])


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(("kwargs", "exc", "match"), [
    ({"t": 0.0}, ValueError, r"The 't' parameter of sabre must be a float in the range \(0, 1\]. Got 0.0"),
    ({"t": 1.5}, ValueError, r"range \(0, 1\]. Got 1.5"),
    ({"t": -0.1}, ValueError, r"range \(0, 1\]"),
    ({"t": "0.3"}, TypeError, r"The 't' parameter of sabre must be a float"),
    ({"t": True}, TypeError, r"The 't' parameter"),
    ({"t": 0.3, "k": 0}, ValueError, r"The 'k' parameter of sabre must be an int in the range \[1, 6\]. Got 0"),
    ({"t": 0.3, "k": 7}, ValueError, r"in the range \[1, 6\]. Got 7 instead"),
    ({"t": 0.3, "k": 2.0}, TypeError, r"The 'k' parameter of sabre must be an int"),
    ({"t": 0.3, "method": "exact"}, ValueError, r"The 'method' parameter of sabre must be one of"),
    ({"t": 0.3, "seed_policy": "first"}, ValueError, r"The 'seed_policy' parameter"),
    ({"t": 0.3, "seed_policy": "slices", "method": "knn"}, ValueError, r"variant of method='ak' only"),
    ({"t": 0.3, "rng": "x"}, TypeError, r"The 'rng' parameter of sabre"),
    ({"t": 0.3, "n_threads": 0}, ValueError, r"The 'n_threads' parameter of sabre"),
    ({"t": 0.3, "tight_bound": 1}, TypeError, r"The 'tight_bound' parameter"),
    ({"t": 0.3, "sensitive": "zip"}, ValueError, r"names sensitive attribute 'zip'"),
])
def test_sabre_bad_input(kwargs: dict[str, Any], exc: type[Exception], match: str) -> None:
    with pytest.warns(DeprecationWarning), pytest.raises(exc, match=match):  # the keyword form
        sabre(toy_table(), **kwargs)


@pytest.mark.parametrize(("kwargs", "exc", "match"), [
    ({"t": 0.0}, ValueError, r"The 't' parameter of tmondrian"),
    ({"t": 0.3, "k": 100}, ValueError, r"The 'k' parameter of tmondrian must be an int in the range \[1, 6\]"),
])
def test_tmondrian_bad_input(kwargs: dict[str, Any], exc: type[Exception], match: str) -> None:
    with pytest.warns(DeprecationWarning), pytest.raises(exc, match=match):  # the keyword form
        tmondrian(toy_table(), **kwargs)


def test_bad_table_type() -> None:
    with pytest.warns(DeprecationWarning), pytest.raises(TypeError, match=r"The 'table' parameter of sabre must be an anoncore.Table"):
        sabre(pd.DataFrame({"a": [1]}), t=0.5)  # type: ignore[arg-type]


def test_categorical_sensitive_without_hierarchy_is_refused() -> None:
    tab = toy_table()
    attrs = tuple(dataclasses.replace(a, hierarchy=None) if a.name == "disease" else a for a in tab.attributes)
    bare = dataclasses.replace(tab, schema=dataclasses.replace(tab.schema, attributes=attrs), _cache={})
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match=r"needs a hierarchy for the categorical sensitive attribute 'disease'"):
        sabre(bare, t=0.5)
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match=r"tmondrian needs a hierarchy"):
        tmondrian(bare, t=0.5)


def test_no_sensitive_attribute() -> None:
    tab = Table.from_pandas(pd.DataFrame({"a": [1, 2]}), Schema((Attribute("a", "quasi_identifier", "numeric"),)))
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match=r"sabre needs a sensitive attribute"):
        sabre(tab, t=0.5)


# --------------------------------------------------------------------------- utility measures
def test_count_queries_equal_reference() -> None:
    from oracles.sabre import count_estimate_reference, count_exact_reference

    from anoncore.workload import count_query_error

    tab = random_table(8, 80, 3, 5, False)
    part = sabre(tab, [KAnonymity(3), closeness_model(tab, 0.4)], rng=0).partition
    rng = np.random.default_rng(1)
    Q, lam = 40, 2
    dims = np.ascontiguousarray(np.array([np.sort(rng.choice(3, lam, replace=False)) for _ in range(Q)]),
                                dtype=np.int32)
    cards = np.array([tab.cardinality(q) for q in tab.quasi_identifiers])
    lo = rng.integers(0, cards[dims]).astype(np.int32)
    hi = np.minimum(lo + rng.integers(0, 5, lo.shape), cards[dims] - 1).astype(np.int32)
    m = tab.cardinality("s")
    sa = tab.column("s")
    sa_lo = rng.integers(0, m, Q).astype(np.int32)
    sa_hi = np.minimum(sa_lo + 2, m - 1).astype(np.int32)
    C = part.n_classes
    hist = np.bincount(part.labels * m + sa, minlength=C * m).reshape(C, m)
    prefix = np.zeros((C, m + 1), dtype=np.int64)
    prefix[:, 1:] = np.cumsum(hist, axis=1)
    exact, est = _core.workload.count_queries(tab.qi_codes(), sa, np.ascontiguousarray(part.gen_lo),
                                  np.ascontiguousarray(part.gen_hi), prefix, dims, lo, hi, sa_lo, sa_hi, 1)
    qi = tab.qi_codes()
    np.testing.assert_array_equal(exact, count_exact_reference(qi, sa, dims, lo, hi, sa_lo, sa_hi))
    np.testing.assert_allclose(est, count_estimate_reference(part.labels, sa, part.gen_lo, part.gen_hi, dims, lo,
                                                             hi, sa_lo, sa_hi), rtol=1e-12)
    # public wrapper: same seed, same workload; a finer partition answers better than the whole table
    fine = count_query_error(part, n_queries=300, rng=5)
    whole = count_query_error(sabre(tab, [KAnonymity(80), closeness_model(tab, 0.4)], rng=0).partition, n_queries=300, rng=5)
    assert fine == count_query_error(part, n_queries=300, rng=5)
    assert 0 <= fine <= whole


@pytest.mark.parametrize("level", [1, 2, 3])
def test_olap_kl_equals_reference(level: int) -> None:
    import itertools

    from oracles.sabre import olap_kl_reference

    from anoncore.workload import olap_kl

    tab = random_table(9, 60, 3, 4, True)
    part = sabre(tab, [KAnonymity(4), closeness_model(tab, 0.5)], rng=0).partition
    cards = [tab.cardinality(q) for q in tab.quasi_identifiers]
    want = np.mean([olap_kl_reference(tab.qi_codes(), tab.column("s"), part.labels, part.gen_lo, part.gen_hi, sub,
                                      cards, tab.cardinality("s"))
                    for sub in itertools.combinations(range(3), level)])
    got = olap_kl(part, level=level)
    assert got == pytest.approx(want, rel=1e-9, abs=1e-12)
    assert np.isfinite(got) and got >= 0


@pytest.mark.slow
def test_deterministic_across_threads_with_parallel_sort() -> None:
    # More than 2^16 rows per bucket: the key sort runs in parallel chunks and merges.
    rng = np.random.default_rng(0)
    n = 150_000
    df = pd.DataFrame({"a": rng.integers(0, 90, n), "b": rng.integers(0, 50, n), "s": rng.integers(0, 6, n)})
    tab = Table.from_pandas(df, Schema((Attribute("a", "quasi_identifier", "numeric"),
                                        Attribute("b", "quasi_identifier", "numeric"),
                                        Attribute("s", "sensitive", "numeric"))))
    one = sabre(tab, [KAnonymity(4), closeness_model(tab, 0.3)], rng=5, n_threads=1)
    two = sabre(tab, [KAnonymity(4), closeness_model(tab, 0.3)], rng=5, n_threads=2 if _core.has_openmp else 1)
    assert one == two and one.achieved["passed"]


@settings(max_examples=40)
@given(st.integers(0, 10**6), st.integers(1, 80), st.integers(1, 3))
def test_mondrian_without_constraints_separates_distinct_points(seed: int, n: int, n_qi: int) -> None:
    # With k = 1 and t = 1 every partition holding two distinct QI vectors can be cut, so the classes are exactly
    # the distinct QI vectors.
    tab = random_table(seed, n, n_qi, 3, False)
    part = tmondrian(tab, [KAnonymity(1), closeness_model(tab, 1.0)]).partition
    _, inv = np.unique(tab.qi_codes(), axis=0, return_inverse=True)
    assert part.n_classes == inv.max() + 1
    for c in range(part.n_classes):
        assert np.unique(inv.reshape(-1)[part.labels == c]).size == 1


def _reference_hierarchy_mondrian(tab: Table, k: int) -> np.ndarray:
    """Literal recursive Mondrian under k-anonymity only, with hierarchy-based categorical splits: widest
    normalised dimension first (ties: lower index), numeric median cut (left <= median; < median when the right
    would be empty), categorical: the children of the LCA of the present codes; first acceptable dimension."""
    from anoncore.static._space import qi_space

    sp = qi_space(tab)
    codes = tab.qi_codes()
    qs = tab.quasi_identifiers
    hier = [tab.hierarchy(q) if tab.attribute(q).kind != "numeric" else None for q in qs]
    labels = np.full(tab.n_rows, -1, dtype=np.int64)
    counter = [0]

    def coord(j: int, c: int) -> float:
        return float(sp.values[sp.offsets[j] + c])

    def parts_of(rows: np.ndarray, j: int) -> list[np.ndarray]:
        v = codes[rows, j]
        lo, hi = int(v.min()), int(v.max())
        h = hier[j]
        if h is None:
            cut = int(np.sort(v)[(v.size - 1) // 2])
            if cut >= hi:
                cut = int(v[v < cut].max())
            return [rows[v <= cut], rows[v > cut]]
        node = lo
        while not (h.leaf_start[node] <= lo and h.leaf_start[node] + h.leaf_count[node] > hi):
            node = int(h.parent[node])
        kids = sorted((int(c) for c in np.flatnonzero(h.parent == node)), key=lambda c: int(h.leaf_start[c]))
        out = [rows[(v >= h.leaf_start[c]) & (v < h.leaf_start[c] + h.leaf_count[c])] for c in kids]
        return [p for p in out if p.size]

    def rec(rows: np.ndarray) -> None:
        lo, hi = codes[rows].min(axis=0), codes[rows].max(axis=0)
        width = [coord(j, int(hi[j])) - coord(j, int(lo[j])) for j in range(len(qs))]
        for j in sorted(range(len(qs)), key=lambda x: -width[x]):
            if lo[j] == hi[j]:
                break
            parts = parts_of(rows, j)
            if len(parts) >= 2 and all(p.size >= k for p in parts):
                for p in parts:
                    rec(p)
                return
        labels[rows] = counter[0]
        counter[0] += 1

    rec(np.arange(tab.n_rows))
    return labels


@settings(max_examples=40)
@given(st.integers(0, 10**6), st.integers(1, 120), st.integers(1, 4), st.integers(1, 6))
def test_hierarchy_split_equals_reference(seed: int, n: int, n_qi: int, k: int) -> None:
    tab = random_table(seed, n, n_qi, 4, False)
    k = min(k, n)
    res = tmondrian(tab, [KAnonymity(k), closeness_model(tab, 1.0)], categorical_split="hierarchy")
    assert np.array_equal(res.partition.labels, _reference_hierarchy_mondrian(tab, k))
    assert res.achieved["passed"] and res.parameters["categorical_split"] == "hierarchy"


@settings(max_examples=30)
@given(table_cases)
def test_tmondrian_hierarchy_split_is_k_anonymous_and_t_close(case: tuple[Any, ...]) -> None:
    seed, n, n_qi, m, cat, t, k = case
    tab = random_table(seed, n, n_qi, m, cat)
    k = min(k, n)
    _check_output(tab, tmondrian(tab, [KAnonymity(k), closeness_model(tab, t)], categorical_split="hierarchy"), t, k)


def test_hierarchy_split_bad_option() -> None:
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="The 'categorical_split' parameter of tmondrian"):
        tmondrian(toy_table(), t=0.5, k=2, categorical_split="lca")


def test_mondrian_kernel_rejects_unknown_model() -> None:
    from anoncore.static._space import qi_space, sensitive_info

    tab = toy_table()
    sp, sa = qi_space(tab), sensitive_info(tab, None, "test")
    with pytest.raises(ValueError, match="unknown Mondrian model 'beta'"):
        _core.mondrian.partition(sp.codes, sp.values, sp.offsets, sa.codes, sa.m, [("beta", 1.0)],
                                 sa.hierarchy_arrays)


def test_from_labels_fast_path_equals_renumbering() -> None:
    # Partition.from_labels skips the sort when labels are already dense 0..C-1 (SABRE's kernel output): the
    # result must equal the general renumbering path, and the caller's array must stay writeable.
    from anoncore.results import Partition

    tab = random_table(2, 200, 3, 5, False)
    lab = np.random.default_rng(0).integers(0, 17, tab.n_rows)
    lab = np.unique(lab, return_inverse=True)[1].astype(np.int64)  # dense
    fast = Partition.from_labels(tab, lab)
    slow = Partition.from_labels(tab, lab * 3 + 7)  # same grouping, not dense: the np.unique path
    assert fast == slow and np.array_equal(fast.labels, lab)
    assert lab.flags.writeable
    gap = lab.copy()
    gap[gap == 5] = 4  # label 5 missing: not dense, must be renumbered
    assert Partition.from_labels(tab, gap).n_classes == int(lab.max())


def test_docs_page_example() -> None:
    # The runnable example of docs/sabre.md (the page is not a docstring, so test_doctests does not see it).
    import doctest
    from pathlib import Path

    page = Path(__file__).resolve().parents[1] / "docs" / "sabre.md"
    res = doctest.testfile(str(page), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert res.attempted >= 4 and res.failed == 0


# ------------------------------------------------------------------ retrieval sort (radix) vs numpy lexsort
def _lexsort_oracle(bucket: np.ndarray, keys: np.ndarray) -> np.ndarray:
    rows = np.arange(len(keys), dtype=np.int64)
    return np.lexsort((rows, keys, bucket))  # last key is primary: (bucket, key, row)


@pytest.mark.parametrize("key_kind", ["few", "wide", "high_bits", "constant", "full64"])
@pytest.mark.parametrize("n", [0, 1, 7, 70_000, 200_003])
def test_sort_bucket_key_row_matches_lexsort(key_kind: str, n: int) -> None:
    rng = np.random.default_rng(n * 31 + len(key_kind))
    nb = int(rng.integers(1, 40))
    bucket = rng.integers(0, nb, size=n).astype(np.int32)
    if key_kind == "few":  # few distinct grid cells, many duplicates
        keys = rng.choice(np.array([3, 17, 17 << 20, 5 << 40, 2**64 - 1], dtype=np.uint64), size=n)
    elif key_kind == "wide":  # many distinct values and some duplicates
        keys = rng.integers(0, 2**40, size=n, dtype=np.uint64) | (rng.integers(0, 2, size=n, dtype=np.uint64) << 63)
        keys[: n // 3] = keys[n // 3 : 2 * (n // 3)]
    elif key_kind == "high_bits":  # only the top bits vary (the skipped-constant-bits path)
        keys = (rng.integers(0, 8, size=n, dtype=np.uint64) << 61) | np.uint64(12345)
    elif key_kind == "constant":
        keys = np.full(n, 99, dtype=np.uint64)
    else:
        keys = rng.integers(0, 2**64 - 1, size=n, dtype=np.uint64, endpoint=True)
        if n > 0:  # duplicates
            keys[rng.integers(0, n, size=n // 4)] = keys[rng.integers(0, n, size=n // 4)]
    want = _lexsort_oracle(bucket, keys)
    for threads in (1, 2):
        rows, sorted_keys = tw.sort_bucket_key_row(bucket, nb, keys, threads)
        np.testing.assert_array_equal(rows, want)
        np.testing.assert_array_equal(sorted_keys, keys[want])


def test_sort_bucket_key_row_rejects_bad_bucket() -> None:
    with pytest.raises(ValueError, match="bucket_of_row"):
        tw.sort_bucket_key_row(np.array([0, 3], dtype=np.int32), 2, np.array([1, 2], dtype=np.uint64), 1)


@pytest.mark.parametrize(("d", "bits"), [(1, 5), (2, 4), (3, 7), (7, 7), (9, 7), (20, 3)])
def test_hilbert_index_matches_literal_skilling(d: int, bits: int) -> None:
    rng = np.random.default_rng(d * 100 + bits)
    cells = rng.integers(0, 1 << bits, size=(300, d)).astype(np.uint32)
    cells[0], cells[1], cells[2] = 0, (1 << bits) - 1, 1  # corners and a low cell
    keys = tw.hilbert_index(np.ascontiguousarray(cells), bits)
    want = [hilbert_index_reference(list(c), bits) for c in cells]
    assert [int(k) for k in keys] == want
