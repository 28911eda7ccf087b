"""Two-phase algorithms (SABRE, BUREL) and the Mondrian baselines on a dask DataFrame split into parts, on a
local Dask cluster (2 worker processes): one part equals the in-memory run row for row; several parts keep every
row and pass the audit against the whole table's sensitive distribution (checked independently by the
in-memory audit of the collected labels)."""

from __future__ import annotations

import numpy as np
import pytest

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

from anoncore import Table, _core, audit
from anoncore.datasets.census import synthetic_census_frame, synthetic_census_schema
from anoncore.distributed.twophase import two_phase
from anoncore.models import (
    BasicBetaLikeness,
    EnhancedBetaLikeness,
    KAnonymity,
    OrderedDistanceTCloseness,
)
from anoncore.results import Partition
from anoncore.static import _space, burel, dmondrian, lmondrian, sabre, tmondrian

N = 12_000

CASES = {
    "sabre": ([KAnonymity(5), OrderedDistanceTCloseness(0.2)], sabre, {"rng": 0}),
    "burel": ([EnhancedBetaLikeness(4)], burel, {"rng": 0}),
    "tmondrian": ([KAnonymity(5), OrderedDistanceTCloseness(0.2)], tmondrian, {}),
    "lmondrian": ([EnhancedBetaLikeness(4)], lmondrian, {}),
    "dmondrian": ([EnhancedBetaLikeness(4)], dmondrian, {}),
}


@pytest.fixture(scope="module")
def client(dask_client):  # (conftest: one local cluster of 2 workers for the modules that kill no worker)
    return dask_client


@pytest.fixture(scope="module")
def census():
    df = synthetic_census_frame(N, 11)
    schema = synthetic_census_schema(n_qi=4)
    return df, schema, Table.from_pandas(df, schema)


@pytest.fixture(scope="module")
def ddf(census):
    return dd.from_pandas(census[0], npartitions=4, sort=False)


@pytest.mark.parametrize("algorithm", list(CASES))
def test_one_part_equals_the_in_memory_run(client, census, ddf, algorithm):
    _, schema, table = census
    models, memory, kw = CASES[algorithm]
    mem = memory(table, models, **kw)
    res = two_phase(ddf, schema, models, algorithm=algorithm, n_parts=1, rng=0)
    assert res.part_rows == (N,)
    np.testing.assert_array_equal(res.labels(), mem.partition.labels)
    assert res.n_classes == mem.partition.n_classes


@pytest.mark.parametrize("algorithm,split,n_parts", [
    ("sabre", "hilbert", 4), ("sabre", "rows", 3), ("burel", "hilbert", 4), ("burel", "rows", 2),
    ("tmondrian", "hilbert", 4), ("lmondrian", "hilbert", 3), ("dmondrian", "hilbert", 2),
])
def test_parts_keep_every_row_and_pass_the_global_audit(client, census, ddf, algorithm, split, n_parts):
    df, schema, table = census
    models, _, _ = CASES[algorithm]
    res = two_phase(ddf, schema, models, algorithm=algorithm, n_parts=n_parts, split=split, rng=1)
    assert res.n_parts == n_parts and sum(res.part_rows) == N
    labels = res.labels()
    assert labels.min() >= 0 and np.unique(labels).size == res.n_classes  # every row in exactly one class
    # the global reference is the whole table's histogram (independent: pandas value counts)
    counts = df["salary"].value_counts()
    dic = schema["salary"].hierarchy.leaves
    assert {float(dic[c]): int(res.reference[c]) for c in np.flatnonzero(res.reference)} == \
        {float(v): int(n) for v, n in counts.items()}
    # independent check: the in-memory audit of the collected labels against the whole table
    report = audit(table, Partition.from_labels(table, labels), res.models, reference="table")
    assert report.passed
    # the distributed audit of the published rows says the same
    dist = res.audit(schema)
    assert dist["passed"] and dist["n_published"] == N
    # classes with the same published labels are one class to the audit of the published rows
    assert dist["n_classes"] <= res.n_classes
    if dist["n_classes"] == res.n_classes:  # the same classes: the same achieved values
        for i, m in enumerate(res.models):
            assert dist[f"{type(m).__name__}.{m.parameter}"] == pytest.approx(report[i].achieved)


def _canonical(labels):
    """Class labels renumbered by first row, so equal partitions compare equal."""
    _, first = np.unique(labels, return_index=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first)] = np.arange(first.size)
    return rank[np.unique(labels, return_inverse=True)[1]]


