#include "anoncore/twophase/retrieve.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "anoncore/core/parallel.hpp"
#include "anoncore/core/rng.hpp"

namespace anoncore::twophase {
namespace {

constexpr int64_t kSortChunk = int64_t{1} << 16;  // rows per chunk of a radix pass (independent of threads)
constexpr int kMaxDigitBits = 11;

/// One stable counting pass: moves (key, row) pairs from (ks, rs) to (kd, rd) ordered by digit(key, row) in
/// [0, radix). Per-chunk histograms, exclusive offsets in (digit, chunk) order, then a parallel scatter.
template <class Digit>
void counting_pass(const uint64_t* ks, const int64_t* rs, uint64_t* kd, int64_t* rd, int64_t n, int64_t radix,
                   int n_threads, std::vector<int64_t>& hist, Digit digit) {
  const int64_t n_chunks = (n + kSortChunk - 1) / kSortChunk;
  hist.assign(static_cast<size_t>(n_chunks * radix), 0);
  parallel_chunks(n, kSortChunk, n_threads, [&](int64_t c, int64_t i0, int64_t i1) {
    int64_t* h = hist.data() + c * radix;
    for (int64_t i = i0; i < i1; ++i) ++h[digit(ks[i], rs[i])];
  });
  int64_t run = 0;
  for (int64_t d = 0; d < radix; ++d)
    for (int64_t c = 0; c < n_chunks; ++c) {
      int64_t& h = hist[static_cast<size_t>(c * radix + d)];
      const int64_t cnt = h;
      h = run;
      run += cnt;
    }
  parallel_chunks(n, kSortChunk, n_threads, [&](int64_t c, int64_t i0, int64_t i1) {
    int64_t* h = hist.data() + c * radix;
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t at = h[digit(ks[i], rs[i])]++;
      kd[at] = ks[i];
      rd[at] = rs[i];
    }
  });
}

}  // namespace

void sort_bucket_key_row(Span<int32_t> bucket_of_row, int64_t n_buckets, Span<uint64_t> keys, int n_threads,
                         std::vector<int64_t>& rows_out, std::vector<uint64_t>& keys_out) {
  const int64_t n = bucket_of_row.size;
  const auto un = static_cast<size_t>(n);
  std::vector<uint64_t> ka(un), kb(un);
  std::vector<int64_t> ra(un), rb(un);
  // Bits that differ between some keys: constant bits cannot change the order and are skipped.
  const int64_t n_chunks = (n + kSortChunk - 1) / kSortChunk;
  std::vector<uint64_t> ors(static_cast<size_t>(n_chunks), 0), ands(static_cast<size_t>(n_chunks), ~uint64_t{0});
  parallel_chunks(n, kSortChunk, n_threads, [&](int64_t c, int64_t i0, int64_t i1) {
    uint64_t o = 0, a = ~uint64_t{0};
    for (int64_t i = i0; i < i1; ++i) {
      const uint64_t k = keys[i];
      ka[static_cast<size_t>(i)] = k;
      ra[static_cast<size_t>(i)] = i;
      o |= k;
      a &= k;
    }
    ors[static_cast<size_t>(c)] = o;
    ands[static_cast<size_t>(c)] = a;
  });
  uint64_t o = 0, a = ~uint64_t{0};
  for (int64_t c = 0; c < n_chunks; ++c) {
    o |= ors[static_cast<size_t>(c)];
    a &= ands[static_cast<size_t>(c)];
  }
  const uint64_t diff = n > 0 ? (o ^ a) : 0;
  std::vector<int64_t> hist;
  if (diff != 0) {
    int lo = 0, hi = 64;
    while (((diff >> lo) & 1U) == 0) ++lo;
    while (((diff >> (hi - 1)) & 1U) == 0) --hi;
    const int bits = hi - lo;
    const int passes = (bits + kMaxDigitBits - 1) / kMaxDigitBits;
    const int width = (bits + passes - 1) / passes;
    for (int p = 0; p < passes; ++p) {
      const int shift = lo + p * width;
      const int w = std::min(width, hi - shift);
      const uint64_t mask = (uint64_t{1} << w) - 1;
      counting_pass(ka.data(), ra.data(), kb.data(), rb.data(), n, int64_t{1} << w, n_threads, hist,
                    [shift, mask](uint64_t k, int64_t) { return static_cast<int64_t>((k >> shift) & mask); });
      ka.swap(kb);
      ra.swap(rb);
    }
  }
  if (n_buckets > 1) {
    const int32_t* bo = bucket_of_row.data;
    counting_pass(ka.data(), ra.data(), kb.data(), rb.data(), n, n_buckets, n_threads, hist,
                  [bo](uint64_t, int64_t r) { return static_cast<int64_t>(bo[r]); });
    ka.swap(kb);
    ra.swap(rb);
  }
  rows_out = std::move(ra);
  keys_out = std::move(ka);
}

