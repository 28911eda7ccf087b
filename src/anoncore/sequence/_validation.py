"""Validation and encoding helpers for anoncore.sequence (scikit-learn message grammar)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from anoncore._validation import check_int as _check_int
from anoncore.sequence._taxonomy import Tax

__all__ = [
    "check_int",
    "encode_patterns",
    "encode_sequence",
    "encode_sequences",
]


def check_int(value: Any, name: str, caller: str, low: int, high: float = math.inf) -> int:
    """:func:`anoncore._validation.check_int` with this package's default upper bound, ``math.inf`` drawn closed
    (``[0, inf]``) as the sequence functions always have."""
    return _check_int(value, name, caller, low, high)


def _encode_symbol(x: Any, tax: Tax, index: dict[str, int], what: str, caller: str) -> int:
    if isinstance(x, str):
        code = index.get(x)
        if code is None:
            raise ValueError(f"The symbol {x!r} in {what} of {caller} is not a leaf of the taxonomy.")
        return code
    if isinstance(x, (numbers.Integral, np.integer)) and not isinstance(x, bool):
        c = int(x)
        if not 0 <= c < tax.n_leaves:
            raise ValueError(
                f"The symbol {c} in {what} of {caller} is not a leaf of the taxonomy "
                f"(leaf codes are 0..{tax.n_leaves - 1})."
            )
        return c
    raise TypeError(
        f"The symbols in {what} of {caller} must be leaf labels (str) or leaf codes (int). Got {type(x).__name__}."
    )


def encode_sequence(seq: Any, tax: Tax, caller: str, what: str = "the sequence") -> npt.NDArray[np.int32]:
    """Leaf codes of one sequence (labels or int codes), validated against the taxonomy."""
    if isinstance(seq, (str, bytes)) or not isinstance(seq, (Sequence, np.ndarray)):
        raise TypeError(
            f"Each sequence passed to {caller} must be a list or 1-D array of symbols. Got {type(seq).__name__} instead."
        )
    arr = np.asarray(seq) if isinstance(seq, np.ndarray) else None
    if arr is not None and arr.dtype.kind in "iu":
        if arr.ndim != 1:
            raise ValueError(
                f"Each sequence passed to {caller} must be 1-D. Got an array of shape {arr.shape}."
            )
        if arr.size and (int(arr.min()) < 0 or int(arr.max()) >= tax.n_leaves):
            bad = arr[(arr < 0) | (arr >= tax.n_leaves)][0]
            raise ValueError(
                f"The symbol {int(bad)} in {what} of {caller} is not a leaf of the taxonomy "
                f"(leaf codes are 0..{tax.n_leaves - 1})."
            )
        return np.ascontiguousarray(arr, dtype=np.int32)
    index = tax.label_index()
    return np.fromiter(
        (_encode_symbol(x, tax, index, what, caller) for x in seq), dtype=np.int32, count=len(seq)
    )


def encode_sequences(
    sequences: Any, tax: Tax, caller: str
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32]]:
    """Ragged batch (offsets int64, flat int32 symbols)."""
    if isinstance(sequences, (str, bytes)) or not isinstance(sequences, (Sequence, np.ndarray)):
        raise TypeError(
            f"The 'sequences' parameter of {caller} must be a list of sequences. Got {type(sequences).__name__} instead."
        )
    if len(sequences) == 0:
        raise ValueError(f"The 'sequences' parameter of {caller} must contain at least one sequence. Got 0.")
    parts = [encode_sequence(s, tax, caller, f"sequence {i}") for i, s in enumerate(sequences)]
    offsets = np.zeros(len(parts) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([p.shape[0] for p in parts])
    flat = np.concatenate(parts).astype(np.int32, copy=False) if parts else np.zeros(0, np.int32)
    return offsets, np.ascontiguousarray(flat)


def encode_patterns(
    patterns: Any, tax: Tax, caller: str, *, nodes: bool = False, dedupe: bool = True
) -> npt.NDArray[np.int32]:
    """Patterns as an int32 array (n_patterns, m) of leaf codes (or node ids when ``nodes``), deduplicated in
    first-appearance order (spec §6 A7). All patterns must have the same length (A6)."""
    if isinstance(patterns, (str, bytes)) or not isinstance(patterns, (Sequence, np.ndarray)):
        raise TypeError(
            f"The 'patterns' parameter of {caller} must be a list of patterns. Got {type(patterns).__name__} instead."
        )
    if len(patterns) == 0:
        raise ValueError(f"The 'patterns' parameter of {caller} must contain at least one pattern. Got 0.")
    rows: list[tuple[int, ...]] = []
    index = {lab: i for i, lab in enumerate(tax.labels)} if nodes else tax.label_index()
    limit = tax.n_nodes if nodes else tax.n_leaves
    for p in patterns:
        if isinstance(p, (str, bytes)) or not isinstance(p, (Sequence, np.ndarray)):
            raise TypeError(f"Each pattern passed to {caller} must be a tuple of symbols. Got {p!r}.")
        row = []
        for x in p:
            if isinstance(x, str):
                if x not in index:
                    raise ValueError(
                        f"The symbol {x!r} in pattern {tuple(p)!r} of {caller} is not a leaf of the taxonomy."
                    )
                row.append(index[x])
            elif (
                isinstance(x, (numbers.Integral, np.integer))
                and not isinstance(x, bool)
                and 0 <= int(x) < limit
            ):
                row.append(int(x))
            else:
                raise ValueError(
                    f"The symbol {x!r} in pattern {tuple(p)!r} of {caller} is not a leaf of the taxonomy."
                )
        rows.append(tuple(row))
    m = len(rows[0])
    if m == 0 or any(len(r) != m for r in rows):
        raise ValueError(
            f"All patterns passed to {caller} must have the same length m >= 1. Got lengths {sorted({len(r) for r in rows})}."
        )
    if dedupe:
        rows = list(dict.fromkeys(rows))
    return np.ascontiguousarray(np.array(rows, dtype=np.int32).reshape(len(rows), m))


