"""The lattice engine's packed grouping on several threads (issue 16): the bottom's rows and large roll-ups are
grouped on every thread with exactly the serial output (groups numbered by first appearance, their keys, their
summed weights), so the search, its partition and its statistics are the same at any thread count. (Roll-ups
take the parallel grouping from 4 threads on: the tests run 4 threads on any machine.)"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import lattice as oracle
from test_lattice_threads import MODEL_SETS, _table

from anoncore import audit
from anoncore._core import has_openmp
from anoncore._core import lattice as _lat
from anoncore.distributed import FrequencySet
from anoncore.distributed import lattice_search as freq_search
from anoncore.static.lattice import METRICS, LatticeProblem, lattice_search

U64 = np.uint64


def _oracle(keys: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """pandas' factorize (codes by first appearance) and a weighted bincount: an independent grouping."""
    codes, uniq = pd.factorize(keys)
    w = weights if len(weights) else None
    counts = np.bincount(codes, weights=w, minlength=len(uniq)).astype(np.int64) if len(keys) else np.zeros(0, np.int64)
    return codes.astype(np.int32), np.asarray(uniq, dtype=U64), counts


def _check(keys: np.ndarray, weights: np.ndarray, threads: int, rows: bool, grain: int) -> None:
    ids, gk, gc = _lat.group_keys(keys, weights, threads, rows, grain)
    ref = _oracle(keys, weights)
    np.testing.assert_array_equal(ids, ref[0])
    np.testing.assert_array_equal(gk, ref[1])
    np.testing.assert_array_equal(gc, ref[2])


