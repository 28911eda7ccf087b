"""Population uniqueness estimators: Zayatz, Pitman, SNB, and Dankar et al.'s decision rule among them.

Every estimator works on the sample's *frequencies of frequencies*: ``f_i``, the number of equivalence classes
of size ``i`` in the sample (``n = sum i f_i`` records, ``u = sum f_i`` classes), with a population of ``N``
records and the sampling fraction ``pi = n / N``. Each returns the estimated number of records of the
population that are unique on the quasi-identifiers; the *population uniqueness* is that number over ``N``
(as in ARX). Definitions and references: ``docs/risk.md``.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from anoncore._validation import check_float

_NEEDS_SCIPY = "The population uniqueness estimators need SciPy: pip install 'anoncore[risk]'."


class _LazyModule:
    """A SciPy module imported on first use: the population estimators need SciPy (the 'risk' extra), the
    sample risks do not, and importing ``scipy.optimize`` costs about 0.4 s of every ``import anoncore``."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: Any = None

    def __getattr__(self, attr: str) -> Any:
        if self._module is None:
            try:
                self._module = importlib.import_module(self._name)
            except ImportError as e:  # pragma: no cover - exercised only without SciPy
                raise ImportError(_NEEDS_SCIPY) from e
        return getattr(self._module, attr)


optimize: Any = _LazyModule("scipy.optimize")
special: Any = _LazyModule("scipy.special")

__all__ = [
    "ESTIMATORS",
    "PopulationEstimate",
    "frequencies",
    "pitman",
    "population_uniques",
    "shlosser_classes",
    "snb",
    "zayatz",
]

ESTIMATORS = ("dankar", "pitman", "zayatz", "snb")


