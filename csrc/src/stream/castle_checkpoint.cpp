// CASTLE checkpoint room: the dynamic state of a Castle as little-endian bytes, and its defensive restore.
//
// The bytes hold only what changes while the stream runs (counters, tau and the ring of recent ILs, Omega, the
// pending tuples, the open clusters). Parameters and hierarchies are not in them: Python keeps those in the
// checkpoint's JSON header, validates them, builds a fresh Castle with the ordinary constructor and calls
// restore_state() on it. Every field is range-checked against that Castle before it is used (docs/castle.md,
// "Checkpoints"); a bad field throws std::invalid_argument (ValueError in Python), never reads out of bounds.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "anoncore/core/status.hpp"
#include "anoncore/stream/castle.hpp"

namespace anoncore::stream {

namespace {
constexpr char kMagic[8] = {'A', 'N', 'C', 'C', 'A', 'S', 'T', 'L'};
constexpr uint32_t kVersion = 2;
constexpr uint32_t kByteOrder = 0x01020304u;

size_t sz(int64_t v) { return static_cast<size_t>(v); }

[[noreturn]] void corrupt(const std::string& what) {
  throw std::invalid_argument("CASTLE checkpoint state is corrupt: " + what);
}

struct Writer {
  std::string out;
  template <class T>
  void put(T v) {
    char buf[sizeof(T)];
    std::memcpy(buf, &v, sizeof(T));
    out.append(buf, sizeof(T));
  }
  template <class T>
  void vec(const std::vector<T>& v) {
    put<uint64_t>(v.size());
    if (!v.empty()) out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
};

}  // namespace

/// Bounds-checked little-endian reader over checkpoint bytes (every read checks the bytes left).
struct CheckpointReader {
  const std::string& in;
  size_t at = 0;
  void need(size_t n) const {
    if (n > in.size() - at) corrupt("truncated");
  }
  template <class T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, in.data() + at, sizeof(T));
    at += sizeof(T);
    return v;
  }
  /// A count of items of `item` bytes each that must still fit in the remaining bytes.
  uint64_t count(size_t item) {
    const auto n = get<uint64_t>();
    if (item > 0 && n > (in.size() - at) / item) corrupt("a count exceeds the bytes left");
    return n;
  }
  /// `n` items (their count already read and checked by count()).
  template <class T>
  std::vector<T> items(uint64_t n) {
    need(static_cast<size_t>(n) * sizeof(T));
    std::vector<T> v(static_cast<size_t>(n));
    if (n) std::memcpy(v.data(), in.data() + at, static_cast<size_t>(n) * sizeof(T));
    at += static_cast<size_t>(n) * sizeof(T);
    return v;
  }
  template <class T>
  std::vector<T> vec(size_t expect) {
    const auto n = count(sizeof(T));
    if (n != expect) corrupt("an array has the wrong length");
    return items<T>(n);
  }
};

namespace {

bool finite_unit(double x) { return std::isfinite(x) && x >= 0.0 && x <= 1.0; }
}  // namespace

std::vector<int64_t> Castle::pending_positions() const {
  std::vector<int64_t> out;
  out.reserve(sz(n_alive_));
  for (int32_t s : queue_)
    if (t_alive_[sz(s)]) out.push_back(t_pos_[sz(s)]);
  return out;
}

std::string Castle::checkpoint() const {
  if (!ev_.position.empty() || !ev_.g_id.empty()) throw InternalError("CASTLE: checkpoint with untaken events");
  Writer w;
  w.out.append(kMagic, 8);
  w.put<uint32_t>(kVersion);
  w.put<uint32_t>(kByteOrder);
  w.put<uint64_t>(sz(dn_));
  w.put<uint64_t>(sz(dc_));
  w.put(next_cluster_id_);
  w.put(next_gen_id_);
  w.put(rng_counter_);
  w.put(n_arrivals_);
  w.put(last_pos_);
  w.put<uint8_t>(has_last_ ? 1 : 0);
  w.put(tau_);
  w.vec(recent_il_);
  w.put(recent_head_);
  w.put<uint64_t>(omega_.size());
  for (const auto& e : omega_) {
    w.put(e.gen_id);
    w.vec(e.lo);
    w.vec(e.hi);
    w.vec(e.clo);
    w.vec(e.chi);
    w.vec(e.node);
  }
  // pending tuples in arrival order; the index in this list identifies them below
  std::vector<int32_t> alive;
  for (int32_t s : queue_)
    if (t_alive_[sz(s)]) alive.push_back(s);
  std::vector<int64_t> index(t_pos_.size(), -1);
  w.put<uint64_t>(alive.size());
  for (size_t i = 0; i < alive.size(); ++i) {
    const int32_t s = alive[i];
    index[static_cast<size_t>(s)] = static_cast<int64_t>(i);
    w.put(t_pos_[sz(s)]);
    w.put(t_pid_[sz(s)]);
    w.put(t_sa_[sz(s)]);
    for (int64_t j = 0; j < dn_; ++j) w.put(t_num_[sz(s) * sz(dn_) + sz(j)]);
    for (int64_t j = 0; j < dc_; ++j) w.put(t_cat_[sz(s) * sz(dc_) + sz(j)]);
  }
  w.put<uint64_t>(gamma_.size());
  for (int32_t c : gamma_) {
    const Cluster& C = clusters_[sz(c)];
    w.put(C.id);
    w.put<uint64_t>(C.members.size());
    for (int32_t t : C.members) w.put(index[static_cast<size_t>(t)]);
  }
  return w.out;
}

