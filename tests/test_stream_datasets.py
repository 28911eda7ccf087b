"""The stream experiment data: the Quest-style transaction generator (statistical shape) and its expansion."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from anoncore.stream.datasets import expand_transactions, transaction_stream


def _top_pair_support(t: pd.DataFrame) -> int:
    c: Counter[tuple[int, int]] = Counter()
    for items in t["items"]:
        c.update(combinations(items, 2))
    return max(c.values())


def test_deterministic_and_seeded() -> None:
    a = transaction_stream(300, rng=5)
    b = transaction_stream(300, rng=5)
    c = transaction_stream(300, rng=6)
    assert a.equals(b)
    assert not a.equals(c)


@pytest.mark.parametrize("avg_len", [5, 10, 15])
def test_shape_lengths_items_and_persons(avg_len: int) -> None:
    t = transaction_stream(3000, avg_len=avg_len, n_items=500, n_persons=800, rng=1)
    lens = t["items"].map(len).to_numpy()
    assert abs(lens.mean() - avg_len) < 0.05 * avg_len  # 1 + Poisson(avg_len - 1)
    assert abs(lens.var() - (avg_len - 1)) < 0.2 * avg_len  # Poisson variance
    assert all(list(x) == sorted(set(x)) and 0 <= x[0] and x[-1] < 500 for x in t["items"])
    assert t["tid"].tolist() == list(range(3000))
    assert t["pid"].between(0, 799).all() and t["pid"].nunique() > 700  # uniform over 800 persons


def test_patterns_make_items_co_occur() -> None:
    """Items come in patterns: the most frequent pair is far more frequent than under independent items, and
    corrupting the patterns more weakens it."""
    n, avg_len, n_items = 3000, 10, 1000
    t = transaction_stream(n, avg_len=avg_len, n_items=n_items, corruption=0.1, rng=2)
    independent = n * (avg_len / n_items) ** 2  # expected support of a given pair with independent items
    assert _top_pair_support(t) > 30 * independent
    t_corrupt = transaction_stream(n, avg_len=avg_len, n_items=n_items, corruption=0.9, rng=2)
    assert _top_pair_support(t_corrupt) < _top_pair_support(t)
    counts = Counter(i for x in t["items"] for i in x)
    freq = np.sort(np.array(list(counts.values())))[::-1]
    assert freq[:10].mean() > 3 * freq.mean()  # skewed item popularity (pattern weights; uniform: ~1.3x)


def test_correlation_shares_items_between_patterns() -> None:
    """With high correlation consecutive patterns share items, so fewer distinct items are used overall."""
    lo = transaction_stream(2000, n_patterns=100, avg_pattern_len=6, correlation=0.0, corruption=0.0, rng=3)
    hi = transaction_stream(2000, n_patterns=100, avg_pattern_len=6, correlation=1.0, corruption=0.0, rng=3)
    used = lambda t: len({i for x in t["items"] for i in x})
    assert used(hi) < used(lo)


@pytest.mark.parametrize(("kw", "match"), [
    ({"n_transactions": 0}, "n_transactions"), ({"n_items": 1.5}, "n_items"), ({"avg_len": 0.5}, "avg_len"),
    ({"correlation": 1.5}, "correlation"), ({"corruption": -0.1}, "corruption"),
])
def test_bad_parameters(kw: dict, match: str) -> None:
    args = {"n_transactions": 10, **kw}
    with pytest.raises(ValueError, match=match):
        transaction_stream(**args)


def test_expansion_joins_persons_and_keeps_order() -> None:
    people = pd.DataFrame({"pid": np.arange(50), "age": np.arange(50) + 20, "edu": [f"e{i % 3}" for i in range(50)]})
    t = transaction_stream(400, avg_len=4, n_persons=80, rng=4)  # pids 50..79 are not in `people`
    e = expand_transactions(t, people, rng=4)
    assert len(e) == int(t["items"].map(len).sum())
    assert e["tid"].is_monotonic_increasing
    assert e["item"].tolist() == [i for x in t["items"] for i in x]
    known = e[e["pid"] < 50]
    assert (known["age"].to_numpy() == known["pid"].to_numpy() + 20).all()
    # an unknown pid always gets the same (random) person record
    unknown = e[e["pid"] >= 50]
    assert unknown.groupby("pid")["age"].nunique().max() == 1
    assert unknown["age"].between(20, 69).all()
    assert expand_transactions(t, people, rng=4).equals(e)
