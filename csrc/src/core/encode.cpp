// Encoding kernels (see encode.hpp): hashed label lookup for strings, dictionary-index gathers.
#include "anoncore/core/encode.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "anoncore/core/parallel.hpp"

namespace anoncore::core {
namespace {

constexpr int64_t kChunk = 1 << 13;  // 8,192 rows

inline uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h;
}

/// Hash of a byte string: 8 bytes at a time, the tail loaded without reading past the end.
inline uint64_t hash_bytes(const uint8_t* p, int64_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ULL ^ static_cast<uint64_t>(n);
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 29;
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    uint64_t w = 0;
    if (n >= 4) {
      uint32_t a, b;
      std::memcpy(&a, p, 4);
      std::memcpy(&b, p + n - 4, 4);
      w = (static_cast<uint64_t>(a) << 32) | b;
    } else {
      w = (static_cast<uint64_t>(p[0]) << 16) | (static_cast<uint64_t>(p[n >> 1]) << 8) | p[n - 1];
    }
    h = (h ^ w) * 0x94d049bb133111ebULL;
  }
  return mix(h);
}

EncodeCounts total(const std::vector<EncodeCounts>& counts) {
  EncodeCounts t;
  for (const auto& c : counts) {
    t.unknown += c.unknown;
    t.missing += c.missing;
    t.lo = std::min(t.lo, c.lo);
    t.hi = std::max(t.hi, c.hi);
  }
  return t;
}

inline bool valid_at(Span<uint8_t> validity, int64_t bit) {
  return validity.size == 0 || ((validity[bit >> 3] >> (bit & 7)) & 1) != 0;
}

/// The masks that keep a string's first len bytes (len <= 32) of its four 8-byte words: a load from a table of
/// 33 entries each, no branch on the length (a column that mixes labels of at most and more than 8 bytes
/// mispredicted a length branch on every other row).
struct NarrowMasks {
  uint64_t m[33][4];
  constexpr NarrowMasks() : m{} {
    for (int n = 0; n <= 32; ++n)
      for (int j = 0; j < 4; ++j) {
        const int k = n - 8 * j;  // the string's bytes in word j
        m[n][j] = k <= 0 ? 0 : k >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * k)) - 1;
      }
  }
};
inline constexpr NarrowMasks kNarrowMasks{};

/// encode_strings when every key has at most 8 * W bytes: a string is W masked words (read 8 bytes at a time
/// where the data has them; the last strings of the buffer are copied), a longer one is unknown without a
/// lookup.
template <int W>
EncodeCounts encode_narrow(int64_t n, const int64_t* ofs, const uint8_t* base, int64_t data_size, const uint8_t* vbits,
                           int64_t validity_offset, LabelHash::NarrowTable<W> table, CodeSink sink, int n_threads) {
  std::vector<EncodeCounts> counts(static_cast<size_t>((n + kChunk - 1) / kChunk));
  parallel_chunks(n, kChunk, n_threads, [&, ofs, base, data_size, vbits, validity_offset, table,
                                         sink](int64_t c, int64_t lo, int64_t hi) {
    EncodeCounts tally;
    for (int64_t i = lo; i < hi; ++i) {
      const int64_t bit = validity_offset + i;
      int32_t code;
      if (vbits != nullptr && ((vbits[bit >> 3] >> (bit & 7)) & 1) == 0) {
        code = kEncodeMissing;
      } else {
        const int64_t a = ofs[i], len = ofs[i + 1] - a;
        if (len < 0 || a + len > data_size) throw std::invalid_argument("string offsets are not increasing");
        if (len > 8 * W) {
          code = kEncodeUnknown;
        } else {
          uint64_t w[4] = {0, 0, 0, 0};
          if (a + 8 * W <= data_size) {
            const uint64_t* const mk = kNarrowMasks.m[len];
            for (int j = 0; j < W; ++j) {
              std::memcpy(&w[j], base + a + 8 * j, 8);
              w[j] &= mk[j];
            }
          } else {
            LabelHash::load_narrow(base + a, len, w);
          }
          code = table.find(w, len);
        }
      }
      sink.put(i, code);
      tally.add(code);
    }
    counts[static_cast<size_t>(c)] = tally;
  });
  return total(counts);
}

}  // namespace

