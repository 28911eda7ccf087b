"""The one call shape of the static algorithms: every form of the previous release still works for one release,
warns with a DeprecationWarning, and gives the same result as the new form."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from anoncore.datasets import toy_table
from anoncore.models import (
    BasicBetaLikeness,
    EnhancedBetaLikeness,
    EqualDistanceTCloseness,
    HellingerTCloseness,
    HierarchicalDistanceTCloseness,
    KAnonymity,
    OrderedDistanceTCloseness,
    RangeBetaLikeness,
)
from anoncore.results import Result
from anoncore.static import (
    burel,
    datafly,
    dmondrian,
    hellinger_t_closeness,
    improved_greedy,
    lattice_search,
    lmondrian,
    sabre,
    samarati,
    t_incognito,
    tmondrian,
)


def same(a: Result, b: Result) -> None:
    assert a == b  # algorithm, partition (labels, suppression, boxes, levels), parameters, achieved, metrics, trace
    np.testing.assert_array_equal(a.partition.labels, b.partition.labels)
    assert a.audit is not None and b.audit is not None and a.audit.passed == b.audit.passed


K2 = [KAnonymity(2)]

CASES: list[tuple[str, Callable[[Any], Result], Callable[[Any], Result]]] = [
    ("lattice_search positional", lambda t: lattice_search(t, K2, 0.2, "dm", "optimal", 1),
     lambda t: lattice_search(t, K2, suppression_limit=0.2, metric="dm", strategy="optimal", n_threads=1)),
    ("lattice_search positional heuristic", lambda t: lattice_search(t, K2, 0.0, "loss", "samarati"),
     lambda t: lattice_search(t, K2, suppression_limit=0.0, metric="loss", strategy="samarati")),
    ("datafly positional", lambda t: datafly(t, K2, 0.2, "dm"),
     lambda t: datafly(t, K2, suppression_limit=0.2, metric="dm")),
    ("samarati positional", lambda t: samarati(t, K2, 0.0, "loss", 1),
     lambda t: samarati(t, K2, suppression_limit=0.0, metric="loss", n_threads=1)),
    ("improved_greedy positional", lambda t: improved_greedy(t, K2, 0.2, "loss", "classes"),
     lambda t: improved_greedy(t, K2, suppression_limit=0.2, metric="loss", score="classes")),
    ("t_incognito(table, k, t)", lambda t: t_incognito(t, 2, 1.0),
     lambda t: t_incognito(t, [KAnonymity(2), HierarchicalDistanceTCloseness(1.0)])),
    ("t_incognito keywords", lambda t: t_incognito(t, k=2, t=0.9, distance="equal", suppression_limit=0.2),
     lambda t: t_incognito(t, [KAnonymity(2), EqualDistanceTCloseness(0.9)], suppression_limit=0.2)),
    ("hellinger_t_closeness(table, t, k)", lambda t: hellinger_t_closeness(t, 0.6, 2),
     lambda t: hellinger_t_closeness(t, [KAnonymity(2), HellingerTCloseness(0.6)])),
    ("hellinger_t_closeness keywords", lambda t: hellinger_t_closeness(t, t=0.6, k=2, metric="loss"),
     lambda t: hellinger_t_closeness(t, [KAnonymity(2), HellingerTCloseness(0.6)], metric="loss")),
]


@pytest.mark.parametrize(("name", "old", "new"), CASES, ids=[c[0] for c in CASES])
def test_old_form_warns_and_gives_the_same_result(name: str, old: Callable[[Any], Result],
                                                  new: Callable[[Any], Result]) -> None:
    table = toy_table()
    with pytest.warns(DeprecationWarning, match="deprecated"):
        got = old(table)
    same(got, new(table))


def test_positional_and_keyword_for_one_option_is_an_error() -> None:
    with pytest.warns(DeprecationWarning), pytest.raises(TypeError, match="multiple values for argument 'metric'"):
        lattice_search(toy_table(), K2, 0.0, "dm", metric="loss")
    with pytest.raises(TypeError, match="2 positional arguments"):
        datafly(toy_table(), K2, 0.0, "dm", 1, 2)


def test_new_form_does_not_warn() -> None:
    # filterwarnings=error turns any warning into a failure here
    lattice_search(toy_table(), K2, suppression_limit=0.2)
    t_incognito(toy_table(), [KAnonymity(2), HierarchicalDistanceTCloseness(1.0)], n_threads=1)


def _census() -> Any:
    from anoncore.datasets import synthetic_census

    return synthetic_census(3000, rng=0, n_qi=3)


MODEL_CASES: list[tuple[str, Callable[[Any], Result], Callable[[Any], Result]]] = [
    ("sabre", lambda t: sabre(t, t=0.35, k=6, rng=1, method="knn"),
     lambda t: sabre(t, [KAnonymity(6), OrderedDistanceTCloseness(0.35, sensitive="salary")], rng=1, method="knn")),
    ("tmondrian", lambda t: tmondrian(t, t=0.35, k=6),
     lambda t: tmondrian(t, [OrderedDistanceTCloseness(0.35), KAnonymity(6)])),
    ("burel enhanced", lambda t: burel(t, beta=3, rng=2), lambda t: burel(t, EnhancedBetaLikeness(3), rng=2)),
    ("burel basic", lambda t: burel(t, beta=3, variant="basic", rng=2, split="balanced"),
     lambda t: burel(t, [BasicBetaLikeness(3)], rng=2, split="balanced")),
    ("burel range", lambda t: burel(t, beta=3, variant="range", epsilon=5.0, rng=2),
     lambda t: burel(t, [RangeBetaLikeness(3, 5.0)], rng=2)),
    ("lmondrian", lambda t: lmondrian(t, beta=3, variant="basic"), lambda t: lmondrian(t, [BasicBetaLikeness(3)])),
    ("dmondrian", lambda t: dmondrian(t, beta=3), lambda t: dmondrian(t, [EnhancedBetaLikeness(3)])),
]


@pytest.mark.parametrize(("name", "keywords", "models"), MODEL_CASES, ids=[c[0] for c in MODEL_CASES])
def test_keyword_form_warns_and_equals_models_form(name: str, keywords: Callable[[Any], Result],
                                         models: Callable[[Any], Result]) -> None:
    table = _census()
    with pytest.warns(DeprecationWarning, match="without models"):
        old = keywords(table)
    same(old, models(table))


def test_models_form_refuses_what_the_algorithm_cannot_guarantee() -> None:
    table = _census()
    with pytest.raises(ValueError, match="pass OrderedDistanceTCloseness"):
        sabre(table, [HierarchicalDistanceTCloseness(0.3)])  # salary is numeric: ordered ground distance
    with pytest.raises(ValueError, match="one OrderedDistanceTCloseness"):
        tmondrian(table, [KAnonymity(3)])
    with pytest.raises(TypeError, match="either 'models' or the keywords"):
        sabre(table, [OrderedDistanceTCloseness(0.3)], k=3)
    with pytest.raises(ValueError, match="one model of EnhancedBetaLikeness"):
        dmondrian(table, [BasicBetaLikeness(3)])
    with pytest.raises(ValueError, match="one model of"):
        burel(table, [EnhancedBetaLikeness(3), BasicBetaLikeness(3)])
    with pytest.raises(TypeError, match="missing its models"):
        burel(table)
