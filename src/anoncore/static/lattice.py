"""Full-domain generalization over the lattice of the quasi-identifiers' hierarchies.

Global recoding: every value of quasi-identifier ``j`` is replaced by its ancestor at level ``levels[j]``.
Record suppression follows ARX: every equivalence class that violates one of the privacy models is
suppressed, and a node (levels vector) is *feasible* when the suppressed rows are at most
``floor(suppression_limit * n_rows)``.

Search strategies
-----------------
``'optimal'``
    Globally optimal node for the chosen metric (branch and bound over the lattice with predictive tagging,
    see :func:`lattice_search`).
``'datafly'``, ``'samarati'``, ``'greedy'``
    Sweeney's Datafly, Samarati's binary search on height, and the thesis's improved greedy heuristic
    (spec generalization-lattice.md §3.3-3.4).
``'exhaustive'``
    Every node of the lattice (a test oracle for small lattices).
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from anoncore import _core
from anoncore._tablecache import TableCache
from anoncore._validation import (
    check_bool,
    check_float,
    check_instance,
    check_int,
    check_n_threads,
    check_option,
)
from anoncore.data.hierarchy import Hierarchy
from anoncore.data.table import Table
from anoncore.exceptions import InfeasibleError
from anoncore.models import RISK_MODELS, OrderedDistanceTCloseness, PrivacyModel
from anoncore.results import Partition, Result
from anoncore.static._finish import finish
from anoncore.static._shape import UNSET, deprecated_call, positional_options

__all__ = [
    "METRICS",
    "BestK",
    "LatticeProblem",
    "best_k",
    "datafly",
    "hellinger_t_closeness",
    "improved_greedy",
    "lattice_search",
    "lattice_size",
    "level_sizes",
    "rank_vector",
    "samarati",
    "t_incognito",
]

#: Objectives (ARX-ORACLES.md §7): name -> kernel id.
METRICS: dict[str, int] = {
    "loss": 0,
    "dm": 1,
    "dm_star": 2,
    "entropy": 3,
    "entropy_nm": 4,
    "precision": 5,
    "precision_nm": 6,
    "height": 7,
    "aecs": 8,
    "kl_arx": 9,
    "ambiguity": 10,
    "kl": 11,
}
#: The engine's aggregate of each option; "rank" searches with "max" (the first component of RANK's sorted
#: vector) and the ties are then ordered by their whole vector (_rank_refine).
_AGGREGATES = {"geometric_mean": 0, "arithmetic_mean": 1, "sum": 2, "max": 3, "rank": 3}
_STRATEGIES = ("optimal", "datafly", "samarati", "greedy", "exhaustive")
#: Per-table caches of the lattice (bottom frequency set, per-QI arrays, distinct counts), dropped with the table.
_CACHE = TableCache("anoncore.static.lattice")


def _packed_keys() -> bool:
    """Packed 64-bit class keys when the QIs' level-0 codes fit (a test seam: tests monkeypatch it to False to
    cover the generic layout)."""
    return True


def _sweep() -> bool:
    """The optimal search's sweep where it applies (a test seam: tests monkeypatch it to False to compare with
    the queue)."""
    return True

# Model class name -> (kernel id, parameter attributes a, b, needs a sensitive attribute): the kernel's metadata
# table (csrc/include/anoncore/criteria/models.hpp), the models the lattice engine judges.
_MODEL_KINDS: dict[str, tuple[int, str, str | None, bool]] = {
    name: (kid, a, b, needs_sa) for name, (kid, a, b, needs_sa, lat) in _core.criteria.models.items() if lat
}


def _criterion(m: Any) -> Any:
    """The lattice kernel's criterion of a model (its kind and parameters; models.hpp ``Criterion``)."""
    kid, an, bn, _ = _MODEL_KINDS[type(m).__name__]
    b = float(getattr(m, bn)) if bn else 0.0
    if type(m).__name__ == "EntropyLDiversity" and m.estimator == "grassberger":
        b = 1.0  # the kernel's estimator flag
    if type(m).__name__ == "DeltaDisclosure" and m.absent == "ignore":
        b = 1.0  # ARX's reading: a value absent from a class is not checked
    return _core.lattice.Criterion(kid, float(getattr(m, an)), b)


def _sensitive_rank(mlist: list[Any], table: Table, sa: str, m: int, caller: str) -> NDArray[np.int32] | None:
    """The new code of each sensitive code when an ordered t-closeness model states a value order other than
    the code order (``order='string'``, ARX's order of a string attribute, or an explicit one): the engine's
    ordered EMD runs over the codes in code order, so the codes are renumbered by their rank in the stated
    order. Every other model the engine evaluates treats the values alike (a count per value; the
    hierarchical EMD walks the hierarchy up from each leaf, whose leaves are renumbered with the codes), so
    their verdicts do not change. None: the code order (no renumbering). Two ordered models on different
    orders are refused."""
    orders = {None if (p := m_.value_order(table, sa)) is None else tuple(p.tolist())
              for m_ in mlist if isinstance(m_, OrderedDistanceTCloseness)}
    if len(orders) > 1:
        raise ValueError(f"{caller} supports one value order per sensitive attribute; the OrderedDistanceTCloseness "
                         f"models given order {sa!r} differently.")
    perm = next(iter(orders), None)
    if perm is None:
        return None
    if len(perm) != m:
        raise ValueError(f"The sensitive attribute {sa!r} has {m} values in the engine and {len(perm)} in its "
                         f"dictionary; an ordered t-closeness with a stated order needs them to agree.")
    rank = np.empty(m, dtype=np.int32)
    rank[np.asarray(perm, dtype=np.int64)] = np.arange(m, dtype=np.int32)
    return rank


def _relabel_leaves(arr: NDArray[np.int32], rank: NDArray[np.int32]) -> NDArray[np.int32]:
    """A per-node array of the sensitive hierarchy (leaves first: node v < m is code v) with its leaves'
    entries moved to their renumbered codes (empty stays empty)."""
    if arr.size == 0:
        return arr
    out = arr.copy()
    out[rank] = arr[:rank.size]
    return out


# ---------------------------------------------------------------------------------------------- validation
def _check_table(table: Any, caller: str) -> Table:
    tab = check_instance(table, "table", caller, Table, "an anoncore Table")
    if tab.n_rows == 0:
        raise ValueError(f"The table given to {caller} is empty.")
    if not tab.quasi_identifiers:
        raise ValueError(f"{caller} needs a table with at least one quasi-identifier.")
    for q in tab.quasi_identifiers:
        if tab.hierarchy(q) is None:
            raise ValueError(f"Quasi-identifier {q!r} has no hierarchy: full-domain generalization needs one "
                             f"hierarchy per quasi-identifier.")
    return tab


def _check_weights(weights: Any, table: Table, metric: str, caller: str) -> list[float]:
    """Loss's attribute weights (ARX's ``attribute_weights``): {quasi-identifier: weight >= 0}; the others keep
    ARX's default 0.5; each is divided by the largest in the kernel. [] (all equal) when None."""
    if weights is None:
        return []
    if not isinstance(weights, Mapping):
        raise TypeError(f"The 'weights' parameter of {caller} must be a dict {{quasi-identifier: weight}} or None. "
                        f"Got {type(weights).__name__} instead.")
    if metric != "loss":
        raise ValueError(f"The 'weights' parameter of {caller} applies to metric='loss' only. Got metric={metric!r}.")
    qis = list(table.quasi_identifiers)
    out = [0.5] * len(qis)
    for name, w in weights.items():
        if name not in qis:
            raise ValueError(f"The 'weights' parameter of {caller} names {name!r}, which is not a quasi-identifier "
                             f"of the table; quasi-identifiers: {qis}.")
        if isinstance(w, bool) or not isinstance(w, (int, float, np.integer, np.floating)) or not (
                math.isfinite(float(w)) and float(w) >= 0.0):
            raise ValueError(f"The weight of {name!r} in the 'weights' parameter of {caller} must be a finite "
                             f"float >= 0. Got {w!r} instead.")
        out[qis.index(name)] = float(w)
    if max(out) <= 0.0:
        raise ValueError(f"The 'weights' parameter of {caller} must give some quasi-identifier a positive weight.")
    return out


def _as_models(models: Any, caller: str) -> list[Any]:
    if models is None:
        raise TypeError(f"The 'models' parameter of {caller} must be a privacy model or a list of them. "
                        f"Got None instead.")
    if not isinstance(models, PrivacyModel) and not hasattr(models, "__iter__"):
        raise TypeError(f"The 'models' parameter of {caller} must be a privacy model or a list of them. "
                        f"Got {type(models).__name__} instead.")
    # (any one model, the ones this search refuses too: their refusal below names them)
    lst = [models] if isinstance(models, PrivacyModel) or type(models).__name__ in _MODEL_KINDS else list(models)
    if not lst:
        raise ValueError(f"The 'models' parameter of {caller} must hold at least one privacy model.")
    for m in lst:
        if type(m).__name__ not in _MODEL_KINDS and not _derives_k(m):
            risk = " It is a risk-based model: anoncore.risk.risk_lattice_search searches with it, audit() checks " \
                   "it." if isinstance(m, RISK_MODELS) else ""
            raise TypeError(f"{caller} does not support the model {m!r}; supported: {sorted(_MODEL_KINDS)}.{risk}")
        why = m.lattice_unsupported() if hasattr(m, "lattice_unsupported") else None
        if why:
            raise ValueError(f"{caller} does not support {why}; audit() checks it, and "
                             "anoncore.risk.risk_lattice_search searches with it.")
    return lst


