"""The one ``n_threads`` rule of the library (STYLE.md §2.5)."""

from __future__ import annotations

import numbers
import warnings
from typing import Any

from anoncore import _core


def check_n_threads(n_threads: Any, caller: str, *, openmp: bool = True) -> int:
    """Validate the public ``n_threads`` knob: a positive int, or None for all cores (returned as 0, the kernels'
    "all cores"). ``openmp=True`` (kernels parallelised with OpenMP) warns with ``RuntimeWarning`` when more than
    one thread is requested from a build without OpenMP, which then runs serially."""
    if n_threads is None:
        return 0
    if isinstance(n_threads, bool) or not isinstance(n_threads, numbers.Integral):
        raise TypeError(f"The 'n_threads' parameter of {caller} must be an int in the range [1, inf) or None. "
                        f"Got {n_threads!r} instead.")
    if int(n_threads) < 1:
        raise ValueError(f"The 'n_threads' parameter of {caller} must be an int in the range [1, inf) or None. "
                         f"Got {n_threads!r} instead.")
    if openmp and int(n_threads) > 1 and not getattr(_core, "has_openmp", False):
        warnings.warn(f"{caller}: n_threads={int(n_threads)} requested but anoncore was built without OpenMP; "
                      f"running serially.", RuntimeWarning, stacklevel=3)
    return int(n_threads)
