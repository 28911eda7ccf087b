"""Per-table caches owned by the algorithms, not stored in the frozen :class:`~anoncore.data.table.Table`.

A :class:`Table` is immutable, so data derived from it alone (the lattice's bottom frequency set, the QI
coordinate space of SABRE/BUREL/Mondrian, the audit's whole-table reference distribution) can be computed
once per table and reused. Each module that computes such data owns a :class:`TableCache`; the entries are
held through a weak reference to the table and disappear with it. The table itself memoises only its own
views (``Table.column``, ``Table.qi_codes``, ``Table.domain``).
"""

from __future__ import annotations

import weakref
from typing import Any

__all__ = ["TableCache", "clear_table_caches"]

_ALL: list[TableCache] = []


class TableCache:
    """A dict of derived values per table, dropped when the table is garbage collected.

    Parameters
    ----------
    owner : str
        The module that owns the cache (for ``repr`` only).

    Examples
    --------
    >>> from anoncore.datasets import toy_table
    >>> cache = TableCache("example")
    >>> t = toy_table()
    >>> cache.of(t)["answer"] = 42
    >>> cache.of(t)["answer"], len(cache)
    (42, 1)
    >>> del t
    >>> import gc; _ = gc.collect()
    >>> len(cache)
    0
    """

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self._entries: weakref.WeakKeyDictionary[Any, dict[Any, Any]] = weakref.WeakKeyDictionary()
        _ALL.append(self)

    def of(self, table: Any) -> dict[Any, Any]:
        """The cache dict of ``table`` (created empty on first use)."""
        d = self._entries.get(table)
        if d is None:
            d = {}
            self._entries[table] = d
        return d

    def clear(self, table: Any | None = None) -> None:
        """Forget the entries of ``table`` (of every table when None)."""
        if table is None:
            self._entries.clear()
        else:
            self._entries.pop(table, None)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"TableCache({self.owner!r}, tables={len(self)})"


def clear_table_caches(table: Any) -> None:
    """Forget everything every algorithm derived from ``table`` and the table's own memoised views, keeping its
    encoding: the next call on the table runs as a first call (used by the first-call benchmarks and tests)."""
    for cache in _ALL:
        cache.clear(table)
    table._cache.clear()
