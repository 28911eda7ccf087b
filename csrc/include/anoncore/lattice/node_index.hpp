// The node index of the optimal search: levels vectors packed into one word (NodeCodec, with the one-subtraction
// "<=" test), the search queue (NodeQueue: a binary heap over a pool of levels), and the maps of evaluated nodes
// (KnownMap, NodeMap). Internal to the lattice.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "anoncore/lattice/freqset.hpp"

namespace anoncore::lattice::detail {

/// The optimal search's sweep (see OptimalSearch) is used up to this lattice size.
inline constexpr int64_t kSweepMaxNodes = int64_t{1} << 16;
struct QItem {
  double key;
  std::vector<int32_t> lv;
  int32_t first;      // canonical tree: children raise indices >= first
  uint64_t code = 0;  // NodeCodec code of lv (0 when the levels do not fit): same order as lv
};
/// Levels vectors packed into one 64-bit word when they fit: QI 0 in the most significant field (so integer
/// order is the lexicographic order of the vectors), each field one guard bit wider than its height needs,
/// which makes "a <= b in every field" one subtraction: ((b | G) - a) & G == G (no borrow crosses a field,
/// and a field's guard bit survives exactly when b_j >= a_j).
struct NodeCodec {
  bool on = false;
  uint64_t guard = 0;
  std::vector<uint32_t> shift;
  explicit NodeCodec(const std::vector<int32_t>& H) : shift(H.size(), 0) {
    uint32_t bits = 0;
    for (size_t jj = H.size(); jj-- > 0;) {
      uint32_t b = 0;
      while ((int64_t{1} << b) <= H[jj]) ++b;  // b bits hold 0..H[jj]
      if (bits + b + 1 > 64) return;
      shift[jj] = bits;
      guard |= uint64_t{1} << (bits + b);
      bits += b + 1;
    }
    on = true;
  }
  uint64_t encode(const std::vector<int32_t>& x) const { return encode(x.data()); }
  uint64_t encode(const int32_t* x) const {
    if (!on) return 0;
    uint64_t c = 0;
    for (size_t j = 0; j < shift.size(); ++j) c |= static_cast<uint64_t>(x[j]) << shift[j];
    return c;
  }
  bool leq(uint64_t a, uint64_t b) const { return (((b | guard) - a) & guard) == guard; }
};
struct Tag {
  std::vector<int32_t> lv;
  uint64_t code;
};
inline bool leq(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  for (size_t j = 0; j < a.size(); ++j)
    if (a[j] > b[j]) return false;
  return true;
}
/// The search queue, in the order (key, then levels), as a binary heap of 24-byte entries whose levels live
/// in a pool with a free list: no allocation per queued node once the pool has grown (the queue's vector
/// moves and allocations were a large part of the searches that pop most of the lattice, Adult 1: 11,853).
class NodeQueue {
 public:
  struct Entry {
    double key;
    uint64_t code;  // NodeCodec code (0 when the levels do not fit)
    int32_t first;  // canonical tree: children raise indices >= first
    int32_t id;     // levels at pool[id * r]
  };
  NodeQueue(int64_t r, bool coded) : r_(static_cast<size_t>(r)), coded_(coded) {}
  bool empty() const { return heap_.empty(); }
  const Entry& top() const { return heap_.front(); }
  const int32_t* levels(const Entry& e) const { return pool_.data() + static_cast<size_t>(e.id) * r_; }
  /// A free levels slot (its pointer is valid until the next alloc).
  int32_t alloc() {
    if (!free_.empty()) {
      const int32_t id = free_.back();
      free_.pop_back();
      return id;
    }
    const auto id = static_cast<int32_t>(pool_.size() / std::max<size_t>(1, r_));
    pool_.resize(pool_.size() + std::max<size_t>(1, r_));
    return id;
  }
  int32_t* slot(int32_t id) { return pool_.data() + static_cast<size_t>(id) * r_; }
  void push_id(double key, uint64_t code, int32_t first, int32_t id) {
    heap_.push_back({key, code, first, id});
    std::push_heap(heap_.begin(), heap_.end(), Later{this});
  }
  void push(const QItem& it) {
    const int32_t id = alloc();
    std::copy(it.lv.begin(), it.lv.end(), slot(id));
    push_id(it.key, it.code, it.first, id);
  }
  /// Pop the head into out (reusing out.lv's storage).
  void pop_into(QItem& out) {
    std::pop_heap(heap_.begin(), heap_.end(), Later{this});
    const Entry e = heap_.back();
    heap_.pop_back();
    out.key = e.key;
    out.code = e.code;
    out.first = e.first;
    out.lv.assign(levels(e), levels(e) + r_);
    free_.push_back(e.id);
  }

