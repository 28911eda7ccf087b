"""TDS4SA and the baselines of the paper's experiments (spec sequential-release.md B.2, B.4)."""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from anoncore import _core
from anoncore._validation import check_bool, check_int, check_option
from anoncore.data.hierarchy import Hierarchy
from anoncore.exceptions import InfeasibleError
from anoncore.release._problem import KEY, Spec, XYAnonymity, XYLinkability, node_codes, resolve
from anoncore.release.audit import ReleaseAudit, evaluate
from anoncore.release.join import dangling

__all__ = ["ReleaseResult", "kanonymize_t1", "tds4sa"]

METRICS = {"entropy": 0, "distortion": 1, "discernibility": 2}


@dataclass(frozen=True, slots=True)
class ReleaseResult:
    """What :func:`tds4sa` returns; the fields follow :class:`anoncore.results.Result`.

    Attributes
    ----------
    algorithm : str
    published : pandas.DataFrame
        T1 as released: generalization attributes replaced by their cut values (taxonomy labels, or
        intervals ``[a-b)`` / ``[a-b]`` on continuous attributes); every other column unchanged. Every
        record of T1 is published (nothing is suppressed).
    cut : dict of str to tuple of str
        The final cut per generalization attribute (values used by at least one record).
    parameters : dict
    achieved : dict
        Measured by the independent audit on the join: ``{'A_Y': ...}`` or ``{'L_Y': ..., 'L_y': {...}}``.
    metrics : dict
        Distortion per record (categorical, continuous), number of specializations.
    trace : tuple of dict
        Every specialization: attribute, value, score, InfoGain, PrivLoss, privacy value after.
    remaining : tuple of dict
        Candidates left at termination and why (``'invalid'`` or ``'not beneficial'``): the maximality
        certificate.
    audit : ReleaseAudit
    stats : dict
        Timings (preprocessing / generalization split) and counters; not part of equality.
    """

    algorithm: str
    published: pd.DataFrame = field(repr=False, compare=False)
    cut: dict[str, tuple[str, ...]]
    parameters: dict[str, Any] = field(default_factory=dict)
    achieved: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    trace: tuple[Any, ...] = field(default=(), repr=False)
    remaining: tuple[Any, ...] = field(default=(), repr=False)
    audit: ReleaseAudit | None = field(default=None, repr=False)
    stats: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def suppressed(self) -> np.ndarray:
        """All False: TDS4SA generalizes, it never suppresses."""
        return np.zeros(len(self.published), dtype=bool)

    def to_pandas(self) -> pd.DataFrame:
        return self.published.copy()


# ------------------------------------------------------------------------------------------ encoding
@dataclass
class _Encoded:
    problem: dict[str, Any]
    tax_names: list[str]
    cont_values: dict[int, np.ndarray]


def _tuple_ids(df: pd.DataFrame, cols: list[str]) -> np.ndarray:
    """Dense id of every row's value tuple on ``cols``."""
    ids: np.ndarray = df.groupby(list(cols), sort=False, observed=True).ngroup().to_numpy(dtype=np.int64)
    return ids


def _y_mode(ys: list[str]) -> int:
    return 0 if not ys else 1 if KEY in ys else 2


