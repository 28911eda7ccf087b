"""RANK's walk (anoncore.static.lattice._rank_search) with its probes and its geometric-mean seed forced on
every problem (the defaults use them on large boxes only): the optimum equals the exhaustive oracle
(tests/oracles/lattice.py: per-QI Loss from the definitions, vectors compared lexicographically), and
equals the whole-box refinement (_rank_refine) node for node; Adult's RANK optima at 0, 4 and 10 %."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import lattice as oracle
from test_lattice import MODEL_SETS, problems

from anoncore import Table
from anoncore.static import lattice as L


@settings(max_examples=120, deadline=None, derandomize=True)
@given(problems(), st.sampled_from(range(len(MODEL_SETS))), st.sampled_from([0.0, 0.1, 0.3]),
       st.sampled_from([0.0, 0.5, 1.0]), st.booleans(), st.integers(0, 2**31), st.sampled_from([0, 1, 3]),
       st.booleans())
def test_rank_walk_equals_exhaustive(prob: tuple[Table, int], mi: int, limit: float, gs: float, weighted: bool,
                                     wseed: int, probe_min: int, seeded: bool) -> None:
    table, _ = prob
    models = MODEL_SETS[mi]
    qis = list(table.quasi_identifiers)
    rng = np.random.default_rng(wseed)
    weights = {q: float(rng.choice([0.25, 1.0, 3.0, 0.0])) for q in qis} if weighted else None
    full = [weights[q] for q in qis] if weights else None
    if full is not None and max(full) <= 0.0:
        return
    stats = oracle.every_node(table, models, limit)
    vecs = {lv: oracle.rank_vector(table, s, gs, full) for lv, s in stats.items() if s["feasible"]}
    if not vecs:
        return
    kw: dict[str, Any] = {"suppression_limit": limit, "metric": "loss", "gs_factor": gs, "weights": weights}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(L, "_RANK_PROBE_MIN", probe_min)  # probe from every infeasible node (0) or almost
        if not seeded:  # the walk alone from the max optimum
            mp.setattr(L, "_geometric_seed", lambda problem: None)
        res = L.lattice_search(table, models, aggregate="rank", **kw)
    lv = res.partition.levels
    assert lv in vecs
    assert all(oracle.rank_not_worse(u, vecs[lv]) for u in vecs.values()), (lv, vecs[lv])
    assert res.achieved["passed"]
    # the walk and the whole-box refinement choose the same node (same vectors, same tie rule)
    problem = L.LatticeProblem.build(table, models, limit, "loss", gs, "rank", weights=weights)
    out = problem.engine.optimal(False, True)
    box, _ = L._rank_refine(problem, out.levels, out.result.metric)
    assert tuple(box) == lv


def test_rank_adult(adult_occupation) -> None:  # type: ignore[no-untyped-def]
    """Adult, k = 5: the walk's node equals the whole-box refinement's, and evaluates far fewer nodes."""
    from anoncore.models import KAnonymity

    for limit in (0.0, 0.04, 0.1):
        res = L.lattice_search(adult_occupation, [KAnonymity(5)], suppression_limit=limit, aggregate="rank")
        problem = L.LatticeProblem.build(adult_occupation, [KAnonymity(5)], limit, "loss", 0.5, "rank")
        out = problem.engine.optimal(False, True)
        box, n_box = L._rank_refine(problem, out.levels, out.result.metric)
        assert tuple(box) == res.partition.levels
        assert res.stats["rank_nodes_evaluated"] <= n_box
        assert res.achieved["passed"]


@pytest.mark.parametrize("probe_min", [0, 2])
@pytest.mark.parametrize("limit", [0.0, 0.05, 0.2])
def test_rank_walk_where_rank_and_max_differ(probe_min: int, limit: float) -> None:
    """Tables of 4 QIs where the RANK optimum is neither the max optimum nor (seed off) given: the walk must
    find it past infeasible candidates, with probes from every infeasible node."""
    from test_lattice import M as model
    from test_lattice import _uniform_table

    rng = np.random.default_rng(5)
    differ = 0
    for _ in range(25):
        table = _uniform_table(rng, 4, 4, 2, 80)
        k = [model("KAnonymity", k=3)]
        heights = tuple(int(table.hierarchy(q).height) for q in table.quasi_identifiers)
        lim = math.floor(limit * table.n_rows)
        stats = {lv: oracle.node_stats(table, lv, k, lim) for lv in oracle.all_nodes(heights)}
        vecs = {lv: oracle.rank_vector(table, s) for lv, s in stats.items() if s["feasible"]}
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(L, "_RANK_PROBE_MIN", probe_min)
            mp.setattr(L, "_geometric_seed", lambda problem: None)
            r = L.lattice_search(table, k, suppression_limit=limit, aggregate="rank")
        m = L.lattice_search(table, k, suppression_limit=limit, aggregate="max")
        assert all(oracle.rank_not_worse(u, vecs[r.partition.levels]) for u in vecs.values())
        differ += r.partition.levels != m.partition.levels
    assert differ >= 3  # the walk had work to do
