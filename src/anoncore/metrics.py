"""Information-loss metrics of a published partition.

Every metric is computed from the class-level view of a :class:`~anoncore.Partition` (per class and
quasi-identifier: the published code range ``gen_lo..gen_hi`` and hierarchy node ``gen_node``; per class: the
number of published and of suppressed rows) by C++ kernels that run in O(n_classes) per quasi-identifier
(``anoncore._core.metrics``). Python only validates, loops over the quasi-identifiers and combines the
per-attribute values.

Two families live here:

* the textbook metrics: Cao's GLM/AIL (exactly as the thesis defines it), NCP, Sweeney's precision, the
  discernibility metric of Bayardo and Agrawal, the average equivalence class size and the height of a
  full-domain node;
* ARX's metrics, reproducing ARX's numbers bit for bit or within 1e-8 (``Loss`` with gs-factor, ``round10``
  and aggregates, non-uniform entropy, DM, DM*, AECS, precision), as documented in
  ``shared/data/adult/ARX-ORACLES.md`` section 7, and ARX's KL divergence and ambiguity (from ARX's
  definitions; no ARX reference values exist for them).

Domains. A categorical (or ordinal) attribute's domain is its hierarchy's leaves; a numeric attribute's is the
declared ``[L, U]`` of its :class:`~anoncore.Attribute` (``domain=``) or else the range of its values in the
data. ARX's Loss uses the hierarchy's rows (= leaves, including leaves absent from the data) as domain size.

All functions return losses (lower is better). KL and JS divergences between sensitive-value distributions
live in the distance module; :func:`kl_divergence` here compares the published table with the original over
the quasi-identifier tuples.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from anoncore import _core
from anoncore._plain import plain as _plain
from anoncore._validation import check_bool, check_float, check_instance, check_option
from anoncore.data.table import Table
from anoncore.results import Partition

__all__ = [
    "AGGREGATES",
    "METRICS",
    "aecs",
    "ail",
    "ambiguity",
    "discernibility",
    "height",
    "information_loss",
    "kl_divergence",
    "loss",
    "ncp",
    "non_uniform_entropy",
    "precision",
]

AGGREGATES = ("sum", "arithmetic_mean", "geometric_mean", "maximum", "rank")
METRICS = ("ail", "ncp", "dm", "dm_star", "precision", "aecs", "loss", "non_uniform_entropy", "height")
#: Metrics information_loss computes only when named (not in its default set).
_NAMED_ONLY = ("kl_divergence", "ambiguity")

# Range costs understood by the kernel _core.metrics.range_cost_sums.
_COST_COUNT, _COST_CAO, _COST_SPAN = 0, 1, 2

_km = _core.metrics


# ---------------------------------------------------------------------------------------------- helpers
@dataclass(frozen=True, slots=True)
class _View:
    """Class-level arrays of a partition, in the dtypes the kernels take."""

    table: Table
    partition: Partition
    kept: NDArray[np.int64]
    supp: NDArray[np.int64]
    gen_lo: NDArray[np.int32]
    gen_hi: NDArray[np.int32]
    gen_node: NDArray[np.int32]
    n_rows: int
    n_suppressed: int
    qis: tuple[str, ...]


def _view(table: Any, partition: Any, caller: str) -> _View:
    check_instance(table, "table", caller, Table, "a Table")
    check_instance(partition, "partition", caller, Partition, "a Partition")
    pt = partition.table
    if pt is not table and (pt.n_rows != table.n_rows or pt.quasi_identifiers != table.quasi_identifiers
                            or not np.array_equal(pt.qi_codes(), table.qi_codes())):
        raise ValueError(f"The 'partition' parameter of {caller} must be a partition of 'table' "
                         f"(it was built on another table).")
    qis = table.quasi_identifiers
    if not qis:
        raise ValueError(f"{caller} needs a table with at least one quasi-identifier.")
    supp_mask = np.ascontiguousarray(partition.suppressed, dtype=bool)
    labels = np.ascontiguousarray(partition.labels, dtype=np.int64)
    n_classes = int(partition.n_classes)
    all_sizes = _core.core.class_sizes(labels, np.zeros(0, dtype=bool), n_classes)
    if supp_mask.any():
        kept = _core.core.class_sizes(labels, supp_mask, n_classes)
        supp = np.ascontiguousarray(all_sizes - kept)
    else:
        kept, supp = all_sizes, np.zeros(n_classes, dtype=np.int64)
    return _View(table, partition, kept, supp,
                 np.ascontiguousarray(partition.gen_lo, dtype=np.int32),
                 np.ascontiguousarray(partition.gen_hi, dtype=np.int32),
                 np.ascontiguousarray(partition.gen_node, dtype=np.int32),
                 int(labels.shape[0]), int(supp.sum()), qis)


def _check_gs_factor(gs_factor: Any, caller: str) -> tuple[float, float]:
    """ARX's gs-factor g -> (generalisation factor gF, suppression factor sF) (ARX-ORACLES §7.1)."""
    g = check_float(gs_factor, "gs_factor", caller, 0.0, 1.0)
    s_f = 2.0 * g if g < 0.5 else 1.0
    g_f = 1.0 if g <= 0.5 else 1.0 - 2.0 * (g - 0.5)
    return g_f, s_f


