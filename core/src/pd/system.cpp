// Projective Dynamics: constraints, projections and the local-global
// solver of one step (system.h).
#include "eddy/core/pd/system.h"

#include <Eigen/Dense>
#include <Eigen/SparseCholesky>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>

#include "eddy/core/error.h"
#include "eddy/core/pd/projection.h"


namespace eddy {

using Mat32 = Eigen::Matrix<double, 3, 2>;

// ---- projections (projection.h, on arrays; Eigen here at the edges)

namespace {

template <int K>
double element_projection(const Eigen::Matrix<double, 3, K>& F, double lo, double hi, double share,
                          Eigen::Matrix<double, 3, K>& P) {
  double f[3 * K], out[3 * K];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < K; ++j) f[K * i + j] = F(i, j);
  const double e = pd::element_projection<K>(f, lo, hi, share, out);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < K; ++j) P(i, j) = out[K * i + j];
  return e;
}

}  // namespace


Eigen::Matrix3d project_strain(const Eigen::Matrix3d& F, double lo, double hi) {
  Eigen::Matrix3d P;
  element_projection<3>(F, lo, hi, 0.0, P);
  return P;
}
Eigen::Matrix3d project_volume(const Eigen::Matrix3d& F) {
  Eigen::Matrix3d P;
  element_projection<3>(F, 1.0, 1.0, 1.0, P);
  return P;
}
Mat32 project_strain_2d(const Mat32& F, double lo, double hi) {
  Mat32 P;
  element_projection<2>(F, lo, hi, 0.0, P);
  return P;
}
Mat32 project_area_2d(const Mat32& F) {
  Mat32 P;
  element_projection<2>(F, 1.0, 1.0, 1.0, P);
  return P;
}

// ---- constraints

PdConstraint& PdConstraints::begin(PdKind kind, double w) {
  PdConstraint c;
  c.kind = kind;
  c.row = uint32_t(rows());
  c.weight = w;
  (kind == PdKind::Tri ? tris_ : kind == PdKind::Tet ? tets_ : others_).push_back(uint32_t(c_.size()));
  c_.push_back(c);
  return c_.back();
}

void PdConstraints::add_entry(int32_t node, double coef) {
  node_.push_back(node);
  coef_.push_back(coef);
}

void PdConstraints::add_spring(const std::vector<Vec3d>& rest, int32_t i, int32_t j, double k) {
  PdConstraint& c = begin(PdKind::Spring, k);
  c.lo = c.hi = (rest[std::size_t(i)] - rest[std::size_t(j)]).norm();
  add_entry(i, 1.0);
  add_entry(j, -1.0);
  end_row();
}

void PdConstraints::add_pin(int32_t i, const Vec3d& target, double w) {
  PdConstraint& c = begin(PdKind::Pin, w);
  for (int k = 0; k < 3; ++k) c.target[k] = target(k);
  add_entry(i, 1.0);
  end_row();
}