/// The header, counters, tau and the ring of recent ILs (A6): tau must be their mean (or initial_tau).
void Castle::restore_counters(CheckpointReader& r) {
  if (r.get<uint64_t>() != sz(dn_) || r.get<uint64_t>() != sz(dc_))
    corrupt("its numbers of quasi-identifiers differ from the parameters'");
  next_cluster_id_ = r.get<int64_t>();
  next_gen_id_ = r.get<int64_t>();
  rng_counter_ = r.get<uint64_t>();
  n_arrivals_ = r.get<int64_t>();
  last_pos_ = r.get<int64_t>();
  const auto has_last = r.get<uint8_t>();
  tau_ = r.get<double>();
  if (next_cluster_id_ < 0 || next_gen_id_ < 0 || n_arrivals_ < 0) corrupt("a counter is negative");
  if (has_last > 1) corrupt("a flag is neither 0 nor 1");
  has_last_ = has_last == 1;
  if (has_last_ != (n_arrivals_ > 0)) corrupt("the last position disagrees with the number of arrivals");
  if (!finite_unit(tau_)) corrupt("tau is not in [0, 1]");
  const auto n_recent = r.count(sizeof(double));
  if (n_recent > static_cast<uint64_t>(p_.mu) || n_recent > static_cast<uint64_t>(next_gen_id_))
    corrupt("more recent ILs than mu or than released clusters");
  recent_il_ = r.items<double>(n_recent);
  recent_head_ = r.get<int64_t>();
  for (double x : recent_il_)
    if (!finite_unit(x)) corrupt("a recent IL is not in [0, 1]");
  const bool full = static_cast<int64_t>(recent_il_.size()) == p_.mu;
  if (recent_head_ < 0 || (full ? recent_head_ >= p_.mu : recent_head_ != 0))
    corrupt("the IL ring head is out of range");
  double s = 0.0;
  for (double x : recent_il_) s += x;
  const double want = recent_il_.empty() ? p_.initial_tau : s / static_cast<double>(recent_il_.size());
  if (tau_ != want) corrupt("tau is not the mean of the recent ILs");
}

/// Omega: released generalizations kept for reuse (A12), each a box inside the domains and hierarchies.
void Castle::restore_omega(CheckpointReader& r) {
  const auto n = r.count(sizeof(int64_t) + 5 * sizeof(uint64_t));
  if (p_.max_reuse >= 0 && n > static_cast<uint64_t>(p_.max_reuse)) corrupt("Omega holds more than max_reuse entries");
  if (n > static_cast<uint64_t>(next_gen_id_)) corrupt("Omega holds more entries than released clusters");
  int64_t last_gen = -1;
  for (uint64_t i = 0; i < n; ++i) {
    OmegaEntry e;
    e.gen_id = r.get<int64_t>();
    if (e.gen_id <= last_gen || e.gen_id >= next_gen_id_) corrupt("an Omega generalization id is out of order");
    last_gen = e.gen_id;
    e.lo = r.vec<double>(sz(dn_));
    e.hi = r.vec<double>(sz(dn_));
    e.clo = r.vec<int32_t>(sz(dc_));
    e.chi = r.vec<int32_t>(sz(dc_));
    e.node = r.vec<int32_t>(sz(dc_));
    for (size_t j = 0; j < sz(dn_); ++j)
      if (!(dom_lo_[j] <= e.lo[j] && e.lo[j] <= e.hi[j] && e.hi[j] <= dom_hi_[j]))
        corrupt("an Omega interval is outside its domain");
    for (size_t j = 0; j < sz(dc_); ++j) {
      const CatHierarchy& h = cats_[j];
      const auto nodes = static_cast<int64_t>(h.parent.size());
      if (e.node[j] < 0 || e.node[j] >= nodes || e.clo[j] < 0 || e.clo[j] > e.chi[j] || e.chi[j] >= h.n_leaves)
        corrupt("an Omega node or leaf range is outside its hierarchy");
      const int32_t a = h.leaf_start[sz(e.node[j])], b = a + h.leaf_count[sz(e.node[j])] - 1;
      if (p_.containment_range ? !(a <= e.clo[j] && e.chi[j] <= b) : (e.clo[j] != a || e.chi[j] != b))
        corrupt("an Omega leaf range does not match its node");
    }
    omega_push(std::move(e));
  }
}