def _weights(weights: Any, qis: tuple[str, ...], caller: str) -> NDArray[np.float64] | None:
    """Validate weights (a sequence in QI order, or a mapping QI name -> weight); None stays None."""
    if weights is None:
        return None
    if isinstance(weights, Mapping):
        unknown = [k for k in weights if k not in qis]
        if unknown:
            raise ValueError(f"The 'weights' parameter of {caller} names {unknown[0]!r}, which is not a "
                             f"quasi-identifier of the table {list(qis)}.")
        missing = [q for q in qis if q not in weights]
        if missing:
            raise ValueError(f"The 'weights' parameter of {caller} must give a weight to every quasi-identifier; "
                             f"{missing[0]!r} has none.")
        seq: Sequence[Any] = [weights[q] for q in qis]
    elif isinstance(weights, (str, bytes)) or not isinstance(weights, (Sequence, np.ndarray)):
        raise TypeError(f"The 'weights' parameter of {caller} must be a sequence of floats or a mapping from "
                        f"quasi-identifier to float. Got {type(weights).__name__} instead.")
    else:
        seq = list(weights)
    for w in seq:
        if isinstance(w, bool) or not isinstance(w, numbers.Real):
            raise TypeError(f"The 'weights' parameter of {caller} must hold real numbers. Got {_plain(w)} instead.")
    arr = np.asarray(seq, dtype=np.float64)
    if arr.shape != (len(qis),):
        raise ValueError(f"The 'weights' parameter of {caller} must have one entry per quasi-identifier "
                         f"({len(qis)}). Got {arr.shape[0] if arr.ndim == 1 else arr.shape} instead.")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or not np.any(arr > 0):
        raise ValueError(f"The 'weights' parameter of {caller} must be finite, non-negative and not all zero. "
                         f"Got {arr.tolist()!r} instead.")
    return arr


def _arx_weights(weights: Any, qis: tuple[str, ...], caller: str) -> NDArray[np.float64]:
    """ARX's attribute weights: each divided by the largest (all 1 by default)."""
    w = _weights(weights, qis, caller)
    if w is None:
        return np.ones(len(qis))
    out: NDArray[np.float64] = w / w.max()
    return out


def _round10(x: float) -> float:
    """ARX's per-attribute rounding: floor(x * 1e10) / 1e10 (negative rounding noise clamps to 0)."""
    if x <= 0.0:
        return 0.0
    return math.floor(x * 1e10) / 1e10


def _aggregate(x: Sequence[float], w: NDArray[np.float64], aggregate: str) -> float | tuple[float, ...]:
    """ARX's aggregate functions over the per-QI vector x with weights w (ARX-ORACLES §7.1)."""
    d = len(x)
    if aggregate == "sum":
        total = 0.0
        for xj, wj in zip(x, w):
            total += float(wj) * xj
        return total
    if aggregate == "arithmetic_mean":
        total = 0.0
        for xj, wj in zip(x, w):
            total += (xj / d) * float(wj)
        return total
    if aggregate == "geometric_mean":
        prod = 1.0
        for xj, wj in zip(x, w):
            prod *= (float(wj) * xj + 1.0) ** (1.0 / d)
        return prod - 1.0
    weighted = [float(wj) * xj for xj, wj in zip(x, w)]
    if aggregate == "maximum":
        return max(weighted)
    return tuple(sorted(weighted, reverse=True))  # rank


def _numeric_width_share(v: _View, j: int, q: str) -> tuple[float, float]:
    """(Σ kept·w, Σ supp·w), w = width of the published interval clipped to [L, U], over U − L (0 if U == L)."""
    lo_dom, hi_dom = v.table.domain(q)
    vals = np.ascontiguousarray(v.table.numeric_values(q), dtype=np.float64)
    k_sum, s_sum = _km.value_width_sums(v.kept, v.supp, v.gen_lo, v.gen_hi, j, vals, float(lo_dom), float(hi_dom))
    width = hi_dom - lo_dom
    if width <= 0:
        return 0.0, 0.0
    return k_sum / width, s_sum / width


def _is_numeric(table: Table, q: str) -> bool:
    return table.attribute(q).kind == "numeric"


