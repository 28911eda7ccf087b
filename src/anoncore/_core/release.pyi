"""
release kernels: TDS4SA (sequential releases)
"""

from typing import Any

def tds4sa(problem: dict[str, Any]) -> dict[str, Any]:
    """
    Run TDS4SA on an encoded problem (a dict of arrays).
    """
