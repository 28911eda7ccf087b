"""The independent audit: recompute every privacy guarantee of a partition from the original values alone."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from anoncore import _core
from anoncore._tablecache import TableCache
from anoncore._validation import check_instance, check_n_threads, check_option
from anoncore.data.table import Table
from anoncore.models import (
    MODELS,
    RISK_MODELS,
    BasicBetaLikeness,
    DeltaDisclosure,
    DeltaPresence,
    DistinctLDiversity,
    EnhancedBetaLikeness,
    EntropyLDiversity,
    EqualDistanceTCloseness,
    HellingerTCloseness,
    HierarchicalDistanceTCloseness,
    KAnonymity,
    KMap,
    OrderedDistanceTCloseness,
    PrivacyModel,
    RangeBetaLikeness,
    RecursiveCLDiversity,
    SemanticBetaLikeness,
)
from anoncore.results import Partition

__all__ = ["AuditReport", "ModelAudit", "audit"]

REFERENCES = ("table", "after_suppression")


def _readonly(a: NDArray[Any]) -> NDArray[Any]:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


def _json_number(x: float) -> float | str | None:
    if math.isnan(x):
        return None
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return int(x) if float(x).is_integer() and abs(x) < 2**53 else float(x)


def _fmt(x: float) -> str:
    if math.isnan(x):
        return "n/a"
    if math.isinf(x):
        return "inf"
    return str(int(x)) if float(x).is_integer() else f"{x:.6g}"


@dataclass(frozen=True, slots=True)
class ModelAudit:
    """The audit of one privacy model.

    Attributes
    ----------
    model : PrivacyModel
    passed : bool
        Whether every checked class (a class with at least one published row) satisfies the model.
    achieved : float
        The best parameter the partition achieves: smallest k / distinct l / exp(entropy), largest c, t,
        beta or delta; +inf when some class violates the model for every parameter value; NaN when no
        class is checked.
    n_violating : int
    sensitive : str or None
        The sensitive attribute the model was checked on.
    values : ndarray of float64, shape (n_classes,)
        Per-class values (read-only; NaN for classes with no published row).
    violating : ndarray of int64
        Ids of the violating classes (read-only).
    derived_k : int or None
        ARX's estimated k-map (``KMap(estimator=...)``): the k derived from the table's size that every
        published class was checked against; None for every other model.
    """

    model: PrivacyModel
    passed: bool
    achieved: float
    n_violating: int
    sensitive: str | None
    values: NDArray[np.float64] = field(repr=False, compare=False)
    violating: NDArray[np.int64] = field(repr=False, compare=False)
    derived_k: int | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (infinities as the strings ``'inf'``, NaN as None; arrays as lists)."""
        return {
            **self.model.to_dict(),
            "parameter": self.model.parameter,
            "sensitive_attribute": self.sensitive,
            "passed": self.passed,
            "achieved": _json_number(self.achieved),
            "n_violating": self.n_violating,
            "violating": [int(i) for i in self.violating],
            **({"derived_k": self.derived_k} if self.derived_k is not None else {}),
        }

    def __str__(self) -> str:
        verdict = "passed" if self.passed else f"FAILED ({self.n_violating} violating classes)"
        derived = f" (derived k = {self.derived_k})" if self.derived_k is not None else ""
        return f"{self.model!r}: {verdict}, achieved {self.model.parameter} = {_fmt(self.achieved)}{derived}"