# ---------------------------------------------------------------------------------------------- GLM / NCP
def _generalized_loss(table: Any, partition: Any, weights: Any, caller: str, cao: bool) -> float:
    v = _view(table, partition, caller)
    w = _weights(weights, v.qis, caller)
    if w is None:
        w = np.full(len(v.qis), 1.0 / len(v.qis))
    total = 0.0
    for j, q in enumerate(v.qis):
        if _is_numeric(v.table, q):
            k_share, _ = _numeric_width_share(v, j, q)
        else:
            h = v.table.hierarchy(q)
            n_leaves = h.n_leaves if h is not None else v.table.cardinality(q)
            k_int, _ = _km.range_cost_sums(v.kept, v.supp, v.gen_lo, v.gen_hi, j,
                                           _COST_CAO if cao else _COST_SPAN)
            denom = n_leaves if cao else n_leaves - 1
            k_share = k_int / denom if denom > 0 else 0.0
        # A suppressed row is published fully generalised: loss 1 on every attribute.
        total += float(w[j]) * (k_share + v.n_suppressed)
    return total / v.n_rows


def ail(table: Table, partition: Partition, weights: Sequence[float] | Mapping[str, float] | None = None) -> float:
    """Average information loss (AIL) under the General Loss Metric, exactly as Cao's thesis defines it.

    Parameters
    ----------
    table : Table
        The encoded input.
    partition : Partition
        A partition of ``table`` (full-domain or any grouping).
    weights : sequence of float or mapping from QI name to float, default=None
        Attribute weights w_i, used as given; by default ``1/d`` for the d quasi-identifiers.

    Returns
    -------
    float
        ``AIL = Σ_G |G| · IL(G) / |DB|`` with ``IL(G) = Σ_i w_i IL_i(G)``.

    Raises
    ------
    TypeError
        If ``table`` is not a Table, ``partition`` not a Partition, or ``weights`` of the wrong type.
    ValueError
        If the partition belongs to another table or the weights are malformed.

    See Also
    --------
    ncp : The common normalised form of the categorical term.

    Notes
    -----
    Numeric attribute with domain ``[L, U]`` (declared, else the data's range) and published interval
    ``[l, u]`` (the class's ``[min, max]``, or the interval of its hierarchy node, clipped to ``[L, U]``):
    ``IL = (u − l)/(U − L)`` (0 when ``U == L``). Categorical attribute published as node ``a`` of
    its hierarchy ``H``: ``IL = 0`` if ``a`` is a leaf, else ``|Leaves(a)|/|Leaves(H)|`` -- not the common
    NCP form ``(|Leaves(a)| − 1)/(|Leaves(H)| − 1)``. Suppressed rows are charged as fully generalised
    (``IL_i = 1``). O(n_classes · d) after the group-by.

    References
    ----------
    J. Cao, "Privacy-preserving data publishing: t-closeness and β-likeness", PhD thesis, §2.3 (spec
    sabre-burel.md §2.4).

    Examples
    --------
    >>> import anoncore
    >>> from anoncore.metrics import ail
    >>> t = anoncore.datasets.toy_table()
    >>> round(ail(t, anoncore.Partition.from_levels(t, [0, 0])), 6)
    0.0
    """
    return _generalized_loss(table, partition, weights, "ail", cao=True)


def ncp(table: Table, partition: Partition, weights: Sequence[float] | Mapping[str, float] | None = None) -> float:
    """Normalised certainty penalty (NCP), averaged over rows.

    Parameters
    ----------
    table : Table
    partition : Partition
    weights : sequence of float or mapping from QI name to float, default=None
        Attribute weights, used as given; by default ``1/d``.

    Returns
    -------
    float
        ``(1/N) Σ_rows Σ_i w_i NCP_i(row)``, in [0, 1] with the default weights.

    Raises
    ------
    TypeError, ValueError
        As :func:`ail`.

    Notes
    -----
    Categorical: ``(|Leaves(a)| − 1)/(|Leaves(H)| − 1)`` (0 for a one-leaf hierarchy); numeric:
    ``(u − l)/(U − L)`` with ``[L, U]`` declared or else the data's range. Suppressed rows cost 1 per attribute.

    References
    ----------
    J. Xu, W. Wang, J. Pei et al., "Utility-based anonymization using local recoding", KDD 2006,
    doi:10.1145/1150402.1150504.

    Examples
    --------
    >>> import anoncore
    >>> from anoncore.metrics import ncp
    >>> t = anoncore.datasets.toy_table()
    >>> ncp(t, anoncore.Partition.from_labels(t, [0] * 6))  # one class: everything at the root
    1.0
    """
    return _generalized_loss(table, partition, weights, "ncp", cao=False)