def _derives_k(m: Any) -> bool:
    """ARX's estimated k-map (``KMap(estimator=...)``): a k-anonymity with a k derived from the table's size."""
    return type(m).__name__ == "KMap" and bool(getattr(m, "derives_k", False))


def _engine_models(mlist: list[Any], n_rows: int) -> list[Any]:
    """The models as the engine evaluates them: ARX's estimated k-map as the k-anonymity of its derived k on a
    table of ``n_rows`` records (:meth:`anoncore.models.KMap.as_k_anonymity`); the others as given."""
    return [m.as_k_anonymity(n_rows) if _derives_k(m) else m for m in mlist]


# ---------------------------------------------------------------------------------------------- problem
@dataclass(frozen=True, slots=True)
class LatticeProblem:
    """A table, its models, metric and suppression limit compiled for the lattice kernel.

    Build with :meth:`build`; :meth:`evaluate` gives the feasibility, suppressed rows and objective of a node.
    """

    table: Table
    models: tuple[Any, ...]
    suppression_limit: float
    limit: int
    metric: str
    heights: tuple[int, ...]
    engine: _core.lattice.Engine
    sensitive: str | None
    aggregate: str = "geometric_mean"
    gs_factor: float = 0.5
    weights: tuple[float, ...] = ()
    n_threads: int | None = None  # (as given: the run's audit takes the same)

    @classmethod
    def build(cls, table: Table, models: Any, suppression_limit: float = 0.0, metric: str = "loss",
              gs_factor: float = 0.5, aggregate: str = "geometric_mean", n_threads: int | None = None,
              caller: str = "lattice_search", weights: Any = None) -> LatticeProblem:
        table = _check_table(table, caller)
        mlist = _as_models(models, caller)
        sup = check_float(suppression_limit, "suppression_limit", caller, 0, 1)
        metric = check_option(metric, "metric", caller, list(METRICS))
        gs = check_float(gs_factor, "gs_factor", caller, 0, 1)
        agg = check_option(aggregate, "aggregate", caller, list(_AGGREGATES))
        wts = _check_weights(weights, table, metric, caller)
        nt = check_n_threads(n_threads, caller)
        crit = []
        sa_name: str | None = None
        for m in _engine_models(mlist, table.n_rows):
            needs_sa = _MODEL_KINDS[type(m).__name__][3]
            if needs_sa:
                s = table.sensitive_column(getattr(m, "sensitive", None), caller=type(m).__name__)
                if sa_name is not None and s != sa_name:
                    raise ValueError(f"{caller} supports models on one sensitive attribute; got {sa_name!r} "
                                     f"and {s!r}.")
                sa_name = s
                if type(m).__name__ == "HierarchicalDistanceTCloseness" and table.hierarchy(s) is None:
                    raise ValueError(f"HierarchicalDistanceTCloseness needs a hierarchy on the sensitive attribute "
                                     f"{s!r}; it has none.")
            crit.append(_criterion(m))
        n = table.n_rows
        gens, lcs, nus, heights = _qi_arrays(table, metric in ("entropy", "entropy_nm"))
        rank: NDArray[np.int32] | None = None
        if sa_name is not None:
            sa_codes = np.ascontiguousarray(table.column(sa_name), dtype=np.int32)
            sh = table.hierarchy(sa_name)
            m_sa = int(sh.n_leaves) if sh is not None else int(table.cardinality(sa_name))
            sa_parent = np.ascontiguousarray(sh.parent if sh is not None else np.zeros(0), dtype=np.int32)
            sa_height = np.ascontiguousarray(sh.node_height if sh is not None else np.zeros(0), dtype=np.int32)
            rank = _sensitive_rank(mlist, table, sa_name, m_sa, caller)
            if rank is not None:  # the codes renumbered in the ordered EMD's value order (_sensitive_rank)
                sa_codes = np.ascontiguousarray(rank[sa_codes])
                sa_parent, sa_height = _relabel_leaves(sa_parent, rank), _relabel_leaves(sa_height, rank)
        else:
            sa_codes = np.zeros(0, dtype=np.int32)
            m_sa = 0
            sa_parent = np.zeros(0, dtype=np.int32)
            sa_height = np.zeros(0, dtype=np.int32)
        limit = math.floor(sup * n)
        # The engine's bottom frequency set (the rows grouped on their leaf values, with the histograms of the
        # sensitive column) depends on the frozen table alone: built once per table, layout and sensitive
        # column, then reused by later problems on the same table (it skips the pass over the rows).
        bkey = ("lattice_bottom", _packed_keys(), sa_name, None if rank is None else rank.tobytes())
        bottom = _CACHE.of(table).get(bkey)
        cfg = _core.lattice.EngineConfig()
        # the engine reads the quasi-identifier columns of the table's codes in place (no copy of them)
        cfg.codes, cfg.qi_columns = table.codes, table.qi_column_indices()
        cfg.gens, cfg.heights = gens, np.asarray(heights, dtype=np.int32)
        cfg.leaf_counts, cfg.nu_bases = lcs, nus
        cfg.sa_codes, cfg.m, cfg.sa_parent, cfg.sa_height = sa_codes, m_sa, sa_parent, sa_height
        cfg.criteria, cfg.metric, cfg.aggregate, cfg.gs_factor = crit, METRICS[metric], _AGGREGATES[agg], gs
        cfg.limit, cfg.n_threads, cfg.packed, cfg.bottom = limit, nt, _packed_keys(), bottom
        cfg.weights = wts
        engine = _core.lattice.Engine(cfg)
        if bottom is None:
            _CACHE.of(table)[bkey] = engine.bottom_state()
        return cls(table, tuple(mlist), sup, limit, metric, tuple(heights), engine, sa_name, agg, gs, tuple(wts),
                   nt or None)

    def rank_vector(self, levels: Sequence[int], suppressed: NDArray[Any]) -> tuple[float, ...]:
        """RANK's sorted vector of a node (:func:`rank_vector`); the RANK walk's hook."""
        return rank_vector(self, levels, suppressed)

    def geometric_seed(self) -> tuple[int, ...] | None:
        """The optimum under Loss's geometric mean (:func:`_geometric_seed`); the RANK walk's hook."""
        return _geometric_seed(self)

    @property
    def distinct(self) -> tuple[tuple[int, ...], ...]:
        """Distinct values of every quasi-identifier at every level (Datafly's choice), once per table."""
        return _distinct_per_level(self.table)

    @property
    def n_qi(self) -> int:
        return len(self.heights)

    def evaluate(self, levels: Sequence[int]) -> dict[str, Any]:
        """Feasibility, suppressed rows, number of classes and objective of one node."""
        return _node_dict(self.engine.evaluate(np.asarray(levels, dtype=np.int32)))

    def evaluate_many(self, levels: Sequence[Sequence[int]]) -> list[dict[str, Any]]:
        arr = np.ascontiguousarray(np.asarray(levels, dtype=np.int32).reshape(-1, self.n_qi))
        return [_node_dict(r) for r in self.engine.evaluate_many(arr)]

    def publish(self, levels: Sequence[int], known: Any = None) -> tuple[Partition, dict[str, Any]]:
        """The published partition of a node (violating classes suppressed).

        ``known``: the kernel's result for this node when it is feasible under a zero suppression limit (so no
        class violates a model): the classes are then not judged again, and ``known`` is returned as the
        result (its ``n_classes`` from the grouping). The output audit checks the partition independently.
        """
        lv = np.asarray(levels, dtype=np.int32)
        clean = known is not None and self.limit == 0 and bool(known.feasible)
        node, labels, sup, first = self.engine.classify(lv, clean)
        res = _node_dict(node)
        if clean:
            assert known is not None
            res = {**_node_dict(known), "n_classes": node.n_classes}
        return _partition_from_labels(self.table, [int(x) for x in levels], labels, int(res["n_classes"]),
                                      sup, first), res

    def nodes_at_height(self, height: int) -> list[tuple[int, ...]]:
        """All nodes with sum of levels == height, in lexicographic order."""
        return list(_compositions(height, self.heights))


def _node_dict(r: Any) -> dict[str, Any]:
    """A kernel NodeResult as the dict of LatticeProblem.evaluate (and of the optimal search's trace)."""
    return {"feasible": r.feasible, "n_classes": r.n_classes, "suppressed": r.suppressed,
            "suppressed_size": r.suppressed_size, "metric": r.metric, "lower_bound": r.lower_bound}