def _encode_release(spec: Spec, r: int, tax_index: dict[str, int], n_items: int) -> dict[str, Any]:
    from anoncore.release.join import join_nodes, unique_rows

    df = spec.tables[r]
    js = spec.join_attrs(r)
    xs = spec.xr[r - 1]
    jn = join_nodes(spec, r)
    xid = np.zeros(len(df), dtype=np.int64)
    n_x = 1
    if xs:
        xid = _tuple_ids(df, xs)
        n_x = int(xid.max()) + 1
    key = np.concatenate([jn.astype(np.int64), xid[:, None]], axis=1)
    uk, _, inv = unique_rows(key)
    part_size = np.bincount(inv, minlength=uk.shape[0]).astype(np.int64)
    gkey = uk[:, :-1]
    if gkey.shape[1]:
        ug, gstart, _ = unique_rows(gkey)
    else:
        ug, gstart = np.zeros((1, 0), dtype=np.int64), np.zeros(1, dtype=np.int64)
    group_off = np.append(np.sort(gstart), uk.shape[0]).astype(np.int64)
    part_y = np.zeros((uk.shape[0], n_items), dtype=np.int64)
    for i, (s, attr, val, _) in enumerate(spec.items):
        if s == r:
            part_y[:, i] = np.bincount(inv, weights=(df[attr].astype(str) == val).to_numpy(), minlength=uk.shape[0])
    ym = _y_mode(spec.y[r]) if spec.model == "anonymity" else 0
    yset_off = np.zeros(uk.shape[0] + 1, dtype=np.int64)
    yset = np.zeros(0, dtype=np.int64)
    if ym == 2:
        yid = _tuple_ids(df, spec.y[r])
        pairs = np.unique(np.stack([inv.astype(np.int64), yid], axis=1), axis=0)
        yset = np.ascontiguousarray(pairs[:, 1])
        yset_off[1:] = np.cumsum(np.bincount(pairs[:, 0], minlength=uk.shape[0]))
    return {"group_nodes": np.ascontiguousarray(ug, dtype=np.int32), "group_off": group_off, "part_size": part_size,
                "part_x": np.ascontiguousarray(uk[:, -1]), "n_x": n_x, "part_y": part_y, "y_mode": ym, "yset_off": yset_off,
                "yset": yset, "join_in_x": set(js) <= set(xs)}


def _encode(spec: Spec, metric: str, require_gain: bool, privloss: str, max_iter: int | None,
            counting: str) -> _Encoded:
    t1 = spec.tables[0]
    n1 = len(t1)
    tax_names: list[str] = []
    tax_index: dict[str, int] = {}

    def tidx(a: str) -> int:
        if a not in tax_index:
            tax_index[a] = len(tax_names)
            tax_names.append(a)
        return tax_index[a]

    m1 = len(spec.x1)
    codes = np.zeros((n1, m1), dtype=np.int32)
    attr_tax, attr_nvals = [], []
    cont_values: dict[int, np.ndarray] = {}
    for j, (a, c) in enumerate(zip(spec.x1, spec.x1_cont)):
        if c:
            vals, inv = np.unique(t1[a].to_numpy(dtype=np.float64), return_inverse=True)
            codes[:, j] = inv.reshape(-1)
            cont_values[j] = vals
            attr_tax.append(-1)
            attr_nvals.append(int(vals.size))
        else:
            codes[:, j] = node_codes(spec.tax[a], t1[a], f"T1.{a}")
            attr_tax.append(tidx(a))
            attr_nvals.append(0)
    slots = spec.join_attrs(0)
    slot_src: list[int] = []
    raw_cols: list[np.ndarray] = []
    for a in slots:
        if a in spec.x1 and not spec.x1_cont[spec.x1.index(a)]:
            slot_src.append(spec.x1.index(a))
        else:
            slot_src.append(-(1 + len(raw_cols)))
            raw_cols.append(node_codes(spec.tax[a], t1[a], f"T1.{a}"))
        tidx(a)
    raw_join = np.ascontiguousarray(np.stack(raw_cols, axis=1) if raw_cols else np.zeros((n1, 0)), dtype=np.int32)
    cons: list[list[int]] = []
    pa: list[int] = []
    pb: list[int] = []
    for r in range(1, len(spec.tables)):
        sr = spec.join_attrs(r)
        for a in spec.common[r - 1]:
            cons.append([r, slots.index(a), sr.index(a), 0, tidx(a), tidx(a), 0, 0])
    for r, a1, ar, pairs in spec.incons:
        b = len(pa)
        pa += list(node_codes(spec.tax[a1], pd.Series([p[0] for p in pairs]), f"T1.{a1}"))
        pb += list(node_codes(spec.tax[ar], pd.Series([p[1] for p in pairs]), f"T{r + 1}.{ar}"))
        cons.append([r, slots.index(a1), spec.join_attrs(r).index(ar), 1, tidx(a1), tidx(ar), b, len(pa)])
    n_items = len(spec.items)
    y1 = np.zeros((n1, n_items), dtype=np.uint8)
    for i, (s, attr, val, _) in enumerate(spec.items):
        if s == 0:
            y1[:, i] = (t1[attr].astype(str) == val).to_numpy()
    y1m = _y_mode(spec.y[0]) if spec.model == "anonymity" else 0
    y1_id = np.zeros(0, dtype=np.int64)
    if y1m == 2:
        y1_id = _tuple_ids(t1, spec.y[0])
    cls = np.zeros(n1, dtype=np.int32)
    n_cls = 0
    if spec.class_column is not None:
        f = pd.factorize(t1[spec.class_column].astype(str), sort=True)
        cls = f[0].astype(np.int32)
        n_cls = len(f[1])
    rels = [_encode_release(spec, r, tax_index, n_items) for r in range(1, len(spec.tables))]
    span = 1.0
    for rv in rels:
        span *= rv["n_x"]
    if span >= 2.0**62:
        raise ValueError("The previous releases have too many distinct X values together to be packed in 64 bits.")
    tax = []
    for a in tax_names:
        h = spec.tax[a]
        tax.append({"parent": np.ascontiguousarray(h.parent, dtype=np.int32),
                        "leaf_start": np.ascontiguousarray(h.leaf_start, dtype=np.int32),
                        "leaf_count": np.ascontiguousarray(h.leaf_count, dtype=np.int32)})
    problem = {
        "codes": codes, "attr_tax": attr_tax, "attr_nvals": attr_nvals, "raw_join": raw_join, "slot_src": slot_src, "tax": tax,
        "cons": np.asarray(cons, dtype=np.int64).reshape(-1, 8), "pair_a": np.asarray(pa, dtype=np.int32),
        "pair_b": np.asarray(pb, dtype=np.int32), "releases": rels, "cls": cls, "n_cls": n_cls,
        "model": 0 if spec.model == "anonymity" else 1, "k_anon": int(spec.k) if spec.model == "anonymity" else 1,
        "y1_mode": y1m, "y1_id": y1_id, "n_items": n_items,
        "item_side": np.asarray([s for s, *_ in spec.items], dtype=np.int32),
        "item_k": np.asarray([ky for *_, ky in spec.items], dtype=np.float64), "y1": y1,
        "metric": METRICS[metric], "privloss": 0 if privloss == "max" else 1, "require_gain": require_gain,
        "force_general": counting == "general", "max_iter": -1 if max_iter is None else int(max_iter),
    }
    return _Encoded(problem, tax_names, cont_values)


