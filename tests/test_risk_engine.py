"""Risk-based models judged inside the lattice engine (table_criteria.cpp): average re-identification risk,
sample uniqueness and estimated k-map with the engine's own models and suppression. The optimum of
risk_lattice_search equals an exhaustive oracle written from the definitions (every node: the engine models'
classes and suppression by tests/oracles/lattice.py, the risk statistics on the published classes by hand),
and every output passes the audit of every model."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import lattice as oracle
from scipy.stats import poisson
from test_lattice import MODEL_SETS, problems

from anoncore import InfeasibleError, Table, audit
from anoncore.models import AverageReidentificationRisk, KMap, SampleUniqueness
from anoncore.risk import risk_lattice_search


def _risk_ok(m: Any, kept: list[int]) -> bool:
    """The model's definition on the published class sizes (no published row: nothing to violate)."""
    n = sum(kept)
    if n == 0:
        return True
    if isinstance(m, AverageReidentificationRisk):
        return len(kept) / n <= m.risk
    if isinstance(m, SampleUniqueness):
        return sum(1 for f in kept if f == 1) / n <= m.uniqueness
    pi = n / m.population_size  # estimated k-map: F = f + Poisson(f (1 - pi) / pi), P(F < k) <= significance
    if pi >= 1.0:
        return all(f >= m.k for f in kept)
    return all(poisson.cdf(m.k - f - 1, f * (1 - pi) / pi) <= m.significance for f in kept)


RISK = [lambda n: AverageReidentificationRisk(0.3), lambda n: AverageReidentificationRisk(0.12),
        lambda n: SampleUniqueness(0.05), lambda n: SampleUniqueness(0.0),
        lambda n: KMap(3, population_size=4.0 * n), lambda n: KMap(5, population_size=1.5 * n, significance=0.1)]


@settings(max_examples=80, deadline=None, derandomize=True)
@given(problems(), st.sampled_from(range(-1, len(MODEL_SETS))), st.sampled_from([0.0, 0.1, 0.3]),
       st.lists(st.sampled_from(range(len(RISK))), min_size=1, max_size=2, unique=True),
       st.sampled_from(["loss", "dm", "height", "kl"]))
def test_engine_risk_models_equal_exhaustive(prob: tuple[Table, int], mi: int, limit: float, ri: list[int],
                                             metric: str) -> None:
    table, _ = prob
    n = table.n_rows
    engine_models = MODEL_SETS[mi] if mi >= 0 else []
    risk_models = [RISK[i](n) for i in ri]
    heights = tuple(int(table.hierarchy(q).height) for q in table.quasi_identifiers)
    lim = math.floor(limit * n)
    from anoncore.models import KAnonymity

    vals = {}
    for lv in oracle.all_nodes(heights):
        s = oracle.node_stats(table, lv, engine_models or [KAnonymity(1)], lim)
        if not s["feasible"]:
            continue
        kept = [c for _, c, v in s["classes"] if not v]
        if all(_risk_ok(m, kept) for m in risk_models):
            vals[lv] = oracle.metric_value(table, s, metric)
    models = engine_models + risk_models
    if not vals:
        with pytest.raises(InfeasibleError):
            risk_lattice_search(table, models, suppression_limit=limit, metric=metric)
        return
    res = risk_lattice_search(table, models, suppression_limit=limit, metric=metric)
    assert res.stats["search"] == "engine"
    best = min(vals.values())
    tol = 1e-9 * max(1.0, abs(best))
    lv = res.partition.levels
    assert lv in vals and vals[lv] <= best + tol
    ties = [x for x, v in vals.items() if v <= best + tol]
    if all(vals[x] == best for x in ties):
        assert lv == min(ties)  # exact ties: the smallest levels
    assert res.achieved["passed"]
    assert audit(table, res.partition, models).passed
    assert res.partition.n_rows == n  # nothing lost


def test_engine_risk_adult(adult_occupation) -> None:  # type: ignore[no-untyped-def]
    """Adult: the engine's answer passes the audit and equals the exhaustive strategy of the same engine."""
    from anoncore.models import KAnonymity

    for models, limit in (([AverageReidentificationRisk(0.05)], 0.0), ([KAnonymity(3), SampleUniqueness(0.0)], 0.04),
                          ([KAnonymity(2), KMap(5, population_size=1e6)], 0.02)):
        res = risk_lattice_search(adult_occupation, models, suppression_limit=limit, metric="loss")
        assert res.stats["search"] == "engine"
        assert res.achieved["passed"]
        assert audit(adult_occupation, res.partition, models).passed


@settings(max_examples=60, deadline=None, derandomize=True)
@given(problems(), st.sampled_from([-1, 0, 1, 2]), st.sampled_from([0.0, 0.1, 0.3]), st.integers(0, 2**31),
       st.sampled_from(["kmap", "delta", "both"]), st.sampled_from(["loss", "dm_star"]))
def test_engine_subset_models_equal_exhaustive(prob: tuple[Table, int], mi: int, limit: float, sseed: int,
                                               which: str, metric: str) -> None:
    """Exact k-map and delta-presence with a research subset, judged by the engine against the population's
    classes (an engine on the whole table): the optimum equals the definitions' exhaustive oracle."""
    import numpy as np

    from anoncore.models import DeltaPresence, KAnonymity

    table, _ = prob
    n = table.n_rows
    rng = np.random.default_rng(sseed)
    sub = rng.random(n) < 0.6
    sub[0] = True
    idx = np.flatnonzero(sub)
    work = table.take(idx)
    engine_models = MODEL_SETS[mi] if mi >= 0 else []
    risk_models: list[Any] = []
    if which in ("kmap", "both"):
        risk_models.append(KMap(2, subset=sub))
    if which in ("delta", "both"):
        risk_models.append(DeltaPresence(0.2, 0.9, subset=sub))
    heights = tuple(int(table.hierarchy(q).height) for q in table.quasi_identifiers)
    lim = math.floor(limit * work.n_rows)
    qc = table.qi_codes()
    hs = [table.hierarchy(q) for q in table.quasi_identifiers]
    vals = {}
    for lv in oracle.all_nodes(heights):
        s = oracle.node_stats(work, lv, engine_models or [KAnonymity(1)], lim)
        if not s["feasible"]:
            continue
        published = {key: c for key, c, v in s["classes"] if not v}  # subset classes not suppressed
        population: dict[tuple[int, ...], int] = {}
        for i in range(n):
            key = tuple(int(h.ancestor[qc[i, j], lv[j]]) for j, h in enumerate(hs))
            population[key] = population.get(key, 0) + 1
        ok = True
        for key, F in population.items():
            f = published.get(key, 0)
            if which in ("kmap", "both") and f > 0 and F < 2:
                ok = False
            if which in ("delta", "both") and not 0.2 <= f / F <= 0.9:
                ok = False
        if ok:
            vals[lv] = oracle.metric_value(work, s, metric)
    models = engine_models + risk_models
    if not vals:
        with pytest.raises(InfeasibleError):
            risk_lattice_search(table, models, suppression_limit=limit, metric=metric)
        return
    res = risk_lattice_search(table, models, suppression_limit=limit, metric=metric)
    assert res.stats["search"] == "engine"
    best = min(vals.values())
    tol = 1e-9 * max(1.0, abs(best))
    lv = res.partition.levels
    assert lv in vals and vals[lv] <= best + tol
    assert res.achieved["passed"]
    assert audit(table, res.partition, models).passed
    assert bool(res.partition.suppressed[~sub].all())  # rows outside the subset are never published
