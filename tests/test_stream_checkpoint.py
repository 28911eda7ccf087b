"""Stream checkpoints (issue 18 items 1, 2, 9): no code execution, a checksum, range checks before C++, refusal of
another input or other parameters, fuzzed bytes that never crash, and the bounded incremental CLI checkpoint."""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anoncore import Hierarchy, Schema, _core
from anoncore.cli import main
from anoncore.stream import Castle, SabreW
from anoncore.stream._checkpoint import MAGIC, CheckpointError

H_A = Hierarchy.from_nested({"*": {"ab": ["a", "b"], "cde": {"C": ["c"], "de": ["d", "e"]}}}, name="A")
SCHEMA = Schema.build({"n0": {"kind": "numeric", "domain": (0, 20)}, "c0": H_A}, sensitive="sa", pid="pid")
W_SCHEMA = Schema.build({"age": {"kind": "numeric", "domain": (0, 99)}},
                        sensitive={"sal": {"kind": "ordinal", "order": (1, 2, 3, 4)}}, pid="pid")


def _batch(rng: np.random.Generator, n: int, start: int = 0, persons: int = 10**6) -> dict[str, Any]:
    return {"n0": rng.integers(0, 21, n).astype(float), "c0": rng.choice(list(H_A.leaves), n),
            "pid": [f"p{v}" for v in rng.integers(0, persons, n)], "sa": rng.choice(["flu", "hiv", "cold"], n)}


def _castle(seed: int = 0, **kw: Any) -> Castle:
    return Castle(SCHEMA, **{"k": 3, "delta": 15, "eta": 4, "mu": 3, "rng": seed, **kw})


def _w_batch(rng: np.random.Generator, n: int) -> dict[str, Any]:
    return {"age": rng.integers(0, 100, n), "sal": rng.integers(1, 5, n), "pid": rng.integers(0, 10**6, n)}


# ---------------------------------------------------------------------------------------------- helpers
def _split(data: bytes) -> tuple[dict[str, Any], bytes]:
    (h,) = struct.unpack_from("<I", data, 12)
    return json.loads(data[56:56 + h]), data[56 + h:]


def _resign(header: dict[str, Any], payload: bytes) -> bytes:
    """A checkpoint with this header and payload and a valid checksum (what a forger can always produce)."""
    head = json.dumps(header, separators=(",", ":")).encode()
    body = head + payload
    return (struct.pack("<8sIIQ", MAGIC, 1, len(head), len(payload))
            + hashlib.blake2b(body, digest_size=32).digest() + body)


def _core_bytes(state: bytes) -> tuple[dict[str, Any], bytes, int, int]:
    """The header, the payload, and the offset and length of the 'core' array in the payload."""
    header, payload = _split(state)
    at = 0
    for a in header["arrays"]:
        n = int(np.prod(a["shape"])) * np.dtype(a["dtype"]).itemsize
        if a["name"] == "core":
            return header, payload, at, n
        at += n
    raise AssertionError("no core array")


def _accounted(c: Castle, rng: np.random.Generator) -> None:
    """A restored Castle continues: every pending and new tuple leaves exactly once."""
    pending = set(c._core.pending_positions().tolist())
    last = c._core.last_position or 0
    rels = [c.push(_batch(rng, 40))] if not c.closed_ else []
    if not c.closed_:
        rels.append(c.flush())
    got = np.concatenate([r.position for r in rels]) if rels else np.empty(0, np.int64)
    want = pending | set(range(last + 1, last + 41)) if rels else pending
    assert sorted(got.tolist()) == sorted(want)


# ---------------------------------------------------------------------------------------------- no code runs
class _Boom:
    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> Any:
        return (open, (self.path, "w"))


