"""Shared helpers for the asv suites: seeded synthetic tables, dataset loaders, size profiles.

A missing dataset makes ``setup`` raise NotImplementedError, which asv reports as skipped. Million-row
cases run only with ``ANONCORE_BENCH_LARGE=1``.
"""

from __future__ import annotations

import os

LARGE = os.environ.get("ANONCORE_BENCH_LARGE", "") == "1"


def thread_counts() -> list[int]:
    """1, 2, 4, ... up to the cores this process may use (and that count itself): the scaling curve of issue 16."""
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    out = [1]
    while out[-1] * 2 <= cores:
        out.append(out[-1] * 2)
    return out if out[-1] == cores else out + [cores]


def require_large(n_rows: int, threshold: int = 500_000) -> None:
    """Skip (NotImplementedError) sizes at or above ``threshold`` unless ANONCORE_BENCH_LARGE=1."""
    if n_rows >= threshold and not LARGE:
        raise NotImplementedError("large case: set ANONCORE_BENCH_LARGE=1")


def adult(sensitive: str | None = None):  # type: ignore[no-untyped-def]
    from anoncore.datasets import load_adult_arx

    try:
        return load_adult_arx(sensitive=sensitive)
    except FileNotFoundError as exc:
        raise NotImplementedError(str(exc)) from exc


def synthetic(n_rows: int, seed: int = 0, **kwargs):  # type: ignore[no-untyped-def]
    from anoncore import datasets

    gen = getattr(datasets, "synthetic_census", None)
    if gen is None:
        raise NotImplementedError("synthetic_census is not available in this version")
    return gen(n_rows, rng=seed, **kwargs)


def csv_text(table, column: str):  # type: ignore[no-untyped-def]
    """A column's dictionary spelled as in a CSV file (numbers as "17", not "17.0"): object array of str."""
    import numpy as np

    return np.array([str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)
                     for v in table.dictionary(column)], dtype=object)


def strings_frame(table):  # type: ignore[no-untyped-def]
    """The table as a user reads it from a CSV file: a pandas frame with one Python string per cell."""
    import pandas as pd

    return pd.DataFrame({c: csv_text(table, c)[table.column(c)] for c in table.columns})
