#include "anoncore/datasets/census.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "anoncore/core/parallel.hpp"
#include "anoncore/core/status.hpp"

// The score must round exactly as numpy's elementwise passes: no fused multiply-add.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace anoncore::datasets {
namespace {

constexpr int64_t kChunk = int64_t{1} << 16;
constexpr int64_t kBins = int64_t{1} << 16;

/// numpy's _draw for one row: the guide table's category for u's bin, then forward to the first cdf > u.
/// (u in [0, 1) from numpy; the bounds only keep a bad u inside the tables.)
inline int64_t draw(const DrawTable& t, int64_t guide_size, int64_t cond, double u) {
  const auto b = std::clamp<int64_t>(static_cast<int64_t>(u * static_cast<double>(guide_size)), 0, guide_size - 1);
  int64_t j = t.guide[static_cast<size_t>(cond * guide_size + b)];
  const double* row = t.cdf.data() + cond * t.k;
  while (j < t.k - 1 && row[j] <= u) ++j;
  return j;
}

}  // namespace

void census_rows(const CensusModel& model, Matrix<double> u, MutMatrix<int32_t> out_codes, MutSpan<double> out_score) {
  const int64_t m = u.cols, g = model.guide_size;
  const auto& D = model.draws;
  const auto& cm = model.code_maps;
  for (int64_t i = 0; i < m; ++i) {
    const int64_t age = draw(D[0], g, 0, u(0, i));
    const int64_t sex = draw(D[1], g, 0, u(1, i));
    const int64_t race = draw(D[2], g, 0, u(2, i));
    const int64_t marital = draw(D[3], g, age, u(3, i));
    const int64_t edu = draw(D[4], g, age, u(4, i));
    const int64_t birth = draw(D[5], g, race, u(5, i));
    const int64_t eb = model.edu_band[static_cast<size_t>(edu)];
    const int64_t wc = draw(D[6], g, model.age_band[static_cast<size_t>(age)] * 4 + eb, u(6, i));
    const int64_t occ = draw(D[7], g, (eb * 2 + sex) * 2 + model.working[static_cast<size_t>(wc)], u(7, i));
    int32_t* r = out_codes.row(i);
    const int64_t idx[8] = {age, sex, edu, marital, race, wc, birth, occ};  // CENSUS_COLUMNS order
    for (int j = 0; j < 8; ++j) r[j] = cm[static_cast<size_t>(j)][static_cast<size_t>(idx[j])];
    // numpy's order: ((((0.16 edu - 0.7 age^2) + 0.25 male) + occupation) + work class) [+ 0.55 noise later]
    double s = model.edu_term[static_cast<size_t>(edu)] - model.age_term[static_cast<size_t>(age)];
    s = s + model.sex_term[static_cast<size_t>(sex)];
    s = s + model.occ_term[static_cast<size_t>(occ)];
    s = s + model.wc_term[static_cast<size_t>(wc)];
    out_score[i] = s;
  }
}

void census_spans(CensusSpans& work, int n_threads) {
  constexpr int64_t kSub = 4096;  // rows per block of uniforms (8 x 32 KB, in the core's cache)
  const int64_t n_spans = work.bounds.size - 1;
  const int threads = std::max(1, resolve_threads(n_threads));
  parallel_chunks(threads, 1, threads, [&](int64_t, int64_t, int64_t) {
    std::vector<double> u(static_cast<size_t>(8 * kSub));
    for (int64_t s = work.next.fetch_add(1); s < n_spans; s = work.next.fetch_add(1)) {
      NumpyBitGen* const* g = work.gens.data() + 8 * s;
      const int64_t end = work.bounds[s + 1];
      for (int64_t i0 = work.bounds[s]; i0 < end; i0 += kSub) {
        const int64_t m = std::min(kSub, end - i0);
        for (int64_t k = 0; k < 8; ++k) {
          double* row = u.data() + k * m;
          NumpyBitGen* const bg = g[k];
          for (int64_t i = 0; i < m; ++i) row[i] = bg->next_double(bg->state);
        }
        census_rows(*work.model, Matrix<double>{u.data(), 8, m},
                    MutMatrix<int32_t>{work.codes.row(i0), m, work.codes.cols}, MutSpan<double>{work.score.data + i0, m});
      }
    }
  });
}

