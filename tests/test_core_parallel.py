"""Data-parallel phases give bit-identical outputs at any thread count (issue 16): group-by kernels,
Partition.from_levels, publishing to Arrow, the audit, checked against numpy oracles at 1, 2 and 3 threads on
tables larger than one row chunk (65,536 rows), so that chunks and per-thread partials really split the work."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import anoncore as ac
from anoncore import _core
from anoncore.datasets import synthetic_census
from anoncore.models import DistinctLDiversity, EqualDistanceTCloseness, KAnonymity

THREADS = (1, 2, 3)


def first_appearance(rows: np.ndarray) -> tuple[np.ndarray, int]:
    """Oracle: dense labels of the distinct rows numbered by first appearance (numpy's sort-based unique)."""
    _, first, inv = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return rank[inv.reshape(-1)], int(first.size)


@pytest.fixture(scope="module")
def census() -> ac.Table:
    return synthetic_census(200_000, rng=3)


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(0, 4)), min_size=1, max_size=60),
       st.sampled_from(THREADS))
def test_dense_labels_small_tables(rows: list[tuple[int, int, int]], threads: int) -> None:
    codes = np.array(rows, dtype=np.int32)
    labels, n = _core.core.dense_labels(codes, np.array([4, 3, 5], dtype=np.int64), threads)
    want, wn = first_appearance(codes)
    assert n == wn and np.array_equal(labels, want)


@pytest.mark.parametrize("card", [[7, 5, 3], [300, 200, 150], [2**21, 3, 2**20]])
def test_dense_labels_many_chunks(card: list[int]) -> None:
    """Small key spaces (per-chunk lists merged in order), a direct table and a hash map."""
    rng = np.random.default_rng(7)
    n = 250_000
    codes = np.stack([rng.integers(0, min(c, 40 if c > 1000 else c), n) for c in card], axis=1).astype(np.int32)
    want, wn = first_appearance(codes)
    for th in THREADS:
        labels, n_classes = _core.core.dense_labels(codes, np.array(card, dtype=np.int64), th)
        assert n_classes == wn and np.array_equal(labels, want), th


def test_reductions_match_numpy() -> None:
    rng = np.random.default_rng(11)
    n, n_classes, m = 300_000, 1_000, 17
    labels = rng.integers(0, n_classes, n).astype(np.int64)
    labels[labels == 5] = 6  # an empty class
    values = rng.integers(0, m, n).astype(np.int32)
    codes = rng.integers(0, 1_000, (n, 3)).astype(np.int32)
    skip = rng.random(n) < 0.1
    keep = ~skip
    sizes = np.bincount(labels[keep], minlength=n_classes)
    hist = np.zeros((n_classes, m), dtype=np.int64)
    np.add.at(hist, (labels[keep], values[keep]), 1)
    lo = np.full((n_classes, 3), np.iinfo(np.int32).max, dtype=np.int32)
    hi = np.full((n_classes, 3), -1, dtype=np.int32)
    np.minimum.at(lo, labels[keep], codes[keep])
    np.maximum.at(hi, labels[keep], codes[keep])
    for th in THREADS:
        assert np.array_equal(_core.core.class_sizes(labels, skip, n_classes, th), sizes)
        assert np.array_equal(_core.core.class_histogram(values, labels, skip, n_classes, m, th), hist)
        got_lo, got_hi = _core.core.class_min_max(codes, labels, skip, n_classes, th)
        assert np.array_equal(got_lo, lo) and np.array_equal(got_hi, hi)
    assert np.array_equal(_core.core.class_sizes(labels, np.zeros(0, dtype=bool), n_classes, 2),
                          np.bincount(labels, minlength=n_classes))


