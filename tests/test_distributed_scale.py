"""The scale path of anoncore.distributed: the item-set kernels (grouping into packed keys, sharding, merging,
interleaving by rank) against pandas as oracle, and the Parquet-to-Arrow paths (frequency set, publishing)
against the in-memory table and the dask DataFrame path, on a local cluster of 2 worker processes."""

from __future__ import annotations

import os
from itertools import pairwise

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

from anoncore import Table, _core
from anoncore.datasets.census import synthetic_census_frame, synthetic_census_schema
from anoncore.distributed import FrequencySet, lattice_search
from anoncore.distributed import frequency as frequency_mod
from anoncore.distributed.publish import audit_published, publish_parquet
from anoncore.models import KAnonymity

K = _core.distributed
NO_W = np.zeros(0, dtype=np.int64)


def _pack(codes: np.ndarray, radix: np.ndarray) -> np.ndarray:
    key = np.zeros(codes.shape[0], dtype=np.uint64)
    for j in range(codes.shape[1]):
        key = key * np.uint64(radix[j]) + codes[:, j].astype(np.uint64)
    return key


@st.composite
def coded_rows(draw, max_rows=120):
    d = draw(st.integers(1, 4))
    radix = np.array(draw(st.lists(st.integers(1, 6), min_size=d, max_size=d)), dtype=np.int64)
    n = draw(st.integers(0, max_rows))
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    codes = np.stack([rng.integers(0, r, size=n) for r in radix], axis=1).astype(np.int32).reshape(n, d)
    weights = rng.integers(1, 9, size=n).astype(np.int64)
    return codes, radix, weights


def _oracle(codes: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """pandas: the distinct rows in order of first appearance with their summed weights."""
    df = pd.DataFrame(codes).assign(w=weights)
    g = df.groupby(list(range(codes.shape[1])), sort=False)["w"].sum()
    return np.asarray(g.index.to_frame(index=False), dtype=np.int32).reshape(-1, codes.shape[1]), g.to_numpy()


@settings(max_examples=60, deadline=None)
@given(coded_rows())
def test_count_rows_equals_pandas_groupby(data):
    codes, radix, weights = data
    keys, counts, ranks = K.count_rows(codes, radix, weights, 7)
    want_codes, want_counts = _oracle(codes, weights)
    assert np.array_equal(K.unpack_keys(keys, radix), want_codes)
    assert np.array_equal(keys, _pack(want_codes, radix))
    assert np.array_equal(counts, want_counts)
    assert np.array_equal(ranks, 7 + np.arange(len(keys)))
    k1, c1, _ = K.count_rows(codes, radix, NO_W, 0)
    assert np.array_equal(k1, keys) and np.array_equal(c1, _oracle(codes, np.ones(len(codes), dtype=np.int64))[1])


@settings(max_examples=60, deadline=None)
@given(coded_rows(max_rows=200), st.integers(1, 5), st.integers(1, 4), st.randoms(use_true_random=False))
def test_merge_shard_interleave_equal_grouping_of_all_rows(data, n_parts, n_shards, rnd):
    codes, radix, weights = data
    cuts = sorted(rnd.randint(0, len(codes)) for _ in range(n_parts - 1))
    bounds = [0, *cuts, len(codes)]
    parts = [K.count_rows(codes[a:b], radix, weights[a:b], i << 40) for i, (a, b) in enumerate(pairwise(bounds))]
    want_keys, want_counts, _ = K.count_rows(codes, radix, weights, 0)
    shuffled = list(parts)
    rnd.shuffle(shuffled)  # any order of the parts: the smallest rank wins, the output is in rank order
    for merged in (K.merge_items(parts), K.merge_items(shuffled)):
        assert np.array_equal(merged[0], want_keys)
        assert np.array_equal(merged[1], want_counts)
        assert np.all(np.diff(merged[2]) > 0)
    # shard every part, merge each shard on its own, interleave the shards by rank
    shard_sets = [[] for _ in range(n_shards)]
    for p in parts:
        s = K.shard_of(p[0], n_shards)
        assert s.min(initial=0) >= 0 and s.max(initial=0) < n_shards
        for q in range(n_shards):
            shard_sets[q].append(tuple(x[s == q] for x in p))
    roots = [K.merge_items(ss) for ss in shard_sets]
    keys, counts, ranks = K.interleave_by_rank(roots)
    assert np.array_equal(keys, want_keys) and np.array_equal(counts, want_counts)
    assert np.all(np.diff(ranks) > 0)


def test_kernel_errors():
    with pytest.raises(ValueError, match="2\\^63"):
        K.count_rows(np.zeros((1, 3), dtype=np.int32), np.array([2**30, 2**30, 8], dtype=np.int64), NO_W, 0)
    with pytest.raises(IndexError, match="row 1, column 0"):
        K.count_rows(np.array([[0], [3]], dtype=np.int32), np.array([3], dtype=np.int64), NO_W, 0)
    with pytest.raises(ValueError, match="weights must be > 0"):
        K.count_rows(np.array([[0]], dtype=np.int32), np.array([3], dtype=np.int64), np.array([0]), 0)
    unsorted = (np.array([1, 2], dtype=np.uint64), np.array([1, 1]), np.array([5, 3]))
    with pytest.raises(ValueError, match="rank order"):
        K.interleave_by_rank([unsorted])


def _misaligned(a: np.ndarray) -> np.ndarray:
    """The same values in an array starting one byte into its buffer (as dask or pickle can rebuild one)."""
    buf = bytearray(a.nbytes + 1)
    out = np.frombuffer(buf, dtype=a.dtype, count=a.size, offset=1).reshape(a.shape)
    out[...] = a
    assert out.ctypes.data % a.dtype.alignment != 0 or a.dtype.alignment == 1
    return out


def test_kernels_take_misaligned_arrays():
    """Item sets that travelled between processes may sit at any byte: the kernels read aligned copies (the
    sanitizer run flags a misaligned read) and give the same answers."""
    rng = np.random.default_rng(3)
    radix = np.array([5, 7, 3], dtype=np.int64)
    codes = np.stack([rng.integers(0, r, 300) for r in radix], axis=1).astype(np.int32)
    parts = [K.count_rows(codes[a:b], radix, NO_W, i << 40) for i, (a, b) in enumerate([(0, 120), (120, 300)])]
    moved = [tuple(_misaligned(x) for x in p) for p in parts]
    for want, got in zip(K.merge_items(parts), K.merge_items(moved)):
        assert np.array_equal(want, got)
    for want, got in zip(K.interleave_by_rank([K.merge_items(parts)]), K.interleave_by_rank([K.merge_items(moved)])):
        assert np.array_equal(want, got)
    keys = parts[0][0]
    assert np.array_equal(K.shard_of(_misaligned(keys), 3), K.shard_of(keys, 3))
    assert np.array_equal(K.unpack_keys(_misaligned(keys), _misaligned(radix)), K.unpack_keys(keys, radix))
    half = np.ascontiguousarray(keys[::2])
    assert np.array_equal(K.is_member(_misaligned(keys), _misaligned(half)), K.is_member(keys, half))
    got = K.count_rows(_misaligned(codes), _misaligned(radix), NO_W, 0)
    for w, g in zip(K.count_rows(codes, radix, NO_W, 0), got):
        assert np.array_equal(w, g)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 50), max_size=60), st.lists(st.integers(0, 50), max_size=30))
