"""Synthetic event sequences (moved to :mod:`anoncore.datasets.sequences`; this path re-exports it for one release)."""

from __future__ import annotations

from anoncore.datasets import sequences as _moved
from anoncore.datasets.sequences import *

__all__ = list(_moved.__all__)