LabelHash::LabelHash(Span<int64_t> offsets, Span<uint8_t> data, Span<int32_t> codes) {
  const int64_t n_keys = codes.size;
  if (offsets.size != n_keys + 1) throw std::invalid_argument("key offsets must have one more entry than codes");
  uint64_t cap = 16;
  while (cap < static_cast<uint64_t>(n_keys) * 2 + 1) cap <<= 1;
  mask_ = cap - 1;
  slot_key_.assign(cap, -1);
  slot_hash_.assign(cap, 0);
  bytes_.assign(data.begin(), data.end());
  offsets_.assign(offsets.begin(), offsets.end());
  codes_.assign(codes.begin(), codes.end());
  uint64_t short_cap = 64;
  while (short_cap < static_cast<uint64_t>(n_keys) * 32 && short_cap < (uint64_t{1} << 15)) short_cap <<= 1;
  while (short_cap < static_cast<uint64_t>(n_keys) * 2 + 1) short_cap <<= 1;
  short_mask_ = short_cap - 1;
  short_index_.assign(short_cap, kNoSlot);
  short_slots_.clear();
  for (int64_t k = 0; k < n_keys; ++k) {
    const int64_t a = offsets[k], b = offsets[k + 1];
    if (a < 0 || b < a || b > data.size) throw std::invalid_argument("key offsets out of range");
    const uint8_t* p = bytes_.data() + a;
    if (find(p, b - a) != kEncodeUnknown) continue;  // first code of a repeated key wins
    const uint64_t h = hash_bytes(p, b - a);
    uint64_t s = h & mask_;
    while (slot_key_[s] >= 0) s = (s + 1) & mask_;
    slot_key_[s] = k;
    slot_hash_[s] = h;
    if (b - a <= kShortBytes) insert_short(p, b - a, codes[k]);
  }
  build_narrow(offsets, codes);
}

void LabelHash::build_narrow(Span<int64_t> offsets, Span<int32_t> codes) {
  int64_t longest = 0;
  for (int64_t k = 0; k < codes.size; ++k) longest = std::max(longest, offsets[k + 1] - offsets[k]);
  if (longest <= 8) fill_narrow(std::get<0>(narrow_), offsets, codes);
  else if (longest <= 16) fill_narrow(std::get<1>(narrow_), offsets, codes);
  else if (longest <= 24) fill_narrow(std::get<2>(narrow_), offsets, codes);
  else if (longest <= 32) fill_narrow(std::get<3>(narrow_), offsets, codes);
}

template <int W>
void LabelHash::fill_narrow(std::vector<NarrowSlot<W>>& slots, Span<int64_t> offsets, Span<int32_t> codes) {
  const int64_t n_keys = codes.size;
  // at most 1/8 full up to 32,768 slots (a lookup almost always ends at its first slot), half full beyond
  uint64_t cap = 64;
  while (cap < static_cast<uint64_t>(n_keys) * 8 && cap < (uint64_t{1} << 15)) cap <<= 1;
  while (cap < static_cast<uint64_t>(n_keys) * 2 + 1) cap <<= 1;
  NarrowSlot<W> empty{};
  empty.len = -1;
  slots.assign(cap, empty);
  narrow_mask_ = cap - 1;
  const NarrowTable<W> t{slots.data(), narrow_mask_};
  for (int64_t k = 0; k < n_keys; ++k) {
    const int64_t a = offsets[k], n = offsets[k + 1] - a;
    uint64_t w[4];
    load_narrow(bytes_.data() + a, n, w);
    if (t.find(w, n) != kEncodeUnknown) continue;  // first code of a repeated key wins
    uint64_t s = NarrowTable<W>::hash(w, n) & narrow_mask_;
    while (slots[s].len >= 0) s = (s + 1) & narrow_mask_;
    for (int j = 0; j < W; ++j) slots[s].w[j] = w[j];
    slots[s].len = static_cast<int32_t>(n);
    slots[s].code = codes[k];
  }
}

