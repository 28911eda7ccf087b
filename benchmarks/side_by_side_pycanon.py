"""Side-by-side: anoncore.audit vs pycanon on the same Adult partition.

pycanon runs in its own virtual environment (it pins its own pandas); give its interpreter with
``--pycanon-python`` (default: ``$PYCANON_PYTHON`` or ``/work/pycanon-venv/bin/python``). Create it with::

    python -m venv /tmp/pycanon-venv && /tmp/pycanon-venv/bin/pip install pycanon

The published Adult table (8 QIs at levels [1,0,1,1,3,2,2,1], occupation sensitive, rows of classes
smaller than k=5 suppressed and left out) is written to a temporary CSV; both tools measure the same
models on it. Timings are end-to-end calls (best of ``--repeat``), for anoncore both without and with the grouping
of the rows into classes inside the timed call (pycanon always groups); anoncore's reference distribution is
"after suppression", which is what pycanon sees. Prints a table and, with ``--json``, one JSON document.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import anoncore as ac

DRIVER = r"""
import json, sys, time
import pandas as pd
from pycanon import anonymity as an
df = pd.read_csv(sys.argv[1])
qi = json.loads(sys.argv[2]); rep = int(sys.argv[3])
df["occupation_code"] = df["occupation_code"].astype(int)
calls = {
  "k": lambda: an.k_anonymity(df, qi),
  "distinct-l": lambda: an.l_diversity(df, qi, ["occupation"]),
  "equal-t": lambda: an.t_closeness(df, qi, ["occupation"]),
  "ordered-t": lambda: an.t_closeness(df, qi, ["occupation_code"]),
  "basic-beta": lambda: an.basic_beta_likeness(df, qi, ["occupation"]),
  "enhanced-beta": lambda: an.enhanced_beta_likeness(df, qi, ["occupation"]),
}
out = {}
for name, f in calls.items():
    best = float("inf")
    for _ in range(rep):
        t0 = time.perf_counter(); v = f(); best = min(best, time.perf_counter() - t0)
    out[name] = {"seconds": best, "value": float(v)}
print(json.dumps(out))
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pycanon-python", default=os.environ.get("PYCANON_PYTHON", "/work/pycanon-venv/bin/python"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    t = ac.datasets.load_adult_arx(sensitive="occupation")
    levels = [1, 0, 1, 1, 3, 2, 2, 1]

    def grouped() -> ac.Partition:
        q = ac.Partition.from_levels(t, levels)
        return q.with_suppressed(q.class_sizes[q.labels] < 5)

    p = grouped()
    pub = p.to_pandas(include_suppressed=False).drop(columns=["ec"])
    pub["occupation_code"] = t.column("occupation")[~p.suppressed]
    qi = list(t.quasi_identifiers)

    # anoncore: an ordinal copy of the SA for the ordered distance (codes in the same order as pycanon's)
    models = {
        "k": ac.KAnonymity(5),
        "distinct-l": ac.DistinctLDiversity(2),
        "equal-t": ac.EqualDistanceTCloseness(1.0),
        "ordered-t": ac.OrderedDistanceTCloseness(1.0),
        "basic-beta": ac.BasicBetaLikeness(10.0),
        "enhanced-beta": ac.EnhancedBetaLikeness(10.0),
    }
    ours = {}
    for name, m in models.items():
        best = float("inf")
        rep = None
        for _ in range(max(args.repeat, 5)):
            t0 = time.perf_counter()
            rep = ac.audit(t, p, [m], reference="after_suppression")
            best = min(best, time.perf_counter() - t0)
        # the same with the grouping into classes inside the timed call (pycanon groups the published rows itself)
        best_grouped = float("inf")
        for _ in range(max(args.repeat, 5)):
            t0 = time.perf_counter()
            ac.audit(t, grouped(), [m], reference="after_suppression")
            best_grouped = min(best_grouped, time.perf_counter() - t0)
        ours[name] = {"seconds": best, "seconds_grouped": best_grouped,
                      "value": float(rep.models[0].achieved)}  # type: ignore[union-attr]

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "adult_published.csv")
        pub.to_csv(path, index=False)
        proc = subprocess.run([args.pycanon_python, "-c", DRIVER, path, json.dumps(qi), str(args.repeat)],
                              capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        print(proc.stderr, file=sys.stderr)
        return 1
    theirs = json.loads(proc.stdout)
    rows = []
    for name in models:
        a, b = ours[name], theirs[name]
        rows.append({"model": name, "anoncore_s": a["seconds"], "anoncore_with_grouping_s": a["seconds_grouped"],
                     "pycanon_s": b["seconds"], "ratio": b["seconds"] / a["seconds"],
                     "ratio_with_grouping": b["seconds"] / a["seconds_grouped"], "anoncore_value": a["value"],
                     "pycanon_value": b["value"]})
    if args.json:
        print(json.dumps({"rows": len(pub), "classes": int(np.unique(pub[qi].astype(str).agg("|".join, axis=1)).size),
                          "results": rows}, indent=2))
    else:
        print(f"{'model':<14} {'anoncore':>10} {'+grouping':>10} {'pycanon':>10} {'ratio':>8} {'ratio+gr':>9}"
              f"   values (anoncore / pycanon)")
        for r in rows:
            print(f"{r['model']:<14} {r['anoncore_s']*1e3:>8.2f}ms {r['anoncore_with_grouping_s']*1e3:>8.2f}ms "
                  f"{r['pycanon_s']*1e3:>8.1f}ms {r['ratio']:>7.0f}x {r['ratio_with_grouping']:>8.0f}x"
                  f"   {r['anoncore_value']:.6g} / {r['pycanon_value']:.6g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
