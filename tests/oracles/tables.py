"""Test tables: random ones shared by the two-phase tests (SABRE, BUREL; alternating numeric and categorical QIs),
and the equality of two encoded tables (the encoders' tests)."""

from __future__ import annotations

from typing import Any

import numpy as np

from anoncore import Attribute, Hierarchy, Table


def random_qi_columns(rng: np.random.Generator, n: int, n_qi: int, numeric_card: int
                      ) -> tuple[dict[str, Any], list[Attribute]]:
    """`n_qi` QI columns q0, q1, ...: even ones numeric in [0, numeric_card), odd ones categorical over six labels
    with a two-level hierarchy. Returns the column data and their attributes (the caller adds the SA)."""
    data: dict[str, Any] = {}
    attrs = []
    for j in range(n_qi):
        if j % 2 == 0:
            data[f"q{j}"] = rng.integers(0, numeric_card, n)
            attrs.append(Attribute(f"q{j}", "quasi_identifier", "numeric"))
        else:
            vals = [f"c{i}" for i in range(6)]
            data[f"q{j}"] = rng.choice(vals, n)
            h = Hierarchy.from_nested({"*": {"A": vals[:3], "B": vals[3:]}})
            attrs.append(Attribute(f"q{j}", "quasi_identifier", "categorical", hierarchy=h))
    return data, attrs


def assert_same_table(a: Table, b: Table) -> None:
    """Two encodings of the same data: the same columns, codes, row ids, dropped rows, dictionaries and
    hierarchy labels."""
    assert a.columns == b.columns
    np.testing.assert_array_equal(a.codes, b.codes)
    np.testing.assert_array_equal(a.row_ids, b.row_ids)
    np.testing.assert_array_equal(a.dropped_rows, b.dropped_rows)
    for c in a.columns:
        assert list(a.dictionary(c)) == list(b.dictionary(c))
        ha, hb = a.hierarchy(c), b.hierarchy(c)
        assert (ha is None) == (hb is None)
        if ha is not None and hb is not None:
            assert ha.labels == hb.labels
