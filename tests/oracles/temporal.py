"""Brute-force oracles for the reposition model (P-TEMP), written straight from the definitions.

Nothing here imports anoncore: every quantity is recomputed from the window's records.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import numpy as np


def eligible(counts: Sequence[int], l: int) -> bool:
    """Definition 1: Level(T) <= |T| / l (integer form)."""
    counts = list(counts)
    return l * (max(counts) if counts else 0) <= sum(counts)


def greedy_suppression(counts: Sequence[int], l: int) -> list[int]:
    """The paper's procedure (Section III): suppress one record of the most frequent value until eligible."""
    c = list(counts)
    while not eligible(c, l):
        c[int(np.argmax(c))] -= 1
    return c


def brute_min_suppression(counts: Sequence[int], l: int) -> int:
    """Fewest suppressions making the multiset l-eligible, by trying every removal vector."""
    best = sum(counts)
    for kept in itertools.product(*[range(c + 1) for c in counts]):
        if eligible(kept, l):
            best = min(best, sum(counts) - sum(kept))
    return best


def sorted_assignment_cost(ts_values: Sequence[int], slots: Sequence[int], mu: Callable[[int], float]) -> float | None:
    """Cost of placing records (by TS) on slots, sorted to sorted; None when some record would move backward."""
    cost = 0.0
    for t, s in zip(sorted(ts_values), sorted(slots)):
        if t > s:
            return None
        cost += mu(s - t)
    return cost


def window_optimum(
    published: dict[int, list[tuple[int, int]]],
    suppressed: dict[int, list[tuple[int, int]]],
    new_counts: Sequence[int],
    hi: int,
    l: int,
    mu: Callable[[int], float],
    beta: Sequence[float],
) -> float:
    """Minimum IL of Definition 2 by exhaustive search.

    published[s] / suppressed[s]: (ts, slot) of the inherited window records of SA s (suppressed at slot == ts);
    new_counts: the raw new snapshot at slot hi. The initial solution suppresses by the greedy; then every choice of
    which suppressed records to publish is tried (per slot, as records of one S_i are interchangeable), the published
    s-records are placed by sorted assignment on the fixed slot multiset (+x at hi), and eligibility of P_hi is
    checked over all combinations.
    """
    n_sa = len(new_counts)
    kept = greedy_suppression(new_counts, l)
    per_value: list[dict[int, float]] = []  # x -> best cost of value s (reposition + suppression)
    for s in range(n_sa):
        pub = published.get(s, [])
        sup = [t for t, _ in suppressed.get(s, [])] + [hi] * (new_counts[s] - kept[s])
        base_ts = [t for t, _ in pub] + [hi] * kept[s]
        base_slots = [sl for _, sl in pub] + [hi] * kept[s]
        by_slot: dict[int, int] = {}
        for t in sup:
            by_slot[t] = by_slot.get(t, 0) + 1
        keys = sorted(by_slot)
        best: dict[int, float] = {}
        for choice in itertools.product(*[range(by_slot[k] + 1) for k in keys]):
            x = sum(choice)
            chosen = [k for k, c in zip(keys, choice) for _ in range(c)]
            cost = sorted_assignment_cost(base_ts + chosen, base_slots + [hi] * x, mu)
            if cost is None:
                continue
            cost += beta[s] * (len(sup) - x)
            if x not in best or cost < best[x]:
                best[x] = cost
        per_value.append(best)
    p = kept
    opt = float("inf")
    for xs in itertools.product(*[sorted(d) for d in per_value]):
        counts = [p[s] + xs[s] for s in range(n_sa)]
        if not eligible(counts, l):
            continue
        opt = min(opt, sum(per_value[s][xs[s]] for s in range(n_sa)))
    return opt


def relay_cost(
    slots_ts: dict[int, list[int]], i0: int, hi: int, mu: Callable[[int], float], after_insertion: bool
) -> tuple[float, dict[int, list[int]]]:
    """Literal relay of one suppressed record of home i0 (spec A.2.2) under either reading of Eq. 4.

    slots_ts maps slot -> TS values of the published records of one SA value; returns (psi, new slots).
    """
    slots = {k: sorted(v) for k, v in slots_ts.items()}
    chain = [j for j in sorted(slots) if i0 < j < hi and slots[j]] + [hi]
    carry, cur, cost = i0, i0, 0.0
    slots.setdefault(i0, [])
    for nxt in chain:
        # After-insertion: the slot's max is taken over P_cur[s] + {carry}. Before-insertion reading: over P_cur[s]
        # only (except at i0 itself, where r0 is the one leaving; spec A.3.5).
        look_at_carry = after_insertion or cur == i0
        best_slot = max(slots[cur]) if slots[cur] else None
        if best_slot is not None and (not look_at_carry or best_slot > carry):
            slots[cur].remove(best_slot)
            slots[cur].append(carry)
            slots[cur].sort()
            out = best_slot
        else:
            out = carry
        cost += mu(nxt - out) - mu(cur - out)
        carry, cur = out, nxt
    slots.setdefault(hi, []).append(carry)
    return cost, slots
