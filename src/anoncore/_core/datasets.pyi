"""
synthetic data generators
"""

import numpy as np
from numpy.typing import NDArray

class CensusModel:
    def __init__(
        self,
        cdfs: list[NDArray[np.float64]],
        guides: list[NDArray[np.int64]],
        guide_size: int,
        age_band: NDArray[np.int64],
        edu_band: NDArray[np.int64],
        working: NDArray[np.int64],
        terms: list[NDArray[np.float64]],
        noise_scale: float,
        code_maps: list[NDArray[np.int32]],
    ) -> None:
        """
        The synthetic census's tables: 8 (cdf, guide) draws, bands, 5 score terms (education, age, sex, occupation, work class), the noise scale and 9 code maps.
        """

def census_rows(model: CensusModel, u: NDArray[np.float64], codes: NDArray[np.int32], score: NDArray[np.float64]) -> None:
    """
    Rows of one chunk from its (8, m) uniforms: codes[:, :8] and the salary score without noise.
    """

class CensusSpans:
    def __init__(
        self,
        model: CensusModel,
        gens: list[np.random.BitGenerator],
        bounds: NDArray[np.int64],
        codes: NDArray[np.int32],
        score: NDArray[np.float64],
    ) -> None:
        """
        The spans of a draw: rows [bounds[s], bounds[s+1]) from the uniforms of gens[8 s + k] (numpy bit generators, stream k positioned at the span's first row), written to codes[:, :8] and score.
        """
    def draw(self, n_threads: int) -> None:
        """
        Draws the spans no caller has taken yet on n_threads threads (other threads may draw from the same spans at the same time); returns when none is left.
        """

def fill_zero(x: NDArray[np.float64], n_threads: int) -> None:
    """
    x[:] = 0 on n_threads threads (a new buffer's pages first touched by all of them).
    """

def census_salary(
    model: CensusModel,
    score: NDArray[np.float64],
    noise: NDArray[np.float64],
    cut_index: NDArray[np.int64],
    codes: NDArray[np.int32],
    salary: NDArray[np.int32],
    n_threads: int,
) -> NDArray[np.float64]:
    """
    Adds noise_scale * noise to the scores, cuts them at the order statistics of ranks cut_index and writes the salary codes into codes[:, 8] and, when it is not empty, into salary (n contiguous codes); returns the cuts.
    """
