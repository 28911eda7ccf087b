"""Tests of anoncore.stream.Castle: properties against the independent checker (tests/oracles/castle.py),
determinism, checkpoint/restore, input formats, bad input."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles.castle import check_castle

from anoncore import Hierarchy, Schema
from anoncore.stream import MODES, Castle, CastleRelease

H_A = Hierarchy.from_nested({"*": {"ab": ["a", "b"], "cde": {"C": ["c"], "de": ["d", "e"]}}}, name="A")
H_B = Hierarchy.from_nested({"*": ["x", "y", "z"]}, name="B")


def _schema(n_num: int, n_cat: int, with_sa: bool = True, time: bool = False) -> Schema:
    qi: dict[str, Any] = {f"n{j}": {"kind": "numeric", "domain": (0, 20)} for j in range(n_num)}
    hs = [H_A, H_B]
    for j in range(n_cat):
        qi[f"c{j}"] = hs[j % 2]
    return Schema.build(qi, sensitive="sa" if with_sa else (), pid="pid", time="t" if time else None)


def _stream(rng: np.random.Generator, n: int, n_num: int, n_cat: int, n_persons: int, burst: bool,
            gaps: bool = False) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for j in range(n_num):
        v = rng.integers(0, 21, n).astype(float)
        if burst:
            v[n // 3: n // 2] = 7.0
        data[f"n{j}"] = v
    leaves = [list(H_A.leaves), list(H_B.leaves)]
    for j in range(n_cat):
        data[f"c{j}"] = rng.choice(leaves[j % 2], n)
    data["pid"] = rng.integers(0, n_persons, n)
    data["sa"] = rng.choice(["flu", "hiv", "cold", "ulcer"], n)
    if gaps:
        data["t"] = np.cumsum(rng.integers(1, 4, n)).astype(np.int64)
    return data


def _inputs(data: dict[str, Any], n_num: int, n_cat: int) -> dict[str, Any]:
    n = len(data["pid"])
    hs = [H_A, H_B]
    cat = np.empty((n, n_cat), dtype=np.int64)
    for j in range(n_cat):
        lk = hs[j % 2].leaf_lookup()
        cat[:, j] = [lk[x] for x in data[f"c{j}"]]
    num = np.column_stack([data[f"n{j}"] for j in range(n_num)]) if n_num else np.empty((n, 0))
    pos = data["t"] if "t" in data else np.arange(1, n + 1)
    return {"position": pos, "pid": np.asarray(data["pid"]), "num": num, "cat": cat, "sa": np.asarray(data["sa"])}


def _run(data: dict[str, Any], batches: list[int], **kw: Any) -> list[CastleRelease]:
    n_num = sum(1 for c in data if c.startswith("n"))
    n_cat = sum(1 for c in data if c.startswith("c"))
    c = Castle(_schema(n_num, n_cat, time="t" in data), **kw)
    out = []
    start = 0
    for b in [*batches, len(data["pid"])]:
        b = min(max(b, start), len(data["pid"]))
        out.append(c.push({k: v[start:b] for k, v in data.items()}))
        start = b
    out.append(c.flush())
    return out


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 60),
    n_num=st.integers(0, 2),
    n_cat=st.integers(0, 2),
    k=st.integers(1, 5),
    delta=st.integers(1, 12),
    eta=st.integers(1, 6),
    mu=st.integers(1, 6),
    persons=st.sampled_from([3, 10, 1000]),
    burst=st.booleans(),
    gaps=st.booleans(),
    l=st.sampled_from([None, None, 2, 3]),
    max_reuse=st.sampled_from([None, 0, 1, 3]),
    cuts=st.lists(st.integers(0, 60), max_size=4),
)
@pytest.mark.slow
def test_random_streams_pass_the_checker(seed: int, n: int, n_num: int, n_cat: int, k: int, delta: int, eta: int,
                                         mu: int, persons: int, burst: bool, gaps: bool, l: int | None,
                                         max_reuse: int | None, cuts: list[int]) -> None:
    if n_num + n_cat == 0:
        n_num = 1
    rng = np.random.default_rng(seed)
    data = _stream(rng, n, n_num, n_cat, persons, burst, gaps)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # delta + 1 < k is a legitimate case here
        out = _run(data, sorted(cuts), k=k, delta=delta, eta=eta, mu=mu, l=l, max_reuse=max_reuse, rng=seed)
    hs = [[H_A, H_B][j % 2] for j in range(n_cat)]
    check_castle(_inputs(data, n_num, n_cat), out, k=k, delta=delta, mu=mu, l=l, max_reuse=max_reuse,
                 domains=[(0, 20)] * n_num, hierarchies=hs)
    # the published-as-is column is the input's value at that position
    inp = _inputs(data, n_num, n_cat)
    row = {int(p): i for i, p in enumerate(inp["position"])}
    for r in out:
        assert [inp["sa"][row[int(p)]] for p in r.position] == list(r.columns["sa"])


def test_determinism_and_seed_dependence(seed: int) -> None:
    data = _stream(np.random.default_rng(seed), 400, 2, 2, 40, burst=True)
    a = _run(data, [100, 250], k=4, delta=30, eta=5, mu=10, rng=seed)
    b = _run(data, [100, 250], k=4, delta=30, eta=5, mu=10, rng=seed)
    for x, y in zip(a, b):
        assert x == y
    d = _run(data, [100, 250], k=4, delta=30, eta=5, mu=10, rng=seed + 1)
    assert any(x != y for x, y in zip(a, d))  # the seed matters (split and order choices)
    # batch boundaries do not matter (positions are the clock)
    c = _run(data, [7, 8, 300], k=4, delta=30, eta=5, mu=10, rng=seed)
    cat = lambda rs: np.concatenate([r.position for r in rs])
    assert np.array_equal(cat(a), cat(c))


def test_checkpoint_restore_equals_uninterrupted(seed: int) -> None:
    rng = np.random.default_rng(seed)
    data = _stream(rng, 600, 2, 1, 50, burst=True)
    kw = {"k": 5, "delta": 40, "eta": 6, "mu": 8, "rng": seed}
    full = _run(data, [150, 300, 450], **kw)
    ref = pd.concat([r.to_pandas(include_suppressed=True) for r in full], ignore_index=True)
    for cut in rng.integers(1, 599, 4).tolist():
        c = Castle(_schema(2, 1), **kw)
        first = c.push({k: v[:cut] for k, v in data.items()})
        state = c.checkpoint()
        # the process keeps going, then dies: its later output is lost, restart from the checkpoint
        c.push({k: v[cut:cut + 37] for k, v in data.items()})
        del c
        d = Castle.restore(state)
        rest = [d.push({k: v[cut:] for k, v in data.items()}), d.flush()]
        got = pd.concat([r.to_pandas(include_suppressed=True) for r in [first, *rest]], ignore_index=True)
        pd.testing.assert_frame_equal(got, ref)
        check_castle(_inputs(data, 2, 1), [first, *rest], k=5, delta=40, mu=8, domains=[(0, 20)] * 2,
                     hierarchies=[H_A])


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 120),
    k=st.integers(1, 5),
    delta=st.integers(1, 25),
    persons=st.sampled_from([4, 30, 10**6]),
    burst=st.booleans(),
    l=st.sampled_from([None, 2]),
    cut=st.floats(0.0, 1.0),
    lost=st.integers(0, 30),
)
def test_kill_and_resume_at_random_points_loses_nothing(seed: int, n: int, k: int, delta: int, persons: int,
                                                        burst: bool, l: int | None, cut: float, lost: int) -> None:
    """A process checkpoints after `cut` of the stream, keeps going for `lost` more tuples whose output is lost,
    dies; a new process restores the checkpoint and re-pushes everything after it. The whole output (first part +
    resumed part) passes the independent checker: nothing lost, nothing twice, k_s (and l) and delay hold."""
    import warnings

    rng = np.random.default_rng(seed)
    data = _stream(rng, n, 1, 1, persons, burst)
    at = int(cut * n)
    kw = {"k": k, "delta": delta, "eta": 4, "mu": 5, "l": l, "rng": seed}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        c = Castle(_schema(1, 1), **kw)
    first = c.push({key: v[:at] for key, v in data.items()})
    state = c.checkpoint()
    c.push({key: v[at:at + lost] for key, v in data.items()})  # output never delivered
    del c
    d = Castle.restore(state)
    rest = [d.push({key: v[at:] for key, v in data.items()}), d.flush()]
    check_castle(_inputs(data, 1, 1), [first, *rest], k=k, delta=delta, mu=5, l=l, domains=[(0, 20)],
                 hierarchies=[H_A])


def test_checkpoint_is_versioned_bytes_and_rejects_garbage() -> None:
    c = Castle(_schema(1, 0), k=2, delta=3, rng=0)
    s = c.checkpoint()
    assert isinstance(s, bytes) and s.startswith(b"ANCSTRM\0")
    with pytest.raises(ValueError, match="not a Castle checkpoint"):
        Castle.restore(b"hello")
    bad = bytearray(s)
    bad[8] = 99
    with pytest.raises(ValueError, match="unsupported checkpoint format version"):
        Castle.restore(bytes(bad))
    with pytest.raises(ValueError, match="truncated"):
        Castle.restore(s[:30])
    with pytest.raises(TypeError, match="expects bytes"):
        Castle.restore("x")  # type: ignore[arg-type]


def test_input_formats_agree() -> None:
    pa = pytest.importorskip("pyarrow")
    data = _stream(np.random.default_rng(1), 120, 1, 1, 30, burst=False)
    outs = []
    for conv in (lambda d: d, pd.DataFrame, lambda d: pa.RecordBatch.from_pandas(pd.DataFrame(d)),
                 lambda d: pa.Table.from_pandas(pd.DataFrame(d))):
        c = Castle(_schema(1, 1), k=3, delta=10, eta=4, mu=5, rng=9)
        r = [c.push(conv({k: v[:60] for k, v in data.items()})), c.push(conv({k: v[60:] for k, v in data.items()})),
             c.flush()]
        outs.append(pd.concat([x.to_pandas(include_suppressed=True) for x in r], ignore_index=True))
    for o in outs[1:]:
        pd.testing.assert_frame_equal(o, outs[0])


def test_string_pids_and_table_template(seed: int) -> None:
    df = pd.DataFrame({"age": [30, 31, 32, 33, 34, 35], "zip": ["a", "b", "a", "b", "a", "b"],
                       "pid": ["p1", "p2", "p3", "p1", "p2", "p3"]})
    from anoncore import Attribute, Table

    schema = Schema((Attribute("age", "qi", "numeric"), Attribute("zip", "qi"), Attribute("pid", "pid")))
    tmpl = Table.from_pandas(df, schema)
    c = Castle(tmpl, k=3, delta=4, eta=2, mu=3, rng=seed)
    out = [c.push(df), c.flush()]
    assert sum(len(o) for o in out) == 6
    for o in out:
        for g in np.unique(o.gen_id[~o.suppressed]):
            assert len(set(o.pid[o.gen_id == g])) >= 3


def test_time_column_gaps_expire_everything_due() -> None:
    """A3: with gaps in positions, every tuple with p <= x.p - delta expires on x's arrival."""
    schema = Schema.build({"v": {"kind": "numeric", "domain": (0, 100)}}, pid="pid", time="t")
    c = Castle(schema, k=2, delta=5, eta=3, mu=3, rng=0)
    out = c.push({"v": [1, 2, 3, 4], "pid": [1, 2, 3, 4], "t": [1, 2, 3, 100]})
    # 1, 2, 3 are due at arrival 100; 4 (position 100) leaves early with its cluster {3, 100}
    assert sorted(out.position.tolist()) == [1, 2, 3, 100] and set(out.emitted_at.tolist()) == {100}
    assert c.n_pending_ == 0
    with pytest.raises(ValueError, match="out-of-order position 100 at batch row 0; last accepted 100"):
        c.push({"v": [1], "pid": [9], "t": [100]})
    with pytest.raises(ValueError, match="out-of-order position 150 at batch row 1"):
        c.push({"v": [1, 2], "pid": [9, 10], "t": [200, 150]})


