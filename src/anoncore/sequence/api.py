"""Public API of anoncore.sequence: privacy measure, single-user algorithms and the batch ``sanitize``.

Reference: L. Bonomi, L. Fan, H. Jin, "An Information Theoretic Approach to Individual Sequential Data
Sanitization", WSDM 2016, pp. 337–346, doi:10.1145/2835776.2835828.
"""

from __future__ import annotations

import dataclasses
import numbers
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from anoncore import _core
from anoncore._validation import check_float, check_n_threads, check_option
from anoncore.exceptions import InfeasibleError
from anoncore.sequence._algorithms import TraceEvent, bottom_up, brute_force, top_down
from anoncore.sequence._problem import UserProblem
from anoncore.sequence._taxonomy import Tax, as_tax
from anoncore.sequence._validation import (
    check_int,
    encode_patterns,
    encode_sequence,
    encode_sequences,
)
from anoncore.sequence.costs import resolve_cost
from anoncore.sequence.counting import check_generalization

__all__ = [
    "METHODS",
    "SequenceSanitization",
    "UserSanitization",
    "mutual_information",
    "pattern_entropy",
    "sample_sensitive_patterns",
    "sanitize",
    "sanitize_sequence",
]

METHODS = ("top_down", "bottom_up", "brute_force")


def _readonly(a: npt.NDArray[Any]) -> npt.NDArray[Any]:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, slots=True, eq=False)
class UserSanitization:
    """Sanitization of one user's sequence under a global generalization map.

    Attributes
    ----------
    generalization : ndarray of int32 of shape (n_leaves,)
        The map h: leaf code -> taxonomy node id (an ancestor-or-self of the leaf).
    sanitized : ndarray of int32 of shape (n,)
        Ŝ[i] = h(S[i]) as node ids.
    mi : float
        Achieved Ĩ(h) in units of ``log_base``.
    entropy : float
        H̃(𝒫) of the sensitive patterns.
    epsilon : float
        Absolute privacy level used (ε_rel · H̃ when relative).
    utility_loss : float
        UL = Σ_i c(S[i], Ŝ[i]).
    normalized_utility_loss : float
        UL / n (0 for an empty sequence).
    patterns : ndarray of int32 of shape (n_patterns, m)
        Deduplicated sensitive patterns (leaf codes).
    pattern_counts : ndarray of int64 of shape (n_patterns,)
        f_S(p).
    n_embeddings : int
        N_m(n, w).
    method : str
        Algorithm used.
    trace : tuple of TraceEvent
        Algorithm trace (Top-Down candidates/acceptances, Bottom-Up merges and completion moves).
    stats : dict
        Run-dependent values (seconds, number of Ĩ evaluations); excluded from equality.
    """

    generalization: npt.NDArray[np.int32] = field(repr=False)
    sanitized: npt.NDArray[np.int32] = field(repr=False)
    mi: float
    entropy: float
    epsilon: float
    utility_loss: float
    normalized_utility_loss: float
    patterns: npt.NDArray[np.int32] = field(repr=False)
    pattern_counts: npt.NDArray[np.int64] = field(repr=False)
    n_embeddings: int
    method: str
    trace: tuple[TraceEvent, ...] = field(repr=False)
    stats: dict[str, float] = field(repr=False, compare=False)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, UserSanitization):
            return NotImplemented
        return (
            np.array_equal(self.generalization, other.generalization)
            and np.array_equal(self.sanitized, other.sanitized)
            and np.array_equal(self.patterns, other.patterns)
            and (self.mi, self.entropy, self.epsilon, self.utility_loss, self.method)
            == (other.mi, other.entropy, other.epsilon, other.utility_loss, other.method)
            and self.trace == other.trace
        )

    __hash__ = None  # type: ignore[assignment]

    def decode(self, taxonomy: Any) -> list[str]:
        """The sanitized sequence as node labels."""
        tax = as_tax(taxonomy, "UserSanitization.decode")
        return [tax.labels[int(x)] for x in self.sanitized]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class SequenceSanitization:
    """Batch result of :func:`sanitize`: one :class:`UserSanitization` per input sequence."""

    users: tuple[UserSanitization, ...]
    method: str
    stats: dict[str, float] = field(repr=False, compare=False)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SequenceSanitization):
            return NotImplemented
        return self.method == other.method and self.users == other.users

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        ul = self.normalized_utility_loss
        mean = float(ul.mean()) if ul.size else 0.0
        return (
            f"SequenceSanitization(method={self.method!r}, n_users={len(self.users)}, "
            f"mean_normalized_utility_loss={mean:.6g})"
        )

    @property
    def utility_loss(self) -> npt.NDArray[np.float64]:
        """UL per user."""
        return np.array([u.utility_loss for u in self.users])

    @property
    def normalized_utility_loss(self) -> npt.NDArray[np.float64]:
        """UL / n per user."""
        return np.array([u.normalized_utility_loss for u in self.users])

    @property
    def mi(self) -> npt.NDArray[np.float64]:
        """Achieved Ĩ per user."""
        return np.array([u.mi for u in self.users])


