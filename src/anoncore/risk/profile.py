"""Re-identification risk of a table or of a published partition under three attacker models.

Prosecutor (the attacker knows the target is in the release), journalist (the attacker matches against a
population table and does not know who is in the release) and marketer (the attacker re-identifies as many
records as possible). Definitions: ``docs/risk.md``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from anoncore import _core
from anoncore._tablecache import TableCache
from anoncore._validation import check_float
from anoncore.data.table import Table
from anoncore.results import Partition
from anoncore.risk.estimators import ESTIMATORS, PopulationEstimate, population_uniques

__all__ = ["HISTOGRAM_EDGES", "AttackerRisk", "RiskProfile", "class_counts", "record_risks", "risk_profile"]

#: Right-closed bins of the record-risk histogram: (0, 1e-6], (1e-6, 1e-5], ..., (1/3, 1/2], (1/2, 1].
#: The last bins hold exactly the classes of size 1, 2, 3, 4 (and 5-9 for (0.1, 0.2]).
HISTOGRAM_EDGES: tuple[float, ...] = (0.0, 1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 1 / 3, 0.5,
                                      1.0)


def _readonly(a: NDArray[Any]) -> NDArray[Any]:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


def _num(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


@dataclass(frozen=True, slots=True)
class AttackerRisk:
    """Summary risk under one attacker model.

    Attributes
    ----------
    model : {'prosecutor', 'journalist', 'marketer'}
    records_at_risk : float
        Fraction of published records whose risk exceeds the threshold (marketer: NaN, the model has no
        per-record threshold).
    highest_risk : float
        The largest record risk (marketer: NaN).
    average_risk : float
        Prosecutor: mean record risk ``J / n``; journalist: mean record risk ``(1/n) sum_j f_j / F_j``;
        marketer: expected fraction of records re-identified when every record is matched, the same value as the
        journalist's (``J / n`` without a population).
    """

    model: str
    records_at_risk: float
    highest_risk: float
    average_risk: float

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "records_at_risk": _num(self.records_at_risk),
                "highest_risk": _num(self.highest_risk), "average_risk": _num(self.average_risk)}


@dataclass(frozen=True, slots=True)
class RiskProfile:
    """What :func:`risk_profile` returns.

    Attributes
    ----------
    n_records : int
        Published records (the sample).
    n_classes : int
        Equivalence classes with at least one published record.
    n_suppressed : int
        Rows withheld (suppressed, or outside the research subset); they carry no risk.
    threshold : float
    prosecutor, journalist, marketer : AttackerRisk
    sample_uniques : int
        Records alone in their class.
    sample_uniqueness : float
        ``sample_uniques / n_records``.
    population : PopulationEstimate or None
        Population uniqueness, when a population size was given.
    record_risk : ndarray of float64, shape (n_rows,)
        Prosecutor risk ``1 / f`` of every row (NaN for rows not published). Read-only.
    distribution : tuple of (size, records) pairs
        The exact risk distribution: ``records`` published records have risk ``1 / size``.
    histogram : ndarray of int64, shape (len(HISTOGRAM_EDGES) - 1,)
        Records per right-closed risk bin of :data:`HISTOGRAM_EDGES`.
    stats : dict
        Timings (not part of equality).
    """

    n_records: int
    n_classes: int
    n_suppressed: int
    threshold: float
    prosecutor: AttackerRisk
    journalist: AttackerRisk
    marketer: AttackerRisk
    sample_uniques: int
    sample_uniqueness: float
    population: PopulationEstimate | None
    record_risk: NDArray[np.float64] = field(repr=False, compare=False)
    distribution: tuple[tuple[int, int], ...] = field(repr=False)
    histogram: NDArray[np.int64] = field(repr=False, compare=False)
    stats: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (NaN as None)."""
        return {
            "n_records": self.n_records,
            "n_classes": self.n_classes,
            "n_suppressed": self.n_suppressed,
            "threshold": self.threshold,
            "prosecutor": self.prosecutor.to_dict(),
            "journalist": self.journalist.to_dict(),
            "marketer": self.marketer.to_dict(),
            "sample_uniques": self.sample_uniques,
            "sample_uniqueness": _num(self.sample_uniqueness),
            "population": None if self.population is None else self.population.to_dict(),
            "distribution": [{"class_size": s, "risk": 1.0 / s, "records": r} for s, r in self.distribution],
            "histogram": {"edges": list(HISTOGRAM_EDGES), "records": [int(x) for x in self.histogram]},
        }

    def __str__(self) -> str:
        lines = [(f"Re-identification risk of {self.n_records} records in {self.n_classes} classes "
                 f"({self.n_suppressed} rows not published), threshold {self.threshold:g}:")]
        for a in (self.prosecutor, self.journalist):
            lines.append(f"  {a.model:<10}  records at risk {a.records_at_risk:.4%}, highest risk "
                         f"{a.highest_risk:.4g}, average risk {a.average_risk:.4g}")
        lines.append(f"  {'marketer':<10}  average risk {self.marketer.average_risk:.4g}")
        lines.append(f"  sample uniques {self.sample_uniques} ({self.sample_uniqueness:.4%})")
        if self.population is not None:
            p = self.population
            lines.append(f"  population uniques ({p.used}, N={p.population_size:g}): {p.uniques:.6g} "
                         f"({p.uniqueness:.4%})")
        return "\n".join(lines)