void LabelHash::insert_short(const uint8_t* p, int64_t n, int32_t code) {
  const ShortKey k = load_short(p, n);
  uint64_t s = hash_short(k, n) & short_mask_;
  while (short_index_[s] != kNoSlot) s = (s + 1) & short_mask_;
  short_index_[s] = static_cast<uint32_t>(short_slots_.size());
  short_slots_.push_back(ShortSlot{k, static_cast<int32_t>(n), code});
}


int32_t LabelHash::find(const uint8_t* p, int64_t n) const {
  const uint64_t h = hash_bytes(p, n);
  for (uint64_t s = h & mask_;; s = (s + 1) & mask_) {
    const int64_t k = slot_key_[s];
    if (k < 0) return kEncodeUnknown;
    if (slot_hash_[s] != h) continue;
    const int64_t a = offsets_[static_cast<size_t>(k)];
    if (offsets_[static_cast<size_t>(k) + 1] - a == n &&
        (n == 0 || std::memcmp(bytes_.data() + a, p, static_cast<size_t>(n)) == 0))
      return codes_[static_cast<size_t>(k)];
  }
}

EncodeCounts encode_strings(Span<int64_t> offsets, Span<uint8_t> data, Span<uint8_t> validity,
                            int64_t validity_offset, const LabelHash& keys, CodeSink sink, int n_threads) {
  const int64_t n = offsets.size - 1;
  if (n < 0) throw std::invalid_argument("offsets must have n_rows + 1 entries");
  if (n > 0 && (offsets[0] < 0 || offsets[n] > data.size))
    throw std::invalid_argument("string offsets point outside the data buffer");
  if (validity.size != 0 && (validity_offset + n + 7) / 8 > validity.size)
    throw std::invalid_argument("validity bitmap too short");
  std::vector<EncodeCounts> counts(static_cast<size_t>((n + kChunk - 1) / kChunk));
  // Everything the loop reads, as local values (its int32 stores could otherwise alias them).
  const uint8_t* const base = data.data;
  const int64_t* const ofs = offsets.data;
  const int64_t data_size = data.size;
  const uint8_t* const vbits = validity.size != 0 ? validity.data : nullptr;
  const LabelHash::ShortTable table = keys.short_table();
  if (const auto t1 = keys.narrow<1>(); t1.slots != nullptr)
    return encode_narrow<1>(n, ofs, base, data_size, vbits, validity_offset, t1, sink, n_threads);
  if (const auto t2 = keys.narrow<2>(); t2.slots != nullptr)
    return encode_narrow<2>(n, ofs, base, data_size, vbits, validity_offset, t2, sink, n_threads);
  if (const auto t3 = keys.narrow<3>(); t3.slots != nullptr)
    return encode_narrow<3>(n, ofs, base, data_size, vbits, validity_offset, t3, sink, n_threads);
  if (const auto t4 = keys.narrow<4>(); t4.slots != nullptr)
    return encode_narrow<4>(n, ofs, base, data_size, vbits, validity_offset, t4, sink, n_threads);
  parallel_chunks(n, kChunk, n_threads, [&, base, ofs, data_size, vbits, table, sink,
                                         validity_offset](int64_t c, int64_t lo, int64_t hi) {
    int64_t prev_a = -1, prev_len = -1;
    int32_t prev_code = kEncodeUnknown;
    EncodeCounts tally;
    for (int64_t i = lo; i < hi; ++i) {
      const int64_t bit = validity_offset + i;
      if (vbits != nullptr && ((vbits[bit >> 3] >> (bit & 7)) & 1) == 0) {
        sink.put(i, kEncodeMissing);
        tally.add(kEncodeMissing);
        continue;
      }
      const int64_t a = ofs[i], len = ofs[i + 1] - a;
      if (len < 0 || a + len > data_size) throw std::invalid_argument("string offsets are not increasing");
      // Short strings: the word lookup, no run check (a compare with the previous row mispredicts on
      // unsorted data: 14 % slower on Adult, 3 % faster on sorted). Long ones: runs of one value skip the hash.
      if (len <= LabelHash::kShortBytes) {
        prev_code = table.find(LabelHash::load_short(base + a, len), len);
        prev_a = -1;
        prev_len = len;
      } else if (len != prev_len || prev_a < 0 ||
                 std::memcmp(base + a, base + prev_a, static_cast<size_t>(len)) != 0) {
        prev_code = keys.find(base + a, len);
        prev_a = a;
        prev_len = len;
      }
      sink.put(i, prev_code);
      tally.add(prev_code);
    }
    counts[static_cast<size_t>(c)] = tally;
  });
  return total(counts);
}

