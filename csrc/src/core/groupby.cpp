#include "anoncore/core/groupby.hpp"

#include <cstring>
#include <limits>
#include <unordered_map>

#include "anoncore/core/status.hpp"

namespace anoncore::core {
namespace {

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

}  // namespace

int64_t dense_labels(Matrix<int32_t> codes, Span<int64_t> cardinality, MutSpan<int64_t> labels) {
  const int64_t n = codes.rows, d = codes.cols;
  // Mixed-radix packing when the product of cardinalities fits in 63 bits.
  bool packable = true;
  unsigned __int128 space = 1;
  for (int64_t j = 0; j < d; ++j) {
    space *= static_cast<unsigned __int128>(cardinality[j] > 0 ? cardinality[j] : 1);
    if (space > (static_cast<unsigned __int128>(1) << 62)) {
      packable = false;
      break;
    }
  }
  int64_t next = 0;
  if (packable) {
    const auto space64 = static_cast<uint64_t>(space);
    if (space64 <= static_cast<uint64_t>(4 * n + 1024)) {
      // Direct-address table.
      std::vector<int64_t> slot(space64, -1);
      for (int64_t i = 0; i < n; ++i) {
        uint64_t key = 0;
        const int32_t* r = codes.row(i);
        for (int64_t j = 0; j < d; ++j) key = key * static_cast<uint64_t>(cardinality[j]) + static_cast<uint32_t>(r[j]);
        int64_t& s = slot[key];
        if (s < 0) s = next++;
        labels[i] = s;
      }
      return next;
    }
    std::unordered_map<uint64_t, int64_t> map;
    map.reserve(static_cast<size_t>(n / 4 + 16));
    for (int64_t i = 0; i < n; ++i) {
      uint64_t key = 0;
      const int32_t* r = codes.row(i);
      for (int64_t j = 0; j < d; ++j) key = key * static_cast<uint64_t>(cardinality[j]) + static_cast<uint32_t>(r[j]);
      auto it = map.emplace(key, next);
      if (it.second) ++next;
      labels[i] = it.first->second;
    }
    return next;
  }
  std::unordered_map<int64_t, int64_t, RowHash, RowEq> map(static_cast<size_t>(n / 4 + 16), RowHash{codes.data, d},
                                                           RowEq{codes.data, d});
  for (int64_t i = 0; i < n; ++i) {
    auto it = map.emplace(i, next);
    if (it.second) ++next;
    labels[i] = it.first->second;
  }
  return next;
}

void class_sizes(Span<int64_t> labels, Span<uint8_t> skip, MutSpan<int64_t> sizes) {
  for (int64_t c = 0; c < sizes.size; ++c) sizes[c] = 0;
  const bool has_skip = skip.size > 0;
  for (int64_t i = 0; i < labels.size; ++i) {
    if (has_skip && skip[i]) continue;
    const int64_t c = labels[i];
    if (c < 0 || c >= sizes.size) throw InternalError("class label out of range in class_sizes");
    ++sizes[c];
  }
}

void class_min_max(Matrix<int32_t> codes, Span<int64_t> labels, Span<uint8_t> skip, MutMatrix<int32_t> lo,
                   MutMatrix<int32_t> hi) {
  const int64_t d = codes.cols;
  for (int64_t c = 0; c < lo.rows; ++c)
    for (int64_t j = 0; j < d; ++j) {
      lo(c, j) = std::numeric_limits<int32_t>::max();
      hi(c, j) = -1;
    }
  const bool has_skip = skip.size > 0;
  for (int64_t i = 0; i < codes.rows; ++i) {
    if (has_skip && skip[i]) continue;
    const int64_t c = labels[i];
    if (c < 0 || c >= lo.rows) throw InternalError("class label out of range in class_min_max");
    const int32_t* r = codes.row(i);
    int32_t* l = lo.row(c);
    int32_t* h = hi.row(c);
    for (int64_t j = 0; j < d; ++j) {
      if (r[j] < l[j]) l[j] = r[j];
      if (r[j] > h[j]) h[j] = r[j];
    }
  }
}

void class_histogram(Span<int32_t> values, Span<int64_t> labels, Span<uint8_t> skip, MutMatrix<int64_t> hist) {
  for (int64_t k = 0; k < hist.rows * hist.cols; ++k) hist.data[k] = 0;
  const bool has_skip = skip.size > 0;
  for (int64_t i = 0; i < values.size; ++i) {
    if (has_skip && skip[i]) continue;
    const int64_t c = labels[i];
    const int32_t v = values[i];
    if (c < 0 || c >= hist.rows || v < 0 || v >= hist.cols) throw InternalError("index out of range in class_histogram");
    ++hist(c, v);
  }
}

}  // namespace anoncore::core