def _interval_label(vals: np.ndarray, lo: int, hi: int) -> str:
    def f(x: float) -> str:
        return str(int(x)) if float(x).is_integer() else f"{x:g}"

    if hi >= vals.size:
        return f"[{f(vals[lo])}-{f(vals[-1])}]"
    return f"[{f(vals[lo])}-{f(vals[hi])})"


# ------------------------------------------------------------------------------------------ API
def _check_options(metric: Any, privloss: Any, counting: Any, population: Any, max_iter: Any, caller: str) -> None:
    for name, v, opts in (("metric", metric, METRICS), ("privloss", privloss, ("max", "ratio")),
                          ("counting", counting, ("auto", "general")), ("population", population, ("error", "warn"))):
        check_option(v, name, caller, sorted(opts))
    if max_iter is not None:
        check_int(max_iter, "max_iter", caller, 0, allowed="None or an int in the range [0, inf)")


def tds4sa(
    t1: pd.DataFrame,
    t2: pd.DataFrame | Sequence[pd.DataFrame],
    requirement: XYAnonymity | XYLinkability,
    *,
    taxonomies: Mapping[str, Hierarchy] | None = None,
    class_column: str | None = None,
    continuous: Sequence[str] | None = None,
    join: Sequence[str] | None = None,
    inconsistent: Sequence[Any] | None = None,
    metric: str = "entropy",
    require_gain: bool | None = None,
    privloss: str = "max",
    population: str = "error",
    counting: str = "auto",
    max_iter: int | None = None,
) -> ReleaseResult:
    """Generalize T1 so that its join with the released T2 (or T2..Tp) meets an (X,Y)-privacy requirement.

    Top-down specialization for sequential anonymization (Wang & Fung, Algorithm 1): start from the most
    general T1 on X1 = X ∩ att(T1), repeatedly perform the valid specialization of highest
    ``Score = InfoGain / (PrivLoss + 1)``, prune invalid candidates for good (anti-monotonicity, Corollary
    4.1), stop when no valid (beneficial) candidate is left. The result is maximal, not optimal.

    Parameters
    ----------
    t1 : DataFrame
        The table to release, raw values.
    t2 : DataFrame or list of DataFrame
        The earlier release(s), possibly generalized (values may be taxonomy nodes). Several releases form a
        star join with T1 (Section 7, linkability only).
    requirement : XYAnonymity or XYLinkability
    taxonomies : mapping of str to Hierarchy, default=None
        Taxonomy per categorical attribute; categorical attributes without one get ``ANY -> values``.
    class_column : str, default=None
        Class of T1 for the entropy InfoGain (Eq. 2) and the continuous split points.
    continuous : sequence of str, default=None
        Continuous attributes of X1 (binary splits chosen on the fly); default: numeric columns without a
        taxonomy. Continuous attributes are never join attributes.
    join : sequence of str, default=None
        Common attributes to match on (default: every common categorical column).
    inconsistent : sequence of tuple, default=None
        Inconsistency pairs ``("T1.A", a, "T2.B", b)``: values under ``a`` never match values under ``b``.
    metric : {'entropy', 'distortion', 'discernibility'}, default='entropy'
        InfoGain (Eq. 2, Eq. 3, or the reduction of sum |G|^2 over X1 groups).
    require_gain : bool, default=None
        Winners need InfoGain > 0; default True for entropy, False otherwise (spec B.6 item 3).
    privloss : {'max', 'ratio'}, default='max'
        Linkability PrivLoss: increase of max_y L_y, or of max_y L_y / k_y (value-level thresholds, B.6 item 14).
    population : {'error', 'warn'}, default='error'
        What to do when the tables are not population related (B.6 item 15).
    counting : {'auto', 'general'}, default='auto'
        'auto' uses the Case-1 shortcut when every join attribute is in X; 'general' always probes pairs.
    max_iter : int, default=None
        Stop after this many specializations (the output is then feasible but not maximal).

    Returns
    -------
    ReleaseResult

    Raises
    ------
    InfeasibleError
        The most general T1 already violates the requirement (Corollary 4.2).

    References
    ----------
    K. Wang, B. C. M. Fung. Anonymizing Sequential Releases. KDD 2006. doi:10.1145/1150402.1150444

    Examples
    --------
    >>> import pandas as pd
    >>> from anoncore.release import XYLinkability, tds4sa
    >>> t1 = pd.DataFrame({"Name": ["Alice", "Alice", "Bob", "Bob", "Cathy"],
    ...                    "Job": ["Banker", "Banker", "Clerk", "Driver", "Engineer"],
    ...                    "Class": ["c1", "c1", "c2", "c3", "c4"]})
    >>> t2 = pd.DataFrame({"Job": ["Banker", "Banker", "Clerk", "Driver", "Engineer"],
    ...                    "Disease": ["Cancer", "Cancer", "HIV", "Cancer", "HIV"]})
    >>> r = tds4sa(t1, t2, XYLinkability(["T1.Job"], ["Disease"], k=0.6), class_column="Class")
    >>> r.published["Job"].tolist(), r.achieved["L_Y"]
    (['ANY', 'ANY', 'ANY', 'ANY', 'ANY'], 0.6)
    """
    t_start = time.perf_counter()
    if require_gain is None:
        require_gain = metric == "entropy"
    _check_options(metric, privloss, counting, population, max_iter, "tds4sa")
    check_bool(require_gain, "require_gain", "tds4sa")
    spec = resolve(t1, t2, requirement, taxonomies, class_column, continuous, join, inconsistent, "tds4sa")
    if metric == "entropy" and class_column is None:
        raise ValueError("metric='entropy' needs a class_column (Eq. 2); use metric='distortion' without one.")
    dl = dangling(spec)
    if any(a or b for a, b in dl):
        msg = ("The tables are not population related (every record of each table must match a record of the "
               "other, Section 3.3): " + "; ".join(f"T1/T{r + 2}: {a} T1 records and {b} T{r + 2} records have no "
                                                  f"match" for r, (a, b) in enumerate(dl) if a or b)
               + ". The monotonicity results (Lemma 4.1) and hence TDS4SA's pruning need it.")
        if population == "error":
            raise ValueError(msg)
        warnings.warn(msg, RuntimeWarning, stacklevel=2)
    enc = _encode(spec, metric, require_gain, privloss, max_iter, counting)
    t_enc = time.perf_counter()
    out = _core.release.tds4sa(enc.problem)
    t_kernel = time.perf_counter()
    if not out["feasible"]:
        what = "A_Y(X)" if spec.model == "anonymity" else "L_Y(X)"
        raise InfeasibleError(f"The requirement is infeasible: on the most generalized T1 {what} = "
                              f"{out['root_value']:g} (needs {'>=' if spec.model == 'anonymity' else '<='} "
                              f"{spec.k:g}); by Corollary 4.2 no generalization of T1 satisfies it.")
    published, cut = _publish(spec, enc, out)
    pspec = resolve(published, spec.tables[1:], requirement, spec.tax, class_column,
                    [a for a, c in zip(spec.x1, spec.x1_cont) if c], join, inconsistent, "tds4sa", published=True)
    audit = evaluate(pspec)
    if not audit.passed:  # pragma: no cover - the audit is the safety net
        raise RuntimeError(f"anoncore internal error: the TDS4SA output fails the independent audit ({audit}); "
                           "please report this bug.")
    t_audit = time.perf_counter()
    return _result("tds4sa", spec, enc, out, published, cut, audit, {
        "requirement": requirement, "metric": metric, "require_gain": require_gain, "privloss": privloss, "counting": counting,
        "class_column": class_column, "max_iter": max_iter}, (t_start, t_enc, t_kernel, t_audit))


