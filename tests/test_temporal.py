"""Tests of anoncore.temporal: oracle agreement, invariants of the reposition model, stream and Anatomy
properties, and input validation (spec ../shared/spec/temporal-reposition.md A.7)."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

from oracles.temporal import brute_min_suppression, eligible, greedy_suppression, window_optimum

from anoncore import InfeasibleError, _core
from anoncore.temporal import (
    Mu,
    Repositioner,
    WindowState,
    anatomize,
    anatomize_stream,
    anatomy_window_query_error,
    is_l_eligible,
    level_sweep,
    make_temporal_stream,
    merge_snapshots,
    min_suppression,
    optimal_reposition_counts,
    reposition_stream,
    reposition_window,
    suppression_only,
    window_query_error,
)

SETTINGS = settings(deadline=None, derandomize=True, max_examples=60)

MUS = {
    "2d": (Mu.linear(2.0), lambda d: 2.0 * d),
    "d2": (Mu.power(2.0), lambda d: float(d * d)),
    "d3": (Mu.power(3.0), lambda d: float(d**3)),
    "exp": (Mu.exponential(2.0), lambda d: float(2**d - 1)),
    "table": (Mu.from_table([d * d + 3 * d for d in range(40)]), lambda d: float(d * d + 3 * d)),
}


# --- random window states ------------------------------------------------------------------------------------------
def random_window(rng: np.random.Generator, max_slots: int = 3, max_sa: int = 4):
    """A timestamp-order preserving inherited window [lo, hi] plus a new snapshot at hi + 1."""
    n_old = int(rng.integers(1, max_slots + 1))
    n_sa = int(rng.integers(1, max_sa + 1))
    lo = 10
    hi = lo + n_old - 1
    rows = []
    nid = 0
    published: dict[int, list[tuple[int, int]]] = {}
    suppressed: dict[int, list[tuple[int, int]]] = {}
    for s in range(n_sa):
        slots, tss = [], []
        for j in range(lo, hi + 1):
            for _ in range(int(rng.integers(0, 3))):
                slots.append(j)
                tss.append(j - int(rng.integers(0, 3)))
        for t, j in zip(sorted(tss), sorted(slots)):  # sorted assignment: order preserving, t <= j
            rows.append((nid, t, s, j, False)); nid += 1
            published.setdefault(s, []).append((t, j))
        for j in range(lo, hi + 1):
            for _ in range(int(rng.integers(0, 3))):
                rows.append((nid, j, s, j, True)); nid += 1
                suppressed.setdefault(s, []).append((j, j))
    new_counts = [int(c) for c in rng.integers(0, 5, size=n_sa)]
    new_sa = np.repeat(np.arange(n_sa), new_counts)
    rng.shuffle(new_sa)
    a = np.array([r[:4] for r in rows], dtype=np.int64).reshape(-1, 4)
    state = WindowState(lo, hi, a[:, 0].copy(), a[:, 1].copy(), a[:, 2].astype(np.int32), a[:, 3].copy(),
                        np.array([r[4] for r in rows], dtype=bool))
    return state, new_sa, new_counts, published, suppressed, n_sa


def check_window_invariants(before: WindowState, res, new_sa, l: int, n_sa: int, beta: np.ndarray) -> None:
    after = res.state
    hi = after.hi
    # nothing lost or duplicated
    assert after.ids.size == before.ids.size + len(new_sa)
    assert np.unique(after.ids).size == after.ids.size
    # |P_i[s]| unchanged for inherited slots (recycle reposition)
    cb = before.counts(n_sa)
    ca = after.counts(n_sa)
    np.testing.assert_array_equal(ca[: cb.shape[0]], cb)
    # every published slot l-eligible? P_hi must be; inherited slots are unchanged
    assert eligible(ca[-1].tolist(), l)
    # records move only forward (TS' >= TS and never backwards from their previous slot), at most w - 1 slots
    assert np.all(after.slot[~after.suppressed] >= after.ts[~after.suppressed])
    prev = dict(zip(before.ids.tolist(), before.slot.tolist()))
    for i, sl in zip(after.ids.tolist(), after.slot.tolist()):
        if i in prev:
            assert 0 <= sl - prev[i] <= hi - before.lo
    # suppressed records are at home
    assert np.all(after.slot[after.suppressed] == after.ts[after.suppressed])
    # timestamp order preserved inside the window
    pub = ~after.suppressed
    for s in range(n_sa):
        m = pub & (after.sa == s)
        order = np.lexsort((after.ts[m], after.slot[m]))
        assert np.all(np.diff(after.ts[m][order]) >= 0)
    # IL drop = sum of committed gains
    committed = sum(t.gain for t in res.trace if not t.rolled_back)
    assert res.il_initial - res.il_final == pytest.approx(committed, abs=1e-9)
    # per value the head gains never increase (F3)
    for s in range(n_sa):
        g = [t.gain for t in res.trace if t.sa == s]
        assert all(a >= b - 1e-9 for a, b in itertools.pairwise(g))


@pytest.mark.parametrize("mu_name", list(MUS))
def test_corrected_equals_brute_force(mu_name: str) -> None:
    """A.7 item 7: the corrected greedy reaches the brute-force optimum on random small windows."""
    mu, f = MUS[mu_name]
    rng = np.random.default_rng(1234 + len(mu_name))
    faithful_worse = 0
    n = 800
    for _ in range(n):
        state, new_sa, new_counts, published, suppressed, n_sa = random_window(rng)
        l = int(rng.integers(2, 4))
        beta = rng.integers(0, 8, size=n_sa).astype(float)
        res = reposition_window(state, new_sa, l=l, mu=mu, beta=beta, n_sa=n_sa)
        opt = window_optimum(published, suppressed, new_counts, state.hi + 1, l, f, beta)
        assert res.il_final == pytest.approx(opt, abs=1e-9), (state, new_sa.tolist(), l, beta)
        assert res.il_final == pytest.approx(res.state.information_loss(mu, beta), abs=1e-9)
        check_window_invariants(state, res, new_sa, l, n_sa, beta)
        paper = reposition_window(state, new_sa, l=l, mu=mu, beta=beta, n_sa=n_sa, mode="paper_faithful")
        assert paper.il_final >= opt - 1e-9
        faithful_worse += paper.il_final > opt + 1e-9
    # the m = 0 defect shows up on random windows (spec A.2.6 reports ~13%)
    assert faithful_worse > 0


def test_linear_mu_gain_shortcut() -> None:
    """A.7 item 8: with mu = c d, IG(r) = beta_s - c (w + 1 - r.TS); the table form (chain walk) agrees."""
    rng = np.random.default_rng(7)
    c = 1.5
    table = Mu.from_table([c * d for d in range(60)])
    for _ in range(200):
        state, new_sa, _, _, _, n_sa = random_window(rng, max_slots=4)
        beta = rng.integers(0, 10, size=n_sa).astype(float)
        a = reposition_window(state, new_sa, l=2, mu=Mu.linear(c), beta=beta, n_sa=n_sa)
        b = reposition_window(state, new_sa, l=2, mu=table, beta=beta, n_sa=n_sa)
        for t in a.trace:
            assert t.gain == pytest.approx(beta[t.sa] - c * (a.state.hi - t.from_slot))
        assert [t.gain for t in a.trace] == pytest.approx([t.gain for t in b.trace])
        assert a.il_final == pytest.approx(b.il_final)


# --- count level -----------------------------------------------------------------------------------------------------
@SETTINGS
@given(st.lists(st.integers(0, 6), min_size=1, max_size=6), st.integers(2, 4))
def test_min_suppression_closed_form(counts: list[int], l: int) -> None:
    """A.7 item 2: closed form == paper's greedy == brute force, also in the kernel."""
    closed = min_suppression(counts, l)
    assert closed.tolist() == greedy_suppression(counts, l)
    assert sum(counts) - int(closed.sum()) == brute_min_suppression(counts, l)
    L = _core.temporal.eligible_level(np.asarray(counts, dtype=np.int64), l)
    assert closed.tolist() == np.minimum(counts, L).tolist()


