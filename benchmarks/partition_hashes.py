"""SHA-256 of the published partitions of SABRE, BUREL and the Mondrian variants on fixed cases.

A refactoring check: run it on two builds and compare the lines (they must be equal, bit for bit).
Cases: the synthetic census (20,000 rows, 7 and 3 QIs) and ARX's Adult with ``occupation`` sensitive (when
the shared data is present). Usage: ``PYTHONPATH=src python benchmarks/partition_hashes.py [--out FILE]``.
"""

from __future__ import annotations

import argparse
import hashlib
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import anoncore as ac
from anoncore import datasets
from anoncore.models import EnhancedBetaLikeness, KAnonymity
from anoncore.static.burel import likeness_model
from anoncore.static.sabre import closeness_model


def digest(res: Any) -> str:
    p = res.partition
    h = hashlib.sha256()
    for a in (p.labels, p.suppressed, p.gen_lo, p.gen_hi, p.gen_node):
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def cases() -> list[tuple[str, Callable[[], Any]]]:
    census7 = datasets.synthetic_census(20_000, rng=0)
    census3 = datasets.synthetic_census(20_000, rng=1, n_qi=3)
    out: list[tuple[str, Callable[[], Any]]] = []
    tables = [("census7", census7), ("census3", census3)]
    try:
        tables.append(("adult", datasets.load_adult_arx(sensitive="occupation")))
    except Exception as e:  # noqa: BLE001 (the shared data is optional here)
        print(f"# adult skipped: {e}")
    for name, tab in tables:
        for method in ("ak", "knn"):
            for policy in ("random", "min_key"):
                out.append((f"{name} sabre {method} {policy}",
                            lambda tab=tab, method=method, policy=policy: ac.sabre(
                                tab, [KAnonymity(6), closeness_model(tab, 0.35)], method=method, seed_policy=policy, rng=3)))
        out.append((f"{name} sabre slices", lambda tab=tab: ac.sabre(tab, [KAnonymity(4), closeness_model(tab, 0.3)], seed_policy="slices", rng=0)))
        for variant in ("basic", "enhanced"):
            for split in ("halve", "balanced"):
                out.append((f"{name} burel {variant} {split}", lambda tab=tab, v=variant, s=split: ac.burel(
                    tab, likeness_model(beta=3.0, variant=v), split=s, rng=5)))
        out.append((f"{name} burel slices", lambda tab=tab: ac.burel(tab, likeness_model(beta=2.0), seed_policy="slices", rng=0)))
        out.append((f"{name} tmondrian", lambda tab=tab: ac.tmondrian(tab, [KAnonymity(5), closeness_model(tab, 0.3)])))
        out.append((f"{name} lmondrian", lambda tab=tab: ac.lmondrian(tab, likeness_model(beta=3.0))))
        out.append((f"{name} dmondrian", lambda tab=tab: ac.dmondrian(tab, EnhancedBetaLikeness(3.0))))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    lines = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for name, run in cases():
            try:
                lines.append(f"{name}: {digest(run())}")
            except Exception as e:  # noqa: BLE001 (a failing case is reported, not hidden)
                lines.append(f"{name}: ERROR {type(e).__name__}: {e}")
            print(lines[-1], flush=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
