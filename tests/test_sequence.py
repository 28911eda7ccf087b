"""Property and validation tests for anoncore.sequence (spec sequence-sanitization.md §7)."""

from __future__ import annotations

import itertools
import math
import re
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import sequence as oracle
from oracles.sequence import S_A, TOY_TREE

import anoncore
from anoncore.data.hierarchy import Hierarchy
from anoncore.sequence import (
    cost_table,
    count_patterns,
    lcgp,
    mutual_information,
    pair_table,
    pattern_entropy,
    sample_sensitive_patterns,
    sanitize,
    sanitize_sequence,
    total_embeddings,
    utility_loss,
)
from anoncore.sequence._problem import UserProblem
from anoncore.sequence._taxonomy import as_tax
from anoncore.sequence.lcgp import lcgp_passes, lcgp_union_find

SETTINGS = settings(deadline=None, derandomize=True, max_examples=60)

TOY = Hierarchy.from_nested(TOY_TREE)


# ---------------------------------------------------------------------------------------------- strategies
@st.composite
def taxonomies(draw: st.DrawFn, max_leaves: int = 5) -> Hierarchy:
    """Random trees of height <= 3: leaves under the root or under one of up to 3 categories (nested)."""
    n_leaves = draw(st.integers(2, max_leaves))
    n_cat = draw(st.integers(0, 3))
    parents: dict[str, str] = {}
    for c in range(n_cat):
        parents[f"c{c}"] = draw(st.sampled_from(["root"] + [f"c{j}" for j in range(c)]))
    for a in range(n_leaves):
        parents[f"x{a}"] = draw(st.sampled_from(["root"] + [f"c{j}" for j in range(n_cat)]))
    return Hierarchy.from_parent_map(parents)


@st.composite
def instances(
    draw: st.DrawFn, max_n: int = 8, max_m: int = 2
) -> tuple[Hierarchy, list[int], list[tuple[int, ...]], int]:
    tax = draw(taxonomies())
    L = tax.n_leaves
    n = draw(st.integers(0, max_n))
    seq = draw(st.lists(st.integers(0, L - 1), min_size=n, max_size=n))
    m = draw(st.integers(1, max_m))
    w = draw(st.integers(m - 1, 5))
    k = draw(st.integers(1, 3))
    pats = draw(st.lists(st.tuples(*[st.integers(0, L - 1)] * m), min_size=k, max_size=k))
    return tax, seq, pats, w


def random_map(tax: Hierarchy, draw: st.DrawFn) -> list[int]:
    t = as_tax(tax, "test")
    return [draw(st.sampled_from(t.paths[a])) for a in range(tax.n_leaves)]


def parent_list(tax: Hierarchy) -> list[int]:
    return [int(x) for x in tax.parent]


def cost_lists(tax: Hierarchy, family: str = "linear") -> list[list[float]]:
    return cost_table(tax, family).tolist()


# ---------------------------------------------------------------------------------------------- counting
@SETTINGS
@given(data=st.data())
def test_count_equals_enumeration_of_index_tuples(data: st.DataObject) -> None:
    tax, seq, pats, w = data.draw(instances(max_n=10, max_m=4))
    h = random_map(tax, data.draw)
    img = [tuple(h[x] for x in p) for p in pats]
    got = count_patterns([seq], tax, pats + img, w, generalization=h)[0]
    gen = [h[x] for x in seq]
    want = [
        oracle.count_embeddings(gen, [h[x] for x in p], w) if False else oracle.count_embeddings(gen, p, w)
        for p in pats
    ]
    want += [oracle.count_embeddings(gen, q, w) for q in img]
    assert got.tolist() == want


@SETTINGS
@given(data=st.data())
def test_counts_over_all_patterns_sum_to_total(data: st.DataObject) -> None:
    tax, seq, _, w = data.draw(instances(max_n=9))
    m = data.draw(st.integers(1, min(3, w + 1)))
    L = tax.n_leaves
    allq = list(itertools.product(range(L), repeat=m))
    got = count_patterns([seq], tax, allq, w)[0]
    N = total_embeddings(len(seq), w, m)
    assert int(got.sum()) == N == oracle.total_tuples(len(seq), w, m)


@SETTINGS
@given(st.integers(0, 40), st.integers(0, 12), st.integers(1, 5))
def test_total_embeddings_matches_enumeration(n: int, w: int, m: int) -> None:
    if math.comb(n, m) > 20000:
        return
    assert total_embeddings(n, w, m) == oracle.total_tuples(n, w, m)


def test_batch_counting_is_per_user_and_thread_invariant() -> None:
    rng = np.random.default_rng(3)
    seqs = [rng.integers(0, 6, rng.integers(0, 200)).astype(np.int32) for _ in range(37)]
    pats = [(0, 1), (2, 2), (9, 9), (6, 7)]
    h = np.array([6, 6, 7, 7, 4, 9], dtype=np.int32)
    c1 = count_patterns(seqs, TOY, pats, 4, generalization=h, n_threads=1)
    c4 = count_patterns(seqs, TOY, pats, 4, generalization=h, n_threads=4)
    np.testing.assert_array_equal(c1, c4)
    for u in (0, 5, 36):
        gen = h[seqs[u]].tolist()
        assert c1[u].tolist() == [oracle.count_embeddings(gen, p, 4) for p in pats]
    # the dense pair table agrees with direct counting
    T = pair_table(seqs, TOY, 4)
    direct = count_patterns(seqs, TOY, [(a, b) for a in range(6) for b in range(6)], 4)
    np.testing.assert_array_equal(T.reshape(len(seqs), -1), direct)