@SETTINGS
@given(
    st.lists(st.tuples(st.integers(0, 3), st.lists(st.integers(-6, 6), max_size=4)), min_size=1, max_size=5),
    st.integers(2, 3),
)
def test_count_greedy_equals_level_sweep(spec: list[tuple[int, list[int]]], l: int) -> None:
    p = [c for c, _ in spec]
    if not is_l_eligible(p, l):
        p = min_suppression(p, l).tolist()
    gains = [sorted(g, reverse=True) for _, g in spec]
    best, _ = level_sweep(p, gains, l)
    sol = optimal_reposition_counts(p, gains, l)
    assert sol.total_gain == pytest.approx(best)
    assert is_l_eligible(sol.counts, l)
    assert optimal_reposition_counts(p, gains, l, mode="paper_faithful").total_gain <= best + 1e-9


# --- streams -----------------------------------------------------------------------------------------------------------
def check_stream(ts: np.ndarray, sa: np.ndarray, res, l: int, n_sa: int) -> None:
    pts = res.published_ts
    sup = res.suppressed
    assert np.array_equal(sup, pts < 0)
    assert np.all(pts[~sup] >= ts[~sup])  # forward only
    _, counts = res.snapshot_counts(n_sa)
    for c in counts:  # every published snapshot l-eligible
        assert l * c.max() <= c.sum()
    for s in range(n_sa):  # timestamp order preserved over the whole published stream
        m = ~sup & (sa == s)
        order = np.lexsort((ts[m], pts[m]))
        assert np.all(np.diff(ts[m][order]) >= 0)