# ---------------------------------------------------------------------------------------------- DM, AECS
def discernibility(table: Table, partition: Partition, monotonic: bool = False) -> float:
    """Discernibility metric: ARX's DM (``monotonic=False``) or DM* (``monotonic=True``).

    Parameters
    ----------
    table : Table
    partition : Partition
    monotonic : bool, default=False
        ``False``: ``DM = Σ_{E not suppressed} |E|² + N·S`` (Bayardo and Agrawal; each suppressed row costs the
        number of rows N). ``True``: ``DM* = Σ_E |E|²`` over all classes, suppressed rows included (suppression
        does not change it).

    Returns
    -------
    float

    Raises
    ------
    TypeError
        Wrong types (``monotonic`` must be a bool).

    Notes
    -----
    Per class E with ``kept_E`` published and ``supp_E`` suppressed rows: DM uses ``kept_E²`` and
    ``N·Σ supp_E``; DM* uses ``(kept_E + supp_E)²``. Exact integer arithmetic. ARX-ORACLES §7.2.

    References
    ----------
    R. J. Bayardo, R. Agrawal, "Data privacy through optimal k-anonymization", ICDE 2005,
    doi:10.1109/ICDE.2005.42.

    Examples
    --------
    >>> import anoncore
    >>> from anoncore.metrics import discernibility
    >>> t = anoncore.datasets.toy_table()
    >>> discernibility(t, anoncore.Partition.from_labels(t, [0, 0, 1, 1, 1, 2]))
    14.0
    """
    mono = check_bool(monotonic, "monotonic", "discernibility")
    v = _view(table, partition, "discernibility")
    s = _km.class_summary(v.kept, v.supp)
    return float(s.dm_star if mono else s.dm)


def aecs(table: Table, partition: Partition, gs_factor: float = 0.5) -> float:
    """Average equivalence class size, as ARX computes it.

    Parameters
    ----------
    table : Table
    partition : Partition
    gs_factor : float, default=0.5
        ARX's generalisation/suppression factor g in [0, 1].

    Returns
    -------
    float
        ``N / (sF·#{E : E has published rows} + (gF if S > 0 else 0))``: the suppressed rows count as one
        extra class. ARX swaps the two factors (gF, sF) here on purpose; this is reproduced. With the default
        g both factors are 1. ``inf`` if the denominator is 0.

    Raises
    ------
    TypeError, ValueError
        Bad ``gs_factor``.

    Notes
    -----
    ARX-ORACLES §7.5. LeFevre et al.'s normalised C_avg is ``aecs / k`` without suppression.

    References
    ----------
    K. LeFevre, D. DeWitt, R. Ramakrishnan, "Mondrian multidimensional k-anonymity", ICDE 2006,
    doi:10.1109/ICDE.2006.101.

    Examples
    --------
    >>> import anoncore
    >>> from anoncore.metrics import aecs
    >>> t = anoncore.datasets.toy_table()
    >>> aecs(t, anoncore.Partition.from_labels(t, [0, 0, 1, 1, 1, 1]))
    3.0
    """
    g_f, s_f = _check_gs_factor(gs_factor, "aecs")
    v = _view(table, partition, "aecs")
    s = _km.class_summary(v.kept, v.supp)
    denom = s_f * s.n_kept_classes + (g_f if s.n_suppressed > 0 else 0.0)
    return v.n_rows / denom if denom > 0 else math.inf


# ---------------------------------------------------------------------------------------------- KL, ambiguity
def _leaf_view(v: _View) -> tuple[NDArray[np.float64], float]:
    """Per class: leaf combinations a_E = Π_j leaves_j(E) under its published values; and |dom| = Π_j |dom_j|
    (hierarchy leaves, absent ones included; the codes of an attribute without hierarchy)."""
    area = np.ones(v.kept.shape[0], dtype=np.float64)
    max_area = 1.0
    for j, q in enumerate(v.qis):
        h = v.table.hierarchy(q)
        dom = h.n_leaves if h is not None else v.table.cardinality(q)
        area *= (v.gen_hi[:, j].astype(np.int64) - v.gen_lo[:, j] + 1).astype(np.float64)
        max_area *= float(dom)
    return area, max_area


