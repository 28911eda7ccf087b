#include "anoncore/metrics/workload.hpp"

#include <algorithm>
#include <bitset>
#include <cmath>
#include <vector>

#include "anoncore/core/parallel.hpp"

namespace anoncore::metrics {

namespace {

/// The row-scan version: O(Q n lambda). Used when the bitsets below would not fit the memory budget.
void count_exact_scan(Matrix<int32_t> qi, Span<int32_t> sa, const CountQueries& q, MutSpan<int64_t> out,
                      int n_threads) {
  const int64_t nq = q.dims.rows, lam = q.dims.cols, n = qi.rows;
  constexpr int64_t kBlock = 8192;
  parallel_chunks(nq, 16, n_threads, [&](int64_t, int64_t q0, int64_t q1) {
    for (int64_t k = q0; k < q1; ++k) out[k] = 0;
    for (int64_t r0 = 0; r0 < n; r0 += kBlock) {
      const int64_t r1 = std::min(n, r0 + kBlock);
      for (int64_t k = q0; k < q1; ++k) {
        const int32_t* dk = q.dims.row(k);
        const int32_t* lk = q.lo.row(k);
        const int32_t* hk = q.hi.row(k);
        const int32_t slo = q.sa_lo[k], shi = q.sa_hi[k];
        int64_t c = 0;
        for (int64_t r = r0; r < r1; ++r) {
          const int32_t s = sa[r];
          if (s < slo || s > shi) continue;
          const int32_t* row = qi.row(r);
          bool ok = true;
          for (int64_t i = 0; i < lam && ok; ++i) {
            const int32_t v = row[dk[i]];
            ok = v >= lk[i] && v <= hk[i];
          }
          c += ok ? 1 : 0;
        }
        out[k] += c;
      }
    }
  });
}

}  // namespace

void count_exact(Matrix<int32_t> qi, Span<int32_t> sa, const CountQueries& q, MutSpan<int64_t> out, int n_threads) {
  const int64_t nq = q.dims.rows, lam = q.dims.cols, n = qi.rows, d = qi.cols;
  if (nq == 0) return;
  // Cumulative row bitsets per column: cum(j, c) = rows whose code in column j is <= c (column d is the SA).
  // A range predicate [lo, hi] is cum(hi) & ~cum(lo - 1); a query is the AND of its lambda + 1 ranges,
  // counted with popcount: O(Q (lambda + 1) n / 64) instead of O(Q n lambda).
  const int64_t words = (n + 63) / 64;
  std::vector<int64_t> card(static_cast<size_t>(d + 1), 0), base(static_cast<size_t>(d + 2), 0);
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t j = 0; j < d; ++j) card[static_cast<size_t>(j)] = std::max<int64_t>(card[static_cast<size_t>(j)], qi(r, j) + 1);
    card[static_cast<size_t>(d)] = std::max<int64_t>(card[static_cast<size_t>(d)], sa[r] + 1);
  }
  for (int64_t j = 0; j <= d; ++j) base[static_cast<size_t>(j + 1)] = base[static_cast<size_t>(j)] + card[static_cast<size_t>(j)];
  const int64_t n_sets = base[static_cast<size_t>(d + 1)];
  constexpr int64_t kBudgetWords = int64_t{1} << 25;  // 256 MiB of bitsets at most
  if (n_sets > kBudgetWords / std::max<int64_t>(words, 1) || n_sets * words > kBudgetWords) {
    count_exact_scan(qi, sa, q, out, n_threads);
    return;
  }
  std::vector<uint64_t> bits(static_cast<size_t>(n_sets * words), 0);
  auto set_of = [&](int64_t j, int64_t c) { return bits.data() + (base[static_cast<size_t>(j)] + c) * words; };
  parallel_chunks(d + 1, 1, n_threads, [&](int64_t, int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j) {
      for (int64_t r = 0; r < n; ++r) {
        const int64_t c = j < d ? qi(r, j) : sa[r];
        set_of(j, c)[r >> 6] |= uint64_t{1} << (r & 63);
      }
      for (int64_t c = 1; c < card[static_cast<size_t>(j)]; ++c) {
        uint64_t* cur = set_of(j, c);
        const uint64_t* prev = set_of(j, c - 1);
        for (int64_t w = 0; w < words; ++w) cur[w] |= prev[w];
      }
    }
  });
  const std::vector<uint64_t> zero(static_cast<size_t>(words), 0);
  parallel_chunks(nq, 16, n_threads, [&](int64_t, int64_t q0, int64_t q1) {
    std::vector<const uint64_t*> hi_set(static_cast<size_t>(lam + 1)), lo_set(static_cast<size_t>(lam + 1));
    for (int64_t k = q0; k < q1; ++k) {
      bool empty = false;
      for (int64_t i = 0; i <= lam; ++i) {
        const int64_t j = i < lam ? q.dims(k, i) : d;
        const int64_t cj = card[static_cast<size_t>(j)];
        const int64_t lo = i < lam ? q.lo(k, i) : q.sa_lo[k];
        const int64_t hi = std::min<int64_t>(i < lam ? q.hi(k, i) : q.sa_hi[k], cj - 1);
        if (hi < lo || hi < 0) {
          empty = true;
          break;
        }
        hi_set[static_cast<size_t>(i)] = set_of(j, hi);
        lo_set[static_cast<size_t>(i)] = lo > 0 ? set_of(j, lo - 1) : zero.data();
      }
      if (empty) {
        out[k] = 0;
        continue;
      }
      int64_t c = 0;
      for (int64_t w = 0; w < words; ++w) {
        uint64_t acc = ~uint64_t{0};
        for (int64_t i = 0; i <= lam && acc; ++i)
          acc &= hi_set[static_cast<size_t>(i)][w] & ~lo_set[static_cast<size_t>(i)][w];
        c += static_cast<int64_t>(std::bitset<64>(acc).count());
      }
      out[k] = c;
    }
  });
}