def _qi_arrays(table: Table, needs_nu: bool) -> tuple[list[NDArray[np.int32]], list[NDArray[np.int64]],
                                                        list[NDArray[np.float64]], list[int]]:
    """Per-QI arrays of the kernel: the dense generalization maps (leaf code x level), the leaf counts of every
    level's nodes (both from the hierarchy, _hierarchy_levels), the non-uniform entropy terms (only when
    ``needs_nu``; zeros otherwise) and the heights. Computed once per table and kept in the table's cache (a
    Table and its hierarchies are frozen and their arrays read-only, like ``qi_codes``)."""
    key = ("lattice_qi_arrays", bool(needs_nu))
    cached = _CACHE.of(table).get(key)
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    gens, lcs, nus, heights = [], [], [], []
    qc = table.qi_codes() if needs_nu else None
    for j, q in enumerate(table.quasi_identifiers):
        h = table.hierarchy(q)
        assert h is not None
        H = int(h.height)
        gen, lcc, level_nodes = _hierarchy_levels(h)
        nu = np.zeros(H + 1)
        if qc is not None:
            # the non-uniform entropy terms (one Python loop per level), only for the entropy metrics
            counts = np.bincount(qc[:, j], minlength=h.n_leaves).astype(np.int64)
            order = _first_appearance(qc[:, j], h.n_leaves)
            for lv in range(H + 1):
                dense = gen[:, lv]
                b = np.bincount(dense, weights=counts, minlength=level_nodes[lv])
                base = 0.0
                for v in order:  # ARX sums in dictionary (first appearance) order
                    av = float(counts[v])
                    base += av * (math.log(av / float(b[dense[v]])) / math.log(2.0))
                nu[lv] = -base
        nu.setflags(write=False)
        gens.append(gen)
        lcs.append(lcc)
        nus.append(nu)
        heights.append(H)
    out = (gens, lcs, nus, heights)
    _CACHE.of(table)[key] = out
    return out


def _distinct_per_level(table: Table) -> tuple[tuple[int, ...], ...]:
    """Distinct values of every quasi-identifier at every level over the table's rows (kept in its cache)."""
    key = ("lattice_distinct",)
    cached = _CACHE.of(table).get(key)
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    qc = table.qi_codes()
    out = []
    for j, q in enumerate(table.quasi_identifiers):
        h = table.hierarchy(q)
        assert h is not None
        gen, _, level_nodes = _hierarchy_levels(h)
        present = np.bincount(qc[:, j], minlength=h.n_leaves) > 0
        out.append(tuple(int(np.count_nonzero(np.bincount(gen[present, lv], minlength=level_nodes[lv])))
                         for lv in range(int(h.height) + 1)))
    res = tuple(out)
    _CACHE.of(table)[key] = res
    return res


def _hierarchy_levels(h: Hierarchy) -> tuple[NDArray[np.int32], NDArray[np.int64], list[int]]:
    """The hierarchy's dense generalization map (leaf x level: the node's rank among the level's nodes), the
    leaf counts of every level's nodes (concatenated) and the number of nodes per level. Derived from the
    frozen hierarchy alone: kept in its memo, so tables sharing hierarchies compute them once."""
    cached = h._memo.get("lattice_levels")
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    H = int(h.height)
    gen = np.empty((h.n_leaves, H + 1), dtype=np.int32)
    lc_parts, sizes = [], []
    for lv in range(H + 1):
        nodes, dense = np.unique(h.ancestor[:, lv], return_inverse=True)
        gen[:, lv] = dense
        lc_parts.append(h.leaf_count[nodes].astype(np.int64))
        sizes.append(len(nodes))
    gen = np.ascontiguousarray(gen)
    lcc = np.ascontiguousarray(np.concatenate(lc_parts))
    for a in (gen, lcc):
        a.setflags(write=False)
    out = (gen, lcc, sizes)
    h._memo["lattice_levels"] = out
    return out


def _partition_from_labels(table: Table, levels: list[int], labels: NDArray[np.int64], n_classes: int,
                           suppressed: NDArray[np.bool_], first: NDArray[np.int64] | None = None) -> Partition:
    """The :meth:`Partition.from_levels` partition, from the kernel's class labels (dense, first appearance
    over the rows, the same numbering as ``from_levels``): only one row per class is generalized here.
    ``first`` (the first row of every class, when the kernel gives it) saves a pass over the labels."""
    if first is None:
        first = np.empty(n_classes, dtype=np.int64)
        first[labels[::-1]] = np.arange(labels.shape[0] - 1, -1, -1, dtype=np.int64)
    rep = table.codes[first][:, table.qi_column_indices()]  # the representatives' QIs (not all rows copied)
    gen_node = np.empty((n_classes, len(levels)), dtype=np.int32)
    gen_lo = np.empty_like(gen_node)
    gen_hi = np.empty_like(gen_node)
    for j, q in enumerate(table.quasi_identifiers):
        h = table.hierarchy(q)
        assert h is not None
        node = h.ancestor[rep[:, j], levels[j]]
        gen_node[:, j] = node
        gen_lo[:, j] = h.leaf_start[node]
        gen_hi[:, j] = gen_lo[:, j] + h.leaf_count[node] - 1
    arrays = [labels, suppressed, gen_lo, gen_hi, gen_node]
    for a in arrays:
        a.setflags(write=False)
    return Partition(table, labels, suppressed, n_classes, gen_lo, gen_hi, gen_node, tuple(levels))


def _first_appearance(col: NDArray[np.int32], n_codes: int) -> NDArray[np.int64]:
    """Codes present in ``col`` in order of first appearance (ARX's dictionary order). O(n)."""
    n = col.shape[0]
    first = np.full(n_codes, n, dtype=np.int64)
    first[col[::-1]] = np.arange(n - 1, -1, -1, dtype=np.int64)  # repeated indices: the last write wins
    present = np.flatnonzero(first < n)
    return present[np.argsort(first[present], kind="stable")].astype(np.int64)


def _compositions(total: int, heights: Sequence[int]) -> Any:
    r = len(heights)
    suffix = [0] * (r + 1)
    for i in range(r - 1, -1, -1):
        suffix[i] = suffix[i + 1] + heights[i]
    cur = [0] * r

    def rec(i: int, rem: int) -> Any:
        if i == r:
            if rem == 0:
                yield tuple(cur)
            return
        lo = max(0, rem - suffix[i + 1])
        for v in range(lo, min(heights[i], rem) + 1):
            cur[i] = v
            yield from rec(i + 1, rem - v)

    yield from rec(0, total)


#: ``max_nodes`` of ``anoncore anonymize --algorithm flash`` unless ``--max-nodes`` is given.
DEFAULT_MAX_NODES = 50_000_000


def _check_lattice_size(table: Any, max_nodes: Any, caller: str) -> None:
    """Refuse a lattice of more than ``max_nodes`` nodes before any work (the size is prod(h_i + 1))."""
    if max_nodes is not None and (isinstance(max_nodes, bool) or not isinstance(max_nodes, (int, np.integer))
                                  or max_nodes < 1):
        raise ValueError(f"The 'max_nodes' parameter of {caller} must be an int >= 1 or None. Got {max_nodes!r} "
                         f"instead.")
    if max_nodes is None or not isinstance(table, Table):
        return
    heights = []
    for q in table.quasi_identifiers:
        h = table.hierarchy(q)
        if h is None:
            return  # LatticeProblem.build reports the missing hierarchy
        heights.append(int(h.height))
    size = lattice_size(heights)
    if size > max_nodes:
        raise ValueError(f"The generalization lattice of {caller} has {size:,} nodes (prod of hierarchy heights + 1: "
                         f"{' x '.join(str(x + 1) for x in heights)}), more than max_nodes={int(max_nodes):,}; the "
                         f"optimal search may visit a large share of it. Use a heuristic (strategy='datafly', "
                         f"'greedy' or 'samarati'; command line: --algorithm datafly|greedy|samarati), fewer "
                         f"quasi-identifiers or shorter hierarchies, or raise max_nodes (None: no limit; "
                         f"command line: --max-nodes).")


def lattice_size(heights: Sequence[int]) -> int:
    """Number of nodes of the full-domain lattice, prod(h_i + 1) (spec Prop. 3.1).

    Examples
    --------
    >>> lattice_size([2, 1, 6])
    42
    """
    return math.prod(int(h) + 1 for h in heights)  # (exact at any size: Python integers)


def level_sizes(heights: Sequence[int]) -> list[int]:
    """Number of nodes per lattice height (coefficients of prod_i (1 + x + ... + x^h_i), spec Eq. 3.4-3.6).

    Examples
    --------
    >>> level_sizes([2, 1, 6])
    [1, 3, 5, 6, 6, 6, 6, 5, 3, 1]
    """
    c = [1]
    for h in heights:
        d = [0] * (len(c) + int(h))
        for a, ca in enumerate(c):
            for b in range(int(h) + 1):
                d[a + b] += ca
        c = d
    return c