def kl_divergence(table: Table, partition: Partition, reading: str = "paper") -> float:
    """Kullback-Leibler divergence (bits) of the published table from the original over the QI tuples.

    Parameters
    ----------
    table : Table
    partition : Partition
    reading : {'paper', 'arx'}, default='paper'
        ``'paper'``: the divergence of the two distributions over the QI tuples (Machanavajjhala et al.).
        ``'arx'``: ARX's ``MetricSDNMKLDivergence``, a sum over the records.

    Returns
    -------
    float
        With ``p_t = c_t / N`` (c_t: records with QI tuple t), a published class E of ``n_E`` published records
        spread uniformly over the ``a_E = Π_j leaves_j(E)`` leaf combinations under its generalized values, and
        the S suppressed records spread over the whole domain ``|dom| = Π_j |dom_j|``, each record r has the
        published density ``q_r = n_E / (N a_E)`` (published) or ``S / (N |dom|)`` (suppressed).
        ``'arx'``: ``Σ_records p_r log2(p_r / q_r)`` (each tuple counted once per record, as ARX does).
        ``'paper'``: ``Σ_t p_t log2(p_t / Q(t))`` with ``Q(t) = q_r + S / (N |dom|)`` for a published record's
        tuple (the published distribution including the suppressed records' spread), ``S / (N |dom|)`` for a
        suppressed one. Both are >= 0 and 0 for the original table.

    Raises
    ------
    TypeError, ValueError
        Bad ``reading``, or a partition of another table.

    Notes
    -----
    Domains are the hierarchies' leaves (leaves absent from the data included), as ARX's domain shares; an
    attribute without hierarchy uses its codes. ``'paper'`` is written per record, which is per tuple when the
    records of a tuple share a class (full-domain generalization); for a local recoding whose published boxes
    overlap, each record uses its own class's box. Both are lattice search metrics (``metric='kl'``,
    ``'kl_arx'``). docs/lattice.md gives the bounds the search uses.

    References
    ----------
    A. Machanavajjhala, D. Kifer, J. Gehrke, M. Venkitasubramaniam, "l-diversity: privacy beyond
    k-anonymity", ACM TKDD 1(1), 2007, doi:10.1145/1217299.1217302 (§ experiments: KL divergence of the
    anonymized table). F. Prasser et al., ARX, ``MetricSDNMKLDivergence``.

    Examples
    --------
    >>> import anoncore
    >>> from anoncore.metrics import kl_divergence
    >>> t = anoncore.datasets.toy_table()
    >>> kl_divergence(t, anoncore.Partition.from_levels(t, [0, 0]))
    0.0
    """
    rd = check_option(reading, "reading", "kl_divergence", ["paper", "arx"])
    v = _view(table, partition, "kl_divergence")
    area, max_area = _leaf_view(v)
    n = float(v.n_rows)
    _, inv, cnt = np.unique(v.table.qi_codes(), axis=0, return_inverse=True, return_counts=True)
    p = cnt[inv.reshape(-1)] / n
    labels = np.asarray(v.partition.labels, dtype=np.int64)
    supp = np.asarray(v.partition.suppressed, dtype=bool)
    base = v.n_suppressed / n / max_area
    with np.errstate(divide="ignore"):
        q_kept = v.kept[labels] / n / area[labels]
    if rd == "arx":
        q = np.where(supp, base, q_kept)
        terms = p * np.log2(p / q)
    else:
        q = np.where(supp, base, q_kept + base)
        terms = np.log2(p / q) / n
    return max(0.0, float(terms.sum()))


def ambiguity(table: Table, partition: Partition) -> float:
    """ARX's ambiguity: the number of leaf combinations each record could be, summed over the records.

    Parameters
    ----------
    table : Table
    partition : Partition

    Returns
    -------
    float
        ``Σ_E n_E Π_j leaves_j(E) + S Π_j |dom_j|``: a published record counts the leaf combinations under its
        class's generalized values (leaves absent from the data included), a suppressed one the whole domain.
        Between N (the original table) and ``N Π_j |dom_j|``; not normalised (ARX's value).

    Raises
    ------
    TypeError, ValueError
        A partition of another table.

    Notes
    -----
    ARX's ``MetricSDNMAmbiguity``, a variant of Goldberger and Tassa's ambiguity (theirs averages the record
    counts; ARX sums them). A lattice search metric (``metric='ambiguity'``).

    References
    ----------
    J. Goldberger, T. Tassa, "Efficient anonymizations with enhanced utility", Transactions on Data Privacy
    3(2), 2010, 149-175.

    Examples
    --------
    >>> import anoncore
    >>> from anoncore.metrics import ambiguity
    >>> t = anoncore.datasets.toy_table()
    >>> ambiguity(t, anoncore.Partition.from_levels(t, [0, 0]))
    6.0
    """
    v = _view(table, partition, "ambiguity")
    area, max_area = _leaf_view(v)
    return float((v.kept.astype(np.float64) * area).sum() + v.n_suppressed * max_area)