@SETTINGS
@given(
    st.integers(2, 4), st.integers(1, 4), st.integers(2, 5), st.integers(0, 2**32 - 1),
    st.sampled_from(list(MUS)), st.sampled_from(["corrected", "paper_faithful"]),
)
def test_stream_properties_push_and_bulk(l: int, w: int, n_sa: int, seed: int, mu_name: str, mode: str) -> None:
    rng = np.random.default_rng(seed)
    n_t = int(rng.integers(1, 12))
    sizes = rng.integers(0, 7, size=n_t)
    ts = np.repeat(np.arange(n_t), sizes).astype(np.int64)
    sa = rng.integers(0, n_sa, size=ts.size).astype(np.int32)
    beta = rng.integers(0, 6, size=n_sa).astype(float)
    mu = MUS[mu_name][0]
    rep = Repositioner(l, w, mu, beta, n_sa=n_sa, mode=mode)
    seen: list[int] = []
    pub_ts = np.full(ts.size, -1, dtype=np.int64)
    before = rep.window_state()
    for t in range(n_t):
        snap = rep.push(sa[ts == t], t=t, ids=np.flatnonzero(ts == t))
        after = rep.window_state()
        prev = dict(zip(before.ids.tolist(), before.slot.tolist()))
        for i, sl in zip(after.ids.tolist(), after.slot.tolist()):  # within one window: forward, at most w - 1
            if i in prev:
                assert 0 <= sl - prev[i] <= w - 1
        before = after
        if t < w:
            assert snap is None
        else:
            assert snap is not None and snap.t == t - w  # published exactly w instants after arrival
        snaps = [snap] if snap is not None else []
        if t == n_t - 1:
            snaps += rep.flush()
        for sn in snaps:
            assert is_l_eligible(np.bincount(sn.sa, minlength=n_sa), l)
            seen += sn.ids.tolist() + sn.suppressed_ids.tolist()
            pub_ts[sn.ids] = sn.t
    assert sorted(seen) == list(range(ts.size))  # every record published once or suppressed once
    bulk = reposition_stream(ts, sa, l=l, w=w, mu=mu, beta=beta, mode=mode, n_sa=n_sa)
    np.testing.assert_array_equal(bulk.published_ts, pub_ts)
    check_stream(ts, sa, bulk, l, n_sa)


def test_stream_windows_match_oracle() -> None:
    """Windows met inside real streams (inherited optima, cross-window moves) against the brute-force oracle."""
    rng = np.random.default_rng(99)
    f = MUS["d2"][1]
    checked = 0
    for _ in range(40):
        l, w, n_sa = int(rng.integers(2, 4)), int(rng.integers(2, 4)), int(rng.integers(2, 4))
        beta = rng.integers(1, 6, size=n_sa).astype(float)
        rep = Repositioner(l, w, "quadratic", beta, n_sa=n_sa)
        for t in range(8):
            new_sa = rng.integers(0, n_sa, size=int(rng.integers(0, 6)))
            state = rep.window_state()
            if state.hi - state.lo + 1 == w:  # the oldest slot pops before the new one arrives
                keep = state.slot > state.lo
                state = WindowState(state.lo + 1, state.hi, state.ids[keep], state.ts[keep], state.sa[keep],
                                    state.slot[keep], state.suppressed[keep])
            if state.ids.size and state.hi >= state.lo:
                published: dict[int, list[tuple[int, int]]] = {}
                suppressed: dict[int, list[tuple[int, int]]] = {}
                for i in range(state.ids.size):
                    d = suppressed if state.suppressed[i] else published
                    d.setdefault(int(state.sa[i]), []).append((int(state.ts[i]), int(state.slot[i])))
                res = reposition_window(state, new_sa, l=l, mu="quadratic", beta=beta, w=w, n_sa=n_sa)
                opt = window_optimum(published, suppressed, np.bincount(new_sa, minlength=n_sa).tolist(),
                                     state.hi + 1, l, f, beta)
                assert res.il_final == pytest.approx(opt)
                checked += 1
            rep.push(new_sa, t=t)
    assert checked > 100


