#pragma once
// A sparse Cholesky factorisation H = L L^T of a symmetric positive definite
// matrix made of 6x6 blocks, one block row and column per body, as SAP's
// Hessian M + sum J^T G J is: a diagonal block per body and one block per
// pair of bodies in contact. Eigen's SimplicialLDLT, the reference it is
// tested against, walks the same pattern one scalar at a time.
//
// Supernodal: consecutive columns of L whose patterns below the diagonal
// are the same (after the first's own rows) form a supernode, stored as one
// dense panel, so that each column's update from a finished supernode is a
// dense product and the many bodies a pile's separators hold are factored
// as one dense block.
//
//   analyze    the pattern: the bodies ordered by approximate minimum degree
//              (Eigen's AMD on the block graph), then in a postorder of the
//              elimination tree (same fill, supernodes contiguous); the
//              columns of L with their fill; the supernodes; which
//              supernode updates which;
//   factorize  the numbers, supernode by supernode (left-looking): H's
//              blocks, less each earlier supernode's product L_d L_d^T over
//              the rows they share, then the panel's own block columns in
//              turn (L_jj = chol of its block, L_ij = block L_jj^-T). Every
//              product is one kernel, 6x6 less a row of blocks times
//              another's transpose, in AVX2 where the CPU has it. A
//              panel's block rows are shared among TBB's threads where a
//              step of it has the work (the separators at the top of the
//              elimination tree, four fifths of a 1,000-box pile's
//              factorisation); every block is computed as on one thread,
//              so the bits do not depend on the thread count;
//   solve      L y = b, then L^T x = y.
#include <Eigen/Core>
#include <cstddef>
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

  // The factor's shape: 6x6 blocks of L below the diagonal (fill included),
  // and how many supernodes hold them.
  std::size_t factor_blocks() const { return factor_blocks_; }
  int supernodes() const { return int(nodes_.size()); }
  // Steps of the last factorize() that shared a panel's block rows among
  // threads (decided by their work, whatever the thread count).
  int shared_steps() const { return shared_steps_; }

 private:
  struct Supernode {
    int first = 0, width = 0;  // its columns, permuted indices [first, first + width)
    int rows = 0;              // rows below its columns, at rows_[row_begin, row_begin + rows)
    int row_begin = 0;
    std::size_t offset = 0;    // its panel in values_: width + rows block rows, one after another
    // Doubles in one block row of the panel: its width's 6x6 blocks, each
    // column-major, so a row's columns follow one another six entries apart.
    std::size_t row_size() const { return std::size_t(36) * std::size_t(width); }
  };
  struct Assembly {  // one of H's blocks into a panel
    int source;      // index into factorize()'s blocks
    int row, col;    // block position in the panel
    bool transpose;  // H's block is stored as (column, row): add its transpose
  };
  struct Update {  // supernode `from`'s rows [start, start + count) are columns of this one
    int from, start, count;
  };

  // subtract_products or its AVX2 twin (block_cholesky.cpp), whichever
  // this CPU and CpuExecutor::set_simd allow.
  using SubtractProductsFn = void (*)(double* s, const double* a, const double* b, int depth);
  static SubtractProductsFn subtract_products_kernel();
  // Panel t less u's product, on the panel's block rows [lo, hi).
  void update(const Supernode& t, const Update& u, SubtractProductsFn kernel, int lo, int hi);
  // Work (6x6 products) above which a step of a panel shares its block
  // rows among threads: about 10 us on one core.
  static constexpr double kShareWork = 1e3;
  // Block row i of supernode t's panel (its diagonal rows first, then the rows below).
  double* row(const Supernode& t, int i) { return values_.data() + t.offset + std::size_t(i) * t.row_size(); }
  const double* row(const Supernode& t, int i) const {
    return values_.data() + t.offset + std::size_t(i) * t.row_size();
  }

  int n_ = 0;
  std::vector<int> perm_;                           // permuted index of body i
  std::vector<int> body_;                           // body at permuted index k
  std::vector<Supernode> nodes_;
  std::vector<int> rows_;                           // each supernode's rows below it, ascending
  std::vector<std::vector<Assembly>> assembly_;     // per supernode
  std::vector<std::vector<Update>> updates_;        // per supernode, earlier supernodes first
  std::vector<double> values_;                      // the panels
  std::vector<Mat66> diag_inv_;                     // L_kk^-1 of each permuted column k
  std::vector<int> position_;                       // scratch: a row's block position in the panel being built
  std::vector<double> update_work_;                 // per supernode: 6x6 products of its updates
  std::size_t factor_blocks_ = 0;
  int shared_steps_ = 0;
};

}  // namespace eddy