def frequencies(class_sizes: Any) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Frequencies of frequencies of class sizes: ``(sizes i, counts f_i)`` for every size present (> 0).

    Examples
    --------
    >>> frequencies([1, 1, 3, 2, 0, 3])
    (array([1, 2, 3]), array([2, 1, 2]))
    """
    s = np.asarray(class_sizes, dtype=np.int64).ravel()
    s = s[s > 0]
    if s.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    counts = np.bincount(s)
    i = np.flatnonzero(counts).astype(np.int64)
    return i, counts[i].astype(np.int64)


def _hypergeom_one(N: float, i: NDArray[np.float64], n: float) -> NDArray[np.float64]:
    """P(X = 1) for X ~ Hypergeometric(population N, i successes, n draws), through log-gamma (N may be huge)."""
    # C(i, 1) C(N - i, n - 1) / C(N, n)
    def lbinom(a: Any, b: Any) -> Any:
        return special.gammaln(a + 1) - special.gammaln(b + 1) - special.gammaln(a - b + 1)

    ok = (N - i) >= (n - 1)
    out = np.zeros(i.shape, dtype=np.float64)
    ii = i[ok]
    out[ok] = np.exp(np.log(ii) + lbinom(N - ii, n - 1) - lbinom(N, n))
    return out


def zayatz(sizes: NDArray[np.int64], counts: NDArray[np.int64], population_size: float) -> float:
    """Zayatz (1991): sample uniques times the probability that a sample unique is a population unique, over pi.

    The population's class-size distribution is taken to be the sample's (``f_i / u``); a class of population
    size ``i`` leaves exactly one record in a sample without replacement with the hypergeometric probability
    ``h_i = i C(N - i, n - 1) / C(N, n)``. Then ``P(pop. unique | sample unique) = (f_1/u) h_1 / sum_i (f_i/u)
    h_i`` and the estimate is ``f_1 P / pi``.
    """
    n = float((sizes * counts).sum())
    f1 = float(counts[sizes == 1].sum())
    if f1 == 0:
        return 0.0
    N = float(population_size)
    h = _hypergeom_one(N, sizes.astype(np.float64), n)
    denom = float((counts * h).sum())
    if denom <= 0:
        return math.nan
    p = f1 * float(h[sizes == 1][0]) / denom
    return f1 * p / (n / N)


def _pitman_loglik(theta: float, alpha: float, sizes: NDArray[np.float64], counts: NDArray[np.float64],
                   n: float, u: float) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
    """Log-likelihood of the Pitman sampling formula with its gradient and Hessian in (theta, alpha).

    ``log L = sum_{i=1}^{u-1} log(theta + i alpha) - sum_{i=1}^{n-1} log(theta + i)
    + sum_j sum_{l=1}^{n_j - 1} log(l - alpha)``. The sums over i are direct for few classes or alpha near 0,
    otherwise closed forms in log-gamma and polygamma of ``theta / alpha``; the last sum is grouped by class
    size.
    """
    if u <= 20_000 or alpha <= 1e-6:
        t = theta + alpha * np.arange(1.0, u)
        it = np.arange(1.0, u) / t
        inv = 1.0 / t
        a = float(np.log(t).sum())
        s1, s2 = float(inv.sum()), float((inv * inv).sum())
        si, t1, t2 = float(it.sum()), float((it * inv).sum()), float((it * it).sum())
    else:
        r = theta / alpha
        a = (u - 1) * math.log(alpha) + float(special.gammaln(r + u) - special.gammaln(r + 1))
        s1 = float(special.digamma(r + u) - special.digamma(r + 1)) / alpha
        s2 = float(special.polygamma(1, r + 1) - special.polygamma(1, r + u)) / alpha**2
        si = ((u - 1) - theta * s1) / alpha
        t1 = (s1 - theta * s2) / alpha
        t2 = ((u - 1) - 2 * theta * s1 + theta * theta * s2) / alpha**2
    b = float(special.gammaln(theta + n) - special.gammaln(theta + 1))
    db = float(special.digamma(theta + n) - special.digamma(theta + 1))
    d2b = float(special.polygamma(1, theta + n) - special.polygamma(1, theta + 1))
    c = float((counts * (special.gammaln(sizes - alpha) - special.gammaln(1 - alpha))).sum())
    dc = float((counts * (special.digamma(1 - alpha) - special.digamma(sizes - alpha))).sum())
    d2c = float((counts * (special.polygamma(1, sizes - alpha) - special.polygamma(1, 1 - alpha))).sum())
    grad = np.array([s1 - db, si + dc])
    hess = np.array([[-s2 - d2b, -t1], [-t1, -t2 + d2c]])
    return a - b + c, grad, hess


def _pitman_newton(x0: tuple[float, float], sizes: NDArray[np.float64], counts: NDArray[np.float64], n: float,
                   u: float) -> tuple[float, float, float]:
    """Safeguarded Newton ascent (backtracking; gradient steps where the Hessian is not negative definite)
    inside ``theta > 0, 0 <= alpha < 1``. Returns (theta, alpha, log L)."""
    lo, hi = np.array([1e-10, 0.0]), np.array([np.inf, 1.0 - 1e-9])
    x = np.array(x0, dtype=np.float64)
    f, g, h = _pitman_loglik(x[0], x[1], sizes, counts, n, u)
    for _ in range(200):
        # projected Newton: a variable at a bound whose gradient points outwards stays there
        free = ~(((x <= lo) & (g < 0)) | ((x >= hi) & (g > 0)))
        d = np.zeros(2)
        if free.all():
            try:
                d = np.asarray(np.linalg.solve(h, -g), dtype=np.float64)
            except np.linalg.LinAlgError:
                d = g.copy()
            if not np.all(np.isfinite(d)) or float(g @ d) <= 0 or h[0, 0] >= 0 or np.linalg.det(h) <= 0:
                d = g / np.maximum(np.abs(np.diag(h)), 1e-12)  # scaled gradient ascent
        elif free.any():
            j = int(np.flatnonzero(free)[0])
            d[j] = -g[j] / h[j, j] if h[j, j] < 0 else g[j] / max(abs(h[j, j]), 1e-12)
        else:
            break
        step, moved = 1.0, False
        while step > 1e-14:
            xn = np.clip(x + step * d, lo, hi)
            fn, gn, hn = _pitman_loglik(xn[0], xn[1], sizes, counts, n, u)
            if math.isfinite(fn) and fn >= f:
                moved = True
                break
            step *= 0.5
        if not moved:
            break
        done = abs(fn - f) <= 1e-13 * max(1.0, abs(f)) and np.all(np.abs(xn - x) <= 1e-10 * (1.0 + np.abs(x)))
        x, f, g, h = xn, fn, gn, hn
        if done:
            break
    return float(x[0]), float(x[1]), f


def pitman_parameters(sizes: NDArray[np.int64], counts: NDArray[np.int64]) -> tuple[float, float]:
    """Maximum-likelihood ``(theta, alpha)`` of the Pitman sampling formula for the sample's partition.

    Newton's method from a few starting points (the best optimum kept), within ``theta > 0`` and
    ``0 <= alpha < 1``; NaN when no start gives a finite likelihood.
    """
    s = sizes.astype(np.float64)
    c = counts.astype(np.float64)
    n = float((s * c).sum())
    u = float(c.sum())
    best: tuple[float, float, float] | None = None
    for x0 in ((u / max(math.log(n), 1.0), 0.5), (1.0, 0.1), (max(u / 10.0, 1.0), 0.9)):
        with np.errstate(all="ignore"):
            r = _pitman_newton(x0, s, c, n, u)
        if math.isfinite(r[2]) and best is not None and abs(r[2] - best[2]) <= 1e-9 * max(1.0, abs(best[2])):
            best = r if r[2] > best[2] else best
            break  # two starts reached the same maximum
        if math.isfinite(r[2]) and (best is None or r[2] > best[2]):
            best = r
    if best is None:
        return math.nan, math.nan
    return best[0], best[1]


def pitman(sizes: NDArray[np.int64], counts: NDArray[np.int64], population_size: float) -> float:
    """Pitman's model (Hoshino 2001): expected singletons among N draws of the fitted Pitman process.

    With ``(theta, alpha)`` fitted by maximum likelihood on the sample's partition, the expected number of
    population uniques is ``N (theta + alpha)_(N-1) / (theta + 1)_(N-1)`` (rising factorials), the chance
    that a record's class receives none of the other ``N - 1`` records.
    """
    if float(counts[sizes == 1].sum()) == 0:
        return 0.0
    theta, alpha = pitman_parameters(sizes, counts)
    if not (math.isfinite(theta) and math.isfinite(alpha)):
        return math.nan
    return pitman_expected_uniques(theta, alpha, float(population_size))


def pitman_expected_uniques(theta: float, alpha: float, population_size: float) -> float:
    """``N (theta + alpha)_(N-1) / (theta + 1)_(N-1)``: expected singletons among N draws of a Pitman process."""
    N = float(population_size)
    lg = (special.gammaln(theta + alpha + N - 1) - special.gammaln(theta + alpha)
          - special.gammaln(theta + N) + special.gammaln(theta + 1))
    return float(N * math.exp(lg))


def shlosser_classes(sizes: NDArray[np.int64], counts: NDArray[np.int64], pi: float) -> float:
    """Shlosser's estimate of the number of non-empty population classes (Haas et al. 1995, eq. for D_Sh):
    ``u + f_1 sum_i (1 - pi)^i f_i / sum_i i pi (1 - pi)^(i - 1) f_i``."""
    s = sizes.astype(np.float64)
    c = counts.astype(np.float64)
    u = float(c.sum())
    f1 = float(c[sizes == 1].sum())
    if pi >= 1.0:
        return u
    num = float((np.power(1 - pi, s) * c).sum())
    den = float((s * pi * np.power(1 - pi, s - 1) * c).sum())
    return u + f1 * num / den if den > 0 else math.nan


def _snb_probs(alpha: float, p: float, pi: float) -> tuple[float, float]:
    """P(f = 1), P(f = 2) for population class sizes F = 1 + NB(alpha, p) sampled binomially with pi."""
    d = (1.0 - pi) * (1.0 - p)
    g = (p / (1.0 - d)) ** alpha
    p1 = pi * g * (1.0 + alpha * d / (1.0 - d))
    p2 = 0.5 * pi * pi * alpha * (1.0 - p) * p ** alpha * (2.0 - (1.0 - alpha) * d) / (1.0 - d) ** (alpha + 2.0)
    return p1, p2


def snb(sizes: NDArray[np.int64], counts: NDArray[np.int64], population_size: float) -> float:
    """Chen & Keller-McNulty's slide negative binomial model (1998).

    Population class sizes are ``F = 1 + G``, ``G ~ NegBin(alpha, p)``; a sample keeps each record with
    probability ``pi``. With ``K`` non-empty population classes (Shlosser's estimate), ``(alpha, p)`` solve
    ``K P(f = 1) = f_1`` and ``K P(f = 2) = f_2``; the estimate is ``K P(F = 1) = K p^alpha``. NaN when the
    equations have no solution (e.g. no class of size 2).
    """
    f1 = float(counts[sizes == 1].sum())
    if f1 == 0:
        return 0.0
    f2 = float(counts[sizes == 2].sum())
    n = float((sizes * counts).sum())
    pi = n / float(population_size)
    if f2 == 0 or pi >= 1.0:
        return math.nan
    K = shlosser_classes(sizes, counts, pi)
    if not math.isfinite(K) or K <= 0:
        return math.nan

    def eqs(z: NDArray[np.float64]) -> NDArray[np.float64]:
        alpha = math.exp(z[0])
        p = special.expit(z[1])
        p1, p2 = _snb_probs(alpha, p, pi)
        return np.array([math.log(max(K * p1, 1e-300)) - math.log(f1), math.log(max(K * p2, 1e-300)) - math.log(f2)])

    best = None
    for a0, p0 in ((1.0, 0.5), (0.1, 0.1), (10.0, 0.9), (0.5, 0.01)):
        try:
            r = optimize.least_squares(eqs, np.array([math.log(a0), float(special.logit(p0))]), xtol=1e-14,
                                       ftol=1e-14, gtol=1e-14)
        except (ValueError, FloatingPointError, OverflowError):  # pragma: no cover - defensive
            continue
        if best is None or r.cost < best.cost:
            best = r
        if best.cost <= 1e-12:  # solved
            break
    if best is None or best.cost > 1e-12:
        return math.nan
    alpha = math.exp(best.x[0])
    p = float(special.expit(best.x[1]))
    return float(K * p**alpha)


@dataclass(frozen=True, slots=True)
class PopulationEstimate:
    """Estimated population uniqueness.

    Attributes
    ----------
    estimator : str
        The estimator asked for (``'dankar'``, ``'pitman'``, ``'zayatz'`` or ``'snb'``).
    used : str
        The estimator whose value is reported (Dankar's rule picks one; ``'none'`` without sample uniques).
    population_size : float
    sampling_fraction : float
    uniques : float
        Estimated population uniques (records unique in the population).
    uniqueness : float
        ``uniques / population_size``.
    all : dict
        Every estimator's value (uniques; NaN where it has no solution).
    """

    estimator: str
    used: str
    population_size: float
    sampling_fraction: float
    uniques: float
    uniqueness: float
    all: dict[str, float] = field(default_factory=dict, compare=False)

    def to_dict(self) -> dict[str, Any]:
        def num(x: float) -> float | None:
            return None if math.isnan(x) else float(x)
        return {"estimator": self.estimator, "used": self.used, "population_size": self.population_size,
                "sampling_fraction": self.sampling_fraction, "uniques": num(self.uniques),
                "uniqueness": num(self.uniqueness), "all": {k: num(v) for k, v in self.all.items()}}


def _valid(x: float) -> bool:
    return math.isfinite(x) and x != 0.0


def population_uniques(class_sizes: Any, population_size: float, estimator: str = "dankar", *,
                       compare: bool = True) -> PopulationEstimate:
    """Estimate how many records of the population are unique, from the class sizes of a sample.

    Parameters
    ----------
    class_sizes : array-like of int
        Sizes of the sample's equivalence classes (zeros are ignored).
    population_size : float
        Records in the population (at least the sample size).
    estimator : {'dankar', 'pitman', 'zayatz', 'snb'}, default='dankar'
        ``'dankar'`` applies Dankar et al.'s decision rule: Pitman when the sampling fraction is at most 10 %
        (Zayatz if Pitman has no solution), otherwise the smaller of Zayatz and SNB (Zayatz if SNB has none).
    compare : bool, default=True
        Also compute the estimators not needed for the answer (``PopulationEstimate.all`` then holds all three;
        otherwise only those computed).

    Returns
    -------
    PopulationEstimate

    Examples
    --------
    >>> est = population_uniques([1] * 20 + [2] * 30 + [5] * 10, population_size=1_000, estimator="zayatz")
    >>> est.used, round(est.uniques, 2)
    ('zayatz', 30.47)
    """
    if importlib.util.find_spec("scipy") is None:  # pragma: no cover - before any work, as the lazy import would
        raise ImportError(_NEEDS_SCIPY)
    if not isinstance(estimator, str) or estimator not in ESTIMATORS:
        raise ValueError(f"The 'estimator' parameter of population_uniques must be a str among {list(ESTIMATORS)}. "
                         f"Got {estimator!r} instead.")
    sizes, counts = frequencies(class_sizes)
    n = int((sizes * counts).sum())
    if n == 0:
        raise ValueError("population_uniques needs a sample with at least one record. Got none.")
    N = check_float(population_size, "population_size", "population_uniques", max(n, 1), None, closed="left",
                    allowed=f"a number of records at least the sample size ({n})")
    pi = n / N
    f1 = int(counts[sizes == 1].sum())
    values: dict[str, float] = {}
    if f1 == 0:
        values = {"pitman": 0.0, "zayatz": 0.0, "snb": 0.0}
        return PopulationEstimate(estimator, "none", N, pi, 0.0, 0.0, values)
    funcs = {"pitman": pitman, "zayatz": zayatz, "snb": snb}

    def get(name: str) -> float:
        if name not in values:
            values[name] = funcs[name](sizes, counts, N)
        return values[name]

    if estimator != "dankar":
        v = get(estimator)
        used = estimator
    elif pi <= 0.1:
        v, used = get("pitman"), "pitman"
        if not _valid(v):
            v, used = get("zayatz"), "zayatz"
    else:
        z, s = get("zayatz"), get("snb")
        if _valid(s) and s <= z:
            v, used = s, "snb"
        else:
            v, used = z, "zayatz"
    if compare:
        for name in funcs:
            get(name)
    return PopulationEstimate(estimator, used, N, pi, float(v), float(v) / N, values)
