"""Full-domain lattice search: the ARX 3.9.2 configurations of ARX-TIMINGS.md on Adult and census-income.

Each configuration pairs ``time_`` (end-to-end public call) with ``track_`` of the score (must equal ARX's
optimum) and the number of nodes evaluated. ARX's in-process medians (one core) are in the docstrings.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

from .common import adult, strings_frame

# (name, QIs with SA?, models, suppression limit, metric, ARX levels, ARX score, ARX ms)
ADULT_CONFIGS: dict[str, tuple[bool, list[tuple[str, dict[str, Any]]], float, str]] = {
    "1_k5_0_loss": (False, [("KAnonymity", {"k": 5})], 0.0, "loss"),  # ARX 28 ms
    "2_k5_4_dmstar": (False, [("KAnonymity", {"k": 5})], 0.04, "dm_star"),  # ARX 852 ms
    "3_k5_distinct3_4_loss": (True, [("KAnonymity", {"k": 5}), ("DistinctLDiversity", {"l": 3})], 0.04,
                              "loss"),  # ARX 432 ms
    "4_k5_recursive43_4_loss": (True, [("KAnonymity", {"k": 5}), ("RecursiveCLDiversity", {"c": 4.0, "l": 3})],
                                0.04, "loss"),  # ARX 432 ms
    "5_k5_hier02_4_loss": (True, [("KAnonymity", {"k": 5}), ("HierarchicalDistanceTCloseness", {"t": 0.2})],
                           0.04, "loss"),  # ARX 889 ms
    "6_k5_equal02_4_loss": (True, [("KAnonymity", {"k": 5}), ("EqualDistanceTCloseness", {"t": 0.2})], 0.04,
                            "loss"),  # ARX 865 ms
    "7a_ebeta2_0_loss": (True, [("EnhancedBetaLikeness", {"beta": 2.0})], 0.0, "loss"),  # ARX 14 ms
    "7b_ebeta2_4_loss": (True, [("EnhancedBetaLikeness", {"beta": 2.0})], 0.04, "loss"),  # ARX 1,637 ms
    "8_k5_100_loss": (False, [("KAnonymity", {"k": 5})], 1.0, "loss"),  # ARX 2,807 ms
}

CENSUS_CONFIGS: dict[str, tuple[list[tuple[str, dict[str, Any]]], float, str]] = {
    "a_k5_4_dmstar": ([("KAnonymity", {"k": 5})], 0.04, "dm_star"),  # ARX 4,360 ms
    "b_k5_0_loss": ([("KAnonymity", {"k": 5})], 0.0, "loss"),  # ARX 294.5 ms
    "c_k5_hier02_4_loss": ([("KAnonymity", {"k": 5}), ("HierarchicalDistanceTCloseness", {"t": 0.2})], 0.04,
                           "loss"),  # ARX 17,071 ms
    "d_k5_100_loss": ([("KAnonymity", {"k": 5})], 1.0, "loss"),  # ARX 3,871 ms
    "e_k5_recursive43_4_loss": ([("KAnonymity", {"k": 5}), ("RecursiveCLDiversity", {"c": 4.0, "l": 3})], 0.04,
                                "loss"),  # ARX 18,166 ms
}

CENSUS_COLUMNS = ("age", "sex", "education", "marital_stat", "race", "class_of_worker", "major_industry_code",
                  "country_of_birth_self", "detailed_occupation_recode")


def _models(spec: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    import anoncore.models as am

    return [getattr(am, name)(**params) for name, params in spec]


def load_census_income_arx(sensitive: str | None = "detailed_occupation_recode"):  # type: ignore[no-untyped-def]
    """Minimal private loader of ../shared/data/census-income/arx (until anoncore.datasets has one)."""
    from anoncore import datasets

    loader = getattr(datasets, "load_census_income_arx", None)
    if loader is not None:
        return loader(sensitive=sensitive)
    import pandas as pd

    from anoncore import Attribute, Hierarchy, Schema, Table

    base = Path(datasets.shared_data_dir()) / "census-income" / "arx"
    if not (base / "census.csv.gz").exists():
        raise NotImplementedError(f"census-income ARX data not found in {base}")
    with gzip.open(base / "census.csv.gz", "rt") as fh:
        df = pd.read_csv(fh, sep=";", dtype=str, keep_default_na=False)
    attrs = []
    for c in CENSUS_COLUMNS:
        h = Hierarchy.from_arx_csv(base / f"census_hierarchy_{c}.csv", name=c)
        attrs.append(Attribute(c, "sensitive" if c == sensitive else "quasi_identifier", "categorical",
                               hierarchy=h))
    return Table.from_pandas(df[list(CENSUS_COLUMNS)], Schema(tuple(attrs)))


def census_many_distinct(copies: int = 4, seed: int = 0):  # type: ignore[no-untyped-def]
    """census-income x4 (1,197,140 rows) with age and country of birth redrawn at random in every copy after
    the first: a 1.2M-row table with many distinct QI tuples (the honest scale test of ARX-TIMINGS.md)."""
    import numpy as np

    from anoncore import Table

    base = load_census_income_arx()
    t = base.take(np.tile(np.arange(base.n_rows), copies))
    codes = np.array(t.codes)
    rng = np.random.default_rng(seed)
    n = base.n_rows
    for name in ("age", "country_of_birth_self"):
        j = t.columns.index(name)
        h = t.hierarchy(name)
        codes[n:, j] = rng.integers(0, h.n_leaves, size=codes.shape[0] - n)
    codes.setflags(write=False)
    return Table(t.schema, codes, t.columns, t.row_ids, t.dropped_rows, dict(t._dicts))


class AdultARX:
    """The 8 (+1) Adult configurations of the issue / ARX-TIMINGS.md."""

    params = (list(ADULT_CONFIGS), [1, None])
    param_names = ("config", "n_threads")
    timeout = 120

    def setup_cache(self) -> dict[str, Any]:
        return {"plain": adult(), "occupation": adult(sensitive="occupation")}

    def setup(self, tables: dict[str, Any], config: str, n_threads: int | None) -> None:
        with_sa, spec, self.limit, self.metric = ADULT_CONFIGS[config]
        self.table = tables["occupation" if with_sa else "plain"]
        self.models = _models(spec)

    def _run(self, n_threads: int | None) -> Any:
        from anoncore.static.lattice import lattice_search

        return lattice_search(self.table, self.models, suppression_limit=self.limit, metric=self.metric, n_threads=n_threads)

    def time_lattice_search(self, tables: dict[str, Any], config: str, n_threads: int | None) -> None:
        self._run(n_threads)

    def track_score(self, tables: dict[str, Any], config: str, n_threads: int | None) -> float:
        return float(self._run(n_threads).metrics[self.metric])

    def track_nodes_evaluated(self, tables: dict[str, Any], config: str, n_threads: int | None) -> int:
        return int(self._run(n_threads).stats["nodes_evaluated"])


class AdultARXFirstCall:
    """The Adult configurations as a first call on a table: each timed call starts from a table whose cache is
    cleared (its encoding kept), so the rows' bottom grouping, the per-table arrays and the audit's reference
    distribution are rebuilt inside the call (AdultARX times repeat calls, which reuse them)."""

    params = (list(ADULT_CONFIGS),)
    param_names = ("config",)
    timeout = 120

    def setup_cache(self) -> dict[str, Any]:
        return {"plain": adult(), "occupation": adult(sensitive="occupation")}

    def setup(self, tables: dict[str, Any], config: str) -> None:
        with_sa, spec, self.limit, self.metric = ADULT_CONFIGS[config]
        self.table = tables["occupation" if with_sa else "plain"]
        self.models = _models(spec)

    def time_lattice_search_first_call(self, tables: dict[str, Any], config: str) -> None:
        from anoncore._tablecache import clear_table_caches
        from anoncore.static.lattice import lattice_search

        clear_table_caches(self.table)
        lattice_search(self.table, self.models, suppression_limit=self.limit, metric=self.metric, n_threads=1)


class CensusIncomeARX:
    """KDD census-income in ARX format (299,285 rows, 8 QIs), ARX-TIMINGS.md rows a-e."""

    params = (list(CENSUS_CONFIGS), [1, None])
    param_names = ("config", "n_threads")
    timeout = 600

    def setup_cache(self) -> Any:
        return load_census_income_arx()

    def setup(self, table: Any, config: str, n_threads: int | None) -> None:
        spec, self.limit, self.metric = CENSUS_CONFIGS[config]
        self.table = table
        self.models = _models(spec)

    def time_lattice_search(self, table: Any, config: str, n_threads: int | None) -> None:
        from anoncore.static.lattice import lattice_search

        lattice_search(self.table, self.models, suppression_limit=self.limit, metric=self.metric, n_threads=n_threads)

    def track_score(self, table: Any, config: str, n_threads: int | None) -> float:
        from anoncore.static.lattice import lattice_search

        return float(lattice_search(self.table, self.models, suppression_limit=self.limit, metric=self.metric).metrics[self.metric])


class Heuristics:
    """Datafly, Samarati and the improved greedy on Adult (k=10, 2 %, Loss): time and loss."""

    params = (["datafly", "samarati", "greedy", "optimal"],)
    param_names = ("strategy",)
    timeout = 120

    def setup_cache(self) -> Any:
        return adult()

    def setup(self, table: Any, strategy: str) -> None:
        self.models = _models([("KAnonymity", {"k": 10})])

    def time_search(self, table: Any, strategy: str) -> None:
        from anoncore.static.lattice import lattice_search

        lattice_search(table, self.models, suppression_limit=0.02, metric="loss", strategy=strategy)

    def track_loss(self, table: Any, strategy: str) -> float:
        from anoncore.static.lattice import lattice_search

        return float(lattice_search(table, self.models, suppression_limit=0.02, metric="loss", strategy=strategy).metrics["loss"])


class CensusManyDistinct:
    """census-income x4 with age and country of birth redrawn (1.2M rows, many distinct QI tuples), k=5, 4 %,
    DM* (stretch goal of issue 8: under 1 s). Large: runs only with ANONCORE_BENCH_LARGE=1."""

    params = ([1, None],)
    param_names = ("n_threads",)
    timeout = 600

    def setup_cache(self) -> Any:
        from .common import require_large

        require_large(1_197_140)
        return census_many_distinct()

    def setup(self, table: Any, n_threads: int | None) -> None:
        self.models = _models([("KAnonymity", {"k": 5})])
        table.qi_codes()

    def time_lattice_search(self, table: Any, n_threads: int | None) -> None:
        from anoncore.static.lattice import lattice_search

        lattice_search(table, self.models, suppression_limit=0.04, metric="dm_star", n_threads=n_threads)

    def track_score(self, table: Any, n_threads: int | None) -> float:
        from anoncore.static.lattice import lattice_search

        return float(lattice_search(table, self.models, suppression_limit=0.04, metric="dm_star", n_threads=n_threads).metrics["dm_star"])


class AdultReplicated:
    """Adult x40 (1,206,480 rows) with k scaled to 200: Adult's optimum (ARX-TIMINGS.md "At scale")."""

    params = (["1_k200_0_loss", "2_k200_4_dmstar", "8_k200_100_loss"], [1, None])
    param_names = ("config", "n_threads")
    timeout = 300

    def setup_cache(self) -> Any:
        import numpy as np

        t = adult()
        return t.take(np.tile(np.arange(t.n_rows), 40))

    def setup(self, table: Any, config: str, n_threads: int | None) -> None:
        self.limit, self.metric = {"1_k200_0_loss": (0.0, "loss"), "2_k200_4_dmstar": (0.04, "dm_star"),
                                   "8_k200_100_loss": (1.0, "loss")}[config]
        self.models = _models([("KAnonymity", {"k": 200})])
        table.qi_codes()

    def time_lattice_search(self, table: Any, config: str, n_threads: int | None) -> None:
        from anoncore.static.lattice import lattice_search

        lattice_search(table, self.models, suppression_limit=self.limit, metric=self.metric, n_threads=n_threads)


