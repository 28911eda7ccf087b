"""Golden values of the information-loss metrics, each from a worked example (source cited per test)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from oracles import metrics as O

import anoncore
from anoncore import Attribute, Hierarchy, Partition, Schema, Table
from anoncore import metrics as M


# ------------------------------------------------------------------------------------------- Cao thesis
def _table_1_1() -> Table:
    """Cao thesis Table 1.1 (spec sabre-burel.md §5 item 1): QI Age, Sex, Zipcode; SA Disease."""
    df = pd.DataFrame({
        "age": [26, 27, 27, 25, 25, 28],
        "sex": ["M", "M", "M", "M", "F", "F"],
        "zip": [53711, 53710, 53712, 53711, 53712, 53711],
        "disease": ["Bronchitis", "Broken arm", "AIDS", "Hepatitis", "Hepatitis", "Hepatitis"],
    })
    sex = Hierarchy.from_rows([["M", "Person"], ["F", "Person"]], name="sex")
    return Table.from_pandas(df, Schema((
        Attribute("age", "quasi_identifier", "numeric"),
        Attribute("sex", "quasi_identifier", "categorical", hierarchy=sex),
        Attribute("zip", "quasi_identifier", "numeric"),
        Attribute("disease", "sensitive"),
    )))


def test_ail_table_1_3() -> None:
    """Table 1.3: EC1 = {Bob, Mike, John}, EC2 = {Jack, Kate, Jane}; domains = data ranges, w = 1/3.
    IL(EC1) = 4/9, IL(EC2) = 5/6, AIL = 23/36 (spec sabre-burel.md §5 item 1, [DERIVED])."""
    t = _table_1_1()
    p = Partition.from_labels(t, [0, 0, 0, 1, 1, 1])
    # the table's [26-27] / [25-28], written as every command writes a numeric box: [lo, hi]
    assert p.class_labels("age").tolist() == ["[26, 27]", "[25, 28]"]
    assert p.class_labels("sex").tolist() == ["M", "Person"]
    assert p.class_labels("zip").tolist() == ["[53710, 53712]", "[53711, 53712]"]
    assert M.ail(t, p) == pytest.approx(float(Fraction(23, 36)), rel=1e-15)
    assert O.ail(t, p) == pytest.approx(float(Fraction(23, 36)), rel=1e-15)
    # Not the common NCP form: Sex 'Person' costs (2-1)/(2-1) = 1 there too, but 'M' costs 0 in both; the
    # numeric terms are equal, so here NCP = AIL; it differs once a categorical class has 2 of 3+ leaves.
    assert M.ncp(t, p) == pytest.approx(float(Fraction(23, 36)), rel=1e-15)


def test_ail_declared_domain_and_weights() -> None:
    """Same classes with a declared Age domain [0, 99] and unequal weights (Cao's IL = Σ w_i IL_i)."""
    df = _table_1_1().to_pandas()
    sex = Hierarchy.from_rows([["M", "Person"], ["F", "Person"]], name="sex")
    t = Table.from_pandas(df, Schema((
        Attribute("age", "quasi_identifier", "numeric", domain=(0.0, 99.0)),
        Attribute("sex", "quasi_identifier", "categorical", hierarchy=sex),
        Attribute("zip", "quasi_identifier", "numeric"),
    )))
    p = Partition.from_labels(t, [0, 0, 0, 1, 1, 1])
    il1 = 0.5 * (1 / 99) + 0.25 * 0 + 0.25 * 1
    il2 = 0.5 * (3 / 99) + 0.25 * 1 + 0.25 * 0.5
    assert M.ail(t, p, weights=[0.5, 0.25, 0.25]) == pytest.approx((3 * il1 + 3 * il2) / 6, rel=1e-15)


def test_ail_table_3_2() -> None:
    """Table 3.1 -> 3.2 (3-diverse release): each EC has IL = (1/3 + 2/3)/2, AIL = 0.5
    (spec sabre-burel.md §5 item 2, [DERIVED], domains [50, 80] and [40, 70])."""
    df = pd.DataFrame({"weight": [60, 70, 60, 50, 80, 70], "age": [40, 50, 60, 50, 50, 70]})
    t = Table.from_pandas(df, Schema((Attribute("weight", "quasi_identifier", "numeric"),
                                      Attribute("age", "quasi_identifier", "numeric"))))
    p = Partition.from_labels(t, [0, 1, 0, 0, 1, 1])
    assert M.ail(t, p) == pytest.approx(0.5, rel=1e-15)


def test_ail_differs_from_ncp() -> None:
    """Cao's categorical term |Leaves(a)|/|Leaves(H)| vs NCP (|Leaves(a)|-1)/(|Leaves(H)|-1) (spec §2.4 note)."""
    h = Hierarchy.from_rows([["a", "ab", "*"], ["b", "ab", "*"], ["c", "cd", "*"], ["d", "cd", "*"]], name="x")
    t = Table.from_pandas(pd.DataFrame({"x": ["a", "b", "c", "d"]}),
                          Schema((Attribute("x", "quasi_identifier", "categorical", hierarchy=h),)))
    p = Partition.from_levels(t, [1])
    assert M.ail(t, p) == pytest.approx(0.5)  # 2/4 per row
    assert M.ncp(t, p) == pytest.approx(1 / 3)  # (2-1)/(4-1)


# ------------------------------------------------------------------------------------------- lattice thesis
def _table_2_1() -> Table:
    """Spec generalization-lattice.md §7.1, Table 2.1 with the assumed hierarchies (age <25/>=25, zip masking)."""
    ages = [21, 56, 35, 24, 60, 22, 24]
    zips = ["769008", "769008", "769008", "769008", "769132", "743161", "743372"]
    df = pd.DataFrame({"age": [str(a) for a in ages],
                       "gender": ["Male", "Female", "Female", "Male", "Male", "Female", "Male"], "zip": zips})
    age_h = Hierarchy.from_rows([[str(a), "<25" if a < 25 else ">=25", "*"] for a in sorted(set(ages))], name="age")
    gender_h = Hierarchy.from_rows([["Male", "*"], ["Female", "*"]], name="gender")
    return Table.from_pandas(df, Schema((
        Attribute("age", "quasi_identifier", "categorical", hierarchy=age_h),
        Attribute("gender", "quasi_identifier", "categorical", hierarchy=gender_h),
        Attribute("zip", "quasi_identifier", "categorical", hierarchy=anoncore.masking_hierarchy(zips, name="zip")),
    )))


def test_table_2_2_dm_cavg_precision() -> None:
    """Node (1,1,3) = Table 2.2: ECs [2,3,2], DM = 17, C_avg(k=2) = 7/3/2, Prec = 1/3 (spec
    generalization-lattice.md §7.1, [DERIVED]); Datafly's (2,1,3): DM 29, Prec 0.1667."""
    t = _table_2_1()
    p = Partition.from_levels(t, [1, 1, 3])
    assert sorted(p.class_sizes.tolist()) == [2, 2, 3]
    assert M.discernibility(t, p) == 17.0
    assert M.aecs(t, p) / 2 == pytest.approx(7 / 3 / 2)
    assert 1 - M.precision(t, p) == pytest.approx(1 / 3, rel=1e-12)
    assert M.height(p) == 5
    q = Partition.from_levels(t, [2, 1, 3])
    assert M.discernibility(t, q) == 29.0
    assert 1 - M.precision(t, q) == pytest.approx(1 / 6, rel=1e-12)


def test_metric_sensitivity_trap() -> None:
    """Samarati, k = 2, MaxSup = 2 (spec generalization-lattice.md §7.1): (2,0,3) suppresses rows 6 and 7;
    suppression-aware Prec 0.3571 prefers it over (1,1,3) (0.3333), DM prefers (1,1,3) (17 vs 27 = 9+4+2·7)."""
    t = _table_2_1()
    p = Partition.from_levels(t, [2, 0, 3])
    supp = (p.class_sizes_all < 2)[np.asarray(p.labels)]
    assert supp.tolist() == [False] * 5 + [True, True]
    p = p.with_suppressed(supp)
    assert M.discernibility(t, p) == 27.0
    assert 1 - M.precision(t, p) == pytest.approx(1 - 13.5 / 21, rel=1e-12)
    assert round(1 - M.precision(t, p), 4) == 0.3571
    assert M.discernibility(t, p, monotonic=True) == 9 + 4 + 1 + 1


# ------------------------------------------------------------------------------------------- ARX worked examples
@pytest.fixture(scope="module")
def adult_occ(data_dir):  # type: ignore[no-untyped-def]
    return anoncore.datasets.load_adult_arx(sensitive="occupation")


def test_nu_entropy_kanonymity_0(adult: Table) -> None:
    """ARX TestAnonymizationKAnonymity[0]: k = 5, 4 %, levels [1,0,1,1,3,2,2,0,1], 906 records suppressed,
    monotonic NU-entropy 255559.85455731067 (ARX-ORACLES.md §7.3 worked example; exact string)."""
    p = Partition.from_levels(adult, [1, 0, 1, 1, 3, 2, 2, 0, 1])
    p = p.with_suppressed((p.class_sizes_all < 5)[np.asarray(p.labels)])
    assert p.n_suppressed == 906
    value = M.non_uniform_entropy(adult, p, monotonic=True)
    assert repr(value) == "255559.85455731067"
    per_qi = [M.non_uniform_entropy(adult, p, monotonic=True, weights=[float(i == j) for i in range(9)])
              for j in range(9)]
    assert per_qi == [27417.6400764651, 0.0, 23375.0352725208, 24819.8943972959, 87870.4227341272,
                      25086.8680139638, 42571.8694091557, 0.0, 24418.1246537822]


def test_loss_blikeness_1(adult_occ: Table) -> None:
    """ARX TestAnonymizationBLikeness[1]: enhanced beta = 2, 0 %, levels [1,4,1,1,3,2,2,0]:
    x = (1, 1, 1, 0.4331609309, 1, 1, 1, 0), Loss (geometric mean) 0.759176305345683 (ARX-ORACLES.md §7.4)."""
    t = adult_occ
    p = Partition.from_levels(t, [1, 4, 1, 1, 3, 2, 2, 0])
    bad = O.arx_violating_classes(p, np.asarray(t.column("occupation")), t.hierarchy("occupation"),
                                  [{"type": "enhanced-beta-likeness", "beta": 2.0}])
    p = p.with_suppressed(bad[np.asarray(p.labels)])
    assert repr(M.loss(t, p)) == "0.759176305345683"
    assert M.loss(t, p, aggregate="rank") == (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.4331609309, 0.0)


def test_dm_star_tcloseness_0(adult_occ: Table) -> None:
    """ARX TestAnonymizationTCloseness[0]: levels [1,4,1,0,3,2,2,1], classes 21, 370, 827, 939, 4214, 9726,
    14065 with 21 + 827 suppressed by k = 5 and equal-distance 0.2-closeness; DM* = 311,880,088 (ARX-ORACLES.md §7.2)."""
    t = adult_occ
    p = Partition.from_levels(t, [1, 4, 1, 0, 3, 2, 2, 1])
    assert sorted(p.class_sizes_all.tolist()) == [21, 370, 827, 939, 4214, 9726, 14065]
    models = [{"type": "t-closeness", "ground_distance": "equal", "t": 0.2},
              {"type": "k-anonymity", "k": 5}]
    bad = O.arx_violating_classes(p, np.asarray(t.column("occupation")), t.hierarchy("occupation"), models)
    p = p.with_suppressed(bad[np.asarray(p.labels)])
    assert p.n_suppressed == 21 + 827
    dm_star = M.discernibility(t, p, monotonic=True)
    assert dm_star == 311_880_088.0 and repr(dm_star) == "311880088.0"  # Java prints 3.11880088E8
    assert M.discernibility(t, p) == float(sum(x * x for x in (370, 939, 4214, 9726, 14065)) + 30162 * 848)


def test_aecs_and_height_definitions(adult_occ: Table) -> None:
    """AECS = N / (#published classes + 1 if anything is suppressed) (ARX-ORACLES.md §7.5; the 150.8 example of
    DPresence[6] needs a research subset and is not reproduced); Height = Σ levels (§7.6)."""
    t = adult_occ
    p = Partition.from_levels(t, [1, 4, 1, 0, 3, 2, 2, 1])
    p = p.with_suppressed((p.class_sizes_all < 400)[np.asarray(p.labels)])
    assert M.aecs(t, p) == 30162 / (5 + 1)
    assert M.height(p) == 14 and M.height([1, 4, 1, 0, 3, 2, 2, 1]) == 14