def _subset_mask(subset: Any, n_rows: int, caller: str) -> NDArray[np.bool_] | None:
    if subset is None:
        return None
    s = np.asarray(subset)
    if s.dtype == bool:
        if s.shape != (n_rows,):
            raise ValueError(f"The 'subset' parameter of {caller} must be a bool mask of shape ({n_rows},) or row "
                             f"indices. Got shape {s.shape} instead.")
        return s
    if s.dtype.kind not in "iu" or s.ndim != 1:
        raise TypeError(f"The 'subset' parameter of {caller} must be a bool mask or integer row indices. "
                        f"Got dtype {s.dtype} instead.")
    if s.size and (s.min() < 0 or s.max() >= n_rows):
        raise ValueError(f"The 'subset' parameter of {caller} holds row indices outside [0, {n_rows - 1}].")
    m = np.zeros(n_rows, dtype=bool)
    m[s] = True
    return m


#: Per-table cache of the quasi-identifier classes, dropped with the table.
_CACHE = TableCache("anoncore.risk.profile")


def _table_classes(table: Table) -> tuple[NDArray[np.int64], int]:
    """Class of every row of a table on its quasi-identifiers (risk kernel: grouped in place on the code
    matrix, no copy of the columns); computed once per frozen table (``_CACHE``)."""
    key = ("risk_labels",)
    cached: tuple[NDArray[np.int64], int] | None = _CACHE.of(table).get(key)
    if cached is None:
        cols = table.qi_column_indices()
        card = np.array([table.cardinality(q) for q in table.quasi_identifiers], dtype=np.int64)
        codes = table.codes
        if not (codes.flags.c_contiguous and codes.dtype == np.int32):
            codes = np.ascontiguousarray(codes, dtype=np.int32)
        lab, _, nc = _core.risk.group_columns(codes, cols, card)
        lab.setflags(write=False)
        cached = (lab, int(nc))
        _CACHE.of(table)[key] = cached
    return cached


def class_counts(data: Table | Partition, subset: Any = None, caller: str = "risk_profile"
                 ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.bool_]]:
    """Class of every row and per-class sample and population counts.

    ``data`` is a Table (classes: its rows grouped on the quasi-identifiers as they are) or a Partition
    (its classes). Rows are published when not suppressed and, with a research ``subset``, inside it.

    Returns
    -------
    labels : int64 (n_rows,)
    f : int64 (n_classes,)
        Published rows per class (the sample counts).
    F : int64 (n_classes,)
        All rows per class (the population counts when the table is the population of a subset).
    published : bool (n_rows,)
    """
    if isinstance(data, Partition):
        labels = np.ascontiguousarray(data.labels, dtype=np.int64)
        n_classes = int(data.n_classes)
        suppressed = np.ascontiguousarray(data.suppressed, dtype=bool)
        n_rows = data.n_rows
    elif isinstance(data, Table):
        if not data.quasi_identifiers:
            raise ValueError(f"{caller} needs a table with at least one quasi-identifier.")
        labels, n_classes = _table_classes(data)
        n_rows = data.n_rows
        suppressed = np.zeros(n_rows, dtype=bool)
    else:
        raise TypeError(f"The 'data' parameter of {caller} must be a Table or a Partition. "
                        f"Got {type(data).__name__} instead.")
    mask = _subset_mask(subset, n_rows, caller)
    skip = suppressed if mask is None else (suppressed | ~mask)
    f = _core.core.class_sizes(labels, np.ascontiguousarray(skip), n_classes)
    F = f if mask is None else _core.core.class_sizes(labels, np.zeros(0, dtype=bool), n_classes)
    return labels, f, F, ~skip


def record_risks(data: Table | Partition, subset: Any = None) -> NDArray[np.float64]:
    """Prosecutor risk ``1 / f`` of every row (f: published rows of its class); NaN for rows not published.

    Examples
    --------
    >>> from anoncore.datasets import toy_table
    >>> record_risks(toy_table()).tolist()
    [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    """
    labels, f, _, published = class_counts(data, subset, "record_risks")
    with np.errstate(divide="ignore"):
        inv = 1.0 / f.astype(np.float64)
    out = inv[labels]
    out[~published] = np.nan
    return out


