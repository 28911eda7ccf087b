// Exact k nearest neighbours over a blocked index with bounding boxes: CASTLE's split^k rounds when every bucket
// holds one tuple (see knn/singleton_knn.hpp).
#include "anoncore/knn/singleton_knn.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>

#include "anoncore/core/clones.hpp"

namespace anoncore::knn {

namespace {

/// split^k: the distances IL({x, y}) of the points of one block (numeric terms in dimension order, then the
/// categorical terms in order, then the 1/d factor: the operations of il_of_bounds for a two-point box), left in
/// `acc`, and the in-block offsets of the alive points whose distance is not above `thr`, compacted into `out`
/// (branch-free). Columns are dimension-major with row stride `stride`.
ANONCORE_CLONES size_t block_candidates(double* __restrict acc, uint32_t* __restrict out, size_t nq, size_t stride,
                                        size_t dn, size_t dc, const double* __restrict cols,
                                        const int32_t* __restrict codes, const uint8_t* __restrict alive,
                                        const double* v, const double* w, const double* const* rows, double inv_d,
                                        double thr) {
  // numeric terms; the first one is stored directly (0.0 + t == t for the non-negative t)
  if (dn == 0) {
    for (size_t i = 0; i < nq; ++i) acc[i] = 0.0;
  }
  for (size_t j = 0; j < dn; ++j) {
    const double* __restrict col = cols + j * stride;
    const double vj = v[j], wj = w[j];
    if (j == 0) {
      for (size_t i = 0; i < nq; ++i) acc[i] = std::fabs(col[i] - vj) * wj;
    } else {
      for (size_t i = 0; i < nq; ++i) acc[i] += std::fabs(col[i] - vj) * wj;
    }
  }
  for (size_t j = 0; j < dc; ++j) {
    const int32_t* __restrict col = codes + j * stride;
    const double* __restrict row = rows[j];
    for (size_t i = 0; i < nq; ++i) acc[i] += row[col[i]];
  }
  // the hits as a bit mask (nq <= 32), then its set bits in order
  uint32_t mask = 0;
  for (size_t i = 0; i < nq; ++i) {
    const double d = acc[i] * inv_d;
    acc[i] = d;
    mask |= static_cast<uint32_t>(!(d > thr) & (alive[i] != 0)) << i;
  }
  size_t c = 0;
  for (; mask != 0; mask &= mask - 1) out[c++] = static_cast<uint32_t>(__builtin_ctz(mask));
  return c;
}

/// split^k rounds (spec §2.8 steps 3-20) when every bucket holds one tuple (one tuple per person), over a flat
/// index: the points are sorted by top-group vector and categorical vector (then index; or by categorical vector
/// and first numeric value when the codes do not pack) and cut into blocks of kBlock points with their bounding
/// boxes. A round computes, per block, a lower bound of IL({x, y}) over the box (the same sum of per-dimension
/// terms, each term no larger than any member's, and floating-point rounding is monotone, so the bound never
/// exceeds a member's computed distance), evaluates the blocks of smallest bounds first, then every other block
/// whose bound does not exceed the (k-1)-th best. The k-1 nearest are the smallest by (distance, bucket rank), a
/// total order, so the result is independent of the visiting order (and of the index order and the thread count)
/// and equal to the brute-force heap scan over phi: bit-identical distances (same operations in the same order)
/// and the same random draws. Cost per round O(n_blocks * d + evaluated points * d).
struct SingletonKnn {
  size_t n, dn, dc, k;
  const double* X;   // (n, dn) row-major, local index = bucket rank
  const int32_t* Y;  // (n, dc)
  const double* inv;                 // 1 / (U - L) per numeric dimension
  const std::vector<const double*>& tab;  // (L x L) IL tables per categorical dimension
  const std::vector<size_t>& L;
  const std::vector<std::vector<int32_t>>& top;  // per categorical dimension: leaf -> top-group rank
  double inv_d;
  int threads;
  static constexpr size_t kBlock = 32;
  static constexpr size_t kParMinBlocks = 64;  // rounds over fewer blocks run on one thread
  SingletonKnn(size_t n_, size_t dn_, size_t dc_, size_t k_, const double* X_, const int32_t* Y_, const double* inv_,
               const std::vector<const double*>& tab_, const std::vector<size_t>& L_,
               const std::vector<std::vector<int32_t>>& top_, double inv_d_, int threads_)
      : n(n_), dn(dn_), dc(dc_), k(k_), X(X_), Y(Y_), inv(inv_), tab(tab_), L(L_), top(top_), inv_d(inv_d_),
        threads(threads_) {}