# ---------------------------------------------------------------------------------------------- results
def _finish(problem: LatticeProblem, algorithm: str, levels: Sequence[int], params: dict[str, Any],
            trace: tuple[Any, ...], stats: dict[str, Any], known: Any = None) -> Result:
    t0 = time.perf_counter()
    part, res = problem.publish(levels, known)
    stats = dict(stats)
    stats["publish_seconds"] = time.perf_counter() - t0
    params = dict(params)
    params.update(models=problem.models, suppression_limit=problem.suppression_limit, metric=problem.metric)
    # the one audit of the run (static/_finish.py): every guarantee recomputed from the partition and the
    # original values, never taken from the search
    return finish(algorithm, problem.table, part, problem.models, parameters=params,
                  metrics={problem.metric: float(res["metric"])}, trace=trace, stats=stats,
                  extra={"levels": tuple(int(x) for x in levels)}, n_threads=problem.n_threads)


def _infeasible(problem: LatticeProblem, caller: str) -> InfeasibleError:
    top = list(problem.heights)
    res = problem.evaluate(top)
    return InfeasibleError(
        f"{caller}: no lattice node satisfies the models within the suppression limit: even the top node "
        f"{top} suppresses {res['suppressed']} rows, above the limit of {problem.limit} "
        f"(suppression_limit={problem.suppression_limit} of {problem.table.n_rows} rows).")


# ---------------------------------------------------------------------------------------------- RANK
class RankProblem(Protocol):
    """What the RANK walk needs of a problem: a :class:`LatticeProblem`, or a frequency set's
    (anoncore.distributed.search)."""

    @property
    def engine(self) -> Any: ...
    @property
    def heights(self) -> tuple[int, ...]: ...
    @property
    def limit(self) -> int: ...
    def evaluate(self, levels: Sequence[int]) -> dict[str, Any]: ...
    def evaluate_many(self, levels: Sequence[Sequence[int]]) -> list[dict[str, Any]]: ...
    def rank_vector(self, levels: Sequence[int], suppressed: NDArray[Any]) -> tuple[float, ...]: ...
    def geometric_seed(self) -> tuple[int, ...] | None: ...


def rank_vector(problem: LatticeProblem, levels: Sequence[int], suppressed: NDArray[Any]) -> tuple[float, ...]:
    """ARX's RANK aggregate of Loss: the weighted per-QI losses w_j x_j (ARX-ORACLES.md §7.1, weights divided
    by the largest) of a node whose rows ``suppressed`` (bool per row) are suppressed, sorted descending.
    Computed with the engine's operations in its order (objective.cpp ``loss_value``), so that its first
    component is the bit-identical engine value under the ``max`` aggregate."""
    table = problem.table
    hs = [table.hierarchy(q) for q in table.quasi_identifiers]
    return weighted_rank_vector(table.qi_codes(), None, hs, levels, suppressed, problem.gs_factor,
                                problem.weights)


def weighted_rank_vector(codes: NDArray[Any], counts: NDArray[Any] | None, hierarchies: Sequence[Any],
                         levels: Sequence[int], suppressed: NDArray[Any], gs_factor: float,
                         weights: Sequence[float]) -> tuple[float, ...]:
    """:func:`rank_vector` of rows given as leaf ``codes`` (items x QIs) each standing for ``counts`` rows
    (``None``: one each, a table's rows); ``suppressed`` is one bool per item."""
    cnt = None if counts is None else np.asarray(counts, dtype=np.int64)
    sup = np.asarray(suppressed, dtype=bool)
    N = float(codes.shape[0] if cnt is None else int(cnt.sum()))
    g = gs_factor
    sF = 2.0 * g if g < 0.5 else 1.0
    gF = 1.0 if g <= 0.5 else 1.0 - 2.0 * (g - 0.5)
    S = int(np.count_nonzero(sup)) if cnt is None else int(cnt[sup].sum())
    w = list(weights) or [1.0] * len(hierarchies)
    wmax = max(w)
    out = []
    for j, h in enumerate(hierarchies):
        assert h is not None
        gen, lcc, sizes = _hierarchy_levels(h)
        lv = int(levels[j])
        off = int(sum(sizes[:lv]))
        per_row = lcc[off + gen[codes[:, j], lv]].astype(np.int64)
        if cnt is not None:
            per_row = per_row * cnt
        rows = float(h.n_leaves)
        if S == 0:
            A = gF * (float(per_row.sum()) / rows)
        else:
            kept = float(per_row[~sup].sum())
            so = float(per_row[sup].sum()) / rows
            A = gF * (kept / rows) + (float(S) if sF == 1.0 else so + sF * (float(S) - so))
        mn = gF * N / rows
        x = math.floor(max(0.0, (A - mn) / (N - mn)) * 1e10) / 1e10 if N - mn > 0.0 else 0.0
        out.append((w[j] / wmax) * x)
    return tuple(sorted(out, reverse=True))


def _rank_refine(problem: RankProblem, levels: Sequence[int], best: float) -> tuple[tuple[int, ...], int]:
    """The RANK optimum given an optimum ``levels`` of the ``max`` aggregate (value ``best``): RANK compares
    the sorted vectors lexicographically, so its optimum is among the feasible nodes whose largest weighted
    loss equals ``best``. Those lie in the box of levels whose own lower-bound term is <= ``best`` (the per-QI
    Loss without suppression never exceeds the Loss with it); every node of the box is evaluated, the ties
    classified and compared by their vectors, then by their levels (the engine's tie rule). Returns the node
    and the number of nodes evaluated."""
    r = len(problem.heights)
    axes = []
    for j, H in enumerate(problem.heights):
        ok = []
        for lv in range(H + 1):
            node = np.zeros(r, dtype=np.int32)
            node[j] = lv
            if problem.engine.cheap_lower_bound(node) <= best:
                ok.append(lv)
        axes.append(ok)
    box = list(itertools.product(*axes))
    ties = [nd for nd, res in zip(box, problem.evaluate_many(box)) if res["feasible"] and res["metric"] == best]
    if len(ties) <= 1:
        return tuple(int(x) for x in levels), len(box)
    keyed: list[tuple[tuple[float, ...], tuple[int, ...]]] = []
    for nd in ties:
        _, _, sup, _ = problem.engine.classify(np.asarray(nd, dtype=np.int32), False)
        keyed.append((problem.rank_vector(nd, sup), nd))
    return min(keyed)[1], len(box)


def _probe_up(problem: RankProblem, node: NDArray[np.int32], mono: bool) -> tuple[NDArray[np.int32], int]:
    """A node above ``node`` (infeasible in a way that holds below it: the engine's tagging rule) that is still
    so: each QI in turn is raised as far as the rule keeps holding (binary search on its level). Returns it
    and the evaluations spent."""
    x = np.array(node, dtype=np.int32)
    spent = 0
    for j, H in enumerate(problem.heights):
        lo, hi = int(x[j]), int(H)  # lo holds; find the largest level that holds
        while lo < hi:
            mid = (lo + hi + 1) // 2
            x[j] = mid
            res = problem.evaluate(x.tolist())
            spent += 1
            if not res["feasible"] and (mono or res["suppressed_size"] > problem.limit):
                lo = mid
            else:
                hi = mid - 1
        x[j] = lo
    return x, spent


def _geometric_seed(problem: LatticeProblem) -> tuple[int, ...] | None:
    """The optimum of the same problem under Loss's geometric mean (the engine reuses the table's bottom)."""
    w = dict(zip(problem.table.quasi_identifiers, problem.weights)) if problem.weights else None
    geo = LatticeProblem.build(problem.table, problem.models, problem.suppression_limit, "loss",
                               problem.gs_factor, "geometric_mean", weights=w)
    out = geo.engine.optimal(False, True)
    return tuple(int(x) for x in out.levels) if out.feasible else None


#: Largest box (nodes) _rank_search enumerates with numpy; a larger one goes through _rank_refine.
_RANK_MAX_BOX = 2_000_000
#: _rank_search probes up from an infeasible node only while more candidates than this remain (a probe costs
#: about Σ log2(h_j) evaluations; a few candidates are cheaper to evaluate than to prune).
_RANK_PROBE_MIN = 128


