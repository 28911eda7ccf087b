#include "anoncore/twophase/retrieve.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <limits>
#include <memory>
#include <numeric>
#include <thread>

#include "anoncore/core/parallel.hpp"
#include "anoncore/core/rng.hpp"
#include "anoncore/knn/kdtree.hpp"

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
                         core::RawVec<int64_t>& rows_out, core::RawVec<uint64_t>& keys_out) {
  const int64_t n = bucket_of_row.size;
  const auto un = static_cast<size_t>(n);
  // (not zeroed: the first pass below writes ka and ra, each counting pass all of kb and rb)
  core::RawVec<uint64_t> ka(un), kb(un);
  core::RawVec<int64_t> ra(un), rb(un);
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

/// Alive positions 0..n-1 of one bucket, for a uniform choice among the remaining ones: an alive bit per
/// position and a Fenwick tree over the alive counts of 64-position words (small enough to stay in cache).
/// One per bucket, so that threads owning different buckets never share a word.
class AliveSet {
 public:
  explicit AliveSet(int64_t n = 0) {
    const auto un = static_cast<size_t>(n);
    const size_t n_words = (un + 63) / 64;
    alive_.assign(n_words, ~uint64_t{0});
    if (un % 64 != 0) alive_[n_words - 1] = (uint64_t{1} << (un % 64)) - 1;
    fen_.assign(n_words + 1, 0);
    for (size_t i = 1; i <= n_words; ++i) {
      fen_[i] += popcount64(alive_[i - 1]);
      const size_t j = i + (i & (~i + 1));
      if (j <= n_words) fen_[j] += fen_[i];
    }
    log_ = 1;
    while ((size_t{1} << log_) <= n_words) ++log_;
  }
  void kill(int64_t p) {
    alive_[static_cast<size_t>(p >> 6)] &= ~(uint64_t{1} << (p & 63));
    for (auto i = static_cast<size_t>((p >> 6) + 1); i < fen_.size(); i += i & (~i + 1)) fen_[i] -= 1;
  }
  /// Position of the r-th (0-based) alive position.
  int64_t kth(int64_t r) const {
    int64_t want = r + 1;
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
  std::vector<uint64_t> alive_;  // bit p % 64 of word p / 64 is set while position p is alive
  std::vector<int64_t> fen_;
  int log_ = 1;
};

/// Tuples of every bucket in (key, row) order with deletion: next/previous-alive links (path halving) for the
/// neighbour walks, bounded to the bucket so that a walk never reads or writes another bucket's links, and an
/// AliveSet per bucket for the uniform choice of a remaining tuple. Everything a bucket's operations touch
/// belongs to that bucket: buckets can be worked on by different threads.
class BucketPool {
 public:
  /// `links`: keep the next/previous-alive links (the Hilbert neighbour walks); without them, kills only
  /// update the alive sets (SABRE-KNN).
  explicit BucketPool(const RetrieveInput& in, bool links = true)
      : n_(in.bucket_of_row.size), nb_(in.n_buckets), links_(links) {
    const auto n = static_cast<size_t>(n_);
    off_.assign(static_cast<size_t>(nb_ + 1), 0);
    for (int64_t r = 0; r < n_; ++r) ++off_[static_cast<size_t>(in.bucket_of_row[r]) + 1];
    for (int64_t b = 0; b < nb_; ++b) off_[static_cast<size_t>(b + 1)] += off_[static_cast<size_t>(b)];
    // Every bucket sorted by (key, row): a total order, so the result does not depend on the sort
    // implementation or the number of threads (the radix passes run over fixed chunks).
    sort_bucket_key_row(in.bucket_of_row, nb_, in.keys, in.n_threads, rows_, keys_);
    pos_.resize(n);
    if (links_) {
      nxt_.resize(n + 1);
      prv_.resize(n + 1);
      nxt_[n] = prv_[n] = n_;
    }
    parallel_chunks(n_, kSortChunk, in.n_threads, [&](int64_t, int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        pos_[static_cast<size_t>(rows_[static_cast<size_t>(p)])] = p;
        if (links_) nxt_[static_cast<size_t>(p)] = prv_[static_cast<size_t>(p)] = p;
      }
    });
    remaining_.resize(static_cast<size_t>(nb_));
    sets_.reserve(static_cast<size_t>(nb_));
    for (int64_t b = 0; b < nb_; ++b) {
      remaining_[static_cast<size_t>(b)] = size(b);
      sets_.emplace_back(size(b));
    }
  }

  int64_t n_buckets() const { return nb_; }
  int64_t begin(int64_t b) const { return off_[static_cast<size_t>(b)]; }
  int64_t end(int64_t b) const { return off_[static_cast<size_t>(b + 1)]; }
  int64_t size(int64_t b) const { return end(b) - begin(b); }
  int64_t size_all() const { return n_; }
  int64_t remaining(int64_t b) const { return remaining_[static_cast<size_t>(b)]; }
  int64_t row(int64_t p) const { return rows_[static_cast<size_t>(p)]; }
  uint64_t key(int64_t p) const { return keys_[static_cast<size_t>(p)]; }
  int64_t pos_of_row(int64_t r) const { return pos_[static_cast<size_t>(r)]; }

  /// First alive position >= p, or hi if there is none below hi (p and hi within one bucket's range).
  int64_t next_alive(int64_t p, int64_t hi) {
    while (p < hi && nxt_[static_cast<size_t>(p)] != p) {
      const int64_t q = nxt_[static_cast<size_t>(p)];
      if (q >= hi) return hi;
      nxt_[static_cast<size_t>(p)] = nxt_[static_cast<size_t>(q)];
      p = nxt_[static_cast<size_t>(p)];
    }
    return std::min(p, hi);
  }
  /// Last alive position <= p, or lo - 1 if there is none from lo on.
  int64_t prev_alive(int64_t p, int64_t lo) {
    int64_t q = p + 1;  // prv_ is shifted by one: index q stands for position q - 1
    const int64_t qlo = lo + 1;
    while (q >= qlo && prv_[static_cast<size_t>(q)] != q) {
      const int64_t r = prv_[static_cast<size_t>(q)];
      if (r < qlo) return lo - 1;
      prv_[static_cast<size_t>(q)] = prv_[static_cast<size_t>(r)];
      q = prv_[static_cast<size_t>(q)];
    }
    return std::max(q, qlo - 1) - 1;
  }
  /// First alive position of bucket b (which has remaining tuples).
  int64_t first_alive(int64_t b) { return links_ ? next_alive(begin(b), end(b)) : kth_alive(b, 0); }
  void kill(int64_t p, int64_t b) {
    if (links_) {
      nxt_[static_cast<size_t>(p)] = p + 1;
      prv_[static_cast<size_t>(p + 1)] = p;
    }
    sets_[static_cast<size_t>(b)].kill(p - begin(b));
    --remaining_[static_cast<size_t>(b)];
  }
  /// Position of the r-th (0-based) remaining tuple of bucket b.
  int64_t kth_alive(int64_t b, int64_t r) const { return begin(b) + sets_[static_cast<size_t>(b)].kth(r); }

 private:
  int64_t n_, nb_;
  bool links_;
  std::vector<int64_t> off_, remaining_;
  core::RawVec<int64_t> rows_, pos_, nxt_, prv_;  // (every entry written by the constructor's parallel pass)
  core::RawVec<uint64_t> keys_;
  std::vector<AliveSet> sets_;
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

// ------------------------------------------------------------------ bucket-parallel retrieval (Random seeds)
// With random seeds, what an EC does in one bucket depends only on that bucket's earlier operations and on the
// EC's seed: the seeds' buckets and ranks among the remaining tuples are drawn up front (the remaining counts
// follow from the recipes), every bucket gets one owning thread, and the owner of an EC's seed bucket hands the
// seed to the others. Each bucket sees the same operations in the same order as in the serial loop, so the
// labels are the same for any thread count. (MinKey compares every bucket's first tuple: serial.)

/// Threads for the bucket-parallel retrieval (1: the serial loop): at most one per bucket and per core the
/// process may use, and per core the machine leaves idle (the owners hand seeds to each other every EC: more
/// threads than cores, or an owner descheduled by another process, would mostly wait; measured 0.6x at 2
/// threads on a 2-core machine at load 3).
int bucket_threads(const RetrieveInput& in) {
  if (in.policy != SeedPolicy::Random || in.n_buckets < 2 || in.leaves.rows < 2) return 1;
  const int64_t cap = load_aware_enabled() ? idle_cores() : available_cores();
  const int64_t t = std::min<int64_t>(resolve_threads(in.n_threads), cap);
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(t, in.n_buckets)));
}

