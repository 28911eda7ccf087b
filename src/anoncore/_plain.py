"""``plain(x)``: the repr of a value for an error message, numpy scalars shown as Python numbers."""

from __future__ import annotations

from typing import Any

import numpy as np


def plain(x: Any) -> str:
    """``repr(x)`` with numpy scalars converted to Python scalars first (``inf``, not ``np.float64(inf)``).

    Examples
    --------
    >>> plain(np.float64("inf")), plain(np.int32(3)), plain("a")
    ('inf', '3', "'a'")
    """
    if isinstance(x, np.generic):
        x = x.item()
    return repr(x)
