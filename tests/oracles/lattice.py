"""Brute-force oracle for full-domain generalization, written straight from the definitions.

Every node of the lattice is materialised by grouping the rows on their generalized values (hierarchy
ancestors), every class is judged by the model definitions (spec generalization-lattice.md §2.5-2.7, §5.2;
ARX-ORACLES.md §6) using exact fractions where the definition is rational, and the objective follows
ARX-ORACLES.md §7. Exponential; for small tables only. Shares no code with the kernel.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from fractions import Fraction
from typing import Any

import numpy as np


def round10(x: float) -> float:
    return math.floor(x * 1e10) / 1e10


def _kind(m: Any) -> str:
    return type(m).__name__


def grassberger_entropy(counts: list[int]) -> float:
    """Grassberger's entropy estimate in nats (arXiv:physics/0307138, eq. 35): ln n − (1/n) Σ f G(f) with
    G(f) = ψ(f) + ½ (−1)^f (ψ((f + 1)/2) − ψ(f/2)), ψ by scipy."""
    from scipy.special import digamma

    n = sum(counts)
    g = [float(digamma(f)) + 0.5 * (-1) ** f * (float(digamma((f + 1) / 2)) - float(digamma(f / 2))) for f in counts]
    return math.log(n) - sum(f * gf for f, gf in zip(counts, g)) / n


def value_rank(table: Any, sa: str, model: Any) -> dict[int, int] | None:
    """An ordered t-closeness model's position of each sensitive code in its stated order (None: the code
    order), from the labels: ``order='string'`` sorts them as Python sorts strings, a tuple lists them."""
    order = getattr(model, "order", None)
    if _kind(model) != "OrderedDistanceTCloseness" or order in (None, "codes"):
        return None
    m = int(table.cardinality(sa))
    labels = {c: str(table.decode(sa, np.array([c], dtype=np.int32))[0]) for c in range(m)}
    seq = sorted(labels.values()) if order == "string" else list(order)
    return {c: seq.index(lab) for c, lab in labels.items()}


def class_violates(model: Any, sa_counts: Counter, ref: Counter, N: int, sa_hier: Any,
                   rank: dict[int, int] | None = None) -> bool:
    """True when a class with sensitive counts ``sa_counts`` violates ``model`` (definitions); ``rank``: the
    ordered EMD's value order (value_rank), code order when None."""
    n = sum(sa_counts.values())
    kind = _kind(model)
    if kind == "KAnonymity":
        return n < model.k
    present = [v for v, c in sa_counts.items() if c > 0]
    if kind == "DistinctLDiversity":
        return len(present) < model.l
    if kind == "EntropyLDiversity":
        if n < math.ceil(model.l) or len(present) < math.ceil(model.l):
            return True
        if getattr(model, "estimator", "shannon") == "grassberger":
            ent = grassberger_entropy([c for c in sa_counts.values() if c > 0])
        else:
            ent = -sum((c / n) * math.log(c / n) for c in sa_counts.values() if c > 0)
        return not ent >= math.log(model.l) - 1e-12
    if kind == "RecursiveCLDiversity":
        if n < model.l or len(present) < model.l:
            return True
        r = sorted((c for c in sa_counts.values() if c > 0), reverse=True)
        return not r[0] < model.c * sum(r[model.l - 1:])
    q = {v: Fraction(sa_counts.get(v, 0), n) for v in ref}
    p = {v: Fraction(ref[v], N) for v in ref}
    if kind == "EqualDistanceTCloseness":
        return Fraction(1, 2) * sum(abs(p[v] - q[v]) for v in ref) > Fraction(model.t)
    if kind == "OrderedDistanceTCloseness":
        vals = sorted((v for v in ref if ref[v] > 0), key=(lambda v: rank[v]) if rank is not None else None)
        if len(vals) <= 1:
            return False
        acc, tot = Fraction(0), Fraction(0)
        for v in vals:
            acc += p[v] - q[v]
            tot += abs(acc)
        return tot / (len(vals) - 1) > Fraction(model.t)
    if kind == "HierarchicalDistanceTCloseness":
        h = sa_hier
        H = int(h.node_height[h.root])
        # EMD with ground distance height(LCA)/H: cost of each internal node N is
        # height(N)/H * min(positive extra, negative extra) of its children (Li et al. 2007)
        extra = {}
        cost = Fraction(0)
        for node in range(h.n_nodes):
            if node < h.n_leaves:
                extra[node] = p.get(node, Fraction(0)) - q.get(node, Fraction(0))
            else:
                ch = [c for c in range(node) if h.parent[c] == node]
                pos = sum((extra[c] for c in ch if extra[c] > 0), Fraction(0))
                neg = sum((-extra[c] for c in ch if extra[c] < 0), Fraction(0))
                cost += Fraction(int(h.node_height[node]), H) * min(pos, neg)
                extra[node] = pos - neg
        return cost > Fraction(model.t)
    if kind == "HellingerTCloseness":
        bc = sum(math.sqrt(float(p[v]) * float(q[v])) for v in ref)
        return math.sqrt(max(0.0, 1.0 - bc)) > model.t
    if kind in ("BasicBetaLikeness", "EnhancedBetaLikeness"):
        for v in present:
            pv, qv = float(p[v]), float(q[v])
            bound = model.beta if kind == "BasicBetaLikeness" else min(model.beta, -math.log(pv))
            if (qv - pv) / pv > bound:
                return True
        return False
    if kind == "DeltaDisclosure":
        ignore_absent = getattr(model, "absent", "violate") == "ignore"  # ARX: only the values in the class
        for v in ref:
            if ref[v] == 0 or (ignore_absent and q[v] == 0):
                continue
            if q[v] == 0 or abs(math.log(float(q[v]) / float(p[v]))) >= model.delta:
                return True
        return False
    raise ValueError(kind)