/// The Random policy's seeds in EC order, drawn exactly as pick_seed draws them: (bucket, rank of the seed
/// among the bucket's remaining tuples).
std::vector<std::pair<int64_t, int64_t>> random_seeds(const RetrieveInput& in, const BucketPool& pool) {
  const int64_t nb = in.n_buckets;
  std::vector<int64_t> remaining(static_cast<size_t>(nb)), eligible;
  for (int64_t b = 0; b < nb; ++b) remaining[static_cast<size_t>(b)] = pool.remaining(b);
  Rng rng(in.seed);
  std::vector<std::pair<int64_t, int64_t>> out(static_cast<size_t>(in.leaves.rows));
  for (int64_t e = 0; e < in.leaves.rows; ++e) {
    const int64_t* a = in.leaves.row(e);
    eligible.clear();
    for (int64_t b = 0; b < nb; ++b)
      if (a[b] > 0 && remaining[static_cast<size_t>(b)] > 0) eligible.push_back(b);
    if (eligible.empty()) throw InternalError("EC recipe without remaining tuples");
    const int64_t b = eligible[static_cast<size_t>(rng.below(static_cast<uint64_t>(eligible.size())))];
    const auto r = static_cast<int64_t>(rng.below(static_cast<uint64_t>(remaining[static_cast<size_t>(b)])));
    out[static_cast<size_t>(e)] = {b, r};
    for (int64_t k = 0; k < nb; ++k) remaining[static_cast<size_t>(k)] -= a[k];
  }
  return out;
}