  // Index over the alive points: sorted by categorical vector (see build) and cut into blocks of
  // kBlock consecutive points, each with its bounding box (numeric ranges, categorical code ranges).
  std::vector<uint32_t> P;        // P[pos] = local index
  std::vector<double> XT;         // (dn, m) numeric values in index order
  std::vector<size_t> bstart;     // block b = positions [bstart[b], bstart[b + 1])
  std::vector<int32_t> YT;        // (dc, m) categorical codes in index order
  std::vector<double> blo, bhi;   // (dn, n_blocks) numeric boxes
  std::vector<int32_t> bclo, bchi;  // (dc, n_blocks) categorical code ranges
  std::vector<uint8_t> aliveP;      // alive flag by index position
  std::vector<uint32_t> pos_of;     // local index -> index position (valid for indexed points)

  bool built = false;

  void build(const std::vector<uint8_t>& alive) {
    if (!built) {  // first build: sort; later builds keep the order and drop the dead points
      built = true;
      for (size_t i = 0; i < n; ++i) P.push_back(static_cast<uint32_t>(i));
      bool packed = dc <= 6;
      for (size_t j = 0; j < dc; ++j) packed = packed && L[j] <= 1024;
      if (packed) {
        // by categorical vector, then index: the codes packed into one key of B <= 60 bits (dimension 0 most
        // significant), sorted by a stable LSD radix sort on 8-bit digits. Any order gives the same k-1 nearest
        // (see above); this one only makes blocks share categorical values, so their bounds are tighter.
        // When they fit, the top-group ranks of all dimensions come first (blocks then mostly share every
        // dimension's group, which tightens the bounds of IL terms that jump between groups).
        std::vector<int> bits_of(dc), gbits_of(dc);
        int B = 0, GB = 0;
        for (size_t j = 0; j < dc; ++j) {
          int bj = 1;
          while ((size_t{1} << bj) < L[j]) ++bj;
          bits_of[j] = bj;
          B += bj;
          int gj = 1;
          while ((int32_t{1} << gj) <= top[j].back()) ++gj;
          gbits_of[j] = gj;
          GB += gj;
        }
        const bool groups = B + GB <= 64;
        if (groups) B += GB;
        std::vector<uint64_t> key(n), key2(n);
        std::vector<uint32_t> P2(n);
        for (size_t i = 0; i < n; ++i) {
          uint64_t kk = 0;
          if (groups)
            for (size_t j = 0; j < dc; ++j)
              kk = (kk << gbits_of[j]) | static_cast<uint64_t>(top[j][static_cast<size_t>(Y[i * dc + j])]);
          for (size_t j = 0; j < dc; ++j) kk = (kk << bits_of[j]) | static_cast<uint64_t>(Y[i * dc + j]);
          key[i] = kk;
        }
        for (int shift = 0; shift < B; shift += 8) {
          size_t cnt[257] = {0};
          for (size_t i = 0; i < n; ++i) ++cnt[((key[i] >> shift) & 0xFF) + 1];
          for (size_t d = 0; d < 256; ++d) cnt[d + 1] += cnt[d];
          for (size_t i = 0; i < n; ++i) {
            const size_t at = cnt[(key[i] >> shift) & 0xFF]++;
            P2[at] = P[i];
            key2[at] = key[i];
          }
          P.swap(P2);
          key.swap(key2);
        }
      } else {
        std::sort(P.begin(), P.end(), [&](uint32_t u, uint32_t v) {
          for (size_t j = 0; j < dc; ++j)
            if (Y[u * dc + j] != Y[v * dc + j]) return Y[u * dc + j] < Y[v * dc + j];
          if (dn && X[u * dn] != X[v * dn]) return X[u * dn] < X[v * dn];
          return u < v;
        });
      }
    } else {
      P.erase(std::remove_if(P.begin(), P.end(), [&](uint32_t u) { return !alive[u]; }), P.end());
    }
    const size_t m = P.size();
    XT.resize(dn * m);
    YT.resize(dc * m);
    aliveP.assign(m, 1);
    pos_of.resize(n);
    for (size_t q = 0; q < m; ++q) pos_of[P[q]] = static_cast<uint32_t>(q);
    for (size_t q = 0; q < m; ++q) {
      for (size_t j = 0; j < dn; ++j) XT[j * m + q] = X[P[q] * dn + j];
      for (size_t j = 0; j < dc; ++j) YT[j * m + q] = Y[P[q] * dc + j];
    }
    const size_t nb = (m + kBlock - 1) / kBlock;
    bstart.resize(nb + 1);
    for (size_t b = 0; b <= nb; ++b) bstart[b] = std::min(m, b * kBlock);
    blo.assign(dn * nb, 0.0);
    bhi.assign(dn * nb, 0.0);
    bclo.assign(dc * nb, 0);
    bchi.assign(dc * nb, 0);
    for (size_t j = 0; j < dn; ++j)
      for (size_t b = 0; b < nb; ++b) {
        double lo = XT[j * m + bstart[b]], hi = lo;
        for (size_t q = bstart[b]; q < bstart[b + 1]; ++q) {
          lo = std::min(lo, XT[j * m + q]);
          hi = std::max(hi, XT[j * m + q]);
        }
        blo[j * nb + b] = lo;
        bhi[j * nb + b] = hi;
      }
    for (size_t j = 0; j < dc; ++j)
      for (size_t b = 0; b < nb; ++b) {
        int32_t lo = YT[j * m + bstart[b]], hi = lo;
        for (size_t q = bstart[b]; q < bstart[b + 1]; ++q) {
          lo = std::min(lo, YT[j * m + q]);
          hi = std::max(hi, YT[j * m + q]);
        }
        bclo[j * nb + b] = lo;
        bchi[j * nb + b] = hi;
      }
  }

