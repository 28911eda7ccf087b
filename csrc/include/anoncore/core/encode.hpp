// Encoding of raw columns to leaf codes and publishing gathers: strings (Arrow layout: offsets + bytes + validity
// bitmap) looked up in a hash of the hierarchy's labels, dictionary indices mapped through a small table.
// Every kernel is data-parallel over rows in fixed chunks, so the output never depends on the thread count.
#pragma once
#include <cstdint>
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

 private:
  std::vector<int64_t> slot_key_;  // key index per slot, -1 empty
  std::vector<uint64_t> slot_hash_;
  std::vector<uint8_t> bytes_;
  std::vector<int64_t> offsets_;
  std::vector<int32_t> codes_;
  uint64_t mask_ = 0;
};

/// Counts of the special codes an encoding wrote.
struct EncodeCounts {
  int64_t unknown = 0;
  int64_t missing = 0;
};

/// out[i * stride] = code of string i (offsets[i]..offsets[i+1] of data), kEncodeMissing where the validity
/// bitmap (bit validity_offset + i, Arrow LSB order; empty = all valid) says null, kEncodeUnknown when not a
/// key. `out` spans n rows of stride `stride` (a column of a row-major matrix).
EncodeCounts encode_strings(Span<int64_t> offsets, Span<uint8_t> data, Span<uint8_t> validity,
                            int64_t validity_offset, const LabelHash& keys, int32_t* out, int64_t stride,
                            int n_threads);

/// out[i * stride] = map[index[i]]; kEncodeMissing where index[i] < 0 or the validity bitmap says null.
/// Indices past the map raise std::out_of_range. Instantiated for int8, int16, int32, int64 indices.
template <class I>
EncodeCounts gather_codes(Span<I> index, Span<int32_t> map, Span<uint8_t> validity, int64_t validity_offset,
                          int32_t* out, int64_t stride, int n_threads);

/// Publishing: out[i] = suppressed[i] ? token : class_map[labels[i]] (suppressed may be empty).
void publish_codes(Span<int64_t> labels, Span<uint8_t> suppressed, Span<int32_t> class_map, int32_t token,
                   MutSpan<int32_t> out, int n_threads);

}  // namespace anoncore::core