namespace {

int popcount64(uint64_t w) {
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_popcountll(w);
#else
  int c = 0;
  for (; w != 0; w &= w - 1) ++c;
  return c;
#endif
}

/// Index of the (r+1)-th set bit of w (0 <= r < popcount(w)).
int select64(uint64_t w, int r) {
  for (; r > 0; --r) w &= w - 1;
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_ctzll(w);
#else
  int i = 0;
  while (((w >> i) & 1U) == 0) ++i;
  return i;
#endif
}

/// Tuples of every bucket in (key, row) order with deletion: next/previous-alive links (path halving) for the
/// neighbour walks, and for uniform choice of a remaining tuple an alive bit per position with a Fenwick tree
/// over the alive counts of 64-position words (small enough to stay in cache).
class BucketPool {
 public:
  /// `links`: keep the next/previous-alive links (the Hilbert neighbour walks); without them, kills only
  /// update the Fenwick tree (SABRE-KNN).
  explicit BucketPool(const RetrieveInput& in, bool links = true)
      : n_(in.bucket_of_row.size), nb_(in.n_buckets), links_(links) {
    const auto n = static_cast<size_t>(n_);
    off_.assign(static_cast<size_t>(nb_ + 1), 0);
    for (int64_t r = 0; r < n_; ++r) ++off_[static_cast<size_t>(in.bucket_of_row[r]) + 1];
    for (int64_t b = 0; b < nb_; ++b) off_[static_cast<size_t>(b + 1)] += off_[static_cast<size_t>(b)];
    // Every bucket sorted by (key, row): a total order, so the result does not depend on the sort
    // implementation or the number of threads. Serial: on the shared 2-core machine the parallel radix passes
    // were measured 1.2-3x slower than one thread (1M-4M rows, load 4-5); the sort is memory bound.
    sort_bucket_key_row(in.bucket_of_row, nb_, in.keys, 1, rows_, keys_);
    pos_.resize(n);
    for (size_t p = 0; p < n; ++p) pos_[static_cast<size_t>(rows_[p])] = static_cast<int64_t>(p);
    if (links_) {
      nxt_.resize(n + 1);
      std::iota(nxt_.begin(), nxt_.end(), int64_t{0});
      prv_.resize(n + 1);
      std::iota(prv_.begin(), prv_.end(), int64_t{0});
    }
    remaining_.resize(static_cast<size_t>(nb_));
    for (int64_t b = 0; b < nb_; ++b) remaining_[static_cast<size_t>(b)] = size(b);
    const size_t n_words = (n + 63) / 64;
    alive_.assign(n_words, ~uint64_t{0});
    if (n % 64 != 0) alive_[n_words - 1] = (uint64_t{1} << (n % 64)) - 1;
    fen_.assign(n_words + 1, 0);
    for (size_t i = 1; i <= n_words; ++i) {
      fen_[i] += popcount64(alive_[i - 1]);
      const size_t j = i + (i & (~i + 1));
      if (j <= n_words) fen_[j] += fen_[i];
    }
    log_ = 1;
    while ((size_t{1} << log_) <= n_words) ++log_;
  }

  int64_t begin(int64_t b) const { return off_[static_cast<size_t>(b)]; }
  int64_t end(int64_t b) const { return off_[static_cast<size_t>(b + 1)]; }
  int64_t size(int64_t b) const { return end(b) - begin(b); }
  int64_t remaining(int64_t b) const { return remaining_[static_cast<size_t>(b)]; }
  int64_t row(int64_t p) const { return rows_[static_cast<size_t>(p)]; }
  uint64_t key(int64_t p) const { return keys_[static_cast<size_t>(p)]; }
  int64_t pos_of_row(int64_t r) const { return pos_[static_cast<size_t>(r)]; }

  /// First alive position >= p (n if none).
  int64_t next_alive(int64_t p) {
    while (nxt_[static_cast<size_t>(p)] != p) {
      nxt_[static_cast<size_t>(p)] = nxt_[static_cast<size_t>(nxt_[static_cast<size_t>(p)])];
      p = nxt_[static_cast<size_t>(p)];
    }
    return p;
  }
  /// Last alive position <= p (-1 if none).
  int64_t prev_alive(int64_t p) {
    int64_t q = p + 1;  // prv_ is shifted by one: index 0 stands for "none"
    while (prv_[static_cast<size_t>(q)] != q) {
      prv_[static_cast<size_t>(q)] = prv_[static_cast<size_t>(prv_[static_cast<size_t>(q)])];
      q = prv_[static_cast<size_t>(q)];
    }
    return q - 1;
  }
  /// First alive position of bucket b (which has remaining tuples).
  int64_t first_alive(int64_t b) { return links_ ? next_alive(begin(b)) : kth_alive(b, 0); }
  void kill(int64_t p, int64_t b) {
    if (links_) {
      nxt_[static_cast<size_t>(p)] = p + 1;
      prv_[static_cast<size_t>(p + 1)] = p;
    }
    alive_[static_cast<size_t>(p >> 6)] &= ~(uint64_t{1} << (p & 63));
    for (auto i = static_cast<size_t>((p >> 6) + 1); i < fen_.size(); i += i & (~i + 1)) fen_[i] -= 1;
    --remaining_[static_cast<size_t>(b)];
  }
  /// Position of the r-th (0-based) remaining tuple of bucket b.
  int64_t kth_alive(int64_t b, int64_t r) {
    int64_t want = prefix(begin(b)) + r + 1;  // 1-based rank among all alive positions
    size_t word = 0;  // words before the one holding the wanted position
    for (int lg = log_; lg >= 0; --lg) {
      const size_t nx = word + (size_t{1} << lg);
      if (nx < fen_.size() && fen_[nx] < want) {
        word = nx;
        want -= fen_[nx];
      }
    }
    return static_cast<int64_t>(word * 64) + select64(alive_[word], static_cast<int>(want - 1));
  }