class ARXFromStrings:
    """A user's first call on every ARX row (issue 16): a DataFrame of strings as read from a CSV file (or an
    Arrow table of them) encoded (``Table.from_pandas`` / ``Table.from_arrow``), searched (``lattice_search``)
    and published to Arrow (``Result.to_arrow``), each with its default ``n_threads``. ``benchmarks/end_to_end.py`` prints the same next to ARX's times."""

    params = ([f"adult_{c}" for c in ADULT_CONFIGS] + [f"census_{c}" for c in CENSUS_CONFIGS],)
    param_names = ("config",)
    timeout = 300

    def setup(self, config: str) -> None:
        kind, name = config.split("_", 1)
        if kind == "adult":
            with_sa, spec, self.limit, self.metric = ADULT_CONFIGS[name]
            table = adult(sensitive="occupation" if with_sa else None)
        else:
            spec, self.limit, self.metric = CENSUS_CONFIGS[name]
            table = load_census_income_arx()
        self.df, self.schema, self.models = strings_frame(table), table.schema, _models(spec)
        import pyarrow as pa

        self.arrow = pa.Table.from_pandas(self.df, preserve_index=False)

    def time_first_call(self, config: str) -> None:
        from anoncore import Table
        from anoncore.static.lattice import lattice_search

        t = Table.from_pandas(self.df, self.schema)
        lattice_search(t, self.models, suppression_limit=self.limit, metric=self.metric).to_arrow()

    def time_first_call_from_arrow(self, config: str) -> None:
        """The same from an Arrow table of the same strings (``Table.from_arrow``)."""
        from anoncore import Table
        from anoncore.static.lattice import lattice_search

        t = Table.from_arrow(self.arrow, self.schema)
        lattice_search(t, self.models, suppression_limit=self.limit, metric=self.metric).to_arrow()