def _rank_search(problem: RankProblem, levels: Sequence[int], best: float,
                 suppressed: int) -> tuple[tuple[int, ...], int]:
    """The RANK optimum given an optimum ``levels`` of the ``max`` aggregate (value ``best``, ``suppressed``
    rows), by a best-first walk over a vector bound instead of evaluating the whole box (_rank_refine).

    Each node's per-QI Loss terms without suppression (the engine's per-(QI, level) doubles) bound its terms
    with any suppression from below, so their descending sort bounds its RANK vector from below, component
    by component, hence lexicographically. The nodes of the box (levels whose own term is <= ``best``) are
    sorted by (bound vector, levels) and walked in that order: a node is evaluated only while its (bound,
    levels) precedes the incumbent's (vector, levels), and the walk stops at the first that does not (every
    later one is no better). A feasible node without suppression has its bound as vector (no classify).
    Returns the node and the number of nodes evaluated."""
    r = len(problem.heights)
    terms: list[list[float]] = []
    for j, H in enumerate(problem.heights):
        node = np.zeros(r, dtype=np.int32)
        col = []
        for lv in range(H + 1):
            node[j] = lv
            col.append(float(problem.engine.cheap_lower_bound(node)))
        terms.append(col)
    axes = [np.array([lv for lv, t in enumerate(col) if t <= best], dtype=np.int32) for col in terms]
    size = math.prod(len(a) for a in axes)
    if size > _RANK_MAX_BOX:
        return _rank_refine(problem, levels, best)
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, r)  # levels in lexicographic order
    bound = np.stack([np.asarray(terms[j])[grid[:, j]] for j in range(r)], axis=1)
    bound = -np.sort(-bound, axis=1)  # descending
    order = np.lexsort(tuple(bound[:, j] for j in range(r - 1, -1, -1)), axis=0)  # stable: ties keep levels order
    if problem.limit == 0:
        # a feasible node suppresses nothing, so its vector is its bound, and one whose largest term is below
        # the max optimum would contradict it: such nodes are infeasible
        order = order[bound[order, 0] == best]

    def vector(nd: tuple[int, ...], res: dict[str, Any], b: tuple[float, ...]) -> tuple[float, ...]:
        if res["suppressed"] == 0:
            return b
        _, _, sup, _ = problem.engine.classify(np.asarray(nd, dtype=np.int32), False)
        return problem.rank_vector(nd, sup)

    inc_lv = tuple(int(x) for x in levels)
    inc_b = tuple(float(x) for x in sorted((terms[j][inc_lv[j]] for j in range(r)), reverse=True))
    inc = vector(inc_lv, {"suppressed": suppressed}, inc_b)
    # a second incumbent: the optimum of the geometric mean of the same terms (one more search; on Adult it is
    # often the RANK optimum or close to it), which tightens the walk's cut from the start
    seed = problem.geometric_seed() if len(order) > 4 * _RANK_PROBE_MIN else None
    if seed is not None and seed != inc_lv:
        res = problem.evaluate(seed)
        if res["feasible"] and res["metric"] == best:
            sb = tuple(float(x) for x in sorted((terms[j][seed[j]] for j in range(r)), reverse=True))
            v = vector(seed, res, sb)
            inc, inc_lv = min((inc, inc_lv), (v, seed))
    # Infeasible nodes whose infeasibility holds below them (a monotone predicate, or the monotone part of
    # the criteria over the limit: the engine's tagging rule), each raised by _probe_up; a candidate below
    # one of them is skipped. Nodes are evaluated one by one (the engine's cache of frequency sets serves the
    # next roll-up).
    mono = bool(problem.engine.predicate_monotone)
    tags = np.empty((0, r), dtype=np.int32)

    def cutoff() -> int:
        """First position of ``order`` whose (bound, levels) is not before the incumbent's (vector, levels)."""
        key = (inc, inc_lv)
        lo, hi = 0, len(order)
        while lo < hi:
            mid = (lo + hi) // 2
            i = int(order[mid])
            if (tuple(float(x) for x in bound[i]), tuple(int(x) for x in grid[i])) < key:
                lo = mid + 1
            else:
                hi = mid
        return lo

    evaluated = 0
    pos, end = 0, cutoff()
    chunk_end = 0
    below: NDArray[np.bool_] = np.zeros(0, dtype=bool)
    n_tags0 = 0  # tags checked for the current chunk at once; later ones one by one
    while pos < end:
        if pos >= chunk_end:  # the next chunk of candidates against every tag at once
            chunk_end = min(end, pos + 256)
            nodes = grid[order[pos:chunk_end]]
            below = np.zeros(len(nodes), dtype=bool)
            if len(tags):
                cover = np.all(nodes[:, None, :] <= tags[None, :, :], axis=2)
                below = np.asarray(np.any(cover, axis=1), dtype=bool)
            n_tags0 = len(tags)
        i = int(order[pos])
        skip = bool(below[pos - (chunk_end - len(below))])
        pos += 1
        node = grid[i]
        if skip or (len(tags) > n_tags0 and bool((node <= tags[n_tags0:]).all(axis=1).any())):
            continue
        nd = tuple(int(x) for x in node)
        if nd == inc_lv:
            continue
        res = problem.evaluate(node)
        evaluated += 1
        if not res["feasible"]:
            if (mono or res["suppressed_size"] > problem.limit) and end - pos > _RANK_PROBE_MIN:
                top, n_probe = _probe_up(problem, node, mono)
                evaluated += n_probe
                tags = np.concatenate([tags, top[None, :]])
            continue
        if res["metric"] == best:
            v = vector(nd, res, tuple(float(x) for x in bound[i]))
            if (v, nd) < (inc, inc_lv):
                inc, inc_lv = v, nd
                end = min(end, cutoff())
    return inc_lv, evaluated


