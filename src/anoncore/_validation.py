"""Parameter validation for the whole library, in scikit-learn's message grammar (STYLE.md §2.6).

Every public function checks its scalar parameters here, once, before any work and before ``_core`` is called::

    k = check_int(k, "k", "lattice_search", 1, table.n_rows)
    # TypeError for k=5.0 or k=True, ValueError for k=0, both with
    # "The 'k' parameter of lattice_search must be an int in the range [1, 30162]. Got 0 instead."

A wrong type raises :class:`ParameterTypeError` (a ``TypeError``), a value of the right type outside its range
or set ``ValueError``; both carry the same sentence, naming the parameter, the caller, what is allowed and the
value received. Ranges are :class:`Interval` objects; a bound of None is unbounded (drawn ``-inf`` / ``inf``
with an open bracket). Classes declare their parameters' constraints as a table checked by
:func:`check_params` (see the models in :mod:`anoncore.models`).
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import numpy as np

from anoncore import _core

__all__ = [
    "Boolean",
    "Constraint",
    "InstanceOf",
    "Interval",
    "Options",
    "ParameterTypeError",
    "check_bool",
    "check_float",
    "check_instance",
    "check_int",
    "check_n_threads",
    "check_option",
    "check_params",
    "check_rng",
    "check_seed",
    "invalid",
]

Closed = Literal["left", "right", "both", "neither"]
_T = TypeVar("_T")


class ParameterTypeError(TypeError, ValueError):
    """A parameter of the wrong type (STYLE.md §2.6: ``TypeError``).

    It is also a ``ValueError``, as scikit-learn's ``InvalidParameterError`` is, because several functions
    raised ``ValueError`` for a wrong type before this module unified the checks; callers catching either keep
    working.
    """


def invalid(name: str, caller: str, allowed: str, value: Any) -> str:
    """The library's one error sentence:
    ``The 'name' parameter of caller must be allowed. Got value instead.``"""
    shown = value.item() if isinstance(value, np.generic) else value  # inf, not np.float64(inf)
    return f"The {name!r} parameter of {caller} must be {allowed}. Got {shown!r} instead."


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _inside(x: float, low: float | None, high: float | None, closed: Closed) -> bool:
    """Whether ``x`` lies in the range of :class:`Interval` ``(low, high, closed)``; NaN lies in none."""
    if isinstance(x, float) and math.isnan(x):  # ints (even beyond float range) are never NaN
        return False
    if low is not None:
        if x < low or (x == low and closed not in ("left", "both")):
            return False
    elif x == -math.inf:
        return False
    if high is not None:
        if x > high or (x == high and closed not in ("right", "both")):
            return False
    elif x == math.inf:
        return False
    return True


@dataclass(frozen=True, slots=True)
class Interval:
    """A range of ints (``kind="int"``) or real numbers (``kind="float"``), as scikit-learn's ``Interval``.

    ``low`` / ``high`` of None are unbounded. ``closed`` says which finite ends belong to the range; an unbounded
    end is always open (``[1, inf)`` admits no infinity). A bound is drawn as given (``0`` and ``0.0`` differ),
    and an explicit ``math.inf`` bound is drawn with the bracket ``closed`` gives it. ``allowed`` replaces the
    drawn "an int in the range ..." in messages where a caller states the range in words.
    """

    kind: Literal["int", "float"]
    low: float | None = None
    high: float | None = None
    closed: Closed = "both"
    allowed: str | None = None

    def __contains__(self, x: float) -> bool:
        return _inside(x, self.low, self.high, self.closed)

    def __str__(self) -> str:
        left = "[" if self.low is not None and self.closed in ("left", "both") else "("
        right = "]" if self.high is not None and self.closed in ("right", "both") else ")"
        lo = "-inf" if self.low is None else str(self.low)
        hi = "inf" if self.high is None else str(self.high)
        return f"{left}{lo}, {hi}{right}"

    def check(self, value: Any, name: str, caller: str) -> Any:
        """``value`` as an int or a float inside the range; ``ParameterTypeError`` / ``ValueError`` otherwise."""
        integral = self.kind == "int"
        if not (_is_int(value) if integral else _is_real(value)):
            raise ParameterTypeError(self._invalid(name, caller, value))
        x = int(value) if integral else float(value)
        if x not in self:
            raise ValueError(self._invalid(name, caller, value))
        return x

    def _invalid(self, name: str, caller: str, value: Any) -> str:
        allowed = self.allowed or f"{'an int' if self.kind == 'int' else 'a float'} in the range {self}"
        return invalid(name, caller, allowed, value)


@dataclass(frozen=True, slots=True)
class Boolean:
    """Constraint: a ``bool`` (or ``numpy.bool_``); 0 and 1 are not booleans here."""

    def check(self, value: Any, name: str, caller: str) -> bool:
        return check_bool(value, name, caller)


@dataclass(frozen=True, slots=True)
class InstanceOf:
    """Constraint: an instance of ``types`` (described as ``what`` in messages), or None with ``allow_none``."""

    types: type | tuple[type, ...]
    what: str
    allow_none: bool = False

    def check(self, value: Any, name: str, caller: str) -> Any:
        if (value is None and self.allow_none) or isinstance(value, self.types):
            return value
        allowed = f"{self.what} or None" if self.allow_none else self.what
        raise ParameterTypeError(invalid(name, caller, allowed, value))


@dataclass(frozen=True, slots=True)
class Options:
    """Constraint: one of the strings ``options`` (as :func:`check_option`)."""

    options: tuple[str, ...]

    def check(self, value: Any, name: str, caller: str) -> str:
        return check_option(value, name, caller, self.options)


Constraint = Interval | Boolean | InstanceOf | Options


def check_params(values: Any, constraints: Mapping[str, Constraint], caller: str) -> None:
    """Check every parameter named in ``constraints`` (in their order): ``getattr(values, name)``, or
    ``values[name]`` for a mapping. A declarative table of constraints per class or function (as
    scikit-learn's ``_parameter_constraints``) replaces per-parameter code."""
    get = values.__getitem__ if isinstance(values, Mapping) else lambda n: getattr(values, n)
    for name, constraint in constraints.items():
        constraint.check(get(name), name, caller)


def check_int(value: Any, name: str, caller: str, low: int | None = None, high: float | None = None,
              *, closed: Closed = "both", allowed: str | None = None) -> int:
    """``value`` as an int in ``[low, high]`` (``closed`` as in :class:`Interval`); ``bool`` is not an int here.

    Raises ``ParameterTypeError`` for a non-integral value and ``ValueError`` for one outside the range.
    """
    if _is_int(value) and _inside(int(value), low, high, closed):  # the common case builds no Interval
        return int(value)
    out: int = Interval("int", low, high, closed, allowed).check(value, name, caller)  # raises
    return out


def check_float(value: Any, name: str, caller: str, low: float | None = None, high: float | None = None,
                *, closed: Closed = "both", allowed: str | None = None) -> float:
    """``value`` (any real number but ``bool``) as a float in ``[low, high]`` (``closed`` as in
    :class:`Interval`); NaN is in no range.

    Raises ``ParameterTypeError`` for a non-real value and ``ValueError`` for one outside the range.
    """
    if _is_real(value) and _inside(float(value), low, high, closed):  # the common case builds no Interval
        return float(value)
    out: float = Interval("float", low, high, closed, allowed).check(value, name, caller)  # raises
    return out


def check_bool(value: Any, name: str, caller: str) -> bool:
    """``value`` as a bool; only ``bool`` and ``numpy.bool_`` are accepted (not 0 / 1)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ParameterTypeError(invalid(name, caller, "a bool", value))
    return bool(value)


def _among(options: Iterable[str]) -> str:
    return "{" + ", ".join(repr(o) for o in options) + "}"


def check_option(value: Any, name: str, caller: str, options: Collection[str], *,
                 ignore_case: bool = False, phrase: str = "a str among") -> str:
    """``value`` as one of the strings ``options`` (drawn in the order given); ``TypeError`` for a value that is
    not a str, ``ValueError`` for another str.

    ``ignore_case=True`` matches case-insensitively and returns the option in the case written in ``options``.
    ``phrase`` introduces the set in the message (``"one of"`` where a caller's documented message says so).
    """
    allowed = f"{phrase} {_among(options)}"
    if not isinstance(value, str):
        raise ParameterTypeError(invalid(name, caller, allowed, value))
    if value in options:
        return value
    if ignore_case:
        for o in options:
            if o.lower() == value.lower():
                return o
    raise ValueError(invalid(name, caller, allowed, value))


def check_instance(value: Any, name: str, caller: str, cls: type[_T], what: str) -> _T:
    """``value`` if it is an instance of ``cls``; else ``ParameterTypeError`` naming ``what`` and the type
    received."""
    if not isinstance(value, cls):
        raise ParameterTypeError(f"The {name!r} parameter of {caller} must be {what}. "
                                 f"Got {type(value).__name__} instead.")
    return value


def check_rng(rng: Any, caller: str, name: str = "rng") -> np.random.Generator:
    """The ``rng`` rule (STYLE.md §2.4): None (fresh entropy), an int seed, or a ``numpy.random.Generator``."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is not None and not _is_int(rng):
        raise ParameterTypeError(invalid(name, caller, "an int, a numpy Generator or None", rng))
    if rng is not None and int(rng) < 0:
        raise ValueError(invalid(name, caller, "an int >= 0, a numpy Generator or None", rng))
    return np.random.default_rng(None if rng is None else int(rng))


def check_seed(rng: Any, caller: str, name: str = "rng") -> int:
    """A 64-bit seed for a kernel, one draw from :func:`check_rng`'s generator (the same int, the same seed)."""
    return int(check_rng(rng, caller, name).integers(0, 2**64, dtype=np.uint64))


def check_n_threads(n_threads: Any, caller: str, *, openmp: bool = True) -> int:
    """The ``n_threads`` rule (STYLE.md §2.5): a positive int, or None for all cores (returned as 0, the kernels'
    "all cores"). ``openmp=True`` (kernels parallelised with OpenMP) warns with ``RuntimeWarning`` when more than
    one thread is requested from a build without OpenMP, which then runs serially."""
    if n_threads is None:
        return 0
    allowed = "an int in the range [1, inf) or None"
    if not _is_int(n_threads):
        raise ParameterTypeError(invalid("n_threads", caller, allowed, n_threads))
    if int(n_threads) < 1:
        raise ValueError(invalid("n_threads", caller, allowed, n_threads))
    if openmp and int(n_threads) > 1 and not _core.has_openmp:
        warnings.warn(f"{caller}: n_threads={int(n_threads)} requested but anoncore was built without OpenMP; "
                      f"running serially.", RuntimeWarning, stacklevel=3)
    return int(n_threads)