# ---------------------------------------------------------------------------------------------------------------
def _check_common(w: Any, log_base: Any, caller: str) -> tuple[int, float]:
    w = check_int(w, "w", caller, 0)
    return w, check_float(log_base, "log_base", caller, 1, None, closed="neither")


def _check_m_w(m: int, w: int, caller: str) -> None:
    if m > w + 1:
        raise ValueError(
            f"The patterns passed to {caller} have length m={m}, longer than the window allows "
            f"(an occurrence spans at least m - 1 = {m - 1} > w = {w})."
        )


def _problem(
    sequence: Any, taxonomy: Any, patterns: Any, w: Any, cost: Any, log_base: Any, caller: str
) -> UserProblem:
    tax = as_tax(taxonomy, caller)
    w, base = _check_common(w, log_base, caller)
    seq = encode_sequence(sequence, tax, caller)
    pats = encode_patterns(patterns, tax, caller)
    _check_m_w(pats.shape[1], w, caller)
    table = resolve_cost(cost, tax, caller)
    return UserProblem(seq, pats, tax, w, table, base)


def pattern_entropy(
    sequence: Sequence[Any],
    taxonomy: Any,
    patterns: Sequence[Sequence[Any]],
    w: int,
    *,
    log_base: float = 2.0,
) -> float:
    """Entropy H̃(𝒫) = Σ_p P̃[p] log(1/P̃[p]) with P̃[p] = f_S(p) / N_m(n, w).

    Parameters
    ----------
    sequence : sequence of leaf labels or codes
        The user's sequence S.
    taxonomy : Hierarchy
        Taxonomy whose leaves are the symbols.
    patterns : list of tuples
        Sensitive patterns 𝒫 of equal length (deduplicated).
    w : int
        Window.
    log_base : float, default=2.0
        Logarithm base (2 = bits).

    Returns
    -------
    float

    Examples
    --------
    >>> from anoncore.data.hierarchy import Hierarchy
    >>> tax = Hierarchy.from_nested({"*": {"x": ["a", "b"]}})
    >>> round(pattern_entropy(["a", "a", "b"], tax, [("a", "b")], 2), 6)
    0.389975
    """
    prob = _problem(sequence, taxonomy, patterns, w, "linear", log_base, "pattern_entropy")
    return prob.entropy()


