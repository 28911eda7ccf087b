"""Least Common Generalized Pattern (Definition 5, Algorithm 2, Theorem 2 of Bonomi, Fan, Jin, WSDM 2016)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from anoncore._validation import check_option
from anoncore.sequence._taxonomy import Tax, as_tax

__all__ = ["lcgp", "lcgp_passes", "lcgp_union_find"]


def lcgp_passes(
    p1: Sequence[int], p2: Sequence[int], tax: Tax
) -> tuple[tuple[int, ...], dict[int, int], list[dict[int, int]]]:
    """Literal Algorithm 2: m passes, each setting h(a_i) = h(b_i) = lca(h(a_i), h(b_i)) in place.

    Returns the generalized pattern, the symbol map and the map after each pass (intermediate states).
    """
    h: dict[int, int] = {}
    for x in list(p1) + list(p2):
        h[int(x)] = int(x)
    states: list[dict[int, int]] = []
    m = len(p1)
    for _ in range(m):
        for a, b in zip(p1, p2):
            lca = tax.lca(h[int(a)], h[int(b)])
            h[int(a)] = lca
            h[int(b)] = lca
        states.append(dict(h))
    return tuple(h[int(a)] for a in p1), h, states


def lcgp_union_find(p1: Sequence[int], p2: Sequence[int], tax: Tax) -> tuple[tuple[int, ...], dict[int, int]]:
    """Closed form (spec §2.4): symbols linked by a shared position form components; each maps to the component lca."""
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for x in list(p1) + list(p2):
        parent.setdefault(int(x), int(x))
    for a, b in zip(p1, p2):
        ra, rb = find(int(a)), find(int(b))
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    comp_lca: dict[int, int] = {}
    for x in parent:
        r = find(x)
        comp_lca[r] = tax.lca(comp_lca[r], x) if r in comp_lca else x
    h = {x: comp_lca[find(x)] for x in parent}
    return tuple(h[int(a)] for a in p1), h


def lcgp(
    p1: Sequence[Any], p2: Sequence[Any], taxonomy: Any, *, method: str = "union_find"
) -> tuple[Any, ...]:
    """Least common generalized pattern of two (generalized) patterns of equal length.

    Parameters
    ----------
    p1, p2 : tuple of node labels (str) or node ids (int)
        Patterns of equal length; entries may be internal nodes (centroids).
    taxonomy : Hierarchy
        The taxonomy.
    method : {'union_find', 'passes'}, default='union_find'
        ``passes`` is the literal m-pass Algorithm 2; ``union_find`` the closed form. They agree (spec §2.4).

    Returns
    -------
    tuple
        The LCGP, as labels if the inputs were labels, else as node ids.

    Notes
    -----
    Theorem 2: the induced map minimises Σ_a c(a, h(a)) f(a) subject to h(p1) = h(p2) for any Definition-3 cost.
    Complexity O(m·h_max) (union-find) or O(m²·h_max) (passes).

    Examples
    --------
    >>> from anoncore.data.hierarchy import Hierarchy
    >>> tax = Hierarchy.from_nested({"All": {"Alcohol": ["Wine", "Beer"], "Snack": ["Cookies", "Chips"],
    ...                                      "Dairy": ["Milk", "Cheese"]}})
    >>> lcgp(("Beer", "Chips"), ("Wine", "Beer"), tax)
    ('All', 'All')
    """
    tax = as_tax(taxonomy, "lcgp")
    check_option(method, "method", "lcgp", ("passes", "union_find"))
    index = {lab: i for i, lab in enumerate(tax.labels)}
    as_labels = any(isinstance(x, str) for x in list(p1) + list(p2))

    def enc(p: Sequence[Any]) -> list[int]:
        out = []
        for x in p:
            if isinstance(x, str):
                if x not in index:
                    raise ValueError(f"The symbol {x!r} passed to lcgp is not a node of the taxonomy.")
                out.append(index[x])
            elif isinstance(x, int) and not isinstance(x, bool) and 0 <= x < tax.n_nodes:
                out.append(int(x))
            else:
                raise ValueError(f"The symbol {x!r} passed to lcgp is not a node of the taxonomy.")
        return out

    a, b = enc(p1), enc(p2)
    if len(a) != len(b) or not a:
        raise ValueError(
            f"The patterns passed to lcgp must have the same length >= 1. Got {len(a)} and {len(b)}."
        )
    res = lcgp_union_find(a, b, tax)[0] if method == "union_find" else lcgp_passes(a, b, tax)[0]
    return tuple(tax.labels[x] for x in res) if as_labels else res
