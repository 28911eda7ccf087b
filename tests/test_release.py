"""anoncore.release: the join model, (X,Y)-privacy audits and TDS4SA (spec sequential-release.md).

Golden tests reproduce B.3 and B.7 items 1, 2, 6, 7 exactly; hypothesis properties check the partition-level
counts, monotonicity and every TDS4SA output against the brute-force join of tests/oracles/release.py.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.oracles import release as oracle

from anoncore.data.hierarchy import Hierarchy
from anoncore.exceptions import InfeasibleError
from anoncore.release import (
    XYAnonymity,
    XYLinkability,
    audit_release,
    consistent,
    kanonymize_t1,
    lossy_join,
    population_related,
    tds4sa,
)

# --------------------------------------------------------------------------- Table 1 (B.3.1)
T1 = pd.DataFrame({"Name": ["Alice", "Alice", "Bob", "Bob", "Cathy"],
                   "Job": ["Banker", "Banker", "Clerk", "Driver", "Engineer"],
                   "Class": ["c1", "c1", "c2", "c3", "c4"]})
T2 = pd.DataFrame({"Job": ["Banker", "Banker", "Clerk", "Driver", "Engineer"],
                   "Disease": ["Cancer", "Cancer", "HIV", "Cancer", "HIV"]})
JOB = Hierarchy.from_nested({"ANY": ["Banker", "Clerk", "Driver", "Engineer"]}, name="Job")


def test_table1_join_rows_and_groups() -> None:
    j = lossy_join(T1, T2, {"Job": JOB})
    assert len(j) == 7
    sizes = j.groupby(["Name", "Disease"]).size().to_dict()
    assert sizes == {("Alice", "Cancer"): 4, ("Bob", "HIV"): 1, ("Bob", "Cancer"): 1, ("Cathy", "HIV"): 1}
    # separately, the Bob group of T1 and the HIV group of T2 have size 2
    assert (T1["Name"] == "Bob").sum() == 2 and (T2["Disease"] == "HIV").sum() == 2
    # the two cross matches (1,2) and (2,1) of Alice
    assert sorted(zip(j["_r1"], j["_r2"]))[:4] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    # k-anonymity of {Name, Disease} on the join: minimum 1; confidence Alice -> Cancer = 4/4
    r = audit_release(T1, T2, XYAnonymity(["Name", "Disease"], ["K1", "K2"], 1), {"Job": JOB})
    assert r.value == 1 and r.join_size == 7
    r = audit_release(T1, T2, XYLinkability(["Name"], ["Disease"], 1.0, values={"Disease": ["Cancer"]}), {"Job": JOB})
    assert r.per_value[("T2", "Disease", "Cancer")] == 1.0


def test_table1_derived_values() -> None:
    a = audit_release(T1, T2, XYAnonymity(["Name"], ["Disease"], 1), {"Job": JOB})
    assert a.value == 1  # a_Y: Alice 1, Bob 2, Cathy 1
    link = audit_release(T1, T2, XYLinkability(["Name"], ["Disease"], 1.0), {"Job": JOB})
    assert link.value == 1.0
    # oracle: l_HIV(Bob) = l_Cancer(Bob) = 0.5, l_HIV(Cathy) = 1
    tabs = [T1, T2]
    join = oracle.materialize(T1, [T2], [["Job"]], {"Job": JOB})
    a_x, ay, axy = oracle.join_counts(tabs, join, [(0, "Name")], [(1, "Disease")])
    assert ay == {("Alice",): 1, ("Bob",): 2, ("Cathy",): 1}
    assert axy[(("Bob",), (1, "Disease", "HIV"))] / a_x[("Bob",)] == 0.5
    # T1.Job generalized to ANY: 25 rows, l = 0.6 for Alice and Bob; Cathy 0.6 / 0.4
    g = T1.assign(Job="ANY")
    assert len(lossy_join(g, T2, {"Job": JOB})) == 25
    r = audit_release(g, T2, XYLinkability(["Name"], ["Disease"], 1.0), {"Job": JOB})
    assert r.per_value == {("T2", "Disease", "Cancer"): 0.6, ("T2", "Disease", "HIV"): 0.4}
    join = oracle.materialize(g, [T2], [["Job"]], {"Job": JOB})
    a_x, _, axy = oracle.join_counts([g, T2], join, [(0, "Name")], [(1, "Disease")])
    assert a_x[("Alice",)] == 10 and axy[(("Alice",), (1, "Disease", "Cancer"))] == 6
    # X = {Name, T1.Job, T2.Job}: (Alice, ANY, Banker) has l_Cancer = 1: infeasible for any k < 1
    r = audit_release(g, T2, XYLinkability(["Name", "Job"], ["Disease"], 0.99), {"Job": JOB})
    assert r.value == 1.0 and not r.passed
    with pytest.raises(InfeasibleError, match=r"L_Y\(X\) = 1 .*Corollary 4.2"):
        tds4sa(T1, T2, XYLinkability(["Name", "Job"], ["Disease"], 0.99), taxonomies={"Job": JOB},
               class_column="Class")


def test_example3_confidence() -> None:
    t1 = pd.DataFrame({"Pid": [str(i) for i in range(10)], "J": ["j"] * 10})
    t2 = pd.DataFrame({"Pid": [str(i) for i in range(10)], "Test": ["HIV"] * 9 + ["Diabetes"]})
    r = audit_release(t1, t2, XYLinkability(["T1.J"], ["Test"], 1.0), join=["Pid"])
    assert r.per_value[("T2", "Test", "HIV")] == 0.9


# --------------------------------------------------------------------------- B.3.2 (non-anti-monotone join)
D = Hierarchy.from_nested({"ANY": {"d": ["d1", "d2"], "d3": []}}, name="D") if False else \
    Hierarchy.from_parent_map({"d": "ANY", "d3": "ANY", "d1": "d", "d2": "d", "ANY": None}, name="D")
B32_T2 = pd.DataFrame({"D": ["d3", "d3", "d1"], "Y": ["y3", "y2", "y1"]})
B32_REQ = XYAnonymity(["C", "T1.D", "T2.D"], ["Y"], 2)


def test_b32_anonymity_increases_without_population_relatedness() -> None:
    before = pd.DataFrame({"C": ["c1", "c2"], "D": ["d3", "d"]})
    after = pd.DataFrame({"C": ["c1", "c2"], "D": ["d3", "d2"]})
    a0 = audit_release(before, B32_T2, B32_REQ, {"D": D})
    a1 = audit_release(after, B32_T2, B32_REQ, {"D": D})
    assert (a0.value, a0.join_size) == (1, 3)
    assert (a1.value, a1.join_size) == (2, 2)  # A_Y increased: c2 d2 dangles
    assert population_related(before, B32_T2, {"D": D})
    assert not population_related(after, B32_T2, {"D": D})
    with pytest.raises(ValueError, match="not population related.*1 T1 records"):
        tds4sa(after, B32_T2, B32_REQ, taxonomies={"D": D}, metric="distortion")
    with pytest.warns(RuntimeWarning, match="not population related"):
        tds4sa(after, B32_T2, XYAnonymity(["C", "T1.D", "T2.D"], ["Y"], 1), taxonomies={"D": D},
               metric="distortion", population="warn")


def test_consistency_predicate_intervals() -> None:
    look = {lab: i for i, lab in enumerate(D.labels)}
    assert consistent(D, look["d"], look["d1"]) and consistent(D, look["ANY"], look["d3"])
    assert not consistent(D, look["d1"], look["d2"]) and not consistent(D, look["d"], look["d3"])


def test_inconsistency_predicate_is_inherited() -> None:
    sex = Hierarchy.from_nested({"ANY": {"Male": ["Single-Male", "Married-Male"], "Female": ["F"]}}, name="Sex")
    cond = Hierarchy.from_nested({"ANY": {"Pregnant": ["6-Month-Pregnant"], "Healthy": ["H"]}}, name="Cond")
    t1 = pd.DataFrame({"Pid": ["1", "2"], "Sex": ["Married-Male", "F"]})
    t2 = pd.DataFrame({"Pid": ["1", "2"], "Cond": ["H", "6-Month-Pregnant"]})
    inc = [("T1.Sex", "Male", "T2.Cond", "Pregnant")]
    j = lossy_join(t1.assign(Pid="p"), t2.assign(Pid="p"), {"Sex": sex, "Cond": cond}, join=["Pid"], inconsistent=inc)
    assert sorted(zip(j["Sex"], j["Cond"])) == [("F", "6-Month-Pregnant"), ("F", "H"), ("Married-Male", "H")]
    tax = {"Sex": sex, "Cond": cond, "Pid": Hierarchy.from_nested({"ANY": ["p"]})}
    brute = oracle.materialize(t1.assign(Pid="p"), [t2.assign(Pid="p")], [["Pid"]], tax,
                               [[("Sex", "Cond", [("Male", "Pregnant")])]])
    assert len(brute) == len(j) == 3


# --------------------------------------------------------------------------- B.7 item 6: Score arithmetic
def test_score_entropy_and_privloss_by_hand() -> None:
    r = tds4sa(T1, T2, XYLinkability(["T1.Job"], ["Disease"], 1.0), taxonomies={"Job": JOB}, class_column="Class")
    (step,) = r.trace
    ent = -(0.4 * math.log2(0.4) + 3 * 0.2 * math.log2(0.2))  # children are pure
    assert step["info_gain"] == pytest.approx(ent, rel=1e-12)
    assert step["priv_loss"] == pytest.approx(1.0 - 0.6)  # L_Y from 0.6 (ANY) to 1.0 (Banker -> Cancer)
    assert step["score"] == pytest.approx(ent / 1.4, rel=1e-12)
    assert r.achieved["L_Y"] == 1.0
    # below 1.0 the specialization is invalid and pruned; the output stays at ANY
    r = tds4sa(T1, T2, XYLinkability(["T1.Job"], ["Disease"], 0.6), taxonomies={"Job": JOB}, class_column="Class")
    assert r.trace == () and r.remaining[0]["status"] == "invalid" and r.achieved["L_Y"] == 0.6


def test_continuous_split_on_the_fly() -> None:
    t1 = pd.DataFrame({"Age": [20, 30, 40, 50, 50, 60], "Cls": ["a", "a", "b", "b", "b", "a"], "Pid": list("uvwxyz")})
    t2 = pd.DataFrame({"Pid": list("uvwxyz"), "Dis": list("pqrstu")})
    r = tds4sa(t1, t2, XYLinkability(["Age"], ["Dis"], 1.0), class_column="Cls", join=["Pid"])
    first = r.trace[0]
    # boundaries 30, 40, 50, 60: entropy InfoGain of each by the oracle; 40 is the best (ties go low)
    gains = {s: oracle.entropy_gain(list(t1["Cls"]), [list(t1["Cls"][t1["Age"] < s]), list(t1["Cls"][t1["Age"] >= s])])
             for s in (30, 40, 50, 60)}
    best = max(gains.values())
    assert first["split"] == min(s for s, g in gains.items() if g == best)
    assert first["info_gain"] == pytest.approx(best, rel=1e-12)
    assert first["value"] == "[20-60]"
    # distortion metric without a class: the most balanced boundary (B.6 item 4)
    r = tds4sa(t1, t2, XYLinkability(["Age"], ["Dis"], 1.0), metric="distortion", join=["Pid"])
    assert r.trace[0]["split"] == 50 and r.trace[0]["info_gain"] == 6


# --------------------------------------------------------------------------- random instances
def _tree(rng: np.random.Generator, prefix: str, n_leaves: int) -> Hierarchy:
    leaves = [f"{prefix}{i}" for i in range(n_leaves)]
    parents: dict[str, str | None] = {"ANY": None}
    groups = max(1, int(rng.integers(1, 4)))
    for i, leaf in enumerate(leaves):
        g = f"{prefix}G{i % groups}"
        if rng.random() < 0.3:
            parents[leaf] = "ANY"
        else:
            parents[g] = "ANY"
            parents[leaf] = g
    return Hierarchy.from_parent_map(parents, name=prefix)


def random_instance(seed: int) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Hierarchy]]:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 17))
    ta, tb = _tree(rng, "a", int(rng.integers(2, 5))), _tree(rng, "b", int(rng.integers(2, 5)))
    base = pd.DataFrame({
        "A": rng.choice(list(ta.leaves), n), "B": rng.choice(list(tb.leaves), n),
        "C": rng.integers(0, 4, n), "S": rng.choice(["s0", "s1", "s2"], n),
        "Dd": rng.choice(["d0", "d1", "d2"], n), "cls": rng.choice(["n", "p"], n)})
    t1 = base[["A", "B", "C", "S", "cls"]].reset_index(drop=True)
    t2 = base[["A", "Dd"]].copy()
    # random generalization of T2 (keeps population relatedness: each record generalizes its own value)
    labels = list(ta.labels)
    a2 = []
    for v in t2["A"]:
        node = labels.index(v)
        while rng.random() < 0.3 and ta.parent[node] >= 0:
            node = int(ta.parent[node])
        a2.append(labels[node])
    t2["A"] = a2
    t2 = t2.iloc[rng.permutation(n)].reset_index(drop=True)
    return t1, t2, {"A": ta, "B": tb}


X_CHOICES = [["T1.A", "T2.A", "B"], ["B"], ["B", "C"], ["T1.A", "B", "Dd"], ["T1.A", "T2.A"], ["A", "C"]]
ANON_Y = [["K1"], ["K1", "K2"], ["S"], ["Dd"], ["S", "Dd"], ["K2"]]


def _xlist(x: list[str]) -> list[tuple[int, str]]:
    out = []
    for name in x:
        if name.startswith("T1."):
            out.append((0, name[3:]))
        elif name.startswith("T2."):
            out.append((1, name[3:]))
        elif name == "A":
            out += [(0, "A"), (1, "A")]
        else:
            out.append((1 if name == "Dd" else 0, name))
    return out


def _ylist(y: list[str]) -> list[tuple[int, str]]:
    return [(0, oracle.KEY) if n == "K1" else (1, oracle.KEY) if n == "K2" else (1 if n == "Dd" else 0, n) for n in y]


def _requirement(seed: int) -> XYAnonymity | XYLinkability:
    rng = np.random.default_rng(seed + 7)
    x = X_CHOICES[int(rng.integers(len(X_CHOICES)))]
    if rng.random() < 0.5:
        y = ANON_Y[int(rng.integers(len(ANON_Y)))]
        y = [v for v in y if v not in x]
        return XYAnonymity(x, y or ["K1"], int(rng.integers(1, 3)))
    y = ["S"] if rng.random() < 0.5 or "Dd" in x else ["Dd"]
    return XYLinkability(x, y, float(rng.choice([0.6, 0.8, 1.0])))


def _oracle_value(req, tables, tax) -> tuple[float, bool]:
    join = oracle.materialize(tables[0], [tables[1]], [["A"]], tax)
    x = _xlist(list(req.x))
    if isinstance(req, XYAnonymity):
        v = oracle.anonymity(tables, join, x, _ylist(list(req.y)))
        return v, v >= req.k
    (t, c), = _ylist(list(req.y))
    items = [(t, c, str(v)) for v in sorted(tables[t][c].astype(str).unique())]
    per = oracle.linkability(tables, join, x, items)
    v = max(per.values())
    return v, v <= req.k + 1e-12


def _random_cut(rng: np.random.Generator, t1: pd.DataFrame, tax: dict[str, Hierarchy], attrs: list[str]) -> pd.DataFrame:
    """A random generalization of T1 on categorical ``attrs`` (a random cut per attribute)."""
    out = t1.copy()
    for a in attrs:
        h = tax[a]
        cut = {h.root}
        for _ in range(int(rng.integers(0, 4))):
            inner = sorted(v for v in cut if h.children(v))
            if not inner:
                break
            v = inner[int(rng.integers(len(inner)))]
            cut = (cut - {v}) | set(h.children(v))
        labels = list(h.labels)
        out[a] = [labels[next(c for c in cut if c in oracle.ancestors(h, labels.index(v)))] for v in t1[a]]
    return out


@settings(max_examples=40)
@given(seed=st.integers(0, 10**6))
def test_audit_counts_equal_brute_force(seed: int) -> None:
    """B.7 item 3: partition-level a(x), a_Y(x), a(x,y) equal the materialized join."""
    t1, t2, tax = random_instance(seed)
    req = _requirement(seed)
    rng = np.random.default_rng(seed)
    g = _random_cut(rng, t1, tax, [a for a in ("A", "B") if any(a in n for n in req.x) or a == "A"])
    got = audit_release(g, t2, req, tax, class_column="cls", continuous=["C"])
    want, ok = _oracle_value(req, [g, t2], tax)
    assert got.value == pytest.approx(want, rel=1e-12) and got.passed == ok


@settings(max_examples=40)
@given(seed=st.integers(0, 10**6))
def test_tds4sa_output_meets_requirement_and_is_maximal(seed: int) -> None:
    """B.7 item 5: the output satisfies the requirement on the brute-force join and every remaining
    candidate is invalid (or has zero InfoGain); the kernel's own value equals the oracle's."""
    t1, t2, tax = random_instance(seed)
    req = _requirement(seed)
    counting = "general" if seed % 2 else "auto"
    metric = ("entropy", "distortion", "discernibility")[seed % 3]
    try:
        r = tds4sa(t1, t2, req, taxonomies=tax, class_column="cls", continuous=["C"], counting=counting, metric=metric)
    except InfeasibleError:
        root = t1.copy()
        root["A"] = "ANY" if any("A" in n for n in req.x) else root["A"]
        for a in ("B",):
            if a in req.x:
                root[a] = "ANY"
        if "C" in req.x:
            root["C"] = "all"
        _, ok = _oracle_value(req, [root, t2], tax)
        assert not ok
        return
    pub = r.published
    v, ok = _oracle_value(req, [pub, t2], tax)
    assert ok
    assert r.stats["kernel_value"] == pytest.approx(v, rel=1e-12)
    # maximality
    listed = {(m["attribute"], m["value"]) for m in r.remaining}
    for m in r.remaining:
        a, val = m["attribute"], m["value"]
        rows = pub[a] == val
        spec = pub.copy()
        if a == "C":
            spec.loc[rows, "C"] = np.where(t1.loc[rows, "C"] < m["split"], "left", "right")
            children = [list(t1.loc[rows & (t1["C"] < m["split"]), "cls"]), list(t1.loc[rows & (t1["C"] >= m["split"]), "cls"])]
        else:
            h = tax[a]
            labels = list(h.labels)
            node = labels.index(val)
            kids = h.children(node)
            new = [labels[next(c for c in kids if c in oracle.ancestors(h, labels.index(x)))] for x in t1.loc[rows, a]]
            spec.loc[rows, a] = new
            children = [list(t1.loc[rows, "cls"][np.array(new) == labels[c]]) for c in kids]
        if m["status"] == "invalid":
            assert not _oracle_value(req, [spec, t2], tax)[1]
        else:
            assert oracle.entropy_gain(list(t1.loc[rows, "cls"]), children) == pytest.approx(0.0, abs=1e-9)
    for a in ("A", "B"):
        if a not in pub.columns or not any(a in n for n in req.x):
            continue
        h = tax[a]
        for val in set(pub[a]):
            if h.children(list(h.labels).index(val)):
                assert (a, val) in listed
    if "C" in req.x:
        for val in set(pub["C"]):
            if t1.loc[pub["C"] == val, "C"].nunique() > 1:
                assert ("C", val) in listed


@settings(max_examples=30)
@given(seed=st.integers(0, 10**6))
def test_monotonicity_on_random_specializations(seed: int) -> None:
    """B.7 item 4: Lemma 4.1 (A_Y never increases) and Lemma 4.2 (L_Y never decreases, Y from one table)
    along a random specialization sequence of T1, on population-related instances."""
    t1, t2, tax = random_instance(seed)
    req = _requirement(seed)
    rng = np.random.default_rng(seed + 1)
    h = tax["A"] if "T1.A" in req.x or "A" in req.x else tax["B"]
    a = "A" if h is tax["A"] else "B"
    labels = list(h.labels)
    cut = {h.root}
    prev = None
    for _ in range(6):
        g = t1.copy()
        g[a] = [labels[next(c for c in cut if c in oracle.ancestors(h, labels.index(v)))] for v in t1[a]]
        for other in ("A", "B"):
            if other != a:
                g[other] = "ANY" if other in {n.split(".")[-1] for n in req.x} and other == "B" else g[other]
        v, _ = _oracle_value(req, [g, t2], tax)
        if prev is not None:
            if isinstance(req, XYAnonymity):
                assert v <= prev
            else:
                assert v >= prev - 1e-12
        prev = v
        inner = sorted(c for c in cut if h.children(c))
        if not inner:
            break
        w = inner[int(rng.integers(len(inner)))]
        cut = (cut - {w}) | set(h.children(w))


# --------------------------------------------------------------------------- B.7 item 7: Case-1 reduction
@settings(max_examples=20)
@given(seed=st.integers(0, 10**6))
def test_case1_reduces_to_single_table_k_anonymity(seed: int) -> None:
    t1, t2, tax = random_instance(seed)
    k = int(np.random.default_rng(seed).integers(1, 4))
    req = XYAnonymity(["T1.A", "T2.A", "B"], ["K1"], k)
    try:
        r = tds4sa(t1, t2, req, taxonomies=tax, class_column="cls", counting="general")
    except InfeasibleError:
        assert len(t1) < k
        return
    base = kanonymize_t1(t1, ["A", "B"], k, taxonomies=tax, class_column="cls")
    assert r.cut == base.cut
    assert r.published[["A", "B"]].equals(base.published[["A", "B"]])
    assert [s["value"] for s in r.trace] == [s["value"] for s in base.trace]


def test_several_releases_star_join() -> None:
    rng = np.random.default_rng(3)
    t1, t2, tax = random_instance(11)
    t3 = pd.DataFrame({"B": t1["B"], "E": rng.choice(["e0", "e1"], len(t1))}).iloc[::-1].reset_index(drop=True)
    req = XYLinkability(["T1.A", "T2.A", "T1.B", "T3.B"], ["S"], 0.8)
    try:
        r = tds4sa(t1, [t2, t3], req, taxonomies=tax, class_column="cls")
    except InfeasibleError:
        return
    join = oracle.materialize(r.published, [t2, t3], [["A"], ["B"]], tax)
    items = [(0, "S", v) for v in sorted(t1["S"].unique())]
    per = oracle.linkability([r.published, t2, t3], join, [(0, "A"), (1, "A"), (0, "B"), (2, "B")], items)
    assert max(per.values()) <= 0.8 + 1e-12
    assert r.achieved["L_Y"] == pytest.approx(max(per.values()))


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("call, exc, match", [
    (lambda: tds4sa(T1, T2, XYLinkability(["T1.Job"], ["Name", "Disease"], 0.9), class_column="Class"),
     ValueError, "spanning several tables"),
    (lambda: tds4sa(T1, T2, XYLinkability(["T1.Job"], ["Disease"], 0.9), class_column="Class", join=["Salary"]),
     ValueError, "Join attribute 'Salary' is missing from T1"),
    (lambda: XYLinkability(["Job"], ["Disease"], 1.5), ValueError, r"range \(0, 1\]"),
    (lambda: XYLinkability(["Job"], ["Disease"], 0.5, thresholds={("Disease", "HIV"): 0.0}), ValueError, r"\(0, 1\]"),
    (lambda: XYAnonymity(["Job"], ["K1"], 0), ValueError, r"range \[1, inf\)"),
    (lambda: XYAnonymity(["Job"], ["K1"], 2.5), TypeError, "must be an int"),
    (lambda: tds4sa(T1.assign(Job=["Banker", "Banker", "Clerk", "Pilot", "Engineer"]), T2,
                    XYLinkability(["T1.Job"], ["Disease"], 0.9), taxonomies={"Job": JOB}, class_column="Class"),
     ValueError, "'Pilot' of T1.Job is not a leaf of its taxonomy"),
    (lambda: tds4sa(T1, T2.assign(Job="Nurse"), XYLinkability(["T1.Job"], ["Disease"], 0.9), taxonomies={"Job": JOB},
                    class_column="Class"), ValueError, "'Nurse' of T2.Job is outside the taxonomy"),
    (lambda: tds4sa(T1, T2, XYLinkability(["T1.Job"], ["Disease"], 0.9)), ValueError, "needs a class_column"),
    (lambda: tds4sa(T1, T2, XYLinkability(["Job"], ["Job"], 0.9), class_column="Class"), ValueError, "qualify it"),
    (lambda: tds4sa(T1, T2, XYLinkability(["Name"], ["Name"], 0.9), class_column="Class"), ValueError, "disjoint"),
    (lambda: tds4sa(T1, T2, XYLinkability(["Age"], ["Disease"], 0.9), class_column="Class"), ValueError,
     "'Age' of x is not a column"),
    (lambda: tds4sa(T1, T2, XYAnonymity(["T1.Job"], ["K1"], 1), class_column="Class", metric="gini"), ValueError,
     "'metric' parameter"),
    (lambda: tds4sa(T1, "t2", XYAnonymity(["T1.Job"], ["K1"], 1)), TypeError, "'t2' parameter"),
    (lambda: tds4sa(T1.iloc[:0], T2, XYAnonymity(["T1.Job"], ["K1"], 1)), ValueError, "0 rows"),
    (lambda: tds4sa(T1, [T2, T2], XYAnonymity(["T1.Job"], ["K1"], 1), class_column="Class"), ValueError,
     "one previous release"),
    (lambda: tds4sa(T1.assign(Name=[None, "A", "B", "C", "D"]), T2, XYAnonymity(["Name"], ["K1"], 1),
                    class_column="Class"), ValueError, "missing value"),
    (lambda: tds4sa(T1, T2, XYLinkability(["T1.Job"], ["Disease"], 0.9, values={"Disease": ["Flu"]}),
                    class_column="Class"), ValueError, "'Flu' of 'Disease' does not occur"),
])
def test_bad_input(call, exc, match) -> None:
    with pytest.raises(exc, match=match):
        call()


def test_every_record_is_published() -> None:
    t1, t2, tax = random_instance(5)
    r = tds4sa(t1, t2, XYAnonymity(["T1.A", "T2.A", "B"], ["K1"], 2), taxonomies=tax, class_column="cls")
    assert len(r.published) == len(t1) and not r.suppressed.any()
    assert r.published[["C", "S", "cls"]].equals(t1[["C", "S", "cls"]])


def test_value_level_thresholds() -> None:
    req = XYLinkability(["T1.Job"], ["Disease"], 1.0, thresholds={("Disease", "Cancer"): 0.7})
    r = tds4sa(T1, T2, req, taxonomies={"Job": JOB}, class_column="Class")
    assert r.trace == () and r.achieved["L_y"][("T2", "Disease", "Cancer")] == 0.6
    req = XYLinkability(["T1.Job"], ["Disease"], 0.5, thresholds={("Disease", "Cancer"): 1.0, ("Disease", "HIV"): 1.0})
    assert tds4sa(T1, T2, req, taxonomies={"Job": JOB}, class_column="Class").achieved["L_Y"] == 1.0


# --------------------------------------------------------------------------- CLI
def test_cli_release(tmp_path, capsys) -> None:
    import json

    from anoncore.cli import main

    T1.to_csv(tmp_path / "t1.csv", index=False)
    T2.to_csv(tmp_path / "t2.csv", index=False)
    schema = {"requirement": {"model": "linkability", "x": ["T1.Job"], "y": ["Disease"], "k": 1.0},
              "taxonomies": {"Job": {"ANY": ["Banker", "Clerk", "Driver", "Engineer"]}}, "class_column": "Class"}
    (tmp_path / "s.json").write_text(json.dumps(schema))
    out = tmp_path / "out.csv"
    assert main(["release", str(tmp_path / "t1.csv"), str(tmp_path / "t2.csv"), "--schema", str(tmp_path / "s.json"),
                 "-o", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["command"] == "release" and doc["result"]["achieved"]["L_Y"] == 1.0
    assert pd.read_csv(out)["Job"].tolist() == T1["Job"].tolist()
    schema["requirement"]["k"] = 0.5  # infeasible: Corollary 4.2
    (tmp_path / "s.json").write_text(json.dumps(schema))
    assert main(["release", str(tmp_path / "t1.csv"), str(tmp_path / "t2.csv"), "--schema", str(tmp_path / "s.json"),
                 "-o", str(out), "--force"]) == 1
    assert "infeasible" in capsys.readouterr().err
    (tmp_path / "s.json").write_text(json.dumps({"requirement": {"model": "other", "x": ["Job"], "y": ["Disease"], "k": 1}}))
    assert main(["release", str(tmp_path / "t1.csv"), str(tmp_path / "t2.csv"), "--schema", str(tmp_path / "s.json"),
                 "-o", str(out), "--force"]) == 1
    assert "'model' must be" in capsys.readouterr().err


def test_docs_page_example() -> None:
    # The runnable example of docs/release.md (the page is not a docstring, so test_doctests does not see it).
    import doctest
    from pathlib import Path

    page = Path(__file__).resolve().parents[1] / "docs" / "release.md"
    res = doctest.testfile(str(page), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert res.attempted >= 8 and res.failed == 0


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_refinement_accesses_within_paper_bound(seed: int) -> None:
    """Section 5.3: each T1 record is read at most |X1| * h times by the refinement scans."""
    t1, t2, tax = random_instance(seed)
    r = tds4sa(t1, t2, XYAnonymity(["T1.A", "T2.A", "B"], ["K1"], 1), taxonomies=tax, class_column="cls",
               metric="distortion")
    bound = sum(tax[a].height for a in ("A", "B"))
    assert 0 < r.stats["refine_accesses_per_record"] <= bound
    assert r.stats["refine_accesses"] == round(r.stats["refine_accesses_per_record"] * len(t1))
    # with k = 1 and the distortion metric everything is specialized down to the leaves
    assert set(r.published["A"]) <= set(tax["A"].leaves) and set(r.published["B"]) <= set(tax["B"].leaves)


def test_kernel_rejects_wrong_dtypes() -> None:
    from anoncore import _core
    from anoncore.release._problem import resolve
    from anoncore.release.api import _encode

    spec = resolve(T1, T2, XYAnonymity(["T1.Job"], ["K1"], 1), {"Job": JOB}, "Class", None, None, None, "test")
    enc = _encode(spec, "entropy", True, "max", None, "auto")
    bad = dict(enc.problem, codes=enc.problem["codes"].astype(np.int64))
    with pytest.raises(TypeError, match="'codes' has the wrong dtype"):
        _core.release.tds4sa(bad)
    assert _core.release.tds4sa(enc.problem)["feasible"]


@settings(max_examples=25)
@given(seed=st.integers(0, 10**6))
def test_case1_shortcut_equals_general_probing(seed: int) -> None:
    """Section 5.4 Case 1 (every join attribute in X) against the general pair-probing path: same run."""
    t1, t2, tax = random_instance(seed)
    rng = np.random.default_rng(seed + 3)
    if rng.random() < 0.5:
        req = XYAnonymity(["T1.A", "T2.A", "B", "C"], [["K1"], ["K1", "K2"], ["S"], ["S", "Dd"]][seed % 4],
                          int(rng.integers(1, 3)))
    else:
        req = XYLinkability(["T1.A", "T2.A", "B", "C"], [["S"], ["Dd"]][seed % 2], float(rng.choice([0.6, 0.8, 1.0])))
    runs = []
    for counting in ("auto", "general"):
        try:
            r = tds4sa(t1, t2, req, taxonomies=tax, class_column="cls", continuous=["C"], counting=counting)
            runs.append((r.cut, [(s["value"], s["split"]) for s in r.trace], r.stats["case1"]))
        except InfeasibleError as e:
            runs.append((str(e), None, None))
    assert runs[0][:2] == runs[1][:2]
    if runs[0][2] is not None:
        assert runs[0][2] and not runs[1][2]


@settings(max_examples=6)
@given(seed=st.integers(0, 10**6))
def test_star_join_linkability_against_brute_force(seed: int) -> None:
    """Section 7: T1 joined with two earlier releases (star join); output checked on the materialized join."""
    t1, t2, tax = random_instance(seed)
    rng = np.random.default_rng(seed + 5)
    t3 = pd.DataFrame({"B": t1["B"], "E": rng.choice(["e0", "e1"], len(t1))}).iloc[rng.permutation(len(t1))]
    t3 = t3.reset_index(drop=True)
    y, side = (["S"], 0) if seed % 2 else (["T3.E"], 2)
    k = float(rng.choice([0.7, 0.9, 1.0]))
    req = XYLinkability(["T1.A", "T2.A", "T1.B", "T3.B", "C"], y, k)
    try:
        r = tds4sa(t1, [t2, t3], req, taxonomies=tax, class_column="cls", continuous=["C"])
    except InfeasibleError:
        return
    tabs = [r.published, t2, t3]
    join = oracle.materialize(r.published, [t2, t3], [["A"], ["B"]], tax)
    col = "S" if side == 0 else "E"
    items = [(side, col, v) for v in sorted(tabs[side][col].astype(str).unique())]
    per = oracle.linkability(tabs, join, [(0, "A"), (1, "A"), (0, "B"), (2, "B"), (0, "C")], items)
    assert max(per.values()) <= k + 1e-12
    assert r.stats["kernel_value"] == pytest.approx(max(per.values()), rel=1e-12)


def test_adult_taxonomies_import_and_shape() -> None:
    # the Adult taxonomies reuse the loaders' trees (anoncore.datasets.loaders); every root is ANY
    from anoncore.release.adult import adult_taxonomies

    tax = adult_taxonomies()
    assert sorted(tax) == sorted(["education", "occupation", "workclass", "marital-status", "relationship", "sex",
                                  "native-country", "race"])
    assert all(h.labels[-1] == "ANY" for h in tax.values())  # post-order: the root is the last node
    assert "Doctorate" in tax["education"].leaves and tax["sex"].n_leaves == 2
