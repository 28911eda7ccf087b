"""Synthetic snapshot streams (moved to :mod:`anoncore.datasets.temporal`; this path re-exports it)."""

from __future__ import annotations

from anoncore.datasets.temporal import (
    make_temporal_stream,
)

__all__ = [
    "make_temporal_stream",
]