def node_stats(table: Any, levels: tuple[int, ...], models: list[Any], limit: int) -> dict[str, Any]:
    """Classes, suppression and feasibility of one node."""
    qis = table.quasi_identifiers
    qc = table.qi_codes()
    N = table.n_rows
    hs = [table.hierarchy(q) for q in qis]
    gen = np.stack([hs[j].ancestor[qc[:, j], levels[j]] for j in range(len(qis))], axis=1)
    sa = table.sensitive[0] if table.sensitive else None
    sa_codes = table.column(sa) if sa else None
    sa_hier = table.hierarchy(sa) if sa else None
    ref = Counter(sa_codes.tolist()) if sa else Counter()
    if sa_hier is not None:
        for v in range(sa_hier.n_leaves):
            ref.setdefault(v, 0)
    ranks = [value_rank(table, sa, m) if sa else None for m in models]
    classes: dict[tuple[int, ...], list[int]] = defaultdict(list)
    for i, key in enumerate(map(tuple, gen.tolist())):
        classes[key].append(i)
    out = []
    S = 0
    for key, rows in classes.items():
        cnt = Counter(sa_codes[rows].tolist()) if sa else Counter({0: len(rows)})
        viol = any(class_violates(m, cnt, ref, N, sa_hier, rk) for m, rk in zip(models, ranks)) if sa or all(
            _kind(m) == "KAnonymity" for m in models) else None
        out.append((key, len(rows), bool(viol)))
        if viol:
            S += len(rows)
    return {"classes": out, "suppressed": S, "feasible": S <= limit, "levels": levels}


