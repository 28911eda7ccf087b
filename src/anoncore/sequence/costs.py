"""Generalization cost functions (Definition 3) and utility loss (Definition 4).

A cost table is a float64 array of shape (n_leaves, n_nodes): ``table[a, v]`` is the cost of publishing leaf a
as node v. Entries off the root-to-leaf path of a are ``inf`` (Definition 3.2).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from anoncore._validation import check_float
from anoncore.sequence._taxonomy import Tax, as_tax

__all__ = ["COST_FAMILIES", "cost_table", "utility_loss", "validate_cost_table"]

COST_FAMILIES = ("linear", "exponential", "iloss")


def _family_table(tax: Tax, family: str, base: float) -> npt.NDArray[np.float64]:
    L, n = tax.n_leaves, tax.n_nodes
    table = np.full((L, n), np.inf)
    n_all = float(tax.leaf_count[tax.root])
    for a in range(L):
        da = int(tax.depth[a])
        for v in tax.paths[a]:
            dv = int(tax.depth[v])
            if v == a:
                c = 0.0
            elif family == "linear":
                c = (da - dv) / da
            elif family == "exponential":
                c = (base ** (da - dv) - 1.0) / (base**da - 1.0)
            else:  # iloss
                c = float(tax.leaf_count[v]) / n_all
            table[a, v] = c
    return table


def validate_cost_table(table: npt.NDArray[np.float64], tax: Tax, caller: str) -> None:
    """Reject tables violating Definition 3 (fixed form, spec §1.5 / C1)."""
    for a in range(tax.n_leaves):
        path = tax.paths[a]
        on_path = np.zeros(tax.n_nodes, dtype=bool)
        on_path[list(path)] = True
        off = table[a, ~on_path]
        if np.any(np.isfinite(off)):
            v = int(np.flatnonzero(~on_path)[np.flatnonzero(np.isfinite(off))[0]])
            raise ValueError(
                f"The cost table of {caller} violates Definition 3: c({tax.labels[a]!r}, {tax.labels[v]!r}) must be inf "
                "because the node is not on the leaf's root path."
            )
        vals = table[a, list(path)]
        if not np.all(np.isfinite(vals)) or np.any(vals < 0):
            raise ValueError(
                f"The cost table of {caller} violates Definition 3: costs of leaf {tax.labels[a]!r} along its root "
                "path must be finite and non-negative."
            )
        if vals[-1] != 0.0:
            raise ValueError(
                f"The cost table of {caller} violates Definition 3: c({tax.labels[a]!r}, {tax.labels[a]!r}) must be 0. "
                f"Got {vals[-1]!r}."
            )
        if np.any(vals[:-1] <= 0.0):
            v = path[int(np.flatnonzero(vals[:-1] <= 0.0)[0])]
            raise ValueError(
                f"The cost table of {caller} violates Definition 3: c({tax.labels[a]!r}, {tax.labels[v]!r}) must be > 0 "
                "for a proper ancestor."
            )
        if np.any(np.diff(vals) > 0.0):
            i = int(np.flatnonzero(np.diff(vals) > 0.0)[0])
            raise ValueError(
                f"The cost table of {caller} violates Definition 3: the cost of leaf {tax.labels[a]!r} must not "
                f"increase going down its path, but c(., {tax.labels[path[i]]!r}) = {vals[i]!r} < "
                f"c(., {tax.labels[path[i + 1]]!r}) = {vals[i + 1]!r}."
            )


def resolve_cost(cost: Any, tax: Tax, caller: str, base: float = 2.0) -> npt.NDArray[np.float64]:
    """A family name or a user table -> validated cost table."""
    if isinstance(cost, str):
        if cost not in COST_FAMILIES:
            raise ValueError(
                f"The 'cost' parameter of {caller} must be a str among {{'exponential', 'iloss', 'linear'}} "
                f"or an array of shape ({tax.n_leaves}, {tax.n_nodes}). Got {cost!r} instead."
            )
        return _family_table(tax, cost, base)
    if not isinstance(cost, (np.ndarray, list, tuple)):
        raise TypeError(
            f"The 'cost' parameter of {caller} must be a str or an array-like. Got {type(cost).__name__} instead."
        )
    table = np.asarray(cost, dtype=np.float64)
    if table.shape != (tax.n_leaves, tax.n_nodes):
        raise ValueError(
            f"The 'cost' parameter of {caller} must have shape ({tax.n_leaves}, {tax.n_nodes}). Got {table.shape} instead."
        )
    table = np.where(np.isnan(table), np.inf, table)
    validate_cost_table(table, tax, caller)
    return np.ascontiguousarray(table)


def cost_table(taxonomy: Any, family: str = "linear", *, base: float = 2.0) -> npt.NDArray[np.float64]:
    """Cost table of one of the paper's families, all with leaf -> root cost 1.

    Parameters
    ----------
    taxonomy : Hierarchy
        The taxonomy.
    family : {'linear', 'exponential', 'iloss'}, default='linear'
        ``linear``: ``(d(a) - d(v)) / d(a)``; ``exponential``: ``(base^(d(a)-d(v)) - 1) / (base^d(a) - 1)``;
        ``iloss``: ``|L(v)| / |L(T)|`` for ``v != a`` and 0 for ``v == a``.
    base : float, default=2.0
        Base of the exponential family (> 1).

    Returns
    -------
    ndarray of float64 of shape (n_leaves, n_nodes)
        ``inf`` off the root path (Definition 3.2).

    Examples
    --------
    >>> from anoncore.data.hierarchy import Hierarchy
    >>> tax = Hierarchy.from_nested({"*": {"x": ["a", "b"], "c": []}})
    >>> cost_table(tax, "linear")[0].tolist()
    [0.0, inf, inf, 0.5, 1.0]
    """
    tax = as_tax(taxonomy, "cost_table")
    base = check_float(base, "base", "cost_table", 1, None, closed="neither")
    return resolve_cost(family, tax, "cost_table", base)


def utility_loss(sequence: Any, sanitized: Any, taxonomy: Any, cost: Any = "linear") -> float:
    """UL(S, Ŝ) = Σ_i c(S[i], Ŝ[i]) (Definition 4).

    Parameters
    ----------
    sequence : sequence of leaf codes
        Original sequence S.
    sanitized : sequence of node ids
        Published sequence Ŝ (same length).
    taxonomy : Hierarchy
        The taxonomy.
    cost : str or array-like, default='linear'
        Family name or validated user table.

    Returns
    -------
    float

    Examples
    --------
    >>> from anoncore.data.hierarchy import Hierarchy
    >>> tax = Hierarchy.from_nested({"*": {"x": ["a", "b"], "c": []}})
    >>> utility_loss([0, 1, 2], [3, 1, 4], tax)
    1.5
    """
    tax = as_tax(taxonomy, "utility_loss")
    table = resolve_cost(cost, tax, "utility_loss")
    s = np.asarray(sequence, dtype=np.int64)
    g = np.asarray(sanitized, dtype=np.int64)
    if s.shape != g.shape or s.ndim != 1:
        raise ValueError(
            "The 'sequence' and 'sanitized' parameters of utility_loss must be 1-D of equal length."
        )
    return float(table[s, g].sum())
