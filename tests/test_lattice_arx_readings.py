"""ARX's readings in the lattice engine, node by node and optimum by optimum against tests/oracles/lattice.py:
an ordered t-closeness whose value order is stated (``order='string'``, ARX's order of a string attribute, or
an explicit sequence; the sensitive codes renumbered in that order before the engine sees them, while the
oracle's ordered EMD sorts the labels itself), and delta-disclosure with ``absent='ignore'`` (only the values
present in a class are checked)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from oracles import lattice as oracle

from anoncore import Attribute, Hierarchy, Schema, Table
from anoncore.models import (
    DeltaDisclosure,
    HierarchicalDistanceTCloseness,
    KAnonymity,
    OrderedDistanceTCloseness,
)
from anoncore.risk import risk_lattice_search
from anoncore.static.lattice import LatticeProblem, lattice_search

H3 = Hierarchy.from_nested({"*": {"A": ["a0", "a1", "a2"], "B": ["b0", "b1", "b2"]}})
H4 = Hierarchy.from_nested({"*": {"X": {"x0": ["u0", "u1"], "x1": ["u2", "u3"]}, "Y": {"y0": ["u4", "u5"]}}})
# numbers as text: their code order (the hierarchy's leaves) is not their string order ("10" < "8"); a flat
# categorical attribute's codes would already follow the string order
SA_LEAVES = ["8", "9", "10", "11", "100", "7"]
HS = Hierarchy.from_nested({"*": {"lo": ["8", "9", "7", "10"], "hi": ["11", "100"]}})


def _table(seed: int, n: int, sa_hierarchy: bool) -> Table:
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(len(SA_LEAVES)) * 0.7)
    data = {"q0": rng.choice(H3.leaves, n), "q1": rng.choice(H4.leaves, n),
            "s": rng.choice(SA_LEAVES, n, p=p)}
    attrs = [Attribute("q0", "quasi_identifier", "categorical", hierarchy=H3),
             Attribute("q1", "quasi_identifier", "categorical", hierarchy=H4),
             Attribute("s", "sensitive", "categorical", hierarchy=HS if sa_hierarchy else None)]
    return Table.from_pandas(pd.DataFrame(data), Schema(tuple(attrs)))


def _order(seed: int, kind: str, t: Table) -> str | tuple[str, ...]:
    """'string', or every value of the table's sensitive attribute (its hierarchy's leaves) in a random order."""
    if kind == "string":
        return "string"
    labels = sorted(str(v) for v in t.decode("s", np.arange(t.cardinality("s"))))
    return tuple(np.random.default_rng(seed + 100).permutation(labels).tolist())


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("kind", ["string", "explicit"])
@pytest.mark.parametrize("sa_hierarchy", [True, False])
def test_every_node_agrees_with_the_oracle_in_the_stated_order(seed: int, kind: str, sa_hierarchy: bool) -> None:
    t = _table(seed, 90, sa_hierarchy)
    models = [KAnonymity(2), OrderedDistanceTCloseness(0.1234, order=_order(seed, kind, t))]
    limit = math.floor(0.1 * t.n_rows)
    problem = LatticeProblem.build(t, models, 0.1, "loss")
    stats = oracle.every_node(t, models, 0.1)
    for lv, st in stats.items():
        got = problem.evaluate(lv)
        assert got["feasible"] == st["feasible"], lv
        if st["feasible"]:
            assert got["suppressed"] == st["suppressed"] <= limit, lv


def test_the_order_changes_verdicts_on_this_table() -> None:
    """The fixture is not vacuous: the oracle in code order and in string order disagree on some node, and
    the engine follows the stated order there."""
    t = _table(3, 90, sa_hierarchy=True)
    in_codes = oracle.every_node(t, [OrderedDistanceTCloseness(0.1234)], 0.0)
    in_text = oracle.every_node(t, [OrderedDistanceTCloseness(0.1234, order="string")], 0.0)
    differ = [lv for lv in in_codes if in_codes[lv]["suppressed"] != in_text[lv]["suppressed"]]
    assert differ
    problem = LatticeProblem.build(t, [OrderedDistanceTCloseness(0.1234, order="string")], 1.0, "loss")
    for lv in differ:
        assert problem.evaluate(lv)["suppressed"] == in_text[lv]["suppressed"]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("limit", [0.0, 0.15])
def test_optimum_equals_exhaustive(seed: int, limit: float) -> None:
    t = _table(seed, 120, sa_hierarchy=True)
    # the code order first, then the stated one, on the same table: the cached bottom is kept per order
    for order in (None, _order(seed, "string", t), _order(seed, "explicit", t)):
        models = [KAnonymity(2), OrderedDistanceTCloseness(0.1537, order=order)]
        stats = oracle.every_node(t, models, limit)
        vals = {lv: oracle.metric_value(t, s, "loss") for lv, s in stats.items() if s["feasible"]}
        res = lattice_search(t, models, suppression_limit=limit, metric="loss")
        lv = res.partition.levels
        assert lv in vals, (order, lv)
        np.testing.assert_allclose(vals[lv], min(vals.values()), rtol=1e-9, atol=1e-12)
        assert res.achieved["n_suppressed"] == stats[lv]["suppressed"]
        assert res.achieved["passed"]  # the audit, which orders the values itself


@pytest.mark.parametrize("seed", range(3))
def test_with_the_hierarchical_emd_on_the_same_attribute(seed: int) -> None:
    """The sensitive hierarchy's leaves are renumbered with the codes: the hierarchical EMD's verdicts stay."""
    t = _table(seed, 100, sa_hierarchy=True)
    models = [HierarchicalDistanceTCloseness(0.2113), OrderedDistanceTCloseness(0.1537, order="string")]
    problem = LatticeProblem.build(t, models, 0.2, "loss")
    for lv, st in oracle.every_node(t, models, 0.2).items():
        got = problem.evaluate(lv)
        assert got["feasible"] == st["feasible"], lv
        if st["feasible"]:
            assert got["suppressed"] == st["suppressed"], lv


def test_risk_search_uses_the_engine_and_finds_the_same_node() -> None:
    t = _table(1, 120, sa_hierarchy=True)
    models = [KAnonymity(2), OrderedDistanceTCloseness(0.1537, order="string")]
    a = lattice_search(t, models, suppression_limit=0.15)
    b = risk_lattice_search(t, models, suppression_limit=0.15)
    assert a.partition.levels == b.partition.levels
    np.testing.assert_array_equal(a.partition.suppressed, b.partition.suppressed)


def test_refusals() -> None:
    t = _table(0, 40, sa_hierarchy=True)
    with pytest.raises(ValueError, match="one value order per sensitive attribute"):
        lattice_search(t, [OrderedDistanceTCloseness(0.2, order="string"), OrderedDistanceTCloseness(0.3)])
    with pytest.raises(ValueError, match="does not list the value"):
        lattice_search(t, [OrderedDistanceTCloseness(0.2, order=("8", "9"))])
    # the Dask search's frequency sets carry the codes as given: a stated order is refused there
    from anoncore.distributed import FrequencySet
    from anoncore.distributed import lattice_search as dask_search

    freq = FrequencySet.from_table(t, sensitive="s")
    with pytest.raises(ValueError, match="Dask search takes OrderedDistanceTCloseness in the code order only"):
        dask_search(freq, [OrderedDistanceTCloseness(0.2, order="string")])
    assert dask_search(freq, [KAnonymity(2), OrderedDistanceTCloseness(0.5)], suppression_limit=0.5).levels


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("absent", ["ignore", "violate"])
def test_delta_disclosure_every_node_and_the_optimum(seed: int, absent: str) -> None:
    t = _table(seed, 80, sa_hierarchy=seed % 2 == 0)
    models = [KAnonymity(2), DeltaDisclosure(1.3, absent=absent)]
    for limit in (0.0, 0.25):
        problem = LatticeProblem.build(t, models, limit, "loss")
        stats = oracle.every_node(t, models, limit)
        for lv, st in stats.items():
            got = problem.evaluate(lv)
            assert got["feasible"] == st["feasible"], (limit, lv)
            if st["feasible"]:
                assert got["suppressed"] == st["suppressed"], (limit, lv)
        vals = {lv: oracle.metric_value(t, s, "loss") for lv, s in stats.items() if s["feasible"]}
        if not vals:
            continue
        res = lattice_search(t, models, suppression_limit=limit, metric="loss")
        assert res.partition.levels in vals
        np.testing.assert_allclose(vals[res.partition.levels], min(vals.values()), rtol=1e-9, atol=1e-12)
        assert res.achieved["passed"]


def test_delta_disclosure_readings_differ_on_this_table() -> None:
    """Not vacuous: some node's classes lack a value of the table, so the two readings suppress differently."""
    t = _table(0, 80, sa_hierarchy=True)
    strict = oracle.every_node(t, [DeltaDisclosure(1.3)], 0.0)
    loose = oracle.every_node(t, [DeltaDisclosure(1.3, absent="ignore")], 0.0)
    assert any(strict[lv]["suppressed"] != loose[lv]["suppressed"] for lv in strict)


