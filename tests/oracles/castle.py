"""Independent checker of a CASTLE output stream, written from the definitions (spec §1.2-1.9, §2.12, §8).

It uses only the input tuples and the released events (the audit channel), never the algorithm's state:

- exactly once: every input position is released or suppressed once;
- delay (Def. 5.2): a tuple leaves no later than the first arrival at position >= p + delta (flush only for
  tuples not yet due);
- truthfulness: each released value lies in its published interval / hierarchy subtree;
- k_s-anonymity (Def. 5.1): grouping ALL released tuples of the run by published QI vector, each group has
  >= k distinct pids; every released cluster too; with l, >= l distinct SA values;
- minimality: each released cluster's generalization is the minimal cover of its tuples (numeric min/max,
  categorical LCA found by brute force), and its reported IL recomputed from scratch;
- tau: the threshold after each release is the mean IL of the last mu releases; a cluster joins the reuse set
  iff IL < tau (strict);
- reuse legitimacy: a reused generalization belongs to an earlier cluster that joined the reuse set and, with a
  bounded set, was not evicted (FIFO); the tuple lies inside it;
- suppression discipline: with delta + 1 < k everything is suppressed.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

SUPPRESSED = 4
REUSE = 3


def _ancestors(parent: Any, leaf: int) -> list[int]:
    out = [leaf]
    while parent[out[-1]] >= 0:
        out.append(int(parent[out[-1]]))
    return out


def _leaves_under(parent: Any, n_leaves: int, node: int) -> set[int]:
    return {v for v in range(n_leaves) if node in _ancestors(parent, v)}


def brute_lca(parent: Any, leaves: list[int]) -> int:
    """Deepest common ancestor of a set of leaves, from parent pointers only."""
    common = None
    for v in leaves:
        anc = _ancestors(parent, v)
        common = anc if common is None else [a for a in common if a in set(anc)]
    assert common
    return common[0]


def il_by_definition(lo: list[float], hi: list[float], dom: list[tuple[float, float]], nodes: list[int],
                     hier: list[Any]) -> float:
    """GLM IL of a generalization (§1.8): numeric (u-l)/(U-L); categorical 0 or |Leaves(g)|/|Leaves(H)|."""
    terms = []
    for a, b, (L, U) in zip(lo, hi, dom):
        terms.append(0.0 if U == L else (b - a) / (U - L))
    for node, h in zip(nodes, hier):
        cnt = len(_leaves_under(h.parent, h.n_leaves, node))
        terms.append(0.0 if cnt == 1 else cnt / h.n_leaves)
    return sum(terms) / len(terms)


def check_castle(
    inputs: dict[str, Any],
    releases: list[Any],
    *,
    k: int,
    delta: int,
    mu: int,
    l: int | None = None,
    max_reuse: int | None = None,
    domains: list[tuple[float, float]] = (),  # type: ignore[assignment]
    hierarchies: list[Any] = (),  # type: ignore[assignment]
    initial_tau: float = 0.0,
) -> dict[str, Any]:
    """Raise AssertionError on the first violated property; return a few statistics.

    ``inputs``: ``position`` (n,), ``pid`` (n,), ``num`` (n, dn), ``cat`` (n, dc), optional ``sa`` (n,).
    ``releases``: the CastleRelease objects of the run, in order.
    """
    pos_in = np.asarray(inputs["position"], dtype=np.int64)
    n = pos_in.size
    row_of = {int(p): i for i, p in enumerate(pos_in)}
    pid_in = np.asarray(inputs["pid"])
    num_in = np.asarray(inputs["num"], dtype=float).reshape(n, -1)
    cat_in = np.asarray(inputs["cat"], dtype=np.int64).reshape(n, -1)
    sa_in = inputs.get("sa")

    pos = np.concatenate([r.position for r in releases]) if releases else np.empty(0, np.int64)
    mode = np.concatenate([r.mode for r in releases]) if releases else np.empty(0, np.int8)
    gen = np.concatenate([r.gen_id for r in releases]) if releases else np.empty(0, np.int64)
    at = np.concatenate([r.emitted_at for r in releases]) if releases else np.empty(0, np.int64)
    lo = np.concatenate([r.num_lo for r in releases]) if releases else np.empty((0, num_in.shape[1]))
    hi = np.concatenate([r.num_hi for r in releases]) if releases else np.empty((0, num_in.shape[1]))
    node = np.concatenate([r.cat_node for r in releases]) if releases else np.empty((0, cat_in.shape[1]))
    clusters = [r.clusters for r in releases]

    # 1. exactly once
    assert sorted(pos.tolist()) == sorted(pos_in.tolist()), "a tuple is lost or released twice"
    rows = np.array([row_of[int(p)] for p in pos], dtype=np.int64)
    # the released pid is the input pid (audit channel consistency)
    released_pid = np.concatenate([r.pid for r in releases]) if releases else np.empty(0, np.int64)
    if np.issubdtype(pid_in.dtype, np.integer):
        assert np.array_equal(released_pid, pid_in[rows]), "pid of a released tuple differs from its input"
    pid_key = pid_in[rows]

    # 2. delay
    arrivals = np.sort(pos_in)
    for p, a in zip(pos.tolist(), at.tolist()):
        j = np.searchsorted(arrivals, p + delta, side="left")
        due = int(arrivals[j]) if j < arrivals.size else None
        if a == -1:
            assert due is None, f"tuple at {p} was due at arrival {due} but left only at flush"
        else:
            assert p <= a, f"tuple at {p} released before it arrived ({a})"
            assert due is None or a <= due, f"tuple at {p} left at {a}, after its deadline {due}"

    rel = mode != SUPPRESSED
    # 3. truthfulness
    for i in np.flatnonzero(rel):
        r = rows[i]
        for j in range(num_in.shape[1]):
            assert lo[i, j] <= num_in[r, j] <= hi[i, j], f"value {num_in[r, j]} outside [{lo[i, j]}, {hi[i, j]}]"
        for j in range(cat_in.shape[1]):
            h = hierarchies[j]
            assert int(node[i, j]) in _ancestors(h.parent, int(cat_in[r, j])), "leaf outside its published node"

    # 4. k_s-anonymity over the whole output, grouped by published QI vector; l-diversity
    groups: dict[tuple[Any, ...], list[int]] = defaultdict(list)
    for i in np.flatnonzero(rel):
        key = tuple(lo[i].tolist()) + tuple(hi[i].tolist()) + tuple(int(x) for x in node[i])
        groups[key].append(i)
    for key, members in groups.items():
        persons = {pid_key[i] for i in members}
        assert len(persons) >= k, f"published class {key} has {len(persons)} < k = {k} persons"
        if l is not None:
            vals = {sa_in[rows[i]] for i in members}
            assert len(vals) >= l, f"published class {key} has {len(vals)} < l = {l} sensitive values"

    # 5. per released cluster: >= k persons, minimal cover, IL, tau, reuse set
    by_gen: dict[int, list[int]] = defaultdict(list)
    for i in np.flatnonzero(rel & (mode != REUSE)):
        by_gen[int(gen[i])].append(i)
    info = [c for c in clusters if len(c)]
    table = {int(g): row for c in info for g, row in zip(c["gen_id"], c.itertuples(index=False))}
    assert set(table) == set(by_gen), "released clusters and cluster table disagree"
    recent: list[float] = []
    omega: list[int] = []
    first_seen: dict[int, int] = {}
    for i in range(pos.size):
        first_seen.setdefault(int(gen[i]), i)
    order = sorted(by_gen, key=lambda g: first_seen[g])
    tau_after: dict[int, float] = {}
    kept: set[int] = set()
    # interleave cluster releases and reuse events in output order
    events = sorted([(first_seen[g], "c", g) for g in order] + [(int(i), "r", int(gen[i]))
                                                               for i in np.flatnonzero(mode == REUSE)])
    for _, kind, g in events:
        if kind == "r":
            assert g in omega, f"reuse of generalization {g}, which is not in the reuse set"
            continue
        members = by_gen[g]
        persons = {pid_key[i] for i in members}
        assert len(persons) >= k, f"cluster {g} released with {len(persons)} < k persons"
        r = rows[members]
        exp_lo = num_in[r].min(axis=0) if num_in.shape[1] else np.empty(0)
        exp_hi = num_in[r].max(axis=0) if num_in.shape[1] else np.empty(0)
        i0 = members[0]
        assert np.array_equal(lo[i0], exp_lo) and np.array_equal(hi[i0], exp_hi), f"cluster {g} not minimal"
        exp_node = [brute_lca(hierarchies[j].parent, sorted(set(cat_in[r, j].tolist())))
                    for j in range(cat_in.shape[1])]
        assert [int(x) for x in node[i0]] == exp_node, f"cluster {g}: generalization is not the LCA"
        for i in members:
            assert np.array_equal(lo[i], lo[i0]) and np.array_equal(node[i], node[i0])
        il = il_by_definition(exp_lo.tolist(), exp_hi.tolist(), list(domains), exp_node, list(hierarchies))
        row = table[g]
        np.testing.assert_allclose(row.il, il, rtol=1e-12, atol=1e-15)
        assert row.n_persons == len(persons) and row.n_tuples == len(members)
        recent.append(il)
        recent = recent[-mu:]
        tau = sum(recent) / len(recent)
        np.testing.assert_allclose(row.tau, tau, rtol=1e-12, atol=1e-15)
        tau_after[g] = tau
        should_keep = il < tau and max_reuse != 0
        # a strict comparison on floats: accept either answer only when il and tau coincide to 1e-12
        if abs(il - tau) > 1e-12:
            assert bool(row.kept) == should_keep, f"cluster {g}: kept={row.kept}, expected {should_keep}"
        if row.kept:
            kept.add(g)
            omega.append(g)
            if max_reuse is not None and len(omega) > max_reuse:
                omega.pop(0)

    # reuse: generalization equals the earlier cluster's, tuple inside it
    gen_box = {g: (lo[by_gen[g][0]], hi[by_gen[g][0]], node[by_gen[g][0]]) for g in by_gen}
    for i in np.flatnonzero(mode == REUSE):
        g = int(gen[i])
        assert g in kept
        glo, ghi, gnode = gen_box[g]
        assert np.array_equal(lo[i], glo) and np.array_equal(hi[i], ghi) and np.array_equal(node[i], gnode)

    # 6. suppression discipline
    if delta + 1 < k:
        assert not rel.any(), "delta + 1 < k but a tuple was released"
    return {"n_released": int(rel.sum()), "n_suppressed": int((~rel).sum()), "n_clusters": len(by_gen),
            "n_reuse": int((mode == REUSE).sum())}


# ---------------------------------------------------------------------------------------------------------------
# A slow, literal Python reference of the spec's §2 pseudo-code (k-mode), for the differential test of §8 check 13.
# It follows the same documented resolutions (docs/castle.md) and draws its random choices from the same seeded
# stream as the kernel (std::mt19937_64 seeded per random event with splitmix64, Lemire's bounded integers), so
# outputs must match exactly. Written from the spec, not from the C++.

_M64 = (1 << 64) - 1


class _MT19937_64:
    def __init__(self, seed: int) -> None:
        self.mt = [0] * 312
        self.mt[0] = seed & _M64
        for i in range(1, 312):
            self.mt[i] = (6364136223846793005 * (self.mt[i - 1] ^ (self.mt[i - 1] >> 62)) + i) & _M64
        self.i = 312

    def next(self) -> int:
        if self.i >= 312:
            mt = self.mt
            for j in range(312):
                x = (mt[j] & 0xFFFFFFFF80000000) | (mt[(j + 1) % 312] & 0x7FFFFFFF)
                xa = x >> 1
                if x & 1:
                    xa ^= 0xB5026F5AA96619E9
                mt[j] = mt[(j + 156) % 312] ^ xa
            self.i = 0
        y = self.mt[self.i]
        self.i += 1
        y ^= (y >> 29) & 0x5555555555555555
        y ^= (y << 17) & 0x71D67FFFEDA60000
        y ^= (y << 37) & 0xFFF7EEE000000000
        y ^= y >> 43
        return y & _M64


def _splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


class _Rng:
    """anoncore::Rng::for_chunk(seed, chunk) and its below()."""

    def __init__(self, seed: int, chunk: int) -> None:
        self.e = _MT19937_64(_splitmix64(seed ^ _splitmix64((chunk + 0x9E3779B97F4A7C15) & _M64)))

    def below(self, bound: int) -> int:
        if bound <= 1:
            return 0
        threshold = ((1 << 64) - bound) % bound
        while True:
            m = self.e.next() * bound
            if (m & _M64) >= threshold:
                return m >> 64


def reference_castle(num: Any, cat: Any, pid: Any, *, k: int, delta: int, eta: int, mu: int, seed: int,
                     domains: list[tuple[float, float]], hierarchies: list[Any], max_reuse: int | None = None,
                     batches: list[int] = ()) -> tuple[dict[int, tuple[Any, ...]], list[tuple[float, float, bool]]]:
    """Run CASTLE literally on positions 1..n, flush at the end. Returns
    {position: (emitted_at, gen_id, mode, lo, hi, nodes)} and the per-cluster (il, tau, kept) list."""
    n = len(pid)
    dn, dc = len(domains), len(hierarchies)
    inv_d = 1.0 / (dn + dc)
    inv_r = [(1.0 / (U - L)) if U - L > 0 else 0.0 for L, U in domains]

    def lca(j: int, lo: int, hi: int) -> int:
        h = hierarchies[j]
        node = lo
        while h.leaf_start[node] + h.leaf_count[node] - 1 < hi:
            node = int(h.parent[node])
        return node

    def cterm(j: int, lo: int, hi: int) -> float:
        if lo == hi:
            return 0.0
        cnt = int(hierarchies[j].leaf_count[lca(j, lo, hi)])
        return 0.0 if cnt <= 1 else cnt / hierarchies[j].n_leaves

    def il_box(b: Any) -> float:
        nlo, nhi, clo, chi = b
        s = 0.0
        for j in range(dn):
            s += (nhi[j] - nlo[j]) * inv_r[j]
        for j in range(dc):
            s += cterm(j, clo[j], chi[j])
        return s * inv_d

    def box_of(ts: list[int]) -> Any:
        return ([min(num[t][j] for t in ts) for j in range(dn)], [max(num[t][j] for t in ts) for j in range(dn)],
                [min(cat[t][j] for t in ts) for j in range(dc)], [max(cat[t][j] for t in ts) for j in range(dc)])

    def approx(a: float, b: float) -> bool:
        return abs(a - b) <= 1e-12 * max(1.0, abs(b))

    clusters: list[dict[str, Any]] = []  # Gamma, creation order
    omega: list[tuple[int, Any, Any]] = []  # (gen, box, nodes)
    ring: list[float] = []
    head = 0
    tau = 0.0
    counter = 0
    gen_next = 0
    out: dict[int, tuple[Any, ...]] = {}
    ctable: list[tuple[float, float, bool]] = []
    pending: list[int] = []
    where: dict[int, dict[str, Any]] = {}

    def size(c: dict[str, Any]) -> int:
        return len({pid[t] for t in c["m"]})

    def emit_group(ts: list[int], mode: int, at: int) -> None:
        nonlocal gen_next, head, tau
        b = box_of(ts)
        nodes = [lca(j, b[2][j], b[3][j]) for j in range(dc)]
        il = il_box(b)
        g = gen_next
        gen_next += 1
        for t in ts:
            out[t + 1] = (at, g, mode, tuple(b[0]), tuple(b[1]), tuple(nodes))
            pending.remove(t)
            where.pop(t, None)
        if len(ring) < mu:
            ring.append(il)
        else:
            ring[head] = il
            head = (head + 1) % mu
        s = 0.0
        for x in ring:
            s += x
        tau = s / len(ring)
        kept = il < tau and max_reuse != 0
        if kept:
            h = hierarchies
            cont = ([h[j].leaf_start[nodes[j]] for j in range(dc)],
                    [h[j].leaf_start[nodes[j]] + h[j].leaf_count[nodes[j]] - 1 for j in range(dc)])
            omega.append((g, b, cont))
            if max_reuse is not None and max_reuse > 0 and len(omega) > max_reuse:
                omega.pop(0)
        ctable.append((il, tau, kept))

    def dist(a: int, b: int) -> float:
        s = 0.0
        for j in range(dn):
            s += abs(num[a][j] - num[b][j]) * inv_r[j]
        for j in range(dc):
            s += cterm(j, min(cat[a][j], cat[b][j]), max(cat[a][j], cat[b][j]))
        return s * inv_d

    def split_k(members: list[int], rng: _Rng) -> list[list[int]]:
        order = sorted(members, key=lambda t: (pid[t], t))
        buckets: list[list[int]] = []
        for i, t in enumerate(order):
            if i == 0 or pid[t] != pid[order[i - 1]]:
                buckets.append([])
            buckets[-1].append(t)
        phi = list(range(len(buckets)))
        subs: list[list[int]] = []
        while len(phi) >= k:
            bi = phi[rng.below(len(phi))]
            x = buckets[bi].pop(rng.below(len(buckets[bi])))
            new = [x]
            cands = []
            for r, b in enumerate(phi):
                if b == bi or k == 1:
                    continue
                best = min(buckets[b], key=lambda t: (dist(t, x), buckets[b].index(t)))
                cands.append((dist(best, x), r, b, best))
            cands.sort(key=lambda c: (c[0], c[1]))
            for _, _, b, t in cands[:k - 1]:
                new.append(t)
                buckets[b].remove(t)
            subs.append(new)
            phi = [b for b in phi if buckets[b]]
        if not subs:
            return [members]
        for b in phi:
            xt = buckets[b][0]
            best_s, best_e = 0, 0.0
            for si, sub in enumerate(subs):
                bx = box_of(sub)
                s0 = s1 = 0.0
                for j in range(dn):
                    s0 += (bx[1][j] - bx[0][j]) * inv_r[j]
                    s1 += (max(bx[1][j], num[xt][j]) - min(bx[0][j], num[xt][j])) * inv_r[j]
                for j in range(dc):
                    s0 += cterm(j, bx[2][j], bx[3][j])
                    s1 += cterm(j, min(bx[2][j], cat[xt][j]), max(bx[3][j], cat[xt][j]))
                e = (s1 - s0) * inv_d
                if si == 0 or (e < best_e and not approx(e, best_e)):
                    best_s, best_e = si, e
            subs[best_s].extend(buckets[b])
        return subs

    def output_cluster(c: dict[str, Any], mode: int, at: int) -> None:
        nonlocal counter
        clusters.remove(c)
        rng = _Rng(seed, counter)
        counter += 1
        if size(c) >= 2 * k:
            subs = split_k(list(c["m"]), rng)
            m = 1 if len(subs) > 1 else mode
            for s in subs:
                emit_group(s, m, at)
        else:
            emit_group(list(c["m"]), mode, at)

    def remove(t: int) -> None:
        c = where.pop(t)
        c["m"].remove(t)
        if not c["m"]:
            clusters.remove(c)

    def delay_constraint(t: int, at: int) -> None:
        nonlocal counter
        c = where[t]
        if size(c) >= k:
            output_cluster(c, 0, at)
            return
        found = [e for e in omega if all(e[1][0][j] <= num[t][j] <= e[1][1][j] for j in range(dn))
                 and all(e[2][0][j] <= cat[t][j] <= e[2][1][j] for j in range(dc))]
        if found:
            if len(found) > 1:
                ch = found[_Rng(seed, counter).below(len(found))]
                counter += 1
            else:
                ch = found[0]
            g, b, _ = ch
            nodes = [lca(j, b[2][j], b[3][j]) for j in range(dc)]
            out[t + 1] = (at, g, 3, tuple(b[0]), tuple(b[1]), tuple(nodes))
            remove(t)
            pending.remove(t)
            return
        if len({pid[u] for cc in clusters for u in cc["m"]}) < k:
            out[t + 1] = (at, -1, 4, None, None, None)
            remove(t)
            pending.remove(t)
            return
        while size(c) < k:
            base = il_box(box_of(c["m"]))
            best, best_e, best_size = None, 0.0, 0
            for o in clusters:
                if o is c:
                    continue
                e = il_box(box_of(c["m"] + o["m"])) - base
                s = size(o)
                if best is None or (e < best_e and not approx(e, best_e)) or (approx(e, best_e) and s < best_size):
                    best, best_e, best_size = o, e, s
            if best is None:
                out[t + 1] = (at, -1, 4, None, None, None)
                remove(t)
                pending.remove(t)
                return
            for u in best["m"]:
                where[u] = c
            c["m"].extend(best["m"])
            clusters.remove(best)
        output_cluster(c, 2, at)

    for t in range(n):
        p = t + 1
        pending.append(t)
        em, cand = None, []
        for c in clusters:
            b = box_of(c["m"])
            il_c = il_box(b)
            s = 0.0
            for j in range(dn):
                s += (max(b[1][j], num[t][j]) - min(b[0][j], num[t][j])) * inv_r[j]
            for j in range(dc):
                s += cterm(j, min(b[2][j], cat[t][j]), max(b[3][j], cat[t][j]))
            nil = s * inv_d
            e = nil - il_c
            if not cand or (e < em and not approx(e, em)):
                em, cand = e, [(c, nil)]
            elif approx(e, em):
                cand.append((c, nil))

        def pick(tau_only: bool, cand: list[Any] = cand) -> Any:
            best = None
            for c, nil in cand:
                if tau_only and not (nil <= tau or approx(nil, tau)):
                    continue
                if best is None or size(c) < size(best):
                    best = c
            return best

        chosen = pick(True)
        if chosen is None and len(clusters) >= eta and cand:
            chosen = pick(False)
        if chosen is None:
            chosen = {"m": []}
            clusters.append(chosen)
        chosen["m"].append(t)
        where[t] = chosen
        for u in list(pending):  # noqa: PERF101 - pending shrinks while we iterate
            if u + 1 <= p - delta and u in pending:
                delay_constraint(u, p)
    for u in list(pending):  # noqa: PERF101 - pending shrinks while we iterate
        if u in pending:
            delay_constraint(u, -1)
    return out, ctable
