"""``anoncore release``: TDS4SA on two CSV files and a JSON schema (implemented in anoncore.release._cli)."""

from __future__ import annotations

from anoncore.release._cli import build_parser, register, run

__all__ = ["build_parser", "register", "run"]
