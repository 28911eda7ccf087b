import numpy as np
from numpy.typing import NDArray

def count_queries(
    qi: NDArray[np.int32],
    sa: NDArray[np.int32],
    gen_lo: NDArray[np.int32],
    gen_hi: NDArray[np.int32],
    sa_prefix: NDArray[np.int64],
    dims: NDArray[np.int32],
    lo: NDArray[np.int32],
    hi: NDArray[np.int32],
    sa_lo: NDArray[np.int32],
    sa_hi: NDArray[np.int32],
    n_threads: int = 1,
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """
    Exact and estimated answers of COUNT queries.
    """

def olap_kl(
    qi: NDArray[np.int32],
    sa: NDArray[np.int32],
    m: int,
    dims: NDArray[np.int32],
    cards: NDArray[np.int64],
    gen_lo: NDArray[np.int32],
    gen_hi: NDArray[np.int32],
    hist: NDArray[np.int64],
) -> float:
    """
    KL(alpha || beta) between original and anonymized OLAP count cubes.
    """
