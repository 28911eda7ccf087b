"""Reference outputs and timings of the lattice search, to check that a refactoring changes nothing.

Records, for every ARX configuration of ``shared/data/adult/ARX-TIMINGS.md`` (Adult 1-8 with 6b, census-income
a-e) and for a few hundred seeded random small problems (every model family, every metric, several
suppression limits, every strategy): the levels, the score, the suppressed rows, a hash of the published
partition and the search statistics (nodes evaluated / inferred / popped, queue or sweep). Writes JSON to
``bench_out/``; ``--compare OLD.json`` checks a new run against an old one (exit 1 on any difference).

    PYTHONPATH=src python benchmarks/lattice_reference.py --out bench_out/lattice_ref_before.json
    PYTHONPATH=src python benchmarks/lattice_reference.py --out bench_out/lattice_ref_after.json \
        --compare bench_out/lattice_ref_before.json
    PYTHONPATH=src python benchmarks/lattice_reference.py --timing --repeat 5 --out bench_out/lattice_time.json

``--threads N`` runs every search with ``n_threads=N`` (default: None, all cores); ``--results-only`` compares
only the outcome (levels, score, suppressed rows, classes, partition hash), not the search statistics.

``--timing`` also measures the ARX configurations: the best of ``--repeat`` repeat calls (the table's caches
warm) and the best of ``--repeat`` first calls (the table's cache cleared before each call); ``--cpu`` takes
the process's CPU time instead of wall time (one thread: less sensitive to a loaded machine).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "asv_benchmarks"))
sys.path.insert(0, str(ROOT / "src"))

from benchmarks.bench_lattice import (  # type: ignore[import-not-found]
    ADULT_CONFIGS,
    CENSUS_CONFIGS,
    _models,
    load_census_income_arx,
)
from benchmarks.common import adult  # type: ignore[import-not-found]

from anoncore import Attribute, Hierarchy, InfeasibleError, Schema, Table
from anoncore._tablecache import clear_table_caches
from anoncore.static import lattice as L

ADULT = dict(ADULT_CONFIGS)
ADULT["6b_k5_ordered02_4_loss"] = (True, [("KAnonymity", {"k": 5}), ("OrderedDistanceTCloseness", {"t": 0.2})],
                                   0.04, "loss")


def partition_hash(p: Any) -> str:
    h = hashlib.sha256()
    for a in (p.labels, p.suppressed, p.gen_lo, p.gen_hi, p.gen_node):
        h.update(np.ascontiguousarray(a).tobytes())
    h.update(repr((p.n_classes, p.levels)).encode())
    return h.hexdigest()[:16]


def summary(res: Any, metric: str) -> dict[str, Any]:
    st = res.stats
    keep = {k: st[k] for k in ("nodes_evaluated", "nodes_inferred", "nodes_popped", "search", "height")
            if k in st}
    return {"levels": list(res.partition.levels), "score": float(res.metrics[metric]).hex(),
            "suppressed": int(np.count_nonzero(res.partition.suppressed)),
            "n_classes": int(res.partition.n_classes), "hash": partition_hash(res.partition), **keep}


THREADS: int | None = None
RESULT_KEYS = ("levels", "score", "suppressed", "n_classes", "hash", "infeasible")


def run_one(table: Table, models: list[Any], limit: float, metric: str, strategy: str = "optimal",
            **kw: Any) -> dict[str, Any]:
    kw.setdefault("n_threads", THREADS)
    try:
        res = L.lattice_search(table, models, suppression_limit=limit, metric=metric, strategy=strategy, **kw)
    except InfeasibleError:
        return {"infeasible": True}
    return summary(res, metric)


# ------------------------------------------------------------------------------------------- random problems
def _random_hierarchy(rng: np.random.Generator, n_leaves: int, height: int, prefix: str) -> Hierarchy:
    cols = [[f"{prefix}{v}" for v in range(n_leaves)]]
    cur = np.arange(n_leaves)
    width = n_leaves
    for lv in range(1, height):
        width = max(1, min(width - 1, int(rng.integers(1, width + 1)))) if width > 1 else 1
        cur = rng.integers(0, width, size=int(cur.max()) + 1)[cur]
        cols.append([f"{prefix}L{lv}_{c}" for c in cur])
    cols.append(["*"] * n_leaves)
    return Hierarchy.from_rows(list(zip(*cols)), name=prefix)


def random_table(seed: int) -> Table:
    rng = np.random.default_rng(seed)
    n_qi = int(rng.integers(1, 5))
    n_rows = int(rng.integers(6, 120))
    attrs, data = [], {}
    for j in range(n_qi):
        nl = int(rng.integers(2, 7))
        hier = _random_hierarchy(rng, nl, int(rng.integers(1, 4)), f"q{j}_")
        attrs.append(Attribute(f"q{j}", "quasi_identifier", "categorical", hierarchy=hier))
        data[f"q{j}"] = [hier.leaves[i] for i in rng.integers(0, nl, size=n_rows)]
    m = int(rng.integers(2, 7))
    sh = _random_hierarchy(rng, m, int(rng.integers(1, 4)), "s")
    p = rng.dirichlet(np.ones(m))
    data["s"] = [sh.leaves[i] for i in rng.choice(m, size=n_rows, p=p)]
    attrs.append(Attribute("s", "sensitive", "categorical", hierarchy=sh))
    return Table.from_pandas(pd.DataFrame(data), Schema(tuple(attrs)))


M = L._SimpleModel.make
MODEL_SETS = [
    [M("KAnonymity", k=2)], [M("KAnonymity", k=4)],
    [M("DistinctLDiversity", l=2)], [M("KAnonymity", k=2), M("DistinctLDiversity", l=3)],
    [M("EntropyLDiversity", l=1.7)], [M("RecursiveCLDiversity", c=1.6, l=2)],
    [M("KAnonymity", k=2), M("EqualDistanceTCloseness", t=0.3141)], [M("OrderedDistanceTCloseness", t=0.2718)],
    [M("KAnonymity", k=2), M("HierarchicalDistanceTCloseness", t=0.2718)], [M("HellingerTCloseness", t=0.4142)],
    [M("BasicBetaLikeness", beta=1.3)], [M("EnhancedBetaLikeness", beta=0.9)], [M("DeltaDisclosure", delta=1.1)],
    [M("KAnonymity", k=3), M("RecursiveCLDiversity", c=2.0, l=2), M("EnhancedBetaLikeness", beta=2.0)],
]


def random_cases(n_seeds: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for seed in range(n_seeds):
        table = random_table(seed)
        for mi in range(len(MODEL_SETS)):
            if (seed + mi) % 3:  # a third of the pairs keeps the run short
                continue
            for limit in (0.0, 0.1, 0.3, 1.0):
                for metric in L.METRICS:
                    key = f"r{seed}_m{mi}_{limit}_{metric}"
                    out[key] = run_one(table, MODEL_SETS[mi], limit, metric)
                for strategy in ("datafly", "samarati", "greedy"):
                    out[f"r{seed}_m{mi}_{limit}_{strategy}"] = run_one(table, MODEL_SETS[mi], limit, "loss",
                                                                       strategy)
            for gs, agg in ((0.0, "arithmetic_mean"), (1.0, "sum"), (0.3, "max")):
                out[f"r{seed}_m{mi}_loss_{gs}_{agg}"] = run_one(table, MODEL_SETS[mi], 0.1, "loss",
                                                                 gs_factor=gs, aggregate=agg)
    return out


# ------------------------------------------------------------------------------------------- ARX configurations
def arx_cases() -> dict[str, tuple[Table, list[Any], float, str]]:
    plain, occ = adult(), adult(sensitive="occupation")
    cases = {}
    for name, (with_sa, spec, limit, metric) in ADULT.items():
        cases[f"adult_{name}"] = (occ if with_sa else plain, _models(spec), limit, metric)
    try:
        census = load_census_income_arx()
    except NotImplementedError:
        census = None
    if census is not None:
        for name, (spec, limit, metric) in CENSUS_CONFIGS.items():
            cases[f"census_{name}"] = (census, _models(spec), limit, metric)
    return cases


def timing(cases: dict[str, Any], repeat: int, clock: Any = time.perf_counter) -> dict[str, Any]:
    out = {}
    for name, (table, models, limit, metric) in cases.items():
        n = repeat if name.startswith("adult") else max(2, repeat // 2)
        rep, first = [], []
        for _ in range(n):
            clear_table_caches(table)
            t0 = clock()
            L.lattice_search(table, models, suppression_limit=limit, metric=metric, n_threads=1)
            first.append(clock() - t0)
            t0 = clock()
            L.lattice_search(table, models, suppression_limit=limit, metric=metric, n_threads=1)
            rep.append(clock() - t0)
        out[name] = {"repeat_best_ms": 1e3 * min(rep), "first_best_ms": 1e3 * min(first),
                     "repeat_median_ms": 1e3 * float(np.median(rep))}
        print(f"{name:36s} repeat {1e3 * min(rep):9.1f} ms  first {1e3 * min(first):9.1f} ms", flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="bench_out/lattice_reference.json")
    ap.add_argument("--compare", default=None)
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--timing", action="store_true")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", default=None, help="regular expression on the ARX case names")
    ap.add_argument("--cpu", action="store_true", help="time the process's CPU time (a loaded machine)")
    ap.add_argument("--threads", type=int, default=None, help="n_threads of every search (default: all cores)")
    ap.add_argument("--results-only", action="store_true", help="compare outcomes, not search statistics")
    args = ap.parse_args()
    global THREADS
    THREADS = args.threads
    cases = arx_cases()
    if args.only:
        cases = {k: v for k, v in cases.items() if re.search(args.only, k)}
    result: dict[str, Any] = {}
    if args.timing:
        result["timing"] = timing(cases, args.repeat, time.process_time if args.cpu else time.perf_counter)
    else:
        for name, (table, models, limit, metric) in cases.items():
            result[name] = run_one(table, models, limit, metric)
            print(name, result[name], flush=True)
        result.update(random_cases(args.seeds))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1, sort_keys=True))
    if args.compare and not args.timing:
        old = json.loads(Path(args.compare).read_text())
        def outcome(v: Any) -> Any:
            return {k: v[k] for k in RESULT_KEYS if k in v} if args.results_only and isinstance(v, dict) else v

        diff = [k for k in sorted(set(old) | set(result)) if outcome(old.get(k)) != outcome(result.get(k))]
        print(f"{len(result)} cases, {len(diff)} differ from {args.compare}")
        for k in diff[:20]:
            print(" ", k, old.get(k), "->", result.get(k))
        return 1 if diff else 0
    if args.timing and args.compare:
        old = json.loads(Path(args.compare).read_text()).get("timing", {})
        for k, v in result["timing"].items():
            if k in old:
                print(f"{k:36s} repeat {old[k]['repeat_best_ms']:9.1f} -> {v['repeat_best_ms']:9.1f} ms   "
                      f"first {old[k]['first_best_ms']:9.1f} -> {v['first_best_ms']:9.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
