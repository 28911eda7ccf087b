"""Cost model of the reposition model: reposition cost mu(d) and per-SA suppression costs beta_s.

P-TEMP Section II.C: mu must satisfy (C1) mu(0) = 0, (C2) strictly increasing, (C3) convex (non-decreasing
first differences on integer distances).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from anoncore._validation import check_float, check_int

__all__ = ["Mu", "as_beta", "as_mu"]

_KINDS = {"table": 0, "linear": 1, "power": 2, "exponential": 3}


def _validate_table(values: np.ndarray) -> None:
    """Check C1-C3 on mu[0..D]; raise ValueError naming the violated condition."""
    if values.ndim != 1 or values.size < 2:
        raise ValueError(f"mu must be tabulated on at least [0, 1]. Got {values.size} value(s) instead.")
    if not np.all(np.isfinite(values)):
        raise ValueError("mu must be finite on its whole table. Got a NaN or infinite value instead.")
    if values[0] != 0.0:
        raise ValueError(f"mu violates C1: mu(0) must be 0. Got mu(0)={float(values[0])!r} instead.")
    values = values.astype(float)
    diff = [float(x) for x in np.diff(values)]
    vals = [float(x) for x in values]
    bad = np.flatnonzero(np.asarray(diff) <= 0.0)
    if bad.size:
        d = int(bad[0])
        raise ValueError(
            f"mu violates C2 (strictly increasing): mu({d + 1})={vals[d + 1]!r} is not greater than "
            f"mu({d})={vals[d]!r}."
        )
    # C3 on integers: first differences non-decreasing. Allow rounding noise relative to the magnitudes.
    tol = 1e-12 * max(1.0, float(np.max(np.abs(values))))
    bad = np.flatnonzero(np.diff(np.asarray(diff)) < -tol)
    if bad.size:
        d = int(bad[0])
        raise ValueError(
            f"mu violates C3 (convexity, non-decreasing increments): mu({d + 2})-mu({d + 1})={diff[d + 1]!r} is "
            f"smaller than mu({d + 1})-mu({d})={diff[d]!r}."
        )


@dataclass(frozen=True, slots=True)
class Mu:
    """Reposition cost mu(d) of moving a record d timestamps forward (P-TEMP Section II.C).

    Build it with :meth:`linear`, :meth:`power`, :meth:`exponential`, :meth:`from_table` or
    :meth:`from_function`; every constructor validates the conditions C1-C3.

    Parameters
    ----------
    kind : {'linear', 'power', 'exponential', 'table'}
        Shape: ``c*d``, ``c*d**p``, ``c*(p**d - 1)`` or a lookup table.
    c : float, default=1.0
        Scale.
    p : float, default=1.0
        Exponent (power) or base (exponential).
    table : tuple of float, default=()
        ``mu(0), mu(1), ...``; beyond the table mu is extended linearly with its last increment (which keeps
        C1-C3).

    Examples
    --------
    >>> from anoncore.temporal import Mu
    >>> Mu.power(2)(3)
    9.0
    >>> Mu.from_table([0, 1, 3, 6])(5)
    12.0
    """

    kind: Literal["linear", "power", "exponential", "table"]
    c: float = 1.0
    p: float = 1.0
    table: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(
                f"The 'kind' parameter of Mu must be a str among {{'linear', 'power', 'exponential', 'table'}}. "
                f"Got {self.kind!r} instead."
            )
        if self.kind == "table":
            _validate_table(np.asarray(self.table, dtype=np.float64))
        else:
            check_float(self.c, "c", "Mu", 0, None, closed="neither", allowed="a finite real number > 0")
            if self.kind == "power":
                p = check_float(self.p, "p", "Mu", 0, None, closed="neither", allowed="a finite real number > 0")
                if p < 1.0:
                    raise ValueError(
                        f"mu violates C3 (convexity): the 'p' parameter of Mu.power must be >= 1. Got {self.p!r} "
                        "instead."
                    )
            if self.kind == "exponential":
                b = check_float(self.p, "base", "Mu", 0, None, closed="neither", allowed="a finite real number > 0")
                if b <= 1.0:
                    raise ValueError(
                        f"mu violates C2 (strictly increasing): the 'base' parameter of Mu.exponential must be > 1. "
                        f"Got {self.p!r} instead."
                    )

    # constructors -------------------------------------------------------------------------------------------
    @classmethod
    def linear(cls, c: float = 1.0) -> Mu:
        """mu(d) = c*d (the linear cost of P-TEMP; gains are O(1): IG = beta_s - c*(w+1-TS))."""
        return cls("linear", c=c)

    @classmethod
    def power(cls, p: float = 2.0, c: float = 1.0) -> Mu:
        """mu(d) = c*d**p with p >= 1 (p = 2 is the paper's non-linear example)."""
        return cls("power", c=c, p=p)

    @classmethod
    def exponential(cls, base: float = 2.0, c: float = 1.0) -> Mu:
        """mu(d) = c*(base**d - 1) with base > 1."""
        return cls("exponential", c=c, p=base)

    @classmethod
    def from_table(cls, values: Sequence[float] | np.ndarray) -> Mu:
        """mu given as a table mu(0), ..., mu(D), validated against C1-C3; linear extension beyond D."""
        arr = np.asarray(values, dtype=np.float64)
        return cls("table", table=tuple(float(v) for v in arr.ravel()) if arr.ndim == 1 else (float("nan"),))

    @classmethod
    def from_function(cls, f: Callable[[int], float], horizon: int = 64) -> Mu:
        """Tabulate a callable on [0, horizon] (validated against C1-C3 there; linear extension beyond)."""
        check_int(horizon, "horizon", "Mu.from_function", 1)
        return cls.from_table([float(f(d)) for d in range(int(horizon) + 1)])

    # evaluation ---------------------------------------------------------------------------------------------
    def __call__(self, d: Any) -> Any:
        """Evaluate mu on an int or an integer array of distances (>= 0)."""
        x = np.asarray(d, dtype=np.float64)
        if self.kind == "linear":
            out = self.c * x
        elif self.kind == "power":
            out = self.c * np.power(x, self.p)
        elif self.kind == "exponential":
            out = self.c * (np.power(self.p, x) - 1.0)
        else:
            t = np.asarray(self.table, dtype=np.float64)
            n = t.size
            step = t[-1] - t[-2]
            xi = x.astype(np.int64)
            out = np.where(xi < n, t[np.minimum(xi, n - 1)], t[-1] + step * (x - (n - 1)))
        return float(out) if np.ndim(out) == 0 else out

    @property
    def is_linear(self) -> bool:
        """True for mu(d) = c*d (C3 with equality)."""
        return self.kind == "linear" or (self.kind == "power" and self.p == 1.0)

    def _kernel_args(self) -> tuple[int, float, float, np.ndarray]:
        if self.kind == "power" and self.p == 1.0:
            return _KINDS["linear"], float(self.c), 1.0, np.zeros(1)
        table = np.asarray(self.table if self.kind == "table" else (0.0,), dtype=np.float64)
        return _KINDS[self.kind], float(self.c), float(self.p), np.ascontiguousarray(table)


_NAMED = {
    "linear": Mu.linear(),
    "quadratic": Mu.power(2.0),
    "cubic": Mu.power(3.0),
    "exponential": Mu.exponential(2.0),
}


def as_mu(mu: Any, caller: str, horizon: int = 64) -> Mu:
    """Normalise the public ``mu`` argument: a Mu, a name, a callable or a table."""
    if isinstance(mu, Mu):
        return mu
    if isinstance(mu, str):
        if mu not in _NAMED:
            raise ValueError(
                f"The 'mu' parameter of {caller} must be a Mu, a callable, a table or a str among "
                f"{{'linear', 'quadratic', 'cubic', 'exponential'}}. Got {mu!r} instead."
            )
        return _NAMED[mu]
    if callable(mu):
        return Mu.from_function(mu, horizon=horizon)
    if isinstance(mu, (Sequence, np.ndarray)) and not isinstance(mu, (bytes, bytearray)):
        arr = np.asarray(mu)
        if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.bool_):
            raise TypeError(f"The 'mu' parameter of {caller} must be a 1-D numeric table. Got {mu!r} instead.")
        return Mu.from_table(arr)
    raise TypeError(
        f"The 'mu' parameter of {caller} must be a Mu, a callable, a table or a str. Got {type(mu).__name__} instead."
    )