def mutual_information(
    sequence: Sequence[Any],
    taxonomy: Any,
    patterns: Sequence[Sequence[Any]],
    w: int,
    generalization: npt.ArrayLike | None = None,
    *,
    log_base: float = 2.0,
) -> float:
    """Privacy measure Ĩ(h) = Σ_p (f_S(p)/N) log(N / f_Ŝ(h(p))) of a global generalization map h.

    Parameters
    ----------
    sequence : sequence of leaf labels or codes
        The user's sequence S.
    taxonomy : Hierarchy
        Taxonomy whose leaves are the symbols.
    patterns : list of tuples
        Sensitive patterns 𝒫 (equal length m, deduplicated).
    w : int
        Window; requires m <= w + 1.
    generalization : array-like of int of shape (n_leaves,), default=None
        Map h (leaf code -> ancestor-or-self node id); None is the identity (then Ĩ = H̃).
    log_base : float, default=2.0
        Logarithm base.

    Returns
    -------
    float
        In [0, H̃(𝒫)].

    Notes
    -----
    Eq. (2) under global generalization with the N_m normalization (spec §1.4); f_Ŝ counts embeddings of h(p)
    in Ŝ = h(S) with exact node equality. Ĩ(all -> root) = 0.

    Examples
    --------
    >>> from anoncore.data.hierarchy import Hierarchy
    >>> tax = Hierarchy.from_nested({"*": {"x": ["a", "b"]}})
    >>> mutual_information(["a", "a", "b"], tax, [("a", "b")], 2, [2, 2])
    0.0
    """
    caller = "mutual_information"
    prob = _problem(sequence, taxonomy, patterns, w, "linear", log_base, caller)
    if generalization is None:
        return prob.entropy()
    h = check_generalization(generalization, prob.tax, caller)
    return prob.mi(h)


def _check_method_opts(method: Any, tie: Any, caller: str) -> None:
    check_option(method, "method", caller, sorted(METHODS))
    check_option(tie, "tie", caller, ("first", "last"))


def _run(
    prob: UserProblem,
    epsilon: float,
    relative: bool,
    method: str,
    sigma_s_shortcut: bool,
    prune: bool,
    tie: str,
    distance: str = "dg",
    dedupe: bool = True,
) -> UserSanitization:
    t0 = time.perf_counter()
    H = prob.entropy()
    eps = epsilon * H if relative else epsilon
    trace: list[TraceEvent] = []
    if method == "top_down":
        h, trace = top_down(prob, eps, sigma_s_shortcut=sigma_s_shortcut, prune=prune, tie=tie, dedupe=dedupe)
    elif method == "bottom_up":
        h, trace = bottom_up(prob, eps, distance=distance)
    else:
        h, _ = brute_force(prob, eps)
    mi = prob.mi(h)
    ul = prob.ul(h)
    sanitized = h[prob.seq]
    return UserSanitization(
        generalization=_readonly(h),
        sanitized=_readonly(sanitized),
        mi=mi,
        entropy=H,
        epsilon=eps,
        utility_loss=ul,
        normalized_utility_loss=ul / prob.n if prob.n else 0.0,
        patterns=_readonly(prob.patterns),
        pattern_counts=_readonly(prob.f_sens),
        n_embeddings=prob.N,
        method=method,
        trace=tuple(trace),
        stats={
            "seconds": time.perf_counter() - t0,
            "mi_evaluations": float(prob.n_evaluations),
            "count_calls": float(prob.n_count_calls),
        },
    )


