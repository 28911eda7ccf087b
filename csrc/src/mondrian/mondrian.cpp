#include "anoncore/mondrian/mondrian.hpp"

#include "anoncore/criteria/criteria.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace anoncore::mondrian {

void KAnonymityModel::check(Matrix<int64_t>, Span<int64_t> sizes, MutSpan<uint8_t> ok) const {
  for (int64_t c = 0; c < sizes.size; ++c) ok[c] = sizes[c] >= k_ ? 1 : 0;
}

void TClosenessModel::check(Matrix<int64_t> hist, Span<int64_t> sizes, MutSpan<uint8_t> ok) const {
  std::vector<double> d(static_cast<size_t>(hist.rows));
  const Span<int64_t> ref{reference_.data(), static_cast<int64_t>(reference_.size())};
  const MutSpan<double> out{d.data(), hist.rows};
  if (h_ != nullptr)
    twophase::emd_hierarchical_classes(hist, sizes, ref, *h_, out, 1);
  else
    twophase::emd_ordered_classes(hist, sizes, ref, out, 1);
  for (int64_t c = 0; c < hist.rows; ++c) ok[c] = (sizes[c] > 0 && d[static_cast<size_t>(c)] <= t_ + 1e-12) ? 1 : 0;
}

void BetaLikenessModel::check(Matrix<int64_t> hist, Span<int64_t> sizes, MutSpan<uint8_t> ok) const {
  std::vector<double> v(static_cast<size_t>(hist.rows));
  criteria::beta_likeness(hist, sizes, Span<int64_t>{reference_.data(), static_cast<int64_t>(reference_.size())},
                          enhanced_, MutSpan<double>{v.data(), hist.rows}, 1);
  for (int64_t c = 0; c < hist.rows; ++c) ok[c] = (sizes[c] > 0 && v[static_cast<size_t>(c)] <= beta_) ? 1 : 0;
}

void DeltaDisclosureModel::check(Matrix<int64_t> hist, Span<int64_t> sizes, MutSpan<uint8_t> ok) const {
  std::vector<double> v(static_cast<size_t>(hist.rows));
  criteria::delta_disclosure(hist, sizes, Span<int64_t>{reference_.data(), static_cast<int64_t>(reference_.size())},
                             MutSpan<double>{v.data(), hist.rows}, 1);
  for (int64_t c = 0; c < hist.rows; ++c) ok[c] = (sizes[c] > 0 && v[static_cast<size_t>(c)] < delta_) ? 1 : 0;
}

GroupBetaLikenessModel::GroupBetaLikenessModel(std::vector<int64_t> reference, double beta, std::vector<int32_t> ranges)
    : prefix_(reference.size() + 1, 0), beta_(beta), ranges_(std::move(ranges)) {
  for (size_t v = 0; v < reference.size(); ++v) prefix_[v + 1] = prefix_[v] + reference[v];
  const double P = static_cast<double>(prefix_.back());
  for (size_t g = 0; g + 1 < ranges_.size(); g += 2) {
    const int64_t r = prefix_[static_cast<size_t>(ranges_[g + 1] + 1)] - prefix_[static_cast<size_t>(ranges_[g])];
    bound_.push_back(r > 0 ? std::min(beta_, -std::log(static_cast<double>(r) / P)) : 0.0);
  }
}

void GroupBetaLikenessModel::check(Matrix<int64_t> hist, Span<int64_t> sizes, MutSpan<uint8_t> ok) const {
  const int64_t P = prefix_.back();
  for (int64_t c = 0; c < hist.rows; ++c) {
    const int64_t Q = sizes[c];
    bool good = Q > 0;
    const int64_t* h = hist.row(c);
    for (size_t g = 0; good && g + 1 < ranges_.size(); g += 2) {
      int64_t x = 0;
      for (int32_t v = ranges_[g]; v <= ranges_[g + 1]; ++v) x += h[v];
      const int64_t r = prefix_[static_cast<size_t>(ranges_[g + 1] + 1)] - prefix_[static_cast<size_t>(ranges_[g])];
      if (r == 0) {
        good = x == 0;
        continue;
      }
      const int64_t num = x * P - r * Q;
      if (num <= 0) continue;
      good = static_cast<double>(num) / (static_cast<double>(r) * static_cast<double>(Q)) <= bound_[g / 2];
    }
    ok[c] = good ? 1 : 0;
  }
}

