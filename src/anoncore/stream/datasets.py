"""Streams for CASTLE and SABRE_W (moved to :mod:`anoncore.datasets.streams`; this path re-exports it)."""

from __future__ import annotations

from anoncore.datasets.streams import (
    ADULT_NUMERIC_DOMAINS,
    ADULT_QI,
    adult_stream_schema,
    expand_transactions,
    load_uci_adult_stream,
    power_law_stream,
    transaction_stream,
)

__all__ = [
    "ADULT_NUMERIC_DOMAINS",
    "ADULT_QI",
    "adult_stream_schema",
    "expand_transactions",
    "load_uci_adult_stream",
    "power_law_stream",
    "transaction_stream",
]