 private:
  int64_t prefix(int64_t p) const {  // alive positions in [0, p)
    int64_t s = 0;
    for (auto i = static_cast<size_t>(p >> 6); i > 0; i -= i & (~i + 1)) s += fen_[i];
    if ((p & 63) != 0) s += popcount64(alive_[static_cast<size_t>(p >> 6)] & ((uint64_t{1} << (p & 63)) - 1));
    return s;
  }
  int64_t n_, nb_;
  bool links_;
  std::vector<int64_t> off_, rows_, pos_, nxt_, prv_, remaining_, fen_;
  std::vector<uint64_t> keys_, alive_;  // alive_: bit p % 64 of word p / 64 is set while position p is alive
  int log_ = 1;
};

/// Seed of one EC: returns the pool position of x and its bucket.
std::pair<int64_t, int64_t> pick_seed(BucketPool& pool, const int64_t* a, int64_t nb, SeedPolicy policy, Rng& rng,
                                      std::vector<int64_t>& eligible) {
  eligible.clear();
  for (int64_t b = 0; b < nb; ++b)
    if (a[b] > 0 && pool.remaining(b) > 0) eligible.push_back(b);
  if (eligible.empty()) throw InternalError("EC recipe without remaining tuples");
  if (policy == SeedPolicy::MinKey) {
    int64_t best_p = -1, best_b = -1;
    for (int64_t b : eligible) {
      const int64_t p = pool.first_alive(b);
      if (best_p < 0 || pool.key(p) < pool.key(best_p) ||
          (pool.key(p) == pool.key(best_p) && pool.row(p) < pool.row(best_p))) {
        best_p = p;
        best_b = b;
      }
    }
    return {best_p, best_b};
  }
  const int64_t b = eligible[static_cast<size_t>(rng.below(static_cast<uint64_t>(eligible.size())))];
  const auto r = static_cast<int64_t>(rng.below(static_cast<uint64_t>(pool.remaining(b))));
  return {pool.kth_alive(b, r), b};
}

void check_recipes(const RetrieveInput& in, BucketPool& pool) {
  const int64_t nb = in.n_buckets;
  std::vector<int64_t> col(static_cast<size_t>(nb), 0);
  for (int64_t e = 0; e < in.leaves.rows; ++e)
    for (int64_t b = 0; b < nb; ++b) col[static_cast<size_t>(b)] += in.leaves(e, b);
  for (int64_t b = 0; b < nb; ++b)
    if (col[static_cast<size_t>(b)] != pool.size(b)) throw InternalError("EC recipes do not sum to the bucket sizes");
}

// ------------------------------------------------------------------------------------------- k-d tree
/// Static k-d tree over the points of one bucket, with deletion: alive counts per subtree, and inside every
/// leaf the alive points are kept at the front (swap-remove), so scans never touch deleted points. Points are
/// addressed by row through `local_of_row` (shared by all trees; each row belongs to one bucket).
///
/// Points are stored as QI codes of type C (the narrowest unsigned type that holds every code), point-major;
/// a coordinate is read from the shared coordinate tables when needed, so the doubles compared are exactly the
/// coordinates, with 2-8x less memory to walk than stored doubles. Each internal node holds its children's
/// bounding boxes (as coordinates) side by side, for both distances in one pass.
template <class C>
class KdTree {
 public:
  using Hit = std::pair<double, int64_t>;  // (squared distance, row)

  KdTree() = default;