HierarchySplit make_hierarchy_split(Span<int32_t> parent, Span<int32_t> leaf_start, Span<int32_t> leaf_count) {
  HierarchySplit h;
  const int64_t n = parent.size;
  h.parent.assign(parent.data, parent.data + n);
  h.leaf_start.assign(leaf_start.data, leaf_start.data + n);
  h.leaf_count.assign(leaf_count.data, leaf_count.data + n);
  h.child_offset.assign(static_cast<size_t>(n + 1), 0);
  for (int64_t v = 0; v < n; ++v)
    if (parent[v] >= 0) ++h.child_offset[static_cast<size_t>(parent[v] + 1)];
  for (int64_t v = 0; v < n; ++v) h.child_offset[static_cast<size_t>(v + 1)] += h.child_offset[static_cast<size_t>(v)];
  h.child.assign(static_cast<size_t>(h.child_offset.back()), 0);
  std::vector<int64_t> fill(h.child_offset.begin(), h.child_offset.end() - 1);
  for (int64_t v = 0; v < n; ++v)
    if (parent[v] >= 0) h.child[static_cast<size_t>(fill[static_cast<size_t>(parent[v])]++)] = static_cast<int32_t>(v);
  for (int64_t v = 0; v < n; ++v)
    std::sort(h.child.begin() + h.child_offset[static_cast<size_t>(v)], h.child.begin() + h.child_offset[static_cast<size_t>(v + 1)],
              [&](int32_t a, int32_t b) { return h.leaf_start[static_cast<size_t>(a)] < h.leaf_start[static_cast<size_t>(b)]; });
  return h;
}

namespace {

/// One run of the top-down partitioning: rows idx[b, e) are popped from a stack and split on the widest
/// dimension that the models allow (hierarchy children or a median cut), or become one class.
class MondrianRun {
 public:
  MondrianRun(const MondrianInput& in, MondrianOutput& out)
      : in_(in), out_(out), d_(in.qi.cols), m_(in.m),
        idx_(static_cast<size_t>(in.qi.rows)), lo_(static_cast<size_t>(d_)), hi_(static_cast<size_t>(d_)),
        order_(static_cast<size_t>(d_)), width_(static_cast<size_t>(d_)), hist_(static_cast<size_t>(2 * m_)),
        sizes_(2), ok_(2), all_ok_(2) {
    std::iota(idx_.begin(), idx_.end(), int64_t{0});
  }

  void run() {
    const int64_t n = in_.qi.rows;
    out_.labels.assign(static_cast<size_t>(n), -1);
    stack_.emplace_back(0, n);
    int64_t visited = 0;
    while (!stack_.empty()) {
      if ((++visited & 0xFFF) == 0 && interrupted(in_.interrupt)) {
        out_.status = Status::Interrupted;
        return;
      }
      const auto [b, e] = stack_.back();
      stack_.pop_back();
      order_dimensions(b, e);
      bool split = false;
      for (int64_t j : order_) {
        if (lo_[static_cast<size_t>(j)] == hi_[static_cast<size_t>(j)]) break;
        if (!in_.hierarchy_split.empty() && in_.hierarchy_split[static_cast<size_t>(j)].enabled())
          split = hierarchy_split(b, e, j);
        else
          split = median_split(b, e, j);
        if (split) break;
      }
      if (!split) {
        for (int64_t i = b; i < e; ++i) out_.labels[static_cast<size_t>(idx_[static_cast<size_t>(i)])] = out_.n_classes;
        ++out_.n_classes;
      }
    }
  }

