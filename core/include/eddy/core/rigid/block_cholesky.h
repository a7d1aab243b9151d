#pragma once
// A sparse Cholesky factorisation H = L L^T of a symmetric positive definite
// matrix made of 6x6 blocks, one block row and column per body, as SAP's
// Hessian M + sum J^T G J is: a diagonal block per body and one block per
// pair of bodies in contact. Working on dense 6x6 blocks instead of scalars
// lets each update be one small fixed-size product (Eigen's SimplicialLDLT,
// the reference it is tested against, walks the same pattern one scalar at
// a time).
//
//   analyze    the pattern: the bodies ordered by approximate minimum degree
//              (Eigen's AMD on the block graph), the elimination tree and the
//              rows of L with their fill;
//   factorize  the numbers, row by row (up-looking): L_ij = (H_ij - sum_k
//              L_ik L_jk^T) L_jj^-T, L_ii = chol(H_ii - sum_k L_ik L_ik^T);
//   solve      L y = b, then L^T x = y.
#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <utility>
#include <vector>

namespace eddy {

class BlockCholesky {
 public:
  using Mat66 = Eigen::Matrix<double, 6, 6>;

  // n bodies; `lower` the off-diagonal blocks (row body > column body), in
  // the order factorize() will be given their values.
  void analyze(int n, const std::vector<std::pair<int, int>>& lower);
  // blocks: H's n diagonal blocks, body by body, then one block per `lower`
  // pair (the block at (row, column) of H). False when H is not positive
  // definite.
  bool factorize(const std::vector<Mat66>& blocks);
  // x = H^-1 b (6 n entries, body by body).
  Eigen::VectorXd solve(const Eigen::VectorXd& b) const;

 private:
  struct Entry {
    int col;       // permuted column block
    int source;    // index into factorize()'s blocks of H's block here, or -1 (fill)
    bool transpose;  // H's block is stored as (column, row): take its transpose
    Mat66 value;
  };
  int n_ = 0;
  std::vector<int> perm_;                // permuted index of body i
  std::vector<int> body_;                // body at permuted index k
  std::vector<std::vector<Entry>> rows_;  // row k of L below the diagonal, by column ascending
  std::vector<Eigen::LLT<Mat66>> diag_;   // L_kk as the Cholesky factor of its Schur complement
  std::vector<Mat66> diag_l_;             // L_kk itself
  std::vector<Mat66> diag_inv_;           // L_kk^-1
};

}  // namespace eddy