# ---------------------------------------------------------------------------------------------- searches
def lattice_search(
    table: Table,
    models: Any,
    *args: Any,
    suppression_limit: float = UNSET,
    metric: str = UNSET,
    strategy: str = UNSET,
    n_threads: int | None = UNSET,
    gs_factor: float = 0.5,
    aggregate: str = "geometric_mean",
    with_trace: bool = False,
    weights: Mapping[str, float] | None = None,
    max_nodes: int | None = None,
) -> Result:
    """Full-domain generalization (global recoding) with record suppression under privacy models.

    Parameters
    ----------
    table : Table
        Encoded table; every quasi-identifier needs a hierarchy.
    models : model or list of models
        Any combination of ``KAnonymity``, ``DistinctLDiversity``, ``EntropyLDiversity``,
        ``RecursiveCLDiversity``, ``EqualDistanceTCloseness``, ``OrderedDistanceTCloseness``,
        ``HierarchicalDistanceTCloseness``, ``HellingerTCloseness``, ``BasicBetaLikeness``,
        ``EnhancedBetaLikeness``, ``DeltaDisclosure`` (all on the same sensitive attribute).
    suppression_limit : float in [0, 1], default=0.0
        Largest fraction of rows that may be suppressed (ARX semantics: ``floor(limit * n_rows)`` rows).
    metric : {'loss', 'dm', 'dm_star', 'entropy', 'entropy_nm', 'precision', 'precision_nm', 'height', \
'aecs', 'kl', 'kl_arx', 'ambiguity'}
        Objective, as ARX defines it (ARX-ORACLES.md §7): ARX's Loss, discernibility (non-monotone DM and
        monotone DM*), non-uniform entropy (monotone / non-monotone), precision, height, average equivalence
        class size, KL divergence and ambiguity (:func:`anoncore.metrics.kl_divergence`: ``'kl'`` the paper's
        reading, ``'kl_arx'`` ARX's; :func:`anoncore.metrics.ambiguity`).
    strategy : {'optimal', 'datafly', 'samarati', 'greedy', 'exhaustive'}, default='optimal'
    n_threads : int or None, default=None
        Threads inside the evaluation of a large node (the groupings, histogram merges and value masks of
        frequency sets of at least 65,536 classes, the bottom's grouping from 65,536 rows and its merge from
        524,288 rows; at most the cores other processes leave idle) and for Samarati's level scans (None: all
        cores). The optimal search evaluates the same nodes in the same order at any thread count, so the
        result and the statistics do not depend on it; with small frequency sets (Adult) it runs on one
        thread.
    gs_factor : float in [0, 1], default=0.5
        ARX's generalization/suppression factor of Loss, entropy and precision.
    aggregate : {'geometric_mean', 'arithmetic_mean', 'sum', 'max', 'rank'}, default='geometric_mean'
        Aggregation of Loss over the quasi-identifiers. ``'rank'`` is ARX's RANK: the weighted per-QI losses
        sorted descending and compared lexicographically (:func:`rank_vector`); the reported Loss is the first
        component (the ``'max'`` value). The heuristic strategies compare that first component only.
    with_trace : bool, default=False
        Record every node visited by the optimal search (evaluated or decided by tagging).
    weights : dict {quasi-identifier: float >= 0} or None, default=None
        Attribute weights of Loss, as ARX's ``attribute_weights`` (ARX-ORACLES.md §7.1): quasi-identifiers not
        named keep ARX's default 0.5, and every weight is divided by the largest, so that None (equal weights)
        is all 1. The aggregates become Π (w_j x_j + 1)^(1/D) − 1, Σ (x_j / D) w_j, Σ w_j x_j and max w_j x_j.
    max_nodes : int or None, default=None
        Largest lattice (``prod(h_i + 1)`` nodes, :func:`lattice_size`) the ``'optimal'`` and ``'exhaustive'``
        strategies accept; a larger one is refused up front with a message suggesting a heuristic, since these
        searches may visit a large share of it. None: no limit (predictive tagging often decides huge
        lattices quickly, e.g. 2**70 nodes with two varying columns). The command line uses
        :data:`DEFAULT_MAX_NODES` (``--max-nodes``). The heuristics walk paths or levels and are not limited.
        The search exposes no progress hook: the command line shows the lattice size and the elapsed time.

    Returns
    -------
    Result
        ``partition`` (levels in ``partition.levels``, suppressed rows flagged), ``achieved`` (levels, k,
        n_suppressed, n_classes), ``metrics`` ({metric: value}), ``trace`` and ``stats`` (nodes evaluated,
        nodes inferred by tagging, seconds, and ``phase_seconds``: the engine's seconds per phase, its build
        included, each with a ``_par`` twin for its calls on several threads, as
        :attr:`Engine.phase_seconds <anoncore._core.lattice.Engine.phase_seconds>` says).

    Raises
    ------
    InfeasibleError
        When no node (not even the top) satisfies the models within the limit.
    ValueError
        When the lattice has more than ``max_nodes`` nodes (strategies 'optimal' and 'exhaustive').

    Notes
    -----
    The optimal search is a best-first branch and bound over the lattice. Nodes are generated along a
    spanning tree (a node's children raise one level at or after the position of its last raised
    quasi-identifier), so no node list is materialised and any number of quasi-identifiers works. The queue
    is ordered by a lower bound of the objective that is monotone along the lattice (ARX's Loss without the
    suppression surcharge, monotone entropy or precision, or the parent's DM*). Predictive tagging: when
    feasibility is upward closed (k-anonymity / distinct-l, or any models with a 0 suppression limit) a
    feasible node makes all its generalizations feasible and an infeasible node all its specializations
    infeasible; an infeasible node triggers a Flash-like probe (a greedy path upward, binary search for its
    highest infeasible node) that tags a whole down-set. With non-monotone models only the monotone part
    tags infeasibility: classes below the minimal size, with too few distinct values, or whose set of
    sensitive values no admissible distribution fits (e.g. an EMD above t for every distribution on those
    values). The search stops when the lower bound of the queue head exceeds the best feasible objective, so
    the answer is the exact optimum (ties: lexicographically smallest levels). Frequency sets are rolled up
    from the nearest cached finer node.

    Examples
    --------
    >>> from anoncore.datasets import toy_table
    >>> from anoncore.models import KAnonymity
    >>> from anoncore.static.lattice import lattice_search
    >>> res = lattice_search(toy_table(), [KAnonymity(2)], metric="dm_star")
    >>> res.partition.levels, res.achieved["k"]
    ((1, 0), 2)
    """
    caller = "lattice_search"
    opts = positional_options(caller, args, ("suppression_limit", "metric", "strategy", "n_threads"),
                              {"suppression_limit": suppression_limit, "metric": metric, "strategy": strategy,
                               "n_threads": n_threads},
                              {"suppression_limit": 0.0, "metric": "loss", "strategy": "optimal", "n_threads": None})
    suppression_limit, metric, n_threads = opts["suppression_limit"], opts["metric"], opts["n_threads"]
    strategy = check_option(opts["strategy"], "strategy", caller, _STRATEGIES)
    check_bool(with_trace, "with_trace", caller)
    if strategy in ("optimal", "exhaustive"):
        _check_lattice_size(table, max_nodes, caller)
    problem = LatticeProblem.build(table, models, suppression_limit, metric, gs_factor, aggregate, n_threads,
                                   caller, weights)
    if strategy == "datafly":
        return _datafly(problem)
    if strategy == "samarati":
        return _samarati(problem)
    if strategy == "greedy":
        return _improved_greedy(problem, "outliers")
    if strategy == "exhaustive":
        return _exhaustive(problem)
    t0 = time.perf_counter()
    out = problem.engine.optimal(with_trace, _sweep())
    secs = time.perf_counter() - t0
    if not out.feasible:
        raise _infeasible(problem, caller)
    trace = tuple((tuple(lv), ("evaluated", "inferred_feasible", "inferred_infeasible")[how], _node_dict(res))
                  for lv, how, res in out.trace)
    stats = {"seconds": secs, "nodes_evaluated": out.evaluated, "nodes_inferred": out.inferred,
             "nodes_popped": out.popped, "search": "sweep" if out.swept else "queue",
             "lattice_size": lattice_size(problem.heights),
             "bottom_classes": problem.engine.bottom_classes, "rollup_work": problem.engine.rollup_work,
             "phase_seconds": problem.engine.phase_seconds}
    if problem.aggregate == "rank" and problem.metric == "loss":
        levels, stats["rank_nodes_evaluated"] = _rank_search(problem, out.levels, out.result.metric,
                                                             out.result.suppressed)
        stats["seconds"] = time.perf_counter() - t0
        if tuple(levels) != tuple(out.levels):
            return _finish(problem, "lattice_optimal", levels, {"strategy": "optimal"}, trace, stats)
    return _finish(problem, "lattice_optimal", out.levels, {"strategy": "optimal"}, trace, stats, out.result)


def _exhaustive(problem: LatticeProblem) -> Result:
    t0 = time.perf_counter()
    best: tuple[float, tuple[int, ...]] | None = None
    H = sum(problem.heights)
    for h in range(H + 1):
        nodes = problem.nodes_at_height(h)
        for lv, res in zip(nodes, problem.evaluate_many(nodes)):
            if res["feasible"] and (best is None or (res["metric"], lv) < best):
                best = (res["metric"], lv)
    if best is None:
        raise _infeasible(problem, "lattice_search")
    if problem.aggregate == "rank" and problem.metric == "loss":
        best = (best[0], _rank_refine(problem, best[1], best[0])[0])
    stats = {"seconds": time.perf_counter() - t0, "nodes_evaluated": lattice_size(problem.heights)}
    return _finish(problem, "lattice_exhaustive", best[1], {"strategy": "exhaustive"}, (), stats)


def _datafly(problem: LatticeProblem) -> Result:
    lv, trace, stats = datafly_choice(problem)
    return _finish(problem, "datafly", lv, {"strategy": "datafly"}, trace, stats)


def datafly_choice(problem: Any) -> tuple[list[int], tuple[Any, ...], dict[str, Any]]:
    """Datafly's node (levels, trace, stats) on any problem with ``evaluate``, ``heights``, ``distinct`` (node
    choice apart from publishing: a table's :class:`LatticeProblem` or a frequency set's)."""
    t0 = time.perf_counter()
    lv = [0] * problem.n_qi
    res = problem.evaluate(lv)
    trace = [(tuple(lv), res["suppressed"], res["metric"])]
    while not res["feasible"]:
        cand = [j for j in range(problem.n_qi) if lv[j] < problem.heights[j]]
        if not cand:
            raise _infeasible(problem, "datafly")
        # attribute with the most distinct values at its current level; ties -> lowest index
        j = max(cand, key=lambda i: (problem.distinct[i][lv[i]], -i))
        lv[j] += 1
        res = problem.evaluate(lv)
        trace.append((tuple(lv), res["suppressed"], res["metric"]))
    stats = {"seconds": time.perf_counter() - t0, "nodes_evaluated": len(trace)}
    return lv, tuple(trace), stats


def _samarati(problem: LatticeProblem) -> Result:
    lv, probes, stats = samarati_choice(problem)
    return _finish(problem, "samarati", lv, {"strategy": "samarati"}, probes, stats)


def samarati_choice(problem: Any) -> tuple[tuple[int, ...], tuple[Any, ...], dict[str, Any]]:
    """Samarati's node (levels, probes, stats) on any problem with ``evaluate_many`` and ``nodes_at_height``."""
    t0 = time.perf_counter()
    low, high = 0, sum(problem.heights)
    probes: list[tuple[int, bool]] = []
    found: dict[int, list[tuple[float, tuple[int, ...]]]] = {}
    n_eval = 0

    def sat(h: int) -> bool:
        nonlocal n_eval
        nodes = problem.nodes_at_height(h)
        results = problem.evaluate_many(nodes)
        n_eval += len(nodes)
        ok = [(r["metric"], lv) for lv, r in zip(nodes, results) if r["feasible"]]
        found[h] = ok
        return bool(ok)

    if not sat(high):
        raise _infeasible(problem, "samarati")
    while low < high:
        mid = (low + high) // 2
        s = sat(mid)
        probes.append((mid, s))
        if s:
            high = mid
        else:
            low = mid + 1
    if low not in found:
        sat(low)
    best = min(found[low])
    stats = {"seconds": time.perf_counter() - t0, "nodes_evaluated": n_eval, "height": low}
    return best[1], tuple(probes), stats


def _improved_greedy(problem: LatticeProblem, score: str) -> Result:
    lv, trace, stats = improved_greedy_choice(problem, score)
    return _finish(problem, "improved_greedy", lv, {"strategy": "greedy", "score": score}, trace, stats)


