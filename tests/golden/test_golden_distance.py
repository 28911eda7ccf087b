"""Golden values of the distance kernels and SABRE bounds, from the worked examples of the specs.

Sources: spec sabre-burel.md (Cao thesis, NUS 2010) §2.2 Example 3.1, §2.3 (the KL/JS example of §4.1),
§3.1 Example 3.3, §3.2 Examples 3.4/3.5, §3.3 Example 3.7, §5 items 3-4; spec generalization-lattice.md
§7.2 (Table 2.4) and §7.3 (Table 2.6).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from anoncore import Hierarchy, _core
from anoncore.distance import (
    bucket_emd,
    cet_upper_bounds,
    emd_equal,
    emd_hierarchical,
    emd_ordered,
    hellinger,
    js_divergence,
    kl_divergence,
)

# Fig. 3.1: RD -> R {SARS, pneumonia, bronchitis}, D {gastric flu, gastric ulcer, intestinal cancer}.
FIG31 = Hierarchy.from_nested({"RD": {"R": ["SARS", "pneumonia", "bronchitis"],
                                      "D": ["gastric flu", "gastric ulcer", "intestinal cancer"]}})
# Example 3.3 counts, in the order of FIG31's leaves.
EX33 = np.array([50, 30, 20, 40, 20, 20], dtype=np.int64)

# Li et al. 2007 disease hierarchy (generalization-lattice.md §7.3), height 3.
DISEASE = Hierarchy.from_nested({"*": {
    "respiratory": {"respiratory infection": ["flu", "pneumonia", "bronchitis"],
                    "vascular lung": ["pulmonary edema", "pulmonary embolism"]},
    "digestive": {"stomach": ["gastric ulcer", "gastritis", "stomach cancer"],
                  "colon": ["colitis", "colon cancer"]}}})


def _leaf_dist(h: Hierarchy, labels: list[str]) -> np.ndarray:
    out = np.zeros(h.n_leaves)
    for lab in labels:
        out[h.leaf_code(lab)] += 1
    return out


def test_example_3_1_hierarchical_emd_is_one_half() -> None:
    # sabre-burel.md §2.2, Example 3.1: P uniform over 6 diseases, Q = EC1 of Table 3.2.
    assert emd_hierarchical([1] * 6, [1, 1, 1, 0, 0, 0], FIG31) == 0.5
    out = _core.distance.emd_hierarchical_classes(
        np.array([[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]], dtype=np.int64), np.array([3, 3], dtype=np.int64),
        np.ones(6, dtype=np.int64), FIG31.parent, FIG31.node_height, FIG31.n_leaves, 1)
    assert out.tolist() == [0.5, 0.5]


def test_example_3_3_bucket_bounds() -> None:
    # sabre-burel.md §3.1, Example 3.3: CET^U = 2/9 (respiratory), 1/6 (digestive); U = 7/18, reached by the
    # worst-case EC of 10 bronchitis + 8 gastric ulcer.
    b = cet_upper_bounds(EX33, [0, 0, 0, 1, 1, 1], FIG31)
    assert b.tolist() == [2 / 9, 1 / 6]
    assert Fraction(b.sum()).limit_denominator(1000) == Fraction(7, 18)
    worst = _core.distance.emd_hierarchical_classes(
        np.array([[0, 0, 10, 0, 8, 0]], dtype=np.int64), np.array([18], dtype=np.int64), EX33,
        FIG31.parent, FIG31.node_height, FIG31.n_leaves, 1)
    assert worst[0] == 7 / 18
    # Here every pair in a bucket has its LCA at the bucket node, so the thesis bound is the exact maximum.
    assert cet_upper_bounds(EX33, [0, 0, 0, 1, 1, 1], FIG31, tight=True).tolist() == [2 / 9, 1 / 6]


def test_example_3_4_bucketization_bounds() -> None:
    # sabre-burel.md §3.2, Example 3.4: root CET^U = 1 - 2/18 = 0.889; after splitting R, U = 1/6.
    assert cet_upper_bounds(EX33, [0] * 6, FIG31)[0] == pytest.approx(16 / 18, abs=1e-15)
    assert round(float(cet_upper_bounds(EX33, [0] * 6, FIG31)[0]), 3) == 0.889
    assert cet_upper_bounds(EX33, [0, 1, 2, 3, 3, 3], FIG31).sum() == pytest.approx(1 / 6, abs=1e-15)


def test_example_3_5_ordered_bounds() -> None:
    # sabre-burel.md §3.2, Example 3.5: salaries 1k..4k with counts 2, 3, 3, 2.
    ref = np.array([2, 3, 3, 2], dtype=np.int64)
    assert cet_upper_bounds(ref, [0, 0, 0, 0])[0] == pytest.approx(0.5, abs=1e-15)
    splits = {1: [0, 1, 1, 1], 2: [0, 0, 1, 1], 3: [0, 0, 0, 1]}
    totals = {k: float(cet_upper_bounds(ref, v).sum()) for k, v in splits.items()}
    assert totals == pytest.approx({1: 0.3, 2: 0.2, 3: 0.3}, abs=1e-15)
    assert cet_upper_bounds(ref, [0, 0, 1, 1]) == pytest.approx([0.1, 0.1], abs=1e-15)


def test_example_3_7_bucket_level_emd() -> None:
    # sabre-burel.md §3.3, Example 3.7 (and Example 3.6): buckets R (10 tuples) and D (8); d^u_12 = 1.
    ref = EX33 // 10
    d = bucket_emd([[5, 4], [3, 2], [2, 2], [2, 1], [1, 1]], ref, [0, 0, 0, 1, 1, 1], FIG31)
    assert d == pytest.approx([0, 2 / 45, 1 / 18, 1 / 9, 1 / 18], abs=1e-15)


def test_section5_item4_bucket_level_emd() -> None:
    # sabre-burel.md §5 item 4: buckets SARS, pneumonia, bronchitis, Digestive; d^u = 1/2 inside R, 1 across.
    ref = EX33 // 10
    d = bucket_emd([[2, 1, 1, 2], [1, 1, 0, 2], [2, 1, 1, 4], [3, 2, 1, 4], [5, 3, 2, 8]], ref,
                   [0, 1, 2, 3, 3, 3], FIG31)
    assert d == pytest.approx([1 / 9, 7 / 72, 1 / 16, 0.05, 0.0], abs=1e-15)


def test_ordered_bucket_level_emd_matches_definition_on_example_3_5() -> None:
    # Buckets {1k, 2k} and {3k, 4k}; d^u = (hi_j - lo_i)/(m-1) = 1 between them: a class of two 1k tuples
    # has phi-distribution (1, 0) against (0.5, 0.5): D = 0.5.
    d = bucket_emd([[2, 0], [1, 1]], np.array([2, 3, 3, 2]), [0, 0, 1, 1])
    assert d == pytest.approx([0.5, 0.0], abs=1e-15)


def test_kl_js_example_of_section_4_1() -> None:
    # sabre-burel.md §2.3: base-2 logarithms, KL(P || Q) with P the holes.
    assert round(kl_divergence([0.4, 0.6], [0.5, 0.5]), 4) == 0.0290
    assert round(js_divergence([0.4, 0.6], [0.5, 0.5]), 4) == 0.0073
    assert round(kl_divergence([0.01, 0.99], [0.03, 0.97]), 4) == 0.0133
    assert round(js_divergence([0.01, 0.99], [0.03, 0.97]), 4) == 0.0038
    assert round(kl_divergence([0.4, 0.6], [0.5, 0.5], base=np.e), 4) == 0.0201
    # Same example: both pairs are 0.1 apart in EMD (distance 1 between the two values).
    assert emd_equal([0.4, 0.6], [0.5, 0.5]) == pytest.approx(0.1, abs=1e-15)
    assert emd_ordered([0.01, 0.99], [0.11, 0.89]) == pytest.approx(0.1, abs=1e-15)


@pytest.mark.parametrize(("salaries", "emd", "tv", "hel"), [
    # generalization-lattice.md §7.3, Table 2.6 salary (3K..11K, Q uniform over 9 values).
    ([0, 1, 2], 0.3750, 0.6667, 0.6501),
    ([3, 8, 5], 0.1667, 0.6667, 0.6501),
    ([4, 6, 7], 0.2361, 0.6667, 0.6501),
])
def test_table_2_6_salary(salaries: list[int], emd: float, tv: float, hel: float) -> None:
    p = np.ones(9)
    q = np.zeros(9)
    q[salaries] = 1
    assert round(emd_ordered(p, q), 4) == emd
    assert round(emd_equal(p, q), 4) == tv
    assert round(hellinger(p, q), 4) == hel


@pytest.mark.parametrize(("diseases", "emd"), [
    # generalization-lattice.md §7.3, Table 2.6 disease with the Li et al. hierarchy (H = 3).
    (["gastric ulcer", "gastritis", "stomach cancer"], 0.4444),
    (["gastritis", "flu", "bronchitis"], 0.2963),
    (["bronchitis", "pneumonia", "stomach cancer"], 0.2963),
])
def test_table_2_6_disease(diseases: list[str], emd: float) -> None:
    p = _leaf_dist(DISEASE, ["gastric ulcer", "gastritis", "stomach cancer", "gastritis", "flu", "bronchitis",
                             "bronchitis", "pneumonia", "stomach cancer"])
    q = _leaf_dist(DISEASE, diseases)
    assert round(emd_hierarchical(p, q, DISEASE), 4) == emd
    assert round(emd_equal(p, q), 4) == 0.4444
    assert round(hellinger(p, q), 4) == 0.5130


@pytest.mark.parametrize(("counts", "hel", "tv"), [
    # generalization-lattice.md §7.2, Table 2.4: Q = (Heart 3, Viral 4, Cancer 5) / 12.
    ([2, 2, 0], 0.4881, 0.4167),
    ([1, 2, 1], 0.1379, 0.1667),
    ([0, 0, 4], 0.5954, 0.5833),
])
def test_table_2_4_hellinger(counts: list[int], hel: float, tv: float) -> None:
    assert round(hellinger([3, 4, 5], counts), 4) == hel
    assert round(emd_equal([3, 4, 5], counts), 4) == tv
