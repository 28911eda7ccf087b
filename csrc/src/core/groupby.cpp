#include "anoncore/core/groupby.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "anoncore/core/parallel.hpp"
#include "anoncore/core/status.hpp"

namespace anoncore::core {
namespace {

constexpr int64_t kChunk = int64_t{1} << 16;       // rows per chunk (fixed: the output never depends on threads)
constexpr uint64_t kStampSpace = uint64_t{1} << 20;  // key spaces up to this use per-thread stamp arrays
constexpr int64_t kPartialBudget = int64_t{256} << 20;  // bytes of per-thread partial results in all

struct RowHash {
  const int32_t* base;
  int64_t cols;
  size_t operator()(int64_t r) const {
    uint64_t h = 0x9E3779B97F4A7C15ULL;
    const int32_t* p = base + r * cols;
    for (int64_t j = 0; j < cols; ++j) {
      h ^= static_cast<uint64_t>(static_cast<uint32_t>(p[j])) + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
    }
    return static_cast<size_t>(h);
  }
};
struct RowEq {
  const int32_t* base;
  int64_t cols;
  bool operator()(int64_t a, int64_t b) const {
    return std::memcmp(base + a * cols, base + b * cols, static_cast<size_t>(cols) * sizeof(int32_t)) == 0;
  }
};

/// Small key spaces: every chunk lists its distinct keys in order of first appearance (a per-thread stamp array
/// marks the keys seen in the current chunk), the lists are merged in chunk order into global first-appearance
/// ids, and the labels are gathered through them. The same labels as one serial pass, for any thread count.
template <class KeyFn>
int64_t dense_small_space(int64_t n, uint64_t space, KeyFn& key, MutSpan<int64_t> labels,
                          std::vector<int64_t>* first, int n_threads) {
  const int64_t n_chunks = (n + kChunk - 1) / kChunk;
  // Not value-initialised: the first touch of its pages happens in the parallel pass, not in a serial memset.
  std::unique_ptr<uint32_t[]> keys(new uint32_t[static_cast<size_t>(n)]);
  std::vector<std::vector<std::pair<uint32_t, int64_t>>> distinct(static_cast<size_t>(n_chunks));
  std::vector<std::vector<int32_t>> stamp(static_cast<size_t>(std::max(1, resolve_threads(n_threads))));
  parallel_chunks(n, kChunk, n_threads, [&](int64_t c, int64_t i0, int64_t i1) {
    auto& st = stamp[static_cast<size_t>(thread_index())];
    if (st.empty()) st.assign(static_cast<size_t>(space), -1);
    auto& dl = distinct[static_cast<size_t>(c)];
    const auto cc = static_cast<int32_t>(c);
    for (int64_t i = i0; i < i1; ++i) {
      const auto k = static_cast<uint32_t>(key(i));
      keys[static_cast<size_t>(i)] = k;
      if (st[k] != cc) {
        st[k] = cc;
        dl.emplace_back(k, i);
      }
    }
  });
  std::vector<int64_t> gid(static_cast<size_t>(space), -1);
  int64_t next = 0;
  for (const auto& dl : distinct)
    for (const auto& [k, row] : dl) {
      int64_t& g = gid[k];
      if (g < 0) {
        g = next++;
        if (first) first->push_back(row);
      }
    }
  parallel_chunks(n, kChunk, n_threads, [&](int64_t, int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) labels[i] = gid[keys[static_cast<size_t>(i)]];
  });
  return next;
}

/// Keys in [0, space) with space <= 2^62: dense first-appearance labels of key(i). Small spaces in parallel,
/// large ones (up to one class per row) in one serial pass over a direct table or a hash map.
template <class KeyFn>
int64_t dense_by_keys(int64_t n, uint64_t space, KeyFn&& key, MutSpan<int64_t> labels, std::vector<int64_t>* first,
                      int n_threads) {
  if (first) first->clear();
  if (n <= 0) return 0;
  if (space <= kStampSpace) return dense_small_space(n, space, key, labels, first, n_threads);
  // Large key spaces (many classes): one serial pass, the keys computed inline.
  (void)n_threads;
  int64_t next = 0;
  if (space <= static_cast<uint64_t>(4 * n + 1024)) {
    std::vector<int64_t> slot(static_cast<size_t>(space), -1);
    for (int64_t i = 0; i < n; ++i) {
      int64_t& s = slot[key(i)];
      if (s < 0) {
        s = next++;
        if (first) first->push_back(i);
      }
      labels[i] = s;
    }
    return next;
  }
  std::unordered_map<uint64_t, int64_t> map;
  map.reserve(static_cast<size_t>(n / 4 + 16));
  for (int64_t i = 0; i < n; ++i) {
    auto it = map.emplace(key(i), next);
    if (it.second) {
      ++next;
      if (first) first->push_back(i);
    }
    labels[i] = it.first->second;
  }
  return next;
}

/// Threads for a reduction into per-thread partial arrays of `bytes` each: at most one per chunk of rows and
/// within the memory budget.
int partial_threads(int64_t n, int64_t bytes, int n_threads) {
  int64_t t = resolve_threads(n_threads);
  t = std::min<int64_t>(t, std::max<int64_t>(1, n / kChunk));
  if (bytes > 0) t = std::min<int64_t>(t, std::max<int64_t>(1, kPartialBudget / bytes));
  return static_cast<int>(std::max<int64_t>(1, t));
}

/// Reduction over rows into `out` (cells entries, already initialised by `init(out)`): slab s of T contiguous
/// row ranges accumulates into its own copy (slab 0 into out), then the copies are combined cell by cell with
/// `merge(cell, a, b)`. Used only for exact integer sums and min/max, so the result does not depend on T.
template <class T, class Init, class Accumulate, class Merge>
void reduce_rows(int64_t n, T* out, int64_t cells, int n_threads, Init&& init, Accumulate&& acc, Merge&& merge) {
  const int slabs = partial_threads(n, cells * static_cast<int64_t>(sizeof(T)), n_threads);
  if (slabs <= 1) {
    acc(out, int64_t{0}, n);
    return;
  }
  std::vector<std::vector<T>> part(static_cast<size_t>(slabs - 1));
  parallel_chunks(slabs, 1, slabs, [&](int64_t s, int64_t, int64_t) {
    T* dst = out;
    if (s > 0) {
      auto& p = part[static_cast<size_t>(s - 1)];
      p.resize(static_cast<size_t>(cells));
      dst = p.data();
      init(dst);
    }
    acc(dst, n * s / slabs, n * (s + 1) / slabs);
  });
  parallel_chunks(cells, kChunk, slabs, [&](int64_t, int64_t c0, int64_t c1) {
    for (const auto& p : part)
      for (int64_t c = c0; c < c1; ++c) out[c] = merge(c, out[c], p[static_cast<size_t>(c)]);
  });
}

}  // namespace

