"""Side-by-side: anoncore's Datafly and optimal lattice search vs anjana's k-anonymity on Adult.

anjana (PyPI, pandas) anonymizes with a Datafly-style heuristic: while the table is not k-anonymous, it
suppresses the classes below k if they fit the suppression limit, else it generalizes one level the
quasi-identifier with the most distinct values (ties: the first). anoncore's ``strategy="datafly"`` is the same
rule on the same ARX hierarchies, so both must reach the same levels and suppress the same rows; the optimal
search is shown for the information it saves.

anjana runs in its own virtual environment (it pins its own pandas and pycanon); give its interpreter with
``--anjana-python`` (default: ``$ANJANA_PYTHON`` or ``/work/anjana-venv/bin/python``). Create it with::

    python -m venv /tmp/anjana-venv && /tmp/anjana-venv/bin/pip install anjana

Adult is read from ``$ANONCORE_SHARED_DATA/adult`` (``adult.csv`` and the ARX hierarchy CSVs), 9
quasi-identifiers, k and the suppression limit from the command line (default k=5, 4 %). Timings are
end-to-end calls, best of ``--repeat``; anjana's output is checked in its own process (smallest class of the
rows it publishes). Prints a table and, with ``--json``, one JSON document.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from anoncore.datasets import load_adult_arx, shared_data_dir
from anoncore.models import KAnonymity
from anoncore.static.lattice import lattice_search

QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation",
       "salary-class"]

DRIVER = r"""
import json, sys, time
import pandas as pd
from anjana.anonymity import k_anonymity_inner
d, qis, k, supp, rep = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
df = pd.read_csv(d + "/adult.csv", sep=";", dtype=str)
hier = {}
for q in qis:
    h = pd.read_csv(d + f"/adult_hierarchy_{q}.csv", sep=";", header=None, dtype=str)
    hier[q] = {i: h[i].values for i in range(h.shape[1])}
best = float("inf")
for _ in range(rep):
    hs = {q: dict(v) for q, v in hier.items()}  # (anjana converts the levels to Series in place)
    t0 = time.perf_counter()
    out, sup, lv = k_anonymity_inner(df, [], qis, k, supp, hs)
    best = min(best, time.perf_counter() - t0)
sizes = out.groupby(qis).size()
print(json.dumps({"seconds": best, "suppressed": int(sup), "levels": [int(lv[q]) for q in qis],
                  "rows": int(len(out)), "min_class": int(sizes.min())}))
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--anjana-python", default=os.environ.get("ANJANA_PYTHON", "/work/anjana-venv/bin/python"))
    ap.add_argument("-k", type=int, default=5)
    ap.add_argument("--suppression", type=float, default=0.04, help="suppression limit, a fraction (default 0.04)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    adult_dir = str(shared_data_dir() / "adult")
    proc = subprocess.run([args.anjana_python, "-c", DRIVER, adult_dir, json.dumps(QIS), str(args.k),
                           str(100 * args.suppression), str(args.repeat)], check=False, capture_output=True,
                          text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        return proc.returncode
    anj = json.loads(proc.stdout.strip().splitlines()[-1])

    table = load_adult_arx()
    assert list(table.quasi_identifiers) == QIS
    ours = {}
    for strategy in ("datafly", "optimal"):
        best = float("inf")
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            res = lattice_search(table, [KAnonymity(args.k)], suppression_limit=args.suppression, metric="loss", strategy=strategy,
                                 n_threads=1)
            best = min(best, time.perf_counter() - t0)
        ours[strategy] = {"seconds": best, "levels": list(res.partition.levels),
                          "suppressed": int(res.achieved["n_suppressed"]), "k": int(res.achieved["k"]),
                          "loss": float(res.metrics["loss"]), "audit_passed": bool(res.achieved["passed"])}
    same = ours["datafly"]["levels"] == anj["levels"] and ours["datafly"]["suppressed"] == anj["suppressed"]
    doc = {"k": args.k, "suppression": args.suppression, "anjana": anj, "anoncore": ours,
           "datafly_same_result": same,
           "speedup_datafly": anj["seconds"] / ours["datafly"]["seconds"],
           "speedup_optimal": anj["seconds"] / ours["optimal"]["seconds"]}
    if args.json:
        print(json.dumps(doc, indent=2))
        return 0 if same else 1
    print(f"Adult, 9 QIs, k={args.k}, suppression limit {args.suppression:.0%}, best of {args.repeat}")
    print(f"{'tool':<28}{'seconds':>10}{'levels':>30}{'suppressed':>12}{'min class':>11}")
    print(f"{'anjana k_anonymity':<28}{anj['seconds']:>10.4f}{anj['levels']!s:>30}{anj['suppressed']:>12}"
          f"{anj['min_class']:>11}")
    for strategy, r in ours.items():
        print(f"{'anoncore ' + strategy:<28}{r['seconds']:>10.4f}{r['levels']!s:>30}{r['suppressed']:>12}"
              f"{r['k']:>11}")
    print(f"Datafly: same levels and suppressed rows as anjana: {same}; "
          f"anoncore is {doc['speedup_datafly']:.0f}x faster (optimal search: {doc['speedup_optimal']:.0f}x, "
          f"Loss {ours['optimal']['loss']:.4f} vs Datafly's {ours['datafly']['loss']:.4f})")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
