"""Privacy models as small frozen dataclasses.

Each model declares, as ARX's criteria do, the per-class statistics it needs (``requirement``: ``'count'``
for class sizes, ``'histogram'`` for the sensitive-value histogram and the reference distribution), whether
it needs a sensitive attribute, and whether it is monotone under generalisation (merging classes never makes
a passing table fail) and under suppression (the number of rows in violating classes never grows when
generalising). Each model also maps per-class values (computed by the C++ criteria kernels, see
:func:`anoncore.audit`) to a verdict with :meth:`PrivacyModel.evaluate`.

Per-class values and verdicts (a class with no published row has value NaN and is not checked):

======================================  ===========================================  ===========  ==========
model                                   per-class value                              passes iff   achieved
======================================  ===========================================  ===========  ==========
KAnonymity(k)                           class size                                   >= k         min
DistinctLDiversity(l)                   number of distinct sensitive values          >= l         min
EntropyLDiversity(l)                    Shannon entropy in nats (plug-in, full sum)  >= ln l      exp(min)
RecursiveCLDiversity(c, l)              r_1 / (r_l + ... + r_m'), +inf if m' < l     < c          max
EqualDistanceTCloseness(t)              EMD, equal ground distance                   <= t         max
OrderedDistanceTCloseness(t)            EMD, ordered ground distance                 <= t         max
HierarchicalDistanceTCloseness(t)       EMD, hierarchical ground distance            <= t         max
HellingerTCloseness(t)                  Hellinger distance (1/sqrt 2 normalised)     <= t         max
BasicBetaLikeness(beta)                 max relative gain (q - p)/p over q > p       <= beta      max
EnhancedBetaLikeness(beta)              same, +inf if a gain exceeds -ln p           <= beta      max
DeltaDisclosure(delta)                  max |ln(q/p)|, +inf if a value is absent     < delta      max
SemanticBetaLikeness(beta, level)       enhanced gain of every node at depth >= level  <= beta      max
RangeBetaLikeness(beta, epsilon)        enhanced gain of every value run within eps  <= beta      max
======================================  ===========================================  ===========  ==========

The entropy test allows an absolute slack of 1e-12 nats, so that a class with exactly l equally frequent
values passes whatever the rounding of the logarithms.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, fields
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from anoncore._plain import plain as _plain

__all__ = [
    "BasicBetaLikeness",
    "DeltaDisclosure",
    "DistinctLDiversity",
    "EnhancedBetaLikeness",
    "EntropyLDiversity",
    "EqualDistanceTCloseness",
    "HellingerTCloseness",
    "HierarchicalDistanceTCloseness",
    "KAnonymity",
    "ModelVerdict",
    "OrderedDistanceTCloseness",
    "PrivacyModel",
    "RangeBetaLikeness",
    "RecursiveCLDiversity",
    "SemanticBetaLikeness",
    "beta_to_delta",
    "delta_to_beta",
]

ENTROPY_SLACK = 1e-12


def _check_int(owner: str, name: str, value: Any, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(
            f"The {name!r} parameter of {owner} must be an int in the range [{low}, inf). Got {_plain(value)} instead."
        )
    if value < low:
        raise ValueError(
            f"The {name!r} parameter of {owner} must be an int in the range [{low}, inf). Got {_plain(value)} instead."
        )


def _check_real(owner: str, name: str, value: Any, interval: str, ok: Any) -> None:
    msg = f"The {name!r} parameter of {owner} must be a float in the range {interval}. Got {_plain(value)} instead."
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(msg)
    if math.isnan(float(value)) or not ok(float(value)):
        raise ValueError(msg)


def _check_sensitive(owner: str, value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise TypeError(
            f"The 'sensitive' parameter of {owner} must be a str (a column name) or None. Got {_plain(value)} instead."
        )


@dataclass(frozen=True, slots=True)
class ModelVerdict:
    """Verdict of one model on per-class values.

    Attributes
    ----------
    passed : bool
        Whether every checked class satisfies the model.
    achieved : float
        The best parameter the table achieves (see the module table); NaN when no class is checked.
    violating : ndarray of int64
        Ids of the checked classes that violate the model.
    """

    passed: bool
    achieved: float
    violating: NDArray[np.int64]


class PrivacyModel:
    """Base class of the privacy models (not instantiated directly)."""

    __slots__ = ()

    #: ``'count'`` (class sizes) or ``'histogram'`` (sensitive-value histogram and reference distribution).
    requirement: ClassVar[str] = "histogram"
    #: Whether the model protects a sensitive attribute.
    needs_sensitive: ClassVar[bool] = True
    #: Merging classes never makes a passing table fail.
    monotone_generalization: ClassVar[bool] = True
    #: The number of rows in violating classes never grows under generalisation (so suppression-based
    #: lattice pruning is valid).
    monotone_suppression: ClassVar[bool] = False
    #: Name of the achieved parameter (``'k'``, ``'l'``, ``'c'``, ``'t'``, ``'beta'``, ``'delta'``).
    parameter: ClassVar[str] = ""
    #: Whether larger per-class values are better (k, l) or worse (distances, gains).
    larger_is_better: ClassVar[bool] = False

    @property
    def sensitive_attribute(self) -> str | None:
        """The sensitive attribute named by the model (None: the table's only one, or not needed)."""
        value: str | None = getattr(self, "sensitive", None)
        return value

    def threshold(self) -> float:
        """The model's parameter value that per-class values are compared with."""
        return float(getattr(self, self.parameter))

    def _passes(self, values: NDArray[np.float64]) -> NDArray[np.bool_]:
        thr = self.threshold()
        return values >= thr if self.larger_is_better else values <= thr

    def _achieved(self, checked: NDArray[np.float64]) -> float:
        return float(checked.min()) if self.larger_is_better else float(checked.max())

    def evaluate(self, values: NDArray[np.float64]) -> ModelVerdict:
        """Map per-class values to a verdict.

        Parameters
        ----------
        values : ndarray of float64, shape (n_classes,)
            One value per class as computed by the criteria kernel of this model; NaN for classes with no
            published row (not checked).

        Returns
        -------
        ModelVerdict

        Examples
        --------
        >>> import numpy as np
        >>> KAnonymity(3).evaluate(np.array([4.0, 2.0, np.nan]))
        ModelVerdict(passed=False, achieved=2.0, violating=array([1]))
        """
        values = np.asarray(values, dtype=np.float64)
        checked = ~np.isnan(values)
        if not checked.any():
            return ModelVerdict(True, math.nan, np.zeros(0, dtype=np.int64))
        ok = np.ones(values.shape, dtype=bool)
        ok[checked] = self._passes(values[checked])
        violating = np.flatnonzero(~ok).astype(np.int64)
        violating.setflags(write=False)
        return ModelVerdict(bool(violating.size == 0), self._achieved(values[checked]), violating)

    def params(self) -> dict[str, Any]:
        """The model's parameters as a dict (for reports and JSON)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, Any]:
        """``{'model': class name, **parameters}``."""
        return {"model": type(self).__name__, **self.params()}


@dataclass(frozen=True, slots=True)
class KAnonymity(PrivacyModel):
    """k-anonymity: every class has at least k published rows.

    Parameters
    ----------
    k : int
        Minimum class size, at least 1.

    Examples
    --------
    >>> KAnonymity(5)
    KAnonymity(k=5)
    >>> KAnonymity.monotone_suppression
    True
    """

    k: int
    requirement: ClassVar[str] = "count"
    needs_sensitive: ClassVar[bool] = False
    monotone_suppression: ClassVar[bool] = True
    parameter: ClassVar[str] = "k"
    larger_is_better: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _check_int("KAnonymity", "k", self.k, 1)


@dataclass(frozen=True, slots=True)
class DistinctLDiversity(PrivacyModel):
    """Distinct l-diversity: every class has at least l distinct sensitive values.

    Parameters
    ----------
    l : int
        At least 1.
    sensitive : str, default=None
        The sensitive attribute protected (needed only when the table declares several).

    Examples
    --------
    >>> DistinctLDiversity(3, sensitive="disease")
    DistinctLDiversity(l=3, sensitive='disease')
    """

    l: int
    sensitive: str | None = None
    monotone_suppression: ClassVar[bool] = True
    parameter: ClassVar[str] = "l"
    larger_is_better: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _check_int("DistinctLDiversity", "l", self.l, 1)
        _check_sensitive("DistinctLDiversity", self.sensitive)


@dataclass(frozen=True, slots=True)
class EntropyLDiversity(PrivacyModel):
    """Entropy l-diversity: every class has Shannon entropy at least ln l.

    Parameters
    ----------
    l : float
        At least 1.
    sensitive : str, default=None

    Notes
    -----
    Per-class values are entropies in nats, the plug-in estimator with the full sum (ARX's Shannon
    estimator, ARX-ORACLES.md §6.2); the achieved l is exp of the smallest entropy.

    Examples
    --------
    >>> import numpy as np
    >>> EntropyLDiversity(2).evaluate(np.log([2.0, 3.0])).passed
    True
    """

    l: float
    sensitive: str | None = None
    parameter: ClassVar[str] = "l"
    larger_is_better: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _check_real("EntropyLDiversity", "l", self.l, "[1, inf)", lambda x: x >= 1.0)
        _check_sensitive("EntropyLDiversity", self.sensitive)

    def _passes(self, values: NDArray[np.float64]) -> NDArray[np.bool_]:
        return values >= math.log(float(self.l)) - ENTROPY_SLACK

    def _achieved(self, checked: NDArray[np.float64]) -> float:
        return math.exp(float(checked.min()))


@dataclass(frozen=True, slots=True)
class RecursiveCLDiversity(PrivacyModel):
    """Recursive (c, l)-diversity: r_1 < c (r_l + ... + r_m') in every class.

    Parameters
    ----------
    c : float
        Positive.
    l : int
        At least 1.
    sensitive : str, default=None

    Notes
    -----
    r_1 >= r_2 >= ... are the class's sensitive-value counts; a class with fewer than l distinct values fails
    (+inf). The per-class value is the ratio r_1 / (r_l + ... + r_m'); the test is strict (ARX-ORACLES.md §6.1),
    and the achieved c is the largest ratio (the table satisfies (c, l) for every c above it).

    Examples
    --------
    >>> RecursiveCLDiversity(2.0, 2)
    RecursiveCLDiversity(c=2.0, l=2, sensitive=None)
    """

    c: float
    l: int
    sensitive: str | None = None
    parameter: ClassVar[str] = "c"

    def __post_init__(self) -> None:
        _check_real("RecursiveCLDiversity", "c", self.c, "(0, inf)", lambda x: 0.0 < x < math.inf)
        _check_int("RecursiveCLDiversity", "l", self.l, 1)
        _check_sensitive("RecursiveCLDiversity", self.sensitive)

    def _passes(self, values: NDArray[np.float64]) -> NDArray[np.bool_]:
        return values < float(self.c)


class _TCloseness(PrivacyModel):
    __slots__ = ()
    parameter: ClassVar[str] = "t"

    def _validate(self) -> None:
        name = type(self).__name__
        _check_real(name, "t", getattr(self, "t"), "(0, 1]", lambda x: 0.0 < x <= 1.0)  # noqa: B009
        _check_sensitive(name, self.sensitive_attribute)


@dataclass(frozen=True, slots=True)
class EqualDistanceTCloseness(_TCloseness):
    """t-closeness with the EMD under equal ground distance (total variation).

    Parameters
    ----------
    t : float
        In (0, 1].
    sensitive : str, default=None

    Examples
    --------
    >>> EqualDistanceTCloseness(0.2).t
    0.2
    """

    t: float
    sensitive: str | None = None

    def __post_init__(self) -> None:
        self._validate()


@dataclass(frozen=True, slots=True)
class OrderedDistanceTCloseness(_TCloseness):
    """t-closeness with the EMD under ordered ground distance |i - j| / (m' - 1).

    The order is the sensitive attribute's code order (numeric rank, declared ordinal order, or hierarchy
    pre-order); only the m' values present in the reference distribution count.

    Parameters
    ----------
    t : float
        In (0, 1].
    sensitive : str, default=None

    Examples
    --------
    >>> OrderedDistanceTCloseness(0.15)
    OrderedDistanceTCloseness(t=0.15, sensitive=None)
    """

    t: float
    sensitive: str | None = None

    def __post_init__(self) -> None:
        self._validate()


@dataclass(frozen=True, slots=True)
class HierarchicalDistanceTCloseness(_TCloseness):
    """t-closeness with the EMD under hierarchical ground distance height(LCA) / height(root).

    Uses the sensitive attribute's hierarchy (a categorical attribute without one has a flat hierarchy, which
    makes this the equal distance).

    Parameters
    ----------
    t : float
        In (0, 1].
    sensitive : str, default=None

    Examples
    --------
    >>> HierarchicalDistanceTCloseness(0.2, sensitive="occupation")
    HierarchicalDistanceTCloseness(t=0.2, sensitive='occupation')
    """

    t: float
    sensitive: str | None = None

    def __post_init__(self) -> None:
        self._validate()


@dataclass(frozen=True, slots=True)
class HellingerTCloseness(_TCloseness):
    """t-closeness with the Hellinger distance normalised by 1/sqrt(2) (range [0, 1]).

    Hellinger ignores the semantics of the values (spec generalization-lattice.md §5.2): it does not stop
    similarity attacks the way the hierarchical EMD does.

    Parameters
    ----------
    t : float
        In (0, 1].
    sensitive : str, default=None

    Examples
    --------
    >>> HellingerTCloseness(0.5).parameter
    't'
    """

    t: float
    sensitive: str | None = None

    def __post_init__(self) -> None:
        self._validate()


@dataclass(frozen=True, slots=True)
class BasicBetaLikeness(PrivacyModel):
    """Basic beta-likeness: (q - p)/p <= beta for every value with q > p (spec sabre-burel.md §2.3).

    Parameters
    ----------
    beta : float
        Positive.
    sensitive : str, default=None

    Examples
    --------
    >>> BasicBetaLikeness(1.0)
    BasicBetaLikeness(beta=1.0, sensitive=None)
    """

    beta: float
    sensitive: str | None = None
    parameter: ClassVar[str] = "beta"

    def __post_init__(self) -> None:
        _check_real("BasicBetaLikeness", "beta", self.beta, "(0, inf)", lambda x: 0.0 < x < math.inf)
        _check_sensitive("BasicBetaLikeness", self.sensitive)


@dataclass(frozen=True, slots=True)
class EnhancedBetaLikeness(PrivacyModel):
    """Enhanced beta-likeness: (q - p)/p <= min(beta, -ln p) for every value (spec sabre-burel.md §2.3).

    A class in which some gain exceeds -ln p violates the model for every beta; its value is +inf.

    Parameters
    ----------
    beta : float
        Positive.
    sensitive : str, default=None

    Examples
    --------
    >>> EnhancedBetaLikeness(2.0).beta
    2.0
    """

    beta: float
    sensitive: str | None = None
    parameter: ClassVar[str] = "beta"

    def __post_init__(self) -> None:
        _check_real("EnhancedBetaLikeness", "beta", self.beta, "(0, inf)", lambda x: 0.0 < x < math.inf)
        _check_sensitive("EnhancedBetaLikeness", self.sensitive)


@dataclass(frozen=True, slots=True)
class DeltaDisclosure(PrivacyModel):
    """delta-disclosure privacy: |ln(q/p)| < delta for every value of the reference (Brickell & Shmatikov).

    Every value present in the reference must appear in every class (otherwise the value is +inf).

    Parameters
    ----------
    delta : float
        Positive.
    sensitive : str, default=None

    Examples
    --------
    >>> import numpy as np
    >>> DeltaDisclosure(0.5).evaluate(np.array([0.1, np.inf])).violating
    array([1])
    """

    delta: float
    sensitive: str | None = None
    parameter: ClassVar[str] = "delta"

    def __post_init__(self) -> None:
        _check_real("DeltaDisclosure", "delta", self.delta, "(0, inf)", lambda x: 0.0 < x < math.inf)
        _check_sensitive("DeltaDisclosure", self.sensitive)

    def _passes(self, values: NDArray[np.float64]) -> NDArray[np.bool_]:
        return values < float(self.delta)


@dataclass(frozen=True, slots=True)
class SemanticBetaLikeness(PrivacyModel):
    """Semantic beta-likeness (Cao thesis Definition 4.4; spec sabre-burel.md §2.3, §8 item 17).

    For a categorical sensitive attribute with a hierarchy: every node ``I`` at depth ``>= level`` (the root has
    depth 0) must satisfy ``(rho2 - rho1) / rho1 <= min(beta, -ln rho1)``, where ``rho1`` and ``rho2`` are the
    shares of the leaves under ``I`` in the table and in the class. Leaves count as nodes, so the model implies
    :class:`EnhancedBetaLikeness`; the converse fails (Lemma 4.3). A class's value is its largest gain, +inf when
    some gain exceeds ``-ln rho1``.

    Parameters
    ----------
    beta : float
        Positive.
    level : int, default=1
        Shallowest depth constrained ("below a certain level", read as depth >= level; 1 skips only the root,
        whose gain is always 0).
    sensitive : str, default=None

    Examples
    --------
    >>> SemanticBetaLikeness(2.0).level
    1
    """

    beta: float
    level: int = 1
    sensitive: str | None = None
    parameter: ClassVar[str] = "beta"

    def __post_init__(self) -> None:
        _check_real("SemanticBetaLikeness", "beta", self.beta, "(0, inf)", lambda x: 0.0 < x < math.inf)
        _check_int("SemanticBetaLikeness", "level", self.level, 0)
        _check_sensitive("SemanticBetaLikeness", self.sensitive)


@dataclass(frozen=True, slots=True)
class RangeBetaLikeness(PrivacyModel):
    """Range-based beta-likeness (Cao thesis Definition 4.5; spec sabre-burel.md §2.3, §8 item 18).

    For a numeric (or ordinal: value = rank) sensitive attribute: every run ``V'`` of consecutive values present
    in the table whose width ``max(V') - min(V')`` is at most ``epsilon`` (``relative=True``:
    ``(max(V') - min(V')) / min(V') <= epsilon``, positive values only) must satisfy
    ``(rho2 - rho1) / rho1 <= min(beta, -ln rho1)``. Single values have width 0, so the model implies
    :class:`EnhancedBetaLikeness`.

    Parameters
    ----------
    beta : float
        Positive.
    epsilon : float
        Non-negative width, in value units (absolute) or as a ratio (relative).
    relative : bool, default=False
    sensitive : str, default=None

    Examples
    --------
    >>> RangeBetaLikeness(4.0, epsilon=6)
    RangeBetaLikeness(beta=4.0, epsilon=6, relative=False, sensitive=None)
    """

    beta: float
    epsilon: float
    relative: bool = False
    sensitive: str | None = None
    parameter: ClassVar[str] = "beta"

    def __post_init__(self) -> None:
        _check_real("RangeBetaLikeness", "beta", self.beta, "(0, inf)", lambda x: 0.0 < x < math.inf)
        _check_real("RangeBetaLikeness", "epsilon", self.epsilon, "[0, inf)", lambda x: 0.0 <= x < math.inf)
        if not isinstance(self.relative, bool):
            raise TypeError(f"The 'relative' parameter of RangeBetaLikeness must be a bool. Got {self.relative!r} "
                            "instead.")
        _check_sensitive("RangeBetaLikeness", self.sensitive)


def beta_to_delta(beta: float, p_max: float) -> float:
    """The delta of DMondrian for a target beta: ``ln(1 + min(beta, -ln p_max))`` (Cao thesis §4.4.2).

    delta-disclosure with this delta (``e^-delta p < q < e^delta p``) implies enhanced beta-likeness, because
    ``e^delta <= 1 + min(beta, -ln p)`` for every value ``p <= p_max``.

    Parameters
    ----------
    beta : float
        Positive.
    p_max : float
        The largest share of a sensitive value in the table, in (0, 1].

    Examples
    --------
    >>> round(beta_to_delta(1.0, 0.048402), 4)
    0.6931
    """
    _check_real("beta_to_delta", "beta", beta, "(0, inf)", lambda x: 0.0 < x < math.inf)
    _check_real("beta_to_delta", "p_max", p_max, "(0, 1]", lambda x: 0.0 < x <= 1.0)
    return math.log1p(min(float(beta), -math.log(float(p_max))))


def delta_to_beta(delta: float) -> float:
    """The basic beta implied by delta-disclosure: ``q < e^delta p`` gives ``(q - p) / p < e^delta - 1``.

    The enhanced model holds too when ``delta <= ln(1 - ln p_max)``.

    Examples
    --------
    >>> delta_to_beta(math.log(3.0))
    2.0
    """
    _check_real("delta_to_beta", "delta", delta, "(0, inf)", lambda x: 0.0 < x < math.inf)
    return math.expm1(float(delta))


MODELS: tuple[type[PrivacyModel], ...] = (
    KAnonymity,
    DistinctLDiversity,
    EntropyLDiversity,
    RecursiveCLDiversity,
    EqualDistanceTCloseness,
    OrderedDistanceTCloseness,
    HierarchicalDistanceTCloseness,
    HellingerTCloseness,
    BasicBetaLikeness,
    EnhancedBetaLikeness,
    DeltaDisclosure,
    SemanticBetaLikeness,
    RangeBetaLikeness,
)