class AdultARXConfiguration:
    """ARX's other metrics and aggregate on Adult, k=5 (issue 21): KL divergence (the paper's reading and ARX's),
    ambiguity, and Loss under the RANK aggregate with and without attribute weights."""

    params = (["kl", "kl_arx", "ambiguity", "loss_rank", "loss_rank_weighted"], [0.0, 0.04])
    param_names = ("metric", "suppression_limit")
    timeout = 120

    def setup_cache(self) -> Any:
        return adult()

    def _run(self, table: Any, metric: str, limit: float) -> Any:
        from anoncore.models import KAnonymity
        from anoncore.static.lattice import lattice_search

        kw: dict[str, Any] = {"suppression_limit": limit, "n_threads": 1}
        if metric.startswith("loss_rank"):
            kw.update(metric="loss", aggregate="rank")
            if metric.endswith("weighted"):
                kw["weights"] = {q: 1.0 + (i % 3) for i, q in enumerate(table.quasi_identifiers)}
        else:
            kw["metric"] = metric
        return lattice_search(table, [KAnonymity(5)], **kw)

    def time_lattice_search(self, table: Any, metric: str, limit: float) -> None:
        self._run(table, metric, limit)

    def track_nodes_evaluated(self, table: Any, metric: str, limit: float) -> int:
        r = self._run(table, metric, limit)
        return int(r.stats["nodes_evaluated"]) + int(r.stats.get("rank_nodes_evaluated", 0))