int64_t dense_labels(Matrix<int32_t> codes, Span<int64_t> cardinality, MutSpan<int64_t> labels, int n_threads,
                     std::vector<int64_t>* first_rows) {
  const int64_t n = codes.rows, d = codes.cols;
  // Mixed-radix packing when the product of cardinalities fits in 62 bits.
  bool packable = true;
  unsigned __int128 space = 1;
  for (int64_t j = 0; j < d; ++j) {
    space *= static_cast<unsigned __int128>(cardinality[j] > 0 ? cardinality[j] : 1);
    if (space > (static_cast<unsigned __int128>(1) << 62)) {
      packable = false;
      break;
    }
  }
  if (packable) {
    auto key = [&](int64_t i) {
      uint64_t k = 0;
      const int32_t* r = codes.row(i);
      for (int64_t j = 0; j < d; ++j) k = k * static_cast<uint64_t>(cardinality[j]) + static_cast<uint32_t>(r[j]);
      return k;
    };
    return dense_by_keys(n, static_cast<uint64_t>(space), key, labels, first_rows, n_threads);
  }
  if (first_rows) first_rows->clear();
  int64_t next = 0;
  std::unordered_map<int64_t, int64_t, RowHash, RowEq> map(static_cast<size_t>(n / 4 + 16), RowHash{codes.data, d},
                                                           RowEq{codes.data, d});
  for (int64_t i = 0; i < n; ++i) {
    auto it = map.emplace(i, next);
    if (it.second) {
      ++next;
      if (first_rows) first_rows->push_back(i);
    }
    labels[i] = it.first->second;
  }
  return next;
}

