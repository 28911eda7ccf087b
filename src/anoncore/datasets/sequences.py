"""Synthetic event-sequence data shaped like the paper's two datasets (spec §4, §6 C3-C4).

* :func:`msnbc_like`: page-category visits over the 17 MSNBC categories with a **placeholder** 4-category taxonomy
  (the paper's Figure 3 is lost; this tree is invented, spec §6 C3).
* :func:`location_like`: location-area sequences over 69 areas binned 10 to a group (Reality-Mining-like, 3 levels).

Sequences come from per-user sticky Markov chains: each user has a Zipf-like preference over symbols, and with
probability ``stay`` repeats the previous symbol. No real data is used.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from anoncore.data.hierarchy import Hierarchy
from anoncore.sequence._validation import check_int

__all__ = [
    "MSNBC_CATEGORIES",
    "location_like",
    "location_taxonomy",
    "markov_sequences",
    "msnbc_like",
    "msnbc_taxonomy",
]

MSNBC_CATEGORIES = (
    "frontpage", "news", "tech", "local", "opinion", "on-air", "misc", "weather", "msn-news",
    "health", "living", "business", "msn-sports", "sports", "summary", "bbs", "travel",
)  # fmt: skip

_MSNBC_TREE = {
    "All": {
        "Overview": ["frontpage", "summary", "misc", "on-air"],
        "News": ["news", "local", "msn-news", "weather", "opinion"],
        "Social": ["health", "living", "sports", "msn-sports", "bbs", "travel"],
        "Biz/Tech": ["tech", "business"],
    }
}


def msnbc_taxonomy() -> Hierarchy:
    """Placeholder taxonomy over the 17 MSNBC categories (invented; not the paper's Figure 3).

    Examples
    --------
    >>> t = msnbc_taxonomy()
    >>> t.n_leaves, t.height
    (17, 2)
    """
    return Hierarchy.from_nested(_MSNBC_TREE, name="msnbc")


def location_taxonomy(n_areas: int = 69, bin_size: int = 10) -> Hierarchy:
    """Equi-width binning of area ids: root -> ceil(n_areas / bin_size) bins -> areas (spec §4, §6 C4).

    Examples
    --------
    >>> t = location_taxonomy()
    >>> t.n_leaves, t.n_nodes
    (69, 77)
    """
    n_areas = check_int(n_areas, "n_areas", "location_taxonomy", 1)
    bin_size = check_int(bin_size, "bin_size", "location_taxonomy", 1)
    bins = {}
    for b0 in range(0, n_areas, bin_size):
        b1 = min(n_areas, b0 + bin_size) - 1
        bins[f"areas {b0}-{b1}"] = [f"area{a}" for a in range(b0, b1 + 1)]
    return Hierarchy.from_nested({"All": bins}, name="location")


def markov_sequences(
    n_users: int,
    length: int,
    n_symbols: int,
    *,
    zipf: float = 1.2,
    stay: float = 0.3,
    rng: int | np.random.Generator | None = None,
) -> list[npt.NDArray[np.int32]]:
    """Per-user sticky Markov sequences over leaf codes ``0..n_symbols-1``.

    Each user draws a random permutation of the symbols and Zipf(``zipf``) weights over it; each step repeats the
    previous symbol with probability ``stay`` and otherwise draws from the user's weights.

    Parameters
    ----------
    n_users, length, n_symbols : int
        Shape of the data.
    zipf : float, default=1.2
        Zipf exponent of each user's symbol preferences (larger = more skewed).
    stay : float, default=0.3
        Probability of repeating the previous symbol.
    rng : int, Generator or None, default=None
        Randomness.

    Returns
    -------
    list of ndarray of int32 of shape (length,)

    Examples
    --------
    >>> s = markov_sequences(2, 5, 3, rng=0)
    >>> len(s), s[0].shape, int(s[0].max()) < 3
    (2, (5,), True)
    """
    caller = "markov_sequences"
    n_users = check_int(n_users, "n_users", caller, 1)
    length = check_int(length, "length", caller, 0)
    n_symbols = check_int(n_symbols, "n_symbols", caller, 1)
    if not 0.0 <= float(stay) < 1.0:
        raise ValueError(
            f"The 'stay' parameter of {caller} must be a float in the range [0, 1). Got {stay!r} instead."
        )
    gen = np.random.default_rng(rng)
    ranks = np.arange(1, n_symbols + 1, dtype=np.float64) ** (-float(zipf))
    out = []
    for _ in range(n_users):
        perm = gen.permutation(n_symbols)
        p = np.empty(n_symbols)
        p[perm] = ranks / ranks.sum()
        draws = gen.choice(n_symbols, size=length, p=p).astype(np.int32)
        if length:
            repeat = gen.random(length) < stay
            repeat[0] = False
            # forward-fill the previous value where a repeat happens
            idx = np.where(repeat, 0, np.arange(length))
            np.maximum.accumulate(idx, out=idx)
            draws = draws[idx]
        out.append(np.ascontiguousarray(draws, dtype=np.int32))
    return out


def msnbc_like(
    n_users: int, length: int, *, rng: int | np.random.Generator | None = None
) -> tuple[list[npt.NDArray[np.int32]], Hierarchy]:
    """MSNBC-shaped data: 17 page categories, placeholder taxonomy (height 2).

    Examples
    --------
    >>> seqs, tax = msnbc_like(3, 100, rng=0)
    >>> len(seqs), tax.n_leaves
    (3, 17)
    """
    tax = msnbc_taxonomy()
    return markov_sequences(n_users, length, tax.n_leaves, zipf=1.0, stay=0.4, rng=rng), tax


def location_like(
    n_users: int,
    length: int,
    *,
    n_areas: int = 69,
    bin_size: int = 10,
    rng: int | np.random.Generator | None = None,
) -> tuple[list[npt.NDArray[np.int32]], Hierarchy]:
    """Reality-Mining-shaped data: 69 areas binned 10 to a group (3 levels), location-like stickiness.

    Examples
    --------
    >>> seqs, tax = location_like(2, 50, rng=1)
    >>> len(seqs), tax.n_leaves
    (2, 69)
    """
    tax = location_taxonomy(n_areas, bin_size)
    return markov_sequences(n_users, length, tax.n_leaves, zipf=1.5, stay=0.6, rng=rng), tax
