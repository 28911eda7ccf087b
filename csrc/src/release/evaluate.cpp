// TDS4SA candidate evaluation (Algorithm 1 lines 3 and 5; Eqs. 1-3; Sections 5.3-5.4): per candidate v the
// virtual specialization's (partition, child) units, InfoGain on T1, and the join-level privacy of the new x
// values (M_v for linkability, m_v for anonymity; B.2.5 of the spec), by partition-level probing.
#include <algorithm>
#include <unordered_set>
#include <utility>

#include "engine.hpp"

namespace anoncore::release::detail {

// Units from the partitions' statistics (no raw record is read here): categorical keys are child indexes;
// continuous keys are value ranks, sent left (< split) or right.
void Engine::fill_units(const std::vector<int64_t>& pids, int32_t attr, int32_t node, int32_t split, Units& u) {
  const int32_t C = attr >= 0 ? n_children(attr, node) : 1;
  const int32_t t = attr >= 0 ? pb_.attr_tax[static_cast<size_t>(attr)] : -1;
  const size_t nu = pids.size() * static_cast<size_t>(C);
  const size_t nk = static_cast<size_t>(pb_.n_cls), ni = static_cast<size_t>(n_items_);
  const size_t slot = attr >= 0 ? static_cast<size_t>(attr) : static_cast<size_t>(m1_);
  u.n_child = C;
  u.attr = attr;
  u.pid.assign(nu, 0);
  u.node.assign(nu, -1);
  u.n.assign(nu, 0);
  u.cls.assign(nu * nk, 0);
  u.items.assign(nu * ni, 0);
  std::vector<std::pair<int64_t, int64_t>> yp;
  for (size_t i = 0; i < pids.size(); ++i) {
    const Hist& h = hists_[static_cast<size_t>(pids[i])][slot];
    for (int32_t c = 0; c < C; ++c) {
      const size_t k = i * static_cast<size_t>(C) + static_cast<size_t>(c);
      u.pid[k] = pids[i];
      if (t >= 0) u.node[k] = ch_[static_cast<size_t>(t)][static_cast<size_t>(ch_off_[static_cast<size_t>(t)][static_cast<size_t>(node)] + c)];
    }
    auto unit_of = [&](int32_t key) {
      const int32_t c = (attr >= 0 && t < 0) ? (key < split ? 0 : 1) : key;
      return i * static_cast<size_t>(C) + static_cast<size_t>(c);
    };
    for (size_t g = 0; g < h.key.size(); ++g) {
      const size_t k = unit_of(h.key[g]);
      u.n[k] += h.n[g];
      for (size_t a = 0; a < nk; ++a) u.cls[k * nk + a] += h.cls[g * nk + a];
      for (size_t a = 0; a < ni; ++a) u.items[k * ni + a] += h.items[g * ni + a];
    }
    for (const auto& pr : h.ky) yp.emplace_back(static_cast<int64_t>(unit_of(pr.first)), pr.second);
  }
  u.yoff.assign(nu + 1, 0);
  u.yids.clear();
  if (!yp.empty()) {
    std::sort(yp.begin(), yp.end());
    yp.erase(std::unique(yp.begin(), yp.end()), yp.end());
    for (const auto& pr : yp) {
      ++u.yoff[static_cast<size_t>(pr.first) + 1];
      u.yids.push_back(pr.second);
    }
    for (size_t k = 1; k <= nu; ++k) u.yoff[k] += u.yoff[k - 1];
  }
}

namespace {
/// The x values of one evaluation (the X-tree as a hash map) with their counts.
struct XTable {
  std::unordered_map<Key3, int64_t, Key3Hash> index;
  std::vector<int64_t> a, ay, last, icnt;
  int64_t slot(const Key3& key, int32_t n_items) {
    auto it = index.find(key);
    if (it != index.end()) return it->second;
    const int64_t id = static_cast<int64_t>(a.size());
    index.emplace(key, id);
    a.push_back(0);
    ay.push_back(0);
    last.push_back(-1);
    icnt.resize(icnt.size() + static_cast<size_t>(n_items), 0);
    return id;
  }
};
}  // namespace

double Engine::privacy(const Units& u, std::vector<double>& my) {
  const size_t p = pb_.rel.size();
  const int32_t ni = n_items_;
  const int32_t y2mode = p ? pb_.rel[0].y_mode : 0;
  XTable xt;
  std::unordered_set<Key3, Key3Hash> seen;
  std::vector<std::vector<int64_t>> plist(p);
  std::vector<size_t> pos(p);
  for (size_t i = 0; i < u.pid.size(); ++i) {
    const int64_t n = u.n[i];
    if (n == 0) continue;
    bool dangling = false;
    for (size_t r = 0; r < p && !dangling; ++r) {
      const auto& gl = groups_for(u, i, static_cast<int32_t>(r));
      plist[r].clear();
      for (int32_t g : gl)
        for (int64_t q = pb_.rel[r].group_off[g]; q < pb_.rel[r].group_off[g + 1]; ++q) plist[r].push_back(q);
      dangling = plist[r].empty();
    }
    if (dangling) continue;
    const int64_t x1key = static_cast<int64_t>(parts_[static_cast<size_t>(u.pid[i])].x1) * u.n_child +
                          static_cast<int64_t>(i % static_cast<size_t>(u.n_child));
    std::fill(pos.begin(), pos.end(), 0);
    while (true) {
      int64_t prod = 1, xr = 0;
      for (size_t r = 0; r < p; ++r) {
        const int64_t q = plist[r][pos[r]];
        prod *= pb_.rel[r].part_size[q];
        xr = xr * pb_.rel[r].n_x + pb_.rel[r].part_x[q];
      }
      const int64_t x = xt.slot(Key3{x1key, xr, 0}, ni);
      ++out_.pairs_probed;
      xt.a[static_cast<size_t>(x)] += n * prod;
      if (pb_.model == 1) {
        for (int32_t y = 0; y < ni; ++y) {
          const int32_t s = pb_.item_side[y];
          int64_t add;
          if (s == 0) {
            add = u.items[i * static_cast<size_t>(ni) + static_cast<size_t>(y)] * prod;
          } else {
            const ReleaseView& rv = pb_.rel[static_cast<size_t>(s - 1)];
            const int64_t q = plist[static_cast<size_t>(s - 1)][pos[static_cast<size_t>(s - 1)]];
            add = n * (prod / rv.part_size[q]) * rv.part_y(q, y);
          }
          xt.icnt[static_cast<size_t>(x * ni + y)] += add;
        }
      } else if (pb_.y1_mode == 1 && y2mode == 0) {  // Case 3: Y1 a key, Y2 empty: each unit once per x
        if (xt.last[static_cast<size_t>(x)] != static_cast<int64_t>(i)) {
          xt.last[static_cast<size_t>(x)] = static_cast<int64_t>(i);
          xt.ay[static_cast<size_t>(x)] += n;
        }
      } else if (pb_.y1_mode == 1 && y2mode == 1) {  // Case 4: Y a key of the join
        xt.ay[static_cast<size_t>(x)] += n * prod;
      } else {  // general: distinct (Y1, Y2) units, weighted by the records a key unit stands for
        const int64_t q = p ? plist[0][pos[0]] : 0;
        const int64_t nu1 = pb_.y1_mode == 2 ? u.yoff[i + 1] - u.yoff[i] : 1;
        const ReleaseView* rv = p ? &pb_.rel[0] : nullptr;
        const int64_t nu2 = y2mode == 2 ? rv->yset_off[q + 1] - rv->yset_off[q] : 1;
        for (int64_t a1 = 0; a1 < nu1; ++a1) {
          const int64_t id1 = pb_.y1_mode == 2 ? u.yids[static_cast<size_t>(u.yoff[i] + a1)]
                              : pb_.y1_mode == 1 ? static_cast<int64_t>(i) : 0;
          const int64_t w1 = pb_.y1_mode == 1 ? n : 1;
          for (int64_t a2 = 0; a2 < nu2; ++a2) {
            const int64_t id2 = y2mode == 2 ? rv->yset[rv->yset_off[q] + a2] : y2mode == 1 ? q : 0;
            const int64_t w2 = y2mode == 1 ? rv->part_size[q] : 1;
            if (seen.insert(Key3{x, id1, id2}).second) xt.ay[static_cast<size_t>(x)] += w1 * w2;
          }
        }
      }
      size_t r = 0;  // odometer over the matching partitions of every release
      while (r < p && ++pos[r] == plist[r].size()) pos[r++] = 0;
      if (r == p) break;
    }
  }
  double m = kInf;
  for (size_t x = 0; x < xt.a.size(); ++x) {
    if (pb_.model == 0) {
      m = std::min(m, static_cast<double>(xt.ay[x]));
    } else {
      for (int32_t y = 0; y < ni; ++y)
        my[static_cast<size_t>(y)] = std::max(my[static_cast<size_t>(y)],
            static_cast<double>(xt.icnt[x * static_cast<size_t>(ni) + static_cast<size_t>(y)]) / static_cast<double>(xt.a[x]));
    }
  }
  return m;
}

// Case 1 (J1 in X1 and every J_r in X_r): each x is one (P1, P2..Pp) combination, so a_Y(x) =
// a_Y1(P1) * a_Y2(P2) and l_y(x) is a within-partition frequency; only the existence of a match is probed.
double Engine::privacy_case1(const Units& u, std::vector<double>& my) {
  const size_t p = pb_.rel.size();
  const int32_t ni = n_items_;
  double m = kInf;
  for (size_t i = 0; i < u.pid.size(); ++i) {
    const int64_t n = u.n[i];
    if (n == 0) continue;
    bool dangling = false;
    double ay2 = 1.0;
    std::vector<double> side(static_cast<size_t>(ni), 0.0);
    for (size_t r = 0; r < p && !dangling; ++r) {
      const auto& gl = groups_for(u, i, static_cast<int32_t>(r));
      dangling = gl.empty();
      ++out_.pairs_probed;
      int64_t mn = std::numeric_limits<int64_t>::max();
      for (int32_t g : gl) {
        mn = std::min(mn, grp_min_ay_[r][static_cast<size_t>(g)]);
        for (int32_t y = 0; y < ni; ++y)
          if (pb_.item_side[y] == static_cast<int32_t>(r) + 1)
            side[static_cast<size_t>(y)] = std::max(side[static_cast<size_t>(y)], grp_ratio_[r][static_cast<size_t>(g * ni + y)]);
      }
      if (r == 0) ay2 = static_cast<double>(mn);
    }
    if (dangling) continue;
    if (pb_.model == 0) {
      const double ay1 = pb_.y1_mode == 0 ? 1.0 : pb_.y1_mode == 1 ? static_cast<double>(n)
                                                  : static_cast<double>(u.yoff[i + 1] - u.yoff[i]);
      m = std::min(m, ay1 * ay2);
    } else {
      for (int32_t y = 0; y < ni; ++y) {
        const double l = pb_.item_side[y] == 0
                             ? static_cast<double>(u.items[i * static_cast<size_t>(ni) + static_cast<size_t>(y)]) / static_cast<double>(n)
                             : side[static_cast<size_t>(y)];
        my[static_cast<size_t>(y)] = std::max(my[static_cast<size_t>(y)], l);
      }
    }
  }
  return m;
}

double Engine::info_gain(const Units& u) const {
  const int32_t C = u.n_child, nk = pb_.n_cls;
  int64_t N = 0;
  for (int64_t n : u.n) N += n;
  if (pb_.metric == 1) return static_cast<double>(N);  // Eq. 3: one unit per record generalized
  if (pb_.metric == 2) {  // discernibility: reduction of sum |G|^2 over X1 groups
    std::unordered_map<int64_t, double> before, after;
    for (size_t i = 0; i < u.n.size(); ++i) {
      const int64_t x1 = parts_[static_cast<size_t>(u.pid[i])].x1;
      before[x1] += static_cast<double>(u.n[i]);
      after[x1 * C + static_cast<int64_t>(i % static_cast<size_t>(C))] += static_cast<double>(u.n[i]);
    }
    double g = 0;
    for (const auto& kv : before) g += kv.second * kv.second;
    for (const auto& kv : after) g -= kv.second * kv.second;
    return g;
  }
  std::vector<int64_t> tot(static_cast<size_t>(nk), 0), per(static_cast<size_t>(C) * static_cast<size_t>(nk), 0), nc(static_cast<size_t>(C), 0);
  for (size_t i = 0; i < u.n.size(); ++i) {
    const size_t c = i % static_cast<size_t>(C);
    nc[c] += u.n[i];
    for (int32_t k = 0; k < nk; ++k) {
      tot[static_cast<size_t>(k)] += u.cls[i * static_cast<size_t>(nk) + static_cast<size_t>(k)];
      per[c * static_cast<size_t>(nk) + static_cast<size_t>(k)] += u.cls[i * static_cast<size_t>(nk) + static_cast<size_t>(k)];
    }
  }
  double g = entropy(tot.data(), nk, N);
  for (int32_t c = 0; c < C; ++c)
    if (nc[static_cast<size_t>(c)] > 0)
      g -= static_cast<double>(nc[static_cast<size_t>(c)]) / static_cast<double>(N) *
           entropy(per.data() + static_cast<size_t>(c) * static_cast<size_t>(nk), nk, nc[static_cast<size_t>(c)]);
  return std::max(g, 0.0);
}

// On-the-fly split of a continuous interval [lo, hi) (ranks): the boundary between distinct present values
// of maximum entropy InfoGain when a class exists, else the most balanced one (spec B.6 item 4). Ties go to
// the smallest boundary. Returns -1 when fewer than two distinct values are present.
int32_t Engine::choose_split(Cand& c) {
  const int32_t lo = out_.iv_lo[static_cast<size_t>(c.attr)][static_cast<size_t>(c.node)];
  const int32_t hi = out_.iv_hi[static_cast<size_t>(c.attr)][static_cast<size_t>(c.node)];
  const int32_t nk = pb_.n_cls;
  const size_t w = static_cast<size_t>(hi - lo);
  std::vector<int64_t> cnt(w, 0), cl(w * static_cast<size_t>(std::max(nk, 1)), 0);
  int64_t N = 0;
  for (int64_t pid : c.links) {  // merge the partitions' value histograms (statistics, no record access)
    const Hist& h = hists_[static_cast<size_t>(pid)][static_cast<size_t>(c.attr)];
    for (size_t g = 0; g < h.key.size(); ++g) {
      const size_t b = static_cast<size_t>(h.key[g] - lo);
      cnt[b] += h.n[g];
      for (int32_t k = 0; k < nk; ++k)
        cl[b * static_cast<size_t>(nk) + static_cast<size_t>(k)] += h.cls[g * static_cast<size_t>(nk) + static_cast<size_t>(k)];
      N += h.n[g];
    }
  }
  std::vector<int64_t> left(static_cast<size_t>(std::max(nk, 1)), 0), right(left.size(), 0), tot(left.size(), 0);
  for (size_t b = 0; b < w; ++b)
    for (int32_t k = 0; k < nk; ++k) tot[static_cast<size_t>(k)] += cl[b * static_cast<size_t>(nk) + static_cast<size_t>(k)];
  int32_t best = -1;
  double best_v = -kInf;
  int64_t nl = 0;
  bool seen_first = false;
  for (size_t b = 0; b < w; ++b) {
    if (cnt[b] == 0) continue;
    if (seen_first) {  // boundary at rank lo + b: left = [lo, lo + b)
      double v;
      if (nk) {
        for (int32_t k = 0; k < nk; ++k) right[static_cast<size_t>(k)] = tot[static_cast<size_t>(k)] - left[static_cast<size_t>(k)];
        v = -(static_cast<double>(nl) * entropy(left.data(), nk, nl) +
              static_cast<double>(N - nl) * entropy(right.data(), nk, N - nl));
      } else {
        v = -static_cast<double>(std::llabs(2 * nl - N));
      }
      if (v > best_v + kEps) {
        best_v = v;
        best = lo + static_cast<int32_t>(b);
      }
    }
    seen_first = true;
    nl += cnt[b];
    for (int32_t k = 0; k < nk; ++k) left[static_cast<size_t>(k)] += cl[b * static_cast<size_t>(nk) + static_cast<size_t>(k)];
  }
  return best;
}

bool Engine::valid_of(double m, const std::vector<double>& my) const {
  if (pb_.model == 0) return m >= static_cast<double>(pb_.k_anon);
  for (int32_t y = 0; y < n_items_; ++y)
    if (my[static_cast<size_t>(y)] > pb_.item_k[y] + kEps) return false;
  return true;
}

double Engine::loss_of(const Cand& c) const {
  if (pb_.model == 0) return a_cur_ - std::min(a_cur_, c.m);
  double cur = 0, after = 0;
  for (int32_t y = 0; y < n_items_; ++y) {
    const double s = pb_.privloss == 1 ? 1.0 / pb_.item_k[y] : 1.0;
    cur = std::max(cur, l_cur_[static_cast<size_t>(y)] * s);
    after = std::max(after, std::max(l_cur_[static_cast<size_t>(y)], c.my[static_cast<size_t>(y)]) * s);
  }
  return after - cur;
}

void Engine::evaluate(Cand& c) {
  auto& L = c.links;
  L.erase(std::remove_if(L.begin(), L.end(), [&](int64_t pid) { return !parts_[static_cast<size_t>(pid)].alive; }), L.end());
  c.dirty = false;
  if (L.empty()) {
    c.state = 2;
    return;
  }
  if (pb_.attr_tax[static_cast<size_t>(c.attr)] < 0) {
    c.split = choose_split(c);
    if (c.split < 0) {
      c.state = 2;
      return;
    }
  }
  Units u;
  fill_units(L, c.attr, c.node, c.split, u);
  c.gain = info_gain(u);
  std::vector<double> my(static_cast<size_t>(n_items_), 0.0);
  const double m = case1_ ? privacy_case1(u, my) : privacy(u, my);
  c.m = pb_.model == 0 ? m : (my.empty() ? 0.0 : *std::max_element(my.begin(), my.end()));
  c.my = std::move(my);
  c.valid = valid_of(m, c.my);
  if (!c.valid) c.state = 1;  // anti-monotone (Corollary 4.1): pruned for good
  ++out_.evaluations;
}

}  // namespace anoncore::release::detail