/// Seeds handed from their bucket's owner to the other threads: the owner writes the seed's data, then
/// publishes (release); the others wait (acquire). `abort` stops every waiter (an exception or an interrupt).
class SeedBoard {
 public:
  explicit SeedBoard(int64_t n) : ready_(new std::atomic<uint8_t>[static_cast<size_t>(n)]) {
    for (int64_t e = 0; e < n; ++e) ready_[static_cast<size_t>(e)].store(0, std::memory_order_relaxed);
  }
  void publish(int64_t e) { ready_[static_cast<size_t>(e)].store(1, std::memory_order_release); }
  bool wait(int64_t e) const {
    for (int spins = 0; ready_[static_cast<size_t>(e)].load(std::memory_order_acquire) == 0; ++spins) {
      if (abort.load(std::memory_order_relaxed)) return false;
      if (spins >= 256) std::this_thread::yield();
    }
    return true;
  }
  std::atomic<bool> abort{false};
  std::atomic<bool> interrupted_{false};

 private:
  std::unique_ptr<std::atomic<uint8_t>[]> ready_;
};

/// Runs body(t, T, mine) on up to `threads` threads, where `mine` lists the buckets thread t owns (buckets
/// dealt largest first to the least loaded owner, owners folded onto the T threads the runtime gives). The
/// first exception aborts the board and is rethrown after the join.
template <class Body>
void run_bucket_owners(const BucketPool& pool, int threads, SeedBoard& board, Body&& body) {
  const int64_t nb = pool.n_buckets();
  std::vector<int64_t> order(static_cast<size_t>(nb)), load(static_cast<size_t>(threads), 0),
      owner(static_cast<size_t>(nb), 0);
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return pool.size(x) > pool.size(y); });
  for (int64_t b : order) {
    const auto t = std::min_element(load.begin(), load.end()) - load.begin();
    owner[static_cast<size_t>(b)] = t;
    load[static_cast<size_t>(t)] += pool.size(b) + 1;
  }
  std::exception_ptr error = nullptr;
  auto run = [&](int t, int T) {
    std::vector<int64_t> mine;
    for (int64_t b = 0; b < nb; ++b)
      if (owner[static_cast<size_t>(b)] % T == t) mine.push_back(b);
    try {
      body(t, mine);
    } catch (...) {
#ifdef ANONCORE_HAVE_OPENMP
#pragma omp critical(anoncore_retrieve_error)
#endif
      {
        if (!error) error = std::current_exception();
      }
      board.abort.store(true);
    }
  };
#ifdef ANONCORE_HAVE_OPENMP
#pragma omp parallel num_threads(threads)
  run(omp_get_thread_num(), omp_get_num_threads());
#else
  run(0, 1);
#endif
  if (error) std::rethrow_exception(error);
}

/// Thread 0 polls the interrupt hook every 1024 ECs (it is the calling thread, which may take the GIL).
inline bool stop_here(const RetrieveInput& in, SeedBoard& board, int t, int64_t e) {
  if (board.abort.load(std::memory_order_relaxed)) return true;
  if (t == 0 && (e & 0x3FF) == 0 && interrupted(in.interrupt)) {
    board.interrupted_.store(true);
    board.abort.store(true);
    return true;
  }
  return false;
}

