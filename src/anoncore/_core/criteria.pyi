"""
criteria kernels: per-class values of the privacy models
"""

import numpy as np
from numpy.typing import NDArray

def beta_likeness(
    hist: NDArray[np.int64],
    sizes: NDArray[np.int64],
    reference: NDArray[np.int64],
    enhanced: bool,
    n_threads: int = 0,
) -> NDArray[np.float64]:
    """
    Basic or enhanced beta-likeness value per class.
    """

def delta_disclosure(
    hist: NDArray[np.int64], sizes: NDArray[np.int64], reference: NDArray[np.int64], n_threads: int = 0
) -> NDArray[np.float64]:
    """
    delta-disclosure value per class (max |ln(q/p)|).
    """

def distinct_values(hist: NDArray[np.int64], n_threads: int = 0) -> NDArray[np.int64]:
    """
    Distinct sensitive values per class.
    """

def entropy(hist: NDArray[np.int64], sizes: NDArray[np.int64], n_threads: int = 0) -> NDArray[np.float64]:
    """
    Plug-in Shannon entropy (nats) per class.
    """

def recursive_cl_ratio(
    hist: NDArray[np.int64], sizes: NDArray[np.int64], l: int, n_threads: int = 0
) -> NDArray[np.float64]:
    """
    Recursive (c,l) ratio r1 / (r_l + ... + r_m') per class.
    """

# {class name: (requirement, monotone under generalization, monotone under suppression)}
criteria_info: dict[str, tuple[str, bool, bool]]
# {class name: (kernel id, parameter a, parameter b or None, needs a sensitive attribute, judged by the lattice)}
models: dict[str, tuple[int, str, str | None, bool, bool]]
