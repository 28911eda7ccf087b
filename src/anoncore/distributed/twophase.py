"""The two-phase algorithms (SABRE, BUREL) and the Mondrian baselines on a dask DataFrame split into parts.

Every class is held to the **whole table's** sensitive distribution, computed by a distributed pass first:

* **SABRE / BUREL.** The bucketization and the EC-size tree need only the sensitive histogram, so they run once,
  on the client, on the global histogram: the recipes (rows per bucket of every class) are exactly the
  single-machine ones. The recipes, in the tree's depth-first order, are dealt to ``n_parts`` parts of about
  equal size; every bucket's rows are dealt to the parts in the parts' counts (in Hilbert order of their
  quasi-identifiers, ``split='hilbert'``, so a part is a stretch of the curve in every bucket, or in input order,
  ``split='rows'``); each part then materializes its own recipes on its own rows (Hilbert-neighbour retrieval)
  on a worker. Every class satisfies ``D(G) + U <= t`` (SABRE) or eligibility (BUREL) against the global
  distribution, whatever the split; only the retrieval, restricted to a part's rows, differs.
* **Mondrian (tMondrian, LMondrian, DMondrian).** The first cuts are Mondrian's own, made on the client from
  per-region histograms merged over the partitions (one distributed pass per level): a region is cut at the
  median of its widest dimension only when both halves pass the audit against the global distribution. Each
  resulting region is a part; a worker goes on with the Mondrian kernel, its models measured against the global
  distribution (``reference=``), so every class it keeps passes.

The output is a dask DataFrame of the published rows (generalized quasi-identifiers, exact sensitive values, a
global class id ``ec``), audited by :func:`anoncore.distributed.publish.audit_published` against the global
distribution. Every input row is published (these algorithms suppress nothing).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from anoncore import _core
from anoncore._validation import check_seed
from anoncore.data.schema import Attribute, Schema
from anoncore.data.table import Table
from anoncore.distributed._encode import encode_column, encode_frame, resolved_columns
from anoncore.distributed.frequency import FrequencySet
from anoncore.models import (
    BasicBetaLikeness,
    DeltaDisclosure,
    EnhancedBetaLikeness,
    HierarchicalDistanceTCloseness,
    KAnonymity,
    OrderedDistanceTCloseness,
    PrivacyModel,
    beta_to_delta,
)
from anoncore.results import Partition

__all__ = ["ALGORITHMS", "TwoPhaseResult", "audit_labels", "two_phase"]

ALGORITHMS = ("sabre", "burel", "tmondrian", "lmondrian", "dmondrian")
SPLITS = ("hilbert", "rows")
_CELL_BITS = 20


def _compute(*tasks: Any) -> tuple[Any, ...]:
    """dask.compute of delayed tasks (on the current client, if any)."""
    from dask.base import compute

    out: tuple[Any, ...] = compute(*tasks)  # type: ignore[no-untyped-call]
    return out


def log_phase(enabled: bool, message: str) -> None:
    """One progress line on stderr (when ``enabled``)."""
    if enabled:
        import sys

        print(message, file=sys.stderr, flush=True)
_ROW = "__anoncore_row"
_PART = "__anoncore_part"


@dataclass
class TwoPhaseResult:
    """What :func:`two_phase` returns.

    Attributes
    ----------
    published : dask.dataframe.DataFrame
        The published rows (persisted on the workers): the schema's non-identifier columns, quasi-identifiers as
        their class's generalized labels, and ``ec``, the global class id.
    assignments : dask.dataframe.DataFrame
        ``row`` (position of the row in the input, partitions in order) and ``ec`` of every input row.
    reference : ndarray of int64
        The whole table's count of every sensitive code (the distribution every class is held to).
    part_rows : tuple of int
        Rows per part.
    """

    algorithm: str
    models: list[PrivacyModel]
    published: Any
    assignments: Any
    reference: NDArray[np.int64]
    sensitive: Attribute
    n_rows: int
    n_classes: int
    part_rows: tuple[int, ...]
    parameters: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, float] = field(default_factory=dict)

    @property
    def n_parts(self) -> int:
        return len(self.part_rows)

    def reference_set(self) -> FrequencySet:
        """The global sensitive histogram as a frequency set without quasi-identifiers (the ``original`` of
        :func:`anoncore.distributed.publish.audit_published`)."""
        codes = np.flatnonzero(self.reference).astype(np.int32).reshape(-1, 1)
        return FrequencySet((self.sensitive,), codes, self.reference[codes[:, 0]].astype(np.int64),
                            self.sensitive.name)

    def audit(self, schema: Schema) -> dict[str, Any]:
        """The distributed audit of :attr:`published` against the whole table's sensitive distribution."""
        from anoncore.distributed.publish import audit_published

        return audit_published(self.published, schema, self.models, original=self.reference_set(),
                               sensitive=self.sensitive.name)

    def labels(self) -> NDArray[np.int64]:
        """The class of every input row, in input order (computed: n_rows integers on the client)."""
        a = self.assignments.compute()
        out = np.full(self.n_rows, -1, dtype=np.int64)
        out[a["row"].to_numpy()] = a["ec"].to_numpy()
        return out