def test_unknown_categorical_value_mid_stream_consumes_nothing() -> None:
    c = Castle(_schema(0, 1, with_sa=False), k=2, delta=3, rng=0)
    r0 = c.push({"c0": ["a", "b"], "pid": [1, 2]})
    with pytest.raises(ValueError, match=r"'q' of column 'c0' \(batch row \d+\) is missing from its hierarchy"):
        c.push({"c0": ["a", "q"], "pid": [3, 4]})
    assert c.n_arrivals_ == 2
    # the stream goes on: the rejected batch is re-sent without the bad tuple; nothing is lost or doubled
    rel = [r0, c.push({"c0": ["a", "d", "e"], "pid": [3, 5, 6]}), c.flush()]
    assert sorted(p for r in rel for p in r.position.tolist()) == [1, 2, 3, 4, 5]
    check_castle({"position": np.arange(1, 6), "pid": np.array([1, 2, 3, 5, 6]), "num": np.empty((5, 0)),
                  "cat": np.array([[H_A.leaf_lookup()[v]] for v in ["a", "b", "a", "d", "e"]])}, rel, k=2,
                 delta=3, mu=100, domains=[], hierarchies=[H_A])


def test_push_after_close_and_double_flush() -> None:
    c = Castle(_schema(1, 0, with_sa=False), k=2, delta=3, rng=0)
    c.push({"n0": [1.0], "pid": [1]})
    c.flush()
    assert c.closed_
    with pytest.raises(RuntimeError, match="after flush"):
        c.push({"n0": [1.0], "pid": [1]})
    with pytest.raises(RuntimeError, match="flush was called twice"):
        c.flush()


