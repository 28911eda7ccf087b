"""ARX's estimated k-map: a derived k for k-anonymity from a model of the population's cell sizes.

ARX reads an estimated k-map (K. El Emam and F. Dankar, "Protecting privacy using k-anonymity", JAMIA 15(5),
2008: estimators D3, after Pannekoek 1999, and D4) as k-anonymity with a smaller, *derived* k: a sample of
``n`` records drawn from a population of ``N`` (sampling fraction ``pi = n / N``) sees a population cell of
``k`` records as about ``lambda = pi k`` records, and the derived k is where the cell-size distribution with
that mean has collected ``1 - significance`` of its probability:

- ``'poisson'`` (D3): the least ``c >= 0`` with ``P(X <= c) >= 1 - significance``, ``X ~ Poisson(lambda)``;
  the derived k is ``c + 2`` (ARX's count, kept so that the same configuration gives the same k);
- ``'zero_truncated_poisson'`` (D4): the same over ``X ~ Poisson(lambda)`` conditioned on ``X >= 1``, least
  ``c >= 1``; the derived k is ``c + 1``.

The derived k is at most ``k`` and at most ``n``; the type-I error is ``1 - P(X <= c)`` at that ``c``. This is
ARX's reading; anoncore's own estimated k-map (:class:`anoncore.models.KMap` without ``estimator``) bounds
``P(F < k)`` per class instead (docs/risk.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from anoncore._validation import check_float, check_int, check_option

#: The cell-size models of ARX's estimated k-map.
KMAP_ESTIMATORS = ("poisson", "zero_truncated_poisson")


@dataclass(frozen=True, slots=True)
class DerivedK:
    """The k-anonymity that stands for an estimated k-map (:func:`derived_k`).

    Attributes
    ----------
    k : int
        The derived k (at most the k-map's k and the sample's size).
    type1_error : float
        ``1 - P(X <= c)`` where the search for the derived k stopped.
    sampling_fraction : float
        ``n / N``.
    """

    k: int
    type1_error: float
    sampling_fraction: float


def _poisson_log_pmf(c: int, lam: float) -> float:
    return -lam + c * math.log(lam) - math.lgamma(c + 1.0)


def derived_k(k: int, n_rows: int, population_size: float, significance: float = 0.01,
              estimator: str = "poisson") -> DerivedK:
    """ARX's derived k of an estimated k-map (see the module's text for the definition).

    Parameters
    ----------
    k : int
        The k-map's k (at least 1).
    n_rows : int
        The sample's records (ARX: every record of the input table, suppressed ones included).
    population_size : float
        ``N``, at least ``n_rows``.
    significance : float in (0, 1)
    estimator : {'poisson', 'zero_truncated_poisson'}

    Examples
    --------
    >>> derived_k(100, 30_162, 60_000, 0.01).k  # lambda = 0.5027 * 100
    69
    >>> d = derived_k(5, 1000, 10_000, 0.01, "zero_truncated_poisson")
    >>> d.k, round(d.sampling_fraction, 3)
    (4, 0.1)
    """
    caller = "derived_k"
    check_int(k, "k", caller, 1)
    check_int(n_rows, "n_rows", caller, 1)
    check_float(population_size, "population_size", caller, 1)
    check_float(significance, "significance", caller, 0, 1, closed="neither")
    check_option(estimator, "estimator", caller, list(KMAP_ESTIMATORS))
    if float(population_size) < n_rows:
        raise ValueError(f"derived_k: the population_size {population_size!r} is smaller than the sample's "
                         f"{n_rows} records.")
    pi = n_rows / float(population_size)
    lam = pi * int(k)
    threshold = 1.0 - float(significance)
    zt = estimator == "zero_truncated_poisson"
    # P(X = 0) = exp(-lambda); the truncated model divides every term by 1 - P(X = 0)
    norm = -math.expm1(-lam) if zt else 1.0
    c = 1 if zt else 0
    value = 0.0
    while True:
        term = math.exp(_poisson_log_pmf(c, lam)) / norm
        value += term
        if value >= threshold:
            break
        if c > lam and term == 0.0:  # no mass left to add (the sum rounds below the threshold): k itself
            break
        c += 1
    got = c + 1 if zt else c + 2
    return DerivedK(min(int(k), got, int(n_rows)), max(0.0, 1.0 - value), pi)