@pytest.mark.parametrize("algorithm", ["tmondrian", "lmondrian", "dmondrian"])
def test_mondrian_parts_equal_the_in_memory_partition(client, census, ddf, algorithm):
    """Mondrian's first cuts made from merged histograms are the kernel's own: 4 parts give the in-memory
    classes exactly (the same rows together)."""
    _, schema, table = census
    models, memory, kw = CASES[algorithm]
    mem = memory(table, models, **kw)
    res = two_phase(ddf, schema, models, algorithm=algorithm, n_parts=4)
    assert 2 <= res.n_parts <= 4  # fewer when Mondrian itself cannot cut a region (DMondrian here: 3)
    np.testing.assert_array_equal(_canonical(res.labels()), _canonical(mem.partition.labels))


def test_parts_anonymized_alone_fail_the_global_audit_but_two_phase_passes(client, census):
    """Why the global histogram: a table whose partitions are sorted by salary, each partition anonymized on
    its own (its own distribution) breaks t-closeness against the whole table; two_phase does not."""
    df, schema, _ = census
    order = np.argsort(df["salary"].to_numpy(), kind="stable")
    sdf = df.iloc[order].reset_index(drop=True)
    stable = Table.from_pandas(sdf, schema)
    sddf = dd.from_pandas(sdf, npartitions=4, sort=False)
    models = CASES["sabre"][0]
    labels = np.empty(N, dtype=np.int64)
    start, offset = 0, 0
    for part in sddf.to_delayed():
        pdf = part.compute()
        r = sabre(Table.from_pandas(pdf, schema), models, rng=0)
        labels[start:start + len(pdf)] = r.partition.labels + offset
        start += len(pdf)
        offset += r.partition.n_classes
    naive = audit(stable, Partition.from_labels(stable, labels), models, reference="table")
    assert not naive.passed
    res = two_phase(sddf, schema, models, algorithm="sabre", n_parts=4, split="rows", rng=0)
    assert audit(stable, Partition.from_labels(stable, res.labels()), models, reference="table").passed


def test_mondrian_kernel_measures_against_the_given_reference(census):
    """The binding's reference: a part's classes are held to it (numpy oracle of enhanced beta-likeness)."""
    df, schema, table = census
    half = df.sample(frac=0.5, random_state=3).reset_index(drop=True)
    part = Table.from_pandas(half, schema)
    space = _space.qi_space(part)
    sa = part.column("salary")
    m = part.cardinality("salary")
    ref = np.bincount(table.column("salary"), minlength=m).astype(np.int64)
    beta = 1.0

    def worst(labels):  # largest (q - p) / p / min(beta, -ln p) over classes and values, p of the whole table
        p = ref / ref.sum()
        hist = np.zeros((labels.max() + 1, m))
        np.add.at(hist, (labels, sa), 1)
        q = hist / hist.sum(axis=1, keepdims=True)
        present = p > 0
        gain = (q[:, present] - p[present]) / p[present]
        return float((gain / np.minimum(beta, -np.log(p[present]))).max())

    own = _core.mondrian.partition(space.codes, space.values, space.offsets, sa, m, [("beta_enhanced", beta)])
    glob = _core.mondrian.partition(space.codes, space.values, space.offsets, sa, m, [("beta_enhanced", beta)],
                                    reference=ref)
    assert worst(np.asarray(glob.labels)) <= 1 + 1e-9
    assert worst(np.asarray(own.labels)) > 1  # held to its own distribution, some class breaks the whole table's
    with pytest.raises(ValueError, match="cover"):
        _core.mondrian.partition(space.codes, space.values, space.offsets, sa, m, [("k", 2.0)],
                                 reference=np.zeros(m, dtype=np.int64))


def test_bad_input(client, census, ddf):
    _, schema, _ = census
    models = CASES["sabre"][0]
    with pytest.raises(ValueError, match="algorithm"):
        two_phase(ddf, schema, models, algorithm="flash")
    with pytest.raises(ValueError, match="split"):
        two_phase(ddf, schema, models, split="random")
    with pytest.raises(ValueError, match="EnhancedBetaLikeness"):
        two_phase(ddf, schema, models, algorithm="burel")
    with pytest.raises(ValueError, match="one EnhancedBetaLikeness"):
        two_phase(ddf, schema, [BasicBetaLikeness(4)], algorithm="dmondrian")
    with pytest.raises(ValueError, match="n_parts"):
        two_phase(ddf, schema, models, n_parts=0)
    bad = census[0].copy()
    bad.loc[7_000, "sex"] = "martian"
    with pytest.raises(ValueError, match=r"'martian' of column 'sex' \(partition 2, row"):
        two_phase(dd.from_pandas(bad, npartitions=4, sort=False), schema, models)
    with pytest.raises(ValueError, match="no column 'sex'"):
        two_phase(dd.from_pandas(census[0].drop(columns=["sex"]), npartitions=2, sort=False), schema, models)
    with_empty = dd.concat([dd.from_pandas(census[0], npartitions=2, sort=False),
                            dd.from_pandas(census[0].iloc[:0], npartitions=1, sort=False)])
    with pytest.raises(ValueError, match="Partition 2 is empty"):
        two_phase(with_empty, schema, models)
