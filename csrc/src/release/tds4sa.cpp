// TDS4SA (Algorithm 1 of Wang & Fung, "Anonymizing Sequential Releases"). See tds4sa.hpp.
//
// Index structures, as flat equivalents of the paper's trees:
//  * Tree1: T1 partitions = record ranges of one permutation, keyed by the current cut value of every X1
//    attribute plus the raw values of the join attributes outside X1; Link[v] = the partition ids of
//    candidate v (dead ids dropped lazily).
//  * Tree2: built by Python, grouped by join-slot values (groups) then by X_r (partitions), with counts.
//  * Matching: per release a hash map from the T1 join-slot nodes to the matching groups, each test O(1)
//    by leaf intervals (join.hpp); the X-tree is a hash map from packed x to its counts.
#include "anoncore/release/tds4sa.hpp"
#include "engine.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <unordered_set>

namespace anoncore::release::detail {

void Engine::build_taxonomies() {
  const size_t nt = pb_.tax.size();
  ch_off_.assign(nt, {});
  ch_.assign(nt, {});
  root_.assign(nt, -1);
  for (size_t t = 0; t < nt; ++t) {
    const Taxonomy& tx = pb_.tax[t];
    const int64_t nn = tx.parent.size;
    std::vector<int32_t> cnt(static_cast<size_t>(nn) + 1, 0);
    for (int64_t v = 0; v < nn; ++v) {
      if (tx.parent[v] < 0) root_[t] = static_cast<int32_t>(v);
      else ++cnt[static_cast<size_t>(tx.parent[v]) + 1];
    }
    for (size_t v = 1; v < cnt.size(); ++v) cnt[v] += cnt[v - 1];
    ch_off_[t] = cnt;
    ch_[t].assign(static_cast<size_t>(cnt.back()), 0);
    std::vector<int32_t> fill(cnt.begin(), cnt.end() - 1);
    for (int64_t v = 0; v < nn; ++v)
      if (tx.parent[v] >= 0) ch_[t][static_cast<size_t>(fill[static_cast<size_t>(tx.parent[v])]++)] = static_cast<int32_t>(v);
    for (int64_t v = 0; v < nn; ++v) {
      auto b = ch_[t].begin() + cnt[static_cast<size_t>(v)], e = ch_[t].begin() + cnt[static_cast<size_t>(v) + 1];
      std::sort(b, e, [&](int32_t a, int32_t c) { return tx.leaf_start[a] < tx.leaf_start[c]; });
    }
  }
}

int32_t Engine::intern_x1(int64_t pid) {
  std::vector<int32_t> k(keys_.begin() + pid * m1_, keys_.begin() + (pid + 1) * m1_);
  auto it = x1_ids_.find(k);
  if (it != x1_ids_.end()) return it->second;
  const int32_t id = static_cast<int32_t>(x1_ids_.size());
  x1_ids_.emplace(std::move(k), id);
  return id;
}

int64_t Engine::add_part(int64_t begin, int64_t end, const int32_t* key, const int32_t* raw) {
  const int64_t pid = static_cast<int64_t>(parts_.size());
  keys_.insert(keys_.end(), key, key + m1_);
  rawkeys_.insert(rawkeys_.end(), raw, raw + n_raw_);
  parts_.push_back(Part{begin, end, 0, true});
  parts_.back().x1 = intern_x1(pid);
  return pid;
}

void Engine::build_partitions() {
  const int64_t n = pb_.n1;
  perm_.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) perm_[static_cast<size_t>(i)] = static_cast<int32_t>(i);
  const Matrix<int32_t>& rj = pb_.raw_join;
  if (n_raw_ > 0)
    std::stable_sort(perm_.begin(), perm_.end(), [&](int32_t a, int32_t b) {
      return std::lexicographical_compare(rj.row(a), rj.row(a) + n_raw_, rj.row(b), rj.row(b) + n_raw_);
    });
  std::vector<int32_t> key(static_cast<size_t>(m1_));
  for (int32_t j = 0; j < m1_; ++j) {
    const int32_t t = pb_.attr_tax[static_cast<size_t>(j)];
    key[static_cast<size_t>(j)] = t >= 0 ? root_[static_cast<size_t>(t)] : 0;
    out_.iv_lo[static_cast<size_t>(j)].push_back(0);
    out_.iv_hi[static_cast<size_t>(j)].push_back(t >= 0 ? 0 : pb_.attr_nvals[static_cast<size_t>(j)]);
  }
  int64_t b = 0;
  static const int32_t kNone = 0;
  for (int64_t i = 1; i <= n; ++i) {
    const bool cut = i == n || (n_raw_ > 0 && !std::equal(rj.row(perm_[static_cast<size_t>(i)]),
                                                          rj.row(perm_[static_cast<size_t>(i)]) + n_raw_,
                                                          rj.row(perm_[static_cast<size_t>(b)])));
    if (!cut) continue;
    add_part(b, i, key.data(), n_raw_ > 0 ? rj.row(perm_[static_cast<size_t>(b)]) : &kNone);
    b = i;
  }
  std::vector<int32_t> kb(static_cast<size_t>(n * m1_));
  for (int64_t q = 0; q < n; ++q)
    for (int32_t j = 0; j < m1_; ++j)
      kb[static_cast<size_t>(q * m1_ + j)] = stat_key(j, key[static_cast<size_t>(j)], perm_[static_cast<size_t>(q)]);
  for (size_t p = 0; p < parts_.size(); ++p) build_stats(static_cast<int64_t>(p), kb.data() + parts_[p].begin * m1_);
  cand_of_.assign(static_cast<size_t>(m1_), {});
  for (int32_t j = 0; j < m1_; ++j) {
    const int32_t t = pb_.attr_tax[static_cast<size_t>(j)];
    cand_of_[static_cast<size_t>(j)].assign(t >= 0 ? static_cast<size_t>(pb_.tax[static_cast<size_t>(t)].parent.size) : 1, -1);
  }
  for (int64_t p = 0; p < static_cast<int64_t>(parts_.size()); ++p)
    for (int32_t j = 0; j < m1_; ++j) {
      const int32_t ci = cand_for(j, keys_[static_cast<size_t>(p * m1_ + j)]);
      if (ci >= 0) cands_[static_cast<size_t>(ci)].links.push_back(p);
    }
}