 private:
  /// The box [lo, hi] of rows [b, e) and the dimensions by decreasing width (stable).
  void order_dimensions(int64_t b, int64_t e) {
    const int64_t d = d_;
    std::fill(lo_.begin(), lo_.end(), INT32_MAX);
    std::fill(hi_.begin(), hi_.end(), -1);
    for (int64_t i = b; i < e; ++i) {
      const int32_t* row = in_.qi.row(idx_[static_cast<size_t>(i)]);
      for (int64_t j = 0; j < d; ++j) {
        lo_[static_cast<size_t>(j)] = std::min(lo_[static_cast<size_t>(j)], row[j]);
        hi_[static_cast<size_t>(j)] = std::max(hi_[static_cast<size_t>(j)], row[j]);
      }
    }
    for (int64_t j = 0; j < d; ++j)
      width_[static_cast<size_t>(j)] = in_.coords.at(hi_[static_cast<size_t>(j)], j) - in_.coords.at(lo_[static_cast<size_t>(j)], j);
    std::iota(order_.begin(), order_.end(), int64_t{0});
    std::stable_sort(order_.begin(), order_.end(),
                     [&](int64_t x, int64_t y) { return width_[static_cast<size_t>(x)] > width_[static_cast<size_t>(y)]; });
  }

  /// Hierarchy-based split: the children of the LCA of the present codes (a contiguous leaf range).
  bool hierarchy_split(int64_t b, int64_t e, int64_t j) {
    const int64_t m = m_;
    const HierarchySplit& hs = in_.hierarchy_split[static_cast<size_t>(j)];
    const int32_t a = lo_[static_cast<size_t>(j)], z = hi_[static_cast<size_t>(j)];
    int32_t node = a;
    while (!(hs.leaf_start[static_cast<size_t>(node)] <= a &&
             hs.leaf_start[static_cast<size_t>(node)] + hs.leaf_count[static_cast<size_t>(node)] > z))
      node = hs.parent[static_cast<size_t>(node)];
    const int32_t* ch = hs.child.data() + hs.child_offset[static_cast<size_t>(node)];
    const auto nch = static_cast<int64_t>(hs.child_offset[static_cast<size_t>(node + 1)] - hs.child_offset[static_cast<size_t>(node)]);
    const auto child_of = [&](int32_t code) {
      int64_t l = 0, r = nch - 1;  // last child with leaf_start <= code
      while (l < r) {
        const int64_t mid2 = (l + r + 1) / 2;
        if (hs.leaf_start[static_cast<size_t>(ch[mid2])] <= code) l = mid2; else r = mid2 - 1;
      }
      return l;
    };
    gsize_.assign(static_cast<size_t>(nch), 0);
    ghist_.assign(static_cast<size_t>(nch * m), 0);
    rgroup_.resize(static_cast<size_t>(e - b));
    for (int64_t i = b; i < e; ++i) {
      const int64_t r = idx_[static_cast<size_t>(i)];
      const int64_t g = child_of(in_.qi(r, j));
      rgroup_[static_cast<size_t>(i - b)] = g;
      ++gsize_[static_cast<size_t>(g)];
      ++ghist_[static_cast<size_t>(g * m + in_.sa[r])];
    }
    // Compact the non-empty children (the models refuse empty classes).
    std::vector<int64_t> slot(static_cast<size_t>(nch), -1);
    int64_t C = 0;
    for (int64_t g = 0; g < nch; ++g) {
      if (gsize_[static_cast<size_t>(g)] == 0) continue;
      slot[static_cast<size_t>(g)] = C;
      if (C != g) {
        std::copy(ghist_.begin() + g * m, ghist_.begin() + (g + 1) * m, ghist_.begin() + C * m);
        gsize_[static_cast<size_t>(C)] = gsize_[static_cast<size_t>(g)];
      }
      ++C;
    }
    if (C < 2) return false;
    std::vector<uint8_t> one(static_cast<size_t>(C));
    bool good = true;
    for (const ClassModel* model : in_.models) {
      model->check(Matrix<int64_t>{ghist_.data(), C, m}, Span<int64_t>{gsize_.data(), C}, MutSpan<uint8_t>{one.data(), C});
      for (int64_t c = 0; c < C; ++c) good = good && one[static_cast<size_t>(c)];
      if (!good) break;
    }
    if (!good) {
      ++out_.n_refused;
      return false;
    }
    // Counting sort of [b, e) by child (stable), then push the parts so the first child is popped first.
    std::vector<int64_t> start(static_cast<size_t>(C + 1), 0);
    for (int64_t c = 0; c < C; ++c) start[static_cast<size_t>(c + 1)] = start[static_cast<size_t>(c)] + gsize_[static_cast<size_t>(c)];
    tmp_.resize(static_cast<size_t>(e - b));
    std::vector<int64_t> pos(start.begin(), start.end() - 1);
    for (int64_t i = b; i < e; ++i) {
      const int64_t c = slot[static_cast<size_t>(rgroup_[static_cast<size_t>(i - b)])];
      tmp_[static_cast<size_t>(pos[static_cast<size_t>(c)]++)] = idx_[static_cast<size_t>(i)];
    }
    std::copy(tmp_.begin(), tmp_.end(), idx_.begin() + b);
    out_.n_splits += C - 1;
    for (int64_t c = C - 1; c >= 0; --c)
      stack_.emplace_back(b + start[static_cast<size_t>(c)], b + start[static_cast<size_t>(c + 1)]);
    return true;
  }