  /// `rank[offsets[j] + c]`: rank of code c's coordinate among the distinct coordinates of dimension j
  /// (value order; equal values, equal ranks).
  KdTree(const std::vector<int64_t>& rows, Matrix<int32_t> codes, const CoordTables& coords,
         const std::vector<uint32_t>& rank, int64_t d, std::vector<int32_t>& local_of_row)
      : d_(d), local_of_row_(&local_of_row), col_(static_cast<size_t>(d)) {
    const auto n = static_cast<int64_t>(rows.size());
    if (n >= (int64_t{1} << 31)) throw InternalError("kNN retrieval: a bucket holds 2^31 rows or more");
    for (int64_t j = 0; j < d; ++j) col_[static_cast<size_t>(j)] = coords.values.data + coords.offsets[j];
    monotone_.assign(static_cast<size_t>(d), 1);
    for (int64_t j = 0; j < d; ++j)
      for (int64_t c = coords.offsets[j] + 1; c < coords.offsets[j + 1]; ++c)
        if (!(coords.values[c - 1] <= coords.values[c])) monotone_[static_cast<size_t>(j)] = 0;
    // Codes dimension-major (cd[j * n + i]): the split passes read one dimension at a time; coordinates and
    // value ranks are looked up in the (small) per-dimension tables.
    std::vector<C> cd(static_cast<size_t>(n * d));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < d; ++j)
        cd[static_cast<size_t>(j * n + i)] = static_cast<C>(codes(rows[static_cast<size_t>(i)], j));
    std::vector<int64_t> perm(static_cast<size_t>(n));
    std::iota(perm.begin(), perm.end(), int64_t{0});
    struct Job {
      int64_t begin, end;
      int32_t parent;
      bool is_right;
    };
    std::vector<Job> stack{{0, n, -1, false}};
    std::vector<uint64_t> keyed;
    std::vector<double> lo(static_cast<size_t>(d)), hi(static_cast<size_t>(d));
    // Spread of the points of [b, e) per dimension: exact for small nodes, from an evenly strided sample of
    // kSample points for large ones (it only steers the choice of the split dimension; boxes are exact).
    auto spread_of = [&](int64_t b, int64_t e, bool exact) {
      std::fill(lo.begin(), lo.end(), std::numeric_limits<double>::infinity());
      std::fill(hi.begin(), hi.end(), -std::numeric_limits<double>::infinity());
      const int64_t len = e - b;
      const int64_t step = (exact || len <= kSample) ? 1 : len / kSample;
      for (int64_t j = 0; j < d; ++j) {
        const C* col = cd.data() + j * n;
        const double* v = col_[static_cast<size_t>(j)];
        if (monotone_[static_cast<size_t>(j)]) {  // extreme codes hold the extreme coordinates
          C cl = std::numeric_limits<C>::max(), ch = 0;
          for (int64_t i = b; i < e; i += step) {
            const C c = col[perm[static_cast<size_t>(i)]];
            cl = std::min(cl, c);
            ch = std::max(ch, c);
          }
          lo[static_cast<size_t>(j)] = v[cl];
          hi[static_cast<size_t>(j)] = v[ch];
          continue;
        }
        for (int64_t i = b; i < e; i += step) {
          const double w = v[col[perm[static_cast<size_t>(i)]]];
          lo[static_cast<size_t>(j)] = std::min(lo[static_cast<size_t>(j)], w);
          hi[static_cast<size_t>(j)] = std::max(hi[static_cast<size_t>(j)], w);
        }
      }
      int64_t dim = 0;
      double best = -1;
      for (int64_t j = 0; j < d; ++j)
        if (hi[static_cast<size_t>(j)] - lo[static_cast<size_t>(j)] > best) {
          best = hi[static_cast<size_t>(j)] - lo[static_cast<size_t>(j)];
          dim = j;
        }
      return std::make_pair(dim, best);
    };
    while (!stack.empty()) {
      const Job job = stack.back();
      stack.pop_back();
      const auto id = static_cast<int32_t>(nodes_.size());
      const auto len32 = static_cast<int32_t>(job.end - job.begin);
      nodes_.push_back(Node{static_cast<int32_t>(job.begin), static_cast<int32_t>(job.end), -1, -1, job.parent,
                            len32, -1, false});
      if (job.parent >= 0) {
        if (job.is_right)
          nodes_[static_cast<size_t>(job.parent)].right = id;
        else
          nodes_[static_cast<size_t>(job.parent)].left = id;
      }
      if (job.end - job.begin <= kLeaf) continue;
      auto [dim, spread] = spread_of(job.begin, job.end, false);
      if (spread <= 0) std::tie(dim, spread) = spread_of(job.begin, job.end, true);
      if (spread <= 0) continue;  // all points identical: a leaf whatever its size
      // Median cut on a value boundary: the codes are discrete with many ties, and a cut through a run of
      // equal values would leave both children's boxes overlapping on the split dimension (no pruning).
      // The selection orders points by (value on dim, index), as one integer key (value rank << 32 | index)
      // gathered from perm: the same comparison outcomes, hence the same moves, as on the indices themselves.
      const int64_t mid = job.begin + (job.end - job.begin) / 2, len = job.end - job.begin;
      const C* col = cd.data() + dim * n;
      const uint32_t* rank_of = rank.data() + coords.offsets[dim];
      keyed.resize(static_cast<size_t>(len));
      for (int64_t i = 0; i < len; ++i) {
        const auto x = static_cast<uint64_t>(perm[static_cast<size_t>(job.begin + i)]);
        keyed[static_cast<size_t>(i)] = (uint64_t{rank_of[col[x]]} << 32) | x;
      }
      const auto kb = keyed.begin(), km = kb + (mid - job.begin), ke = keyed.end();
      std::nth_element(kb, km, ke);
      const uint64_t v_lo = *km >> 32 << 32, v_hi = v_lo + (uint64_t{1} << 32);  // keys of value == v
      const auto lo_eq = std::partition(kb, km, [v_lo](uint64_t x) { return x < v_lo; });
      const auto hi_eq = std::partition(km, ke, [v_hi](uint64_t x) { return x < v_hi; });
      for (int64_t i = 0; i < len; ++i)
        perm[static_cast<size_t>(job.begin + i)] = static_cast<int64_t>(keyed[static_cast<size_t>(i)] & 0xFFFFFFFFU);
      const int64_t m1 = job.begin + static_cast<int64_t>(lo_eq - kb), m2 = job.begin + static_cast<int64_t>(hi_eq - kb);
      int64_t cut;
      if (m1 == job.begin)
        cut = m2;
      else if (m2 == job.end)
        cut = m1;
      else
        cut = (mid - m1 <= m2 - mid) ? m1 : m2;
      stack.push_back({cut, job.end, id, true});
      stack.push_back({job.begin, cut, id, false});
    }
    pts_.assign(static_cast<size_t>(n * d), C{0});
    ids_.resize(static_cast<size_t>(n));
    leaf_of_.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const int64_t src = perm[static_cast<size_t>(i)];
      const int64_t row = rows[static_cast<size_t>(src)];
      for (int64_t j = 0; j < d; ++j) pts_[static_cast<size_t>(i * d + j)] = cd[static_cast<size_t>(j * n + src)];
      ids_[static_cast<size_t>(i)] = row;
      local_of_row[static_cast<size_t>(row)] = static_cast<int32_t>(i);
    }
    int32_t n_inner = 0;  // internal nodes numbered in node order: their records in pbox_
    for (Node& nd : nodes_)
      if (nd.left >= 0) nd.inner = n_inner++;
    pbox_.assign(static_cast<size_t>(n_inner) * 4 * static_cast<size_t>(d), 0.0);
    for (size_t k = 0; k < nodes_.size(); ++k)
      if (nodes_[k].left < 0)
        for (int32_t i = nodes_[k].begin; i < nodes_[k].end; ++i) leaf_of_[static_cast<size_t>(i)] = static_cast<int32_t>(k);
    refit();
  }

  /// Recompute every node's bounding box over its alive points, bottom up (children follow their parent in
  /// the node array): O(alive * d + nodes * d). A box is stored as the codes holding the smallest and the
  /// largest coordinate per dimension; nodes without alive points keep no box (they are never visited).
  void refit() {
    const auto dd = static_cast<size_t>(d_);
    box_.assign(nodes_.size() * 2 * dd, C{0});
    for (size_t k = nodes_.size(); k-- > 0;) {
      Node& nd = nodes_[k];
      C* lo = box_.data() + k * 2 * dd;
      C* hi = lo + dd;
      if (nd.alive == 0) {
        nd.same = false;
        continue;
      }
      if (nd.left < 0) {
        bool same = true;
        for (size_t j = 0; j < dd; ++j) {
          const C* x = pts_.data() + j;
          const double* v = col_[j];
          C cl = x[static_cast<size_t>(nd.begin) * dd], ch = cl;
          if (monotone_[j]) {  // coordinates non-decreasing in the code: the extreme codes hold the extreme values
            for (int32_t i = nd.begin + 1; i < nd.begin + nd.alive; ++i) {
              const C c = x[static_cast<size_t>(i) * dd];
              cl = std::min(cl, c);
              ch = std::max(ch, c);
            }
            lo[j] = cl;
            hi[j] = ch;
            same = same && v[cl] == v[ch];
            continue;
          }
          double vl = v[cl], vh = vl;
          for (int32_t i = nd.begin + 1; i < nd.begin + nd.alive; ++i) {
            const C c = x[static_cast<size_t>(i) * dd];
            const double w = v[c];
            if (w < vl) {
              vl = w;
              cl = c;
            }
            if (w > vh) {
              vh = w;
              ch = c;
            }
          }
          lo[j] = cl;
          hi[j] = ch;
          same = same && vl == vh;
        }
        nd.same = same;
      } else {
        bool first = true;
        for (const int32_t c : {nd.left, nd.right}) {
          if (nodes_[static_cast<size_t>(c)].alive == 0) continue;
          const C* clo = box_.data() + static_cast<size_t>(c) * 2 * dd;
          const C* chi = clo + dd;
          for (size_t j = 0; j < dd; ++j) {
            if (first || col_[j][clo[j]] < col_[j][lo[j]]) lo[j] = clo[j];
            if (first || col_[j][chi[j]] > col_[j][hi[j]]) hi[j] = chi[j];
          }
          first = false;
        }
      }
    }
    // Children's boxes side by side in their parent's record, as coordinates: for dimension j,
    // (lo_left, lo_right, hi_left, hi_right), so that both distances are computed in one pass.
    // (Records of nodes without alive points are left as they are: never read.)
    constexpr double inf = std::numeric_limits<double>::infinity();
    for (size_t k = 0; k < nodes_.size(); ++k) {
      const Node& nd = nodes_[k];
      if (nd.left < 0 || nd.alive == 0) continue;
      double* out = pbox_.data() + static_cast<size_t>(nd.inner) * 4 * dd;
      const int32_t kids[2] = {nd.left, nd.right};
      for (int side = 0; side < 2; ++side) {
        const auto c = static_cast<size_t>(kids[side]);
        const bool live = nodes_[c].alive > 0;
        const C* clo = box_.data() + c * 2 * dd;
        const C* chi = clo + dd;
        for (size_t j = 0; j < dd; ++j) {
          out[4 * j + static_cast<size_t>(side)] = live ? col_[j][clo[j]] : inf;
          out[4 * j + 2 + static_cast<size_t>(side)] = live ? col_[j][chi[j]] : -inf;
        }
      }
    }
    refit_alive_ = alive();
  }
  int64_t refit_alive() const { return refit_alive_; }

  /// Copy the coordinates of an alive row to out[0, d).
  void point_of_row(int64_t row, double* out) const {
    const int64_t i = local(row);
    for (int64_t j = 0; j < d_; ++j) out[j] = col_[static_cast<size_t>(j)][pts_[static_cast<size_t>(i * d_ + j)]];
  }
  int64_t alive() const { return nodes_.empty() ? 0 : nodes_[0].alive; }
  int64_t built_size() const { return static_cast<int64_t>(ids_.size()); }

  /// Rows still alive, in storage order (deterministic).
  std::vector<int64_t> alive_rows() const {
    std::vector<int64_t> out;
    for (const Node& nd : nodes_)
      if (nd.left < 0)
        for (int32_t i = nd.begin; i < nd.begin + nd.alive; ++i) out.push_back(ids_[static_cast<size_t>(i)]);
    return out;
  }

  void erase_row(int64_t row) {
    const int64_t i = local(row);
    const int32_t leaf = leaf_of_[static_cast<size_t>(i)];
    Node& nd = nodes_[static_cast<size_t>(leaf)];
    const int64_t last = nd.begin + nd.alive - 1;
    if (i != last) {  // move the last alive point of the leaf into the hole
      for (int64_t j = 0; j < d_; ++j)
        std::swap(pts_[static_cast<size_t>(i * d_ + j)], pts_[static_cast<size_t>(last * d_ + j)]);
      std::swap(ids_[static_cast<size_t>(i)], ids_[static_cast<size_t>(last)]);
      (*local_of_row_)[static_cast<size_t>(ids_[static_cast<size_t>(i)])] = static_cast<int32_t>(i);
      (*local_of_row_)[static_cast<size_t>(ids_[static_cast<size_t>(last)])] = static_cast<int32_t>(last);
    }
    for (int32_t k = leaf; k >= 0; k = nodes_[static_cast<size_t>(k)].parent) --nodes_[static_cast<size_t>(k)].alive;
  }

  /// The kk nearest alive points to q as (squared distance, row). Among equal distances the first met in the
  /// tree's deterministic visiting order win.
  void knn(const double* q, int64_t kk, std::vector<Hit>& heap) {
    heap.clear();
    if (kk <= 0 || nodes_.empty() || nodes_[0].alive == 0) return;
    kk_ = kk;
    bound_ = std::numeric_limits<double>::infinity();
    switch (d_) {  // the dimension as a compile-time constant for the common small cases (unrolled loops)
      case 1: visit<1>(0, q, heap); break;
      case 2: visit<2>(0, q, heap); break;
      case 3: visit<3>(0, q, heap); break;
      case 4: visit<4>(0, q, heap); break;
      case 5: visit<5>(0, q, heap); break;
      case 6: visit<6>(0, q, heap); break;
      case 7: visit<7>(0, q, heap); break;
      case 8: visit<8>(0, q, heap); break;
      default: visit<0>(0, q, heap); break;
    }
  }

 private:
  static constexpr int32_t kLeaf = 16;
  static constexpr int64_t kSample = 256;
  struct Node {
    int32_t begin, end;
    int32_t left, right, parent;
    int32_t alive;
    int32_t inner;  // internal nodes: index of the children's boxes in pbox_ (-1 for leaves)
    bool same;
  };
  int64_t local(int64_t row) const { return (*local_of_row_)[static_cast<size_t>(row)]; }
  /// Squared distances from q to the boxes of internal node k's two children (branch-free), each summed
  /// over dimensions in order: s += (max(lo - q, 0) + max(q - hi, 0))^2. D = 0: the runtime dimension d_.
  template <int D>
  void child_dists(int32_t k, const double* q, double& d_left, double& d_right) const {
    const int64_t d = D > 0 ? D : d_;
    const double* bx = pbox_.data() + static_cast<size_t>(nodes_[static_cast<size_t>(k)].inner) * 4 * static_cast<size_t>(d);
#if defined(__SSE2__)
    // Both children in the two lanes: per lane the same operations in the same order as the scalar loop
    // (max(0, x) on SSE returns x for x = -0.0 or NaN, as std::max(x, 0.0) does).
    const __m128d zero = _mm_setzero_pd();
    __m128d s = zero;
    for (int64_t j = 0; j < d; ++j) {
      const __m128d qj = _mm_set1_pd(q[j]);
      const __m128d a = _mm_max_pd(zero, _mm_sub_pd(_mm_loadu_pd(bx + 4 * j), qj));
      const __m128d b = _mm_max_pd(zero, _mm_sub_pd(qj, _mm_loadu_pd(bx + 4 * j + 2)));
      const __m128d t = _mm_add_pd(a, b);
      s = _mm_add_pd(s, _mm_mul_pd(t, t));
    }
    d_left = _mm_cvtsd_f64(s);
    d_right = _mm_cvtsd_f64(_mm_unpackhi_pd(s, s));
#else
    double s0 = 0, s1 = 0;
    for (int64_t j = 0; j < d; ++j) {
      const double t0 = std::max(bx[4 * j] - q[j], 0.0) + std::max(q[j] - bx[4 * j + 2], 0.0);
      const double t1 = std::max(bx[4 * j + 1] - q[j], 0.0) + std::max(q[j] - bx[4 * j + 3], 0.0);
      s0 += t0 * t0;
      s1 += t1 * t1;
    }
    d_left = s0;
    d_right = s1;
#endif
  }
  /// Squared distance from q to the point stored at slot i.
  template <int D>
  double point_dist(int32_t i, const double* q) const {
    const int64_t d = D > 0 ? D : d_;
    const C* x = pts_.data() + static_cast<int64_t>(i) * d;
    double s = 0;
    for (int64_t j = 0; j < d; ++j) {
      const double t = col_[static_cast<size_t>(j)][x[j]] - q[j];
      s += t * t;
    }
    return s;
  }
  static bool closer(const Hit& a, const Hit& b) { return a.first < b.first; }
  /// Offer a candidate at squared distance < bound_ (or while the heap is not full).
  void offer(std::vector<Hit>& heap, const Hit& c) {
    if (static_cast<int64_t>(heap.size()) < kk_) {
      heap.push_back(c);
      std::push_heap(heap.begin(), heap.end(), closer);
    } else {
      std::pop_heap(heap.begin(), heap.end(), closer);
      heap.back() = c;
      std::push_heap(heap.begin(), heap.end(), closer);
    }
    if (static_cast<int64_t>(heap.size()) >= kk_) bound_ = heap.front().first;
  }
  template <int D>
  void visit(int32_t k, const double* q, std::vector<Hit>& heap) {
    const Node& nd = nodes_[static_cast<size_t>(k)];
    if (nd.left < 0) {
      const int32_t end = nd.begin + nd.alive;
      if (nd.same) {  // identical points: one distance, take them in storage order while they improve the heap
        // (the distance to the point equals the distance to its degenerate box, term by term)
        const double s = point_dist<D>(nd.begin, q);
        for (int32_t i = nd.begin; i < end && s < bound_; ++i) offer(heap, {s, ids_[static_cast<size_t>(i)]});
        return;
      }
      for (int32_t i = nd.begin; i < end; ++i) {
        const double s = point_dist<D>(i, q);
        if (s < bound_) offer(heap, {s, ids_[static_cast<size_t>(i)]});
      }
      return;
    }
    // Only alive nodes are visited. The left child is stored right after its parent (depth-first order), and
    // alive(right) = alive(node) - alive(left): the right child's record is not read unless it is visited.
    int32_t first = nd.left, second = nd.right;
    const int32_t left_alive = nodes_[static_cast<size_t>(first)].alive;
    const bool live1 = left_alive > 0, live2 = nd.alive > left_alive;
    double d1, d2;
    child_dists<D>(k, q, d1, d2);
    if (!(live1 && live2)) {  // one child to visit: no order to decide
      if (live1) {
        if (d1 < bound_) visit<D>(first, q, heap);
      } else if (d2 < bound_) {
        visit<D>(second, q, heap);
      }
      return;
    }
    if (d2 < d1) {
      std::swap(first, second);
      std::swap(d1, d2);
    }
    if (d1 < bound_) visit<D>(first, q, heap);
    if (d2 < bound_) visit<D>(second, q, heap);
  }

  int64_t d_ = 0;
  std::vector<int32_t>* local_of_row_ = nullptr;  // slot of every row in its bucket's tree
  std::vector<const double*> col_;  // coordinate table of every dimension (indexed by code)
  std::vector<uint8_t> monotone_;   // per dimension: coordinates non-decreasing in the code
  int64_t kk_ = 0;
  double bound_ = 0;
  std::vector<Node> nodes_;
  std::vector<C> box_, pts_;  // box_: (lo codes, hi codes) per node; pts_[i * d + j]: point codes
  std::vector<double> pbox_;  // per internal node (Node::inner), its children's boxes (see refit)
  std::vector<int64_t> ids_;
  std::vector<int32_t> leaf_of_;
  int64_t refit_alive_ = 0;
};

