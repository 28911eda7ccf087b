"""delta-presence against ARX 3.9 (arx-expected.json, TestUtilityMetrics with DPresence(0.05, 0.15) on the
research subset adult_subset.csv, alone or with 5-anonymity): at each listed transformation, the classes smaller
than k or whose delta = count / pcount lies outside [0.05, 0.15] (count > 0) are suppressed, and ARX's discernibility (DM, non-monotone: a published class
costs count^2, a suppressed record costs N = 3,016) must equal the value ARX recorded."""

from __future__ import annotations

import json
from collections import defaultdict, deque

import numpy as np
import pandas as pd
import pytest

from anoncore import Partition
from anoncore.audit import audit
from anoncore.models import DeltaPresence


def _subset_mask(data_dir) -> np.ndarray:  # type: ignore[no-untyped-def]
    """ARX's DataSubset.create: every subset row maps to the first not yet used identical row (ARX-ORACLES 2.4)."""
    full = pd.read_csv(data_dir / "adult" / "adult.csv", sep=";", dtype=str, keep_default_na=False)
    sub = pd.read_csv(data_dir / "adult" / "adult_subset.csv", sep=";", dtype=str, keep_default_na=False)
    where: dict[tuple, deque] = defaultdict(deque)
    for i, row in enumerate(full.itertuples(index=False)):
        where[tuple(row)].append(i)
    mask = np.zeros(len(full), dtype=bool)
    for row in sub.itertuples(index=False):
        mask[where[tuple(row)].popleft()] = True
    assert mask.sum() == len(sub) == 3016
    return mask


def _cases() -> list[dict]:
    from anoncore.datasets import shared_data_dir

    path = shared_data_dir() / "adult" / "arx-expected.json"
    if not path.exists():
        return []
    out = []
    for c in json.loads(path.read_text()):
        types = sorted(m["type"] for m in c["privacy_models"])
        if (c["kind"] == "per_transformation_loss" and types in (["delta-presence"], ["delta-presence", "k-anonymity"])
                and c["metric"]["arx_class"] == "MetricSDNMDiscernability"):
            out.append(c)
    return out


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c["id"])
def test_delta_presence_dm_equals_arx(case: dict, data_dir, adult_occupation) -> None:  # type: ignore[no-untyped-def]
    t = adult_occupation
    assert list(t.quasi_identifiers) == case["levels_attribute_order"]
    m = next(x for x in case["privacy_models"] if x["type"] == "delta-presence")
    k = next((x["k"] for x in case["privacy_models"] if x["type"] == "k-anonymity"), 1)
    subset = _subset_mask(data_dir)
    model = DeltaPresence(m["delta_min"], m["delta_max"], subset=subset)
    N = int(subset.sum())
    for row in case["expected"]["per_transformation"]:
        part = Partition.from_levels(t, row["levels"])
        delta = audit(t, part, model)[0].values
        count = np.bincount(part.labels[subset], minlength=part.n_classes)
        # ARX's order: the class-size check first, then delta-presence; classes with no subset row never
        # are outliers (ARX-ORACLES.md 5.3)
        outlier = (count > 0) & ((count < k) | (delta < m["delta_min"]) | (delta > m["delta_max"]))
        dm = float((count[~outlier] ** 2).sum() + count[outlier].sum() * N)
        assert dm == pytest.approx(float(row["score"]), abs=1e-8), row["levels"]
