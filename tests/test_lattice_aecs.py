"""AECS (ARX's average equivalence class size) as a lattice search metric: the optimal search against the
exhaustive oracle, and the reported value against anoncore.metrics.aecs on the published partition."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import lattice as oracle
from test_lattice import MODEL_SETS, problems

from anoncore import InfeasibleError, Table
from anoncore import metrics as M
from anoncore.static.lattice import lattice_search


@settings(max_examples=60, deadline=None, derandomize=True)
@given(problems(), st.sampled_from(range(len(MODEL_SETS))), st.sampled_from([0.0, 0.1, 0.3]),
       st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]))
def test_aecs_search_equals_exhaustive(prob: tuple[Table, int], mi: int, limit: float, gs: float) -> None:
    table, _ = prob
    models = MODEL_SETS[mi]
    stats = oracle.every_node(table, models, limit)
    vals = {lv: oracle.metric_value(table, s, "aecs", gs) for lv, s in stats.items() if s["feasible"]}
    if not vals:
        with pytest.raises(InfeasibleError):
            lattice_search(table, models, suppression_limit=limit, metric="aecs", gs_factor=gs)
        return
    best = min(vals.values())
    for strategy in ("optimal", "exhaustive"):
        res = lattice_search(table, models, suppression_limit=limit, metric="aecs", gs_factor=gs, strategy=strategy)
        lv = res.partition.levels
        assert lv in vals
        if math.isinf(best):
            assert math.isinf(res.metrics["aecs"])
            continue
        np.testing.assert_allclose(res.metrics["aecs"], best, rtol=1e-12)
        np.testing.assert_allclose(vals[lv], best, rtol=1e-12)
        assert res.achieved["passed"]
        # the independent metric on the published partition
        np.testing.assert_allclose(M.aecs(table, res.partition, gs_factor=gs), res.metrics["aecs"], rtol=1e-12)


def test_aecs_on_adult(adult_occupation) -> None:  # type: ignore[no-untyped-def]
    from anoncore.models import KAnonymity

    for limit in (0.0, 0.04):
        res = lattice_search(adult_occupation, [KAnonymity(5)], suppression_limit=limit, metric="aecs")
        assert res.achieved["passed"]
        assert res.metrics["aecs"] == M.aecs(adult_occupation, res.partition)
        ex = lattice_search(adult_occupation, [KAnonymity(5)], suppression_limit=limit, metric="aecs",
                            strategy="exhaustive")
        assert ex.metrics["aecs"] == res.metrics["aecs"]