/// SABRE-KNN's state with codes of type C (see knn::KdTree): the pool and one k-d tree per bucket.
template <class C>
struct KnnState {
  using Tree = knn::KdTree<C>;
  BucketPool pool;
  Matrix<int32_t> codes;
  const CoordTables& coords;
  int64_t d;
  std::vector<int32_t> local_of_row;
  std::vector<uint32_t> rank;
  std::vector<Tree> trees;

  KnnState(const RetrieveInput& in, Matrix<int32_t> codes_, const CoordTables& coords_)
      : pool(in, false), codes(codes_), coords(coords_), d(codes_.cols),
        local_of_row(static_cast<size_t>(codes_.rows), -1) {
    check_recipes(in, pool);
    // Value rank of every code's coordinate within its dimension (the k-d tree's integer sort keys).
    rank.assign(static_cast<size_t>(coords.offsets[d]), 0);
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
    build_trees(in);
  }

  /// One tree per bucket (each row belongs to one bucket, so the trees write disjoint entries of local_of_row;
  /// a tree does not depend on the thread count), in three parallel passes: every bucket's codes gathered and
  /// its tree split, largest bucket first (a bucket of more than a thread's share of the rows only down to its
  /// deferred subtrees); the deferred subtrees of all such trees; their points stored. A bucket's rows are
  /// held only while its tree is built.
  void build_trees(const RetrieveInput& in) {
    const int64_t nb = in.n_buckets;
    const int threads = resolve_threads(in.n_threads);
    std::vector<int64_t> order(static_cast<size_t>(nb));
    std::iota(order.begin(), order.end(), int64_t{0});
    std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return pool.size(x) > pool.size(y); });
    std::vector<std::vector<int64_t>> rows(static_cast<size_t>(nb));
    std::vector<uint8_t> big(static_cast<size_t>(nb), 0);
    for (int64_t b = 0; b < nb; ++b) {
      const int64_t size = pool.size(b);
      big[static_cast<size_t>(b)] = threads > 1 && size * threads > pool.size_all() && size >= Tree::kParallelRows;
      trees.emplace_back(coords, rank, d, local_of_row);
    }
    parallel_chunks(nb, 1, in.n_threads, [&](int64_t, int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k) {
        const int64_t b = order[static_cast<size_t>(k)];
        const auto ub = static_cast<size_t>(b);
        for (int64_t p = pool.begin(b); p < pool.end(b); ++p) rows[ub].push_back(pool.row(p));
        trees[ub].begin_build(rows[ub], codes, big[ub] != 0);
        if (big[ub]) continue;
        trees[ub].end_build(1);
        std::vector<int64_t>().swap(rows[ub]);
      }
    });
    std::vector<std::pair<size_t, int64_t>> parts;  // (bucket, deferred subtree)
    for (size_t b = 0; b < trees.size(); ++b)
      for (int64_t k = 0; big[b] && k < trees[b].n_deferred(); ++k) parts.emplace_back(b, k);
    parallel_chunks(static_cast<int64_t>(parts.size()), 1, in.n_threads, [&](int64_t, int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k) {
        const auto [b, sub] = parts[static_cast<size_t>(k)];
        trees[b].build_deferred(sub);
      }
    });
    for (size_t b = 0; b < trees.size(); ++b) {
      if (!big[b]) continue;
      trees[b].end_build(threads);
      std::vector<int64_t>().swap(rows[b]);
    }
  }

  /// Deleted points leave the bounding boxes loose; rebuild a bucket's tree over its remaining points when
  /// fewer than half of the points it was built on are alive (amortised O(n log n) in total).
  void maybe_rebuild(int64_t b) {
    Tree& tree = trees[static_cast<size_t>(b)];
    if (tree.alive() >= 32 && 4 * tree.alive() < 3 * tree.refit_alive()) tree.refit();
    if (tree.alive() >= 32 && 8 * tree.alive() < tree.built_size())
      tree = Tree(tree.alive_rows(), codes, coords, rank, d, local_of_row);
  }

  /// The `need` nearest remaining tuples of bucket b to q, deleted from its tree (the pool is updated by
  /// commit, after every bucket of the EC, as the serial loop always did).
  void query(int64_t b, const double* q, int64_t need, std::vector<typename Tree::Hit>& heap) {
    heap.clear();
    if (need <= 0) return;
    Tree& tree = trees[static_cast<size_t>(b)];
    tree.knn(q, need, heap);
    if (static_cast<int64_t>(heap.size()) != need) throw InternalError("bucket exhausted during kNN retrieval");
    for (const auto& h : heap) tree.erase_row(h.second);
  }
  void commit(int64_t b, int64_t e, const std::vector<typename Tree::Hit>& heap, MutSpan<int64_t> labels) {
    for (const auto& h : heap) {
      labels[h.second] = e;
      pool.kill(pool.pos_of_row(h.second), b);
    }
  }
  /// The seed of EC e at position px of bucket bx: its point into q, labelled and deleted.
  void take_seed(int64_t px, int64_t bx, int64_t e, double* q, MutSpan<int64_t> labels) {
    const int64_t xrow = pool.row(px);
    trees[static_cast<size_t>(bx)].point_of_row(xrow, q);
    labels[xrow] = e;
    pool.kill(px, bx);
    trees[static_cast<size_t>(bx)].erase_row(xrow);
  }
};