# ------------------------------------------------------------------------------------------ models
def _resolve_models(algorithm: str, models: Any, sa: Attribute) -> tuple[list[PrivacyModel], dict[str, Any]]:
    """The models the algorithm guarantees (audited) and its kernel parameters."""
    mlist = [models] if isinstance(models, PrivacyModel) else list(models)
    ks = [m for m in mlist if isinstance(m, KAnonymity)]
    k = int(ks[0].k) if ks else 1
    ordered = sa.hierarchy is None or sa.kind != "categorical"
    if algorithm in ("sabre", "tmondrian"):
        ts = [m for m in mlist if isinstance(m, (OrderedDistanceTCloseness, HierarchicalDistanceTCloseness))]
        if len(ts) != 1 or len(ks) > 1 or len(ts) + len(ks) != len(mlist):
            raise ValueError(f"The 'models' parameter of two_phase(algorithm={algorithm!r}) must hold one "
                             f"OrderedDistanceTCloseness or HierarchicalDistanceTCloseness and at most one KAnonymity. "
                             f"Got {mlist!r} instead.")
        want = OrderedDistanceTCloseness if ordered else HierarchicalDistanceTCloseness
        if not isinstance(ts[0], want):
            raise ValueError(f"two_phase measures t-closeness on {sa.name!r} with {want.__name__}; got "
                             f"{type(ts[0]).__name__}.")
        t = float(ts[0].t)
        return [KAnonymity(k), want(t, sensitive=sa.name)], {"t": t, "k": k}
    if len(mlist) != 1 or type(mlist[0]) not in (EnhancedBetaLikeness, BasicBetaLikeness) or (
            algorithm == "dmondrian" and type(mlist[0]) is not EnhancedBetaLikeness):
        allowed = "EnhancedBetaLikeness" + ("" if algorithm == "dmondrian" else " or BasicBetaLikeness")
        raise ValueError(f"The 'models' parameter of two_phase(algorithm={algorithm!r}) must hold one {allowed}. "
                         f"Got {mlist!r} instead.")
    m: Any = mlist[0]
    beta = float(m.beta)
    enhanced = isinstance(m, EnhancedBetaLikeness)
    out: list[PrivacyModel] = [type(m)(beta, sensitive=sa.name)]
    if algorithm == "burel" and enhanced:
        out.append(BasicBetaLikeness(beta, sensitive=sa.name))
    return out, {"beta": beta, "enhanced": enhanced}


# ------------------------------------------------------------------------------------------ pass 1: histograms
def _part_stats(df: pd.DataFrame, sa: Attribute, qis: list[Attribute], i: int) -> tuple[int, NDArray[np.int64]]:
    if len(df) == 0:
        raise ValueError(f"Partition {i} is empty: remove empty files or repartition the data.")
    encode_frame(df, qis, i)  # a value outside its hierarchy fails here, before any work
    codes = encode_column(sa, df[sa.name], i)
    return len(df), np.bincount(codes, minlength=sa.hierarchy.n_leaves).astype(np.int64)  # type: ignore[union-attr]


def _sa_hierarchy(sa: Attribute) -> tuple[NDArray[np.int32], ...] | None:
    if sa.kind != "categorical":
        return None
    h: Any = sa.hierarchy
    return tuple(np.ascontiguousarray(a, dtype=np.int32) for a in (h.parent, h.node_height, h.leaf_start,
                                                                      h.leaf_count))


# ------------------------------------------------------------------------------------------ SABRE / BUREL plan
@dataclass(frozen=True)
class _RecipePlan:
    """Buckets and recipes of the whole table and their split into parts."""

    bucket_of: NDArray[np.int32]          # bucket of every sensitive code (-1: absent)
    n_buckets: int
    leaves: NDArray[np.int64]             # (n_classes, n_buckets) rows per class and bucket, depth-first order
    part_of_leaf: NDArray[np.int64]       # part of every recipe (contiguous)
    part_counts: NDArray[np.int64]        # (n_parts, n_buckets)
    trace: dict[str, Any]


def _recipes(algorithm: str, ref: NDArray[np.int64], params: dict[str, Any], sa: Attribute, tight: bool,
             strict: bool, balanced: bool) -> tuple[NDArray[np.int32], int, NDArray[np.int64], dict[str, Any]]:
    m = ref.size
    if algorithm == "sabre":
        h = _sa_hierarchy(sa)
        b = _core.sabre.bucketize(ref, params["t"], h, tight)
        leaves = _core.sabre.ec_sizes(
            np.ascontiguousarray(b["size"], dtype=np.int64), np.ascontiguousarray(b["node"], dtype=np.int32),
            np.ascontiguousarray(b["lo"], dtype=np.int32), np.ascontiguousarray(b["hi"], dtype=np.int32),
            int(b["n_present"]), float(b["u"]), params["t"], params["k"], h, m if h is not None else 0)
        trace = {"u": float(b["u"]), "bucket_sizes": tuple(int(x) for x in b["size"])}
    else:
        b = _core.burel.dp_partition(ref, params["beta"], params["enhanced"], strict)
        leaves = _core.burel.ec_sizes(np.ascontiguousarray(b["size"], dtype=np.int64),
                                      np.ascontiguousarray(b["bound"], dtype=np.float64), balanced)
        trace = {"bucket_sizes": tuple(int(x) for x in b["size"]), "bucket_bounds": tuple(float(x) for x in b["bound"])}
    bucket_of = np.ascontiguousarray(b["bucket_of"], dtype=np.int32)
    return bucket_of, len(b["size"]), np.asarray(leaves, dtype=np.int64), trace