def _publish(spec: Spec, enc: _Encoded, out: dict[str, Any]) -> tuple[pd.DataFrame, dict[str, tuple[str, ...]]]:
    pub = (spec.raw_t1 if spec.raw_t1 is not None else spec.tables[0]).copy()
    gen = out["gen"]
    cut: dict[str, tuple[str, ...]] = {}
    for j, (a, c) in enumerate(zip(spec.x1, spec.x1_cont)):
        used = np.unique(gen[:, j])
        if c:
            vals = enc.cont_values[j]
            lo, hi = out["iv_lo"][j], out["iv_hi"][j]
            lab = {int(i): _interval_label(vals, int(lo[i]), int(hi[i])) for i in used}
        else:
            labels = spec.tax[a].labels
            lab = {int(i): labels[i] for i in used}
        table = np.empty(int(used.max()) + 1 if used.size else 1, dtype=object)
        for i, v in lab.items():
            table[i] = v
        pub[a] = table[gen[:, j]]
        cut[a] = tuple(lab[int(i)] for i in used)
    return pub, cut


def _distortion(spec: Spec, enc: _Encoded, out: dict[str, Any]) -> dict[str, float]:
    """Distortion per record (spec B.4): categorical levels climbed; continuous interval width / range."""
    n = len(spec.tables[0])
    gen = out["gen"]
    cat = cont = 0.0
    for j, c in enumerate(spec.x1_cont):
        if c:
            vals = enc.cont_values[j]
            rng = float(vals[-1] - vals[0]) or 1.0
            lo, hi = out["iv_lo"][j], out["iv_hi"][j]
            top = np.where(hi >= vals.size, vals[-1], vals[np.minimum(hi, vals.size - 1)])
            width = (top - vals[lo]) / rng
            cont += float(width[gen[:, j]].sum())
        else:
            h = spec.tax[spec.x1[j]]
            leaf = enc.problem["codes"][:, j]
            cat += float((h.node_depth[leaf] - h.node_depth[gen[:, j]]).sum())
    return {"distortion_categorical": cat / n, "distortion_continuous": cont / n,
            "distortion": (cat + cont) / n}


