"""SHA-256 of the outputs of CASTLE, SABRE_W and SABRE-KNN on fixed cases: a refactoring check.

Run it on two builds and compare the JSON (equal, bit for bit). ``--ckpt`` checkpoints and restores after every
batch (the result must equal the run without). Cases: small random streams over every CASTLE path (l-diversity,
bounded reuse with range containment, outlier suppression, categorical-only, numeric-only, the singleton k-NN
index on 1 and 2 threads), the power-law stream (100K), UCI Adult (k = 10, 100; the paper flush), the transaction
stream, SABRE_W (ak, knn, tMondrian_W) and SABRE-KNN on ARX's Adult (needs the shared data).
Usage: ``PYTHONPATH=src python benchmarks/stream_hashes.py [--ckpt]``.
"""
# ruff: noqa
import hashlib, json, sys, time
import numpy as np, pandas as pd
from anoncore import Hierarchy, Schema
from anoncore.stream import Castle, SabreW
from anoncore.stream.datasets import power_law_stream, adult_stream_schema, load_uci_adult_stream, transaction_stream, expand_transactions

def h_arrays(arrs):
    m = hashlib.sha256()
    for a in arrs:
        a = np.ascontiguousarray(a)
        m.update(str(a.dtype).encode()); m.update(str(a.shape).encode()); m.update(a.tobytes())
    return m.hexdigest()[:16]

def castle_hash(rels):
    arrs = []
    for r in rels:
        arrs += [r.position, r.mode, r.gen_id, r.emitted_at, r.num_lo, r.num_hi, r.cat_node, r.pid]
        arrs += [r.clusters[c].to_numpy() for c in r.clusters.columns]
    return h_arrays(arrs)

def run_castle(schema, df, batch, ckpt=False, **kw):
    c = Castle(schema, **kw)
    out = []
    for s in range(0, len(df), batch):
        out.append(c.push(df.iloc[s:s + batch]))
        if ckpt:
            c = Castle.restore(c.checkpoint(), n_threads=kw.get("n_threads", 1))
    out.append(c.flush())
    return out

H_A = Hierarchy.from_nested({"*": {"ab": ["a", "b"], "cde": {"C": ["c"], "de": ["d", "e"]}}}, name="A")
H_B = Hierarchy.from_nested({"*": ["x", "y", "z"]}, name="B")
def small(n_num, n_cat, n, persons, seed):
    rng = np.random.default_rng(seed)
    qi = {f"n{j}": {"kind": "numeric", "domain": (0, 20)} for j in range(n_num)}
    hs = [H_A, H_B]
    data = {}
    for j in range(n_num):
        data[f"n{j}"] = rng.integers(0, 21, n).astype(float)
    for j in range(n_cat):
        qi[f"c{j}"] = hs[j % 2]
        data[f"c{j}"] = rng.choice(list(hs[j % 2].leaves), n)
    data["pid"] = rng.integers(0, persons, n)
    data["sa"] = rng.choice(["flu", "hiv", "cold", "ulcer"], n)
    return Schema.build(qi, sensitive="sa", pid="pid"), pd.DataFrame(data)

res = {}
ckpt = "--ckpt" in sys.argv
t0 = time.time()
for (nn, nc, n, persons, seed, kw) in [
    (2, 2, 3000, 100000, 1, dict(k=5, delta=50, eta=6, mu=5)),
    (0, 2, 3000, 100000, 2, dict(k=5, delta=50, eta=6, mu=5)),
    (2, 0, 3000, 100000, 3, dict(k=5, delta=50, eta=6, mu=5)),
    (1, 2, 3000, 300, 4, dict(k=4, delta=80, eta=8, mu=5, l=2)),
    (2, 1, 3000, 200, 5, dict(k=6, delta=200, eta=4, mu=3, max_reuse=3, containment="range")),
    (1, 1, 3000, 100000, 6, dict(k=3, delta=30, eta=5, mu=4, outlier_suppression=True)),
    (0, 2, 6000, 100000, 7, dict(k=40, delta=3000, eta=3, mu=4)),
    (0, 1, 6000, 100000, 8, dict(k=40, delta=3000, eta=3, mu=4, n_threads=2)),
]:
    schema, df = small(nn, nc, n, persons, seed)
    res[f"castle_small_{seed}"] = castle_hash(run_castle(schema, df, 700, ckpt, rng=seed, **kw))
schema, df = power_law_stream(100_000, rng=0)
for nt in (1, 2):
    t = time.time()
    res[f"castle_power100k_t{nt}"] = castle_hash(run_castle(schema, df, 50_000, ckpt, k=100, delta=10_000, eta=50, mu=100, rng=0, n_threads=nt))
    res[f"time_castle_power100k_t{nt}"] = round(time.time() - t, 2)
adult = load_uci_adult_stream("train")
for k in (10, 100):
    res[f"castle_adult_k{k}"] = castle_hash(run_castle(adult_stream_schema(10), adult, 10_000, ckpt, k=k, delta=10_000, eta=50, mu=100, rng=0))
tx = expand_transactions(transaction_stream(10_000, avg_len=5, rng=5), adult, rng=0)
res["castle_tx5"] = castle_hash(run_castle(adult_stream_schema(4), tx, 50_000, ckpt, k=100, delta=10_000, eta=50, mu=100, rng=0))
# paper flush
c = Castle(adult_stream_schema(4), k=50, delta=5000, rng=3); out = [c.push(adult.iloc[:12000])]; out.append(c.flush(mode="paper"))
res["castle_adult_paper"] = castle_hash(out)

# SABRE_W
def sw_hash(rels):
    arrs = []
    for r in rels:
        arrs += [r.position, r.case, r.ec, r.emitted_at, r.window_start, r.num_lo, r.num_hi, r.cat_node, r.il]
        arrs += [r.classes[c].to_numpy().astype(str) for c in r.classes.columns]
    return h_arrays(arrs)
sch = adult_stream_schema(4, sensitive="occupation") if True else None
for method in ("ak", "knn"):
    for base in ("sabre", "tmondrian"):
        if base != "sabre" and method == "knn":
            continue
        s = SabreW(sch, omega=2000, interval=500, t=0.2, k=6, rng=1, method=method, baseline=base)
        out = []
        d = adult.iloc[:8000]
        for st in range(0, len(d), 1500):
            out.append(s.push(d.iloc[st:st + 1500]))
            if ckpt:
                s = SabreW.restore(s.checkpoint())
        out.append(s.flush())
        res[f"sabre_w_{method}_{base}"] = sw_hash(out)
# SABRE-KNN on Adult (ARX)
from anoncore.datasets import load_adult_arx
from anoncore.static.sabre import sabre
tab = load_adult_arx(sensitive="occupation")
for t in (0.15, 0.35):
    r = sabre(tab, t=t, k=6, method="knn", rng=0)
    p = r.partition
    res[f"sabre_knn_adult_t{t}"] = h_arrays([np.asarray(p.labels), np.asarray(p.suppressed)] + [np.asarray(getattr(p, a)) for a in ("gen_lo", "gen_hi", "gen_node") if getattr(p, a, None) is not None])
res["total_s"] = round(time.time() - t0, 1)
print(json.dumps(res, indent=1))
