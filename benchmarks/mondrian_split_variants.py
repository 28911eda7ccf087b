"""Mondrian baselines with rank-based (default) vs hierarchy-based categorical splits (docs/sabre.md,
"Why the Mondrian baselines win here"). Every output is audited; AIL (Cao's GLM) and NCP
(the common categorical form) per run, with the per-attribute AIL; writes bench_out/sabre/mondrian_split_variants.csv.

    python benchmarks/mondrian_split_variants.py [--n 100000]
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

from anoncore.models import EnhancedBetaLikeness, KAnonymity
from anoncore.static.burel import likeness_model
from anoncore.static.sabre import closeness_model

sys.path.insert(0, str(Path(__file__).resolve().parent))

from burel_experiments import QI_ORDER, with_qis  # noqa: E402
from sabre_experiments import census_income, numeric_boxes, synthetic  # noqa: E402

from anoncore.metrics import ail, ncp  # noqa: E402
from anoncore.static import burel, dmondrian, lmondrian, sabre, tmondrian  # noqa: E402


def per_attribute(tab, res):  # noqa: ANN001, ANN201
    qs = tab.quasi_identifiers
    return {q: ail(tab, res.partition, {p: (1.0 if p == q else 0.0) for p in qs}) for q in qs}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--csv", default="mondrian_split_variants.csv")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "bench_out" / "sabre"))
    args = ap.parse_args()
    rows = []
    for data in ("synthetic", "census-income"):
        full = synthetic(args.n) if data == "synthetic" else census_income(args.n)
        tab7 = numeric_boxes(full)
        runs = []
        for split in ("rank", "hierarchy"):
            runs.append(("t=0.35,k=6,7 QI", f"tMondrian[{split}]", tab7,
                         lambda t, s=split: tmondrian(t, [KAnonymity(6), closeness_model(t, 0.35)], categorical_split=s)))
            runs.append(("t=1,k=6,7 QI (k only)", f"tMondrian[{split}]", tab7,
                         lambda t, s=split: tmondrian(t, [KAnonymity(6), closeness_model(t, 1.0)], categorical_split=s)))
            # numeric QIs keep their hierarchies (the tIncognito tables): classes published through them, not MBBs
            runs.append(("t=0.35,k=6,7 QI, numeric via hierarchy", f"tMondrian[{split}]", full,
                         lambda t, s=split: tmondrian(t, [KAnonymity(6), closeness_model(t, 0.35)], categorical_split=s)))
        runs.append(("t=0.35,k=6,7 QI", "SABRE-KNN", tab7, lambda t: sabre(t, [KAnonymity(6), closeness_model(t, 0.35)], method="knn", rng=0)))
        runs.append(("t=0.35,k=6,7 QI", "SABRE-AK", tab7, lambda t: sabre(t, [KAnonymity(6), closeness_model(t, 0.35)], method="ak", rng=0)))
        for q in (3, 5):
            tq = with_qis(full, QI_ORDER[data][:q])
            for split in ("rank", "hierarchy"):
                runs.append((f"beta=4,{q} QI", f"LMondrian[{split}]", tq,
                             lambda t, s=split: lmondrian(t, likeness_model(beta=4.0), categorical_split=s)))
                runs.append((f"beta=4,{q} QI", f"DMondrian[{split}]", tq,
                             lambda t, s=split: dmondrian(t, EnhancedBetaLikeness(4.0), categorical_split=s)))
            runs.append((f"beta=4,{q} QI", "BUREL", tq, lambda t: burel(t, likeness_model(beta=4.0), rng=0)))
        for setting, name, tab, fn in runs:
            t0 = time.perf_counter()
            res = fn(tab)
            sec = time.perf_counter() - t0
            assert res.achieved["passed"], (data, setting, name)
            pa = per_attribute(tab, res)
            row = {"data": data, "setting": setting, "method": name, "ail": round(res.metrics["ail"], 4),
                   "ncp": round(ncp(tab, res.partition), 4),
                   "classes": res.partition.n_classes, "seconds": round(sec, 2),
                   "per_attribute": " ".join(f"{k}={v:.3f}" for k, v in pa.items())}
            print(row, flush=True)
            rows.append(row)
    out = Path(args.out) / args.csv
    with out.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