template <class C>
Status knn_serial(const RetrieveInput& in, KnnState<C>& s, MutSpan<int64_t> labels) {
  const int64_t nb = in.n_buckets;
  Rng rng(in.seed);
  std::vector<int64_t> eligible;
  std::vector<std::vector<typename KnnState<C>::Tree::Hit>> heaps(static_cast<size_t>(nb));
  std::vector<double> q(static_cast<size_t>(std::max<int64_t>(s.d, 1)));
  for (int64_t e = 0; e < in.leaves.rows; ++e) {
    if ((e & 0x3FF) == 0 && interrupted(in.interrupt)) return Status::Interrupted;
    const int64_t* a = in.leaves.row(e);
    const auto [px, bx] = pick_seed(s.pool, a, nb, in.policy, rng, eligible);
    s.take_seed(px, bx, e, q.data(), labels);
    // Buckets are independent within one EC: query (and delete from) every bucket's tree, then update the
    // pool in bucket order.
    for (int64_t b = 0; b < nb; ++b) {
      s.query(b, q.data(), a[b] - (b == bx ? 1 : 0), heaps[static_cast<size_t>(b)]);
      s.maybe_rebuild(b);
    }
    for (int64_t b = 0; b < nb; ++b) s.commit(b, e, heaps[static_cast<size_t>(b)], labels);
  }
  return Status::Ok;
}

/// SABRE-KNN with one owning thread per bucket (see "bucket-parallel retrieval" above). A bucket untouched by
/// an EC is not revisited: its rebuild test would see the same counts as after its last change.
template <class C>
Status knn_parallel(const RetrieveInput& in, KnnState<C>& s, int threads, MutSpan<int64_t> labels) {
  const auto seeds = random_seeds(in, s.pool);
  const int64_t n_ecs = in.leaves.rows, stride = std::max<int64_t>(s.d, 1);
  std::vector<double> seed_q(static_cast<size_t>(n_ecs * stride));
  SeedBoard board(n_ecs);
  run_bucket_owners(s.pool, threads, board, [&](int t, const std::vector<int64_t>& mine) {
    std::vector<uint8_t> is_mine(static_cast<size_t>(in.n_buckets), 0);
    for (int64_t b : mine) is_mine[static_cast<size_t>(b)] = 1;
    std::vector<typename KnnState<C>::Tree::Hit> heap;
    for (int64_t e = 0; e < n_ecs; ++e) {
      if (stop_here(in, board, t, e)) return;
      const int64_t* a = in.leaves.row(e);
      const auto [sb, r] = seeds[static_cast<size_t>(e)];
      double* q = seed_q.data() + e * stride;
      if (is_mine[static_cast<size_t>(sb)]) {
        const int64_t px = s.pool.kth_alive(sb, r);
        s.trees[static_cast<size_t>(sb)].point_of_row(s.pool.row(px), q);
        board.publish(e);
        s.take_seed(px, sb, e, q, labels);
        s.query(sb, q, a[sb] - 1, heap);
        s.maybe_rebuild(sb);
        s.commit(sb, e, heap, labels);
      }
      for (int64_t b : mine) {
        if (b == sb || a[b] <= 0) continue;
        if (!board.wait(e)) return;
        s.query(b, q, a[b], heap);
        s.maybe_rebuild(b);
        s.commit(b, e, heap, labels);
      }
    }
  });
  return board.interrupted_.load() ? Status::Interrupted : Status::Ok;
}

