"""Static (one-shot) anonymization algorithms."""

from __future__ import annotations

from anoncore.static.mondrian import tmondrian
from anoncore.static.sabre import sabre

__all__ = ["sabre", "tmondrian"]
