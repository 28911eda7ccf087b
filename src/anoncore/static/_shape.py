"""The one call shape of the static algorithms and the deprecation of the old ones.

Every static algorithm is called as ``algorithm(table, models, *, suppression_limit=0.0, rng=None,
n_threads=None, **options)`` where the algorithm has these knobs (the lattice searches have no randomness;
SABRE, BUREL and the Mondrian variants never suppress rows). The forms of the previous release
(options after ``models`` passed by position; ``t_incognito(table, k, t, distance)``;
``hellinger_t_closeness(table, t, k)``) keep working for one release with a :class:`DeprecationWarning`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

__all__ = ["UNSET", "deprecated_call", "positional_options"]


class _Unset:
    """Marker of a keyword argument that was not given."""

    def __repr__(self) -> str:
        return "<unset>"


UNSET: Any = _Unset()


def deprecated_call(old: str, new: str, stacklevel: int = 3) -> None:
    """Warn that the call form ``old`` is deprecated in favour of ``new`` (removed in the next release)."""
    warnings.warn(f"{old} is deprecated and will be removed in the next release; use {new}.", DeprecationWarning,
                  stacklevel=stacklevel)


def positional_options(caller: str, args: Sequence[Any], names: Sequence[str], given: dict[str, Any],
                       defaults: dict[str, Any]) -> dict[str, Any]:
    """Resolve options that the previous release took by position after ``models``.

    ``args``: the extra positional arguments (mapped onto ``names`` in order, with a DeprecationWarning);
    ``given``: the keyword values (``UNSET`` when not passed); ``defaults``: the value of every option.
    """
    if len(args) > len(names):
        raise TypeError(f"{caller}() takes 2 positional arguments (table, models); got {2 + len(args)}.")
    out = dict(given)
    if args:
        used = list(names[:len(args)])
        deprecated_call(f"{caller}(table, models, {', '.join(used)}) with positional options",
                        f"keywords: {caller}(table, models, {', '.join(f'{n}=...' for n in used)})", stacklevel=4)
        for name, value in zip(used, args):
            if out.get(name, UNSET) is not UNSET:
                raise TypeError(f"{caller}() got multiple values for argument {name!r}.")
            out[name] = value
    return {name: defaults[name] if out.get(name, UNSET) is UNSET else out[name] for name in defaults}