def test_is_member_equals_isin(keys, members):
    k = np.array(keys, dtype=np.uint64)
    m = np.array(members, dtype=np.uint64)
    assert np.array_equal(K.is_member(k, m), np.isin(k, m))


def test_unpackable_schemas_group_in_pandas(monkeypatch):
    df = synthetic_census_frame(3000, 2)
    table = Table.from_pandas(df, synthetic_census_schema())
    packed = FrequencySet.from_table(table, sensitive="salary")
    monkeypatch.setattr(frequency_mod, "_packable", lambda radix: False)
    wide = FrequencySet.from_table(table, sensitive="salary")
    assert np.array_equal(wide.codes, packed.codes) and np.array_equal(wide.counts, packed.counts)


# ------------------------------------------------------------------ Parquet paths on a local cluster
N = 60_000


@pytest.fixture(scope="module")
def client(dask_client):  # (conftest: one local cluster of 2 workers for the modules that kill no worker)
    return dask_client


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """7 files of uneven sizes, several row groups each (string columns dictionary-coded by Parquet)."""
    df = synthetic_census_frame(N, 11)
    d = tmp_path_factory.mktemp("parquet")
    bounds = [0, 5000, 13000, 21000, 30000, 41000, 52000, N]
    for i, (a, b) in enumerate(pairwise(bounds)):
        df.iloc[a:b].to_parquet(d / f"part-{i:02d}.parquet", index=False, row_group_size=3000)
    return d, df


@pytest.mark.parametrize("n_shards, split_every, rows_per_task", [(1, 8, 10**9), (3, 2, 4000), (5, 3, 1)])
def test_from_parquet_equals_in_memory_frequency_set(client, files, n_shards, split_every, rows_per_task):
    d, df = files
    schema = synthetic_census_schema()
    want = FrequencySet.from_table(Table.from_pandas(df, schema), sensitive="salary")
    got = FrequencySet.from_parquet(str(d), schema, sensitive="salary", n_shards=n_shards, split_every=split_every,
                                    rows_per_task=rows_per_task)
    assert got.attributes == want.attributes and got.sensitive == "salary"
    assert np.array_equal(got.codes, want.codes) and np.array_equal(got.counts, want.counts)
    via_dask = FrequencySet.from_dask(dd.read_parquet(str(d)), schema, sensitive="salary", n_shards=n_shards)
    assert np.array_equal(via_dask.codes, want.codes) and np.array_equal(via_dask.counts, want.counts)