/// SABRE-KNN with codes of type C (see KdTree).
template <class C>
Status knn_with_codes(const RetrieveInput& in, Matrix<int32_t> codes, const CoordTables& coords,
                      MutSpan<int64_t> labels) {
  using Tree = KdTree<C>;
  BucketPool pool(in, false);
  check_recipes(in, pool);
  const int64_t nb = in.n_buckets, d = codes.cols;
  std::vector<int32_t> local_of_row(static_cast<size_t>(codes.rows), -1);
  // Value rank of every code's coordinate within its dimension (the k-d tree's integer sort keys).
  std::vector<uint32_t> rank(static_cast<size_t>(coords.offsets[d]), 0);
  for (int64_t j = 0; j < d; ++j) {
    const int64_t o = coords.offsets[j], len = coords.offsets[j + 1] - o;
    std::vector<int64_t> idx(static_cast<size_t>(len));
    std::iota(idx.begin(), idx.end(), int64_t{0});
    std::sort(idx.begin(), idx.end(), [&](int64_t x, int64_t y) { return coords.values[o + x] < coords.values[o + y]; });
    uint32_t r = 0;
    for (int64_t i = 0; i < len; ++i) {
      if (i > 0 && coords.values[o + idx[static_cast<size_t>(i - 1)]] < coords.values[o + idx[static_cast<size_t>(i)]]) ++r;
      rank[static_cast<size_t>(o + idx[static_cast<size_t>(i)])] = r;
    }
  }
  // One tree per bucket, built in parallel (each row belongs to one bucket, so the trees write disjoint
  // entries of local_of_row; the result does not depend on the thread count).
  std::vector<Tree> trees(static_cast<size_t>(nb));
  parallel_chunks(nb, 1, in.n_threads, [&](int64_t, int64_t b0, int64_t b1) {
    std::vector<int64_t> rows;
    for (int64_t b = b0; b < b1; ++b) {
      rows.clear();
      for (int64_t p = pool.begin(b); p < pool.end(b); ++p) rows.push_back(pool.row(p));
      trees[static_cast<size_t>(b)] = Tree(rows, codes, coords, rank, d, local_of_row);
    }
  });
  // Deleted points leave the bounding boxes loose; rebuild a bucket's tree over its remaining points when
  // fewer than half of the points it was built on are alive (amortised O(n log n) in total).
  auto maybe_rebuild = [&](int64_t b) {
    Tree& tree = trees[static_cast<size_t>(b)];
    if (tree.alive() >= 32 && 4 * tree.alive() < 3 * tree.refit_alive()) tree.refit();
    if (tree.alive() >= 32 && 8 * tree.alive() < tree.built_size())
      tree = Tree(tree.alive_rows(), codes, coords, rank, d, local_of_row);
  };
  Rng rng(in.seed);
  std::vector<int64_t> eligible;
  std::vector<std::vector<typename Tree::Hit>> heaps(static_cast<size_t>(nb));
  std::vector<double> q(static_cast<size_t>(std::max<int64_t>(d, 1)));
  for (int64_t e = 0; e < in.leaves.rows; ++e) {
    if ((e & 0x3FF) == 0 && interrupted(in.interrupt)) return Status::Interrupted;
    const int64_t* a = in.leaves.row(e);
    const auto [px, bx] = pick_seed(pool, a, nb, in.policy, rng, eligible);
    const int64_t xrow = pool.row(px);
    trees[static_cast<size_t>(bx)].point_of_row(xrow, q.data());
    labels[xrow] = e;
    pool.kill(px, bx);
    trees[static_cast<size_t>(bx)].erase_row(xrow);
    // Buckets are independent within one EC: query (and delete from) every bucket's tree, then update the
    // shared pool in bucket order. (Running the buckets in parallel was measured slower: one parallel region
    // per EC costs more than the queries on a loaded machine.)
    for (int64_t b = 0; b < nb; ++b) {
      auto& heap = heaps[static_cast<size_t>(b)];
      heap.clear();
      const int64_t need = a[b] - (b == bx ? 1 : 0);
      if (need > 0) {
        Tree& tree = trees[static_cast<size_t>(b)];
        tree.knn(q.data(), need, heap);
        if (static_cast<int64_t>(heap.size()) != need) throw InternalError("bucket exhausted during kNN retrieval");
        for (const auto& h : heap) tree.erase_row(h.second);
      }
      maybe_rebuild(b);
    }
    for (int64_t b = 0; b < nb; ++b)
      for (const auto& h : heaps[static_cast<size_t>(b)]) {
        labels[h.second] = e;
        pool.kill(pool.pos_of_row(h.second), b);
      }
  }
  return Status::Ok;
}

}  // namespace