def improved_greedy_choice(problem: Any, score: str) -> tuple[list[int], tuple[Any, ...], dict[str, Any]]:
    """The improved greedy walk's node (levels, trace, stats) on any problem with ``evaluate``,
    ``evaluate_many`` and ``heights``."""
    t0 = time.perf_counter()
    lv = [0] * problem.n_qi
    res = problem.evaluate(lv)
    trace = [(tuple(lv), res["suppressed"], res["metric"])]
    n_eval = 1
    while not res["feasible"]:
        succ = []
        for j in range(problem.n_qi):
            if lv[j] < problem.heights[j]:
                c = list(lv)
                c[j] += 1
                succ.append((j, c))
        if not succ:
            raise _infeasible(problem, "improved_greedy")
        results = problem.evaluate_many([c for _, c in succ])
        n_eval += len(succ)
        if score == "outliers":
            keys = [(r["suppressed"], r["metric"], j) for (j, _), r in zip(succ, results)]
        elif score == "ratio":
            o0, l0 = res["suppressed"], res["metric"]
            keys = [(-(o0 - r["suppressed"]) / max(r["metric"] - l0, 1e-12), r["metric"], j)
                    for (j, _), r in zip(succ, results)]
        else:  # classes
            keys = [(r["n_classes"], r["metric"], j) for (j, _), r in zip(succ, results)]
        i = min(range(len(keys)), key=lambda x: keys[x])
        lv = succ[i][1]
        res = results[i]
        trace.append((tuple(lv), res["suppressed"], res["metric"]))
    stats = {"seconds": time.perf_counter() - t0, "nodes_evaluated": n_eval}
    return lv, tuple(trace), stats


def _heuristic_options(caller: str, args: Sequence[Any], suppression_limit: Any, metric: Any,
                       n_threads: Any) -> dict[str, Any]:
    return positional_options(caller, args, ("suppression_limit", "metric", "n_threads"),
                              {"suppression_limit": suppression_limit, "metric": metric, "n_threads": n_threads},
                              {"suppression_limit": 0.0, "metric": "loss", "n_threads": None})


def datafly(table: Table, models: Any, *args: Any, suppression_limit: float = UNSET, metric: str = UNSET,
            n_threads: int | None = UNSET, **options: Any) -> Result:
    """Sweeney's Datafly: repeatedly generalize the quasi-identifier with the most distinct values.

    Stops at the first feasible node (ARX suppression semantics, ``suppression_limit``); ties go to the
    lowest quasi-identifier index. ``trace`` lists ``(levels, suppressed rows, metric)`` per step. At most
    ``sum(heights)`` steps (spec §3.3).

    Examples
    --------
    >>> from anoncore.datasets import toy_table
    >>> from anoncore.models import KAnonymity
    >>> from anoncore.static.lattice import datafly
    >>> datafly(toy_table(), KAnonymity(2)).partition.levels
    (1, 0)
    """
    o = _heuristic_options("datafly", args, suppression_limit, metric, n_threads)
    problem = LatticeProblem.build(table, models, o["suppression_limit"], o["metric"], n_threads=o["n_threads"],
                                   caller="datafly", **options)
    return _datafly(problem)


def samarati(table: Table, models: Any, *args: Any, suppression_limit: float = UNSET, metric: str = UNSET,
             n_threads: int | None = UNSET, **options: Any) -> Result:
    """Samarati's binary search on lattice height; minimal-metric feasible node at the lowest feasible height.

    ``trace`` lists the probes ``(height, satisfiable)`` (spec §3.3, §7.1). Ties: lexicographically smallest
    levels.

    Examples
    --------
    >>> from anoncore.datasets import toy_table
    >>> from anoncore.models import KAnonymity
    >>> from anoncore.static.lattice import samarati
    >>> samarati(toy_table(), KAnonymity(2)).partition.levels
    (1, 0)
    """
    o = _heuristic_options("samarati", args, suppression_limit, metric, n_threads)
    problem = LatticeProblem.build(table, models, o["suppression_limit"], o["metric"], n_threads=o["n_threads"],
                                   caller="samarati", **options)
    return _samarati(problem)


def improved_greedy(table: Table, models: Any, *args: Any, suppression_limit: float = UNSET, metric: str = UNSET,
                    score: str = UNSET, n_threads: int | None = UNSET, **options: Any) -> Result:
    """The thesis's improved greedy heuristic (spec §3.4, [RECON] default).

    At each step every direct generalization ``N + e_i`` is evaluated (rolled up from ``N``) and the walk moves
    to the best by ``score``: ``'outliers'`` (fewest suppressed rows, then metric, then index), ``'ratio'``
    (largest outlier reduction per unit of metric increase) or ``'classes'`` (fewest classes). Stops at the
    first feasible node; at most ``n_qi * sum(heights)`` evaluations. ``trace`` lists
    ``(levels, suppressed rows, metric)`` per step.

    Examples
    --------
    >>> from anoncore.datasets import toy_table
    >>> from anoncore.models import KAnonymity
    >>> from anoncore.static.lattice import improved_greedy
    >>> improved_greedy(toy_table(), KAnonymity(2)).partition.levels
    (1, 0)
    """
    o = positional_options("improved_greedy", args, ("suppression_limit", "metric", "score", "n_threads"),
                           {"suppression_limit": suppression_limit, "metric": metric, "score": score,
                            "n_threads": n_threads},
                           {"suppression_limit": 0.0, "metric": "loss", "score": "outliers", "n_threads": None})
    score = check_option(o["score"], "score", "improved_greedy", ("outliers", "ratio", "classes"))
    problem = LatticeProblem.build(table, models, o["suppression_limit"], o["metric"], n_threads=o["n_threads"],
                                   caller="improved_greedy", **options)
    return _improved_greedy(problem, score)


_DISTANCES = {"equal": "EqualDistanceTCloseness", "ordered": "OrderedDistanceTCloseness",
              "hierarchical": "HierarchicalDistanceTCloseness", "hellinger": "HellingerTCloseness"}


def _old_form(caller: str, models: Any, args: Sequence[Any], names: Sequence[str], given: dict[str, Any],
              defaults: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """Resolve a call in the previous release's form (all arguments after ``table`` by position or keyword)."""
    pos = ([] if models is UNSET else [models]) + list(args)
    if len(pos) > len(names):
        raise TypeError(f"{caller}() takes at most {len(names) + 1} positional arguments.")
    vals = dict(given)
    for name, value in zip(names, pos):
        if vals.get(name, UNSET) is not UNSET:
            raise TypeError(f"{caller}() got multiple values for argument {name!r}.")
        vals[name] = value
    deprecated_call(old, new, stacklevel=4)
    return {n: defaults[n] if vals.get(n, UNSET) is UNSET else vals[n] for n in defaults}


def _k_and_t(caller: str, models: Any, t_kinds: Sequence[str]) -> tuple[list[Any], int, float, str]:
    """The models of a (k, t) call: one t-closeness model of ``t_kinds`` and at most one KAnonymity."""
    mlist = _as_models(models, caller)
    ts = [m for m in mlist if type(m).__name__ in t_kinds]
    ks = [m for m in mlist if type(m).__name__ == "KAnonymity"]
    if len(ts) != 1 or len(ks) > 1 or len(ts) + len(ks) != len(mlist):
        raise ValueError(f"The 'models' parameter of {caller} must hold one t-closeness model ({', '.join(t_kinds)}) "
                         f"and at most one KAnonymity. Got {mlist!r} instead.")
    distance = next(d for d, name in _DISTANCES.items() if name == type(ts[0]).__name__)
    return mlist, int(ks[0].k) if ks else 1, float(ts[0].t), distance


def _check_k_t(caller: str, table: Any, k: Any, t: Any) -> None:
    check_int(k, "k", caller, 1, table.n_rows if isinstance(table, Table) else None)
    check_float(t, "t", caller, 0, 1, closed="right")


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)