@dataclass(frozen=True, slots=True)
class AuditReport:
    """What :func:`audit` returns.

    Attributes
    ----------
    models : tuple of ModelAudit
        One entry per model, in the order given.
    n_rows, n_suppressed, n_classes, n_checked_classes : int
        Rows, suppressed rows, classes, and classes with at least one published row.
    reference : {'table', 'after_suppression'}
        Which rows define the reference sensitive distribution.
    stats : dict
        Timings in seconds (not part of equality).
    class_sizes : ndarray of int64
        Published rows of every class (suppressed rows left out), as the audit counted them (read-only; not
        part of equality).
    """

    models: tuple[ModelAudit, ...]
    n_rows: int
    n_suppressed: int
    n_classes: int
    n_checked_classes: int
    reference: str
    stats: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    class_sizes: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64), compare=False,
                                           repr=False)

    @property
    def passed(self) -> bool:
        """Whether every model passed."""
        return all(m.passed for m in self.models)

    def __getitem__(self, i: int) -> ModelAudit:
        return self.models[i]

    def __len__(self) -> int:
        return len(self.models)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of the report."""
        return {
            "passed": self.passed,
            "n_rows": self.n_rows,
            "n_suppressed": self.n_suppressed,
            "n_classes": self.n_classes,
            "n_checked_classes": self.n_checked_classes,
            "reference": self.reference,
            "models": [m.to_dict() for m in self.models],
            "timings": dict(self.stats),
        }

    def __str__(self) -> str:
        head = (f"Audit of {self.n_rows} rows in {self.n_classes} classes ({self.n_suppressed} suppressed rows, "
                f"{self.n_checked_classes} classes checked, reference={self.reference!r}): "
                f"{'PASSED' if self.passed else 'FAILED'}")
        return "\n".join([head] + [f"  {m}" for m in self.models])


def _check_models(models: Any) -> tuple[PrivacyModel, ...]:
    msg = ("The 'models' parameter of audit must be a privacy model (e.g. anoncore.KAnonymity(5)) or a sequence "
           "of them. Got {!r} instead.")
    if isinstance(models, PrivacyModel):
        return (models,)
    if isinstance(models, (str, bytes)) or not isinstance(models, Sequence):
        raise TypeError(msg.format(models))
    out = tuple(models)
    for m in out:
        if not isinstance(m, PrivacyModel):
            raise TypeError(msg.format(m))
    if not out:
        raise ValueError("The 'models' parameter of audit must name at least one model. Got an empty sequence.")
    return out


def audit(table: Table, partition: Partition, models: PrivacyModel | Sequence[PrivacyModel],
          reference: str = "table", n_threads: int | None = None) -> AuditReport:
    """Check privacy models on a partition of a table, from the original values alone.

    Parameters
    ----------
    table : Table
        The encoded original table.
    partition : Partition
        Row-to-class assignment and suppressed rows (suppressed rows are left out of every class check).
    models : PrivacyModel or sequence of PrivacyModel
        The models to check (see :mod:`anoncore.models`). A model protecting a sensitive attribute names it
        with ``sensitive=`` when the table declares several.
    reference : {'table', 'after_suppression'}, default='table'
        The reference sensitive distribution of t-closeness, beta-likeness and delta-disclosure: that of the
        whole table (Li et al.; ARX), or that of the published rows only.
    n_threads : int, default=None
        Threads for the kernels; None uses all cores. Results do not depend on it.

    Returns
    -------
    AuditReport

    Raises
    ------
    TypeError
        If ``table``, ``partition`` or a model has the wrong type.
    ValueError
        If the partition does not belong to a table of this size, ``reference`` is unknown, or a model needs a
        sensitive attribute the table does not declare (or does not name one among several).

    Notes
    -----
    One group-by pass builds the class sizes and, per sensitive attribute used, the per-class histogram;
    each model then runs one class-vectorised C++ kernel (O(n_classes m), hierarchical EMD
    O(n_classes n_nodes)). Counts are exact integers; EMD and beta values are exact ratios of integers
    rounded once.

    Examples
    --------
    >>> from anoncore import Partition, datasets
    >>> from anoncore.models import KAnonymity, DistinctLDiversity
    >>> t = datasets.toy_table()
    >>> p = Partition.from_levels(t, [5, 2])
    >>> report = audit(t, p, [KAnonymity(2), DistinctLDiversity(2)])
    >>> report.passed, report[0].achieved
    (True, 2.0)
    """
    t0 = time.perf_counter()
    check_instance(table, "table", "audit", Table, "a Table")
    check_instance(partition, "partition", "audit", Partition, "a Partition")
    if partition.n_rows != table.n_rows:
        raise ValueError(f"The partition has {partition.n_rows} rows but the table has {table.n_rows}.")
    mods = _check_models(models)
    check_option(reference, "reference", "audit", REFERENCES)
    nt = check_n_threads(n_threads, "audit")

    # Resolve sensitive attributes before any kernel runs.
    plan: list[tuple[PrivacyModel, str | None]] = []
    for m in mods:
        if type(m) not in MODELS + RISK_MODELS:
            raise TypeError(f"audit does not know how to check {type(m).__name__}; the models it checks are "
                            f"{[c.__name__ for c in MODELS + RISK_MODELS]}.")
        sa: str | None = None
        if m.needs_sensitive:
            sa = table.sensitive_column(m.sensitive_attribute, caller=type(m).__name__)
            if isinstance(m, HierarchicalDistanceTCloseness) and table.hierarchy(sa) is None:
                raise ValueError(f"HierarchicalDistanceTCloseness needs a hierarchy for sensitive attribute {sa!r}, "
                                 "which has none.")
            if isinstance(m, (SemanticBetaLikeness, RangeBetaLikeness)):
                _check_group_model(m, table, sa)
            if isinstance(m, OrderedDistanceTCloseness):
                m.value_order(table, sa)  # (a stated order that does not list the values is refused up front)
        if isinstance(m, (KMap, DeltaPresence)):
            _subset_of(m, table.n_rows)
        plan.append((m, sa))

    labels = np.ascontiguousarray(partition.labels, dtype=np.int64)
    suppressed = np.ascontiguousarray(partition.suppressed, dtype=bool)
    n_classes = int(partition.n_classes)
    n_supp = int(_core.core.count_true(suppressed, nt))  # (numpy counts on one thread: 3 ms at 40M rows)
    hists: dict[str, tuple[NDArray[np.int64], NDArray[np.int64]]] = {}

    def stats_for(sa: str) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        if sa not in hists:
            col = table.column(sa)
            m_values = table.cardinality(sa)
            hist = _core.core.class_histogram(col, labels, suppressed, n_classes, m_values, nt)
            if reference == "table":
                ref = _table_reference(table, sa, col, m_values, nt)
            else:
                ref = np.ascontiguousarray(hist.sum(axis=0), dtype=np.int64)
            hists[sa] = (hist, ref)
        return hists[sa]

    t_stats = time.perf_counter()
    # The class sizes are the row sums of a sensitive histogram when one is needed (one pass over the rows
    # fewer; exact integers), the size kernel's otherwise (or when the histogram misses rows).
    first_sa = next((sa for _, sa in plan if sa is not None), None)
    sizes: NDArray[np.int64] | None = None
    if first_sa is not None:
        hsum = stats_for(first_sa)[0].sum(axis=1, dtype=np.int64)
        if int(hsum.sum()) == table.n_rows - n_supp:
            sizes = hsum
    if sizes is None:
        sizes = _core.core.class_sizes(labels, suppressed, n_classes, nt)
    empty = sizes == 0
    results: list[ModelAudit] = []
    for m, sa in plan:
        # ARX's estimated k-map is judged as the k-anonymity of the k derived from the table's size (as the
        # searches evaluate it)
        derived = m.as_k_anonymity(table.n_rows) if isinstance(m, KMap) and m.derives_k else None
        judged = derived if derived is not None else m
        if isinstance(judged, RISK_MODELS):
            values = _risk_values(judged, labels, suppressed, n_classes, sizes)
        else:
            values = _class_values(judged, sa, table, sizes, empty, stats_for, nt)
        verdict = judged.evaluate(values)
        results.append(ModelAudit(m, verdict.passed, verdict.achieved, int(verdict.violating.size), sa,
                                  _readonly(values), verdict.violating,
                                  None if derived is None else int(derived.k)))
    t_end = time.perf_counter()
    return AuditReport(tuple(results), table.n_rows, n_supp, n_classes, int((~empty).sum()), reference,
                       {"validation_s": t_stats - t0, "kernels_s": t_end - t_stats, "total_s": t_end - t0},
                       _readonly(np.asarray(sizes, dtype=np.int64)))


#: The audit's per-table cache (the whole-table reference distributions), dropped with the table.
_CACHE = TableCache("anoncore.audit")


def _table_reference(table: Table, sa: str, col: NDArray[Any], m_values: int, nt: int) -> NDArray[np.int64]:
    """The sensitive distribution of the whole table (counts per code), from the original column alone.
    A Table is frozen (its columns are read-only), so it is counted once per table and attribute and kept
    read-only in the audit's per-table cache. Counted in place on ``nt`` threads (``np.bincount`` first copies
    the column to int64: 177 ms of a fresh process's first audit of 10M rows, 80 MB faulted in)."""
    key = ("audit_reference", sa, int(m_values))
    ref: NDArray[np.int64] | None = _CACHE.of(table).get(key)
    if ref is None:
        ref = _core.core.value_counts(np.ascontiguousarray(col, dtype=np.int32), m_values, nt)
        ref.setflags(write=False)
        _CACHE.of(table)[key] = ref
    return ref