class AdultARXReadings:
    """ARX's readings of three models in the engine, Adult with occupation sensitive, k=5, 4 %: ordered
    t-closeness in the string order of the values (the codes renumbered) and delta-disclosure checking only the
    values present in a class (not upward closed: no feasibility inferred upwards), next to the paper's
    readings; and ARX's estimated k-map (k 20, N 100,000, zero-truncated Poisson: the k-anonymity of the
    derived k, 13 on Adult) in place of k=5."""

    params = (["t_ordered_0.2", "t_ordered_string_0.2", "delta_1.2", "delta_ignore_1.2", "kmap_ztp_20"],)
    param_names = ("models",)
    timeout = 120

    def setup_cache(self) -> Any:
        return adult(sensitive="occupation")

    def _run(self, table: Any, models: str) -> Any:
        from anoncore.models import DeltaDisclosure, KAnonymity, KMap, OrderedDistanceTCloseness
        from anoncore.static.lattice import lattice_search

        if models == "kmap_ztp_20":
            kmap = KMap(20, population_size=100_000, estimator="zero_truncated_poisson")
            return lattice_search(table, [kmap], suppression_limit=0.04, n_threads=1)
        m = {"t_ordered_0.2": OrderedDistanceTCloseness(0.2),
             "t_ordered_string_0.2": OrderedDistanceTCloseness(0.2, order="string"),
             "delta_1.2": DeltaDisclosure(1.2), "delta_ignore_1.2": DeltaDisclosure(1.2, absent="ignore")}[models]
        return lattice_search(table, [KAnonymity(5), m], suppression_limit=0.04, n_threads=1)

    def time_lattice_search(self, table: Any, models: str) -> None:
        self._run(table, models)

    def track_nodes_evaluated(self, table: Any, models: str) -> int:
        return int(self._run(table, models).stats["nodes_evaluated"])