 private:
  struct Later {  // a is taken after b: larger key, then larger levels
    const NodeQueue* q;
    bool operator()(const Entry& a, const Entry& b) const {
      if (a.key != b.key) return a.key > b.key;
      if (q->coded_) return a.code > b.code;  // every node is queued once: codes differ
      const int32_t* la = q->levels(a);
      const int32_t* lb = q->levels(b);
      return std::lexicographical_compare(lb, lb + q->r_, la, la + q->r_);
    }
  };
  size_t r_;
  bool coded_;
  std::vector<Entry> heap_;
  std::vector<int32_t> pool_;
  std::vector<int32_t> free_;
};
/// The evaluated nodes of the search (insert and look up only): an open-addressing table keyed by the
/// NodeCodec code (stored + 1, so 0 marks an empty slot) when the levels fit, else a map keyed by node_key.
/// Every popped node and every child the inferred-subtree walk generates is looked up.
template <class V>
class KnownMap {
 public:
  KnownMap(int64_t r, const NodeCodec& c) : r_(r), c_(c) {
    if (c_.on) {
      keys_.assign(size_t{1} << lg_, 0);
      vals_.resize(size_t{1} << lg_);
    }
  }
  V* find(const int32_t* lv) {
    if (!c_.on) {
      auto it = s_.find(node_key(lv, r_));
      return it == s_.end() ? nullptr : &it->second;
    }
    const uint64_t k = c_.encode(lv) + 1;
    const uint64_t mask = keys_.size() - 1;
    for (uint64_t p = (k * 0x9E3779B97F4A7C15ULL) >> (64 - lg_);; p = (p + 1) & mask) {
      if (keys_[p] == k) return &vals_[p];
      if (keys_[p] == 0) return nullptr;
    }
  }
  bool contains(const int32_t* lv) { return find(lv) != nullptr; }
  void emplace(const int32_t* lv, const V& v) {
    if (!c_.on) {
      s_.emplace(node_key(lv, r_), v);
      return;
    }
    insert(c_.encode(lv) + 1, v);
  }

 private:
  void insert(uint64_t k, const V& v) {
    if (2 * (n_ + 1) > keys_.size()) {
      std::vector<uint64_t> ok;
      std::vector<V> ov;
      ok.swap(keys_);
      ov.swap(vals_);
      lg_ += 1;
      keys_.assign(size_t{1} << lg_, 0);
      vals_.resize(size_t{1} << lg_);
      n_ = 0;
      for (size_t i = 0; i < ok.size(); ++i)
        if (ok[i] != 0) insert(ok[i], ov[i]);
    }
    const uint64_t mask = keys_.size() - 1;
    for (uint64_t p = (k * 0x9E3779B97F4A7C15ULL) >> (64 - lg_);; p = (p + 1) & mask) {
      if (keys_[p] == k) return;  // (emplace: an existing entry is kept)
      if (keys_[p] == 0) {
        keys_[p] = k;
        vals_[p] = v;
        ++n_;
        return;
      }
    }
  }
  int64_t r_;
  const NodeCodec& c_;
  uint32_t lg_ = 10;
  size_t n_ = 0;
  std::vector<uint64_t> keys_;
  std::vector<V> vals_;
  std::unordered_map<std::string, V> s_;
};
/// Per-node values of the search, keyed by the NodeCodec code when the levels fit (else by node_key).
template <class V>
class NodeMap {
 public:
  NodeMap(int64_t r, const NodeCodec& c) : r_(r), c_(c) {}
  V* find(const int32_t* lv) {
    if (c_.on) {
      auto it = u_.find(c_.encode(lv));
      return it == u_.end() ? nullptr : &it->second;
    }
    auto it = s_.find(node_key(lv, r_));
    return it == s_.end() ? nullptr : &it->second;
  }
  bool contains(const int32_t* lv) { return find(lv) != nullptr; }
  void emplace(const int32_t* lv, const V& v) {
    if (c_.on) u_.emplace(c_.encode(lv), v);
    else s_.emplace(node_key(lv, r_), v);
  }
  /// find and erase
  bool take(const int32_t* lv, V& out) {
    if (c_.on) {
      auto it = u_.find(c_.encode(lv));
      if (it == u_.end()) return false;
      out = it->second;
      u_.erase(it);
      return true;
    }
    auto it = s_.find(node_key(lv, r_));
    if (it == s_.end()) return false;
    out = it->second;
    s_.erase(it);
    return true;
  }

 private:
  int64_t r_;
  const NodeCodec& c_;
  std::unordered_map<uint64_t, V> u_;
  std::unordered_map<std::string, V> s_;
};

}  // namespace anoncore::lattice::detail
