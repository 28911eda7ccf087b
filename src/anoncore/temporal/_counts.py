"""Count-level pieces of the reposition model: l-eligibility, minimum suppression, OptimalReposition on gain
sequences (for injected-IG reproduction of the paper's Examples 2-3) and the exact level sweep (spec A.2.6, F5).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from anoncore._validation import check_int, check_option

__all__ = [
    "CountSolution",
    "CountTraceStep",
    "is_l_eligible",
    "level",
    "level_sweep",
    "min_suppression",
    "optimal_reposition_counts",
]


def _counts_of(counts: Any, caller: str) -> np.ndarray:
    arr = np.asarray(counts)
    if arr.ndim != 1 or not (np.issubdtype(arr.dtype, np.integer) or arr.size == 0):
        raise TypeError(f"The 'counts' parameter of {caller} must be a 1-D array of ints. Got {counts!r} instead.")
    if np.any(arr < 0):
        raise ValueError(f"The 'counts' parameter of {caller} must be non-negative. Got {int(arr.min())!r} instead.")
    return arr.astype(np.int64)


def level(counts: Sequence[int] | np.ndarray) -> int:
    """Level(T) = max_s |T[s]| (0 for the empty set)."""
    arr = np.asarray(counts, dtype=np.int64)
    return int(arr.max()) if arr.size else 0


def is_l_eligible(counts: Sequence[int] | np.ndarray, l: int) -> bool:
    """True iff ``l * Level(T) <= |T|`` (P-TEMP Definition 1), in integer arithmetic.

    Parameters
    ----------
    counts : array-like of int
        Frequency of each sensitive value in T.
    l : int
        Diversity parameter (>= 2).

    Examples
    --------
    >>> from anoncore.temporal import is_l_eligible
    >>> is_l_eligible([50, 10] + [4] * 10, 2), is_l_eligible([50, 10] + [4] * 10, 3)
    (True, False)
    """
    l = check_int(l, "l", "is_l_eligible", 2)
    arr = _counts_of(counts, "is_l_eligible")
    return bool(l * level(arr) <= int(arr.sum()))


def min_suppression(counts: Sequence[int] | np.ndarray, l: int) -> np.ndarray:
    """Published counts after suppressing the fewest records to make T l-eligible (spec A.2.1, closed form).

    ``L* = max{L : sum_s min(c_s, L) >= l*L}``; the published counts are ``min(c_s, L*)``. This equals the paper's
    greedy (repeatedly suppress a record of the most frequent value).

    Examples
    --------
    >>> from anoncore.temporal import min_suppression
    >>> min_suppression([6, 3, 2, 1, 1], 4).tolist()
    [2, 2, 2, 1, 1]
    """
    l = check_int(l, "l", "min_suppression", 2)
    c = _counts_of(counts, "min_suppression")
    lo, hi = 0, int(c.sum()) // l
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if int(np.minimum(c, mid).sum()) >= l * mid:
            lo = mid
        else:
            hi = mid - 1
    out: np.ndarray = np.minimum(c, lo)
    return out


@dataclass(frozen=True, slots=True)
class CountTraceStep:
    """One relay of the count-level greedy: outer iteration, phase ('LP' or 'LL'), value, IG, rolled back?"""

    iteration: int
    phase: str
    value: int
    gain: float
    rolled_back: bool


@dataclass(frozen=True, slots=True)
class CountSolution:
    """Relays per value chosen by OptimalReposition on gain sequences, with the total gain and a trace."""

    relays: np.ndarray = field(repr=False)
    counts: np.ndarray
    total_gain: float
    trace: tuple[CountTraceStep, ...] = field(repr=False)


def _validate_gains(p: Any, gains: Any, l: Any, caller: str) -> tuple[np.ndarray, list[list[float]], int]:
    l = check_int(l, "l", caller, 2)
    pc = _counts_of(p, caller)
    if not isinstance(gains, Sequence) or len(gains) != pc.size:
        raise ValueError(f"The 'gains' parameter of {caller} must hold one gain sequence per value ({pc.size}).")
    gl = [[float(g) for g in seq] for seq in gains]
    if not is_l_eligible(pc, l):
        raise ValueError(f"The initial counts given to {caller} must be {l}-eligible. Got {pc.tolist()!r} instead.")
    return pc, gl, l


def optimal_reposition_counts(
    p: Sequence[int] | np.ndarray,
    gains: Sequence[Sequence[float]],
    l: int,
    *,
    mode: Literal["corrected", "paper_faithful"] = "corrected",
) -> CountSolution:
    """OptimalReposition (P-TEMP Figure 4) on injected gain sequences.

    Value s starts with ``p[s]`` published records in the new snapshot and has suppressed records whose
    successive relay gains are ``gains[s]`` (IG of Smax[s], then of the next head, ...). This reproduces the paper's
    Examples 2-3, which print IGs rather than a full instance.

    Parameters
    ----------
    p : array-like of int
        Initial counts of P_{w+1} (must be l-eligible).
    gains : sequence of sequences of float
        Head gains per value, in relay order.
    l : int
        Diversity parameter (>= 2).
    mode : {'corrected', 'paper_faithful'}, default='corrected'
        'paper_faithful' follows Figure 4 (stops when m = 0); 'corrected' tracks an explicit level cap
        (spec A.2.6).

    Returns
    -------
    CountSolution

    Examples
    --------
    >>> from anoncore.temporal import optimal_reposition_counts
    >>> sol = optimal_reposition_counts([2, 2, 2, 1, 1], [[3, 3, 3, 3], [3], [-2, -5], [1], [-3]], 4)
    >>> sol.total_gain, sol.counts.tolist()
    (5.0, [3, 3, 3, 2, 1])
    """
    caller = "optimal_reposition_counts"
    check_option(mode, "mode", caller, ("corrected", "paper_faithful"))
    pc, gl, l = _validate_gains(p, gains, l, caller)
    n = pc.size
    x = np.zeros(n, dtype=np.int64)
    cnt = pc.copy()
    trace: list[CountTraceStep] = []
    total = 0.0

    def head(s: int) -> float | None:
        return gl[s][x[s]] if x[s] < len(gl[s]) else None

    def best(cap: int, positive: bool) -> int:
        b, bg = -1, 0.0
        for s in range(n):
            g = head(s)
            if g is None or cnt[s] > cap or (positive and not g > 0):
                continue
            if b < 0 or g > bg:
                b, bg = s, g
        return b

    def lp(it: int, cap: int) -> None:
        nonlocal total
        while (s := best(cap - 1, True)) >= 0:
            g = head(s)
            assert g is not None
            trace.append(CountTraceStep(it, "LP", s, g, False))
            total += g
            x[s] += 1
            cnt[s] += 1

    def ll(it: int, m: int, cap: int) -> tuple[list[int], float]:
        picks: list[int] = []
        tot = 0.0
        while len(picks) < m and (s := best(cap, False)) >= 0:
            g = head(s)
            assert g is not None
            trace.append(CountTraceStep(it, "LL", s, g, False))
            tot += g
            x[s] += 1
            cnt[s] += 1
            picks.append(s)
        return picks, tot

    def rollback(picks: list[int]) -> None:
        for s in picks:
            x[s] -= 1
            cnt[s] -= 1
        for k in range(len(picks)):
            st = trace[-1 - k]
            trace[-1 - k] = CountTraceStep(st.iteration, st.phase, st.value, st.gain, True)

    it = 0
    if mode == "corrected":
        cap = level(cnt)
        while True:
            it += 1
            lp(it, cap)
            m = max(0, (cap + 1) * l - int(cnt.sum()))
            picks, tot = ll(it, m, cap)
            if len(picks) < m or (m > 0 and not tot > 0):
                rollback(picks)
                break
            total += tot
            cap += 1
            if all(x[s] >= len(gl[s]) for s in range(n)):
                break
    else:
        while True:
            it += 1
            lp(it, level(cnt))
            i = level(cnt)
            m = max(0, (i + 1) * l - int(cnt.sum()))
            picks, tot = ll(it, m, i)
            if len(picks) < m or not tot > 0:
                rollback(picks)
                break
            total += tot
    return CountSolution(relays=x, counts=cnt, total_gain=float(total), trace=tuple(trace))


def level_sweep(
    p: Sequence[int] | np.ndarray, gains: Sequence[Sequence[float]], l: int
) -> tuple[float, np.ndarray]:
    """Exact count-level optimum by sweeping the target level L (spec A.2.6, F5).

    For each L from max(p) to (sum p + sum n) // l: take every positive gain within the caps ``x_s <= L - p_s``,
    then, if fewer than ``l*L - sum p`` records are published, the best non-positive ones; keep the best L. Gain
    sequences must be non-increasing per value (F3), which holds for relays under C1-C3.

    Returns
    -------
    best_gain : float
    relays : ndarray of int64, relays per value

    Examples
    --------
    >>> from anoncore.temporal import level_sweep
    >>> level_sweep([2, 2, 2, 1, 1], [[3, 3, 3, 3], [3], [-2, -5], [1], [-3]], 4)[0]
    5.0
    """
    pc, gl, l = _validate_gains(p, gains, l, "level_sweep")
    n = pc.size
    total_p = int(pc.sum())
    total_n = sum(len(g) for g in gl)
    best_gain, best_x = 0.0, np.zeros(n, dtype=np.int64)
    for L in range(level(pc), (total_p + total_n) // l + 1):
        x = np.array([sum(1 for g in gl[s][: max(0, L - pc[s])] if g > 0) for s in range(n)], dtype=np.int64)
        need = l * L - total_p - int(x.sum())
        while need > 0:
            cand = [(gl[s][x[s]], -s) for s in range(n) if x[s] < min(len(gl[s]), L - pc[s])]
            if not cand:
                break
            _, ms = max(cand)
            x[-ms] += 1
            need -= 1
        if need > 0:
            continue
        val = float(sum(sum(gl[s][: x[s]]) for s in range(n)))
        if val > best_gain:
            best_gain, best_x = val, x
    return best_gain, best_x
