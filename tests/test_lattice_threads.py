"""Threads in the optimal lattice search (issue 16): the search is the same at any thread count (same nodes
evaluated in the same order, same optimum, same statistics); threads work only inside one node's evaluation
(the histogram merges of large frequency sets), whose output is the serial output."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import lattice as oracle

from anoncore import Attribute, Hierarchy, Schema, Table, audit
from anoncore._core import has_openmp
from anoncore._tablecache import clear_table_caches
from anoncore.static.lattice import METRICS, LatticeProblem, _SimpleModel, lattice_search

M = _SimpleModel.make

MODEL_SETS = [
    [M("KAnonymity", k=2)],
    [M("KAnonymity", k=2), M("DistinctLDiversity", l=2)],
    [M("EntropyLDiversity", l=1.7)],
    [M("RecursiveCLDiversity", c=1.6, l=2)],
    [M("KAnonymity", k=2), M("EqualDistanceTCloseness", t=0.3141)],
    [M("OrderedDistanceTCloseness", t=0.2718)],
    [M("KAnonymity", k=2), M("HierarchicalDistanceTCloseness", t=0.2718)],
    [M("HellingerTCloseness", t=0.4142)],
    [M("EnhancedBetaLikeness", beta=0.9)],
    [M("DeltaDisclosure", delta=1.1)],
]


def _hierarchy(rng: np.random.Generator, n_leaves: int, height: int, prefix: str) -> Hierarchy:
    cols = [[f"{prefix}{v}" for v in range(n_leaves)]]
    cur = np.arange(n_leaves)
    width = n_leaves
    for lv in range(1, height):
        width = max(1, min(width - 1, int(rng.integers(1, width + 1)))) if width > 1 else 1
        cur = rng.integers(0, width, size=int(cur.max()) + 1)[cur]
        cols.append([f"{prefix}L{lv}_{c}" for c in cur])
    cols.append(["*"] * n_leaves)
    return Hierarchy.from_rows(list(zip(*cols)), name=prefix)


def _table(seed: int, n_rows: int, n_qi: int | None = None, max_leaves: int = 6, m: int | None = None) -> Table:
    rng = np.random.default_rng(seed)
    n_qi = int(rng.integers(1, 5)) if n_qi is None else n_qi
    attrs, data = [], {}
    for j in range(n_qi):
        nl = int(rng.integers(2, max_leaves + 1))
        hier = _hierarchy(rng, nl, int(rng.integers(1, 4)), f"q{j}_")
        attrs.append(Attribute(f"q{j}", "quasi_identifier", "categorical", hierarchy=hier))
        data[f"q{j}"] = np.asarray(hier.leaves, dtype=object)[rng.integers(0, nl, size=n_rows)]
    m = int(rng.integers(2, 7)) if m is None else m
    sh = _hierarchy(rng, m, int(rng.integers(1, 4)), "s")
    data["s"] = np.asarray(sh.leaves, dtype=object)[rng.choice(m, size=n_rows, p=rng.dirichlet(np.ones(m)))]
    attrs.append(Attribute("s", "sensitive", "categorical", hierarchy=sh))
    return Table.from_pandas(pd.DataFrame(data), Schema(tuple(attrs)))


def _search(table: Table, models: list, limit: float, metric: str, threads: int, grain: int) -> tuple:
    problem = LatticeProblem.build(table, models, limit, metric, n_threads=threads)
    problem.engine.parallel_grain = grain
    problem.engine.load_aware = False  # (the parallel paths also on a busy machine)
    out = problem.engine.optimal(False)
    r = out.result
    return (out.feasible, tuple(out.levels), r.feasible, r.metric.hex() if out.feasible else None, r.suppressed,
            r.suppressed_size, r.n_classes, out.evaluated, out.inferred, out.popped, out.swept)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1), st.integers(4, 60), st.sampled_from(range(len(MODEL_SETS))),
       st.sampled_from([0.0, 0.1, 0.3, 1.0]), st.sampled_from(list(METRICS)))
def test_threads_1_2_3_identical_and_optimal(seed: int, n_rows: int, mi: int, limit: float, metric: str) -> None:
    # parallel_grain = 1: every merge of two or more items takes the parallel path at 2 and 3 threads
    table = _table(seed, n_rows)
    models = MODEL_SETS[mi]
    got = {th: _search(table, models, limit, metric, th, 1) for th in (1, 2, 3)}
    assert got[1] == got[2] == got[3]
    ref = oracle.exhaustive(table, models, limit, metric)
    if ref["best"] is None:
        assert not got[1][0]
        return
    assert got[1][1] in ref["argmin"]
    assert got[1][1] == min(ref["argmin"]) or metric == "loss"  # (Loss: ties within 1e-9 by the oracle's floats)
    res = lattice_search(table, models, suppression_limit=limit, metric=metric, n_threads=3)
    assert res.partition.levels == got[1][1]
    assert res.achieved["passed"]


@pytest.mark.parametrize("threads", [2, 3])
def test_parallel_merges_give_the_serial_histograms(threads: int) -> None:
    # After a search with parallel merges (grain 1), every node's full judge (histograms merged from the
    # cache, in parallel) equals the exhaustive oracle's suppressed rows and verdict, node by node.
    table = _table(7, 80, n_qi=3)
    models = [M("KAnonymity", k=2), M("EqualDistanceTCloseness", t=0.3141)]
    lim = math.floor(0.1 * table.n_rows)
    problem = LatticeProblem.build(table, models, 0.1, "loss", n_threads=threads)
    problem.engine.parallel_grain = 1
    problem.engine.load_aware = False
    problem.engine.optimal(False)
    heights = tuple(int(table.hierarchy(q).height) for q in table.quasi_identifiers)
    for lv in oracle.all_nodes(heights):
        ref = oracle.node_stats(table, lv, models, lim)
        got = problem.evaluate(lv)
        assert (got["suppressed"], got["feasible"]) == (ref["suppressed"], ref["feasible"]), lv


@pytest.mark.skipif(not has_openmp, reason="serial build")
def test_bottom_of_many_rows_is_the_same_at_any_thread_count(monkeypatch: pytest.MonkeyPatch) -> None:
    # 1,100,000 rows: the bottom's histogram merge over the rows runs on 2 threads (from 8 x 65,536 rows on);
    # the published partition must be the same as with one thread, and every node the same.
    monkeypatch.setenv("ANONCORE_LATTICE_LOAD_AWARE", "0")  # (the parallel merge also on a busy machine)
    table = _table(3, 1_100_000, n_qi=3, max_leaves=40)
    models = [M("KAnonymity", k=3), M("RecursiveCLDiversity", c=3.0, l=2)]
    res = {th: lattice_search(table, models, suppression_limit=0.05, metric="loss", n_threads=th) for th in (1, 2)}
    a, b = res[1].partition, res[2].partition
    assert a.levels == b.levels
    for name in ("labels", "suppressed", "gen_lo", "gen_hi", "gen_node"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert res[1].stats["nodes_evaluated"] == res[2].stats["nodes_evaluated"]
    p1 = LatticeProblem.build(table, models, 0.05, "loss", n_threads=1)
    p2 = LatticeProblem.build(table, models, 0.05, "loss", n_threads=2)
    heights = tuple(int(table.hierarchy(q).height) for q in table.quasi_identifiers)
    for lv in oracle.all_nodes(heights)[:40]:
        assert p1.evaluate(lv) == p2.evaluate(lv), lv


def _early_key(r) -> tuple:  # type: ignore[no-untyped-def]
    return (r.feasible, r.suppressed, r.suppressed_size, r.n_classes, r.metric.hex(), r.lower_bound.hex(), r.partial)


@pytest.mark.skipif(not has_openmp, reason="serial build")
@pytest.mark.parametrize("metric", ["loss", "dm"])
@pytest.mark.parametrize("mi", [1, 2, 4, 6, 8, -1])
def test_early_judges_stop_where_the_serial_judge_stops(mi: int, metric: str) -> None:
    # An early judge (as the search judges) stops at the first class whose rows take the suppressed rows past
    # the limit, so its suppressed rows and monotone part are the serial loop's partial sums. On 2 and 3
    # threads (grain 1: every set's classes judged in chunks) the stop and the sums must be the serial ones,
    # node by node (the engines see the nodes in the same order, so their caches and deferred sets agree).
    # mi = -1: 80 sensitive values (no value masks), so a deferred set checks distinct-l class by class with
    # t-closeness and the monotone part's rows are summed there too.
    if mi < 0:
        table = _table(5, 600, n_qi=3, max_leaves=12, m=80)
        models = [M("KAnonymity", k=2), M("DistinctLDiversity", l=3), M("EqualDistanceTCloseness", t=0.45)]
    else:
        table = _table(11 + mi, 400, n_qi=3, max_leaves=12)
        models = MODEL_SETS[mi]
    lim = math.floor(0.1 * table.n_rows)
    probs = {}
    for th in (1, 2, 3):
        probs[th] = LatticeProblem.build(table, models, 0.1, metric, n_threads=th)
        probs[th].engine.parallel_grain = 1
        probs[th].engine.load_aware = False
    full = LatticeProblem.build(table, models, 0.1, metric, n_threads=1)
    heights = tuple(int(table.hierarchy(q).height) for q in table.quasi_identifiers)
    stopped = 0
    for lv in oracle.all_nodes(heights):
        arr = np.asarray(lv, dtype=np.int32)
        got = {th: _early_key(p.engine.evaluate(arr, early=True)) for th, p in probs.items()}
        assert got[1] == got[2] == got[3], lv
        whole = full.evaluate(lv)["suppressed"]
        assert got[1][1] <= whole
        stopped += lim < got[1][1] < whole  # (stopped inside the set: the sums are partial)
    assert stopped > 0


@pytest.mark.skipif(not has_openmp, reason="serial build")
@pytest.mark.parametrize("seed", [2, 9])
def test_engine_build_on_threads_gives_the_serial_bottom(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # The grain from the environment (read when an Engine is built) at 1: the engine build's passes take the
    # threads on a small table (the rows' grouping, the sensitive values' counts, the bottom's histograms and
    # value masks); every node must then be judged as with one thread, which builds them serially.
    monkeypatch.setenv("ANONCORE_LATTICE_PARALLEL_GRAIN", "1")
    monkeypatch.setenv("ANONCORE_LATTICE_LOAD_AWARE", "0")
    table = _table(seed, 1500, n_qi=3, max_leaves=10)
    models = [M("KAnonymity", k=2), M("DistinctLDiversity", l=2), M("EqualDistanceTCloseness", t=0.5)]
    probs = {}
    for th in (1, 2, 3):
        clear_table_caches(table)  # (else the later engines reuse the first one's bottom)
        probs[th] = LatticeProblem.build(table, models, 0.1, "loss", n_threads=th)
    heights = tuple(int(table.hierarchy(q).height) for q in table.quasi_identifiers)
    partial = 0
    for lv in oracle.all_nodes(heights):
        got = {th: p.evaluate(lv) for th, p in probs.items()}
        assert got[1] == got[2] == got[3], lv
        partial += 0 < got[1]["suppressed"] < table.n_rows
    assert partial > 0  # (nodes that keep some rows and suppress others: the verdicts are class by class)


def test_parallel_grain_must_be_positive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANONCORE_LOAD_AWARE", raising=False)  # (conftest turns it off for the suite)
    monkeypatch.delenv("ANONCORE_LATTICE_LOAD_AWARE", raising=False)
    problem = LatticeProblem.build(_table(1, 20), [M("KAnonymity", k=2)], 0.0, "loss", n_threads=2)
    assert problem.engine.parallel_grain == 32768
    assert problem.engine.load_aware  # on by default
    for var in ("ANONCORE_LOAD_AWARE", "ANONCORE_LATTICE_LOAD_AWARE"):
        monkeypatch.setenv(var, "0")
        p = LatticeProblem.build(_table(1, 20), [M("KAnonymity", k=3)], 0.0, "loss", n_threads=2)
        assert not p.engine.load_aware
        monkeypatch.delenv(var)
    with pytest.raises(ValueError, match="parallel_grain"):
        problem.engine.parallel_grain = 0


def test_adult_search_evaluates_the_same_nodes_at_two_threads(adult_occupation) -> None:  # type: ignore[no-untyped-def]
    # Adult 5 (k=5 + hierarchical t=0.2, 4 %, Loss): a non-monotone search, where queued nodes were once
    # judged speculatively in parallel batches; now the thread count changes nothing in the search.
    models = [M("KAnonymity", k=5), M("HierarchicalDistanceTCloseness", t=0.2)]
    got = [_search(adult_occupation, models, 0.04, "loss", th, 65536) for th in (1, 2)]
    assert got[0] == got[1]
    assert got[0][1] == (1, 4, 0, 0, 3, 2, 2, 1)  # ARX's optimum (ARX-TIMINGS.md row 5)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1), st.integers(4, 60), st.integers(1, 4), st.integers(1, 4),
       st.sampled_from([0.0, 0.1, 0.3]), st.sampled_from(list(METRICS)))
def test_k_and_distinct_l_from_masks_equal_exhaustive(seed: int, n_rows: int, k: int, ll: int, limit: float,
                                                       metric: str) -> None:
    # k-anonymity + distinct-l with at most 64 sensitive values: the value masks decide both, so the rolled-up
    # sets carry no histograms and the judge has no second pass; the optimum, its suppressed rows and the
    # audit must still match the exhaustive oracle (which counts the distinct values of each class).
    table = _table(seed, n_rows)
    models = [M("KAnonymity", k=k), M("DistinctLDiversity", l=ll)]
    ref = oracle.exhaustive(table, models, limit, metric)
    got = _search(table, models, limit, metric, 1, 65536)
    if ref["best"] is None:
        assert not got[0]
        return
    assert got[1] in ref["argmin"]
    st_ = oracle.node_stats(table, got[1], models, math.floor(limit * table.n_rows))
    assert got[4] == st_["suppressed"]
    res = lattice_search(table, models, suppression_limit=limit, metric=metric, n_threads=1)
    assert res.partition.levels == got[1]
    assert res.achieved["passed"]


@pytest.mark.parametrize("seed", [3, 11, 29])
def test_engine_reads_quasi_identifiers_in_place_in_any_column_order(seed: int) -> None:
    """The engine reads the QI columns of the table's codes in place (no copy): a table whose sensitive column
    comes first gives the same search as the same QIs, in the same order, in the first columns; with the QIs
    reversed, the same optimal score."""
    a = _table(seed, 400, n_qi=3)
    df = a.to_pandas()
    attrs = [a.schema[c] for c in a.columns]  # q0, q1, q2, s
    b = Table.from_pandas(df, Schema(tuple([attrs[-1]] + attrs[-2::-1])))  # s, q2, q1, q0
    c = Table.from_pandas(df, Schema(tuple(attrs[-2::-1] + [attrs[-1]])))  # q2, q1, q0, s
    assert b.columns[0] == "s" and b.quasi_identifiers == c.quasi_identifiers == a.quasi_identifiers[::-1]
    for models in MODEL_SETS[:2] + MODEL_SETS[4:5]:
        ra, rb, rc = (lattice_search(t, models, suppression_limit=0.05, metric="loss") for t in (a, b, c))
        assert tuple(rb.partition.levels) == tuple(rc.partition.levels)
        assert np.array_equal(rb.partition.labels, rc.partition.labels)
        assert np.array_equal(rb.partition.suppressed, rc.partition.suppressed)
        assert rb.stats["bottom_classes"] == rc.stats["bottom_classes"] == ra.stats["bottom_classes"]
        assert rb.metrics["loss"] == pytest.approx(ra.metrics["loss"], rel=1e-12)
        for t, r in ((a, ra), (b, rb), (c, rc)):  # the independent audit of each published partition
            assert audit(t, r.partition, models).passed


@pytest.mark.parametrize("threads", [1, 2])
def test_phase_seconds_are_exclusive_and_within_the_search(threads: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """stats["phase_seconds"]: every phase the search ran is timed, a judge's deferred merges count once (as
    merging), so the search's phases sum to at most its wall time, and the build is timed; the calls on several
    threads go to the "_par" twins (none on one thread; with the grain at 1024 on two, the large sets' groupings,
    merges and judges)."""
    from anoncore.datasets import synthetic_census
    from anoncore.models import DistinctLDiversity, EqualDistanceTCloseness, KAnonymity

    monkeypatch.setenv("ANONCORE_LATTICE_PARALLEL_GRAIN", "1024")
    monkeypatch.setenv("ANONCORE_LATTICE_LOAD_AWARE", "0")
    t = synthetic_census(60_000, rng=3)
    res = lattice_search(t, [KAnonymity(5), DistinctLDiversity(3), EqualDistanceTCloseness(0.3)],
                         suppression_limit=0.02, metric="loss", n_threads=threads)
    ph = res.stats["phase_seconds"]
    assert list(ph) == ["build", "group", "group_par", "masks", "masks_par", "merge", "merge_par", "judge",
                        "judge_par"]
    par = {k: v for k, v in ph.items() if k.endswith("_par")}
    if threads == 1 or not has_openmp:
        assert all(v == 0.0 for v in par.values()), par
    else:
        assert par["group_par"] > 0.0 and par["merge_par"] > 0.0 and par["judge_par"] > 0.0, par
    assert ph["build"] > 0.0 and ph["group"] > 0.0 and ph["judge"] > 0.0, ph
    assert sum(v for k, v in ph.items() if k != "build") <= res.stats["seconds"]


@pytest.mark.parametrize("m", [3, 70])
def test_bottom_histograms_on_threads_are_the_rows_value_counts(m: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bottom's histograms, built in the rows' partitioned grouping on 2 and 3 threads (the grain at 1) and
    by the serial merge on one, against pandas: each bottom class (the rows' quasi-identifier tuples in the order
    of their first rows) holds its rows' sensitive values in the order of their first rows, with their counts."""
    monkeypatch.setenv("ANONCORE_LATTICE_PARALLEL_GRAIN", "1")
    monkeypatch.setenv("ANONCORE_LATTICE_LOAD_AWARE", "0")
    table = _table(11, 6000, n_qi=3, max_leaves=12, m=m)
    qis = list(table.quasi_identifiers)
    cls, _ = pd.factorize(pd.MultiIndex.from_arrays([table.column(q) for q in qis]))
    sv = table.column("s")
    want: dict[int, dict[int, int]] = {}
    for c, v in zip(cls.tolist(), sv.tolist()):
        d = want.setdefault(c, {})
        d[v] = d.get(v, 0) + 1  # (dicts keep the order of first insertion: the values' first rows)
    models = [M("KAnonymity", k=2), M("EqualDistanceTCloseness", t=0.5)]
    for th in (1, 2, 3):
        clear_table_caches(table)
        hoff, hval, hcnt = LatticeProblem.build(table, models, 0.1, "loss", n_threads=th).engine.bottom_histograms()
        assert len(hoff) == len(want) + 1 and hoff[0] == 0, th
        got = [list(zip(hval[hoff[c]:hoff[c + 1]].tolist(), hcnt[hoff[c]:hoff[c + 1]].tolist()))
               for c in range(len(want))]  # (pairs as stored: a value twice in a class would show)
        assert got == [list(want[c].items()) for c in range(len(want))], th