void fill_zero(MutSpan<double> x, int n_threads) {
  parallel_chunks(x.size, kChunk, n_threads, [&](int64_t, int64_t i0, int64_t i1) {
    std::fill(x.data + i0, x.data + i1, 0.0);
  });
}

namespace {

/// Exact order statistics of `x` at the ascending ranks `ranks`: a histogram over kBins equal-width bins of
/// [min, max] (bin index monotone in x), then the values of the bins holding a rank, sorted.
std::vector<double> order_statistics(Span<double> x, Span<int64_t> ranks, int n_threads) {
  const int64_t n = x.size, n_chunks = (n + kChunk - 1) / kChunk;
  std::vector<double> lo_c(static_cast<size_t>(n_chunks)), hi_c(static_cast<size_t>(n_chunks));
  parallel_chunks(n, kChunk, n_threads, [&](int64_t c, int64_t i0, int64_t i1) {
    double lo = x[i0], hi = x[i0];
    for (int64_t i = i0; i < i1; ++i) {
      lo = std::min(lo, x[i]);
      hi = std::max(hi, x[i]);
    }
    lo_c[static_cast<size_t>(c)] = lo;
    hi_c[static_cast<size_t>(c)] = hi;
  });
  const double lo = *std::min_element(lo_c.begin(), lo_c.end());
  const double hi = *std::max_element(hi_c.begin(), hi_c.end());
  std::vector<double> out(static_cast<size_t>(ranks.size), lo);
  if (!(hi > lo)) return out;
  const double scale = static_cast<double>(kBins) / (hi - lo);
  auto bin = [&](double v) { return std::min<int64_t>(kBins - 1, static_cast<int64_t>((v - lo) * scale)); };
  // Per-slab histograms (exact counts: their sum does not depend on the number of slabs).
  const int64_t slabs = std::max<int64_t>(1, std::min<int64_t>(resolve_threads(n_threads), n_chunks));
  std::vector<int64_t> hist(static_cast<size_t>(slabs * kBins), 0);
  parallel_chunks(slabs, 1, static_cast<int>(slabs), [&](int64_t s, int64_t, int64_t) {
    int64_t* h = hist.data() + s * kBins;
    for (int64_t i = n * s / slabs; i < n * (s + 1) / slabs; ++i) ++h[bin(x[i])];
  });
  std::vector<int64_t> start(static_cast<size_t>(kBins + 1), 0);  // rows in bins below b
  for (int64_t b = 0; b < kBins; ++b) {
    int64_t s = 0;
    for (int64_t c = 0; c < slabs; ++c) s += hist[static_cast<size_t>(c * kBins + b)];
    start[static_cast<size_t>(b + 1)] = start[static_cast<size_t>(b)] + s;
  }
  std::vector<int32_t> slot(static_cast<size_t>(kBins), -1);
  std::vector<int64_t> bins_needed;
  for (int64_t t = 0; t < ranks.size; ++t) {
    const int64_t r = ranks[t];
    if (r < 0 || r >= n) throw std::out_of_range("cut rank outside the rows");
    const int64_t b = std::upper_bound(start.begin(), start.end(), r) - start.begin() - 1;
    if (slot[static_cast<size_t>(b)] < 0) {
      slot[static_cast<size_t>(b)] = static_cast<int32_t>(bins_needed.size());
      bins_needed.push_back(b);
    }
  }
  const size_t nb = bins_needed.size();
  std::vector<std::vector<double>> part(static_cast<size_t>(n_chunks) * nb);
  parallel_chunks(n, kChunk, n_threads, [&](int64_t c, int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int32_t s = slot[static_cast<size_t>(bin(x[i]))];
      if (s >= 0) part[static_cast<size_t>(c) * nb + static_cast<size_t>(s)].push_back(x[i]);
    }
  });
  std::vector<std::vector<double>> vals(nb);
  for (size_t s = 0; s < nb; ++s) {
    for (int64_t c = 0; c < n_chunks; ++c) {
      const auto& p = part[static_cast<size_t>(c) * nb + s];
      vals[s].insert(vals[s].end(), p.begin(), p.end());
    }
    std::sort(vals[s].begin(), vals[s].end());
  }
  for (int64_t t = 0; t < ranks.size; ++t) {
    const int64_t r = ranks[t];
    const int64_t b = std::upper_bound(start.begin(), start.end(), r) - start.begin() - 1;
    const auto& v = vals[static_cast<size_t>(slot[static_cast<size_t>(b)])];
    out[static_cast<size_t>(t)] = v[static_cast<size_t>(r - start[static_cast<size_t>(b)])];
  }
  return out;
}

}  // namespace

