"""ARX's estimated k-map (``KMap(k, population_size=N, estimator=...)``): the derived k against SciPy's Poisson
distribution (an independent computation of the same definition), and every search that takes it against the
same search on the k-anonymity of that k, with the independent audit on the output."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import poisson

from anoncore import Partition, audit
from anoncore.models import KAnonymity, KMap
from anoncore.risk import risk_lattice_search
from anoncore.risk.kmap import derived_k
from anoncore.static.lattice import datafly, lattice_search


def _oracle(k: int, n: int, N: float, alpha: float, estimator: str) -> tuple[int, float] | None:
    """The derived k from SciPy's CDF (regularized gamma), or None when the CDF is within 1e-9 of the threshold
    at the stopping point (a tie the two computations may break apart)."""
    lam = n / N * k
    thr = 1.0 - alpha
    if estimator == "poisson":
        c, first = 0, 2
        cdf = lambda x: poisson.cdf(x, lam)
    else:
        p0 = poisson.pmf(0, lam)
        c, first = 1, 1
        cdf = lambda x: (poisson.cdf(x, lam) - p0) / (1.0 - p0)
    while cdf(c) < thr:
        c += 1
        if c > 10 * k + 100:
            return min(k, n), math.nan
    if abs(cdf(c) - thr) < 1e-9 or (c > (0 if estimator == "poisson" else 1) and abs(cdf(c - 1) - thr) < 1e-9):
        return None
    return min(k, n, c + first), 1.0 - cdf(c)


def test_derived_k_worked_example() -> None:
    # lambda = 1000 / 10000 * 5 = 0.5. Poisson: P(X <= 2) = e^-0.5 (1 + 0.5 + 0.125) = 0.98561 < 0.99 and
    # P(X <= 3) = 0.98561 + e^-0.5 0.5^3 / 6 = 0.99825 >= 0.99, so c = 3 and ARX's count gives 5 = k.
    # Zero-truncated: P(X = x | X >= 1) = P(X = x) / (1 - e^-0.5): 0.77075, 0.96344, 0.99555 for x <= 1, 2, 3,
    # so c = 3 and the derived k is 4, with a type-I error of 1 - 0.99555.
    d = derived_k(5, 1000, 10_000, 0.01, "poisson")
    assert d.k == 5 and d.type1_error == pytest.approx(1 - 0.998248, abs=1e-6)
    z = derived_k(5, 1000, 10_000, 0.01, "zero_truncated_poisson")
    assert (z.k, z.sampling_fraction) == (4, 0.1)
    assert z.type1_error == pytest.approx(1 - 0.995549, abs=1e-6)
    # a sample that is the population: lambda = k, and the derived k never exceeds k nor the sample
    assert derived_k(3, 10, 10, 0.2).k == 3
    assert derived_k(50, 20, 1e6, 0.01, "zero_truncated_poisson").k <= 20


@settings(max_examples=150, deadline=None)
@given(k=st.integers(1, 400), n=st.integers(1, 200_000), ratio=st.floats(1.0, 1e4),
       alpha=st.sampled_from([0.001, 0.01, 0.05, 0.1, 0.3]),
       estimator=st.sampled_from(["poisson", "zero_truncated_poisson"]))
def test_derived_k_equals_scipy(k: int, n: int, ratio: float, alpha: float, estimator: str) -> None:
    want = _oracle(k, n, n * ratio, alpha, estimator)
    if want is None:
        return
    got = derived_k(k, n, n * ratio, alpha, estimator)
    assert got.k == want[0]
    if got.k < min(k, n) and not math.isnan(want[1]):
        assert got.type1_error == pytest.approx(want[1], abs=1e-9)
    assert 1 <= got.k <= min(k, n)


def test_derived_k_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="smaller than the sample"):
        derived_k(5, 1000, 999)
    with pytest.raises(ValueError, match="estimator"):
        derived_k(5, 1000, 1e5, 0.01, "binomial")
    with pytest.raises(ValueError, match="needs a population_size"):
        KMap(5, estimator="poisson")
    with pytest.raises(ValueError, match="estimator"):
        KMap(5, population_size=1e5, estimator="D3")
    with pytest.raises(ValueError, match="needs an estimator"):
        KMap(5, population_size=1e5).derived(100)
    # its threshold depends on the table's size: per-class values alone are refused, not judged against k
    with pytest.raises(ValueError, match="derived from the table's size"):
        KMap(5, population_size=1e5, estimator="poisson").evaluate(np.array([4.0, 9.0]))


@pytest.mark.parametrize("estimator", ["poisson", "zero_truncated_poisson"])
@pytest.mark.parametrize("k, N, sup", [(20, 100_000, 0.04), (100, 60_000, 0.0), (40, 1e6, 0.02)])
def test_search_equals_k_anonymity_of_the_derived_k(adult, estimator: str, k: int, N: float, sup: float) -> None:
    m = KMap(k, population_size=N, estimator=estimator)
    kd = m.derived(adult.n_rows).k
    assert kd < k  # (each case derives a smaller k: the reading changes the search)
    got = lattice_search(adult, [m], suppression_limit=sup, metric="loss")
    want = lattice_search(adult, [KAnonymity(kd)], suppression_limit=sup, metric="loss")
    assert got.partition.levels == want.partition.levels
    assert np.array_equal(got.partition.suppressed, want.partition.suppressed)
    assert got.achieved["passed"] and got.achieved["KMap.k"] >= kd
    assert got.parameters["models"] == (m,)
    risk = risk_lattice_search(adult, [m], suppression_limit=sup, metric="loss")
    assert risk.partition.levels == want.partition.levels
    assert risk.partition.n_suppressed == want.partition.n_suppressed
    heur = datafly(adult, [m], suppression_limit=sup)
    assert heur.partition.levels == datafly(adult, [KAnonymity(kd)], suppression_limit=sup).partition.levels


def test_audit_judges_the_derived_k(adult) -> None:
    m = KMap(20, population_size=100_000, estimator="zero_truncated_poisson")
    kd = m.derived(adult.n_rows).k
    assert kd == 13
    levels = tuple(lattice_search(adult, [KAnonymity(kd)]).partition.levels)
    part = Partition.from_levels(adult, levels)
    sizes = np.bincount(part.labels)
    rep = audit(adult, part, [m])
    assert rep.passed == bool(sizes.min() >= kd)
    assert rep.models[0].achieved == sizes.min()
    assert rep.models[0].derived_k == kd and rep.models[0].to_dict()["derived_k"] == kd
    assert f"(derived k = {kd})" in str(rep)
    assert "derived_k" not in audit(adult, part, [KAnonymity(5)]).models[0].to_dict()
    # a partition whose smallest class is below the derived k fails, with exactly those classes
    bottom = Partition.from_levels(adult, (0,) * len(adult.quasi_identifiers))
    bsizes = np.bincount(bottom.labels)
    rb = audit(adult, bottom, [m])
    assert not rb.passed
    assert rb.models[0].n_violating == int((bsizes < kd).sum()) > 0
    assert np.array_equal(np.sort(rb.models[0].violating), np.flatnonzero(bsizes < kd))


def test_dask_search_takes_the_derived_k(adult) -> None:
    from anoncore.distributed import FrequencySet
    from anoncore.distributed import lattice_search as dask_search

    m = KMap(30, population_size=200_000, estimator="poisson")
    freq = FrequencySet.from_table(adult)
    got = dask_search(freq, [m], suppression_limit=0.02, metric="loss")
    want = lattice_search(adult, [m], suppression_limit=0.02, metric="loss")
    assert tuple(got.levels) == tuple(want.partition.levels)


def test_cli_kmap_specs() -> None:
    from anoncore.cli._common import parse_model_spec

    assert parse_model_spec("kmap-poisson=20,1e5").build() == KMap(20, population_size=1e5, estimator="poisson")
    ztp = parse_model_spec("kmap-ztp=20,1e5")
    assert ztp.build() == KMap(20, population_size=1e5, estimator="zero_truncated_poisson")
    assert ztp.to_dict()["parameters"] == {"k": 20, "population_size": 1e5, "estimator": "zero_truncated_poisson"}
    assert parse_model_spec("kmap=20,1e5").build() == KMap(20, population_size=1e5)
