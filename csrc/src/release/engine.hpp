// Private to the release kernels: the TDS4SA engine state shared by tds4sa.cpp and evaluate.cpp.
#pragma once
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

#include "anoncore/release/tds4sa.hpp"

namespace anoncore::release::detail {


using Clock = std::chrono::steady_clock;
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kEps = 1e-12;

struct VecHash {
  size_t operator()(const std::vector<int32_t>& v) const {
    uint64_t h = 1469598103934665603ull;
    for (int32_t x : v) h = (h ^ static_cast<uint32_t>(x)) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

struct Key3 {
  int64_t a, b, c;
  bool operator==(const Key3& o) const { return a == o.a && b == o.b && c == o.c; }
};
struct Key3Hash {
  size_t operator()(const Key3& k) const {
    uint64_t h = static_cast<uint64_t>(k.a) * 0x9E3779B97F4A7C15ull;
    h ^= static_cast<uint64_t>(k.b) + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
    h ^= static_cast<uint64_t>(k.c) + 0x85EBCA77C2B2AE63ull + (h << 6) + (h >> 2);
    return static_cast<size_t>(h);
  }
};

struct Part {
  int64_t begin, end;
  int32_t x1;
  bool alive;
};

struct Cand {
  int32_t attr, node;
  std::vector<int64_t> links;
  bool dirty = true;
  int32_t state = 0;  // 0 active, 1 pruned (invalid), 2 removed (nothing to split), 3 specialized
  int32_t split = -1;
  double gain = 0, m = 0;
  std::vector<double> my;
  bool valid = false;
};

/// Statistics of one partition on one attribute, collected by the refinement scan (Section 5.3 Step 1): per
/// key (child index of the partition's value, or value rank for a continuous attribute) the record count,
/// class counts, T1 sensitive-item counts and, for a general Y1, the distinct (key, Y1 id) pairs.
struct Hist {
  std::vector<int32_t> key;
  std::vector<int64_t> n, cls, items;
  std::vector<std::pair<int32_t, int64_t>> ky;
};

/// (partition, child) units of one evaluation: the records of a partition that go to one child.
struct Units {
  int32_t n_child = 1;
  int32_t attr = -1;                 // attribute being specialized (-1: the current state)
  std::vector<int64_t> pid;
  std::vector<int32_t> node;         // child node of `attr` (-1: unchanged)
  std::vector<int64_t> n, cls, items, yoff, yids;
};

inline double entropy(const int64_t* c, int32_t k, int64_t total) {
  if (total <= 0) return 0.0;
  double e = 0.0;
  for (int32_t i = 0; i < k; ++i)
    if (c[i] > 0) {
      const double p = static_cast<double>(c[i]) / static_cast<double>(total);
      e -= p * std::log2(p);
    }
  return e;
}

class Engine {
 public:
  Engine(const Problem& pb, Output& out) : pb_(pb), out_(out) {}
  void run(const InterruptHook& hook);

 private:
  const Problem& pb_;
  Output& out_;
  int32_t m1_ = 0, n_raw_ = 0, n_slots_ = 0, n_items_ = 0;
  bool case1_ = false;
  std::vector<int32_t> perm_;
  std::vector<Part> parts_;
  std::vector<int32_t> keys_, rawkeys_;
  std::vector<std::vector<Hist>> hists_;           // per partition: one Hist per X1 attribute, then "all"
  std::unordered_map<std::vector<int32_t>, int32_t, VecHash> x1_ids_;
  std::vector<std::vector<int32_t>> ch_off_, ch_;  // per taxonomy: children CSR sorted by leaf_start
  std::vector<int32_t> root_;
  std::vector<Cand> cands_;
  std::vector<std::vector<int32_t>> cand_of_;      // per attribute: node -> candidate index
  std::vector<std::unordered_map<std::vector<int32_t>, std::vector<int32_t>, VecHash>> match_cache_;
  std::vector<std::vector<double>> grp_ratio_;     // Case 1: per release, group x item max |P[y]|/|P|
  std::vector<std::vector<int64_t>> grp_min_ay_;   // Case 1: per release, group min a_{Y_r}(P)
  double a_cur_ = kInf;
  std::vector<double> l_cur_;

  void build_taxonomies();
  void build_partitions();
  void build_case1_tables();
  int32_t intern_x1(int64_t pid);
  int64_t add_part(int64_t begin, int64_t end, const int32_t* key, const int32_t* raw);
  int32_t child_of(int32_t attr, int32_t node, int32_t split, int64_t rec) const;
  int32_t stat_key(int32_t attr, int32_t node, int64_t rec) const;
  void build_stats(int64_t pid, const int32_t* kb);
  int32_t n_children(int32_t attr, int32_t node) const;
  int32_t cand_for(int32_t attr, int32_t node);
  const std::vector<int32_t>& groups_for(const Units& u, size_t i, int32_t release);
  void fill_units(const std::vector<int64_t>& pids, int32_t attr, int32_t node, int32_t split, Units& u);
  double privacy(const Units& u, std::vector<double>& my);
  double privacy_case1(const Units& u, std::vector<double>& my);
  double info_gain(const Units& u) const;
  int32_t choose_split(Cand& c);
  void evaluate(Cand& c);
  bool valid_of(double m, const std::vector<double>& my) const;
  double loss_of(const Cand& c) const;
  void specialize(int32_t ci);
  bool feasible_now() const;
  double value_now() const;
  void finish();
};

}  // namespace anoncore::release::detail
