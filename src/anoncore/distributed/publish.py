"""Publishing a chosen node by ``map_partitions`` (atomic Parquet output), the distributed audit of a published
table, and the chunked writer of the synthetic census."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from anoncore import _core
from anoncore._validation import check_n_threads
from anoncore.audit import _check_models, _class_values
from anoncore.data.schema import Attribute, Schema
from anoncore.distributed._encode import encode_column, encode_frame
from anoncore.distributed.frequency import FrequencySet
from anoncore.distributed.search import FrequencyResult

__all__ = ["audit_published", "publish_parquet", "write_census_parquet"]


def _node_keys(nodes: NDArray[np.int64], sizes: list[int]) -> NDArray[np.uint64]:
    key = np.zeros(nodes.shape[0], dtype=np.uint64)
    for j, s in enumerate(sizes):
        key = key * np.uint64(s) + nodes[:, j].astype(np.uint64)
    return key


def _level_positions(h: Any, level: int) -> tuple[NDArray[np.int32], NDArray[np.int64]]:
    """(position of every leaf's ancestor at ``level`` among that level's nodes, the level's node ids)."""
    anc = np.asarray(h.ancestor[:, level], dtype=np.int64)
    level_nodes = np.unique(anc)
    return np.searchsorted(level_nodes, anc).astype(np.int32), level_nodes


def suppressed_node_keys(result: FrequencyResult) -> tuple[NDArray[np.uint64], list[int]]:
    """The suppressed classes of a search result as sorted distinct mixed-radix keys of their generalized
    values (per QI: the position of the class's node among the nodes of the chosen level; radix: that level's
    node count), with the radices."""
    freq = result.frequencies
    qis = list(freq.attributes[: freq.n_qi])
    leaf = freq.codes[np.asarray(result.suppressed_items, dtype=bool), : freq.n_qi]
    pos = np.empty(leaf.shape, dtype=np.int64)
    sizes = []
    for j, a in enumerate(qis):
        at, level_nodes = _level_positions(a.hierarchy, result.levels[j])
        pos[:, j] = at[leaf[:, j]]
        sizes.append(int(level_nodes.size))
    return np.unique(_node_keys(pos, sizes)), sizes


def _generalize_partition(df: pd.DataFrame, qis: list[Attribute], levels: tuple[int, ...], supp: NDArray[np.uint64],
                          sizes: list[int], keep_cols: list[str], partition_info: Any = None) -> pd.DataFrame:
    i = partition_info["number"] if partition_info else 0
    codes = encode_frame(df, qis, i)
    pos = np.empty(codes.shape, dtype=np.int64)
    nodes = []
    for j, a in enumerate(qis):
        at, level_nodes = _level_positions(a.hierarchy, levels[j])
        pos[:, j] = at[codes[:, j]]
        nodes.append(level_nodes)
    kept = ~_core.distributed.is_member(_node_keys(pos, sizes), supp)
    out = df.loc[kept, keep_cols].copy()
    for j, a in enumerate(qis):
        labels = np.asarray(a.hierarchy.labels, dtype=object)[nodes[j]]  # type: ignore[union-attr]
        out[a.name] = pd.array(labels[pos[kept, j]], dtype="string")
    return out


def _publish_unit(fs: Any, unit: tuple[str, list[int]], i: int, out_fs: Any, out_dir: str, qis: list[Attribute],
                  levels: tuple[int, ...], supp: NDArray[np.uint64], sizes: list[int], keep_cols: list[str],
                  kinds: dict[str, str]) -> tuple[int, int]:
    """Generalize one Parquet task in Arrow (dictionary columns in, dictionary columns out: each row's value is
    gathered straight from its chunk's dictionary to the position of its generalized node) and write it as
    ``part-<i>.parquet`` under out_dir; returns (input rows, published rows)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from anoncore.distributed._encode import encode_arrow_column, read_parquet_unit

    tab = read_parquet_unit(fs, unit, keep_cols, [c for c in keep_cols if kinds.get(c) == "text"])
    n = tab.num_rows
    key = np.zeros(n, dtype=np.uint64)
    cols_pos, dicts = [], []
    for j, a in enumerate(qis):
        at, level_nodes = _level_positions(a.hierarchy, levels[j])
        col = np.empty((n, 1), dtype=np.int32)
        encode_arrow_column(a, tab.column(a.name), i, col, 0, post=at)
        key *= np.uint64(sizes[j])
        key += col[:, 0].astype(np.uint64)
        cols_pos.append(col[:, 0])
        dicts.append(pa.array([a.hierarchy.labels[int(v)] for v in level_nodes], type=pa.string()))  # type: ignore[union-attr]
    kept = ~_core.distributed.is_member(key, supp)
    n_kept = int(kept.sum())
    mask = None if n_kept == n else pa.array(kept)
    cols = {}
    for name in keep_cols:
        j = next((j for j, a in enumerate(qis) if a.name == name), -1)
        if j < 0:
            cols[name] = tab.column(name) if mask is None else tab.column(name).filter(mask)
        else:
            idx = cols_pos[j] if mask is None else cols_pos[j][kept]
            cols[name] = pa.DictionaryArray.from_arrays(pa.array(idx), dicts[j])
    with out_fs.open(f"{out_dir}/part-{i:05d}.parquet", "wb") as fh:
        pq.write_table(pa.table(cols), fh, store_schema=False, write_statistics=False)
    return n, n_kept


def publish_parquet(source: Any, schema: Schema, result: FrequencyResult, path: str,
                    overwrite: bool = False, verify: Callable[[str], bool] | None = None,
                    rows_per_task: int = 2_000_000) -> dict[str, int]:
    """Apply the chosen levels to every partition (quasi-identifiers replaced by their generalized labels, the
    classes the search suppressed left out) and write Parquet to ``path`` atomically: the files are written to
    a temporary folder beside ``path`` and renamed once complete, so ``path`` appears only with every row.

    ``source``: a dask DataFrame (generalized by ``map_partitions``, written by ``to_parquet``), or Parquet
    files (a folder, a glob, a list; read by ``dask.delayed`` tasks of about ``rows_per_task`` rows straight
    into Arrow, the text columns as dictionary arrays, and written one file per task).

    Returns ``{"n_rows", "n_published", "n_suppressed"}``; raises RuntimeError (and writes nothing) when the
    published and suppressed rows do not add up to the input rows, or when ``verify`` (called with the
    temporary folder, e.g. an audit of the files) returns False.
    """
    import fsspec
    import pyarrow.parquet as pq

    out_fs, out_path = fsspec.core.url_to_fs(os.fspath(path))
    if out_fs.exists(out_path) and not overwrite:
        raise FileExistsError(f"The output {path!r} exists; pass overwrite=True or choose another path.")
    freq = result.frequencies
    qis = [a for a in freq.attributes[: freq.n_qi]]
    supp, sizes = suppressed_node_keys(result)
    candidates = [a.name for a in schema.attributes if a.role != "identifier"]
    parent = os.path.dirname(out_path.rstrip("/")) or "."
    tmp = f"{parent}/.{os.path.basename(out_path.rstrip('/'))}.tmp-{uuid.uuid4().hex}"
    parquet_in = isinstance(source, (str, os.PathLike)) or (isinstance(source, (list, tuple)) and all(
        isinstance(x, (str, os.PathLike)) for x in source))
    try:
        if parquet_in:
            from dask.base import compute
            from dask.delayed import delayed

            from anoncore.distributed._encode import parquet_units

            fs, units, kinds = parquet_units(source, [a.name for a in qis], rows_per_task, optional=tuple(candidates))
            keep_cols = [c for c in candidates if c in kinds]
            out_fs.makedirs(tmp, exist_ok=True)
            supp_once = delayed(supp, pure=True)  # one node of the graph, not a copy in every task
            counts = compute(*[delayed(_publish_unit)(fs, u, i, out_fs, tmp, qis, result.levels, supp_once, sizes,
                                                           keep_cols, kinds) for i, u in enumerate(units)])  # type: ignore[no-untyped-call]
            n_in = sum(c[0] for c in counts)
            n_pub = sum(c[1] for c in counts)
        else:
            ddf = source
            keep_cols = [c for c in candidates if c in ddf.columns]
            meta = ddf._meta[keep_cols].copy()
            for a in qis:
                meta[a.name] = pd.array([], dtype="string")
            pub = ddf.map_partitions(_generalize_partition, qis, result.levels, supp, sizes, keep_cols, meta=meta)
            pub.to_parquet(tmp, write_index=False)
            n_pub = sum(pq.ParquetFile(os.path.join(tmp, f)).metadata.num_rows
                        for f in os.listdir(tmp) if f.endswith(".parquet"))
            n_in = -1
        n = freq.n_rows
        if n_pub + result.n_suppressed != n or n_in not in (-1, n):
            raise RuntimeError(f"Published {n_pub} rows and suppressed {result.n_suppressed} of {n}: the input "
                               f"changed since its frequency set was built; nothing written.")
        if verify is not None and not verify(tmp):
            raise RuntimeError("The published table failed its check (audit); nothing written.")
        if out_fs.exists(out_path):
            out_fs.rm(out_path, recursive=True)
        out_fs.mv(tmp, out_path, recursive=True)
    finally:
        if out_fs.exists(tmp):
            out_fs.rm(tmp, recursive=True)
    return {"n_rows": freq.n_rows, "n_published": n_pub, "n_suppressed": result.n_suppressed}


def _class_counts(df: pd.DataFrame, qis: list[str], sa: Attribute | None, partition_info: Any = None) -> pd.DataFrame:
    i = partition_info["number"] if partition_info else 0
    g = df[qis].astype("string").copy()
    if sa is not None:
        g["__sa"] = encode_column(sa, df[sa.name], i)
    return g.groupby(list(g.columns), sort=False, dropna=False).size().rename("__n").reset_index()


class _Shim:
    def __init__(self, sa: Attribute | None) -> None:
        self._sa = sa

    def hierarchy(self, name: str) -> Any:
        return self._sa.hierarchy if self._sa is not None else None


def audit_published(ddf: Any, schema: Schema, models: Any, original: FrequencySet | None = None,
                    sensitive: str | None = None, n_threads: int | None = None) -> dict[str, Any]:
    """Audit a published dask DataFrame: per-class sizes and sensitive histograms are computed per partition and
    merged (dask's tree reduction of a group-by), then every model is checked by the in-memory audit's kernels.

    ``original``: the frequency set of the input, whose sensitive distribution is the reference of
    t-closeness, beta-likeness and delta-disclosure (as the in-memory audit's ``reference='table'``); None:
    the published rows' own distribution. Returns ``{"passed", "n_classes", "n_published",
    "<Model>.<parameter>": achieved, ...}``, the keys of the in-memory search's ``achieved``.
    """
    mods = _check_models(models)
    nt = check_n_threads(n_threads, "audit_published")
    qis = list(schema.quasi_identifiers)
    needs = any(m.needs_sensitive for m in mods)
    sa = None
    if needs:
        sa = schema[schema.sensitive_column(sensitive, caller="audit_published")]
        if sa.hierarchy is None:
            raise ValueError(f"Sensitive attribute {sa.name!r} needs a hierarchy (its leaf dictionary codes it).")
    parts = ddf.map_partitions(_class_counts, qis, sa, meta=None if False else _meta_counts(qis, sa))
    cols = qis + (["__sa"] if sa is not None else [])
    tot = parts.groupby(cols, sort=False, dropna=False)["__n"].sum(split_every=8).compute().reset_index()
    cls_ids, _ = pd.MultiIndex.from_frame(tot[qis]).factorize()
    G = int(cls_ids.max()) + 1 if len(cls_ids) else 0
    n_i = tot["__n"].to_numpy(dtype=np.int64)
    sizes = np.bincount(cls_ids, weights=n_i, minlength=G).astype(np.int64)
    empty = sizes == 0
    hist = ref = None
    if sa is not None:
        m_vals = int(sa.hierarchy.n_leaves)  # type: ignore[union-attr]
        hist = np.zeros((G, m_vals), dtype=np.int64)
        np.add.at(hist, (cls_ids, tot["__sa"].to_numpy(dtype=np.int64)), n_i)
        if original is not None and original.sensitive == sa.name:
            ref = np.bincount(original.codes[:, -1], weights=original.counts, minlength=m_vals).astype(np.int64)
        else:
            ref = hist.sum(axis=0)

    def stats_for(_: str) -> tuple[Any, Any]:
        return hist, ref

    out: dict[str, Any] = {"n_classes": G, "n_published": int(sizes.sum())}
    passed = True
    for m in mods:
        values = _class_values(m, sa.name if sa is not None and m.needs_sensitive else None, _Shim(sa),  # type: ignore[arg-type]
                               sizes, empty, stats_for, nt)
        v = m.evaluate(values)
        passed = passed and bool(v.passed)
        out[f"{type(m).__name__}.{m.parameter}"] = float(v.achieved)
    out["passed"] = passed
    return out


def _meta_counts(qis: list[str], sa: Attribute | None) -> pd.DataFrame:
    d: dict[str, Any] = {q: pd.Series([], dtype="string") for q in qis}
    if sa is not None:
        d["__sa"] = pd.Series([], dtype=np.int32)
    d["__n"] = pd.Series([], dtype=np.int64)
    return pd.DataFrame(d)


def write_census_parquet(path: str, n_rows: int, chunk_rows: int = 1_000_000, seed: int = 0) -> list[str]:
    """Write ``n_rows`` rows of the synthetic census (:func:`anoncore.datasets.census.synthetic_census_frame`) as
    Parquet files of ``chunk_rows`` rows each (``part-00000.parquet``, ...), one chunk in memory at a time;
    chunk ``i`` is drawn with seed ``(seed, i)``. Returns the file paths."""
    from anoncore.datasets.census import synthetic_census_frame

    if n_rows < 1 or chunk_rows < 1:
        raise ValueError(f"n_rows and chunk_rows must be >= 1. Got {n_rows} and {chunk_rows}.")
    os.makedirs(path, exist_ok=True)
    files = []
    for i, start in enumerate(range(0, n_rows, chunk_rows)):
        n = min(chunk_rows, n_rows - start)
        df = synthetic_census_frame(n, np.random.default_rng([seed, i]))
        f = os.path.join(path, f"part-{i:05d}.parquet")
        df.to_parquet(f, index=False)
        files.append(f)
    return files
