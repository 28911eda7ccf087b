"""The checkpoint format of the stream algorithms (CASTLE, SABRE_W and its baselines): no code execution.

A checkpoint is one byte string (docs/castle.md, "Checkpoints")::

    offset  size  field
    0       8     magic b"ANCSTRM\\0"
    8       4     format version, uint32 little-endian (FORMAT_VERSION)
    12      4     header length H, uint32 little-endian (at most 256 MiB)
    16      8     payload length P, uint64 little-endian
    24      32    BLAKE2b-256 digest of the H + P bytes that follow
    56      H     header: a UTF-8 JSON object
    56 + H  P     payload: the arrays listed in header["arrays"], back to back, little-endian

The header records the algorithm, its parameters, the stream's schema (names, domains, hierarchies by label and
parent), the digest of that schema, the input consumed so far (``rows``, ``last_position``) and the algorithm's
JSON state; the payload holds its numeric arrays (dtypes from a fixed list, shapes checked against the payload
length). Reading never calls ``pickle`` or ``eval``: JSON and ``numpy.frombuffer`` only, then every field is
range-checked before it reaches C++. The digest detects corruption (a flipped bit, a truncated file); it is not a
signature: a checkpoint is as trustworthy as the place it is stored.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import struct
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

import numpy as np
from numpy.typing import NDArray

from anoncore.data.hierarchy import Hierarchy

MAGIC = b"ANCSTRM\0"
FORMAT_VERSION = 1
FORMAT_NAME = "anoncore.stream.checkpoint"
_PREFIX = struct.Struct("<8sIIQ32s")
_MAX_HEADER = 1 << 28
#: dtypes an array of the payload may have (little-endian, fixed size; no objects)
_DTYPES = frozenset({"|b1", "|i1", "|u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f4", "<f8",
                     "<M8[ns]", "<m8[ns]", "<M8[us]", "<m8[us]", "<M8[s]", "<M8[D]"})
_STR_DTYPE = re.compile(r"<U[0-9]{1,6}")


class CheckpointError(ValueError):
    """A checkpoint that cannot be restored (corrupt, truncated, another algorithm, input or parameters)."""


def digest(data: bytes) -> str:
    """BLAKE2b-256 hex digest (the checksum of the format and the digests of its header)."""
    return hashlib.blake2b(data, digest_size=32).hexdigest()


# ---------------------------------------------------------------------------------------------- container
class Writer:
    """Collects the JSON header fields and the payload arrays of one checkpoint."""

    def __init__(self) -> None:
        self.arrays: list[tuple[str, NDArray[Any]]] = []
        self.names: set[str] = set()

    def array(self, name: str, a: NDArray[Any]) -> None:
        a = np.asarray(a)
        dt = a.dtype.newbyteorder("<") if a.dtype.byteorder == ">" else a.dtype
        if dt.str not in _DTYPES:
            raise TypeError(f"internal error: a checkpoint cannot store dtype {a.dtype}; please report")
        if name in self.names:
            raise ValueError(f"internal error: checkpoint array {name!r} written twice; please report")
        self.names.add(name)
        self.arrays.append((name, np.ascontiguousarray(a, dtype=dt)))

    def pack(self, header: dict[str, Any]) -> bytes:
        header = dict(header)
        header["format"] = FORMAT_NAME
        header["arrays"] = [{"name": n, "dtype": a.dtype.str, "shape": list(a.shape)} for n, a in self.arrays]
        head = json.dumps(header, separators=(",", ":"), allow_nan=True).encode("utf-8")
        body = head + b"".join(a.tobytes() for _, a in self.arrays)
        check = hashlib.blake2b(body, digest_size=32).digest()
        return _PREFIX.pack(MAGIC, FORMAT_VERSION, len(head), len(body) - len(head), check) + body


class Reader:
    """A checkpoint after its prefix, checksum, JSON header and array table were checked."""

    def __init__(self, data: Any, what: str, kind: str = "anoncore stream") -> None:
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"{what} expects bytes. Got {type(data).__name__} instead.")
        data = bytes(data)
        self.what = what
        if data.startswith(MAGIC) and len(data) < _PREFIX.size:
            self.fail("the checkpoint is truncated")
        if not data.startswith(MAGIC):
            if data.startswith((b"ANCCASTLEPY", b"ANCSABREW\0", b"ANCSTREAMCLI")):
                self.fail("it is in the old pickle-based format, which is no longer read (it could run code); "
                          "start the stream again")
            self.fail(f"the bytes are not a {kind} checkpoint")
        _, version, h, p, check = _PREFIX.unpack_from(data)
        if version != FORMAT_VERSION:
            self.fail(f"unsupported checkpoint format version {version} (this is {FORMAT_VERSION})")
        if h > _MAX_HEADER or _PREFIX.size + h + p != len(data):
            self.fail(f"the checkpoint is truncated or has trailing bytes (expected {_PREFIX.size + h + p} bytes, "
                      f"got {len(data)})")
        body = memoryview(data)[_PREFIX.size:]
        if hashlib.blake2b(body, digest_size=32).digest() != check:
            self.fail("the checkpoint is corrupt (its BLAKE2b checksum does not match)")
        try:
            header = json.loads(bytes(body[:h]).decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            self.fail(f"its header is not valid JSON ({exc})")
        if not isinstance(header, dict) or header.get("format") != FORMAT_NAME:
            self.fail("its header is not an anoncore stream checkpoint header")
        self.header: dict[str, Any] = header
        self.arrays: dict[str, NDArray[Any]] = {}
        table = self.get("arrays", list)
        at = h
        for entry in table:
            if not isinstance(entry, dict) or set(entry) != {"name", "dtype", "shape"}:
                self.fail("an entry of its array table is malformed")
            name, dt, shape = entry["name"], entry["dtype"], entry["shape"]
            if not isinstance(name, str) or name in self.arrays:
                self.fail("its array table repeats or misnames an array")
            if not isinstance(dt, str) or dt not in _DTYPES:
                self.fail(f"array {name!r} has the dtype {dt!r}, which checkpoints do not use")
            if (not isinstance(shape, list) or len(shape) > 2
                    or not all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2**40 for s in shape)):
                self.fail(f"array {name!r} has a malformed shape {shape!r}")
            dtype = np.dtype(dt)
            nbytes = math.prod(shape) * dtype.itemsize
            if nbytes > len(body) - at:
                self.fail(f"array {name!r} runs past the end of the payload")
            a = np.frombuffer(body[at:at + nbytes], dtype=dtype).reshape(shape).copy()
            if dtype == np.bool_ and a.size and int(a.view(np.uint8).max()) > 1:
                self.fail(f"the boolean array {name!r} holds bytes other than 0 and 1")
            self.arrays[name] = a
            at += nbytes
        if at != len(body):
            self.fail("its payload holds bytes that no array accounts for")

    def fail(self, why: str) -> NoReturn:
        raise CheckpointError(f"{self.what}: {why}.")

    # ---------------------------------------------------------------- typed access to header fields
    def get(self, key: str, kind: type | tuple[type, ...], where: Mapping[str, Any] | None = None) -> Any:
        src = self.header if where is None else where
        if not isinstance(src, Mapping) or key not in src:
            self.fail(f"its header lacks the field {key!r}")
        v = src[key]
        if isinstance(v, bool) and (kind is int or (isinstance(kind, tuple) and int in kind and bool not in kind)):
            self.fail(f"the field {key!r} is {v!r}, not an int")
        if not isinstance(v, kind):
            self.fail(f"the field {key!r} is {type(v).__name__}, not {getattr(kind, '__name__', kind)}")
        return v

    def get_int(self, key: str, lo: int, hi: int, where: Mapping[str, Any] | None = None) -> int:
        v = self.get(key, int, where)
        if not lo <= v <= hi:
            self.fail(f"the field {key!r} is {v}, outside [{lo}, {hi}]")
        return int(v)

    def get_opt_int(self, key: str, lo: int, hi: int, where: Mapping[str, Any] | None = None) -> int | None:
        src = self.header if where is None else where
        if isinstance(src, Mapping) and src.get(key, 0) is None:
            return None
        return self.get_int(key, lo, hi, where)

    def get_float(self, key: str, lo: float, hi: float, where: Mapping[str, Any] | None = None) -> float:
        v = self.get(key, (int, float), where)
        if isinstance(v, bool) or not (math.isfinite(v) and lo <= v <= hi):
            self.fail(f"the field {key!r} is {v!r}, outside [{lo}, {hi}]")
        return float(v)

    def get_bool(self, key: str, where: Mapping[str, Any] | None = None) -> bool:
        return bool(self.get(key, bool, where))

    def get_str(self, key: str, choices: Sequence[str] | None = None, where: Mapping[str, Any] | None = None) -> str:
        v = self.get(key, str, where)
        if choices is not None and v not in choices:
            self.fail(f"the field {key!r} is {v!r}, not one of {tuple(choices)}")
        return str(v)

    def names(self, key: str, where: Mapping[str, Any] | None = None) -> tuple[str, ...]:
        v = self.get(key, list, where)
        if not all(isinstance(x, str) and x for x in v) or len(set(v)) != len(v):
            self.fail(f"the field {key!r} is not a list of distinct column names")
        return tuple(v)

    def array(self, name: str, dtype: Any, shape: tuple[int | None, ...]) -> NDArray[Any]:
        """Payload array ``name`` with this dtype and shape (None: any length)."""
        a = self.arrays.get(name)
        if a is None:
            self.fail(f"its payload lacks the array {name!r}")
        if a.dtype != np.dtype(dtype) or a.ndim != len(shape) or any(
                s is not None and s != n for s, n in zip(shape, a.shape)):
            self.fail(f"the array {name!r} has dtype {a.dtype} and shape {a.shape}, not {np.dtype(dtype)} "
                      f"{tuple('n' if s is None else s for s in shape)}")
        return a

    def increasing(self, name: str, a: NDArray[Any]) -> None:
        if a.size > 1 and not bool(np.all(a[1:] > a[:-1])):
            self.fail(f"the array {name!r} is not strictly increasing")


def read_prefix_header(data: bytes, what: str) -> dict[str, Any]:
    """The validated header of a checkpoint (its arrays are checked too)."""
    return Reader(data, what).header


# ---------------------------------------------------------------------------------------------- values
_JSON_SCALARS = (str, int, float, bool, type(None))


def json_values(values: list[Any], where: str) -> list[Any]:
    """``values`` if every one is a JSON scalar (str, int, float, bool, None), else a TypeError naming ``where``."""
    for v in values:
        if not isinstance(v, _JSON_SCALARS):
            raise TypeError(f"{where} holds a value of type {type(v).__name__} ({v!r}), which a checkpoint cannot "
                            f"store (it keeps str, int, float, bool and None; numeric numpy columns as arrays).")
    return values


def put_column(w: Writer, state: dict[str, Any], name: str, a: NDArray[Any], where: str) -> None:
    """A published-as-is column: numeric dtypes as payload arrays, strings and objects as JSON values."""
    a = np.asarray(a)
    if a.dtype.kind in "biufmM" and a.dtype.newbyteorder("<").str in _DTYPES and a.ndim == 1:
        w.array(name, a)
        state[name] = {"array": True}
    elif a.dtype.kind == "U" and a.ndim == 1:
        state[name] = {"dtype": a.dtype.newbyteorder("<").str, "values": a.tolist()}
    else:
        state[name] = {"dtype": "object", "values": json_values(a.tolist(), where)}


def get_column(r: Reader, state: Mapping[str, Any], name: str, n: int) -> NDArray[Any]:
    """The column written by :func:`put_column`, of length ``n``."""
    spec = r.get(name, dict, state)
    if spec.get("array") is True:
        a = r.arrays.get(name)
        if a is None or a.ndim != 1 or a.shape[0] != n:
            r.fail(f"the column {name!r} is missing or does not have {n} values")
        return a
    dt = r.get("dtype", str, spec)
    vals = r.get("values", list, spec)
    if len(vals) != n or not all(isinstance(v, _JSON_SCALARS) for v in vals):
        r.fail(f"the column {name!r} does not hold {n} plain values")
    if dt == "object":
        out = np.empty(n, dtype=object)
        out[:] = vals
        return out
    if not _STR_DTYPE.fullmatch(dt) or not all(isinstance(v, str) for v in vals):
        r.fail(f"the column {name!r} has the dtype {dt!r}")
    return np.array(vals, dtype=np.dtype(dt)).reshape(n)


def plain_values(values: Sequence[Any], where: str) -> list[Any]:
    """``values`` as JSON scalars (numpy scalars converted); a TypeError naming ``where`` for anything else."""
    return json_values([v.item() if isinstance(v, np.generic) else v for v in values], where)


def put_keys(keys: Mapping[Any, int], where: str) -> list[Any]:
    """A dictionary value -> code (codes 0..n-1 in insertion order) as the JSON list of its values."""
    out = list(keys)
    if any(keys[k] != i for i, k in enumerate(out)):
        raise ValueError(f"internal error: {where} codes are not 0..n-1 in insertion order; please report")
    return json_values([k.item() if isinstance(k, np.generic) else k for k in out], where)


def get_values(r: Reader, values: Any, what: str) -> list[Any]:
    if not isinstance(values, list) or not all(isinstance(v, _JSON_SCALARS) for v in values):
        r.fail(f"the {what} is not a list of plain values")
    return values


def get_keys(r: Reader, values: Any, what: str, allow_none: bool) -> dict[Any, int]:
    if not isinstance(values, list):
        r.fail(f"the {what} dictionary is not a list")
    out: dict[Any, int] = {}
    for v in values:
        if not isinstance(v, _JSON_SCALARS) or (v is None and not allow_none) or (
                isinstance(v, float) and math.isnan(v)):
            r.fail(f"the {what} dictionary holds {v!r}")
        out.setdefault(v, len(out))
    if len(out) != len(values):
        r.fail(f"the {what} dictionary lists a value twice")
    return out


# ---------------------------------------------------------------------------------------------- hierarchies
def hierarchy_doc(h: Hierarchy, name: str) -> dict[str, Any]:
    """The JSON description of a hierarchy whose parent array is the payload array ``name + '.parent'``."""
    return {"labels": list(h.labels), "name": h.name, "parent": name + ".parent"}


def put_hierarchy(w: Writer, h: Hierarchy, name: str) -> None:
    w.array(name + ".parent", np.asarray(h.parent, dtype=np.int32))


def get_hierarchy(r: Reader, doc: Any, what: str) -> Hierarchy:
    """Rebuild a hierarchy through its ordinary constructor and check it has the stored numbering."""
    if not isinstance(doc, dict):
        r.fail(f"the hierarchy of {what} is malformed")
    labels = r.get("labels", list, doc)
    name = doc.get("name")
    if not all(isinstance(x, str) for x in labels) or not (name is None or isinstance(name, str)):
        r.fail(f"the hierarchy of {what} has labels that are not strings")
    parent = r.array(r.get("parent", str, doc), np.int32, (len(labels),))
    n = parent.size
    if n == 0 or parent[-1] != -1 or np.any(parent[:-1] <= np.arange(n - 1)) or np.any(parent[:-1] >= n):
        r.fail(f"the hierarchy of {what} does not number parents after their children with the root last")
    has_child = np.zeros(n, bool)
    has_child[parent[:-1]] = True
    n_leaves = int(np.argmax(has_child)) if has_child.any() else n
    if has_child[:n_leaves].any() or not has_child[n_leaves:].all():
        r.fail(f"the hierarchy of {what} does not number its leaves first")
    first = np.arange(n, dtype=np.int64)
    first[n_leaves:] = n
    for i in range(n - 1):  # children before parents: the first leaf under every node
        p = parent[i]
        first[p] = min(first[p], first[i])
    order = sorted(range(n), key=lambda i: (int(first[i]), -i))
    try:
        h = Hierarchy._from_parent_keys({i: (None if parent[i] < 0 else int(parent[i])) for i in range(n)},
                                        dict(enumerate(labels)), order, name)
    except ValueError as exc:
        r.fail(f"the hierarchy of {what} is invalid ({exc})")
    if not np.array_equal(h.parent, parent) or h.labels != tuple(labels):
        r.fail(f"the hierarchy of {what} is not in the numbering of docs/contracts.md")
    return h


def spec_digest(doc: Mapping[str, Any], hierarchies: Sequence[Hierarchy | None]) -> str:
    """Digest of a stream's schema: its JSON description and the parents of its hierarchies."""
    m = hashlib.blake2b(digest_size=32)
    m.update(json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=True).encode("utf-8"))
    for h in hierarchies:
        m.update(b"-" if h is None else np.ascontiguousarray(h.parent, dtype="<i4").tobytes())
    return m.hexdigest()