  /// Runs the rounds; returns the sub-clusters (local indices) and leaves `alive` marking the leftovers.
  // --- multi-threaded block scans: helper threads claim chunks of a round's blocks (see run)
  struct Node {
    double d;
    uint32_t l;
  };
  static bool cmp(const Node& a, const Node& b) { return a.d != b.d ? a.d < b.d : a.l < b.l; }
  static constexpr size_t kChunk = 4;  // blocks per claim
  struct Round {
    const std::pair<double, uint32_t>* order = nullptr;
    size_t nb = 0, m = 0;
    const double* xv = nullptr;
    std::atomic<size_t> nchunks{0};
  };
  Round round_;
  std::vector<const double*> row_ptr_;
  std::vector<std::vector<Node>> bufs;  // one candidate buffer per helper
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t epoch_ = 0;  // round counter (written under mu_ by the scanning thread only)
  bool stop_ = false;
  std::atomic<uint64_t> claim_{0};  // (epoch << 32) | next chunk; low word 0xFFFFFFFF = closed
  std::atomic<int> inflight_{0};    // helpers between a claim attempt and the end of its chunk
  std::vector<std::thread> helpers_;

  /// Scan the blocks order[chunk * kChunk, ...) of the current round into `buf` with the threshold `thr` of
  /// its owner (each owner's threshold is never below the final (k-1)-th distance, see run).
  void scan_chunk(size_t chunk, std::vector<Node>& buf, double& thr) {
    const size_t b1 = std::min(round_.nb, (chunk + 1) * kChunk);
    for (size_t oi = chunk * kChunk; oi < b1; ++oi) {
      const auto& ob = round_.order[oi];
      if (!block_may_hold(ob.first, buf, thr)) continue;
      scan_block(ob.second, round_.xv, round_.m, buf, thr);
    }
  }