def test_empty_batch() -> None:
    c = Castle(_schema(1, 0), k=2, delta=3, rng=0)
    r = c.push({"n0": np.empty(0), "pid": np.empty(0, np.int64), "sa": np.empty(0, object)})
    assert len(r) == 0 and r.to_pandas().shape[0] == 0


def test_l_diversity_releases_are_diverse() -> None:
    rng = np.random.default_rng(5)
    data = _stream(rng, 500, 2, 1, 500, burst=False)
    out = _run(data, [200], k=4, delta=40, eta=5, mu=10, l=3, rng=1)
    stats = check_castle(_inputs(data, 2, 1), out, k=4, delta=40, mu=10, l=3, domains=[(0, 20)] * 2,
                         hierarchies=[H_A])
    assert stats["n_released"] > 0
    assert all((r.clusters["diversity"] >= 3).all() for r in out)


def test_bounded_reuse_set_fifo(seed: int) -> None:
    data = _stream(np.random.default_rng(seed), 800, 1, 0, 800, burst=False)
    out = _run(data, [], k=3, delta=10, eta=3, mu=5, max_reuse=2, rng=seed)
    check_castle(_inputs(data, 1, 0), out, k=3, delta=10, mu=5, max_reuse=2, domains=[(0, 20)])
    c = Castle(_schema(1, 0), k=3, delta=10, eta=3, mu=5, max_reuse=2, rng=seed)
    c.push({k: v for k, v in data.items()})
    assert c.n_reuse_ <= 2