void PdConstraints::build(const SoftBodies& s, double pin_weight) {
  c_.clear();
  tris_.clear();
  tets_.clear();
  others_.clear();
  row_start_.assign(1, 0);
  node_.clear();
  coef_.clear();
  const std::vector<Vec3d>& X = s.rest;
  for (const SoftObject& ob : s.objects) {
    const SoftMaterial& m = ob.material;
    const double E = m.young_modulus, nu = m.poisson_ratio;
    const double mu = E / (2 * (1 + nu)), lambda = E * nu / ((1 + nu) * (1 - 2 * nu));
    for (uint32_t t = ob.tet_begin; t < ob.tet_end; ++t) {
      const auto& T = s.tets[t];
      Eigen::Matrix3d Dm;
      for (int j = 0; j < 3; ++j) Dm.col(j) = X[std::size_t(T[std::size_t(j) + 1])] - X[std::size_t(T[0])];
      const double V = Dm.determinant() / 6.0;
      if (!(V > 0)) throw Error(ob.name + ": tetrahedron " + std::to_string(t - ob.tet_begin) + " has no volume at rest");
      const Eigen::Matrix3d Di = Dm.inverse();
      // F's column k = sum_j (x_{j+1} - x_0) Di(j, k): one row each.
      auto rows = [&] {
        for (int k = 0; k < 3; ++k) {
          add_entry(T[0], -Di.col(k).sum());
          for (int j = 0; j < 3; ++j) add_entry(T[std::size_t(j) + 1], Di(j, k));
          end_row();
        }
      };
      const double ws = 2 * mu * V, wv = 3 * lambda * V;
      PdConstraint& c = begin(PdKind::Tet, ws + wv);
      c.volume_share = wv / (ws + wv);
      c.lo = m.strain_min;
      c.hi = m.strain_max;
      rows();
    }
    if (ob.tri_end > ob.tri_begin) {
      const double lambda2 = 2 * mu * lambda / (lambda + 2 * mu);
      std::vector<double> node_area(s.size(), 0.0);
      // Cotangent Laplacian, accumulated per node pair.
      std::vector<std::map<int32_t, double>> lap(ob.node_end - ob.node_begin);
      std::map<std::pair<int32_t, int32_t>, int> edge_faces;
      for (uint32_t f = ob.tri_begin; f < ob.tri_end; ++f) {
        const auto& T = s.tris[f];
        const Vec3d x0 = X[std::size_t(T[0])], e1 = X[std::size_t(T[1])] - x0, e2 = X[std::size_t(T[2])] - x0;
        // The rest triangle in its own plane: Dm (2x2), F = [x1 - x0, x2 - x0] Dm^-1.
        const Vec3d b1 = e1.normalized();
        const Vec3d b2 = (e2 - e2.dot(b1) * b1).normalized();
        Eigen::Matrix2d Dm;
        Dm << e1.dot(b1), e2.dot(b1), 0.0, e2.dot(b2);
        const double A = 0.5 * Dm.determinant();
        if (!(A > 0)) throw Error(ob.name + ": triangle " + std::to_string(f - ob.tri_begin) + " has no area at rest");
        const Eigen::Matrix2d Di = Dm.inverse();
        auto rows = [&] {
          for (int k = 0; k < 2; ++k) {
            add_entry(T[0], -Di.col(k).sum());
            for (int j = 0; j < 2; ++j) add_entry(T[std::size_t(j) + 1], Di(j, k));
            end_row();
          }
        };
        const double ws = 2 * mu * m.thickness * A, wv = 2 * lambda2 * m.thickness * A;
        PdConstraint& c = begin(PdKind::Tri, ws + wv);
        c.volume_share = wv / (ws + wv);
        c.lo = m.strain_min;
        c.hi = m.strain_max;
        rows();
        for (int a = 0; a < 3; ++a) {
          const int32_t i = T[std::size_t(a)], j = T[std::size_t(a + 1) % 3], k = T[std::size_t(a + 2) % 3];
          node_area[std::size_t(i)] += A / 3;
          const Vec3d u = X[std::size_t(j)] - X[std::size_t(i)], w = X[std::size_t(k)] - X[std::size_t(i)];
          const double half_cot = 0.5 * u.dot(w) / u.cross(w).norm();  // the angle at i, across edge (j, k)
          auto& lj = lap[std::size_t(j) - ob.node_begin];
          auto& lk = lap[std::size_t(k) - ob.node_begin];
          lj[k] += half_cot;
          lj[j] -= half_cot;
          lk[j] += half_cot;
          lk[k] -= half_cot;
          ++edge_faces[{std::min(j, k), std::max(j, k)}];
        }
      }
      if (m.bend_stiffness > 0) {
        std::set<int32_t> boundary;
        for (const auto& [e, n] : edge_faces)
          if (n == 1) boundary.insert(e.first), boundary.insert(e.second);
        for (uint32_t i = ob.node_begin; i < ob.node_end; ++i) {
          const auto& row = lap[i - ob.node_begin];
          if (row.empty() || boundary.count(int32_t(i)) || !(node_area[i] > 0)) continue;
          PdConstraint& c = begin(PdKind::Bend, m.bend_stiffness / node_area[i]);
          Vec3d rest = Vec3d::Zero();
          for (const auto& [j, w] : row) {
            add_entry(j, w);
            rest += w * X[std::size_t(j)];
          }
          end_row();
          c.lo = c.hi = rest.norm();
        }
      }
    }
  }
  for (std::size_t i = 0; i < s.size(); ++i)
    if (s.pinned[i]) add_pin(int32_t(i), s.pin_target[i], pin_weight);
}

