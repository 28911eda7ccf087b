"""`anoncore anonymize` / `anoncore audit` on a folder or glob of Parquet files (``--scheduler``)."""

from __future__ import annotations

from typing import Any

__all__ = ["connect"]


def connect(address: str | None = None, timeout: float = 10.0) -> Any:
    """A ``distributed.Client`` on ``address`` (``tcp://host:port``), or on a new local cluster when None.

    Raises ConnectionError naming the address when no scheduler answers within ``timeout`` seconds."""
    import distributed

    if address is None:
        return distributed.Client(distributed.LocalCluster(processes=True, dashboard_address=None))
    try:
        return distributed.Client(address, timeout=timeout)
    except (OSError, TimeoutError) as e:
        raise ConnectionError(f"No Dask scheduler answers at {address!r} ({type(e).__name__}: {e}); start one "
                              f"with `dask scheduler` or leave --scheduler out for a local cluster.") from e