def test_release_to_pandas_labels_and_ranges() -> None:
    c = Castle(_schema(1, 1), k=2, delta=2, eta=1, mu=2, rng=0)
    c.push({"n0": [3.0, 5.0], "c0": ["d", "e"], "pid": [1, 2], "sa": ["flu", "hiv"]})
    r = c.flush()
    df = r.to_pandas()
    assert set(df.columns) == {"position", "n0", "c0", "sa", "ec"}
    assert df["n0"].tolist() == ["[3, 5]"] * 2 and df["c0"].tolist() == ["de"] * 2
    rg = r.to_pandas(ranges=True)
    assert rg["n0_lo"].tolist() == [3.0, 3.0] and rg["n0_hi"].tolist() == [5.0, 5.0]
    assert "CastleRelease(n_released=2" in repr(r) and "Castle(k=2" in repr(c)
    assert MODES[r.mode[0]] == "cluster"


S1 = _schema(1, 0)
BAD_PARAMS = [
    ({"k": 0}, ValueError, r"The 'k' parameter of Castle must be an int in the range \[1, inf\]. Got 0 instead."),
    ({"k": 2.0}, TypeError, r"The 'k' parameter of Castle must be an int"),
    ({"k": True}, TypeError, r"The 'k' parameter of Castle must be an int"),
    ({"delta": 0}, ValueError, r"The 'delta' parameter of Castle must be an int in the range \[1, inf\]"),
    ({"eta": 0}, ValueError, r"The 'eta' parameter"),
    ({"mu": 0}, ValueError, r"The 'mu' parameter"),
    ({"l": 0}, ValueError, r"The 'l' parameter"),
    ({"max_reuse": -1}, ValueError, r"The 'max_reuse' parameter"),
    ({"initial_tau": 2.0}, ValueError, r"The 'initial_tau' parameter"),
    ({"initial_tau": "0"}, TypeError, r"The 'initial_tau' parameter"),
    ({"containment": "box"}, ValueError, r"The 'containment' parameter"),
    ({"rng": "x"}, TypeError, r"The 'rng' parameter"),
    ({"eta": 10, "beta": 20}, ValueError, r"The 'beta' parameter of Castle is another name for 'eta'"),
    ({"beta": 0}, ValueError, r"The 'beta' parameter of Castle must be an int in the range"),
    ({"n_threads": 0}, ValueError, r"The 'n_threads' parameter of Castle must be an int in the range"),
    ({"n_threads": 1.5}, TypeError, r"The 'n_threads' parameter of Castle must be an int"),
    ({"l": 2, "sensitive": "zzz"}, ValueError, r"The 'sensitive' parameter of Castle must name"),
]


@pytest.mark.parametrize(("kw", "exc", "match"), BAD_PARAMS)
def test_bad_parameters(kw: dict[str, Any], exc: type[Exception], match: str) -> None:
    args: dict[str, Any] = {"k": 2, "delta": 3}
    args.update(kw)
    with pytest.raises(exc, match=match):
        Castle(S1, **args)


def test_bad_schemas() -> None:
    with pytest.raises(ValueError, match="needs a person id"):
        Castle(Schema.build({"v": {"kind": "numeric", "domain": (0, 1)}}), k=2, delta=3)
    with pytest.raises(ValueError, match="needs a declared domain"):
        Castle(Schema.build({"v": "numeric"}, pid="pid"), k=2, delta=3)
    with pytest.raises(ValueError, match="needs a hierarchy"):
        Castle(Schema.build(["zip"], pid="pid"), k=2, delta=3)
    with pytest.raises(ValueError, match="at least one quasi-identifier"):
        Castle(Schema.build(sensitive="d", pid="pid"), k=2, delta=3)
    with pytest.raises(TypeError, match="must be a Schema or a Table"):
        Castle("schema", k=2, delta=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="exactly one sensitive attribute"):
        Castle(Schema.build({"v": {"kind": "numeric", "domain": (0, 1)}}, pid="pid"), k=2, delta=3, l=2)


BAD_BATCHES = [
    ({"n0": [1.0], "sa": ["a"]}, ValueError, r"lacks column\(s\) \['pid'\]"),
    ({"pid": [1], "sa": ["a"]}, ValueError, r"lacks column\(s\) \['n0'\]"),
    ({"n0": [1.0], "pid": [1]}, ValueError, r"lacks column\(s\) \['sa'\]"),
    ({"n0": [25.0], "pid": [1], "sa": ["a"]}, ValueError, r"outside its declared domain \[0.0, 20.0\]"),
    ({"n0": ["x"], "pid": [1], "sa": ["a"]}, ValueError, r"Column 'n0' is numeric but holds 'x'"),
    ({"n0": [1.0], "pid": [None], "sa": ["a"]}, ValueError, r"pid column 'pid' has a missing value"),
    ({"n0": [1.0, 2.0], "pid": [1], "sa": ["a"]}, ValueError, r"different lengths"),
    ([1, 2, 3], TypeError, r"Castle.push expects a pandas DataFrame"),
]


