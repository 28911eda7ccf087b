"""First window by integer programming (spec A.2.7, a proposal: P-TEMP says only "ILP" for the first window).

Variables x[i, j, s] >= 0 (records of D[i] with SA s published at slot j >= i, within the window) and u[i, s]
(suppressed). Conservation per (i, s); l-eligibility of every slot j: l * sum_i x[i, j, s] <= sum_{i, s'} x[i, j, s'];
objective sum mu(j - i) x + sum beta_s u. Solved with scipy's HiGHS MILP; records are then placed per s by
timestamp-sorted assignment (Theorem 1), so the state is timestamp-order preserving.
"""

from __future__ import annotations

import numpy as np

from anoncore.temporal._cost import Mu

__all__ = ["first_window_milp"]


def first_window_milp(
    ts: np.ndarray,
    sa: np.ndarray,
    ids: np.ndarray,
    lo: int,
    hi: int,
    l: int,
    mu: Mu,
    beta: np.ndarray,
    n_sa: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Optimal state of the window [lo, hi]: per record its slot and whether it is suppressed."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_matrix

    n_slot = hi - lo + 1
    counts = np.zeros((n_slot, n_sa), dtype=np.int64)
    np.add.at(counts, (ts - lo, sa), 1)
    values = [int(v) for v in np.flatnonzero(counts.sum(axis=0))]
    pairs = [(i, j) for i in range(n_slot) for j in range(i, n_slot)]
    xs: dict[tuple[int, int, int], int] = {}
    us: dict[tuple[int, int], int] = {}
    cost: list[float] = []
    for s in values:
        for i, j in pairs:
            if counts[i, s]:
                xs[(i, j, int(s))] = len(cost)
                cost.append(float(mu(j - i)))
        for i in range(n_slot):
            if counts[i, s]:
                us[(i, int(s))] = len(cost)
                cost.append(float(beta[s]))
    nv = len(cost)
    slot = ts.astype(np.int64).copy()
    sup = np.zeros(ts.size, dtype=bool)
    if nv == 0:
        return slot, sup
    rows, cols, vals, lb, ub = [], [], [], [], []
    r = 0
    for s in values:  # conservation
        for i in range(n_slot):
            if counts[i, s]:
                for j in range(i, n_slot):
                    rows.append(r); cols.append(xs[(i, j, int(s))]); vals.append(1.0)
                rows.append(r); cols.append(us[(i, int(s))]); vals.append(1.0)
                lb.append(float(counts[i, s])); ub.append(float(counts[i, s]))
                r += 1
    for j in range(n_slot):  # eligibility of slot j for every s
        into = [(k, s) for k, s in ((xs.get((i, j, int(s))), int(s)) for i in range(j + 1) for s in values) if k is not None]
        for s in values:
            for k, s2 in into:
                rows.append(r); cols.append(k); vals.append((l if s2 == s else 0) - 1.0)
            lb.append(-np.inf); ub.append(0.0)
            r += 1
    a = coo_matrix((vals, (rows, cols)), shape=(r, nv)).tocsr()
    res = milp(
        c=np.asarray(cost),
        constraints=LinearConstraint(a, np.asarray(lb), np.asarray(ub)),
        integrality=np.ones(nv),
        bounds=Bounds(np.zeros(nv), np.full(nv, np.inf)),
    )
    if res.x is None:  # pragma: no cover - the all-suppressed point is always feasible
        raise RuntimeError("anoncore internal error: first-window MILP found no solution (please report this bug)")
    x = np.rint(res.x).astype(np.int64)
    for s in values:
        pub_ts: list[int] = []
        slots: list[int] = []
        for i in range(n_slot):
            if not counts[i, s]:
                continue
            sel = np.flatnonzero((ts == lo + i) & (sa == s))
            sel = sel[np.argsort(ids[sel], kind="stable")]
            n_sup = int(x[us[(i, s)]])
            if n_sup:
                sup[sel[sel.size - n_sup:]] = True  # the largest ids are suppressed, as in the kernel
            keep = sel[: sel.size - n_sup]
            pub_ts.extend(keep.tolist())
            for j in range(i, n_slot):
                slots.extend([lo + j] * int(x[xs[(i, j, s)]]))
        # timestamp-sorted assignment of the published records to the slot multiset
        order = sorted(pub_ts, key=lambda k: (int(ts[k]), int(ids[k])))
        for k, sl in zip(order, sorted(slots)):
            slot[k] = sl
    return slot, sup