def test_concurrent_searches_equal_serial(adult, adult_occupation) -> None:
    # Searches from several Python threads at once (each OS thread keeps the groupings' hash tables of the
    # engines it drops, and takes them for its next engine): every result equals the same search run alone,
    # node for node, whatever table each thread's previous engine grouped.
    from concurrent.futures import ThreadPoolExecutor

    from anoncore.datasets import synthetic_census

    census = synthetic_census(40_000, rng=3)
    jobs = [(adult, [M("KAnonymity", k=5)], 0.0, "loss"),
            (adult_occupation, [M("EnhancedBetaLikeness", beta=2.0)], 0.0, "loss"),
            (census, [M("KAnonymity", k=10), M("DistinctLDiversity", l=2)], 0.02, "dm_star"),
            (adult, [M("KAnonymity", k=3)], 0.04, "dm_star"),
            (adult_occupation, [M("KAnonymity", k=5), M("DistinctLDiversity", l=3)], 0.04, "loss"),
            (census, [M("KAnonymity", k=4)], 0.0, "loss")]

    def run(job: tuple) -> tuple:
        table, models, limit, metric = job
        clear_table_caches(table)  # (every call groups the rows afresh)
        r = lattice_search(table, models, suppression_limit=limit, metric=metric, n_threads=1)
        return (r.partition.levels, r.partition.n_suppressed, r.stats["nodes_evaluated"],
                r.metrics[metric], r.achieved["passed"])

    alone = [run(j) for j in jobs]
    with ThreadPoolExecutor(max_workers=3) as ex:
        together = list(ex.map(run, jobs * 3))
    assert together == alone * 3
    assert all(a[4] for a in alone)