Status retrieve_hilbert(const RetrieveInput& in, MutSpan<int64_t> labels) {
  BucketPool pool(in);
  check_recipes(in, pool);
  const int64_t nb = in.n_buckets;
  Rng rng(in.seed);
  std::vector<int64_t> eligible;
  for (int64_t e = 0; e < in.leaves.rows; ++e) {
    if ((e & 0x3FFF) == 0 && interrupted(in.interrupt)) return Status::Interrupted;
    const int64_t* a = in.leaves.row(e);
    const auto [px, bx] = pick_seed(pool, a, nb, in.policy, rng, eligible);
    const uint64_t hx = pool.key(px);
    for (int64_t b = 0; b < nb; ++b) {
      int64_t need = a[b];
      if (need <= 0) continue;
      const int64_t lo = pool.begin(b), hi = pool.end(b);
      int64_t L, R;
      if (b == bx) {
        labels[pool.row(px)] = e;
        pool.kill(px, b);
        --need;
        L = pool.prev_alive(px - 1);
        R = pool.next_alive(px + 1);
      } else {
        const uint64_t* kb = nullptr;
        (void)kb;
        // Binary search over the bucket's keys (dead positions included: their keys are still sorted).
        int64_t first = lo, count = hi - lo;
        while (count > 0) {
          const int64_t step = count / 2, mid = first + step;
          if (pool.key(mid) < hx) {
            first = mid + 1;
            count -= step + 1;
          } else {
            count = step;
          }
        }
        R = pool.next_alive(first);
        L = pool.prev_alive(first - 1);
      }
      while (need > 0) {
        const bool has_l = L >= lo, has_r = R < hi;
        if (!has_l && !has_r) throw InternalError("bucket exhausted during retrieval");
        if (has_l && (!has_r || hx - pool.key(L) <= pool.key(R) - hx)) {
          labels[pool.row(L)] = e;
          pool.kill(L, b);
          L = pool.prev_alive(L - 1);
        } else {
          labels[pool.row(R)] = e;
          pool.kill(R, b);
          R = pool.next_alive(R + 1);
        }
        --need;
      }
    }
  }
  return Status::Ok;
}