def test_gaps_and_large_ids() -> None:
    ts = np.array([5, 5, 5, 9, 9, 30, 30, 30, 30], dtype=np.int64)
    sa = np.array([0, 0, 1, 0, 1, 0, 1, 2, 2], dtype=np.int32)
    res = reposition_stream(ts, sa, l=2, w=3, beta=5.0)
    check_stream(ts, sa, res, 2, 3)
    assert res.n_suppressed + int((~res.suppressed).sum()) == ts.size


def test_bulk_gaps_equal_explicit_empty_pushes() -> None:
    rng = np.random.default_rng(4)
    for _ in range(20):
        times = np.sort(rng.choice(40, size=12, replace=False))
        sizes = rng.integers(1, 8, size=times.size)
        ts = np.repeat(times, sizes).astype(np.int64)
        sa = rng.integers(0, 4, size=ts.size).astype(np.int32)
        bulk = reposition_stream(ts, sa, l=2, w=3, mu="quadratic", beta=4.0, n_sa=4)
        rep = Repositioner(2, 3, "quadratic", 4.0, n_sa=4)
        out = np.full(ts.size, -1)
        for t in range(int(times[0]), int(times[-1]) + 1):
            sel = np.flatnonzero(ts == t)
            snap = rep.push(sa[sel], t=t, ids=sel)
            for sn in ([snap] if snap else []) + (rep.flush() if t == times[-1] else []):
                out[sn.ids] = sn.t
        np.testing.assert_array_equal(bulk.published_ts, out)


def test_empty_and_all_suppressed_snapshots() -> None:
    # D[0] = {a, a, a, b}: only 2 values for l = 3 -> everything suppressed (L* = 0, spec A.6.15).
    assert min_suppression([3, 1], 3).tolist() == [0, 0]
    st0 = WindowState(0, -1, *(np.zeros(0, dtype=np.int64),) * 2, np.zeros(0, dtype=np.int32),
                      np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool))
    res = reposition_window(st0, [0, 0, 0, 1], l=3, beta=2.0, n_sa=3)
    assert res.state.suppressed.all() and res.il_final == 8.0
    # an empty new snapshot is refilled by relays when l distinct suppressed values pay for it
    rows = [(0, 0, 0, 0, True), (1, 0, 1, 0, True), (2, 1, 2, 1, True)]
    a = np.array([r[:4] for r in rows])
    st1 = WindowState(0, 1, a[:, 0], a[:, 1], a[:, 2].astype(np.int32), a[:, 3], np.array([True] * 3))
    res = reposition_window(st1, np.zeros(0, dtype=np.int64), l=3, mu="linear", beta=5.0, n_sa=3)
    assert res.state.counts(3)[-1].tolist() == [1, 1, 1]  # gains 5 - 2, 5 - 2, 5 - 1
    assert res.il_final == 5.0
    res = reposition_window(st1, np.zeros(0, dtype=np.int64), l=3, mu="linear", beta=1.5, n_sa=3)
    assert res.state.counts(3)[-1].tolist() == [0, 0, 0]  # total gain -0.5 -0.5 +0.5 <= 0: rolled back
    assert res.il_final == 4.5