def _deal_recipes(leaves: NDArray[np.int64], n_parts: int) -> NDArray[np.int64]:
    """Part of every recipe: contiguous runs (depth-first order) of about equal rows."""
    sizes = leaves.sum(axis=1)
    n_parts = max(1, min(n_parts, sizes.size))
    ends = np.cumsum(sizes)
    total = int(ends[-1])
    # recipe i goes to the part its middle row falls in; contiguous and every part non-empty when possible
    mid = ends - sizes / 2.0
    part = np.minimum((mid * n_parts // total).astype(np.int64), n_parts - 1)
    _, dense = np.unique(part, return_inverse=True)
    return dense.astype(np.int64)


# ------------------------------------------------------------------------------------------ row keys and ranks
def _space_of(df: pd.DataFrame, schema: Schema) -> tuple[Table, Any]:
    from anoncore.static import _space

    table = Table.from_pandas(df, schema, n_threads=1)
    return table, _space.qi_space(table)


def _row_order_keys(df: pd.DataFrame, schema: Schema, sa: Attribute, bucket_of: NDArray[np.int32], split: str,
                    i: int) -> tuple[NDArray[np.int64], NDArray[np.uint64]]:
    """(combined bucket/cell key, Hilbert key) of every row of one partition."""
    sa_codes = encode_column(sa, df[sa.name], i)
    bucket = bucket_of[sa_codes].astype(np.int64)
    if split == "rows":
        return bucket << _CELL_BITS, np.zeros(len(df), dtype=np.uint64)
    _, space = _space_of(df, schema)
    d = space.codes.shape[1]
    bits = int(_core.sabre.hilbert_bits(d, space.max_card))
    keys = np.asarray(_core.sabre.hilbert_keys(space.codes, space.values, space.offsets, bits, 1), dtype=np.uint64)
    shift = max(0, d * bits - _CELL_BITS)
    cell = (keys >> np.uint64(shift)).astype(np.int64)
    return (bucket << _CELL_BITS) | cell, keys


def _cell_counts(df: pd.DataFrame, schema: Schema, sa: Attribute, bucket_of: NDArray[np.int32], split: str,
                 i: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    comb, _ = _row_order_keys(df, schema, sa, bucket_of, split, i)
    u, c = np.unique(comb, return_counts=True)
    return u, c.astype(np.int64)


def _assign_parts(df: pd.DataFrame, schema: Schema, sa: Attribute, bucket_of: NDArray[np.int32], split: str,
                  cell_keys: NDArray[np.int64], cell_start: NDArray[np.int64], cum: NDArray[np.int64],
                  row_offset: int, partition_info: Any = None) -> pd.DataFrame:
    """The part of every row: its rank within its bucket, in the order (bucket, cell, partition, key, row),
    against the parts' cumulative bucket counts ``cum`` (n_parts, n_buckets)."""
    i = partition_info["number"] if partition_info else 0
    comb, keys = _row_order_keys(df, schema, sa, bucket_of, split, i)
    n = len(df)
    order = np.lexsort((np.arange(n), keys, comb))
    sc = comb[order]
    first = np.r_[0, np.flatnonzero(sc[1:] != sc[:-1]) + 1]
    pos_in_group = np.arange(n) - np.repeat(first, np.diff(np.r_[first, n]))
    start = cell_start[np.searchsorted(cell_keys, sc)]
    rank = np.empty(n, dtype=np.int64)
    rank[order] = start + pos_in_group
    bucket = comb >> _CELL_BITS
    part = np.empty(n, dtype=np.int64)
    for j in np.unique(bucket):
        sel = bucket == j
        part[sel] = np.searchsorted(cum[:, j], rank[sel], side="right")
    out = df.copy()
    out[_PART] = part
    out[_ROW] = row_offset + np.arange(n, dtype=np.int64)
    return out


# ------------------------------------------------------------------------------------------ Mondrian top cuts
def _region_of(codes: NDArray[np.int32], lo: NDArray[np.int32], hi: NDArray[np.int32]) -> NDArray[np.int64]:
    """Region of every row (boxes lo/hi of shape (R, d), inclusive; the boxes tile the code space)."""
    out = np.full(codes.shape[0], -1, dtype=np.int64)
    for r in range(lo.shape[0]):
        inside = np.all((codes >= lo[r]) & (codes <= hi[r]), axis=1)
        out[inside] = r
    return out


def _region_hist(df: pd.DataFrame, qis: list[Attribute], sa: Attribute, lo: NDArray[np.int32],
                 hi: NDArray[np.int32], radix: tuple[int, int, int], i: int) -> tuple[NDArray[np.int64],
                                                                                  NDArray[np.int64]]:
    """Sparse counts of (region, dimension, code, sensitive code) of one partition."""
    codes = encode_frame(df, qis, i)
    s = encode_column(sa, df[sa.name], i).astype(np.int64)
    reg = _region_of(codes, lo, hi)
    d = codes.shape[1]
    card, m = radix[1], radix[2]
    keys = [((reg * d + j) * card + codes[:, j].astype(np.int64)) * m + s for j in range(d)]
    u, c = np.unique(np.concatenate(keys), return_counts=True)
    return u, c.astype(np.int64)


def _passes(models: list[PrivacyModel], sa: Attribute, hist: NDArray[np.int64], ref: NDArray[np.int64]) -> bool:
    """Every class (row of ``hist``) passes every model against the reference ``ref`` (the audit's kernels)."""
    from anoncore.audit import _class_values
    from anoncore.distributed.publish import _Shim

    sizes = hist.sum(axis=1).astype(np.int64)
    empty = sizes == 0
    for m in models:
        values = _class_values(m, sa.name if m.needs_sensitive else None, _Shim(sa), sizes,  # type: ignore[arg-type]
                               empty, lambda _: (hist, ref), 1)
        if not m.evaluate(values).passed:
            return False
    return True


def _mondrian_cuts(ddf: Any, qis: list[Attribute], sa: Attribute, models: list[PrivacyModel],
                   ref: NDArray[np.int64], coords: list[NDArray[np.float64]], n_parts: int,
                   ) -> tuple[NDArray[np.int32], NDArray[np.int32], int]:
    """Mondrian's first cuts, until ``n_parts`` regions or no region can be cut; each level is one distributed
    pass (per-region histograms of every dimension against the sensitive codes). Returns the region boxes."""
    from dask.delayed import delayed

    d = len(qis)
    card = max(int(a.hierarchy.n_leaves) for a in qis)  # type: ignore[union-attr]
    m = ref.size
    lo = np.zeros((1, d), dtype=np.int32)
    hi = np.array([[int(a.hierarchy.n_leaves) - 1 for a in qis]], dtype=np.int32)  # type: ignore[union-attr]
    final = np.zeros(1, dtype=bool)
    passes = 0
    while lo.shape[0] < n_parts and not final.all():
        parts = ddf.to_delayed()
        tasks = [delayed(_region_hist)(p, qis, sa, lo, hi, (d, card, m), i) for i, p in enumerate(parts)]
        res = _compute(*tasks)
        passes += 1
        keys = np.concatenate([r[0] for r in res])
        cnts = np.concatenate([r[1] for r in res])
        R = lo.shape[0]
        region = keys // (d * card * m)
        new_lo, new_hi, new_final = [], [], []
        # cut the largest regions first, at most n_parts regions in all
        sizes = np.bincount(region, weights=cnts, minlength=R) / d  # every row counted once per dimension
        budget = n_parts - R
        cut_now = {int(r) for r in np.argsort(-sizes, kind="stable") if not final[r]}
        for r in range(R):
            cut = None
            if budget > 0 and r in cut_now:
                cut = _best_cut(_region_dense(keys, cnts, region, r, (d, card, m)), lo[r], hi[r], coords, models,
                                sa, ref)
            if cut is None:
                new_lo.append(lo[r])
                new_hi.append(hi[r])
                new_final.append(True)
                continue
            budget -= 1
            j, x = cut
            left_hi, right_lo = hi[r].copy(), lo[r].copy()
            left_hi[j], right_lo[j] = x, x + 1
            new_lo += [lo[r], right_lo]
            new_hi += [left_hi, hi[r]]
            new_final += [False, False]
        lo, hi, final = np.array(new_lo, dtype=np.int32), np.array(new_hi, dtype=np.int32), np.array(new_final)
    return lo, hi, passes


def _region_dense(keys: NDArray[np.int64], cnts: NDArray[np.int64], region: NDArray[np.int64], r: int,
                  shape: tuple[int, int, int]) -> NDArray[np.int64]:
    """One region's (dimension, code, sensitive code) counts from the sparse merged counts (one region at a
    time, so memory is d * card * m whatever the number of regions)."""
    per = shape[0] * shape[1] * shape[2]
    sel = region == r
    dense = np.bincount(keys[sel] - r * per, weights=cnts[sel], minlength=per)
    return np.asarray(dense.reshape(shape), dtype=np.int64)


def _best_cut(hist: NDArray[np.int64], lo: NDArray[np.int32], hi: NDArray[np.int32], coords: list[NDArray[np.float64]],
              models: list[PrivacyModel], sa: Attribute, ref: NDArray[np.int64]) -> tuple[int, int] | None:
    """Mondrian's choice on one region: dimensions by normalized width (widest first), cut at the median code;
    the first cut whose halves both pass, or None."""
    widths = []
    for j in range(hist.shape[0]):
        present = np.flatnonzero(hist[j].sum(axis=1) > 0)
        widths.append(coords[j][present.max()] - coords[j][present.min()] if present.size else 0.0)
    for j in np.argsort(-np.asarray(widths), kind="stable"):
        if widths[j] <= 0:
            break
        per_code = hist[j].sum(axis=1)
        cum = np.cumsum(per_code)
        n = int(cum[-1])
        x = int(np.searchsorted(cum, (n + 1) // 2))  # smallest code with at least half the rows at or below it
        if cum[x] >= n:  # everything at or below x: cut below x's run instead
            x = int(np.flatnonzero(per_code[:x] > 0).max()) if np.any(per_code[:x] > 0) else -1
        if x < 0 or cum[x] == 0 or cum[x] >= n:
            continue
        left, right = hist[j][: x + 1].sum(axis=0), hist[j][x + 1:].sum(axis=0)
        if _passes(models, sa, np.vstack([left, right]), ref):
            return int(j), x
    return None


# ------------------------------------------------------------------------------------------ one part
def _run_part(df: pd.DataFrame, schema: Schema, algorithm: str, sa: Attribute, ref: NDArray[np.int64],
              plan: _RecipePlan | None, specs: list[tuple[str, float]], seed: int, policy: int,
              partition_info: Any = None) -> pd.DataFrame:
    """Anonymize one part on its worker; returns the published rows with the part-local class id."""
    if len(df) == 0:
        return _empty_out(df, schema)
    p = int(df[_PART].iloc[0])
    df = df.sort_values(_ROW, kind="stable")
    rows = df[_ROW].to_numpy()
    body = df.drop(columns=[_PART, _ROW]).reset_index(drop=True)
    table, space = _space_of(body, schema)
    sa_codes = table.column(sa.name)
    if plan is not None:
        leaves = np.ascontiguousarray(plan.leaves[plan.part_of_leaf == p])
        bucket_rows = np.ascontiguousarray(plan.bucket_of[sa_codes], dtype=np.int32)
        got = np.bincount(bucket_rows, minlength=plan.n_buckets)
        if not np.array_equal(got, leaves.sum(axis=0)):  # pragma: no cover - the dealing is exact
            raise RuntimeError(f"anoncore internal error: part {p} got bucket counts {got.tolist()}, its recipes "
                               f"need {leaves.sum(axis=0).tolist()} (please report)")
        bits = int(_core.sabre.hilbert_bits(space.codes.shape[1], space.max_card))
        keys = _core.sabre.hilbert_keys(space.codes, space.values, space.offsets, bits, 1)
        labels = _core.sabre.retrieve_hilbert(bucket_rows, plan.n_buckets, leaves, keys,
                                              (seed + p) % 2**64, policy, 1)
    else:
        out = _core.mondrian.partition(space.codes, space.values, space.offsets, sa_codes, int(ref.size), specs,
                                       _sa_hierarchy(sa) if algorithm == "tmondrian" else None, None, None,
                                       reference=np.ascontiguousarray(ref, dtype=np.int64))
        labels = out.labels
    pub = Partition.from_labels(table, np.asarray(labels, dtype=np.int64)).to_pandas()
    for c in body.columns:  # generalized labels as strings, every other column in its input type
        pub[c] = pub[c].astype("string") if c in schema.quasi_identifiers else pub[c].astype(body[c].dtype)
    pub[_ROW] = rows
    pub[_PART] = p
    return pub


def _empty_out(df: pd.DataFrame, schema: Schema) -> pd.DataFrame:
    cols = {c: pd.Series([], dtype="string" if c in schema.quasi_identifiers else df[c].dtype)
            for c in df.columns if c not in (_PART, _ROW)}
    out = pd.DataFrame(cols)
    out["ec"] = pd.Series([], dtype=np.int64)
    out[_ROW] = pd.Series([], dtype=np.int64)
    out[_PART] = pd.Series([], dtype=np.int64)
    return out


def _globalize(df: pd.DataFrame, offsets: NDArray[np.int64]) -> pd.DataFrame:
    out = df.copy()
    if len(out):
        out["ec"] = out["ec"].to_numpy(dtype=np.int64) + offsets[out[_PART].to_numpy(dtype=np.int64)]
    return out


# ------------------------------------------------------------------------------------------ entry point
def two_phase(ddf: Any, schema: Schema, models: Any, *, algorithm: str = "sabre", n_parts: int | None = None,
              split: str = "hilbert", rng: int | None = 0, seed_policy: str = "random", tight_bound: bool = False,
              strict: bool = True, balanced: bool = False, sensitive: str | None = None,
              progress: bool = False) -> TwoPhaseResult:
    """Anonymize a dask DataFrame with SABRE, BUREL or a Mondrian baseline, part by part on the workers, every
    class held to the whole table's sensitive distribution.

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
        The input, e.g. ``dd.read_parquet(folder)``. Every quasi-identifier and the sensitive attribute need a
        hierarchy in ``schema`` (their leaf dictionaries code the values on the workers).
    schema : Schema
    models : list of models
        As the in-memory algorithm: SABRE / tMondrian: one t-closeness model with the sensitive attribute's ground
        distance and optionally ``KAnonymity``; BUREL / LMondrian: ``EnhancedBetaLikeness`` or
        ``BasicBetaLikeness``; DMondrian: ``EnhancedBetaLikeness``.
    algorithm : {'sabre', 'burel', 'tmondrian', 'lmondrian', 'dmondrian'}, default='sabre'
    n_parts : int, default=None
        Parts anonymized independently (each must fit one worker's memory); None: the input's partitions.
        Fewer parts come out when the whole table has fewer classes (SABRE, BUREL) or no more cut passes
        (Mondrian).
    split : {'hilbert', 'rows'}, default='hilbert'
        SABRE / BUREL: how every bucket's rows are dealt to the parts: along the Hilbert curve of the
        quasi-identifiers (coherent parts, lower information loss) or in input order. Mondrian's parts are
        always its own first cuts.
    rng : int, default=0
        Seeds the retrieval as in :func:`anoncore.sabre` (one part: exactly the in-memory run, row for row);
        part ``p`` uses that kernel seed plus ``p``.
    seed_policy : {'random', 'min_key'}, default='random'
        As :func:`anoncore.sabre` (Hilbert slicing is not offered per part).
    tight_bound, strict, balanced : bool
        SABRE's ``tight_bound``; BUREL's ``strict`` and ``split='balanced'`` (``balanced=True``).
    progress : bool, default=False
        A log line per phase on stderr.
    sensitive : str, default=None
        The sensitive attribute when the schema declares several.

    Returns
    -------
    TwoPhaseResult
        The published rows (persisted), the row-to-class assignments, the global reference, rows per part.

    Raises
    ------
    ValueError
        For an unknown algorithm / split, models the algorithm does not guarantee, a value outside its hierarchy
        (column, partition, row), an empty partition.

    Examples
    --------
    See docs/distributed.md ("Two-phase algorithms on parts").
    """
    from dask.delayed import delayed

    t0 = time.perf_counter()
    if algorithm not in ALGORITHMS:
        raise ValueError(f"The 'algorithm' parameter of two_phase must be one of {ALGORITHMS}. Got {algorithm!r}.")
    if split not in SPLITS:
        raise ValueError(f"The 'split' parameter of two_phase must be one of {SPLITS}. Got {split!r}.")
    if seed_policy not in ("random", "min_key"):
        raise ValueError(f"The 'seed_policy' parameter of two_phase must be 'random' or 'min_key'. Got "
                         f"{seed_policy!r}.")
    if not hasattr(ddf, "to_delayed"):
        raise TypeError(f"two_phase expects a dask DataFrame. Got {type(ddf).__name__} instead.")
    if not isinstance(schema, Schema):
        raise TypeError(f"schema must be a Schema. Got {type(schema).__name__} instead.")
    qis, sa = resolved_columns(schema, schema.sensitive_column(sensitive, caller="two_phase"))
    assert sa is not None
    missing = [c for c in [a.name for a in qis] + [sa.name] if c not in ddf.columns]
    if missing:
        raise ValueError(f"The data has no column {missing[0]!r} (columns: {list(map(str, ddf.columns))}).")
    mods, params = _resolve_models(algorithm, models, sa)
    seed = check_seed(rng, "two_phase")
    P = int(ddf.npartitions if n_parts is None else n_parts)
    if P < 1:
        raise ValueError(f"The 'n_parts' parameter of two_phase must be >= 1. Got {n_parts!r}.")

    # pass 1: partition lengths and the global sensitive histogram
    stats = _compute(*[delayed(_part_stats)(p, sa, qis, i) for i, p in enumerate(ddf.to_delayed())])
    lengths = np.array([s[0] for s in stats], dtype=np.int64)
    ref = np.sum([s[1] for s in stats], axis=0).astype(np.int64)
    n = int(lengths.sum())
    if "k" in params and params["k"] > n:
        raise ValueError(f"k = {params['k']} exceeds the {n} rows of the table.")
    t1 = time.perf_counter()
    log_phase(progress, f"two_phase: {n} rows in {len(lengths)} partitions, sensitive histogram ({t1 - t0:.1f} s)")

    specs: list[tuple[str, float]] = []
    plan = None
    meta_df = ddf._meta.copy()
    meta_df[_PART] = pd.Series([], dtype=np.int64)
    meta_df[_ROW] = pd.Series([], dtype=np.int64)
    offsets_rows = np.r_[0, np.cumsum(lengths)[:-1]]
    if algorithm in ("sabre", "burel"):
        bucket_of, nb, leaves, trace = _recipes(algorithm, ref, params, sa, tight_bound, strict, balanced)
        part_of_leaf = _deal_recipes(leaves, P)
        nparts = int(part_of_leaf.max()) + 1
        part_counts = np.zeros((nparts, nb), dtype=np.int64)
        np.add.at(part_counts, part_of_leaf, leaves)
        plan = _RecipePlan(bucket_of, nb, leaves, part_of_leaf, part_counts, trace)
        # pass 2: (bucket, cell) counts per partition -> the start rank of every (bucket, cell, partition) group
        res = _compute(*[delayed(_cell_counts)(p, schema, sa, bucket_of, split, i)
                             for i, p in enumerate(ddf.to_delayed())])
        allk = np.concatenate([r[0] for r in res])
        allc = np.concatenate([r[1] for r in res])
        allp = np.concatenate([np.full(r[0].size, i, dtype=np.int64) for i, r in enumerate(res)])
        order = np.lexsort((allp, allk))
        sk, sc = allk[order], allc[order]
        bucket = sk >> _CELL_BITS
        csum = np.cumsum(sc) - sc
        bucket_first = np.r_[0, np.flatnonzero(bucket[1:] != bucket[:-1]) + 1]
        base = np.repeat(csum[bucket_first], np.diff(np.r_[bucket_first, sk.size]))
        start_sorted = csum - base
        start = np.empty_like(start_sorted)
        start[order] = start_sorted
        cum = np.cumsum(part_counts, axis=0)
        pieces = []
        for i, p in enumerate(ddf.to_delayed()):
            sel = allp == i
            pieces.append(delayed(_assign_parts)(p, schema, sa, bucket_of, split, allk[sel], start[sel], cum,
                                                      int(offsets_rows[i]), {"number": i}))
        n_levels = 0
    else:
        from anoncore.static import _space

        kk = int(params.get("k", 1))
        if algorithm == "tmondrian":
            specs = [("k", float(kk)), ("t", params["t"])]
        elif algorithm == "lmondrian":
            specs = [("beta_enhanced" if params["enhanced"] else "beta_basic", params["beta"])]
        else:
            p_max = float(ref.max()) / float(ref.sum())
            delta = beta_to_delta(params["beta"], p_max)
            specs = [("delta_disclosure", delta)]
            mods = mods + [DeltaDisclosure(delta, sensitive=sa.name)]
            params["delta"] = delta
        head = ddf.get_partition(0).head(1, compute=True)
        coords_space = _space.qi_space(Table.from_pandas(head, schema, n_threads=1))
        coords = [coords_space.values[coords_space.offsets[j]:coords_space.offsets[j + 1]] for j in range(len(qis))]
        lo, hi, n_levels = _mondrian_cuts(ddf, qis, sa, mods, ref, coords, P)
        nparts = lo.shape[0]
        pieces = [delayed(_assign_regions)(p, qis, lo, hi, int(offsets_rows[i]), i)
                  for i, p in enumerate(ddf.to_delayed())]
    t2 = time.perf_counter()
    log_phase(progress, f"two_phase: {algorithm} plan for {nparts} parts ({t2 - t1:.1f} s)")

    import dask.dataframe as dd

    assigned = dd.from_delayed(pieces, meta=meta_df, verify_meta=False)
    by_part = assigned.set_index(_PART, divisions=list(range(nparts)) + [nparts - 1], drop=False)
    out_meta = _empty_out(meta_df, schema)
    done = by_part.map_partitions(_run_part, schema, algorithm, sa, ref, plan, specs, seed,
                                  0 if seed_policy == "random" else 1, meta=out_meta)
    done = done.reset_index(drop=True).persist()
    per_part = done.map_partitions(lambda d: pd.DataFrame({"part": d[_PART].to_numpy()[:1] if len(d) else [],
                                                           "rows": [len(d)] if len(d) else [],
                                                           "classes": [int(d["ec"].max()) + 1] if len(d) else []}),
                                   meta=pd.DataFrame({"part": pd.Series([], dtype=np.int64),
                                                      "rows": pd.Series([], dtype=np.int64),
                                                      "classes": pd.Series([], dtype=np.int64)})).compute()
    per_part = per_part.sort_values("part")
    n_cls = np.zeros(nparts, dtype=np.int64)
    rows_p = np.zeros(nparts, dtype=np.int64)
    n_cls[per_part["part"].to_numpy()] = per_part["classes"].to_numpy()
    rows_p[per_part["part"].to_numpy()] = per_part["rows"].to_numpy()
    if int(rows_p.sum()) != n:
        raise RuntimeError(f"two_phase published {int(rows_p.sum())} of {n} rows; nothing is lost by design "
                           f"(please report).")
    offsets = np.r_[0, np.cumsum(n_cls)[:-1]].astype(np.int64)
    full = done.map_partitions(_globalize, offsets, meta=out_meta)
    keep = [a.name for a in schema.attributes if a.role != "identifier" and a.name in ddf.columns] + ["ec"]
    published = full[keep].persist()
    assignments = full[[_ROW, "ec"]].rename(columns={_ROW: "row"})
    t3 = time.perf_counter()
    log_phase(progress, f"two_phase: {nparts} parts anonymized on the workers, {int(n_cls.sum())} classes "
                        f"({t3 - t2:.1f} s)")
    params.update(split=split, rng=rng, seed_policy=seed_policy, n_parts_requested=P, cut_passes=n_levels)
    return TwoPhaseResult(algorithm, mods, published, assignments, ref, sa, n, int(n_cls.sum()),
                          tuple(int(x) for x in rows_p), params,
                          {"seconds_histogram": t1 - t0, "seconds_plan": t2 - t1, "seconds_parts": t3 - t2,
                           "seconds_total": t3 - t0})


def _assign_regions(df: pd.DataFrame, qis: list[Attribute], lo: NDArray[np.int32], hi: NDArray[np.int32],
                    row_offset: int, i: int) -> pd.DataFrame:
    codes = encode_frame(df, qis, i)
    out = df.copy()
    out[_PART] = _region_of(codes, lo, hi)
    out[_ROW] = row_offset + np.arange(len(df), dtype=np.int64)
    return out


# ------------------------------------------------------------------------------------------ audit by a label column
def _label_counts(df: pd.DataFrame, label: str, sa: Attribute | None, partition_info: Any = None) -> pd.DataFrame:
    i = partition_info["number"] if partition_info else 0
    g = pd.DataFrame({"__label": df[label].astype("string").fillna("<NA>")})
    g["__sa"] = encode_column(sa, df[sa.name], i) if sa is not None else np.zeros(len(df), dtype=np.int32)
    return g.groupby(["__label", "__sa"], sort=False).size().rename("__n").reset_index()


def audit_labels(ddf: Any, schema: Schema, models: Any, label: str, *, suppressed_label: str | None = None,
                 sensitive: str | None = None) -> dict[str, Any]:
    """Audit a dask DataFrame whose classes are the values of column ``label`` (rows labelled
    ``suppressed_label`` are suppressed): per-class sizes and sensitive histograms merged over the partitions
    (a dask group-by), every model checked by the in-memory audit's kernels against the sensitive distribution
    of **every** input row (suppressed ones included, the in-memory audit's ``reference='table'``).

    Returns ``{"passed", "n_rows", "n_suppressed", "n_published", "n_classes", "<Model>.<parameter>": achieved}``.

    Examples
    --------
    See docs/distributed.md ("Auditing by a label column").
    """
    from anoncore.audit import _check_models

    mods = _check_models(models)
    if label not in ddf.columns:
        raise ValueError(f"The data has no label column {label!r} (columns: {list(map(str, ddf.columns))}).")
    sa = None
    if any(m.needs_sensitive for m in mods):
        sa = schema[schema.sensitive_column(sensitive, caller="audit_labels")]
        if sa.hierarchy is None:
            raise ValueError(f"Sensitive attribute {sa.name!r} needs a hierarchy (its leaf dictionary codes it).")
    meta = pd.DataFrame({"__label": pd.Series([], dtype="string"), "__sa": pd.Series([], dtype=np.int32),
                         "__n": pd.Series([], dtype=np.int64)})
    parts = ddf.map_partitions(_label_counts, label, sa, meta=meta)
    tot = parts.groupby(["__label", "__sa"], sort=False)["__n"].sum(split_every=8).compute().reset_index()
    labels = tot["__label"].to_numpy(dtype=object)
    n_i = tot["__n"].to_numpy(dtype=np.int64)
    s_i = tot["__sa"].to_numpy(dtype=np.int64)
    m_vals = int(sa.hierarchy.n_leaves) if sa is not None else 1  # type: ignore[union-attr]
    ref = np.bincount(s_i, weights=n_i, minlength=m_vals).astype(np.int64)
    sup = labels == suppressed_label if suppressed_label is not None else np.zeros(labels.size, dtype=bool)
    keep = ~sup
    uniq, cls = np.unique(labels[keep].astype(str), return_inverse=True)
    G = uniq.size
    sizes = np.bincount(cls, weights=n_i[keep], minlength=G).astype(np.int64)
    hist = np.zeros((G, m_vals), dtype=np.int64)
    np.add.at(hist, (cls, s_i[keep]), n_i[keep])
    out: dict[str, Any] = {"n_rows": int(n_i.sum()), "n_suppressed": int(n_i[sup].sum()),
                           "n_published": int(sizes.sum()), "n_classes": int(G)}
    from anoncore.audit import _class_values
    from anoncore.distributed.publish import _Shim

    passed = True
    empty = sizes == 0
    for m in mods:
        values = _class_values(m, sa.name if sa is not None and m.needs_sensitive else None, _Shim(sa),  # type: ignore[arg-type]
                               sizes, empty, lambda _: (hist, ref), 1)
        v = m.evaluate(values)
        passed = passed and bool(v.passed)
        out[f"{type(m).__name__}.{m.parameter}"] = float(v.achieved)
    out["passed"] = passed
    return out