def _result(name: str, spec: Spec, enc: _Encoded, out: dict[str, Any], published: pd.DataFrame,
            cut: dict[str, tuple[str, ...]], audit: ReleaseAudit, params: dict[str, Any],
            times: tuple[float, ...]) -> ReleaseResult:
    def node_label(j: int, node: int) -> str:
        if spec.x1_cont[j]:
            return _interval_label(enc.cont_values[j], int(out["iv_lo"][j][node]), int(out["iv_hi"][j][node]))
        return spec.tax[spec.x1[j]].labels[node]

    def split_label(j: int, split: int) -> Any:
        return None if not spec.x1_cont[j] or split < 0 else float(enc.cont_values[j][split])

    trace = tuple({"attribute": spec.x1[a], "value": node_label(a, v), "split": split_label(a, s), "score": sc, "info_gain": g,
                       "priv_loss": pl, "privacy_after": va} for a, v, s, sc, g, pl, va in out["trace"])
    remaining = tuple({"attribute": spec.x1[a], "value": node_label(a, v), "split": split_label(a, s),
                           "status": "invalid" if st == 0 else "not beneficial", "info_gain": g}
                      for a, v, s, st, g, _ in out["remaining"])
    achieved: dict[str, Any] = ({"A_Y": audit.value} if audit.model == "anonymity"
                                else {"L_Y": audit.value, "L_y": dict(audit.per_value)})
    t0, t1, t2, t3 = times
    n1 = len(spec.tables[0])
    stats = {"time_encode": t1 - t0, "time_preprocess": out["t_pre"], "time_generalize": out["t_gen"],
                 "time_kernel": t2 - t1, "time_audit": t3 - t2, "time_total": t3 - t0,
                 "refine_accesses": out["refine_accesses"], "refine_accesses_per_record": out["refine_accesses"] / n1,
                 "evaluations": out["evaluations"],
                 "pairs_probed": out["pairs_probed"], "n_partitions": out["n_partitions"], "case1": out["case1"],
                 "root_value": out["root_value"], "kernel_value": out["final_value"]}
    metrics = dict(_distortion(spec, enc, out), n_specializations=len(trace))
    return ReleaseResult(name, published, cut, params, achieved, metrics, trace, remaining, audit, stats)


