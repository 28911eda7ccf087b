"""Tests of anoncore.stream.SabreW (and the tMondrian_W / tIncognito_W baselines): every run goes through the
independent checker tests/oracles/sabre_w.py; determinism, checkpoint/restore, input formats, bad input."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles.sabre_w import Ground, audit_sabre_w, check_case_log, emd_lp

from anoncore import Hierarchy, Schema
from anoncore._core import sabre_w as core
from anoncore.stream import CASES, SabreW, SabreWRelease, TIncognitoW, TMondrianW

H_A = Hierarchy.from_nested({"*": {"ab": ["a", "b"], "cde": {"C": ["c"], "de": ["d", "e"]}}}, name="A")
H_SA = Hierarchy.from_nested({"any": {"resp": ["flu", "cold", "sars"], "dig": ["ulcer", "gastritis", "cancer"]}},
                             name="disease")
H_AGE = Hierarchy.from_nested({"*": {"lo": ["0", "1", "2", "3", "4"], "hi": ["5", "6", "7", "8", "9"]}}, name="age")
SAL = tuple(range(1, 9))


def _schema(sa_kind: str = "ordinal", time: bool = False, cat: bool = True, age_h: bool = False) -> Schema:
    qi: dict[str, Any] = {"age": {"kind": "numeric", "domain": (0, 9), **({"hierarchy": H_AGE} if age_h else {})}}
    if cat:
        qi["c"] = H_A
    sa: dict[str, Any] = ({"sa": {"kind": "ordinal", "order": SAL}} if sa_kind == "ordinal" else {"sa": H_SA})
    return Schema.build(qi, sensitive=sa, insensitive=["note"], pid="pid", time="t" if time else None)


def _stream(rng: np.random.Generator, n: int, n_persons: int, sa_kind: str = "ordinal", burst: bool = False,
            gaps: bool = False) -> dict[str, Any]:
    d: dict[str, Any] = {"age": rng.integers(0, 10, n), "c": rng.choice(list(H_A.leaves), n)}
    if sa_kind == "ordinal":
        d["sa"] = rng.choice(SAL, n)
    else:
        d["sa"] = rng.choice(list(H_SA.leaves), n)
    if burst:  # a run of identical sensitive values (makes D jump, forcing INDIRECTs)
        a, b = n // 3, n // 3 + n // 5
        d["sa"][a:b] = d["sa"][a]
    d["pid"] = rng.integers(0, n_persons, n)
    d["note"] = np.arange(n)
    if gaps:
        d["t"] = np.cumsum(rng.integers(1, 4, n)).astype(np.int64)
    return d


def _inputs(d: dict[str, Any], sa_kind: str = "ordinal") -> dict[str, Any]:
    n = len(d["pid"])
    lk = H_A.leaf_lookup()
    if sa_kind == "ordinal":
        sa = np.asarray([SAL.index(int(v)) for v in d["sa"]])
    else:
        sl = H_SA.leaf_lookup()
        sa = np.asarray([sl[v] for v in d["sa"]])
    return {"position": d.get("t", np.arange(1, n + 1)), "pid": np.asarray(d["pid"]), "sa": sa,
            "num": np.asarray(d["age"], float)[:, None], "cat": np.asarray([lk[x] for x in d["c"]])[:, None]}


def _ground(sa_kind: str) -> Ground:
    if sa_kind == "ordinal":
        return Ground(len(SAL))
    return Ground(H_SA.n_leaves, H_SA.parent, H_SA.node_height)


def _run(d: dict[str, Any], cuts: list[int], cls: type = SabreW, **kw: Any) -> tuple[list[SabreWRelease], Any]:
    s = cls(_schema(kw.pop("sa_kind", "ordinal"), "t" in d), **kw)
    n = len(d["pid"])
    out = []
    bounds = [0, *sorted(c for c in cuts if 0 < c < n), n]
    for a, b in itertools.pairwise(bounds):
        out.append(s.push({key: v[a:b] for key, v in d.items()}))
    out.append(s.flush())
    return out, s


def _audit(d: dict[str, Any], rels: list[SabreWRelease], sa_kind: str, **p: Any) -> dict[str, Any]:
    r = SabreWRelease.concat(rels)
    return audit_sabre_w(_inputs(d, sa_kind), r, ground=_ground(sa_kind),
                         leaf_ranges=[(np.asarray(H_A.leaf_start), np.asarray(H_A.leaf_count))], **p)


# --------------------------------------------------------------------------------------------- properties
@settings(max_examples=60)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 160), j=st.integers(1, 4), i=st.integers(2, 12),
       t=st.floats(0.05, 1.0), k=st.integers(1, 5), persons=st.sampled_from([3, 10, 1000]),
       sa_kind=st.sampled_from(["ordinal", "hier"]), burst=st.booleans(), n_cuts=st.integers(0, 4),
       method=st.sampled_from(["ak", "knn", "slices"]))
def test_property_audit_passes(seed: int, n: int, j: int, i: int, t: float, k: int, persons: int, sa_kind: str,
                               burst: bool, n_cuts: int, method: str) -> None:
    rng = np.random.default_rng(seed)
    omega = j * i
    k = min(k, omega)
    d = _stream(rng, n, persons, sa_kind, burst)
    cuts = rng.integers(0, n + 1, n_cuts).tolist()
    mk = {"slices": True} if method == "slices" else {"method": method}
    rels, s = _run(d, cuts, omega=omega, interval=i, t=t, k=k, rng=seed, sa_kind=sa_kind, **mk)
    rep = _audit(d, rels, sa_kind, omega=omega, interval=i, t=t, k=k)
    assert rep["passed"], rep
    assert check_case_log(s.case_log_, omega, i) == [] or rep["n_suppressed"] > 0
    # before the flush, nothing is suppressed while every window's newest block holds k distinct persons
    if persons == 1000 and i >= 2 * k:
        r = SabreWRelease.concat(rels)
        assert not np.any(r.suppressed & (r.emitted_at < n))


@settings(max_examples=10)
@given(seed=st.integers(0, 10**6), n=st.integers(20, 120), baseline=st.sampled_from(["tmondrian", "tincognito"]),
       t=st.floats(0.1, 0.6), sa_kind=st.sampled_from(["ordinal", "hier"]))
def test_property_baselines_audit(seed: int, n: int, baseline: str, t: float, sa_kind: str) -> None:
    rng = np.random.default_rng(seed)
    d = _stream(rng, n, 1000, sa_kind)
    s = SabreW(_schema(sa_kind, age_h=True), omega=30, interval=10, t=t, k=3, rng=seed, baseline=baseline)
    rels = [s.push(d), s.flush()]
    rep = _audit(d, rels, sa_kind, omega=30, interval=10, t=t, k=3)
    assert rep["passed"], rep
    assert rep["n_suppressed"] == 0


def test_duplicate_persons_counted_once() -> None:
    # 2 persons only, k = 3: nothing can ever be published; everything is reported suppressed.
    rng = np.random.default_rng(3)
    d = _stream(rng, 50, 2)
    rels, _ = _run(d, [], omega=10, interval=5, t=0.5, k=3, rng=0)
    r = SabreWRelease.concat(rels)
    assert r.n_suppressed == 50 and len(r) == 50
    rep = _audit(d, rels, "ordinal", omega=10, interval=5, t=0.5, k=3)
    assert rep["passed"]


def test_expiring_constraint_exact_timing() -> None:
    # The first slide happens exactly at arrival omega + I and outputs every tuple of the first block.
    rng = np.random.default_rng(1)
    d = _stream(rng, 100, 1000)
    s = SabreW(_schema(), omega=20, interval=5, t=0.4, k=2, rng=0)
    a = s.push({key: v[:24] for key, v in d.items()})
    assert len(a) == 0
    b = s.push({key: v[24:25] for key, v in d.items()})
    assert set(range(1, 6)) <= set(b.position.tolist())
    assert np.all(b.emitted_at == 25)
    assert s.n_pending_ <= 20


def test_one_call_many_slides_equals_many_calls() -> None:
    rng = np.random.default_rng(5)
    d = _stream(rng, 300, 1000, burst=True)
    one, _ = _run(d, [], omega=40, interval=10, t=0.3, k=3, rng=7)
    many, _ = _run(d, list(range(7, 300, 7)), omega=40, interval=10, t=0.3, k=3, rng=7)
    r1, r2 = SabreWRelease.concat(one), SabreWRelease.concat(many)
    for a in ("position", "ec", "emitted_at", "num_lo", "num_hi", "cat_node", "case"):
        np.testing.assert_array_equal(getattr(r1, a), getattr(r2, a))


def test_determinism_and_seed() -> None:
    rng = np.random.default_rng(9)
    d = _stream(rng, 400, 1000)
    a = SabreWRelease.concat(_run(d, [100], omega=60, interval=20, t=0.2, k=3, rng=11)[0])
    b = SabreWRelease.concat(_run(d, [250], omega=60, interval=20, t=0.2, k=3, rng=11)[0])
    np.testing.assert_array_equal(a.ec, b.ec)
    np.testing.assert_array_equal(a.position, b.position)


def test_cases_follow_lemmas_and_j1_never_indirect() -> None:
    rng = np.random.default_rng(2)
    d = _stream(rng, 600, 1000, burst=True)
    _, s = _run(d, [], omega=20, interval=20, t=0.1, k=2, rng=0)
    log = s.case_log_
    assert "indirect" not in [c for _, c, _ in log]
    assert check_case_log(log, 20, 20) == []
    _, s = _run(d, [], omega=40, interval=10, t=0.1, k=2, rng=0)
    cases = [c for _, c, _ in s.case_log_]
    assert cases[0] == "direct" and "nothing" in cases
    assert check_case_log(s.case_log_, 40, 10) == []


def test_direct_inner_guarantee() -> None:
    # Spec §8 SABRE_W item 6: every class of a DIRECT is within t - D of the window's not-yet-output tuples.
    rng = np.random.default_rng(4)
    n, omega, I, t = 240, 40, 10, 0.25
    d = _stream(rng, n, 1000, burst=True)
    rels, _ = _run(d, [], omega=omega, interval=I, t=t, k=2, rng=1)
    r = SabreWRelease.concat(rels)
    g = _ground("ordinal")
    sa_in = _inputs(d)["sa"]
    emitted: dict[int, int] = {}  # arrival -> emitted_at
    for a, e in zip(r.arrival, r.emitted_at):
        emitted[int(a)] = int(e)
    checked = 0
    for row in r.classes.itertuples():
        if row.case != "direct":
            continue
        ws, wl = int(row.window_start), int(row.window_len)
        members = r.arrival[r.ec == row.ec]
        at = int(r.emitted_at[r.ec == row.ec][0])
        # R(W, o-bar) at that slide: window tuples not emitted before this slide
        ob = [a for a in range(ws, ws + wl) if emitted[a] >= at]
        dd = g.emd(np.bincount(sa_in[ob], minlength=8), np.bincount(sa_in[ws:ws + wl], minlength=8))
        assert abs(dd - row.d) < 1e-9
        e = g.emd(np.bincount(sa_in[members], minlength=8), np.bincount(sa_in[ob], minlength=8))
        assert e <= row.t_used + 1e-9
        assert abs(row.t_used - (t - row.d)) < 1e-12
        checked += 1
    assert checked > 5


def test_gapped_positions_and_time_column() -> None:
    rng = np.random.default_rng(8)
    d = _stream(rng, 120, 1000, gaps=True)
    rels, _ = _run(d, [50], omega=20, interval=10, t=0.3, k=2, rng=0)
    rep = _audit(d, rels, "ordinal", omega=20, interval=10, t=0.3, k=2)
    assert rep["passed"]
    assert set(SabreWRelease.concat(rels).position.tolist()) == set(d["t"].tolist())


# --------------------------------------------------------------------------------------------- checkpoint
def test_kill_and_resume_at_random_points() -> None:
    rng = np.random.default_rng(12)
    n, omega, I = 500, 60, 15
    d = _stream(rng, n, 50, burst=True)
    ref = SabreWRelease.concat(_run(d, [], omega=omega, interval=I, t=0.3, k=3, rng=5)[0])
    for trial in range(4):
        s = SabreW(_schema(), omega=omega, interval=I, t=0.3, k=3, rng=5)
        outs: list[SabreWRelease] = []
        pos = 0
        state, state_pos, state_nout = s.checkpoint(), 0, 0
        while pos < n:
            step = int(rng.integers(1, 80))
            outs.append(s.push({key: v[pos:pos + step] for key, v in d.items()}))
            pos = min(n, pos + step)
            if rng.random() < 0.4:
                state, state_pos, state_nout = s.checkpoint(), pos, len(outs)
            if rng.random() < 0.2:  # the process dies: restart from the last checkpoint, re-push after it
                s = SabreW.restore(state)
                outs = outs[:state_nout]
                pos = state_pos
        outs.append(s.flush())
        r = SabreWRelease.concat(outs)
        rep = _audit(d, outs, "ordinal", omega=omega, interval=I, t=0.3, k=3)
        assert rep["passed"], (trial, rep)
        np.testing.assert_array_equal(r.position, ref.position)
        np.testing.assert_array_equal(r.ec, ref.ec)


def test_checkpoint_bytes_versioned() -> None:
    s = SabreW(_schema(), omega=10, interval=5, t=0.5, k=2)
    b = s.checkpoint()
    assert isinstance(b, bytes) and b.startswith(b"ANCSTRM\0")
    with pytest.raises(ValueError, match="not a SabreW checkpoint"):
        SabreW.restore(b"garbage" * 5)
    bad = bytearray(b)
    bad[8] = 99
    with pytest.raises(ValueError, match="unsupported checkpoint format version"):
        SabreW.restore(bytes(bad))
    with pytest.raises(ValueError, match="truncated"):
        SabreW.restore(b[:-10])
    with pytest.raises(TypeError, match="expects bytes"):
        SabreW.restore("x")  # type: ignore[arg-type]
    m = TMondrianW(_schema(age_h=True), omega=10, interval=5, t=0.5, k=2)
    assert type(SabreW.restore(m.checkpoint())) is TMondrianW


# --------------------------------------------------------------------------------------------- formats
def test_batch_formats_arrow_numpy_pandas() -> None:
    pa = pytest.importorskip("pyarrow")
    rng = np.random.default_rng(0)
    d = _stream(rng, 90, 1000)
    df = pd.DataFrame(d)
    kinds = [df, pa.RecordBatch.from_pandas(df), d]
    outs = []
    for b in kinds:
        s = SabreW(_schema(), omega=20, interval=10, t=0.3, k=2, rng=3)
        outs.append(SabreWRelease.concat([s.push(b), s.flush()]))
    for o in outs[1:]:
        np.testing.assert_array_equal(o.ec, outs[0].ec)
    rec = df[["age", "c", "sa", "pid", "note"]].to_records(index=False)
    s = SabreW(_schema(), omega=20, interval=10, t=0.3, k=2, rng=3)
    np.testing.assert_array_equal(SabreWRelease.concat([s.push(np.asarray(rec)), s.flush()]).ec, outs[0].ec)
    tab = outs[0].to_pandas()
    assert list(tab.columns[:3]) == ["position", "age", "c"] and len(tab) == 90
    assert set(np.unique(outs[0].case)) <= set(range(len(CASES)))


def test_string_pids_and_categorical_sa_hierarchy() -> None:
    rng = np.random.default_rng(6)
    d = _stream(rng, 100, 1000, sa_kind="hier")
    d["pid"] = np.asarray([f"p{x}" for x in d["pid"]], dtype=object)
    s = SabreW(_schema("hier"), omega=20, interval=10, t=0.3, k=2, rng=0)
    rels = [s.push(d), s.flush()]
    dd = dict(d)
    dd["pid"] = pd.factorize(d["pid"])[0]
    assert _audit(dd, rels, "hier", omega=20, interval=10, t=0.3, k=2)["passed"]


# --------------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(("kw", "exc", "match"), [
    ({"t": 0.0}, ValueError, "'t' parameter of SabreW must be a float in the range"),
    ({"t": 1.5}, ValueError, "range \\(0, 1\\]"),
    ({"t": "x"}, TypeError, "'t' parameter"),
    ({"omega": 2, "k": 3}, ValueError, "'omega' parameter of SabreW must be at least k = 3"),
    ({"interval": 0}, ValueError, "'interval' parameter"),
    ({"interval": 11}, ValueError, "range \\[1, omega = 10\\]"),
    ({"interval": 3}, ValueError, "'omega' parameter of SabreW must be a multiple of interval = 3"),
    ({"k": 0}, ValueError, "'k' parameter"),
    ({"k": 2.0}, TypeError, "'k' parameter"),
    ({"baseline": "x"}, ValueError, "'baseline' parameter"),
    ({"rng": "x"}, TypeError, "'rng' parameter"),
    ({"method": "x"}, ValueError, "'method' parameter"),
    ({"method": "knn", "slices": True}, ValueError, "variant of method='ak' only"),
])
def test_invalid_parameters(kw: dict[str, Any], exc: type, match: str) -> None:
    p = {"omega": 10, "interval": 5, "t": 0.3, "k": 2, **kw}
    with pytest.raises(exc, match=match):
        SabreW(_schema(), **p)


def test_bad_schemas() -> None:
    with pytest.raises(ValueError, match="needs a person id"):
        SabreW(Schema.build({"age": {"kind": "numeric", "domain": (0, 9)}}, sensitive={"sa": H_SA}),
               omega=10, interval=5, t=0.3)
    with pytest.raises(ValueError, match="needs a fixed domain"):
        SabreW(Schema.build({"age": {"kind": "numeric", "domain": (0, 9)}}, sensitive={"sa": "numeric"},
                            pid="pid"), omega=10, interval=5, t=0.3)
    with pytest.raises(ValueError, match="needs a declared domain"):
        SabreW(Schema.build({"age": "numeric"}, sensitive={"sa": H_SA}, pid="pid"), omega=10, interval=5, t=0.3)
    with pytest.raises(ValueError, match="needs a hierarchy for every quasi-identifier"):
        TIncognitoW(_schema(), omega=10, interval=5, t=0.3, k=2)
    s = SabreW(Schema.build({"age": {"kind": "numeric", "domain": (0, 9)}}, sensitive={"sa": "numeric"},
                            pid="pid"), omega=10, interval=5, t=0.3, k=2, sa_values=[1, 2, 3])
    assert s.sa_values == (1.0, 2.0, 3.0)


def test_bad_batches_consume_nothing() -> None:
    rng = np.random.default_rng(0)
    d = _stream(rng, 30, 1000)
    s = SabreW(_schema(), omega=10, interval=5, t=0.3, k=2)
    s.push({key: v[:5] for key, v in d.items()})
    bad = {key: v[5:10].copy() for key, v in d.items()}
    bad["c"] = bad["c"].astype(object)
    bad["c"][2] = "zzz"
    with pytest.raises(ValueError, match="Value 'zzz' of column 'c' \\(batch row 2\\) is missing from"):
        s.push(bad)
    bad = {key: v[5:10].copy() for key, v in d.items()}
    bad["sa"][1] = 99
    with pytest.raises(ValueError, match="sensitive domain"):
        s.push(bad)
    nopid = {key: v[5:10] for key, v in d.items() if key != "pid"}
    with pytest.raises(ValueError, match="lacks column"):
        s.push(nopid)
    napid = {key: v[5:10] for key, v in d.items()}
    napid["pid"] = np.array([1, 2, None, 4, 5], dtype=object)
    with pytest.raises(ValueError, match="pid column 'pid' has a missing value at batch row 2"):
        s.push(napid)
    out = {key: v[5:10].copy() for key, v in d.items()}
    out["age"][0] = 50
    with pytest.raises(ValueError, match="outside its declared domain"):
        s.push(out)
    with pytest.raises(TypeError, match="push expects"):
        s.push([1, 2, 3])
    assert s.n_arrivals_ == 5
    s.push({key: v[5:30] for key, v in d.items()})
    s.flush()
    with pytest.raises(RuntimeError, match="closed"):
        s.push({key: v[:1] for key, v in d.items()})
    with pytest.raises(RuntimeError, match="flush was called twice"):
        s.flush()


def test_out_of_order_positions() -> None:
    rng = np.random.default_rng(0)
    d = _stream(rng, 20, 1000, gaps=True)
    s = SabreW(_schema(time=True), omega=10, interval=5, t=0.3, k=2)
    s.push({key: v[:10] for key, v in d.items()})
    with pytest.raises(ValueError, match="out-of-order position"):
        s.push({key: v[:3] for key, v in d.items()})
    bad = {key: v[10:20].copy() for key, v in d.items()}
    bad["t"][4] = bad["t"][3]
    with pytest.raises(ValueError, match="out-of-order position .* at batch row 4"):
        s.push(bad)


# --------------------------------------------------------------------------------------------- kernels
@settings(max_examples=30)
@given(seed=st.integers(0, 10**6), m=st.integers(2, 7), hier=st.booleans())
def test_global_emd_matches_lp(seed: int, m: int, hier: bool) -> None:
    from anoncore.stream._window import GroundMetric

    rng = np.random.default_rng(seed)
    if hier:
        g, gm = _ground("hier"), GroundMetric(H_SA.n_leaves, H_SA)
        m = H_SA.n_leaves
    else:
        g, gm = Ground(m), GroundMetric(m)
    p = rng.integers(0, 5, m) + 1
    q = rng.integers(0, 5, m) * rng.integers(0, 2, m)
    q[0] += 1
    lp = emd_lp(p / p.sum(), q / q.sum(), g.matrix())
    assert abs(g.emd(q, p) - lp) < 1e-9
    assert abs(float(gm.emd(q, p)) - lp) < 1e-9


@settings(max_examples=30)
@given(seed=st.integers(0, 10**6), m=st.integers(1, 12), t=st.floats(0.01, 1.0), k=st.integers(1, 4),
       n=st.integers(1, 80))
def test_window_sabre_kernel_classes_close_and_k(seed: int, m: int, t: float, k: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    sa = rng.integers(0, m, n).astype(np.int32)
    sa[sa == m // 2] = 0  # leave holes in the domain: the global metric must still hold
    keys = rng.integers(0, 2**40, n).astype(np.uint64)
    pids = rng.integers(0, 30, n).astype(np.int64)
    coords = rng.random((n, 2))
    out = core.window_sabre(sa, m, None, keys, pids, t, k, 7, False, coords, bool(seed % 2))
    g = Ground(m)
    ref = np.bincount(sa, minlength=m)
    if len(set(pids.tolist())) < k:
        assert not out["feasible"]
        return
    lab = out["labels"]
    assert out["feasible"] and lab.min() == 0 and set(lab.tolist()) == set(range(out["n_classes"]))
    for c in range(out["n_classes"]):
        sel = lab == c
        assert len(set(pids[sel].tolist())) >= k
        assert g.emd(np.bincount(sa[sel], minlength=m), ref) <= t + 1e-9


def test_bucket_num_global_reaches_threshold() -> None:
    ref = np.array([5, 0, 0, 3, 0, 7, 1, 0, 0, 2], np.int64)
    b = core.bucket_num_global(ref, 0.1)
    assert b["u"] < 0.1
    # every bucket's CET^U equals the literal maximum over its present values (global |i-j|/(m-1))
    p = ref / ref.sum()
    for j in range(len(b["size"])):
        members = np.flatnonzero(b["bucket_of"] == j)
        lit = max(sum(abs(l - i) / 9 * p[i] for i in members) for l in members)
        assert abs(lit - b["cet"][j]) < 1e-12
    assert abs(sum(b["cet"]) - b["u"]) < 1e-12


def test_merge_for_persons() -> None:
    lab = np.array([0, 0, 1, 2, 2, 3], np.int64)
    pid = np.array([1, 1, 2, 3, 1, 9], np.int64)
    assert core.merge_for_persons(lab, 4, pid, 2) == 2
    assert lab.tolist() == [0, 0, 0, 1, 1, 1]
    lab = np.array([0, 1], np.int64)
    assert core.merge_for_persons(lab, 2, np.array([4, 4], np.int64), 2) == -1


def test_docs_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "sabre_w.md").read_text()
    block = re.search(r"```python\n(.*?)```", text, re.DOTALL)
    assert block is not None
    exec(compile(block.group(1), "docs/sabre_w.md", "exec"), {})  # noqa: S102 (runs the docs example)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "1000 0"


def test_empty_batch_and_state_properties() -> None:
    rng = np.random.default_rng(0)
    d = _stream(rng, 40, 1000)
    s = SabreW(_schema(), omega=10, interval=5, t=0.3, k=2, rng=0)
    empty = s.push(pd.DataFrame({key: v[:0] for key, v in d.items()}))
    assert len(empty) == 0 and s.n_arrivals_ == 0 and len(empty.classes) == 0
    s.push({key: v[:12] for key, v in d.items()})
    assert s.n_arrivals_ == 12 and s.n_pending_ == 12  # the first slide needs omega + I = 15 arrivals
    s.push({key: v[12:40] for key, v in d.items()})
    assert s.n_pending_ <= 10 + 5
    assert "SabreW(omega=10" in repr(s) and s.params["baseline"] == "sabre"
    rel = s.flush()
    assert s.closed_ and s.n_pending_ == 0
    assert np.array_equal(rel.gen_id, rel.ec)