def test_first_window_milp() -> None:
    """The MILP first window (spec A.2.7) is l-eligible everywhere and never worse than the warm-up."""
    rng = np.random.default_rng(5)
    for _ in range(15):
        n_sa, w, l = int(rng.integers(2, 5)), int(rng.integers(2, 4)), int(rng.integers(2, 4))
        ts = np.repeat(np.arange(w), rng.integers(1, 7, size=w)).astype(np.int64)
        sa = rng.integers(0, n_sa, size=ts.size).astype(np.int32)
        beta = rng.integers(1, 6, size=n_sa).astype(float)
        milp = reposition_stream(ts, sa, l=l, w=w, mu="quadratic", beta=beta, first_window="milp", n_sa=n_sa)
        warm = reposition_stream(ts, sa, l=l, w=w, mu="quadratic", beta=beta, n_sa=n_sa)
        check_stream(ts, sa, milp, l, n_sa)
        assert milp.information_loss <= warm.information_loss + 1e-9
    # longer stream after a MILP start, push and bulk agree
    df = make_temporal_stream(20, 8, 4, rng=3)
    ts, sa = df["ts"].to_numpy(), df["sa"].to_numpy()
    res = reposition_stream(ts, sa, l=3, w=3, mu="quadratic", first_window="milp", n_sa=4)
    check_stream(ts, sa, res, 3, 4)
    rep = Repositioner(3, 3, "quadratic", n_sa=4, first_window="milp")
    out = np.full(ts.size, -1)
    for t in range(20):
        snap = rep.push(sa[ts == t], t=t, ids=np.flatnonzero(ts == t))
        for sn in ([snap] if snap else []) + (rep.flush() if t == 19 else []):
            out[sn.ids] = sn.t
    np.testing.assert_array_equal(out, res.published_ts)


# --- publication ---------------------------------------------------------------------------------------------------
@SETTINGS
@given(st.lists(st.integers(0, 5), min_size=0, max_size=40), st.integers(2, 4))
def test_anatomy_groups_l_diverse(values: list[int], l: int) -> None:
    codes = np.array(values, dtype=np.int64)
    if not is_l_eligible(np.bincount(codes, minlength=1), l):
        with pytest.raises(InfeasibleError, match="not .*-eligible"):
            anatomize(codes, l)
        return
    g = anatomize(codes, l)
    assert np.all(g >= 0) or codes.size == 0
    for k in np.unique(g):
        members = codes[g == k]
        assert l * np.bincount(members).max() <= members.size  # Definition 1: |g[s]| <= |g| / l


def test_anatomize_stream_end_to_end() -> None:
    df = make_temporal_stream(60, 30, 10, skew=1.2, rng=11, with_qi=True)
    ts, sa = df["ts"].to_numpy(), df["sa"].to_numpy()
    res = reposition_stream(ts, sa, l=4, w=5, mu="quadratic", beta=2.0)
    rel = anatomize_stream(res, qi=df[["age", "sex"]])
    assert len(rel.qit) == int((~res.suppressed).sum())
    assert rel.qit["record"].is_unique
    tot = rel.st.groupby("group")["count"].sum()
    mx = rel.st.groupby("group")["count"].max()
    assert np.all(4 * mx <= tot)
    assert rel.st.groupby("group")["published_ts"].nunique().max() == 1  # groups never span snapshots
    # the SA histogram of each published snapshot is preserved by the ST table
    times, counts = res.snapshot_counts(10)
    st_counts = rel.st.groupby(["published_ts", "sa"])["count"].sum()
    for t, c in zip(times, counts):
        for s in np.flatnonzero(c):
            assert st_counts[(t, s)] == c[s]


def test_window_queries_and_alternatives() -> None:
    df = make_temporal_stream(80, 20, 8, skew=1.0, rng=2)
    ts, sa = df["ts"].to_numpy(), df["sa"].to_numpy()
    res = reposition_stream(ts, sa, l=4, w=5, mu="quadratic", beta=3.0)
    supp = suppression_only(ts, sa, 4)
    merged = merge_snapshots(ts, sa, 4, 5)
    # suppression only (w = 1) suppresses at least as much as repositioning
    assert int((supp[0] < 0).sum()) >= res.n_suppressed
    assert int((supp[0] < 0).sum()) == reposition_stream(ts, sa, l=4, w=1, beta=3.0).n_suppressed
    for lo, hi in (supp, merged):
        keep = lo >= 0
        for t0 in np.unique(lo[keep]):
            c = np.bincount(sa[keep & (lo == t0)], minlength=8)
            assert 4 * c.max() <= c.sum()
    q_rep = window_query_error(ts, sa, res, n_queries=200, rng=0)
    q_exact = window_query_error(ts, sa, (ts, ts), n_queries=200, rng=0)
    assert q_exact.mean_error == 0.0
    assert 0.0 < q_rep.mean_error < 1.0
    assert np.array_equal(q_rep.exact, q_exact.exact)