@pytest.mark.parametrize(("batch", "exc", "match"), BAD_BATCHES)
def test_bad_batches(batch: Any, exc: type[Exception], match: str) -> None:
    c = Castle(S1, k=2, delta=3, rng=0)
    with pytest.raises(exc, match=match):
        c.push(batch)
    assert c.n_arrivals_ == 0


def test_pid_type_change_mid_stream() -> None:
    c = Castle(S1, k=2, delta=3, rng=0)
    c.push({"n0": [1.0], "pid": [1], "sa": ["a"]})
    with pytest.raises(TypeError, match="changed type mid-stream"):
        c.push({"n0": [1.0], "pid": ["p"], "sa": ["a"]})


def _uci_adult() -> Any:
    import os

    from anoncore.stream.datasets import load_uci_adult_stream

    try:
        return load_uci_adult_stream("train")
    except FileNotFoundError as exc:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(str(exc))
        pytest.skip(str(exc))


@pytest.mark.slow
def test_uci_adult_stream_passes_the_checker() -> None:
    """UCI Adult (30,162 clean rows, Table 5.4's 10 QI with our hierarchies), k=100, delta=10,000, eta=50."""
    from anoncore.stream.datasets import ADULT_QI, adult_stream_schema

    df = _uci_adult()
    assert len(df) == 30162
    schema = adult_stream_schema(10)
    c = Castle(schema, k=100, delta=10_000, eta=50, mu=100, rng=0)
    out = [c.push(df.iloc[s:s + 7_000]) for s in range(0, len(df), 7_000)] + [c.flush()]
    num_q = [q for q in ADULT_QI if schema[q].kind == "numeric"]
    cat_q = [q for q in ADULT_QI if schema[q].kind != "numeric"]
    hs = [schema[q].hierarchy for q in cat_q]
    cat = np.column_stack([[h.leaf_lookup()[v] for v in df[q]] for q, h in zip(cat_q, hs)])
    stats = check_castle({"position": np.arange(1, len(df) + 1), "pid": df["pid"].to_numpy(),
                          "num": df[num_q].to_numpy(float), "cat": cat}, out, k=100, delta=10_000, mu=100,
                         domains=[schema[q].domain for q in num_q], hierarchies=hs)
    assert stats["n_suppressed"] < 0.01 * len(df)


def test_delta_k_minus_one_is_the_tight_feasible_case() -> None:
    """delta + 1 = k: k tuples can be pending when the oldest expires, so releases are possible (no warning)."""
    import warnings

    schema = Schema.build({"v": {"kind": "numeric", "domain": (0, 100)}}, pid="pid")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c = Castle(schema, k=4, delta=3, eta=1, mu=5, beta=1, rng=0)
    assert c.params["eta"] == 1
    out = [c.push({"v": [5, 6, 7, 8, 9, 10, 11, 12], "pid": np.arange(8)}), c.flush()]
    assert sum(r.n_released for r in out) == 8
    check_castle({"position": np.arange(1, 9), "pid": np.arange(8), "num": np.arange(5, 13, dtype=float),
                  "cat": np.empty((8, 0))}, out, k=4, delta=3, mu=5, domains=[(0, 100)])