@st.composite
def _keys(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    n = draw(st.integers(0, 6000))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    kind = draw(st.sampled_from(["few", "some", "many", "wide", "runs"]))
    if kind == "few":
        keys = rng.integers(0, 7, size=n).astype(U64)
    elif kind == "some":
        keys = rng.integers(0, max(1, n // 20), size=n).astype(U64) << U64(draw(st.integers(0, 40)))
    elif kind == "many":
        keys = rng.integers(0, max(1, 3 * n), size=n).astype(U64)
    elif kind == "wide":  # full 64-bit keys, 0 and 2**64 - 1 among them
        keys = rng.integers(0, 2**63, size=n, dtype=np.int64).astype(U64) * U64(2) + U64(1)
        if n > 2:
            keys[rng.integers(0, n, size=2)] = [U64(0), U64(2**64 - 1)]
    else:  # long runs of one key, then a new key (first appearances far apart)
        keys = np.repeat(rng.integers(0, 2**40, size=n // 300 + 1).astype(U64), 300)[:n]
    weights = rng.integers(1, 1000, size=n).astype(np.int64) if draw(st.booleans()) else np.zeros(0, np.int64)
    return keys, weights


@settings(max_examples=150, deadline=None, derandomize=True)
@given(_keys(), st.integers(1, 5), st.booleans(), st.sampled_from([1, 64, 65536]))
def test_group_keys_equals_factorize(kw: tuple[np.ndarray, np.ndarray], threads: int, rows: bool, grain: int) -> None:
    # every path: serial (1 thread; a roll-up below 4 threads), partitioned (rows, or a roll-up whose chunks
    # hardly repeat a key), and the pre-aggregated roll-up whose chunks' groups are grouped serially (grain
    # 65536) or partitioned (grain 1)
    keys, weights = kw
    _check(keys, weights, threads, rows, grain)


@pytest.mark.skipif(not has_openmp, reason="serial build")
@pytest.mark.parametrize("distinct", [1, 1000, 60_000, 400_000])
@pytest.mark.parametrize("rows", [True, False])
@pytest.mark.parametrize("n", [300_000, 400_000])
def test_group_keys_large_at_2_and_4_threads(distinct: int, rows: bool, n: int) -> None:
    # 400,000 keys: 64 chunks (roll-ups: 13), 64 buckets, tables that grow; few to all distinct. 300,000 rows on
    # two threads: in halves (kHalvesRowsMax), whose dense tables start at 262,144 slots and grow past 196,608
    rng = np.random.default_rng(distinct)
    keys = rng.integers(0, distinct, size=n).astype(U64) * U64(0x9E3779B1)
    weights = rng.integers(1, 5, size=keys.size).astype(np.int64)
    for threads in (2, 4):
        _check(keys, np.zeros(0, np.int64), threads, rows, 65536)
        _check(keys, weights, threads, rows, 1)


def test_group_keys_bad_weights() -> None:
    with pytest.raises(ValueError, match="weights has length 2, expected 0 or 3"):
        _lat.group_keys(np.arange(3, dtype=U64), np.ones(2, np.int64), 2)


def _engine_search(table, models, limit: float, metric: str, threads: int):  # type: ignore[no-untyped-def]
    problem = LatticeProblem.build(table, models, limit, metric, n_threads=threads)
    problem.engine.load_aware = False
    out = problem.engine.optimal(False)
    r = out.result
    got = (out.feasible, tuple(out.levels), r.feasible, r.metric.hex() if out.feasible else None, r.suppressed,
           r.suppressed_size, r.n_classes, out.evaluated, out.inferred, out.popped, out.swept,
           problem.engine.bottom_classes, problem.engine.rollup_work)
    bottom = problem.engine.classify(np.zeros(problem.n_qi, np.int32), False)[1]
    return got, bottom


@pytest.fixture
def tiny_grain(monkeypatch: pytest.MonkeyPatch) -> None:
    # every grouping of two or more items takes the parallel path: the bottom's rows from 2 threads on, the
    # roll-ups from 4
    monkeypatch.setenv("ANONCORE_LATTICE_PARALLEL_GRAIN", "1")
    monkeypatch.setenv("ANONCORE_LATTICE_LOAD_AWARE", "0")


@settings(max_examples=30, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1), st.integers(4, 400), st.sampled_from(range(len(MODEL_SETS))),
       st.sampled_from([0.0, 0.1, 0.3]), st.sampled_from(list(METRICS)), st.sampled_from([6, 40]))
def test_search_identical_at_1_2_4_threads_with_parallel_grouping(
        seed: int, n_rows: int, mi: int, limit: float, metric: str, leaves: int) -> None:
    import os
    os.environ["ANONCORE_LATTICE_PARALLEL_GRAIN"] = "1"
    try:
        table = _table(seed, n_rows, max_leaves=leaves)  # (40 leaves: many classes, most of them distinct rows)
        models = MODEL_SETS[mi]
        got = {th: _engine_search(table, models, limit, metric, th) for th in (1, 2, 4)}
    finally:
        del os.environ["ANONCORE_LATTICE_PARALLEL_GRAIN"]
    assert got[1][0] == got[2][0] == got[4][0]
    np.testing.assert_array_equal(got[1][1], got[2][1])
    np.testing.assert_array_equal(got[1][1], got[4][1])
    # the bottom classes: the rows' leaf-code tuples numbered by first appearance
    codes = table.qi_codes()
    ref = pd.factorize(pd.MultiIndex.from_arrays([codes[:, j] for j in range(codes.shape[1])]))[0]
    np.testing.assert_array_equal(got[2][1], ref)


@pytest.mark.usefixtures("tiny_grain")
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_published_partition_identical_at_1_to_4_threads(seed: int) -> None:
    table = _table(seed, 3000, n_qi=4, max_leaves=40)
    models = MODEL_SETS[4]  # k=2 + equal-distance t
    res = {th: lattice_search(table, models, suppression_limit=0.1, metric="loss", n_threads=th)
           for th in (1, 2, 3, 4)}
    a = res[1]
    assert audit(table, a.partition, models).passed  # the independent audit of the published partition
    for th in (2, 3, 4):
        b = res[th]
        assert a.partition.levels == b.partition.levels
        for name in ("labels", "suppressed", "gen_lo", "gen_hi", "gen_node"):
            np.testing.assert_array_equal(getattr(a.partition, name), getattr(b.partition, name))
        assert a.stats["nodes_evaluated"] == b.stats["nodes_evaluated"]
        assert a.metrics == b.metrics
    # and the optimum is the exhaustive oracle's
    ref = oracle.exhaustive(table, models, 0.1, "loss")
    assert a.partition.levels in ref["argmin"]


@pytest.mark.usefixtures("tiny_grain")
def test_search_on_counts_identical_at_1_2_4_threads() -> None:
    # a frequency set's items (weighted: the bottom grouped with the items' counts) at 1, 2 and 4 threads
    table = _table(5, 4000, n_qi=3, max_leaves=30)
    freq = FrequencySet.from_table(table, sensitive="s")
    models = MODEL_SETS[1]
    res = {th: freq_search(freq, models, suppression_limit=0.1, metric="loss", n_threads=th) for th in (1, 2, 4)}
    for th in (2, 4):
        assert res[th].levels == res[1].levels
        assert res[th].score == res[1].score
        assert (res[th].n_suppressed, res[th].n_classes) == (res[1].n_suppressed, res[1].n_classes)
        np.testing.assert_array_equal(res[th].suppressed_items, res[1].suppressed_items)
    mem = lattice_search(table, models, suppression_limit=0.1, metric="loss", n_threads=1)
    assert res[1].levels == mem.partition.levels
    assert audit(table, mem.partition, models).passed
