"""SABRE: t-closeness by sensitive-attribute bucketization and redistribution (Cao et al., VLDB J. 2011)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from numpy.typing import NDArray

from anoncore import _core
from anoncore._validation import check_bool, check_n_threads, check_option, check_seed
from anoncore.data.table import Table
from anoncore.metrics import ail
from anoncore.models import KAnonymity
from anoncore.results import Partition, Result
from anoncore.static import _space
from anoncore.static._finish import finish

__all__ = ["closeness_model", "sabre"]

_CALLER = "sabre"


def sabre(
    table: Table,
    models: Any = None,
    *,
    rng: int | np.random.Generator | None = None,
    n_threads: int | None = None,
    method: str = "ak",
    seed_policy: str = "random",
    tight_bound: bool = False,
    t: float | None = None,
    k: int | None = None,
    sensitive: str | None = None,
) -> Result:
    """Anonymize a table for t-closeness (and k-anonymity) with SABRE.

    SABRE splits the sensitive domain into buckets of similar values until the sum of the per-bucket
    worst-case transport costs ``U`` drops below ``t`` (bucketization), then halves the bucket counts
    top-down into equivalence-class "recipes", keeping a split only when both halves satisfy
    ``D(child) + U <= t`` and have at least ``k`` tuples (redistribution), and finally fills every recipe
    with tuples close to a seed tuple in the quasi-identifier space (materialization). Each class is
    published as its minimum bounding box (numeric ``[min, max]``, categorical lowest common ancestor);
    sensitive values are published exactly.

    Parameters
    ----------
    table : Table
        The encoded table. Its sensitive attribute sets the ground distance of the EMD: numeric or ordinal
        attributes use the ordered distance ``|i - j| / (m - 1)`` over the values present; categorical
        attributes use their hierarchy (``height(LCA) / height(root)``).
    models : list of models
        ``OrderedDistanceTCloseness(t, sensitive=...)`` (numeric or ordinal sensitive attribute) or
        ``HierarchicalDistanceTCloseness(t, sensitive=...)`` (categorical), and optionally ``KAnonymity(k)``
        (the thesis's experiments use ``k = 6``). The one shape of the static algorithms.
    t, k, sensitive : float, int, str
        The keyword form of the previous release (``sabre(table, t=0.35, k=6)``): still works for one release,
        with a DeprecationWarning; equivalent to ``[KAnonymity(k), closeness_model(table, t, sensitive)]``.
    method : {'ak', 'knn'}, default='ak'
        ``'ak'``: SABRE-AK, neighbours along the Hilbert curve; ``'knn'``: SABRE-KNN, exact Euclidean nearest
        neighbours (k-d trees with deletion).
    rng : int, numpy.random.Generator or None, default=None
        Seeds the choice of seed tuples. Same seed, same output (whatever ``n_threads``).
    sensitive : str, default=None
        The sensitive attribute to protect when the table declares several.
    seed_policy : {'random', 'min_key', 'slices'}, default='random'
        ``'random'`` (the thesis): a random bucket among those the class draws from, then a random remaining
        tuple; ``'min_key'``: the remaining tuple with the smallest Hilbert key (deterministic);
        ``'slices'`` (SABRE-AK only; spec §7, not the thesis algorithm): no seeds, every bucket's tuples in
        Hilbert order are dealt to the classes in EC-tree order (each class takes the same curve quantiles of
        every bucket). Deterministic and fast; avoids the wide "leftover" classes of seeded greedy retrieval.
    tight_bound : bool, default=False
        Categorical SA only: use the exact per-bucket bound instead of the thesis formula, which is loose for
        buckets spanning several levels (spec §8 item 4).
    n_threads : int, default=None
        Threads for the parallel parts (keys, sorting); ``None`` uses all cores.

    Returns
    -------
    Result
        ``algorithm`` is ``'sabre-ak'`` or ``'sabre-knn'``; ``achieved`` holds the smallest class size
        ``'k'``, the largest class EMD ``'t'`` and ``'passed'``, as measured by :func:`anoncore.audit`;
        ``metrics`` holds the AIL (GLM); ``trace`` holds the bucketization (buckets, ``U`` after
        every split) and EC-tree summary; ``stats`` holds timings.

    Raises
    ------
    TypeError
        For parameters of the wrong type.
    ValueError
        For ``t`` outside ``(0, 1]``, ``k`` outside ``[1, n_rows]``, an unknown ``method``, or a categorical
        sensitive attribute without a hierarchy.

    See Also
    --------
    tmondrian : the Mondrian baseline for the same guarantee.

    Notes
    -----
    Guarantee (Theorem 3.4 of the thesis): every class ``G`` satisfies
    ``EMD(P, Q_G) <= D(G) + U <= t``. Bucketization costs ``O(m^2)`` (numeric) or ``O(|H| |phi|)``
    (categorical); the EC tree ``O(|S_G| |phi|)``; SABRE-AK ``O(n log n + |S_G| |phi| log n)``.

    References
    ----------
    J. Cao, P. Karras, P. Kalnis, K.-L. Tan. SABRE: a Sensitive Attribute Bucketization and REdistribution
    framework for t-closeness. The VLDB Journal 20:59-81, 2011. doi:10.1007/s00778-010-0191-9

    Examples
    --------
    >>> from anoncore.datasets import toy_table
    >>> from anoncore.models import HierarchicalDistanceTCloseness, KAnonymity
    >>> res = sabre(toy_table(), [KAnonymity(2), HierarchicalDistanceTCloseness(0.5)], rng=0)
    >>> int(res.partition.class_sizes.min()) >= 2, res.achieved["t"] <= 0.5
    (True, True)
    """
    t0 = time.perf_counter()
    table, tt, kk, sensitive = _space.closeness_params(table, models, t, k, sensitive, _CALLER)
    method = check_option(method, "method", _CALLER, ("ak", "knn"), phrase="one of")
    seed_policy = check_option(seed_policy, "seed_policy", _CALLER, ("random", "min_key", "slices"))
    if seed_policy == "slices" and method != "ak":
        raise ValueError("seed_policy='slices' (Hilbert slicing) is a variant of method='ak' only.")
    check_bool(tight_bound, "tight_bound", _CALLER)
    threads = check_n_threads(n_threads, _CALLER)
    seed = check_seed(rng, _CALLER)
    sa = _space.sensitive_info(table, sensitive, _CALLER)
    space = _space.qi_space(table)
    t1 = time.perf_counter()
    out = _core.sabre.sabre(
        sa.codes, sa.m, space.codes, space.values, space.offsets, space.max_card, tt, kk, tight_bound,
        method == "knn", {"random": 0, "min_key": 1, "slices": 2}[seed_policy], seed, threads, sa.hierarchy_arrays,
    )
    t2 = time.perf_counter()
    labels: NDArray[np.int64] = out.labels
    partition = Partition.from_labels(table, labels)
    t3 = time.perf_counter()
    b = out.buckets
    trace = (
        {"step": "bucketize", "root_cet": float(b["root_cet"]), "u_trace": tuple(float(x) for x in b["u_trace"]),
         "u": float(b["u"]), "bucket_sizes": tuple(int(x) for x in b["size"]),
         "bucket_cet": tuple(float(x) for x in b["cet"]),
         "buckets": _bucket_labels(table, sa, b)},
        {"step": "ec_tree", "n_classes": int(out.leaves.shape[0]), "n_tree_nodes": int(out.n_tree_nodes),
         "n_rejected": int(out.n_rejected)},
    )
    sec = out.seconds
    stats: dict[str, Any] = {
        "seconds_validate": t1 - t0, "seconds_bucketize": sec[0], "seconds_ec_tree": sec[1],
        "seconds_keys": sec[2], "seconds_retrieve": sec[3], "seconds_kernel": t2 - t1,
        "seconds_publish": t3 - t2, "hilbert_bits": int(out.hilbert_bits), "recipes": out.leaves,
    }
    params = {"t": tt, "k": kk, "method": method, "sensitive": sa.name, "seed_policy": seed_policy,
              "tight_bound": tight_bound}
    res = finish(f"sabre-{method}", table, partition, [KAnonymity(kk), sa.closeness_model(tt)], parameters=params,
                 metrics={"ail": ail(table, partition)}, trace=trace, stats=stats, n_threads=threads or None)
    res.stats["seconds_total"] = time.perf_counter() - t0
    return res


def closeness_model(table: Table, t: float, sensitive: str | None = None) -> Any:
    """The t-closeness model that SABRE and tMondrian guarantee on ``table``'s sensitive attribute.

    ``OrderedDistanceTCloseness(t)`` for a numeric or ordinal attribute, ``HierarchicalDistanceTCloseness(t)``
    for a categorical one (its hierarchy is the ground distance), with ``sensitive`` resolved.

    Examples
    --------
    >>> from anoncore.datasets import toy_table
    >>> closeness_model(toy_table(), 0.3)
    HierarchicalDistanceTCloseness(t=0.3, sensitive='disease')
    """
    return _space.sensitive_info(_space.check_table(table, "closeness_model"), sensitive,
                                 "closeness_model").closeness_model(t)


def _bucket_labels(table: Table, sa: _space.SensitiveInfo, b: dict[str, Any]) -> tuple[tuple[str, ...], ...]:
    """The SA values (labels) of every bucket, in bucket order (values present in the table only)."""
    dic = np.asarray(table.dictionary(sa.name))
    of = np.asarray(b["bucket_of"])
    out = []
    for j in range(len(b["size"])):
        vals = dic[np.flatnonzero(of == j)]
        out.append(tuple(_label(v) for v in vals))
    return tuple(out)


def _label(v: Any) -> str:
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)