def test_crafted_pickle_checkpoint_is_refused_without_running_it(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    evil = pickle.dumps({"spec": _Boom(str(marker)), "py": None, "closed": False})
    core = b"\0" * 16
    old_castle = b"ANCCASTLEPY\0" + struct.pack("<IQ", 1, len(core)) + core + evil
    old_sabre = b"ANCSABREW\0" + struct.pack("<IQ", 1, len(evil)) + evil
    with pytest.raises(CheckpointError, match="old pickle-based format"):
        Castle.restore(old_castle)
    with pytest.raises(CheckpointError, match="old pickle-based format"):
        SabreW.restore(old_sabre)
    # a pickle smuggled into the new format: into the C++ state, or as a JSON string, is only ever data
    c = _castle()
    c.push(_batch(np.random.default_rng(0), 10))
    header, payload, at, n = _core_bytes(c.checkpoint())
    with pytest.raises(CheckpointError):
        Castle.restore(_resign(header, payload[:at] + evil[:n].ljust(n, b"\0") + payload[at + n:]))
    header["state"]["keys"]["sa"] = [evil.hex()]
    with pytest.raises(CheckpointError):
        Castle.restore(_resign(header, payload))
    # and through the command line
    ck = tmp_path / "state.ck"
    ck.write_bytes(b"ANCSTREAMCLI\0" + struct.pack("<I", 2) + b"{}" + old_castle)
    src = tmp_path / "in.csv"
    pd.DataFrame({"pid": range(5), "n0": range(5)}).to_csv(src, index=False)
    code = main(["stream", str(src), "--algorithm", "castle", "--numeric", "n0=0:20", "--pid", "pid", "--k", "2",
                 "--delta", "5", "--checkpoint", str(ck)], stdout=io.StringIO())
    assert code == 1
    assert not marker.exists()


def test_checkpoint_is_json_and_arrays_with_a_checksum() -> None:
    c = _castle()
    c.push(_batch(np.random.default_rng(1), 30))
    s = c.checkpoint()
    header, _ = _split(s)
    assert s[:8] == MAGIC and struct.unpack_from("<I", s, 8)[0] == 1
    assert header["algorithm"] == "castle" and header["params"]["k"] == 3
    assert header["input"] == {"rows": 30, "last_position": 30}
    assert len(header["schema_digest"]) == 64
    assert hashlib.blake2b(s[56:], digest_size=32).digest() == s[24:56]
    flipped = bytearray(s)
    flipped[-1] ^= 1
    with pytest.raises(CheckpointError, match="checksum"):
        Castle.restore(bytes(flipped))


# ---------------------------------------------------------------------------------------------- range checks
@pytest.mark.parametrize(("edit", "match"), [
    (lambda h: h["input"].update(rows=-5), r"'rows' is -5"),
    (lambda h: h["input"].update(rows=29), "input record"),
    (lambda h: h["params"].update(k=0), "parameters are invalid"),
    (lambda h: h["params"].update(k="3"), "parameters are invalid"),
    (lambda h: h["params"].update(mu=10**30), "parameters are invalid|out of range|corrupt"),
    (lambda h: h["schema"]["dom_lo"].__setitem__(0, 5.0), "schema digest"),
    (lambda h: h.update(seed=-1), r"'seed' is -1"),
    (lambda h: h["state"].update(closed=True), "closed but holds pending"),
    (lambda h: h["state"]["keys"].update(n_pid=3), "pid dictionary"),
    (lambda h: h["state"]["chunks"][0].update(left=10**9), r"'left'"),
    (lambda h: h["arrays"][0].update(shape=[10**9]), "past the end"),
    (lambda h: h["arrays"][0].update(dtype="|O"), "dtype"),
    (lambda h: h.update(algorithm="sabre_w"), "not of Castle"),
])
def test_edited_header_fields_are_refused(edit: Any, match: str) -> None:
    c = _castle()
    c.push(_batch(np.random.default_rng(2), 30))
    header, payload = _split(c.checkpoint())
    edit(header)
    with pytest.raises(CheckpointError, match=match):
        Castle.restore(_resign(header, payload))


@pytest.mark.parametrize(("field", "value", "match"), [
    (0, 2, "numbers of quasi-identifiers"),  # dn
    (2, -1, "counter is negative"),          # next_cluster_id
    (5, 10**6, "last position"),             # n_arrivals
])
def test_edited_core_counters_are_refused(field: int, value: int, match: str) -> None:
    c = _castle()
    c.push(_batch(np.random.default_rng(3), 12))
    header, payload, at, _ = _core_bytes(c.checkpoint())
    off = at + 16 + 8 * field
    payload = payload[:off] + struct.pack("<q", value) + payload[off + 8:]
    with pytest.raises(CheckpointError, match=match):
        Castle.restore(_resign(header, payload))


def test_core_state_rejects_out_of_range_cluster_members() -> None:
    """The segfault of issue 18: an out-of-range member index in an open cluster; now a clear error."""
    c = _castle()
    c.push(_batch(np.random.default_rng(4), 12))
    raw = bytes(c._core.checkpoint())
    fresh = _castle()._core
    bad = raw[:-8] + struct.pack("<q", 10**6)  # the last member index of the last open cluster
    with pytest.raises(ValueError, match="cluster member is out of range"):
        fresh.restore_state(bad)
    with pytest.raises(ValueError, match="truncated|exceeds the bytes left"):
        _castle()._core.restore_state(raw[:-3])


# ---------------------------------------------------------------------------------------------- identity
def test_restore_refuses_other_parameters_or_schema() -> None:
    c = _castle()
    c.push(_batch(np.random.default_rng(5), 20))
    s = c.checkpoint()
    assert Castle.restore(s, expect=_castle(seed=99)).n_arrivals_ == 20  # the seed is the checkpoint's
    with pytest.raises(CheckpointError, match=r"k=3 \(this run: 4\)"):
        Castle.restore(s, expect=_castle(k=4))
    other = Schema.build({"n0": {"kind": "numeric", "domain": (0, 30)}, "c0": H_A}, sensitive="sa", pid="pid")
    with pytest.raises(CheckpointError, match="schema_digest"):
        Castle.restore(s, expect=Castle(other, k=3, delta=15, eta=4, mu=3))
    w = SabreW(W_SCHEMA, omega=20, interval=10, t=0.5, k=3, rng=0)
    w.push(_w_batch(np.random.default_rng(0), 25))
    with pytest.raises(CheckpointError, match=r"t=0.5 \(this run: 0.4\)"):
        SabreW.restore(w.checkpoint(), expect=SabreW(W_SCHEMA, omega=20, interval=10, t=0.4, k=3))
    with pytest.raises(CheckpointError, match="not of Castle"):
        Castle.restore(w.checkpoint())


# ---------------------------------------------------------------------------------------------- fuzz
def _castle_state() -> bytes:
    rng = np.random.default_rng(6)
    c = _castle(max_reuse=5)
    for _ in range(4):
        c.push(_batch(rng, 23, persons=30))
    return c.checkpoint()


_STATE = _castle_state()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fuzzed_checkpoint_bytes_raise_a_clear_error(data: st.DataObject) -> None:
    """Bit flips, truncations, insertions, random bytes: the checksum refuses every change."""
    s = bytearray(_STATE)
    kind = data.draw(st.sampled_from(["flip", "truncate", "insert", "random", "prefix"]))
    if kind == "flip":
        for i in data.draw(st.lists(st.integers(0, len(s) * 8 - 1), min_size=1, max_size=4, unique=True)):
            s[i // 8] ^= 1 << (i % 8)
    elif kind == "truncate":
        s = s[:data.draw(st.integers(0, len(s) - 1))]
    elif kind == "insert":
        at = data.draw(st.integers(0, len(s)))
        s[at:at] = data.draw(st.binary(min_size=1, max_size=8))
    elif kind == "random":
        s = bytearray(data.draw(st.binary(max_size=200)))
    else:
        s = bytearray(MAGIC + data.draw(st.binary(max_size=120)))
    with pytest.raises(CheckpointError):
        Castle.restore(bytes(s))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fuzzed_core_state_raises_or_continues(data: st.DataObject) -> None:
    """Mutations of the C++ state behind a valid checksum (a forger's view): a clear error, or a state that continues
    with every pending and new tuple released or suppressed exactly once. Never a crash (run under ASan by
    tools/sanitize.sh)."""
    header, payload, at, n = _core_bytes(_STATE)
    core = bytearray(payload[at:at + n])
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, n - 1))
        how = data.draw(st.sampled_from(["flip", "byte", "word"]))
        if how == "flip":
            core[i] ^= 1 << data.draw(st.integers(0, 7))
        elif how == "byte":
            core[i] = data.draw(st.integers(0, 255))
        else:
            j = min(i, n - 8)
            core[j:j + 8] = struct.pack("<q", data.draw(st.sampled_from([-1, 0, 1, 2, 7, 2**31, 2**62, -(2**63)])))
    try:
        c = Castle.restore(_resign(header, payload[:at] + bytes(core) + payload[at + n:]))
    except CheckpointError:
        return
    _accounted(c, np.random.default_rng(0))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fuzzed_header_values_raise_or_continue(data: st.DataObject) -> None:
    """Any JSON scalar of the header replaced by another value (re-signed): a clear error or a working state."""
    header, payload = _split(_STATE)
    paths: list[tuple[Any, Any]] = []

    def walk(node: Any) -> None:
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for k, v in items:
            if isinstance(v, (dict, list)):
                walk(v)
            else:
                paths.append((node, k))

    walk(header)
    node, key = data.draw(st.sampled_from(paths))
    node[key] = data.draw(st.one_of(st.none(), st.booleans(), st.integers(-(2**64), 2**64),
                                    st.floats(allow_nan=True), st.text(max_size=5)))
    try:
        c = Castle.restore(_resign(header, payload))
    except CheckpointError:
        return
    _accounted(c, np.random.default_rng(1))


