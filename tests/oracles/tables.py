"""Random test tables shared by the two-phase tests (SABRE, BUREL): alternating numeric and categorical QIs."""

from __future__ import annotations

from typing import Any

import numpy as np

from anoncore import Attribute, Hierarchy


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