@settings(max_examples=80, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 45),
    n_num=st.integers(0, 2),
    n_cat=st.integers(0, 2),
    k=st.integers(1, 4),
    delta=st.integers(1, 10),
    eta=st.integers(1, 5),
    mu=st.integers(1, 4),
    persons=st.sampled_from([2, 6, 1000]),
    burst=st.booleans(),
    max_reuse=st.sampled_from([None, 0, 2]),
)
def test_kernel_equals_literal_reference(seed: int, n: int, n_num: int, n_cat: int, k: int, delta: int, eta: int,
                                         mu: int, persons: int, burst: bool, max_reuse: int | None) -> None:
    """Spec §8 check 13: the C++ kernel and a slow literal Python reference of the pseudo-code (same seeded random
    stream) produce exactly the same releases: emission arrival, class, mode, generalization, IL, tau, Omega."""
    import warnings

    from oracles.castle import reference_castle

    if n_num + n_cat == 0:
        n_num = 1
    data = _stream(np.random.default_rng(seed), n, n_num, n_cat, persons, burst)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        out = _run(data, [n // 2], k=k, delta=delta, eta=eta, mu=mu, max_reuse=max_reuse, rng=seed)
    inp = _inputs(data, n_num, n_cat)
    hs = [[H_A, H_B][j % 2] for j in range(n_cat)]
    core_seed = int(np.random.default_rng(seed).integers(0, 2**63 - 1))
    ref, table = reference_castle(inp["num"].tolist(), inp["cat"].tolist(), inp["pid"].tolist(), k=k, delta=delta,
                                  eta=eta, mu=mu, seed=core_seed, domains=[(0, 20)] * n_num, hierarchies=hs,
                                  max_reuse=max_reuse)
    got = {}
    for r in out:
        for i, p in enumerate(r.position.tolist()):
            if r.suppressed[i]:
                got[p] = (int(r.emitted_at[i]), -1, 4, None, None, None)
            else:
                got[p] = (int(r.emitted_at[i]), int(r.gen_id[i]), int(r.mode[i]), tuple(r.num_lo[i].tolist()),
                          tuple(r.num_hi[i].tolist()), tuple(r.cat_node[i].tolist()))
    assert got == ref
    cl = pd.concat([r.clusters for r in out], ignore_index=True)
    assert list(zip(cl["il"].tolist(), cl["tau"].tolist(), cl["kept"].tolist())) == table  # bit-exact


@pytest.mark.parametrize(("n_num", "n_cat", "k", "eta", "sub"), [(2, 2, 3, 2, 0), (1, 2, 4, 1, 1), (0, 2, 3, 2, 2),
                                                                 (2, 0, 5, 1, 3)])
def test_indexed_split_equals_literal_reference(n_num: int, n_cat: int, k: int, eta: int, sub: int) -> None:
    """One tuple per person and few open clusters: large clusters (dozens of persons) go through the indexed k-NN
    rounds of split^k (bounding-box pruning); the releases must equal the literal reference's bit for bit."""
    from oracles.castle import reference_castle

    seed = 1000 + sub
    rng = np.random.default_rng(seed)
    n = 260
    data = _stream(rng, n, n_num, n_cat, 10**9, burst=sub % 2 == 0)
    data["pid"] = np.arange(n)
    out = _run(data, [n // 3], k=k, delta=90, eta=eta, mu=5, rng=seed)
    assert any(MODES[m] == "split" for r in out for m in r.mode)
    inp = _inputs(data, n_num, n_cat)
    hs = [[H_A, H_B][j % 2] for j in range(n_cat)]
    core_seed = int(np.random.default_rng(seed).integers(0, 2**63 - 1))
    ref, table = reference_castle(inp["num"].tolist(), inp["cat"].tolist(), inp["pid"].tolist(), k=k, delta=90,
                                  eta=eta, mu=5, seed=core_seed, domains=[(0, 20)] * n_num, hierarchies=hs)
    got = {}
    for r in out:
        for i, p in enumerate(r.position.tolist()):
            got[p] = ((int(r.emitted_at[i]), -1, 4, None, None, None) if r.suppressed[i] else
                      (int(r.emitted_at[i]), int(r.gen_id[i]), int(r.mode[i]), tuple(r.num_lo[i].tolist()),
                       tuple(r.num_hi[i].tolist()), tuple(r.cat_node[i].tolist())))
    assert got == ref
    cl = pd.concat([r.clusters for r in out], ignore_index=True)
    assert list(zip(cl["il"].tolist(), cl["tau"].tolist(), cl["kept"].tolist())) == table


@pytest.mark.parametrize(("n_num", "n_cat", "k", "persons"), [(2, 2, 10, None), (1, 1, 7, None), (2, 2, 10, 1500)])
def test_thread_count_does_not_change_the_output(n_num: int, n_cat: int, k: int, persons: int | None) -> None:
    """One open cluster collects ~3,000 tuples, so split^k scans more than 64 blocks per round and takes the
    multi-threaded path (per-thread candidate buffers merged under (distance, index)); 1, 2 and 3 threads and a
    restore with another thread count must give the same releases, and they pass the checker."""
    seed = 77 + k
    rng = np.random.default_rng(seed)
    n = 3_300
    data = _stream(rng, n, n_num, n_cat, persons or 10**9, burst=False)
    if persons is None:
        data["pid"] = np.arange(n)
    kw = {"k": k, "delta": 3_000, "eta": 1, "mu": 5, "rng": seed}
    runs = {t: _run(data, [1_000, 2_000], n_threads=t, **kw) for t in (1, 2, 3)}
    split = np.concatenate([r.emitted_at[r.mode == MODES.index("split")] for r in runs[1]])
    assert np.unique(split, return_counts=True)[1].max() > 64 * 32  # one split of more than 64 blocks of 32
    for t in (2, 3):
        assert all(x == y for x, y in zip(runs[1], runs[t]))
    hs = [[H_A, H_B][j % 2] for j in range(n_cat)]
    check_castle(_inputs(data, n_num, n_cat), runs[1], k=k, delta=3_000, mu=5, l=None, max_reuse=None,
                 domains=[(0, 20)] * n_num, hierarchies=hs)
    # a checkpoint taken at one thread count and restored at another continues identically
    c = Castle(_schema(n_num, n_cat), n_threads=1, **kw)
    first = c.push({key: v[:2_000] for key, v in data.items()})
    c2 = Castle.restore(c.checkpoint(), n_threads=2)
    rest = [c2.push({key: v[2_000:] for key, v in data.items()}), c2.flush()]
    pos = lambda rs: np.concatenate([r.position for r in rs])
    gen = lambda rs: np.concatenate([r.gen_id for r in rs])
    assert np.array_equal(pos([first, *rest]), pos(runs[1]))
    assert np.array_equal(gen([first, *rest]), gen(runs[1]))


def test_releases_to_partition_matches_published_generalizations() -> None:
    from anoncore import Table
    from anoncore.stream import releases_to_partition

    data = _stream(np.random.default_rng(3), 300, 1, 1, 300, burst=True)
    schema = _schema(1, 1)
    out = _run(data, [120], k=4, delta=25, eta=4, mu=5, rng=3)
    table = Table.from_pandas(pd.DataFrame(data), schema)
    part = releases_to_partition(table, out)
    rows = np.concatenate([r.position for r in out]) - 1
    sup = np.concatenate([r.suppressed for r in out])
    lo = np.concatenate([r.num_lo for r in out])[:, 0]
    hi = np.concatenate([r.num_hi for r in out])[:, 0]
    node = np.concatenate([r.cat_node for r in out])[:, 0]
    vals = table.numeric_values("n0")
    cls = part.labels[rows]
    ok = ~sup
    assert np.array_equal(vals[part.gen_lo[cls[ok], 0]], lo[ok])
    assert np.array_equal(vals[part.gen_hi[cls[ok], 0]], hi[ok])
    assert np.array_equal(part.gen_node[cls[ok], 1], node[ok])
    assert np.array_equal(part.suppressed[rows], sup)
    assert part.class_sizes[np.unique(cls[ok])].min() >= 4
    with pytest.raises(ValueError, match="do not cover exactly"):
        releases_to_partition(table, out[:-1])


def test_reorder_mode_delivers_in_input_order_within_delta(seed: int) -> None:
    """Thm 5.3: with reorder=True the delivered order is the input order and each tuple is delivered by arrival
    p + delta; the anonymization itself is unchanged."""
    data = _stream(np.random.default_rng(seed), 160, 1, 1, 40, burst=True)
    delta = 12
    plain = _run(data, [], k=3, delta=delta, eta=4, mu=5, rng=seed)
    c = Castle(_schema(1, 1), k=3, delta=delta, eta=4, mu=5, reorder=True, rng=seed)
    delivered_at: dict[int, int] = {}
    outs = []
    for i in range(160):  # one arrival per push, to observe delivery times
        r = c.push({key: v[i:i + 1] for key, v in data.items()})
        outs.append(r)
        for p in r.position.tolist():
            delivered_at[p] = i + 1
    outs.append(c.flush())
    pos = np.concatenate([r.position for r in outs])
    assert pos.tolist() == list(range(1, 161))
    assert all(delivered_at[p] <= p + delta for p in delivered_at)
    key = lambda rs: sorted(
        (int(p), int(g), int(m)) for r in rs for p, g, m in zip(r.position, r.gen_id, r.mode))
    assert key(outs) == key(plain)
    inp = _inputs(data, 1, 1)
    assert [inp["sa"][p - 1] for p in pos.tolist()] == list(np.concatenate([r.columns["sa"] for r in outs]))
    assert c.params["reorder"] is True
    with pytest.raises(TypeError, match="'reorder' parameter"):
        Castle(_schema(1, 1), k=3, delta=3, reorder=1)  # type: ignore[arg-type]


def test_reorder_mode_survives_checkpoint(seed: int) -> None:
    data = _stream(np.random.default_rng(seed), 300, 1, 1, 50, burst=False)
    kw: dict[str, Any] = {"k": 4, "delta": 20, "eta": 4, "mu": 5, "reorder": True, "rng": seed}
    full = _run(data, [100, 200], **kw)
    c = Castle(_schema(1, 1), **kw)
    a = c.push({key: v[:150] for key, v in data.items()})
    d = Castle.restore(c.checkpoint())
    b = [d.push({key: v[150:] for key, v in data.items()}), d.flush()]
    cat = lambda rs: pd.concat([r.to_pandas(include_suppressed=True) for r in rs], ignore_index=True)
    pd.testing.assert_frame_equal(cat([a, *b]), cat(full))
    assert cat(full)["position"].tolist() == list(range(1, 301))


@pytest.mark.parametrize("l", [None, 2])
def test_flush_paper_mode(seed: int, l: int | None) -> None:
    """§2.10 flush='paper': clusters with k persons, then reuse, then ONE residual cluster (or suppression)."""
    data = _stream(np.random.default_rng(seed), 200, 1, 1, 200, burst=False)
    kw: dict[str, Any] = {"k": 4, "delta": 60, "eta": 6, "mu": 5, "l": l, "rng": seed}
    c = Castle(_schema(1, 1), **kw)
    first = c.push(data)
    pending = c.n_pending_
    last = c.flush(mode="paper")
    assert len(last) == pending
    check_castle(_inputs(data, 1, 1), [first, last], k=4, delta=60, mu=5, l=l, domains=[(0, 20)],
                 hierarchies=[H_A])
    merged = last.gen_id[last.mode == MODES.index("merge")]
    assert np.unique(merged).size <= 1  # at most one residual cluster (split sub-clusters have mode 'split')
    c2 = Castle(_schema(1, 1), **kw)
    c2.push(data)
    with pytest.raises(ValueError, match="The 'mode' parameter of Castle.flush"):
        c2.flush(mode="x")


def test_outlier_suppression_option(seed: int) -> None:
    """TDSC's outlier step (off by default): the guarantees still hold with it."""
    data = _stream(np.random.default_rng(seed), 400, 1, 1, 400, burst=True)
    kw: dict[str, Any] = {"k": 4, "delta": 15, "eta": 6, "mu": 5, "rng": seed}
    out = _run(data, [200], outlier_suppression=True, **kw)
    check_castle(_inputs(data, 1, 1), out, k=4, delta=15, mu=5, domains=[(0, 20)], hierarchies=[H_A])
    c = Castle(_schema(1, 1), outlier_suppression=True, **kw)
    assert c.params["outlier_suppression"] is True
    assert Castle.restore(c.checkpoint()).params["outlier_suppression"] is True
    with pytest.raises(TypeError, match="'outlier_suppression' parameter"):
        Castle(_schema(1, 1), k=3, delta=3, outlier_suppression="yes")  # type: ignore[arg-type]


def test_large_hierarchy_without_lookup_table_equals_reference() -> None:
    """Hierarchies above 256 leaves use the parent walk instead of the L x L tables: same results."""
    from oracles.castle import reference_castle

    big = Hierarchy.from_nested({"*": {f"g{a}": {f"h{a}_{b}": [f"v{a}_{b}_{c}" for c in range(10)]
                                                  for b in range(6)} for a in range(5)}}, name="big")
    assert big.n_leaves == 300
    rng = np.random.default_rng(7)
    n = 120
    leaves = np.asarray(big.leaves)
    data = {"c": leaves[rng.integers(0, 300, n)], "v": rng.integers(0, 21, n).astype(float),
            "pid": rng.integers(0, 60, n)}
    schema = Schema.build({"v": {"kind": "numeric", "domain": (0, 20)}, "c": big}, pid="pid")
    c = Castle(schema, k=3, delta=15, eta=5, mu=4, rng=11)
    out = [c.push(data), c.flush()]
    lk = big.leaf_lookup()
    cat = [[lk[x]] for x in data["c"]]
    ref, table = reference_castle([[x] for x in data["v"]], cat, data["pid"].tolist(), k=3, delta=15, eta=5, mu=4,
                                  seed=int(np.random.default_rng(11).integers(0, 2**63 - 1)), domains=[(0, 20)],
                                  hierarchies=[big])
    got = {int(p): ((int(r.emitted_at[i]), -1, 4, None, None, None) if r.suppressed[i] else
                    (int(r.emitted_at[i]), int(r.gen_id[i]), int(r.mode[i]), tuple(r.num_lo[i].tolist()),
                     tuple(r.num_hi[i].tolist()), tuple(r.cat_node[i].tolist())))
           for r in out for i, p in enumerate(r.position)}
    assert got == ref
    cl = pd.concat([r.clusters for r in out], ignore_index=True)
    assert list(zip(cl["il"].tolist(), cl["tau"].tolist(), cl["kept"].tolist())) == table
    check_castle({"position": np.arange(1, n + 1), "pid": data["pid"], "num": data["v"], "cat": np.array(cat)},
                 out, k=3, delta=15, mu=4, domains=[(0, 20)], hierarchies=[big])


def test_push_refuses_sensitive_values_missing_or_outside_the_hierarchy() -> None:
    # issue 18 item 14: such values were accepted silently; the batch is refused before any state changes
    from anoncore import Attribute, Hierarchy, Schema
    from anoncore.stream import Castle

    h = Hierarchy.from_nested({"*": {"resp": ["flu", "cold"], "dig": ["ulcer"]}}, name="d")
    schema = Schema([Attribute("v", "quasi_identifier", "numeric", domain=(0, 100)),
                     Attribute("d", "sensitive", hierarchy=h), Attribute("pid", "pid")])
    for bad, match in ((["flu", "zzz"], r"\['zzz'\] of column 'd'.*batch row 2"),
                       (["flu", None], r"'d'.*1 missing value.*batch row 2"),
                       (["", "flu"], r"'d'.*missing value.*batch row 1")):
        c = Castle(schema, k=2, delta=3, eta=3, mu=2, l=2, rng=0)
        with pytest.raises(ValueError, match=match):
            c.push({"v": [20, 22], "d": bad, "pid": np.arange(2)})
        assert c.n_pending_ == 0
        out = c.push({"v": [20, 22], "d": ["flu", "ulcer"], "pid": np.arange(2)})
        assert out.n_released + out.n_suppressed + c.n_pending_ == 2
