"""Reference values of the per-class criteria and EMD kernels (the audit's, Mondrian's), to check that a
refactoring of the criteria core changes no value by a bit.

Random histograms (seeded; some values absent from the reference, some classes empty, random SA hierarchies)
through ``_core.criteria`` (distinct values, entropy, recursive (c, l) ratio, beta-likeness, delta-disclosure)
and ``_core.distance`` (equal / ordered / hierarchical EMD, Hellinger, KL, JS); the outputs' bytes are hashed
per kernel and written as JSON to ``bench_out/``; ``--compare OLD.json`` reports the kernels that differ.

    PYTHONPATH=src python benchmarks/criteria_reference.py --out bench_out/criteria_ref_before.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from anoncore import _core


def random_tree(rng: np.random.Generator, m: int) -> tuple[np.ndarray, np.ndarray]:
    """A random hierarchy over m leaves: parent and node height, leaves 0..m-1, internal nodes in post-order."""
    parent: list[int] = [-1] * m
    height: list[int] = [0] * m
    level = list(range(m))
    while len(level) > 1:
        nxt = []
        i = 0
        while i < len(level):
            k = int(rng.integers(1, 4)) if len(level) > 2 else len(level)
            group = level[i:i + k]
            node = len(parent)
            parent.append(-1)
            height.append(1 + max(height[g] for g in group))
            for g in group:
                parent[g] = node
            nxt.append(node)
            i += k
        level = nxt
    if len(parent) == m:  # one leaf: add a root
        parent[0] = m
        parent.append(-1)
        height.append(1)
    return np.asarray(parent, dtype=np.int32), np.asarray(height, dtype=np.int32)


def cases(n: int) -> dict[str, str]:
    out: dict[str, list[bytes]] = {}
    for seed in range(n):
        rng = np.random.default_rng(seed)
        m = int(rng.integers(1, 12))
        C = int(rng.integers(1, 40))
        ref = rng.integers(0, 50, size=m).astype(np.int64)
        ref[int(rng.integers(0, m))] += 1
        hist = rng.integers(0, 6, size=(C, m)).astype(np.int64) * (rng.random((C, m)) < 0.6)
        hist[:, ref == 0] = 0
        if C > 2:
            hist[1] = 0
        ref = ref + hist.sum(axis=0)
        sizes = hist.sum(axis=1).astype(np.int64)
        cr, ds = _core.criteria, _core.distance
        res = {
            "distinct": cr.distinct_values(hist),
            "entropy": cr.entropy(hist, sizes),
            "beta": cr.beta_likeness(hist, sizes, ref, False),
            "beta_enh": cr.beta_likeness(hist, sizes, ref, True),
            "delta": cr.delta_disclosure(hist, sizes, ref),
            "emd_equal": ds.emd_equal_classes(hist, sizes, ref),
            "emd_ordered": ds.emd_ordered_classes(hist, sizes, ref),
            "hellinger": ds.hellinger_classes(hist, sizes, ref),
            "kl": ds.kl_classes(hist, sizes, ref, 2.0),
            "js": ds.js_classes(hist, sizes, ref, 2.0),
        }
        for lv in (1, 2, 3):
            res[f"recursive_{lv}"] = cr.recursive_cl_ratio(hist, sizes, lv)
        parent, height = random_tree(rng, m)
        res["emd_hier"] = ds.emd_hierarchical_classes(hist, sizes, ref, parent, height, m)
        # ref with absent values for the kernels that allow them
        for k, v in res.items():
            out.setdefault(k, []).append(np.ascontiguousarray(v).tobytes())
    return {k: hashlib.sha256(b"".join(v)).hexdigest()[:16] for k, v in out.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="bench_out/criteria_reference.json")
    ap.add_argument("--compare", default=None)
    ap.add_argument("--cases", type=int, default=400)
    args = ap.parse_args()
    res = cases(args.cases)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(res, indent=1, sort_keys=True))
    if args.compare:
        old = json.loads(Path(args.compare).read_text())
        diff = sorted(k for k in set(old) | set(res) if old.get(k) != res.get(k))
        print(f"{len(res)} kernels, differ: {diff}")
        return 1 if diff else 0
    print(res)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
