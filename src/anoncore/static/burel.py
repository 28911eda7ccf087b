"""BUREL: beta-likeness by bucketization and redistribution (Cao thesis ch. 4; Cao & Karras, PVLDB 2012).

The LMondrian / DMondrian baselines of its experiments live with the other Mondrian variants in
:mod:`anoncore.static.mondrian` (still importable from here)."""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from numpy.typing import NDArray

from anoncore import _core
from anoncore._validation import check_bool, check_float, check_int, check_n_threads, check_option, check_seed
from anoncore.data.table import Table
from anoncore.metrics import ail
from anoncore.models import (
    BasicBetaLikeness,
    EnhancedBetaLikeness,
    PrivacyModel,
    RangeBetaLikeness,
    SemanticBetaLikeness,
)
from anoncore.results import Partition, Result
from anoncore.static import _space
from anoncore.static._finish import finish

__all__ = ["burel", "likeness_model"]

VARIANTS = ("enhanced", "basic", "semantic", "range")


# ------------------------------------------------------------------------------------------ validation
def likeness_model(beta: float, variant: str = "enhanced", epsilon: float | None = None, relative: bool = False,
                   level: int = 1, sensitive: str | None = None) -> PrivacyModel:
    """The beta-likeness model of BUREL's keyword parameters (``variant``: 'enhanced', 'basic', 'semantic',
    'range').

    Examples
    --------
    >>> likeness_model(4, "range", epsilon=6.0)
    RangeBetaLikeness(beta=4, epsilon=6.0, relative=False, sensitive=None)
    """
    variant = check_option(variant, "variant", "likeness_model", VARIANTS)
    if variant == "range" and epsilon is None:
        raise ValueError("likeness_model(variant='range') needs 'epsilon', the width of the value ranges.")
    if variant != "range" and epsilon is not None:
        raise ValueError(f"The 'epsilon' parameter of likeness_model applies to variant='range' only. Got "
                         f"epsilon={epsilon!r} with variant={variant!r}.")
    return _model(variant, beta, epsilon, relative, level, sensitive)  # type: ignore[arg-type]


def likeness_from_models(models: Any, caller: str, allowed: tuple[type, ...] = (
        EnhancedBetaLikeness, BasicBetaLikeness, SemanticBetaLikeness, RangeBetaLikeness)) -> dict[str, Any]:
    """The keyword parameters (beta, variant, epsilon, relative, level, sensitive) of one beta-likeness model."""
    mlist = [models] if isinstance(models, PrivacyModel) else list(models)
    if len(mlist) != 1 or not isinstance(mlist[0], allowed):
        raise ValueError(f"The 'models' parameter of {caller} must hold one model of "
                         f"{', '.join(c.__name__ for c in allowed)}. Got {mlist!r} instead.")
    m: Any = mlist[0]
    out: dict[str, Any] = {"beta": m.beta, "sensitive": m.sensitive, "variant": {
        EnhancedBetaLikeness: "enhanced", BasicBetaLikeness: "basic", SemanticBetaLikeness: "semantic",
        RangeBetaLikeness: "range"}[type(m)]}
    if isinstance(m, SemanticBetaLikeness):
        out["level"] = m.level
    if isinstance(m, RangeBetaLikeness):
        out.update(epsilon=m.epsilon, relative=m.relative)
    return out


def _resolve(models: Any, caller: str, given: dict[str, Any], defaults: dict[str, Any],
             allowed: tuple[type, ...] | None = None) -> dict[str, Any]:
    """The keyword parameters of a beta-likeness call made with ``models`` or with the keyword form."""
    if models is None:
        if given.get("beta") is None:
            raise TypeError(f"{caller}() missing its models, e.g. [EnhancedBetaLikeness(beta)].")
        return {n: defaults[n] if given.get(n) is None else given[n] for n in defaults}
    if any(v is not None for v in given.values()):
        raise TypeError(f"{caller}() takes either 'models' or the keywords {'/'.join(given)}, not both.")
    out = dict(defaults)
    out.update(likeness_from_models(models, caller, *(() if allowed is None else (allowed,))))
    return out


_BETA_DEFAULTS = {"beta": None, "variant": "enhanced", "epsilon": None, "relative": False, "level": 1,
                  "sensitive": None}


