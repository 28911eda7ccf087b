"""Distance kernels and SABRE bounds against the LP / brute-force oracles of tests/oracles/distance.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import distance as oracle

from anoncore import Hierarchy, _core
from anoncore.distance import (
    bucket_emd,
    cet_upper_bounds,
    emd_equal,
    emd_hierarchical,
    emd_ordered,
    hellinger,
    js_divergence,
    kl_divergence,
)

D = _core.distance
C = _core.criteria


def random_hierarchy(rng: np.random.Generator, n_leaves: int) -> Hierarchy:
    """A random, usually unbalanced tree: repeatedly put a run of 1-3 adjacent nodes under a new parent."""
    nodes = [f"v{i}" for i in range(n_leaves)]
    parents: dict[str, str] = {}
    k = 0
    while len(nodes) > 1:
        size = int(rng.integers(1, min(3, len(nodes)) + 1))
        if size == 1 and rng.random() < 0.7:
            size = 2 if len(nodes) >= 2 else 1
        start = int(rng.integers(0, len(nodes) - size + 1))
        new = f"n{k}"
        k += 1
        for x in nodes[start:start + size]:
            parents[x] = new
        nodes[start:start + size] = [new]
    if not parents:
        parents["v0"] = "root"
    return Hierarchy.from_parent_map(parents)


def random_case(rng: np.random.Generator, m: int, n_classes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Reference counts (some values absent) and class histograms within the reference support."""
    ref = rng.integers(0, 6, size=m).astype(np.int64)
    ref[rng.integers(0, m)] += 1
    support = np.flatnonzero(ref)
    hist = np.zeros((n_classes, m), dtype=np.int64)
    for c in range(n_classes):
        vals = rng.choice(support, size=int(rng.integers(1, 8)))
        np.add.at(hist[c], vals, 1)
    return ref, hist, hist.sum(axis=1)


def _p(ref: np.ndarray) -> np.ndarray:
    return ref / ref.sum()


@pytest.mark.parametrize("kind", ["equal", "ordered", "hierarchical"])
def test_class_kernels_equal_lp_emd(kind: str, seed: int) -> None:
    rng = np.random.default_rng([seed, 1])
    n_cases = 0
    for _ in range(40):
        m = int(rng.integers(2, 9))
        ref, hist, sizes = random_case(rng, m, 5)
        if kind == "equal":
            got = D.emd_equal_classes(hist, sizes, ref, 1)
            want = [oracle.emd_equal(_p(ref), hist[c] / sizes[c]) for c in range(5)]
        elif kind == "ordered":
            got = D.emd_ordered_classes(hist, sizes, ref, 1)
            # Only values present in the reference count (the class support is inside it).
            want = [oracle.emd_lp(_p(ref), hist[c] / sizes[c], oracle.ordered_ground(ref > 0)) for c in range(5)]
        else:
            h = random_hierarchy(rng, m)
            got = D.emd_hierarchical_classes(hist, sizes, ref, h.parent, h.node_height, h.n_leaves, 1)
            want = [oracle.emd_hierarchical(_p(ref), hist[c] / sizes[c], list(h.parent), h.n_leaves)
                    for c in range(5)]
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
        n_cases += 5
    assert n_cases == 200


def test_pair_helpers_equal_lp_and_definitions(seed: int) -> None:
    rng = np.random.default_rng([seed, 2])
    for _ in range(60):
        m = int(rng.integers(2, 8))
        p = rng.random(m) * (rng.random(m) < 0.8)
        q = rng.random(m) * (rng.random(m) < 0.8)
        p[0] += 0.1
        q[-1] += 0.1
        p, q = p / p.sum(), q / q.sum()
        h = random_hierarchy(rng, m)
        assert emd_equal(p, q) == pytest.approx(oracle.emd_equal(p, q), rel=1e-9, abs=1e-12)
        assert emd_ordered(p, q) == pytest.approx(oracle.emd_ordered(p, q), rel=1e-9, abs=1e-12)
        assert emd_hierarchical(p, q, h) == pytest.approx(
            oracle.emd_hierarchical(p, q, list(h.parent), h.n_leaves), rel=1e-9, abs=1e-12)
        assert hellinger(p, q) == pytest.approx(oracle.hellinger(p, q), rel=1e-12, abs=1e-15)
        assert kl_divergence(p, q, base=3) == pytest.approx(oracle.kl(p, q, 3), rel=1e-12, abs=1e-15)
        assert js_divergence(p, q) == pytest.approx(oracle.js(p, q), rel=1e-12, abs=1e-15)