  /// Median split on dimension j (left: codes <= the median, or < it when every code is <= the median).
  bool median_split(int64_t b, int64_t e, int64_t j) {
    const int64_t m = m_;
    vals_.clear();
    for (int64_t i = b; i < e; ++i) vals_.push_back(in_.qi(idx_[static_cast<size_t>(i)], j));
    const auto mid = static_cast<std::ptrdiff_t>((vals_.size() - 1) / 2);
    std::nth_element(vals_.begin(), vals_.begin() + mid, vals_.end());
    int32_t cut = vals_[static_cast<size_t>(mid)];  // left: codes <= cut
    if (cut >= hi_[static_cast<size_t>(j)]) {
      // Everything is <= the median: put the median's ties on the right instead (left: codes < median).
      int32_t below = INT32_MIN;
      for (int32_t v : vals_)
        if (v < cut) below = std::max(below, v);
      cut = below;
    }
    std::fill(hist_.begin(), hist_.end(), 0);
    sizes_[0] = sizes_[1] = 0;
    for (int64_t i = b; i < e; ++i) {
      const int64_t r = idx_[static_cast<size_t>(i)];
      const int side = in_.qi(r, j) <= cut ? 0 : 1;
      ++sizes_[static_cast<size_t>(side)];
      ++hist_[static_cast<size_t>(side * m + in_.sa[r])];
    }
    if (sizes_[0] == 0 || sizes_[1] == 0) return false;
    std::fill(all_ok_.begin(), all_ok_.end(), 1);
    for (const ClassModel* model : in_.models) {
      model->check(Matrix<int64_t>{hist_.data(), 2, m}, Span<int64_t>{sizes_.data(), 2}, MutSpan<uint8_t>{ok_.data(), 2});
      all_ok_[0] = all_ok_[0] && ok_[0];
      all_ok_[1] = all_ok_[1] && ok_[1];
      if (!(all_ok_[0] && all_ok_[1])) break;
    }
    if (!(all_ok_[0] && all_ok_[1])) {
      ++out_.n_refused;
      return false;
    }
    const auto pivot = std::stable_partition(idx_.begin() + b, idx_.begin() + e,
                                             [&](int64_t r) { return in_.qi(r, j) <= cut; });
    const auto m_split = static_cast<int64_t>(pivot - idx_.begin());
    ++out_.n_splits;
    stack_.emplace_back(m_split, e);
    stack_.emplace_back(b, m_split);
    return true;
  }

  const MondrianInput& in_;
  MondrianOutput& out_;
  int64_t d_, m_;
  std::vector<int64_t> idx_;
  std::vector<std::pair<int64_t, int64_t>> stack_;
  std::vector<int32_t> lo_, hi_, vals_;
  std::vector<int64_t> order_;
  std::vector<double> width_;
  std::vector<int64_t> hist_, sizes_;
  std::vector<uint8_t> ok_, all_ok_;
  std::vector<int64_t> gsize_, ghist_, rgroup_, tmp_;  // hierarchy-based splits
};

}  // namespace

MondrianOutput mondrian(const MondrianInput& in) {
  MondrianOutput out;
  MondrianRun(in, out).run();
  return out;
}

}  // namespace anoncore::mondrian
