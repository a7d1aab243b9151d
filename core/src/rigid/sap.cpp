// SAP: the per-contact regularisation and cone projection, and the Newton
// solve with an exact line search (sap.h; Castro et al. 2022).
#include "eddy/core/rigid/sap.h"

#include <tbb/parallel_for.h>

#include <Eigen/Sparse>
#include <Eigen/SparseCholesky>
#include <algorithm>
#include <cmath>
#include <numbers>
#include <unordered_map>

#include "eddy/core/rigid/block_cholesky.h"

namespace eddy {

namespace {

using Mat36 = Eigen::Matrix<double, 3, 6>;

// Runs f(i) for i in [0, n) on the threads TBB offers (up to 256 contacts
// in this thread: waking a thread costs more than they do).
template <class F>
void each_row(std::size_t n, F f) {
  if (n <= 256) {
    for (std::size_t i = 0; i < n; ++i) f(i);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 64), [&](const auto& r) {
    for (std::size_t i = r.begin(); i != r.end(); ++i) f(i);
  });
}

// The sums over i in [0, n) of the pairs f(i) adds into, in chunks of 256
// added in order: the same bits whatever the thread count.
template <class F>
std::pair<double, double> sum_rows(std::size_t n, F f) {
  constexpr std::size_t kChunk = 256;
  const std::size_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<std::pair<double, double>> part(chunks, {0.0, 0.0});
  auto chunk = [&](std::size_t c) {
    double a = 0, b = 0;
    for (std::size_t i = c * kChunk; i < std::min(n, (c + 1) * kChunk); ++i) f(i, a, b);
    part[c] = {a, b};
  };
  if (chunks <= 1) {
    for (std::size_t c = 0; c < chunks; ++c) chunk(c);
  } else {
    tbb::parallel_for(std::size_t(0), chunks, chunk);
  }
  std::pair<double, double> total{0.0, 0.0};
  for (const auto& [a, b] : part) {
    total.first += a;
    total.second += b;
  }
  return total;
}

// One side of a contact: the body, its 3x6 Jacobian block (contact frame
// from the body's v and w) and the arm from its centre of mass.
// J = L [I, -skew(arm)], L = sign F^T (F the contact frame).
struct Side {
  int body = -1;
  Mat36 J;
  Vec3d arm;
};

// A contact made ready for the solve: its sides, regularisation and the
// step's fixed data.
struct Row {
  Side s[2];
  int sides = 0;
  Vec3d bias;
  double mu = 0;
  double bound = 0;  // Lagged: the friction bound mu gamma_n0
  SapRegularisation reg;
};

Side side(int body, const Mat3d& frame, const Vec3d& r, double sign) {
  Side s;
  s.body = body;
  s.J.leftCols<3>() = sign * frame.transpose();
  s.J.rightCols<3>() = -sign * frame.transpose() * skew(r);
  s.arm = r;
  return s;
}

// v_c = J v + b for a contact.
Vec3d contact_velocity(const Row& row, const Eigen::VectorXd& v) {
  Vec3d vc = row.bias;
  for (int k = 0; k < row.sides; ++k) vc += row.s[k].J * v.segment<6>(6 * row.s[k].body);
  return vc;
}

}  // namespace

SapRegularisation sap_regularisation(const SapContact& c, double w, double h, const SapParams& p) {
  SapRegularisation r;
  r.w = w;
  const double near_rigid = p.beta * p.beta / (4.0 * std::numbers::pi * std::numbers::pi) * w;
  r.Rn = std::max(1.0 / (h * c.stiffness * (h + c.tau)), near_rigid);
  r.Rt = p.sigma * w;
  r.vhat = -c.phi0 / (h + c.tau);
  return r;
}