@pytest.mark.parametrize(("n", "m"), [(300_000, 50), (200_000, 1), (5, 3), (0, 4), (70_000, 70_000)])
def test_value_counts_match_bincount(n: int, m: int) -> None:
    """The audit's whole-table reference: np.bincount of the int32 column at any thread count, every value
    counted (absent ones 0); a value outside [0, m) is refused."""
    rng = np.random.default_rng(n + m)
    values = np.sort(rng.integers(0, m, n)).astype(np.int32) if n % 2 else rng.integers(0, m, n).astype(np.int32)
    for th in THREADS:
        got = _core.core.value_counts(values, m, th)
        assert got.dtype == np.int64
        assert np.array_equal(got, np.bincount(values, minlength=m))
    if n:
        bad = values.copy()
        bad[n // 2] = m
        with pytest.raises(RuntimeError, match="value out of range"):
            _core.core.value_counts(bad, m, 2)
        bad[n // 2] = -1
        with pytest.raises(RuntimeError, match="value out of range"):
            _core.core.value_counts(bad, m, 1)


@given(st.integers(0, 200_000), st.floats(0.0, 1.0), st.integers(0, 2**32 - 1))
def test_count_true_equals_numpy(n: int, p: float, seed: int) -> None:
    # fixed 65,536-flag chunks on the threads (lengths across chunk ends, all-false and all-true arrays)
    mask = np.random.default_rng(seed).random(n) < p
    for th in THREADS:
        assert _core.core.count_true(mask, th) == np.count_nonzero(mask)
    # any nonzero byte is true (a bool view of other bytes): every byte value counted as numpy counts it
    raw = np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8) * (mask if p < 0.5 else ~mask)
    assert _core.core.count_true(raw.view(bool), 2) == np.count_nonzero(raw)
    if n >= 3:
        with pytest.raises(TypeError):
            _core.core.count_true(mask[::2], 1)  # (a strided view is refused, not copied)


@pytest.mark.parametrize(("n", "n_classes", "m"), [(300_000, 1_000, 17), (200_000, 20_000, 30), (5_000, 2_000, 40),
                                                   (1, 1, 1), (70_000, 3, 2)])
def test_class_histogram_dense_and_sparse_match_numpy(n: int, n_classes: int, m: int) -> None:
    """int32 per-thread counts when the histogram has at most a cell per row, int64 copies when sparser: the
    counts of np.add.at either way, at any thread count, skipped rows left out."""
    rng = np.random.default_rng(n)
    labels = rng.integers(0, n_classes, n).astype(np.int64)
    values = rng.integers(0, m, n).astype(np.int32)
    skip = rng.random(n) < 0.2
    for sk in (skip, np.zeros(0, dtype=bool)):
        keep = ~sk if sk.size else np.ones(n, dtype=bool)
        want = np.zeros((n_classes, m), dtype=np.int64)
        np.add.at(want, (labels[keep], values[keep]), 1)
        for th in (1, 2, 3):
            got = _core.core.class_histogram(values, labels, sk, n_classes, m, th)
            assert got.dtype == np.int64 and np.array_equal(got, want), (th, sk.size)
    bad = labels.copy()
    bad[-1] = n_classes
    with pytest.raises(RuntimeError, match="class_histogram"):
        _core.core.class_histogram(values, bad, np.zeros(0, dtype=bool), n_classes, m, 2)


@pytest.mark.parametrize("levels", [[1, 1, 1, 1, 1, 1, 1], [0, 1, 0, 2, 0, 3, 1], [0, 0, 0, 0, 0, 0, 0],
                                    [4, 1, 4, 2, 1, 3, 2]])
def test_from_levels_matches_the_ancestors_grouping(census: ac.Table, levels: list[int]) -> None:
    qis = census.quasi_identifiers
    gen = np.stack([census.hierarchy(q).ancestor[census.column(q), lv] for q, lv in zip(qis, levels)], axis=1)
    want, wn = first_appearance(gen)
    first = np.full(wn, -1)
    first[want[::-1]] = np.arange(want.size)[::-1]
    parts = [ac.Partition.from_levels(census, levels, n_threads=th) for th in THREADS]
    for p in parts:
        assert p.n_classes == wn and np.array_equal(p.labels, want)
        assert np.array_equal(p.gen_node, gen[first])
        assert p == parts[0]
    for j, q in enumerate(qis):
        h = census.hierarchy(q)
        assert np.array_equal(parts[0].gen_lo[:, j], h.leaf_start[gen[first, j]])


def test_from_levels_rejects_a_bad_n_threads(census: ac.Table) -> None:
    with pytest.raises(ValueError, match="'n_threads' parameter of Partition.from_levels"):
        ac.Partition.from_levels(census, [1] * 7, n_threads=0)


@pytest.mark.parametrize("include_suppressed", [True, False])
def test_to_arrow_same_at_any_thread_count(census: ac.Table, include_suppressed: bool) -> None:
    p = ac.Partition.from_levels(census, [1, 1, 1, 1, 1, 1, 1])
    p = p.with_suppressed(p.class_sizes_all[p.labels] < 3)
    assert p.n_suppressed > 0
    tables = [p.to_arrow(include_suppressed=include_suppressed, n_threads=th) for th in THREADS]
    for tb in tables[1:]:
        assert tb.equals(tables[0])
    df = p._to_pandas_from_labels("*", include_suppressed)  # one Python label per cell (not via to_arrow)
    got = tables[0].to_pandas()
    for c in df.columns:
        assert np.array_equal(np.asarray(got[c].astype(object)), np.asarray(df[c].astype(object))), c


@pytest.mark.parametrize("numeric", ["hierarchy", "box"])
def test_to_arrow_reads_the_generators_salary_column(numeric: str) -> None:
    held = synthetic_census(150_000, rng=5, numeric=numeric)
    col = held._held_column("salary")
    assert col is not None and not col.flags.writeable
    assert np.array_equal(col, np.asarray(held.codes)[:, held.column_index("salary")])
    plain = ac.Table._from_codes(held.schema, np.asarray(held.codes),
                                 {a.name: held.dictionary(a.name) for a in held.schema.attributes if a.hierarchy is None})
    assert plain._held_column("salary") is None  # published from the code matrix's strided column
    for t in (held, plain):
        assert t.n_rows == 150_000
    codes = np.asarray(held.codes)
    _, labels = np.unique(codes[:, [1, 4, 5]] // [1, 1, 2], axis=0, return_inverse=True)  # any grouping
    p_held = ac.Partition.from_labels(held, labels.ravel())
    p_plain = ac.Partition.from_labels(plain, labels.ravel())
    sup = np.asarray(held.codes)[:, 0] % 7 == 0
    assert 0 < sup.sum() < held.n_rows
    for include in (True, False):
        a = p_held.with_suppressed(sup).to_arrow(include_suppressed=include, n_threads=2)
        b = p_plain.with_suppressed(sup).to_arrow(include_suppressed=include, n_threads=2)
        assert a.equals(b), include
        assert a.num_rows == (held.n_rows if include else held.n_rows - int(sup.sum()))


def test_a_held_column_must_be_the_columns_codes(census: ac.Table) -> None:
    t = ac.Table._from_codes(census.schema, np.asarray(census.codes))
    j = t.column_index("salary")
    good = np.ascontiguousarray(np.asarray(census.codes)[:, j])
    with pytest.raises(ValueError, match="contiguous int32"):
        t._hold_column("salary", good[:-1].copy())
    with pytest.raises(ValueError, match="contiguous int32"):
        t._hold_column("salary", good.astype(np.int64))
    bad = good.copy()
    bad[-1] += 1
    with pytest.raises(ValueError, match="differ from the code matrix"):
        t._hold_column("salary", bad)
    t._hold_column("salary", good.copy())
    assert np.array_equal(t.column("salary"), good)


def test_audit_same_at_any_thread_count(census: ac.Table) -> None:
    p = ac.Partition.from_levels(census, [2, 1, 2, 1, 1, 1, 1])
    models = [KAnonymity(5), DistinctLDiversity(2), EqualDistanceTCloseness(0.3)]
    reports = [ac.audit(census, p, models, n_threads=th) for th in THREADS]
    for r in reports[1:]:
        assert r == reports[0]
        for a, b in zip(r.models, reports[0].models):
            assert np.array_equal(a.values, b.values, equal_nan=True)
    sizes = np.bincount(p.labels, minlength=p.n_classes)
    assert reports[0][0].achieved == sizes.min()


# ---------------------------------------------------------------------------------------------- generator
def _reference_codes(n: int, rng: object) -> np.ndarray:
    from anoncore.datasets import census as C

    idx = C._generate(n, rng)  # the numpy reference draw
    return np.stack([C._code_maps()[c][idx[c]] for c in C.CENSUS_COLUMNS], axis=1)


@given(st.integers(1, 3_000), st.integers(0, 2**32 - 1), st.sampled_from(THREADS))
def test_generator_equals_the_numpy_reference(n: int, seed: int, threads: int) -> None:
    t = synthetic_census(n, rng=seed, n_threads=threads)
    assert np.array_equal(t.codes, _reference_codes(n, seed))


@pytest.mark.parametrize("n", [65_536, 65_537, 140_001])
def test_generator_same_rows_at_any_thread_count_across_chunks(n: int) -> None:
    ref = _reference_codes(n, 12)
    for th in THREADS:
        assert np.array_equal(synthetic_census(n, rng=12, n_threads=th).codes, ref), th


@given(st.lists(st.integers(0, 5_000), min_size=1, max_size=6), st.integers(0, 2**32 - 1),
       st.sampled_from(THREADS))
def test_generator_spans_of_any_shape_give_the_reference_rows(cuts: list[int], seed: int, threads: int) -> None:
    # the C++ kernel draws each span's eight streams through numpy's bit generator interface: wherever the spans
    # are cut (empty spans too), codes[:, :8] and the scores are those of the per-chunk reference draw
    from anoncore import _core
    from anoncore.datasets import census as C

    n = max(cuts)
    if n == 0:
        return
    bounds = np.array([0, *sorted(cuts), n], dtype=np.int64)
    base = np.random.default_rng(seed).bit_generator.state
    gens = []
    for j in range(len(bounds) - 1):
        for k in range(8):
            bg = np.random.PCG64(0)
            bg.state = base
            bg.advance(k * n + int(bounds[j]))
            gens.append(bg)
    codes, score = np.zeros((n, 9), dtype=np.int32), np.zeros(n)
    spans = _core.datasets.CensusSpans(C._model(True), gens, bounds, codes, score)
    spans.draw(threads)
    spans.draw(threads)  # (nothing left: every span was drawn once)
    u = np.random.default_rng(seed).random((8, n))
    ref_codes, ref_score = np.zeros((n, 9), dtype=np.int32), np.zeros(n)
    _core.datasets.census_rows(C._model(True), u, ref_codes, ref_score)
    assert np.array_equal(codes, ref_codes) and np.array_equal(score, ref_score)


def test_generator_spans_drawn_by_two_callers_at_once() -> None:
    # the normals' thread joins the kernel's threads on the same spans: each span is drawn exactly once
    from concurrent.futures import ThreadPoolExecutor

    from anoncore import _core
    from anoncore.datasets import census as C

    n, n_spans = 300_000, 97
    bounds = np.array([n * j // n_spans for j in range(n_spans + 1)], dtype=np.int64)
    base = np.random.default_rng(8).bit_generator.state
    gens = []
    for j in range(n_spans):
        for k in range(8):
            bg = np.random.PCG64(0)
            bg.state = base
            bg.advance(k * n + int(bounds[j]))
            gens.append(bg)
    codes, score = np.full((n, 9), -1, dtype=np.int32), np.full(n, np.nan)
    spans = _core.datasets.CensusSpans(C._model(True), gens, bounds, codes, score)
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(spans.draw, [1, 2]))
    ref_codes, ref_score = np.full((n, 9), -1, dtype=np.int32), np.zeros(n)
    _core.datasets.census_rows(C._model(True), np.random.default_rng(8).random((8, n)), ref_codes, ref_score)
    assert np.array_equal(codes, ref_codes) and np.array_equal(score, ref_score)


def test_generator_spans_refuse_bad_bounds_and_generators() -> None:
    from anoncore import _core
    from anoncore.datasets import census as C

    model, codes, score = C._model(True), np.zeros((10, 9), dtype=np.int32), np.zeros(10)
    gens = [np.random.PCG64(k) for k in range(8)]
    spans = _core.datasets.CensusSpans
    with pytest.raises(ValueError, match="bounds must run from 0"):
        spans(model, gens, np.array([0, 9], dtype=np.int64), codes, score)
    with pytest.raises(ValueError, match="must not decrease"):
        spans(model, gens + gens, np.array([0, 11, 10], dtype=np.int64), codes, score)
    with pytest.raises(ValueError, match="8 bit generators per span"):
        spans(model, gens[:7], np.array([0, 10], dtype=np.int64), codes, score)
    with pytest.raises(AttributeError):
        spans(model, [object()] * 8, np.array([0, 10], dtype=np.int64), codes, score)


@pytest.mark.parametrize("bitgen", [np.random.PCG64, np.random.MT19937, np.random.Philox])
def test_generator_leaves_a_passed_generator_where_the_reference_does(bitgen: type) -> None:
    from anoncore.datasets import census as C

    a, b = np.random.Generator(bitgen(4)), np.random.Generator(bitgen(4))
    a.integers(0, 2**32, dtype=np.uint32)  # a buffered 32-bit half, which drawing doubles leaves alone
    b.integers(0, 2**32, dtype=np.uint32)
    idx = C._generate(70_000, a)
    codes = C._generate_codes(70_000, b, 2)
    assert np.array_equal(codes, np.stack([C._code_maps()[c][idx[c]] for c in C.CENSUS_COLUMNS], axis=1))
    assert a.random() == b.random() and a.integers(0, 2**32, dtype=np.uint32) == b.integers(0, 2**32, dtype=np.uint32)


def test_generator_frame_uses_the_same_rows() -> None:
    from anoncore.datasets import census as C
    from anoncore.datasets import synthetic_census_frame

    df = synthetic_census_frame(70_000, rng=2)
    idx = C._generate(70_000, 2)
    for c in C.CENSUS_COLUMNS:
        want = np.asarray(C._values()[c], dtype=object)[idx[c]]
        assert [str(x) for x in df[c]] == [str(x) for x in want], c


# ---------------------------------------------------------------------------------------------- two-phase retrieval
@pytest.mark.parametrize("method", ["knn", "ak"])
@pytest.mark.parametrize("policy", ["random", "min_key"])
def test_sabre_same_partition_at_any_thread_count(method: str, policy: str) -> None:
    from anoncore.static.sabre import closeness_model

    t = synthetic_census(30_000, rng=5)
    runs = [ac.sabre(t, [KAnonymity(4), closeness_model(t, 0.2)], method=method, seed_policy=policy, rng=7,
                     n_threads=th) for th in THREADS]
    assert runs[0].stats["recipes"].shape[1] >= 2  # several buckets: several owners
    for r in runs[1:]:
        assert r.partition == runs[0].partition


@pytest.mark.parametrize("policy", ["random", "min_key"])
def test_knn_large_bucket_tree_split_on_several_threads_is_the_same(policy: str) -> None:
    """A bucket of more than a thread's share of the rows and 65,536 rows or more has its k-d tree split on
    every thread (the top serially, its 64 subtrees in parallel, spliced back in the serial node order): the
    classes, which follow the tree's visiting order wherever distances tie (coarse box coordinates: many
    ties), are those of the one-thread build at every count."""
    from anoncore.static.sabre import closeness_model

    t = synthetic_census(110_000, rng=0, numeric="box")
    runs = [ac.sabre(t, [KAnonymity(6), closeness_model(t, 0.35)], method="knn", seed_policy=policy, rng=3,
                     n_threads=th) for th in (1, 2, 3, 4)]
    sizes = runs[0].stats["recipes"].sum(axis=0)
    assert sizes.max() >= 65_536 and 2 * sizes.max() > t.n_rows  # the bucket split in parallel
    assert runs[0].audit.passed  # k = 6 and t = 0.35, checked by the independent audit
    for r in runs[1:]:
        assert r.partition == runs[0].partition

@pytest.mark.parametrize("variant", ["basic", "enhanced"])
def test_burel_same_partition_at_any_thread_count(variant: str) -> None:
    from anoncore.static.burel import likeness_model

    t = synthetic_census(30_000, rng=6, n_qi=3)
    runs = [ac.burel(t, likeness_model(beta=2.0, variant=variant), rng=1, n_threads=th) for th in (1, 2, 3, 5)]
    for r in runs[1:]:
        assert r.partition == runs[0].partition
    assert runs[0].audit.passed


@pytest.mark.parametrize("n_threads", [1, 2, None])
def test_the_runs_audit_takes_the_runs_threads(monkeypatch: pytest.MonkeyPatch, n_threads: int | None) -> None:
    """An algorithm's one audit (static/_finish.py) is given the algorithm's n_threads: a run asked for one thread
    does not audit on every core."""
    import anoncore.static._finish as fin
    from anoncore.static.burel import likeness_model
    from anoncore.static.sabre import closeness_model

    seen: list[int | None] = []
    real = fin.audit

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(kwargs.get("n_threads"))  # type: ignore[arg-type]
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(fin, "audit", spy)
    t = synthetic_census(5_000, rng=2, n_qi=3)
    runs = [ac.lattice_search(t, [KAnonymity(5)], suppression_limit=0.02, n_threads=n_threads),
            ac.sabre(t, [KAnonymity(4), closeness_model(t, 0.3)], rng=1, n_threads=n_threads),
            ac.burel(t, likeness_model(beta=2.0), rng=1, n_threads=n_threads)]
    assert seen == [n_threads] * 3
    assert all(r.audit.passed for r in runs)


# ---------------------------------------------------------------------------------------------- idle cores
def test_idle_cores_count_other_processes() -> None:
    import os
    import subprocess
    import sys
    import time

    avail = _core.core.available_cores()
    assert avail == len(os.sched_getaffinity(0))
    assert 1 <= _core.core.idle_cores() <= avail
    if not sys.platform.startswith("linux"):
        assert _core.core.running_elsewhere() == -1
        return
    base = _core.core.running_elsewhere()
    assert base >= 0
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])  # one runnable thread elsewhere
    try:
        time.sleep(0.3)
        seen = [_core.core.running_elsewhere() for _ in range(20)]
        idle = [_core.core.idle_cores() for _ in range(20)]
    finally:
        busy.kill()
        busy.wait()
    assert max(seen) >= 1
    assert min(idle) <= max(1, avail - 1)


def test_regions_of_few_chunks_take_the_idle_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    """A region takes at most one thread per chunk; with few chunks per thread, at most the idle cores (the
    guard on), every thread asked for with it off or with many chunks."""
    if not _core.has_openmp:
        assert _core.core.region_threads(1000, 4) == 1
        return
    avail = _core.core.available_cores()
    monkeypatch.setenv("ANONCORE_LOAD_AWARE", "0")
    assert _core.core.region_threads(3, 8) == 3 and _core.core.region_threads(5, 4) == 4
    assert _core.core.region_threads(10_000, 0) == avail
    monkeypatch.setenv("ANONCORE_LOAD_AWARE", "1")
    assert 1 <= _core.core.region_threads(4, 4) <= min(4, _core.core.idle_cores() + 1)
    assert _core.core.region_threads(64 * 4, 4) == 4  # many chunks: every thread asked for


def test_retrieval_same_labels_with_the_load_guard_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard only chooses how many owners run: the labels are those of the serial loop either way."""
    from anoncore.static.sabre import closeness_model

    t = synthetic_census(30_000, rng=3)
    models = [KAnonymity(4), closeness_model(t, 0.2)]
    runs = []
    for guard in ("1", "0"):
        monkeypatch.setenv("ANONCORE_LOAD_AWARE", guard)
        runs.append(ac.sabre(t, models, method="knn", rng=7, n_threads=2).partition.labels)
    runs.append(ac.sabre(t, models, method="knn", rng=7, n_threads=1).partition.labels)
    assert np.array_equal(runs[0], runs[1]) and np.array_equal(runs[0], runs[2])


def test_column_of_a_large_table_is_gathered_on_every_core() -> None:
    """Table.column from 131,072 rows takes the parallel gather: the same codes as the strided numpy copy,
    contiguous and read-only, and cached."""
    from anoncore.datasets import synthetic_census

    t = synthetic_census(140_000, rng=4)
    for c in t.columns:
        col = t.column(c)
        assert col.flags.c_contiguous and not col.flags.writeable and col.dtype == np.int32
        assert np.array_equal(col, t.codes[:, t.column_index(c)])
        assert t.column(c) is col