void Engine::build_case1_tables() {
  const size_t p = pb_.rel.size();
  grp_ratio_.assign(p, {});
  grp_min_ay_.assign(p, {});
  for (size_t r = 0; r < p; ++r) {
    const ReleaseView& rv = pb_.rel[r];
    const int64_t ng = rv.group_off.size - 1;
    grp_ratio_[r].assign(static_cast<size_t>(ng * n_items_), 0.0);
    grp_min_ay_[r].assign(static_cast<size_t>(ng), std::numeric_limits<int64_t>::max());
    for (int64_t g = 0; g < ng; ++g)
      for (int64_t q = rv.group_off[g]; q < rv.group_off[g + 1]; ++q) {
        const double sz = static_cast<double>(rv.part_size[q]);
        for (int32_t y = 0; y < n_items_; ++y) {
          double& cell = grp_ratio_[r][static_cast<size_t>(g * n_items_ + y)];
          cell = std::max(cell, static_cast<double>(rv.part_y(q, y)) / sz);
        }
        const int64_t ay = rv.y_mode == 0 ? 1 : rv.y_mode == 1 ? rv.part_size[q] : rv.yset_off[q + 1] - rv.yset_off[q];
        int64_t& mn = grp_min_ay_[r][static_cast<size_t>(g)];
        mn = std::min(mn, ay);
      }
  }
}

int32_t Engine::n_children(int32_t attr, int32_t node) const {
  const int32_t t = pb_.attr_tax[static_cast<size_t>(attr)];
  if (t < 0) return 2;
  const auto& off = ch_off_[static_cast<size_t>(t)];
  return off[static_cast<size_t>(node) + 1] - off[static_cast<size_t>(node)];
}

