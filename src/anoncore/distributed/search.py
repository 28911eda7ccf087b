"""The optimal lattice search on a frequency set (the engine's bottom built from weighted items)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from anoncore import _core
from anoncore._validation import check_float, check_instance, check_n_threads, check_option
from anoncore.distributed.frequency import FrequencySet
from anoncore.exceptions import InfeasibleError
from anoncore.models import KAnonymity, PrivacyModel
from anoncore.risk.search import _in_engine, set_table_criteria
from anoncore.static.lattice import (
    _AGGREGATES,
    _MODEL_KINDS,
    METRICS,
    _as_models,
    _check_weights,
    _criterion,
    _engine_models,
    _hierarchy_levels,
    _node_dict,
    _rank_search,
    weighted_rank_vector,
)

__all__ = ["FrequencyResult", "lattice_search"]

# the binding's structs (EngineConfig with its ``counts`` field, NodeResult, SearchResult), untyped here
_lat: Any = _core.lattice


@dataclass(frozen=True)
class FrequencyResult:
    """The optimal node of a frequency set.

    ``levels`` the chosen levels, ``score`` the objective, ``n_suppressed`` the suppressed rows, ``n_classes``
    the published classes, ``suppressed_items`` (n_items,) bool: the items in suppressed classes,
    ``suppressed_keys`` the suppressed classes as generalized node tuples (one hierarchy node id per QI).
    """

    frequencies: FrequencySet
    levels: tuple[int, ...]
    metric: str
    score: float
    n_suppressed: int
    n_classes: int
    suppressed_items: NDArray[np.bool_]
    models: tuple[Any, ...]
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def suppressed_keys(self) -> set[tuple[int, ...]]:
        f = self.frequencies
        nodes = generalized_nodes(f, f.codes[self.suppressed_items, : f.n_qi], self.levels)
        return {tuple(int(x) for x in row) for row in nodes}


def generalized_nodes(freq: FrequencySet, leaf_codes: NDArray[np.int32], levels: tuple[int, ...]) -> NDArray[np.int64]:
    """(n, n_qi) hierarchy node ids of leaf codes generalized to ``levels``."""
    out = np.empty(leaf_codes.shape, dtype=np.int64)
    for j in range(freq.n_qi):
        h = freq.attributes[j].hierarchy
        out[:, j] = h.ancestor[leaf_codes[:, j], levels[j]]  # type: ignore[union-attr]
    return out


class _Names:
    def __init__(self, names: tuple[str, ...]) -> None:
        self.quasi_identifiers = names


def _nu_bases(freq: FrequencySet, j: int, gen: NDArray[np.int32], n_nodes: list[int]) -> NDArray[np.float64]:
    """The monotone non-uniform entropy terms of QI j per level, summed in order of first appearance (as
    static/lattice.py does over the rows)."""
    col = freq.codes[:, j]
    h = freq.attributes[j].hierarchy
    counts = np.bincount(col, weights=freq.counts, minlength=h.n_leaves)  # type: ignore[union-attr]
    _, first = np.unique(col, return_index=True)
    order = col[np.sort(first)]
    nu = np.zeros(gen.shape[1])
    for lv in range(gen.shape[1]):
        dense = gen[:, lv]
        b = np.bincount(dense, weights=counts, minlength=n_nodes[lv])
        base = 0.0
        for v in order:
            av = float(counts[v])
            base += av * (math.log(av / float(b[dense[v]])) / math.log(2.0))
        nu[lv] = -base
    return nu


def lattice_search(freq: FrequencySet, models: Any, *, suppression_limit: float = 0.0, metric: str = "loss",
                   gs_factor: float = 0.5, aggregate: str = "geometric_mean", weights: Any = None,
                   n_threads: int | None = None) -> FrequencyResult:
    """The globally optimal full-domain generalization of the rows a frequency set stands for.

    Same models, metrics, suppression rule and tie-break as :func:`anoncore.static.lattice.lattice_search`
    (strategy 'optimal'), and the same levels, score and suppressed rows: the lattice engine builds its bottom
    frequency set from the weighted items instead of the rows.

    Examples
    --------
    >>> from anoncore.datasets import toy_table
    >>> from anoncore.models import KAnonymity
    >>> from anoncore.distributed import FrequencySet, lattice_search
    >>> res = lattice_search(FrequencySet.from_table(toy_table()), [KAnonymity(2)], metric="dm_star")
    >>> res.levels
    (1, 0)
    """
    caller = "anoncore.distributed.lattice_search"
    check_instance(freq, "freq", caller, FrequencySet, "a FrequencySet")
    given = [models] if isinstance(models, PrivacyModel) else models
    risk = [m for m in given if isinstance(m, PrivacyModel) and _risk_in_engine(m)] \
        if isinstance(given, (list, tuple)) else []
    rest = [m for m in given if not any(m is x for x in risk)] if risk else models
    own = bool(rest) or not risk  # models of the engine's own (an empty list is refused by _as_models)
    engine_models = _as_models(rest, caller) if own else [KAnonymity(1)]  # (risk models alone: no other rule)
    mlist = [*(engine_models if own else []), *risk]  # the models the result reports
    sup = check_float(suppression_limit, "suppression_limit", caller, 0, 1)
    metric = check_option(metric, "metric", caller, list(METRICS))
    gs = check_float(gs_factor, "gs_factor", caller, 0, 1)
    agg = check_option(aggregate, "aggregate", caller, list(_AGGREGATES))
    wts = _check_weights(weights, _Names(freq.quasi_identifiers), metric, caller)  # type: ignore[arg-type]
    nt = check_n_threads(n_threads, caller)
    t0 = time.perf_counter()
    engine, heights, limit = _frequency_engine(freq, engine_models, sup, metric, gs, agg, wts, nt)
    if risk:  # average risk, sample uniqueness, k-map without a research subset: judged by the engine
        set_table_criteria(engine, risk, freq.n_rows, limit)
    out = engine.optimal(False, True)
    secs = time.perf_counter() - t0
    if not out.feasible:
        top = np.asarray(heights, dtype=np.int32)
        res = engine.evaluate(top)
        raise InfeasibleError(f"{caller}: no lattice node satisfies the models within the suppression limit: even "
                              f"the top node {list(heights)} suppresses {res.suppressed} rows, above the limit of "
                              f"{limit} (suppression_limit={sup} of {freq.n_rows} rows).")
    levels = tuple(int(x) for x in out.levels)
    stats: dict[str, Any] = {}
    if agg == "rank" and metric == "loss":  # the engine searched with "max"; RANK orders its ties by vector
        rp = _FreqRankProblem(freq, engine, tuple(heights), limit, gs, tuple(wts), mlist, sup, nt)
        levels, stats["rank_nodes_evaluated"] = _rank_search(rp, levels, float(out.result.metric),
                                                             int(out.result.suppressed))
        secs = time.perf_counter() - t0
    lv = np.asarray(levels, dtype=np.int32)
    node, _labels, sup_items, _first = engine.classify(lv, False)
    return FrequencyResult(freq, levels, metric, float(out.result.metric),
                           int(node.suppressed), int(node.n_classes) - int(_n_supp_classes(_labels, sup_items)),
                           np.asarray(sup_items, dtype=bool), tuple(mlist),
                           {"seconds": secs, "nodes_evaluated": out.evaluated, "bottom_classes": engine.bottom_classes,
                            "n_items": freq.n_items, **stats})


@dataclass(frozen=True)
class _FreqRankProblem:
    """A frequency set's search as the RANK walk (static.lattice._rank_search) sees a problem."""

    freq: FrequencySet
    engine: Any
    heights: tuple[int, ...]
    limit: int
    gs_factor: float
    weights: tuple[float, ...]
    models: Any
    suppression_limit: float
    n_threads: int

    def evaluate(self, levels: Any) -> dict[str, Any]:
        return _node_dict(self.engine.evaluate(np.asarray(levels, dtype=np.int32)))

    def evaluate_many(self, levels: Any) -> list[dict[str, Any]]:
        arr = np.ascontiguousarray(np.asarray(levels, dtype=np.int32).reshape(-1, len(self.heights)))
        return [_node_dict(r) for r in self.engine.evaluate_many(arr)]

    def rank_vector(self, levels: Any, suppressed: NDArray[Any]) -> tuple[float, ...]:
        r = len(self.heights)
        hs = [a.hierarchy for a in self.freq.attributes[:r]]
        return weighted_rank_vector(self.freq.codes[:, :r], self.freq.counts, hs, levels, suppressed,
                                    self.gs_factor, self.weights)

    def geometric_seed(self) -> tuple[int, ...] | None:
        names = self.freq.quasi_identifiers
        w = dict(zip(names, self.weights)) if self.weights else None
        try:
            return lattice_search(self.freq, self.models, suppression_limit=self.suppression_limit, metric="loss",
                                  gs_factor=self.gs_factor, weights=w, n_threads=self.n_threads).levels
        except InfeasibleError:
            return None