int64_t levels_labels(Matrix<int32_t> codes, Span<int64_t> columns, Span<int32_t> maps, Span<int64_t> map_offsets,
                      Span<int64_t> widths, MutSpan<int64_t> labels, std::vector<int64_t>& first_rows,
                      int n_threads) {
  const int64_t d = columns.size;
  uint64_t space = 1;
  for (int64_t j = 0; j < d; ++j) space *= static_cast<uint64_t>(std::max<int64_t>(1, widths[j]));
  auto key = [&](int64_t i) {
    uint64_t k = 0;
    const int32_t* r = codes.row(i);
    for (int64_t j = 0; j < d; ++j) {
      const int32_t c = r[columns[j]];
      const int64_t o = map_offsets[j];
      if (c < 0 || c >= map_offsets[j + 1] - o) throw std::out_of_range("a code outside its hierarchy's leaves");
      k = k * static_cast<uint64_t>(widths[j]) + static_cast<uint32_t>(maps[o + c]);
    }
    return k;
  };
  return dense_by_keys(codes.rows, space, key, labels, &first_rows, n_threads);
}

namespace {

/// Rows per label in [0, sizes.size) (rows flagged in skip left out), per-thread partial counts summed.
template <class L>
void count_labels(Span<L> labels, Span<uint8_t> skip, MutSpan<int64_t> sizes, int n_threads, const char* what) {
  for (int64_t c = 0; c < sizes.size; ++c) sizes[c] = 0;
  const bool has_skip = skip.size > 0;
  reduce_rows<int64_t>(
      labels.size, sizes.data, sizes.size, n_threads,
      [&](int64_t* o) { std::fill(o, o + sizes.size, int64_t{0}); },
      [&](int64_t* out, int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
          if (has_skip && skip[i]) continue;
          const int64_t c = labels[i];
          if (c < 0 || c >= sizes.size) throw InternalError(what);
          ++out[c];
        }
      },
      [](int64_t, int64_t a, int64_t b) { return a + b; });
}

}  // namespace

void class_sizes(Span<int64_t> labels, Span<uint8_t> skip, MutSpan<int64_t> sizes, int n_threads) {
  count_labels(labels, skip, sizes, n_threads, "class label out of range in class_sizes");
}

void value_counts(Span<int32_t> values, MutSpan<int64_t> counts, int n_threads) {
  count_labels(values, Span<uint8_t>{nullptr, 0}, counts, n_threads, "value out of range in value_counts");
}

void class_min_max(Matrix<int32_t> codes, Span<int64_t> labels, Span<uint8_t> skip, MutMatrix<int32_t> lo,
                   MutMatrix<int32_t> hi, int n_threads) {
  const int64_t d = codes.cols, cells = lo.rows * d;
  // One reduction over [lo | hi] (class c's minima at c * 2d, maxima at c * 2d + d): one pass over the rows.
  std::vector<int32_t> both(static_cast<size_t>(2 * cells));
  auto init = [&](int32_t* o) {
    for (int64_t c = 0; c < lo.rows; ++c) {
      std::fill(o + c * 2 * d, o + c * 2 * d + d, std::numeric_limits<int32_t>::max());
      std::fill(o + c * 2 * d + d, o + (c + 1) * 2 * d, -1);
    }
  };
  init(both.data());
  const bool has_skip = skip.size > 0;
  reduce_rows<int32_t>(
      codes.rows, both.data(), 2 * cells, n_threads, init,
      [&](int32_t* o, int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
          if (has_skip && skip[i]) continue;
          const int64_t c = labels[i];
          if (c < 0 || c >= lo.rows) throw InternalError("class label out of range in class_min_max");
          const int32_t* r = codes.row(i);
          int32_t* l = o + c * 2 * d;
          int32_t* h = l + d;
          for (int64_t j = 0; j < d; ++j) {
            if (r[j] < l[j]) l[j] = r[j];
            if (r[j] > h[j]) h[j] = r[j];
          }
        }
      },
      [d](int64_t cell, int32_t a, int32_t b) { return (cell / d) % 2 == 0 ? std::min(a, b) : std::max(a, b); });
  for (int64_t c = 0; c < lo.rows; ++c)
    for (int64_t j = 0; j < d; ++j) {
      lo(c, j) = both[static_cast<size_t>(c * 2 * d + j)];
      hi(c, j) = both[static_cast<size_t>(c * 2 * d + d + j)];
    }
}

