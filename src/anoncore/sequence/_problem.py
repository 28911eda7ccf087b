"""Per-user problem state: counts, sufficient statistics, Ĩ and UL evaluation (spec §1.4, §1.5, §2.1)."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from anoncore import _core
from anoncore.sequence._taxonomy import Tax

__all__ = ["UserProblem", "mi_tolerance"]

IntArray = npt.NDArray[np.int32]


def mi_tolerance(eps: float) -> float:
    """Ĩ ≤ ε is tested as Ĩ ≤ ε + 1e-12·max(1, ε) (spec §5 H7)."""
    return eps + 1e-12 * max(1.0, eps)


class UserProblem:
    """Everything the algorithms need for one user: S, 𝒫 (deduplicated leaf patterns), f_S(p), N, unigrams.

    f_Ŝ(p̂) is evaluated from the dense pair table when m = 2 (independent of n) and by the C++ DP otherwise,
    memoised by the tuple of leaf sets h⁻¹(p̂_k).
    """

    def __init__(
        self,
        seq: IntArray,
        patterns: IntArray,
        tax: Tax,
        w: int,
        cost: npt.NDArray[np.float64],
        log_base: float = 2.0,
        pair: npt.NDArray[np.int64] | None = None,
        unigram: npt.NDArray[np.int64] | None = None,
        use_table: bool = True,
    ) -> None:
        self.seq = np.ascontiguousarray(seq, dtype=np.int32)
        self.patterns = np.ascontiguousarray(patterns, dtype=np.int32)
        self.tax = tax
        self.w = int(w)
        self.m = int(patterns.shape[1])
        self.cost = cost
        self.log_base = float(log_base)
        self._ln_base = math.log(self.log_base)
        n = int(self.seq.shape[0])
        self.n = n
        self.N = int(_core.sequence.total_embeddings(n, self.w, self.m))
        self._offsets = np.array([0, n], dtype=np.int64)
        self.unigram = (
            unigram if unigram is not None else np.bincount(self.seq, minlength=tax.n_leaves).astype(np.int64)
        )
        self.occurring = np.flatnonzero(self.unigram > 0).astype(np.int32)
        self._cost_occ = cost[self.occurring]  # (n_occ, n_nodes)
        self._f_occ_list = [float(x) for x in self.unigram[self.occurring].tolist()]
        self._cost_occ_list = self._cost_occ.tolist()
        self.pair = pair if use_table else None
        if self.m == 2 and use_table and self.pair is None:
            self.pair = np.asarray(
                _core.sequence.pair_table(self._offsets, self.seq, tax.n_leaves, self.w, 1)
            )[0]
        ident = np.arange(tax.n_leaves, dtype=np.int32)
        self.f_sens = self._count_raw(ident, self.patterns)
        self.sigma_s = np.unique(self.patterns).astype(np.int32)
        self._memo: dict[tuple[object, ...], int] = {}
        self.n_evaluations = 0
        self.n_count_calls = 0

    # -- counting ------------------------------------------------------------------------------------------
    def _count_raw(self, h: IntArray, nodes: IntArray) -> npt.NDArray[np.int64]:
        if self.pair is not None:
            out = np.empty(nodes.shape[0], dtype=np.int64)
            ls, lc = self.tax.leaf_start, self.tax.leaf_count
            for k in range(nodes.shape[0]):
                a, b = int(nodes[k, 0]), int(nodes[k, 1])
                # only leaves under a node can map to it: restrict to the two leaf ranges
                a0, a1 = int(ls[a]), int(ls[a] + lc[a])
                b0, b1 = int(ls[b]), int(ls[b] + lc[b])
                r = h[a0:a1] == a
                c = h[b0:b1] == b
                out[k] = int(self.pair[a0:a1, b0:b1][r][:, c].sum())
            return out
        res: npt.NDArray[np.int64] = np.asarray(
            _core.sequence.count_patterns(
                self._offsets,
                self.seq,
                h,
                np.ascontiguousarray(nodes, dtype=np.int32),
                self.tax.n_nodes,
                self.w,
                1,
            )
        )[0]
        return res

    def image_counts(self, h: IntArray) -> npt.NDArray[np.int64]:
        """f_Ŝ(h(p)) for each sensitive pattern (one evaluation per distinct image h(p), memoised by the tuple of
        leaf sets h⁻¹(p̂_k); a leaf set of node v is encoded by h restricted to the leaf range of v)."""
        images = [tuple(r) for r in h[self.patterns].tolist()]
        ls, lc = self.tax.leaf_start, self.tax.leaf_count
        found: dict[tuple[int, ...], int] = {}
        todo: list[tuple[int, ...]] = []
        todo_keys: list[tuple[object, ...]] = []
        for img in images:
            if img in found or img in todo:
                continue
            key: tuple[object, ...] = tuple((v, h[int(ls[v]) : int(ls[v] + lc[v])].tobytes()) for v in img)
            hit = self._memo.get(key)
            if hit is None:
                todo.append(img)
                todo_keys.append(key)
            else:
                found[img] = hit
        if todo:
            self.n_count_calls += 1
            got = self._count_raw(h, np.array(todo, dtype=np.int32).reshape(len(todo), self.m))
            for img, key, cnt in zip(todo, todo_keys, got.tolist()):
                found[img] = cnt
                self._memo[key] = cnt
        return np.array([found[img] for img in images], dtype=np.int64)

    # -- measures ------------------------------------------------------------------------------------------
    def entropy(self) -> float:
        """H̃(𝒫) = Σ_p P̃[p] log(1/P̃[p]), P̃[p] = f_S(p)/N."""
        return self._mi_from(self.f_sens)

    def _mi_from(self, f_img: npt.NDArray[np.int64]) -> float:
        if self.N == 0:
            return 0.0
        total = 0.0
        N = float(self.N)
        for fs, fi in zip(self.f_sens.tolist(), f_img.tolist()):  # fixed order (determinism)
            if fs > 0:
                total += (fs / N) * (math.log(N / fi) / self._ln_base)
        return total

    def mi(self, h: IntArray) -> float:
        """Ĩ(h) = Σ_p (f_S(p)/N) log(N / f_Ŝ(h(p))) (spec §1.4)."""
        self.n_evaluations += 1
        return self._mi_from(self.image_counts(h))

    def ul(self, h: IntArray) -> float:
        """UL(h) = Σ_a f_S(a) c(a, h(a)) over occurring symbols (Definition 4, global form)."""
        # sequential sum in leaf order (the C++ Top-Down kernel sums identically)
        acc = 0.0
        for fo, row, x in zip(self._f_occ_list, self._cost_occ_list, h[self.occurring].tolist()):
            acc += fo * row[x]
        return acc

    def identity(self) -> IntArray:
        return np.arange(self.tax.n_leaves, dtype=np.int32)

    def all_root(self) -> IntArray:
        return np.full(self.tax.n_leaves, self.tax.root, dtype=np.int32)