# ---------------------------------------------------------------------------------------------- privacy measure
@SETTINGS
@given(data=st.data())
def test_mutual_information_matches_oracle_and_bounds(data: st.DataObject) -> None:
    tax, seq, pats, w = data.draw(instances(max_n=8))
    h = random_map(tax, data.draw)
    mi = mutual_information(seq, tax, pats, w, h)
    H = pattern_entropy(seq, tax, pats, w)
    np.testing.assert_allclose(mi, oracle.mutual_information(seq, pats, w, h), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(H, oracle.entropy(seq, pats, w), rtol=1e-12, atol=1e-15)
    assert -1e-12 <= mi <= H + 1e-12
    assert mutual_information(seq, tax, pats, w, list(range(tax.n_leaves))) == pytest.approx(H, abs=1e-12)
    assert mutual_information(seq, tax, pats, w, [tax.root] * tax.n_leaves) == pytest.approx(0.0, abs=1e-12)
    # the ratio Ĩ/H̃ does not depend on the log base
    if H > 0:
        r_e = mutual_information(seq, tax, pats, w, h, log_base=math.e) / pattern_entropy(
            seq, tax, pats, w, log_base=math.e
        )
        assert r_e == pytest.approx(mi / H, rel=1e-9)


@SETTINGS
@given(data=st.data())
def test_lemma1_monotone_under_subtree_refinement(data: st.DataObject) -> None:
    tax, seq, pats, w = data.draw(instances(max_n=8))
    t = as_tax(tax, "test")
    h = [t.root] * tax.n_leaves
    prev = mutual_information(seq, tax, pats, w, h)
    for _ in range(8):
        cand = [a for a in range(tax.n_leaves) if h[a] != a]
        if not cand:
            break
        a = data.draw(st.sampled_from(cand))
        u = h[a]
        v = t.child_toward(u, a)
        for x in range(int(t.leaf_start[v]), int(t.leaf_start[v] + t.leaf_count[v])):
            if h[x] == u:
                h[x] = v
        cur = mutual_information(seq, tax, pats, w, h)
        assert cur >= prev - 1e-12
        prev = cur


# ---------------------------------------------------------------------------------------------- costs
@SETTINGS
@given(taxonomies(max_leaves=6), st.sampled_from(["linear", "exponential", "iloss"]))
def test_cost_families_satisfy_definition3(tax: Hierarchy, family: str) -> None:
    table = cost_table(tax, family)
    t = as_tax(tax, "test")
    for a in range(tax.n_leaves):
        path = list(t.paths[a])
        vals = table[a, path]
        assert vals[-1] == 0.0 and np.all(vals[:-1] > 0) and np.all(np.diff(vals) <= 0)
        if family != "iloss":
            assert vals[0] == pytest.approx(1.0)
        off = np.setdiff1d(np.arange(tax.n_nodes), path)
        assert np.all(np.isinf(table[a, off]))


@pytest.mark.parametrize("family", ["linear", "exponential", "iloss"])
def test_cost_families_satisfy_definition3_on_the_experiment_trees(family: str) -> None:
    """Spec §7.9: T_toy, the MSNBC placeholder and the RM-like binning tree (69 areas, bins of 10)."""
    from anoncore.sequence.synthetic import location_taxonomy, msnbc_taxonomy

    for tax in (TOY, msnbc_taxonomy(), location_taxonomy()):
        table = cost_table(tax, family)
        t = as_tax(tax, "test")
        for a in range(tax.n_leaves):
            path = list(t.paths[a])  # root ... leaf
            vals = table[a, path]
            assert vals[-1] == 0.0 and np.all(vals[:-1] > 0) and np.all(np.diff(vals) <= 0)
            assert np.all(np.isinf(np.delete(table[a], path)))


def test_utility_loss_from_sanitized_sequence_equals_unigram_form() -> None:
    s = ["Beer", "Chips", "Wine", "Cheese", "Beer", "Chips", "Milk", "Cookies"]
    r = sanitize_sequence(s, TOY, [("Beer", "Chips")], 0.3, 3, cost="iloss")
    codes = [TOY.leaf_code(x) for x in s]
    assert utility_loss(codes, r.sanitized, TOY, "iloss") == pytest.approx(r.utility_loss)
    assert np.array_equal(r.sanitized, r.generalization[codes])


# ---------------------------------------------------------------------------------------------- LCGP
@SETTINGS
@given(data=st.data())
def test_lcgp_passes_equals_union_find_and_brute_force(data: st.DataObject) -> None:
    tax = data.draw(taxonomies(max_leaves=5))
    t = as_tax(tax, "test")
    m = data.draw(st.integers(1, 4))
    p1 = data.draw(st.lists(st.integers(0, tax.n_leaves - 1), min_size=m, max_size=m))
    p2 = data.draw(st.lists(st.integers(0, tax.n_leaves - 1), min_size=m, max_size=m))
    g1, h1, _ = lcgp_passes(p1, p2, t)
    g2, h2 = lcgp_union_find(p1, p2, t)
    assert g1 == g2 and h1 == h2
    # Theorem 2 with random Definition-3 costs: scale a family by random positive per-(leaf, level) increments
    cost = [[math.inf] * tax.n_nodes for _ in range(tax.n_leaves)]
    for a in range(tax.n_leaves):
        acc = 0.0
        for v in reversed(t.paths[a]):
            cost[a][v] = acc
            acc += data.draw(st.floats(0.1, 3.0))
    freq = [data.draw(st.integers(1, 5)) for _ in range(tax.n_leaves)]
    got = sum(cost[a][h2[a]] * freq[a] for a in set(p1) | set(p2))
    assert got == pytest.approx(oracle.lcgp_min_cost(p1, p2, parent_list(tax), cost, freq))


# ---------------------------------------------------------------------------------------------- algorithms
@settings(deadline=None, derandomize=True, max_examples=40)
@given(data=st.data())
def test_heuristics_feasible_and_not_better_than_optimum(data: st.DataObject) -> None:
    tax, seq, pats, w = data.draw(instances(max_n=8))
    pats = [p[:2] if len(p) >= 2 else p for p in pats]
    eps = data.draw(st.sampled_from([0.0, 0.2, 0.5, 0.9]))
    family = data.draw(st.sampled_from(["linear", "iloss", "exponential"]))
    H = oracle.entropy(seq, pats, w)
    opt = oracle.optimum(seq, pats, w, eps * H, parent_list(tax), tax.n_leaves, cost_lists(tax, family))
    bf = sanitize_sequence(seq, tax, pats, eps, w, method="brute_force", cost=family)
    assert bf.utility_loss == pytest.approx(opt)
    tol = eps * H + 1e-9
    for kw in (
        {"method": "top_down"},
        {"method": "top_down", "sigma_s_shortcut": False},
        {"method": "bottom_up"},
        {"method": "bottom_up", "distance": "delta_ul"},
    ):
        r = sanitize_sequence(seq, tax, pats, eps, w, cost=family, **kw)
        assert oracle.mutual_information(seq, pats, w, r.generalization.tolist()) <= tol
        assert r.utility_loss >= opt - 1e-9
        t = as_tax(tax, "test")
        assert all(t.is_ancestor_or_self(int(r.generalization[a]), a) for a in range(tax.n_leaves))
        assert r.sanitized.tolist() == [int(r.generalization[x]) for x in seq]
        if kw["method"] in ("top_down", "bottom_up"):  # the C++ batch kernel: same map, same guarantee
            c = sanitize([seq], tax, pats, eps, w, cost=family, **kw).users[0]
            assert np.array_equal(c.generalization, r.generalization) and c.utility_loss == r.utility_loss


@settings(deadline=None, derandomize=True, max_examples=80)
@given(data=st.data())
def test_top_down_pruning_is_exact(data: st.DataObject) -> None:
    tax, seq, pats, w = data.draw(instances(max_n=10))
    eps = data.draw(st.floats(0.0, 1.0))
    shortcut = data.draw(st.booleans())
    tie = data.draw(st.sampled_from(["last", "first"]))
    a = sanitize_sequence(seq, tax, pats, eps, w, sigma_s_shortcut=shortcut, tie=tie, prune=True)
    b = sanitize_sequence(seq, tax, pats, eps, w, sigma_s_shortcut=shortcut, tie=tie, prune=False)
    assert np.array_equal(a.generalization, b.generalization)
    # evaluating every symbol's candidate (the paper's listing, no dedupe by target node) changes only the work
    c = sanitize_sequence(seq, tax, pats, eps, w, sigma_s_shortcut=shortcut, tie=tie, dedupe=False)
    assert np.array_equal(a.generalization, c.generalization)
    assert c.stats["mi_evaluations"] >= a.stats["mi_evaluations"]
    # the same in the C++ kernel
    for prune in (True, False):
        k = sanitize([seq], tax, pats, eps, w, sigma_s_shortcut=shortcut, tie=tie, prune=prune).users[0]
        assert np.array_equal(k.generalization, a.generalization)
    # accepted steps: Ĩ non-decreasing, UL non-increasing
    acc = [e for e in a.trace if e.action in ("start", "accepted")]
    for x, y in itertools.pairwise(acc):
        assert y.mi >= x.mi - 1e-12 and y.utility_loss <= x.utility_loss + 1e-12


@settings(deadline=None, derandomize=True, max_examples=60)
@given(data=st.data())
def test_bottom_up_invariants(data: st.DataObject) -> None:
    tax, seq, pats, w = data.draw(instances(max_n=10))
    eps = data.draw(st.floats(0.0, 1.0))
    r = sanitize_sequence(seq, tax, pats, eps, w, method="bottom_up")
    mis = [e.mi for e in r.trace]
    uls = [e.utility_loss for e in r.trace]
    assert all(y <= x + 1e-12 for x, y in itertools.pairwise(mis))
    assert all(y >= x - 1e-12 for x, y in itertools.pairwise(uls))
    assert r.mi <= r.epsilon + 1e-9


@SETTINGS
@given(data=st.data())
def test_small_epsilon_sanitizes_every_pattern(data: st.DataObject) -> None:
    tax, seq, pats, w = data.draw(instances(max_n=10))
    N = oracle.total_tuples(len(seq), w, len(pats[0]))
    terms = [oracle.count_embeddings(seq, p, w) / N for p in pats] if N else []
    terms = [q * math.log2(1 / q) for q in terms if q > 0]
    if not terms or min(terms) <= 1e-9:
        return
    eps = 0.5 * min(terms)
    for method in ("top_down", "bottom_up"):
        r = sanitize_sequence(seq, tax, pats, eps, w, method=method, relative=False)
        for p in pats:
            if oracle.count_embeddings(seq, p, w) > 0:
                assert tuple(int(r.generalization[x]) for x in p) != tuple(p)


def test_batch_sanitize_equals_single_user_and_is_deterministic() -> None:
    rng = np.random.default_rng(7)
    seqs = [rng.integers(0, 6, 60) for _ in range(5)]
    res = sanitize(seqs, TOY, 2, 0.5, 3, rng=11, f_min=2, trace=True)
    again = sanitize(seqs, TOY, 2, 0.5, 3, rng=11, f_min=2, trace=True)
    assert res == again
    for u, s in enumerate(seqs):
        single = sanitize_sequence(s, TOY, res.users[u].patterns.tolist(), 0.5, 3)
        assert single == res.users[u]
    scan = sanitize(seqs, TOY, 2, 0.5, 3, rng=11, f_min=2, counting="scan", trace=True)
    assert scan == res
    assert sanitize(seqs, TOY, 2, 0.5, 3, method="bottom_up", rng=11, f_min=2, counting="scan") == sanitize(
        seqs, TOY, 2, 0.5, 3, method="bottom_up", rng=11, f_min=2
    )
    sampled = sample_sensitive_patterns(seqs, TOY, 2, 3, f_min=2, rng=11)
    assert [p.tolist() for p in sampled] == [u.patterns.tolist() for u in res.users]
    for p, s in zip(sampled, seqs):
        for q in p:
            assert oracle.count_embeddings(s.tolist(), q.tolist(), 3) >= 2
    # per-user pattern lists and m = 3 use the DP path
    per = sanitize(seqs, TOY, [[(0, 1, 2)], [(1, 1, 1)], [(2, 3, 4)], [(0, 0, 0)], [(5, 4, 3)]], 0.3, 4)
    for u, s in enumerate(seqs):
        assert (
            oracle.mutual_information(
                s.tolist(), per.users[u].patterns.tolist(), 4, per.users[u].generalization.tolist()
            )
            <= per.users[u].epsilon + 1e-9
        )


def _draw_users(data: st.DataObject, max_leaves: int, max_len: int, max_patterns: int) -> tuple[Any, int, list, list]:
    """A random taxonomy, window and per-user sequences and sensitive patterns (one pattern length m)."""
    tax = data.draw(taxonomies(max_leaves=max_leaves))
    L = tax.n_leaves
    n_users = data.draw(st.integers(1, 4))
    m = data.draw(st.integers(1, 3))
    w = data.draw(st.integers(m - 1, 5))
    seqs = [data.draw(st.lists(st.integers(0, L - 1), max_size=max_len)) for _ in range(n_users)]
    pats = [
        data.draw(st.lists(st.tuples(*[st.integers(0, L - 1)] * m), min_size=1, max_size=max_patterns))
        for _ in range(n_users)
    ]
    return tax, w, seqs, pats


def _assert_same_users(fast: Any, ref: Any) -> None:
    """The C++ batch result equals the traced Python reference user by user (maps, Ĩ, H̃, ε, UL bit for bit)."""
    assert len(fast.users) == len(ref.users)
    for a, b in zip(fast.users, ref.users):
        assert a.trace == () and a.method == b.method
        assert np.array_equal(a.generalization, b.generalization)
        assert np.array_equal(a.sanitized, b.sanitized)
        assert (a.mi, a.entropy, a.epsilon, a.utility_loss, a.n_embeddings) == (
            b.mi, b.entropy, b.epsilon, b.utility_loss, b.n_embeddings)
        assert np.array_equal(a.pattern_counts, b.pattern_counts)


@settings(deadline=None, derandomize=True, max_examples=80)
@given(data=st.data())
def test_cpp_top_down_batch_equals_python_reference(data: st.DataObject) -> None:
    tax, w, seqs, pats = _draw_users(data, max_leaves=6, max_len=14, max_patterns=3)
    kw = {
        "relative": data.draw(st.booleans()),
        "cost": data.draw(st.sampled_from(["linear", "exponential", "iloss"])),
        "sigma_s_shortcut": data.draw(st.booleans()),
        "prune": data.draw(st.booleans()),
        "tie": data.draw(st.sampled_from(["last", "first"])),
        "counting": data.draw(st.sampled_from(["table", "scan"])),
        "log_base": data.draw(st.sampled_from([2.0, math.e, 10.0])),
        "dedupe": data.draw(st.booleans()),
    }
    eps = data.draw(st.floats(0.0, 1.0))
    fast = sanitize(seqs, tax, pats, eps, w, n_threads=data.draw(st.sampled_from([1, 2])), **kw)
    ref = sanitize(seqs, tax, pats, eps, w, trace=True, **kw)
    _assert_same_users(fast, ref)


@settings(deadline=None, derandomize=True, max_examples=120)
@given(data=st.data())
def test_cpp_bottom_up_batch_equals_python_reference(data: st.DataObject) -> None:
    """The C++ Bottom-Up batch kernel returns exactly the Python reference's maps (and Ĩ, UL bit for bit)."""
    tax, w, seqs, pats = _draw_users(data, max_leaves=7, max_len=16, max_patterns=5)
    kw = {
        "relative": data.draw(st.booleans()),
        "cost": data.draw(st.sampled_from(["linear", "exponential", "iloss"])),
        "distance": data.draw(st.sampled_from(["dg", "delta_ul"])),
        "counting": data.draw(st.sampled_from(["table", "scan"])),
        "log_base": data.draw(st.sampled_from([2.0, math.e, 10.0])),
    }
    eps = data.draw(st.floats(0.0, 1.0))
    fast = sanitize(
        seqs, tax, pats, eps, w, method="bottom_up", n_threads=data.draw(st.sampled_from([1, 2])), **kw
    )
    ref = sanitize(seqs, tax, pats, eps, w, method="bottom_up", trace=True, **kw)
    _assert_same_users(fast, ref)
    for u, a in enumerate(fast.users):
        assert a.method == "bottom_up"
        # independent check of the output: the oracle's Ĩ is within ε
        up = a.patterns.tolist()
        mi = oracle.mutual_information(seqs[u], up, w, a.generalization.tolist(), base=kw["log_base"])
        assert mi <= a.epsilon + 1e-9


def test_cpp_bottom_up_on_location_like_data_equals_reference_and_is_thread_invariant() -> None:
    """Larger inputs (69 leaves, sampled frequent patterns, completion steps at small ε) than the hypothesis test."""
    from anoncore.sequence.synthetic import location_like

    seqs, tax = location_like(12, 600, rng=4)
    for eps in (0.05, 0.5):
        one = sanitize(seqs, tax, 4, eps, 10, method="bottom_up", rng=6, f_min=3, n_threads=1)
        two = sanitize(seqs, tax, 4, eps, 10, method="bottom_up", rng=6, f_min=3, n_threads=2)
        ref = sanitize(seqs, tax, 4, eps, 10, method="bottom_up", rng=6, f_min=3, trace=True)
        assert one == two
        for a, b in zip(one.users, ref.users):
            assert np.array_equal(a.generalization, b.generalization)
            assert (a.mi, a.utility_loss) == (b.mi, b.utility_loss)
            assert a.mi <= a.epsilon + 1e-12


def test_cpp_top_down_thread_invariant() -> None:
    from anoncore.sequence.synthetic import location_like

    seqs, tax = location_like(40, 400, rng=3)
    one = sanitize(seqs, tax, 4, 0.4, 10, rng=5, f_min=3, n_threads=1)
    four = sanitize(seqs, tax, 4, 0.4, 10, rng=5, f_min=3, n_threads=4)
    assert one == four
    assert all(u.mi <= u.epsilon + 1e-12 for u in one.users)


def test_problem_memoises_generalized_patterns() -> None:
    t = as_tax(TOY, "test")
    seq = np.array([0, 1, 2, 3, 0, 1, 2, 3, 4, 5], dtype=np.int32)
    prob = UserProblem(seq, np.array([[0, 1, 2]], np.int32), t, 3, cost_table(TOY))
    h = np.full(6, t.root, dtype=np.int32)
    prob.mi(h)
    prob.mi(h.copy())
    assert prob.n_count_calls == 1


# ---------------------------------------------------------------------------------------------- bad input
S = ["Beer", "Chips", "Wine"]
P = [("Beer", "Chips")]


def _bad_cost(kind: str) -> np.ndarray:
    table = cost_table(TOY, "linear")
    if kind == "leaf_nonzero":
        table[0, 0] = 0.1
    elif kind == "increasing":
        table[1, 6] = 1.5  # Beer -> Alcohol costs more than Beer -> All
    elif kind == "zero_ancestor":
        table[2, 7] = 0.0
    elif kind == "off_path":
        table[0, 7] = 0.3  # Wine -> Snack
    return table


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"sequence": ["Beer", "Vodka"]}, ValueError, "'Vodka'.*not a leaf of the taxonomy"),
        ({"sequence": [0, 17]}, ValueError, "symbol 17.*not a leaf"),
        ({"patterns": [("Beer", "Rum")]}, ValueError, "'Rum'.*not a leaf"),
        ({"patterns": [("Beer", "Chips", "Wine")], "w": 1}, ValueError, "longer than the window allows"),
        ({"patterns": [("Beer", "Chips"), ("Beer",)]}, ValueError, "same length"),
        ({"patterns": []}, ValueError, "at least one pattern"),
        (
            {"epsilon": -0.1},
            ValueError,
            "'epsilon' parameter of sanitize_sequence must be a float in the range",
        ),
        ({"epsilon": "x"}, TypeError, "'epsilon' parameter"),
        ({"w": -1}, ValueError, r"'w' parameter of sanitize_sequence must be an int in the range \[0, inf\]"),
        ({"w": 2.0}, TypeError, "'w' parameter"),
        ({"method": "greedy"}, ValueError, "'method' parameter"),
        ({"tie": "random"}, ValueError, "'tie' parameter"),
        ({"distance": "euclid"}, ValueError, "'distance' parameter"),
        ({"cost": "quadratic"}, ValueError, "'cost' parameter"),
        ({"cost": _bad_cost("leaf_nonzero")}, ValueError, r"Definition 3: c\('Wine', 'Wine'\) must be 0"),
        (
            {"cost": _bad_cost("increasing")},
            ValueError,
            "Definition 3: the cost of leaf 'Beer' must not increase",
        ),
        (
            {"cost": _bad_cost("zero_ancestor")},
            ValueError,
            r"Definition 3: c\('Cookies', 'Snack'\) must be > 0",
        ),
        ({"cost": _bad_cost("off_path")}, ValueError, r"Definition 3: c\('Wine', 'Snack'\) must be inf"),
        ({"cost": np.zeros((2, 2))}, ValueError, "must have shape"),
        ({"log_base": 1.0}, ValueError, "'log_base' parameter"),
        ({"taxonomy": {"All": ["a"]}}, TypeError, "must be an instance of anoncore.data.Hierarchy"),
        ({"sequence": "Beer Chips"}, TypeError, "must be a list or 1-D array"),
    ],
)
def test_sanitize_sequence_rejects_bad_input(kwargs: dict, exc: type, match: str) -> None:
    args = {"sequence": S, "taxonomy": TOY, "patterns": P, "epsilon": 0.5, "w": 2}
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        sanitize_sequence(
            args.pop("sequence"),
            args.pop("taxonomy"),
            args.pop("patterns"),
            args.pop("epsilon"),
            args.pop("w"),
            **args,
        )


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"sequences": []}, ValueError, "at least one sequence"),
        ({"sequences": [["Beer"], ["Gin"]]}, ValueError, "'Gin' in sequence 1 of sanitize is not a leaf"),
        (
            {"patterns": 3, "f_min": 100},
            anoncore.InfeasibleError,
            "no pattern with windowed frequency >= f_min=100",
        ),
        ({"patterns": 0}, ValueError, "'patterns' parameter of sanitize must be an int in the range"),
        ({"patterns": [[("Beer", "Chips")]] * 3}, ValueError, "one list of patterns per sequence"),
        ({"patterns": 2.5}, TypeError, "'patterns' parameter"),
        ({"patterns": 2, "m": 4, "w": 2}, ValueError, "longer than the window allows"),
        ({"epsilon": -1}, ValueError, "'epsilon' parameter of sanitize"),
        ({"patterns": [("Beer", "Chips", "Wine")], "w": 1}, ValueError, "longer than the window allows"),
        ({"patterns": [("Beer", "Rum")]}, ValueError, "'Rum'.*not a leaf"),
        (
            {"cost": _bad_cost("increasing")},
            ValueError,
            "Definition 3: the cost of leaf 'Beer' must not increase",
        ),
        (
            {"cost": _bad_cost("off_path"), "method": "bottom_up"},
            ValueError,
            r"c\('Wine', 'Snack'\) must be inf",
        ),
        ({"n_threads": 0}, ValueError, "'n_threads' parameter"),
        ({"counting": "fast"}, ValueError, "'counting' parameter"),
    ],
)
def test_sanitize_rejects_bad_input(kwargs: dict, exc: type, match: str) -> None:
    args = {"sequences": [S, S], "taxonomy": TOY, "patterns": P, "epsilon": 0.5, "w": 2}
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        sanitize(
            args.pop("sequences"),
            args.pop("taxonomy"),
            args.pop("patterns"),
            args.pop("epsilon"),
            args.pop("w"),
            **args,
        )


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (
            lambda: count_patterns([S], TOY, P, 2, generalization=[7, 6, 7, 7, 9, 9]),
            ValueError,
            "maps leaf 'Wine' to node 7",
        ),
        (
            lambda: count_patterns([S], TOY, P, 2, generalization=[0, 1]),
            ValueError,
            "must be an int array of shape",
        ),
        (lambda: total_embeddings(-1, 2, 2), ValueError, "'n' parameter"),
        (lambda: total_embeddings(3, 2, 0), ValueError, "'m' parameter"),
        (lambda: cost_table(TOY, "exponential", base=1.0), ValueError, "'base' parameter"),
        (lambda: lcgp(("Beer",), ("Wine", "Beer"), TOY), ValueError, "same length"),
        (lambda: lcgp(("Beer",), ("Gin",), TOY), ValueError, "'Gin'.*not a node"),
        (lambda: lcgp(("Beer",), ("Wine",), TOY, method="x"), ValueError, "'method' parameter"),
        (lambda: sample_sensitive_patterns([S], TOY, 0, 2), ValueError, "'k' parameter"),
    ],
)
def test_helpers_reject_bad_input(call, exc: type, match: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(exc, match=match):
        call()


def test_docs_page_example_runs() -> None:
    import doctest
    from pathlib import Path

    page = Path(__file__).resolve().parents[1] / "docs" / "sequence.md"
    res = doctest.testfile(
        str(page), module_relative=False, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    assert res.attempted > 0 and res.failed == 0


# ---------------------------------------------------------------------------------------------- CLI


def _cli_files(tmp_path):  # type: ignore[no-untyped-def]
    import json

    tax = tmp_path / "tax.json"
    tax.write_text(json.dumps(TOY_TREE))
    rng = np.random.default_rng(0)
    other = [str(x) for x in rng.choice(TOY.leaves, 30)]
    jl = tmp_path / "ev.jsonl"
    jl.write_text(
        json.dumps({"user": "A", "events": S_A}) + "\n\n" + json.dumps({"user": 7, "events": other}) + "\n"
    )
    # the same users as CSV, rows shuffled, with an order column
    rows = [("A", i, e) for i, e in enumerate(S_A)] + [("7", i, e) for i, e in enumerate(other)]
    perm = rng.permutation(len(rows))
    csv_path = tmp_path / "ev.csv"
    csv_path.write_text("t,user,event\n" + "".join(f"{rows[k][1]},{rows[k][0]},{rows[k][2]}\n" for k in perm))
    return tax, jl, csv_path, other


def test_cli_sequence_jsonl_and_csv(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    import json

    from anoncore.cli import main

    tax, jl, csv_path, other = _cli_files(tmp_path)
    pats = tmp_path / "pats.txt"
    pats.write_text("# sensitive patterns\nBeer,Chips\nWine Cheese\n")
    assert main(["sequence", str(jl), "--taxonomy", str(tax), "--patterns", str(pats), "--epsilon", "0.9", "--w", "2",
                 "--no-shortcut"]) == 0  # fmt: skip
    recs = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [r["user"] for r in recs] == ["A", "7"]
    # spec §3.2 Example A, Top-Down without the shortcut at ε_rel 0.9: UL 5, Beer, Wine -> Alcohol, Milk, Cheese -> Dairy
    assert recs[0]["utility_loss"] == 5.0 and recs[0]["map"] == {
        "Wine": "Alcohol", "Beer": "Alcohol", "Milk": "Dairy", "Cheese": "Dairy"
    }  # fmt: skip
    assert recs[0]["patterns"] == [["Beer", "Chips"], ["Wine", "Cheese"]] and recs[0]["pattern_counts"] == [
        3,
        2,
    ]
    for r, s in zip(recs, (S_A, other)):
        assert r["sanitized"] == [r["map"].get(e, e) for e in s]
        h = list(range(6))
        for leaf, node in r["map"].items():
            h[TOY.leaf_code(leaf)] = TOY.labels.index(node)
        codes = [TOY.leaf_code(e) for e in s]
        pc = [[TOY.leaf_code(x) for x in p] for p in r["patterns"]]
        assert oracle.mutual_information(codes, pc, 2, h) <= r["epsilon"] + 1e-9
        assert r["utility_loss"] == pytest.approx(oracle.utility_loss(codes, h, cost_lists(TOY)))
    # CSV with shuffled rows and an order column gives the same records; Bottom-Up to a file
    out = tmp_path / "out.jsonl"
    args = ["sequence", str(csv_path), "--taxonomy", str(tax), "--pattern", "Beer,Chips", "--pattern", "Wine,Cheese",
            "--epsilon", "0.9", "--w", "2", "--order-col", "t"]  # fmt: skip
    assert main([*args, "--no-shortcut"]) == 0
    by_user = {
        r["user"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())
    }  # first-appearance order
    assert by_user == {r["user"]: r for r in recs}
    assert main([*args, "--method", "bottom_up", "-o", str(out)]) == 0
    assert "2 users, 46 events, method bottom_up" in capsys.readouterr().out
    bu = {r["user"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert bu["A"]["utility_loss"] == 8.5  # spec §3.2: a single merge with d_g = 8.5
    ref = sanitize([S_A, other], TOY, [("Beer", "Chips"), ("Wine", "Cheese")], 0.9, 2, method="bottom_up")
    assert [bu["A"]["mi"], bu["7"]["mi"]] == ref.mi.tolist()


def test_cli_sequence_stdin_json_document(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json
    import subprocess
    import sys

    tax, jl, _, _ = _cli_files(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "anoncore.cli", "sequence", "-", "--format", "jsonl", "--taxonomy", str(tax),
         "--sample", "2", "--f-min", "2", "--seed", "3", "--epsilon", "0.5", "--w", "3", "--json"],
        input=jl.read_text(), capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["command"] == "sequence" and doc["parameters"]["sample"] == 2
    users = doc["result"]["users"]
    assert [u["user"] for u in users] == ["A", "7"]
    assert doc["result"]["summary"]["n_users_within_epsilon"] == 2
    for u in users:
        assert len(u["patterns"]) == 2 and all(c >= 2 for c in u["pattern_counts"])


@pytest.mark.parametrize(
    ("extra", "code", "match"),
    [
        (["--pattern", "Beer,Rum"], 1, "'Rum'.*not a leaf"),
        (["--pattern", "Beer,Chips,Wine", "--w", "1"], 1, "longer than the window allows"),
        (["--pattern", "Beer,Chips", "--epsilon", "-0.5"], 2, r"--epsilon must be a number in the range \[0, inf\)"),
        (
            ["--pattern", "Beer,Chips", "--taxonomy", "missing.json"],
            2,
            "taxonomy file 'missing.json' does not exist",
        ),
        (["--pattern", "Beer,Chips", "--user-col", "uid"], 2, "unknown column 'uid'"),
        (["--pattern", "Beer,Chips", "--threads", "0"], 2, "argument --threads: expected an int >= 1"),
        (["--pattern", "Beer,,Chips"], 1, "must list events"),
        (["--epsilon", "0.5"], 2, "one of the arguments --pattern --patterns --sample is required"),
    ],
)
def test_cli_sequence_rejects_bad_input(tmp_path, capsys, extra, code, match) -> None:  # type: ignore[no-untyped-def]
    from anoncore.cli import main

    tax, _, csv_path, _ = _cli_files(tmp_path)
    base = ["sequence", str(csv_path), "--taxonomy", str(tax), "--epsilon", "0.5", "--w", "2"]
    assert main(base + extra) == code
    assert re.search(match, capsys.readouterr().err)


def test_cli_sequence_names_bad_events(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from anoncore.cli import main

    tax, jl, csv_path, _ = _cli_files(tmp_path)
    csv_path.write_text(csv_path.read_text() + "99,A,Vodka\n")
    assert main(["sequence", str(csv_path), "--taxonomy", str(tax), "--pattern", "Beer,Chips", "--epsilon", "0.5",
                 "--w", "2"]) == 1  # fmt: skip
    err = capsys.readouterr().err
    assert "anoncore sequence: error: event 'Vodka' of user 'A' on line 48 of" in err
    jl.write_text('{"user": "A", "events": ["Beer"]}\n{"user": "B"\n')
    assert main(["sequence", str(jl), "--taxonomy", str(tax), "--pattern", "Beer,Chips", "--epsilon", "0.5",
                 "--w", "2"]) == 1  # fmt: skip
    assert "line 2 of" in capsys.readouterr().err and True
    empty = tmp_path / "empty.csv"
    empty.write_text("user,event\n")
    assert main(["sequence", str(empty), "--taxonomy", str(tax), "--pattern", "Beer,Chips", "--epsilon", "0.5",
                 "--w", "2"]) == 1  # fmt: skip
    assert "holds no event" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("setup", "code", "match"),
    [
        (lambda d: ["missing.csv"], 2, "input file 'missing.csv' does not exist"),
        (lambda d: ["ev.csv", "--patterns", "nopats.txt"], 2, "patterns file 'nopats.txt' does not exist"),
        (lambda d: ["ev.csv", "--patterns", _write(d / "p.txt", "# none\n")], 1, "lists no pattern"),
        (lambda d: ["ev.csv", "--taxonomy", _write(d / "t.json", "{oops")], 1, "is not valid JSON"),
        (
            lambda d: [_write(d / "x.jsonl", '{"user": 1}\n')],
            1,
            "line 1 of .* must be a JSON object with keys",
        ),
        (lambda d: [_write(d / "x.jsonl", '{"user": 1, "events": "Beer"}\n')], 1, "must be a list of events"),
        (
            lambda d: [_write(d / "x.csv", "user,t,event\nA,x,Beer\n"), "--order-col", "t"],
            1,
            "must be a number",
        ),
        (lambda d: ["ev.csv", "--taxonomy", _write(d / "t.csv", "Beer;Drinks;*\nBeer;Food;*\n")], 1, "twice"),
    ],
)
def test_cli_sequence_rejects_bad_files(tmp_path, capsys, monkeypatch, setup, code, match) -> None:  # type: ignore[no-untyped-def]
    from anoncore.cli import main

    tax, _, _, _ = _cli_files(tmp_path)
    monkeypatch.chdir(tmp_path)
    args = setup(tmp_path)
    base = ["--taxonomy", str(tax), "--epsilon", "0.5", "--w", "2"]
    if "--patterns" not in args:
        base += ["--pattern", "Beer,Chips"]
    assert main(["sequence", *args, *base[: 0 if "--taxonomy" in args else 2], *base[2:]]) == code
    assert re.search(match, capsys.readouterr().err)


def _write(path, text: str) -> str:  # type: ignore[no-untyped-def]
    path.write_text(text)
    return str(path)