def _beta_keywords(models: Any, caller: str, *given: Any) -> tuple[Any, ...]:
    """(beta, variant, epsilon, relative, level, sensitive) of BUREL / LMondrian from ``models`` or the keywords."""
    kw = _resolve(models, caller, dict(zip(_BETA_DEFAULTS, given)), _BETA_DEFAULTS)
    return tuple(kw[n] for n in _BETA_DEFAULTS)


def _check_variant(table: Table, sa: _space.SensitiveInfo | None, name: str, variant: Any, epsilon: Any,
                   relative: Any, level: Any, caller: str) -> tuple[str, float | None]:
    variant = check_option(variant, "variant", caller, VARIANTS)
    kind = table.attribute(name).kind
    eps: float | None = None
    if variant == "range":
        if epsilon is None:
            raise ValueError(f"{caller}(variant='range') needs 'epsilon', the width of the value ranges.")
        eps = check_float(epsilon, "epsilon", caller, 0, None, closed="left")
        if kind == "categorical":
            raise ValueError(f"{caller}(variant='range') needs a numeric or ordinal sensitive attribute; {name!r} "
                             f"is categorical (use variant='semantic' with its hierarchy).")
        check_bool(relative, "relative", caller)
        if relative:
            v = _values(table, name)[np.bincount(table.column(name), minlength=table.cardinality(name)) > 0]
            if v.min() <= 0:
                raise ValueError(f"{caller}(relative=True) needs positive sensitive values; {name!r} has "
                                 f"{v.min()!r}.")
    elif epsilon is not None:
        raise ValueError(f"The 'epsilon' parameter of {caller} applies to variant='range' only. Got "
                         f"epsilon={epsilon!r} with variant={variant!r}.")
    if variant == "semantic":
        if kind != "categorical" or table.attribute(name).hierarchy is None:
            raise ValueError(f"{caller}(variant='semantic') needs a categorical sensitive attribute with a hierarchy; "
                             f"{name!r} is {kind} without one.")
        check_int(level, "level", caller, 0)
    return variant, eps


def _values(table: Table, name: str) -> NDArray[np.float64]:
    if table.attribute(name).kind == "numeric":
        return table.numeric_values(name)
    return np.arange(table.cardinality(name), dtype=np.float64)


def _sa_codes(table: Table, sensitive: str | None, caller: str) -> tuple[str, NDArray[np.int32], int]:
    name = table.sensitive_column(sensitive, caller=caller)
    return name, table.column(name), table.cardinality(name)


def _model(variant: str, beta: float, eps: float | None, relative: bool, level: int, name: str) -> PrivacyModel:
    if variant == "basic":
        return BasicBetaLikeness(beta, sensitive=name)
    if variant == "semantic":
        return SemanticBetaLikeness(beta, level=level, sensitive=name)
    if variant == "range":
        assert eps is not None
        return RangeBetaLikeness(beta, eps, relative=relative, sensitive=name)
    return EnhancedBetaLikeness(beta, sensitive=name)


def _groups(table: Table, name: str, variant: str, eps: float | None, relative: bool,
            level: int) -> NDArray[np.int32]:
    """SA code ranges [lo, hi] the extended variants constrain (semantic: nodes at depth >= level; range: runs of
    present values of width <= epsilon)."""
    if variant == "semantic":
        h = table.hierarchy(name)
        assert h is not None
        nodes = [x for x in range(h.n_nodes) if h.node_depth[x] >= level]
        return np.array([[h.leaf_start[x], h.leaf_start[x] + h.leaf_count[x] - 1] for x in nodes],
                        dtype=np.int32).reshape(-1, 2)
    assert eps is not None
    counts = np.bincount(table.column(name), minlength=table.cardinality(name))
    codes = np.flatnonzero(counts > 0)
    vals = _values(table, name)[codes]
    if np.any(np.diff(vals) < 0):  # pragma: no cover - codes of numeric/ordinal attributes follow value order
        raise RuntimeError("anoncore internal error: sensitive codes do not follow value order (please report)")
    out = []
    for i in range(codes.size):
        for j in range(i, codes.size):
            width = vals[j] - vals[i]
            if (width / vals[i] if relative else width) > eps:
                break
            out.append((codes[i], codes[j]))
    return np.array(out, dtype=np.int32).reshape(-1, 2)


