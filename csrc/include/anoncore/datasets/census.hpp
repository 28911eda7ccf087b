// The synthetic census generator's per-row work (anoncore.datasets.census): conditional inverse-CDF draws with
// guide tables, the salary score, and the salary classes cut at the score's quantiles. The uniforms and normals
// come from numpy's generator (Python), so the rows are those of the numpy reference at any thread count.
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

#include "anoncore/core/views.hpp"

namespace anoncore::datasets {

/// One conditional table: `rows` cumulative rows of `k` categories (last entry exactly 1) and the guide table
/// guide(c, b) = category of u = b / guide_size under row c (Chen and Asau).
struct DrawTable {
  std::vector<double> cdf;      // rows * k
  std::vector<int64_t> guide;   // rows * guide_size
  int64_t rows = 0, k = 0;
};

/// The generative model's tables (built once in Python): the eight draws in the order age, sex, race, marital,
/// education, birth place, work class, occupation; per age / education index the age band and education band
/// (work class condition), per work class whether it works; the score terms per value; and per column the
/// generator index -> output code map (identity for the DataFrame).
struct CensusModel {
  std::vector<DrawTable> draws;  // 8
  int64_t guide_size = 1024;
  std::vector<int64_t> age_band, edu_band, working;
  std::vector<double> edu_term, age_term, sex_term, occ_term, wc_term;
  double noise_scale = 0.55;
  std::vector<std::vector<int32_t>> code_maps;  // 9 columns (salary's map indexed by class 0..49)
};

/// Rows [0, m) of a chunk: u is (8, m) uniforms (the eight draws' streams), out_codes (m, 9) row-major receives
/// the codes of the first eight columns (salary is written by census_salary), out_score (m) the salary score
/// without its noise term. Serial (the caller runs chunks in parallel).
void census_rows(const CensusModel& model, Matrix<double> u, MutMatrix<int32_t> out_codes, MutSpan<double> out_score);

/// numpy's bit generator interface (the `bitgen_t` of numpy/random/bitgen.h, behind a BitGenerator's
/// `capsule`): next_double(state) is the uniform in [0, 1) that numpy's Generator.random draws.
struct NumpyBitGen {
  void* state;
  uint64_t (*next_uint64)(void* st);
  uint32_t (*next_uint32)(void* st);
  double (*next_double)(void* st);
  uint64_t (*next_raw)(void* st);
};

/// The spans of a draw: rows [bounds[s], bounds[s + 1]) of span s come from the uniforms of gens[8 s + k] (the
/// k-th draw's stream, positioned at the span's first row); `next` is the first span no caller has taken.
struct CensusSpans {
  const CensusModel* model = nullptr;
  std::vector<NumpyBitGen*> gens;
  Span<int64_t> bounds;
  MutMatrix<int32_t> codes;
  MutSpan<double> score;
  std::atomic<int64_t> next{0};
};

/// Draws spans of `work` (codes[:, :8] and the scores without noise, as census_rows) on n_threads threads, each
/// taking the next span left until none is: callers on other threads may draw from the same spans at the same
/// time (the normals' thread joins once its own draw is done). A span's generators are used by the one thread
/// that took it; the rows depend only on the streams, never on the spans or threads.
void census_spans(CensusSpans& work, int n_threads);

/// x[i] = 0 on n_threads threads (a new buffer's pages first touched by all of them, not by its one writer).
void fill_zero(MutSpan<double> x, int n_threads);

/// score[i] += noise_scale * noise[i]; cuts[t] = the order statistic of rank cut_index[t] (0-based, ascending) of
/// the scores; codes(i, 8) = salary map of the number of cuts below score[i]. Parallel over fixed chunks with an
/// exact selection (histogram of the scores, then the few bins holding the ranks): the same for any n_threads.
/// salary (size n, or empty: none) receives the same codes contiguously (the table's column without a strided
/// pass over the code matrix).
std::vector<double> census_salary(const CensusModel& model, MutSpan<double> score, Span<double> noise,
                                  Span<int64_t> cut_index, MutMatrix<int32_t> codes, MutSpan<int32_t> salary,
                                  int n_threads);

}  // namespace anoncore::datasets
