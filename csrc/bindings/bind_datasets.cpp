// Bindings for anoncore::datasets: the synthetic census generator's per-row kernels (datasets/census.py).
#include <string>

#include "anoncore/datasets/census.hpp"
#include "common.hpp"

namespace anoncore::bindings {
namespace {

template <class T>
std::vector<T> vec_of(const CArray<T>& a, const char* name) {
  auto s = span_of(a, name);
  return std::vector<T>(s.data, s.data + s.size);
}

/// The model from Python's tables, checked so that every index the kernels take stays inside its table.
datasets::CensusModel make_model(const py::list& cdfs, const py::list& guides, int64_t guide_size,
                                 const CArray<int64_t>& age_band, const CArray<int64_t>& edu_band,
                                 const CArray<int64_t>& working, const py::list& terms, double noise_scale,
                                 const py::list& code_maps) {
  if (cdfs.size() != 8 || guides.size() != 8 || terms.size() != 5 || code_maps.size() != 9 || guide_size < 1)
    throw std::invalid_argument("CensusModel needs 8 cdf and guide tables, 5 score terms and 9 code maps");
  datasets::CensusModel m;
  m.guide_size = guide_size;
  for (size_t t = 0; t < 8; ++t) {
    auto cdf = cdfs[t].cast<CArray<double>>();
    auto guide = guides[t].cast<CArray<int64_t>>();
    auto cv = matrix_of(cdf, "cdf");
    auto gv = matrix_of(guide, "guide", cv.rows, guide_size);
    datasets::DrawTable d;
    d.rows = cv.rows;
    d.k = cv.cols;
    d.cdf.assign(cv.data, cv.data + cv.rows * cv.cols);
    d.guide.assign(gv.data, gv.data + gv.rows * gv.cols);
    for (int64_t g : d.guide)
      if (g < 0 || g >= d.k) throw std::invalid_argument("guide entries must be categories of their table");
    m.draws.push_back(std::move(d));
  }
  m.age_band = vec_of(age_band, "age_band");
  m.edu_band = vec_of(edu_band, "edu_band");
  m.working = vec_of(working, "working");
  std::vector<double>* dst[5] = {&m.edu_term, &m.age_term, &m.sex_term, &m.occ_term, &m.wc_term};
  for (size_t t = 0; t < 5; ++t) *dst[t] = vec_of(terms[t].cast<CArray<double>>(), "terms");
  m.noise_scale = noise_scale;
  for (size_t j = 0; j < 9; ++j) m.code_maps.push_back(vec_of(code_maps[j].cast<CArray<int32_t>>(), "code_maps"));
  const auto& D = m.draws;
  auto need = [](bool ok, const char* what) {
    if (!ok) throw std::invalid_argument(std::string("CensusModel: ") + what);
  };
  auto size = [](const auto& v) { return static_cast<int64_t>(v.size()); };
  need(D[0].rows == 1 && D[1].rows == 1 && D[2].rows == 1, "age, sex and race are unconditional");
  need(D[3].rows >= D[0].k && D[4].rows >= D[0].k && D[5].rows >= D[2].k, "condition tables too short");
  need(size(m.age_band) >= D[0].k && size(m.edu_band) >= D[4].k && size(m.working) >= D[6].k, "bands too short");
  for (int64_t b : m.age_band) need(b >= 0 && b * 4 + 3 < D[6].rows, "age band outside the work class table");
  for (int64_t b : m.edu_band) need(b >= 0 && b < 4 && (b * 2 + 1) * 2 + 1 < D[7].rows, "education band range");
  for (int64_t w : m.working) need(w == 0 || w == 1, "working must be 0 or 1");
  need(D[1].k <= 2, "two sexes");
  need(size(m.edu_term) >= D[4].k && size(m.age_term) >= D[0].k && size(m.sex_term) >= D[1].k &&
           size(m.occ_term) >= D[7].k && size(m.wc_term) >= D[6].k, "score terms too short");
  const int draw_of_column[8] = {0, 1, 4, 3, 2, 6, 5, 7};
  for (int j = 0; j < 8; ++j)
    need(size(m.code_maps[static_cast<size_t>(j)]) >= D[static_cast<size_t>(draw_of_column[j])].k, "code map too short");
  return m;
}

}  // namespace

void bind_datasets(py::module_ m) {
  m.doc() = "synthetic data generators";
  py::class_<datasets::CensusModel>(m, "CensusModel")
      .def(py::init(&make_model), py::arg("cdfs"), py::arg("guides"), py::arg("guide_size"), py::arg("age_band"),
           py::arg("edu_band"), py::arg("working"), py::arg("terms"), py::arg("noise_scale"), py::arg("code_maps"),
           "The synthetic census's tables: 8 (cdf, guide) draws, bands, 5 score terms (education, age, sex, "
           "occupation, work class), the noise scale and 9 code maps.");
  m.def(
      "census_rows",
      [](const datasets::CensusModel& model, const CArray<double>& u, CArray<int32_t>& codes, CArray<double>& score) {
        auto uv = matrix_of(u, "u", 8);
        if (!codes.writeable() || !score.writeable()) throw std::invalid_argument("codes and score must be writable");
        auto cv = mut_matrix_of(codes, "codes");
        auto sv = mut_span_of(score, "score", uv.cols);
        if (cv.rows != uv.cols || cv.cols != 9) throw std::invalid_argument("codes must have shape (m, 9)");
        {
          py::gil_scoped_release nogil;
          datasets::census_rows(model, uv, cv, sv);
        }
      },
      py::arg("model"), py::arg("u").noconvert(), py::arg("codes").noconvert(), py::arg("score").noconvert(),
      "Rows of one chunk from its (8, m) uniforms: codes[:, :8] and the salary score without noise.");
  py::class_<datasets::CensusSpans, std::unique_ptr<datasets::CensusSpans>>(m, "CensusSpans")
      .def(py::init([](const datasets::CensusModel& model, const py::list& gens, const CArray<int64_t>& bounds,
                       CArray<int32_t>& codes, CArray<double>& score) {
             auto bv = span_of(bounds, "bounds");
             if (!codes.writeable() || !score.writeable())
               throw std::invalid_argument("codes and score must be writable");
             auto cv = mut_matrix_of(codes, "codes");
             auto sv = mut_span_of(score, "score", cv.rows);
             if (cv.cols != 9) throw std::invalid_argument("codes must have shape (n, 9)");
             if (bv.size < 2 || bv[0] != 0 || bv[bv.size - 1] != cv.rows)
               throw std::invalid_argument("bounds must run from 0 to the number of rows");
             for (int64_t s = 0; s + 1 < bv.size; ++s)
               if (bv[s] > bv[s + 1]) throw std::invalid_argument("bounds must not decrease");
             if (static_cast<int64_t>(gens.size()) != 8 * (bv.size - 1))
               throw std::invalid_argument("CensusSpans needs 8 bit generators per span");
             auto w = std::make_unique<datasets::CensusSpans>();
             w->model = &model;
             w->gens.reserve(gens.size());
             for (const auto& obj : gens) {
               auto cap = obj.attr("capsule").cast<py::capsule>();
               if (std::string(cap.name() == nullptr ? "" : cap.name()) != "BitGenerator")
                 throw std::invalid_argument("CensusSpans needs numpy bit generators");
               w->gens.push_back(cap.get_pointer<datasets::NumpyBitGen>());
             }
             w->bounds = bv;
             w->codes = cv;
             w->score = sv;
             return w;
           }),
           // (the spans keep their model, generators and arrays alive)
           py::keep_alive<1, 2>(), py::keep_alive<1, 3>(), py::keep_alive<1, 4>(), py::keep_alive<1, 5>(),
           py::keep_alive<1, 6>(), py::arg("model"), py::arg("gens"), py::arg("bounds").noconvert(),
           py::arg("codes").noconvert(), py::arg("score").noconvert(),
           "The spans of a draw: rows [bounds[s], bounds[s+1]) from the uniforms of gens[8 s + k] (numpy bit "
           "generators, stream k positioned at the span's first row), written to codes[:, :8] and score.")
      .def(
          "draw",
          [](datasets::CensusSpans& w, int n_threads) {
            py::gil_scoped_release nogil;
            datasets::census_spans(w, n_threads);
          },
          py::arg("n_threads"),
          "Draws the spans no caller has taken yet on n_threads threads (other threads may draw from the same "
          "spans at the same time); returns when none is left.");
  m.def(
      "fill_zero",
      [](CArray<double>& x, int n_threads) {
        if (!x.writeable()) throw std::invalid_argument("x must be writable");
        auto xv = mut_span_of(x, "x");
        py::gil_scoped_release nogil;
        datasets::fill_zero(xv, n_threads);
      },
      py::arg("x").noconvert(), py::arg("n_threads"),
      "x[:] = 0 on n_threads threads (a new buffer's pages first touched by all of them).");
  m.def(
      "census_salary",
      [](const datasets::CensusModel& model, CArray<double>& score, const CArray<double>& noise,
         const CArray<int64_t>& cut_index, CArray<int32_t>& codes, CArray<int32_t>& salary, int n_threads) {
        if (!codes.writeable() || !score.writeable() || !salary.writeable())
          throw std::invalid_argument("codes, score and salary must be writable");
        auto sv = mut_span_of(score, "score");
        auto nv = span_of(noise, "noise", sv.size);
        auto iv = span_of(cut_index, "cut_index");
        auto cv = mut_matrix_of(codes, "codes");
        if (cv.rows != sv.size || cv.cols != 9) throw std::invalid_argument("codes must have shape (n, 9)");
        auto av = mut_span_of(salary, "salary");
        if (av.size != 0 && av.size != sv.size) throw std::invalid_argument("salary must have n entries or none");
        std::vector<double> cuts;
        {
          py::gil_scoped_release nogil;
          cuts = datasets::census_salary(model, sv, nv, iv, cv, av, n_threads);
        }
        return to_numpy(std::move(cuts));
      },
      py::arg("model"), py::arg("score").noconvert(), py::arg("noise").noconvert(), py::arg("cut_index").noconvert(),
      py::arg("codes").noconvert(), py::arg("salary").noconvert(), py::arg("n_threads"),
      "Adds noise_scale * noise to the scores, cuts them at the order statistics of ranks cut_index and writes "
      "the salary codes into codes[:, 8] and, when it is not empty, into salary (n contiguous codes); returns "
      "the cuts.");
}

}  // namespace anoncore::bindings
