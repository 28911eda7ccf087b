"""ARX's configuration on a frequency set. RANK (the lexicographic aggregate of the weighted per-QI Loss): the
distributed search walks the ties of the ``max`` optimum by their vectors as the in-memory search does, its
vector computed from the weighted items (no rows). Grassberger's estimator for entropy l-diversity."""
from __future__ import annotations

import numpy as np
import pytest

from anoncore import Table, audit
from anoncore.datasets.census import synthetic_census_frame, synthetic_census_schema
from anoncore.distributed import FrequencySet, lattice_search
from anoncore.models import (
    AverageReidentificationRisk,
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    KMap,
    PopulationUniqueness,
    SampleUniqueness,
)
from anoncore.risk import risk_lattice_search
from anoncore.static.lattice import lattice_search as memory_search
from anoncore.static.lattice import weighted_rank_vector


@pytest.fixture(scope="module")
def data():
    df = synthetic_census_frame(30_000, 3)
    table = Table.from_pandas(df, synthetic_census_schema(n_qi=5))
    return table, FrequencySet.from_table(table, sensitive="salary")


CASES = [(k, sup, w) for k in (2, 10, 25) for sup in (0.0, 0.01, 0.04) for w in (None, (1, 2, 3, 4, 5))]


def test_rank_equals_in_memory(data):
    table, freq = data
    differs_from_max = 0
    for k, sup, w in CASES:
        wd = dict(zip(freq.quasi_identifiers, w)) if w else None
        mem = memory_search(table, [KAnonymity(k)], suppression_limit=sup, metric="loss", aggregate="rank",
                            weights=wd)
        got = lattice_search(freq, [KAnonymity(k)], suppression_limit=sup, metric="loss", aggregate="rank",
                             weights=wd)
        assert got.levels == mem.partition.levels, (k, sup, w)
        assert got.score == mem.metrics["loss"]
        assert got.n_suppressed == mem.achieved["n_suppressed"]
        assert mem.achieved["passed"]  # the node both find passes the independent audit
        mx = lattice_search(freq, [KAnonymity(k)], suppression_limit=sup, metric="loss", aggregate="max",
                            weights=wd)
        assert mx.score == got.score  # RANK's first component is the max optimum
        differs_from_max += mx.levels != got.levels
    assert differs_from_max >= 3  # the walk decides: the max search's own tie-break is not RANK's


def test_weighted_vector_equals_the_rows(data):
    """The vector of items with counts equals the vector of the rows they stand for (suppression included)."""
    table, _freq = data
    rng = np.random.default_rng(5)
    hs = [table.hierarchy(q) for q in table.quasi_identifiers]
    r = len(hs)
    codes = table.qi_codes()
    # items: the distinct QI tuples of the rows, the counts their multiplicities, an item suppressed with its rows
    uniq, inverse, counts = np.unique(codes, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    for _ in range(20):
        levels = [int(rng.integers(0, int(h.height) + 1)) for h in hs]
        sup_items = rng.random(len(uniq)) < 0.05
        for gs in (0.5, 0.2, 0.9):
            want = weighted_rank_vector(codes, None, hs, levels, sup_items[inverse], gs, ())
            got = weighted_rank_vector(uniq, counts, hs, levels, sup_items, gs, ())
            assert got == want
            assert len(got) == r and list(got) == sorted(got, reverse=True)


def test_grassberger_equals_in_memory():
    df = synthetic_census_frame(30_000, 7)
    table = Table.from_pandas(df, synthetic_census_schema(n_qi=5))
    freq = FrequencySet.from_table(table, sensitive="salary")
    shannon_differs = 0
    for ell in (1.5, 1.8, 2.0):
        for sup in (0.0, 0.02):
            model = EntropyLDiversity(ell, estimator="grassberger")
            mem = memory_search(table, [model], suppression_limit=sup, metric="dm_star")
            got = lattice_search(freq, [model], suppression_limit=sup, metric="dm_star")
            assert (got.levels, got.score, got.n_suppressed) == (mem.partition.levels, mem.metrics["dm_star"],
                                                                 mem.achieved["n_suppressed"])
            assert mem.achieved["passed"]
            shannon = lattice_search(freq, [EntropyLDiversity(ell)], suppression_limit=sup, metric="dm_star")
            shannon_differs += shannon.levels != got.levels
    assert shannon_differs >= 1  # the estimator reaches the engine (it was read as Shannon's before)


RISK = [[AverageReidentificationRisk(0.05)], [SampleUniqueness(0.01), KAnonymity(2)],
        [KMap(5, population_size=1e6), DistinctLDiversity(2)], [KMap(3)]]


@pytest.mark.parametrize("models", RISK, ids=lambda ms: "+".join(type(m).__name__ for m in ms))
@pytest.mark.parametrize("sup", [0.0, 0.04])
def test_risk_models_equal_in_memory(data, models, sup):
    """Average risk, sample uniqueness and k-map (estimated, or exact without a research subset) are judged by
    the engine on a frequency set as risk_lattice_search judges them on the rows."""
    table, freq = data
    mem = risk_lattice_search(table, models, sup, "dm_star")
    got = lattice_search(freq, models, suppression_limit=sup, metric="dm_star")
    assert mem.stats["search"] == "engine"
    assert (got.levels, got.score, got.n_suppressed) == (mem.partition.levels, mem.metrics["dm_star"],
                                                         mem.achieved["n_suppressed"])
    assert {type(m).__name__ for m in got.models} == {type(m).__name__ for m in models}
    assert audit(table, mem.partition, models).passed  # the same node, audited independently


def test_risk_strict_enough_to_matter(data):
    """The risk criteria reach the engine: a strict average risk moves the optimum off k-anonymity's."""
    _table, freq = data
    plain = lattice_search(freq, [KAnonymity(2)], suppression_limit=0.0, metric="dm_star")
    strict = lattice_search(freq, [KAnonymity(2), AverageReidentificationRisk(0.002)], suppression_limit=0.0,
                            metric="dm_star")
    assert strict.levels != plain.levels and strict.score > plain.score


def test_risk_models_outside_the_engine_refused(data):
    _table, freq = data
    with pytest.raises(TypeError, match="PopulationUniqueness"):
        lattice_search(freq, [PopulationUniqueness(0.01, population_size=1e6)], metric="dm_star")
    with pytest.raises(TypeError, match="KMap"):
        lattice_search(freq, [KMap(3, subset=np.arange(10))], metric="dm_star")