# ---------------------------------------------------------------------------------------------- precision
def precision(
    table: Table,
    partition: Partition,
    monotonic: bool = False,
    gs_factor: float = 0.5,
    weights: Sequence[float] | Mapping[str, float] | None = None,
) -> float:
    """Sweeney's precision loss ``1 − Prec`` (ARX's Precision metric).

    Parameters
    ----------
    table : Table
    partition : Partition
    monotonic : bool, default=False
        ``True``: suppressed rows are charged their generalisation only (ARX's monotonic precision).
        ``False``: a suppressed cell costs ``sF`` (fully generalised).
    gs_factor : float, default=0.5
        ARX's gs-factor (generalisation costs ``gF``, suppression ``sF``).
    weights : sequence of float or mapping, default=None
        Attribute weights, divided by their maximum (ARX).

    Returns
    -------
    float
        Arithmetic mean over the d quasi-identifiers of ``x_j = (gF·Σ_{kept rows} h/H + sF·S)/N``
        (monotonic: ``gF·Σ_{all rows} h/H / N``), times the weights. Sweeney's precision is ``1 −`` this value
        (default factors and weights).

    Raises
    ------
    TypeError, ValueError
        Bad parameter types or values.

    Notes
    -----
    ``h`` is the height of the published hierarchy node and ``H`` the hierarchy's height (a full-domain level
    over the maximal level on balanced hierarchies). Numeric attributes without a hierarchy use the published
    width over ``U − L``. ARX-ORACLES §7.6; spec generalization-lattice.md §3.5.

    References
    ----------
    L. Sweeney, "Achieving k-anonymity privacy protection using generalization and suppression", IJUFKS 10(5),
    2002, doi:10.1142/S021848850200165X.

    Examples
    --------
    >>> import anoncore
    >>> from anoncore.metrics import precision
    >>> t = anoncore.datasets.toy_table()
    >>> precision(t, anoncore.Partition.from_levels(t, [0, 0]))
    0.0
    """
    mono = check_bool(monotonic, "monotonic", "precision")
    g_f, s_f = _check_gs_factor(gs_factor, "precision")
    v = _view(table, partition, "precision")
    w = _arx_weights(weights, v.qis, "precision")
    x = []
    for j, q in enumerate(v.qis):
        h = v.table.hierarchy(q)
        if h is None:
            k_share, s_share = _numeric_width_share(v, j, q)
        elif h.height == 0:
            k_share = s_share = 0.0
        else:
            cost = np.ascontiguousarray(h.node_height, dtype=np.int64)
            k_int, s_int = _km.node_cost_sums(v.kept, v.supp, v.gen_node, j, cost)
            k_share, s_share = k_int / h.height, s_int / h.height
        if mono:
            x.append(g_f * (k_share + s_share) / v.n_rows)
        else:
            x.append((g_f * k_share + s_f * v.n_suppressed) / v.n_rows)
    return float(_aggregate(x, w, "arithmetic_mean"))  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------- ARX Loss
def loss(
    table: Table,
    partition: Partition,
    gs_factor: float = 0.5,
    aggregate: str = "geometric_mean",
    weights: Sequence[float] | Mapping[str, float] | None = None,
) -> float | tuple[float, ...]:
    """ARX's Loss metric (Iyengar's generalisation loss, ARX variant).

    Parameters
    ----------
    table : Table
    partition : Partition
    gs_factor : float, default=0.5
        ARX's gs-factor g: generalisation factor ``gF = 1 if g <= 0.5 else 1 − 2(g − 0.5)``, suppression factor
        ``sF = 2g if g < 0.5 else 1``.
    aggregate : {'geometric_mean', 'sum', 'arithmetic_mean', 'maximum', 'rank'}, default='geometric_mean'
        How the per-attribute losses combine. ``'rank'`` returns the weighted per-attribute losses sorted in
        decreasing order (ARX compares them lexicographically).
    weights : sequence of float or mapping, default=None
        Attribute weights, divided by their maximum (ARX).

    Returns
    -------
    float or tuple of float
        The aggregated loss (a tuple for ``aggregate='rank'``).

    Raises
    ------
    TypeError, ValueError
        Bad parameter types or values.

    Notes
    -----
    Per QI j with domain size ``R_j`` = number of hierarchy rows (leaves, including values absent from the
    data; the distinct values of a numeric attribute without hierarchy), a class published as the code
    range ``[lo, hi]`` has share ``(hi − lo + 1)/R_j`` and costs ``s_E = n_E · share``. With N rows and S
    suppressed::

        A_j   = Σ_{E kept} gF·s_E + Σ_{E suppressed} (n_E if sF = 1 else s_E + sF·(n_E − s_E))
        min_j = gF·N/R_j
        x_j   = round10(max(0, (A_j − min_j)/(N − min_j)))

    with ``round10(x) = floor(x·1e10)/1e10``. Aggregates: sum ``Σ w_j x_j``, arithmetic mean ``Σ (x_j/d) w_j``,
    geometric mean ``Π (w_j x_j + 1)^(1/d) − 1``, maximum ``max w_j x_j``. ARX-ORACLES §7.1 and §7.4.

    References
    ----------
    V. S. Iyengar, "Transforming data to satisfy privacy constraints", KDD 2002, doi:10.1145/775047.775089.

    Examples
    --------
    >>> import anoncore
    >>> from anoncore.metrics import loss
    >>> t = anoncore.datasets.toy_table()
    >>> loss(t, anoncore.Partition.from_levels(t, [0, 0]))
    0.0
    """
    g_f, s_f = _check_gs_factor(gs_factor, "loss")
    agg = check_option(aggregate, "aggregate", "loss", AGGREGATES, ignore_case=True)
    v = _view(table, partition, "loss")
    w = _arx_weights(weights, v.qis, "loss")
    n, s_tot = float(v.n_rows), float(v.n_suppressed)
    x = []
    for j, q in enumerate(v.qis):
        rows = v.table.cardinality(q)
        k_int, s_int = _km.range_cost_sums(v.kept, v.supp, v.gen_lo, v.gen_hi, j, _COST_COUNT)
        k_s, s_s = k_int / rows, s_int / rows
        a = g_f * k_s + (s_tot if s_f == 1.0 else s_s + s_f * (s_tot - s_s))
        lo = g_f * n / rows
        x.append(_round10(max(0.0, (a - lo) / (n - lo))) if n - lo > 0 else 0.0)
    return _aggregate(x, w, agg)


