// Exact k nearest neighbours by a k-d tree with deletion: SABRE-KNN's retrieval (spec sabre-burel.md §3.4,
// csrc/src/twophase/retrieve.cpp). CASTLE's split^k index is in singleton_knn.hpp. Header-only (a template over the
// code type).
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "anoncore/core/parallel.hpp"
#include "anoncore/core/status.hpp"
#include "anoncore/core/views.hpp"
#include "anoncore/knn/coords.hpp"

namespace anoncore::knn {

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
  /// Trees of fewer points are not worth deferring subtrees to other threads.
  static constexpr int64_t kParallelRows = int64_t{1} << 16;

  KdTree() = default;

  /// `rank[offsets[j] + c]`: rank of code c's coordinate among the distinct coordinates of dimension j
  /// (value order; equal values, equal ranks). Built on the calling thread (several threads: the stages
  /// below).
  KdTree(const std::vector<int64_t>& rows, Matrix<int32_t> codes, const CoordTables& coords,
         const std::vector<uint32_t>& rank, int64_t d, std::vector<int32_t>& local_of_row)
      : KdTree(coords, rank, d, local_of_row) {
    begin_build(rows, codes, false);
    end_build(1);
  }

  /// A tree to build in stages (several trees at once, see retrieve.cpp): begin_build, build_deferred for
  /// every deferred subtree (on any threads), end_build. The splits are those of the one-call build: the
  /// tree is the same whether or not its subtrees were deferred, and on any number of threads.
  KdTree(const CoordTables& coords, const std::vector<uint32_t>& rank, int64_t d, std::vector<int32_t>& local_of_row)
      : d_(d), local_of_row_(&local_of_row), col_(static_cast<size_t>(d)), rank_(rank.data()),
        offsets_(coords.offsets.data) {
    for (int64_t j = 0; j < d; ++j) col_[static_cast<size_t>(j)] = coords.values.data + coords.offsets[j];
    monotone_.assign(static_cast<size_t>(d), 1);
    for (int64_t j = 0; j < d; ++j)
      for (int64_t c = coords.offsets[j] + 1; c < coords.offsets[j + 1]; ++c)
        if (!(coords.values[c - 1] <= coords.values[c])) monotone_[static_cast<size_t>(j)] = 0;
  }

