"""Every data source of anoncore in one package: generators and loaders.

* :mod:`anoncore.datasets.loaders`: the toy table and the loaders of the benchmark data (ARX's Adult, UCI Adult,
  KDD census-income), read from ``$ANONCORE_SHARED_DATA`` (default: the ``shared/data`` folder next to the
  repository); the files are never bundled.
* :mod:`anoncore.datasets.census`: the synthetic census generator (the thesis's CENSUS shape), the embedded
  default for demos.
* :mod:`anoncore.datasets.streams`: streams for CASTLE and SABRE_W (UCI Adult as a stream, power-law and
  transaction streams).
* :mod:`anoncore.datasets.sequences`: synthetic event sequences shaped like MSNBC and Reality Mining.
* :mod:`anoncore.datasets.temporal`: synthetic snapshot streams for the temporal reposition model.
* :mod:`anoncore.datasets.graphs`: a Wiki-Vote-shaped social graph with its synthetic taxonomy and weights, and
  the SNAP edge-list loader (for :mod:`anoncore.graph`).

The old paths (``anoncore.data.synthetic``, ``anoncore.stream.datasets``, ``anoncore.sequence.synthetic``,
``anoncore.temporal._synthetic``) still import, as thin re-exports of these modules.
"""

from __future__ import annotations

from anoncore.datasets.census import (
    CENSUS_COLUMNS,
    CENSUS_QUASI_IDENTIFIERS,
    SALARY_MARGINAL,
    census_hierarchies,
    synthetic_census,
    synthetic_census_frame,
    synthetic_census_schema,
)
from anoncore.datasets.graphs import (
    WIKI_VOTE_EDGES,
    WIKI_VOTE_NODES,
    EdgeList,
    load_snap_edges,
    random_labels,
    synthetic_weights,
    wiki_vote_like,
    wiki_vote_taxonomy,
)
from anoncore.datasets.loaders import (
    ADULT_COLUMNS,
    CENSUS_INCOME_ARX_COLUMNS,
    CENSUS_INCOME_COLUMNS,
    UCI_ADULT_COLUMNS,
    UCI_ADULT_QUASI_IDENTIFIERS,
    load_adult_arx,
    load_census_income,
    load_census_income_arx,
    load_uci_adult,
    shared_data_dir,
    toy_table,
    uci_adult_hierarchies,
)
from anoncore.datasets.sequences import (
    MSNBC_CATEGORIES,
    location_like,
    location_taxonomy,
    markov_sequences,
    msnbc_like,
    msnbc_taxonomy,
)
from anoncore.datasets.streams import (
    ADULT_NUMERIC_DOMAINS,
    ADULT_QI,
    adult_stream_schema,
    expand_transactions,
    load_uci_adult_stream,
    power_law_stream,
    transaction_stream,
)
from anoncore.datasets.temporal import (
    make_temporal_stream,
)

__all__ = [
    "ADULT_COLUMNS",
    "ADULT_NUMERIC_DOMAINS",
    "ADULT_QI",
    "CENSUS_COLUMNS",
    "CENSUS_INCOME_ARX_COLUMNS",
    "CENSUS_INCOME_COLUMNS",
    "CENSUS_QUASI_IDENTIFIERS",
    "MSNBC_CATEGORIES",
    "SALARY_MARGINAL",
    "UCI_ADULT_COLUMNS",
    "UCI_ADULT_QUASI_IDENTIFIERS",
    "WIKI_VOTE_EDGES",
    "WIKI_VOTE_NODES",
    "EdgeList",
    "adult_stream_schema",
    "census_hierarchies",
    "expand_transactions",
    "load_adult_arx",
    "load_census_income",
    "load_census_income_arx",
    "load_snap_edges",
    "load_uci_adult",
    "load_uci_adult_stream",
    "location_like",
    "location_taxonomy",
    "make_temporal_stream",
    "markov_sequences",
    "msnbc_like",
    "msnbc_taxonomy",
    "power_law_stream",
    "random_labels",
    "shared_data_dir",
    "synthetic_census",
    "synthetic_census_frame",
    "synthetic_census_schema",
    "synthetic_weights",
    "toy_table",
    "transaction_stream",
    "uci_adult_hierarchies",
    "wiki_vote_like",
    "wiki_vote_taxonomy",
]