def t_incognito(table: Table, models: Any = UNSET, *args: Any, suppression_limit: float = UNSET,
                metric: str = UNSET, n_threads: int | None = UNSET, k: Any = UNSET, t: Any = UNSET,
                distance: Any = UNSET) -> Result:
    """tIncognito (Li et al. 2007): the minimal-DM full-domain generalization under k-anonymity and t-closeness.

    The baseline of the SABRE and BUREL experiments. Same answer as Incognito's a-priori traversal (the
    optimum over all feasible nodes); found here by the optimal lattice search.

    Parameters
    ----------
    table : Table
    models : list of models
        One t-closeness model (``EqualDistanceTCloseness``, ``OrderedDistanceTCloseness``,
        ``HierarchicalDistanceTCloseness`` or ``HellingerTCloseness``) and optionally ``KAnonymity``.
    suppression_limit : float in [0, 1], default=0.0
    metric : str, default='dm'
        As :func:`lattice_search`.
    n_threads : int or None, default=None

    The form of the previous release, ``t_incognito(table, k, t, distance='hierarchical', ...)``, still works
    with a :class:`DeprecationWarning`.

    Examples
    --------
    >>> from anoncore.datasets import toy_table
    >>> from anoncore.static.lattice import t_incognito
    >>> from anoncore.models import HierarchicalDistanceTCloseness, KAnonymity
    >>> t_incognito(toy_table(), [KAnonymity(2), HierarchicalDistanceTCloseness(1.0)]).partition.levels
    (1, 0)
    """
    caller = "t_incognito"
    if _is_number(models) or k is not UNSET or t is not UNSET or distance is not UNSET:
        o = _old_form(caller, models, args, ("k", "t", "distance", "suppression_limit", "metric", "n_threads"),
                      {"k": k, "t": t, "distance": distance, "suppression_limit": suppression_limit,
                       "metric": metric, "n_threads": n_threads},
                      {"k": UNSET, "t": UNSET, "distance": "hierarchical", "suppression_limit": 0.0, "metric": "dm",
                       "n_threads": None},
                      "t_incognito(table, k, t, distance)",
                      "t_incognito(table, [KAnonymity(k), HierarchicalDistanceTCloseness(t)], ...) (or the "
                      "t-closeness model of the distance)")
        if o["k"] is UNSET or o["t"] is UNSET:
            raise TypeError(f"{caller}() needs k and t.")
        _check_k_t(caller, table, o["k"], o["t"])
        dist = check_option(o["distance"], "distance", caller, tuple(_DISTANCES))
        mlist = [_k(int(o["k"])), _SimpleModel.make(_DISTANCES[dist], t=float(o["t"]))]
        kk, tt = o["k"], o["t"]
    else:
        if models is UNSET:
            raise TypeError(f"{caller}() missing 1 required positional argument: 'models'.")
        o = positional_options(caller, args, ("suppression_limit", "metric", "n_threads"),
                               {"suppression_limit": suppression_limit, "metric": metric, "n_threads": n_threads},
                               {"suppression_limit": 0.0, "metric": "dm", "n_threads": None})
        mlist, kk, tt, dist = _k_and_t(caller, models, tuple(_DISTANCES.values()))
    res = lattice_search(table, mlist, suppression_limit=o["suppression_limit"], metric=o["metric"],
                         strategy="optimal", n_threads=o["n_threads"])
    return Result("t_incognito", res.partition, {**res.parameters, "k": kk, "t": tt, "distance": dist},
                  res.achieved, res.metrics, res.trace, res.stats, res.audit)


def hellinger_t_closeness(table: Table, models: Any = UNSET, *args: Any, suppression_limit: float = UNSET,
                          metric: str = UNSET, strategy: str = UNSET, n_threads: int | None = UNSET, t: Any = UNSET,
                          k: Any = UNSET) -> Result:
    """(k, t)-closeness with the Hellinger distance (spec §5, TClosenessFDG): every published class has at least
    ``k`` rows and Hellinger distance at most ``t`` to the table's sensitive distribution.

    Hellinger is normalised by 1/sqrt(2) (range [0, 1]); H^2 <= TV <= sqrt(2) H, so thresholds are not
    comparable with EMD's. Hellinger ignores the semantics of values (no protection against similarity
    attacks), see docs/lattice.md.

    ``models``: ``HellingerTCloseness`` and optionally ``KAnonymity``; ``suppression_limit`` (default 0),
    ``metric`` (default ``'dm'``), ``strategy`` and ``n_threads`` as :func:`lattice_search`. The form of the
    previous release, ``hellinger_t_closeness(table, t, k=1, ...)``, still works with a DeprecationWarning.

    Examples
    --------
    >>> from anoncore.datasets import toy_table
    >>> from anoncore.static.lattice import hellinger_t_closeness
    >>> from anoncore.models import HellingerTCloseness, KAnonymity
    >>> hellinger_t_closeness(toy_table(), [HellingerTCloseness(0.6), KAnonymity(2)]).achieved["k"]
    2
    """
    caller = "hellinger_t_closeness"
    if _is_number(models) or k is not UNSET or t is not UNSET:
        o = _old_form(caller, models, args, ("t", "k", "suppression_limit", "metric", "strategy", "n_threads"),
                      {"t": t, "k": k, "suppression_limit": suppression_limit, "metric": metric, "strategy": strategy,
                       "n_threads": n_threads},
                      {"t": UNSET, "k": 1, "suppression_limit": 0.0, "metric": "dm", "strategy": "optimal",
                       "n_threads": None},
                      "hellinger_t_closeness(table, t, k)",
                      "hellinger_t_closeness(table, [HellingerTCloseness(t), KAnonymity(k)], ...)")
        if o["t"] is UNSET:
            raise TypeError(f"{caller}() needs t.")
        _check_k_t(caller, table, o["k"], o["t"])
        mlist = [_k(int(o["k"])), _SimpleModel.make("HellingerTCloseness", t=float(o["t"]))]
        kk, tt = o["k"], o["t"]
    else:
        if models is UNSET:
            raise TypeError(f"{caller}() missing 1 required positional argument: 'models'.")
        o = positional_options(caller, args, ("suppression_limit", "metric", "strategy", "n_threads"),
                               {"suppression_limit": suppression_limit, "metric": metric, "strategy": strategy,
                                "n_threads": n_threads},
                               {"suppression_limit": 0.0, "metric": "dm", "strategy": "optimal", "n_threads": None})
        mlist, kk, tt, _ = _k_and_t(caller, models, ("HellingerTCloseness",))
    res = lattice_search(table, mlist, suppression_limit=o["suppression_limit"], metric=o["metric"],
                         strategy=o["strategy"], n_threads=o["n_threads"])
    return Result("hellinger_t_closeness", res.partition, {**res.parameters, "k": kk, "t": tt}, res.achieved,
                  res.metrics, res.trace, res.stats, res.audit)


# ---------------------------------------------------------------------------------------------- best k
@dataclass(frozen=True, slots=True)
class BestK:
    """Utility and privacy curves over a k range and the chosen k (spec §4).

    ``utility[i] = 1 - precision loss`` and ``privacy[i] = 1 - 1 / k_eff`` (k_eff = smallest published class)
    of the release for ``ks[i]``; ``k`` is the crossing point ``argmin |U - P|`` (ties: smaller k).
    """

    ks: tuple[int, ...]
    utility: tuple[float, ...]
    privacy: tuple[float, ...]
    k: int
    levels: tuple[tuple[int, ...], ...]

    def plot(self, ax: Any = None) -> Any:
        """Plot both curves and mark the chosen k (needs matplotlib). Returns the Axes."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots()
        ax.plot(self.ks, self.utility, marker="o", label="utility U(k)")
        ax.plot(self.ks, self.privacy, marker="s", label="privacy P(k)")
        ax.axvline(self.k, color="grey", linestyle="--", label=f"best k = {self.k}")
        ax.set_xlabel("k")
        ax.set_ylabel("value")
        ax.legend()
        return ax


def best_k(table: Table, ks: Sequence[int], suppression_limit: float = 0.0, strategy: str = "optimal",
           metric: str = "precision", n_threads: int | None = None) -> BestK:
    """Choose k by crossing the utility and privacy curves (spec §4, [RECON] default procedure).

    For each k, anonymize with ``strategy`` (k-anonymity alone); utility U(k) = 1 - precision loss of the
    release (suppressed rows count as fully generalized), privacy P(k) = 1 - 1/k_eff with k_eff the smallest
    published class. k* = argmin_k |U(k) - P(k)|, ties to the smaller k.

    Examples
    --------
    >>> from anoncore.datasets import toy_table
    >>> from anoncore.static.lattice import best_k
    >>> bk = best_k(toy_table(), [1, 2, 3])
    >>> bk.ks, bk.k
    ((1, 2, 3), 2)
    """
    caller = "best_k"
    _check_table(table, caller)
    ks = tuple(check_int(k, "ks", caller, 1, table.n_rows) for k in ks)
    if not ks:
        raise ValueError(f"The 'ks' parameter of {caller} must hold at least one k.")
    ks = tuple(sorted(set(ks)))
    U, P, L = [], [], []
    for k in ks:
        res = lattice_search(table, [_k(k)], suppression_limit=suppression_limit, metric=metric, strategy=strategy,
                             n_threads=n_threads)
        prob = LatticeProblem.build(table, [_k(k)], suppression_limit, "precision_nm", caller=caller)
        loss = prob.evaluate(res.achieved["levels"])["metric"]
        U.append(1.0 - float(loss))
        P.append(1.0 - 1.0 / max(1, res.achieved["k"]))
        L.append(tuple(res.partition.levels or ()))
    diffs = [abs(u - p) for u, p in zip(U, P)]
    i = min(range(len(ks)), key=lambda x: (diffs[x], ks[x]))
    return BestK(ks, tuple(U), tuple(P), ks[i], tuple(L))


# ---------------------------------------------------------------------------------------------- helpers
class _SimpleModel:
    """Stand-in model objects (used until ``anoncore.models`` is available)."""

    __slots__ = ("__dict__",)

    @staticmethod
    def make(kind: str, **params: Any) -> Any:
        try:
            import anoncore.models as am

            return getattr(am, kind)(**params)
        except (ImportError, AttributeError, TypeError):
            cls = type(kind, (_SimpleModel,), {})
            obj = cls()
            obj.__dict__.update(params)
            obj.__dict__.setdefault("sensitive", None)
            return obj

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.__dict__.items())})"


def _k(k: int) -> Any:
    return _SimpleModel.make("KAnonymity", k=k)


Callback = Callable[[tuple[int, ...]], None]
