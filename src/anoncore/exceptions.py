"""Exceptions raised by anoncore (public module)."""

from __future__ import annotations

__all__ = ["InfeasibleError"]


class InfeasibleError(ValueError):
    """A privacy requirement cannot be met on this input.

    Raised, for example, when ``l`` exceeds the number of distinct sensitive values, when BUREL's
    eligibility condition fails, or when no lattice node fits within the suppression limit. The message
    states the blocking quantity.
    """