def _class_values(m: PrivacyModel, sa: str | None, table: Table, sizes: NDArray[np.int64],
                  empty: NDArray[np.bool_], stats_for: Any, nt: int) -> NDArray[np.float64]:
    if isinstance(m, KAnonymity):
        values = sizes.astype(np.float64)
        values[empty] = np.nan
        return values
    assert sa is not None
    hist, ref = stats_for(sa)
    if ref.sum() == 0:  # every row suppressed: nothing to check
        return np.full(sizes.shape, np.nan)
    d, c = _core.distance, _core.criteria
    if isinstance(m, DistinctLDiversity):
        distinct: NDArray[np.float64] = c.distinct_values(hist, nt).astype(np.float64)
        distinct[empty] = np.nan
        return distinct
    if isinstance(m, EntropyLDiversity):
        if m.estimator == "grassberger":
            # a class needs ceil(l) distinct values too, which Grassberger's estimate alone does not imply:
            # min(estimate, ln distinct) >= ln l is both at once, and exp of its minimum is the achieved l
            with np.errstate(divide="ignore"):
                ln_d = np.log(c.distinct_values(hist, nt).astype(np.float64))
            return np.minimum(c.entropy_grassberger(hist, sizes, nt), ln_d)
        return c.entropy(hist, sizes, nt)
    if isinstance(m, RecursiveCLDiversity):
        return c.recursive_cl_ratio(hist, sizes, int(m.l), nt)
    if isinstance(m, EqualDistanceTCloseness):
        return d.emd_equal_classes(hist, sizes, ref, nt)
    if isinstance(m, OrderedDistanceTCloseness):
        if (perm := m.value_order(table, sa)) is not None:
            return d.emd_ordered_classes(
                np.ascontiguousarray(hist[:, perm]), sizes, np.ascontiguousarray(ref[perm]), nt)
        return d.emd_ordered_classes(hist, sizes, ref, nt)
    if isinstance(m, HierarchicalDistanceTCloseness):
        h = table.hierarchy(sa)
        assert h is not None
        return d.emd_hierarchical_classes(
            hist, sizes, ref, h.parent, h.node_height, h.n_leaves, nt)
    if isinstance(m, HellingerTCloseness):
        return d.hellinger_classes(hist, sizes, ref, nt)
    if isinstance(m, BasicBetaLikeness):
        return c.beta_likeness(hist, sizes, ref, False, nt)
    if isinstance(m, EnhancedBetaLikeness):
        return c.beta_likeness(hist, sizes, ref, True, nt)
    if isinstance(m, DeltaDisclosure):
        if m.absent == "ignore":
            return _delta_present_only(hist, sizes, ref)
        return c.delta_disclosure(hist, sizes, ref, nt)
    if isinstance(m, SemanticBetaLikeness):
        h = table.hierarchy(sa)
        assert h is not None
        nodes = np.flatnonzero(h.node_depth >= int(m.level))
        lo = h.leaf_start[nodes].astype(np.int64)
        return _group_gains(hist, sizes, ref, lo, lo + h.leaf_count[nodes] - 1)
    if isinstance(m, RangeBetaLikeness):
        return _range_gains(hist, sizes, ref, _sensitive_values(table, sa), float(m.epsilon), bool(m.relative))
    raise TypeError(f"audit does not know how to check {type(m).__name__}.")


