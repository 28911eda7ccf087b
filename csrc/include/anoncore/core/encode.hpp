// Encoding of raw columns to leaf codes and publishing gathers: strings (Arrow layout: offsets + bytes + validity
// bitmap) looked up in a hash of the hierarchy's labels (as one to four masked words when no label is longer than
// 32 bytes; else as four words behind a sparse index up to 32 bytes, by their bytes beyond), dictionary indices
// mapped through a small table.
// Every kernel is data-parallel over rows in fixed chunks, so the output never depends on the thread count.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <tuple>
#include <vector>

#include "anoncore/core/views.hpp"

namespace anoncore::core {

/// Code written for a null cell (or a key whose code is kEncodeMissing): the caller applies the missing policy.
inline constexpr int32_t kEncodeMissing = -2;
/// Code written for a string that is not one of the keys.
inline constexpr int32_t kEncodeUnknown = -1;

/// Open-addressing hash of byte strings to int32 codes (built once from the labels, read by many threads).
class LabelHash {
 public:
  /// keys: key k is data[offsets[k], offsets[k+1]); codes[k] its code. A repeated key keeps its first code.
  LabelHash(Span<int64_t> offsets, Span<uint8_t> data, Span<int32_t> codes);
  /// The code of bytes [p, p + n), or kEncodeUnknown.
  int32_t find(const uint8_t* p, int64_t n) const;

  /// Keys of at most kShortBytes bytes are also held as (length, four words) read by load_short: a lookup
  /// compares words, never calls memcmp.
  static constexpr int64_t kShortBytes = 32;
  struct ShortKey {
    uint64_t w[4];
  };
  /// The words of a string of n <= kShortBytes bytes: equal for two strings of one length iff equal bytes.
  static ShortKey load_short(const uint8_t* p, int64_t n) {
    ShortKey k{{0, 0, 0, 0}};
    if (n >= 8) {
      // words at bytes 0, o1, o2 and n - 8: [0, 16) and [n - 16, n) for n >= 16, [0, 8) and [n - 8, n) twice
      // below; the offsets are selected without a branch, so strings of 8-15 and 16-32 bytes in one column
      // take one path (a length branch mispredicts on such columns)
      const int64_t o1 = n >= 16 ? 8 : n - 8;
      const int64_t o2 = n >= 16 ? n - 16 : 0;
      std::memcpy(&k.w[0], p, 8);
      std::memcpy(&k.w[1], p + o1, 8);
      std::memcpy(&k.w[2], p + o2, 8);
      std::memcpy(&k.w[3], p + n - 8, 8);
    } else if (n >= 4) {
      uint32_t a, b;
      std::memcpy(&a, p, 4);
      std::memcpy(&b, p + n - 4, 4);
      k.w[0] = (static_cast<uint64_t>(b) << 32) | a;
    } else if (n > 0) {
      k.w[0] = (static_cast<uint64_t>(p[0]) << 16) | (static_cast<uint64_t>(p[n >> 1]) << 8) | p[n - 1];
    }
    return k;
  }
  static bool same_short(const ShortKey& a, const ShortKey& b) {
    return ((a.w[0] ^ b.w[0]) | (a.w[1] ^ b.w[1]) | (a.w[2] ^ b.w[2]) | (a.w[3] ^ b.w[3])) == 0;
  }
  struct ShortSlot {
    ShortKey key;
    int32_t len;  // -1: empty
    int32_t code;
  };
  /// The short keys' table as plain values: the encoding loop copies it into locals, so its stores to the
  /// output (int32, as the slots' fields) do not force a reload of the table through `this` on every row.
  /// The keys are held densely (`slots`, one per short key) behind a sparse index of 4-byte entries kept at
  /// most 1/32 full up to 32,768 entries: a lookup almost always ends at its first probe (at half full, as a
  /// table of the 40-byte slots themselves would be kept, a second probe and its mispredicted branch came
  /// often enough to cost census-income 17 % of its encoding), and the index of a hierarchy of a hundred
  /// labels is 16 KB.
  struct ShortTable {
    const ShortSlot* slots;
    const uint32_t* index;  // kNoSlot: empty
    uint64_t mask;
    /// find() for a string of n <= kShortBytes bytes given by its words (the encoding loop's lookup).
    int32_t find(const ShortKey& k, int64_t n) const {
      for (uint64_t s = hash_short(k, n) & mask;; s = (s + 1) & mask) {
        const uint32_t e = index[s];
        if (e == kNoSlot) return kEncodeUnknown;
        const ShortSlot& slot = slots[e];
        if (slot.len == n && same_short(slot.key, k)) return slot.code;
      }
    }
  };
  static constexpr uint32_t kNoSlot = 0xFFFFFFFFu;
  ShortTable short_table() const { return ShortTable{short_slots_.data(), short_index_.data(), short_mask_}; }