  /// The codes of `rows` gathered and, with defer, the top of the tree split down to subtrees of at most
  /// n / kParts points (a bound that does not depend on the thread count), each left for build_deferred;
  /// without defer the whole tree is split here.
  void begin_build(const std::vector<int64_t>& rows, Matrix<int32_t> codes, bool defer) {
    const auto n = static_cast<int64_t>(rows.size());
    if (n >= (int64_t{1} << 31)) throw InternalError("kNN retrieval: a bucket holds 2^31 rows or more");
    rows_ = &rows;
    // Codes dimension-major (cd[j * n + i]): the split passes read one dimension at a time; coordinates and
    // value ranks are looked up in the (small) per-dimension tables.
    cd_.resize(static_cast<size_t>(n * d_));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < d_; ++j)
        cd_[static_cast<size_t>(j * n + i)] = static_cast<C>(codes(rows[static_cast<size_t>(i)], j));
    perm_.resize(static_cast<size_t>(n));
    std::iota(perm_.begin(), perm_.end(), int64_t{0});
    nodes_.clear();
    deferred_.clear();
    split(0, n, defer ? std::max<int64_t>(kLeaf, n / kParts) : 0, nodes_, &deferred_);
    subs_.assign(deferred_.size(), {});
  }
  int64_t n_deferred() const { return static_cast<int64_t>(deferred_.size()); }
  /// Split deferred subtree k (each reads and permutes only its own range of the points).
  void build_deferred(int64_t k) {
    const auto [b, e] = deferred_[static_cast<size_t>(k)];
    split(b, e, 0, subs_[static_cast<size_t>(k)], nullptr);
  }
  /// Every deferred subtree put in place of its placeholder (the serial splits, in the serial node order),
  /// the points stored in leaf order and the boxes fitted.
  void end_build(int n_threads) {
    if (!deferred_.empty()) splice();
    const auto n = static_cast<int64_t>(perm_.size());
    const int64_t d = d_;
    const std::vector<int64_t>& rows = *rows_;
    std::vector<int32_t>& local_of_row = *local_of_row_;
    pts_.resize(static_cast<size_t>(n * d));
    ids_.resize(static_cast<size_t>(n));
    leaf_of_.resize(static_cast<size_t>(n));
    parallel_chunks(n, kRowChunk, n < kParallelRows ? 1 : n_threads, [&](int64_t, int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t src = perm_[static_cast<size_t>(i)];
        const int64_t row = rows[static_cast<size_t>(src)];
        for (int64_t j = 0; j < d; ++j) pts_[static_cast<size_t>(i * d + j)] = cd_[static_cast<size_t>(j * n + src)];
        ids_[static_cast<size_t>(i)] = row;
        local_of_row[static_cast<size_t>(row)] = static_cast<int32_t>(i);
      }
    });
    std::vector<C>().swap(cd_);
    std::vector<int64_t>().swap(perm_);
    rows_ = nullptr;
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
  static constexpr int64_t kRowChunk = int64_t{1} << 15;
  static constexpr int64_t kParts = 64;                   // a parallel build's subtrees: about n / kParts points

  /// Spread of the points perm_[b, e) per dimension and the widest dimension: exact for small nodes, from an
  /// evenly strided sample of kSample points for large ones (it only steers the choice of the split
  /// dimension; boxes are exact).
  std::pair<int64_t, double> spread_of(int64_t b, int64_t e, bool exact) const {
    const int64_t len = e - b, n = static_cast<int64_t>(perm_.size());
    const int64_t step = (exact || len <= kSample) ? 1 : len / kSample;
    int64_t dim = 0;
    double best = -1;
    for (int64_t j = 0; j < d_; ++j) {
      const C* col = cd_.data() + j * n;
      const double* v = col_[static_cast<size_t>(j)];
      double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
      if (monotone_[static_cast<size_t>(j)]) {  // extreme codes hold the extreme coordinates
        C cl = std::numeric_limits<C>::max(), ch = 0;
        for (int64_t i = b; i < e; i += step) {
          const C c = col[perm_[static_cast<size_t>(i)]];
          cl = std::min(cl, c);
          ch = std::max(ch, c);
        }
        lo = v[cl];
        hi = v[ch];
      } else {
        for (int64_t i = b; i < e; i += step) {
          const double w = v[col[perm_[static_cast<size_t>(i)]]];
          lo = std::min(lo, w);
          hi = std::max(hi, w);
        }
      }
      if (hi - lo > best) {
        best = hi - lo;
        dim = j;
      }
    }
    return {dim, best};
  }

  /// Split perm_[begin, end) into nodes appended to out in depth-first order (left subtree first), ids
  /// relative to out. defer_len > 0: a subtree of at most defer_len points (other than the first) is not
  /// split but left as a placeholder node (inner = -2 - its index in *deferred), to be split apart.
  void split(int64_t begin, int64_t end, int64_t defer_len, std::vector<Node>& out,
             std::vector<std::pair<int64_t, int64_t>>* deferred) {
    struct Job {
      int64_t begin, end;
      int32_t parent;
      bool is_right;
    };
    std::vector<Job> stack{{begin, end, -1, false}};
    std::vector<uint64_t> keyed;
    while (!stack.empty()) {
      const Job job = stack.back();
      stack.pop_back();
      const auto id = static_cast<int32_t>(out.size());
      const int64_t len = job.end - job.begin;
      out.push_back(Node{static_cast<int32_t>(job.begin), static_cast<int32_t>(job.end), -1, -1, job.parent,
                         static_cast<int32_t>(len), -1, false});
      if (job.parent >= 0) (job.is_right ? out[static_cast<size_t>(job.parent)].right : out[static_cast<size_t>(job.parent)].left) = id;
      if (defer_len > 0 && id > 0 && len <= defer_len) {
        out.back().inner = -2 - static_cast<int32_t>(deferred->size());
        deferred->emplace_back(job.begin, job.end);
        continue;
      }
      if (len <= kLeaf) continue;
      auto [dim, spread] = spread_of(job.begin, job.end, false);
      if (spread <= 0) std::tie(dim, spread) = spread_of(job.begin, job.end, true);
      if (spread <= 0) continue;  // all points identical: a leaf whatever its size
      const int64_t cut = median_cut(job.begin, job.end, dim, keyed);
      stack.push_back({cut, job.end, id, true});
      stack.push_back({job.begin, cut, id, false});
    }
  }

  /// Median cut of perm_[begin, end) on dimension dim, moved to a value boundary: the codes are discrete with
  /// many ties, and a cut through a run of equal values would leave both children's boxes overlapping on the
  /// split dimension (no pruning). The selection orders points by (value on dim, index), as one integer key
  /// (value rank << 32 | index) gathered from perm_: the same comparison outcomes, hence the same moves, as on
  /// the indices themselves. Returns the cut; perm_[begin, cut) holds the left points.
  int64_t median_cut(int64_t begin, int64_t end, int64_t dim, std::vector<uint64_t>& keyed) {
    const int64_t mid = begin + (end - begin) / 2, len = end - begin;
    const C* col = cd_.data() + dim * static_cast<int64_t>(perm_.size());
    const uint32_t* rank_of = rank_ + offsets_[dim];
    int64_t* perm = perm_.data();
    keyed.resize(static_cast<size_t>(len));
    for (int64_t i = 0; i < len; ++i) {
      const auto x = static_cast<uint64_t>(perm[begin + i]);
      keyed[static_cast<size_t>(i)] = (uint64_t{rank_of[col[x]]} << 32) | x;
    }
    const auto kb = keyed.begin(), km = kb + (mid - begin), ke = keyed.end();
    std::nth_element(kb, km, ke);
    const uint64_t v_lo = *km >> 32 << 32, v_hi = v_lo + (uint64_t{1} << 32);  // keys of value == v
    const auto lo_eq = std::partition(kb, km, [v_lo](uint64_t x) { return x < v_lo; });
    const auto hi_eq = std::partition(km, ke, [v_hi](uint64_t x) { return x < v_hi; });
    for (int64_t i = 0; i < len; ++i) perm[begin + i] = static_cast<int64_t>(keyed[static_cast<size_t>(i)] & 0xFFFFFFFFU);
    const int64_t m1 = begin + static_cast<int64_t>(lo_eq - kb), m2 = begin + static_cast<int64_t>(hi_eq - kb);
    if (m1 == begin) return m2;
    if (m2 == end) return m1;
    return (mid - m1 <= m2 - mid) ? m1 : m2;
  }

  /// Every placeholder of the top (nodes_) replaced by its subtree in place, ids renumbered.
  void splice() {
    const std::vector<Node> top = std::move(nodes_);
    std::vector<int32_t> nid(top.size());
    int64_t count = 0;
    for (size_t k = 0; k < top.size(); ++k) {
      nid[k] = static_cast<int32_t>(count);
      count += top[k].inner <= -2 ? static_cast<int64_t>(subs_[static_cast<size_t>(-2 - top[k].inner)].size()) : 1;
    }
    auto moved = [](int32_t id, int32_t off) { return id >= 0 ? id + off : -1; };
    nodes_.clear();
    nodes_.reserve(static_cast<size_t>(count));
    for (size_t k = 0; k < top.size(); ++k) {
      const Node& t = top[k];
      const int32_t parent = t.parent >= 0 ? nid[static_cast<size_t>(t.parent)] : -1;
      if (t.inner > -2) {
        Node nd = t;
        nd.left = t.left >= 0 ? nid[static_cast<size_t>(t.left)] : -1;
        nd.right = t.right >= 0 ? nid[static_cast<size_t>(t.right)] : -1;
        nd.parent = parent;
        nodes_.push_back(nd);
        continue;
      }
      const int32_t off = nid[k];
      for (const Node& sn : subs_[static_cast<size_t>(-2 - t.inner)]) {
        Node nd = sn;
        nd.left = moved(sn.left, off);
        nd.right = moved(sn.right, off);
        nd.parent = sn.parent >= 0 ? sn.parent + off : parent;
        nodes_.push_back(nd);
      }
    }
    deferred_.clear();
    std::vector<std::vector<Node>>().swap(subs_);
  }
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
  const uint32_t* rank_ = nullptr;   // value ranks and per-dimension offsets (the splits)
  const int64_t* offsets_ = nullptr;
  // while being built (begin_build .. end_build)
  const std::vector<int64_t>* rows_ = nullptr;
  std::vector<C> cd_;
  std::vector<int64_t> perm_;
  std::vector<std::pair<int64_t, int64_t>> deferred_;
  std::vector<std::vector<Node>> subs_;
};

}  // namespace anoncore::knn