# ------------------------------------------------------------------------------------------ BUREL
def burel(
    table: Table,
    models: Any = None,
    *,
    rng: int | np.random.Generator | None = None,
    n_threads: int | None = None,
    seed_policy: str = "random",
    strict: bool = True,
    split: str = "halve",
    beta: float | None = None,
    variant: str | None = None,
    epsilon: float | None = None,
    relative: bool | None = None,
    level: int | None = None,
    sensitive: str | None = None,
) -> Result:
    """Anonymize a table for beta-likeness with BUREL.

    BUREL sorts the sensitive values by frequency and splits them, with an exact dynamic programme, into the
    fewest buckets of consecutive values whose total share is at most ``f(p_min)`` of the bucket's rarest value,
    where ``f(p) = p (1 + min(beta, -ln p))`` (bucketization, DPpartition); it then halves the bucket counts
    top-down into equivalence-class recipes, keeping a split only when both halves are *eligible*, i.e. take at
    most ``f(p_min) |G|`` tuples from every bucket (redistribution, biSplit, Theorem 4.1); and it fills every
    recipe with tuples near a seed along the Hilbert curve (the retrieval shared with SABRE-AK). Classes are
    published as minimum bounding boxes; sensitive values exactly.

    The semantic and range-based variants run enhanced BUREL and then merge every class that violates the
    extended model with the class whose union costs the least information loss, until it complies.

    Parameters
    ----------
    table : Table
        The encoded table.
    models : model or list of one model
        ``EnhancedBetaLikeness(beta)``, ``BasicBetaLikeness(beta)``, ``SemanticBetaLikeness(beta, level)`` or
        ``RangeBetaLikeness(beta, epsilon, relative)`` (each with ``sensitive=``): the one shape of the static
        algorithms. The keyword form below (``burel(table, beta=4, variant=...)``) of the previous release still
        works for one release, with a DeprecationWarning (``likeness_model`` builds the model from it).
    beta : float
        The beta-likeness threshold, positive.
    variant : {'enhanced', 'basic', 'semantic', 'range'}, default='enhanced'
        ``'enhanced'``: ``(q - p)/p <= min(beta, -ln p)`` per value (Definition 4.3); ``'basic'``:
        ``(q - p)/p <= beta`` (Definition 4.2, bound ``f(p) = p (1 + beta)``); ``'semantic'``: the enhanced bound
        on every node of the sensitive hierarchy at depth ``>= level`` (categorical SA); ``'range'``: on every run
        of present values of width ``<= epsilon`` (numeric or ordinal SA).
    epsilon : float, default=None
        Width of the ranges of ``variant='range'`` (value units; with ``relative=True`` a ratio).
    relative : bool, default=False
        ``variant='range'``: width relative to the run's smallest value, ``(max - min) / min``.
    level : int, default=1
        ``variant='semantic'``: shallowest constrained depth (root depth 0).
    rng : int, numpy.random.Generator or None, default=None
        Seeds the choice of seed tuples. Same seed, same output, whatever ``n_threads``.
    sensitive : str, default=None
        The sensitive attribute when the table declares several.
    seed_policy : {'random', 'min_key', 'slices'}, default='random'
        As in :func:`anoncore.sabre`: the thesis's random seed, the smallest remaining Hilbert key, or Hilbert
        slicing (no seeds; spec §7, not the thesis algorithm).
    strict : bool, default=True
        DPpartition's combinability test (spec §8 item 7). ``True`` (default) is the thesis pseudo-code's strict
        ``sum p < f(p_min)``; ``False`` is the ``<=`` of Lemma 4.4, Theorem 4.1 and Example 4.1. Both are sound.
        The default is strict because ``<=`` packs buckets whose share equals their bound exactly, which is
        common at integer beta (``sum N = (1 + beta) N_min``), and such a bucket admits no halving unless both
        halves are exactly proportional: the EC tree then stops at the root (measured: synthetic census,
        100,000 rows, beta = 5: one class with ``<=``, 208 classes with ``<``). ``strict=False`` reproduces
        Example 4.1 at beta = 1 (two classes at beta exactly 1).
    split : {'halve', 'balanced'}, default='halve'
        ``'halve'`` is the thesis's biSplit: every bucket count is halved (left child ``ceil(a/2)``) and the
        split is kept only when both halves are eligible. ``'balanced'`` (not in the thesis) splits a node into
        the two eligible children whose sizes are closest to half, with counts nearest to proportional; it goes on
        splitting where rounding stops the halving (buckets packed close to their bound), so classes get smaller.
        Both publish only eligible classes, so the guarantee is the same.
    n_threads : int, default=None
        Threads for the Hilbert keys and sorts; ``None`` uses all cores.

    Returns
    -------
    Result
        ``algorithm='burel'``; ``achieved['beta']`` is the largest per-class value of the variant's model as
        measured by :func:`anoncore.audit` (+inf would mean a violation), ``achieved['passed']``; for
        ``'enhanced'`` also the basic beta (largest relative gain) under ``'BasicBetaLikeness.beta'``. ``metrics['ail']``;
        ``trace``: buckets (values, sizes, bounds, DP arrays N and S), EC-tree summary, merges; ``stats``:
        timings and the recipes.

    Raises
    ------
    TypeError
        For parameters of the wrong type.
    ValueError
        For ``beta <= 0``, ``epsilon < 0``, an unknown ``variant``, ``variant='semantic'`` without a
        sensitive hierarchy, ``variant='range'`` on a categorical attribute or without ``epsilon``.

    See Also
    --------
    lmondrian, dmondrian : the Mondrian baselines.

    Notes
    -----
    Every class ``G`` takes ``x_j <= f(p_{l_j}) |G|`` tuples from bucket ``B_j``, so every value's share is at most
    ``f`` of its own frequency (``f`` increases). A class drawing from a bucket whose rarest value has frequency
    ``p`` has at least ``ceil(1 / f(p))`` tuples. Cost: ``O(m^2)`` DP, ``O(|S_G| |phi|)`` tree,
    ``O(n log n + |S_G| |phi| log n)`` retrieval; the merges of the extended variants cost one pass over the
    classes per merge.

    References
    ----------
    J. Cao. Privacy-Preserving Data Publication for Static and Streaming Data. PhD thesis, NUS, 2010, ch. 4.
    J. Cao, P. Karras. Publishing microdata with a robust privacy guarantee. PVLDB 5(11), 2012.

    Examples
    --------
    >>> from anoncore.datasets import synthetic_census
    >>> tab = synthetic_census(2000, rng=0, n_qi=3)
    >>> from anoncore.models import EnhancedBetaLikeness
    >>> res = burel(tab, [EnhancedBetaLikeness(4)], rng=0)
    >>> res.achieved["passed"], res.achieved["beta"] <= 4
    (True, True)
    """
    caller = "burel"
    t0 = time.perf_counter()
    _space.warn_keyword_form(caller, models, beta, variant, epsilon, relative, level, sensitive)
    table = _space.check_table(table, caller)
    beta, variant, epsilon, relative, level, sensitive = _beta_keywords(models, caller, beta, variant, epsilon,
                                                                        relative, level, sensitive)
    b = check_float(beta, "beta", caller, 0, None, closed="neither")
    name, sa_codes, m = _sa_codes(table, sensitive, caller)
    variant, eps = _check_variant(table, None, name, variant, epsilon, relative, level, caller)
    seed_policy = check_option(seed_policy, "seed_policy", caller, ("random", "min_key", "slices"))
    check_bool(strict, "strict", caller)
    split = check_option(split, "split", caller, ("halve", "balanced"))
    threads = check_n_threads(n_threads, caller)
    seed = check_seed(rng, caller)
    space = _space.qi_space(table)
    t1 = time.perf_counter()
    out = _core.burel.burel(sa_codes, m, space.codes, space.values, space.offsets, space.max_card, b,
                            variant != "basic", strict, {"random": 0, "min_key": 1, "slices": 2}[seed_policy], seed,
                            threads, split == "balanced")
    t2 = time.perf_counter()
    labels: NDArray[np.int64] = out.labels
    merge_trace: dict[str, Any] = {"step": "merge", "n_violating": 0, "n_merges": 0, "n_evaluated": 0}
    if variant in ("semantic", "range"):
        groups = _groups(table, name, variant, eps, bool(relative), int(level))
        labels, merge_trace = _merge(table, labels, sa_codes, m, groups, b, space)
    t3 = time.perf_counter()
    partition = Partition.from_labels(table, labels)
    model = _model(variant, b, eps, bool(relative), int(level), name)
    models = [model] + ([BasicBetaLikeness(b, sensitive=name)] if variant == "enhanced" else [])
    bk = out.buckets
    dic = np.asarray(table.dictionary(name))
    bucket_of = np.asarray(bk["bucket_of"])
    trace = (
        {"step": "bucketize", "order": tuple(_label(dic[c]) for c in bk["order"]),
         "dp_n": tuple(int(x) for x in bk["dp_n"]), "dp_s": tuple(int(x) for x in bk["dp_s"]),
         "buckets": tuple(tuple(_label(dic[c]) for c in bk["order"] if bucket_of[c] == j)
                          for j in range(len(bk["size"]))),
         "bucket_sizes": tuple(int(x) for x in bk["size"]), "bucket_bounds": tuple(float(x) for x in bk["bound"]),
         "min_class_size": tuple(math.ceil(1.0 / x - 1e-12) for x in bk["bound"])},
        {"step": "ec_tree", "n_classes": int(out.leaves.shape[0]), "n_tree_nodes": int(out.n_tree_nodes),
         "n_rejected": int(out.n_rejected)},
        merge_trace,
    )
    sec = out.seconds
    stats: dict[str, Any] = {
        "seconds_validate": t1 - t0, "seconds_bucketize": sec[0], "seconds_ec_tree": sec[1], "seconds_keys": sec[2],
        "seconds_retrieve": sec[3], "seconds_kernel": t2 - t1, "seconds_merge": t3 - t2,
        "hilbert_bits": int(out.hilbert_bits), "recipes": out.leaves,
    }
    params = {"beta": b, "variant": variant, "epsilon": eps, "relative": bool(relative), "level": int(level),
              "sensitive": name, "seed_policy": seed_policy, "strict": strict, "split": split}
    res = finish("burel", table, partition, models, parameters=params, metrics={"ail": ail(table, partition)},
                 trace=trace, stats=stats, n_threads=threads or None)
    res.stats["seconds_total"] = time.perf_counter() - t0
    return res


