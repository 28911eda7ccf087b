"""Golden tests of SABRE_W (Cao, PhD thesis NUS 2010, chapter 6; spec streams-castle-sabrew.md §4.6-4.7).

* Example 6.1 (thesis §6.3, spec §4.7): the case sequence W1..W6 = DIRECT, DIRECT, Case 1, INDIRECT, Case 1, DIRECT
  with omega = 4 I (the only ratio the narrative allows [I]). The stream and the classes formed at each DIRECT are
  constructed for this test [D] so that the narrative's conditions hold (W2's not-yet-output mix close to W2's,
  W4's far from it); the expected cases and outputs are the thesis's.
* The EMD values of spec §4.6 that the D computation relies on (Ex. 3.1: 0.5; ordered m = 4: 1/3 and 0.5).
* Lemma 6.1: the first output happens after omega + I arrivals, and no tuple waits more than omega + I.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from anoncore import Hierarchy, Schema
from anoncore.stream import SabreW, SabreWRelease
from anoncore.stream._window import GroundMetric

I, J = 2, 4
OMEGA = J * I
T = 0.2


def _schema() -> Schema:
    return Schema.build({"q": {"kind": "numeric", "domain": (0, 100)}},
                        sensitive={"sa": {"kind": "ordinal", "order": (0, 1)}}, pid="pid")


def _example_stream() -> dict[str, Any]:
    n = 20
    sa = np.zeros(n, dtype=np.int64)
    sa[[8, 9]] = 1  # the only '1' values: W2's not-yet-output mix stays close to W2's, W4's does not
    return {"q": np.arange(n), "sa": sa, "pid": np.arange(n)}


def test_example_6_1_case_sequence() -> None:
    # Classes formed at each DIRECT (arrival indices), as in the narrative: W1's class with the expiring block
    # reaches into block 1; W2's class with its expiring tuple covers blocks 2 and 4 but leaves block 3 in S_G.
    script = {
        0: [[0, 1, 2], [3, 4, 5, 6, 7]],
        1: [[3, 4, 5, 8, 9], [6, 7]],
        5: [[10, 11, 12, 13, 14, 15, 16, 17]],
    }
    s = SabreW(_schema(), omega=OMEGA, interval=I, t=T, k=1, rng=0)
    calls: list[int] = []

    def scripted(d: Any, rows: np.ndarray, tp: float, seed: int) -> np.ndarray:
        r = d.slides
        calls.append(r)
        arr = d.buf["arr"][rows]
        lab = np.full(rows.size, -1, np.int64)
        for c, members in enumerate(script[r]):
            lab[np.isin(arr, members)] = c
        assert (lab >= 0).all(), (r, arr)
        return lab

    s._partition = scripted  # type: ignore[method-assign]
    d = _example_stream()
    out = s.push(d)
    cases = [c for _, c, _ in s.case_log_]
    assert cases == ["direct", "direct", "nothing", "indirect", "nothing", "direct"]
    assert calls == [0, 1, 5]
    starts = [w for w, _, _ in s.case_log_]
    assert starts == [0, 2, 4, 6, 8, 10]
    ds = [dd for _, _, dd in s.case_log_]
    assert ds[0] == 0.0 and ds[5] == 0.0
    assert abs(ds[1] - abs(2 / 7 - 2 / 8)) < 1e-12  # W2: D = |2/7 - 1/4| < t
    assert abs(ds[3] - 0.25) < 1e-12  # W4: not-yet-output {6,7,10..13} has no '1', W has 2/8: D >= t
    # INDIRECT at W4 outputs S_G^2 = the class {6, 7} left by W2's DIRECT.
    ind = out.arrival[out.case == 1]
    assert sorted(ind.tolist()) == [6, 7]
    # Every tuple of W2 = blocks 1..4 has been output once W5 comes (which is why W5 is Case 1).
    assert set(range(2, 10)) <= set(out.arrival.tolist())


def test_example_6_1_ratio_j4_real_sabre_respects_lemmas() -> None:
    # The same stream through the real SABRE partitioner: whatever classes it forms, the lemmas hold.
    s = SabreW(_schema(), omega=OMEGA, interval=I, t=T, k=1, rng=0)
    rel = SabreWRelease.concat([s.push(_example_stream()), s.flush()])
    cases = [c for _, c, _ in s.case_log_]
    assert cases[0] == "direct"
    assert sorted(rel.position.tolist()) == list(range(1, 21))
    assert int((rel.emitted_at - rel.arrival - 1).max()) <= OMEGA + I


def test_emd_values_spec_4_6() -> None:
    h = Hierarchy.from_nested({"RD": {"R": ["SARS", "pneumonia", "bronchitis"],
                                      "D": ["intestinal cancer", "gastric flu", "gastric ulcer"]}})
    g = GroundMetric(6, h)
    assert abs(float(g.emd(np.array([1, 1, 1, 0, 0, 0]), np.ones(6))) - 0.5) < 1e-12
    o = GroundMetric(4)
    p = np.array([0.2, 0.3, 0.3, 0.2])
    assert abs(float(o.emd(np.array([0.5, 0.5, 0, 0]), p)) - 1 / 3) < 1e-12
    assert abs(float(o.emd(np.array([0, 0, 0, 1.0]), p)) - 0.5) < 1e-12


def test_lemma_6_1_first_output_after_omega_plus_i() -> None:
    rng = np.random.default_rng(0)
    n = 200
    d = {"q": rng.integers(0, 100, n), "sa": rng.integers(0, 2, n), "pid": np.arange(n)}
    s = SabreW(_schema(), omega=OMEGA, interval=I, t=T, k=2, rng=0)
    first = s.push({key: v[:OMEGA + I - 1] for key, v in d.items()})
    assert len(first) == 0
    nxt = s.push({key: v[OMEGA + I - 1:OMEGA + I] for key, v in d.items()})
    assert {0, 1} <= set(nxt.arrival.tolist())
    rest = s.push({key: v[OMEGA + I:] for key, v in d.items()})
    fin = s.flush()
    rel = SabreWRelease.concat([first, nxt, rest, fin])
    assert int((rel.emitted_at - rel.arrival - 1).max()) <= OMEGA + I


def test_delay_constraint_analogue_i1() -> None:
    # Spec §1.11 [D]: the expiring constraint with I = 1, omega = delta - 1 is the delay constraint delta.
    delta = 10
    rng = np.random.default_rng(3)
    n = 80
    d = {"q": rng.integers(0, 100, n), "sa": rng.integers(0, 2, n), "pid": np.arange(n)}
    s = SabreW(_schema(), omega=delta - 1, interval=1, t=0.3, k=2, rng=0)
    outs = [s.push({key: v[i:i + 1] for key, v in d.items()}) for i in range(n)]
    rel = SabreWRelease.concat([*outs, s.flush()])
    assert int((rel.emitted_at - rel.arrival - 1).max()) <= delta
    # Def. 5.2: once position p has been processed, every position <= p - delta has been output
    released: set[int] = set()
    for p, o in enumerate(outs, start=1):
        released |= set(o.position.tolist())
        assert set(range(1, p - delta + 1)) <= released
    assert sorted(rel.arrival.tolist()) == list(range(n))


def test_lemma_6_3_j1_d_is_zero_and_rounds() -> None:
    # Lemma 6.3: with omega = I every window starts fully unpublished, so D = 0 and every slide is DIRECT.
    # §3.3: the number of rounds is (|S| - omega) / I.
    rng = np.random.default_rng(4)
    n = 130
    d = {"q": rng.integers(0, 100, n), "sa": rng.integers(0, 2, n), "pid": np.arange(n)}
    s = SabreW(_schema(), omega=10, interval=10, t=0.05, k=2, rng=0)
    s.push(d)
    assert len(s.case_log_) == (n - 10) // 10
    assert all(c == "direct" and dd == 0.0 for _, c, dd in s.case_log_)
    s2 = SabreW(_schema(), omega=20, interval=5, t=0.3, k=2, rng=0)
    s2.push(d)
    assert len(s2.case_log_) == (n - 20) // 5
