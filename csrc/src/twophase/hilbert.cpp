#include "anoncore/twophase/hilbert.hpp"

#include <algorithm>
#include <cmath>

#include "anoncore/core/parallel.hpp"

namespace anoncore::twophase {

int hilbert_bits(int64_t n_dims, int64_t max_card) {
  int need = 1;
  while ((int64_t{1} << need) < max_card && need < 32) ++need;
  const int64_t d = std::min<int64_t>(std::max<int64_t>(n_dims, 1), 64);
  const int cap = static_cast<int>(std::max<int64_t>(1, 64 / d));
  return std::min(need, cap);
}

uint64_t hilbert_index(uint32_t* x, int64_t n, int bits) {
  if (n <= 0 || bits <= 0) return 0;
  const uint32_t top = uint32_t{1} << (bits - 1);
  // Undo excess work (Skilling's AxestoTranspose), branch free (the bit tests are data dependent and
  // mispredict on most rows): where bit q of x[i] is set, x[0] ^= p; else exchange the low bits of x[0], x[i].
  uint32_t x0 = x[0];
  for (uint32_t q = top, s = static_cast<uint32_t>(bits - 1); q > 1; q >>= 1, --s) {
    const uint32_t p = q - 1;
    x0 ^= p & (0U - ((x0 >> s) & 1U));  // i = 0: the exchange with itself is a no-op
    for (int64_t i = 1; i < n; ++i) {
      const uint32_t set = 0U - ((x[i] >> s) & 1U);
      const uint32_t t = (x0 ^ x[i]) & p & ~set;
      x0 ^= (p & set) | t;
      x[i] ^= t;
    }
  }
  x[0] = x0;
  // Gray encode.
  for (int64_t i = 1; i < n; ++i) x[i] ^= x[i - 1];
  uint32_t t = 0;
  for (uint32_t q = top, s = static_cast<uint32_t>(bits - 1); q > 1; q >>= 1, --s)
    t ^= (q - 1) & (0U - ((x[n - 1] >> s) & 1U));
  for (int64_t i = 0; i < n; ++i) x[i] ^= t;
  // Interleave the transposed bits, most significant first.
  uint64_t key = 0;
  for (int b = bits - 1; b >= 0; --b)
    for (int64_t i = 0; i < n; ++i) key = (key << 1) | ((x[i] >> b) & 1U);
  return key;
}

void hilbert_keys(Matrix<int32_t> codes, const CoordTables& coords, int bits, MutSpan<uint64_t> keys, int n_threads) {
  const int64_t d = std::min<int64_t>(codes.cols, 64);
  const double cells = static_cast<double>(uint64_t{1} << bits);
  const auto maxc = static_cast<uint32_t>((uint64_t{1} << bits) - 1);
  parallel_chunks(codes.rows, 1 << 15, n_threads, [&](int64_t, int64_t b, int64_t e) {
    std::vector<uint32_t> cell(static_cast<size_t>(std::max<int64_t>(d, 1)));
    for (int64_t r = b; r < e; ++r) {
      const int32_t* row = codes.row(r);
      for (int64_t j = 0; j < d; ++j) {
        const double c = std::floor(coords.at(row[j], j) * cells);
        cell[static_cast<size_t>(j)] = c <= 0 ? 0U : std::min(maxc, static_cast<uint32_t>(c));
      }
      keys[r] = hilbert_index(cell.data(), d, bits);
    }
  });
}

// Hilbert keys of every row. When the QI domain is small (product of the cardinalities at most n / 4, e.g.
// 79 x 2 x 17 cells for the thesis's 3 QIs), the shared hilbert_keys runs once per grid cell and rows gather
// their cell's key (same keys, O(n d) gather instead of O(n d bits), over the threads); otherwise it runs per row.
void hilbert_keys_by_cell(Matrix<int32_t> qi, const CoordTables& coords, int bits, MutSpan<uint64_t> keys, int n_threads) {
  const int64_t n = qi.rows, d = qi.cols;
  int64_t cells = 1;
  std::vector<int64_t> card(static_cast<size_t>(d));
  for (int64_t j = 0; j < d && cells <= n / 4; ++j) {
    card[static_cast<size_t>(j)] = coords.offsets[j + 1] - coords.offsets[j];
    cells *= std::max<int64_t>(card[static_cast<size_t>(j)], 1);
  }
  if (d == 0 || d > 64 || cells > n / 4) {
    hilbert_keys(qi, coords, bits, keys, n_threads);
    return;
  }
  std::vector<int32_t> grid(static_cast<size_t>(cells * d));
  for (int64_t c = 0; c < cells; ++c) {
    int64_t rest = c;
    for (int64_t j = d - 1; j >= 0; --j) {
      grid[static_cast<size_t>(c * d + j)] = static_cast<int32_t>(rest % card[static_cast<size_t>(j)]);
      rest /= card[static_cast<size_t>(j)];
    }
  }
  std::vector<uint64_t> cell_keys(static_cast<size_t>(cells));
  hilbert_keys(Matrix<int32_t>{grid.data(), cells, d}, coords, bits, MutSpan<uint64_t>{cell_keys.data(), cells},
               n_threads);
  const int64_t* cd = card.data();
  const uint64_t* ck = cell_keys.data();
  parallel_chunks(n, 1 << 15, n_threads, [&](int64_t, int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int32_t* row = qi.row(r);
      int64_t c = 0;
      for (int64_t j = 0; j < d; ++j) c = c * cd[j] + row[j];
      keys[r] = ck[c];
    }
  });
}

}  // namespace anoncore::twophase
