"""Reading a CSV file into a Table (pyarrow's reader) and writing a published table (CSV, Parquet), issue 16."""

from __future__ import annotations

import os
import tempfile

import numpy as np

import anoncore as ac

from .common import require_large, strings_frame, synthetic


class FromCSV:
    """Table.from_csv (pyarrow's CSV reader into the C++ encoder) and its pandas reading, the old path."""

    params = ([100_000, 1_000_000], [1, 2])
    param_names = ("n_rows", "n_threads")
    timeout = 300

    def setup(self, n_rows: int, n_threads: int) -> None:
        require_large(n_rows, threshold=2_000_000)
        t = synthetic(n_rows, seed=1)
        self.schema = t.schema
        self.dir = tempfile.mkdtemp()
        self.path = os.path.join(self.dir, "data.csv")
        strings_frame(t).to_csv(self.path, index=False)

    def time_from_csv(self, n_rows: int, n_threads: int) -> None:
        ac.Table.from_csv(self.path, self.schema, n_threads=n_threads)

    def time_from_csv_pandas_reading(self, n_rows: int, n_threads: int) -> None:
        from anoncore.data.table import _file_line

        ac.Table._from_csv_pandas(self.path, self.schema, ",", "utf-8", n_threads, _file_line(self.path))


class WritePublished:
    """A published table (2 % suppressed, kept and flagged) streamed as CSV and Parquet."""

    params = ([100_000, 1_000_000], ["csv", "parquet"])
    param_names = ("n_rows", "format")
    timeout = 300

    def setup(self, n_rows: int, fmt: str) -> None:
        require_large(n_rows, threshold=2_000_000)
        t = synthetic(n_rows, seed=1)
        rng = np.random.default_rng(0)
        self.p = ac.Partition.from_levels(t, [1] * len(t.quasi_identifiers)).with_suppressed(
            rng.random(t.n_rows) < 0.02)
        self.path = os.path.join(tempfile.mkdtemp(), f"published.{fmt}")

    def time_write_published(self, n_rows: int, fmt: str) -> None:
        from anoncore.data.writers import write_published

        write_published(self.p, self.path, include_suppressed=True)