  /// When every key has at most 8 * W bytes (W = 1 to 4: codes, ages, categories of up to 32 bytes), a key is
  /// W words and its length: a lookup hashes and compares those words alone, and a longer string is not a key
  /// without a lookup.
  template <int W>
  struct NarrowSlot {
    uint64_t w[W];  // the key's bytes, zero-extended
    int32_t len;    // -1: empty
    int32_t code;
  };
  template <int W>
  struct NarrowTable {
    const NarrowSlot<W>* slots;  // null: a key has more than 8 * W bytes
    uint64_t mask;
    static uint64_t hash(const uint64_t* w, int64_t n) {
      // independent products of the words (no serial chain)
      constexpr uint64_t kMul[4] = {0x9E3779B97F4A7C15ULL, 0xbf58476d1ce4e5b9ULL, 0x94d049bb133111ebULL,
                                    0xff51afd7ed558ccdULL};
      uint64_t x = (w[0] ^ (static_cast<uint64_t>(n) << 58)) * kMul[0];
      for (int j = 1; j < W; ++j) x ^= w[j] * kMul[j];
      return x ^ (x >> 31);
    }
    int32_t find(const uint64_t* w, int64_t n) const {
      for (uint64_t s = hash(w, n) & mask;; s = (s + 1) & mask) {
        const NarrowSlot<W>& slot = slots[s];
        uint64_t diff = 0;
        for (int j = 0; j < W; ++j) diff |= slot.w[j] ^ w[j];
        if (slot.len == n && diff == 0) return slot.code;
        if (slot.len < 0) return kEncodeUnknown;
      }
    }
  };
  /// The table of W words, or one with null slots when the keys need another W.
  template <int W>
  NarrowTable<W> narrow() const {
    const auto& v = std::get<W - 1>(narrow_);
    return {v.empty() ? nullptr : v.data(), narrow_mask_};
  }
  /// The words of a string of n <= 32 bytes, zero-extended (without reading past p + n).
  static void load_narrow(const uint8_t* p, int64_t n, uint64_t* w) {
    uint8_t buf[32] = {};
    if (n > 0) std::memcpy(buf, p, static_cast<size_t>(n));  // (p may be null for an empty key)
    std::memcpy(w, buf, sizeof buf);
  }

 private:
  static uint64_t hash_short(const ShortKey& k, int64_t n) {
    // Independent products (no serial chain): the lookups of consecutive rows overlap in the pipeline.
    const uint64_t x = (k.w[0] * 0x9E3779B97F4A7C15ULL) ^ (k.w[1] * 0xbf58476d1ce4e5b9ULL) ^
                       (k.w[2] * 0x94d049bb133111ebULL) ^ (k.w[3] * 0xff51afd7ed558ccdULL) ^ static_cast<uint64_t>(n);
    return ((x ^ (x >> 29)) * 0xc4ceb9fe1a85ec53ULL) >> 32;
  }
  // every key in the table of the fewest words that holds the longest (the others empty)
  std::tuple<std::vector<NarrowSlot<1>>, std::vector<NarrowSlot<2>>, std::vector<NarrowSlot<3>>,
             std::vector<NarrowSlot<4>>>
      narrow_;
  uint64_t narrow_mask_ = 0;
  template <int W>
  void fill_narrow(std::vector<NarrowSlot<W>>& slots, Span<int64_t> offsets, Span<int32_t> codes);
  void build_narrow(Span<int64_t> offsets, Span<int32_t> codes);
  std::vector<ShortSlot> short_slots_;  // the short keys, densely
  std::vector<uint32_t> short_index_;   // open addressing over short_slots_
  uint64_t short_mask_ = 0;
  void insert_short(const uint8_t* p, int64_t n, int32_t code);

  std::vector<int64_t> slot_key_;  // key index per slot, -1 empty
  std::vector<uint64_t> slot_hash_;
  std::vector<uint8_t> bytes_;
  std::vector<int64_t> offsets_;
  std::vector<int32_t> codes_;
  uint64_t mask_ = 0;
};

/// Counts of the special codes an encoding wrote, and the least and largest code it wrote (special codes
/// included: a column with no -1 / -2 has its codes' extremes, which the numeric domain check reads without
/// another pass over the code matrix).
struct EncodeCounts {
  int64_t unknown = 0;
  int64_t missing = 0;
  int32_t lo = std::numeric_limits<int32_t>::max();
  int32_t hi = std::numeric_limits<int32_t>::min();
  void add(int32_t code) {  // one code written
    unknown += code == kEncodeUnknown;
    missing += code == kEncodeMissing;
    lo = std::min(lo, code);
    hi = std::max(hi, code);
  }
};

/// Where an encoding writes row i's code: out[i * stride] (a column of a row-major matrix of n rows) and, when
/// `copy` is not null, copy[i] too: the column contiguous, written in the same pass while the code is in a
/// register (a later gather of the column reads a cache line of the matrix for each 4-byte code).
struct CodeSink {
  int32_t* out;
  int64_t stride;
  int32_t* copy = nullptr;
  void put(int64_t i, int32_t code) const {
    out[i * stride] = code;
    if (copy != nullptr) copy[i] = code;
  }
};

/// Row i's code = code of string i (offsets[i]..offsets[i+1] of data), kEncodeMissing where the validity
/// bitmap (bit validity_offset + i, Arrow LSB order; empty = all valid) says null, kEncodeUnknown when not a
/// key.
EncodeCounts encode_strings(Span<int64_t> offsets, Span<uint8_t> data, Span<uint8_t> validity,
                            int64_t validity_offset, const LabelHash& keys, CodeSink sink, int n_threads);

/// Row i's code = map[index[i]]; kEncodeMissing where index[i] < 0 or the validity bitmap says null.
/// Indices past the map raise std::out_of_range. Instantiated for int8, int16, int32, int64 indices.
template <class I>
EncodeCounts gather_codes(Span<I> index, Span<int32_t> map, Span<uint8_t> validity, int64_t validity_offset,
                          CodeSink sink, int n_threads);

/// Publishing: out[i] = suppressed[i] ? token : class_map[labels[i]] (suppressed may be empty).
void publish_codes(Span<int64_t> labels, Span<uint8_t> suppressed, Span<int32_t> class_map, int32_t token,
                   MutSpan<int32_t> out, int n_threads);

/// out(i, k) = codes(i, columns[k]): a C-contiguous copy of some columns of a row-major code matrix (the
/// quasi-identifiers of a table), row by row. Columns past the matrix raise std::out_of_range.
void select_columns(Matrix<int32_t> codes, Span<int64_t> columns, MutMatrix<int32_t> out, int n_threads);

}  // namespace anoncore::core
