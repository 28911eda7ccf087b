"""Per-key work on a local Dask cluster (2 worker processes): sequence sanitization per user and temporal
reposition per key, after a shuffle by key, equal the in-memory runs key for key."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

from anoncore.datasets.sequences import msnbc_like
from anoncore.distributed.perkey import reposition_by_key, sanitize_by_user
from anoncore.sequence import sanitize
from anoncore.temporal import is_l_eligible, make_temporal_stream, reposition_stream


@pytest.fixture(scope="module")
def client(dask_client):  # (conftest: one local cluster of 2 workers for the modules that kill no worker)
    return dask_client


def test_sanitize_by_user_equals_in_memory(client):
    seqs, tax = msnbc_like(30, 80, rng=4)
    leaves = np.asarray(tax.labels, dtype=object)[: tax.n_leaves]
    users = [f"u{i:02d}" for i in range(len(seqs))]
    df = pd.DataFrame({"user": np.repeat(users, [len(s) for s in seqs]),
                       "event": np.concatenate([leaves[s] for s in seqs]),
                       "t": np.concatenate([np.arange(len(s)) for s in seqs])})
    df = df.sample(frac=1.0, random_state=0).reset_index(drop=True)  # users' events scattered over partitions
    patterns = [(leaves[0], leaves[1]), (leaves[2], leaves[0])]
    out = sanitize_by_user(dd.from_pandas(df, npartitions=5, sort=False), tax, patterns, 0.5, 3, order="t",
                           npartitions=3, method="top_down").compute()
    assert len(out) == len(df)  # every event published once
    mem = sanitize([list(leaves[s]) for s in seqs], tax, patterns, 0.5, 3, method="top_down")
    labels = np.asarray(tax.labels, dtype=object)
    for u, res in zip(users, mem.users):
        rows = out[out["user"] == u].sort_values("t")
        assert rows["published"].tolist() == list(labels[np.asarray(res.sanitized)])
        assert rows["mi"].iloc[0] == res.mi and rows["utility_loss"].iloc[0] == res.utility_loss
        assert res.mi <= res.epsilon + 1e-12


def test_reposition_by_key_equals_in_memory(client):
    frames = []
    for k in range(4):
        s = make_temporal_stream(n_snapshots=25, snapshot_size=20, n_sa=6, rng=k)
        frames.append(pd.DataFrame({"key": f"k{k}", "ts": s["ts"].to_numpy(), "sa": s["sa"].to_numpy()}))
    df = pd.concat(frames, ignore_index=True)
    df["rid"] = np.arange(len(df))
    df = df.sample(frac=1.0, random_state=1).reset_index(drop=True)
    out = reposition_by_key(dd.from_pandas(df, npartitions=4, sort=False), l=3, w=3, mu="quadratic", beta=2.0,
                            n_sa=6).compute()
    assert len(out) == len(df) and sorted(out["rid"]) == list(range(len(df)))
    for k in range(4):
        mine = df[df["key"] == f"k{k}"].sort_values("ts", kind="stable")  # snapshot order, ties in input order
        mem = reposition_stream(mine["ts"].to_numpy(), mine["sa"].to_numpy(), l=3, w=3, mu="quadratic",
                                beta=2.0, n_sa=6)
        got = out.set_index("rid").loc[mine["rid"].to_numpy()]
        np.testing.assert_array_equal(got["published_ts"].to_numpy(), mem.published_ts)
        assert got["information_loss"].iloc[0] == pytest.approx(mem.information_loss)
        # every published snapshot of the key is l-eligible (independent check)
        pub = got[~got["suppressed"]]
        for _, snap in pub.groupby("published_ts"):
            assert is_l_eligible(np.bincount(snap["sa"].to_numpy(), minlength=6), 3)


def test_bad_input(client):
    df = dd.from_pandas(pd.DataFrame({"user": ["a"], "event": ["x"]}), npartitions=1)
    _, tax = msnbc_like(1, 5, rng=0)
    with pytest.raises(ValueError, match="no column 't'"):
        sanitize_by_user(df, tax, [("a", "b")], 0.5, 2, order="t")
    with pytest.raises(TypeError, match="int"):
        sanitize_by_user(df, tax, 3, 0.5, 2)
    with pytest.raises(ValueError, match="no column 'ts'"):
        reposition_by_key(df, l=2, w=2, key="user")
    with pytest.raises(TypeError, match="dask DataFrame"):
        sanitize_by_user(pd.DataFrame(), tax, [("a", "b")], 0.5, 2)