# ------------------------------------------------------------------------ semantic / range-based beta-likeness
def _sensitive_values(table: Table, sa: str) -> NDArray[np.float64]:
    """Value of every code of a numeric sensitive attribute (ordinal: its rank)."""
    if table.attribute(sa).kind == "numeric":
        return table.numeric_values(sa)
    return np.arange(table.cardinality(sa), dtype=np.float64)


def _check_group_model(m: PrivacyModel, table: Table, sa: str) -> None:
    kind = table.attribute(sa).kind
    if isinstance(m, SemanticBetaLikeness):
        if kind != "categorical" or table.hierarchy(sa) is None:
            raise ValueError(f"SemanticBetaLikeness needs a categorical sensitive attribute with a hierarchy; "
                             f"{sa!r} is {kind} without one.")
        return
    if kind == "categorical":
        raise ValueError(f"RangeBetaLikeness needs a numeric or ordinal sensitive attribute; {sa!r} is categorical.")
    if getattr(m, "relative", False):
        v = _sensitive_values(table, sa)[np.bincount(table.column(sa), minlength=table.cardinality(sa)) > 0]
        if v.size and v.min() <= 0:
            raise ValueError(f"RangeBetaLikeness(relative=True) needs positive sensitive values; {sa!r} has "
                             f"{v.min()!r}.")


