"""anoncore: privacy-preserving data publishing with C++ kernels."""

from __future__ import annotations

try:
    from anoncore import _core
except ImportError as exc:  # pragma: no cover - only on a broken install
    raise ImportError(
        "anoncore's compiled module anoncore._core could not be imported. Did you forget to compile anoncore? "
        "Install it with `pip install .` (or run tools/devbuild.sh for a development tree)."
    ) from exc

from anoncore.exceptions import InfeasibleError

__version__ = "0.1.0"
__all__ = ["InfeasibleError", "__version__"]
