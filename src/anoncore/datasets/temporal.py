"""Synthetic temporal streams with controllable skew: daily snapshots of a disease-like SA whose mix drifts."""

from __future__ import annotations

from typing import Any

import numpy as np

from anoncore._validation import check_int

__all__ = ["make_temporal_stream"]


def make_temporal_stream(
    n_snapshots: int,
    snapshot_size: int,
    n_sa: int,
    *,
    skew: float = 1.0,
    drift: float = 0.5,
    persistence: float = 0.9,
    size_dispersion: float = 0.0,
    with_qi: bool = False,
    rng: int | np.random.Generator | None = None,
) -> Any:
    """Generate a temporal stream D[0], D[1], ... of SA codes ("diseases") with a drifting Zipf-like mix.

    The log-weights of the SA values are ``-skew * log(rank)`` (Zipf) plus independent mean-reverting AR(1)
    processes (stationary standard deviation ``drift``, lag-one correlation ``persistence``), so the mix drifts
    from day to day, consecutive snapshots are similar, and each small snapshot is skewed while the long-run union
    stays balanced.

    Parameters
    ----------
    n_snapshots : int
    snapshot_size : int
        Mean number of records per snapshot.
    n_sa : int
        Number of SA values.
    skew : float, default=1.0
        Zipf exponent of the base mix (0 = uniform).
    drift : float, default=0.5
        Stationary standard deviation of the log-weight perturbation.
    persistence : float, default=0.9
        Day-to-day correlation of the perturbation, in [0, 1).
    size_dispersion : float, default=0.0
        0 gives fixed sizes; > 0 draws sizes from a Poisson with the given mean, scaled by
        ``1 + size_dispersion * N(0, 1)`` (clipped at 0).
    with_qi : bool, default=False
        Also return quasi-identifiers ``age`` (17-90) and ``sex`` (0/1).
    rng : int, numpy.random.Generator or None, default=None

    Returns
    -------
    pandas.DataFrame
        Columns ``ts`` (int64, non-decreasing) and ``sa`` (int32), plus ``age`` and ``sex`` when requested.

    Examples
    --------
    >>> from anoncore.temporal import make_temporal_stream
    >>> df = make_temporal_stream(5, 10, 4, rng=0)
    >>> len(df), sorted(df.columns)
    (50, ['sa', 'ts'])
    """
    import pandas as pd

    for name, v in (("n_snapshots", n_snapshots), ("snapshot_size", snapshot_size), ("n_sa", n_sa)):
        check_int(v, name, "make_temporal_stream", 1)
    if skew < 0 or drift < 0 or size_dispersion < 0:
        raise ValueError("The 'skew', 'drift' and 'size_dispersion' parameters of make_temporal_stream must be >= 0.")
    gen = np.random.default_rng(rng)
    base = -float(skew) * np.log(np.arange(1, n_sa + 1))
    if not 0.0 <= persistence < 1.0:
        raise ValueError(
            f"The 'persistence' parameter of make_temporal_stream must be in [0, 1). Got {persistence!r} instead."
        )
    eps = gen.normal(0.0, float(drift) * np.sqrt(1.0 - persistence**2), size=(n_snapshots, n_sa))
    eps[0] = gen.normal(0.0, float(drift), size=n_sa)
    z = np.empty_like(eps)
    acc = np.zeros(n_sa)
    for t in range(n_snapshots):  # AR(1): z_t = persistence * z_{t-1} + eps_t
        acc = persistence * acc + eps[t] if t else eps[0]
        z[t] = acc
    logits = base[None, :] + z
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    if size_dispersion > 0:
        lam = snapshot_size * np.clip(1.0 + size_dispersion * gen.normal(size=n_snapshots), 0.0, None)
        sizes = gen.poisson(lam)
    else:
        sizes = np.full(n_snapshots, snapshot_size)
    counts = gen.multinomial(sizes, probs)  # (n_snapshots, n_sa)
    ts = np.repeat(np.arange(n_snapshots, dtype=np.int64), counts.sum(axis=1))
    sa = np.repeat(np.tile(np.arange(n_sa, dtype=np.int32), n_snapshots), counts.ravel())
    # random order inside each snapshot (ids are arrival order)
    perm = np.argsort(ts.astype(np.float64) + gen.random(ts.size))
    sa = sa[perm]
    data: dict[str, Any] = {"ts": ts, "sa": sa}
    if with_qi:
        data["age"] = gen.integers(17, 91, size=ts.size).astype(np.int32)
        data["sex"] = gen.integers(0, 2, size=ts.size).astype(np.int32)
    return pd.DataFrame(data)
