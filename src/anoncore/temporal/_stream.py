"""Sliding-window driver of the reposition model (P-TEMP Sections II.B, III-V; spec A.2.7).

Snapshots D[t] arrive one time instant at a time. The window holds the last w snapshots; each new snapshot first
gets the minimum suppression making it l-eligible, then OptimalReposition relays suppressed records of the window
forward into it. The oldest snapshot pops off and is published with its records' new timestamps TS'.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from anoncore._validation import check_int, check_option
from anoncore.temporal._cost import Mu, as_beta, as_mu

__all__ = [
    "PublishedSnapshot",
    "Repositioner",
    "TemporalResult",
    "TraceStep",
    "WindowResult",
    "WindowState",
    "information_loss",
    "reposition_stream",
    "reposition_window",
]

_MODES = ("corrected", "paper_faithful")
_FIRST = ("warmup", "milp")
_k: Any = importlib.import_module("anoncore._core").temporal


def _ro(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def _sa_codes(sa: Any, caller: str, n_sa: int | None) -> np.ndarray:
    arr = np.asarray(sa)
    if arr.ndim != 1:
        raise ValueError(f"The 'sa' parameter of {caller} must be 1-D. Got shape {arr.shape} instead.")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(
            f"The 'sa' parameter of {caller} must hold integer codes (use pandas.factorize for labels). "
            f"Got dtype {arr.dtype} instead."
        )
    if arr.size and arr.min() < 0:
        raise ValueError(f"The 'sa' parameter of {caller} must hold codes >= 0. Got {int(arr.min())!r} instead.")
    if n_sa is not None and arr.size and arr.max() >= n_sa:
        raise ValueError(
            f"The 'sa' parameter of {caller} must hold codes in [0, {n_sa - 1}]. Got {int(arr.max())!r} instead."
        )
    out: np.ndarray = np.ascontiguousarray(arr, dtype=np.int32)
    return out


@dataclass(frozen=True, slots=True)
class TraceStep:
    """One relay of OptimalReposition in the last window: phase 'LP' or 'LL', the relayed record r0, its SA code,
    its home slot (= r0.TS), its gain IG(r0) when picked, and whether the LL step was rolled back."""

    iteration: int
    phase: str
    record: int
    sa: int
    from_slot: int
    gain: float
    rolled_back: bool


@dataclass(frozen=True, slots=True)
class WindowState:
    """Records of a reposition window [lo, hi]: id, original timestamp, SA code, current slot (TS') and whether the
    record is suppressed (then it sits at its home slot, slot == ts)."""

    lo: int
    hi: int
    ids: np.ndarray = field(repr=False)
    ts: np.ndarray = field(repr=False)
    sa: np.ndarray = field(repr=False)
    slot: np.ndarray = field(repr=False)
    suppressed: np.ndarray = field(repr=False)

    def counts(self, n_sa: int) -> np.ndarray:
        """Published counts per (slot - lo, SA code), shape (hi - lo + 1, n_sa)."""
        out = np.zeros((self.hi - self.lo + 1, n_sa), dtype=np.int64)
        pub = ~self.suppressed
        np.add.at(out, (self.slot[pub] - self.lo, self.sa[pub]), 1)
        return out

    def information_loss(self, mu: Mu, beta: np.ndarray) -> float:
        """IL of the window (P-TEMP Eq. 1-2)."""
        pub = ~self.suppressed
        return float(np.sum(mu(self.slot[pub] - self.ts[pub])) + np.sum(beta[self.sa[self.suppressed]]))


@dataclass(frozen=True, slots=True)
class WindowResult:
    """Outcome of OptimalReposition on one window."""

    state: WindowState
    il_initial: float
    il_final: float
    trace: tuple[TraceStep, ...] = field(repr=False)

    @property
    def gain(self) -> float:
        """IL reduction achieved by the committed relays."""
        return self.il_initial - self.il_final


@dataclass(frozen=True, slots=True)
class PublishedSnapshot:
    """A snapshot D'[t] that popped off the window: its eligible set P_t (published with TS' = t) and its
    suppressed set S_t (records whose home is t)."""

    t: int
    ids: np.ndarray = field(repr=False)
    ts: np.ndarray = field(repr=False)
    sa: np.ndarray = field(repr=False)
    suppressed_ids: np.ndarray = field(repr=False)
    suppressed_sa: np.ndarray = field(repr=False)

    @property
    def n_published(self) -> int:
        return int(self.ids.size)

    @property
    def n_suppressed(self) -> int:
        return int(self.suppressed_ids.size)


@dataclass(frozen=True, slots=True)
class TemporalResult:
    """A whole stream after repositioning: per record the published timestamp TS' (-1 when suppressed).

    Attributes
    ----------
    ts, sa : ndarray
        The input timestamps and SA codes (read-only).
    published_ts : ndarray of int64
        TS' of every record, -1 for suppressed records.
    suppressed : ndarray of bool
    l, w : int
    mode, first_window : str
    information_loss : float
        Sum over records of mu(TS' - TS) or beta_s (P-TEMP Eq. 1-2 over the whole stream).
    counters : dict
        Windows, relays, rolled back relays, iterations, initial suppressions.
    stats : dict
        Timings (not compared).
    """

    ts: np.ndarray = field(repr=False)
    sa: np.ndarray = field(repr=False)
    published_ts: np.ndarray = field(repr=False)
    suppressed: np.ndarray = field(repr=False)
    l: int
    w: int
    mode: str
    first_window: str
    information_loss: float
    n_suppressed: int
    counters: dict[str, float] = field(repr=False, compare=False)
    stats: dict[str, float] = field(default_factory=dict, repr=False, compare=False)

    @property
    def suppression_rate(self) -> float:
        return self.n_suppressed / max(1, int(self.ts.size))

    @property
    def shift(self) -> np.ndarray:
        """TS' - TS of published records."""
        pub = ~self.suppressed
        out: np.ndarray = self.published_ts[pub] - self.ts[pub]
        return out

    def snapshot_counts(self, n_sa: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Published SA counts per time instant: (times, counts of shape (n_times, n_sa))."""
        m = n_sa if n_sa is not None else int(self.sa.max()) + 1 if self.sa.size else 1
        pub = ~self.suppressed
        times, inv = np.unique(self.published_ts[pub], return_inverse=True)
        counts = np.zeros((times.size, m), dtype=np.int64)
        np.add.at(counts, (inv, self.sa[pub]), 1)
        return times, counts

    def to_pandas(self) -> Any:
        """One row per record: record, ts, sa, published_ts, suppressed."""
        import pandas as pd

        return pd.DataFrame(
            {
                "record": np.arange(self.ts.size),
                "ts": self.ts,
                "sa": self.sa,
                "published_ts": self.published_ts,
                "suppressed": self.suppressed,
            }
        )


def information_loss(
    ts: np.ndarray, published_ts: np.ndarray, sa: np.ndarray, mu: Any, beta: Any
) -> float:
    """IL of a transformation: sum of mu(TS' - TS) over published records plus beta_s over suppressed ones
    (P-TEMP Eq. 1-2). ``published_ts < 0`` marks suppression.

    Examples
    --------
    >>> import numpy as np
    >>> from anoncore.temporal import information_loss
    >>> ts = np.array([6, 6, 6, 7, 7, 7, 8]); pub = np.array([-1, 6, 6, 7, 7, 8, 8])
    >>> information_loss(ts, pub, np.zeros(7, dtype=np.int32), "quadratic", 3.0)
    4.0
    """
    m = as_mu(mu, "information_loss")
    ts = np.asarray(ts, dtype=np.int64)
    pts = np.asarray(published_ts, dtype=np.int64)
    sa_arr = np.asarray(sa, dtype=np.int64)
    b = as_beta(beta, int(sa_arr.max()) + 1 if sa_arr.size else 1, "information_loss")
    sup = pts < 0
    return float(np.sum(m(pts[~sup] - ts[~sup])) + np.sum(b[sa_arr[sup]]))


class Repositioner:
    """Stream driver of the reposition model (P-TEMP): restores l-eligibility of every published snapshot.

    Parameters
    ----------
    l : int
        Diversity parameter (>= 2): every published snapshot satisfies ``l * Level(P_t) <= |P_t|``.
    w : int
        Window size = maximum publication delay (>= 1). ``w = 1`` is suppression only.
    mu : Mu, callable, table or {'linear', 'quadratic', 'cubic', 'exponential'}, default='linear'
        Reposition cost mu(d), checked against C1-C3.
    beta : float, sequence or mapping, default=1.0
        Suppression cost per SA value (>= 0).
    n_sa : int, default=None
        Number of SA codes; needed by :meth:`push` unless beta is a sequence (then ``len(beta)``).
    mode : {'corrected', 'paper_faithful'}, default='corrected'
        'corrected' is the spec's fix of Figure 4 (explicit level cap, optimal); 'paper_faithful' is Figure 4 as
        printed (stops when m = 0).
    first_window : {'warmup', 'milp'}, default='warmup'
        'warmup' runs the same procedure on the growing windows [1..t], t < w; 'milp' solves the first full window
        exactly with the integer program of spec A.2.7 (scipy HiGHS).

    Attributes
    ----------
    counters_ : dict
        Windows processed, relays committed and rolled back.
    last_trace_ : tuple of TraceStep
        Relays of the last window (filled when ``trace=True``).

    Examples
    --------
    >>> import numpy as np
    >>> from anoncore.temporal import Repositioner
    >>> rep = Repositioner(l=2, w=2, mu="linear", beta=3.0, n_sa=4)
    >>> rep.push(np.array([0, 0, 1])) is None       # t = 0: P = {0, 1}, one 0 suppressed
    True
    >>> rep.push(np.array([0, 1, 2, 3])) is None    # t = 1: relays the suppressed 0 (gain 3 - 1)
    True
    >>> snap = rep.push(np.array([], dtype=np.int64))  # t = 2: D'[0] pops off
    >>> snap.t, snap.ids.tolist(), snap.n_suppressed
    (0, [0, 2], 0)
    """

    def __init__(
        self,
        l: int,
        w: int,
        mu: Any = "linear",
        beta: Any = 1.0,
        *,
        n_sa: int | None = None,
        mode: Literal["corrected", "paper_faithful"] = "corrected",
        first_window: Literal["warmup", "milp"] = "warmup",
        trace: bool = False,
    ) -> None:
        caller = "Repositioner"
        self.l = check_int(l, "l", caller, 2)
        self.w = check_int(w, "w", caller, 1)
        self.mu = as_mu(mu, caller, horizon=max(64, 8 * self.w))
        self.mode = check_option(mode, "mode", caller, _MODES)
        self.first_window = check_option(first_window, "first_window", caller, _FIRST)
        if n_sa is not None:
            n_sa = check_int(n_sa, "n_sa", caller, 1)
        self._beta_arg = beta
        if n_sa is None and isinstance(beta, (Sequence, np.ndarray)) and not isinstance(beta, str):
            n_sa = int(np.asarray(beta).size)
        # Validate beta now when possible (negative costs fail at construction).
        self.beta = as_beta(beta, n_sa if n_sa is not None else 1, caller)
        self.n_sa = n_sa
        self.trace = bool(trace)
        self._stream: Any = None
        self._t: int | None = None  # time of the last pushed snapshot
        self._next_id = 0
        self._closed = False
        self._buffer: list[tuple[int, np.ndarray, np.ndarray]] = []  # first window in milp mode
        self._start: int | None = None
        self.last_trace_: tuple[TraceStep, ...] = ()

    # ---------------------------------------------------------------------------------------------------------
    def _ensure_stream(self, n_sa: int) -> Any:
        if self._stream is None:
            if self.n_sa is None:
                self.n_sa = n_sa
            self.beta = as_beta(self._beta_arg, self.n_sa, "Repositioner")
            kind, c, p, table = self.mu._kernel_args()
            self._stream = _k.Stream(
                self.l, self.w, self.n_sa, kind, c, p, table, self.beta, _MODES.index(self.mode)
            )
            self._stream.trace_enabled = self.trace
        return self._stream

    @property
    def counters_(self) -> dict[str, float]:
        return dict(self._stream.counters) if self._stream is not None else {}

    def window_state(self) -> WindowState:
        """The records currently in the window (after the last push)."""
        if self._stream is None:
            e = np.zeros(0, dtype=np.int64)
            return WindowState(0, -1, e, e, e.astype(np.int32), e, e.astype(bool))
        ids, ts, sa, slot, sup = self._stream.state()
        return WindowState(int(self._stream.lo), int(self._stream.hi), ids, ts, sa, slot, sup)

    def _popped(self, times: Sequence[int]) -> list[PublishedSnapshot]:
        """Snapshots popped for the given time instants (possibly empty ones)."""
        ids, ts, sa, slot = self._stream.take_popped()
        home = np.where(slot >= 0, slot, ts)
        out = []
        for t in times:
            sel = home == t
            pub = sel & (slot >= 0)
            sup = sel & (slot < 0)
            order = np.argsort(ids[pub], kind="stable")
            sorder = np.argsort(ids[sup], kind="stable")
            out.append(
                PublishedSnapshot(
                    int(t),
                    _ro(ids[pub][order]),
                    _ro(ts[pub][order]),
                    _ro(sa[pub][order]),
                    _ro(ids[sup][sorder]),
                    _ro(sa[sup][sorder]),
                )
            )
        return out

    def push(self, sa: Any, t: int | None = None, ids: Any = None) -> PublishedSnapshot | None:
        """Add the snapshot of the next time instant and return the snapshot that pops off (or None).

        Parameters
        ----------
        sa : array-like of int
            SA codes of the snapshot's records (may be empty).
        t : int, default=None
            Its time instant; must be exactly one after the previous snapshot (push empty snapshots for gaps).
            Defaults to the next instant (0 for the first snapshot).
        ids : array-like of int, default=None
            Record ids (default: a running counter over all pushed records).

        Returns
        -------
        PublishedSnapshot or None
            D'[t - w] once the window is full.

        Raises
        ------
        ValueError
            If ``t`` is not the next time instant (snapshots out of order or missing).
        RuntimeError
            If called after :meth:`flush`.
        """
        caller = "Repositioner.push"
        if self._closed:
            raise RuntimeError("Repositioner.push was called after flush(); create a new Repositioner.")
        if self.n_sa is None:
            raise ValueError(
                "Repositioner.push needs the number of SA codes: pass n_sa=... (or beta as one cost per SA code)."
            )
        codes = _sa_codes(sa, caller, self.n_sa)
        if t is None:
            t = 0 if self._t is None else self._t + 1
        t = check_int(t, "t", caller)
        if self._t is not None and t != self._t + 1:
            raise ValueError(
                f"Snapshots must arrive in time order without gaps: expected t={self._t + 1}, got t={t} "
                "(push empty snapshots for missing instants)."
            )
        if ids is None:
            id_arr = np.arange(self._next_id, self._next_id + codes.size, dtype=np.int64)
        else:
            id_arr = np.ascontiguousarray(np.asarray(ids), dtype=np.int64)
            if id_arr.shape != codes.shape:
                raise ValueError(f"The 'ids' parameter of {caller} must have the same length as sa.")
        self._next_id = max(self._next_id, int(id_arr.max()) + 1 if id_arr.size else self._next_id)
        st = self._ensure_stream(self.n_sa)
        if self._t is None:
            self._start = t
            st.start_at(t)
        self._t = t
        if self.first_window == "milp" and t - (self._start or 0) < self.w:
            self._buffer.append((t, codes, id_arr))
            if t - (self._start or 0) == self.w - 1:
                self._solve_first_window()
            return None
        full = st.hi - st.lo + 1 == self.w
        popped_t = int(st.lo)
        st.push(codes, id_arr)
        if self.trace:
            self.last_trace_ = tuple(
                TraceStep(it, "LP" if ph == 0 else "LL", rid, s, fs, g, rb)
                for it, ph, rid, s, fs, g, rb in st.last_trace
            )
        return self._popped([popped_t])[0] if full else None

    def _solve_first_window(self) -> None:
        if not self._buffer:
            return
        lo = self._buffer[0][0]
        hi = self._buffer[-1][0]
        ts = np.concatenate([np.full(c.size, t, dtype=np.int64) for t, c, _ in self._buffer])
        sa = np.concatenate([c for _, c, _ in self._buffer]).astype(np.int32)
        ids = np.concatenate([i for _, _, i in self._buffer])
        from anoncore.temporal._milp import first_window_milp

        slot, sup = first_window_milp(ts, sa, ids, lo, hi, self.l, self.mu, self.beta, int(self.n_sa or 1))
        self._stream.load(lo, hi, ids, ts, sa, slot, sup)
        self._buffer = []

    def flush(self) -> list[PublishedSnapshot]:
        """Publish every snapshot still in the window (end of the stream) and close the driver."""
        if self._closed:
            raise RuntimeError("Repositioner.flush was called twice.")
        self._closed = True
        if self._stream is None:
            return []
        if self._buffer:
            self._solve_first_window()
        times = list(range(int(self._stream.lo), int(self._stream.hi) + 1))
        self._stream.flush()
        return self._popped(times)

    # ---------------------------------------------------------------------------------------------------------
    def run(self, ts: Any, sa: Any) -> TemporalResult:
        """Process a whole stream in one C++ call (the bulk window loop) and flush.

        Parameters
        ----------
        ts : array-like of int, shape (n_records,)
            Time instant of each record, non-decreasing (snapshots in time order). Missing instants are empty
            snapshots.
        sa : array-like of int, shape (n_records,)
            SA codes.

        Returns
        -------
        TemporalResult
        """
        caller = "Repositioner.run"
        if self._stream is not None or self._closed:
            raise RuntimeError("Repositioner.run needs a fresh Repositioner (push() was already used).")
        t0 = time.perf_counter()
        ts_arr = np.asarray(ts)
        if ts_arr.ndim != 1:
            raise ValueError(f"The 'ts' parameter of {caller} must be 1-D. Got shape {ts_arr.shape} instead.")
        if ts_arr.size and not np.issubdtype(ts_arr.dtype, np.integer):
            raise TypeError(f"The 'ts' parameter of {caller} must hold integer time instants. Got dtype {ts_arr.dtype}.")
        ts_arr = np.ascontiguousarray(ts_arr, dtype=np.int64)
        codes = _sa_codes(sa, caller, self.n_sa)
        if codes.size != ts_arr.size:
            raise ValueError(f"The 'ts' and 'sa' parameters of {caller} must have the same length.")
        if ts_arr.size > 1:
            bad = np.flatnonzero(np.diff(ts_arr) < 0)
            if bad.size:
                k = int(bad[0]) + 1
                raise ValueError(
                    f"Snapshots must arrive in time order: ts[{k}]={ts_arr[k]} comes after ts[{k - 1}]={ts_arr[k - 1]}."
                )
        n_sa = self.n_sa if self.n_sa is not None else (int(codes.max()) + 1 if codes.size else 1)
        st = self._ensure_stream(n_sa)
        out = np.full(ts_arr.size, -1, dtype=np.int64)
        start = 0
        if self.first_window == "milp" and ts_arr.size:
            lo = int(ts_arr[0])
            hi = lo + self.w - 1
            start = int(np.searchsorted(ts_arr, hi, side="right"))
            from anoncore.temporal._milp import first_window_milp

            ids = np.arange(start, dtype=np.int64)
            slot, sup = first_window_milp(ts_arr[:start], codes[:start], ids, lo, hi, self.l, self.mu, self.beta, n_sa)
            st.load(lo, hi, ids, np.ascontiguousarray(ts_arr[:start]), np.ascontiguousarray(codes[:start]), slot, sup)
        t1 = time.perf_counter()
        st.run(np.ascontiguousarray(ts_arr[start:]), np.ascontiguousarray(codes[start:]), start, out, True)
        t2 = time.perf_counter()
        self._closed = True
        sup = out < 0
        il = float(np.sum(self.mu(out[~sup] - ts_arr[~sup])) + np.sum(self.beta[codes[sup]]))
        return TemporalResult(
            ts=_ro(ts_arr),
            sa=_ro(codes),
            published_ts=_ro(out),
            suppressed=_ro(sup),
            l=self.l,
            w=self.w,
            mode=self.mode,
            first_window=self.first_window,
            information_loss=il,
            n_suppressed=int(sup.sum()),
            counters=dict(st.counters),
            stats={"kernel_seconds": t2 - t1, "total_seconds": time.perf_counter() - t0,
                   "records_per_second": ts_arr.size / max(t2 - t1, 1e-12)},
        )


def reposition_stream(
    ts: Any,
    sa: Any,
    *,
    l: int,
    w: int,
    mu: Any = "linear",
    beta: Any = 1.0,
    mode: Literal["corrected", "paper_faithful"] = "corrected",
    first_window: Literal["warmup", "milp"] = "warmup",
    n_sa: int | None = None,
) -> TemporalResult:
    """Reposition a whole temporal stream so that every published snapshot is l-eligible (P-TEMP).

    Shortcut for ``Repositioner(l, w, mu, beta, ...).run(ts, sa)``; see :class:`Repositioner`.

    Examples
    --------
    >>> import numpy as np
    >>> from anoncore.temporal import reposition_stream, is_l_eligible
    >>> rng = np.random.default_rng(0)
    >>> ts = np.repeat(np.arange(50), 20); sa = rng.integers(0, 6, ts.size)
    >>> res = reposition_stream(ts, sa, l=4, w=3, mu="quadratic", beta=2.0)
    >>> times, counts = res.snapshot_counts(6)
    >>> all(is_l_eligible(c, 4) for c in counts)
    True
    """
    return Repositioner(l, w, mu, beta, n_sa=n_sa, mode=mode, first_window=first_window).run(ts, sa)


def reposition_window(
    state: WindowState,
    new_sa: Any,
    *,
    l: int,
    mu: Any = "linear",
    beta: Any = 1.0,
    w: int | None = None,
    mode: Literal["corrected", "paper_faithful"] = "corrected",
    new_ids: Any = None,
    n_sa: int | None = None,
) -> WindowResult:
    """Run the initial suppression and OptimalReposition on one window (Definition 2), from an explicit state.

    ``state`` holds the inherited slots [lo, hi]; the new snapshot ``new_sa`` arrives at hi + 1. Suppressed records
    must sit at their home slot (slot == ts); published records at slot >= ts.

    Returns
    -------
    WindowResult
        The window after the new snapshot's minimum suppression and the relays, the IL before (after the initial
        suppression) and after, and the trace of LP/LL steps.

    Examples
    --------
    >>> import numpy as np
    >>> from anoncore.temporal import WindowState, reposition_window
    >>> st = WindowState(2, 2, np.array([0, 1, 2]), np.array([2, 2, 2]), np.array([0, 1, 0], dtype=np.int32),
    ...                  np.array([2, 2, 2]), np.array([False, False, True]))
    >>> res = reposition_window(st, [0, 1, 2, 3], l=2, mu="linear", beta=3.0)
    >>> res.il_initial, res.il_final
    (3.0, 1.0)
    """
    caller = "reposition_window"
    l = check_int(l, "l", caller, 2)
    if not isinstance(state, WindowState):
        raise TypeError(f"The 'state' parameter of {caller} must be a WindowState. Got {type(state).__name__} instead.")
    ids = np.ascontiguousarray(state.ids, dtype=np.int64)
    ts = np.ascontiguousarray(state.ts, dtype=np.int64)
    sa = _sa_codes(state.sa, caller, None)
    slot = np.ascontiguousarray(state.slot, dtype=np.int64)
    sup = np.ascontiguousarray(state.suppressed, dtype=bool)
    codes = _sa_codes(new_sa, caller, None)
    m = n_sa if n_sa is not None else max(int(sa.max()) + 1 if sa.size else 1, int(codes.max()) + 1 if codes.size else 1)
    if isinstance(beta, (Sequence, np.ndarray)) and not isinstance(beta, str) and n_sa is None:
        m = max(m, int(np.asarray(beta).size))
    if np.any(slot < state.lo) or np.any(slot > state.hi):
        raise ValueError(f"Every record of the state given to {caller} must sit in a slot of [lo, hi].")
    if np.any(sup & (slot != ts)):
        raise ValueError(f"Suppressed records given to {caller} must sit at their home slot (slot == ts).")
    if np.any(~sup & (slot < ts)):
        raise ValueError(f"Published records given to {caller} must not sit before their timestamp (slot >= ts).")
    width = state.hi - state.lo + 2
    ww = width if w is None else check_int(w, "w", caller, 1)
    if ww < width:
        raise ValueError(f"The 'w' parameter of {caller} must be >= {width} for this state. Got {w!r} instead.")
    rep = Repositioner(l, ww, mu, beta, n_sa=m, mode=mode, trace=True)
    st = rep._ensure_stream(m)
    st.load(state.lo, state.hi, ids, ts, sa, slot, sup)
    st.track_il = True
    nid = (
        np.arange(int(ids.max()) + 1 if ids.size else 0, (int(ids.max()) + 1 if ids.size else 0) + codes.size)
        if new_ids is None
        else np.asarray(new_ids)
    )
    st.push(codes, np.ascontiguousarray(nid, dtype=np.int64))
    trace = tuple(
        TraceStep(it, "LP" if ph == 0 else "LL", rid, s, fs, g, rb) for it, ph, rid, s, fs, g, rb in st.last_trace
    )
    out_ids, out_ts, out_sa, out_slot, out_sup = st.state()
    new_state = WindowState(int(st.lo), int(st.hi), out_ids, out_ts, out_sa, out_slot, out_sup)
    return WindowResult(new_state, float(st.last_il_initial), float(st.last_il_final), trace)
