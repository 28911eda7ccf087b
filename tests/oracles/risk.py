"""Slow, straight-from-the-formula oracles for anoncore.risk (no code shared with the library).

Class counts with dicts, hypergeometric and negative binomial probabilities from scipy.stats, the Pitman
likelihood as explicit loops maximised by Nelder-Mead, SNB's sample-size probabilities as truncated series.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np
from scipy import optimize, stats


def classes(rows: list[tuple[Any, ...]]) -> Counter:
    return Counter(rows)


def prosecutor(rows: list[tuple[Any, ...]], threshold: float) -> dict[str, float]:
    c = classes(rows)
    n = len(rows)
    risks = [1.0 / c[r] for r in rows]
    return {"records_at_risk": sum(1 for x in risks if x > threshold) / n, "highest_risk": max(risks),
            "average_risk": sum(risks) / n, "sample_uniqueness": sum(1 for r in rows if c[r] == 1) / n}


def journalist(sample: list[tuple[Any, ...]], population: list[tuple[Any, ...]], threshold: float
               ) -> dict[str, float]:
    F = classes(population)
    n = len(sample)
    risks = [1.0 / F[r] for r in sample]
    return {"records_at_risk": sum(1 for x in risks if x > threshold) / n, "highest_risk": max(risks),
            "average_risk": sum(risks) / n}


def freqs(sizes: list[int]) -> dict[int, int]:
    return dict(Counter(s for s in sizes if s > 0))


def zayatz(sizes: list[int], N: int) -> float:
    f = freqs(sizes)
    n = sum(i * c for i, c in f.items())
    u = sum(f.values())
    f1 = f.get(1, 0)
    if f1 == 0:
        return 0.0
    den = sum((c / u) * stats.hypergeom(N, i, n).pmf(1) for i, c in f.items())
    p = (f1 / u) * stats.hypergeom(N, 1, n).pmf(1) / den
    return f1 * p * N / n


def pitman_loglik(theta: float, alpha: float, sizes: list[int]) -> float:
    s = [x for x in sizes if x > 0]
    n = sum(s)
    u = len(s)
    ll = 0.0
    for i in range(1, u):
        ll += math.log(theta + i * alpha)
    for i in range(1, n):
        ll -= math.log(theta + i)
    for nj in s:
        for l in range(1, nj):
            ll += math.log(l - alpha)
    return ll


def pitman_fit(sizes: list[int]) -> tuple[float, float]:
    def neg(z: np.ndarray) -> float:
        theta = math.exp(z[0])
        alpha = 1.0 / (1.0 + math.exp(-z[1]))
        return -pitman_loglik(theta, alpha, sizes)

    best = None
    for z0 in ([0.0, 0.0], [2.0, -2.0], [4.0, 2.0]):
        r = optimize.minimize(neg, np.array(z0), method="Nelder-Mead",
                              options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20000})
        if best is None or r.fun < best.fun:
            best = r
    return math.exp(best.x[0]), 1.0 / (1.0 + math.exp(-best.x[1]))


def pitman_uniques(theta: float, alpha: float, N: int) -> float:
    # prod_{m=1}^{N-1} (theta + alpha + m - 1) / (theta + m), as a sum of logs
    m = np.arange(1, N, dtype=np.float64)
    return N * math.exp(float(np.sum(np.log(theta + alpha + m - 1) - np.log(theta + m))))


def snb_probs(alpha: float, p: float, pi: float, fmax: int = 4000) -> tuple[float, float]:
    """P(f = 1), P(f = 2) with F - 1 ~ NB(alpha, p), f | F ~ Bin(F, pi): a truncated series."""
    F = np.arange(1, fmax + 1)
    pf = stats.nbinom.pmf(F - 1, alpha, p)
    return float(np.sum(pf * stats.binom.pmf(1, F, pi))), float(np.sum(pf * stats.binom.pmf(2, F, pi)))


def shlosser(sizes: list[int], pi: float) -> float:
    f = freqs(sizes)
    u = sum(f.values())
    num = sum((1 - pi) ** i * c for i, c in f.items())
    den = sum(i * pi * (1 - pi) ** (i - 1) * c for i, c in f.items())
    return u + f.get(1, 0) * num / den


def snb(sizes: list[int], N: int) -> float:
    f = freqs(sizes)
    n = sum(i * c for i, c in f.items())
    pi = n / N
    K = shlosser(sizes, pi)
    f1, f2 = f.get(1, 0), f.get(2, 0)

    def eq(z: np.ndarray) -> list[float]:
        a = math.exp(z[0])
        p = 1.0 / (1.0 + math.exp(-z[1]))
        p1, p2 = snb_probs(a, p, pi)
        return [K * p1 / f1 - 1.0, K * p2 / f2 - 1.0]

    for z0 in ([0.0, 0.0], [-2.0, -2.0], [2.0, 2.0]):
        z, _info, ier, _ = optimize.fsolve(eq, np.array(z0), full_output=True, xtol=1e-13)
        if ier == 1 and max(abs(x) for x in eq(z)) < 1e-8:
            a = math.exp(z[0])
            p = 1.0 / (1.0 + math.exp(-z[1]))
            return K * p ** a
    return math.nan


def distinction_separation(rows: list[tuple[Any, ...]]) -> tuple[float, float]:
    n = len(rows)
    c = classes(rows)
    same = 0
    for i in range(n):
        for j in range(n):
            if i != j and rows[i] == rows[j]:
                same += 1
    return len(c) / n, 1.0 - same / (n * (n - 1))
