"""anoncore: privacy-preserving data publishing with C++ kernels."""

from __future__ import annotations

try:
    from anoncore import _core  # noqa: F401  (fail early with a clear message on a broken install)
except ImportError as exc:  # pragma: no cover - only on a broken install
    raise ImportError(
        "anoncore's compiled module anoncore._core could not be imported. Did you forget to compile anoncore? "
        "Install it with `pip install .` (or run tools/devbuild.sh for a development tree)."
    ) from exc

from anoncore import datasets, distance, metrics, risk, sequence, static, stream, temporal
from anoncore.audit import AuditReport, ModelAudit, audit
from anoncore.data.builders import (
    flat_hierarchy,
    interval_hierarchy,
    masking_hierarchy,
    ordered_grouping_hierarchy,
)
from anoncore.data.hierarchy import Hierarchy
from anoncore.data.schema import Attribute, Schema
from anoncore.data.table import Table
from anoncore.exceptions import InfeasibleError
from anoncore.models import (
    AverageReidentificationRisk,
    BasicBetaLikeness,
    DeltaDisclosure,
    DeltaPresence,
    DistinctLDiversity,
    EnhancedBetaLikeness,
    EntropyLDiversity,
    EqualDistanceTCloseness,
    HellingerTCloseness,
    HierarchicalDistanceTCloseness,
    KAnonymity,
    KMap,
    OrderedDistanceTCloseness,
    PopulationUniqueness,
    RangeBetaLikeness,
    RecursiveCLDiversity,
    SampleUniqueness,
    SemanticBetaLikeness,
)
from anoncore.results import Partition, Result
from anoncore.static import (
    best_k,
    burel,
    datafly,
    dmondrian,
    improved_greedy,
    lattice_search,
    lmondrian,
    sabre,
    samarati,
    t_incognito,
    tmondrian,
)

__version__ = "0.1.0"
__all__ = [
    "Attribute",
    "AuditReport",
    "AverageReidentificationRisk",
    "BasicBetaLikeness",
    "DeltaDisclosure",
    "DeltaPresence",
    "DistinctLDiversity",
    "EnhancedBetaLikeness",
    "EntropyLDiversity",
    "EqualDistanceTCloseness",
    "HellingerTCloseness",
    "HierarchicalDistanceTCloseness",
    "Hierarchy",
    "InfeasibleError",
    "KAnonymity",
    "KMap",
    "ModelAudit",
    "OrderedDistanceTCloseness",
    "Partition",
    "PopulationUniqueness",
    "RangeBetaLikeness",
    "RecursiveCLDiversity",
    "Result",
    "SampleUniqueness",
    "Schema",
    "SemanticBetaLikeness",
    "Table",
    "__version__",
    "audit",
    "best_k",
    "burel",
    "datafly",
    "datasets",
    "distance",
    "dmondrian",
    "flat_hierarchy",
    "improved_greedy",
    "interval_hierarchy",
    "lattice_search",
    "lmondrian",
    "masking_hierarchy",
    "metrics",
    "ordered_grouping_hierarchy",
    "risk",
    "sabre",
    "samarati",
    "sequence",
    "static",
    "stream",
    "t_incognito",
    "temporal",
    "tmondrian",
]
