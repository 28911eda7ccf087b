"""Shared fixtures: seeds, the benchmark data folder (fails under CI=true when missing), hypothesis profile."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# The kernels hold threads that wait on each other to the cores the load average leaves idle; the tests turn
# that off so that the parallel paths (and their bit-identical outputs) are exercised on a busy machine too.
os.environ.setdefault("ANONCORE_LOAD_AWARE", "0")

settings.register_profile("ci", deadline=None, derandomize=True, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def _seeds() -> list[int]:
    v = os.environ.get("ANONCORE_TEST_SEED", "42")
    return list(range(100)) if v == "all" else [int(v)]


@pytest.fixture(params=_seeds())
def seed(request: pytest.FixtureRequest) -> int:
    return int(request.param)


def shared_data() -> Path:
    """The benchmark data folder; skips (or fails under CI=true) when it is missing."""
    from anoncore.datasets import shared_data_dir

    d = shared_data_dir()
    if not (d / "adult" / "adult.csv").exists():
        msg = f"benchmark data not found at {d} (set ANONCORE_SHARED_DATA)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    return d


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return shared_data()


@pytest.fixture(scope="session")
def adult(data_dir: Path):  # type: ignore[no-untyped-def]
    from anoncore.datasets import load_adult_arx

    return load_adult_arx()


@pytest.fixture(scope="session")
def adult_occupation(data_dir: Path):  # type: ignore[no-untyped-def]
    from anoncore.datasets import load_adult_arx

    return load_adult_arx(sensitive="occupation")


@pytest.fixture(scope="session")
def dask_client():  # type: ignore[no-untyped-def]
    """A local Dask cluster (2 worker processes, 1 thread each) and its client, shared by the distributed test
    modules that kill no worker (tests/test_distributed.py, which does, starts its own)."""
    import distributed

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()