int32_t Engine::child_of(int32_t attr, int32_t node, int32_t split, int64_t rec) const {
  const int32_t code = pb_.codes(rec, attr);
  const int32_t t = pb_.attr_tax[static_cast<size_t>(attr)];
  if (t < 0) return code < split ? 0 : 1;
  const Taxonomy& tx = pb_.tax[static_cast<size_t>(t)];
  const auto& off = ch_off_[static_cast<size_t>(t)];
  const int32_t* b = ch_[static_cast<size_t>(t)].data() + off[static_cast<size_t>(node)];
  const int32_t nc = off[static_cast<size_t>(node) + 1] - off[static_cast<size_t>(node)];
  int32_t lo = 0, hi = nc - 1;  // last child whose leaf_start <= leaf_start(code)
  const int32_t ls = tx.leaf_start[code];
  while (lo < hi) {
    const int32_t mid = (lo + hi + 1) / 2;
    if (tx.leaf_start[b[mid]] <= ls) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

int32_t Engine::cand_for(int32_t attr, int32_t node) {
  auto& table = cand_of_[static_cast<size_t>(attr)];
  if (static_cast<size_t>(node) >= table.size()) table.resize(static_cast<size_t>(node) + 1, -1);
  int32_t& ci = table[static_cast<size_t>(node)];
  if (ci >= 0) return cands_[static_cast<size_t>(ci)].state == 0 ? ci : -1;
  const int32_t t = pb_.attr_tax[static_cast<size_t>(attr)];
  if (t >= 0 && n_children(attr, node) == 0) return -1;
  if (t < 0 && out_.iv_hi[static_cast<size_t>(attr)][static_cast<size_t>(node)] -
                       out_.iv_lo[static_cast<size_t>(attr)][static_cast<size_t>(node)] < 2)
    return -1;
  ci = static_cast<int32_t>(cands_.size());
  Cand c;
  c.attr = attr;
  c.node = node;
  cands_.push_back(std::move(c));
  return ci;
}

const std::vector<int32_t>& Engine::groups_for(const Units& u, size_t i, int32_t release) {
  std::vector<int32_t> slots(static_cast<size_t>(n_slots_));
  const int64_t pid = u.pid[i];
  for (int32_t s = 0; s < n_slots_; ++s) {
    const int32_t src = pb_.slot_src[static_cast<size_t>(s)];
    int32_t v;
    if (src >= 0) v = (src == u.attr && u.node[i] >= 0) ? u.node[i] : keys_[static_cast<size_t>(pid * m1_ + src)];
    else v = rawkeys_[static_cast<size_t>(pid * n_raw_ + (-1 - src))];
    slots[static_cast<size_t>(s)] = v;
  }
  auto& cache = match_cache_[static_cast<size_t>(release)];
  auto it = cache.find(slots);
  if (it != cache.end()) return it->second;
  const ReleaseView& rv = pb_.rel[static_cast<size_t>(release)];
  std::vector<int32_t> gl;
  const int64_t ng = rv.group_off.size - 1;
  for (int64_t g = 0; g < ng; ++g)
    if (matches(pb_.tax, pb_.cons, release + 1, slots.data(), rv.group_nodes.row(g), pb_.pair_a, pb_.pair_b))
      gl.push_back(static_cast<int32_t>(g));
  return cache.emplace(std::move(slots), std::move(gl)).first->second;
}

}  // namespace anoncore::release::detail

namespace anoncore::release::detail {

// Line 4: specialize w on T1. Step 1 of Section 5.3 (refine): a stable split of every partition on Link[w]
// by the record's child value; the only raw-record access counted in `refine_accesses`.
void Engine::specialize(int32_t ci) {
  const int32_t j = cands_[static_cast<size_t>(ci)].attr, v = cands_[static_cast<size_t>(ci)].node;
  const int32_t split = cands_[static_cast<size_t>(ci)].split;
  const std::vector<int64_t> links = cands_[static_cast<size_t>(ci)].links;
  const int32_t t = pb_.attr_tax[static_cast<size_t>(j)];
  const int32_t C = n_children(j, v);
  std::vector<int32_t> child_node(static_cast<size_t>(C));
  if (t >= 0) {
    for (int32_t c = 0; c < C; ++c)
      child_node[static_cast<size_t>(c)] = ch_[static_cast<size_t>(t)][static_cast<size_t>(ch_off_[static_cast<size_t>(t)][static_cast<size_t>(v)] + c)];
  } else {
    auto& lo = out_.iv_lo[static_cast<size_t>(j)];
    auto& hi = out_.iv_hi[static_cast<size_t>(j)];
    const int32_t a = lo[static_cast<size_t>(v)], b = hi[static_cast<size_t>(v)];
    child_node = {static_cast<int32_t>(lo.size()), static_cast<int32_t>(lo.size()) + 1};
    lo.push_back(a);
    hi.push_back(split);
    lo.push_back(split);
    hi.push_back(b);
  }
  std::vector<int64_t> fresh;
  std::vector<int32_t> buf, cix, kb, kbs;
  std::vector<int64_t> cnt(static_cast<size_t>(C) + 1);
  for (int64_t pid : links) {
    const int64_t b = parts_[static_cast<size_t>(pid)].begin, e = parts_[static_cast<size_t>(pid)].end;
    buf.assign(perm_.begin() + b, perm_.begin() + e);
    cix.resize(buf.size());
    kb.resize(buf.size() * static_cast<size_t>(m1_));
    std::fill(cnt.begin(), cnt.end(), 0);
    const int32_t* pkey = keys_.data() + pid * m1_;
    for (size_t q = 0; q < buf.size(); ++q) {  // one read of each record: its child of w and its stat keys
      const int32_t c = child_of(j, v, split, buf[q]);
      cix[q] = c;
      ++cnt[static_cast<size_t>(c) + 1];
      for (int32_t i = 0; i < m1_; ++i)
        kb[q * static_cast<size_t>(m1_) + static_cast<size_t>(i)] =
            stat_key(i, i == j ? child_node[static_cast<size_t>(c)] : pkey[i], buf[q]);
    }
    out_.refine_accesses += e - b;
    for (size_t c = 1; c < cnt.size(); ++c) cnt[c] += cnt[c - 1];
    std::vector<int64_t> fill(cnt.begin(), cnt.end() - 1);
    kbs.resize(kb.size());
    for (size_t q = 0; q < buf.size(); ++q) {
      const int64_t to = fill[static_cast<size_t>(cix[q])]++;
      perm_[static_cast<size_t>(b + to)] = buf[q];
      std::copy(kb.begin() + static_cast<std::ptrdiff_t>(q * static_cast<size_t>(m1_)),
                kb.begin() + static_cast<std::ptrdiff_t>((q + 1) * static_cast<size_t>(m1_)),
                kbs.begin() + to * m1_);
    }
    std::vector<int32_t> key(keys_.begin() + pid * m1_, keys_.begin() + (pid + 1) * m1_);
    std::vector<int32_t> raw(rawkeys_.begin() + pid * n_raw_, rawkeys_.begin() + (pid + 1) * n_raw_);
    raw.push_back(0);
    for (int32_t c = 0; c < C; ++c) {
      if (cnt[static_cast<size_t>(c) + 1] == cnt[static_cast<size_t>(c)]) continue;
      key[static_cast<size_t>(j)] = child_node[static_cast<size_t>(c)];
      const int64_t q = add_part(b + cnt[static_cast<size_t>(c)], b + cnt[static_cast<size_t>(c) + 1], key.data(), raw.data());
      build_stats(q, kbs.data() + cnt[static_cast<size_t>(c)] * m1_);
      fresh.push_back(q);
    }
    parts_[static_cast<size_t>(pid)].alive = false;
    std::vector<Hist>().swap(hists_[static_cast<size_t>(pid)]);
  }
  Cand& w = cands_[static_cast<size_t>(ci)];
  w.state = 3;
  if (pb_.model == 0) {
    a_cur_ = std::min(a_cur_, w.m);
  } else {
    for (int32_t y = 0; y < n_items_; ++y)
      l_cur_[static_cast<size_t>(y)] = std::max(l_cur_[static_cast<size_t>(y)], w.my[static_cast<size_t>(y)]);
  }
  for (int64_t q : fresh)
    for (int32_t i = 0; i < m1_; ++i) {
      const int32_t c2 = cand_for(i, keys_[static_cast<size_t>(q * m1_ + i)]);
      if (c2 < 0) continue;
      cands_[static_cast<size_t>(c2)].links.push_back(q);
      cands_[static_cast<size_t>(c2)].dirty = true;
    }
}

bool Engine::feasible_now() const {
  if (pb_.model == 0) return a_cur_ >= static_cast<double>(pb_.k_anon);
  for (int32_t y = 0; y < n_items_; ++y)
    if (l_cur_[static_cast<size_t>(y)] > pb_.item_k[y] + kEps) return false;
  return true;
}

double Engine::value_now() const {
  if (pb_.model == 0) return a_cur_;
  double l = 0;
  for (double v : l_cur_) l = std::max(l, v);
  return l;
}

void Engine::finish() {
  out_.gen.assign(static_cast<size_t>(pb_.n1 * m1_), 0);
  for (size_t p = 0; p < parts_.size(); ++p) {
    if (!parts_[p].alive) continue;
    ++out_.n_partitions;
    for (int64_t q = parts_[p].begin; q < parts_[p].end; ++q)
      for (int32_t i = 0; i < m1_; ++i)
        out_.gen[static_cast<size_t>(perm_[static_cast<size_t>(q)] * m1_ + i)] = keys_[p * static_cast<size_t>(m1_) + static_cast<size_t>(i)];
  }
  for (const Cand& c : cands_)
    if (c.state == 0 || c.state == 1)
      out_.remaining.push_back(Remaining{c.attr, c.node, c.split, c.state == 1 ? 0 : 1, c.gain, c.m});
  out_.final_value = value_now();
  out_.final_item_l = l_cur_;
}

void Engine::run(const InterruptHook& hook) {
  const auto t0 = Clock::now();
  m1_ = static_cast<int32_t>(pb_.codes.cols);
  n_raw_ = static_cast<int32_t>(pb_.raw_join.cols);
  n_slots_ = static_cast<int32_t>(pb_.slot_src.size());
  n_items_ = pb_.model == 1 ? pb_.n_items : 0;
  case1_ = !pb_.force_general;
  for (int32_t s : pb_.slot_src) case1_ = case1_ && s >= 0;
  for (const ReleaseView& rv : pb_.rel) case1_ = case1_ && rv.join_in_x;
  out_.case1 = case1_;
  out_.iv_lo.assign(static_cast<size_t>(m1_), {});
  out_.iv_hi.assign(static_cast<size_t>(m1_), {});
  build_taxonomies();
  match_cache_.resize(pb_.rel.size());
  if (case1_) build_case1_tables();
  build_partitions();
  {  // the root state (Corollary 4.2: feasible iff the most general T1 is)
    std::vector<int64_t> all(parts_.size());
    for (size_t p = 0; p < parts_.size(); ++p) all[p] = static_cast<int64_t>(p);
    Units u;
    fill_units(all, -1, -1, -1, u);
    std::vector<double> my(static_cast<size_t>(n_items_), 0.0);
    a_cur_ = case1_ ? privacy_case1(u, my) : privacy(u, my);
    l_cur_ = my;
    out_.root_value = value_now();
  }
  const auto t1 = Clock::now();
  out_.t_pre = std::chrono::duration<double>(t1 - t0).count();
  if (!feasible_now()) {
    out_.status = Status::Infeasible;
    finish();
    return;
  }
  for (int64_t it = 0; pb_.max_iter < 0 || it < pb_.max_iter; ++it) {
    if (interrupted(hook)) {
      out_.status = Status::Interrupted;
      break;
    }
    for (size_t c = 0; c < cands_.size(); ++c)
      if (cands_[c].state == 0 && cands_[c].dirty) evaluate(cands_[c]);
    int32_t best = -1;
    double bs = -kInf, bloss = 0;
    for (size_t c = 0; c < cands_.size(); ++c) {
      const Cand& k = cands_[c];
      if (k.state != 0 || !k.valid || (pb_.require_gain && k.gain <= kEps)) continue;
      const double loss = loss_of(k);
      const double s = k.gain / (loss + 1.0);
      const Cand* b = best >= 0 ? &cands_[static_cast<size_t>(best)] : nullptr;
      if (!b || s > bs || (s == bs && (k.attr < b->attr || (k.attr == b->attr && k.node < b->node)))) {
        best = static_cast<int32_t>(c);
        bs = s;
        bloss = loss;
      }
    }
    if (best < 0) break;
    const Cand& w = cands_[static_cast<size_t>(best)];
    Step st{w.attr, w.node, w.split, bs, w.gain, bloss, 0.0};
    specialize(best);
    st.value_after = value_now();
    out_.trace.push_back(st);
  }
  out_.t_gen = std::chrono::duration<double>(Clock::now() - t1).count();
  finish();
}

}  // namespace anoncore::release::detail

namespace anoncore::release {

Output tds4sa(const Problem& pb, const InterruptHook& hook) {
  Output out;
  detail::Engine eng(pb, out);
  eng.run(hook);
  return out;
}

}  // namespace anoncore::release

namespace anoncore::release::detail {

int32_t Engine::stat_key(int32_t attr, int32_t node, int64_t rec) const {
  if (pb_.attr_tax[static_cast<size_t>(attr)] < 0) return pb_.codes(rec, attr);
  return n_children(attr, node) > 0 ? child_of(attr, node, -1, rec) : 0;
}

// Statistics of a new partition from the keys gathered by the refinement scan (`kb`: one row of m1 keys per
// record, in the partition's order), so that scoring never reads raw records again.
void Engine::build_stats(int64_t pid, const int32_t* kb) {
  const Part& P = parts_[static_cast<size_t>(pid)];
  const int64_t m = P.end - P.begin;
  const size_t nk = static_cast<size_t>(pb_.n_cls), ni = static_cast<size_t>(n_items_);
  const bool ysets = pb_.model == 0 && pb_.y1_mode == 2;
  std::vector<int32_t> side0;
  for (int32_t y = 0; y < n_items_; ++y)
    if (pb_.item_side[y] == 0) side0.push_back(y);
  if (hists_.size() <= static_cast<size_t>(pid)) hists_.resize(static_cast<size_t>(pid) + 1);
  auto& H = hists_[static_cast<size_t>(pid)];
  H.assign(static_cast<size_t>(m1_) + 1, Hist{});
  std::vector<std::pair<int32_t, int64_t>> order(static_cast<size_t>(m));
  for (int32_t j = 0; j <= m1_; ++j) {
    if (j < m1_ && pb_.attr_tax[static_cast<size_t>(j)] >= 0 && n_children(j, keys_[static_cast<size_t>(pid * m1_ + j)]) == 0)
      continue;  // a leaf value: nothing to specialize
    const bool cont = j < m1_ && pb_.attr_tax[static_cast<size_t>(j)] < 0;
    const int32_t node = j < m1_ ? keys_[static_cast<size_t>(pid * m1_ + j)] : 0;
    const int64_t lo = cont ? out_.iv_lo[static_cast<size_t>(j)][static_cast<size_t>(node)] : 0;
    const int64_t width = cont ? out_.iv_hi[static_cast<size_t>(j)][static_cast<size_t>(node)] - lo : 0;
    if (cont && width > 4 * m) {  // value ranks, wide interval: comparison sort of packed (rank, position)
      std::vector<uint64_t> packed(static_cast<size_t>(m));
      for (int64_t q = 0; q < m; ++q)
        packed[static_cast<size_t>(q)] = (static_cast<uint64_t>(kb[q * m1_ + j] - lo) << 32) | static_cast<uint64_t>(q);
      std::sort(packed.begin(), packed.end());
      for (int64_t q = 0; q < m; ++q)
        order[static_cast<size_t>(q)] = {static_cast<int32_t>((packed[static_cast<size_t>(q)] >> 32) + static_cast<uint64_t>(lo)),
                                         static_cast<int64_t>(packed[static_cast<size_t>(q)] & 0xffffffffull)};
    } else if (cont) {  // narrow interval: counting sort over its ranks
      std::vector<int64_t> cc(static_cast<size_t>(width) + 1, 0);
      for (int64_t q = 0; q < m; ++q) ++cc[static_cast<size_t>(kb[q * m1_ + j] - lo) + 1];
      for (size_t c = 1; c < cc.size(); ++c) cc[c] += cc[c - 1];
      for (int64_t q = 0; q < m; ++q) {
        const int32_t key = kb[q * m1_ + j];
        order[static_cast<size_t>(cc[static_cast<size_t>(key - lo)]++)] = {key, q};
      }
    } else {  // child indexes (few): stable counting sort
      const int32_t C = j < m1_ ? n_children(j, node) : 1;
      std::vector<int64_t> cc(static_cast<size_t>(C) + 1, 0);
      for (int64_t q = 0; q < m; ++q) ++cc[static_cast<size_t>(j < m1_ ? kb[q * m1_ + j] : 0) + 1];
      for (size_t c = 1; c < cc.size(); ++c) cc[c] += cc[c - 1];
      for (int64_t q = 0; q < m; ++q) {
        const int32_t key = j < m1_ ? kb[q * m1_ + j] : 0;
        order[static_cast<size_t>(cc[static_cast<size_t>(key)]++)] = {key, q};
      }
    }
    Hist& h = H[static_cast<size_t>(j)];
    for (int64_t q = 0; q < m; ++q) {
      const int32_t key = order[static_cast<size_t>(q)].first;
      const int64_t rec = perm_[static_cast<size_t>(P.begin + order[static_cast<size_t>(q)].second)];
      if (h.key.empty() || h.key.back() != key) {
        h.key.push_back(key);
        h.n.push_back(0);
        h.cls.resize(h.cls.size() + nk, 0);
        h.items.resize(h.items.size() + ni, 0);
      }
      const size_t g = h.key.size() - 1;
      ++h.n[g];
      if (nk) ++h.cls[g * nk + static_cast<size_t>(pb_.cls[rec])];
      for (int32_t y : side0) h.items[g * ni + static_cast<size_t>(y)] += pb_.y1(rec, y);
      if (ysets) h.ky.emplace_back(key, pb_.y1_id[rec]);
    }
    std::sort(h.ky.begin(), h.ky.end());
    h.ky.erase(std::unique(h.ky.begin(), h.ky.end()), h.ky.end());
  }
}

}  // namespace anoncore::release::detail