def risk_profile(data: Table | Partition, *, threshold: float = 0.2, population_size: float | None = None,
                 estimator: str = "dankar", subset: Any = None, compare_estimators: bool = False) -> RiskProfile:
    """Re-identification risk of a table or a published partition.

    Parameters
    ----------
    data : Table or Partition
        A Table is analysed as it is (classes: rows with the same quasi-identifier values); a Partition as
        published (its classes, suppressed rows left out).
    threshold : float in [0, 1], default=0.2
        A record is at risk when its risk exceeds the threshold (0.2: classes smaller than 5).
    population_size : float, default=None
        Records in the population the published records were drawn from: enables the population uniqueness
        estimate. With a ``subset`` and no population size, the table is the population and its uniques are
        counted exactly (``population.used == 'exact'``).
    estimator : {'dankar', 'pitman', 'zayatz', 'snb'}, default='dankar'
    subset : bool mask or int indices, default=None
        Research subset: the rows that are published; the whole table is then the population and the
        journalist and marketer models use each class's population count ``F``.
    compare_estimators : bool, default=False
        Also run the estimators the answer does not need (``population.all`` then holds Pitman, Zayatz and SNB).

    Returns
    -------
    RiskProfile

    Notes
    -----
    One group-by (C++; cached per table) gives the class of every row, two bincounts the sample and population
    counts; the summaries are vectorised over classes, and the population estimators work on the frequencies
    of class sizes (a few hundred numbers). Census-income (299,285 rows, 8 QIs): see ``docs/risk.md``.

    Examples
    --------
    >>> from anoncore import Partition
    >>> from anoncore.datasets import toy_table
    >>> p = Partition.from_levels(toy_table(), [1, 0])
    >>> r = risk_profile(p, threshold=0.4)
    >>> r.prosecutor.highest_risk, r.prosecutor.records_at_risk, r.prosecutor.average_risk
    (0.5, 1.0, 0.5)
    """
    t0 = time.perf_counter()
    thr = check_float(threshold, "threshold", "risk_profile", 0, 1)
    if not isinstance(estimator, str) or estimator not in ESTIMATORS:
        raise ValueError(f"The 'estimator' parameter of risk_profile must be a str among {list(ESTIMATORS)}. "
                         f"Got {estimator!r} instead.")
    labels, f, F, published = class_counts(data, subset, "risk_profile")
    n_rows = labels.shape[0]
    n = int(f.sum())
    if n == 0:
        raise ValueError("risk_profile needs at least one published record. Got none (every row is suppressed "
                         "or outside the subset).")
    exact_population = subset is not None and population_size is None
    t_group = time.perf_counter()
    live = f > 0
    fl = f[live].astype(np.float64)
    Fl = F[live].astype(np.float64)
    J = int(live.sum())
    # prosecutor
    pros_risk = 1.0 / fl
    pros = AttackerRisk("prosecutor", float(fl[pros_risk > thr].sum()) / n, float(pros_risk.max()), J / n)
    # journalist (population counts F; without a population, F = f)
    jour_risk = 1.0 / Fl
    avg_j = float((fl / Fl).sum()) / n
    jour = AttackerRisk("journalist", float(fl[jour_risk > thr].sum()) / n, float(jour_risk.max()), avg_j)
    mark = AttackerRisk("marketer", math.nan, math.nan, avg_j)
    uniques = int((fl == 1).sum())
    size_counts = np.bincount(f[live])  # class sizes are small integers: a bincount, not a sort
    sizes = np.flatnonzero(size_counts).astype(np.int64)
    counts = size_counts[sizes]
    distribution = tuple((int(s), int(s * c)) for s, c in zip(sizes, counts))
    edges = np.asarray(HISTOGRAM_EDGES)
    bins = np.searchsorted(edges, 1.0 / sizes, side="left") - 1
    hist = np.zeros(edges.size - 1, dtype=np.int64)
    np.add.at(hist, np.clip(bins, 0, edges.size - 2), sizes * counts)
    with np.errstate(divide="ignore"):
        inv = 1.0 / f.astype(np.float64)
    rr = inv[labels]
    rr[~published] = np.nan
    t_summary = time.perf_counter()
    pop = None
    if exact_population:  # the table is the population: its uniques are counted, not estimated
        u = float((F == 1).sum())
        pop = PopulationEstimate("exact", "exact", float(n_rows), n / n_rows, u, u / n_rows, {})
    elif population_size is not None:
        pop = population_uniques(f[live], population_size, estimator, compare=compare_estimators)
    t_end = time.perf_counter()
    return RiskProfile(n, J, n_rows - n, thr, pros, jour, mark, uniques, uniques / n, pop, _readonly(rr),
                       distribution, _readonly(hist),
                       {"group_s": t_group - t0, "summary_s": t_summary - t_group, "population_s": t_end - t_summary,
                        "total_s": t_end - t0})