Vec3d sap_project(const Vec3d& y, double mu, double Rt, double Rn, Mat3d* dgamma_dy) {
  const Eigen::Vector2d yt = y.head<2>();
  const double yn = y.z();
  const double s = yt.norm();
  if (s <= mu * yn) {  // stiction: inside the cone
    if (dgamma_dy) dgamma_dy->setIdentity();
    return y;
  }
  const double mut = mu * Rt / Rn;  // mu~
  if (yn + mut * s <= 0) {  // separation: inside the polar cone
    if (dgamma_dy) dgamma_dy->setZero();
    return Vec3d::Zero();
  }
  // Sliding: onto the cone's surface along the R-norm normal.
  const double den = 1.0 + mu * mut;
  const double gn = (yn + mut * s) / den;
  const Eigen::Vector2d t = yt / s;
  if (dgamma_dy) {
    Mat3d& d = *dgamma_dy;
    const Eigen::Matrix2d tt = t * t.transpose();
    d.topLeftCorner<2, 2>() = mu * (mut / den * tt + gn / s * (Eigen::Matrix2d::Identity() - tt));
    d.topRightCorner<2, 1>() = mu / den * t;
    d.bottomLeftCorner<1, 2>() = mut / den * t.transpose();
    d(2, 2) = 1.0 / den;
  }
  return Vec3d(mu * gn * t.x(), mu * gn * t.y(), gn);
}

Vec3d lagged_project(const Vec3d& y, double bound, Mat3d* dgamma_dy) {
  Vec3d g = Vec3d::Zero();
  if (dgamma_dy) dgamma_dy->setZero();
  if (y.z() > 0) {
    g.z() = y.z();
    if (dgamma_dy) (*dgamma_dy)(2, 2) = 1.0;
  }
  const Eigen::Vector2d yt = y.head<2>();
  const double s = yt.norm();
  if (s <= bound) {  // stiction
    g.head<2>() = yt;
    if (dgamma_dy) dgamma_dy->topLeftCorner<2, 2>().setIdentity();
  } else {  // sliding on the rim (bound 0: no friction)
    const Eigen::Vector2d t = yt / s;
    g.head<2>() = bound * t;
    if (dgamma_dy) dgamma_dy->topLeftCorner<2, 2>() = bound / s * (Eigen::Matrix2d::Identity() - t * t.transpose());
  }
  return g;
}

