// k nearest neighbours for CASTLE's split^k (spec streams-castle-sabrew.md §2.8) when every bucket holds one tuple.
// The points are sorted by top-group vector and categorical vector and cut into blocks of 32 with their bounding
// boxes; a round bounds IL({x, y}) per block from below, scans the blocks of smallest bounds first and then every
// block whose bound does not exceed the (k-1)-th best. The k-1 nearest are the smallest by (distance, index), a total
// order, so the result equals the brute-force scan bit for bit, whatever the visiting order or thread count.
// SABRE-KNN's k-d tree is in kdtree.hpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "anoncore/core/rng.hpp"

namespace anoncore::knn {

/// The points of one split^k call and the IL distance's terms (docs/castle.md "Information loss").
struct SingletonKnnInput {
  size_t n = 0, dn = 0, dc = 0, k = 1;
  const double* X = nullptr;   // (n, dn) numeric values, row-major; local index = bucket rank
  const int32_t* Y = nullptr;  // (n, dc) categorical leaf codes
  const double* inv = nullptr;  // 1 / (U - L) per numeric dimension
  const std::vector<const double*>* tab = nullptr;  // (L x L) IL tables per categorical dimension (all present)
  const std::vector<size_t>* L = nullptr;           // leaves per categorical dimension
  const std::vector<std::vector<int32_t>>* top = nullptr;  // per categorical dimension: leaf -> top-group rank
  double inv_d = 1.0;  // 1 / (dn + dc)
  int threads = 1;     // block-scan threads (the output does not depend on it)
};

/// split^k steps 3-20 over singleton buckets: while at least k points remain, a uniformly random one and its k-1
/// nearest (by IL of the two-point box, ties by index) form a sub-cluster. Returns the sub-clusters (local indices,
/// the random point first, then by distance) and leaves `alive` marking the leftovers. Cost per round
/// O(n_blocks * d + evaluated points * d).
std::vector<std::vector<int32_t>> singleton_knn_rounds(const SingletonKnnInput& in, Rng& rng,
                                                       std::vector<uint8_t>& alive);

}  // namespace anoncore::knn