# ---------------------------------------------------------------------------------------------- NU-entropy
def _charged_ranges(v: _View) -> tuple[NDArray[np.int32], NDArray[np.int32]]:
    """Ranges at which the generalisation entropy charges each class's rows.

    The published range of a class covers its published rows; its suppressed rows may lie outside it (a
    partition from labels boxes the published rows only). They are charged as if generalised with their
    class: the published range extended to cover them (for hierarchy attributes, the lowest node covering
    both). Partitions from levels, and classes without suppressed rows, keep their published range.
    """
    if v.n_suppressed == 0:
        return v.gen_lo, v.gen_hi
    n_classes = int(v.partition.n_classes)
    lo_all, hi_all = _core.core.class_min_max(v.table.qi_codes(), np.ascontiguousarray(v.partition.labels,
                                              dtype=np.int64), np.zeros(0, dtype=bool), n_classes)
    lo = np.minimum(v.gen_lo, lo_all)
    hi = np.maximum(v.gen_hi, hi_all)
    for j, q in enumerate(v.qis):
        h = v.table.hierarchy(q)
        if h is None:
            continue
        changed = (lo[:, j] != v.gen_lo[:, j]) | (hi[:, j] != v.gen_hi[:, j])
        if changed.any():
            node = h.lca_of_leaf_range(lo[changed, j], hi[changed, j])
            lo[changed, j] = h.leaf_start[node]
            hi[changed, j] = h.leaf_start[node] + h.leaf_count[node] - 1
    return np.ascontiguousarray(lo, dtype=np.int32), np.ascontiguousarray(hi, dtype=np.int32)


def non_uniform_entropy(
    table: Table,
    partition: Partition,
    monotonic: bool = False,
    gs_factor: float = 0.5,
    weights: Sequence[float] | Mapping[str, float] | None = None,
) -> float:
    """Non-uniform entropy, as ARX computes it (sum over the quasi-identifiers).

    Parameters
    ----------
    table : Table
    partition : Partition
    monotonic : bool, default=False
        ``True``: suppression is ignored (suppressed rows pay their generalisation only). ``False``:
        suppressed rows also pay the entropy of the suppressed rows' generalised values.
    gs_factor : float, default=0.5
    weights : sequence of float or mapping, default=None
        Attribute weights, divided by their maximum (ARX); the aggregate is their weighted sum.

    Returns
    -------
    float
        Information loss in bits (``Σ_j w_j x_j``).

    Raises
    ------
    TypeError, ValueError
        Bad parameter types or values.

    Notes
    -----
    Per QI j, with ``a_v`` the rows holding value v and ``b(E) = Σ_{u ∈ [lo_E, hi_E]} a_u`` the rows whose
    value lies in the range class E publishes::

        base_j = Σ_rows log2(a_v / b(E))     (<= 0; = Σ_v a_v log2(a_v / b_x) for full-domain nodes)
        supp_j = Σ_x c_x log2(c_x / S)       (c_x: suppressed rows published as range x)
        x_j    = round10(−gF·base_j)                      (monotonic)
        x_j    = round10(−(gF·base_j + sF·supp_j))        (non-monotonic)

    ARX-ORACLES §7.3 (Gionis and Tassa's definition for arbitrary partitions). A suppressed row whose value
    lies outside its class's published range (possible in a partition from labels, whose boxes cover the
    published rows only) is charged at the published range extended to cover it (the lowest hierarchy node
    covering both); every full-domain partition is unaffected.

    References
    ----------
    A. Gionis, T. Tassa, "k-Anonymization with minimal loss of information", IEEE TKDE 21(2), 2009,
    doi:10.1109/TKDE.2008.129.

    Examples
    --------
    >>> import anoncore
    >>> from anoncore.metrics import non_uniform_entropy
    >>> t = anoncore.datasets.toy_table()
    >>> non_uniform_entropy(t, anoncore.Partition.from_levels(t, [0, 0]))
    0.0
    """
    mono = check_bool(monotonic, "monotonic", "non_uniform_entropy")
    g_f, s_f = _check_gs_factor(gs_factor, "non_uniform_entropy")
    v = _view(table, partition, "non_uniform_entropy")
    w = _arx_weights(weights, v.qis, "non_uniform_entropy")
    lo, hi = _charged_ranges(v)
    x = []
    for j, q in enumerate(v.qis):
        column = np.ascontiguousarray(v.table.column(q), dtype=np.int32)
        base, supp_term = _km.nu_entropy_terms(column, v.table.cardinality(q), v.kept, v.supp, lo, hi, v.gen_lo,
                                               v.gen_hi, j, not mono)
        x.append(_round10(-(g_f * base)) if mono else _round10(-(g_f * base + s_f * supp_term)))
    return float(_aggregate(x, w, "sum"))  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------- height
