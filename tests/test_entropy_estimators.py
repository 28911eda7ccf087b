"""Entropy l-diversity with Grassberger's estimator (ARX's EntropyEstimator.GRASSBERGER): the criteria core's
estimate against scipy's digamma, the lattice search against the exhaustive oracle, the audit, and ARX's
optima on Adult (TestAnonymizationEntropyLDiversity)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import lattice as oracle
from scipy.special import digamma
from test_lattice import problems

from anoncore import InfeasibleError, Table, _core
from anoncore.audit import audit
from anoncore.models import EntropyLDiversity, KAnonymity
from anoncore.results import Partition
from anoncore.static.lattice import METRICS, lattice_search


def test_estimate_equals_scipy_definition() -> None:
    rng = np.random.default_rng(5)
    hist = rng.integers(0, 60, size=(400, 7)).astype(np.int64)
    hist[::7, 3:] = 0
    hist[1::11] = rng.integers(0, 3, size=7)
    hist[5] = [1, 1, 0, 0, 0, 0, 0]
    hist[6] = [2, 2, 0, 0, 0, 0, 0]
    hist[7] = [100000, 99999, 1, 0, 0, 0, 0]
    hist[8] = 0
    sizes = hist.sum(axis=1)
    got = _core.criteria.entropy_grassberger(hist, sizes)
    for c in range(hist.shape[0]):
        counts = [int(x) for x in hist[c] if x > 0]
        if not counts:
            assert np.isnan(got[c])
            continue
        n = sum(counts)
        g = [digamma(f) + 0.5 * (-1) ** f * (digamma((f + 1) / 2) - digamma(f / 2)) for f in counts]
        want = math.log(n) - sum(f * x for f, x in zip(counts, g)) / n
        assert abs(got[c] - want) <= 1e-12 * max(1.0, abs(want)), (c, counts, got[c], want)
    # the worked values of the docs: {1, 1} -> 2 ln 2 + gamma, {2, 2} -> 2 ln 2 - 2 + gamma + ln 2
    np.testing.assert_allclose(got[5], 2 * math.log(2) + np.euler_gamma, rtol=1e-14)
    np.testing.assert_allclose(got[6], 3 * math.log(2) - 2 + np.euler_gamma, rtol=1e-14)
    # large counts: Grassberger's estimate tends to the plug-in one
    np.testing.assert_allclose(got[7], _core.criteria.entropy(hist[7:8], sizes[7:8])[0], atol=1e-4)


def _one_class_table(counts: list[list[int]]) -> Table:
    import pandas as pd

    from anoncore import Attribute, Hierarchy, Schema
    rows_q, rows_s = [], []
    for ci, cl in enumerate(counts):
        for v, f in enumerate(cl):
            rows_q += [f"c{ci}"] * f
            rows_s += [f"s{v}"] * f
    leaves = sorted(set(rows_q))
    h = Hierarchy.from_rows([(x, "*") for x in leaves])
    schema = Schema((Attribute("q", "quasi_identifier", "categorical", hierarchy=h),
                     Attribute("s", "sensitive", "categorical")))
    return Table.from_pandas(pd.DataFrame({"q": rows_q, "s": rows_s}), schema)


def test_not_monotone_under_generalization() -> None:
    # two classes {1, 1} pass Grassberger entropy 2-diversity (estimate 1.96 > ln 2); their union {2, 2}
    # (0.66) does not: the bottom node is feasible, the top one is not, and the search finds the bottom
    table = _one_class_table([[1, 1], [1, 1]])
    m = EntropyLDiversity(2, estimator="grassberger")
    p0 = Partition.from_levels(table, (0,))
    p1 = Partition.from_levels(table, (1,))
    assert audit(table, p0, [m]).passed and not audit(table, p1, [m]).passed
    assert audit(table, p1, [EntropyLDiversity(2)]).passed  # Shannon: ln 2 exactly
    res = lattice_search(table, [m], metric="height")
    assert res.partition.levels == (0,) and res.achieved["passed"]
    # fewer than ceil(l) distinct values fails whatever the estimate ({1, 1}: 1.96 > ln 5, 2 values < 5)
    assert not audit(table, p0, [EntropyLDiversity(5, estimator="grassberger")]).passed
    np.testing.assert_allclose(audit(table, p0, [m]).models[0].achieved, 2.0)


GRASSBERGER_SETS = [
    [EntropyLDiversity(1.7, estimator="grassberger")],
    [EntropyLDiversity(2.0, estimator="grassberger")],
    [KAnonymity(2), EntropyLDiversity(2.5, estimator="grassberger")],
    [EntropyLDiversity(3.0, estimator="grassberger")],
]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(problems(), st.sampled_from(range(len(GRASSBERGER_SETS))), st.sampled_from([0.0, 0.1, 0.3]),
       st.sampled_from(list(METRICS)))
def test_search_equals_exhaustive(prob: tuple[Table, int], mi: int, limit: float, metric: str) -> None:
    table, _ = prob
    models = GRASSBERGER_SETS[mi]
    stats = oracle.every_node(table, models, limit)
    vals = {lv: oracle.metric_value(table, s, metric) for lv, s in stats.items() if s["feasible"]}
    if not vals:
        with pytest.raises(InfeasibleError):
            lattice_search(table, models, suppression_limit=limit, metric=metric)
        return
    best = min(vals.values())
    for strategy in ("optimal", "exhaustive"):
        res = lattice_search(table, models, suppression_limit=limit, metric=metric, strategy=strategy)
        lv = res.partition.levels
        assert lv in vals, (metric, lv)
        np.testing.assert_allclose(vals[lv], best, rtol=1e-9, atol=1e-12)
        assert res.achieved["n_suppressed"] == stats[lv]["suppressed"]
        assert res.achieved["passed"]


# ARX 3.9 TestAnonymizationEntropyLDiversity cases 0, 2 and 3 (Adult, sensitive occupation, metric
# Metric.createPrecomputedEntropyMetric(0.1, false) = non-monotone non-uniform entropy): score and levels.
# Without suppression ARX's optimum is reproduced. With suppression it is not: at ARX's own node anoncore's
# verdict (Grassberger 2003 eq. 35) suppresses fewer rows than ARX does (case 0: 879 rows, score 214678.9
# against ARX's 216092.1; Shannon would give 220093.5), so ARX's Grassberger verdict differs in a detail not
# pinned down (integer-division halves, psi(N) for ln N, Grassberger 1988's G, mixed log bases all tried).
_ARX_DIFFERS = pytest.mark.xfail(strict=True, reason="ARX's Grassberger verdict differs under suppression")
ARX_CASES = [
    pytest.param(5, 0.04, 216092.124036387, (1, 0, 1, 0, 3, 2, 2, 0), marks=_ARX_DIFFERS),
    (5, 0.0, 324620.5269918692, (1, 1, 1, 1, 3, 2, 2, 1)),
    pytest.param(3, 0.05, 180347.4325366015, (0, 0, 1, 1, 2, 2, 2, 0), marks=_ARX_DIFFERS),
]


@pytest.mark.parametrize(("l", "limit", "score", "levels"), ARX_CASES)
def test_arx_optima_on_adult(adult_occupation, l: int, limit: float, score: float,  # type: ignore[no-untyped-def]
                             levels: tuple[int, ...]) -> None:
    res = lattice_search(adult_occupation, [EntropyLDiversity(l, estimator="grassberger")],
                         suppression_limit=limit, metric="entropy_nm")
    assert res.achieved["passed"]
    np.testing.assert_allclose(res.metrics["entropy_nm"], score, rtol=1e-12)
    assert res.partition.levels == levels
