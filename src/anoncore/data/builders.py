"""Hierarchy builders: flat, fixed-width / fanout intervals, masking, ordered grouping."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from anoncore._validation import check_int
from anoncore.data.hierarchy import Hierarchy

__all__ = ["flat_hierarchy", "interval_hierarchy", "masking_hierarchy", "ordered_grouping_hierarchy"]


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def flat_hierarchy(values: Sequence[Any], root: str = "*", name: str | None = None) -> Hierarchy:
    """Height-1 hierarchy: every value generalizes straight to ``root``.

    Examples
    --------
    >>> flat_hierarchy(["a", "b"]).to_rows()
    [['a', '*'], ['b', '*']]
    """
    vals = list(dict.fromkeys(str(v) for v in values))
    if not vals:
        raise ValueError(f"Hierarchy {name!r} is empty: flat_hierarchy needs at least one value.")
    if root in vals:
        raise ValueError(f"The root label {root!r} is also a value; choose another root label.")
    return Hierarchy.from_rows([[v, root] for v in vals], name=name)


def interval_hierarchy(
    values: Sequence[float] | np.ndarray,
    widths: Sequence[float] | None = None,
    *,
    width: float | None = None,
    fanout: int = 2,
    start: float | None = None,
    name: str | None = None,
) -> Hierarchy:
    """Interval hierarchy over a numeric domain.

    Level 1 groups values into intervals ``[start + i*w1, start + (i+1)*w1)``; level ``k`` merges level-1
    intervals into intervals of width ``w_k``. Give either ``widths`` (increasing, each a multiple of the
    previous) or ``width`` and ``fanout`` (widths ``width * fanout**k`` until one interval covers the
    domain). The root ``*`` is added on top. Integer domains print intervals as ``[20-24]``, real ones as
    ``[20, 25)``.

    Examples
    --------
    >>> h = interval_hierarchy(range(20, 40), widths=[5, 10])
    >>> h.to_rows()[0], h.level_sizes()
    (['20', '[20-24]', '[20-29]', '*'], [20, 4, 2, 1])
    """
    vals = np.unique(np.asarray(values, dtype=np.float64))
    if vals.size == 0:
        raise ValueError(f"Hierarchy {name!r} is empty: interval_hierarchy needs at least one value.")
    if not np.all(np.isfinite(vals)):
        raise ValueError("interval_hierarchy: values must be finite numbers.")
    lo, hi = float(vals[0]), float(vals[-1])
    s = lo if start is None else float(start)
    if s > lo:
        raise ValueError(f"The 'start' parameter of interval_hierarchy must be <= the smallest value {lo}. Got {s}.")
    if widths is None:
        if width is None or width <= 0:
            raise ValueError("interval_hierarchy needs positive 'width' (with 'fanout') or a 'widths' list.")
        fanout = check_int(fanout, "fanout", "interval_hierarchy", 2)
        ws = [float(width)]
        while s + ws[-1] <= hi:
            ws.append(ws[-1] * fanout)
    else:
        ws = [float(w) for w in widths]
    if not ws or any(w <= 0 for w in ws):
        raise ValueError("interval_hierarchy: widths must be positive.")
    for a, b in itertools.pairwise(ws):
        if b <= a or not math.isclose(b / a, round(b / a)):
            raise ValueError(f"interval_hierarchy: width {b} is not a multiple of the previous width {a}.")
    integer = bool(np.all(vals == np.round(vals)) and all(float(w).is_integer() for w in ws) and float(s).is_integer())
    rows = []
    for v in vals:
        row = [_fmt(v)]
        for w in ws:
            k = math.floor((v - s) / w)
            a = s + k * w
            row.append(f"[{_fmt(a)}-{_fmt(a + w - 1)}]" if integer else f"[{_fmt(a)}, {_fmt(a + w)})")
        row.append("*")
        rows.append(row)
    return Hierarchy.from_rows(rows, name=name)


def masking_hierarchy(values: Sequence[Any], mask: str = "*", name: str | None = None) -> Hierarchy:
    """Right-to-left redaction (e.g. zip codes ``13053 -> 1305* -> 130** -> ... -> *****``).

    All values must have the same length; level ``i`` masks the last ``i`` characters.

    Examples
    --------
    >>> masking_hierarchy(["13053", "13068"]).to_rows()[0]
    ['13053', '1305*', '130**', '13***', '1****', '*****']
    """
    vals = list(dict.fromkeys(str(v) for v in values))
    if not vals:
        raise ValueError(f"Hierarchy {name!r} is empty: masking_hierarchy needs at least one value.")
    n = len(vals[0])
    bad = next((v for v in vals if len(v) != n), None)
    if bad is not None:
        raise ValueError(f"masking_hierarchy: all values must have the same length; {bad!r} differs from {vals[0]!r}.")
    rows = [[v[: n - i] + mask * i for i in range(n + 1)] for v in vals]
    return Hierarchy.from_rows(rows, name=name)


def ordered_grouping_hierarchy(
    values: Sequence[Any], group_size: int, fanout: int = 2, name: str | None = None
) -> Hierarchy:
    """Group consecutive values of an ordered domain: groups of ``group_size``, then ``fanout`` groups at a time.

    Group labels are ``first..last`` of the values they cover.

    Examples
    --------
    >>> ordered_grouping_hierarchy(["lo", "mid", "high"], group_size=2).to_rows()
    [['lo', 'lo..mid', '*'], ['mid', 'lo..mid', '*'], ['high', 'high', '*']]
    """
    vals = list(dict.fromkeys(str(v) for v in values))
    if not vals:
        raise ValueError(f"Hierarchy {name!r} is empty: ordered_grouping_hierarchy needs at least one value.")
    for pname, p, least in (("group_size", group_size, 1), ("fanout", fanout, 2)):
        check_int(p, pname, "ordered_grouping_hierarchy", least)
    rows = [[v] for v in vals]
    size = group_size
    while size < len(vals):
        for i, r in enumerate(rows):
            g = i // size
            a, b = vals[g * size], vals[min(len(vals), (g + 1) * size) - 1]
            r.append(a if a == b else f"{a}..{b}")
        size *= fanout
    for r in rows:
        r.append("*")
    return Hierarchy.from_rows(rows, name=name)