def test_class_kl_js_hellinger_match_definitions(seed: int) -> None:
    rng = np.random.default_rng([seed, 3])
    ref, hist, sizes = random_case(rng, 7, 30)
    p = _p(ref)
    qs = [hist[c] / sizes[c] for c in range(30)]
    np.testing.assert_allclose(D.hellinger_classes(hist, sizes, ref, 1), [oracle.hellinger(p, q) for q in qs],
                               rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(D.kl_classes(hist, sizes, ref, 2.0, 1), [oracle.kl(q, p) for q in qs],
                               rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(D.js_classes(hist, sizes, ref, 2.0, 1), [oracle.js(q, p) for q in qs],
                               rtol=1e-10, atol=1e-15)


def test_empty_classes_are_nan() -> None:
    hist = np.array([[0, 0], [1, 1]], dtype=np.int64)
    sizes = hist.sum(axis=1)
    ref = np.array([1, 1], dtype=np.int64)
    for f in (D.emd_equal_classes, D.emd_ordered_classes, D.hellinger_classes):
        out = f(hist, sizes, ref, 1)
        assert math.isnan(out[0]) and out[1] == 0.0


def test_threads_do_not_change_results() -> None:
    rng = np.random.default_rng(7)
    ref, hist, sizes = random_case(rng, 12, 20000)  # above the kernels' serial cut-off
    h = random_hierarchy(rng, 12)
    for f in (D.emd_equal_classes, D.emd_ordered_classes, D.hellinger_classes):
        assert np.array_equal(f(hist, sizes, ref, 1), f(hist, sizes, ref, 2))
    a = D.emd_hierarchical_classes(hist, sizes, ref, h.parent, h.node_height, h.n_leaves, 1)
    b = D.emd_hierarchical_classes(hist, sizes, ref, h.parent, h.node_height, h.n_leaves, 2)
    assert np.array_equal(a, b)


# ------------------------------------------------------------------------------------- SABRE bounds
def _random_partition_of(rng: np.random.Generator, items: list[int]) -> list[list[int]]:
    rng.shuffle(items)
    k = int(rng.integers(1, len(items) + 1))
    cuts = sorted(rng.choice(np.arange(1, len(items)), size=k - 1, replace=False)) if k > 1 else []
    return [list(x) for x in np.split(np.array(items), cuts) if len(x)]


def test_cet_upper_ordered_is_the_bruteforce_maximum(seed: int) -> None:
    # Theorem 3.2 (numerical): tight for every bucket, contiguous or not.
    rng = np.random.default_rng([seed, 4])
    for _ in range(40):
        m = int(rng.integers(2, 9))
        ref = rng.integers(0, 5, size=m).astype(np.int64)
        ref[0] += 1
        buckets = _random_partition_of(rng, list(range(m)))
        bucket_of = np.zeros(m, dtype=np.int32)
        for i, b in enumerate(buckets):
            bucket_of[b] = i
        got = cet_upper_bounds(ref, bucket_of)
        d = oracle.ordered_ground(ref > 0)
        want = [oracle.cet_upper_bruteforce(list(ref), b, d) for b in buckets]
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_cet_upper_hierarchical_bounds_and_is_tight_where_the_thesis_says(seed: int) -> None:
    rng = np.random.default_rng([seed, 5])
    n_tight = n_loose = 0
    for _ in range(40):
        m = int(rng.integers(2, 9))
        ref = rng.integers(0, 5, size=m).astype(np.int64)
        ref[int(rng.integers(0, m))] += 1
        h = random_hierarchy(rng, m)
        parent = list(h.parent)
        buckets = _random_partition_of(rng, list(range(m)))
        bucket_of = np.zeros(m, dtype=np.int32)
        for i, b in enumerate(buckets):
            bucket_of[b] = i
        d = oracle.hierarchical_ground(parent, m)
        brute = np.array([oracle.cet_upper_bruteforce(list(ref), b, d) for b in buckets])
        thesis = cet_upper_bounds(ref, bucket_of, h)
        tight = cet_upper_bounds(ref, bucket_of, h, tight=True)
        np.testing.assert_allclose(tight, brute, rtol=1e-9, atol=1e-12)
        assert np.all(thesis >= brute - 1e-12)
        for i, b in enumerate(buckets):
            present = [v for v in b if ref[v] > 0]
            if len(present) < 2:
                continue
            top = oracle.lca(parent, present[0], present[0])
            for v in present[1:]:
                top = oracle.lca(parent, top, v)
            if all(oracle.lca(parent, a, c) == top for a in present for c in present if a != c):
                assert thesis[i] == pytest.approx(brute[i], rel=1e-9, abs=1e-12)
                n_tight += 1
            else:
                n_loose += 1
    assert n_tight > 0 and n_loose > 0


def test_thesis_bound_is_loose_on_the_spec_counterexample() -> None:
    # sabre-burel.md §3.1: n with children {a1, a2} and {b1, b2}, p = (.1, .2, .3, .4): thesis 0.9, exact 0.8.
    h = Hierarchy.from_nested({"n": {"a": ["a1", "a2"], "b": ["b1", "b2"]}})
    ref = np.array([1, 2, 3, 4], dtype=np.int64)
    assert cet_upper_bounds(ref, [0, 0, 0, 0], h)[0] == pytest.approx(0.9, abs=1e-15)
    assert cet_upper_bounds(ref, [0, 0, 0, 0], h, tight=True)[0] == pytest.approx(0.8, abs=1e-15)


def _random_antichain(rng: np.random.Generator, h: Hierarchy) -> list[int]:
    out: list[int] = []
    stack = [h.root]
    while stack:
        v = stack.pop()
        kids = h.children(v)
        if kids and rng.random() < 0.6:
            stack.extend(kids)
        else:
            out.append(v)
    return out


def test_bucket_emd_closed_forms_equal_lp(seed: int) -> None:
    rng = np.random.default_rng([seed, 6])
    for _ in range(30):
        m = int(rng.integers(2, 9))
        ref = rng.integers(1, 5, size=m).astype(np.int64)
        # Ordered: contiguous runs.
        cuts = sorted(rng.choice(np.arange(1, m), size=int(rng.integers(0, m)), replace=False))
        runs = [list(x) for x in np.split(np.arange(m), cuts)]
        bucket_of = np.concatenate([[i] * len(r) for i, r in enumerate(runs)]).astype(np.int32)
        counts = rng.integers(0, 4, size=(4, len(runs)))
        counts[:, 0] += 1
        totals = [int(ref[r].sum()) for r in runs]
        du = oracle.bucket_ground(runs, oracle.ordered_ground(ref > 0))
        np.testing.assert_allclose(bucket_emd(counts, ref, bucket_of),
                                   [oracle.bucket_emd(c, totals, du) for c in counts], rtol=1e-9, atol=1e-12)
        # Hierarchical: an antichain of nodes covering every leaf.
        h = random_hierarchy(rng, m)
        nodes = _random_antichain(rng, h)
        groups = [list(range(h.leaf_start[v], h.leaf_start[v] + h.leaf_count[v])) for v in nodes]
        bucket_of = np.zeros(m, dtype=np.int32)
        for i, g in enumerate(groups):
            bucket_of[g] = i
        counts = rng.integers(0, 4, size=(4, len(groups)))
        counts[:, 0] += 1
        totals = [int(ref[g].sum()) for g in groups]
        du = oracle.bucket_ground(groups, oracle.hierarchical_ground(list(h.parent), m))
        np.testing.assert_allclose(bucket_emd(counts, ref, bucket_of, h),
                                   [oracle.bucket_emd(c, totals, du) for c in counts], rtol=1e-9, atol=1e-12)


# ------------------------------------------------------------------------- merging never hurts
@st.composite
def merge_case(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, int]:
    m = draw(st.integers(2, 7))
    ref = np.array(draw(st.lists(st.integers(1, 9), min_size=m, max_size=m)), dtype=np.int64)
    rows = [draw(st.lists(st.integers(0, 4), min_size=m, max_size=m)) for _ in range(2)]
    hist = np.array(rows, dtype=np.int64)
    hist[:, draw(st.integers(0, m - 1))] += 1
    return ref, hist, draw(st.integers(0, 2**31))


@settings(max_examples=150, deadline=None, derandomize=True)
@given(merge_case())
def test_merging_two_classes_never_exceeds_the_larger(case: tuple[np.ndarray, np.ndarray, int]) -> None:
    # Li et al. 2007 / spec sabre-burel.md §2.3 Lemma 4.1 and §9 item 18: EMD and beta are quasi-convex in Q.
    ref, pair, hseed = case
    hist = np.vstack([pair, pair.sum(axis=0)])
    sizes = hist.sum(axis=1)
    h = random_hierarchy(np.random.default_rng(hseed), ref.size)
    outs = [
        D.emd_equal_classes(hist, sizes, ref, 1),
        D.emd_ordered_classes(hist, sizes, ref, 1),
        D.emd_hierarchical_classes(hist, sizes, ref, h.parent, h.node_height, h.n_leaves, 1),
        D.hellinger_classes(hist, sizes, ref, 1),
        C.beta_likeness(hist, sizes, ref, False, 1),
        C.beta_likeness(hist, sizes, ref, True, 1),
        C.delta_disclosure(hist, sizes, ref, 1),
    ]
    for out in outs:
        assert out[2] <= max(out[0], out[1]) * (1 + 1e-12) + 1e-12


def test_bucket_emd_generic_fallback_equals_lp(seed: int) -> None:
    # Buckets a closed form cannot handle: arbitrary value sets (spec sabre-burel.md §3.3 "fall back to a small LP").
    rng = np.random.default_rng([seed, 8])
    for _ in range(25):
        m = int(rng.integers(3, 9))
        ref = rng.integers(1, 5, size=m).astype(np.int64)
        groups = _random_partition_of(rng, list(range(m)))
        bucket_of = np.zeros(m, dtype=np.int32)
        for i, g in enumerate(groups):
            bucket_of[g] = i
        counts = rng.integers(0, 4, size=(3, len(groups)))
        counts[:, 0] += 1
        totals = [int(ref[g].sum()) for g in groups]
        h = random_hierarchy(rng, m)
        for hier, d in ((None, oracle.ordered_ground(ref > 0)),
                        (h, oracle.hierarchical_ground(list(h.parent), m))):
            du = oracle.bucket_ground(groups, d)
            want = [oracle.bucket_emd(c, totals, du) for c in counts]
            np.testing.assert_allclose(bucket_emd(counts, ref, bucket_of, hier), want, rtol=1e-8, atol=1e-9)
            np.testing.assert_allclose(bucket_emd(counts, ref, bucket_of, hier, method="general"), want,
                                       rtol=1e-8, atol=1e-9)


def test_generic_solver_agrees_with_closed_forms(seed: int) -> None:
    rng = np.random.default_rng([seed, 9])
    for _ in range(30):
        m = int(rng.integers(2, 9))
        ref = rng.integers(1, 5, size=m).astype(np.int64)
        h = random_hierarchy(rng, m)
        nodes = _random_antichain(rng, h)
        bucket_of = np.zeros(m, dtype=np.int32)
        for i, v in enumerate(nodes):
            bucket_of[h.leaf_start[v]:h.leaf_start[v] + h.leaf_count[v]] = i
        counts = rng.integers(0, 5, size=(6, len(nodes)))
        counts[:, -1] += 1
        np.testing.assert_allclose(bucket_emd(counts, ref, bucket_of, h, method="general"),
                                   bucket_emd(counts, ref, bucket_of, h, method="closed_form"), rtol=1e-12,
                                   atol=1e-15)


@pytest.mark.parametrize(("call", "exc", "match"), [
    (lambda: emd_equal([0.5, 0.5], [1.0]), ValueError, "same length"),
    (lambda: emd_equal([-1, 2], [1, 1]), ValueError, "'p' parameter of emd_equal"),
    (lambda: emd_ordered([0, 0], [1, 1]), ValueError, "positive sum"),
    (lambda: hellinger("ab", [1, 1]), TypeError, "'p' parameter of hellinger"),
    (lambda: emd_hierarchical([1, 1], [1, 1], {"a": None}), TypeError, "must be a Hierarchy"),
    (lambda: emd_hierarchical([1, 1], [1, 1], Hierarchy.from_nested({"*": ["a", "b", "c"]})), ValueError,
     "3 leaves"),
    (lambda: kl_divergence([1, 1], [1, 1], base=1), ValueError, "'base' parameter of kl_divergence"),
    (lambda: js_divergence([1, 1], [1, 1], base="e"), TypeError, "'base' parameter of js_divergence"),
    (lambda: cet_upper_bounds([1.5, 2.0], [0, 0]), TypeError, "integer counts"),
    (lambda: cet_upper_bounds([1, 2], [0]), ValueError, r"shape \(2,\)"),
    (lambda: cet_upper_bounds([1, 2], [-1, -1]), ValueError, "assigns no value"),
    (lambda: cet_upper_bounds([1, 2], [0, 1], tight=1), TypeError, "'tight' parameter"),
    (lambda: bucket_emd([[1, 1]], [1, 2, 3], [0, 1, 0], method="closed_form"), ValueError, "contiguous"),
    (lambda: bucket_emd([[1, 1]], [1, 2, 3], [0, 1, 1], method="fast"), ValueError, "'method' parameter"),
    (lambda: bucket_emd([[1, 1, 1]], [1, 2, 3], [0, 1, 1]), ValueError, "must have 2 columns"),
    (lambda: bucket_emd([[1, 1]], [1, 2, 3], [0, 1, -1]), ValueError, "must be in a bucket"),
    (lambda: bucket_emd([[1, 1]], [1, 2, 3], [0, 0, 0, 1][:3], n_threads=0), ValueError, "must have 1 columns"),
    (lambda: bucket_emd([[1, 1]], [1, 2, 3], [0, 1, 1], n_threads=0), ValueError, "'n_threads' parameter"),
])
def test_bad_input(call: object, exc: type, match: str) -> None:
    with pytest.raises(exc, match=match):
        call()  # type: ignore[operator]