def height(levels: Sequence[int] | Partition) -> int:
    """Height of a full-domain lattice node: the sum of its levels.

    Parameters
    ----------
    levels : sequence of int or Partition
        Generalisation levels (one per quasi-identifier), or a partition built by
        :meth:`Partition.from_levels`.

    Returns
    -------
    int
        ``Σ_j λ_j`` (ARX's Height metric; independent of data and suppression).

    Raises
    ------
    TypeError
        If a level is not an int.
    ValueError
        If a level is negative, or the partition was not built from levels.

    References
    ----------
    P. Samarati, "Protecting respondents' identities in microdata release", IEEE TKDE 13(6), 2001,
    doi:10.1109/69.971193.

    Examples
    --------
    >>> from anoncore.metrics import height
    >>> height([1, 0, 2])
    3
    """
    if isinstance(levels, Partition):
        if levels.levels is None:
            raise ValueError("The 'levels' parameter of height must be a full-domain partition (built with "
                             "Partition.from_levels). Got a partition without levels instead.")
        seq: Sequence[Any] = levels.levels
    elif isinstance(levels, (str, bytes)) or not isinstance(levels, (Sequence, np.ndarray)):
        raise TypeError(f"The 'levels' parameter of height must be a sequence of int or a Partition. "
                        f"Got {type(levels).__name__} instead.")
    else:
        seq = list(levels)
    total = 0
    for lv in seq:
        if isinstance(lv, (bool, np.bool_)) or not isinstance(lv, (int, np.integer)):
            raise TypeError(f"The 'levels' parameter of height must hold ints. Got {_plain(lv)} instead.")
        if lv < 0:
            raise ValueError(f"The 'levels' parameter of height must hold ints in the range [0, inf). "
                             f"Got {int(lv)} instead.")
        total += int(lv)
    return total


# ---------------------------------------------------------------------------------------------- all at once
def information_loss(
    table: Table, partition: Partition, metrics: Sequence[str] | None = None
) -> dict[str, float | int | tuple[float, ...]]:
    """Several metrics at once, with their default parameters.

    Parameters
    ----------
    table : Table
    partition : Partition
    metrics : sequence of {'ail', 'ncp', 'dm', 'dm_star', 'precision', 'aecs', 'loss', \
'non_uniform_entropy', 'height', 'kl_divergence', 'ambiguity'}, default=None
        Which metrics; by default all of them but ``'kl_divergence'`` and ``'ambiguity'`` (``'height'`` only
        for a partition built from levels).

    Returns
    -------
    dict
        Metric name -> value.

    Raises
    ------
    TypeError, ValueError
        Unknown metric names, ``'height'`` for a partition without levels, or the errors of the metrics.

    Examples
    --------
    >>> import anoncore
    >>> from anoncore.metrics import information_loss
    >>> t = anoncore.datasets.toy_table()
    >>> information_loss(t, anoncore.Partition.from_levels(t, [0, 0]), metrics=("dm", "height"))
    {'dm': 6.0, 'height': 0}
    """
    if metrics is None:
        names: list[str] = [m for m in METRICS if m != "height"]
        if isinstance(partition, Partition) and partition.levels is not None:
            names.append("height")
    else:
        if isinstance(metrics, str) or not isinstance(metrics, Sequence):
            raise TypeError(f"The 'metrics' parameter of information_loss must be a sequence of str. "
                            f"Got {_plain(metrics)} instead.")
        names = list(metrics)
        for m in names:
            if not isinstance(m, str):
                raise TypeError(f"The 'metrics' parameter of information_loss must be a sequence of str. "
                                f"Got {_plain(m)} instead.")
            if m not in METRICS + _NAMED_ONLY:
                raise ValueError(f"The 'metrics' parameter of information_loss must hold names among "
                                 f"{set(METRICS + _NAMED_ONLY)}. Got {_plain(m)} instead.")
    funcs: dict[str, Any] = {
        "ail": lambda: ail(table, partition),
        "ncp": lambda: ncp(table, partition),
        "dm": lambda: discernibility(table, partition, monotonic=False),
        "dm_star": lambda: discernibility(table, partition, monotonic=True),
        "precision": lambda: precision(table, partition),
        "aecs": lambda: aecs(table, partition),
        "loss": lambda: loss(table, partition),
        "non_uniform_entropy": lambda: non_uniform_entropy(table, partition),
        "height": lambda: height(partition),
        "kl_divergence": lambda: kl_divergence(table, partition),
        "ambiguity": lambda: ambiguity(table, partition),
    }
    return {m: funcs[m]() for m in names}
