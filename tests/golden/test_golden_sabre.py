"""Golden tests for SABRE: the worked examples of J. Cao, PhD thesis (NUS 2010), chapter 3, as transcribed in
spec sabre-burel.md §3 and §5 (Examples 3.1-3.7, the end-to-end cases on Table 3.1, the extra ECSize cases).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from oracles.sabre import class_emds, hierarchical_ground

from anoncore import Attribute, Hierarchy, Partition, Schema, Table, _core
from anoncore.audit import audit
from anoncore.models import HierarchicalDistanceTCloseness, KAnonymity
from anoncore.static import sabre
from anoncore.static.sabre import closeness_model

tw = _core.sabre

# Fig. 3.1: RD -> R {SARS, pneumonia, bronchitis}, D {gastric flu, gastric ulcer, intestinal cancer}
# (leaf order as in Example 3.3's P vector).
LEAVES = ["SARS", "pneumonia", "bronchitis", "gastric flu", "gastric ulcer", "intestinal cancer"]


def fig31() -> Hierarchy:
    return Hierarchy.from_nested({"RD": {"R": LEAVES[:3], "D": LEAVES[3:]}})


def harrays(h: Hierarchy) -> tuple[np.ndarray, ...]:
    return tuple(np.ascontiguousarray(a, dtype=np.int32) for a in (h.parent, h.node_height, h.leaf_start,
                                                                      h.leaf_count))


def node(h: Hierarchy, label: str) -> int:
    return h.node_ids(label)[0]


def F(x: float) -> Fraction:
    return Fraction(x).limit_denominator(1000)


COUNTS_33 = np.array([50, 30, 20, 40, 20, 20], dtype=np.int64)  # Example 3.3/3.4 (n = 180)


# ------------------------------------------------------------------------------------------ bounds, bucketCat
def test_example_3_3_bounds_and_3_6_buckets() -> None:
    # Example 3.3: CET^U(R) = 2/9, CET^U(D) = 1/6, U = 7/18; Example 3.6: t = 0.45 stops after one split.
    h = fig31()
    b = tw.bucketize(COUNTS_33, 0.45, harrays(h))
    assert F(b["root_cet"]) == Fraction(8, 9)  # Example 3.4: 1 * (1 - 2/18) = 0.889
    assert [h.labels[x] for x in b["node"]] == ["R", "D"]
    assert [F(x) for x in b["cet"]] == [Fraction(2, 9), Fraction(1, 6)]
    assert F(b["u"]) == Fraction(7, 18)
    assert [F(x) for x in b["u_trace"]] == [Fraction(7, 18)]
    assert b["size"].tolist() == [100, 80]


def test_example_3_4_bucket_sequence_t_0_2() -> None:
    # Example 3.4: split the root (U = 7/18 >= 0.2), then R since dv(R) = 2/9 > dv(D) = 1/6: U = 1/6 < 0.2.
    h = fig31()
    b = tw.bucketize(COUNTS_33, 0.2, harrays(h))
    assert [F(x) for x in b["u_trace"]] == [Fraction(7, 18), Fraction(1, 6)]
    assert [h.labels[x] for x in b["node"]] == ["SARS", "pneumonia", "bronchitis", "D"]
    assert [F(x) for x in b["cet"]] == [0, 0, 0, Fraction(1, 6)]
    assert b["bucket_of"].tolist() == [0, 1, 2, 3, 3, 3]


# ------------------------------------------------------------------------------------------ bucketNum
@pytest.mark.parametrize(("t", "buckets", "u", "trace"), [
    # Example 3.5: root CET^U = 0.5; best split after 2k (0.1 + 0.1); t = 0.25 -> {1k,2k},{3k,4k}, U = 0.2.
    (0.25, [(0, 1), (2, 3)], Fraction(1, 5), [Fraction(1, 5)]),
    # spec §3.2 [DERIVED]: t = 0.15 -> both children have dv = 0.1, the left one is split first.
    (0.15, [(0, 0), (1, 1), (2, 3)], Fraction(1, 10), [Fraction(1, 5), Fraction(1, 10)]),
])
def test_example_3_5_bucket_num(t: float, buckets: list[tuple[int, int]], u: Fraction, trace: list[Fraction]) -> None:
    b = tw.bucketize(np.array([2, 3, 3, 2], dtype=np.int64), t)
    assert F(b["root_cet"]) == Fraction(1, 2)
    assert list(zip(b["lo"].tolist(), b["hi"].tolist())) == buckets
    assert F(b["u"]) == u
    assert [F(x) for x in b["u_trace"]] == trace


# ------------------------------------------------------------------------------------------ D and ECSize
def _ec_sizes_cat(h: Hierarchy, labels: list[str], sizes: list[int], u: float, t: float, k: int = 1) -> list[list[int]]:
    nodes = np.array([node(h, x) for x in labels], dtype=np.int32)
    z = np.zeros(len(labels), dtype=np.int32)
    out = tw.ec_sizes(np.array(sizes, dtype=np.int64), nodes, z, z, 0, u, t, k, harrays(h), h.n_leaves)
    return out.tolist()


def _dist_cat(h: Hierarchy, labels: list[str], sizes: list[int], rows: list[list[int]]) -> list[Fraction]:
    nodes = np.array([node(h, x) for x in labels], dtype=np.int32)
    z = np.zeros(len(labels), dtype=np.int32)
    d = tw.bucket_distance(np.array(rows, dtype=np.int64), np.array(sizes, dtype=np.int64), nodes, z, z, 0,
                           harrays(h), h.n_leaves)
    return [F(x) for x in d]


def test_example_3_7_ec_tree() -> None:
    # phi = {R: 10, D: 8}, U = 7/18, t = 0.45: leaves {[3,2] x 2, [1,1] x 4} (depth-first order shown).
    h = fig31()
    leaves = _ec_sizes_cat(h, ["R", "D"], [10, 8], 7 / 18, 0.45)
    assert leaves == [[3, 2], [1, 1], [1, 1], [3, 2], [1, 1], [1, 1]]
    # The D values of the example: [5,4] 0, [3,2] 2/45, [2,2] 1/18, [2,1] 1/9 (rejected: 1/9 + 7/18 > 0.45).
    assert _dist_cat(h, ["R", "D"], [10, 8], [[5, 4], [3, 2], [2, 2], [2, 1]]) == [
        0, Fraction(2, 45), Fraction(1, 18), Fraction(1, 9)]


def test_example_3_6_d_of_3_sars_2_flu() -> None:
    # Example 3.6: d(DB, phi) = (5/9, 4/9); an EC of 3 SARS + 2 gastric flu has D = 2/45.
    assert _dist_cat(fig31(), ["R", "D"], [10, 8], [[3, 2]]) == [Fraction(2, 45)]


@pytest.mark.parametrize(("t", "k", "leaves", "dists"), [
    (0.30, 1, [[2, 1, 1, 2], [1, 1, 0, 2], [2, 1, 1, 4]], [Fraction(1, 9), Fraction(7, 72), Fraction(1, 16)]),
    (0.25, 1, [[3, 2, 1, 4], [2, 1, 1, 4]], [Fraction(1, 20), Fraction(1, 16)]),
    (0.22, 1, [[5, 3, 2, 8]], [Fraction(0)]),
    # With k = 6 at t = 0.30 the leaf [1,1,0,2] (size 4) is forbidden: same as t = 0.25.
    (0.30, 6, [[3, 2, 1, 4], [2, 1, 1, 4]], [Fraction(1, 20), Fraction(1, 16)]),
])
def test_extra_ecsize_cases(t: float, k: int, leaves: list[list[int]], dists: list[Fraction]) -> None:
    # spec §5 item 4 [DERIVED]: buckets [SARS 5, pneumonia 3, bronchitis 2, Digestive 8], U = 1/6.
    h = fig31()
    labels = ["SARS", "pneumonia", "bronchitis", "D"]
    assert _ec_sizes_cat(h, labels, [5, 3, 2, 8], 1 / 6, t, k) == leaves
    assert _dist_cat(h, labels, [5, 3, 2, 8], leaves) == dists


def test_half_up_rounding_odd_counts() -> None:
    # spec §9 item 28: [5] -> [3] + [2] (the left child takes ceil(a/2)).
    out = tw.ec_sizes(np.array([5], dtype=np.int64), np.array([-1], dtype=np.int32),
                      np.array([0], dtype=np.int32), np.array([0], dtype=np.int32), 1, 0.0, 1.0, 1)
    assert out.tolist() == [[1], [1], [1], [1], [1]]
    out = tw.ec_sizes(np.array([5], dtype=np.int64), np.array([-1], dtype=np.int32),
                      np.array([0], dtype=np.int32), np.array([0], dtype=np.int32), 1, 0.0, 1.0, 2)
    assert out.tolist() == [[3], [2]]


# ------------------------------------------------------------------------------------------ Table 3.1 end to end
def table_31() -> Table:
    # Table 1.4 / 3.1 (QI = Weight, Age; SA = Disease).
    df = pd.DataFrame({
        "name": ["Mike", "Alice", "John", "Bob", "Beth", "Carol"],
        "weight": [60, 70, 60, 50, 80, 70],
        "age": [40, 50, 60, 50, 50, 70],
        "disease": ["SARS", "intestinal cancer", "pneumonia", "bronchitis", "gastric flu", "gastric ulcer"],
    })
    schema = Schema((Attribute("name", "identifier"), Attribute("weight", "quasi_identifier", "numeric"),
                     Attribute("age", "quasi_identifier", "numeric"),
                     Attribute("disease", "sensitive", "categorical", hierarchy=fig31())))
    return Table.from_pandas(df, schema)


def _emds(res) -> list[float]:  # type: ignore[no-untyped-def]
    tab = res.partition.table
    sa = tab.column("disease").astype(np.int64)
    h = tab.hierarchy("disease")
    return list(class_emds(sa, res.partition.labels, hierarchical_ground(h.parent, h.n_leaves)).values())


def test_example_3_1_emd_of_ec1() -> None:
    # Example 3.1: EC1 of Table 3.2 = {SARS, pneumonia, bronchitis} has EMD 0.5.
    tab = table_31()
    part = Partition.from_labels(tab, [0, 1, 0, 0, 1, 1])
    assert audit(tab, part, HierarchicalDistanceTCloseness(0.5))[0].values.tolist() == [0.5, 0.5]
    assert sorted(_emds_of(tab, part.labels)) == pytest.approx([0.5, 0.5], abs=1e-9)


def _emds_of(tab: Table, labels: np.ndarray) -> list[float]:
    h = tab.hierarchy("disease")
    return list(class_emds(tab.column("disease").astype(np.int64), labels,
                           hierarchical_ground(h.parent, h.n_leaves)).values())


def test_example_3_2_one_third_close() -> None:
    # Example 3.2: with buckets {R}, {D}, three ECs of 1 respiratory + 1 digestive tuple are exactly 1/3-close.
    tab = table_31()
    labels = np.array([0, 0, 1, 2, 2, 1])  # (SARS, int. cancer), (pneumonia, ulcer), (bronchitis, flu)
    assert _emds_of(tab, labels) == pytest.approx([1 / 3] * 3, abs=1e-9)


@pytest.mark.parametrize("method", ["ak", "knn"])
@pytest.mark.parametrize("k", [1, 2])
def test_table_31_t_035_small_k(method: str, k: int) -> None:
    # spec §5 item 2: t = 0.35, k <= 2: root CET 5/6, one split, U = 1/3; ECT [3,3] -> [2,2] + [1,1],
    # [2,2] -> [1,1] + [1,1]: three ECs of size 2, each with EMD exactly 1/3.
    tab = table_31()
    res = sabre(tab, [KAnonymity(k), closeness_model(tab, 0.35)], method=method, rng=3)
    b = res.trace[0]
    assert F(b["root_cet"]) == Fraction(5, 6) and F(b["u"]) == Fraction(1, 3)
    assert b["buckets"] == (("SARS", "pneumonia", "bronchitis"), ("gastric flu", "gastric ulcer", "intestinal cancer"))
    assert sorted(res.partition.class_sizes.tolist()) == [2, 2, 2]
    assert res.stats["recipes"].tolist() == [[1, 1], [1, 1], [1, 1]]
    assert _emds(res) == pytest.approx([1 / 3] * 3, abs=1e-9)
    assert res.achieved["t"] == pytest.approx(1 / 3, abs=1e-12)


@pytest.mark.parametrize("method", ["ak", "knn"])
def test_table_31_t_035_k3_one_ec(method: str) -> None:
    # spec §5 item 2: with k = 3 the split [2,2]/[1,1] violates k: one EC, EMD 0.
    tab = table_31()
    res = sabre(tab, [KAnonymity(3), closeness_model(tab, 0.35)], method=method, rng=0)
    assert res.partition.n_classes == 1
    assert res.achieved["t"] == 0.0


def test_table_31_t_030_one_ec() -> None:
    # spec §5 item 2: t = 0.30: U = 1/3 >= t, the tie dv(R) = dv(D) = 1/6 goes to R: buckets {SARS},
    # {pneumonia}, {bronchitis}, {D}, U = 1/6; [1,1,1,3] -> [1,1,1,2] + [0,0,0,1] is rejected (D = 0.5): 1 EC.
    tab = table_31()
    res = sabre(tab, [KAnonymity(1), closeness_model(tab, 0.30)], rng=0)
    b = res.trace[0]
    assert F(b["u"]) == Fraction(1, 6)
    assert [F(x) for x in b["u_trace"]] == [Fraction(1, 3), Fraction(1, 6)]
    assert b["buckets"] == (("SARS",), ("pneumonia",), ("bronchitis",),
                            ("gastric flu", "gastric ulcer", "intestinal cancer"))
    assert res.partition.n_classes == 1
