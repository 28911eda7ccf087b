"""The window frame of SABRE_W (Cao thesis §6.3, spec streams-castle-sabrew.md §3.2-3.3, A30-A37).

Shared by SABRE_W and the window baselines (tMondrian_W, tIncognito_W): the algorithms differ only in the
partitioner called at step 15 ("S_G <- SABRE(R(W, o-bar), SA, t - D)"). This module holds

* :class:`_WSpec`: how batches are encoded (quasi-identifiers, person id, positions, the *global* sensitive
  domain that fixes the ground distance of every EMD, spec A31);
* the global EMD (ordered ``|i - j| / (m - 1)`` over the whole domain, or hierarchical ``h(LCA) / h(H)``);
* :class:`_Driver`: the buffered window, the three cases per slide, the end-of-stream flush and the event log.

Window arithmetic (0-based arrival indices): window ``r`` is ``[r I, r I + omega)``; its slide runs when arrival
``omega + (r + 1) I`` has been processed (the I new tuples are complete, A34) and must output every not yet output
tuple of ``[r I, r I + I)``. So a tuple leaves at most ``omega + I - 1`` arrivals after its own (Lemma 6.1).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from anoncore import _core
from anoncore.data.hierarchy import Hierarchy
from anoncore.data.schema import Schema
from anoncore.data.table import Table
from anoncore.stream import _checkpoint as _ckpt
from anoncore.stream._common import (
    batch_positions,
    encode_batch_qis,
    map_labels,
    resolve_stream_schema,
)

#: Case of every emitted tuple (index stored in the release): DIRECT, INDIRECT, end-of-stream DIRECT/INDIRECT,
#: suppressed.
CASES = ("direct", "indirect", "flush", "suppressed")
_DIRECT, _INDIRECT, _FLUSH, _SUPPRESSED = range(4)
#: Kind of every slide in the case log.
SLIDE_CASES = ("nothing", "direct", "indirect")

_TOL = 1e-12


# ---------------------------------------------------------------------------------------------- global EMD
@dataclass(frozen=True)
class GroundMetric:
    """The fixed ground distance of the sensitive domain: ordered over ``m`` codes, or a hierarchy's."""

    m: int
    hierarchy: Hierarchy | None = None

    def emd(self, q: NDArray[Any], p: NDArray[Any]) -> NDArray[np.float64]:
        """EMD between count histograms ``q`` (rows, m) or (m,) and reference counts ``p`` (m,)."""
        q = np.asarray(q, dtype=np.float64)
        one = q.ndim == 1
        q2 = np.atleast_2d(q)
        qs = q2.sum(axis=1, keepdims=True)
        qs[qs == 0] = 1.0
        qn = q2 / qs
        p = np.asarray(p, dtype=np.float64)
        pn = p / max(p.sum(), 1.0)
        diff = qn - pn  # extra mass of the class per value
        if self.hierarchy is None:
            if self.m <= 1:
                out = np.zeros(q2.shape[0])
            else:
                out = np.abs(np.cumsum(diff, axis=1)[:, :-1]).sum(axis=1) / (self.m - 1)
        else:
            out = _emd_hier(diff, self.hierarchy)
        return out[0] if one else out

    def arrays(self) -> tuple[NDArray[np.int32], ...] | None:
        h = self.hierarchy
        if h is None:
            return None
        return tuple(np.ascontiguousarray(a, dtype=np.int32) for a in (h.parent, h.node_height, h.leaf_start,
                                                                          h.leaf_count))


def _emd_hier(diff: NDArray[np.float64], h: Hierarchy) -> NDArray[np.float64]:
    """Hierarchical EMD (thesis Ch. 3): sum over internal nodes of h(n)/h(H) * min(pos extra, neg extra)."""
    H = int(h.node_height[-1])
    if H <= 0:
        return np.zeros(diff.shape[0])
    cs = np.concatenate([np.zeros((diff.shape[0], 1)), np.cumsum(diff, axis=1)], axis=1)
    ls = np.asarray(h.leaf_start, dtype=np.int64)
    lc = np.asarray(h.leaf_count, dtype=np.int64)
    extra = cs[:, ls + lc] - cs[:, ls]  # (rows, n_nodes): extra mass under every node
    par = np.asarray(h.parent, dtype=np.int64)
    child = np.flatnonzero(par >= 0)
    pos = np.zeros_like(extra)
    neg = np.zeros_like(extra)
    e = extra[:, child]
    np.add.at(pos.T, par[child], np.maximum(e, 0.0).T)
    np.add.at(neg.T, par[child], np.maximum(-e, 0.0).T)
    hw = np.asarray(h.node_height, dtype=np.float64) / H
    return (hw * np.minimum(pos, neg)).sum(axis=1)  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------------------- encoding
