"""Golden tests for the reposition model (Wang, Xu, Wong, Fu, "Anonymizing Temporal Data"; seed 000).

Every number comes from the paper's worked examples as rebuilt in ../shared/spec/temporal-reposition.md A.3.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from oracles.temporal import brute_min_suppression, relay_cost, window_optimum

from anoncore.temporal import (
    Mu,
    WindowState,
    information_loss,
    is_l_eligible,
    level_sweep,
    min_suppression,
    optimal_reposition_counts,
    reposition_window,
)


def _state(lo: int, hi: int, rows: list[tuple[int, int, int, int, bool]]) -> WindowState:
    """rows: (id, ts, sa, slot, suppressed)."""
    a = np.array([r[:4] for r in rows], dtype=np.int64).reshape(-1, 4)
    return WindowState(
        lo, hi, a[:, 0].copy(), a[:, 1].copy(), a[:, 2].astype(np.int32), a[:, 3].copy(),
        np.array([r[4] for r in rows], dtype=bool),
    )


# --- A.3.1: intro example (P-TEMP Section I) --------------------------------------------------------------------
def test_intro_example_eligibility() -> None:
    counts = [50, 10] + [4] * 10  # H1N1 50%, SARS 10%, ten diseases at 4%, scaled to 100 records
    assert is_l_eligible(counts, 2)
    assert not is_l_eligible(counts, 3)
    assert not is_l_eligible(counts, 4)


# --- A.3.2: Example 1 / Figure 1 (IL computation) -----------------------------------------------------------------
@pytest.mark.parametrize("mu", ["quadratic", "linear"])
def test_example1_information_loss(mu: str) -> None:
    # records r0..r6 with TS 6,6,6,7,7,7,8; r0 suppressed, r5 repositioned 7 -> 8. IL = beta + mu(1) = 3 + 1.
    ts = np.array([6, 6, 6, 7, 7, 7, 8])
    pub = np.array([-1, 6, 6, 7, 7, 8, 8])
    assert information_loss(ts, pub, np.zeros(7, dtype=np.int32), mu, 3.0) == 4.0
    st = _state(6, 8, [(i, int(t), 0, int(p) if p >= 0 else int(t), p < 0) for i, (t, p) in enumerate(zip(ts, pub))])
    assert st.information_loss(Mu.power(2) if mu == "quadratic" else Mu.linear(), np.array([3.0])) == 4.0


# --- A.3.3: Examples 2-3 / Figures 2-3 with the printed (injected) IGs -----------------------------------------
GAINS = [[3, 3, 3, 3], [3], [-2, -5], [1], [-3]]  # s1: r1..r4; s2: r5; s3: r7, r6; s4: r8; s5: r9


@pytest.mark.parametrize("mode", ["corrected", "paper_faithful"])
def test_examples_2_3_injected_gains(mode: str) -> None:
    sol = optimal_reposition_counts([2, 2, 2, 1, 1], GAINS, 4, mode=mode)
    lp = [(s.value, s.gain) for s in sol.trace if s.phase == "LP"]
    assert lp == [(3, 1.0)]  # Example 2: LP relays r8 (s4, IG +1), not r9 (IG -3)
    first_ll = [(s.value, s.gain) for s in sol.trace if s.phase == "LL" and s.iteration == 1]
    assert first_ll == [(0, 3.0), (1, 3.0), (2, -2.0)]  # Example 3: {r1, r5, r7}, IG 3 + 3 - 2 = 4
    assert not any(s.rolled_back for s in sol.trace if s.iteration == 1)
    last = [s for s in sol.trace if s.iteration == 2]
    assert len(last) == 3 and all(s.rolled_back for s in last)  # |M2| = 3 < m = 16 - 12 = 4: roll back
    assert sol.total_gain == 5.0
    assert sol.counts.tolist() == [3, 3, 3, 2, 1]  # Figure 3 P_{w+1}
    assert level_sweep([2, 2, 2, 1, 1], GAINS, 4)[0] == 5.0


def test_figure2_initial_suppression() -> None:
    # Figure 2 column heights 6, 3, 2, 2(after r8), 1: D[w+1] = (6, 3, 2, 1, 1), l = 4 -> P = (2, 2, 2, 1, 1).
    assert min_suppression([6, 3, 2, 1, 1], 4).tolist() == [2, 2, 2, 1, 1]
    assert brute_min_suppression([6, 3, 2, 1, 1], 4) == 5


# --- A.3.4: the fully consistent instance (IL 30 -> 25) -------------------------------------------------------------
def _a34_state() -> tuple[WindowState, list[int], list[int]]:
    rows = []
    nid = 100
    # slot 2: P = {s1, s2, s3, s4, s5}, S = {r6: s3, r9: s5}
    for s in range(5):
        rows.append((nid, 2, s, 2, False)); nid += 1
    rows += [(6, 2, 2, 2, True), (9, 2, 4, 2, True)]
    # slot 3: P = {s1, s2, s3, s4}, S = {r7: s3, r8: s4}
    for s in range(4):
        rows.append((nid, 3, s, 3, False)); nid += 1
    rows += [(7, 3, 2, 3, True), (8, 3, 3, 3, True)]
    # slot 4 (new): s1 x6, s2 x3, s3 x2, s4 x1, s5 x1; r1..r4 and r5 get the largest ids so they are suppressed
    new_sa = [0, 0, 1, 1, 2, 2, 3, 4, 0, 0, 0, 0, 1]
    new_ids = [60, 61, 62, 63, 64, 65, 66, 67, 201, 202, 203, 204, 205]
    return _state(2, 3, rows), new_sa, new_ids


MU_A34 = Mu.power(2, c=3.0)  # mu(d) = 3 d^2
BETA_A34 = [3.0, 3.0, 1.0, 4.0, 9.0]


@pytest.mark.parametrize("mode", ["corrected", "paper_faithful"])
def test_consistent_instance_il_30_to_25(mode: str) -> None:
    st, new_sa, new_ids = _a34_state()
    res = reposition_window(st, new_sa, l=4, mu=MU_A34, beta=BETA_A34, w=3, new_ids=new_ids, mode=mode)
    assert res.il_initial == 30.0
    assert res.il_final == 25.0
    lp = [(t.record, t.gain) for t in res.trace if t.phase == "LP"]
    assert lp == [(8, 1.0)]  # r8: IG = 4 - mu(1) = +1
    ll1 = [(t.record, t.gain, t.rolled_back) for t in res.trace if t.phase == "LL" and t.iteration == 1]
    assert ll1 == [(201, 3.0, False), (205, 3.0, False), (7, -2.0, False)]  # {r1, r5, r7}, IG 4
    ll2 = [(t.record, t.gain, t.rolled_back) for t in res.trace if t.iteration == 2]
    # next level: r2 (+3), r9 (9 - mu(2) = -3), r6 (1 - 2 mu(1) = -5): 3 < 4, rolled back
    assert ll2 == [(202, 3.0, True), (9, -3.0, True), (6, -5.0, True)]
    final = res.state
    top = final.counts(5)[-1]
    assert top.tolist() == [3, 3, 3, 2, 1]
    # suppression 19 (r6, r9, r2..r4) + reposition 6 (r7 and r8 from slot 3 to slot 4, mu(1) = 3 each)
    sup_ids = sorted(final.ids[final.suppressed].tolist())
    assert sup_ids == [6, 9, 202, 203, 204]
    moved = ~final.suppressed & (final.slot != final.ts)
    # two TS-3 records (values s3 and s4) now sit in slot 4 (ties inside a slot: the larger id moves on)
    assert sorted(zip(final.sa[moved].tolist(), final.ts[moved].tolist(), final.slot[moved].tolist())) == [
        (2, 3, 4),
        (3, 3, 4),
    ]


def test_consistent_instance_head_gains_and_oracle() -> None:
    # Head IG table of A.3.4 from a run where only one value is relayable at a time is covered above; here the
    # exhaustive oracle confirms that level 3 (gain 5) is optimal.
    published = {s: [(2, 2)] for s in range(5)}
    for s in range(4):
        published[s].append((3, 3))
    suppressed = {2: [(2, 2), (3, 3)], 4: [(2, 2)], 3: [(3, 3)]}
    opt = window_optimum(published, suppressed, [6, 3, 2, 1, 1], 4, 4, lambda d: 3.0 * d * d, BETA_A34)
    assert opt == 25.0


# --- A.3.5: relay semantics, after insertion (16) vs before insertion (20) -----------------------------------------
def test_relay_after_insertion_cost_16() -> None:
    mu = lambda d: float(d * d)
    assert relay_cost({5: [3], 7: [4]}, 5, 9, mu, after_insertion=True)[0] == 16.0
    assert relay_cost({5: [3], 7: [4]}, 5, 9, mu, after_insertion=False)[0] == 20.0  # breaks timestamp order
    # The kernel: value a has P_5 = {TS 3}, P_7 = {TS 4}, r0 in S_5; the new snapshot at 9 holds one b record, so
    # lifting P_9 to level 1 (l = 2) relays b (gain beta_b = 5) and r0 (gain 17 - psi).
    st = _state(5, 8, [(1, 3, 0, 5, False), (2, 4, 0, 7, False), (0, 5, 0, 5, True)])
    res = reposition_window(st, [1], l=2, mu="quadratic", beta=[17.0, 5.0], w=5, new_ids=[10])
    gains = {t.record: t.gain for t in res.trace}
    assert gains[0] == 17.0 - 16.0  # psi = mu(2) + mu(4) - mu(2) = 16
    where = dict(zip(res.state.ids.tolist(), res.state.slot.tolist()))
    assert where == {1: 5, 2: 7, 0: 9, 10: 9}  # P_7 keeps TS 4, P_9 receives TS 5: order preserved
    assert (res.il_initial, res.il_final) == (4.0 + 9.0 + 17.0 + 5.0, 4.0 + 9.0 + 16.0)  # beta gone, psi = 16 added


# --- A.3.6: the m = 0 counterexample (paper's loop 3, corrected 1) --------------------------------------------------
@pytest.mark.parametrize(("mode", "expected"), [("paper_faithful", 3.0), ("corrected", 1.0)])
def test_m0_counterexample(mode: str, expected: float) -> None:
    # D[2] = {a, a, b} -> P_2 = {a@2, b@2}, S_2 = {a@2}; D[3] = {a, b, c, d}; l = 2, mu = d, beta = 3, w = 2.
    st = _state(2, 2, [(0, 2, 0, 2, False), (1, 2, 1, 2, False), (2, 2, 0, 2, True)])
    res = reposition_window(st, [0, 1, 2, 3], l=2, mu="linear", beta=3.0, w=2, mode=mode)
    assert res.il_initial == 3.0
    assert res.il_final == expected
    opt = window_optimum({0: [(2, 2)], 1: [(2, 2)]}, {0: [(2, 2)]}, [1, 1, 1, 1], 3, 2, lambda d: float(d), [3.0] * 4)
    assert opt == 1.0
