"""Synthetic event sequences (moved to :mod:`anoncore.datasets.sequences`; this path re-exports it)."""

from __future__ import annotations

from anoncore.datasets.sequences import (
    MSNBC_CATEGORIES,
    location_like,
    location_taxonomy,
    markov_sequences,
    msnbc_like,
    msnbc_taxonomy,
)

__all__ = [
    "MSNBC_CATEGORIES",
    "location_like",
    "location_taxonomy",
    "markov_sequences",
    "msnbc_like",
    "msnbc_taxonomy",
]