  /// Cut `buf` to its k-1 smallest candidates under (distance, index); `thr` becomes the (k-1)-th distance.
  void prune(std::vector<Node>& buf, double& thr) const {
    const size_t want = k - 1;
    std::nth_element(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(want - 1), buf.end(), cmp);
    buf.resize(want);
    thr = buf[want - 1].d;
  }

  /// Whether a block whose distance lower bound is `bound` may still hold one of the k-1 nearest (tightening
  /// `thr` to the exact (k-1)-th distance first when the buffer holds more candidates than needed).
  bool block_may_hold(double bound, std::vector<Node>& buf, double& thr) const {
    if (buf.size() < k - 1 || bound <= thr) return true;
    if (buf.size() > k - 1) prune(buf, thr);
    return bound <= thr;
  }

  /// Buffer the points of block `bk` at distance <= thr from xv. thr is fixed during a block: it only ever
  /// decreases towards the final (k-1)-th distance, so accepting against a larger one adds candidates, never
  /// loses one. Once k-1 candidates are buffered thr is their largest distance; the buffer is cut back when it
  /// grows large.
  void scan_block(size_t bk, const double* xv, size_t m, std::vector<Node>& buf, double& thr) const {
    const size_t want = k - 1;
    double acc[kBlock];
    uint32_t hit[kBlock];
    const size_t q0 = bstart[bk], nq = bstart[bk + 1] - q0;
    const size_t nh = block_candidates(acc, hit, nq, m, dn, dc, XT.data() + q0, YT.data() + q0, aliveP.data() + q0,
                                       xv, inv, row_ptr_.data(), inv_d, thr);
    for (size_t h = 0; h < nh; ++h) buf.push_back(Node{acc[hit[h]], P[q0 + hit[h]]});
    if (buf.size() >= want && thr == std::numeric_limits<double>::infinity()) {
      if (buf.size() == want) {
        thr = buf[0].d;
        for (const Node& nd : buf) thr = std::max(thr, nd.d);
      } else {
        prune(buf, thr);
      }
    } else if (buf.size() >= 4 * want + kBlock) {
      prune(buf, thr);
    }
  }

  void helper_loop(size_t h) {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait(lk, [&] { return stop_ || epoch_ != seen; });
        if (stop_) return;
        seen = epoch_;
      }
      double thr = std::numeric_limits<double>::infinity();
      for (;;) {
        inflight_.fetch_add(1);  // before the claim, so a closing round waits for a claim that succeeds
        uint64_t c = claim_.load();
        bool got = false;
        while ((c >> 32) == seen && (c & 0xFFFFFFFFu) < round_.nchunks.load()) {
          if (claim_.compare_exchange_weak(c, c + 1)) {
            got = true;
            break;
          }
        }
        if (got) scan_chunk(static_cast<size_t>(c & 0xFFFFFFFFu), bufs[h], thr);
        inflight_.fetch_sub(1);
        if (!got) break;
      }
    }
  }

  /// Starts T - 1 helpers for the rounds of run() and stops them when it returns (or throws).
  struct Helpers {
    SingletonKnn& s;
    Helpers(SingletonKnn& s_, int T) : s(s_) {
      if (T <= 1) return;
      s.bufs.resize(static_cast<size_t>(T - 1));
      for (auto& b : s.bufs) b.reserve(4 * s.k + 2 * kBlock);  // nothing allocates in a helper
      for (size_t h = 0; h + 1 < static_cast<size_t>(T); ++h) s.helpers_.emplace_back([this, h] { s.helper_loop(h); });
    }
    ~Helpers() {
      {
        std::lock_guard<std::mutex> lk(s.mu_);
        s.stop_ = true;
      }
      s.cv_.notify_all();
      for (auto& t : s.helpers_) t.join();
      s.helpers_.clear();
    }
    Helpers(const Helpers&) = delete;
    Helpers& operator=(const Helpers&) = delete;
  };