/// Pending tuples in arrival order (strictly increasing positions within the last delta arrivals), then the open
/// clusters (at most eta, ids increasing, each pending tuple in exactly one).
void Castle::restore_tuples(CheckpointReader& r) {
  const size_t row = 2 * sizeof(int64_t) + sizeof(int32_t) + sz(dn_) * sizeof(double) + sz(dc_) * sizeof(int32_t);
  const auto nt = r.count(row);
  if (nt > static_cast<uint64_t>(n_arrivals_) || nt > static_cast<uint64_t>(p_.delta) ||
      nt > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()))
    corrupt("more pending tuples than arrivals or than delta");
  std::vector<int32_t> slots(static_cast<size_t>(nt));
  for (size_t i = 0; i < slots.size(); ++i) {
    const int32_t s = new_tuple_slot();
    slots[i] = s;
    const auto pos = r.get<int64_t>();
    const auto pid = r.get<int64_t>();
    const auto sa = r.get<int32_t>();
    if ((i > 0 && pos <= t_pos_[sz(slots[i - 1])]) || pos > last_pos_ ||
        (last_pos_ > std::numeric_limits<int64_t>::min() + p_.delta && pos <= last_pos_ - p_.delta))
      corrupt("pending positions are not increasing within the last delta arrivals");
    if (sa < 0) corrupt("a sensitive code is negative");
    t_pos_[sz(s)] = pos;
    t_pid_[sz(s)] = pid;
    t_sa_[sz(s)] = sa;
    for (size_t j = 0; j < sz(dn_); ++j) {
      const double v = r.get<double>();
      if (!(dom_lo_[j] <= v && v <= dom_hi_[j])) corrupt("a numeric value is outside its domain");
      t_num_[sz(s) * sz(dn_) + j] = v;
    }
    for (size_t j = 0; j < sz(dc_); ++j) {
      const auto v = r.get<int32_t>();
      if (v < 0 || v >= cats_[j].n_leaves) corrupt("a categorical code is outside its hierarchy");
      t_cat_[sz(s) * sz(dc_) + j] = v;
    }
    t_alive_[sz(s)] = 1;
    queue_.push_back(s);
    ++n_alive_;
  }
  const auto ng = r.count(sizeof(int64_t) + sizeof(uint64_t));
  if (ng > nt || ng > static_cast<uint64_t>(p_.eta)) corrupt("more open clusters than pending tuples or than eta");
  uint64_t assigned = 0;
  int64_t last_id = -1;
  for (uint64_t g = 0; g < ng; ++g) {
    const auto id = r.get<int64_t>();
    if (id <= last_id || id >= next_cluster_id_) corrupt("open cluster ids are not increasing below the next id");
    last_id = id;
    const auto nm = r.count(sizeof(int64_t));
    if (nm == 0 || nm > nt - assigned) corrupt("an open cluster is empty or holds too many tuples");
    int32_t cl = -1;
    for (uint64_t m = 0; m < nm; ++m) {
      const auto ix = r.get<int64_t>();
      if (ix < 0 || static_cast<uint64_t>(ix) >= nt || t_cluster_[sz(slots[sz(ix)])] >= 0)
        corrupt("a cluster member is out of range or listed twice");
      if (m == 0) {
        cl = new_cluster(slots[sz(ix)]);
      } else {
        add_to_cluster(cl, slots[sz(ix)]);
      }
    }
    assigned += nm;
    clusters_[sz(cl)].id = id;
  }
  if (assigned != nt) corrupt("a pending tuple is in no open cluster");
}

void Castle::restore_state(const std::string& bytes) {
  if (n_arrivals_ != 0 || !queue_.empty() || !omega_.empty())
    throw InternalError("CASTLE: restore_state on a Castle that already received tuples");
  CheckpointReader r{bytes};
  r.need(8);
  if (std::memcmp(bytes.data(), kMagic, 8) != 0) throw std::invalid_argument("not a CASTLE checkpoint state");
  r.at = 8;
  const auto version = r.get<uint32_t>();
  if (version != kVersion)
    throw std::invalid_argument("unsupported CASTLE checkpoint state version " + std::to_string(version));
  if (r.get<uint32_t>() != kByteOrder) throw std::invalid_argument("CASTLE checkpoint state has another byte order");
  restore_counters(r);
  restore_omega(r);
  const int64_t next_cluster_id = next_cluster_id_;
  restore_tuples(r);
  next_cluster_id_ = next_cluster_id;  // new_cluster() advanced it; the stored ids were set above
  if (r.at != bytes.size()) corrupt("trailing bytes");
}

}  // namespace anoncore::stream
