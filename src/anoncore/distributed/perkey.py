"""Per-key work on a dask DataFrame: the rows are shuffled by key (``DataFrame.shuffle``) so that every key's
rows share one partition, then each partition runs the in-memory algorithm on its keys (``map_partitions``).

* :func:`sanitize_by_user`: event-sequence sanitization (:func:`anoncore.sequence.sanitize`) of every user's
  sequence; users are independent problems, so the result is the in-memory one user for user.
* :func:`reposition_by_key`: temporal reposition (:func:`anoncore.temporal.reposition_stream`) of every key's
  stream (one stream of snapshots per key, e.g. per hospital or region; within a key the records are taken in
  snapshot order, ties in input order); the sliding windows of a stream never cross keys, so the result is the
  in-memory per-key run.

Within a key the rows keep their input order (a row id carried through the shuffle), so nothing depends on
how dask places or orders the rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["reposition_by_key", "sanitize_by_user"]

_ROW = "__anoncore_row"


def _with_row_ids(ddf: Any, caller: str) -> Any:
    """``ddf`` with a global row id column (input position, partitions in order)."""
    if not hasattr(ddf, "map_partitions"):
        raise TypeError(f"{caller} expects a dask DataFrame. Got {type(ddf).__name__} instead.")
    lengths = ddf.map_partitions(len).compute()
    offsets = np.r_[0, np.cumsum(np.asarray(lengths, dtype=np.int64))[:-1]]

    def add(df: pd.DataFrame, partition_info: Any = None) -> pd.DataFrame:
        i = partition_info["number"] if partition_info else 0
        out = df.copy()
        out[_ROW] = int(offsets[i]) + np.arange(len(df), dtype=np.int64)
        return out

    meta = ddf._meta.copy()
    meta[_ROW] = pd.Series([], dtype=np.int64)
    return ddf.map_partitions(add, meta=meta)


def _check_columns(ddf: Any, cols: list[str], caller: str) -> None:
    if not hasattr(ddf, "map_partitions") or not hasattr(ddf, "shuffle"):
        raise TypeError(f"{caller} expects a dask DataFrame. Got {type(ddf).__name__} instead.")
    missing = [c for c in cols if c not in ddf.columns]
    if missing:
        raise ValueError(f"{caller}: the data has no column {missing[0]!r} (columns: {list(map(str, ddf.columns))}).")


# ------------------------------------------------------------------------------------------ sequences
def _sanitize_part(df: pd.DataFrame, user: str, event: str, order: str | None, taxonomy: Any, patterns: Any,
                   epsilon: float, w: int, options: dict[str, Any]) -> pd.DataFrame:
    from anoncore.sequence import sanitize

    if len(df) == 0:
        return _seq_meta(df, user)
    keys = [user] + ([order] if order is not None else []) + [_ROW]
    df = df.sort_values(keys, kind="stable")
    users, starts = np.unique(df[user].to_numpy(), return_index=True)
    bounds = np.r_[starts, len(df)]
    events = df[event].to_numpy()
    seqs = [list(events[bounds[i]:bounds[i + 1]]) for i in range(users.size)]
    res = sanitize(seqs, taxonomy, patterns, epsilon, w, **options)
    labels = np.asarray(taxonomy.labels, dtype=object)
    published = np.concatenate([labels[np.asarray(u.sanitized)] for u in res.users])
    out = df.copy()
    out["published"] = pd.array(published, dtype="string")
    rep = np.diff(bounds)
    out["mi"] = np.repeat([u.mi for u in res.users], rep)
    out["utility_loss"] = np.repeat([u.utility_loss for u in res.users], rep)
    return out.drop(columns=[_ROW])


def _seq_meta(meta: pd.DataFrame, user: str) -> pd.DataFrame:
    out = meta.iloc[:0].drop(columns=[_ROW])
    out["published"] = pd.array([], dtype="string")
    out["mi"] = pd.Series([], dtype=np.float64)
    out["utility_loss"] = pd.Series([], dtype=np.float64)
    return out


def sanitize_by_user(ddf: Any, taxonomy: Any, patterns: Any, epsilon: float, w: int, *, user: str = "user",
                     event: str = "event", order: str | None = None, npartitions: int | None = None,
                     **options: Any) -> Any:
    """Sanitize every user's event sequence (:func:`anoncore.sequence.sanitize`) on the workers.

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
        One row per event: the user id (``user``), the event label or leaf code (``event``), and optionally a
        column giving each user's order of events (``order``; default: input order).
    taxonomy, patterns, epsilon, w
        As :func:`anoncore.sequence.sanitize`; ``patterns`` is a list of patterns shared by every user (an int,
        i.e. sampling, would depend on the users' order, so it is refused).
    npartitions : int, default=None
        Partitions after the shuffle by user (default: the input's).
    **options
        Further keywords of :func:`anoncore.sequence.sanitize` (``method``, ``cost``, ``relative``, ...).

    Returns
    -------
    dask.dataframe.DataFrame
        The input rows (ordered by user, then order) with ``published`` (the label of the event's image under
        the user's generalization map), ``mi`` and ``utility_loss`` (the user's). Lazy: compute or write it.

    Raises
    ------
    TypeError
        ``ddf`` not a dask DataFrame, or ``patterns`` given as an int.
    ValueError
        A missing column.
    """
    caller = "sanitize_by_user"
    if isinstance(patterns, (int, np.integer)) and not isinstance(patterns, bool):
        raise TypeError(f"{caller} takes a list of sensitive patterns shared by every user; sampling (an int) "
                         f"depends on the order of the users, which a shuffle does not keep.")
    if "rng" in options or "trace" in options:
        raise ValueError(f"{caller} does not take 'rng' or 'trace'.")
    _check_columns(ddf, [user, event] + ([order] if order is not None else []), caller)
    withid = _with_row_ids(ddf, caller)
    shuffled = withid.shuffle(on=user, npartitions=npartitions or ddf.npartitions)
    return shuffled.map_partitions(_sanitize_part, user, event, order, taxonomy, patterns, epsilon, w, options,
                                   meta=_seq_meta(withid._meta, user))


# ------------------------------------------------------------------------------------------ temporal
def _reposition_part(df: pd.DataFrame, key: str, ts: str, sa: str, params: dict[str, Any]) -> pd.DataFrame:
    from anoncore.temporal import reposition_stream

    if len(df) == 0:
        return _temp_meta(df)
    df = df.sort_values([key, ts, _ROW], kind="stable")
    keys, starts = np.unique(df[key].to_numpy(), return_index=True)
    bounds = np.r_[starts, len(df)]
    t = df[ts].to_numpy(dtype=np.int64)
    s = df[sa].to_numpy(dtype=np.int64)
    pub = np.empty(len(df), dtype=np.int64)
    loss = np.empty(len(df), dtype=np.float64)
    for i in range(keys.size):
        a, b = bounds[i], bounds[i + 1]
        r = reposition_stream(t[a:b], s[a:b], **params)
        pub[a:b] = r.published_ts
        loss[a:b] = r.information_loss
    out = df.copy()
    out["published_ts"] = pub
    out["suppressed"] = pub < 0
    out["information_loss"] = loss
    return out.drop(columns=[_ROW])


def _temp_meta(meta: pd.DataFrame) -> pd.DataFrame:
    out = meta.iloc[:0].drop(columns=[_ROW])
    out["published_ts"] = pd.Series([], dtype=np.int64)
    out["suppressed"] = pd.Series([], dtype=bool)
    out["information_loss"] = pd.Series([], dtype=np.float64)
    return out


def reposition_by_key(ddf: Any, *, l: int, w: int, key: str = "key", ts: str = "ts", sa: str = "sa",
                      mu: Any = "linear", beta: Any = 1.0, mode: str = "corrected", first_window: str = "warmup",
                      n_sa: int | None = None, npartitions: int | None = None) -> Any:
    """Reposition every key's temporal stream (:func:`anoncore.temporal.reposition_stream`) on the workers.

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
        One row per record: the stream it belongs to (``key``), its snapshot (``ts``, int) and its sensitive code
        (``sa``, int in ``[0, n_sa)``).
    l, w, mu, beta, mode, first_window
        As :func:`anoncore.temporal.reposition_stream`.
    n_sa : int, default=None
        Number of sensitive codes, the same for every key (default: one more than the largest code, a pass over
        the data).
    npartitions : int, default=None
        Partitions after the shuffle by key (default: the input's).

    Returns
    -------
    dask.dataframe.DataFrame
        The input rows (ordered by key, snapshot, then input order) with ``published_ts`` (TS', -1 when suppressed),
        ``suppressed`` and ``information_loss`` (the key's stream total). Lazy.

    Raises
    ------
    TypeError
        ``ddf`` not a dask DataFrame.
    ValueError
        A missing column.
    """
    caller = "reposition_by_key"
    _check_columns(ddf, [key, ts, sa], caller)
    if n_sa is None:
        n_sa = int(ddf[sa].max().compute()) + 1
    params = {"l": l, "w": w, "mu": mu, "beta": beta, "mode": mode, "first_window": first_window, "n_sa": n_sa}
    withid = _with_row_ids(ddf, caller)
    shuffled = withid.shuffle(on=key, npartitions=npartitions or ddf.npartitions)
    return shuffled.map_partitions(_reposition_part, key, ts, sa, params, meta=_temp_meta(withid._meta))
