"""Window-query utility (P-TEMP Section I: queries Q ^ [a, b]) and the two alternatives the paper rejects.

A published record is described by the time interval it may belong to: [TS', TS'] after repositioning or
suppression only, [block start, block end] after merging w snapshots. A window query Q ^ [a, b] with Q = "SA in
a random set of values" is answered on the publication by summing, per matching record, the fraction of its
interval inside [a, b] (uniform spread), and compared with the exact answer on the original stream.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from anoncore._validation import check_int

__all__ = ["WindowQueryReport", "merge_snapshots", "suppression_only", "window_query_error"]


def _suppress_blocks(block: np.ndarray, sa: np.ndarray, l: int) -> np.ndarray:
    """Minimum suppression (spec A.2.1 closed form) inside each block; returns the suppressed mask."""
    n = block.size
    sup = np.zeros(n, dtype=bool)
    if n == 0:
        return sup
    order = np.lexsort((np.arange(n), sa, block))
    b, s = block[order], sa[order]
    new_grp = np.ones(n, dtype=bool)
    new_grp[1:] = (b[1:] != b[:-1]) | (s[1:] != s[:-1])
    gid = np.cumsum(new_grp) - 1
    gstart = np.flatnonzero(new_grp)
    rank = np.arange(n) - gstart[gid]
    gsize = np.diff(np.append(gstart, n))
    gblock = b[gstart]
    ublocks, binv = np.unique(gblock, return_inverse=True)
    lstar = np.zeros(ublocks.size, dtype=np.int64)
    for k in range(ublocks.size):
        c = gsize[binv == k]
        lo, hi = 0, int(c.sum()) // l
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if int(np.minimum(c, mid).sum()) >= l * mid:
                lo = mid
            else:
                hi = mid - 1
        lstar[k] = lo
    sup[order] = rank >= lstar[binv[gid]]
    return sup


def suppression_only(ts: Any, sa: Any, l: int) -> tuple[np.ndarray, np.ndarray]:
    """Rejected alternative 1: make each snapshot l-eligible by minimum suppression alone.

    Returns
    -------
    lo, hi : ndarray of int64
        Published interval of each record ([ts, ts]); -1 for suppressed records.
    """
    l = check_int(l, "l", "suppression_only", 2)
    t = np.asarray(ts, dtype=np.int64)
    sup = _suppress_blocks(t, np.asarray(sa, dtype=np.int64), l)
    lo = np.where(sup, -1, t)
    return lo, lo.copy()


def merge_snapshots(ts: Any, sa: Any, l: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    """Rejected alternative 2: generalise time by merging blocks of w consecutive snapshots, then suppress the
    minimum inside each merged block.

    Returns
    -------
    lo, hi : ndarray of int64
        Published interval of each record (its block); -1 for suppressed records.
    """
    l = check_int(l, "l", "merge_snapshots", 2)
    t = np.asarray(ts, dtype=np.int64)
    t0 = int(t.min()) if t.size else 0
    block = (t - t0) // int(w)
    sup = _suppress_blocks(block, np.asarray(sa, dtype=np.int64), l)
    lo = np.where(sup, -1, t0 + block * w)
    hi = np.where(sup, -1, t0 + block * w + w - 1)
    return lo, hi


@dataclass(frozen=True, slots=True)
class WindowQueryReport:
    """Relative errors of random window queries: |estimate - exact| / max(exact, 1)."""

    errors: np.ndarray = field(repr=False)
    exact: np.ndarray = field(repr=False)
    estimate: np.ndarray = field(repr=False)
    mean_error: float
    median_error: float


def window_query_error(
    ts: Any,
    sa: Any,
    published: Any,
    *,
    n_queries: int = 1000,
    max_length: int | None = None,
    max_values: int = 3,
    rng: int | np.random.Generator | None = None,
) -> WindowQueryReport:
    """Relative error of random window queries Q ^ [a, b] on a publication versus the original stream.

    Parameters
    ----------
    ts, sa : array-like of int
        Original timestamps and SA codes.
    published : TemporalResult or tuple (lo, hi) of int arrays
        Published interval per record (lo < 0: suppressed). A TemporalResult gives [TS', TS'].
    n_queries : int, default=1000
    max_length : int, default=None
        Longest window b - a + 1 (default: a tenth of the time span, at least 1).
    max_values : int, default=3
        Q selects between 1 and max_values SA values.
    rng : int, numpy.random.Generator or None, default=None

    Returns
    -------
    WindowQueryReport

    Examples
    --------
    >>> import numpy as np
    >>> from anoncore.temporal import reposition_stream, window_query_error
    >>> ts = np.repeat(np.arange(40), 10); sa = np.random.default_rng(0).integers(0, 5, ts.size)
    >>> res = reposition_stream(ts, sa, l=3, w=3)
    >>> rep = window_query_error(ts, sa, res, n_queries=50, rng=0)
    >>> 0.0 <= rep.mean_error < 1.0
    True
    """
    gen = np.random.default_rng(rng)
    t = np.asarray(ts, dtype=np.int64)
    s = np.asarray(sa, dtype=np.int64)
    if hasattr(published, "published_ts"):
        lo = np.asarray(published.published_ts, dtype=np.int64)
        hi = lo
    else:
        lo, hi = (np.asarray(a, dtype=np.int64) for a in published)
    keep = lo >= 0
    tmin = int(min(t.min(), lo[keep].min() if keep.any() else t.min()))
    tmax = int(max(t.max(), hi[keep].max() if keep.any() else t.max()))
    span = int(t.max()) - int(t.min()) + 1
    ml = max(1, span // 10) if max_length is None else int(max_length)
    n_sa = int(s.max()) + 1
    n_t = tmax - tmin + 1
    # exact counts per (instant, value) and the published ones spread uniformly over each record's interval;
    # prefix sums over time answer every query in O(|Q|)
    orig = np.zeros((n_t + 1, n_sa))
    np.add.at(orig, (t - tmin + 1, s), 1.0)
    dens = np.zeros((n_t + 1, n_sa))
    wgt = 1.0 / (hi[keep] - lo[keep] + 1)
    np.add.at(dens, (lo[keep] - tmin, s[keep]), wgt)
    np.add.at(dens, (hi[keep] - tmin + 1, s[keep]), -wgt)
    pub = np.zeros((n_t + 1, n_sa))
    pub[1:] = np.cumsum(dens, axis=0)[:-1]
    cum_o = np.cumsum(orig, axis=0)
    cum_p = np.cumsum(pub, axis=0)
    exact = np.zeros(n_queries)
    est = np.zeros(n_queries)
    t_lo, t_hi = int(t.min()), int(t.max())
    for q in range(n_queries):
        length = int(gen.integers(1, ml + 1))
        a = int(gen.integers(t_lo, max(t_lo, t_hi - length + 1) + 1))
        b = a + length - 1
        vals = gen.choice(n_sa, size=int(gen.integers(1, min(max_values, n_sa) + 1)), replace=False)
        ia, ib = a - tmin, min(b, tmax) - tmin + 1
        exact[q] = float(np.sum(cum_o[ib, vals] - cum_o[ia, vals]))
        est[q] = float(np.sum(cum_p[ib, vals] - cum_p[ia, vals]))
    err = np.abs(est - exact) / np.maximum(exact, 1.0)
    return WindowQueryReport(err, exact, est, float(err.mean()), float(np.median(err)))


def anatomy_window_query_error(
    ts: Any,
    sa: Any,
    qi: Any,
    release: Any,
    *,
    n_queries: int = 200,
    max_length: int | None = None,
    max_values: int = 3,
    rng: int | np.random.Generator | None = None,
) -> WindowQueryReport:
    """Relative error of window queries with a quasi-identifier range, answered on an Anatomy release.

    Q ^ [a, b] selects records with time in [a, b], ``qi`` in a random range [x, y] and SA in a random set V. On
    the release, each group g of a snapshot in [a, b] contributes (#QIT rows of g with qi in [x, y]) times the
    fraction of g's SA values in V (Anatomy's estimator, Xiao & Tao 2006).

    Parameters
    ----------
    ts, sa : array-like of int
        Original timestamps and SA codes.
    qi : array-like of numbers
        One numeric quasi-identifier per record (e.g. age).
    release : AnatomizedSnapshot
        Output of :func:`anatomize_stream` on the same records.

    Returns
    -------
    WindowQueryReport

    Examples
    --------
    >>> import numpy as np
    >>> from anoncore.temporal import make_temporal_stream, reposition_stream, anatomize_stream
    >>> from anoncore.temporal import anatomy_window_query_error
    >>> df = make_temporal_stream(30, 40, 6, rng=0, with_qi=True)
    >>> ts, sa, age = df["ts"].to_numpy(), df["sa"].to_numpy(), df["age"].to_numpy()
    >>> rel = anatomize_stream(reposition_stream(ts, sa, l=3, w=3))
    >>> rep = anatomy_window_query_error(ts, sa, age, rel, n_queries=20, rng=0)
    >>> rep.errors.shape
    (20,)
    """
    gen = np.random.default_rng(rng)
    t = np.asarray(ts, dtype=np.int64)
    s = np.asarray(sa, dtype=np.int64)
    q = np.asarray(qi, dtype=np.float64)
    n_sa = int(s.max()) + 1
    qit = release.qit
    st = release.st
    rec = qit["record"].to_numpy()
    g_of = qit["group"].to_numpy()
    pts = qit["published_ts"].to_numpy()
    n_groups = int(g_of.max()) + 1 if g_of.size else 0
    group_hist = np.zeros((n_groups, n_sa))
    np.add.at(group_hist, (st["group"].to_numpy(), st["sa"].to_numpy()), st["count"].to_numpy().astype(float))
    group_size = np.maximum(group_hist.sum(axis=1), 1.0)
    t_lo, t_hi = int(t.min()), int(t.max())
    span = t_hi - t_lo + 1
    ml = max(1, span // 10) if max_length is None else int(max_length)
    qlo, qhi = float(q.min()), float(q.max())
    exact = np.zeros(n_queries)
    est = np.zeros(n_queries)
    for k in range(n_queries):
        length = int(gen.integers(1, ml + 1))
        a = int(gen.integers(t_lo, max(t_lo, t_hi - length + 1) + 1))
        b = a + length - 1
        x, y = np.sort(gen.uniform(qlo, qhi, size=2))
        vals = gen.choice(n_sa, size=int(gen.integers(1, min(max_values, n_sa) + 1)), replace=False)
        exact[k] = np.count_nonzero((t >= a) & (t <= b) & (q >= x) & (q <= y) & np.isin(s, vals))
        m = (pts >= a) & (pts <= b) & (q[rec] >= x) & (q[rec] <= y)
        frac = group_hist[:, vals].sum(axis=1) / group_size
        est[k] = float(frac[g_of[m]].sum())
    err = np.abs(est - exact) / np.maximum(exact, 1.0)
    return WindowQueryReport(err, exact, est, float(err.mean()), float(np.median(err)))