def metric_value(table: Any, st: dict[str, Any], metric: str, gs: float = 0.5, aggregate: str = "geometric_mean",
                 weights: list[float] | None = None) -> float:
    """ARX-ORACLES.md §7 by definition, on the classes of one node (Loss: its aggregate and attribute weights,
    each divided by the largest, §7.1)."""
    qis = table.quasi_identifiers
    hs = [table.hierarchy(q) for q in qis]
    N = table.n_rows
    lv = st["levels"]
    sF = 2 * gs if gs < 0.5 else 1.0
    gF = 1.0 if gs <= 0.5 else 1.0 - 2 * (gs - 0.5)
    S = st["suppressed"]
    cls = st["classes"]
    if metric == "height":
        return float(sum(lv))
    if metric == "aecs":
        # ARX's AECS (ARX-ORACLES.md §7.5): N over the published classes plus one class for the suppressed
        # rows, ARX weighing them by sF and gF respectively (its swap of the two factors)
        kept = sum(1 for _, _, v in cls if not v)
        den = sF * kept + (gF if S > 0 else 0.0)
        return N / den if den > 0 else math.inf
    if metric in ("kl", "kl_arx", "ambiguity"):
        return _spread_metric(table, st, metric)
    if metric == "dm_star":
        return float(sum(n * n for _, n, _ in cls))
    if metric == "dm":
        return float(sum(n * n for _, n, v in cls if not v) + N * S)
    if metric in ("precision", "precision_nm"):
        xs = []
        for j, h in enumerate(hs):
            g = gF * lv[j] / h.height if h.height else 0.0
            xs.append((( N - S) * g + S * sF) / N if metric == "precision_nm" and S > 0 else g)
        return sum(x / len(xs) for x in xs)
    if metric in ("entropy", "entropy_nm"):
        qc = table.qi_codes()
        total = 0.0
        for j, h in enumerate(hs):
            a = Counter(qc[:, j].tolist())
            b = Counter()
            for v, c in a.items():
                b[int(h.ancestor[v, lv[j]])] += c
            base = sum(c * math.log2(c / b[int(h.ancestor[v, lv[j]])]) for v, c in a.items())
            x = -gF * base
            if metric == "entropy_nm" and S > 0:
                cx = Counter()
                for key, n, v in cls:
                    if v:
                        cx[key[j]] += n
                x = -(gF * base + sF * sum(c * math.log2(c / S) for c in cx.values()))
            total += round10(x)
        return total
    if metric == "loss":
        xs = []
        for j, h in enumerate(hs):
            rows = h.n_leaves
            A = 0.0
            for key, n, v in cls:
                s = n * (int(h.leaf_count[key[j]]) / rows)
                if not v:
                    A += gF * s
                else:
                    A += n if sF == 1.0 else s + sF * (n - s)
            mn = gF * N / rows
            xs.append(round10(max(0.0, (A - mn) / (N - mn))) if N - mn > 0 else 0.0)
        w = [1.0] * len(xs) if weights is None else [x / max(weights) for x in weights]
        D = len(xs)
        if aggregate == "rank":
            raise ValueError("RANK is a vector: use rank_vector")
        if aggregate == "arithmetic_mean":
            return sum((x / D) * wj for x, wj in zip(xs, w))
        if aggregate == "sum":
            return sum(wj * x for x, wj in zip(xs, w))
        if aggregate == "max":
            return max(wj * x for x, wj in zip(xs, w))
        res = 1.0
        for x, wj in zip(xs, w):
            res *= (wj * x + 1.0) ** (1.0 / D)
        return res - 1.0
    raise ValueError(metric)


def rank_vector(table: Any, st: dict[str, Any], gs: float = 0.5, weights: list[float] | None = None
                ) -> tuple[float, ...]:
    """ARX's RANK aggregate of Loss (AggregateFunction RANK): the per-QI losses times the weights (each
    divided by the largest), sorted descending; nodes compare lexicographically on it. The per-QI loss x_j is
    the Loss of QI j alone (metric_value with one quasi-identifier's weight 1, the others 0, aggregate sum)."""
    r = len(table.quasi_identifiers)
    w = [1.0] * r if weights is None else [x / max(weights) for x in weights]
    xs = [metric_value(table, st, "loss", gs, "sum", [1.0 if i == j else 0.0 for i in range(r)]) for j in range(r)]
    return tuple(sorted((wj * x for wj, x in zip(w, xs)), reverse=True))