def _sabre_state() -> bytes:
    rng = np.random.default_rng(7)
    w = SabreW(W_SCHEMA, omega=20, interval=10, t=0.4, k=3, rng=0)
    for _ in range(3):
        w.push(_w_batch(rng, 17))
    return w.checkpoint()


_W_STATE = _sabre_state()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fuzzed_sabre_w_arrays_raise_or_continue(data: st.DataObject) -> None:
    """SabreW: payload bytes mutated behind a valid checksum (sensitive codes, buffers, pending classes)."""
    header, payload = _split(_W_STATE)
    p = bytearray(payload)
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(p) - 1))
        p[i] = data.draw(st.integers(0, 255))
    try:
        w = SabreW.restore(_resign(header, bytes(p)))
    except CheckpointError:
        return
    n0 = w.n_arrivals_
    pending = w.n_pending_
    rels = [w.push(_w_batch(np.random.default_rng(2), 15)), w.flush()] if not w.closed_ else []
    assert sum(len(r) for r in rels) == (pending + 15 if rels else 0)
    assert w.n_arrivals_ == n0 + (15 if rels else 0)


def test_restored_sabre_w_state_is_identical() -> None:
    rng = np.random.default_rng(8)
    a = SabreW(W_SCHEMA, omega=20, interval=10, t=0.4, k=3, rng=1)
    b1 = _w_batch(rng, 33)
    b2 = _w_batch(rng, 29)
    a.push(b1)
    b = SabreW.restore(a.checkpoint())
    assert b.checkpoint() == a.checkpoint()
    ra, rb = a.push(b2), b.push(b2)
    assert np.array_equal(ra.ec, rb.ec) and np.array_equal(ra.position, rb.position)