  std::vector<std::vector<int32_t>> run(Rng& rng, std::vector<uint8_t>& alive) {
    std::vector<std::vector<int32_t>> subs;
    alive.assign(n, 1);
    size_t n_alive = n;
    std::vector<uint64_t> bits((n + 63) / 64, ~uint64_t{0});  // alive, for the rank-r selection
    if (n % 64) bits.back() = (uint64_t{1} << (n % 64)) - 1;
    auto kill = [&](size_t l) {
      alive[l] = 0;
      aliveP[pos_of[l]] = 0;
      bits[l / 64] &= ~(uint64_t{1} << (l % 64));
    };
    build(alive);
    size_t indexed = n;
    std::vector<std::vector<double>> rows(dc);
    for (size_t j = 0; j < dc; ++j) rows[j].resize(L[j]);
    std::vector<const double*> row_ptr(dc);
    for (size_t j = 0; j < dc; ++j) row_ptr[j] = rows[j].data();
    std::vector<double> lb;
    std::vector<std::pair<double, uint32_t>> order;
    std::vector<Node> heap;
    heap.reserve(4 * k + 2 * kBlock);
    row_ptr_ = row_ptr;
    Helpers helpers(*this, threads > 1 && n >= kParMinBlocks * kBlock ? threads : 1);
    while (n_alive >= k) {
      // steps 4-6: a uniformly random bucket of phi (phi = alive buckets in rank order), then a random tuple of it
      uint64_t r = rng.below(n_alive);
      size_t w = 0;
      for (;; ++w) {
        const auto c = static_cast<uint64_t>(__builtin_popcountll(bits[w]));
        if (r < c) break;
        r -= c;
      }
      uint64_t word = bits[w];
      for (; r > 0; --r) word &= word - 1;  // drop the r lowest set bits
      const size_t xl = w * 64 + static_cast<size_t>(__builtin_ctzll(word));
      (void)rng.below(1);  // the bucket's only tuple (draws nothing, as in the general loop)
      kill(xl);
      --n_alive;
      const double* xv = X + xl * dn;
      const int32_t* yv = Y + xl * dc;
      for (size_t j = 0; j < dc; ++j) {
        const size_t Lj = L[j];
        for (size_t c = 0; c < Lj; ++c) {
          const auto ci = static_cast<int32_t>(c);
          rows[j][c] = tab[j][static_cast<size_t>(std::min(ci, yv[j])) * Lj + static_cast<size_t>(std::max(ci, yv[j]))];
        }
      }
      // lower bound per block (same term order as the distance: numeric, categorical, then 1/d); a block's
      // categorical terms are exact (its points share the vector)
      const size_t nb = bstart.size() - 1, m = P.size();
      lb.assign(nb, 0.0);
      for (size_t j = 0; j < dn; ++j) {
        const double v = xv[j], w = inv[j];
        const double* lo = blo.data() + j * nb;
        const double* hi = bhi.data() + j * nb;
        for (size_t b = 0; b < nb; ++b) lb[b] += std::fabs(std::min(std::max(v, lo[b]), hi[b]) - v) * w;
      }
      for (size_t j = 0; j < dc; ++j) {
        // a row is smallest at the code nearest to y (the leaf range [min, max] only grows away from it)
        const int32_t y = yv[j];
        const int32_t* lo = bclo.data() + j * nb;
        const int32_t* hi = bchi.data() + j * nb;
        const double* row = rows[j].data();
        for (size_t b = 0; b < nb; ++b) lb[b] += row[std::min(std::max(y, lo[b]), hi[b])];
      }
      for (size_t b = 0; b < nb; ++b) lb[b] *= inv_d;
      order.resize(nb);
      for (size_t b = 0; b < nb; ++b) order[b] = {lb[b], static_cast<uint32_t>(b)};
      // the blocks of smallest bounds first (in order), so the root tightens fast; then one pass over the rest
      const size_t want = k - 1;
      const size_t head = std::min(nb, std::max<size_t>(16, 2 * want * nb / std::max<size_t>(m, 1) + 1));
      std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(head - 1), order.end());
      std::sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(head));
      // The k-1 nearest under (distance, index): candidates at or below the threshold are buffered, and the
      // buffer is cut to its k-1 smallest (nth_element) only when a block's bound must be tested against the exact
      // (k-1)-th distance or when it grows large. With T threads, thread t scans the blocks order[t], order[t + T],
      // ... with its own buffer and threshold (each thread's threshold is never below the final (k-1)-th distance,
      // so no block or point of the k-1 nearest is skipped), and the buffers are merged under the same total order
      // (distance, index): the result does not depend on T.
      const int T = threads > 1 && nb >= kParMinBlocks && !helpers_.empty() ? threads : 1;
      // Serial scan: the sorted head in order, then one pass over the rest.
      auto scan = [&](std::vector<Node>& buf) {
        buf.clear();
        double thr = std::numeric_limits<double>::infinity();  // (k-1)-th smallest so far once buf.size() >= want
        size_t oi = 0;
        while (oi < nb) {
          const auto& ob = order[oi];
          if (!block_may_hold(ob.first, buf, thr)) {
            // in the sorted head every later block is bounded as high: go on after the head
            oi = oi < head ? head : oi + 1;
            continue;
          }
          scan_block(ob.second, xv, m, buf, thr);
          ++oi;
        }
      };
      if (T > 1) {
        // chunks of kChunk blocks (in `order`) are claimed by this thread and the helpers through one atomic
        // word (round << 32 | next chunk); the round is then closed and only chunks already claimed are waited
        // for, so a helper that is not running costs nothing (this thread simply scans every chunk itself)
        round_.order = order.data();
        round_.nb = nb;
        round_.m = m;
        round_.xv = xv;
        round_.nchunks.store((nb + kChunk - 1) / kChunk);
        {
          std::lock_guard<std::mutex> lk(mu_);
          ++epoch_;
          claim_.store(epoch_ << 32);
        }
        cv_.notify_all();
        double thr0 = std::numeric_limits<double>::infinity();
        heap.clear();
        for (;;) {
          uint64_t c = claim_.load();
          if ((c & 0xFFFFFFFFu) >= round_.nchunks.load()) break;
          if (claim_.compare_exchange_weak(c, c + 1)) scan_chunk(static_cast<size_t>(c & 0xFFFFFFFFu), heap, thr0);
        }
        claim_.store((epoch_ << 32) | 0xFFFFFFFFu);  // closed: no further claims in this round
        while (inflight_.load() > 0) std::this_thread::yield();
        for (auto& hb : bufs) {
          heap.insert(heap.end(), hb.begin(), hb.end());
          hb.clear();
        }
      } else {
        scan(heap);
      }
      if (heap.size() > want) {
        std::nth_element(heap.begin(), heap.begin() + static_cast<std::ptrdiff_t>(want - 1), heap.end(), cmp);
        heap.resize(want);
      }
      std::sort(heap.begin(), heap.end(), cmp);
      std::vector<int32_t> cnew{static_cast<int32_t>(xl)};
      for (const Node& nd : heap) {
        cnew.push_back(static_cast<int32_t>(nd.l));
        kill(nd.l);
      }
      n_alive -= heap.size();
      subs.push_back(std::move(cnew));
      if (n_alive * 2 < indexed && indexed > 64) {
        build(alive);
        indexed = n_alive;
      }
    }
    return subs;
  }
};

}  // namespace

std::vector<std::vector<int32_t>> singleton_knn_rounds(const SingletonKnnInput& in, Rng& rng,
                                                       std::vector<uint8_t>& alive) {
  SingletonKnn knn(in.n, in.dn, in.dc, in.k, in.X, in.Y, in.inv, *in.tab, *in.L, *in.top, in.inv_d, in.threads);
  return knn.run(rng, alive);
}

}  // namespace anoncore::knn
