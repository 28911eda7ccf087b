"""Encoding: DataFrame -> int32 codes (Table.from_pandas), and synthetic generation."""

from __future__ import annotations

import anoncore as ac

from .common import require_large, synthetic


class Encode:
    params = [[100_000, 1_000_000]]
    param_names = ["n_rows"]
    timeout = 300

    def setup(self, n_rows: int) -> None:
        require_large(n_rows, threshold=2_000_000)
        t = synthetic(n_rows, seed=1)
        self.df = t.to_pandas()
        self.schema = t.schema

    def time_encode(self, n_rows: int) -> None:
        ac.Table.from_pandas(self.df, self.schema)

    def peakmem_encode(self, n_rows: int) -> None:
        ac.Table.from_pandas(self.df, self.schema)


class Generate:
    params = [[100_000, 1_000_000]]
    param_names = ["n_rows"]

    def time_synthetic_census(self, n_rows: int) -> None:
        synthetic(n_rows, seed=2)