def check_expected(r: Reader, got: Mapping[str, Any], want: Mapping[str, Any], what: str) -> None:
    """Refuse a checkpoint whose parameters or schema differ from those of this run."""
    diff = [k for k in want if got.get(k) != want[k]]
    if diff:
        shown = ", ".join(f"{k}={got.get(k)!r} (this run: {want[k]!r})" for k in diff[:4])
        r.fail(f"it was made with other {what}: {shown}; resume with the same ones, or start again")


# ---------------------------------------------------------------------------------------------- files (CLI)
class InputDigest:
    """Running digest of the input rows consumed: BLAKE2b over the column names and each row's 64-bit hash
    (``pandas.util.hash_pandas_object``), so it does not depend on how the input was cut into batches."""

    def __init__(self) -> None:
        self._h = hashlib.blake2b(digest_size=32)
        self._columns: tuple[str, ...] | None = None

    def update(self, df: Any) -> None:
        import pandas as pd

        cols = tuple(str(c) for c in df.columns)
        if self._columns is None:
            self._columns = cols
            self._h.update(json.dumps(cols).encode("utf-8"))
        if len(df):
            self._h.update(np.ascontiguousarray(pd.util.hash_pandas_object(df, index=False).to_numpy(),
                                                dtype="<u8").tobytes())

    def hexdigest(self) -> str:
        return self._h.hexdigest()


