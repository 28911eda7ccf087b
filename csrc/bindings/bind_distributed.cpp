// Bindings for anoncore::itemsets (anoncore.distributed's item sets): conversion, GIL release, one call each.
#include "anoncore/itemsets/itemsets.hpp"
#include "common.hpp"

namespace anoncore::bindings {

namespace {

py::tuple to_python(itemsets::Items&& it) {
  auto keys = to_numpy(std::move(it.keys));
  auto counts = to_numpy(std::move(it.counts));
  auto ranks = to_numpy(std::move(it.ranks));
  return py::make_tuple(keys, counts, ranks);
}

/// Views of a list of (keys, counts, ranks) triples; the arrays are kept alive by `hold`.
std::vector<itemsets::ItemsView> views_of(const py::list& parts, std::vector<py::object>& hold) {
  std::vector<itemsets::ItemsView> out;
  for (const auto& p : parts) {
    auto t = p.cast<py::tuple>();
    if (t.size() != 3) throw std::invalid_argument("each part must be a (keys, counts, ranks) tuple");
    auto k = aligned(t[0].cast<CArray<uint64_t>>());  // (item sets travel between processes)
    auto c = aligned(t[1].cast<CArray<int64_t>>());
    auto r = aligned(t[2].cast<CArray<int64_t>>());
    hold.push_back(k);
    hold.push_back(c);
    hold.push_back(r);
    out.push_back(itemsets::ItemsView{span_of(k, "keys"), span_of(c, "counts", k.shape(0)),
                                      span_of(r, "ranks", k.shape(0))});
  }
  return out;
}

}  // namespace

void bind_distributed(py::module_ m) {
  m.doc() = "item sets of anoncore.distributed: grouping, sharding, merging (packed mixed-radix keys)";
  m.def(
      "count_rows",
      [](const CArray<int32_t>& codes_in, const CArray<int64_t>& radix_in, const CArray<int64_t>& weights_in,
         int64_t rank_base) {
        const auto codes = aligned(codes_in);
        const auto radix = aligned(radix_in);
        const auto weights = aligned(weights_in);
        auto cv = matrix_of(codes, "codes");
        auto rv = span_of(radix, "radix", cv.cols);
        auto wv = span_of(weights, "weights");
        itemsets::Items it;
        {
          py::gil_scoped_release nogil;
          it = itemsets::count_rows(cv, rv, wv, rank_base);
        }
        return to_python(std::move(it));
      },
      py::arg("codes").noconvert(), py::arg("radix").noconvert(), py::arg("weights").noconvert(),
      py::arg("rank_base"),
      "Distinct rows of codes as mixed-radix keys in order of first appearance, with summed weights (empty: 1 "
      "per row) and ranks rank_base + position; returns (keys, counts, ranks).");
  m.def(
      "shard_of",
      [](const CArray<uint64_t>& keys_in, int32_t n_shards) {
        const auto keys = aligned(keys_in);
        auto kv = span_of(keys, "keys");
        std::vector<int32_t> out;
        {
          py::gil_scoped_release nogil;
          out = itemsets::shard_of(kv, n_shards);
        }
        return to_numpy(std::move(out));
      },
      py::arg("keys").noconvert(), py::arg("n_shards"), "Shard of every key: a hash of the key modulo n_shards.");
  m.def(
      "merge_items",
      [](const py::list& parts) {
        std::vector<py::object> hold;
        auto views = views_of(parts, hold);
        itemsets::Items it;
        {
          py::gil_scoped_release nogil;
          it = itemsets::merge_items(views);
        }
        return to_python(std::move(it));
      },
      py::arg("parts"),
      "Union of (keys, counts, ranks) item sets: counts summed, the smallest rank kept, in rank order.");
  m.def(
      "interleave_by_rank",
      [](const py::list& parts) {
        std::vector<py::object> hold;
        auto views = views_of(parts, hold);
        itemsets::Items it;
        {
          py::gil_scoped_release nogil;
          it = itemsets::interleave_by_rank(views);
        }
        return to_python(std::move(it));
      },
      py::arg("parts"), "Disjoint item sets, each in rank order, interleaved into one set in rank order.");
  m.def(
      "unpack_keys",
      [](const CArray<uint64_t>& keys_in, const CArray<int64_t>& radix_in) {
        const auto keys = aligned(keys_in);
        const auto radix = aligned(radix_in);
        auto kv = span_of(keys, "keys");
        auto rv = span_of(radix, "radix");
        CArray<int32_t> codes({kv.size, rv.size});
        auto cv = mut_matrix_of(codes, "codes");
        {
          py::gil_scoped_release nogil;
          itemsets::unpack_keys(kv, rv, cv);
        }
        return codes;
      },
      py::arg("keys").noconvert(), py::arg("radix").noconvert(), "Codes (n_keys, len(radix)) of mixed-radix keys.");
  m.def(
      "is_member",
      [](const CArray<uint64_t>& keys_in, const CArray<uint64_t>& set_in) {
        const auto keys = aligned(keys_in);
        const auto set = aligned(set_in);
        auto kv = span_of(keys, "keys");
        auto sv = span_of(set, "set");
        CArray<bool> out(kv.size);
        MutSpan<uint8_t> ov{reinterpret_cast<uint8_t*>(out.mutable_data()), kv.size};
        {
          py::gil_scoped_release nogil;
          itemsets::is_member(kv, sv, ov);
        }
        return out;
      },
      py::arg("keys").noconvert(), py::arg("set").noconvert(), "Whether each key is one of set.");
}

}  // namespace anoncore::bindings