def rank_not_worse(u: tuple[float, ...], v: tuple[float, ...], tol: float = 1e-9) -> bool:
    """True when vector u is not lexicographically smaller than v by more than ``tol`` in its first differing
    component (so v is a minimum, up to floating-point ties, if this holds for every u)."""
    for a, b in zip(u, v):
        if abs(a - b) > tol:
            return a > b
    return True


def all_nodes(heights: tuple[int, ...]) -> list[tuple[int, ...]]:
    return list(itertools.product(*[range(h + 1) for h in heights]))


def every_node(table: Any, models: list[Any], suppression_limit: float) -> dict[tuple[int, ...], dict[str, Any]]:
    """node_stats of every node of the table's lattice, the limit in rows floor(suppression_limit * n)."""
    heights = tuple(int(table.hierarchy(q).height) for q in table.quasi_identifiers)
    limit = math.floor(suppression_limit * table.n_rows)
    return {lv: node_stats(table, lv, models, limit) for lv in all_nodes(heights)}


def exhaustive(table: Any, models: list[Any], suppression_limit: float, metric: str) -> dict[str, Any]:
    """Evaluate every node; return the optimum value and every node within 1e-9 of it."""
    best = None
    vals = {}
    for lv, st in every_node(table, models, suppression_limit).items():
        if not st["feasible"]:
            continue
        v = metric_value(table, st, metric)
        vals[lv] = v
        if best is None or v < best:
            best = v
    if best is None:
        return {"best": None, "argmin": []}
    tol = 1e-9 * max(1.0, abs(best))
    return {"best": best, "argmin": sorted(lv for lv, v in vals.items() if v <= best + tol), "values": vals}


