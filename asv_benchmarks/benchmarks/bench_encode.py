"""Encoding from strings / Arrow and publishing to Arrow, by thread count (issue 16)."""

from __future__ import annotations

import numpy as np
import pandas as pd

import anoncore as ac

from .common import require_large, strings_frame, synthetic, thread_counts


class EncodeStrings:
    """Table.from_pandas on object columns of strings, on categoricals, on numbers (int64 / float64 numeric
    columns, as pandas.read_csv gives them), and Table.from_arrow on large_string columns."""

    params = ([100_000, 1_000_000, 10_000_000, 40_000_000], thread_counts())
    param_names = ("n_rows", "n_threads")
    timeout = 300

    def setup(self, n_rows: int, n_threads: int) -> None:
        import pyarrow as pa

        require_large(n_rows, threshold=2_000_000)
        t = synthetic(n_rows, seed=1)
        self.schema = t.schema
        self.df = strings_frame(t)
        self.arrow = pa.table({c: pa.array(self.df[c], type=pa.large_string()) for c in self.df.columns})
        self.cat = self.df.astype("category")
        # as pandas.read_csv parses the file: numeric attributes as int64 / float64 columns
        self.nums = self.df.copy()
        for a in t.schema.attributes:
            if a.kind == "numeric":
                v = pd.to_numeric(self.df[a.name])
                self.nums[a.name] = v.astype(np.int64) if (v % 1 == 0).all() else v.astype(np.float64)

    def time_from_pandas_strings(self, n_rows: int, n_threads: int) -> None:
        ac.Table.from_pandas(self.df, self.schema, n_threads=n_threads)

    def time_from_pandas_categorical(self, n_rows: int, n_threads: int) -> None:
        ac.Table.from_pandas(self.cat, self.schema, n_threads=n_threads)

    def time_from_pandas_numbers(self, n_rows: int, n_threads: int) -> None:
        ac.Table.from_pandas(self.nums, self.schema, n_threads=n_threads)

    def time_from_arrow(self, n_rows: int, n_threads: int) -> None:
        ac.Table.from_arrow(self.arrow, self.schema, n_threads=n_threads)


class PublishArrow:
    """Partition.to_arrow (dictionary-encoded columns), to_pandas(categorical=True) and to_pandas() (pandas'
    string columns, decoded from to_arrow's dictionaries where pandas stores strings in Arrow)."""

    params = ([100_000, 1_000_000, 10_000_000, 40_000_000], thread_counts())
    param_names = ("n_rows", "n_threads")
    timeout = 300

    def setup(self, n_rows: int, n_threads: int) -> None:
        require_large(n_rows, threshold=2_000_000)
        t = synthetic(n_rows, seed=1)
        rng = np.random.default_rng(0)
        self.p = ac.Partition.from_levels(t, [1] * len(t.quasi_identifiers)).with_suppressed(
            rng.random(t.n_rows) < 0.02)

    def time_to_arrow(self, n_rows: int, n_threads: int) -> None:
        self.p.to_arrow(n_threads=n_threads)

    def time_to_pandas_categorical(self, n_rows: int, n_threads: int) -> None:
        self.p.to_pandas(categorical=True, n_threads=n_threads)

    def time_to_pandas_strings(self, n_rows: int, n_threads: int) -> None:
        self.p.to_pandas(n_threads=n_threads)