Eigen::SparseMatrix<double, Eigen::RowMajor> PdConstraints::matrix(std::size_t nodes) const {
  std::vector<Eigen::Triplet<double>> t;
  t.reserve(node_.size());
  for (std::size_t r = 0; r + 1 < row_start_.size(); ++r)
    for (uint32_t e = row_start_[r]; e < row_start_[r + 1]; ++e) t.emplace_back(int(r), node_[e], coef_[e]);
  Eigen::SparseMatrix<double, Eigen::RowMajor> G{Eigen::Index(rows()), Eigen::Index(nodes)};
  G.setFromTriplets(t.begin(), t.end());
  return G;
}

std::vector<double> PdConstraints::row_weights() const {
  std::vector<double> w(rows(), 0.0);
  for (std::size_t k = 0; k < c_.size(); ++k) {
    const uint32_t end = k + 1 < c_.size() ? c_[k + 1].row : uint32_t(rows());
    for (uint32_t r = c_[k].row; r < end; ++r) w[r] = c_[k].weight;
  }
  return w;
}

PdView PdConstraints::view() const {
  PdView v;
  v.constraints = uint32_t(c_.size());
  v.rows = uint32_t(rows());
  v.tris = uint32_t(tris_.size());
  v.tets = uint32_t(tets_.size());
  v.others = uint32_t(others_.size());
  v.c = c_.data();
  v.tri_ids = tris_.data();
  v.tet_ids = tets_.data();
  v.other_ids = others_.data();
  v.row_start = row_start_.data();
  v.row_node = node_.data();
  v.row_coef = coef_.data();
  return v;
}

double PdConstraints::project(std::size_t k, const PdMatrix& x, PdMatrix& p) const {
  return pd_project_one(view(), uint32_t(k), x.data(), p.data());
}

double PdConstraints::energy(const PdMatrix& x) const {
  PdMatrix p(Eigen::Index(rows()), 3);
  double e = 0;
  for (std::size_t k = 0; k < c_.size(); ++k) e += project(k, x, p);
  return e;
}

// ---- the system

struct PdSystem::Factor {
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt;
};

