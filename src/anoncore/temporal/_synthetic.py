"""Synthetic snapshot streams (moved to :mod:`anoncore.datasets.temporal`; this path re-exports it for one release)."""

from __future__ import annotations

from anoncore.datasets import temporal as _moved
from anoncore.datasets.temporal import *

__all__ = list(_moved.__all__)
