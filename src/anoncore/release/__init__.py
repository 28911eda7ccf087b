"""Sequential releases (Wang & Fung, "Anonymizing Sequential Releases"): the lossy join model,
(X,Y)-anonymity / (X,Y)-linkability audited on the join, and TDS4SA."""

from __future__ import annotations

from anoncore.release._problem import XYAnonymity, XYLinkability
from anoncore.release.api import ReleaseResult, kanonymize_t1, tds4sa
from anoncore.release.audit import ReleaseAudit, audit_release
from anoncore.release.evaluation import classification_error, remove_attributes
from anoncore.release.join import consistent, covers, lossy_join, population_related

__all__ = [
    "ReleaseAudit",
    "ReleaseResult",
    "XYAnonymity",
    "XYLinkability",
    "audit_release",
    "classification_error",
    "consistent",
    "covers",
    "kanonymize_t1",
    "lossy_join",
    "population_related",
    "remove_attributes",
    "tds4sa",
]