Status retrieve_slices(const RetrieveInput& in, MutSpan<int64_t> labels) {
  BucketPool pool(in);
  check_recipes(in, pool);
  const int64_t nb = in.n_buckets;
  std::vector<int64_t> next(static_cast<size_t>(nb));
  for (int64_t b = 0; b < nb; ++b) next[static_cast<size_t>(b)] = pool.begin(b);
  for (int64_t e = 0; e < in.leaves.rows; ++e)
    for (int64_t b = 0; b < nb; ++b)
      for (int64_t i = 0; i < in.leaves(e, b); ++i) labels[pool.row(next[static_cast<size_t>(b)]++)] = e;
  return Status::Ok;
}

Status retrieve_knn(const RetrieveInput& in, Matrix<int32_t> codes, const CoordTables& coords,
                    MutSpan<int64_t> labels) {
  // The narrowest code type for the trees: every code of dimension j is below its cardinality.
  int64_t max_card = 0;
  for (int64_t j = 0; j < codes.cols; ++j) max_card = std::max(max_card, coords.offsets[j + 1] - coords.offsets[j]);
  if (max_card <= (int64_t{1} << 8)) return knn_with_codes<uint8_t>(in, codes, coords, labels);
  if (max_card <= (int64_t{1} << 16)) return knn_with_codes<uint16_t>(in, codes, coords, labels);
  return knn_with_codes<uint32_t>(in, codes, coords, labels);
}

}  // namespace anoncore::twophase