void count_estimate(Matrix<int32_t> gen_lo, Matrix<int32_t> gen_hi, Matrix<int64_t> sa_prefix, const CountQueries& q,
                    MutSpan<double> out, int n_threads) {
  const int64_t nq = q.dims.rows, lam = q.dims.cols, C = gen_lo.rows, d = gen_lo.cols;
  // Boxes dimension-major (contiguous per QI), so the QI overlap test streams; the SA prefix row of a class
  // is read only when its box meets every QI range (the same sum, in the same class order).
  std::vector<int32_t> lo_t(static_cast<size_t>(C * d)), hi_t(static_cast<size_t>(C * d));
  for (int64_t c = 0; c < C; ++c)
    for (int64_t j = 0; j < d; ++j) {
      lo_t[static_cast<size_t>(j * C + c)] = gen_lo(c, j);
      hi_t[static_cast<size_t>(j * C + c)] = gen_hi(c, j);
    }
  parallel_chunks(nq, 16, n_threads, [&](int64_t, int64_t q0, int64_t q1) {
    std::vector<int32_t> ov(static_cast<size_t>(lam)), wd(static_cast<size_t>(lam));
    for (int64_t k = q0; k < q1; ++k) {
      const int32_t* dk = q.dims.row(k);
      const int32_t* lk = q.lo.row(k);
      const int32_t* hk = q.hi.row(k);
      const auto slo = static_cast<int64_t>(q.sa_lo[k]), shi = static_cast<int64_t>(q.sa_hi[k]);
      double est = 0;
      for (int64_t c = 0; c < C; ++c) {
        bool meets = true;
        for (int64_t i = 0; i < lam && meets; ++i) {
          const size_t at = static_cast<size_t>(dk[i] * C + c);
          const int32_t a = lo_t[at], b = hi_t[at];
          ov[static_cast<size_t>(i)] = std::min(b, hk[i]) - std::max(a, lk[i]) + 1;
          wd[static_cast<size_t>(i)] = b - a + 1;
          meets = ov[static_cast<size_t>(i)] > 0;
        }
        if (!meets) continue;
        const int64_t* pre = sa_prefix.row(c);
        const int64_t cnt = pre[shi + 1] - pre[slo];
        if (cnt == 0) continue;
        double f = static_cast<double>(cnt);  // same operation order as the definition: cnt * prod(ov / width)
        for (int64_t i = 0; i < lam; ++i)
          f = f * static_cast<double>(ov[static_cast<size_t>(i)]) / static_cast<double>(wd[static_cast<size_t>(i)]);
        est += f;
      }
      out[k] = est;
    }
  });
}