namespace {

// One problem, all its bodies together (sap_solve without islands).
SapStats solve_whole(const SapProblem& pb, const SapParams& prm, Eigen::VectorXd& v, std::vector<Vec3d>* gamma_out,
                     std::vector<SapRegularisation>* reg_out) {
  const int nb = int(pb.mass.size());
  const int n = 6 * nb;
  const double h = pb.h;
  SapStats stats;

  // Mass matrix blocks and their inverses; D = diag(M)^-1/2 scales the
  // residual so linear and angular momenta compare (Castro et al. eq. 46).
  std::vector<Mat3d> inv_inertia(static_cast<std::size_t>(nb));
  Eigen::VectorXd D(n);
  for (int b = 0; b < nb; ++b) {
    inv_inertia[std::size_t(b)] = pb.inertia[std::size_t(b)].inverse();
    D.segment<3>(6 * b).setConstant(1.0 / std::sqrt(pb.mass[std::size_t(b)]));
    D.segment<3>(6 * b + 3) = pb.inertia[std::size_t(b)].diagonal().cwiseSqrt().cwiseInverse();
  }
  auto mul_M = [&](const Eigen::VectorXd& x) {
    Eigen::VectorXd y(n);
    for (int b = 0; b < nb; ++b) {
      y.segment<3>(6 * b) = pb.mass[std::size_t(b)] * x.segment<3>(6 * b);
      y.segment<3>(6 * b + 3) = pb.inertia[std::size_t(b)] * x.segment<3>(6 * b + 3);
    }
    return y;
  };

  // Contacts: Jacobian blocks, Delassus estimate w = tr(W_ii) / 3 and the
  // regularisation.
  std::vector<Row> rows(pb.contacts.size());
  each_row(rows.size(), [&](std::size_t i) {
    const SapContact& c = pb.contacts[i];
    Row& r = rows[i];
    double trace = 0;
    auto add_side = [&](int body, const Vec3d& arm, double sign) {
      if (body < 0) return;
      r.s[r.sides++] = side(body, c.frame, arm, sign);
      const Mat3d S = skew(arm);
      trace += 3.0 / pb.mass[std::size_t(body)] + (S * inv_inertia[std::size_t(body)] * S.transpose()).trace();
    };
    add_side(c.a, c.ra, 1.0);
    add_side(c.b, c.rb, -1.0);
    r.bias = c.bias;
    r.mu = c.mu;
    r.reg = sap_regularisation(c, trace / 3.0, h, prm);
  });
  const bool lagged = prm.model == SapModel::Lagged;
  // gamma(y) of a contact, and its derivative.
  auto project = [&](const Row& r, const Vec3d& y, Mat3d* dg) {
    return lagged ? lagged_project(y, r.bound, dg) : sap_project(y, r.mu, r.reg.Rt, r.reg.Rn, dg);
  };
  v = pb.v_guess.size() == n ? pb.v_guess : pb.v_star;
  if (lagged)  // the friction bound from the normal impulse at the velocities the step starts from
    for (Row& r : rows)
      r.bound = r.mu * std::max(0.0, (r.reg.vhat - contact_velocity(r, v).z()) / r.reg.Rn);

  // The Hessian's lower triangle in 6x6 blocks: one per body on the
  // diagonal, one per pair of bodies in contact (row body > column body),
  // fixed over the iterations. Contacts add into their blocks; the sparse
  // matrix is made from the blocks, so its entries number 21 a body and 36
  // a touching pair, however many contacts a pair has.
  using Mat66 = Eigen::Matrix<double, 6, 6>;
  std::vector<std::pair<int, int>> block_at;  // (row body, column body)
  std::unordered_map<uint64_t, int> block_of;
  for (int b = 0; b < nb; ++b) block_at.emplace_back(b, b);
  std::vector<int> pair_block(rows.size(), -1);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].sides < 2) continue;
    const int hi = std::max(rows[i].s[0].body, rows[i].s[1].body), lo = std::min(rows[i].s[0].body, rows[i].s[1].body);
    const uint64_t key = uint64_t(hi) << 32 | uint64_t(lo);
    auto [it, fresh] = block_of.try_emplace(key, int(block_at.size()));
    if (fresh) block_at.emplace_back(hi, lo);
    pair_block[i] = it->second;
  }
  std::vector<Mat66> blocks(block_at.size());
  // The terms each block gathers, (contact, side) in the contacts' order:
  // side 0 or 1 into the diagonal block of that side's body, 2 (the cross
  // term) into the pair's block.
  std::vector<int> block_start(blocks.size() + 1, 0);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (int p = 0; p < rows[i].sides; ++p) ++block_start[std::size_t(rows[i].s[p].body) + 1];
    if (rows[i].sides == 2) ++block_start[std::size_t(pair_block[i]) + 1];
  }
  for (std::size_t k = 0; k < blocks.size(); ++k) block_start[k + 1] += block_start[k];
  std::vector<std::pair<int, int>> block_terms(std::size_t(block_start.back()));
  {
    std::vector<int> next(block_start.begin(), block_start.end() - 1);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      for (int p = 0; p < rows[i].sides; ++p)
        block_terms[std::size_t(next[std::size_t(rows[i].s[p].body)]++)] = {int(i), p};
      if (rows[i].sides == 2) block_terms[std::size_t(next[std::size_t(pair_block[i])]++)] = {int(i), 2};
    }
  }
  // The factorisation: 6x6 blocks (BlockCholesky), or Eigen's scalar
  // SimplicialLDLT of the same matrix, the reference.
  BlockCholesky chol;
  if (prm.block_factorisation) chol.analyze(nb, {block_at.begin() + nb, block_at.end()});
  std::vector<Eigen::Triplet<double>> trip;
  Eigen::SparseMatrix<double> H(n, n);
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt;
  bool analysed = false;

  std::vector<Vec3d> gamma(rows.size());
  std::vector<Mat3d> A_world(rows.size());  // a contact's G = -d gamma / d v_c in world axes, F G F^T
  auto impulses = [&](const Eigen::VectorXd& vel, bool with_hessian) {
    each_row(rows.size(), [&](std::size_t i) {
      const Row& r = rows[i];
      const Vec3d vc = contact_velocity(r, vel);
      const Vec3d rinv(1.0 / r.reg.Rt, 1.0 / r.reg.Rt, 1.0 / r.reg.Rn);
      const Vec3d y = rinv.cwiseProduct(Vec3d(0, 0, r.reg.vhat) - vc);
      Mat3d dg;
      gamma[i] = project(r, y, with_hessian ? &dg : nullptr);
      if (with_hessian) {
        const auto L = r.s[0].J.leftCols<3>();
        A_world[i].noalias() = L.transpose() * (dg * rinv.asDiagonal()) * L;
      }
    });
  };
  // J^T gamma
  auto generalised = [&]() {
    Eigen::VectorXd j = Eigen::VectorXd::Zero(n);
    for (std::size_t i = 0; i < rows.size(); ++i)
      for (int k = 0; k < rows[i].sides; ++k)
        j.segment<6>(6 * rows[i].s[k].body) += rows[i].s[k].J.transpose() * gamma[i];
    return j;
  };

  Eigen::VectorXd dv(n);
  for (int it = 0;; ++it) {
    impulses(v, true);
    const Eigen::VectorXd Mv = mul_M(v);
    const Eigen::VectorXd j = generalised();
    const Eigen::VectorXd grad = Mv - mul_M(pb.v_star) - j;
    const double scale = std::max(D.cwiseProduct(Mv).norm(), D.cwiseProduct(j).norm());
    const double res = D.cwiseProduct(grad).norm();
    stats.residual = scale > 0 ? res / scale : res;
    stats.iterations = it;
    if (res <= prm.abs_tolerance + prm.rel_tolerance * scale) {
      stats.converged = true;
      break;
    }
    if (it >= prm.max_iterations) break;

    // Newton direction: (M + sum J^T G J) dv = -grad. Each block gathers
    // its contacts' terms in the contacts' order, the blocks in parallel
    // (the bits of a serial loop). With J_p = L_p [I, -S_p] (S_p =
    // skew(arm_p), L_p = +-F^T) and A = L_0^T G L_0 (G in world axes), a
    // term is s [[A, -A S_q], [S_p A, -S_p A S_q]]: s = +1 on a body's
    // diagonal (q = p), -1 between the two sides of a contact (their L
    // differ in sign).
    each_row(blocks.size(), [&](std::size_t k) {
      Mat66& d = blocks[k];
      d.setZero();
      if (k < std::size_t(nb)) {
        d.topLeftCorner<3, 3>().diagonal().setConstant(pb.mass[k]);
        d.bottomRightCorner<3, 3>() = pb.inertia[k];
      }
      for (int e = block_start[k]; e < block_start[k + 1]; ++e) {
        const auto [i, p] = block_terms[std::size_t(e)];
        const Row& row = rows[std::size_t(i)];
        const Mat3d& A = A_world[std::size_t(i)];
        const int q = p < 2 ? p : row.s[0].body > row.s[1].body ? 1 : 0;  // the column's side
        const int r = p < 2 ? p : 1 - q;                                    // the row's side
        const Mat3d Sr = skew(row.s[r].arm), Sq = skew(row.s[q].arm);
        const double sign = p < 2 ? 1.0 : -1.0;
        const Mat3d SA = sign * (Sr * A);
        d.topLeftCorner<3, 3>() += sign * A;
        d.topRightCorner<3, 3>().noalias() -= sign * (A * Sq);
        d.bottomLeftCorner<3, 3>() += SA;
        d.bottomRightCorner<3, 3>().noalias() -= SA * Sq;
      }
    });
    if (prm.block_factorisation) {
      if (!chol.factorize(blocks)) break;
      dv = chol.solve(-grad);
    } else {
      trip.clear();
      for (std::size_t k = 0; k < blocks.size(); ++k) {
        const auto [bi, bj] = block_at[k];
        for (int c = 0; c < 6; ++c)
          for (int r = bi == bj ? c : 0; r < 6; ++r) trip.emplace_back(6 * bi + r, 6 * bj + c, blocks[k](r, c));
      }
      H.setFromTriplets(trip.begin(), trip.end());
      if (!analysed) {
        ldlt.analyzePattern(H);
        analysed = true;
      }
      ldlt.factorize(H);
      if (ldlt.info() != Eigen::Success) break;
      dv = ldlt.solve(-grad);
    }

    // Exact line search: the cost along v + alpha dv is convex; its slope
    // phi'(alpha) = dv^T M (v + alpha dv - v*) - sum gamma_i(alpha) . J_i dv
    // rises from phi'(0) = grad . dv < 0. A full step is taken when the
    // slope is still negative at alpha = 1, else its root is found by
    // Newton's method kept inside a shrinking bracket, from the secant's
    // root between alpha = 0 and 1.
    const Eigen::VectorXd Mdv = mul_M(dv);
    const double a0 = Mdv.dot(v - pb.v_star), a1 = Mdv.dot(dv);
    std::vector<Vec3d> vc0(rows.size()), dvc(rows.size());
    each_row(rows.size(), [&](std::size_t i) {
      vc0[i] = contact_velocity(rows[i], v);
      dvc[i] = contact_velocity(rows[i], dv) - rows[i].bias;
    });
    auto slope = [&](double alpha, double* curvature) {
      const auto [d, dd] = sum_rows(rows.size(), [&](std::size_t i, double& di, double& ddi) {
        const Row& r = rows[i];
        const Vec3d rinv(1.0 / r.reg.Rt, 1.0 / r.reg.Rt, 1.0 / r.reg.Rn);
        const Vec3d y = rinv.cwiseProduct(Vec3d(0, 0, r.reg.vhat) - vc0[i] - alpha * dvc[i]);
        Mat3d dg;
        const Vec3d g = project(r, y, &dg);
        di -= g.dot(dvc[i]);
        ddi += dvc[i].dot(dg * rinv.asDiagonal() * dvc[i]);
      });
      if (curvature) *curvature = a1 + dd;
      ++stats.line_search_steps;
      return a0 + alpha * a1 + d;
    };
    const double s0 = grad.dot(dv);
    double alpha = 1.0, dd = 0;
    double s = s0 < 0 ? slope(1.0, &dd) : 0.0;
    if (s0 < 0 && s > 0) {
      double lo = 0, hi = 1;
      for (int k = 0; k < 100; ++k) {
        if (std::abs(s) <= 1e-10 * std::abs(s0)) break;
        if (s > 0) hi = alpha;
        else lo = alpha;
        double next = k == 0 ? s0 / (s0 - s) : dd > 0 ? alpha - s / dd : 0.5 * (lo + hi);
        if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
        alpha = next;
        if (hi - lo < 1e-14) break;
        s = slope(alpha, &dd);
      }
    }
    v += alpha * dv;
  }
  impulses(v, false);
  if (gamma_out) *gamma_out = gamma;
  if (reg_out) {
    reg_out->resize(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) (*reg_out)[i] = rows[i].reg;
  }
  stats.islands = 1;
  stats.largest_island = nb;
  return stats;
}

}  // namespace