def test_ignoring_absent_values_is_not_upward_closed() -> None:
    """A class without value v merged with one whose share of v barely passes has a share of v below
    p_v e^-delta: the engine must not infer feasibility upwards, even without suppression (the optimum test
    above found a worse node when it did)."""
    t = _table(0, 80, sa_hierarchy=True)
    assert LatticeProblem.build(t, [DeltaDisclosure(1.3)], 0.0, "loss").engine.predicate_monotone
    assert not LatticeProblem.build(t, [DeltaDisclosure(1.3, absent="ignore")], 0.0, "loss").engine.predicate_monotone
    # the definitions on two classes and their union: p = (1/2, 1/2), delta = ln 3 (shares in (1/6, 3/2))
    from collections import Counter

    ref, m = Counter({0: 50, 1: 50}), DeltaDisclosure(math.log(3), absent="ignore")
    a, b = Counter({0: 10}), Counter({0: 8, 1: 2})  # b's share of value 1 is 0.2 > 1/6; a lacks it
    assert not oracle.class_violates(m, a, ref, 100, None)
    assert not oracle.class_violates(m, b, ref, 100, None)
    assert oracle.class_violates(m, a + b, ref, 100, None)  # 2/20 < 1/6
    assert oracle.class_violates(DeltaDisclosure(math.log(3)), a, ref, 100, None)  # (strict: a lacks value 1)


def test_the_heuristics_take_both_readings() -> None:
    """The heuristics build the same engine (LatticeProblem.build): their nodes satisfy the readings as the
    audit checks them."""
    from anoncore.static.lattice import datafly, samarati, t_incognito

    t = _table(2, 120, sa_hierarchy=True)
    for m in (OrderedDistanceTCloseness(0.1537, order="string"), DeltaDisclosure(1.3, absent="ignore")):
        for algo in (datafly, samarati):
            res = algo(t, [KAnonymity(2), m], suppression_limit=0.2)
            assert res.achieved["passed"], (algo.__name__, m)
            st = oracle.node_stats(t, res.partition.levels, [KAnonymity(2), m], math.floor(0.2 * t.n_rows))
            assert st["feasible"] and res.partition.n_suppressed == st["suppressed"], (algo.__name__, m)
    # t_incognito (default metric DM) hands its model objects to the optimal search: the order is kept
    models = [KAnonymity(2), OrderedDistanceTCloseness(0.1537, order="string")]
    ti = t_incognito(t, models, suppression_limit=0.2)
    assert ti.partition.levels == lattice_search(t, models, suppression_limit=0.2, metric="dm").partition.levels
    assert ti.achieved["passed"]