def test_from_parquet_search_equals_in_memory_search(client, files):
    from anoncore.static.lattice import lattice_search as memory_search

    d, df = files
    schema = synthetic_census_schema()
    models = [KAnonymity(5)]
    mem = memory_search(Table.from_pandas(df, schema), models, suppression_limit=0.04, metric="dm_star")
    res = lattice_search(FrequencySet.from_parquet(str(d / "*.parquet"), schema), models, suppression_limit=0.04,
                         metric="dm_star")
    assert res.levels == tuple(mem.partition.levels)
    assert res.score == mem.metrics["dm_star"]
    assert res.n_suppressed == mem.achieved["n_suppressed"]


def test_publish_from_parquet_equals_dask_path_and_audits(client, files, tmp_path):
    d, _ = files
    schema = synthetic_census_schema()
    models = [KAnonymity(5)]
    freq = FrequencySet.from_parquet(str(d), schema)
    res = lattice_search(freq, models, suppression_limit=0.04, metric="dm_star")
    assert res.n_suppressed > 0
    fast = publish_parquet(str(d), schema, res, str(tmp_path / "fast"), rows_per_task=7000)
    slow = publish_parquet(dd.read_parquet(str(d)), schema, res, str(tmp_path / "slow"))
    assert fast == slow
    assert fast["n_published"] + fast["n_suppressed"] == N
    a = pd.read_parquet(tmp_path / "fast")
    b = pd.read_parquet(tmp_path / "slow")
    assert list(a.columns) == list(b.columns)
    for c in a.columns:  # same rows in the same order, plain strings (no Arrow schema stored)
        assert a[c].astype(str).tolist() == b[c].astype(str).tolist()
    assert not isinstance(a["sex"].dtype, pd.CategoricalDtype)
    rep = audit_published(dd.read_parquet(str(tmp_path / "fast")), schema, models)
    assert rep["passed"] and rep["n_published"] == fast["n_published"]
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".")]  # no temporary folder left


def test_publish_refuses_other_input(client, files, tmp_path):
    d, _ = files
    schema = synthetic_census_schema()
    res = lattice_search(FrequencySet.from_parquet(str(d), schema), [KAnonymity(5)], suppression_limit=0.04,
                         metric="dm_star")
    with pytest.raises(RuntimeError, match="nothing written"):
        publish_parquet(str(d / "part-00.parquet"), schema, res, str(tmp_path / "out"))
    assert not os.listdir(tmp_path)


def test_from_parquet_bad_inputs(client, files, tmp_path):
    _, df = files
    schema = synthetic_census_schema()
    bad = df.iloc[:4000].copy()
    bad.loc[3210, "race"] = "martian"
    bad.iloc[:2000].to_parquet(tmp_path / "a.parquet", index=False)
    bad.iloc[2000:].to_parquet(tmp_path / "b.parquet", index=False, row_group_size=700)
    with pytest.raises(ValueError, match=r"'martian' of column 'race' \(partition 1, row 1210\)"):
        FrequencySet.from_parquet(str(tmp_path), schema, rows_per_task=10**6)
    age = df.iloc[:10].copy()
    age.loc[4, "age"] = 130
    (tmp_path / "age").mkdir()
    age.to_parquet(tmp_path / "age" / "x.parquet", index=False)
    with pytest.raises(ValueError, match=r"Value 130 of column 'age' \(partition 0, row 4\)"):
        FrequencySet.from_parquet(str(tmp_path / "age"), schema)
    (tmp_path / "m").mkdir()
    df.iloc[:10].to_parquet(tmp_path / "m" / "a.parquet", index=False)
    df.iloc[10:20].drop(columns=["race"]).to_parquet(tmp_path / "m" / "b.parquet", index=False)
    with pytest.raises(ValueError, match="has no column 'race'"):
        FrequencySet.from_parquet(str(tmp_path / "m"), schema)
    (tmp_path / "t").mkdir()
    df.iloc[:10].to_parquet(tmp_path / "t" / "a.parquet", index=False)
    df.iloc[10:20].astype({"age": str}).to_parquet(tmp_path / "t" / "b.parquet", index=False)
    with pytest.raises(ValueError, match="Column 'age' has type"):
        FrequencySet.from_parquet(str(tmp_path / "t"), schema)
    (tmp_path / "e").mkdir()
    df.iloc[:10].to_parquet(tmp_path / "e" / "a.parquet", index=False)
    df.iloc[:0].to_parquet(tmp_path / "e" / "b.parquet", index=False)
    with pytest.raises(ValueError, match="is empty"):
        FrequencySet.from_parquet(str(tmp_path / "e"), schema)
    with pytest.raises(FileNotFoundError):
        FrequencySet.from_parquet(str(tmp_path / "nothing-here"), schema)
    nul = df.iloc[:10].copy()
    nul.loc[6, "sex"] = None
    (tmp_path / "n").mkdir()
    nul.to_parquet(tmp_path / "n" / "a.parquet", index=False)
    with pytest.raises(ValueError, match=r"Column 'sex' has a missing value in partition 0, row 6"):
        FrequencySet.from_parquet(str(tmp_path / "n"), schema)