double olap_kl(Matrix<int32_t> qi, Span<int32_t> sa, int64_t m, Span<int32_t> dims, Span<int64_t> cards,
               Matrix<int32_t> gen_lo, Matrix<int32_t> gen_hi, Matrix<int64_t> hist) {
  const int64_t mu = dims.size, n = qi.rows, C = gen_lo.rows;
  // Cell index: ((x_0 * card_1 + x_1) ...) * m + sa ; difference arrays use cards + 1 per QI axis.
  std::vector<int64_t> ext(static_cast<size_t>(mu));
  int64_t cells = m, dcells = m;
  for (int64_t i = 0; i < mu; ++i) {
    cells *= cards[i];
    dcells *= cards[i] + 1;
    ext[static_cast<size_t>(i)] = cards[i] + 1;
  }
  std::vector<double> alpha(static_cast<size_t>(cells), 0.0), diff(static_cast<size_t>(dcells), 0.0);
  for (int64_t r = 0; r < n; ++r) {
    int64_t idx = 0;
    for (int64_t i = 0; i < mu; ++i) idx = idx * cards[i] + qi(r, dims[i]);
    alpha[static_cast<size_t>(idx * m + sa[r])] += 1.0;
  }
  // Corner updates: +w at lo, -w at hi+1 per axis (inclusion-exclusion over 2^mu corners).
  const int64_t corners = int64_t{1} << mu;
  for (int64_t c = 0; c < C; ++c) {
    double vol = 1.0;
    for (int64_t i = 0; i < mu; ++i) vol *= static_cast<double>(gen_hi(c, dims[i]) - gen_lo(c, dims[i]) + 1);
    for (int64_t corner = 0; corner < corners; ++corner) {
      int64_t idx = 0;
      int sign = 1;
      for (int64_t i = 0; i < mu; ++i) {
        const bool up = (corner >> i) & 1;
        const int64_t x = up ? gen_hi(c, dims[i]) + 1 : gen_lo(c, dims[i]);
        if (up) sign = -sign;
        idx = idx * ext[static_cast<size_t>(i)] + x;
      }
      for (int64_t v = 0; v < m; ++v) {
        const int64_t h = hist(c, v);
        if (h) diff[static_cast<size_t>(idx * m + v)] += sign * static_cast<double>(h) / vol;
      }
    }
  }
  // Prefix sums along every QI axis.
  int64_t inner = m;
  for (int64_t i = mu - 1; i >= 0; --i) {
    const int64_t len = ext[static_cast<size_t>(i)], outer = dcells / (inner * len);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t x = 1; x < len; ++x) {
        double* cur = diff.data() + (o * len + x) * inner;
        const double* prev = cur - inner;
        for (int64_t s = 0; s < inner; ++s) cur[s] += prev[s];
      }
    inner *= len;
  }
  // KL over the cells where alpha > 0 (beta > 0 there when every row lies in its class's box).
  double kl = 0;
  const double N = static_cast<double>(n);
  std::vector<int64_t> x(static_cast<size_t>(mu), 0);
  for (int64_t cell = 0; cell < cells / m; ++cell) {
    int64_t rem = cell, didx = 0;
    for (int64_t i = mu - 1; i >= 0; --i) {
      x[static_cast<size_t>(i)] = rem % cards[i];
      rem /= cards[i];
    }
    for (int64_t i = 0; i < mu; ++i) didx = didx * ext[static_cast<size_t>(i)] + x[static_cast<size_t>(i)];
    for (int64_t v = 0; v < m; ++v) {
      const double a = alpha[static_cast<size_t>(cell * m + v)];
      if (a <= 0) continue;
      const double b = diff[static_cast<size_t>(didx * m + v)];
      kl += (a / N) * std::log(a / std::max(b, 1e-300));
    }
  }
  return kl;
}

}  // namespace anoncore::metrics
