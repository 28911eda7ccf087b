"""Streams for CASTLE experiments: power-law synthetic streams and UCI Adult with the thesis's 10 QI.

The thesis (Cao 2010, §5.7.1, Table 5.4) uses UCI Adult with 10 potential quasi-identifiers but does not give
the hierarchies of its 4 categorical ones; the hierarchies below are built for this project to match the
leaf/level counts of Table 5.4 (education 16 leaves / 5 levels, marital-status 7 / 4, occupation 14 / 3,
native-country 41 / 5 — the raw file has 41 countries, the thesis says 40; we keep all 41). Numeric domains are
those of Table 5.4.

The transaction stream of §5.7.1 (Fig. 5.8) comes from :func:`transaction_stream`, a small generator in the spirit
of IBM Quest (Agrawal & Srikant, VLDB 1994), and :func:`expand_transactions` (one tuple per item, joined with
UCI Adult on the person id).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from anoncore._validation import check_int, check_option
from anoncore.data.hierarchy import Hierarchy
from anoncore.data.schema import Attribute, Schema

__all__ = [
    "ADULT_NUMERIC_DOMAINS",
    "ADULT_QI",
    "adult_stream_schema",
    "expand_transactions",
    "load_uci_adult_stream",
    "power_law_stream",
    "transaction_stream",
]

#: Table 5.4 of the thesis: numeric QI and their declared domains.
ADULT_NUMERIC_DOMAINS: dict[str, tuple[float, float]] = {
    "age": (17, 90), "fnlwgt": (13492, 1490400), "education-num": (1, 16), "capital-gain": (0, 99999),
    "capital-loss": (0, 4356), "hours-per-week": (1, 99),
}
#: The 10 QI in the order used when varying the QI count (first q of them).
ADULT_QI = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week", "education",
            "marital-status", "occupation", "native-country")

_ADULT_COLUMNS = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
                  "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country",
                  "income"]

_EDUCATION = {"Any-education": {
    "Up-to-HS": {
        "No-HS-diploma": {"Elementary": ["Preschool", "1st-4th", "5th-6th"],
                          "Secondary-incomplete": ["7th-8th", "9th", "10th", "11th", "12th"]},
        "HS-level": {"HS-diploma": ["HS-grad"], "College-no-degree": ["Some-college"]},
    },
    "Post-secondary": {
        "Undergraduate": {"Associate": ["Assoc-acdm", "Assoc-voc"], "Bachelor-level": ["Bachelors"]},
        "Graduate": {"Master-level": ["Masters"], "Professional-doctoral": ["Prof-school", "Doctorate"]},
    },
}}
_MARITAL = {"Any-marital": {
    "Married": {"Spouse-present": ["Married-civ-spouse", "Married-AF-spouse"],
                "Spouse-away": ["Married-spouse-absent", "Separated"]},
    "Not-married": {"Previously-married": ["Divorced", "Widowed"], "Single": ["Never-married"]},
}}
_OCCUPATION = {"Any-occupation": {
    "White-collar": ["Exec-managerial", "Prof-specialty", "Adm-clerical", "Sales", "Tech-support"],
    "Blue-collar": ["Craft-repair", "Machine-op-inspct", "Handlers-cleaners", "Transport-moving", "Farming-fishing"],
    "Service": ["Other-service", "Protective-serv", "Priv-house-serv"],
    "Military": ["Armed-Forces"],
}}
_COUNTRY = {"Any-country": {
    "Americas": {
        "North-America": {"US-and-territories": ["United-States", "Outlying-US(Guam-USVI-etc)", "Puerto-Rico"],
                          "Canada-Mexico": ["Canada", "Mexico"]},
        "Latin-America": {"Central-America": ["Honduras", "Guatemala", "Nicaragua", "El-Salvador"],
                          "Caribbean": ["Cuba", "Jamaica", "Dominican-Republic", "Haiti", "Trinadad&Tobago"],
                          "South-America": ["Ecuador", "Columbia", "Peru"]},
    },
    "Europe": {
        "Western-Europe": {"British-Isles": ["England", "Ireland", "Scotland"],
                           "Continental-West": ["France", "Germany", "Holand-Netherlands"]},
        "Southern-Eastern-Europe": {"Southern-Europe": ["Greece", "Italy", "Portugal"],
                                    "Eastern-Europe": ["Poland", "Hungary", "Yugoslavia"]},
    },
    "Asia": {
        "East-Asia": {"China-region": ["China", "Hong", "Taiwan"], "Japan-Korea": ["Japan", "South"]},
        "South-Southeast-Asia": {"Southeast-Asia": ["Cambodia", "Laos", "Vietnam", "Thailand", "Philippines"],
                                 "South-West-Asia": ["India", "Iran"]},
    },
}}


def _hierarchies() -> dict[str, Hierarchy]:
    return {"education": Hierarchy.from_nested(_EDUCATION, name="education"),
            "marital-status": Hierarchy.from_nested(_MARITAL, name="marital-status"),
            "occupation": Hierarchy.from_nested(_OCCUPATION, name="occupation"),
            "native-country": Hierarchy.from_nested(_COUNTRY, name="native-country")}


def adult_stream_schema(n_qi: int = 10, sensitive: str | None = None, qi: tuple[str, ...] | None = None) -> Schema:
    """Schema of the UCI Adult stream: the first ``n_qi`` of :data:`ADULT_QI` (or ``qi``), a ``pid`` column.

    Examples
    --------
    >>> s = adult_stream_schema(4)
    >>> s.quasi_identifiers, s.with_role("pid")
    (('age', 'fnlwgt', 'education-num', 'capital-gain'), ('pid',))
    >>> adult_stream_schema(10)["native-country"].hierarchy.n_leaves
    41
    """
    hs = _hierarchies()
    names = tuple(qi) if qi is not None else ADULT_QI[:n_qi]
    attrs = []
    for name in names:
        if name in ADULT_NUMERIC_DOMAINS:
            attrs.append(Attribute(name, "quasi_identifier", "numeric", domain=ADULT_NUMERIC_DOMAINS[name]))
        else:
            attrs.append(Attribute(name, "quasi_identifier", "categorical", hierarchy=hs[name]))
    if sensitive is not None:
        if sensitive in hs:
            attrs.append(Attribute(sensitive, "sensitive", "categorical", hierarchy=hs[sensitive]))
        else:
            attrs.append(Attribute(sensitive, "sensitive", "numeric" if sensitive in ADULT_NUMERIC_DOMAINS
                                   else "categorical"))
    attrs.append(Attribute("pid", "pid", "numeric"))
    return Schema(tuple(attrs))


def load_uci_adult_stream(split: str = "train", folder: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """UCI Adult without rows holding '?', in file order, with a ``pid`` column (one tuple per person).

    ``split='train'`` gives ``adult.data`` (30,162 rows, the thesis's UCI-Adult); ``'all'`` appends the clean
    ``adult.test`` rows (45,222 rows, the thesis's SFU-Adult). Raises FileNotFoundError when the data is absent.
    """
    check_option(split, "split", "load_uci_adult_stream", ("train", "all"))
    if folder is None:
        from anoncore.datasets.loaders import shared_data_dir

        base = Path(shared_data_dir()) / "uci-adult"
    else:
        base = Path(folder)
    files = [base / "adult.data.gz"] + ([base / "adult.test.gz"] if split == "all" else [])
    frames = []
    for f in files:
        if not f.exists():
            raise FileNotFoundError(f"UCI Adult file {f} not found (set ANONCORE_SHARED_DATA)")
        df = pd.read_csv(f, header=None, names=_ADULT_COLUMNS, sep=",", skipinitialspace=True, dtype=str,
                         comment="|", skip_blank_lines=True, keep_default_na=False)
        df = df[(df != "?").all(axis=1)]
        df = df[df["age"].str.len() > 0]
        frames.append(df)
    out = pd.concat(frames, ignore_index=True)
    out["income"] = out["income"].str.rstrip(".")
    for c in ADULT_NUMERIC_DOMAINS:
        out[c] = out[c].astype(np.int64)
    out["pid"] = np.arange(len(out), dtype=np.int64)
    return out


def power_law_stream(
    n: int,
    n_numeric: int = 6,
    n_categorical: int = 4,
    alpha: float = 1.2,
    n_values: int = 100,
    n_persons: int | None = None,
    rng: int | np.random.Generator | None = None,
) -> tuple[Schema, pd.DataFrame]:
    """A synthetic stream whose QI values follow p(v) = c / v**alpha on {1..n_values} (genzipf style, §5.7.1).

    Numeric QI take the value v (domain [1, n_values]); categorical QI have 16 leaves under 4 groups (3 levels)
    and pick leaf v-1 with the same law truncated to 16 values. ``n_persons=None`` gives every tuple its own
    person; otherwise pids are drawn uniformly from ``n_persons``. A column ``sa`` (8 values) is added.

    Examples
    --------
    >>> schema, df = power_law_stream(1000, n_numeric=2, n_categorical=1, rng=0)
    >>> df.shape, schema.quasi_identifiers
    ((1000, 5), ('x0', 'x1', 'c0'))
    """
    g = np.random.default_rng(rng)
    v = np.arange(1, n_values + 1)
    p = 1.0 / v ** float(alpha)
    p /= p.sum()
    data: dict[str, Any] = {}
    qi: dict[str, Any] = {}
    for j in range(n_numeric):
        data[f"x{j}"] = g.choice(v, n, p=p).astype(np.int64)
        qi[f"x{j}"] = {"kind": "numeric", "domain": (1, n_values)}
    leaves16 = np.arange(1, 17)
    p16 = 1.0 / leaves16 ** float(alpha)
    p16 /= p16.sum()
    for j in range(n_categorical):
        h = Hierarchy.from_nested({f"*{j}": {f"g{j}_{a}": [f"v{j}_{a}{b}" for b in range(4)] for a in range(4)}},
                                  name=f"c{j}")
        data[f"c{j}"] = np.asarray(h.leaves, dtype=object)[g.choice(16, n, p=p16)]
        qi[f"c{j}"] = h
    data["sa"] = g.integers(0, 8, n)
    data["pid"] = np.arange(n, dtype=np.int64) if n_persons is None else g.integers(0, n_persons, n)
    return Schema.build(qi, sensitive="sa", pid="pid"), pd.DataFrame(data)


def transaction_stream(
    n_transactions: int,
    avg_len: float = 10.0,
    n_patterns: int = 200,
    avg_pattern_len: float = 4.0,
    n_items: int = 1000,
    correlation: float = 0.5,
    corruption: float = 0.5,
    n_persons: int = 40_000,
    rng: int | np.random.Generator | None = None,
) -> pd.DataFrame:
    """Synthetic market-basket transactions in the spirit of the IBM Quest generator (Agrawal & Srikant 1994).

    The generator first draws ``n_patterns`` *potentially frequent itemsets* (patterns): pattern sizes are
    1 + Poisson(``avg_pattern_len`` - 1); each pattern after the first takes a fraction of its items from the
    previous pattern (the fraction is exponential with mean ``correlation``, capped at 1) and the rest uniformly
    from the ``n_items`` items; pattern weights are exponential(1), normalised; each pattern has a corruption
    level drawn from N(``corruption``, 0.1) clipped to [0, 1]. A transaction has 1 + Poisson(``avg_len`` - 1)
    items; it is filled with patterns chosen by weight, each corrupted by dropping random items while a uniform
    draw stays below its corruption level; a pattern that does not fit is truncated to the remaining room (the
    original defers it to the next transaction half of the time). Person ids are uniform in [0, ``n_persons``).

    Parameters
    ----------
    n_transactions : int
        Number of transactions |D|.
    avg_len : float, default=10.0
        Mean transaction length |T| (the thesis's "dup": 5, 10, 15).
    n_patterns : int, default=200
        Number of patterns |L|.
    avg_pattern_len : float, default=4.0
        Mean pattern length |I|.
    n_items : int, default=1000
        Number of distinct items N.
    correlation : float, default=0.5
        Mean fraction of a pattern's items shared with the previous pattern.
    corruption : float, default=0.5
        Mean corruption level of the patterns.
    n_persons : int, default=40,000
        Person ids are drawn uniformly from ``range(n_persons)``.
    rng : int, numpy Generator or None

    Returns
    -------
    pandas.DataFrame
        Columns ``pid`` (int64), ``tid`` (int64, 0..n-1, the stream order) and ``items`` (tuple of sorted distinct
        ints), one row per transaction.

    Examples
    --------
    >>> t = transaction_stream(2000, avg_len=5, rng=0)
    >>> len(t), round(float(t["items"].map(len).mean()))
    (2000, 5)
    """
    for name, v in (("n_transactions", n_transactions), ("n_patterns", n_patterns), ("n_items", n_items),
                    ("n_persons", n_persons)):
        check_int(v, name, "transaction_stream", 1)
    if not avg_len >= 1 or not avg_pattern_len >= 1:
        raise ValueError(f"avg_len and avg_pattern_len must be >= 1. Got {avg_len!r} and {avg_pattern_len!r}.")
    if not 0 <= correlation <= 1 or not 0 <= corruption <= 1:
        raise ValueError(f"correlation and corruption must lie in [0, 1]. Got {correlation!r} and {corruption!r}.")
    g = np.random.default_rng(rng)
    patterns: list[np.ndarray] = []
    prev = np.empty(0, dtype=np.int64)
    for _ in range(n_patterns):
        size = int(min(n_items, 1 + g.poisson(avg_pattern_len - 1)))
        take = 0
        if prev.size:
            frac = min(1.0, float(g.exponential(correlation))) if correlation > 0 else 0.0
            take = min(size, prev.size, round(frac * size))
        items = list(g.choice(prev, take, replace=False)) if take else []
        chosen = {int(x) for x in items}
        while len(chosen) < size:
            chosen.add(int(g.integers(0, n_items)))
        prev = np.array(sorted(chosen), dtype=np.int64)
        patterns.append(prev)
    weights = g.exponential(1.0, n_patterns)
    weights /= weights.sum()
    corr = np.clip(g.normal(corruption, 0.1, n_patterns), 0.0, 1.0)
    out_items: list[tuple[int, ...]] = []
    for _ in range(n_transactions):
        size = int(min(n_items, 1 + g.poisson(avg_len - 1)))
        basket: set[int] = set()
        guard = 0
        while len(basket) < size and guard < 50:
            guard += 1
            pi = int(g.choice(n_patterns, p=weights))
            pat = list(patterns[pi])
            while len(pat) > 1 and g.random() < corr[pi]:  # corruption: drop random items
                pat.pop(int(g.integers(0, len(pat))))
            room = size - len(basket)
            new = [x for x in pat if x not in basket]
            if len(new) > room:
                new = [new[int(i)] for i in np.sort(g.choice(len(new), room, replace=False))]
            basket.update(int(x) for x in new)
        while len(basket) < size:  # patterns exhausted by duplicates: fill uniformly
            basket.add(int(g.integers(0, n_items)))
        out_items.append(tuple(sorted(basket)))
    return pd.DataFrame({"pid": g.integers(0, n_persons, n_transactions).astype(np.int64),
                         "tid": np.arange(n_transactions, dtype=np.int64), "items": out_items})


def expand_transactions(transactions: pd.DataFrame, people: pd.DataFrame,
                        rng: int | np.random.Generator | None = None) -> pd.DataFrame:
    """Join transactions with person records on ``pid`` and expand them to one tuple per item (§5.7.1).

    A pid present in ``people`` (its ``pid`` column) takes that person's attributes; any other pid is joined
    with a person record chosen uniformly at random, the same one for every transaction of that pid (the
    thesis: "transactions with pid > 30,162 are joined with randomly chosen Adult tuples"). Each transaction
    becomes ``len(items)`` consecutive tuples ``(pid, tid, item, <person attributes>)`` in stream order, so the
    items of one transaction are consecutive arrivals (spec A25 lets them share a position; CASTLE's positions
    are strictly increasing, so here they are consecutive and expire one arrival apart).

    Examples
    --------
    >>> people = pd.DataFrame({"pid": [0, 1], "age": [30, 50]})
    >>> t = pd.DataFrame({"pid": [1, 7], "tid": [0, 1], "items": [(3, 9), (4,)]})
    >>> e = expand_transactions(t, people, rng=0)
    >>> e[["pid", "tid", "item"]].values.tolist(), int(e["age"].iloc[0])
    ([[1, 0, 3], [1, 0, 9], [7, 1, 4]], 50)
    """
    g = np.random.default_rng(rng)
    known = pd.Index(people["pid"].to_numpy())
    pids = transactions["pid"].to_numpy(dtype=np.int64)
    uniq = np.unique(pids)
    unknown = uniq[~np.isin(uniq, known.to_numpy())]
    row_of = {int(p): int(known.get_loc(p)) for p in uniq if p in known}
    random_rows = g.integers(0, len(people), unknown.size)
    row_of.update({int(p): int(r) for p, r in zip(unknown, random_rows)})
    lens = transactions["items"].map(len).to_numpy()
    rows = np.repeat([row_of[int(p)] for p in pids], lens)
    out = people.drop(columns=["pid"]).iloc[rows].reset_index(drop=True)
    out.insert(0, "item", np.concatenate([np.asarray(x, dtype=np.int64) for x in transactions["items"]])
               if len(transactions) else np.empty(0, dtype=np.int64))
    out.insert(0, "tid", np.repeat(transactions["tid"].to_numpy(dtype=np.int64), lens))
    out.insert(0, "pid", np.repeat(pids, lens))
    return out
