#include "anoncore/sequence/counting.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "anoncore/core/parallel.hpp"

namespace anoncore::sequence {
namespace {

constexpr int64_t kUserChunk = 8;  // users per parallel chunk; independent of the thread count

/// C(n, k) with saturation at INT64_MAX (k small, as pattern lengths are).
int64_t binom(int64_t n, int64_t k) {
  if (k < 0 || n < 0 || k > n) return 0;
  k = std::min(k, n - k);
  // Multiplicative formula in unsigned __int128 to keep the intermediate exact.
  unsigned __int128 r = 1;
  const unsigned __int128 cap = static_cast<unsigned __int128>(std::numeric_limits<int64_t>::max());
  for (int64_t i = 1; i <= k; ++i) {
    r = r * static_cast<unsigned __int128>(n - k + i) / static_cast<unsigned __int128>(i);
    if (r > cap) return std::numeric_limits<int64_t>::max();
  }
  return static_cast<int64_t>(r);
}

int64_t sat_add(int64_t a, int64_t b) {
  if (a > std::numeric_limits<int64_t>::max() - b) return std::numeric_limits<int64_t>::max();
  return a + b;
}

int64_t sat_mul(int64_t a, int64_t b) {
  if (a != 0 && b > std::numeric_limits<int64_t>::max() / a) return std::numeric_limits<int64_t>::max();
  return a * b;
}

}  // namespace

int64_t total_embeddings(int64_t n, int64_t w, int64_t m) {
  if (n <= 0 || m <= 0) return 0;
  if (n <= w) return binom(n, m);
  return sat_add(sat_mul(n - w, binom(w, m - 1)), binom(w, m));
}

void count_patterns(Span<int64_t> offsets, Span<int32_t> symbols, Span<int32_t> gen_map, Matrix<int32_t> patterns,
                    int64_t n_nodes, int64_t w, int n_threads, MutMatrix<int64_t> counts) {
  const int64_t n_users = offsets.size - 1;
  const int64_t n_pat = patterns.rows;
  const int64_t m = patterns.cols;
  if (n_users <= 0 || n_pat == 0) return;

  // CSR of pattern indices by their last symbol (used by the m = 2 pass).
  std::vector<int64_t> by_last_start(static_cast<size_t>(n_nodes) + 1, 0);
  std::vector<int64_t> by_last;
  if (m == 2) {
    for (int64_t k = 0; k < n_pat; ++k) by_last_start[static_cast<size_t>(patterns(k, 1)) + 1]++;
    for (int64_t v = 0; v < n_nodes; ++v) by_last_start[static_cast<size_t>(v + 1)] += by_last_start[static_cast<size_t>(v)];
    by_last.resize(static_cast<size_t>(n_pat));
    std::vector<int64_t> fill(by_last_start.begin(), by_last_start.end() - 1);
    for (int64_t k = 0; k < n_pat; ++k) by_last[static_cast<size_t>(fill[static_cast<size_t>(patterns(k, 1))]++)] = k;
  }
  const int32_t* map = gen_map.data;
  const int32_t* sym = symbols.data;

  parallel_chunks(n_users, kUserChunk, n_threads, [&](int64_t, int64_t ub, int64_t ue) {
    std::vector<int64_t> window(m == 2 ? static_cast<size_t>(n_nodes) : 0, 0);
    std::vector<int64_t> acc(static_cast<size_t>(n_pat), 0);
    std::vector<int64_t> dp(static_cast<size_t>(m), 0);
    for (int64_t u = ub; u < ue; ++u) {
      const int64_t lo = offsets[u];
      const int64_t n = offsets[u + 1] - lo;
      const int32_t* s = sym + lo;
      std::fill(acc.begin(), acc.end(), 0);
      if (m == 1) {
        for (int64_t i = 0; i < n; ++i) {
          const int32_t g = map[s[i]];
          for (int64_t k = 0; k < n_pat; ++k) acc[static_cast<size_t>(k)] += (patterns(k, 0) == g);
        }
      } else if (m == 2) {
        // window[v] = #{i in [j − w, j − 1] : map[S[i]] = v}; for each j add window[first] of every pattern
        // whose second symbol is map[S[j]].
        int64_t* win = window.data();
        const int64_t* bls = by_last_start.data();
        const int64_t* bl = by_last.data();
        for (int64_t j = 0; j < n; ++j) {
          if (j - w - 1 >= 0) --win[map[s[j - w - 1]]];
          const int32_t g = map[s[j]];
          for (int64_t t = bls[g]; t < bls[g + 1]; ++t) {
            const int64_t k = bl[t];
            acc[static_cast<size_t>(k)] += win[patterns(k, 0)];
          }
          ++win[g];
        }
        // Undo the window (only touched entries) so the buffer is zero for the next user.
        for (int64_t j = std::max<int64_t>(0, n - w - 1); j < n; ++j) --win[map[s[j]]];
      } else {
        for (int64_t k = 0; k < n_pat; ++k) {
          const int32_t* p = patterns.row(k);
          int64_t total = 0;
          for (int64_t st = 0; st < n; ++st) {
            if (map[s[st]] != p[0]) continue;
            dp[0] = 1;
            std::fill(dp.begin() + 1, dp.end(), 0);
            const int64_t end = std::min(st + w, n - 1);
            for (int64_t j = st + 1; j <= end; ++j) {
              const int32_t g = map[s[j]];
              for (int64_t q = m - 1; q >= 1; --q)
                if (g == p[q]) dp[static_cast<size_t>(q)] += dp[static_cast<size_t>(q - 1)];
            }
            total += dp[static_cast<size_t>(m - 1)];
          }
          acc[static_cast<size_t>(k)] = total;
        }
      }
      for (int64_t k = 0; k < n_pat; ++k) counts(u, k) = acc[static_cast<size_t>(k)];
    }
  });
}

void pair_table(Span<int64_t> offsets, Span<int32_t> symbols, int64_t n_leaves, int64_t w, int n_threads,
                MutSpan<int64_t> out) {
  const int64_t n_users = offsets.size - 1;
  if (n_users <= 0) return;
  const int64_t L2 = n_leaves * n_leaves;
  std::memset(out.data, 0, static_cast<size_t>(out.size) * sizeof(int64_t));
  parallel_chunks(n_users, kUserChunk, n_threads, [&](int64_t, int64_t ub, int64_t ue) {
    for (int64_t u = ub; u < ue; ++u) {
      const int64_t lo = offsets[u];
      const int64_t n = offsets[u + 1] - lo;
      const int32_t* s = symbols.data + lo;
      int64_t* t = out.data + u * L2;
      for (int64_t i = 0; i < n; ++i) {
        int64_t* row = t + static_cast<int64_t>(s[i]) * n_leaves;
        const int64_t end = std::min(i + w, n - 1);
        for (int64_t j = i + 1; j <= end; ++j) ++row[s[j]];
      }
    }
  });
}

void unigram_counts(Span<int64_t> offsets, Span<int32_t> symbols, int64_t n_leaves, int n_threads,
                    MutSpan<int64_t> out) {
  const int64_t n_users = offsets.size - 1;
  if (n_users <= 0) return;
  std::memset(out.data, 0, static_cast<size_t>(out.size) * sizeof(int64_t));
  parallel_chunks(n_users, kUserChunk, n_threads, [&](int64_t, int64_t ub, int64_t ue) {
    for (int64_t u = ub; u < ue; ++u) {
      int64_t* row = out.data + u * n_leaves;
      for (int64_t i = offsets[u]; i < offsets[u + 1]; ++i) ++row[symbols[i]];
    }
  });
}

}  // namespace anoncore::sequence