def as_beta(beta: Any, n_sa: int, caller: str, sa_values: Sequence[Any] | None = None) -> np.ndarray:
    """Normalise beta to a float64 array of length n_sa (scalar, per-code sequence or mapping value -> cost)."""
    if isinstance(beta, bool):
        raise TypeError(f"The 'beta' parameter of {caller} must be a real number, a sequence or a mapping. Got True.")
    if isinstance(beta, (int, float, np.integer, np.floating)):
        arr = np.full(n_sa, float(beta))
    elif isinstance(beta, Mapping):
        keys = list(sa_values) if sa_values is not None else list(range(n_sa))
        missing = [k for k in keys if k not in beta]
        if missing:
            raise ValueError(
                f"The 'beta' parameter of {caller} has no cost for sensitive value {missing[0]!r}."
            )
        arr = np.array([float(beta[k]) for k in keys], dtype=np.float64)
    elif isinstance(beta, (Sequence, np.ndarray)) and not isinstance(beta, (str, bytes)):
        arr = np.asarray(beta, dtype=np.float64).ravel()
        if arr.size < n_sa:
            raise ValueError(
                f"The 'beta' parameter of {caller} must have one cost per sensitive value ({n_sa}). "
                f"Got {arr.size} instead."
            )
        arr = arr[:n_sa].copy() if arr.size > n_sa else arr.copy()
    else:
        raise TypeError(
            f"The 'beta' parameter of {caller} must be a real number, a sequence or a mapping. "
            f"Got {type(beta).__name__} instead."
        )
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        bad = float(arr[~(np.isfinite(arr) & (arr >= 0))][0])
        raise ValueError(
            f"The 'beta' parameter of {caller} must hold finite costs >= 0. Got {bad!r} instead."
        )
    return np.ascontiguousarray(arr, dtype=np.float64)