def sanitize_sequence(
    sequence: Sequence[Any],
    taxonomy: Any,
    patterns: Sequence[Sequence[Any]],
    epsilon: float,
    w: int,
    *,
    method: str = "top_down",
    relative: bool = True,
    cost: Any = "linear",
    log_base: float = 2.0,
    sigma_s_shortcut: bool = True,
    prune: bool = True,
    tie: str = "last",
    distance: str = "dg",
    dedupe: bool = True,
) -> UserSanitization:
    """Sanitize one sequence: find a global map h with Ĩ(h) ≤ ε and small utility loss.

    Parameters
    ----------
    sequence : sequence of leaf labels (str) or leaf codes (int)
        The user's event sequence S.
    taxonomy : Hierarchy
        Taxonomy whose leaves are the event symbols.
    patterns : list of tuples
        Sensitive patterns 𝒫, all of length m <= w + 1 (deduplicated).
    epsilon : float
        Privacy level, >= 0. Relative (a fraction of H̃(𝒫)) when ``relative`` else absolute.
    w : int
        Window.
    method : {'top_down', 'bottom_up', 'brute_force'}, default='top_down'
        Algorithm 1, Algorithm 3, or the exact exponential baseline (tiny inputs only).
    relative : bool, default=True
        Interpret ``epsilon`` as ε_rel, ε_abs = ε_rel · H̃(𝒫).
    cost : {'linear', 'exponential', 'iloss'} or array-like of shape (n_leaves, n_nodes), default='linear'
        Cost family or user table (validated against Definition 3).
    log_base : float, default=2.0
        Logarithm base of Ĩ and H̃.
    sigma_s_shortcut : bool, default=True
        Top-Down: start from Σ_S -> root and refine only Σ_S when that is already private (paper behaviour).
    prune : bool, default=True
        Top-Down: Corollary 1 pruning (exact; output identical either way).
    tie : {'last', 'first'}, default='last'
        Top-Down tie rule for equal-UL feasible candidates in a pass (paper literal: last evaluated wins).
    dedupe : bool, default=True
        Top-Down: evaluate Ĩ once for the symbols of a pass that yield the same candidate map (same target node).
        ``False`` evaluates every symbol's candidate, as the paper's listing does; the output is identical.
    distance : {'dg', 'delta_ul'}, default='dg'
        Bottom-Up pair distance: the paper's d_g (Eq. 5, absolute costs of the two clusters' symbols) or the
        marginal utility-loss increase of the global map.

    Returns
    -------
    UserSanitization

    Raises
    ------
    ValueError
        Unknown symbols, m > w + 1, ε < 0, costs violating Definition 3, unknown options.

    Examples
    --------
    >>> from anoncore.data.hierarchy import Hierarchy
    >>> tax = Hierarchy.from_nested({"All": {"Alcohol": ["Wine", "Beer"], "Snack": ["Cookies", "Chips"],
    ...                                      "Dairy": ["Milk", "Cheese"]}})
    >>> s = "Beer Chips Wine Cheese Beer Chips Milk Cookies Beer Chips Cookies Milk Wine Cheese Milk Chips".split()
    >>> r = sanitize_sequence(s, tax, [("Beer", "Chips"), ("Wine", "Cheese")], 0.5, 2)
    >>> r.utility_loss, round(r.mi, 6)
    (11.0, 0.219486)
    """
    caller = "sanitize_sequence"
    _check_method_opts(method, tie, caller)
    check_option(distance, "distance", caller, ("delta_ul", "dg"))
    epsilon = check_float(epsilon, "epsilon", caller, 0.0, None, closed="left")
    prob = _problem(sequence, taxonomy, patterns, w, cost, log_base, caller)
    return _run(
        prob,
        epsilon,
        bool(relative),
        method,
        bool(sigma_s_shortcut),
        bool(prune),
        tie,
        distance,
        bool(dedupe),
    )


def _candidate_patterns(
    seq: npt.NDArray[np.int32], pair: npt.NDArray[np.int64] | None, m: int, w: int, n_leaves: int
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64]]:
    """All length-m leaf patterns with their windowed counts (m <= 2), or the distinct contiguous m-grams with
    their windowed counts (m >= 3)."""
    if m == 1:
        f = np.bincount(seq, minlength=n_leaves).astype(np.int64)
        idx = np.flatnonzero(f > 0)
        return idx.reshape(-1, 1).astype(np.int32), f[idx]
    if m == 2:
        assert pair is not None
        a, b = np.nonzero(pair)
        return np.stack([a, b], axis=1).astype(np.int32), pair[a, b]
    if seq.shape[0] < m:
        return np.zeros((0, m), np.int32), np.zeros(0, np.int64)
    grams = np.lib.stride_tricks.sliding_window_view(seq, m)
    cand = np.ascontiguousarray(np.unique(grams, axis=0).astype(np.int32))
    off = np.array([0, seq.shape[0]], dtype=np.int64)
    ident = np.arange(n_leaves, dtype=np.int32)
    counts = np.asarray(_core.sequence.count_patterns(off, seq, ident, cand, n_leaves, w, 1))[0]
    return cand, counts