void PdSystem::build(const PdConstraints& c, const std::vector<double>& mass, std::vector<PdProxy> proxies, double h,
                     PdMethod method) {
  const auto t0 = std::chrono::steady_clock::now();
  c_ = &c;
  n_ = mass.size();
  h_ = h;
  method_ = method;
  mass_ = mass;
  const Eigen::SparseMatrix<double, Eigen::RowMajor> G = c.matrix(n_);
  const std::vector<double> w = c.row_weights();
  const Eigen::Map<const Eigen::VectorXd> wv(w.data(), Eigen::Index(w.size()));
  GtW_ = G.transpose() * wv.asDiagonal();
  GtW_.makeCompressed();
  Eigen::SparseMatrix<double, Eigen::RowMajor> A = GtW_ * G;
  Eigen::VectorXd m{Eigen::Index(n_)};
  for (std::size_t i = 0; i < n_; ++i) {
    if (!(mass[i] > 0)) throw Error("PdSystem: node " + std::to_string(i) + " has no mass");
    m(Eigen::Index(i)) = mass[i] / (h * h);
  }
  A += Eigen::SparseMatrix<double, Eigen::RowMajor>(m.asDiagonal());
  // Room in the pattern for every proxy's contact, w g g^T (explicit zeros),
  // so that slots change values only and the analysis holds.
  {
    std::vector<Eigen::Triplet<double>> room;
    for (const PdProxy& p : proxies)
      for (int a = 0; a < p.count; ++a)
        for (int b = 0; b < p.count; ++b) room.emplace_back(p.node[std::size_t(a)], p.node[std::size_t(b)], 0.0);
    Eigen::SparseMatrix<double, Eigen::RowMajor> R{Eigen::Index(n_), Eigen::Index(n_)};
    R.setFromTriplets(room.begin(), room.end());
    A += R;
  }
  A.makeCompressed();
  proxies_ = std::move(proxies);
  A_base_ = A;
  A_ = A;
  base_diag_ = A.diagonal();
  diag_ = base_diag_;
  contacts_.clear();
  slot_.assign(proxies_.size(), -1);
  slot_proxy_.clear();
  slot_w_.clear();
  slot_contact_.clear();
  node_slot_start_.assign(n_ + 1, 0);
  node_slot_.clear();
  slots_.clear();
  mass_h2_.resize(n_);
  for (std::size_t i = 0; i < n_; ++i) mass_h2_[i] = mass_[i] / (h * h);
  factor_.reset();
  refactorisations_ = 0;
  if (method == PdMethod::Cholesky) {
    factor_ = std::make_shared<Factor>();
    factor_->ldlt.analyzePattern(Eigen::SparseMatrix<double>(A_));
    factor();
  }
  factor_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void PdSystem::factor() {
  if (!factor_) return;
  factor_->ldlt.factorize(Eigen::SparseMatrix<double>(A_));
  if (factor_->ldlt.info() != Eigen::Success) throw Error("PdSystem: the global matrix could not be factored");
}

Vec3d PdSystem::proxy_point(uint32_t k, const PdMatrix& x) const {
  const PdProxy& p = proxies_[k];
  Vec3d s = Vec3d::Zero();
  for (int a = 0; a < p.count; ++a) s += p.w[std::size_t(a)] * x.row(p.node[std::size_t(a)]).transpose();
  return s;
}

void PdSystem::set_contact_slots(const std::vector<uint32_t>& which, const std::vector<double>& w) {
  A_ = A_base_;
  std::fill(slot_.begin(), slot_.end(), -1);
  slot_proxy_ = which;
  slot_w_ = w;
  slot_contact_.assign(which.size(), -1);
  contacts_.clear();
  for (std::size_t k = 0; k < which.size(); ++k) {
    slot_[which[k]] = int32_t(k);
    const PdProxy& p = proxies_[which[k]];
    for (int a = 0; a < p.count; ++a)
      for (int b = 0; b < p.count; ++b)
        A_.coeffRef(p.node[std::size_t(a)], p.node[std::size_t(b)]) += w[k] * p.w[std::size_t(a)] * p.w[std::size_t(b)];
  }
  if (A_.nonZeros() != A_base_.nonZeros()) throw Error("PdSystem: a contact slot fell outside the analysed pattern");
  // Each node's slots (with the node's place in the proxy), in slot order.
  node_slot_start_.assign(n_ + 1, 0);
  for (uint32_t k : which)
    for (int a = 0; a < proxies_[k].count; ++a) ++node_slot_start_[std::size_t(proxies_[k].node[std::size_t(a)]) + 1];
  for (std::size_t i = 0; i < n_; ++i) node_slot_start_[i + 1] += node_slot_start_[i];
  node_slot_.resize(node_slot_start_[n_]);
  std::vector<uint32_t> fill(node_slot_start_.begin(), node_slot_start_.end() - 1);
  for (std::size_t k = 0; k < which.size(); ++k)
    for (int a = 0; a < proxies_[which[k]].count; ++a)
      node_slot_[fill[std::size_t(proxies_[which[k]].node[std::size_t(a)])]++] = {uint32_t(k), a};
  slots_.assign(which.size(), PdSlot{});
  for (std::size_t k = 0; k < which.size(); ++k) {
    const PdProxy& p = proxies_[which[k]];
    PdSlot& s = slots_[k];
    s.count = p.count;
    for (int a = 0; a < 4; ++a) {
      s.node[a] = p.node[std::size_t(a)];
      s.w[a] = p.w[std::size_t(a)];
    }
    s.weight = w[k];
  }
  diag_ = A_.diagonal();
  factor();
  if (factor_) ++refactorisations_;
}

void PdSystem::set_contacts(std::vector<PdContact> contacts) {
  std::fill(slot_contact_.begin(), slot_contact_.end(), -1);
  for (PdSlot& s : slots_) s.touching = 0;
  for (std::size_t k = 0; k < contacts.size(); ++k) {
    if (!has_slot(contacts[k].proxy)) throw Error("PdSystem: a contact on a point without a contact slot");
    const std::size_t slot = std::size_t(slot_[contacts[k].proxy]);
    slot_contact_[slot] = int32_t(k);
    PdSlot& s = slots_[slot];
    s.touching = 1;
    for (int a = 0; a < 3; ++a) s.normal[a] = contacts[k].normal(a);
    s.offset = contacts[k].offset;
  }
  contacts_ = std::move(contacts);
}

Vec3d PdSystem::contact_projection(const PdContact& c, const PdMatrix& x) const {
  Vec3d q;  // as the passes project its slot (set_contacts gave the slot c's plane)
  pd_slot_point(slots_[std::size_t(slot_[c.proxy])], x.data(), q.data());
  return q;
}

double PdSystem::contact_force(std::size_t k, const PdMatrix& x) const {
  const PdContact& c = contacts_[k];
  return slot_w_[std::size_t(slot_[c.proxy])] * (contact_projection(c, x) - proxy_point(c.proxy, x)).dot(c.normal);
}

std::size_t PdSystem::memory_bytes() const {
  std::size_t b = std::size_t(A_base_.nonZeros() + A_.nonZeros() + GtW_.nonZeros()) * (sizeof(double) + sizeof(int)) +
                  n_ * 3 * sizeof(double);
  if (factor_) b += std::size_t(factor_->ldlt.matrixL().nestedExpression().nonZeros()) * (sizeof(double) + sizeof(int));
  return b;
}

double PdSystem::objective(const PdMatrix& x, const PdMatrix& y) const {
  double inertia = 0;
  for (std::size_t i = 0; i < n_; ++i) inertia += mass_[i] * (x.row(Eigen::Index(i)) - y.row(Eigen::Index(i))).squaredNorm();
  double contact = 0;
  for (const PdContact& c : contacts_)
    contact += 0.5 * slot_w_[std::size_t(slot_[c.proxy])] * (contact_projection(c, x) - proxy_point(c.proxy, x)).squaredNorm();
  return inertia / (2 * h_ * h_) + c_->energy(x) + contact;
}

PdView PdSystem::view() const {
  PdView v = c_->view();
  v.nodes = uint32_t(n_);
  v.slots = uint32_t(slots_.size());
  v.gtw_start = GtW_.outerIndexPtr();
  v.gtw_col = GtW_.innerIndexPtr();
  v.gtw_val = GtW_.valuePtr();
  v.a_start = A_.outerIndexPtr();
  v.a_col = A_.innerIndexPtr();
  v.a_val = A_.valuePtr();
  v.diag = diag_.data();
  v.mass_h2 = mass_h2_.data();
  v.node_slot_start = node_slot_start_.data();
  v.node_slot = node_slot_.data();
  v.slot = slots_.data();
  return v;
}

void PdSystem::solve(const PdMatrix& b, PdMatrix& x) const {
  if (!factor_) throw Error("PdSystem: solve() needs the Cholesky method");
  // One pass over the factor for the three coordinates (measured faster
  // than three back-substitutions in parallel on two cores: bench_pd).
  const Eigen::MatrixX3d bc = b;
  x = factor_->ldlt.solve(bc);
}

}  // namespace eddy
