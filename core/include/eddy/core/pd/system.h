#pragma once
// Projective Dynamics (Bouaziz et al. 2014; Liu et al. 2013 for springs):
// one implicit-Euler step minimises
//
//   F(x) = 1/(2 h^2) ||x - y||_M^2 + sum_c w_c/2 ||G_c x - P_c(G_c x)||^2,
//   y = x_t + h v_t + h^2 M^-1 f_ext,
//
// where each constraint c reads a few linear combinations of the node
// positions (its rows, G_c x: the columns of a deformation gradient, an
// edge, a Laplacian) and P_c projects them onto the constraint's set (the
// rotations, the rest length). The local step projects every constraint
// at the current x (in parallel, each writes its own rows); the global step
// solves the constant system
//
//   (M/h^2 + G^T W G) x = M/h^2 y + G^T W p
//
// for the three coordinates at once, by a sparse Cholesky factorisation made
// once (Cholesky) or by Jacobi sweeps with Chebyshev acceleration (Wang
// 2015; GPU-friendly, no factorisation). Each local-global iteration
// lowers F (or keeps it), and the fixed point is F's minimiser.
//
// An element's strain and volume (or area) constraints read the same rows,
// so they are one constraint here: weight w_s + w_v, target the weighted
// mean of the two projections (w_s P_s + w_v P_v) / (w_s + w_v), which
// gives the global step the same right-hand side and matrix at half the
// rows and one SVD. Its energy is still the sum of the two.
//
// Weights from the material (SoftMaterial, in Pa and N m; mu, lambda Lame's
// parameters from E and nu; V a tetrahedron's rest volume, A a triangle's
// rest area, t the cloth's thickness). Each matches linear elasticity at
// small strain (a test checks the energies):
//   tetrahedron strain   P = nearest rotation (stretches clamped to the
//                        strain limits)                    w_s = 2 mu V
//   tetrahedron volume   P = nearest F of determinant 1    w_v = 3 lambda V
//   triangle strain      P = nearest 3x2 of stretches 1    w_s = 2 mu t A
//   triangle area        P = nearest 3x2 of area ratio 1   w_v = 2 lambda' t A,
//                        lambda' = 2 mu lambda / (lambda + 2 mu) (plane stress)
//   bending (cloth)      the cotangent Laplacian at an interior node, P =
//                        its rest length along its current direction
//                                                          w = D / A_i
//                        (D the bending rigidity, A_i a third of the
//                        node's triangles' area: D/2 (2H)^2 A_i per node)
//   spring               an edge, P = its rest length      w = k (N/m)
//   pin                  a node, P = its target            w = pin_weight
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include <Eigen/Core>
#include <Eigen/SparseCore>

#include "eddy/core/enum_names.h"
#include "eddy/core/pd/iteration.h"
#include "eddy/core/pd/soft.h"

namespace eddy {

using PdMatrix = Eigen::Matrix<double, Eigen::Dynamic, 3, Eigen::RowMajor>;  // one row per node (or constraint row)

// The constraints' rows as a sparse matrix over the nodes and the
// projections onto their sets.
class PdConstraints {
 public:
  // Every element of `s` with its material's weights; pins with pin_weight.
  void build(const SoftBodies& s, double pin_weight);
  // Springs on edges (i, j) of stiffness k (N/m), rest length from `rest`.
  void add_spring(const std::vector<Vec3d>& rest, int32_t i, int32_t j, double k);
  void add_pin(int32_t i, const Vec3d& target, double w);

  std::size_t size() const { return c_.size(); }
  std::size_t rows() const { return std::size_t(row_start_.size()) - 1; }
  const std::vector<PdConstraint>& constraints() const { return c_; }
  std::vector<PdConstraint>& constraints() { return c_; }
  // G (rows x n) and each row's weight.
  Eigen::SparseMatrix<double, Eigen::RowMajor> matrix(std::size_t nodes) const;
  std::vector<double> row_weights() const;
  // The first node of row r (a pin's node).
  int32_t row_node(uint32_t r) const { return node_[row_start_[r]]; }
  // The local step for constraint k: its projections into p (its rows);
  // returns its energy at x.
  double project(std::size_t k, const PdMatrix& x, PdMatrix& p) const;
  // The constraints' arrays as the passes read them (iteration.h; the
  // system's part left empty): valid until the constraints change.
  PdView view() const;
  // sum_c w_c/2 ||G_c x - P_c(G_c x)||^2.
  double energy(const PdMatrix& x) const;

