"""The synthetic census generator (moved to :mod:`anoncore.datasets.census`; this path re-exports it for one release)."""

from __future__ import annotations

from anoncore.datasets import census as _moved
from anoncore.datasets.census import *

__all__ = list(_moved.__all__)
