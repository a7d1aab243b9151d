// Supernodal block Cholesky for SAP's Hessian (block_cholesky.h).
#include "eddy/core/rigid/block_cholesky.h"

#include <Eigen/Cholesky>
#include <Eigen/OrderingMethods>
#include <Eigen/Sparse>
#include <algorithm>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include "eddy/core/cpu_executor.h"

#if EDDY_CPU_DISPATCH
#include <immintrin.h>
#endif

namespace eddy {

namespace {

using Block = Eigen::Map<BlockCholesky::Mat66>;
using ConstBlock = Eigen::Map<const BlockCholesky::Mat66>;
using Vec6 = Eigen::Matrix<double, 6, 1>;

// The one product the factorisation is made of: the 6x6 block s less
// sum over q < depth of a_q b_q^T, where a_q and b_q are column q of two
// block rows stored as panels store them (six entries a column, columns one
// after another). The sum is formed first, each entry in q order, then
// taken from s (column-major, as every block is). The reference for the
// AVX2 kernel below, and the kernel where a CPU lacks it.
void subtract_products(double* s, const double* a, const double* b, int depth) {
  double acc[36] = {};
  for (int q = 0; q < depth; ++q, a += 6, b += 6)
    for (int c = 0; c < 6; ++c)
      for (int r = 0; r < 6; ++r) acc[6 * c + r] += a[r] * b[c];
  for (int k = 0; k < 36; ++k) s[k] -= acc[k];
}

#if EDDY_CPU_DISPATCH
// The same in AVX2 with fused multiply-adds: rows 0-3 of each of the
// block's six columns in a register, rows 4-5 of two columns in another
// (nine accumulators, so nothing spills). Fused products round once where
// subtract_products rounds twice: the two agree to round-off (tested), not
// to the bit.
__attribute__((target("avx2,fma"))) void subtract_products_avx2(double* s, const double* a, const double* b,
                                                                 int depth) {
  __m256d l0 = _mm256_setzero_pd(), l1 = l0, l2 = l0, l3 = l0, l4 = l0, l5 = l0, h01 = l0, h23 = l0, h45 = l0;
  for (int q = 0; q < depth; ++q, a += 6, b += 6) {
    const __m256d a_lo = _mm256_loadu_pd(a);                                          // a0 a1 a2 a3
    const __m256d a_hi = _mm256_broadcast_pd(reinterpret_cast<const __m128d*>(a + 4));  // a4 a5 a4 a5
    l0 = _mm256_fmadd_pd(a_lo, _mm256_broadcast_sd(b + 0), l0);
    l1 = _mm256_fmadd_pd(a_lo, _mm256_broadcast_sd(b + 1), l1);
    l2 = _mm256_fmadd_pd(a_lo, _mm256_broadcast_sd(b + 2), l2);
    l3 = _mm256_fmadd_pd(a_lo, _mm256_broadcast_sd(b + 3), l3);
    l4 = _mm256_fmadd_pd(a_lo, _mm256_broadcast_sd(b + 4), l4);
    l5 = _mm256_fmadd_pd(a_lo, _mm256_broadcast_sd(b + 5), l5);
    // b_2p b_2p b_2p+1 b_2p+1 against a4 a5 a4 a5: rows 4-5 of columns 2p and 2p + 1
    const __m256d b_all = _mm256_loadu_pd(b), b_45 = _mm256_castpd128_pd256(_mm_loadu_pd(b + 4));
    h01 = _mm256_fmadd_pd(a_hi, _mm256_permute4x64_pd(b_all, 0x50), h01);
    h23 = _mm256_fmadd_pd(a_hi, _mm256_permute4x64_pd(b_all, 0xfa), h23);
    h45 = _mm256_fmadd_pd(a_hi, _mm256_permute4x64_pd(b_45, 0x50), h45);
  }
  const __m256d lo[6] = {l0, l1, l2, l3, l4, l5}, hi[3] = {h01, h23, h45};
  for (int c = 0; c < 6; ++c) {
    double* col = s + 6 * c;
    _mm256_storeu_pd(col, _mm256_sub_pd(_mm256_loadu_pd(col), lo[c]));
    const __m128d h = c % 2 == 0 ? _mm256_castpd256_pd128(hi[c / 2]) : _mm256_extractf128_pd(hi[c / 2], 1);
    _mm_storeu_pd(col + 4, _mm_sub_pd(_mm_loadu_pd(col + 4), h));
  }
}
#endif

// Walks the rows of L over H's lower pattern `h` (h[i]: the columns of H's
// blocks left of the diagonal in row i): row i holds column j < i when j is
// reached from one of them by climbing the elimination tree up to i (Liu's
// row-subtree characterisation). Fills `parent` (the elimination tree, -1 at
// a root) and calls visit(i, j) for each block of L below the diagonal, by
// row i ascending.
template <class Visit>
void row_subtrees(const std::vector<std::vector<int>>& h, std::vector<int>& parent, Visit&& visit) {
  const std::size_t n = h.size();
  parent.assign(n, -1);
  std::vector<int> mark(n, -1);
  for (int i = 0; i < int(n); ++i) {
    mark[std::size_t(i)] = i;
    for (int c : h[std::size_t(i)])
      for (int j = c; mark[std::size_t(j)] != i; j = parent[std::size_t(j)]) {
        if (parent[std::size_t(j)] < 0) parent[std::size_t(j)] = i;
        mark[std::size_t(j)] = i;
        visit(i, j);
      }
  }
}

}  // namespace

BlockCholesky::SubtractProductsFn BlockCholesky::subtract_products_kernel() {
#if EDDY_CPU_DISPATCH
  static const bool fma = __builtin_cpu_supports("fma");
  if (CpuExecutor::uses_avx2() && fma) return subtract_products_avx2;
#endif
  return subtract_products;
}

void BlockCholesky::analyze(int n, const std::vector<std::pair<int, int>>& lower) {
  n_ = n;
  const std::size_t un = std::size_t(n);
  // Order the bodies by approximate minimum degree on the block graph.
  Eigen::SparseMatrix<double> pattern(n, n);
  std::vector<Eigen::Triplet<double>> t;
  t.reserve(lower.size() + un);
  for (int i = 0; i < n; ++i) t.emplace_back(i, i, 1.0);
  for (const auto& [r, c] : lower) t.emplace_back(r, c, 1.0);
  pattern.setFromTriplets(t.begin(), t.end());
  Eigen::PermutationMatrix<Eigen::Dynamic, Eigen::Dynamic, int> p;
  Eigen::AMDOrdering<int>()(pattern.selfadjointView<Eigen::Lower>(), p);
  // Eigen's AMD gives the elimination order: p.indices()[k] is the k-th body eliminated.
  body_.assign(p.indices().data(), p.indices().data() + n);
  perm_.assign(un, 0);
  auto permute = [&]() {
    for (int k = 0; k < n; ++k) perm_[std::size_t(body_[std::size_t(k)])] = k;
    // H's lower pattern in permuted indices, by row.
    std::vector<std::vector<int>> h(un);
    for (const auto& [r, c] : lower) {
      const int a = perm_[std::size_t(r)], b = perm_[std::size_t(c)];
      h[std::size_t(std::max(a, b))].push_back(std::min(a, b));
    }
    return h;
  };

  // Renumber in a postorder of the elimination tree: the same fill, and each
  // chain of columns a supernode can hold becomes consecutive.
  std::vector<int> parent;
  row_subtrees(permute(), parent, [](int, int) {});
  std::vector<std::vector<int>> children(un);
  std::vector<int> roots;
  for (int j = 0; j < n; ++j) (parent[std::size_t(j)] < 0 ? roots : children[std::size_t(parent[std::size_t(j)])]).push_back(j);
  std::vector<int> post;
  post.reserve(un);
  std::vector<std::pair<int, std::size_t>> stack;  // (column, next child)
  for (int root : roots) {
    stack.emplace_back(root, 0);
    while (!stack.empty()) {
      auto& [j, next] = stack.back();
      if (next < children[std::size_t(j)].size()) {
        const int c = children[std::size_t(j)][next++];
        stack.emplace_back(c, 0);
      } else {
        post.push_back(j);
        stack.pop_back();
      }
    }
  }
  std::vector<int> order(un);
  for (std::size_t k = 0; k < un; ++k) order[k] = body_[std::size_t(post[k])];
  body_ = std::move(order);

  // The columns of L below the diagonal, rows ascending.
  std::vector<std::vector<int>> cols(un);
  row_subtrees(permute(), parent, [&](int i, int j) { cols[std::size_t(j)].push_back(i); });

  // Supernodes: column j joins j + 1 when j + 1 is its parent and its
  // pattern is j + 1's and j + 1 (a column's pattern less its parent always
  // lies in the parent's, so equal counts mean equal sets).
  nodes_.clear();
  rows_.clear();
  std::vector<int> node_of(un);
  std::size_t values = 0;
  factor_blocks_ = 0;
  for (int j = 0; j < n;) {
    Supernode s;
    s.first = j;
    while (j + 1 < n && parent[std::size_t(j)] == j + 1 &&
           cols[std::size_t(j)].size() == cols[std::size_t(j) + 1].size() + 1)
      ++j;
    ++j;
    s.width = j - s.first;
    const std::vector<int>& below = cols[std::size_t(j - 1)];
    s.rows = int(below.size());
    s.row_begin = int(rows_.size());
    rows_.insert(rows_.end(), below.begin(), below.end());
    s.offset = values;
    values += std::size_t(36) * std::size_t(s.width) * std::size_t(s.width + s.rows);
    for (int c = s.first; c < j; ++c) node_of[std::size_t(c)] = int(nodes_.size());
    factor_blocks_ += std::size_t(s.width) * std::size_t(s.width - 1) / 2 + std::size_t(s.width) * std::size_t(s.rows);
    nodes_.push_back(s);
  }
  values_.assign(values, 0.0);
  diag_inv_.assign(un, Mat66::Zero());
  position_.assign(un, 0);

  // Which supernode updates which: a supernode's rows fall into later
  // supernodes in runs (rows ascending, supernodes contiguous). With each
  // panel's update work: 6x6 products (kernel calls times their depth in
  // blocks).
  updates_.assign(nodes_.size(), {});
  update_work_.assign(nodes_.size(), 0.0);
  for (int d = 0; d < int(nodes_.size()); ++d) {
    const Supernode& s = nodes_[std::size_t(d)];
    const int* R = rows_.data() + s.row_begin;
    for (int q = 0; q < s.rows;) {
      const int target = node_of[std::size_t(R[q])], start = q;
      while (q < s.rows && node_of[std::size_t(R[q])] == target) ++q;
      const int count = q - start;
      updates_[std::size_t(target)].push_back({d, start, count});
      update_work_[std::size_t(target)] +=
          double(count) * (double(s.rows - start) - 0.5 * double(count - 1)) * double(s.width);
    }
  }

  // Where each of H's blocks goes: its column's supernode, at the row's
  // place in that panel.
  assembly_.assign(nodes_.size(), {});
  auto place = [&](int row, int col, int source, bool transpose) {
    const int target = node_of[std::size_t(col)];
    const Supernode& s = nodes_[std::size_t(target)];
    int at = row - s.first;
    if (row >= s.first + s.width) {
      const int* R = rows_.data() + s.row_begin;
      at = s.width + int(std::lower_bound(R, R + s.rows, row) - R);
    }
    assembly_[std::size_t(target)].push_back({source, at, col - s.first, transpose});
  };
  for (int b = 0; b < n; ++b) place(perm_[std::size_t(b)], perm_[std::size_t(b)], b, false);
  for (std::size_t e = 0; e < lower.size(); ++e) {
    const int a = perm_[std::size_t(lower[e].first)], b = perm_[std::size_t(lower[e].second)];
    // H's block (first, second) sits at (a, b); in L's lower triangle it is
    // (max, min), transposed when a < b.
    place(std::max(a, b), std::min(a, b), n + int(e), a < b);
  }
}

// Panel t less supernode u.from's product L_d L_d^T over the rows they share:
// the rows of d from u.start down, against its rows [u.start, u.start +
// u.count), which are columns of t; only t's block rows [lo, hi).
// position_ holds t's row positions.
void BlockCholesky::update(const Supernode& t, const Update& u, SubtractProductsFn kernel, int lo, int hi) {
  const Supernode& d = nodes_[std::size_t(u.from)];
  const int m = d.rows - u.start;
  const int* R = rows_.data() + d.row_begin + u.start;
  const double* below = row(d, d.width + u.start);  // d's row u.start
  const std::size_t sd = d.row_size(), st = t.row_size();
  double* pt = values_.data() + t.offset;
  // R ascends, so the panel row a row of d lands on does too.
  auto at = [&](int i) { return R[i] < t.first + t.width ? R[i] - t.first : position_[std::size_t(R[i])]; };
  int first = 0;  // the first of d's rows on panel row lo or below
  while (first < m && at(first) < lo) ++first;
  for (int k = 0; k < u.count; ++k) {
    double* column = pt + std::size_t(36 * (R[k] - t.first));
    for (int i = std::max(k, first); i < m; ++i) {
      const int a = at(i);
      if (a >= hi) break;
      kernel(column + std::size_t(a) * st, below + std::size_t(i) * sd, below + std::size_t(k) * sd, 6 * d.width);
    }
  }
}

bool BlockCholesky::factorize(const std::vector<Mat66>& blocks) {
  const SubtractProductsFn kernel = subtract_products_kernel();
  std::fill(values_.begin(), values_.end(), 0.0);
  shared_steps_ = 0;
  for (std::size_t ti = 0; ti < nodes_.size(); ++ti) {
    const Supernode& t = nodes_[ti];
    for (const Assembly& a : assembly_[ti]) {
      Block at(row(t, a.row) + 36 * a.col);
      if (a.transpose)
        at += blocks[std::size_t(a.source)].transpose();
      else
        at += blocks[std::size_t(a.source)];
    }
    const int* R = rows_.data() + t.row_begin;
    for (int q = 0; q < t.rows; ++q) position_[std::size_t(R[q])] = t.width + q;
    // A step of a panel with work enough (the updates, or a column of a
    // wide panel: the separators at the top of the tree, most of a pile's
    // factorisation) shares the panel's block rows [begin, end) among TBB's
    // threads; each block is computed as on one thread, the same bits.
    const int panel_rows = t.width + t.rows;
    auto rows_of = [&](int begin, double work, const auto& f) {
      if (work < kShareWork || panel_rows - begin < 8) {
        f(begin, panel_rows);
        return;
      }
      ++shared_steps_;
      const int grain = std::max(4, (panel_rows - begin) / 16);
      tbb::parallel_for(tbb::blocked_range<int>(begin, panel_rows, grain),
                        [&](const tbb::blocked_range<int>& r) { f(r.begin(), r.end()); }, tbb::simple_partitioner());
    };
    rows_of(0, update_work_[ti], [&](int lo, int hi) {
      for (const Update& u : updates_[ti]) update(t, u, kernel, lo, hi);
    });
    // The panel's own columns, block column by block column (left-looking):
    // each block less its row's products with row j over the columns
    // before, then L_jj = chol(block jj) and L_ij = block ij L_jj^-T.
    for (int j = 0; j < t.width; ++j) {
      const double* rj = row(t, j);
      Block diag(row(t, j) + 36 * j);
      kernel(diag.data(), rj, rj, 6 * j);
      const Eigen::LLT<Mat66> llt(diag);
      if (llt.info() != Eigen::Success) return false;
      diag = llt.matrixL();
      Mat66& inv = diag_inv_[std::size_t(t.first + j)];
      inv = diag.triangularView<Eigen::Lower>().solve(Mat66::Identity());
      const Mat66 inv_t = inv.transpose();
      rows_of(j + 1, double(panel_rows - j - 1) * double(j), [&](int lo, int hi) {
        for (int i = lo; i < hi; ++i) {
          Block b(row(t, i) + 36 * j);
          kernel(b.data(), row(t, i), rj, 6 * j);
          b = (b * inv_t).eval();
        }
      });
    }
  }
  return true;
}

Eigen::VectorXd BlockCholesky::solve(const Eigen::VectorXd& b) const {
  Eigen::VectorXd y(6 * n_);
  for (int k = 0; k < n_; ++k) y.segment<6>(6 * k) = b.segment<6>(6 * body_[std::size_t(k)]);
  // Both sweeps walk each panel by block rows, the way it is stored.
  for (const Supernode& t : nodes_) {  // L y = P b
    auto yc = [&](int c) { return y.segment<6>(6 * (t.first + c)); };
    for (int i = 0; i < t.width; ++i) {
      const double* ri = row(t, i);
      Vec6 r = yc(i);
      for (int c = 0; c < i; ++c) r.noalias() -= ConstBlock(ri + 36 * c) * yc(c);
      yc(i).noalias() = diag_inv_[std::size_t(t.first + i)] * r;
    }
    for (int q = 0; q < t.rows; ++q) {
      const double* ri = row(t, t.width + q);
      Vec6 r = Vec6::Zero();
      for (int c = 0; c < t.width; ++c) r.noalias() += ConstBlock(ri + 36 * c) * yc(c);
      y.segment<6>(6 * rows_[std::size_t(t.row_begin + q)]) -= r;
    }
  }
  for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it) {  // L^T x = y
    const Supernode& t = *it;
    auto yc = [&](int c) { return y.segment<6>(6 * (t.first + c)); };
    for (int q = 0; q < t.rows; ++q) {
      const double* ri = row(t, t.width + q);
      const Vec6 x = y.segment<6>(6 * rows_[std::size_t(t.row_begin + q)]);
      for (int c = 0; c < t.width; ++c) yc(c).noalias() -= ConstBlock(ri + 36 * c).transpose() * x;
    }
    for (int i = t.width - 1; i >= 0; --i) {
      const Vec6 x = diag_inv_[std::size_t(t.first + i)].transpose() * yc(i);
      yc(i) = x;
      const double* ri = row(t, i);
      for (int c = 0; c < i; ++c) yc(c).noalias() -= ConstBlock(ri + 36 * c).transpose() * x;
    }
  }
  Eigen::VectorXd x(6 * n_);
  for (int k = 0; k < n_; ++k) x.segment<6>(6 * body_[std::size_t(k)]) = y.segment<6>(6 * k);
  return x;
}

}  // namespace eddy
