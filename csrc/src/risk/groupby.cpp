#include "anoncore/risk/groupby.hpp"

#include <vector>

#include "anoncore/core/groupby.hpp"

namespace anoncore::risk {

namespace {

uint64_t key_of(const int32_t* r, Span<int64_t> cols, Span<int64_t> card) {
  uint64_t key = 0;
  for (int64_t j = 0; j < cols.size; ++j)
    key = key * static_cast<uint64_t>(card[j]) + static_cast<uint32_t>(r[cols[j]]);
  return key;
}

}  // namespace

int64_t group_columns(Matrix<int32_t> codes, Span<int64_t> cols, Span<int64_t> cardinality,
                      MutSpan<int64_t> labels, std::vector<int64_t>& sizes) {
  const int64_t n = codes.rows;
  unsigned __int128 space = 1;
  bool packable = true;
  for (int64_t j = 0; j < cols.size; ++j) {
    space *= static_cast<unsigned __int128>(cardinality[j] > 0 ? cardinality[j] : 1);
    if (space > (static_cast<unsigned __int128>(1) << 62)) {
      packable = false;
      break;
    }
  }
  if (!packable) {
    std::vector<int32_t> sub(static_cast<size_t>(n * cols.size));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < cols.size; ++j) sub[static_cast<size_t>(i * cols.size + j)] = codes(i, cols[j]);
    const int64_t c = core::dense_labels(Matrix<int32_t>{sub.data(), n, cols.size}, cardinality, labels);
    sizes.assign(static_cast<size_t>(c), 0);
    for (int64_t i = 0; i < n; ++i) ++sizes[static_cast<size_t>(labels[i])];
    return c;
  }
  const auto space64 = static_cast<uint64_t>(space);
  int64_t next = 0;
  if (space64 <= static_cast<uint64_t>(4 * n + 1024)) {
    std::vector<int64_t> slot(space64, -1);
    for (int64_t i = 0; i < n; ++i) {
      int64_t& s = slot[key_of(codes.row(i), cols, cardinality)];
      if (s < 0) {
        s = next++;
        sizes.push_back(0);
      }
      ++sizes[static_cast<size_t>(s)];
      labels[i] = s;
    }
    return next;
  }
  // Open addressing with (key, label) pairs side by side (one cache line per probe), grown at half load:
  // the table tracks the number of classes, not of rows, so it stays cache-resident for few classes.
  struct Slot {
    uint64_t key;
    int64_t label;  // -1: empty
  };
  int shift = 64 - 12;
  std::vector<Slot> table(uint64_t{1} << 12, Slot{0, -1});
  uint64_t mask = table.size() - 1;
  auto probe = [&](uint64_t key) {
    uint64_t h = (key * 0x9E3779B97F4A7C15ULL) >> shift;
    while (table[h].label >= 0 && table[h].key != key) h = (h + 1) & mask;
    return h;
  };
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t key = key_of(codes.row(i), cols, cardinality);
    uint64_t h = probe(key);
    if (table[h].label < 0) {
      if (static_cast<uint64_t>(2 * (next + 1)) > table.size()) {  // grow, then find the slot again
        std::vector<Slot> old;
        old.swap(table);
        table.assign(old.size() * 2, Slot{0, -1});
        mask = table.size() - 1;
        --shift;
        for (const Slot& s : old)
          if (s.label >= 0) table[probe(s.key)] = s;
        h = probe(key);
      }
      table[h] = Slot{key, next++};
      sizes.push_back(0);
    }
    ++sizes[static_cast<size_t>(table[h].label)];
    labels[i] = table[h].label;
  }
  return next;
}

}  // namespace anoncore::risk
