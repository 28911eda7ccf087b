"""The Mondrian variants: median partitioning kept only when both halves satisfy the model (one kernel,
``anoncore._core.mondrian``): tMondrian (k-anonymity + t-closeness, the SABRE baseline), LMondrian
(beta-likeness) and DMondrian (delta-disclosure), the BUREL baselines."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from numpy.typing import NDArray

from anoncore import _core
from anoncore._validation import check_float, check_int, check_option
from anoncore.data.table import Table
from anoncore.exceptions import InfeasibleError
from anoncore.metrics import ail
from anoncore.models import DeltaDisclosure, EnhancedBetaLikeness, KAnonymity, beta_to_delta
from anoncore.results import Partition, Result
from anoncore.static import _space
from anoncore.static._finish import finish
from anoncore.static.burel import _beta_keywords, _check_variant, _groups, _model, _resolve, _sa_codes

__all__ = ["dmondrian", "lmondrian", "tmondrian"]

_CALLER = "tmondrian"


def tmondrian(table: Table, models: Any = None, *, categorical_split: str = "rank", t: float | None = None,
              k: int | None = None, sensitive: str | None = None,
              dimension_rule: str = "normalized") -> Result:
    """tMondrian: Mondrian multidimensional splits kept only when both halves are k-anonymous and t-close.

    The baseline of the SABRE experiments (Li, Li and Venkatasubramanian, TKDE 2010). Starting from the whole
    table, a partition is cut at the median of its widest quasi-identifier (ranges normalised to [0, 1];
    categorical attributes by pre-order leaf rank); if either half would break ``k`` or ``t``, the next
    widest dimension is tried; a partition that no dimension can cut becomes a class, published as its
    minimum bounding box.

    Parameters
    ----------
    table : Table
        The encoded table (sensitive attribute numeric/ordinal: ordered EMD; categorical: hierarchical EMD).
    models : list of models
        As :func:`anoncore.sabre`: the t-closeness model of the sensitive attribute's ground distance and
        optionally ``KAnonymity``.
    t, k, sensitive : float, int, str
        The keyword form of the previous release (works for one release, with a DeprecationWarning).
    categorical_split : {'rank', 'hierarchy'}, default='rank'
        How a categorical QI is cut. ``'rank'`` (the project's baseline, spec §8 item 21): median cut on the
        pre-order leaf rank, like a numeric axis. ``'hierarchy'``: split into the children of the lowest common
        ancestor of the partition's values (multiway; every part must satisfy ``k`` and ``t``), as in the
        hierarchy-aware Mondrian variants. Numeric QIs always use median cuts. Publication is the same.
    dimension_rule : {'normalized', 'raw'}, default='normalized'
        Which quasi-identifier is cut first. ``'normalized'`` (the project's baseline): the widest range with
        every axis normalised to [0, 1] (numeric by its domain, categorical by leaf rank over the leaf count).
        ``'raw'``: the widest raw range (numeric values in their units, categorical leaf ranks), as in
        LeFevre et al.'s description, which favours wide numeric axes (on the synthetic census, age). The AIL
        of the baseline depends strongly on it (docs/sabre.md, "Mondrian's dimension rule").

    Returns
    -------
    Result
        ``algorithm='tmondrian'``; ``achieved`` holds the smallest class size and the largest class EMD.

    Raises
    ------
    TypeError, ValueError
        For invalid parameters (see :func:`anoncore.static.sabre`).

    References
    ----------
    N. Li, T. Li, S. Venkatasubramanian. Closeness: a new privacy measure for data publishing. IEEE TKDE
    22(7), 2010. K. LeFevre, D. DeWitt, R. Ramakrishnan. Mondrian multidimensional k-anonymity. ICDE 2006.

    Examples
    --------
    >>> from anoncore.datasets import toy_table
    >>> from anoncore.models import HierarchicalDistanceTCloseness, KAnonymity
    >>> res = tmondrian(toy_table(), [KAnonymity(2), HierarchicalDistanceTCloseness(0.5)])
    >>> int(res.partition.class_sizes.min()) >= 2
    True
    """
    t0 = time.perf_counter()
    _space.warn_keyword_form(_CALLER, models, t, k, sensitive)
    table = _space.check_table(table, _CALLER)
    t, k, sensitive = _space.t_and_k(table, models, t, k, sensitive, _CALLER)
    tt = check_float(t, "t", _CALLER, 0, 1, closed="right")
    kk = check_int(k, "k", _CALLER, 1, table.n_rows)
    sa = _space.sensitive_info(table, sensitive, _CALLER)
    qh = _space.mondrian_hierarchies(table, categorical_split, _CALLER)
    check_option(dimension_rule, "dimension_rule", _CALLER, ("normalized", "raw"))
    space = _space.qi_space(table, normalized=dimension_rule == "normalized")
    t1 = time.perf_counter()
    out = _core.mondrian.partition(space.codes, space.values, space.offsets, sa.codes, sa.m,
                                   [("k", float(kk)), ("t", tt)], sa.hierarchy_arrays, None, qh)
    t2 = time.perf_counter()
    if out.n_classes < 1:  # pragma: no cover - the whole table is always a class
        raise InfeasibleError("tMondrian produced no class.")
    partition = Partition.from_labels(table, out.labels)
    trace = ({"step": "mondrian", "n_splits": int(out.n_splits), "n_refused": int(out.n_refused)},)
    stats = {"seconds_validate": t1 - t0, "seconds_kernel": t2 - t1}
    params = {"t": tt, "k": kk, "sensitive": sa.name, "categorical_split": categorical_split,
              "dimension_rule": dimension_rule}
    res = finish("tmondrian", table, partition, [KAnonymity(kk), sa.closeness_model(tt)], parameters=params,
                 metrics={"ail": ail(table, partition)}, trace=trace, stats=stats)
    res.stats["seconds_total"] = time.perf_counter() - t0
    return res


# ------------------------------------------------------------------------------------------ Mondrian baselines
def _mondrian(table: Table, caller: str, specs: list[tuple[str, float]], sensitive: str | None,
              groups: NDArray[np.int32] | None, categorical_split: str = "rank"
              ) -> tuple[Partition, dict[str, Any], float]:
    _name, sa_codes, m = _sa_codes(table, sensitive, caller)
    qh = _space.mondrian_hierarchies(table, categorical_split, caller)
    space = _space.qi_space(table)
    t1 = time.perf_counter()
    out = _core.mondrian.partition(space.codes, space.values, space.offsets, sa_codes, m, specs, None,
                                   None if groups is None else np.ascontiguousarray(groups, dtype=np.int32), qh)
    t2 = time.perf_counter()
    partition = Partition.from_labels(table, out.labels)
    trace = {"step": "mondrian", "n_splits": int(out.n_splits), "n_refused": int(out.n_refused)}
    return partition, trace, t2 - t1


def lmondrian(
    table: Table,
    models: Any = None,
    *,
    categorical_split: str = "rank",
    beta: float | None = None,
    variant: str | None = None,
    epsilon: float | None = None,
    relative: bool | None = None,
    level: int | None = None,
    sensitive: str | None = None,
) -> Result:
    """LMondrian: Mondrian median splits kept only when both halves satisfy beta-likeness (Cao thesis §4.4).

    The Mondrian of :func:`anoncore.tmondrian` (widest normalised dimension, median cut, next dimension when a
    half fails) with the beta-likeness model of ``variant`` as the split condition (for the extended variants,
    the splits are checked against the extended model directly, as the thesis's extended baselines).

    Parameters
    ----------
    table : Table
    models : model or list of one model
        As in :func:`burel` (one beta-likeness model).
    beta, variant, epsilon, relative, level, sensitive
        The keyword form of the previous release, as in :func:`burel` (DeprecationWarning).
    categorical_split : {'rank', 'hierarchy'}, default='rank'
        As in :func:`anoncore.tmondrian`: median cuts on the pre-order leaf rank (default) or multiway splits
        into the children of the LCA of a categorical QI's values.

    Returns
    -------
    Result
        ``algorithm='lmondrian'``; ``achieved['beta']`` from :func:`anoncore.audit`.

    Raises
    ------
    TypeError, ValueError
        As :func:`burel`.

    Examples
    --------
    >>> from anoncore.datasets import synthetic_census
    >>> from anoncore.models import EnhancedBetaLikeness
    >>> res = lmondrian(synthetic_census(2000, rng=0, n_qi=3), [EnhancedBetaLikeness(4)])
    >>> res.achieved["passed"]
    True
    """
    caller = "lmondrian"
    t0 = time.perf_counter()
    _space.warn_keyword_form(caller, models, beta, variant, epsilon, relative, level, sensitive)
    table = _space.check_table(table, caller)
    beta, variant, epsilon, relative, level, sensitive = _beta_keywords(models, caller, beta, variant, epsilon,
                                                                        relative, level, sensitive)
    b = check_float(beta, "beta", caller, 0, None, closed="neither")
    name = table.sensitive_column(sensitive, caller=caller)
    variant, eps = _check_variant(table, None, name, variant, epsilon, relative, level, caller)
    groups = None
    if variant in ("semantic", "range"):
        groups = _groups(table, name, variant, eps, bool(relative), int(level))
        spec = [("beta_groups", b)]
    else:
        spec = [("beta_enhanced" if variant == "enhanced" else "beta_basic", b)]
    partition, trace, kernel = _mondrian(table, caller, spec, name, groups, categorical_split)
    params = {"beta": b, "variant": variant, "epsilon": eps, "relative": bool(relative), "level": int(level),
              "sensitive": name, "categorical_split": categorical_split}
    res = finish("lmondrian", table, partition, [_model(variant, b, eps, bool(relative), int(level), name)],
                 parameters=params, metrics={"ail": ail(table, partition)}, trace=(trace,),
                 stats={"seconds_kernel": kernel})
    res.stats["seconds_total"] = time.perf_counter() - t0
    return res


def dmondrian(table: Table, models: Any = None, *, categorical_split: str = "rank", beta: float | None = None,
              sensitive: str | None = None) -> Result:
    """DMondrian: Mondrian under delta-disclosure with ``delta = ln(1 + min(beta, -ln max p))`` (Cao thesis §4.4).

    delta-disclosure with this delta implies enhanced beta-likeness (:func:`anoncore.models.beta_to_delta`) but
    is stricter: every value of the table must appear in every class.

    Parameters
    ----------
    table : Table
    models : EnhancedBetaLikeness or a list of one
        The enhanced beta-likeness that delta-disclosure implies here. The keyword form (``beta``,
        ``sensitive``) of the previous release still works for one release, with a DeprecationWarning.
    beta : float
        Positive.
    sensitive : str, default=None
    categorical_split : {'rank', 'hierarchy'}, default='rank'
        As in :func:`anoncore.tmondrian`.

    Returns
    -------
    Result
        ``algorithm='dmondrian'``; ``achieved`` holds the audited ``'beta'`` (enhanced) and ``'delta'``;
        ``parameters['delta']`` the delta used.

    Raises
    ------
    InfeasibleError
        When the sensitive attribute has a single value (delta = 0).

    Examples
    --------
    >>> from anoncore.datasets import synthetic_census
    >>> from anoncore.models import EnhancedBetaLikeness
    >>> res = dmondrian(synthetic_census(2000, rng=0, n_qi=3), EnhancedBetaLikeness(4))
    >>> res.achieved["passed"]
    True
    """
    caller = "dmondrian"
    t0 = time.perf_counter()
    _space.warn_keyword_form(caller, models, beta, sensitive)
    table = _space.check_table(table, caller)
    kw = _resolve(models, caller, {"beta": beta, "sensitive": sensitive}, {"beta": None, "sensitive": None},
                  (EnhancedBetaLikeness,))
    beta, sensitive = kw["beta"], kw["sensitive"]
    b = check_float(beta, "beta", caller, 0, None, closed="neither")
    name, sa_codes, m = _sa_codes(table, sensitive, caller)
    counts = np.bincount(sa_codes, minlength=m)
    delta = beta_to_delta(b, float(counts.max()) / float(counts.sum()))
    if delta <= 0.0:
        raise InfeasibleError(f"dmondrian: the sensitive attribute {name!r} has a single value, so delta = "
                              f"ln(1 + min(beta, -ln 1)) = 0 and delta-disclosure (|ln(q/p)| < delta) holds for no "
                              f"class.")
    partition, trace, kernel = _mondrian(table, caller, [("delta_disclosure", delta)], name, None, categorical_split)
    params = {"beta": b, "delta": delta, "sensitive": name, "categorical_split": categorical_split}
    res = finish("dmondrian", table, partition,
                 [EnhancedBetaLikeness(b, sensitive=name), DeltaDisclosure(delta, sensitive=name)], parameters=params,
                 metrics={"ail": ail(table, partition)}, trace=(trace,), stats={"seconds_kernel": kernel})
    res.stats["seconds_total"] = time.perf_counter() - t0
    return res