 private:
  // A new constraint whose rows follow: add_entry to the current row, end_row to close it.
  PdConstraint& begin(PdKind kind, double w);
  void add_entry(int32_t node, double coef);
  void end_row() { row_start_.push_back(uint32_t(node_.size())); }
  std::vector<PdConstraint> c_;
  std::vector<uint32_t> tris_, tets_, others_;  // the constraints of kind Tri, of kind Tet, and the rest
  std::vector<uint32_t> row_start_{0};  // CSR over rows
  std::vector<int32_t> node_;
  std::vector<double> coef_;
};

// The nearest matrix to F (3x3) with singular values in [lo, hi] and
// positive determinant (lo = hi = 1: the nearest rotation).
Eigen::Matrix3d project_strain(const Eigen::Matrix3d& F, double lo, double hi);
// The nearest 3x3 of determinant 1 (singular values s_i = (sigma_i +
// sqrt(sigma_i^2 + 4 l)) / 2 with l solved by Newton so that prod s_i = 1).
Eigen::Matrix3d project_volume(const Eigen::Matrix3d& F);
// The 3x2 analogues (a triangle's deformation gradient).
Eigen::Matrix<double, 3, 2> project_strain_2d(const Eigen::Matrix<double, 3, 2>& F, double lo, double hi);
Eigen::Matrix<double, 3, 2> project_area_2d(const Eigen::Matrix<double, 3, 2>& F);

enum class PdMethod : int32_t { Cholesky = 0, Chebyshev = 1 };
inline constexpr EnumName<PdMethod> kPdMethodNames[] = {{PdMethod::Cholesky, "cholesky"},
                                                         {PdMethod::Chebyshev, "chebyshev"}};

// A point that meets the colliders: one of the user's surface points,
// riding on up to four nodes by fixed weights (a cloth's point is its node,
// weight 1). A soft body touches with its own surface, not its lattice.
struct PdProxy {
  std::array<int32_t, 4> node{0, 0, 0, 0};
  std::array<double, 4> w{1, 0, 0, 0};
  int count = 1;  // nodes used
};

// A proxy held on one side of a plane for a step (a collider's surface,
// linearised where the point is headed): n . x >= offset.
struct PdContact {
  uint32_t proxy = 0;
  Vec3d normal = Vec3d::UnitY();
  double offset = 0;
  int32_t collider = -1;
};

// The local-global solver of one step over fixed constraints: the matrix
// (M/h^2 + G^T W G) factored once (Cholesky) or split into its diagonal
// (Chebyshev). Contacts are constraints too, each on a proxy point's row
// g . x (its weights over its nodes): a proxy near a collider gets a
// contact slot, w g g^T on the matrix, and in each step either touches (its
// projection: onto its side of the surface's plane) or not (its
// projection: the point where it is, as the free space holds it). So the
// matrix changes, and is factored again (numerically, its pattern analysed
// once with room for every proxy), only when the proxies with slots
// change, not with every contact made or broken.
class PdSystem {
 public:
  // masses: one per node (positive); proxies: the points that may touch.
  void build(const PdConstraints& c, const std::vector<double>& mass, std::vector<PdProxy> proxies, double h,
             PdMethod method);
  bool ready() const { return n_ > 0; }
  double h() const { return h_; }
  PdMethod method() const { return method_; }
  // Seconds the first factorisation took (with its analysis), and how many
  // numeric refactorisations contacts have caused since.
  double factor_seconds() const { return factor_seconds_; }
  int refactorisations() const { return refactorisations_; }
  std::size_t memory_bytes() const;
  // The matrix's diagonal without contacts (a contact's weight is a
  // multiple of it).
  double base_diagonal(std::size_t i) const { return base_diag_(Eigen::Index(i)); }
  const std::vector<PdProxy>& proxies() const { return proxies_; }
  // A proxy's position in x (or any per-node rows: velocities).
  Vec3d proxy_point(uint32_t k, const PdMatrix& x) const;
  // Contact slots on the proxies `which` with weights w (a refactorisation).
  void set_contact_slots(const std::vector<uint32_t>& which, const std::vector<double>& w);
  bool has_slot(uint32_t proxy) const { return proxy < slot_.size() && slot_[proxy] >= 0; }
  // The slots' points (proxies) and weights, as set_contact_slots took them.
  const std::vector<uint32_t>& slot_proxies() const { return slot_proxy_; }
  const std::vector<double>& slot_weights() const { return slot_w_; }
  // The step's contacts; each contact's proxy must have a slot.
  void set_contacts(std::vector<PdContact> contacts);
  const std::vector<PdContact>& contacts() const { return contacts_; }
  // The force (N, along the normal) contact k pushes its proxy with at x.
  double contact_force(std::size_t k, const PdMatrix& x) const;

  // F(x) for the inertial target y (contacts included).
  double objective(const PdMatrix& x, const PdMatrix& y) const;
  // The constraints' and the system's arrays as the passes read them
  // (iteration.h: pd_local, pd_rhs, pd_sweep); valid until the next build,
  // set_contact_slots or set_contacts.
  PdView view() const;
  // Cholesky: x = A^-1 b.
  void solve(const PdMatrix& b, PdMatrix& x) const;

 private:
  void factor();
  Vec3d contact_projection(const PdContact& c, const PdMatrix& x) const;
  const PdConstraints* c_ = nullptr;
  std::size_t n_ = 0;
  double h_ = 0;
  PdMethod method_ = PdMethod::Cholesky;
  std::vector<double> mass_;
  Eigen::SparseMatrix<double, Eigen::RowMajor> A_base_, A_, GtW_;
  Eigen::VectorXd base_diag_, diag_;
  std::vector<PdProxy> proxies_;
  std::vector<PdContact> contacts_;
  std::vector<int32_t> slot_;          // per proxy: its slot, -1 none
  std::vector<uint32_t> slot_proxy_;   // per slot: its proxy
  std::vector<double> slot_w_;         // per slot: its weight
  std::vector<int32_t> slot_contact_;  // per slot: its contact this step, -1 none
  std::vector<PdSlot> slots_;              // per slot: as the passes read it (its contact plane this step)
  std::vector<uint32_t> node_slot_start_;  // per node: its slots (CSR over node_slot_)
  std::vector<PdNodeSlot> node_slot_;
  std::vector<double> mass_h2_;            // m_i / h^2
  struct Factor;
  std::shared_ptr<Factor> factor_;
  double factor_seconds_ = 0;
  int refactorisations_ = 0;
};

}  // namespace eddy
