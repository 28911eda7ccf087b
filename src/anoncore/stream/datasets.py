"""Streams for CASTLE and SABRE_W (moved to :mod:`anoncore.datasets.streams`; this path re-exports it for one release)."""

from __future__ import annotations

from anoncore.datasets import streams as _moved
from anoncore.datasets.streams import *

__all__ = list(_moved.__all__)
