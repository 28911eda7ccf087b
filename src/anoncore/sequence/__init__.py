"""Individual event-sequence sanitization with mutual-information privacy (Bonomi, Fan, Jin, WSDM 2016).

A user's event sequence S is published as Ŝ = h(S) for a global taxonomy generalization map h chosen so that
the mutual information Ĩ between the user's sensitive patterns and their generalized images is at most ε,
with small utility loss. See ``docs/sequence.md``.
"""

from __future__ import annotations

from anoncore.sequence._algorithms import TraceEvent
from anoncore.sequence.api import (
    METHODS,
    SequenceSanitization,
    UserSanitization,
    mutual_information,
    pattern_entropy,
    sample_sensitive_patterns,
    sanitize,
    sanitize_sequence,
)
from anoncore.sequence.costs import COST_FAMILIES, cost_table, utility_loss
from anoncore.sequence.counting import count_patterns, pair_table, total_embeddings
from anoncore.sequence.lcgp import lcgp

__all__ = [
    "COST_FAMILIES",
    "METHODS",
    "SequenceSanitization",
    "TraceEvent",
    "UserSanitization",
    "cost_table",
    "count_patterns",
    "lcgp",
    "mutual_information",
    "pair_table",
    "pattern_entropy",
    "sample_sensitive_patterns",
    "sanitize",
    "sanitize_sequence",
    "total_embeddings",
    "utility_loss",
]
