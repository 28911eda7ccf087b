"""The one ``n_threads`` rule of the library (STYLE.md §2.5); it lives in :mod:`anoncore._validation`."""

from __future__ import annotations

from anoncore._validation import check_n_threads

__all__ = ["check_n_threads"]
