"""SABRE_W: (omega, t)-closeness with k_s-anonymity over a sliding window (Cao thesis ch. 6).

Windows of ``omega`` tuples slide by ``interval`` (I) tuples. At every slide the algorithm does nothing when the
expiring block is already published (case 1); otherwise it measures ``D = EMD(SA(W, o-bar), SA(W))`` between the
window's not-yet-published tuples and the whole window and either runs SABRE on the not-yet-published tuples with
threshold ``t - D`` and publishes every class holding an expiring tuple (DIRECT, ``D < t``), or publishes every
class left over from the last DIRECT (INDIRECT). By the triangle inequality each published class is t-close to a
window of ``omega`` tuples that contains it, and each tuple leaves at most ``omega + I`` arrivals after its own.

The window frame is in :mod:`anoncore.stream._window`; the per-window SABRE runs in C++
(``anoncore._core.sabre_w``). ``baseline='tmondrian'`` / ``'tincognito'`` plug the static baselines into the same
frame (tMondrian_W and tIncognito_W of the thesis's experiments).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from anoncore import _core
from anoncore._validation import check_bool, check_float, check_int, check_option, check_rng
from anoncore.data.hierarchy import Hierarchy
from anoncore.data.schema import Attribute, Schema
from anoncore.data.table import Table
from anoncore.stream import _checkpoint as _ckpt
from anoncore.stream._common import ReleaseRows
from anoncore.stream._common import ro as _ro
from anoncore.stream._window import CASES, GroundMetric, _Driver, _WSpec, as_frame

__all__ = ["BASELINES", "CASES", "SabreW", "SabreWRelease", "TIncognitoW", "TMondrianW"]

#: Partitioners available at step 15 of the window frame.
BASELINES = ("sabre", "tmondrian", "tincognito")

_ALGORITHM = {"SabreW": "sabre_w", "TMondrianW": "tmondrian_w", "TIncognitoW": "tincognito_w"}


@dataclass(frozen=True, slots=True, eq=False)
class SabreWRelease(ReleaseRows):
    """Tuples published (or suppressed) by one :meth:`SabreW.push` or :meth:`SabreW.flush`.

    Over a whole run every input tuple appears exactly once, published or suppressed.

    Attributes
    ----------
    position : ndarray of int64, shape (n,)
        Stream position of each tuple (ties the output back to the input).
    arrival : ndarray of int64, shape (n,)
        0-based arrival index (windows count arrivals).
    suppressed : ndarray of bool, shape (n,)
    case : ndarray of int8, shape (n,)
        Index into :data:`CASES`: published by a DIRECT, an INDIRECT, at end of stream, or suppressed.
    ec : ndarray of int64, shape (n,)
        Equivalence-class id (unique over the run; -1 if suppressed). (omega, t)-closeness holds per emitted class
        (spec A33).
    emitted_at : ndarray of int64, shape (n,)
        Number of arrivals processed when the tuple left (its delay is ``emitted_at - arrival - 1``).
    window_start, window_len : ndarray of int64, shape (n,)
        The window (arrival indices ``[start, start + len)``) the class was made t-close to.
    num_lo, num_hi : ndarray of float64, shape (n, n_numeric_qi)
        Published interval of each numeric quasi-identifier (NaN when suppressed).
    cat_node : ndarray of int32, shape (n, n_categorical_qi)
        Published hierarchy node of each categorical quasi-identifier (-1 when suppressed).
    il : ndarray of float64, shape (n,)
        GLM information loss of the tuple's generalization (NaN when suppressed).
    sa : ndarray of int32, shape (n,)
        Code of the sensitive value in the global domain (audit channel).
    pid : ndarray of int64, shape (n,)
        Person id (audit channel only; not part of the published stream).
    columns : dict of str to ndarray
        Columns published as they are (sensitive and insensitive attributes).
    classes : pandas.DataFrame
        One row per class published in this call: ``ec``, ``window_start``, ``window_len``, ``t_used`` (threshold
        handed to the partitioner), ``d`` (EMD between the window's not-yet-output tuples and the window), ``case``.
    """

    position: NDArray[np.int64] = field(repr=False)
    arrival: NDArray[np.int64] = field(repr=False)
    suppressed: NDArray[np.bool_] = field(repr=False)
    case: NDArray[np.int8] = field(repr=False)
    ec: NDArray[np.int64] = field(repr=False)
    emitted_at: NDArray[np.int64] = field(repr=False)
    window_start: NDArray[np.int64] = field(repr=False)
    window_len: NDArray[np.int64] = field(repr=False)
    num_lo: NDArray[np.float64] = field(repr=False)
    num_hi: NDArray[np.float64] = field(repr=False)
    cat_node: NDArray[np.int32] = field(repr=False)
    il: NDArray[np.float64] = field(repr=False)
    sa: NDArray[np.int32] = field(repr=False)
    pid: NDArray[np.int64] = field(repr=False)
    columns: dict[str, NDArray[Any]] = field(repr=False)
    classes: pd.DataFrame = field(repr=False)
    numeric_qi: tuple[str, ...] = ()
    categorical_qi: tuple[str, ...] = ()
    hierarchies: tuple[Hierarchy, ...] = field(default=(), repr=False)

    _id_field: ClassVar[str] = "ec"

    @property
    def gen_id(self) -> NDArray[np.int64]:
        """Alias of :attr:`ec` (the name :class:`~anoncore.stream.CastleRelease` uses)."""
        return self.ec

    def __repr__(self) -> str:
        return (f"SabreWRelease(n_released={self.n_released}, n_suppressed={self.n_suppressed}, "
                f"n_classes={len(self.classes)})")


    @staticmethod
    def concat(releases: Any) -> SabreWRelease:
        """All releases of a run as one (rows in emission order)."""
        rel = list(releases)
        if not rel:
            raise ValueError("SabreWRelease.concat needs at least one release.")
        arrays = ("position", "arrival", "suppressed", "case", "ec", "emitted_at", "window_start", "window_len",
                  "num_lo", "num_hi", "cat_node", "il", "sa", "pid")
        kw: dict[str, Any] = {a: _ro(np.concatenate([getattr(r, a) for r in rel])) for a in arrays}
        kw["columns"] = {c: _ro(np.concatenate([r.columns[c] for r in rel])) for c in rel[0].columns}
        kw["classes"] = pd.concat([r.classes for r in rel], ignore_index=True)
        return SabreWRelease(**kw, numeric_qi=rel[0].numeric_qi, categorical_qi=rel[0].categorical_qi,
                             hierarchies=rel[0].hierarchies)


def _check_params(c: str, *, omega: Any, interval: Any, t: Any, k: Any, baseline: Any, method: Any,
                  slices: Any) -> dict[str, Any]:
    """The validated parameters of a SabreW (the constructor's and a checkpoint's)."""
    def count(v: Any, name: str) -> int:
        out = check_int(v, name, c, 1)
        if out > 2**62:  # the kernels count in int64
            raise ValueError(f"The {name!r} parameter of {c} must be at most 2**62. Got {v!r} instead.")
        return out

    t = check_float(t, "t", c, 0, 1, closed="right")
    k = count(k, "k")
    omega = count(omega, "omega")
    interval = count(interval, "interval")
    if omega < k:
        raise ValueError(f"The 'omega' parameter of {c} must be at least k = {k} (a window must be able to hold "
                         f"k persons). Got {omega} instead.")
    if interval > omega:
        raise ValueError(f"The 'interval' parameter of {c} must be an int in the range [1, omega = {omega}]. "
                         f"Got {interval} instead.")
    if omega % interval:
        raise ValueError(f"The 'omega' parameter of {c} must be a multiple of interval = {interval} (omega = j I, "
                         f"thesis §6.2; Lemma 6.2 and the INDIRECT case rely on it). Got {omega} instead.")
    check_option(baseline, "baseline", c, BASELINES)
    check_option(method, "method", c, ("ak", "knn"))
    check_bool(slices, "slices", c)
    if slices and method != "ak":
        raise ValueError(f"{c}: slices=True (Hilbert slicing) is a variant of method='ak' only.")
    return {"omega": omega, "interval": interval, "t": float(t), "k": k, "baseline": baseline, "method": method,
            "slices": slices}


_PARAM_KEYS = ("omega", "interval", "t", "k", "baseline", "method", "slices")


class SabreW:
    """SABRE_W stream anonymizer for (omega, t)-closeness with k_s-anonymity (Cao thesis, chapter 6).

    Tuples are pushed in batches; every tuple is published at most ``omega + interval`` arrivals after it
    arrived, in an equivalence class that refers to at least ``k`` distinct persons and whose sensitive-value
    distribution is within EMD ``t`` of a window of ``omega`` consecutive tuples containing it. A tuple that
    cannot be published so (fewer than ``k`` persons left in its window) is suppressed and reported.

    Parameters
    ----------
    schema : Schema or Table
        The stream's attributes: one ``pid`` attribute, at least one quasi-identifier (numeric ones with a
        declared ``domain``, categorical ones with a hierarchy), one sensitive attribute with a fixed domain
        (categorical with a hierarchy: hierarchical EMD; numeric or ordinal: ordered EMD over the whole domain,
        taken from ``sa_values``, the ordinal ``order``, a numeric hierarchy's leaves or a Table template), and an
        optional ``time`` attribute giving the positions (strictly increasing integers; default 1, 2, ...).
    omega : int
        Window size in tuples: ``omega >= k`` and a multiple of ``interval`` (``omega = j I``, thesis §6.2).
    interval : int
        Slide I in tuples, ``1 <= I <= omega``.
    t : float
        Closeness threshold in ``(0, 1]``.
    k : int, default=6
        Distinct persons per published class (the thesis's experiments use 6).
    rng : int, numpy.random.Generator or None, default=None
        Seeds SABRE's seed-tuple choices; same seed, same output.
    baseline : {'sabre', 'tmondrian', 'tincognito'}, default='sabre'
        The partitioner at each DIRECT: SABRE (SABRE_W), tMondrian (tMondrian_W) or tIncognito (tIncognito_W).
    sensitive : str, default=None
        The sensitive attribute when the schema declares several.
    sa_values : sequence, default=None
        The ordered domain of a numeric/ordinal sensitive attribute.
    method : {'ak', 'knn'}, default='ak'
        SABRE only: SABRE-AK (neighbours along the Hilbert curve, the thesis's choice for SABRE_W) or SABRE-KNN
        (exact Euclidean nearest neighbours in the normalised QI space; slower, lower information loss).
    slices : bool, default=False
        SABRE-AK only: Hilbert slicing retrieval instead of seeded SABRE-AK (deterministic; see docs/sabre.md).

    Attributes
    ----------
    n_arrivals_ : int
    n_pending_ : int
        Tuples received and not yet published or suppressed (at most ``omega + interval``).
    case_log_ : list of (int, str, float)
        Per slide: window start (arrival index), case (``'nothing'``, ``'direct'``, ``'indirect'``) and D.
    closed_ : bool

    Notes
    -----
    Resolutions of the spec's open points (A30-A37) are in ``docs/sabre_w.md``: one global ground distance,
    person-aware merge of SABRE's classes (spec §3.6), suppression when fewer than k persons remain, and an
    end-of-stream flush. The checkpoint format is in ``docs/castle.md``.

    References
    ----------
    J. Cao. Privacy-Preserving Data Publication for Static and Streaming Data. PhD thesis, NUS, 2010, ch. 6.
    J. Cao, P. Karras, P. Kalnis, K.-L. Tan. SABRE. The VLDB Journal 20:59-81, 2011.

    Examples
    --------
    >>> import numpy as np
    >>> from anoncore import Schema
    >>> from anoncore.stream import SabreW
    >>> schema = Schema.build({"age": {"kind": "numeric", "domain": (0, 99)}},
    ...                       sensitive={"salary": {"kind": "ordinal", "order": (1, 2, 3, 4)}}, pid="pid")
    >>> rng = np.random.default_rng(0)
    >>> batch = {"age": rng.integers(0, 100, 400), "salary": rng.integers(1, 5, 400), "pid": np.arange(400)}
    >>> s = SabreW(schema, omega=100, interval=50, t=0.3, k=4, rng=0)
    >>> out = s.push(batch)
    >>> rest = s.flush()
    >>> len(out) + len(rest), out.n_suppressed + rest.n_suppressed
    (400, 0)
    >>> int(out.classes.shape[0] > 0)
    1
    """

    _caller = "SabreW"
    _default_baseline = "sabre"
    _drv: _Driver
    _params: dict[str, Any]
    _bits: int

    def __init__(self, schema: Schema | Table, omega: int, interval: int, t: float, k: int = 6, *,
                 rng: int | np.random.Generator | None = None, baseline: str | None = None,
                 sensitive: str | None = None, sa_values: Any = None, method: str = "ak",
                 slices: bool = False) -> None:
        c = self._caller
        if baseline is None:
            baseline = self._default_baseline
        params = _check_params(c, omega=omega, interval=interval, t=t, k=k, baseline=baseline, method=method,
                               slices=slices)
        omega, interval, t, k = params["omega"], params["interval"], params["t"], params["k"]
        check_rng(rng, c)
        spec = _WSpec.build(schema, sensitive, sa_values, c)
        if baseline == "tincognito":
            bad = [n for n, h in zip(spec.numeric, spec.num_hier) if h is None]
            if bad:
                raise ValueError(f"baseline='tincognito' (full-domain generalization) needs a hierarchy for every "
                                 f"quasi-identifier; numeric {bad[0]!r} has none.")
        gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        gen = np.random.default_rng(int(gen.integers(0, 2**63 - 1)))  # own generator: never share the caller's
        self._drv = _Driver(spec, omega, interval, float(t), k, gen)
        self._params = {**params, "sensitive": spec.sensitive}
        self._bits = spec.hilbert_bits()

    # ------------------------------------------------------------------ state
    @property
    def params(self) -> dict[str, Any]:
        return dict(self._params)

    @property
    def n_arrivals_(self) -> int:
        return self._drv.n_arrivals

    @property
    def n_pending_(self) -> int:
        return int((~self._drv.buf["done"]).sum())

    @property
    def case_log_(self) -> list[tuple[int, str, float]]:
        return list(self._drv.case_log)

    @property
    def closed_(self) -> bool:
        return self._drv.closed

    @property
    def metric(self) -> GroundMetric:
        """The fixed ground distance of the sensitive domain (for checkers)."""
        return self._drv.metric

    @property
    def sa_values(self) -> tuple[Any, ...]:
        return self._drv.spec.sa_values

    def __repr__(self) -> str:
        p = self._params
        return (f"{type(self).__name__}(omega={p['omega']}, interval={p['interval']}, t={p['t']}, k={p['k']}, "
                f"baseline={p['baseline']!r}, arrivals={self.n_arrivals_}, pending={self.n_pending_})")

    # ------------------------------------------------------------------ stream
    def push(self, batch: Any) -> SabreWRelease:
        """Append a batch of tuples; returns the tuples published or suppressed while processing it.

        Parameters
        ----------
        batch : pandas.DataFrame, pyarrow RecordBatch/Table, numpy structured array or mapping of str to 1-D array
            The quasi-identifiers, the pid column, the time column if declared, and the sensitive/insensitive
            columns. The batch is validated completely before any tuple enters the algorithm.

        Raises
        ------
        RuntimeError
            After :meth:`flush`.
        ValueError
            Missing column, missing person id, value outside its domain or unknown categorical value,
            positions not strictly increasing.
        """
        d = self._drv
        if d.closed:
            raise RuntimeError(f"{self._caller}.push was called after flush(): the stream is closed.")
        df = as_frame(batch, self._caller)
        enc = d.spec.encode(df, d.last_position, d.pid_state)
        out: list[dict[str, Any]] = []
        n = enc["position"].size
        if n:
            keys = _core.sabre_w.hilbert_keys(d.spec.coords(enc["num"], enc["cat"]), self._bits)
            start = 0
            while start < n:  # cut the batch at slide points so that every slide sees exactly its arrivals
                stop = min(n, start + d.next_slide_at() - d.n_arrivals)
                part = {key: (v[start:stop] if key != "columns" else {c: a[start:stop] for c, a in v.items()})
                        for key, v in enc.items()}
                d.append(part, keys[start:stop])
                d.run_slides(self._partition, out)
                start = stop
        return self._release(out)

    def flush(self) -> SabreWRelease:
        """End of stream (spec A30): the pending tuples are published or suppressed; the stream is closed.

        The current window's slide runs if the window is complete; then the last ``omega`` arrivals form the final
        window: DIRECT on its pending tuples if ``D < t`` (after releasing the last DIRECT's classes if ``D >= t``);
        whatever still cannot be published with ``k`` persons is suppressed.
        """
        d = self._drv
        if d.closed:
            raise RuntimeError(f"{self._caller}.flush was called twice: the stream is closed.")
        out: list[dict[str, Any]] = []
        d.flush(self._partition, out)
        d.closed = True
        return self._release(out)

    # ------------------------------------------------------------------ partitioners
    def _partition(self, d: _Driver, rows: NDArray[np.int64], tp: float, seed: int) -> NDArray[np.int64] | None:
        b = d.buf
        pids = np.ascontiguousarray(b["pid"][rows])
        if self._params["baseline"] == "sabre":
            knn = self._params["method"] == "knn"
            coords = d.spec.coords(b["num"][rows], b["cat"][rows]) if knn else np.empty((0, 0))
            res = _core.sabre_w.window_sabre(np.ascontiguousarray(b["sa"][rows]), d.m, d.metric.arrays(),
                                             np.ascontiguousarray(b["key"][rows]), pids, tp, d.k, seed,
                                             self._params["slices"], coords, knn)
            return res["labels"] if res["feasible"] else None
        labels = _static_partition(d, rows, tp, self._params["baseline"])
        n_lab = int(labels.max()) + 1 if labels.size else 0
        groups = _core.sabre_w.merge_for_persons(labels, n_lab, pids, d.k)
        return labels if groups >= 0 else None

    # ------------------------------------------------------------------ output
    def _release(self, evs: list[dict[str, Any]]) -> SabreWRelease:
        spec = self._drv.spec
        dn, dc = len(spec.numeric), len(spec.categorical)
        if evs:
            parts = [_generalize(spec, ev) for ev in evs]
            cat = {key: np.concatenate([p[key] for p in parts]) for key in parts[0] if key != "columns"}
            cols = {c: np.concatenate([p["columns"][c] for p in parts]) for c in spec.passthrough}
            rows = [r for ev in evs for r in ev.get("class_rows", [])]
        else:
            i64 = np.empty(0, np.int64)
            cat = {"position": i64, "arrival": i64, "pid": i64, "sa": np.empty(0, np.int32), "ec": i64,
                   "case": np.empty(0, np.int8), "emitted_at": i64, "window_start": i64, "window_len": i64,
                   "num_lo": np.empty((0, dn)), "num_hi": np.empty((0, dn)), "cat_node": np.empty((0, dc), np.int32),
                   "il": np.empty(0)}
            cols = {c: np.empty(0, dtype=object) for c in spec.passthrough}
            rows = []
        classes = pd.DataFrame(rows, columns=["ec", "window_start", "window_len", "t_used", "d", "case"])
        return SabreWRelease(
            position=_ro(cat["position"]), arrival=_ro(cat["arrival"]), suppressed=_ro(cat["case"] == CASES.index(
                "suppressed")), case=_ro(cat["case"]), ec=_ro(cat["ec"]), emitted_at=_ro(cat["emitted_at"]),
            window_start=_ro(cat["window_start"]), window_len=_ro(cat["window_len"]), num_lo=_ro(cat["num_lo"]),
            num_hi=_ro(cat["num_hi"]), cat_node=_ro(cat["cat_node"]), il=_ro(cat["il"]), sa=_ro(cat["sa"]),
            pid=_ro(cat["pid"]), columns={c: _ro(v) for c, v in cols.items()}, classes=classes,
            numeric_qi=spec.numeric, categorical_qi=spec.categorical, hierarchies=spec.hierarchies)

    # ------------------------------------------------------------------ checkpoint
    def checkpoint(self) -> bytes:
        """The whole state as versioned bytes; :meth:`restore` continues the stream from it.

        A process restarted from its last checkpoint re-pushes the tuples after it; with the same seed the output
        equals that of an uninterrupted run. The format is that of :meth:`Castle.checkpoint
        <anoncore.stream.Castle.checkpoint>` (docs/castle.md, "Checkpoints"): reading it runs no code.
        """
        return self._pack(keys_from=0)

    def _pack(self, keys_from: int) -> bytes:
        from anoncore import __version__

        d = self._drv
        w = _ckpt.Writer()
        d.spec.put_arrays(w)
        state: dict[str, Any] = {}
        d.dump(w, state, keys_from)
        return w.pack({
            "algorithm": _ALGORITHM[type(self).__name__], "anoncore_version": str(__version__),
            "params": {key: self._params[key] for key in _PARAM_KEYS}, "schema": d.spec.doc(),
            "schema_digest": d.spec.digest(), "input": {"rows": d.n_arrivals, "last_position": d.last_position},
            "state": state,
        })

    def _pid_keys(self) -> list[Any]:
        """The person-id dictionary's values in code order (the live list: append-only)."""
        out: list[Any] = self._drv.pid_state.setdefault("list", [])
        return out

    def _resume(self, state: bytes, keys: dict[str, list[Any]] | None) -> SabreW:
        """Restore ``state`` refusing other parameters or schema than this stream's (``anoncore stream``)."""
        return type(self)._unpack(state, self, keys)

    def _identity(self) -> dict[str, Any]:
        """What a resume must match: the parameters and the schema digest."""
        return {**{key: self._params[key] for key in _PARAM_KEYS}, "schema_digest": self._drv.spec.digest()}

    @classmethod
    def restore(cls, state: bytes, *, expect: SabreW | None = None) -> SabreW:
        """Rebuild from :meth:`checkpoint` bytes (a :class:`SabreW`, :class:`TMondrianW` or :class:`TIncognitoW`).

        ``expect``: a stream built with the schema and parameters this run means to use; the checkpoint is refused
        (:class:`~anoncore.stream.CheckpointError`, a ValueError) unless it was made with the same ones. Corrupt,
        truncated or out-of-range checkpoints raise the same error.
        """
        return cls._unpack(state, expect, None)

    @classmethod
    def _unpack(cls, state: Any, expect: SabreW | None, keys: dict[str, list[Any]] | None) -> SabreW:
        r = _ckpt.Reader(state, f"{cls._caller}.restore", "SabreW")
        algo = r.get_str("algorithm")
        name = next((n for n, a in _ALGORITHM.items() if a == algo), None)
        if name is None:
            r.fail(f"it is a checkpoint of {algo!r}, not of SabreW")
        raw = r.get("params", dict)
        if set(raw) != set(_PARAM_KEYS):
            r.fail("its parameters are not those of SabreW")
        try:
            params = _check_params(name, **raw)
        except (TypeError, ValueError) as exc:
            r.fail(f"its parameters are invalid ({exc})")
        spec = _WSpec.from_doc(r, r.get("schema", dict))
        if r.get_str("schema_digest") != spec.digest():
            r.fail("its schema does not match the schema digest of its header")
        if params["baseline"] == "tincognito" and any(h is None for h in spec.num_hier):
            r.fail("baseline 'tincognito' needs a hierarchy for every quasi-identifier")
        if expect is not None:
            if not isinstance(expect, SabreW):
                raise TypeError(f"The 'expect' parameter of {cls._caller}.restore must be a SabreW. "
                                f"Got {type(expect).__name__} instead.")
            _ckpt.check_expected(r, {**params, "schema_digest": spec.digest()}, expect._identity(),
                                 "parameters or schema")
        st = r.get("state", dict)
        drv = _Driver.load(r, st, spec, params["omega"], params["interval"], params["t"], params["k"], keys)
        inp = r.get("input", dict)
        if (r.get_int("rows", 0, 2**62, inp) != drv.n_arrivals
                or r.get_opt_int("last_position", -(2**63), 2**63 - 1, inp) != drv.last_position):
            r.fail("its input record disagrees with its state")
        klass = {"SabreW": SabreW, "TMondrianW": TMondrianW, "TIncognitoW": TIncognitoW}[name]
        obj = klass.__new__(klass)
        obj._drv = drv
        obj._params = {**params, "sensitive": spec.sensitive}
        obj._bits = spec.hilbert_bits()
        return obj


class TMondrianW(SabreW):
    """tMondrian_W: the tMondrian baseline in SABRE_W's window frame (``SabreW(..., baseline='tmondrian')``)."""

    _caller = "TMondrianW"
    _default_baseline = "tmondrian"


class TIncognitoW(SabreW):
    """tIncognito_W: the tIncognito baseline in SABRE_W's window frame (``SabreW(..., baseline='tincognito')``)."""

    _caller = "TIncognitoW"
    _default_baseline = "tincognito"


# ---------------------------------------------------------------------------------------------- internals
def _generalize(spec: _WSpec, ev: dict[str, Any]) -> dict[str, Any]:
    """Per-class minimal generalization (numeric [min, max], categorical LCA) and GLM IL of an event block."""
    n = ev["position"].size
    dn, dc = len(spec.numeric), len(spec.categorical)
    lo = np.full((n, dn), np.nan)
    hi = np.full((n, dn), np.nan)
    node = np.full((n, dc), -1, np.int32)
    il = np.full(n, np.nan)
    ec = ev["ec"]
    pub = ec >= 0
    if pub.any():
        idx = np.flatnonzero(pub)
        idx = idx[np.argsort(ec[idx], kind="stable")]  # rows grouped by class
        e = ec[idx]
        starts = np.flatnonzero(np.r_[True, e[1:] != e[:-1]])
        inv = np.cumsum(np.r_[False, e[1:] != e[:-1]])
        acc = np.zeros(idx.size)
        for j in range(dn):
            v = ev["num"][idx, j]
            mn = np.minimum.reduceat(v, starts)
            mx = np.maximum.reduceat(v, starts)
            lo[idx, j], hi[idx, j] = mn[inv], mx[inv]
            w = spec.dom_hi[j] - spec.dom_lo[j]
            acc += (mx[inv] - mn[inv]) / w if w > 0 else 0.0
        for j, h in enumerate(spec.hierarchies):
            v = ev["cat"][idx, j].astype(np.int64)
            mn = np.minimum.reduceat(v, starts)
            mx = np.maximum.reduceat(v, starts)
            nd = h.lca_of_leaf_range(mn, mx)
            node[idx, j] = nd[inv]
            cnt = np.asarray(h.leaf_count)[nd].astype(np.float64)
            acc += np.where(cnt > 1, cnt / h.n_leaves, 0.0)[inv]
        il[idx] = acc / max(dn + dc, 1)
    keys = ("position", "arrival", "pid", "sa", "ec", "case", "emitted_at", "window_start", "window_len")
    out = {key: ev[key] for key in keys}
    out.update(num_lo=lo, num_hi=hi, cat_node=node, il=il, columns=ev["columns"])
    return out


def _window_table(d: _Driver, rows: NDArray[np.int64]) -> Table:
    """The not-yet-output tuples as a static Table (for the baselines)."""
    spec = d.spec
    b = d.buf
    data: dict[str, Any] = {}
    attrs = []
    for j, (name, h) in enumerate(zip(spec.numeric, spec.num_hier)):
        v = b["num"][rows, j]
        data[name] = v.astype(np.int64) if np.all(v == np.round(v)) else v
        attrs.append(Attribute(name, "quasi_identifier", "numeric", hierarchy=h,
                               domain=(float(spec.dom_lo[j]), float(spec.dom_hi[j]))))
    for j, (name, h) in enumerate(zip(spec.categorical, spec.hierarchies)):
        data[name] = np.asarray(h.labels, dtype=object)[b["cat"][rows, j]]
        attrs.append(Attribute(name, "quasi_identifier", "categorical", hierarchy=h))
    sa_name = "__sa__"
    codes = b["sa"][rows]
    if spec.sa_hierarchy is not None:
        data[sa_name] = np.asarray(spec.sa_hierarchy.labels, dtype=object)[codes]
        attrs.append(Attribute(sa_name, "sensitive", "categorical", hierarchy=spec.sa_hierarchy))
    else:
        data[sa_name] = codes.astype(np.int64)
        attrs.append(Attribute(sa_name, "sensitive", "ordinal", order=tuple(range(len(spec.sa_values)))))
    return Table.from_pandas(pd.DataFrame(data), Schema(tuple(attrs)))


def _static_partition(d: _Driver, rows: NDArray[np.int64], tp: float, baseline: str) -> NDArray[np.int64]:
    """Labels of a static baseline on the rows, verified under the global metric (retrying with a smaller
    threshold, finally one class, if the baseline's own metric over the present values let a class through)."""
    from anoncore.models import HierarchicalDistanceTCloseness, KAnonymity, OrderedDistanceTCloseness
    from anoncore.static.lattice import t_incognito
    from anoncore.static.mondrian import tmondrian
    from anoncore.static.sabre import closeness_model

    n = rows.size
    table = _window_table(d, rows)
    kk = min(d.k, n)
    sa = d.buf["sa"][rows]
    ref = np.bincount(sa, minlength=d.m)
    t_try = tp
    for _ in range(4):
        if baseline == "tmondrian":
            res = tmondrian(table, [KAnonymity(kk), closeness_model(table, t_try)])
        else:
            tmodel = HierarchicalDistanceTCloseness if d.spec.sa_hierarchy is not None else OrderedDistanceTCloseness
            res = t_incognito(table, [KAnonymity(kk), tmodel(t_try)])
        labels = np.asarray(res.partition.labels, dtype=np.int64)
        uniq, lab = np.unique(labels, return_inverse=True)
        hist = np.zeros((uniq.size, d.m), np.int64)
        np.add.at(hist, (lab, sa), 1)
        if np.all(d.metric.emd(hist, ref) <= tp + 1e-12):
            return np.ascontiguousarray(lab, dtype=np.int64)
        t_try /= 2
    return np.zeros(n, np.int64)