def test_kernel_rejects_malformed_hierarchies() -> None:
    """Castle's constructor checks hierarchy arrays (a restore builds through it)."""
    par = np.array([2, 2, -1], np.int32)
    ls = np.array([0, 1, 0], np.int32)
    lc = np.array([1, 1, 2], np.int32)
    ok = (par, ls, lc, 2)
    empty = np.empty(0)

    def make(cat: Any) -> Any:
        return _core.castle.Castle(2, 5, 3, 3, 0, -1, 0.0, False, False, 0, empty, empty, [cat])

    make(ok)
    for bad in [(np.array([1, 2, -1], np.int32), ls, lc, 2), (np.array([2, 5, -1], np.int32), ls, lc, 2),
                (par, ls, np.array([1, 1, 3], np.int32), 2), (par, ls, lc, 3), (par, ls, lc, 0)]:
        with pytest.raises(ValueError, match="malformed hierarchy"):
            make(bad)


# ---------------------------------------------------------------------------------------------- CLI
def _cli_files(tmp: Path, n: int = 300, seed: int = 0) -> tuple[Path, list[str]]:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"pid": [f"u{v}" for v in rng.integers(0, 120, n)], "age": rng.integers(17, 91, n),
                       "disease": rng.choice(["flu", "hiv", "cold"], n)})
    src = tmp / "in.csv"
    df.to_csv(src, index=False)
    return src, ["--algorithm", "castle", "--numeric", "age=17:90", "--pid", "pid", "--sensitive", "disease",
                 "--delta", "30", "--batch-size", "40", "--seed", "3"]


def _cli(args: list[str], capsys: Any) -> tuple[int, str]:
    code = main(["stream", *args], stdout=io.StringIO())
    return code, capsys.readouterr().err


