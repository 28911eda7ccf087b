"""CASTLE: continuous k_s-anonymity (and distinct l-diversity) of a data stream under a delay bound.

The algorithm runs in C++ (``anoncore._core.castle.Castle``); this module validates, encodes batches of
tuples (DataFrame, Arrow, or a mapping of arrays), keeps the columns that are published as they are, and
turns the kernel's events into :class:`CastleRelease` objects.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from anoncore import _core
from anoncore._validation import check_bool, check_float, check_int, check_n_threads, check_option, check_rng
from anoncore.data.hierarchy import Hierarchy
from anoncore.data.schema import Schema
from anoncore.data.table import Table
from anoncore.stream import _checkpoint as _ckpt
from anoncore.stream._common import (
    ReleaseRows,
    batch_positions,
    encode_batch_qis,
    number_label,
    resolve_stream_schema,
)
from anoncore.stream._common import ro as _ro

__all__ = ["MODES", "Castle", "CastleRelease"]

#: Event modes of the audit channel (spec §8): how each tuple left the algorithm.
MODES = ("cluster", "split", "merge", "reuse", "suppressed")



@dataclass(frozen=True, slots=True, eq=False)
class CastleRelease(ReleaseRows):
    """Tuples released (or suppressed) by one :meth:`Castle.push` or :meth:`Castle.flush`.

    Every input tuple appears exactly once over the whole run, in exactly one release, either generalized
    (``suppressed`` False) or suppressed.

    Attributes
    ----------
    position : ndarray of int64, shape (n,)
        Stream position of each tuple (ties the output back to the input).
    suppressed : ndarray of bool, shape (n,)
    mode : ndarray of int8, shape (n,)
        Index into :data:`MODES`: released with its own cluster, a split sub-cluster, a merged cluster,
        reused an earlier released generalization, or suppressed.
    gen_id : ndarray of int64, shape (n,)
        Id of the generalization (released cluster) the tuple is published with; -1 if suppressed. Tuples
        published by reuse carry the id of the earlier cluster whose generalization they take.
    emitted_at : ndarray of int64, shape (n,)
        Position of the arrival during which the tuple left (-1 during :meth:`Castle.flush`).
    num_lo, num_hi : ndarray of float64, shape (n, n_numeric_qi)
        Published interval of each numeric quasi-identifier (NaN when suppressed).
    cat_node : ndarray of int32, shape (n, n_categorical_qi)
        Published hierarchy node of each categorical quasi-identifier (-1 when suppressed).
    columns : dict of str to ndarray
        Columns published as they are (sensitive and insensitive attributes), aligned with ``position``.
    pid : ndarray of int64, shape (n,)
        Person id used by the algorithm (audit channel only; not part of the published stream).
    clusters : pandas.DataFrame
        One row per cluster released in this call: ``gen_id``, ``il`` (GLM information loss),
        ``n_persons``, ``n_tuples``, ``diversity``, ``tau`` (threshold after it) and ``kept`` (added to
        the reuse set).
    """

    position: NDArray[np.int64] = field(repr=False)
    suppressed: NDArray[np.bool_] = field(repr=False)
    mode: NDArray[np.int8] = field(repr=False)
    gen_id: NDArray[np.int64] = field(repr=False)
    emitted_at: NDArray[np.int64] = field(repr=False)
    num_lo: NDArray[np.float64] = field(repr=False)
    num_hi: NDArray[np.float64] = field(repr=False)
    cat_node: NDArray[np.int32] = field(repr=False)
    columns: dict[str, NDArray[Any]] = field(repr=False)
    pid: NDArray[np.int64] = field(repr=False)
    clusters: pd.DataFrame = field(repr=False)
    numeric_qi: tuple[str, ...] = ()
    categorical_qi: tuple[str, ...] = ()
    hierarchies: tuple[Hierarchy, ...] = field(default=(), repr=False, compare=False)
    _id_field: ClassVar[str] = "gen_id"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CastleRelease):
            return NotImplemented
        arrays = ("position", "suppressed", "mode", "gen_id", "emitted_at", "num_lo", "num_hi", "cat_node", "pid")
        return (all(np.array_equal(getattr(self, a), getattr(other, a), equal_nan=a.startswith("num"))
                    for a in arrays)
                and self.columns.keys() == other.columns.keys()
                and all(np.array_equal(self.columns[c], other.columns[c]) for c in self.columns)
                and self.clusters.equals(other.clusters)
                and (self.numeric_qi, self.categorical_qi) == (other.numeric_qi, other.categorical_qi))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"CastleRelease(n_released={self.n_released}, n_suppressed={self.n_suppressed}, "
                f"n_clusters={len(self.clusters)})")



def _check_params(*, k: Any, delta: Any, eta: Any, mu: Any, l: Any, max_reuse: Any, initial_tau: Any,
                  containment: Any, reorder: Any, outlier_suppression: Any) -> dict[str, Any]:
    """The validated parameters of a Castle (the constructor's and a checkpoint's)."""
    def count(v: Any, name: str, low: int) -> int:
        out = check_int(v, name, "Castle", low, math.inf)
        if out > 2**62:  # the kernel counts in int64
            raise ValueError(f"The {name!r} parameter of Castle must be at most 2**62. Got {v!r} instead.")
        return out

    return {"k": count(k, "k", 1), "delta": count(delta, "delta", 1), "eta": count(eta, "eta", 1),
            "mu": count(mu, "mu", 1), "l": None if l is None else count(l, "l", 1),
            "max_reuse": None if max_reuse is None else count(max_reuse, "max_reuse", 0),
            "initial_tau": float(check_float(initial_tau, "initial_tau", "Castle", 0, 1)),
            "containment": check_option(containment, "containment", "Castle", ("generalization", "range")),
            "reorder": check_bool(reorder, "reorder", "Castle"),
            "outlier_suppression": check_bool(outlier_suppression, "outlier_suppression", "Castle")}


def _new_core(params: dict[str, Any], seed: int, spec: _StreamSpec) -> Any:
    p = params
    return _core.castle.Castle(
        p["k"], p["delta"], p["eta"], p["mu"], 0 if p["l"] is None else p["l"],
        -1 if p["max_reuse"] is None else p["max_reuse"], p["initial_tau"], p["containment"] == "range",
        p["outlier_suppression"], seed, spec.dom_lo, spec.dom_hi, spec.core_cats(),
    )


class Castle:
    """CASTLE stream anonymizer (Cao, Carminati, Ferrari, Tan; Cao PhD thesis, NUS 2010, chapter 5).

    Tuples are pushed in batches; every tuple is published at most ``delta`` arrivals after it arrived,
    generalized so that each published equivalence class refers to at least ``k`` distinct persons
    (k_s-anonymity, Def. 5.1) and, with ``l``, holds at least ``l`` distinct sensitive values; a tuple
    that cannot be published so in time is suppressed and reported.

    Parameters
    ----------
    schema : Schema or Table
        The stream's attributes. It needs one ``pid`` attribute (person id) and at least one
        quasi-identifier; an optional ``time`` attribute gives the positions (strictly increasing
        integers; by default positions count arrivals from 1). Numeric quasi-identifiers need a declared
        ``domain`` (or a numeric hierarchy) and categorical ones a hierarchy, because the values of a
        stream are not known in advance. A :class:`~anoncore.Table` template supplies both (its
        hierarchies and observed numeric ranges).
    k : int
        Distinct persons per published class.
    delta : int
        Delay bound in arrivals. With ``delta + 1 < k`` nothing can ever be published (a warning is
        raised and every tuple is suppressed, spec §2.12 invariant 8).
    eta : int, default=50
        Maximum number of open (not yet released) clusters (β in the published paper).
    beta : int, default=None
        Alias of ``eta`` (the TDSC paper's name).
    mu : int, default=100
        Number of most recently released clusters whose mean information loss is the threshold τ.
    l : int, default=None
        Distinct l-diversity of the sensitive attribute (``sensitive``), or None.
    sensitive : str, default=None
        The sensitive attribute for ``l`` (default: the schema's only sensitive attribute).
    max_reuse : int, default=None
        Maximum number of released clusters kept for reuse (Ω, N_ks). None keeps all of them (as the
        thesis); otherwise the oldest is evicted first (FIFO). 0 disables reuse.
    initial_tau : float, default=0.0
        Threshold before the first release (the thesis uses 0).
    containment : {'generalization', 'range'}, default='generalization'
        Whether a tuple may reuse a released cluster when it lies in its generalization (the subtree of
        the published hierarchy node) or only in its leaf range (spec A8).
    reorder : bool, default=False
        Deliver tuples in input order (Thm 5.3): a tuple is handed out only once every smaller position was
        released or suppressed (delivery still within ``delta`` arrivals). Leaks identities to an attacker who
        knows the input order (thesis l.1827); by default tuples of a released cluster come in random order.
    outlier_suppression : bool, default=False
        The published TDSC version's extra step (absent from the thesis): an expiring tuple that cannot reuse a
        released cluster is suppressed when more than half of the open clusters are larger than its own.
    rng : int, numpy.random.Generator or None, default=None
        Seed of every random choice (reuse selection, split^k, order inside a released cluster).
    n_threads : int or None, default=1
        Threads for the block scans of split^k (None: all cores). The output does not depend on it. A scan
        round is short (tens of microseconds), so a second thread only pays on an otherwise idle core.

    Attributes
    ----------
    tau_ : float
        Current threshold τ.
    n_open_ : int
        Open clusters (|Γ|).
    n_pending_ : int
        Tuples received and not yet released or suppressed (at most ``delta``).
    n_reuse_ : int
        Released clusters kept for reuse (|Ω|).
    closed_ : bool
        True after :meth:`flush`.

    Notes
    -----
    Per arrival the cost is O(η·d) for the best-cluster selection plus, amortised, the merges
    (O(η²·d) per release), the splits (O(n²·d/k) for a cluster of n tuples) and the reuse scan
    (O(|Ω|·d) when an expiring tuple's cluster is too small). Resolutions of the spec's ambiguities
    are listed in ``docs/castle.md``, as is the checkpoint format.

    References
    ----------
    J. Cao, B. Carminati, E. Ferrari, K.-L. Tan. CASTLE: Continuously Anonymizing Data Streams. IEEE TDSC
    8(3), 2011. doi:10.1109/TDSC.2009.47

    Examples
    --------
    >>> import numpy as np
    >>> from anoncore import Schema
    >>> from anoncore.stream import Castle
    >>> schema = Schema.build({"v": {"kind": "numeric", "domain": (0, 100)}}, pid="pid")
    >>> values = [20, 22, 80, 20, 60, 23, 81, 22, 50, 70, 5, 79, 6, 40, 41, 99]
    >>> c = Castle(schema, k=2, delta=3, eta=3, mu=2, rng=0)
    >>> out = c.push({"v": values, "pid": np.arange(16)})
    >>> out.to_pandas().head(4)
       position         v  ec
    0         1        20   0
    1         4        20   0
    2         5  [22, 60]   1
    3         2  [22, 60]   1
    >>> rest = c.flush()
    >>> len(out) + len(rest)
    16
    """

    _core: Any
    _spec: _StreamSpec
    _py: _PyState
    closed_: bool

    def __init__(
        self,
        schema: Schema | Table,
        k: int,
        delta: int,
        eta: int = 50,
        mu: int = 100,
        l: int | None = None,
        *,
        beta: int | None = None,
        sensitive: str | None = None,
        max_reuse: int | None = None,
        initial_tau: float = 0.0,
        containment: str = "generalization",
        reorder: bool = False,
        outlier_suppression: bool = False,
        rng: int | np.random.Generator | None = None,
        n_threads: int | None = 1,
    ) -> None:
        threads = check_n_threads(n_threads, "Castle", openmp=False)
        eta = check_int(eta, "eta", "Castle", 1, math.inf)
        if beta is not None:
            beta = check_int(beta, "beta", "Castle", 1, math.inf)
            if eta not in (50, beta):
                raise ValueError(f"The 'beta' parameter of Castle is another name for 'eta'; got eta={eta} and "
                                 f"beta={beta}. Pass only one of them.")
            eta = beta
        params = _check_params(k=k, delta=delta, eta=eta, mu=mu, l=l, max_reuse=max_reuse, initial_tau=initial_tau,
                               containment=containment, reorder=reorder,
                               outlier_suppression=outlier_suppression)
        k, delta, eta, mu, l, max_reuse = (params[x] for x in ("k", "delta", "eta", "mu", "l", "max_reuse"))
        check_rng(rng, "Castle")
        spec = _StreamSpec.build(schema, l is not None, sensitive)
        if delta + 1 < k:
            warnings.warn(f"delta + 1 = {delta + 1} < k = {k}: no cluster can ever gather k persons within the "
                          f"delay bound, so every tuple will be suppressed.", UserWarning, stacklevel=2)
        seed = int(np.random.default_rng(rng).integers(0, 2**63 - 1))
        self._spec = spec
        self._sa_leaves = _sensitive_leaves(schema, spec.sensitive)
        self._core = _new_core(params, seed, spec)
        self._core.n_threads = threads
        self._py = _PyState(spec.passthrough)
        self._py.reorder = reorder
        self.closed_ = False

    # ------------------------------------------------------------------ state
    @property
    def tau_(self) -> float:
        return float(self._core.tau)

    @property
    def n_open_(self) -> int:
        return int(self._core.n_open)

    @property
    def n_pending_(self) -> int:
        return int(self._core.n_pending)

    @property
    def n_reuse_(self) -> int:
        return int(self._core.n_reuse)

    @property
    def n_arrivals_(self) -> int:
        return int(self._core.n_arrivals)

    @property
    def params(self) -> dict[str, Any]:
        c = self._core
        return {"k": c.k, "delta": c.delta, "eta": c.eta, "mu": c.mu, "l": c.l or None,
                "max_reuse": None if c.max_reuse < 0 else c.max_reuse, "initial_tau": c.initial_tau,
                "containment": "range" if c.containment_range else "generalization", "reorder": self._py.reorder,
                "outlier_suppression": c.outlier_suppression}

    def __repr__(self) -> str:
        p = self.params
        return (f"Castle(k={p['k']}, delta={p['delta']}, eta={p['eta']}, mu={p['mu']}, l={p['l']}, "
                f"pending={self.n_pending_}, open={self.n_open_}, reuse={self.n_reuse_})")

    # ------------------------------------------------------------------ stream
    def push(self, batch: Any) -> CastleRelease:
        """Append a batch of tuples; returns the tuples released or suppressed while processing it.

        Parameters
        ----------
        batch : pandas.DataFrame, pyarrow.RecordBatch / Table, or mapping of str to 1-D array
            Must hold the quasi-identifiers, the pid column, the time column if the schema declares one,
            and the columns published as they are (sensitive/insensitive attributes of the schema).
            The batch is validated completely before any tuple enters the algorithm.

        Returns
        -------
        CastleRelease

        Raises
        ------
        RuntimeError
            After :meth:`flush`.
        ValueError
            Missing column, value outside its declared domain or missing from its hierarchy, positions
            not strictly increasing.
        """
        if self.closed_:
            raise RuntimeError("Castle.push was called after flush(): the stream is closed.")
        df = _as_frame(batch)
        _check_sensitive(df, self._spec.sensitive, getattr(self, "_sa_leaves", None))
        enc = self._spec.encode(df, self._py, self._core.last_position)
        if enc["position"].size == 0:
            return self._release(_empty_events(self._spec))
        self._py.add_chunk(enc["position"], enc["columns"])
        if self._py.reorder:
            self._py.arrived = np.concatenate([self._py.arrived, enc["position"]])
        ev = self._core.push(enc["position"], enc["pid"], enc["sa"], enc["num"], enc["cat"])
        return self._release(ev)

    def flush(self, mode: str = "drain") -> CastleRelease:
        """End of stream (spec §2.10); the stream is closed afterwards.

        Parameters
        ----------
        mode : {'drain', 'paper'}, default='drain'
            ``'drain'`` expires every pending tuple in position order with the normal procedure (merge, reuse
            or suppression), as if ``delta`` more arrivals had happened. ``'paper'`` is the thesis's protocol for
            its comparison with dynamicGroup: release every open cluster with ``k`` persons, publish what it can
            by reuse, then release all remaining tuples as one cluster if they hold ``k`` persons (and ``l``
            values), else suppress them.
        """
        if self.closed_:
            raise RuntimeError("Castle.flush was called twice: the stream is closed.")
        check_option(mode, "mode", "Castle.flush", ("drain", "paper"))
        self.closed_ = True
        return self._release(self._core.flush(mode == "paper"))

    def _release(self, ev: dict[str, NDArray[Any]]) -> CastleRelease:
        rows: dict[str, Any] = {key: ev[key] for key in _ROW_KEYS}
        rows["columns"] = self._py.take(ev["position"])
        if self._py.reorder:
            rows = self._py.reorder_rows(rows, flush=self.closed_)
        mode = rows["mode"]
        clusters = pd.DataFrame({
            "gen_id": ev["g_id"], "il": ev["g_il"], "n_persons": ev["g_pids"], "n_tuples": ev["g_tuples"],
            "diversity": ev["g_diversity"], "tau": ev["g_tau"], "kept": ev["g_kept"].astype(bool),
        })
        return CastleRelease(
            position=_ro(rows["position"]), suppressed=_ro(mode == MODES.index("suppressed")), mode=_ro(mode),
            gen_id=_ro(rows["gen_id"]), emitted_at=_ro(rows["emitted_at"]), num_lo=_ro(rows["num_lo"]),
            num_hi=_ro(rows["num_hi"]), cat_node=_ro(rows["cat_node"]), columns=rows["columns"],
            pid=_ro(rows["pid"]), clusters=clusters, numeric_qi=self._spec.numeric,
            categorical_qi=self._spec.categorical, hierarchies=self._spec.hierarchies,
        )

    # ------------------------------------------------------------------ checkpoint
    def checkpoint(self) -> bytes:
        """The whole state as versioned bytes; :meth:`restore` continues the stream from it.

        A process restarted from its last checkpoint re-pushes the tuples after it; with the same seed the
        output is the same as without the interruption. The format (docs/castle.md, "Checkpoints") is a JSON
        header with the parameters, the schema and its digest and the input consumed so far, plus numeric arrays,
        under a BLAKE2b checksum; reading it runs no code.

        Raises
        ------
        TypeError
            A column published as it is holds values other than str, int, float, bool and None (in an object
            column), which the format does not store.
        """
        return self._pack(keys_from=0)

    def _pack(self, keys_from: int) -> bytes:
        w = _ckpt.Writer()
        spec_doc = self._spec.doc()
        self._spec.put_arrays(w)
        state: dict[str, Any] = {"closed": self.closed_}
        self._py.dump(w, state, keys_from)
        w.array("core", np.frombuffer(bytes(self._core.checkpoint()), dtype=np.uint8))
        last = self._core.last_position
        return w.pack({
            "algorithm": "castle", "anoncore_version": _version(), "params": self._header_params(),
            "seed": int(self._core.seed), "schema": spec_doc, "schema_digest": self._spec.digest(),
            "input": {"rows": self.n_arrivals_, "last_position": last}, "state": state,
        })

    def _pid_keys(self) -> list[Any]:
        """The person-id dictionary's values in code order (the live list: append-only)."""
        return self._py.pid_list

    def _resume(self, state: bytes, keys: dict[str, list[Any]] | None) -> Castle:
        """Restore ``state`` refusing other parameters or schema than this Castle's (``anoncore stream``)."""
        return type(self)._unpack(state, self._core.n_threads, self, keys)

    def _header_params(self) -> dict[str, Any]:
        p = self.params
        return {k: p[k] for k in _PARAM_KEYS}

    def _identity(self) -> dict[str, Any]:
        """What a resume must match: the parameters (not the seed) and the schema digest."""
        return {**self._header_params(), "schema_digest": self._spec.digest()}

    @classmethod
    def restore(cls, state: bytes, n_threads: int | None = 1, *, expect: Castle | None = None) -> Castle:
        """Rebuild a :class:`Castle` from :meth:`checkpoint` bytes.

        Parameters
        ----------
        state : bytes
        n_threads : int or None, default=1
            As in :class:`Castle` (not part of the state: the output does not depend on it).
        expect : Castle, default=None
            A Castle built with the schema and parameters this run means to use: the checkpoint is refused unless
            it was made with the same ones (the seed is the checkpoint's).

        Raises
        ------
        TypeError
            ``state`` is not bytes.
        anoncore.stream.CheckpointError (a ValueError)
            The bytes are not a Castle checkpoint, are corrupt or truncated, hold a field out of range, or differ
            from ``expect``.

        Examples
        --------
        >>> from anoncore import Schema
        >>> from anoncore.stream import Castle
        >>> s = Schema.build({"v": {"kind": "numeric", "domain": (0, 9)}}, pid="pid")
        >>> c = Castle(s, k=2, delta=4, rng=1)
        >>> _ = c.push({"v": [1, 2, 3], "pid": [1, 2, 3]})
        >>> c2 = Castle.restore(c.checkpoint())
        >>> c2.n_pending_
        3
        """
        return cls._unpack(state, n_threads, expect, None)

    @classmethod
    def _unpack(cls, state: Any, n_threads: int | None, expect: Castle | None,
                keys: dict[str, list[Any]] | None) -> Castle:
        threads = check_n_threads(n_threads, "Castle", openmp=False)
        r = _ckpt.Reader(state, "Castle.restore", "Castle")
        algo = r.get_str("algorithm")
        if algo != "castle":
            r.fail(f"it is a checkpoint of {algo!r}, not of Castle")
        raw = r.get("params", dict)
        if set(raw) != set(_PARAM_KEYS):
            r.fail("its parameters are not those of Castle")
        try:
            params = _check_params(**raw)
        except (TypeError, ValueError) as exc:
            r.fail(f"its parameters are invalid ({exc})")
        seed = r.get_int("seed", 0, 2**64 - 1)
        spec = _StreamSpec.from_doc(r, r.get("schema", dict), params["l"] is not None)
        if r.get_str("schema_digest") != spec.digest():
            r.fail("its schema does not match the schema digest of its header")
        if expect is not None:
            if not isinstance(expect, Castle):
                raise TypeError(f"The 'expect' parameter of Castle.restore must be a Castle. "
                                f"Got {type(expect).__name__} instead.")
            _ckpt.check_expected(r, {**{k: params[k] for k in _PARAM_KEYS}, "schema_digest": spec.digest()},
                                 expect._identity(), "parameters or schema")
        try:
            core = _new_core(params, seed, spec)
            core.restore_state(r.array("core", np.uint8, (None,)).tobytes())
        except (TypeError, ValueError, OverflowError) as exc:
            r.fail(str(exc))
        inp = r.get("input", dict)
        rows = r.get_int("rows", 0, 2**62, inp)
        last = r.get_opt_int("last_position", -(2**63), 2**63 - 1, inp)
        if rows != core.n_arrivals or last != core.last_position:
            r.fail(f"its input record (rows={rows}, last_position={last}) disagrees with its state "
                   f"({core.n_arrivals} arrivals, last position {core.last_position})")
        st = r.get("state", dict)
        obj = cls.__new__(cls)
        obj._spec = spec
        obj._core = core
        obj._core.n_threads = threads
        obj._py = _PyState.load(r, st, spec, params, core, keys)
        obj.closed_ = r.get_bool("closed", st)
        if obj.closed_ and core.n_pending:
            r.fail("it is closed but holds pending tuples")
        return obj


_PARAM_KEYS = ("k", "delta", "eta", "mu", "l", "max_reuse", "initial_tau", "containment", "reorder",
               "outlier_suppression")


def _version() -> str:
    from anoncore import __version__

    return str(__version__)


def releases_to_partition(table: Table, releases: Any, positions: Any = None) -> Any:
    """The whole run as a :class:`~anoncore.Partition` over ``table`` (the stream's tuples, one row each).

    Row ``i`` of ``table`` is the tuple at stream position ``positions[i]`` (default ``i + 1``). Tuples published
    with the same generalization (one released cluster plus the tuples that reused it) form one class; suppressed
    tuples form one fully suppressed class. Each class's minimal box is the published generalization, so the
    partition can go through the project's audit (which counts rows; k_s-anonymity, which counts persons, is
    checked by the algorithm's own guarantee and by the test oracle).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from anoncore import Schema, Table
    >>> s = Schema.build({"v": {"kind": "numeric", "domain": (0, 100)}}, pid="pid")
    >>> df = pd.DataFrame({"v": [20, 22, 80, 20, 60, 23], "pid": np.arange(6)})
    >>> c = Castle(s, k=2, delta=3, eta=3, mu=2, rng=0)
    >>> p = releases_to_partition(Table.from_pandas(df, s), [c.push(df), c.flush()])
    >>> p.n_classes, p.class_sizes.tolist()
    (3, [2, 2, 2])
    """
    from anoncore.results import Partition

    if not isinstance(table, Table):
        raise TypeError(f"table must be a Table. Got {type(table).__name__} instead.")
    rel = list(releases)
    pos = np.concatenate([r.position for r in rel]) if rel else np.empty(0, np.int64)
    gen = np.concatenate([r.gen_id for r in rel]) if rel else np.empty(0, np.int64)
    sup = np.concatenate([r.suppressed for r in rel]) if rel else np.empty(0, bool)
    want = np.arange(1, table.n_rows + 1) if positions is None else np.asarray(positions, dtype=np.int64)
    order = np.argsort(pos, kind="stable")
    if pos.size != want.size or not np.array_equal(pos[order], np.sort(want)):
        raise ValueError("The releases do not cover exactly the table's positions (every tuple must be released "
                         "or suppressed once; did you flush?).")
    idx = np.searchsorted(pos[order], want)
    labels = np.where(sup[order][idx], -1, gen[order][idx])
    return Partition.from_labels(table, labels, sup[order][idx])


# ---------------------------------------------------------------------------------------------- internals
def _as_frame(batch: Any) -> pd.DataFrame:
    if isinstance(batch, pd.DataFrame):
        return batch
    if isinstance(batch, Mapping):
        lens = {k: len(v) for k, v in batch.items()}
        if len(set(lens.values())) > 1:
            raise ValueError(f"Columns of the batch have different lengths: {lens}.")
        return pd.DataFrame({k: np.asarray(v) for k, v in batch.items()})
    mod = type(batch).__module__
    if mod.startswith("pyarrow") and hasattr(batch, "to_pandas"):
        return batch.to_pandas()
    raise TypeError(f"Castle.push expects a pandas DataFrame, a pyarrow RecordBatch/Table or a mapping of "
                    f"arrays. Got {type(batch).__name__} instead.")


def _empty_events(spec: _StreamSpec) -> dict[str, NDArray[Any]]:
    i64 = np.empty(0, dtype=np.int64)
    return {"position": i64, "pid": i64, "emitted_at": i64, "gen_id": i64, "mode": np.empty(0, np.int8),
            "num_lo": np.empty((0, len(spec.numeric))), "num_hi": np.empty((0, len(spec.numeric))),
            "cat_node": np.empty((0, len(spec.categorical)), np.int32), "g_id": i64, "g_pids": i64,
            "g_tuples": i64, "g_diversity": i64, "g_il": np.empty(0), "g_tau": np.empty(0),
            "g_kept": np.empty(0, np.int8)}


@dataclass
class _StreamSpec:
    """How batches are encoded: resolved once from the schema or table template."""

    numeric: tuple[str, ...]
    categorical: tuple[str, ...]
    hierarchies: tuple[Hierarchy, ...]
    dom_lo: NDArray[np.float64]
    dom_hi: NDArray[np.float64]
    pid: str
    time: str | None
    sensitive: str | None
    passthrough: tuple[str, ...]

    @classmethod
    def build(cls, schema: Schema | Table, need_sa: bool, sensitive: str | None) -> _StreamSpec:
        q = resolve_stream_schema(schema, "Castle")
        sa = q.schema.sensitive_column(sensitive, "Castle") if need_sa else None
        return cls(q.numeric, q.categorical, q.hierarchies, q.dom_lo, q.dom_hi, q.pid, q.time, sa, q.passthrough)

    def doc(self) -> dict[str, Any]:
        """The JSON description of the spec in a checkpoint (hierarchy parents are payload arrays)."""
        return {"numeric": list(self.numeric), "categorical": list(self.categorical),
                "hierarchies": [_ckpt.hierarchy_doc(h, f"schema.h{j}") for j, h in enumerate(self.hierarchies)],
                "dom_lo": self.dom_lo.tolist(), "dom_hi": self.dom_hi.tolist(), "pid": self.pid, "time": self.time,
                "sensitive": self.sensitive, "passthrough": list(self.passthrough)}

    def put_arrays(self, w: _ckpt.Writer) -> None:
        for j, h in enumerate(self.hierarchies):
            _ckpt.put_hierarchy(w, h, f"schema.h{j}")

    def digest(self) -> str:
        return _ckpt.spec_digest(self.doc(), self.hierarchies)

    @classmethod
    def from_doc(cls, r: _ckpt.Reader, doc: dict[str, Any], need_sa: bool) -> _StreamSpec:
        numeric, categorical = r.names("numeric", doc), r.names("categorical", doc)
        hs = r.get("hierarchies", list, doc)
        if len(hs) != len(categorical) or not numeric + categorical:
            r.fail("its schema has no quasi-identifier or not one hierarchy per categorical one")
        hier = tuple(_ckpt.get_hierarchy(r, h, repr(n)) for h, n in zip(hs, categorical))
        lo, hi = (np.asarray(r.get(x, list, doc), dtype=object) for x in ("dom_lo", "dom_hi"))
        if (lo.size != len(numeric) or hi.size != len(numeric) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in [*lo, *hi])):
            r.fail("its schema's numeric domains are malformed")
        dom_lo, dom_hi = lo.astype(np.float64), hi.astype(np.float64)
        if np.any(dom_lo > dom_hi):
            r.fail("its schema has a numeric domain with L > U")
        pid = r.get_str("pid", where=doc)
        time = doc.get("time")
        sa = doc.get("sensitive")
        passthrough = r.names("passthrough", doc)
        if (not isinstance(time, (str, type(None))) or not isinstance(sa, (str, type(None)))
                or (sa is None) == need_sa or (sa is not None and sa not in passthrough)):
            r.fail("its schema's time or sensitive column is malformed")
        names = [*numeric, *categorical, pid, *([time] if time else []), *passthrough]
        if len(set(names)) != len(names):
            r.fail("its schema names a column twice")
        return cls(numeric, categorical, hier, dom_lo, dom_hi, pid, time, sa, passthrough)

    def core_cats(self) -> list[tuple[NDArray[np.int32], NDArray[np.int32], NDArray[np.int32], int]]:
        return [(np.ascontiguousarray(h.parent, dtype=np.int32), np.ascontiguousarray(h.leaf_start, dtype=np.int32),
                 np.ascontiguousarray(h.leaf_count, dtype=np.int32), int(h.n_leaves)) for h in self.hierarchies]

    def encode(self, df: pd.DataFrame, py: _PyState, last: int | None) -> dict[str, Any]:
        num, cat = encode_batch_qis(df, self, "Castle")
        n = len(df)
        pid = py.encode_pid(df[self.pid])
        pos = batch_positions(df, self.time, last)
        sa = np.zeros(n, dtype=np.int32) if self.sensitive is None else py.encode_sa(df[self.sensitive])
        cols = {c: df[c].to_numpy() for c in self.passthrough}
        return {"position": pos, "pid": pid, "sa": sa, "num": num, "cat": cat, "columns": cols}


def _sensitive_leaves(schema: Schema | Table, name: str | None) -> frozenset[str] | None:
    """The leaf labels of the sensitive attribute's hierarchy (None: no hierarchy, any value is allowed)."""
    if name is None:
        return None
    sch = schema.schema if isinstance(schema, Table) else schema
    h = sch[name].hierarchy
    return None if h is None else frozenset(str(x) for x in h.leaves)


def _check_sensitive(df: pd.DataFrame, name: str | None, leaves: frozenset[str] | None) -> None:
    """Refuse a batch whose sensitive column has a missing value or a value outside its hierarchy, before any
    tuple (or person id) enters the stream's state."""
    if name is None or name not in df.columns:
        return
    col = df[name]
    miss = col.isna().to_numpy()
    if col.dtype == object or isinstance(col.dtype, pd.StringDtype):
        miss = miss | (col.astype(str).str.strip() == "").to_numpy()
    if miss.any():
        i = int(np.flatnonzero(miss)[0])
        raise ValueError(f"Column {name!r} (the sensitive attribute) has {int(miss.sum())} missing value(s); the "
                         f"first at batch row {i + 1} (1-based). Castle needs a sensitive value for every tuple.")
    if leaves is not None:
        labels = col.map(lambda v: number_label(v) if isinstance(v, float) else str(v))
        bad = ~labels.isin(leaves).to_numpy()
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            vals = sorted(set(labels[bad].tolist()))[:5]
            raise ValueError(f"Value(s) {vals} of column {name!r} (the sensitive attribute) are missing from its "
                             f"hierarchy; the first at batch row {i + 1} (1-based).")


_ROW_KEYS = ("position", "pid", "emitted_at", "gen_id", "mode", "num_lo", "num_hi", "cat_node")


class _PyState:
    """Python-side state kept across pushes (and in checkpoints): pid/SA dictionaries, pending columns."""

    def __init__(self, names: tuple[str, ...] = ()) -> None:
        self.names = names
        self.reorder = False
        self.arrived: NDArray[np.int64] = np.empty(0, dtype=np.int64)  # reorder: not yet delivered
        self.held: dict[str, Any] | None = None  # reorder: released, waiting for smaller positions
        self.pid_mode: str | None = None
        self.pid_map: dict[Any, int] = {}
        self.pid_list: list[Any] = []  # the keys of pid_map in code order (checkpoints append only new ones)
        self.sa_map: dict[Any, int] = {}
        self.chunks: list[tuple[NDArray[np.int64], dict[str, NDArray[Any]], int]] = []

    def dump(self, w: _ckpt.Writer, st: dict[str, Any], keys_from: int) -> None:
        """Into a checkpoint: JSON fields in ``st``, arrays in ``w``; dictionary values from ``keys_from`` on."""
        st["reorder"] = self.reorder
        w.array("py.arrived", self.arrived)
        st["pid_mode"] = self.pid_mode
        sa_keys = _ckpt.put_keys(self.sa_map, "the sensitive dictionary")
        st["keys"] = {"from": keys_from, "pid": _ckpt.plain_values(self.pid_list[keys_from:], "the pid dictionary"),
                      "n_pid": len(self.pid_list), "sa": sa_keys, "n_sa": len(sa_keys)}
        chunks = []
        for i, (pos, cols, left) in enumerate(self.chunks):
            w.array(f"chunk{i}.position", pos)
            cst: dict[str, Any] = {}
            for c in self.names:
                _ckpt.put_column(w, cst, f"chunk{i}.col.{c}", cols[c], f"column {c!r}")
            chunks.append({"left": left, "columns": cst})
        st["chunks"] = chunks
        if self.held is None:
            st["held"] = None
        else:
            for key in _ROW_KEYS:
                w.array(f"held.{key}", self.held[key])
            hst: dict[str, Any] = {}
            for c in self.names:
                _ckpt.put_column(w, hst, f"held.col.{c}", self.held["columns"][c], f"column {c!r}")
            st["held"] = {"columns": hst}

    @classmethod
    def load(cls, r: _ckpt.Reader, st: dict[str, Any], spec: _StreamSpec, params: dict[str, Any], core: Any,
             keys: dict[str, list[Any]] | None) -> _PyState:
        """From a checkpoint, every field checked (and against the restored kernel ``core``)."""
        py = cls(spec.passthrough)
        py.reorder = params["reorder"]
        if r.get_bool("reorder", st) != py.reorder:
            r.fail("its reorder flag disagrees with its parameters")
        py.arrived = r.array("py.arrived", np.int64, (None,))
        r.increasing("py.arrived", py.arrived)
        mode = st.get("pid_mode")
        if mode not in (None, "int", "map"):
            r.fail(f"its pid mode is {mode!r}")
        py.pid_mode = mode
        ks = r.get("keys", dict, st)
        start = r.get_int("from", 0, 2**62, ks)
        pid_vals = r.get("pid", list, ks)
        if keys is not None:
            pid_vals = [*keys.get("pid", []), *pid_vals]
        if len(pid_vals) != r.get_int("n_pid", 0, 2**62, ks) or (keys is None and start != 0):
            r.fail("its pid dictionary is incomplete")
        py.pid_map = _ckpt.get_keys(r, pid_vals, "pid", allow_none=False)
        py.pid_list = list(pid_vals)
        py.sa_map = _ckpt.get_keys(r, r.get("sa", list, ks), "sensitive", allow_none=True)
        if len(py.sa_map) != r.get_int("n_sa", 0, 2**62, ks) or (mode != "map" and py.pid_map):
            r.fail("its sensitive or pid dictionary is inconsistent")
        names = spec.passthrough
        chunks = r.get("chunks", list, st)
        if chunks and not names:
            r.fail("it keeps columns that its schema does not publish")
        starts: list[int] = []
        for i, ch in enumerate(chunks):
            pos = r.array(f"chunk{i}.position", np.int64, (None,))
            r.increasing(f"chunk{i}.position", pos)
            left = r.get_int("left", 1, max(int(pos.size), 1), ch)
            cst = r.get("columns", dict, ch)
            if set(cst) != {f"chunk{i}.col.{c}" for c in names}:
                r.fail(f"chunk {i} does not hold the published columns")
            cols = {c: _ckpt.get_column(r, cst, f"chunk{i}.col.{c}", pos.size) for c in names}
            if pos.size == 0 or (starts and pos[0] <= starts[-1]):
                r.fail("its column chunks are empty or out of order")
            starts.append(int(pos[0]))
            py.chunks.append((pos, cols, left))
        if names and core.n_pending:
            pend = np.asarray(core.pending_positions(), dtype=np.int64)
            which = np.searchsorted(np.asarray(starts, dtype=np.int64), pend, side="right") - 1
            ok = which >= 0
            if ok.all():
                for ci in np.unique(which):
                    cpos = py.chunks[ci][0]
                    sel = pend[which == ci]
                    at = np.searchsorted(cpos, sel)
                    ok[which == ci] = (at < cpos.size) & (cpos[np.minimum(at, cpos.size - 1)] == sel)
            if not ok.all():
                r.fail("a pending tuple has no published columns")
        if names and sum(c[2] for c in py.chunks) != core.n_pending:
            r.fail("its column chunks do not account for the pending tuples")
        held = st.get("held")
        if held is not None:
            if not isinstance(held, dict) or not py.reorder:
                r.fail("its held rows are malformed")
            n = r.arrays.get("held.position", np.empty(0)).shape[0]
            shapes = {"num_lo": (n, len(spec.numeric)), "num_hi": (n, len(spec.numeric)),
                      "cat_node": (n, len(spec.categorical))}
            dtypes = {"num_lo": np.float64, "num_hi": np.float64, "cat_node": np.int32, "mode": np.int8}
            rows: dict[str, Any] = {key: r.array(f"held.{key}", dtypes.get(key, np.int64), shapes.get(key, (n,)))
                                    for key in _ROW_KEYS}
            if np.any((rows["mode"] < 0) | (rows["mode"] >= len(MODES))):
                r.fail("its held rows have an unknown mode")
            hst = r.get("columns", dict, held)
            if set(hst) != {f"held.col.{c}" for c in names}:
                r.fail("its held rows do not hold the published columns")
            rows["columns"] = {c: _ckpt.get_column(r, hst, f"held.col.{c}", n) for c in names}
            py.held = rows
        if not py.reorder and py.arrived.size:
            r.fail("it keeps reorder state without reorder")
        return py

    def encode_pid(self, s: pd.Series) -> NDArray[np.int64]:
        if s.isna().any():
            i = int(np.flatnonzero(s.isna().to_numpy())[0])
            raise ValueError(f"The pid column {s.name!r} has a missing value at batch row {i}.")
        integral = pd.api.types.is_integer_dtype(s.dtype)
        mode = "int" if integral else "map"
        if self.pid_mode is None:
            self.pid_mode = mode
        elif self.pid_mode != mode:
            raise TypeError(f"The pid column {s.name!r} changed type mid-stream (was {self.pid_mode}, now {mode}).")
        if integral:
            out: NDArray[np.int64] = np.ascontiguousarray(s.to_numpy(), dtype=np.int64)
            return out
        codes, uniq = pd.factorize(s)
        ids = np.empty(len(uniq), dtype=np.int64)
        for u, val in enumerate(uniq):
            n0 = len(self.pid_map)
            ids[u] = code = self.pid_map.setdefault(val, n0)
            if code == n0:
                self.pid_list.append(val)
        res: NDArray[np.int64] = ids[codes]
        return res

    def encode_sa(self, s: pd.Series) -> NDArray[np.int32]:
        codes, uniq = pd.factorize(s, use_na_sentinel=False)
        ids = np.empty(len(uniq), dtype=np.int32)
        for u, val in enumerate(uniq):
            key = None if (isinstance(val, float) and math.isnan(val)) else val
            ids[u] = self.sa_map.setdefault(key, len(self.sa_map))
        res: NDArray[np.int32] = ids[codes]
        return res

    def reorder_rows(self, rows: dict[str, Any], flush: bool) -> dict[str, Any]:
        """Thm 5.3: deliver, in position order, the released rows below the smallest undelivered position."""
        if self.held is not None:
            rows = {key: (np.concatenate([self.held[key], rows[key]]) if key != "columns" else
                          {c: np.concatenate([self.held[key][c], rows[key][c]]) for c in rows[key]})
                    for key in rows}
        order = np.argsort(rows["position"], kind="stable")
        rows = {key: (rows[key][order] if key != "columns" else {c: v[order] for c, v in rows[key].items()})
                for key in rows}
        done = np.isin(self.arrived, rows["position"])
        first = int(np.argmin(done)) if not done.all() else done.size
        if flush:
            first = done.size
        frontier = self.arrived[first] if first < self.arrived.size else np.iinfo(np.int64).max
        cut = int(np.searchsorted(rows["position"], frontier))
        out = {key: (rows[key][:cut] if key != "columns" else {c: _ro(v[:cut]) for c, v in rows[key].items()})
               for key in rows}
        self.held = {key: (rows[key][cut:] if key != "columns" else {c: v[cut:] for c, v in rows[key].items()})
                     for key in rows}
        self.arrived = self.arrived[first:]
        return out

    def add_chunk(self, pos: NDArray[np.int64], cols: dict[str, NDArray[Any]]) -> None:
        if cols:
            self.chunks.append((pos, cols, int(pos.size)))

    def take(self, pos: NDArray[np.int64]) -> dict[str, NDArray[Any]]:
        """Gather the published-as-is columns of released positions; forget fully released chunks."""
        names = list(self.names)
        if not names:
            return {}
        if pos.size == 0 or not self.chunks:
            if self.chunks:
                return {n: _ro(self.chunks[0][1][n][:0].copy()) for n in names}
            return {n: _ro(np.empty(0, dtype=object)) for n in names}
        starts = np.array([c[0][0] for c in self.chunks], dtype=np.int64)
        which = np.searchsorted(starts, pos, side="right") - 1
        out: dict[str, Any] = {}
        parts: dict[str, list[Any]] = {n: [] for n in names}
        order_parts = []
        counts = np.bincount(which, minlength=len(self.chunks))
        for ci in np.flatnonzero(counts):
            sel = np.flatnonzero(which == ci)
            cpos, ccols, _ = self.chunks[ci]
            if int(cpos[-1]) - int(cpos[0]) + 1 == cpos.size:  # consecutive positions (no time column)
                rows = pos[sel] - cpos[0]
            else:
                rows = np.searchsorted(cpos, pos[sel])
            for n in names:
                parts[n].append(ccols[n][rows])
            order_parts.append(sel)
        order = np.concatenate(order_parts)
        inv = np.empty_like(order)
        inv[order] = np.arange(order.size)
        for n in names:
            out[n] = _ro(np.concatenate(parts[n])[inv])
        self.chunks = [(c[0], c[1], c[2] - int(counts[i])) for i, c in enumerate(self.chunks)]
        self.chunks = [c for c in self.chunks if c[2] > 0]
        return out
