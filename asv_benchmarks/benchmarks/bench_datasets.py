"""Data generation, encoding and loading."""

from __future__ import annotations

from typing import ClassVar

from .common import adult, require_large, synthetic


class SyntheticCensus:
    """synthetic_census: integer draws straight to codes (target: 1,000,000 rows well under a second)."""

    params: ClassVar[list[int]] = [10_000, 100_000, 1_000_000]
    param_names: ClassVar[list[str]] = ["n_rows"]

    def setup(self, n_rows: int) -> None:
        require_large(n_rows, threshold=2_000_000)  # 1M is cheap enough to run by default

    def time_generate(self, n_rows: int) -> None:
        synthetic(n_rows, seed=1)


class EncodeFrame:
    """Table.from_pandas on the decoded synthetic census (the string-encoding path)."""

    params: ClassVar[list[int]] = [100_000, 1_000_000]
    param_names: ClassVar[list[str]] = ["n_rows"]

    def setup(self, n_rows: int) -> None:
        require_large(n_rows, threshold=2_000_000)
        from anoncore.datasets import synthetic_census_frame, synthetic_census_schema

        self.df = synthetic_census_frame(n_rows, rng=1)
        self.schema = synthetic_census_schema()

    def time_encode(self, n_rows: int) -> None:
        from anoncore import Table

        Table.from_pandas(self.df, self.schema)


class LoadAdult:
    def setup(self) -> None:
        adult()

    def time_load_adult_arx(self) -> None:
        adult()
