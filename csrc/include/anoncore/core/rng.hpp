// Portable seeded randomness (STYLE.md §2.8): a fixed engine plus our own bounded-integer and shuffle
// routines, because std::uniform_int_distribution and std::shuffle differ between standard libraries.
#pragma once
#include <cstdint>
#include <random>
#include <utility>

namespace anoncore {

class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}
  /// Derive an independent stream for a chunk, so that parallel results never depend on thread ids.
  static Rng for_chunk(uint64_t seed, uint64_t chunk) {
    return Rng(splitmix64(seed ^ splitmix64(chunk + 0x9E3779B97F4A7C15ULL)));
  }
  uint64_t next_u64() { return engine_(); }
  /// Uniform integer in [0, bound), bound >= 1 (Lemire's method with rejection; unbiased).
  uint64_t below(uint64_t bound) {
    if (bound <= 1) return 0;
    uint64_t threshold = (0 - bound) % bound;
    for (;;) {
      uint64_t x = engine_();
      unsigned __int128 m = static_cast<unsigned __int128>(x) * bound;
      if (static_cast<uint64_t>(m) >= threshold) return static_cast<uint64_t>(m >> 64);
    }
  }
  /// Uniform double in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(engine_() >> 11) * (1.0 / 9007199254740992.0); }
  /// Fisher-Yates shuffle of [first, last).
  template <class It>
  void shuffle(It first, It last) {
    auto n = static_cast<uint64_t>(last - first);
    for (uint64_t i = n; i > 1; --i) {
      uint64_t j = below(i);
      using std::swap;
      swap(first[static_cast<std::ptrdiff_t>(i - 1)], first[static_cast<std::ptrdiff_t>(j)]);
    }
  }
  static uint64_t splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace anoncore