template <class C>
Status knn_with_codes(const RetrieveInput& in, Matrix<int32_t> codes, const CoordTables& coords,
                      MutSpan<int64_t> labels) {
  KnnState<C> s(in, codes, coords);
  const int threads = bucket_threads(in);
  return threads > 1 ? knn_parallel(in, s, threads, labels) : knn_serial(in, s, labels);
}

/// SABRE-AK / BUREL's walk in bucket b for EC e: take `need` remaining tuples nearest to the seed's key hx
/// (px: the seed's position when b is the seed's bucket, already taken; else -1).
void hilbert_walk(BucketPool& pool, int64_t b, int64_t need, int64_t px, uint64_t hx, int64_t e,
                  MutSpan<int64_t> labels) {
  const int64_t lo = pool.begin(b), hi = pool.end(b);
  int64_t L, R;
  if (px >= 0) {
    L = pool.prev_alive(px - 1, lo);
    R = pool.next_alive(px + 1, hi);
  } else {
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
    R = pool.next_alive(first, hi);
    L = pool.prev_alive(first - 1, lo);
  }
  while (need > 0) {
    const bool has_l = L >= lo, has_r = R < hi;
    if (!has_l && !has_r) throw InternalError("bucket exhausted during retrieval");
    if (has_l && (!has_r || hx - pool.key(L) <= pool.key(R) - hx)) {
      labels[pool.row(L)] = e;
      pool.kill(L, b);
      L = pool.prev_alive(L - 1, lo);
    } else {
      labels[pool.row(R)] = e;
      pool.kill(R, b);
      R = pool.next_alive(R + 1, hi);
    }
    --need;
  }
}

/// SABRE-AK / BUREL with one owning thread per bucket.
Status hilbert_parallel(const RetrieveInput& in, BucketPool& pool, int threads, MutSpan<int64_t> labels) {
  const auto seeds = random_seeds(in, pool);
  const int64_t n_ecs = in.leaves.rows;
  std::vector<int64_t> seed_pos(static_cast<size_t>(n_ecs), -1);
  SeedBoard board(n_ecs);
  run_bucket_owners(pool, threads, board, [&](int t, const std::vector<int64_t>& mine) {
    std::vector<uint8_t> is_mine(static_cast<size_t>(in.n_buckets), 0);
    for (int64_t b : mine) is_mine[static_cast<size_t>(b)] = 1;
    for (int64_t e = 0; e < n_ecs; ++e) {
      if (stop_here(in, board, t, e)) return;
      const int64_t* a = in.leaves.row(e);
      const auto [sb, r] = seeds[static_cast<size_t>(e)];
      if (is_mine[static_cast<size_t>(sb)]) {
        const int64_t px = pool.kth_alive(sb, r);
        seed_pos[static_cast<size_t>(e)] = px;
        board.publish(e);
        labels[pool.row(px)] = e;
        pool.kill(px, sb);
        hilbert_walk(pool, sb, a[sb] - 1, px, pool.key(px), e, labels);
      }
      for (int64_t b : mine) {
        if (b == sb || a[b] <= 0) continue;
        if (!board.wait(e)) return;
        hilbert_walk(pool, b, a[b], -1, pool.key(seed_pos[static_cast<size_t>(e)]), e, labels);
      }
    }
  });
  return board.interrupted_.load() ? Status::Interrupted : Status::Ok;
}

}  // namespace

Status retrieve_hilbert(const RetrieveInput& in, MutSpan<int64_t> labels) {
  BucketPool pool(in);
  check_recipes(in, pool);
  const int threads = bucket_threads(in);
  if (threads > 1) return hilbert_parallel(in, pool, threads, labels);
  const int64_t nb = in.n_buckets;
  Rng rng(in.seed);
  std::vector<int64_t> eligible;
  for (int64_t e = 0; e < in.leaves.rows; ++e) {
    if ((e & 0x3FFF) == 0 && interrupted(in.interrupt)) return Status::Interrupted;
    const int64_t* a = in.leaves.row(e);
    const auto [px, bx] = pick_seed(pool, a, nb, in.policy, rng, eligible);
    const uint64_t hx = pool.key(px);
    for (int64_t b = 0; b < nb; ++b) {
      if (a[b] <= 0) continue;
      if (b == bx) {
        labels[pool.row(px)] = e;
        pool.kill(px, b);
        hilbert_walk(pool, b, a[b] - 1, px, hx, e, labels);
      } else {
        hilbert_walk(pool, b, a[b], -1, hx, e, labels);
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