@dataclass
class _WSpec:
    """How batches are encoded; resolved once from the schema (or a Table template)."""

    caller: str
    numeric: tuple[str, ...]
    categorical: tuple[str, ...]
    hierarchies: tuple[Hierarchy, ...]
    num_hier: tuple[Hierarchy | None, ...]
    dom_lo: NDArray[np.float64]
    dom_hi: NDArray[np.float64]
    pid: str
    time: str | None
    sensitive: str
    sa_kind: str  # 'ordered' or 'hierarchical'
    sa_values: tuple[Any, ...]  # ordered: the domain in order (numbers or labels); hierarchical: leaf labels
    sa_hierarchy: Hierarchy | None
    sa_numeric: bool
    passthrough: tuple[str, ...]

    @property
    def metric(self) -> GroundMetric:
        return GroundMetric(len(self.sa_values), self.sa_hierarchy)

    @classmethod
    def build(cls, schema: Schema | Table, sensitive: str | None, sa_values: Any, caller: str) -> _WSpec:
        q = resolve_stream_schema(schema, caller)
        table, sch = q.table, q.schema
        sa = sch.sensitive_column(sensitive, caller)
        a = sch[sa]
        sah: Hierarchy | None = None
        values: tuple[Any, ...]
        sa_numeric = a.kind == "numeric"
        if sa_values is not None:
            if a.kind == "categorical":
                raise ValueError(f"sa_values is for an ordered (numeric or ordinal) sensitive attribute; {sa!r} is "
                                 f"categorical (its hierarchy fixes the domain).")
            values = tuple(sa_values)
            if not values:
                raise ValueError("sa_values must list at least one value.")
        elif a.kind == "categorical":
            if a.hierarchy is None:
                raise ValueError(f"{caller} needs a hierarchy for the categorical sensitive attribute {sa!r} (the "
                                 f"ground distance of the EMD is height(LCA) / height(root)); or declare it "
                                 f"ordinal with an order.")
            sah = a.hierarchy
            values = tuple(a.hierarchy.leaves)
        elif a.kind == "ordinal" and a.order is not None:
            values = tuple(a.order)
        elif a.hierarchy is not None:
            values = tuple(a.hierarchy.leaves)
        elif table is not None:
            values = tuple(np.asarray(table.dictionary(sa)).tolist())
        else:
            raise ValueError(f"The sensitive attribute {sa!r} needs a fixed domain for a stream (the EMD's ground "
                             f"distance must not change between windows, spec A31): give sa_values=..., an order "
                             f"(ordinal), a hierarchy, or a Table template.")
        if sa_numeric:
            try:
                nums = sorted({float(v) for v in values})
            except (TypeError, ValueError):
                raise ValueError(f"The domain of the numeric sensitive attribute {sa!r} must be numbers.") from None
            values = tuple(nums)
        return cls(caller, q.numeric, q.categorical, q.hierarchies, q.numeric_hierarchies, q.dom_lo, q.dom_hi, q.pid,
                   q.time, sa, "hierarchical" if sah is not None else "ordered", values, sah, sa_numeric,
                   q.passthrough)

    # ---------------------------------------------------------------- checkpoint
    def doc(self) -> dict[str, Any]:
        """The JSON description of the spec in a checkpoint (hierarchy parents are payload arrays)."""
        def hd(h: Hierarchy | None, name: str) -> dict[str, Any] | None:
            return None if h is None else _ckpt.hierarchy_doc(h, name)

        return {"caller": self.caller, "numeric": list(self.numeric), "categorical": list(self.categorical),
                "hierarchies": [hd(h, f"schema.h{j}") for j, h in enumerate(self.hierarchies)],
                "num_hier": [hd(h, f"schema.nh{j}") for j, h in enumerate(self.num_hier)],
                "dom_lo": self.dom_lo.tolist(), "dom_hi": self.dom_hi.tolist(), "pid": self.pid, "time": self.time,
                "sensitive": self.sensitive, "sa_kind": self.sa_kind,
                "sa_values": _ckpt.json_values(list(self.sa_values), "the sensitive domain"),
                "sa_hierarchy": hd(self.sa_hierarchy, "schema.sa"), "sa_numeric": self.sa_numeric,
                "passthrough": list(self.passthrough)}

    def put_arrays(self, w: _ckpt.Writer) -> None:
        for j, h in enumerate(self.hierarchies):
            _ckpt.put_hierarchy(w, h, f"schema.h{j}")
        for j, nh in enumerate(self.num_hier):
            if nh is not None:
                _ckpt.put_hierarchy(w, nh, f"schema.nh{j}")
        if self.sa_hierarchy is not None:
            _ckpt.put_hierarchy(w, self.sa_hierarchy, "schema.sa")

    def digest(self) -> str:
        return _ckpt.spec_digest(self.doc(), [*self.hierarchies, *self.num_hier, self.sa_hierarchy])

    @classmethod
    def from_doc(cls, r: _ckpt.Reader, doc: dict[str, Any]) -> _WSpec:
        caller = r.get_str("caller", ("SabreW", "TMondrianW", "TIncognitoW"), doc)
        numeric, categorical = r.names("numeric", doc), r.names("categorical", doc)
        hs, nh = r.get("hierarchies", list, doc), r.get("num_hier", list, doc)
        if len(hs) != len(categorical) or len(nh) != len(numeric) or not numeric + categorical:
            r.fail("its schema has no quasi-identifier or not one hierarchy per quasi-identifier")
        hier = tuple(_ckpt.get_hierarchy(r, h, repr(n)) for h, n in zip(hs, categorical))
        num_hier = tuple(None if h is None else _ckpt.get_hierarchy(r, h, repr(n)) for h, n in zip(nh, numeric))
        lo, hi = r.get("dom_lo", list, doc), r.get("dom_hi", list, doc)
        if len(lo) != len(numeric) or len(hi) != len(numeric) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in [*lo, *hi]):
            r.fail("its schema's numeric domains are malformed")
        dom_lo, dom_hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
        if np.any(dom_lo > dom_hi):
            r.fail("its schema has a numeric domain with L > U")
        pid, sa = r.get_str("pid", where=doc), r.get_str("sensitive", where=doc)
        time = doc.get("time")
        passthrough = r.names("passthrough", doc)
        kind = r.get_str("sa_kind", ("ordered", "hierarchical"), doc)
        sa_numeric = r.get_bool("sa_numeric", doc)
        values = tuple(_ckpt.get_values(r, r.get("sa_values", list, doc), "sensitive domain"))
        sah_doc = doc.get("sa_hierarchy")
        sah = None if sah_doc is None else _ckpt.get_hierarchy(r, sah_doc, repr(sa))
        if (not isinstance(time, (str, type(None))) or sa not in passthrough or not values
                or (kind == "hierarchical") != (sah is not None)
                or (sah is not None and values != tuple(sah.leaves))
                or (sa_numeric and not all(isinstance(v, float) for v in values))):
            r.fail("its schema's time or sensitive column is malformed")
        names = [*numeric, *categorical, pid, *([time] if time else []), *passthrough]
        if len(set(names)) != len(names):
            r.fail("its schema names a column twice")
        return cls(caller, numeric, categorical, hier, num_hier, dom_lo, dom_hi, pid, time, sa, kind, values, sah,
                   sa_numeric, passthrough)

    def sa_lookup(self) -> dict[Any, int]:
        if self.sa_numeric:
            return {float(v): i for i, v in enumerate(self.sa_values)}
        return {str(v): i for i, v in enumerate(self.sa_values)}

    def encode(self, df: pd.DataFrame, last: int | None, pid_state: dict[str, Any]) -> dict[str, Any]:
        """Validate and encode a whole batch (nothing is consumed when it raises)."""
        c = self.caller
        num, cat = encode_batch_qis(df, self, c)
        n = len(df)
        sa_col = df[self.sensitive]
        if self.sa_numeric:
            v = pd.to_numeric(sa_col, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
            uniq, inv = np.unique(v, return_inverse=True)
            lut = self.sa_lookup()
            mapped = np.empty(uniq.size, dtype=np.int32)
            for u, val in enumerate(uniq):
                code = lut.get(float(val))
                if code is None:
                    i = int(np.flatnonzero(inv == u)[0])
                    raise ValueError(f"Value {sa_col.iloc[i]!r} of the sensitive column {self.sensitive!r} (batch row "
                                     f"{i}) is not in its declared domain (unknown value mid-stream; the batch was not "
                                     f"consumed).")
                mapped[u] = code
            sa = mapped[inv.reshape(-1)] if n else np.empty(0, np.int32)
        else:
            sa = map_labels(sa_col, self.sa_lookup(), self.sensitive, "the declared sensitive domain")
        pid = _encode_pid(df[self.pid], pid_state, c)
        pos = batch_positions(df, self.time, last)
        cols = {x: df[x].to_numpy() for x in self.passthrough}
        return {"position": pos, "pid": pid, "sa": np.ascontiguousarray(sa, dtype=np.int32), "num": num,
                "cat": cat, "columns": cols}

    def coords(self, num: NDArray[np.float64], cat: NDArray[np.int32]) -> NDArray[np.float64]:
        """Normalised QI coordinates in [0, 1] (spec sabre-burel §3.4): numeric (v-L)/(U-L), categorical leaf rank."""
        parts = []
        for j in range(len(self.numeric)):
            w = self.dom_hi[j] - self.dom_lo[j]
            parts.append((num[:, j] - self.dom_lo[j]) / w if w > 0 else np.zeros(num.shape[0]))
        for j, h in enumerate(self.hierarchies):
            parts.append(cat[:, j] / max(h.n_leaves - 1, 1))
        return np.ascontiguousarray(np.stack(parts, axis=1), dtype=np.float64)

    def hilbert_bits(self) -> int:
        d = min(len(self.numeric) + len(self.categorical), 64)
        card = max([1024] * bool(self.numeric) + [h.n_leaves for h in self.hierarchies] + [2])
        need = max(1, math.ceil(math.log2(card)))
        return int(max(1, min(need, 64 // d, 32)))


def _encode_pid(s: pd.Series, st: dict[str, Any], caller: str) -> NDArray[np.int64]:
    if s.isna().any():
        i = int(np.flatnonzero(s.isna().to_numpy())[0])
        raise ValueError(f"The pid column {s.name!r} has a missing value at batch row {i} ({caller} counts distinct "
                         f"persons; every tuple needs its person id).")
    integral = pd.api.types.is_integer_dtype(s.dtype)
    mode = "int" if integral else "map"
    if st.get("mode") is None:
        st["mode"] = mode
    elif st["mode"] != mode:
        raise TypeError(f"The pid column {s.name!r} changed type mid-stream (was {st['mode']}, now {mode}).")
    if integral:
        return np.ascontiguousarray(s.to_numpy(), dtype=np.int64)
    codes, uniq = pd.factorize(s)
    pmap = st.setdefault("map", {})
    plist = st.setdefault("list", [])  # the values in code order (checkpoints append only the new ones)
    ids = np.empty(len(uniq), dtype=np.int64)
    for u, val in enumerate(uniq):
        n0 = len(pmap)
        ids[u] = code = pmap.setdefault(val, n0)
        if code == n0:
            plist.append(val)
    out: NDArray[np.int64] = ids[codes]
    return out


def as_frame(batch: Any, caller: str) -> pd.DataFrame:
    if isinstance(batch, pd.DataFrame):
        return batch
    if isinstance(batch, Mapping):
        lens = {k: len(v) for k, v in batch.items()}
        if len(set(lens.values())) > 1:
            raise ValueError(f"Columns of the batch have different lengths: {lens}.")
        return pd.DataFrame({k: np.asarray(v) for k, v in batch.items()})
    mod = type(batch).__module__
    if mod.startswith("pyarrow") and hasattr(batch, "to_pandas"):
        frame: pd.DataFrame = batch.to_pandas()
        return frame
    if isinstance(batch, np.ndarray) and batch.dtype.names:
        return pd.DataFrame({k: batch[k] for k in batch.dtype.names})
    raise TypeError(f"{caller}.push expects a pandas DataFrame, a pyarrow RecordBatch/Table, a numpy structured "
                    f"array or a mapping of arrays. Got {type(batch).__name__} instead.")


# ---------------------------------------------------------------------------------------------- driver
#: A partitioner gets (buffer rows of R(W, o-bar), threshold t', a 64-bit seed) and returns class labels
#: 0..n-1 per row (every class t'-close to the rows' SA distribution under the global metric and with >= k
#: distinct pids), or None when the rows hold fewer than k distinct persons.
Partitioner = Callable[["_Driver", NDArray[np.int64], float, int], "NDArray[np.int64] | None"]

_BUF_NUM = ("pos", "arr", "pid", "sa", "key", "done")


class _Driver:
    """Buffered window, three cases per slide, flush; emits event dicts (columnar)."""

    def __init__(self, spec: _WSpec, omega: int, interval: int, t: float, k: int, seed_rng: np.random.Generator):
        self.spec = spec
        self.omega = omega
        self.interval = interval
        self.t = t
        self.k = k
        self.rng = seed_rng
        self.metric = spec.metric
        self.m = self.metric.m
        dn, dc = len(spec.numeric), len(spec.categorical)
        self.buf: dict[str, Any] = {
            "pos": np.empty(0, np.int64), "arr": np.empty(0, np.int64), "pid": np.empty(0, np.int64),
            "sa": np.empty(0, np.int32), "key": np.empty(0, np.uint64), "done": np.empty(0, bool),
            "num": np.empty((0, dn)), "cat": np.empty((0, dc), np.int32),
            "cols": {c: np.empty(0, dtype=object) for c in spec.passthrough},
        }
        self.n_arrivals = 0      # tuples received so far
        self.base = 0            # arrival index of buffer row 0
        self.slides = 0          # slides done (window r = slides starts at slides * I)
        self.last_position: int | None = None
        self.pid_state: dict[str, Any] = {}
        # S_G of the last DIRECT: arrival indices, labels (global class ids), window start/len, threshold.
        self.sg_arr = np.empty(0, np.int64)
        self.sg_lab = np.empty(0, np.int64)
        self.sg_info: dict[int, tuple[int, int, float, float]] = {}
        self.next_ec = 0
        self.case_log: list[tuple[int, str, float]] = []  # (window start, case, D)
        self.closed = False

    # ---------------------------------------------------------------- checkpoint
    def dump(self, w: _ckpt.Writer, st: dict[str, Any], keys_from: int) -> None:
        """Into a checkpoint: JSON fields in ``st``, arrays in ``w`` (Hilbert keys are recomputed on restore)."""
        b = self.buf
        for key in ("pos", "arr", "pid", "sa", "done", "num", "cat"):
            w.array(f"buf.{key}", b[key])
        cst: dict[str, Any] = {}
        for c in self.spec.passthrough:
            _ckpt.put_column(w, cst, f"buf.col.{c}", b["cols"][c], f"column {c!r}")
        st["columns"] = cst
        st["rng"] = self.rng.bit_generator.state
        st.update(n_arrivals=self.n_arrivals, base=self.base, slides=self.slides, last_position=self.last_position,
                  next_ec=self.next_ec, closed=self.closed,
                  sg_info=[[ec, *info] for ec, info in sorted(self.sg_info.items())],
                  case_log=[list(x) for x in self.case_log])
        w.array("sg.arr", self.sg_arr)
        w.array("sg.lab", self.sg_lab)
        keys = self.pid_state.get("list", [])
        st["pid"] = {"mode": self.pid_state.get("mode"), "from": keys_from,
                     "keys": _ckpt.plain_values(keys[keys_from:], "the pid dictionary"), "n": len(keys)}

    @classmethod
    def load(cls, r: _ckpt.Reader, st: dict[str, Any], spec: _WSpec, omega: int, interval: int, t: float, k: int,
             keys: dict[str, list[Any]] | None) -> _Driver:
        """From a checkpoint, every field checked (sensitive codes and QI values before any kernel sees them)."""
        rng = np.random.Generator(np.random.PCG64())
        state = r.get("rng", dict, st)
        if state.get("bit_generator") != "PCG64":
            r.fail("its random generator is not PCG64")
        try:
            rng.bit_generator.state = state
        except (TypeError, ValueError, KeyError, OverflowError) as exc:
            r.fail(f"its random generator state is invalid ({exc})")
        d = cls(spec, omega, interval, t, k, rng)
        d.n_arrivals = r.get_int("n_arrivals", 0, 2**62, st)
        d.base = r.get_int("base", 0, d.n_arrivals, st)
        d.slides = r.get_int("slides", 0, 2**62, st)
        d.closed = r.get_bool("closed", st)
        d.last_position = r.get_opt_int("last_position", -(2**63), 2**63 - 1, st)
        due = max(0, (d.n_arrivals - omega) // interval)
        if not d.closed and (d.slides != due or d.base != min(d.slides * interval, d.n_arrivals)):
            r.fail(f"its window counters (arrivals {d.n_arrivals}, slides {d.slides}, base {d.base}) disagree")
        n = d.n_arrivals - d.base
        dn, dc = len(spec.numeric), len(spec.categorical)
        b = d.buf
        b["pos"] = r.array("buf.pos", np.int64, (n,))
        b["arr"] = r.array("buf.arr", np.int64, (n,))
        b["pid"] = r.array("buf.pid", np.int64, (n,))
        b["sa"] = r.array("buf.sa", np.int32, (n,))
        b["done"] = r.array("buf.done", np.bool_, (n,))
        b["num"] = r.array("buf.num", np.float64, (n, dn))
        b["cat"] = r.array("buf.cat", np.int32, (n, dc))
        r.increasing("buf.pos", b["pos"])
        if not np.array_equal(b["arr"], np.arange(d.base, d.n_arrivals, dtype=np.int64)):
            r.fail("its buffered arrival indices are not consecutive")
        if (d.last_position is None) != (d.n_arrivals == 0) or (n and d.last_position != int(b["pos"][-1])):
            r.fail("its last position disagrees with the buffer")
        if np.any((b["sa"] < 0) | (b["sa"] >= d.m)):
            r.fail("a buffered sensitive code is outside the sensitive domain")
        if dn and not np.all((b["num"] >= spec.dom_lo) & (b["num"] <= spec.dom_hi)):
            r.fail("a buffered numeric value is outside its domain")
        for j, h in enumerate(spec.hierarchies):
            if np.any((b["cat"][:, j] < 0) | (b["cat"][:, j] >= h.n_leaves)):
                r.fail("a buffered categorical code is outside its hierarchy")
        cst = r.get("columns", dict, st)
        if set(cst) != {f"buf.col.{c}" for c in spec.passthrough}:
            r.fail("its buffer does not hold the published columns")
        b["cols"] = {c: _ckpt.get_column(r, cst, f"buf.col.{c}", n) for c in spec.passthrough}
        b["key"] = _core.sabre_w.hilbert_keys(spec.coords(b["num"], b["cat"]), spec.hilbert_bits()) if n else \
            np.empty(0, np.uint64)
        d.next_ec = r.get_int("next_ec", 0, 2**62, st)
        d.sg_arr = r.array("sg.arr", np.int64, (None,))
        d.sg_lab = r.array("sg.lab", np.int64, (d.sg_arr.size,))
        rows = d.sg_arr - d.base
        if np.any((rows < 0) | (rows >= n)) or np.unique(d.sg_arr).size != d.sg_arr.size or (
                rows.size and b["done"][rows].any()) or np.any((d.sg_lab < 0) | (d.sg_lab >= d.next_ec)):
            r.fail("its pending classes point outside the buffer or at published tuples")
        info = r.get("sg_info", list, st)
        for e in info:
            ok = isinstance(e, list) and len(e) == 5 and all(isinstance(x, int) and not isinstance(x, bool)
                                                              for x in e[:3]) and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) for x in e[3:])
            if not ok or not 0 <= e[0] < d.next_ec or e[0] in d.sg_info:
                r.fail("its class window records are malformed")
            d.sg_info[e[0]] = (e[1], e[2], float(e[3]), float(e[4]))
        if not set(np.unique(d.sg_lab).tolist()) <= set(d.sg_info):
            r.fail("a pending class has no window record")
        log = r.get("case_log", list, st)
        for e in log:
            if (not isinstance(e, list) or len(e) != 3 or not isinstance(e[0], int) or isinstance(e[0], bool)
                    or e[1] not in SLIDE_CASES or not isinstance(e[2], (int, float)) or isinstance(e[2], bool)):
                r.fail("its case log is malformed")
            d.case_log.append((e[0], e[1], float(e[2])))
        ps = r.get("pid", dict, st)
        mode = ps.get("mode")
        start = r.get_int("from", 0, 2**62, ps)
        vals = r.get("keys", list, ps)
        if keys is not None:
            vals = [*keys.get("pid", []), *vals]
        if mode not in (None, "int", "map") or len(vals) != r.get_int("n", 0, 2**62, ps) or (
                keys is None and start != 0) or (mode != "map" and vals):
            r.fail("its pid dictionary is inconsistent")
        if mode is not None:
            d.pid_state["mode"] = mode
        if mode == "map":
            d.pid_state["map"] = _ckpt.get_keys(r, vals, "pid", allow_none=False)
            d.pid_state["list"] = list(vals)
        return d

    # ---------------------------------------------------------------- buffer
    def append(self, enc: dict[str, Any], keys: NDArray[np.uint64]) -> None:
        n = enc["position"].size
        b = self.buf
        b["pos"] = np.concatenate([b["pos"], enc["position"]])
        b["arr"] = np.concatenate([b["arr"], np.arange(self.n_arrivals, self.n_arrivals + n, dtype=np.int64)])
        b["pid"] = np.concatenate([b["pid"], enc["pid"]])
        b["sa"] = np.concatenate([b["sa"], enc["sa"]])
        b["key"] = np.concatenate([b["key"], keys])
        b["done"] = np.concatenate([b["done"], np.zeros(n, bool)])
        b["num"] = np.concatenate([b["num"], enc["num"]])
        b["cat"] = np.concatenate([b["cat"], enc["cat"]])
        for c, v in enc["columns"].items():
            old = b["cols"][c]
            b["cols"][c] = np.concatenate([old, v]) if old.size else np.asarray(v)
        self.n_arrivals += n
        self.last_position = int(enc["position"][-1])

    def trim(self, upto: int) -> None:
        """Drop buffer rows with arrival index < upto (all of them are done)."""
        cut = upto - self.base
        if cut <= 0:
            return
        b = self.buf
        for key in ("pos", "arr", "pid", "sa", "key", "done", "num", "cat"):
            b[key] = b[key][cut:]
        for c in b["cols"]:
            b["cols"][c] = b["cols"][c][cut:]
        self.base = upto

    # ---------------------------------------------------------------- slides
    def next_slide_at(self) -> int:
        """Arrival count after which the next slide runs."""
        return self.omega + (self.slides + 1) * self.interval

    def run_slides(self, partition: Partitioner, out: list[dict[str, Any]]) -> None:
        while self.n_arrivals >= self.next_slide_at():
            self.slide(partition, out, at=self.next_slide_at())

    def slide(self, partition: Partitioner, out: list[dict[str, Any]], at: int, flush: bool = False) -> None:
        """One advance of window r = self.slides (Algorithm SABRE_W lines 5-25)."""
        ws = self.slides * self.interval
        w0 = ws - self.base
        w1 = w0 + self.omega
        e1 = w0 + self.interval
        done = self.buf["done"]
        if not (~done[w0:e1]).any():  # Case 1
            self.case_log.append((ws, "nothing", float("nan")))
        else:
            d = self._d(w0, w1)
            if d < self.t:
                self.case_log.append((ws, "direct", d))
                self._direct(partition, out, w0, w1, e1, d, at, _FLUSH if flush else _DIRECT)
            else:
                self.case_log.append((ws, "indirect", d))
                self._indirect(out, at, _FLUSH if flush else _INDIRECT, w0, e1)
        self.slides += 1
        # Keep the last omega arrivals (the end-of-stream window needs them for SA(W)).
        self.trim(min(self.slides * self.interval, max(self.n_arrivals - self.omega, 0)))

    def _d(self, w0: int, w1: int) -> float:
        sa = self.buf["sa"][w0:w1]
        ob = ~self.buf["done"][w0:w1]
        hw = np.bincount(sa, minlength=self.m)
        ho = np.bincount(sa[ob], minlength=self.m)
        return float(self.metric.emd(ho, hw))

    def _direct(self, partition: Partitioner, out: list[dict[str, Any]], w0: int, w1: int, e1: int, d: float,
                at: int, case: int) -> None:
        rows = w0 + np.flatnonzero(~self.buf["done"][w0:w1])
        tp = self.t - d
        seed = int(self.rng.integers(0, 2**63 - 1))
        labels = partition(self, rows, tp, seed)
        ws, wl = self.base + w0, w1 - w0
        if labels is None:  # fewer than k distinct persons: the expiring tuples cannot be published (A30)
            self.sg_arr = np.empty(0, np.int64)
            self.sg_lab = np.empty(0, np.int64)
            self.sg_info = {}
            exp = rows[rows < e1]
            self._emit(out, exp, np.full(exp.size, -1, np.int64), _SUPPRESSED, at)
            return
        n_cls = int(labels.max()) + 1 if labels.size else 0
        ids = self.next_ec + labels
        self.sg_info = {self.next_ec + c: (ws, wl, tp, d) for c in range(n_cls)}
        self.next_ec += n_cls
        go = np.zeros(self.next_ec + 1, bool)
        go[ids[rows < e1]] = True
        emit = go[ids]
        self._emit(out, rows[emit], ids[emit], case, at)
        self.sg_arr = self.buf["arr"][rows[~emit]]
        self.sg_lab = ids[~emit]

    def _indirect(self, out: list[dict[str, Any]], at: int, case: int, w0: int, e1: int) -> None:
        rows = self.sg_arr - self.base
        ok = rows >= 0  # always true: S_G tuples are not output, hence still buffered
        self._emit(out, rows[ok], self.sg_lab[ok], case, at)
        self.sg_arr = np.empty(0, np.int64)
        self.sg_lab = np.empty(0, np.int64)
        # Thm 6.1: every expiring not-yet-output tuple was in S_G; only after a suppressed DIRECT can some remain.
        left = w0 + np.flatnonzero(~self.buf["done"][w0:e1])
        if left.size:
            self._emit(out, left, np.full(left.size, -1, np.int64), _SUPPRESSED, at)

    # ---------------------------------------------------------------- flush (A30)
    def flush(self, partition: Partitioner, out: list[dict[str, Any]]) -> None:
        n = self.n_arrivals
        at = n
        if n == 0:
            return
        ws = self.slides * self.interval
        if n >= ws + self.omega:  # the current window is complete: its slide (< I new tuples have come)
            self.slide(partition, out, at=at, flush=True)
        pend = np.flatnonzero(~self.buf["done"])
        if pend.size == 0:
            return
        wl = min(self.omega, n)
        w0 = n - wl - self.base
        d = self._d(w0, w0 + wl)
        if d >= self.t and self.sg_arr.size:
            self.case_log.append((self.base + w0, "indirect", d))
            self._indirect(out, at, _FLUSH, w0, w0)
            pend = np.flatnonzero(~self.buf["done"])
            if pend.size == 0:
                return
            d = self._d(w0, w0 + wl)
        if d < self.t:
            self.case_log.append((self.base + w0, "direct", d))
            self._direct(partition, out, w0, w0 + wl, w0 + wl, d, at, _FLUSH)
        pend = np.flatnonzero(~self.buf["done"])
        if pend.size:
            self._emit(out, pend, np.full(pend.size, -1, np.int64), _SUPPRESSED, at)

    # ---------------------------------------------------------------- events
    def _emit(self, out: list[dict[str, Any]], rows: NDArray[np.int64], ids: NDArray[np.int64], case: int,
              at: int) -> None:
        if rows.size == 0:
            return
        b = self.buf
        if b["done"][rows].any():  # pragma: no cover - invariant
            raise RuntimeError("internal error in SABRE_W: a tuple would be output twice; please report")
        b["done"][rows] = True
        ev = {
            "position": b["pos"][rows], "arrival": b["arr"][rows], "pid": b["pid"][rows], "sa": b["sa"][rows],
            "ec": ids, "case": np.full(rows.size, case, np.int8), "emitted_at": np.full(rows.size, at, np.int64),
            "num": b["num"][rows], "cat": b["cat"][rows], "columns": {c: v[rows] for c, v in b["cols"].items()},
        }
        ws = np.full(rows.size, -1, np.int64)
        wl = np.zeros(rows.size, np.int64)
        if case != _SUPPRESSED:
            uniq, inv = np.unique(ids, return_inverse=True)
            info = [self.sg_info[int(u)] if int(u) in self.sg_info else self._info_missing(int(u)) for u in uniq]
            ws = np.asarray([i[0] for i in info], np.int64)[inv]
            wl = np.asarray([i[1] for i in info], np.int64)[inv]
            ev["class_rows"] = [(int(u), i[0], i[1], i[2], i[3], CASES[case]) for u, i in zip(uniq, info)]
        ev["window_start"] = ws
        ev["window_len"] = wl
        out.append(ev)

    def _info_missing(self, ec: int) -> tuple[int, int, float, float]:  # pragma: no cover - invariant
        raise RuntimeError(f"internal error in SABRE_W: class {ec} has no window; please report")