def test_anatomy_window_queries() -> None:
    df = make_temporal_stream(40, 50, 8, rng=6, with_qi=True)
    ts, sa, age = df["ts"].to_numpy(), df["sa"].to_numpy(), df["age"].to_numpy()
    res = reposition_stream(ts, sa, l=3, w=3, mu="quadratic", beta=3.0)
    rel = anatomize_stream(res)
    rep = anatomy_window_query_error(ts, sa, age, rel, n_queries=100, rng=1)
    assert np.all(rep.exact >= 0) and 0.0 <= rep.median_error < 1.0
    # a constant QI matches every record: each group then contributes |g| * (share of V) = its count of V, so the
    # Anatomy estimate is the exact published count (an integer) and the error is the repositioning error only
    rep0 = anatomy_window_query_error(ts, sa, np.zeros_like(age), rel, n_queries=100, rng=1)
    np.testing.assert_allclose(rep0.estimate, np.round(rep0.estimate), atol=1e-9)
    assert rep0.mean_error <= rep.mean_error


def test_cli_main(tmp_path: Path) -> None:
    out = tmp_path / "out.csv"
    from anoncore.cli import main

    assert main(["temporal", "demo", "--l", "3", "--w", "4", "--mu", "quadratic", "--anatomy", "--qi", "age",
                 "-o", str(out)]) == 0
    import pandas as pd

    df = pd.read_csv(out)
    assert {"published_ts", "suppressed"} <= set(df.columns)
    assert (tmp_path / "out.qit.csv").exists() and (tmp_path / "out.st.csv").exists()


# --- bad input -----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"l": 1}, ValueError, r"The 'l' parameter of Repositioner must be an int in the range \[2, inf\)\. Got 1"),
        ({"l": 0}, ValueError, r"'l' parameter of Repositioner .* Got 0"),
        ({"l": 2.0}, TypeError, r"'l' parameter of Repositioner must be an int"),
        ({"l": True}, TypeError, r"'l' parameter of Repositioner must be an int"),
        ({"w": 0}, ValueError, r"'w' parameter of Repositioner must be an int in the range \[1, inf\)"),
        ({"beta": -1.0}, ValueError, r"'beta' parameter of Repositioner must hold finite costs >= 0. Got -1.0"),
        ({"beta": [1.0, -2.0]}, ValueError, r"'beta' .* Got -2.0"),
        ({"beta": float("nan")}, ValueError, r"'beta' .* finite costs"),
        ({"beta": "x"}, TypeError, r"'beta' parameter of Repositioner must be a real number"),
        ({"mu": [1.0, 2.0, 3.0]}, ValueError, r"mu violates C1: mu\(0\) must be 0"),
        ({"mu": [0.0, 2.0, 2.0]}, ValueError, r"mu violates C2 \(strictly increasing\): mu\(2\)=2.0"),
        ({"mu": [0.0, 1.0, 3.0, 4.0]}, ValueError, r"mu violates C3 \(convexity"),
        ({"mu": [0.0, -1.0]}, ValueError, r"mu violates C2"),
        ({"mu": lambda d: d**0.5}, ValueError, r"mu violates C3"),
        ({"mu": lambda d: 1.0 + d}, ValueError, r"mu violates C1"),
        ({"mu": "sqrt"}, ValueError, r"'mu' parameter of Repositioner must be a Mu, a callable, a table or a str among"),
        ({"mu": 3}, TypeError, r"'mu' parameter of Repositioner must be a Mu"),
        ({"mode": "fast"}, ValueError, r"'mode' parameter of Repositioner must be a str among \{'corrected', 'paper_faithful'\}"),
        ({"first_window": "ilp"}, ValueError, r"'first_window' parameter of Repositioner must be a str among"),
    ],
)
def test_bad_parameters(kwargs: dict, exc: type, match: str) -> None:
    args = {"l": 2, "w": 3, "mu": "linear", "beta": 1.0}
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        Repositioner(args.pop("l"), args.pop("w"), args.pop("mu"), args.pop("beta"), **args)