def kanonymize_t1(
    t1: pd.DataFrame, quasi_identifiers: Sequence[str], k: int, *, taxonomies: Mapping[str, Hierarchy] | None = None,
    class_column: str | None = None, continuous: Sequence[str] | None = None, metric: str = "entropy",
    require_gain: bool | None = None,
) -> ReleaseResult:
    """KAE/KAD baseline: k-anonymity of T1 alone by the same top-down specialization (spec B.6 item 9).

    Runs the TDS4SA kernel with no previous release, X = ``quasi_identifiers`` and Y = K1.

    Examples
    --------
    >>> import pandas as pd
    >>> t1 = pd.DataFrame({"Job": ["Banker", "Banker", "Clerk", "Driver"], "Class": ["a", "a", "b", "b"]})
    >>> kanonymize_t1(t1, ["Job"], 2, class_column="Class").published["Job"].tolist()
    ['ANY', 'ANY', 'ANY', 'ANY']
    """
    t_start = time.perf_counter()
    if require_gain is None:
        require_gain = metric == "entropy"
    _check_options(metric, "max", "auto", "error", None, "kanonymize_t1")
    check_int(k, "k", "kanonymize_t1", 1, allowed=f"an int in the range [1, {len(t1)}]")
    if k > len(t1):
        raise InfeasibleError(f"k = {k} exceeds the number of records of T1 ({len(t1)}).")
    req = XYAnonymity([f"T1.{a}" for a in quasi_identifiers], ["K1"], k)
    # a one-row dummy release with no shared column: the star join degenerates to T1 alone
    spec = resolve(t1, pd.DataFrame({"__none__": [0]}), req, taxonomies, class_column, continuous, [], None,
                   "kanonymize_t1")
    if metric == "entropy" and class_column is None:
        raise ValueError("metric='entropy' needs a class_column (Eq. 2); use metric='distortion' without one.")
    spec.tables = spec.tables[:1]
    spec.xr, spec.common, spec.y = [], [], spec.y[:1]
    enc = _encode(spec, metric, require_gain, "max", None, "auto")
    t_enc = time.perf_counter()
    out = _core.release.tds4sa(enc.problem)
    t_kernel = time.perf_counter()
    published, cut = _publish(spec, enc, out)
    sizes = published.groupby(list(quasi_identifiers), sort=False).size()
    audit = ReleaseAudit("anonymity", bool(sizes.min() >= k), float(sizes.min()), float(k), {}, len(sizes), len(t1))
    if not audit.passed:  # pragma: no cover
        raise RuntimeError("anoncore internal error: the k-anonymity baseline fails its audit; please report this bug.")
    return _result("kanonymize_t1", spec, enc, out, published, cut, audit,
                   {"quasi_identifiers": tuple(quasi_identifiers), "k": k, "metric": metric, "require_gain": require_gain},
                   (t_start, t_enc, t_kernel, time.perf_counter()))