std::vector<double> census_salary(const CensusModel& model, MutSpan<double> score, Span<double> noise,
                                  Span<int64_t> cut_index, MutMatrix<int32_t> codes, MutSpan<int32_t> salary,
                                  int n_threads) {
  const int64_t n = score.size;
  if (noise.size != n || codes.rows != n || codes.cols < 9 || (salary.size != 0 && salary.size != n))
    throw InternalError("census_salary: shapes differ");
  int32_t* const sal_out = salary.size != 0 ? salary.data : nullptr;
  const double ns = model.noise_scale;
  parallel_chunks(n, kChunk, n_threads, [&](int64_t, int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const double e = ns * noise[i];
      score[i] = score[i] + e;
    }
  });
  std::vector<double> cuts = order_statistics(Span<double>{score.data, n}, cut_index, n_threads);
  // Cuts below each of kBins equal-width bins of [cuts.front(), cuts.back()] (bin index monotone in the score):
  // rows outside that range or in a bin without a cut need no comparison.
  const int64_t nc = static_cast<int64_t>(cuts.size());
  const double c_lo = nc > 0 ? cuts.front() : 0.0, c_hi = nc > 0 ? cuts.back() : 0.0;
  const double scale = c_hi > c_lo ? static_cast<double>(kBins) / (c_hi - c_lo) : 0.0;
  auto bin = [&](double v) { return std::min<int64_t>(kBins - 1, static_cast<int64_t>((v - c_lo) * scale)); };
  std::vector<int32_t> below(static_cast<size_t>(kBins + 1), 0), within(static_cast<size_t>(kBins), 0);
  for (int64_t t = 0; t < nc; ++t) {
    const int64_t b = bin(cuts[static_cast<size_t>(t)]);
    ++within[static_cast<size_t>(b)];
    ++below[static_cast<size_t>(b + 1)];
  }
  for (int64_t b = 0; b < kBins; ++b) below[static_cast<size_t>(b + 1)] += below[static_cast<size_t>(b)];
  const auto& sal = model.code_maps[8];
  if (static_cast<int64_t>(sal.size()) < cut_index.size + 1) throw InternalError("census_salary: salary map too short");
  parallel_chunks(n, kChunk, n_threads, [&](int64_t, int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const double v = score[i];
      int64_t k;  // cuts below v (numpy's searchsorted side='left')
      if (nc == 0 || v <= c_lo) {
        k = 0;
      } else if (v > c_hi) {
        k = nc;
      } else {
        const int64_t b = bin(v);
        k = below[static_cast<size_t>(b)];
        for (int64_t w = within[static_cast<size_t>(b)]; w > 0 && cuts[static_cast<size_t>(k)] < v; --w) ++k;
      }
      const int32_t code = sal[static_cast<size_t>(k)];
      codes(i, 8) = code;
      if (sal_out != nullptr) sal_out[i] = code;
    }
  });
  return cuts;
}

}  // namespace anoncore::datasets