@pytest.mark.parametrize(
    ("factory", "exc", "match"),
    [
        (lambda: Mu.power(0.5), ValueError, r"mu violates C3 \(convexity\): the 'p' parameter of Mu.power must be >= 1"),
        (lambda: Mu.exponential(1.0), ValueError, r"mu violates C2 .* 'base' parameter of Mu.exponential must be > 1"),
        (lambda: Mu.linear(-1.0), ValueError, r"'c' parameter of Mu must be a finite real number > 0"),
        (lambda: Mu.linear(0.0), ValueError, r"'c' parameter of Mu"),
        (lambda: Mu.from_table([0.0]), ValueError, r"mu must be tabulated on at least \[0, 1\]"),
        (lambda: Mu.from_table([0.0, float("inf")]), ValueError, r"mu must be finite"),
    ],
)
def test_bad_mu(factory, exc: type, match: str) -> None:
    with pytest.raises(exc, match=match):
        factory()


def test_bad_stream_input() -> None:
    with pytest.raises(ValueError, match=r"Snapshots must arrive in time order: ts\[2\]=1 comes after ts\[1\]=3"):
        reposition_stream(np.array([0, 3, 1]), np.array([0, 1, 0]), l=2, w=2)
    with pytest.raises(TypeError, match=r"'ts' parameter of Repositioner.run must hold integer time instants"):
        reposition_stream(np.array([0.5, 1.0]), np.array([0, 1]), l=2, w=2)
    with pytest.raises(TypeError, match=r"'sa' parameter of Repositioner.run must hold integer codes"):
        reposition_stream(np.array([0, 1]), np.array(["a", "b"]), l=2, w=2)
    with pytest.raises(ValueError, match=r"'sa' parameter of Repositioner.run must hold codes >= 0"):
        reposition_stream(np.array([0, 1]), np.array([0, -1]), l=2, w=2)
    with pytest.raises(ValueError, match=r"same length"):
        reposition_stream(np.array([0, 1]), np.array([0]), l=2, w=2)
    with pytest.raises(ValueError, match=r"The 'l' parameter of reposition_window"):
        reposition_window(WindowState(0, -1, *[np.zeros(0, dtype=np.int64)] * 3, np.zeros(0, dtype=np.int64),
                                      np.zeros(0, dtype=bool)), [0], l=1)
    rep = Repositioner(2, 2, n_sa=3)
    rep.push([0, 1], t=4)
    with pytest.raises(ValueError, match=r"expected t=5, got t=4"):
        rep.push([0, 1], t=4)
    with pytest.raises(ValueError, match=r"expected t=5, got t=7"):
        rep.push([0, 1], t=7)
    with pytest.raises(ValueError, match=r"codes in \[0, 2\]. Got 3"):
        rep.push([3])
    rep.flush()
    with pytest.raises(RuntimeError, match=r"push was called after flush"):
        rep.push([0])
    with pytest.raises(ValueError, match=r"needs the number of SA codes"):
        Repositioner(2, 2).push([0])
    with pytest.raises(ValueError, match=r"Suppressed records given to reposition_window must sit at their home"):
        bad = WindowState(2, 3, np.array([0]), np.array([2]), np.array([0], dtype=np.int32), np.array([3]),
                          np.array([True]))
        reposition_window(bad, [0], l=2)
    with pytest.raises(ValueError, match=r"must not sit before their timestamp"):
        bad = WindowState(2, 3, np.array([0]), np.array([3]), np.array([0], dtype=np.int32), np.array([2]),
                          np.array([False]))
        reposition_window(bad, [0], l=2)
    with pytest.raises(ValueError, match=r"initial counts given to optimal_reposition_counts must be 2-eligible"):
        optimal_reposition_counts([3, 1], [[], []], 2)
    with pytest.raises(ValueError, match=r"'mode' parameter of optimal_reposition_counts"):
        optimal_reposition_counts([1, 1], [[], []], 2, mode="x")
    with pytest.raises(ValueError, match=r"'counts' parameter of min_suppression must be non-negative"):
        min_suppression([1, -1], 2)


def test_cli_subcommand_writes_l_eligible_stream(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import pandas as pd

    from anoncore.cli import main

    out = tmp_path / "out.csv"
    assert main(["temporal", "demo", "--l", "3", "--w", "3", "-o", str(out)]) == 0
    df = pd.read_csv(out)
    pub = df[~df["suppressed"]]
    # every published snapshot is 3-eligible: no SA value holds more than 1/3 of it
    share = pub.groupby("published_ts")["sa"].agg(lambda s: s.value_counts().max() / len(s))
    assert (share <= 1 / 3 + 1e-12).all()
    assert len(df) == 2400
