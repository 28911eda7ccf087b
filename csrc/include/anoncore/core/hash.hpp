#pragma once
// The 64-bit mixer of the hash tables keyed by packed integers (the lattice's frequency sets, the
// distributed item sets): the SplitMix64 finalizer, every output bit depending on every input bit.
#include <cstdint>

namespace anoncore {

inline uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

}  // namespace anoncore
