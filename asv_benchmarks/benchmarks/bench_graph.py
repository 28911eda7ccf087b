"""asv suite for anoncore.graph (STYLE.md §2.10): the prominence pipeline of spec social-network.md §6.3.

Data: the Wiki-Vote-shaped graph (7,115 nodes, 103,689 directed edges, power-law in-degree, synthetic
48-leaf taxonomy) and, with ANONCORE_BENCH_LARGE=1, a graph of the same shape with 1,000,000 nodes and
10,000,000 edges. Targets on the 2-core development machine: the whole pipeline with exact betweenness on
Wiki-Vote under 5 s; on the large graph with betweenness sampled from 64 sources under 60 s.
"""

from __future__ import annotations

from .common import require_large

LARGE_SOURCES = 64


def _wiki(weighted: bool):  # type: ignore[no-untyped-def]
    from anoncore.graph import random_labels, wiki_vote_like, wiki_vote_taxonomy

    el = wiki_vote_like(weighted=weighted, rng=0)
    tax = wiki_vote_taxonomy()
    return el, random_labels(el.n_nodes, tax, rng=1), tax


class WikiVotePipeline:
    """prominence_anonymize on the Wiki-Vote-shaped graph, every measure (betweenness exact)."""

    params = [  # noqa: RUF012 (asv reads class attributes)
        ["degree", "closeness", "betweenness", "eigenvector", "proximity_prestige", "rank_prestige", "combined"],
        [False, True],
    ]
    param_names = ["measure", "weighted"]  # noqa: RUF012
    timeout = 300

    def setup_cache(self):  # type: ignore[no-untyped-def]
        return {w: _wiki(w) for w in (False, True)}

    def setup(self, cache, measure, weighted):  # type: ignore[no-untyped-def]
        self.el, self.labels, self.tax = cache[weighted]

    def time_prominence_anonymize(self, cache, measure, weighted):  # type: ignore[no-untyped-def]
        from anoncore.graph import prominence_anonymize

        prominence_anonymize(self.el, self.labels, self.tax, measure)

    def track_iloss(self, cache, measure, weighted):  # type: ignore[no-untyped-def]
        from anoncore.graph import prominence_anonymize

        return prominence_anonymize(self.el, self.labels, self.tax, measure).iloss

    track_iloss.unit = "Iloss"  # type: ignore[attr-defined]


class BetweennessKernel:
    """Exact Brandes betweenness on the Wiki-Vote-shaped graph, by thread count (the output is identical)."""

    params = [[1, 2]]  # noqa: RUF012
    param_names = ["n_threads"]  # noqa: RUF012
    timeout = 300

    def setup_cache(self):  # type: ignore[no-untyped-def]
        return _wiki(False)

    def setup(self, cache, n_threads):  # type: ignore[no-untyped-def]
        self.el = cache[0]

    def time_betweenness(self, cache, n_threads):  # type: ignore[no-untyped-def]
        from anoncore.graph import betweenness_centrality

        betweenness_centrality(self.el, n_threads=n_threads)


class LargeSampledPipeline:
    """The whole pipeline on 1,000,000 nodes / 10,000,000 edges with betweenness from 64 sampled sources."""

    params = [[1_000_000]]  # noqa: RUF012
    param_names = ["n_nodes"]  # noqa: RUF012
    timeout = 900
    number = 1
    repeat = 1

    def setup_cache(self):  # type: ignore[no-untyped-def]
        import os

        if os.environ.get("ANONCORE_BENCH_LARGE", "") != "1":
            return None
        from anoncore.graph import random_labels, wiki_vote_like, wiki_vote_taxonomy

        el = wiki_vote_like(1_000_000, 10_000_000, rng=0)
        tax = wiki_vote_taxonomy()
        return el, random_labels(el.n_nodes, tax, rng=1), tax

    def setup(self, cache, n_nodes):  # type: ignore[no-untyped-def]
        require_large(n_nodes)
        self.el, self.labels, self.tax = cache

    def time_prominence_anonymize(self, cache, n_nodes):  # type: ignore[no-untyped-def]
        from anoncore.graph import prominence_anonymize

        prominence_anonymize(self.el, self.labels, self.tax, "betweenness", betweenness_samples=LARGE_SOURCES,
                             rng=0)
