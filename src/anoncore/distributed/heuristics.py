"""Datafly, Samarati, the improved greedy walk and best k on a frequency set.

The node choice of the in-memory heuristics (:mod:`anoncore.static.lattice`: ``datafly_choice``,
``samarati_choice``, ``improved_greedy_choice``) runs unchanged on a problem whose lattice engine is built from
the weighted items of a :class:`~anoncore.distributed.FrequencySet` (``EngineConfig.counts``): the same
evaluations, so the same levels as in memory. The chosen node is returned as a
:class:`~anoncore.distributed.search.FrequencyResult`, which :func:`anoncore.distributed.publish.publish_parquet`
publishes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from anoncore import _core
from anoncore._validation import check_float, check_instance, check_int, check_n_threads, check_option
from anoncore.distributed.frequency import FrequencySet
from anoncore.distributed.search import FrequencyResult, _frequency_engine, _n_supp_classes
from anoncore.distributed.search import lattice_search as optimal_search
from anoncore.exceptions import InfeasibleError
from anoncore.static.lattice import (
    METRICS,
    BestK,
    _as_models,
    _compositions,
    _hierarchy_levels,
    _k,
    _node_dict,
    datafly_choice,
    improved_greedy_choice,
    samarati_choice,
)

__all__ = ["FrequencyProblem", "best_k", "datafly", "improved_greedy", "samarati"]

_lat: Any = _core.lattice


@dataclass(frozen=True)
class _Rows:
    n_rows: int


@dataclass
class FrequencyProblem:
    """A frequency set, its models, metric and suppression limit compiled for the lattice engine (the
    counterpart of :class:`anoncore.static.lattice.LatticeProblem`; build with :meth:`build`)."""

    freq: FrequencySet
    models: tuple[Any, ...]
    suppression_limit: float
    limit: int
    metric: str
    heights: tuple[int, ...]
    engine: Any
    table: _Rows

    @classmethod
    def build(cls, freq: FrequencySet, models: Any, suppression_limit: float = 0.0, metric: str = "loss",
              n_threads: int | None = None, caller: str = "anoncore.distributed") -> FrequencyProblem:
        check_instance(freq, "freq", caller, FrequencySet, "a FrequencySet")
        mlist = _as_models(models, caller)
        sup = check_float(suppression_limit, "suppression_limit", caller, 0, 1)
        metric = check_option(metric, "metric", caller, list(METRICS))
        nt = check_n_threads(n_threads, caller)
        engine, heights, limit = _frequency_engine(freq, mlist, sup, metric, 0.5, "geometric_mean", [], nt)
        return cls(freq, tuple(mlist), sup, limit, metric, tuple(heights), engine, _Rows(freq.n_rows))

    @property
    def n_qi(self) -> int:
        return len(self.heights)

    @property
    def distinct(self) -> tuple[tuple[int, ...], ...]:
        """Distinct values of every quasi-identifier at every level over the items (Datafly's choice)."""
        out = []
        for j in range(self.n_qi):
            h: Any = self.freq.attributes[j].hierarchy
            gen, _, level_nodes = _hierarchy_levels(h)
            present = np.bincount(self.freq.codes[:, j], minlength=h.n_leaves) > 0
            out.append(tuple(int(np.count_nonzero(np.bincount(gen[present, lv], minlength=level_nodes[lv])))
                             for lv in range(int(h.height) + 1)))
        return tuple(out)

    def evaluate(self, levels: Sequence[int]) -> dict[str, Any]:
        """Feasibility, suppressed rows, number of classes and objective of one node."""
        return _node_dict(self.engine.evaluate(np.asarray(levels, dtype=np.int32)))

    def evaluate_many(self, levels: Sequence[Sequence[int]]) -> list[dict[str, Any]]:
        arr = np.ascontiguousarray(np.asarray(levels, dtype=np.int32).reshape(-1, self.n_qi))
        return [_node_dict(r) for r in self.engine.evaluate_many(arr)]

    def nodes_at_height(self, height: int) -> list[tuple[int, ...]]:
        return list(_compositions(height, self.heights))

    def result(self, levels: Sequence[int], algorithm: str, trace: tuple[Any, ...],
               stats: dict[str, Any]) -> FrequencyResult:
        """The chosen node as a FrequencyResult (suppressed items and classes from the engine)."""
        lv = np.asarray(levels, dtype=np.int32)
        node, labels, sup_items, _ = self.engine.classify(lv, False)
        stats = {**stats, "algorithm": algorithm, "trace": trace, "n_items": self.freq.n_items}
        return FrequencyResult(self.freq, tuple(int(x) for x in levels), self.metric, float(node.metric),
                               int(node.suppressed), int(node.n_classes) - _n_supp_classes(labels, sup_items),
                               np.asarray(sup_items, dtype=bool), self.models, stats)


def datafly(freq: FrequencySet, models: Any, *, suppression_limit: float = 0.0, metric: str = "loss",
            n_threads: int | None = None) -> FrequencyResult:
    """Datafly (:func:`anoncore.static.lattice.datafly`) on a frequency set: the same levels as in memory.

    Examples
    --------
    >>> from anoncore.datasets import toy_table
    >>> from anoncore.distributed import FrequencySet
    >>> from anoncore.models import KAnonymity
    >>> datafly(FrequencySet.from_table(toy_table()), [KAnonymity(2)]).levels
    (1, 0)
    """
    p = FrequencyProblem.build(freq, models, suppression_limit, metric, n_threads, "datafly")
    lv, trace, stats = datafly_choice(p)
    return p.result(lv, "datafly", trace, stats)


def samarati(freq: FrequencySet, models: Any, *, suppression_limit: float = 0.0, metric: str = "loss",
             n_threads: int | None = None) -> FrequencyResult:
    """Samarati's binary search on height (:func:`anoncore.static.lattice.samarati`) on a frequency set.

    Examples
    --------
    >>> from anoncore.datasets import toy_table
    >>> from anoncore.distributed import FrequencySet
    >>> from anoncore.models import KAnonymity
    >>> samarati(FrequencySet.from_table(toy_table()), [KAnonymity(2)]).levels
    (1, 0)
    """
    p = FrequencyProblem.build(freq, models, suppression_limit, metric, n_threads, "samarati")
    lv, trace, stats = samarati_choice(p)
    return p.result(lv, "samarati", trace, stats)


def improved_greedy(freq: FrequencySet, models: Any, *, suppression_limit: float = 0.0, metric: str = "loss",
                    score: str = "outliers", n_threads: int | None = None) -> FrequencyResult:
    """The improved greedy walk (:func:`anoncore.static.lattice.improved_greedy`) on a frequency set.

    Examples
    --------
    >>> from anoncore.datasets import toy_table
    >>> from anoncore.distributed import FrequencySet
    >>> from anoncore.models import KAnonymity
    >>> improved_greedy(FrequencySet.from_table(toy_table()), [KAnonymity(2)]).levels
    (1, 0)
    """
    score = check_option(score, "score", "improved_greedy", ("outliers", "ratio", "classes"))
    p = FrequencyProblem.build(freq, models, suppression_limit, metric, n_threads, "improved_greedy")
    lv, trace, stats = improved_greedy_choice(p, score)
    return p.result(lv, "improved_greedy", trace, stats)


def best_k(freq: FrequencySet, ks: Sequence[int], suppression_limit: float = 0.0, strategy: str = "optimal",
           metric: str = "precision", n_threads: int | None = None) -> BestK:
    """Choose k by crossing the utility and privacy curves (:func:`anoncore.static.lattice.best_k`) on a
    frequency set; ``strategy`` is 'optimal', 'datafly', 'samarati' or 'greedy'.

    Examples
    --------
    >>> from anoncore.datasets import toy_table
    >>> from anoncore.distributed import FrequencySet
    >>> best_k(FrequencySet.from_table(toy_table()), [1, 2, 3]).k
    2
    """
    caller = "best_k"
    check_instance(freq, "freq", caller, FrequencySet, "a FrequencySet")
    strategy = check_option(strategy, "strategy", caller, ("optimal", "datafly", "samarati", "greedy"))
    ks = tuple(sorted({check_int(k, "ks", caller, 1, freq.n_rows) for k in ks}))
    if not ks:
        raise ValueError(f"The 'ks' parameter of {caller} must hold at least one k.")
    def run(f: FrequencySet, m: list[Any]) -> FrequencyResult:
        kw: dict[str, Any] = {"suppression_limit": suppression_limit, "metric": metric, "n_threads": n_threads}
        if strategy == "optimal":
            return optimal_search(f, m, **kw)
        return {"datafly": datafly, "samarati": samarati, "greedy": improved_greedy}[strategy](f, m, **kw)

    U, P, L = [], [], []
    for k in ks:
        res = run(freq, [_k(k)])
        prob = FrequencyProblem.build(freq, [_k(k)], suppression_limit, "precision_nm", n_threads, caller)
        U.append(1.0 - float(prob.evaluate(res.levels)["metric"]))
        P.append(1.0 - 1.0 / max(1, _smallest_class(prob, res.levels)))
        L.append(res.levels)
    diffs = [abs(u - p) for u, p in zip(U, P)]
    i = min(range(len(ks)), key=lambda x: (diffs[x], ks[x]))
    return BestK(ks, tuple(U), tuple(P), ks[i], tuple(L))


def _smallest_class(prob: FrequencyProblem, levels: Sequence[int]) -> int:
    """The smallest published class (rows) of a node."""
    _, labels, sup, _ = prob.engine.classify(np.asarray(levels, dtype=np.int32), False)
    labels = np.asarray(labels, dtype=np.int64)
    keep: NDArray[np.bool_] = ~np.asarray(sup, dtype=bool)
    if not keep.any():
        raise InfeasibleError("best_k: every row is suppressed.")
    sizes = np.bincount(labels[keep], weights=prob.freq.counts[keep])
    return int(sizes[sizes > 0].min())