namespace {

/// The least and largest value of each of the D columns of rows [i0, i1) into l and h (already initialised):
/// with D known at compile time the 2D running extremes stay in registers (a runtime column count kept them
/// in memory: 10M rows x 9 columns, 73 -> 41 ms on two threads).
template <int64_t D>
void min_max_rows(const int32_t* data, int64_t i0, int64_t i1, int32_t* l, int32_t* h) {
  int32_t lo[D], hi[D];
  for (int64_t j = 0; j < D; ++j) {
    lo[j] = l[j];
    hi[j] = h[j];
  }
  for (int64_t i = i0; i < i1; ++i) {
    const int32_t* r = data + i * D;
    for (int64_t j = 0; j < D; ++j) {
      lo[j] = std::min(lo[j], r[j]);
      hi[j] = std::max(hi[j], r[j]);
    }
  }
  for (int64_t j = 0; j < D; ++j) {
    l[j] = lo[j];
    h[j] = hi[j];
  }
}

template <int64_t D>
bool min_max_fixed(int64_t d, const int32_t* data, int64_t i0, int64_t i1, int32_t* l, int32_t* h) {
  if (d != D) return false;
  min_max_rows<D>(data, i0, i1, l, h);
  return true;
}

template <int64_t... Ds>
bool min_max_dispatch(std::integer_sequence<int64_t, Ds...>, int64_t d, const int32_t* data, int64_t i0, int64_t i1,
                      int32_t* l, int32_t* h) {
  return (min_max_fixed<Ds + 1>(d, data, i0, i1, l, h) || ...);
}

}  // namespace

int64_t count_true(Span<uint8_t> mask, int n_threads) {
  const int64_t n = mask.size, n_chunks = (n + kChunk - 1) / kChunk;
  std::vector<int64_t> part(static_cast<size_t>(std::max<int64_t>(n_chunks, 1)), 0);
  parallel_chunks(n, kChunk, n_threads, [&](int64_t c, int64_t i0, int64_t i1) {
    // eight flags a word: each byte's 0x01 bit set where the byte is nonzero (its low seven bits carried
    // into the high bit, or the high bit itself), summed in eight byte-wide lanes over blocks of 255 words
    // (a fixed trip count the compiler vectorises), the lanes then added in four 16-bit lanes
    constexpr uint64_t kLow7 = 0x7F7F7F7F7F7F7F7FULL, kOnes = 0x0101010101010101ULL;
    constexpr int64_t kBlock = 255 * 8;
    int64_t k = 0, i = i0;
    for (; i + kBlock <= i1; i += kBlock) {
      const uint8_t* p = mask.data + i;
      uint64_t lanes = 0;
      for (int64_t r = 0; r < 255; ++r) {
        uint64_t w;
        std::memcpy(&w, p + 8 * r, 8);
        lanes += ((((w & kLow7) + kLow7) | w) >> 7) & kOnes;
      }
      const uint64_t pairs = (lanes & 0x00FF00FF00FF00FFULL) + ((lanes >> 8) & 0x00FF00FF00FF00FFULL);
      k += static_cast<int64_t>((pairs * 0x0001000100010001ULL) >> 48);
    }
    for (; i < i1; ++i) k += mask[i] != 0;
    part[static_cast<size_t>(c)] = k;
  });
  int64_t total = 0;
  for (int64_t k : part) total += k;
  return total;
}

