// Block sparse Cholesky for SAP's Hessian (block_cholesky.h).
#include "eddy/core/rigid/block_cholesky.h"

#include <Eigen/OrderingMethods>
#include <Eigen/Sparse>
#include <algorithm>

namespace eddy {

void BlockCholesky::analyze(int n, const std::vector<std::pair<int, int>>& lower) {
  n_ = n;
  // Order the bodies by approximate minimum degree on the block graph.
  Eigen::SparseMatrix<double> pattern(n, n);
  std::vector<Eigen::Triplet<double>> t;
  t.reserve(lower.size() + std::size_t(n));
  for (int i = 0; i < n; ++i) t.emplace_back(i, i, 1.0);
  for (const auto& [r, c] : lower) t.emplace_back(r, c, 1.0);
  pattern.setFromTriplets(t.begin(), t.end());
  Eigen::PermutationMatrix<Eigen::Dynamic, Eigen::Dynamic, int> p;
  Eigen::AMDOrdering<int>()(pattern.selfadjointView<Eigen::Lower>(), p);
  // Eigen's AMD gives the elimination order: p.indices()[k] is the k-th body eliminated.
  body_.assign(p.indices().data(), p.indices().data() + n);
  perm_.assign(std::size_t(n), 0);
  for (int k = 0; k < n; ++k) perm_[std::size_t(body_[std::size_t(k)])] = k;

  // H's lower blocks in permuted indices, by row.
  std::vector<std::vector<Entry>> h(static_cast<std::size_t>(n));
  for (std::size_t e = 0; e < lower.size(); ++e) {
    const int a = perm_[std::size_t(lower[e].first)], b = perm_[std::size_t(lower[e].second)];
    // H's block (first, second) sits at (a, b); in L's lower triangle it is
    // (max, min), transposed when a < b.
    h[std::size_t(std::max(a, b))].push_back({std::min(a, b), n + int(e), a < b, Mat66::Zero()});
  }
  // Row patterns of L with their fill: row i holds column j < i when j is
  // reached from one of H's columns in row i by climbing the elimination
  // tree up to i (Liu's row-subtree characterisation).
  std::vector<int> parent(std::size_t(n), -1), mark(std::size_t(n), -1);
  rows_.assign(std::size_t(n), {});
  for (int i = 0; i < n; ++i) {
    mark[std::size_t(i)] = i;
    std::vector<Entry>& row = rows_[std::size_t(i)];
    for (const Entry& a : h[std::size_t(i)]) {
      for (int j = a.col; mark[std::size_t(j)] != i; j = parent[std::size_t(j)]) {
        if (parent[std::size_t(j)] < 0) parent[std::size_t(j)] = i;
        mark[std::size_t(j)] = i;
        row.push_back({j, -1, false, Mat66::Zero()});
      }
    }
    std::sort(row.begin(), row.end(), [](const Entry& x, const Entry& y) { return x.col < y.col; });
    // H's own blocks in this row.
    for (const Entry& a : h[std::size_t(i)]) {
      Entry& at = *std::lower_bound(row.begin(), row.end(), a.col,
                                    [](const Entry& x, int c) { return x.col < c; });
      at.source = a.source;
      at.transpose = a.transpose;
    }
  }
  diag_.assign(std::size_t(n), Eigen::LLT<Mat66>());
  diag_l_.assign(std::size_t(n), Mat66::Zero());
  diag_inv_.assign(std::size_t(n), Mat66::Zero());
}

bool BlockCholesky::factorize(const std::vector<Mat66>& blocks) {
  for (int i = 0; i < n_; ++i) {
    std::vector<Entry>& row = rows_[std::size_t(i)];
    Mat66 d = blocks[std::size_t(body_[std::size_t(i)])];
    for (std::size_t m = 0; m < row.size(); ++m) {
      Entry& e = row[m];
      const int j = e.col;
      // H_ij - sum over k < j of L_ik L_jk^T: row i's and row j's columns in common.
      Mat66 s = e.source < 0 ? Mat66::Zero()
                             : (e.transpose ? Mat66(blocks[std::size_t(e.source)].transpose())
                                            : blocks[std::size_t(e.source)]);
      const std::vector<Entry>& rj = rows_[std::size_t(j)];
      std::size_t a = 0, b = 0;
      while (a < m && b < rj.size()) {
        if (row[a].col < rj[b].col) ++a;
        else if (row[a].col > rj[b].col) ++b;
        else s.noalias() -= row[a++].value * rj[b++].value.transpose();
      }
      // L_ij = s L_jj^-T
      e.value.noalias() = s * diag_inv_[std::size_t(j)].transpose();
      d.noalias() -= e.value * e.value.transpose();
    }
    diag_[std::size_t(i)].compute(d);
    if (diag_[std::size_t(i)].info() != Eigen::Success) return false;
    diag_l_[std::size_t(i)] = diag_[std::size_t(i)].matrixL();
    // Its inverse, once: each block below it in column i is then one product.
    diag_inv_[std::size_t(i)] = diag_l_[std::size_t(i)].triangularView<Eigen::Lower>().solve(Mat66::Identity());
  }
  return true;
}

Eigen::VectorXd BlockCholesky::solve(const Eigen::VectorXd& b) const {
  using Vec6 = Eigen::Matrix<double, 6, 1>;
  std::vector<Vec6> y(static_cast<std::size_t>(n_));
  for (int i = 0; i < n_; ++i) {  // L y = P b
    Vec6 r = b.segment<6>(6 * body_[std::size_t(i)]);
    for (const Entry& e : rows_[std::size_t(i)]) r.noalias() -= e.value * y[std::size_t(e.col)];
    y[std::size_t(i)].noalias() = diag_inv_[std::size_t(i)] * r;
  }
  for (int i = n_ - 1; i >= 0; --i) {  // L^T x = y, scattering each x_i into the rows above
    y[std::size_t(i)] = (diag_inv_[std::size_t(i)].transpose() * y[std::size_t(i)]).eval();
    for (const Entry& e : rows_[std::size_t(i)]) y[std::size_t(e.col)].noalias() -= e.value.transpose() * y[std::size_t(i)];
  }
  Eigen::VectorXd x(6 * n_);
  for (int i = 0; i < n_; ++i) x.segment<6>(6 * body_[std::size_t(i)]) = y[std::size_t(i)];
  return x;
}

}  // namespace eddy
