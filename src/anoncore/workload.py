"""Query-workload utility measures of the SABRE/BUREL experiments (spec sabre-burel.md §2.4).

* :func:`count_query_error`: median relative error of random COUNT queries (Xiao & Tao, SIGMOD 2008).
* :func:`olap_kl`: KL-divergence between OLAP count cubes of the original and anonymized tables
  (Ghinita et al., VLDB 2007).

Both work on codes: a numeric attribute's domain is its sorted distinct values (ranks), a categorical one its
pre-order leaves, so every published box is an interval of codes.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from numpy.typing import NDArray

from anoncore import _core
from anoncore._validation import check_float, check_instance, check_int
from anoncore.results import Partition

__all__ = ["count_query_error", "olap_kl"]


def _sa(partition: Partition, sensitive: str | None, caller: str) -> tuple[NDArray[np.int32], int]:
    t = partition.table
    name = t.sensitive_column(sensitive, caller=caller)
    return t.column(name), t.cardinality(name)


def _class_hist(partition: Partition, sa: NDArray[np.int32], m: int) -> NDArray[np.int64]:
    keep = ~partition.suppressed
    C = partition.n_classes
    return np.ascontiguousarray(np.bincount(partition.labels[keep] * m + sa[keep], minlength=C * m).reshape(C, m))


def count_query_error(
    partition: Partition,
    *,
    n_queries: int = 10_000,
    lam: int = 3,
    theta: float = 0.1,
    rng: int | np.random.Generator | None = None,
    sensitive: str | None = None,
    n_threads: int | None = None,
) -> float:
    """Median relative error of random COUNT queries on the published table.

    Each query is ``SELECT COUNT(*) WHERE A_1 in R_1 AND ... AND A_lam in R_lam AND SA in R_SA`` over ``lam``
    random quasi-identifiers; every range covers ``|A| theta^(1/(lam+1))`` (rounded half-up) consecutive codes (at least
    one) starting uniformly at random, so that the expected selectivity is ``theta``. The estimate assumes
    tuples spread uniformly over the integer points of their class's box, with exact SA counts. Queries whose
    exact answer is 0 are dropped. Suppressed rows count in the exact answer only.

    Parameters
    ----------
    partition : Partition
    n_queries : int, default=10000
    lam : int, default=3
        Number of QI predicates (capped at the number of quasi-identifiers).
    theta : float, default=0.1
        Expected selectivity, in (0, 1].
    rng : int, Generator or None, default=None
        Seeds the workload (use the same seed to compare methods on the same queries).
    sensitive : str, default=None
    n_threads : int, default=None

    Returns
    -------
    float
        The median of ``|est - exact| / exact`` (a fraction; multiply by 100 for percent); NaN when every query
        has exact answer 0.

    Examples
    --------
    >>> from anoncore.datasets import toy_table
    >>> p = Partition.from_labels(toy_table(), [0, 1, 2, 3, 4, 5])
    >>> count_query_error(p, n_queries=50, lam=1, theta=0.5, rng=0)
    0.0
    """
    caller = "count_query_error"
    part = check_instance(partition, "partition", caller, Partition, "a Partition")
    check_int(n_queries, "n_queries", caller, 1)
    check_int(lam, "lam", caller, 1)
    check_float(theta, "theta", caller, 0, 1, closed="right")
    t = part.table
    sa, m = _sa(part, sensitive, caller)
    qis = t.quasi_identifiers
    d = len(qis)
    lam = min(int(lam), d)
    gen = np.random.default_rng(rng)
    cards = np.array([t.cardinality(q) for q in qis], dtype=np.int64)
    frac = float(theta) ** (1.0 / (lam + 1))
    dims = np.empty((n_queries, lam), dtype=np.int32)
    for i in range(n_queries):
        dims[i] = np.sort(gen.choice(d, lam, replace=False))
    length = np.maximum(1, np.floor(cards[dims] * frac + 0.5)).astype(np.int64)  # half-up
    lo = (gen.random(dims.shape) * (cards[dims] - length + 1)).astype(np.int64)
    hi = lo + length - 1
    sl = max(1, int(np.floor(m * frac + 0.5)))
    sa_lo = (gen.random(n_queries) * (m - sl + 1)).astype(np.int64)
    sa_hi = sa_lo + sl - 1
    hist = _class_hist(part, sa, m)
    prefix = np.zeros((part.n_classes, m + 1), dtype=np.int64)
    np.cumsum(hist, axis=1, out=prefix[:, 1:])
    def i32(a: NDArray[np.integer[Any]]) -> NDArray[np.int32]:
        return np.ascontiguousarray(a, dtype=np.int32)

    exact, est = _core.workload.count_queries(
        t.qi_codes(), i32(sa), i32(part.gen_lo), i32(part.gen_hi), prefix, dims, i32(lo), i32(hi), i32(sa_lo),
        i32(sa_hi), 0 if n_threads is None else int(n_threads))
    ok = exact > 0
    if not ok.any():
        return float("nan")
    return float(np.median(np.abs(est[ok] - exact[ok]) / exact[ok]))


def olap_kl(partition: Partition, *, level: int = 2, sensitive: str | None = None) -> float:
    """KL-divergence between the OLAP count cubes of the original and the published table at one level.

    For every set of ``level`` quasi-identifiers, the cube ``GROUP BY A_1..A_level, SA`` of the original rows
    (alpha) is compared with the cube of the published table (beta: each class spread uniformly over the cells
    of its box, SA counts exact) as ``KL(alpha || beta)`` over cell probabilities, natural logarithm. Over the
    SA values this is the frequency-weighted average of the per-value cubes' KL. Returns the mean over the
    ``C(d, level)`` GROUP-BYs. Suppressed rows are not counted.

    Examples
    --------
    >>> from anoncore.datasets import toy_table
    >>> p = Partition.from_labels(toy_table(), [0, 1, 2, 3, 4, 5])
    >>> olap_kl(p, level=2)
    0.0
    """
    caller = "olap_kl"
    part = check_instance(partition, "partition", caller, Partition, "a Partition")
    t = part.table
    d = len(t.quasi_identifiers)
    check_int(level, "level", caller, 1, d)
    sa, m = _sa(part, sensitive, caller)
    keep = ~part.suppressed
    qc = np.ascontiguousarray(t.qi_codes()[keep]) if not keep.all() else t.qi_codes()
    sak = np.ascontiguousarray(sa[keep], dtype=np.int32)
    hist = _class_hist(part, sa, m)
    cards = np.array([t.cardinality(q) for q in t.quasi_identifiers], dtype=np.int64)
    vals = []
    for sub in itertools.combinations(range(d), int(level)):
        dims = np.array(sub, dtype=np.int32)
        vals.append(_core.workload.olap_kl(qc, sak, m, dims, np.ascontiguousarray(cards[dims]), part.gen_lo,
                                           part.gen_hi, hist))
    return float(np.mean(vals))