def test_cli_checkpoint_is_bounded_and_incremental(tmp_path: Path, capsys: Any) -> None:
    src, args = _cli_files(tmp_path, n=2000)
    ck = tmp_path / "s.ck"
    out = tmp_path / "o.jsonl"
    sizes = []
    from anoncore.stream import _checkpoint

    real = _checkpoint.CheckpointFile.save

    def spy(self: Any, stream: Any, info: dict[str, Any]) -> None:
        real(self, stream, info)
        sizes.append((os.path.getsize(self.path), os.path.getsize(self.log_path)))

    _checkpoint.CheckpointFile.save = spy  # type: ignore[method-assign]
    try:
        assert _cli([str(src), *args, "--k", "3", "--max-reuse", "20", "-o", str(out), "--checkpoint", str(ck)],
                    capsys)[0] == 0
    finally:
        _checkpoint.CheckpointFile.save = real  # type: ignore[method-assign]
    main_sizes = [m for m, _ in sizes]
    logs = [g for _, g in sizes]
    assert len(sizes) == 51  # after each of the 50 batches, and after the flush
    # the person-id log only grows, by the new persons (120 in all, one JSON line each)
    first_seen = list(dict.fromkeys(pd.read_csv(src)["pid"]))
    assert logs == sorted(logs) and logs[-1] == sum(len(json.dumps(v)) + 1 for v in first_seen)
    # the checkpoint itself does not grow with the stream (pending tuples <= delta, reuse set <= max_reuse)
    assert max(main_sizes[10:]) < 1.5 * max(main_sizes[:10])


def test_cli_refuses_other_parameters_input_and_forged_rows(tmp_path: Path, capsys: Any) -> None:
    src, args = _cli_files(tmp_path)
    ck = tmp_path / "s.ck"
    out = tmp_path / "o.jsonl"
    ref = tmp_path / "ref.jsonl"
    assert _cli([str(src), *args, "--k", "3", "-o", str(ref)], capsys)[0] == 0
    # a run interrupted after its 4th batch (160 rows) leaves its checkpoint
    from anoncore.stream import _cli as cli_mod

    calls = []
    real = cli_mod.CheckpointFile.save

    def stop_after_4(self: Any, stream: Any, info: dict[str, Any]) -> None:
        real(self, stream, info)
        calls.append(1)
        if len(calls) == 4:
            raise KeyboardInterrupt

    cli_mod.CheckpointFile.save = stop_after_4  # type: ignore[method-assign]
    try:
        # Ctrl-C: main reports it and exits 130 (docs/cli.md); the checkpoint stays
        assert main(["stream", str(src), *args, "--k", "3", "-o", str(out), "--checkpoint", str(ck)],
                    stdout=io.StringIO()) == 130
    finally:
        cli_mod.CheckpointFile.save = real  # type: ignore[method-assign]
    capsys.readouterr()
    saved = ck.read_bytes()
    # other k: refused, exit 2, nothing written
    code, err = _cli([str(src), *args, "--k", "4", "-o", str(out), "--checkpoint", str(ck)], capsys)
    assert code == 2 and "--k 3 (this run: 4)" in err
    # another input (a changed row among the 160 consumed): refused
    other = tmp_path / "other.csv"
    d = pd.read_csv(src)
    d.loc[5, "age"] = 18 if d.loc[5, "age"] != 18 else 19
    d.to_csv(other, index=False)
    code, err = _cli([str(other), *args, "--k", "3", "-o", str(out), "--checkpoint", str(ck)], capsys)
    assert code == 1 and "made on another input" in err
    pd.read_csv(src).iloc[:100].to_csv(tmp_path / "short.csv", index=False)
    code, err = _cli([str(tmp_path / "short.csv"), *args, "--k", "3", "-o", str(out), "--checkpoint", str(ck)],
                     capsys)
    assert code == 1 and "another input" in err
    # rows=-5 (re-signed, so the checksum holds): refused before anything is read or written
    header, payload = _split(saved)
    header["rows"] = -5
    ck.write_bytes(_resign(header, payload))
    code, err = _cli([str(src), *args, "--k", "3", "-o", str(out), "--checkpoint", str(ck)], capsys)
    assert code == 1 and "'rows' is -5" in err
    # the untouched checkpoint resumes and the output equals the uninterrupted run
    ck.write_bytes(saved)
    code, err = _cli([str(src), *args, "--k", "3", "-o", str(out), "--checkpoint", str(ck)], capsys)
    assert code == 0, err
    assert '"resumed_after_rows": 160' in err
    assert out.read_text() == ref.read_text()
    # a corrupted dictionary log is detected
    log = tmp_path / "s.ck.keys"
    damaged = bytearray(log.read_bytes())
    damaged[1] ^= 1
    log.write_bytes(bytes(damaged))
    ck.write_bytes(saved)
    code, err = _cli([str(src), *args, "--k", "3", "-o", str(out), "--checkpoint", str(ck)], capsys)
    assert code == 1 and "dictionary log" in err