void column_min_max(Matrix<int32_t> codes, MutSpan<int32_t> lo, MutSpan<int32_t> hi, int n_threads) {
  const int64_t d = codes.cols, n = codes.rows, n_chunks = (n + kChunk - 1) / kChunk;
  std::vector<int32_t> part(static_cast<size_t>(std::max<int64_t>(n_chunks, 1) * 2 * d));
  parallel_chunks(n, kChunk, n_threads, [&](int64_t c, int64_t i0, int64_t i1) {
    int32_t* l = part.data() + c * 2 * d;
    int32_t* h = l + d;
    std::fill(l, l + d, std::numeric_limits<int32_t>::max());
    std::fill(h, h + d, std::numeric_limits<int32_t>::min());
    // up to 16 columns: the column count as a template parameter
    if (min_max_dispatch(std::make_integer_sequence<int64_t, 16>{}, d, codes.data, i0, i1, l, h)) return;
    for (int64_t i = i0; i < i1; ++i) {
      const int32_t* r = codes.row(i);
      for (int64_t j = 0; j < d; ++j) {
        l[j] = std::min(l[j], r[j]);
        h[j] = std::max(h[j], r[j]);
      }
    }
  });
  for (int64_t j = 0; j < d; ++j) {
    lo[j] = std::numeric_limits<int32_t>::max();
    hi[j] = std::numeric_limits<int32_t>::min();
    for (int64_t c = 0; c < n_chunks; ++c) {
      lo[j] = std::min(lo[j], part[static_cast<size_t>(c * 2 * d + j)]);
      hi[j] = std::max(hi[j], part[static_cast<size_t>(c * 2 * d + d + j)]);
    }
  }
}

void class_histogram(Span<int32_t> values, Span<int64_t> labels, Span<uint8_t> skip, MutMatrix<int64_t> hist,
                     int n_threads) {
  const int64_t n = values.size, cells = hist.rows * hist.cols;
  const bool has_skip = skip.size > 0;
  auto count = [&](auto* out, int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      if (has_skip && skip[i]) continue;
      const int64_t c = labels[i];
      const int32_t v = values[i];
      if (c < 0 || c >= hist.rows || v < 0 || v >= hist.cols)
        throw InternalError("index out of range in class_histogram");
      ++out[c * hist.cols + v];
    }
  };
  const int slabs = partial_threads(n, cells * static_cast<int64_t>(sizeof(int32_t)), n_threads);
  if (cells > n || n / slabs >= std::numeric_limits<int32_t>::max() - 1) {
    // more cells than rows (a sparse histogram: the extra pass over the cells would cost more than it saves),
    // or slabs too large for int32 counts: int64 counts, per-slab copies summed
    std::fill(hist.data, hist.data + cells, int64_t{0});
    reduce_rows<int64_t>(n, hist.data, cells, n_threads, [&](int64_t* o) { std::fill(o, o + cells, int64_t{0}); },
                         count, [](int64_t, int64_t a, int64_t b) { return a + b; });
    return;
  }
  // Per-slab counts in int32 (a slab holds fewer than 2^31 rows), one thread too: half the cache and memory
  // traffic of int64 counts (synthetic census 10M rows, 7,833 classes x 50 values: 32 → 24 ms on one thread,
  // 13 ms on two), each zeroed by its own thread; then every cell is the sum over the slabs (exact integers).
  std::vector<std::unique_ptr<int32_t[]>> part(static_cast<size_t>(slabs));
  parallel_chunks(slabs, 1, slabs, [&](int64_t s, int64_t, int64_t) {
    part[static_cast<size_t>(s)].reset(new int32_t[static_cast<size_t>(cells)]());
    count(part[static_cast<size_t>(s)].get(), n * s / slabs, n * (s + 1) / slabs);
  });
  parallel_chunks(cells, kChunk, slabs, [&](int64_t, int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      int64_t sum = 0;
      for (const auto& p : part) sum += p[static_cast<size_t>(c)];
      hist.data[c] = sum;
    }
  });
}

}  // namespace anoncore::core