def support_violates(model: Any, support: set[int], ref: Counter, N: int, sa_hier: Any) -> bool:
    """True when every class whose sensitive values lie in ``support`` violates ``model``, whatever its counts
    (the support part of the monotone part). From the definitions: the least distance from the table's
    distribution P of any distribution Q supported on ``support``, by linear programming for the EMDs
    (transport plan from P onto the support, ground distance of the model) and for β-likeness (is there a Q
    with Q_v <= P_v (1 + bound_v)?), and by numerical maximisation of the Bhattacharyya coefficient for
    Hellinger. Returns None when the least distance is within 1e-7 of t (too close to call in floating point)."""
    from scipy.optimize import linprog, minimize

    kind = _kind(model)
    S = sorted(support)
    if kind in ("KAnonymity",):
        return False
    if kind in ("DistinctLDiversity", "EntropyLDiversity", "RecursiveCLDiversity"):
        return len(S) < math.ceil(model.l)
    vals = [v for v in ref if ref[v] > 0]
    p = {v: ref[v] / N for v in vals}
    if kind == "DeltaDisclosure" and getattr(model, "absent", "violate") != "ignore":
        return not set(vals) <= set(S)
    if kind in ("BasicBetaLikeness", "EnhancedBetaLikeness", "DeltaDisclosure"):
        # a Q on S with Q_v <= cap_v: beta-likeness's bound, or delta-disclosure's p_v e^delta when only the
        # values present in a class are checked (its lower bounds p_v e^-delta sum below 1 on any support)
        caps = []
        for v in S:
            if kind == "DeltaDisclosure":
                caps.append(p[v] * math.exp(model.delta))
                continue
            b = model.beta if kind == "BasicBetaLikeness" else min(model.beta, -math.log(p[v]))
            caps.append(p[v] * (1 + b))
        if abs(sum(min(1.0, c) for c in caps) - 1.0) < 1e-7:
            return None  # type: ignore[return-value]
        lp = linprog(np.zeros(len(S)), A_eq=np.ones((1, len(S))), b_eq=[1.0],
                     bounds=[(0, c) for c in caps], method="highs")
        return lp.status == 2  # infeasible
    if kind == "HellingerTCloseness":
        # maximise sum sqrt(p_v q_v) over the simplex on S
        pv = np.array([p[v] for v in S])
        res = minimize(lambda q: -np.sum(np.sqrt(pv * np.clip(q, 0, None))), np.full(len(S), 1 / len(S)),
                       bounds=[(0, 1)] * len(S), constraints=[{"type": "eq", "fun": lambda q: q.sum() - 1}],
                       method="SLSQP", options={"ftol": 1e-14, "maxiter": 500})
        dist = math.sqrt(max(0.0, 1.0 + float(res.fun)))
        if abs(dist - model.t) < 1e-6:
            return None  # type: ignore[return-value]
        return dist > model.t
    # EMDs: ground distance d(u, s)
    if kind == "EqualDistanceTCloseness":
        def d(u: int, s: int) -> float:
            return 0.0 if u == s else 1.0
    elif kind == "OrderedDistanceTCloseness":
        pos = {v: i for i, v in enumerate(sorted(vals))}
        if len(vals) <= 1:
            return False

        def d(u: int, s: int) -> float:
            return abs(pos[u] - pos[s]) / (len(vals) - 1)
    elif kind == "HierarchicalDistanceTCloseness":
        h = sa_hier
        H = int(h.node_height[h.root])

        def anc(x: int) -> list[int]:
            out = [x]
            while int(h.parent[x]) >= 0:
                x = int(h.parent[x])
                out.append(x)
            return out

        def d(u: int, s: int) -> float:
            au = anc(u)
            lca = next(y for y in anc(s) if y in au)
            return int(h.node_height[lca]) / H
    else:
        raise ValueError(kind)
    U = vals
    cost = np.array([d(u, s) for u in U for s in S])
    A = np.zeros((len(U), len(U) * len(S)))
    for i in range(len(U)):
        A[i, i * len(S):(i + 1) * len(S)] = 1.0
    lp = linprog(cost, A_eq=A, b_eq=[p[u] for u in U], bounds=(0, None), method="highs")
    if abs(lp.fun - model.t) < 1e-7:
        return None  # type: ignore[return-value]
    return bool(lp.fun > model.t)


def _spread_metric(table: Any, st: dict[str, Any], metric: str) -> float:
    """KL divergence (ARX's per-record reading, or over QI tuples) and ARX's ambiguity, from the definitions:
    a published class is spread uniformly over the leaf combinations under its hierarchy nodes (leaf_count),
    the suppressed records over the whole domain (product of the hierarchies' leaf counts)."""
    qis = table.quasi_identifiers
    hs = [table.hierarchy(q) for q in qis]
    N = table.n_rows
    lv = st["levels"]
    S = st["suppressed"]
    dom = math.prod(h.n_leaves for h in hs)
    cls = {key: (n, v) for key, n, v in st["classes"]}

    def area(key: tuple[int, ...]) -> int:
        return math.prod(int(h.leaf_count[node]) for h, node in zip(hs, key))

    if metric == "ambiguity":
        return float(sum(n * (dom if v else area(key)) for key, (n, v) in cls.items()))
    tuples = Counter(map(tuple, table.qi_codes().tolist()))
    total = 0.0
    for t, c in tuples.items():
        key = tuple(int(h.ancestor[t[j], lv[j]]) for j, h in enumerate(hs))
        n, v = cls[key]
        p = c / N
        spread = S / (N * dom)
        if metric == "kl_arx":
            q = spread if v else n / (N * area(key))
            total += c * p * math.log2(p / q)  # one term per record of the tuple (ARX)
        else:
            q = spread if v else n / (N * area(key)) + spread
            total += p * math.log2(p / q)
    return total