def _sample(
    cand: npt.NDArray[np.int32],
    counts: npt.NDArray[np.int64],
    k: int,
    f_min: int,
    gen: np.random.Generator,
    user: int,
) -> npt.NDArray[np.int32]:
    ok = np.flatnonzero(counts >= f_min)
    if ok.shape[0] == 0:
        raise InfeasibleError(
            f"Sequence {user} has no pattern with windowed frequency >= f_min={f_min}; cannot sample sensitive patterns."
        )
    pick = gen.choice(ok.shape[0], size=min(k, ok.shape[0]), replace=False)
    return np.ascontiguousarray(cand[ok[np.sort(pick)]])


def sample_sensitive_patterns(
    sequences: Sequence[Sequence[Any]],
    taxonomy: Any,
    k: int,
    w: int,
    *,
    m: int = 2,
    f_min: int = 10,
    rng: int | np.random.Generator | None = None,
) -> list[npt.NDArray[np.int32]]:
    """Draw k sensitive patterns per user, uniformly without replacement among patterns with f_S(p) >= f_min.

    Parameters
    ----------
    sequences : list of sequences
        One sequence per user.
    taxonomy : Hierarchy
        The taxonomy.
    k : int
        Patterns per user (fewer if fewer qualify).
    w : int
        Window used for the frequency.
    m : int, default=2
        Pattern length. For m >= 3 the pool is the distinct contiguous m-grams (filtered by windowed count).
    f_min : int, default=10
        Minimum windowed frequency (paper's default 10).
    rng : int, Generator or None, default=None
        Randomness.

    Returns
    -------
    list of ndarray of int32 of shape (k_u, m)

    Raises
    ------
    InfeasibleError
        A user has no pattern with frequency >= f_min.

    Examples
    --------
    >>> from anoncore.data.hierarchy import Hierarchy
    >>> tax = Hierarchy.from_nested({"*": {"x": ["a", "b"]}})
    >>> sample_sensitive_patterns([["a", "b"] * 10], tax, 1, 1, f_min=10, rng=0)[0].tolist()
    [[0, 1]]
    """
    caller = "sample_sensitive_patterns"
    tax = as_tax(taxonomy, caller)
    k = check_int(k, "k", caller, 1)
    w = check_int(w, "w", caller, 0)
    m = check_int(m, "m", caller, 1)
    f_min = check_int(f_min, "f_min", caller, 1)
    _check_m_w(m, w, caller)
    gen = np.random.default_rng(rng)
    offsets, flat = encode_sequences(sequences, tax, caller)
    out = []
    for u in range(offsets.shape[0] - 1):
        seq = flat[offsets[u] : offsets[u + 1]]
        pair = None
        if m == 2:
            pair = np.asarray(
                _core.sequence.pair_table(np.array([0, seq.shape[0]], np.int64), seq, tax.n_leaves, w, 1)
            )[0]
        cand, counts = _candidate_patterns(seq, pair, m, w, tax.n_leaves)
        out.append(_sample(cand, counts, k, f_min, gen, u))
    return out