def _label(v: Any) -> str:
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)


def _merge(table: Table, labels: NDArray[np.int64], sa_codes: NDArray[np.int32], m: int, groups: NDArray[np.int32],
           beta: float, space: _space.QISpace) -> tuple[NDArray[np.int64], dict[str, Any]]:
    """Merge post-processing (§4.5) through the C++ kernel: classes violating a group bound absorb their
    cheapest neighbour (GLM increase) until they comply."""
    n_classes = int(labels.max()) + 1
    lab = np.ascontiguousarray(labels, dtype=np.int64)
    none = np.zeros(0, dtype=bool)
    hist = _core.core.class_histogram(sa_codes, lab, none, n_classes, m)
    ref = np.ascontiguousarray(np.bincount(sa_codes, minlength=m).astype(np.int64))
    lo, hi = _core.core.class_min_max(space.codes, lab, none, n_classes)
    cat = np.zeros(len(table.quasi_identifiers), dtype=np.uint8)
    parents, starts, counts, offsets, n_leaves = [], [], [], [0], []
    for j, q in enumerate(table.quasi_identifiers):
        h = table.hierarchy(q)
        if h is not None and table.attribute(q).kind != "numeric":
            cat[j] = 1
            parents.append(np.asarray(h.parent, dtype=np.int32))
            starts.append(np.asarray(h.leaf_start, dtype=np.int32))
            counts.append(np.asarray(h.leaf_count, dtype=np.int32))
            n_leaves.append(h.n_leaves)
        else:
            n_leaves.append(0)
        offsets.append(offsets[-1] + (h.n_nodes if cat[j] else 0))  # type: ignore[union-attr]

    def cat_arr(xs: list[NDArray[np.int32]]) -> NDArray[np.int32]:
        return np.ascontiguousarray(np.concatenate(xs) if xs else np.zeros(0, dtype=np.int32), dtype=np.int32)

    out = _core.burel.merge(
        hist, ref, np.ascontiguousarray(groups, dtype=np.int32), float(beta), np.ascontiguousarray(lo),
        np.ascontiguousarray(hi), space.values, space.offsets, cat, cat_arr(parents), cat_arr(starts),
        cat_arr(counts), np.asarray(offsets, dtype=np.int64), np.asarray(n_leaves, dtype=np.int32))
    new_labels = np.asarray(out["class_map"])[lab]
    trace = {"step": "merge", "n_groups": int(groups.shape[0]), "n_violating": int(out["n_violating"]),
             "n_merges": int(out["n_merges"]), "n_evaluated": int(out["n_evaluated"])}
    return np.ascontiguousarray(new_labels, dtype=np.int64), trace


def __getattr__(name: str) -> Any:
    """``lmondrian`` and ``dmondrian`` moved to :mod:`anoncore.static.mondrian`; imported from there lazily."""
    if name in ("lmondrian", "dmondrian"):
        from anoncore.static import mondrian

        return getattr(mondrian, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
