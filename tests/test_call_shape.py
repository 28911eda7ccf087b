"""The one call shape of the static algorithms: every form of the previous release still works for one release,
warns with a DeprecationWarning, and gives the same result as the new form."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from anoncore.datasets import toy_table
from anoncore.models import (
    EqualDistanceTCloseness,
    HellingerTCloseness,
    HierarchicalDistanceTCloseness,
    KAnonymity,
)
from anoncore.results import Result
from anoncore.static import (
    datafly,
    hellinger_t_closeness,
    improved_greedy,
    lattice_search,
    samarati,
    t_incognito,
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
