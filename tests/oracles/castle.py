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
