"""Golden tests for anoncore.sequence.

Sources: Bonomi, Fan, Jin, "An Information Theoretic Approach to Individual Sequential Data Sanitization",
WSDM 2016 (seed 003): §3 Definition 1 example, Examples 1-4; and the derived examples A and B of
/work/shared/spec/sequence-sanitization.md §3.2 (T_toy with Dairy = {Milk, Cheese}, linear cost, log2, w = 2, m = 2,
N_m normalization), whose numbers the spec verified by brute force.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from oracles.sequence import S_A, TOY_TREE

from anoncore.data.hierarchy import Hierarchy
from anoncore.sequence import (
    cost_table,
    count_patterns,
    lcgp,
    mutual_information,
    pattern_entropy,
    sanitize,
    sanitize_sequence,
    total_embeddings,
)
from anoncore.sequence._taxonomy import as_tax
from anoncore.sequence.lcgp import lcgp_passes

# T_toy (spec §1.3): leaves Wine 0, Beer 1, Cookies 2, Chips 3, Milk 4, Cheese 5; Alcohol 6, Snack 7, Dairy 8, All 9.
TOY = Hierarchy.from_nested(TOY_TREE)
ID = {lab: i for i, lab in enumerate(TOY.labels)}
ALC, SNK, DAI, ALL = ID["Alcohol"], ID["Snack"], ID["Dairy"], ID["All"]

P_A = [("Beer", "Chips"), ("Wine", "Cheese")]
S_B = [
    "Cookies",
    "Cheese",
    "Cookies",
    "Milk",
    "Beer",
    "Chips",
    "Beer",
    "Beer",
    "Chips",
    "Milk",
    "Cookies",
    "Milk",
    "Wine",
    "Milk",
]
P_B = [("Beer", "Chips"), ("Chips", "Beer"), ("Beer", "Beer")]


def gmap(**moves: str) -> list[int]:
    h = list(range(6))
    for leaf, node in moves.items():
        h[ID[leaf]] = ID[node]
    return h


# ------------------------------------------------------------------------ counting (paper §3 + spec §3.2 table)
ABC = Hierarchy.from_nested({"*": {"g": ["a", "b", "c"]}})


@pytest.mark.parametrize(
    ("s", "p", "w", "f", "N"),
    [
        ("aab", "ab", 2, 2, 3),  # the paper's Definition 1 example: tuples (1,3) and (2,3)
        ("aab", "ab", 1, 1, 2),
        ("abb", "ab", 2, 2, 3),  # embeddings, not start positions
        ("abab", "ab", 3, 3, 6),
        ("abab", "ab", 1, 2, 3),
        ("aaaa", "aa", 2, 5, 5),
        ("abcabc", "abc", 5, 4, 20),
        ("abcabc", "abc", 4, 2, 16),
        ("aaaaa", "aaa", 2, 3, 3),
        ("aaaaa", "aaa", 4, 10, 10),
    ],
)
def test_counting_fixtures(s: str, p: str, w: int, f: int, N: int) -> None:
    assert count_patterns([list(s)], ABC, [tuple(p)], w).tolist() == [[f]]
    assert total_embeddings(len(s), w, len(p)) == N


# ------------------------------------------------------------------------ Examples 1-4 (paper)
def test_example1_lcgp_of_p1_p2() -> None:
    # Example 1: (Alcohol, All) can stem from (Beer, Chips) or (Wine, Cheese) but not (Cookies, Milk).
    assert lcgp(("Beer", "Chips"), ("Wine", "Cheese"), TOY) == ("Alcohol", "All")
    assert lcgp(("Beer", "Chips"), ("Wine", "Cheese"), TOY, method="passes") == ("Alcohol", "All")


def test_example2_user_cost_table_is_accepted() -> None:
    # Example 2: costs on [0, 1]; any product -> All costs 1, Cookies -> Snack costs 0.8.
    table = cost_table(TOY, "linear")
    table[ID["Cookies"], SNK] = 0.8
    r = sanitize_sequence(["Cookies", "Chips", "Cookies"], TOY, [("Cookies", "Chips")], 0.0, 2, cost=table)
    assert r.mi == 0.0
    # Ŝ = (Snack, Snack, Snack) already has f_Ŝ(Snack, Snack) = N = 3, so Ĩ = 0 at UL 0.8 + 0.5 + 0.8
    assert r.utility_loss == pytest.approx(2.1)
    assert r.generalization[ID["Cookies"]] == SNK and r.generalization[ID["Chips"]] == SNK


def test_example3_refinement_of_cookies_from_all() -> None:
    # Example 3: from all -> All, refining Cookies gives Cookies, Chips -> Snack.
    r = sanitize_sequence(S_B, TOY, P_B, 0.5, 2, sigma_s_shortcut=False)
    ev = next(e for e in r.trace if e.iteration == 1 and e.node_to == SNK)
    assert (ev.node_from, ev.node_to, ev.moved) == (ALL, SNK, (ID["Cookies"], ID["Chips"]))


def test_example4_lcgp_intermediate_states() -> None:
    t = as_tax(TOY, "test")
    # (a) p1 = (Beer, Chips), p2 = (Milk, Cookies)
    pat, _, states = lcgp_passes([ID["Beer"], ID["Chips"]], [ID["Milk"], ID["Cookies"]], t)
    assert states[0] == {ID["Beer"]: ALL, ID["Chips"]: SNK, ID["Milk"]: ALL, ID["Cookies"]: SNK}
    assert states[1] == states[0]
    assert pat == (ALL, SNK)
    # (b) p1 = (Beer, Chips), p3 = (Wine, Beer)
    pat, _h, states = lcgp_passes([ID["Beer"], ID["Chips"]], [ID["Wine"], ID["Beer"]], t)
    assert states[0] == {ID["Beer"]: ALL, ID["Chips"]: ALL, ID["Wine"]: ALC}
    assert states[1] == {ID["Beer"]: ALL, ID["Chips"]: ALL, ID["Wine"]: ALL}
    assert pat == (ALL, ALL)
    assert lcgp(("Beer", "Chips"), ("Wine", "Beer"), TOY) == ("All", "All")


# ------------------------------------------------------------------------ Example A (spec §3.2)
def test_example_a_counts_entropy_and_map_table() -> None:
    assert total_embeddings(len(S_A), 2, 2) == 29
    assert count_patterns([S_A], TOY, P_A, 2).tolist() == [[3, 2]]
    assert pattern_entropy(S_A, TOY, P_A, 2) == pytest.approx(0.604656, abs=1e-6)
    assert pattern_entropy(S_A, TOY, P_A, 2, log_base=math.e) == pytest.approx(0.419115, abs=1e-6)
    rows = [
        (gmap(), 0.604656, 0.0),
        ([ALL] * 6, 0.0, 16.0),
        (gmap(Beer="All", Chips="All", Wine="All", Cheese="All"), 0.219486, 11.0),
        (gmap(Beer="Alcohol", Wine="Alcohol", Chips="All", Cheese="All"), 0.437251, 8.5),
        (gmap(Beer="All", Cheese="All"), 0.488076, 5.0),
        (gmap(Beer="All", Chips="All", Wine="All", Cheese="All", Cookies="All"), 0.118630, 13.0),
    ]
    lin = cost_table(TOY, "linear")
    f = np.bincount([ID[x] for x in S_A], minlength=6)
    for h, mi, ul in rows:
        assert mutual_information(S_A, TOY, P_A, 2, h) == pytest.approx(mi, abs=1e-6)
        assert float(sum(f[a] * lin[a, h[a]] for a in range(6))) == ul
    # images of the OPT map at 0.9: (All, Chips) 5 and (Wine, All) 3
    assert count_patterns(
        [S_A], TOY, [(ALL, ID["Chips"]), (ID["Wine"], ALL)], 2, generalization=gmap(Beer="All", Cheese="All")
    ).tolist() == [[5, 3]]


@pytest.mark.parametrize(
    ("eps", "td_on", "td_off", "bu", "opt"),
    [
        (0.9, (8.5, 0.437251), (5.0, 0.535690), (8.5, 0.437251), 5.0),
        (0.5, (11.0, 0.219486), (13.0, 0.288657), (11.0, 0.219486), 11.0),
        (
            0.2,
            (16.0, 0.0),
            (16.0, 0.0),
            (13.0, 0.118630),
            13.0,
        ),  # BU row depends on R-BU3 (implementation-defined)
    ],
)
def test_example_a_results(eps: float, td_on: tuple, td_off: tuple, bu: tuple, opt: float) -> None:
    a = sanitize_sequence(S_A, TOY, P_A, eps, 2)
    b = sanitize_sequence(S_A, TOY, P_A, eps, 2, sigma_s_shortcut=False)
    c = sanitize_sequence(S_A, TOY, P_A, eps, 2, method="bottom_up")
    o = sanitize_sequence(S_A, TOY, P_A, eps, 2, method="brute_force")
    for r, (ul, mi) in ((a, td_on), (b, td_off), (c, bu)):
        assert r.utility_loss == ul and r.mi == pytest.approx(mi, abs=1e-6)
    assert o.utility_loss == opt
    assert a.epsilon == pytest.approx(eps * 0.6046557749, abs=1e-9)
    # the C++ batch kernels (sanitize without traces) give the same numbers
    for kw, (ul, mi) in (
        ({"method": "top_down"}, td_on),
        ({"method": "top_down", "sigma_s_shortcut": False}, td_off),
        ({"method": "bottom_up"}, bu),
    ):
        for counting in ("table", "scan"):
            u = sanitize([S_A], TOY, P_A, eps, 2, counting=counting, **kw).users[0]
            assert u.trace == () and u.utility_loss == ul and u.mi == pytest.approx(mi, abs=1e-6)


def test_example_a_td_without_shortcut_final_map_at_09() -> None:
    r = sanitize_sequence(S_A, TOY, P_A, 0.9, 2, sigma_s_shortcut=False)
    assert r.generalization.tolist() == gmap(Beer="Alcohol", Wine="Alcohol", Milk="Dairy", Cheese="Dairy")


def test_example_a_td_trace_shortcut_off_eps_09() -> None:
    # spec §3.2 trace (literal last-wins tie rule): accepted UL/Ĩ per step, and pass 5's prunes.
    r = sanitize_sequence(S_A, TOY, P_A, 0.9, 2, sigma_s_shortcut=False, tie="last")
    acc = [
        (e.action, e.node_to, e.utility_loss, round(e.mi, 6))
        for e in r.trace
        if e.action in ("start", "accepted")
    ]
    assert acc == [
        ("start", -1, 16.0, 0.0),
        ("accepted", SNK, 13.0, 0.288657),
        ("accepted", DAI, 10.5, 0.492755),
        ("accepted", ALC, 8.0, 0.492755),
        ("accepted", ID["Chips"], 6.0, 0.535690),
        ("accepted", ID["Cookies"], 5.0, 0.535690),
    ]
    last = [(e.node_to, e.action, e.utility_loss, round(e.mi, 6)) for e in r.trace if e.iteration == 5]
    assert (ID["Cookies"], "feasible", 5.0, 0.535690) in last
    for leaf, ul, mi in (
        ("Beer", 4.5, 0.564314),
        ("Milk", 4.5, 0.604656),
        ("Wine", 5.0, 0.564314),
        ("Cheese", 5.0, 0.604656),
    ):
        assert (ID[leaf], "infeasible", ul, mi) in last
    assert max(e.iteration for e in r.trace) == 5
    # under first-wins the pass-2 choice differs (Alcohol before Dairy) but the final map is the same
    f = sanitize_sequence(S_A, TOY, P_A, 0.9, 2, sigma_s_shortcut=False, tie="first")
    acc_f = [e.node_to for e in f.trace if e.action == "accepted"]
    assert acc_f[:3] == [SNK, ALC, DAI]
    assert np.array_equal(f.generalization, r.generalization)


def test_example_a_bottom_up_single_merge() -> None:
    r = sanitize_sequence(S_A, TOY, P_A, 0.9, 2, method="bottom_up")
    merges = [e for e in r.trace if e.action == "merge"]
    assert len(merges) == 1 and merges[0].distance == 8.5
    assert r.utility_loss == 8.5 and r.mi == pytest.approx(0.437251, abs=1e-6)


# ------------------------------------------------------------------------ Example B (spec §3.2)
def test_example_b_counts_and_entropy() -> None:
    assert total_embeddings(len(S_B), 2, 2) == 25
    assert count_patterns([S_B], TOY, P_B, 2).tolist() == [[3, 2, 2]]
    assert pattern_entropy(S_B, TOY, P_B, 2) == pytest.approx(0.950084, abs=1e-6)
    assert pattern_entropy(S_B, TOY, P_B, 2, log_base=math.e) == pytest.approx(0.658548, abs=1e-6)
    h_s = gmap(Beer="All", Chips="All")
    assert mutual_information(S_B, TOY, P_B, 2, h_s) == pytest.approx(0.514220, abs=1e-6)


def test_example_b_top_down_trace() -> None:
    r = sanitize_sequence(S_B, TOY, P_B, 0.5, 2, tie="last")  # shortcut on: Σ_S -> All is not private
    got = [
        (
            e.iteration,
            e.action,
            e.node_from,
            e.node_to,
            e.utility_loss,
            None if math.isnan(e.mi) else round(e.mi, 6),
        )
        for e in r.trace
    ]
    M, B, C, W, Ch = ID["Milk"], ID["Beer"], ID["Cookies"], ID["Wine"], ID["Cheese"]
    assert got == [
        (0, "start", -1, -1, 14.0, 0.0),
        # iteration 1, order Milk(4), Beer(3), Cookies(3), Chips(2), Wine(1), Cheese(1)
        (1, "feasible", ALL, DAI, 11.5, 0.331639),  # Milk -> Dairy
        (1, "skipped", ALL, ALC, 12.0, None),  # Beer -> Alcohol
        (1, "infeasible", ALL, SNK, 11.5, 0.496490),  # Cookies -> Snack: prune Cookies, Chips
        (1, "skipped", ALL, ALC, 12.0, None),  # Wine -> Alcohol
        (1, "feasible", ALL, DAI, 11.5, 0.331639),  # Cheese -> Dairy (same map; last wins)
        (1, "accepted", ALL, DAI, 11.5, 0.331639),
        (2, "feasible", DAI, M, 9.5, 0.331639),
        (2, "infeasible", ALL, ALC, 9.5, 0.870084),  # prune Beer, Wine
        (2, "skipped", DAI, Ch, 11.0, None),
        (2, "accepted", DAI, M, 9.5, 0.331639),
        (3, "feasible", DAI, Ch, 9.0, 0.331639),
        (3, "accepted", DAI, Ch, 9.0, 0.331639),
    ]
    assert (B, C, W) == (1, 2, 0)
    assert r.generalization.tolist() == gmap(Wine="All", Beer="All", Cookies="All", Chips="All")
    assert r.utility_loss == 9.0
    assert r.mi == pytest.approx(0.331639, abs=1e-6)
    assert count_patterns([S_B], TOY, [(ALL, ALL)], 2, generalization=r.generalization).tolist() == [[11]]


def test_example_b_bottom_up_trace() -> None:
    r = sanitize_sequence(S_B, TOY, P_B, 0.5, 2, method="bottom_up")
    merges = [e for e in r.trace if e.action == "merge"]
    assert len(merges) == 1 and merges[0].distance == 5.0  # three-way tie at 5, first pair taken
    assert merges[0].moved == (ID["Beer"], ID["Chips"])
    assert merges[0].utility_loss == 5.0 and merges[0].mi == pytest.approx(0.514220, abs=1e-6)
    # R-BU2 collapses to one cluster; R-BU3 (implementation-defined) moves Cookies -> All
    comp = [e for e in r.trace if e.action == "complete"]
    assert [(e.node_from, e.node_to) for e in comp] == [(ID["Cookies"], ALL)]
    assert r.utility_loss == 8.0 and r.mi == pytest.approx(0.370140, abs=1e-6)
    assert count_patterns([S_B], TOY, [(ALL, ALL)], 2, generalization=r.generalization).tolist() == [[10]]


@pytest.mark.parametrize(
    ("eps", "td_on", "td_off", "bu", "opt"),
    [(0.9, 5.0, 9.0, 5.0, 5.0), (0.5, 9.0, 9.0, 8.0, 8.0), (0.2, 14.0, 14.0, 12.0, 11.0)],
)
def test_example_b_results(eps: float, td_on: float, td_off: float, bu: float, opt: float) -> None:
    res = [
        sanitize([S_B], TOY, P_B, eps, 2, method="top_down").users[0].utility_loss,
        sanitize([S_B], TOY, P_B, eps, 2, method="top_down", sigma_s_shortcut=False).users[0].utility_loss,
        sanitize([S_B], TOY, P_B, eps, 2, method="bottom_up").users[0].utility_loss,
        sanitize([S_B], TOY, P_B, eps, 2, method="brute_force").users[0].utility_loss,
    ]
    assert res == [td_on, td_off, bu, opt]
