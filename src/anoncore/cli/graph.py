"""``anoncore graph``: prominence-based anonymization of node labels (implemented in :mod:`anoncore.graph._cli`)."""

from __future__ import annotations

from anoncore.graph._cli import build_parser, register, run

__all__ = ["build_parser", "register", "run"]