class CheckpointFile:
    """The ``--checkpoint FILE`` of ``anoncore stream``: bounded, incremental, atomic.

    ``FILE`` holds the stream's checkpoint without the person-id dictionary, the input record (rows consumed and
    their digest), the output offsets and the options of the run, in the format above (rewritten whole with
    fsync and an atomic rename after every batch; its size is bounded by the algorithm's pending state, not by
    the stream's length). The person-id dictionary only grows, so its new values are appended to ``FILE.keys``
    (JSON, one value per line, fsynced before ``FILE`` is replaced); ``FILE`` records the log's length and digest,
    and a resume reads that prefix, checks it and drops whatever a crash left after it.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.log_path = path + ".keys"
        self.n_keys = 0        # dictionary values in the log
        self.log_bytes = 0     # valid bytes of the log
        self._log_hash = hashlib.blake2b(digest_size=32)

    def exists(self) -> bool:
        import os

        return os.path.exists(self.path)

    def save(self, stream: Any, info: dict[str, Any]) -> None:
        import os

        keys = stream._pid_keys()
        new = keys[self.n_keys:]
        if new:
            blob = "".join(json.dumps(v, allow_nan=False) + "\n" for v in plain_values(new, "the pid dictionary"))
            data = blob.encode("utf-8")
            with open(self.log_path, "ab") as fh:
                if fh.tell() != self.log_bytes:
                    fh.truncate(self.log_bytes)
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            self._log_hash.update(data)
            self.log_bytes += len(data)
            self.n_keys = len(keys)
        w = Writer()
        w.array("stream", np.frombuffer(stream._pack(keys_from=self.n_keys), dtype=np.uint8))
        head = {"algorithm": "cli", **info,
                "keys_log": {"n": self.n_keys, "bytes": self.log_bytes, "digest": self._log_hash.hexdigest()}}
        tmp = self.path + ".tmp"
        with open(tmp, "wb") as fh:
            fh.write(w.pack(head))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)  # atomic: a crash leaves the previous checkpoint

    def load(self) -> tuple[dict[str, Any], bytes, dict[str, list[Any]]]:
        """The CLI header, the stream's bytes and the logged dictionary values (all checked)."""
        with open(self.path, "rb") as fh:
            r = Reader(fh.read(), f"checkpoint {self.path!r}", "anoncore stream")
        if r.get_str("algorithm") != "cli":
            r.fail("it is a library checkpoint, not one written by `anoncore stream`")
        r.get_int("rows", 0, 2**62)
        r.get_opt_int("output_offset", 0, 2**62)
        r.get_opt_int("suppressed_offset", 0, 2**62)
        r.get_str("input_digest")
        r.get_str("stream_algorithm")
        r.get("options", dict)
        log = r.get("keys_log", dict)
        n, size, want = r.get_int("n", 0, 2**62, log), r.get_int("bytes", 0, 2**62, log), r.get_str("digest", where=log)
        data = b""
        if size:
            try:
                with open(self.log_path, "rb") as fh:
                    data = fh.read(size)
            except OSError as exc:
                r.fail(f"its dictionary log {self.log_path!r} cannot be read ({exc})")
        h = hashlib.blake2b(data, digest_size=32)
        if len(data) != size or h.hexdigest() != want:
            r.fail(f"its dictionary log {self.log_path!r} is missing, shorter than recorded or changed")
        try:
            values = [json.loads(line) for line in data.decode("utf-8").splitlines()]
        except ValueError as exc:
            r.fail(f"its dictionary log is not JSON lines ({exc})")
        if len(values) != n:
            r.fail("its dictionary log does not hold the recorded number of values")
        self.n_keys, self.log_bytes, self._log_hash = n, size, h
        stream = r.array("stream", np.uint8, (None,)).tobytes()
        return r.header, stream, {"pid": get_values(r, values, "pid dictionary log")}