def _sample_all(
    offsets: npt.NDArray[np.int64],
    flat: npt.NDArray[np.int32],
    L: int,
    m: int,
    w: int,
    k: int,
    f_min: int,
    gen: np.random.Generator,
    nt: int,
) -> list[npt.NDArray[np.int32]]:
    """Sample k sensitive patterns per user (pair tables built in batches for m = 2)."""
    n_users = offsets.shape[0] - 1
    out: list[npt.NDArray[np.int32]] = []
    block = max(1, int(32_000_000 // max(1, 8 * L * L)))
    for b0 in range(0, n_users, block):
        b1 = min(n_users, b0 + block)
        pairs = None
        if m == 2:
            sub_off = np.ascontiguousarray(offsets[b0 : b1 + 1] - offsets[b0])
            sub = np.ascontiguousarray(flat[offsets[b0] : offsets[b1]])
            pairs = np.asarray(_core.sequence.pair_table(sub_off, sub, L, w, nt))
        for u in range(b0, b1):
            seq = flat[offsets[u] : offsets[u + 1]]
            cand, counts = _candidate_patterns(seq, pairs[u - b0] if pairs is not None else None, m, w, L)
            out.append(_sample(cand, counts, k, f_min, gen, u))
    return out


def _cpp_batch(
    method: str,
    offsets: npt.NDArray[np.int64],
    flat: npt.NDArray[np.int32],
    tax: Tax,
    table: npt.NDArray[np.float64],
    per_user: list[npt.NDArray[np.int32]],
    epsilon: float,
    relative: bool,
    base: float,
    w: int,
    nt: int,
    shortcut: bool,
    prune: bool,
    tie: str,
    distance: str,
    use_table: bool,
    dedupe: bool = True,
) -> list[UserSanitization]:
    """Top-Down or Bottom-Up for every user in one GIL-free C++ call (no traces); same maps as the Python
    references in ``_algorithms``."""
    t0 = time.perf_counter()
    n_users = offsets.shape[0] - 1
    poff = np.zeros(n_users + 1, dtype=np.int64)
    poff[1:] = np.cumsum([p.shape[0] for p in per_user])
    pats = np.ascontiguousarray(np.concatenate(per_user, axis=0), dtype=np.int32)
    m = pats.shape[1]
    common = (offsets, flat, tax.parent, tax.depth, tax.leaf_start, tax.leaf_count, tax.n_leaves,
              np.ascontiguousarray(table), poff, pats, float(epsilon), relative, base)  # fmt: skip
    if method == "top_down":
        out = _core.sequence.top_down_batch(*common, shortcut, prune, tie == "last", use_table, w, nt, dedupe)
    else:
        out = _core.sequence.bottom_up_batch(*common, distance == "delta_ul", use_table, w, nt)
    gen, mi, ent, eps, ul, evals, fs = out
    per_user_seconds = (time.perf_counter() - t0) / max(1, n_users)
    users = []
    for u in range(n_users):
        seq = flat[offsets[u] : offsets[u + 1]]
        h = np.array(gen[u], dtype=np.int32)
        n = int(seq.shape[0])
        users.append(
            UserSanitization(
                generalization=_readonly(h),
                sanitized=_readonly(h[seq]),
                mi=float(mi[u]),
                entropy=float(ent[u]),
                epsilon=float(eps[u]),
                utility_loss=float(ul[u]),
                normalized_utility_loss=float(ul[u]) / n if n else 0.0,
                patterns=_readonly(per_user[u]),
                pattern_counts=_readonly(np.array(fs[poff[u] : poff[u + 1]], dtype=np.int64)),
                n_embeddings=int(_core.sequence.total_embeddings(n, w, m)),
                method=method,
                trace=(),
                stats={"seconds": per_user_seconds, "mi_evaluations": float(evals[u])},
            )
        )
    return users


def _is_pattern_list(x: Any) -> bool:
    """True if x looks like a list of patterns (a pattern = sequence of scalar symbols)."""
    if isinstance(x, np.ndarray):
        return x.ndim == 2
    if not isinstance(x, Sequence) or isinstance(x, (str, bytes)) or len(x) == 0:
        return False
    first = x[0]
    if isinstance(first, np.ndarray):
        return first.ndim == 1
    if not isinstance(first, Sequence) or isinstance(first, (str, bytes)) or len(first) == 0:
        return False
    return isinstance(first[0], (str, numbers.Integral, np.integer))


def sanitize(
    sequences: Sequence[Sequence[Any]],
    taxonomy: Any,
    patterns: Any,
    epsilon: float,
    w: int,
    method: str = "top_down",
    rng: int | np.random.Generator | None = None,
    *,
    relative: bool = True,
    cost: Any = "linear",
    log_base: float = 2.0,
    m: int = 2,
    f_min: int = 10,
    sigma_s_shortcut: bool = True,
    prune: bool = True,
    tie: str = "last",
    distance: str = "dg",
    dedupe: bool = True,
    counting: str = "table",
    trace: bool = False,
    n_threads: int | None = None,
) -> SequenceSanitization:
    """Sanitize many users' event sequences with mutual-information privacy (g-MULG heuristics).

    Each user is an independent problem: find a global taxonomy generalization map h with Ĩ(h) ≤ ε and small
    utility loss, then publish Ŝ = h(S).

    Parameters
    ----------
    sequences : list of sequences of leaf labels (str) or leaf codes (int)
        One event sequence per user.
    taxonomy : Hierarchy
        Taxonomy whose leaves are the event symbols.
    patterns : int, list of patterns, or list (one per user) of lists of patterns
        Sensitive patterns. A list of patterns is shared by all users; a list of length n_users of pattern lists
        gives each user its own; an int k samples k patterns per user uniformly among those with windowed
        frequency >= ``f_min`` (paper protocol), using ``rng``.
    epsilon : float
        Privacy level >= 0 (relative to H̃(𝒫) by default).
    w : int
        Window (inclusive index difference).
    method : {'top_down', 'bottom_up', 'brute_force'}, default='top_down'
        Algorithm.
    rng : int, Generator or None, default=None
        Only used when ``patterns`` is an int (the algorithms themselves are deterministic).
    relative : bool, default=True
        ε_abs = ε · H̃(𝒫) of each user.
    cost : {'linear', 'exponential', 'iloss'} or array-like, default='linear'
        Cost family or Definition-3 table of shape (n_leaves, n_nodes).
    log_base : float, default=2.0
        Logarithm base.
    m : int, default=2
        Pattern length when sampling.
    f_min : int, default=10
        Minimum frequency when sampling.
    sigma_s_shortcut, prune, tie, distance, dedupe
        Algorithm options, see :func:`sanitize_sequence`.
    counting : {'table', 'scan'}, default='table'
        How f_Ŝ(h(p)) is evaluated. ``table``: from the dense windowed pair table built once per user (m = 2;
        evaluation independent of n). ``scan``: recount over the sequence with the C++ kernel for every distinct
        generalized pattern (the paper's per-candidate mining; O(n) per evaluation for m = 2). Same output.
    trace : bool, default=False
        Record algorithm traces. Without traces, Top-Down and Bottom-Up run for all users in one GIL-free C++
        call (parallel over users); with traces they run the Python references (identical maps).
    n_threads : int, default=None
        Threads for the counting kernels.

    Returns
    -------
    SequenceSanitization

    Raises
    ------
    TypeError
        Wrong types (e.g. a taxonomy that is not a Hierarchy).
    ValueError
        Symbols missing from the taxonomy, m > w + 1, ε < 0, costs violating Definition 3.
    InfeasibleError
        Sampling requested but a user has no pattern with frequency >= f_min.

    Notes
    -----
    Counting statistics for all users (unigrams and, for m = 2, the dense windowed pair table) are computed by
    GIL-free C++ kernels in one batch call; each algorithm then evaluates f_Ŝ(h(p)) from the table in time
    independent of n. Top-Down is O(|Σ|²) Ĩ evaluations per user in the worst case, Bottom-Up O(|𝒫|³).

    References
    ----------
    L. Bonomi, L. Fan, H. Jin, WSDM 2016, doi:10.1145/2835776.2835828.

    Examples
    --------
    >>> from anoncore.data.hierarchy import Hierarchy
    >>> tax = Hierarchy.from_nested({"All": {"Alcohol": ["Wine", "Beer"], "Snack": ["Cookies", "Chips"],
    ...                                      "Dairy": ["Milk", "Cheese"]}})
    >>> s = "Beer Chips Wine Cheese Beer Chips Milk Cookies Beer Chips Cookies Milk Wine Cheese Milk Chips".split()
    >>> res = sanitize([s], tax, [("Beer", "Chips"), ("Wine", "Cheese")], 0.9, 2, method="bottom_up")
    >>> res.utility_loss.tolist()
    [8.5]
    """
    caller = "sanitize"
    t0 = time.perf_counter()
    tax: Tax = as_tax(taxonomy, caller)
    _check_method_opts(method, tie, caller)
    check_option(distance, "distance", caller, ("delta_ul", "dg"))
    epsilon = check_float(epsilon, "epsilon", caller, 0.0, None, closed="left")
    w, base = _check_common(w, log_base, caller)
    nt = check_n_threads(n_threads, caller)
    check_option(counting, "counting", caller, ("scan", "table"))
    use_table = counting == "table"
    table = resolve_cost(cost, tax, caller)
    offsets, flat = encode_sequences(sequences, tax, caller)
    n_users = offsets.shape[0] - 1
    # Sensitive patterns per user.
    per_user: list[npt.NDArray[np.int32]] | None = None
    if isinstance(patterns, (numbers.Integral, np.integer)) and not isinstance(patterns, bool):
        check_int(patterns, "patterns", caller, 1)
        m = check_int(m, "m", caller, 1)
        f_min = check_int(f_min, "f_min", caller, 1)
        _check_m_w(m, w, caller)
        pm = m
    elif _is_pattern_list(patterns):
        shared = encode_patterns(patterns, tax, caller)
        pm = shared.shape[1]
        per_user = [shared] * n_users
    elif isinstance(patterns, Sequence) and not isinstance(patterns, (str, bytes)):
        if len(patterns) != n_users:
            raise ValueError(
                f"The 'patterns' parameter of {caller} must be an int, a list of patterns, or one list of patterns "
                f"per sequence ({n_users}). Got a list of length {len(patterns)}."
            )
        per_user = [encode_patterns(p, tax, caller) for p in patterns]
        pm = per_user[0].shape[1]
        if any(p.shape[1] != pm for p in per_user):
            raise ValueError(f"All patterns passed to {caller} must have the same length m.")
    else:
        raise TypeError(
            f"The 'patterns' parameter of {caller} must be an int or a list of patterns. Got {type(patterns).__name__} instead."
        )
    _check_m_w(pm, w, caller)
    gen = np.random.default_rng(rng) if per_user is None else None
    L = tax.n_leaves
    if method in ("top_down", "bottom_up") and not trace:
        if per_user is None:
            assert gen is not None
            per_user = _sample_all(offsets, flat, L, pm, w, int(patterns), f_min, gen, nt)
        cpp_users = _cpp_batch(
            method, offsets, flat, tax, table, per_user, epsilon, bool(relative), base, w, nt,
            bool(sigma_s_shortcut), bool(prune), tie, distance, use_table, bool(dedupe),
        )  # fmt: skip
        return SequenceSanitization(
            users=tuple(cpp_users), method=method, stats={"seconds": time.perf_counter() - t0}
        )
    unigrams = np.asarray(_core.sequence.unigram_counts(offsets, flat, L, nt))
    users: list[UserSanitization] = []
    block = max(1, int(32_000_000 // max(1, 8 * L * L)))  # users per pair-table batch (<= ~32 MB)
    t_count = 0.0
    for b0 in range(0, n_users, block):
        b1 = min(n_users, b0 + block)
        pairs = None
        if pm == 2 and (use_table or per_user is None):
            tc = time.perf_counter()
            sub_off = np.ascontiguousarray(offsets[b0 : b1 + 1] - offsets[b0])
            sub = np.ascontiguousarray(flat[offsets[b0] : offsets[b1]])
            pairs = np.asarray(_core.sequence.pair_table(sub_off, sub, L, w, nt))
            t_count += time.perf_counter() - tc
        for u in range(b0, b1):
            seq = flat[offsets[u] : offsets[u + 1]]
            pair = pairs[u - b0] if pairs is not None else None
            if per_user is None:
                assert gen is not None
                cand, counts = _candidate_patterns(seq, pair, pm, w, L)
                pats = _sample(cand, counts, int(patterns), f_min, gen, u)
            else:
                pats = per_user[u]
            prob = UserProblem(
                seq,
                pats,
                tax,
                w,
                table,
                base,
                pair=pair if use_table else None,
                unigram=unigrams[u],
                use_table=use_table,
            )
            r = _run(
                prob, epsilon, bool(relative), method, bool(sigma_s_shortcut), bool(prune), tie, distance,
                bool(dedupe),
            )  # fmt: skip
            if not trace:
                r = dataclasses.replace(r, trace=())
            users.append(r)
    return SequenceSanitization(
        users=tuple(users),
        method=method,
        stats={"seconds": time.perf_counter() - t0, "counting_seconds": t_count},
    )
