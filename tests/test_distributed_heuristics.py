"""Datafly, Samarati, the improved greedy walk and best k on a frequency set (built on a local Dask cluster from
10^5 census rows): the same levels as the in-memory heuristics on the rows, and the same suppressed rows."""

from __future__ import annotations

import numpy as np
import pytest

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

from anoncore import Table
from anoncore.datasets.census import synthetic_census_frame, synthetic_census_schema
from anoncore.distributed import FrequencySet
from anoncore.distributed import heuristics as fh
from anoncore.models import DistinctLDiversity, KAnonymity, OrderedDistanceTCloseness
from anoncore.static import lattice as mem

N = 100_000


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    df = synthetic_census_frame(N, 5)
    d = tmp_path_factory.mktemp("census_h")
    for i in range(5):
        df.iloc[i * N // 5:(i + 1) * N // 5].to_parquet(d / f"part-{i}.parquet")
    schema = synthetic_census_schema(n_qi=5)
    table = Table.from_pandas(df, schema)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    with distributed.Client(cluster):
        freq = FrequencySet.from_dask(dd.read_parquet(str(d)), schema, sensitive="salary")
    cluster.close()
    assert freq.n_rows == N
    return table, freq


CASES = [
    ([KAnonymity(5)], 0.02, "dm_star"),
    ([KAnonymity(10)], 0.0, "loss"),
    ([DistinctLDiversity(3)], 0.04, "precision"),
    ([KAnonymity(3), OrderedDistanceTCloseness(0.3)], 0.05, "entropy"),
]


@pytest.mark.parametrize("models,limit,metric", CASES)
@pytest.mark.parametrize("name", ["datafly", "samarati", "improved_greedy"])
def test_same_levels_as_in_memory(data, models, limit, metric, name):
    table, freq = data
    got = getattr(fh, name)(freq, models, suppression_limit=limit, metric=metric)
    want = getattr(mem, name)(table, models, suppression_limit=limit, metric=metric)
    assert got.levels == tuple(want.achieved["levels"])
    assert got.n_suppressed == int(want.partition.suppressed.sum())
    assert got.score == pytest.approx(want.metrics[metric], rel=1e-12)
    assert got.n_classes == want.partition.n_classes - (len(np.unique(want.partition.labels[want.partition.suppressed]))
                                                        if want.partition.suppressed.any() else 0)


@pytest.mark.parametrize("score", ["ratio", "classes"])
def test_greedy_scores(data, score):
    table, freq = data
    got = fh.improved_greedy(freq, [KAnonymity(5)], suppression_limit=0.01, metric="dm", score=score)
    want = mem.improved_greedy(table, [KAnonymity(5)], suppression_limit=0.01, metric="dm", score=score)
    assert got.levels == tuple(want.achieved["levels"])


@pytest.mark.parametrize("strategy", ["optimal", "datafly"])
def test_best_k(data, strategy):
    table, freq = data
    got = fh.best_k(freq, [2, 5, 20, 50], suppression_limit=0.02, strategy=strategy)
    want = mem.best_k(table, [2, 5, 20, 50], suppression_limit=0.02, strategy=strategy)
    assert got.k == want.k and got.levels == want.levels
    np.testing.assert_allclose(got.utility, want.utility, rtol=1e-12)
    np.testing.assert_allclose(got.privacy, want.privacy, rtol=1e-12)


def test_bad_input(data):
    _, freq = data
    with pytest.raises(TypeError, match="FrequencySet"):
        fh.datafly(object(), [KAnonymity(2)])
    with pytest.raises(ValueError, match="score"):
        fh.improved_greedy(freq, [KAnonymity(2)], score="fast")
    with pytest.raises(ValueError, match="strategy"):
        fh.best_k(freq, [2], strategy="flash")


@pytest.mark.parametrize("models,limit,metric", CASES)
def test_problem_agrees_with_the_optimal_search(data, models, limit, metric):
    """FrequencyProblem configures the engine as distributed.lattice_search does: its evaluation of the optimum
    gives the search's score and suppressed rows, and no feasible node below it scores lower."""
    from anoncore.distributed import lattice_search

    _, freq = data
    opt = lattice_search(freq, models, suppression_limit=limit, metric=metric)
    prob = fh.FrequencyProblem.build(freq, models, limit, metric)
    node = prob.evaluate(opt.levels)
    assert node["feasible"] and node["metric"] == opt.score and node["suppressed"] == opt.n_suppressed
    for lv in prob.nodes_at_height(sum(opt.levels)):
        r = prob.evaluate(lv)
        assert not r["feasible"] or r["metric"] >= opt.score
