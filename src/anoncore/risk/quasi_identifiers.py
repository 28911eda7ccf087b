"""Quasi-identifier analysis: rank attribute combinations by distinction and separation (ARX's definitions,
from Motwani & Xu 2007)."""

from __future__ import annotations

import itertools
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from anoncore import _core
from anoncore.data.table import Table

__all__ = ["QuasiIdentifierScore", "quasi_identifier_analysis"]


@dataclass(frozen=True, slots=True)
class QuasiIdentifierScore:
    """Distinction and separation of one attribute combination.

    Attributes
    ----------
    attributes : tuple of str
    distinction : float
        Distinct value combinations over the number of rows (1: every row unique).
    separation : float
        Fraction of row pairs that differ on at least one attribute of the combination (1: every pair told
        apart).
    n_classes : int
    """

    attributes: tuple[str, ...]
    distinction: float
    separation: float
    n_classes: int

    def to_dict(self) -> dict[str, Any]:
        return {"attributes": list(self.attributes), "distinction": self.distinction, "separation": self.separation,
                "n_classes": self.n_classes}


def quasi_identifier_analysis(table: Table, attributes: Sequence[str] | None = None, max_size: int | None = None
                              ) -> tuple[QuasiIdentifierScore, ...]:
    """Score every combination of attributes by distinction and separation, best first.

    Parameters
    ----------
    table : Table
    attributes : sequence of str, default=None
        Candidate attributes (default: the quasi-identifiers).
    max_size : int, default=None
        Largest combination size (default: all, ``2^m - 1`` combinations).

    Returns
    -------
    tuple of QuasiIdentifierScore
        Sorted by separation, then distinction (both descending), then fewer attributes, then name order.

    Notes
    -----
    With class sizes ``f_c`` of the combination over ``n`` rows: distinction ``= #classes / n``, separation
    ``= 1 - sum_c f_c (f_c - 1) / (n (n - 1))``. One C++ group-by per combination, O(n s) for s attributes.

    Examples
    --------
    >>> from anoncore.datasets import toy_table
    >>> top = quasi_identifier_analysis(toy_table())[0]
    >>> top.attributes, top.distinction, top.separation
    (('zip',), 1.0, 1.0)
    """
    if not isinstance(table, Table):
        raise TypeError("The 'table' parameter of quasi_identifier_analysis must be a Table. "
                        f"Got {type(table).__name__} instead.")
    names = list(table.quasi_identifiers if attributes is None else attributes)
    if isinstance(attributes, str):
        raise TypeError("The 'attributes' parameter of quasi_identifier_analysis must be a sequence of column "
                        f"names. Got {attributes!r} instead.")
    if not names:
        raise ValueError("quasi_identifier_analysis needs at least one attribute.")
    known = [a.name for a in table.attributes]
    for a in names:
        if a not in known:
            raise ValueError(f"Unknown column {a!r}; the table has {known}.")
    if len(set(names)) != len(names):
        raise ValueError(f"The 'attributes' parameter of quasi_identifier_analysis has duplicates: {names}.")
    m = len(names)
    if max_size is None:
        max_size = m
    if isinstance(max_size, bool) or not isinstance(max_size, numbers.Integral):
        raise TypeError(f"The 'max_size' parameter of quasi_identifier_analysis must be an int in the range [1, {m}]. "
                        f"Got {max_size!r} instead.")
    if not 1 <= max_size <= m:
        raise ValueError(f"The 'max_size' parameter of quasi_identifier_analysis must be an int in the range "
                         f"[1, {m}]. Got {max_size!r} instead.")
    n = table.n_rows
    cols = {a: np.ascontiguousarray(table.column(a), dtype=np.int32) for a in names}
    card = {a: table.cardinality(a) for a in names}
    pairs = n * (n - 1)
    out = []
    skip = np.zeros(0, dtype=bool)
    for s in range(1, max_size + 1):
        for combo in itertools.combinations(names, s):
            codes = np.ascontiguousarray(np.column_stack([cols[a] for a in combo]), dtype=np.int32)
            labels, nc = _core.core.dense_labels(codes, np.array([card[a] for a in combo], dtype=np.int64))
            f = _core.core.class_sizes(labels, skip, int(nc)).astype(np.float64)
            same = float((f * (f - 1)).sum())
            sep = 1.0 - same / pairs if pairs > 0 else 1.0
            out.append(QuasiIdentifierScore(tuple(combo), int(nc) / n if n else 0.0, sep, int(nc)))
    order = {a: i for i, a in enumerate(names)}
    out.sort(key=lambda q: (-q.separation, -q.distinction, len(q.attributes), [order[a] for a in q.attributes]))
    return tuple(out)
