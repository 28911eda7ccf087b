"""Best-of-N timings of the risk profile on census-income (the asv target, measured outside asv).

Usage: PYTHONPATH=src python benchmarks/risk_timing.py [repeats]   (writes bench_out/risk_timing.csv)
"""

from __future__ import annotations

import csv
import os
import sys
import time

import anoncore as ac
from anoncore._tablecache import clear_table_caches
from anoncore.datasets import load_census_income_arx
from anoncore.risk import population_uniques, quasi_identifier_analysis, risk_profile

POPULATION = 2.6e8


def best(f, n: int) -> float:  # type: ignore[no-untyped-def]
    b = float("inf")
    for _ in range(n):
        t0 = time.perf_counter()
        f()
        b = min(b, time.perf_counter() - t0)
    return b * 1000.0


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    t = load_census_income_arx(sensitive="detailed_occupation_recode")
    part = ac.Partition.from_levels(t, [2, 1, 1, 1, 1, 1, 1, 1])

    def first() -> None:
        clear_table_caches(t)
        risk_profile(t, population_size=POPULATION)

    def sample_only() -> None:
        clear_table_caches(t)
        risk_profile(t)

    prof = risk_profile(t, population_size=POPULATION)
    sizes = [s for s, r in prof.distribution for _ in range(r // s)]
    rows = [
        ("profile_first_call_ms", best(first, n)),
        ("profile_sample_only_ms", best(sample_only, n)),
        ("profile_cached_classes_ms", best(lambda: risk_profile(t, population_size=POPULATION), n)),
        ("profile_partition_ms", best(lambda: risk_profile(part, population_size=POPULATION), n)),
        ("estimators_ms", best(lambda: population_uniques(sizes, POPULATION), n)),
        ("qi_analysis_pairs_ms", best(lambda: quasi_identifier_analysis(t, max_size=2), max(1, n // 5))),
    ]
    print(prof)
    print(prof.stats)
    os.makedirs("bench_out", exist_ok=True)
    with open("bench_out/risk_timing.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["measure", "value"])
        for k, v in rows:
            w.writerow([k, f"{v:.3f}"])
            print(f"{k:<28}{v:10.2f}")


if __name__ == "__main__":
    main()