def _group_gains(hist: NDArray[np.int64], sizes: NDArray[np.int64], ref: NDArray[np.int64],
                 lo: NDArray[np.int64], hi: NDArray[np.int64]) -> NDArray[np.float64]:
    """Per class: max over code ranges [lo, hi] of (rho2 - rho1)/rho1 over gains > 0; +inf when a gain exceeds
    -ln rho1 (or the class holds a range absent from the table). Exact integer numerators, as the kernels."""
    n_classes = hist.shape[0]
    out = np.zeros(n_classes, dtype=np.float64)
    out[sizes == 0] = np.nan
    if lo.size == 0 or n_classes == 0:
        return out
    P = int(ref.sum())
    rp = np.concatenate([[0], np.cumsum(ref, dtype=np.int64)])
    r = rp[hi + 1] - rp[lo]
    with np.errstate(divide="ignore"):
        bound = np.where(r > 0, -np.log(np.maximum(r, 1) / P), 0.0)
    chunk = max(1, 4_000_000 // max(lo.size, 1))
    for b in range(0, n_classes, chunk):
        e = min(n_classes, b + chunk)
        hp = np.zeros((e - b, hist.shape[1] + 1), dtype=np.int64)
        np.cumsum(hist[b:e], axis=1, out=hp[:, 1:])
        x = hp[:, hi + 1] - hp[:, lo]
        Q = sizes[b:e, None].astype(np.int64)
        num = x * P - r[None, :] * Q
        with np.errstate(divide="ignore", invalid="ignore"):
            gain = np.where(num > 0, num / (r[None, :].astype(np.float64) * Q), 0.0)
        bad = ((num > 0) & (r[None, :] == 0)) | ((num > 0) & (gain > bound[None, :]))
        val = np.where(bad, np.inf, gain).max(axis=1)
        keep = sizes[b:e] > 0
        out[b:e][keep] = val[keep]
    return out


def _range_gains(hist: NDArray[np.int64], sizes: NDArray[np.int64], ref: NDArray[np.int64],
                 values: NDArray[np.float64], epsilon: float, relative: bool) -> NDArray[np.float64]:
    present = np.flatnonzero(ref > 0)
    order = present[np.argsort(values[present], kind="stable")]
    v = values[order]
    los, his = [], []
    for i in range(order.size):
        j = i
        while j < order.size and ((v[j] - v[i]) / v[i] if relative else v[j] - v[i]) <= epsilon:
            los.append(i)
            his.append(j)
            j += 1
    # Runs of present values in value order are code ranges when codes follow value order; gather through the
    # value order otherwise by permuting the histogram columns.
    perm_hist = np.ascontiguousarray(hist[:, order])
    return _group_gains(perm_hist, sizes, np.ascontiguousarray(ref[order]), np.asarray(los, dtype=np.int64),
                        np.asarray(his, dtype=np.int64))


# ------------------------------------------------------------------------ ARX readings (absent values)
def _delta_present_only(hist: NDArray[np.int64], sizes: NDArray[np.int64], ref: NDArray[np.int64]
                        ) -> NDArray[np.float64]:
    """max over the values present in a class of |ln(q / p)| (ARX's reading of delta-disclosure)."""
    P = float(ref.sum())
    out = np.full(hist.shape[0], np.nan)
    live = sizes > 0
    q = hist[live].astype(np.float64) / sizes[live, None].astype(np.float64)
    p = ref.astype(np.float64) / P
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.abs(np.log(q / p[None, :]))
    d[hist[live] == 0] = 0.0
    out[live] = d.max(axis=1) if d.shape[1] else 0.0
    return out


# ------------------------------------------------------------------------ risk-based models
def _subset_of(m: KMap | DeltaPresence, n_rows: int) -> NDArray[np.bool_] | None:
    sub = m.subset
    if sub is None:
        return None
    name = type(m).__name__
    if sub.dtype == bool:
        if sub.shape != (n_rows,):
            raise ValueError(f"The subset of {name} has {sub.shape[0]} entries but the table has {n_rows} rows.")
        return sub  # type: ignore[no-any-return]
    if sub.size and (int(sub.min()) < 0 or int(sub.max()) >= n_rows):
        raise ValueError(f"The subset of {name} holds row indices outside [0, {n_rows - 1}].")
    mask = np.zeros(n_rows, dtype=bool)
    mask[sub] = True
    return mask


def _risk_values(m: PrivacyModel, labels: NDArray[np.int64], suppressed: NDArray[np.bool_], n_classes: int,
                 sizes: NDArray[np.int64]) -> NDArray[np.float64]:
    """Per-class values of the risk-based models (see anoncore.models)."""
    if isinstance(m, (KMap, DeltaPresence)):
        mask = _subset_of(m, labels.shape[0])
        skip = suppressed if mask is None else (suppressed | ~mask)
        f = _core.core.class_sizes(labels, np.ascontiguousarray(skip), n_classes).astype(np.float64)
        F = _core.core.class_sizes(labels, np.zeros(0, dtype=bool), n_classes).astype(np.float64)
        if isinstance(m, DeltaPresence):
            with np.errstate(divide="ignore", invalid="ignore"):
                v = np.where(F > 0, f / F, np.nan)
            return np.asarray(v, dtype=np.float64)
        if not m.estimated:
            return np.asarray(np.where(f > 0, F, np.nan), dtype=np.float64)
        from scipy.stats import poisson

        n = float(f.sum())
        assert m.population_size is not None
        if n > float(m.population_size):
            raise ValueError(f"KMap: the population_size {m.population_size!r} is smaller than the {int(n)} "
                             "published records.")
        pi = n / float(m.population_size)
        if pi >= 1.0:  # the sample is the population
            return np.asarray(np.where(f > 0, (f < int(m.k)).astype(np.float64), np.nan), dtype=np.float64)
        v = poisson.cdf(int(m.k) - f - 1, f * (1.0 - pi) / pi)
        return np.asarray(np.where(f > 0, v, np.nan), dtype=np.float64)
    values = sizes.astype(np.float64)
    values[sizes == 0] = np.nan
    return values
