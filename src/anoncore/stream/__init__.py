"""Stream anonymization: CASTLE (k_s-anonymity / distinct l-diversity under a delay bound).

SABRE_W ((omega, t)-closeness over sliding windows) will live next to it in ``sabre_w.py``.
"""

from __future__ import annotations

from anoncore.stream.castle import MODES, Castle, CastleRelease, releases_to_partition

__all__ = ["MODES", "Castle", "CastleRelease", "releases_to_partition"]
