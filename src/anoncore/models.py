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
EntropyLDiversity(l, 'grassberger')     min(Grassberger estimate, ln distinct)       >= ln l      exp(min)
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
AverageReidentificationRisk(risk)       class size; table: #classes / #records       <= risk      table
SampleUniqueness(uniqueness)            class size; table: share of size-1 records   <= value     table
PopulationUniqueness(uniqueness, N)     class size; table: estimated uniques / N     <= value     table
KMap(k, subset)                         population rows of the class                 >= k         min
KMap(k, population_size=N)              P(population count < k), Poisson estimate    <= signif.   max
KMap(k, population_size=N, estimator=)  published class size (ARX's derived k)       >= k'        min
DeltaPresence(dmin, dmax, subset)       published rows / population rows             in [dmin, dmax]  max
======================================  ===========================================  ===========  ==========

The entropy test allows an absolute slack of 1e-12 nats, so that a class with exactly l equally frequent
values passes whatever the rounding of the logarithms.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from anoncore._validation import Boolean, Constraint, InstanceOf, Interval, Options, check_params

if TYPE_CHECKING:
    from anoncore.risk.kmap import DerivedK

__all__ = [
    "AverageReidentificationRisk",
    "BasicBetaLikeness",
    "DeltaDisclosure",
    "DeltaPresence",
    "DistinctLDiversity",
    "EnhancedBetaLikeness",
    "EntropyLDiversity",
    "EqualDistanceTCloseness",
    "HellingerTCloseness",
    "HierarchicalDistanceTCloseness",
    "KAnonymity",
    "KMap",
    "ModelVerdict",
    "OrderedDistanceTCloseness",
    "PopulationUniqueness",
    "PrivacyModel",
    "RangeBetaLikeness",
    "RecursiveCLDiversity",
    "SampleUniqueness",
    "SemanticBetaLikeness",
    "beta_to_delta",
    "delta_to_beta",
]

ENTROPY_SLACK = 1e-12


# Constraints shared by several models (anoncore._validation's grammar).
_SENSITIVE = InstanceOf(str, "a str (a column name)", allow_none=True)
_POSITIVE = Interval("float", 0, None, "neither")
_T = Interval("float", 0, 1, "right")
_AT_LEAST_1 = Interval("int", 1, None, "left")


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
    #: The model's parameters and their constraints, checked in this order when the model is built.
    constraints: ClassVar[Mapping[str, Constraint]] = {}

    def __post_init__(self) -> None:
        check_params(self, self.constraints, type(self).__name__)

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

    def lattice_unsupported(self) -> str | None:
        """Why the lattice engine cannot evaluate this model as given (None: it can)."""
        return None

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

    constraints: ClassVar[Mapping[str, Constraint]] = {"k": _AT_LEAST_1}


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

    constraints: ClassVar[Mapping[str, Constraint]] = {"l": _AT_LEAST_1, "sensitive": _SENSITIVE}


@dataclass(frozen=True, slots=True)
class EntropyLDiversity(PrivacyModel):
    """Entropy l-diversity: every class has entropy at least ln l.

    Parameters
    ----------
    l : float
        At least 1.
    sensitive : str, default=None
    estimator : {'shannon', 'grassberger'}, default='shannon'
        How a class's entropy is estimated from its counts (ARX's ``EntropyEstimator``): ``'shannon'``, the
        plug-in estimate ln n − (1/n) Σ f ln f; ``'grassberger'``, Grassberger's bias-corrected estimate
        ln n − (1/n) Σ f G(f) with G(f) = ψ(f) + ½ (−1)^f (ψ((f + 1)/2) − ψ(f/2)) (ψ the digamma function;
        P. Grassberger, Entropy estimates from insufficient samplings, arXiv:physics/0307138, 2003, eq. 35).
        Either way a class needs at least ceil(l) distinct values.

    Notes
    -----
    Per-class values are entropies in nats, with the full sum (ARX-ORACLES.md §6.2); the achieved l is exp of
    the smallest entropy. Grassberger's estimate can fall when classes merge (two classes with counts {1, 1}
    have 2 ln 2 + γ ≈ 1.96 each, their union {2, 2} ≈ 0.66 < ln 2), so that model is not monotone under
    generalization: the lattice search then infers no feasibility upwards.

    Examples
    --------
    >>> import numpy as np
    >>> EntropyLDiversity(2).evaluate(np.log([2.0, 3.0])).passed
    True
    """

    l: float
    sensitive: str | None = None
    estimator: str = "shannon"
    parameter: ClassVar[str] = "l"
    larger_is_better: ClassVar[bool] = True

    constraints: ClassVar[Mapping[str, Constraint]] = {
        "l": Interval("float", 1, None, "left"), "sensitive": _SENSITIVE,
        "estimator": Options(("shannon", "grassberger"))}

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

    constraints: ClassVar[Mapping[str, Constraint]] = {
        "c": _POSITIVE, "l": _AT_LEAST_1, "sensitive": _SENSITIVE}

    def _passes(self, values: NDArray[np.float64]) -> NDArray[np.bool_]:
        return values < float(self.c)


class _TCloseness(PrivacyModel):
    __slots__ = ()
    parameter: ClassVar[str] = "t"

    constraints: ClassVar[Mapping[str, Constraint]] = {"t": _T, "sensitive": _SENSITIVE}


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


@dataclass(frozen=True, slots=True)
class OrderedDistanceTCloseness(_TCloseness):
    """t-closeness with the EMD under ordered ground distance |i - j| / (m' - 1).

    The value order is stated by ``order``: by default the sensitive attribute's code order (numeric rank,
    declared ordinal order, or hierarchy pre-order); ``'string'`` sorts the values by their text, as ARX orders
    a string attribute; a sequence of values gives the order explicitly. Only the m' values present in the
    reference distribution count. The lattice search takes any order (it renumbers the sensitive codes in it,
    :meth:`value_order`); the Dask search takes the code order only.

    Parameters
    ----------
    t : float
        In (0, 1].
    sensitive : str, default=None
    order : {None, 'codes', 'string'} or sequence of str, default=None
        None and ``'codes'``: code order; ``'string'``: natural string order (ARX); a sequence: every value of
        the attribute, in order.

    Examples
    --------
    >>> OrderedDistanceTCloseness(0.15)
    OrderedDistanceTCloseness(t=0.15, sensitive=None, order=None)
    >>> OrderedDistanceTCloseness(0.15, order="string").order
    'string'
    """

    t: float
    sensitive: str | None = None
    order: str | tuple[str, ...] | None = None

    constraints: ClassVar[Mapping[str, Constraint]] = {
        "t": _T, "sensitive": _SENSITIVE,
        "order": InstanceOf((str, tuple, list), "'codes', 'string' or a sequence of the values", allow_none=True)}

    def __post_init__(self) -> None:
        check_params(self, self.constraints, type(self).__name__)
        o = self.order
        if o is None or (isinstance(o, str) and o in ("codes", "string")):
            return
        if isinstance(o, str) or not isinstance(o, (list, tuple)) or not all(isinstance(v, str) for v in o):
            raise ValueError("The 'order' parameter of OrderedDistanceTCloseness must be None, 'codes', 'string' or "
                             f"a sequence of the attribute's values. Got {o!r} instead.")
        if len(set(o)) != len(o):
            raise ValueError(f"The 'order' parameter of OrderedDistanceTCloseness lists a value twice: {list(o)}.")
        object.__setattr__(self, "order", tuple(o))

    def value_order(self, table: Any, sa: str) -> NDArray[np.int64] | None:
        """The codes of ``table``'s sensitive attribute ``sa`` in this model's order (a permutation of
        ``0 .. m-1``), or None for the code order. ValueError when an explicit order misses a value of ``sa`` or
        lists one it does not have.

        >>> import pandas as pd
        >>> from anoncore import Schema, Table
        >>> t = Table.from_pandas(pd.DataFrame({"q": ["a", "b", "a"], "s": ["9", "10", "8"]}),
        ...                       Schema.build(["q"], sensitive="s"))
        >>> [str(v) for v in t.decode("s", OrderedDistanceTCloseness(0.2, order="string").value_order(t, "s"))]
        ['10', '8', '9']
        """
        if self.order in (None, "codes"):
            return None
        labels = [str(v) for v in table.decode(sa, np.arange(table.cardinality(sa), dtype=np.int32))]
        if self.order == "string":
            return np.asarray(sorted(range(len(labels)), key=lambda i: labels[i]), dtype=np.int64)
        assert isinstance(self.order, tuple)
        pos = {v: i for i, v in enumerate(self.order)}
        missing = [v for v in labels if v not in pos]
        if missing:
            raise ValueError(f"The 'order' of OrderedDistanceTCloseness does not list the value {missing[0]!r} of "
                             f"{sa!r}.")
        extra = [v for v in self.order if v not in set(labels)]
        if extra:
            raise ValueError(f"The 'order' of OrderedDistanceTCloseness lists {extra[0]!r}, which is not a value of "
                             f"{sa!r}.")
        return np.asarray(sorted(range(len(labels)), key=lambda i: pos[labels[i]]), dtype=np.int64)


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

    constraints: ClassVar[Mapping[str, Constraint]] = {"beta": _POSITIVE, "sensitive": _SENSITIVE}


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

    constraints: ClassVar[Mapping[str, Constraint]] = {"beta": _POSITIVE, "sensitive": _SENSITIVE}


@dataclass(frozen=True, slots=True)
class DeltaDisclosure(PrivacyModel):
    """delta-disclosure privacy: |ln(q/p)| < delta for every value of the reference (Brickell & Shmatikov).

    ``absent`` says how a value of the reference that is absent from a class counts. ``'violate'`` (default,
    the paper's definition: ``|ln(0/p)|`` is infinite) makes such a class fail (value +inf); ``'ignore'``
    (ARX's reading) checks only the values present in the class. Under ``'ignore'`` two passing classes can
    merge into a failing one (one lacks a value whose share in the other barely passes), so the lattice search
    infers no feasible node from a feasible one below it and evaluates more nodes.

    Parameters
    ----------
    delta : float
        Positive.
    sensitive : str, default=None
    absent : {'violate', 'ignore'}, default='violate'

    Examples
    --------
    >>> import numpy as np
    >>> DeltaDisclosure(0.5).evaluate(np.array([0.1, np.inf])).violating
    array([1])
    >>> DeltaDisclosure(0.5, absent="ignore").absent
    'ignore'
    """

    delta: float
    sensitive: str | None = None
    absent: str = "violate"
    parameter: ClassVar[str] = "delta"

    constraints: ClassVar[Mapping[str, Constraint]] = {
        "delta": _POSITIVE, "sensitive": _SENSITIVE, "absent": Options(("violate", "ignore"))}

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

    constraints: ClassVar[Mapping[str, Constraint]] = {
        "beta": _POSITIVE, "level": Interval("int", 0, None, "left"), "sensitive": _SENSITIVE}


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

    constraints: ClassVar[Mapping[str, Constraint]] = {
        "beta": _POSITIVE, "epsilon": Interval("float", 0, None, "left"), "relative": Boolean(),
        "sensitive": _SENSITIVE}


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
    check_params({"beta": beta, "p_max": p_max}, {"beta": _POSITIVE, "p_max": _T}, "beta_to_delta")
    return math.log1p(min(float(beta), -math.log(float(p_max))))


def delta_to_beta(delta: float) -> float:
    """The basic beta implied by delta-disclosure: ``q < e^delta p`` gives ``(q - p) / p < e^delta - 1``.

    The enhanced model holds too when ``delta <= ln(1 - ln p_max)``.

    Examples
    --------
    >>> delta_to_beta(math.log(3.0))
    2.0
    """
    _POSITIVE.check(delta, "delta", "delta_to_beta")
    return math.expm1(float(delta))


# ------------------------------------------------------------------------------------------- risk-based models
def _check_subset(owner: str, subset: Any) -> Any:
    if subset is None:
        return None
    a = np.asarray(subset)
    if a.ndim != 1 or not (a.dtype == bool or a.dtype.kind in "iu"):
        raise TypeError(f"The 'subset' parameter of {owner} must be a 1-D bool mask or integer row indices. "
                        f"Got {type(subset).__name__} of dtype {a.dtype} instead.")
    a = np.array(a, copy=True)
    a.setflags(write=False)
    return a


class _TableLevel(PrivacyModel):
    """A model judged on the whole published table; per-class values are class sizes."""

    __slots__ = ()
    requirement: ClassVar[str] = "count"
    needs_sensitive: ClassVar[bool] = False
    #: Judged on the whole table (an aggregate), not class by class.
    table_level: ClassVar[bool] = True

    def aggregate(self, sizes: NDArray[np.float64]) -> float:
        raise NotImplementedError

    def evaluate(self, values: NDArray[np.float64]) -> ModelVerdict:
        """Aggregate the published class sizes (``values``, NaN: no published row) and compare with the
        threshold; the violating classes are those that add to the aggregate (every class for the average risk,
        classes of size 1 for uniqueness)."""
        values = np.asarray(values, dtype=np.float64)
        checked = ~np.isnan(values) & (np.nan_to_num(values) > 0)
        if not checked.any():
            return ModelVerdict(True, math.nan, np.zeros(0, dtype=np.int64))
        agg = self.aggregate(values[checked])
        passed = bool(agg <= self.threshold())
        if passed:
            violating = np.zeros(0, dtype=np.int64)
        else:
            violating = np.flatnonzero(checked & self._contributes(values)).astype(np.int64)
        violating.setflags(write=False)
        return ModelVerdict(passed, float(agg), violating)

    def _contributes(self, values: NDArray[np.float64]) -> NDArray[np.bool_]:
        return np.asarray(np.nan_to_num(values) == 1)


@dataclass(frozen=True, slots=True)
class AverageReidentificationRisk(_TableLevel):
    """Average re-identification risk (prosecutor): ``#classes / #published records <= risk``.

    The mean of the record risks ``1 / f`` (El Emam; ARX's ``AverageReidentificationRisk``).

    Parameters
    ----------
    risk : float
        In (0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> AverageReidentificationRisk(0.25).evaluate(np.array([4.0, 4.0, 2.0])).achieved
    0.3
    """

    risk: float
    parameter: ClassVar[str] = "risk"

    constraints: ClassVar[Mapping[str, Constraint]] = {"risk": Interval("float", 0, 1, "right")}

    def aggregate(self, sizes: NDArray[np.float64]) -> float:
        return float(sizes.size) / float(sizes.sum())

    def _contributes(self, values: NDArray[np.float64]) -> NDArray[np.bool_]:
        return np.nan_to_num(values) > 0


@dataclass(frozen=True, slots=True)
class SampleUniqueness(_TableLevel):
    """Sample uniqueness: the fraction of published records alone in their class is at most ``uniqueness``.

    Parameters
    ----------
    uniqueness : float
        In [0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> SampleUniqueness(0.1).evaluate(np.array([1.0, 3.0, 6.0])).achieved
    0.1
    """

    uniqueness: float
    parameter: ClassVar[str] = "uniqueness"

    constraints: ClassVar[Mapping[str, Constraint]] = {"uniqueness": Interval("float", 0, 1, "both")}

    def aggregate(self, sizes: NDArray[np.float64]) -> float:
        return float((sizes == 1).sum()) / float(sizes.sum())


@dataclass(frozen=True, slots=True)
class PopulationUniqueness(_TableLevel):
    """Population uniqueness: estimated population uniques over the population size is at most ``uniqueness``.

    Parameters
    ----------
    uniqueness : float
        In [0, 1].
    population_size : float
        Records in the population (at least the published records).
    estimator : {'dankar', 'pitman', 'zayatz', 'snb'}, default='dankar'
        See :func:`anoncore.risk.population_uniques`.

    Examples
    --------
    >>> PopulationUniqueness(0.01, population_size=1e6).estimator
    'dankar'
    """

    uniqueness: float
    population_size: float
    estimator: str = "dankar"
    parameter: ClassVar[str] = "uniqueness"
    monotone_generalization: ClassVar[bool] = False

    constraints: ClassVar[Mapping[str, Constraint]] = {
        "uniqueness": Interval("float", 0, 1, "both"), "population_size": Interval("float", 1, None, "left"),
        "estimator": Options(("dankar", "pitman", "zayatz", "snb"))}

    def aggregate(self, sizes: NDArray[np.float64]) -> float:
        from anoncore.risk.estimators import population_uniques

        if float(sizes.sum()) > float(self.population_size):
            raise ValueError(f"PopulationUniqueness: the population_size {self.population_size!r} is smaller than "
                             f"the {int(sizes.sum())} published records.")
        return population_uniques(sizes.astype(np.int64), self.population_size, self.estimator,
                                  compare=False).uniqueness


@dataclass(frozen=True, slots=True)
class KMap(PrivacyModel):
    """k-map: every published class stands for at least k individuals of the population (Sweeney).

    Exact, with a population table: the audited table is the population and ``subset`` the published rows
    (ARX's research subset); a class's value is its population count. Estimated, with ``population_size``: a
    class of f sample records stands for ``F = f + X`` population records, ``X ~ Poisson(f (1 - pi) / pi)``
    with ``pi = n / population_size``; its value is ``P(F < k)``, which must be at most ``significance``.
    ARX's estimated k-map, with ``estimator`` (``'poisson'`` or ``'zero_truncated_poisson'``, El Emam &
    Dankar 2008): k-anonymity with the k derived from the table's size (:func:`anoncore.risk.kmap.derived_k`,
    :meth:`derived`); a class's value is its published size, which must reach the derived k. Read this way it
    is a k-anonymity, so ``lattice_search``, its heuristics, ``risk_lattice_search`` and the Dask search take
    it and suppress classes below the derived k as ARX does.

    Parameters
    ----------
    k : int
    subset : bool mask or int indices, default=None
        The research subset (exact k-map); with neither ``subset`` nor ``population_size`` every non-suppressed
        row is published and the table is the population.
    population_size : float, default=None
        Estimated k-map.
    significance : float in (0, 1), default=0.01
    estimator : {None, 'poisson', 'zero_truncated_poisson'}, default=None
        None: the per-class reading above; otherwise ARX's derived k (needs ``population_size``).

    Examples
    --------
    >>> KMap(5, population_size=1e5).estimated
    True
    >>> KMap(100, population_size=60_000, estimator="poisson").derived(30_162).k
    69
    """

    k: int
    subset: Any = field(default=None, compare=False, repr=False)
    population_size: float | None = None
    significance: float = 0.01
    estimator: str | None = None
    requirement: ClassVar[str] = "count"
    needs_sensitive: ClassVar[bool] = False
    monotone_suppression: ClassVar[bool] = True
    parameter: ClassVar[str] = "k"

    constraints: ClassVar[Mapping[str, Constraint]] = {
        "k": _AT_LEAST_1, "significance": Interval("float", 0, 1, "neither")}

    def __post_init__(self) -> None:
        check_params(self, self.constraints, type(self).__name__)
        if self.estimator is not None:
            from anoncore.risk.kmap import KMAP_ESTIMATORS

            Options(KMAP_ESTIMATORS).check(self.estimator, "estimator", "KMap")
        object.__setattr__(self, "subset", _check_subset("KMap", self.subset))
        if self.population_size is not None:
            if self.subset is not None:
                raise ValueError("KMap takes a research subset (exact) or a population_size (estimated), not both.")
            Interval("float", 1, None, "left").check(self.population_size, "population_size", "KMap")
        elif self.estimator is not None:
            raise ValueError(f"KMap(estimator={self.estimator!r}) estimates the population's cells: it needs a "
                             f"population_size.")

    @property
    def estimated(self) -> bool:
        return self.population_size is not None

    @property
    def derives_k(self) -> bool:
        """ARX's reading: k-anonymity with a derived k (``estimator`` given)."""
        return self.estimator is not None

    def derived(self, n_rows: int) -> DerivedK:
        """ARX's derived k for a table of ``n_rows`` records (:func:`anoncore.risk.kmap.derived_k`); only with
        ``estimator``."""
        if self.estimator is None or self.population_size is None:
            raise ValueError("KMap.derived needs an estimator ('poisson' or 'zero_truncated_poisson') and a "
                             "population_size.")
        from anoncore.risk.kmap import derived_k

        return derived_k(int(self.k), int(n_rows), float(self.population_size), float(self.significance),
                         self.estimator)

    def as_k_anonymity(self, n_rows: int) -> KAnonymity:
        """The k-anonymity ARX checks for this k-map on a table of ``n_rows`` records (``estimator`` given)."""
        return KAnonymity(int(self.derived(n_rows).k))

    def threshold(self) -> float:
        return float(self.significance) if self.estimated else float(self.k)

    def _passes(self, values: NDArray[np.float64]) -> NDArray[np.bool_]:
        return values <= float(self.significance) if self.estimated else values >= float(self.k)

    def _achieved(self, checked: NDArray[np.float64]) -> float:
        return float(checked.max()) if self.estimated else float(checked.min())

    def evaluate(self, values: NDArray[np.float64]) -> ModelVerdict:
        if self.derives_k:  # (its threshold depends on the table's size, which per-class values do not carry)
            raise ValueError("KMap(estimator=...) is judged against the k derived from the table's size: audit() "
                             "does so, or evaluate KMap.as_k_anonymity(n_rows) on the class sizes.")
        return PrivacyModel.evaluate(self, values)

    def params(self) -> dict[str, Any]:
        return {"k": self.k, "subset_size": None if self.subset is None else int(
            self.subset.sum() if self.subset.dtype == bool else self.subset.size),
            "population_size": self.population_size, "significance": self.significance,
            "estimator": self.estimator}

    def lattice_unsupported(self) -> str | None:
        if self.derives_k:
            return None  # ARX's reading: a k-anonymity (engine_models)
        return "KMap (a risk-based model; use anoncore.risk.risk_lattice_search)"


@dataclass(frozen=True, slots=True)
class DeltaPresence(PrivacyModel):
    """delta-presence (Nergiz et al. 2007): every class's share of published population rows lies in
    ``[delta_min, delta_max]``.

    The audited table is the population; the published rows are the ``subset`` (default: every row) minus the
    suppressed ones. A class's value is ``published rows / population rows``; every class with a population
    row is checked, including those with no published row (the attacker then knows its people are absent).

    Parameters
    ----------
    delta_min, delta_max : float
        ``0 <= delta_min <= delta_max <= 1``.
    subset : bool mask or int indices, default=None

    Examples
    --------
    >>> import numpy as np
    >>> DeltaPresence(0.0, 0.5).evaluate(np.array([0.5, 0.75])).violating
    array([1])
    """

    delta_min: float
    delta_max: float
    subset: Any = field(default=None, compare=False, repr=False)
    requirement: ClassVar[str] = "count"
    needs_sensitive: ClassVar[bool] = False
    monotone_generalization: ClassVar[bool] = False
    parameter: ClassVar[str] = "delta_max"

    constraints: ClassVar[Mapping[str, Constraint]] = {
        "delta_min": Interval("float", 0, 1, "both"), "delta_max": Interval("float", 0, 1, "both")}

    def __post_init__(self) -> None:
        check_params(self, self.constraints, type(self).__name__)
        if self.delta_min > self.delta_max:
            raise ValueError(f"DeltaPresence needs delta_min <= delta_max. Got {self.delta_min!r} > "
                             f"{self.delta_max!r}.")
        object.__setattr__(self, "subset", _check_subset("DeltaPresence", self.subset))

    def _passes(self, values: NDArray[np.float64]) -> NDArray[np.bool_]:
        return (values >= float(self.delta_min)) & (values <= float(self.delta_max))

    def params(self) -> dict[str, Any]:
        return {"delta_min": self.delta_min, "delta_max": self.delta_max, "subset_size": None if self.subset is None
                else int(self.subset.sum() if self.subset.dtype == bool else self.subset.size)}

    def lattice_unsupported(self) -> str | None:
        return "DeltaPresence (a risk-based model; use anoncore.risk.risk_lattice_search)"


#: The risk-based models (table-level or population-based), evaluated in Python by the audit (not by the
#: criteria kernels, whose models are :data:`MODELS`).
RISK_MODELS: tuple[type[PrivacyModel], ...] = (AverageReidentificationRisk, SampleUniqueness, PopulationUniqueness,
                                               KMap, DeltaPresence)


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
