"""Stream anonymization: CASTLE (k_s-anonymity / distinct l-diversity under a delay bound) and SABRE_W
((omega, t)-closeness with k_s-anonymity over sliding windows, with the tMondrian_W / tIncognito_W baselines).
"""

from __future__ import annotations

from anoncore.stream.castle import MODES, Castle, CastleRelease, releases_to_partition
from anoncore.stream.sabre_w import CASES, SabreW, SabreWRelease, TIncognitoW, TMondrianW

__all__ = ["CASES", "MODES", "Castle", "CastleRelease", "SabreW", "SabreWRelease", "TIncognitoW", "TMondrianW",
           "releases_to_partition"]