template <class I>
EncodeCounts gather_codes(Span<I> index, Span<int32_t> map, Span<uint8_t> validity, int64_t validity_offset,
                          CodeSink sink, int n_threads) {
  const int64_t n = index.size;
  if (validity.size != 0 && (validity_offset + n + 7) / 8 > validity.size)
    throw std::invalid_argument("validity bitmap too short");
  const int64_t m = map.size;
  std::vector<EncodeCounts> counts(static_cast<size_t>((n + kChunk - 1) / kChunk));
  parallel_chunks(n, kChunk, n_threads, [&](int64_t c, int64_t lo, int64_t hi) {
    EncodeCounts tally;
    for (int64_t i = lo; i < hi; ++i) {
      const int64_t k = static_cast<int64_t>(index[i]);
      int32_t code;
      if (k < 0 || !valid_at(validity, validity_offset + i)) {
        code = kEncodeMissing;
      } else if (k >= m) {
        throw std::out_of_range("dictionary index past the end of the dictionary");
      } else {
        code = map[k];
      }
      sink.put(i, code);
      tally.add(code);
    }
    counts[static_cast<size_t>(c)] = tally;
  });
  return total(counts);
}

template EncodeCounts gather_codes<int8_t>(Span<int8_t>, Span<int32_t>, Span<uint8_t>, int64_t, CodeSink, int);
template EncodeCounts gather_codes<int16_t>(Span<int16_t>, Span<int32_t>, Span<uint8_t>, int64_t, CodeSink, int);
template EncodeCounts gather_codes<int32_t>(Span<int32_t>, Span<int32_t>, Span<uint8_t>, int64_t, CodeSink, int);
template EncodeCounts gather_codes<int64_t>(Span<int64_t>, Span<int32_t>, Span<uint8_t>, int64_t, CodeSink, int);

void publish_codes(Span<int64_t> labels, Span<uint8_t> suppressed, Span<int32_t> class_map, int32_t token,
                   MutSpan<int32_t> out, int n_threads) {
  const int64_t n = labels.size;
  if (out.size != n) throw std::invalid_argument("out must have one entry per row");
  if (suppressed.size != 0 && suppressed.size != n) throw std::invalid_argument("suppressed has the wrong length");
  const int64_t m = class_map.size;
  parallel_chunks(n, kChunk, n_threads, [&](int64_t, int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      const int64_t c = labels[i];
      if (c < 0 || c >= m) throw std::out_of_range("class label out of range");
      out[i] = (suppressed.size != 0 && suppressed[i] != 0) ? token : class_map[c];
    }
  });
}

void select_columns(Matrix<int32_t> codes, Span<int64_t> columns, MutMatrix<int32_t> out, int n_threads) {
  const int64_t k = columns.size;
  if (out.rows != codes.rows || out.cols != k) throw std::invalid_argument("out must have shape (n_rows, n_selected)");
  for (int64_t c : columns)
    if (c < 0 || c >= codes.cols) throw std::out_of_range("column index out of range");
  parallel_chunks(codes.rows, kChunk, n_threads, [&](int64_t, int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      const int32_t* src = codes.row(i);
      int32_t* dst = out.row(i);
      for (int64_t j = 0; j < k; ++j) dst[j] = src[columns[j]];
    }
  });
}

}  // namespace anoncore::core