def _risk_in_engine(m: PrivacyModel) -> bool:
    """A risk model the engine judges from a node's published class sizes, with no research subset."""
    return _in_engine(m) and getattr(m, "subset", None) is None


def _frequency_engine(freq: FrequencySet, mlist: list[Any], sup: float, metric: str, gs: float, agg: str,
                      wts: list[float], nt: int) -> tuple[Any, list[int], int]:
    """The lattice engine of a frequency set (its bottom built from the weighted items), with its heights and
    suppression limit in rows; the models' sensitive attribute must be the one the set was built with."""
    crit = []
    needs_sa = False
    for m in _engine_models(mlist, freq.n_rows):
        if getattr(m, "order", None) not in (None, "codes"):
            # (LatticeProblem.build renumbers a table's sensitive codes in the stated order; a frequency set's
            # codes are taken as given)
            raise ValueError(f"The Dask search takes {type(m).__name__} in the code order only; lattice_search on a "
                             f"Table takes order={m.order!r}.")
        if _MODEL_KINDS[type(m).__name__][3]:
            needs_sa = True
            want = getattr(m, "sensitive", None)
            if freq.sensitive is None or (want is not None and want != freq.sensitive):
                raise ValueError(f"{type(m).__name__} needs the sensitive attribute {want or '(any)'}; the frequency "
                                 f"set was built with sensitive={freq.sensitive!r}.")
        crit.append(_criterion(m))
    r = freq.n_qi
    gens, lcs, nus, heights = [], [], [], []
    for j in range(r):
        h = freq.attributes[j].hierarchy
        gen, lcc, sizes = _hierarchy_levels(h)  # type: ignore[arg-type]
        gens.append(gen)
        lcs.append(lcc)
        nus.append(_nu_bases(freq, j, gen, sizes) if metric in ("entropy", "entropy_nm") else np.zeros(gen.shape[1]))
        heights.append(int(h.height))  # type: ignore[union-attr]
    cfg = _lat.EngineConfig()
    # (aligned: a frequency set that travelled between processes can sit at any byte of its buffer)
    cfg.codes = np.require(freq.codes[:, :r], np.int32, ("C", "A"))
    cfg.counts = np.require(freq.counts, np.int64, ("C", "A"))
    cfg.gens, cfg.heights, cfg.leaf_counts, cfg.nu_bases = gens, np.asarray(heights, dtype=np.int32), lcs, nus
    if needs_sa:
        sh = freq.attributes[-1].hierarchy
        cfg.sa_codes = np.require(freq.codes[:, -1], np.int32, ("C", "A"))
        cfg.m = int(sh.n_leaves)  # type: ignore[union-attr]
        cfg.sa_parent = np.ascontiguousarray(sh.parent, dtype=np.int32)  # type: ignore[union-attr]
        cfg.sa_height = np.ascontiguousarray(sh.node_height, dtype=np.int32)  # type: ignore[union-attr]
    else:
        cfg.sa_codes, cfg.m = np.zeros(0, dtype=np.int32), 0
        cfg.sa_parent, cfg.sa_height = np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32)
    limit = math.floor(sup * freq.n_rows)
    cfg.criteria, cfg.metric, cfg.aggregate, cfg.gs_factor = crit, METRICS[metric], _AGGREGATES[agg], gs
    cfg.limit, cfg.n_threads, cfg.packed, cfg.weights = limit, nt, True, wts
    return _lat.Engine(cfg), heights, limit


def _n_supp_classes(labels: NDArray[np.int64], sup: NDArray[np.bool_]) -> int:
    return int(np.unique(labels[np.asarray(sup, dtype=bool)]).size)