SapStats sap_solve(const SapProblem& pb, const SapParams& prm, Eigen::VectorXd& v, std::vector<Vec3d>* gamma_out,
                   std::vector<SapRegularisation>* reg_out) {
  const int nb = int(pb.mass.size());
  if (!prm.islands || nb <= 1) return solve_whole(pb, prm, v, gamma_out, reg_out);
  // Islands by union-find over the contacts between two bodies, each root
  // its smallest body; numbered in the order of their smallest bodies.
  std::vector<int> root(static_cast<std::size_t>(nb));
  for (int b = 0; b < nb; ++b) root[std::size_t(b)] = b;
  auto find = [&](int b) {
    while (root[std::size_t(b)] != b) b = root[std::size_t(b)] = root[std::size_t(root[std::size_t(b)])];
    return b;
  };
  for (const SapContact& c : pb.contacts)
    if (c.a >= 0 && c.b >= 0) {
      const int x = find(c.a), y = find(c.b);
      if (x != y) root[std::size_t(std::max(x, y))] = std::min(x, y);
    }
  std::vector<int> island(static_cast<std::size_t>(nb)), local(static_cast<std::size_t>(nb));
  std::vector<std::vector<int>> members;
  for (int b = 0; b < nb; ++b) {
    const int r = find(b);
    if (r == b) {
      island[std::size_t(b)] = int(members.size());
      members.emplace_back();
    } else {
      island[std::size_t(b)] = island[std::size_t(r)];
    }
    std::vector<int>& m = members[std::size_t(island[std::size_t(b)])];
    local[std::size_t(b)] = int(m.size());
    m.push_back(b);
  }
  std::vector<std::vector<int>> touching(members.size());  // contacts of each island, in order
  for (std::size_t i = 0; i < pb.contacts.size(); ++i) {
    const SapContact& c = pb.contacts[i];
    touching[std::size_t(island[std::size_t(c.a >= 0 ? c.a : c.b)])].push_back(int(i));
  }
  std::vector<int> solved;  // islands with a contact, largest first (the longest tasks start first)
  for (std::size_t k = 0; k < members.size(); ++k)
    if (!touching[k].empty()) solved.push_back(int(k));
  if (solved.size() == 1 && members[std::size_t(solved[0])].size() == std::size_t(nb))
    return solve_whole(pb, prm, v, gamma_out, reg_out);
  std::stable_sort(solved.begin(), solved.end(),
                   [&](int x, int y) { return members[std::size_t(x)].size() > members[std::size_t(y)].size(); });

  // A body touching nothing moves at its free velocity.
  v = pb.v_star;
  if (gamma_out) gamma_out->assign(pb.contacts.size(), Vec3d::Zero());
  if (reg_out) reg_out->assign(pb.contacts.size(), SapRegularisation{});
  std::vector<SapStats> part(solved.size());
  tbb::parallel_for(std::size_t(0), solved.size(), [&](std::size_t s) {
    const std::vector<int>& m = members[std::size_t(solved[s])];
    const std::vector<int>& ci = touching[std::size_t(solved[s])];
    SapProblem sub;
    sub.h = pb.h;
    const Eigen::Index n = Eigen::Index(6 * m.size());
    sub.v_star.resize(n);
    if (pb.v_guess.size() == pb.v_star.size()) sub.v_guess.resize(n);
    for (std::size_t k = 0; k < m.size(); ++k) {
      const std::size_t b = std::size_t(m[k]);
      sub.mass.push_back(pb.mass[b]);
      sub.inertia.push_back(pb.inertia[b]);
      sub.v_star.segment<6>(Eigen::Index(6 * k)) = pb.v_star.segment<6>(Eigen::Index(6 * b));
      if (sub.v_guess.size()) sub.v_guess.segment<6>(Eigen::Index(6 * k)) = pb.v_guess.segment<6>(Eigen::Index(6 * b));
    }
    sub.contacts.reserve(ci.size());
    for (int i : ci) {
      SapContact c = pb.contacts[std::size_t(i)];
      if (c.a >= 0) c.a = local[std::size_t(c.a)];
      if (c.b >= 0) c.b = local[std::size_t(c.b)];
      sub.contacts.push_back(c);
    }
    Eigen::VectorXd sv;
    std::vector<Vec3d> sg;
    std::vector<SapRegularisation> sr;
    part[s] = solve_whole(sub, prm, sv, gamma_out ? &sg : nullptr, reg_out ? &sr : nullptr);
    for (std::size_t k = 0; k < m.size(); ++k)
      v.segment<6>(Eigen::Index(6 * m[k])) = sv.segment<6>(Eigen::Index(6 * k));
    for (std::size_t k = 0; k < ci.size(); ++k) {
      if (gamma_out) (*gamma_out)[std::size_t(ci[k])] = sg[k];
      if (reg_out) (*reg_out)[std::size_t(ci[k])] = sr[k];
    }
  });
  SapStats stats;
  stats.converged = true;
  for (const SapStats& p : part) {
    stats.iterations = std::max(stats.iterations, p.iterations);
    stats.converged = stats.converged && p.converged;
    stats.residual = std::max(stats.residual, p.residual);
    stats.line_search_steps += p.line_search_steps;
    stats.largest_island = std::max(stats.largest_island, p.largest_island);
  }
  stats.islands = int(solved.size());
  return stats;
}

}  // namespace eddy
