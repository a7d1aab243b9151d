// Projective Dynamics (core/pd): the projections, the weights' small-strain
// limit, the local-global iteration's descent and fixed point (against a
// Newton solve of the same energy), momentum, threads and the two global
// methods against each other.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <cstdio>
#include <random>

#include "eddy/core/cpu_executor.h"
#include "eddy/core/pd/pd.h"
#include "eddy/core/pd/projection.h"
#include "eddy/core/rigid/bodies.h"
#include "pd_scenes.h"

namespace eddy {
namespace {

using Mat32 = Eigen::Matrix<double, 3, 2>;

Eigen::Matrix3d random_rotation(std::mt19937& rng) {
  std::normal_distribution<double> n;
  return Eigen::Quaterniond(n(rng), n(rng), n(rng), n(rng)).normalized().toRotationMatrix();
}


Collider box_collider(const Vec3f& c, const Vec3f& half) {
  Collider b;
  b.type = ShapeType::Box;
  b.center = c;
  b.size = half;
  return b;
}

// A square cloth of n x n quads, side `side`, in the plane y = height.
Mesh square_cloth(int n, double side, double height) {
  return grid_mesh(vec3(0.0f, float(height), 0.0f), vec3(0.0f, 0.0f, float(side)), vec3(float(side), 0.0f, 0.0f), n, n);
}

SoftBodies soft_cube(double side, double cell, const SoftMaterial& mat) {
  const Vec3f c = vec3(0.0f, float(side / 2), 0.0f), half = vec3(float(side / 2));
  return make_soft_body(box_mesh(c, half), box_collider(c, half), cell, mat, "cube");
}

// A triangle's deformation gradient: the rest frame's [I; 0] plus entries
// uniform in [-spread, spread].
Mat32 random_triangle_gradient(std::mt19937& rng, double spread) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Mat32 F;
  F << 1 + spread * u(rng), spread * u(rng), spread * u(rng), 1 + spread * u(rng), spread * u(rng), spread * u(rng);
  return F;
}

// The projections' own SVD (projection.h, for the device too) against
// Eigen's JacobiSVD: F rebuilt to round-off, U and V proper rotations, the
// singular values Eigen's with the last signed as det F. Random, inverted,
// nearly flat, collapsed onto a line, and repeated-value matrices.
TEST(PdProjection, SignedSvdMatchesEigen) {
  std::mt19937 rng(13);
  std::uniform_real_distribution<double> u(0.2, 2.0);
  for (int trial = 0; trial < 400; ++trial) {
    Eigen::Vector3d sv(u(rng), u(rng), u(rng));
    if (trial % 5 == 1) sv(2) = -sv(2);         // inverted
    if (trial % 5 == 2) sv(2) = 1e-9;           // nearly flat
    if (trial % 5 == 3) sv(1) = sv(2) = 0;      // a line
    if (trial % 5 == 4) sv(1) = sv(0);          // a repeated value
    const Eigen::Matrix3d F = random_rotation(rng) * sv.asDiagonal() * random_rotation(rng);
    Eigen::Matrix<double, 3, 3, Eigen::RowMajor> Fr = F, U, V;
    Eigen::Vector3d s;
    pd::signed_svd<3>(Fr.data(), U.data(), s.data(), V.data());
    const double scale = F.norm();
    EXPECT_NEAR((U * s.asDiagonal() * V.transpose() - F).norm(), 0.0, 1e-13 * scale) << trial;
    EXPECT_NEAR((U.transpose() * U - Eigen::Matrix3d::Identity()).norm(), 0.0, 1e-13) << trial;
    EXPECT_NEAR((V.transpose() * V - Eigen::Matrix3d::Identity()).norm(), 0.0, 1e-13) << trial;
    EXPECT_NEAR(U.determinant(), 1.0, 1e-12) << trial;
    EXPECT_NEAR(V.determinant(), 1.0, 1e-12) << trial;
    const Eigen::Vector3d want = Eigen::JacobiSVD<Eigen::Matrix3d>(F).singularValues();
    EXPECT_NEAR(s(0), want(0), 1e-13 * scale) << trial;
    EXPECT_NEAR(s(1), want(1), 1e-13 * scale) << trial;
    EXPECT_NEAR(std::abs(s(2)), want(2), 1e-13 * scale) << trial;
    if (std::abs(F.determinant()) > 1e-6) {
      EXPECT_EQ(s(2) < 0, F.determinant() < 0) << trial;
    }
  }
}

TEST(PdProjection, StrainGivesTheNearestRotation) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-0.3, 0.3);
  for (int trial = 0; trial < 20; ++trial) {
    Eigen::Matrix3d F = random_rotation(rng);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) F(i, j) += u(rng);
    const Eigen::Matrix3d R = project_strain(F, 1.0, 1.0);
    EXPECT_NEAR((R.transpose() * R - Eigen::Matrix3d::Identity()).norm(), 0.0, 1e-12);
    EXPECT_NEAR(R.determinant(), 1.0, 1e-12);
    // No rotation nearby is nearer.
    for (int k = 0; k < 50; ++k) {
      const Eigen::Vector3d axis(u(rng), u(rng), u(rng));
      const Eigen::Matrix3d Q = Eigen::AngleAxisd(0.05 * axis.norm(), axis.normalized()).toRotationMatrix() * R;
      EXPECT_GE((F - Q).norm(), (F - R).norm() - 1e-12);
    }
  }
  // An inverted element goes to a rotation (not a reflection).
  const Eigen::Matrix3d inverted = Eigen::Vector3d(1.0, 1.0, -0.5).asDiagonal();
  EXPECT_NEAR(project_strain(inverted, 1.0, 1.0).determinant(), 1.0, 1e-12);
  // Strain limits: stretches inside [0.9, 1.1] are kept.
  const Eigen::Matrix3d mild = Eigen::Vector3d(1.05, 0.95, 1.0).asDiagonal();
  EXPECT_NEAR((project_strain(mild, 0.9, 1.1) - mild).norm(), 0.0, 1e-12);
}

TEST(PdProjection, VolumeMeetsTheFirstOrderConditions) {
  // P nearest F on det = 1: F - P is parallel to the gradient of det at P,
  // its cofactor matrix.
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(0.6, 1.5);
  for (int trial = 0; trial < 20; ++trial) {
    const Eigen::Matrix3d F = random_rotation(rng) * Eigen::Vector3d(u(rng), u(rng), u(rng)).asDiagonal() *
                              random_rotation(rng);
    const Eigen::Matrix3d P = project_volume(F);
    EXPECT_NEAR(P.determinant(), 1.0, 1e-12);
    const Eigen::Matrix3d cof = P.determinant() * P.inverse().transpose();
    const Eigen::Matrix3d D = F - P;
    const double l = D.cwiseProduct(cof).sum() / cof.squaredNorm();
    EXPECT_NEAR((D - l * cof).norm(), 0.0, 1e-10 * (1 + D.norm()));
  }
  Mat32 T;
  T << 1.3, 0.1, 0.2, 0.8, -0.1, 0.3;
  const Mat32 A = project_area_2d(T);
  EXPECT_NEAR(std::sqrt((A.transpose() * A).determinant()), 1.0, 1e-12);  // the product of its singular values
}

// The area projection (cloth's volume term) against a slow, obvious
// reference: the nearest point (s, 1/s) of the hyperbola to F's singular
// values (a, b), found by a dense scan and golden-section refinement of
// (s - a)^2 + (1/s - b)^2. Stretched, squashed, sheared and nearly
// collapsed triangles, as the closed-form Newton step and its general
// fallback each take some.
TEST(PdProjection, AreaProjectionIsTheNearestUnitAreaStretch) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 400; ++trial) {
    const Mat32 F = random_triangle_gradient(rng, trial < 200 ? 0.1 : 0.9);
    const Eigen::SelfAdjointEigenSolver<Eigen::Matrix2d> ef(F.transpose() * F);
    const double a = std::sqrt(std::max(0.0, ef.eigenvalues()(1))), b = std::sqrt(std::max(0.0, ef.eigenvalues()(0)));
    auto f = [&](double x) { return (x - a) * (x - a) + (1 / x - b) * (1 / x - b); };
    double best = 1;
    for (double x = 0.05; x < 20; x *= 1.001)
      if (f(x) < f(best)) best = x;
    double lo = best / 1.001, hi = best * 1.001;
    for (int it = 0; it < 200; ++it) {
      const double m1 = lo + (hi - lo) * 0.381966, m2 = hi - (hi - lo) * 0.381966;
      (f(m1) < f(m2) ? hi : lo) = f(m1) < f(m2) ? m2 : m1;
    }
    const Mat32 P = project_area_2d(F);
    const Eigen::SelfAdjointEigenSolver<Eigen::Matrix2d> ep(P.transpose() * P);
    const double s1 = std::sqrt(ep.eigenvalues()(1)), s2 = std::sqrt(ep.eigenvalues()(0));
    EXPECT_NEAR(s1 * s2, 1.0, 1e-12) << trial;
    EXPECT_NEAR(s1, 0.5 * (lo + hi), 1e-7 * s1) << trial << ": singular values " << a << ", " << b;
    // P keeps F's singular vectors: F - P is symmetric in their frame (P^T F is symmetric).
    const Eigen::Matrix2d PtF = P.transpose() * F;
    EXPECT_NEAR(PtF(0, 1), PtF(1, 0), 1e-10) << trial;
  }
}

// A triangle's strain projection (with and without strain limits) against
// the obvious construction: Eigen's SVD of F, the stretches clamped, P = U
// diag(t) V^T. Ordinary, strongly sheared and nearly flat triangles (these
// take the general path, the others the lanes' closed form).
TEST(PdProjection, TriangleStrainIsTheNearestLimitedStretch) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int trial = 0; trial < 300; ++trial) {
    Mat32 F = random_triangle_gradient(rng, trial < 100 ? 0.1 : 0.8);
    if (trial % 10 == 0) F.col(1) = (1 + 1e-9 * u(rng)) * F.col(0);  // nearly flat
    const double lo = trial % 2 ? 0.9 : 1.0, hi = trial % 2 ? 1.1 : 1.0;
    const Eigen::JacobiSVD<Mat32> svd(F, Eigen::ComputeThinU | Eigen::ComputeThinV);
    const Eigen::Vector2d t = svd.singularValues().cwiseMax(lo).cwiseMin(hi);
    const Mat32 P = project_strain_2d(F, lo, hi);
    if (trial % 10 != 0) {
      const Mat32 want = svd.matrixU() * t.asDiagonal() * svd.matrixV().transpose();
      EXPECT_NEAR((P - want).norm(), 0.0, 1e-9) << trial;
    } else {
      // Flat: U's second column is round-off, any normal to the first will
      // do. P keeps the first singular pair and takes the clamped stretches.
      EXPECT_NEAR((P * svd.matrixV().col(0) - t(0) * svd.matrixU().col(0)).norm(), 0.0, 1e-9) << trial;
      const Eigen::JacobiSVD<Mat32> sp(P);
      EXPECT_NEAR((sp.singularValues() - t).norm(), 0.0, 1e-9) << trial;
    }
  }
}

// The volume projection of a tetrahedron against a slow reference: the
// nearest (s1, s2, 1 / (s1 s2)) to F's singular values, by a coarse scan
// of (s1, s2) and then shrinking coordinate searches. Small and large
// strains, and a third of the trials stretched about 2 and 1.6 times with the
// third 0.8, where the nearest point shrinks the third below half its
// stretch (the old solver's walk onto the set failed 15 of those 20).
TEST(PdProjection, VolumeProjectionIsTheNearestUnitVolumeStretch) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int trial = 0; trial < 60; ++trial) {
    const double spread = trial < 20 ? 0.1 : 0.6;
    Eigen::Vector3d sv(1 + spread * u(rng), 1 + spread * u(rng), 1 + spread * u(rng));
    if (trial >= 40) sv = Eigen::Vector3d(2.0 + 0.3 * u(rng), 1.6 + 0.2 * u(rng), 0.8 + 0.2 * u(rng));
    const Eigen::Matrix3d F = random_rotation(rng) * sv.asDiagonal() * random_rotation(rng);
    const Eigen::JacobiSVD<Eigen::Matrix3d> svd(F);
    const Eigen::Vector3d sg = svd.singularValues();
    auto cost = [&](double x, double y) {
      const double z = 1 / (x * y);
      return (x - sg(0)) * (x - sg(0)) + (y - sg(1)) * (y - sg(1)) + (z - sg(2)) * (z - sg(2));
    };
    double bx = 1, by = 1;
    for (double x = 0.2; x < 5; x *= 1.01)
      for (double y = 0.2; y < 5; y *= 1.01)
        if (cost(x, y) < cost(bx, by)) bx = x, by = y;
    for (double h = 0.01; h > 1e-13; h *= 0.5)
      for (int rep = 0; rep < 4; ++rep)
        for (const auto& [dx, dy] : {std::pair{1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, 1}, {-1, -1}, {1, -1}, {-1, 1}})
          if (cost(bx * (1 + h * dx), by * (1 + h * dy)) < cost(bx, by)) bx *= 1 + h * dx, by *= 1 + h * dy;
    const Eigen::Matrix3d P = project_volume(F);
    EXPECT_NEAR(P.determinant(), 1.0, 1e-12) << trial;
    const Eigen::Vector3d sp = Eigen::JacobiSVD<Eigen::Matrix3d>(P).singularValues();
    EXPECT_NEAR(sp(0), bx, 1e-6) << trial << ": singular values " << sg.transpose();
    EXPECT_NEAR(sp(1), by, 1e-6) << trial << ": singular values " << sg.transpose();
  }
}

// The constraint energy of one element at F = I + eps (symmetric, small)
// against linear elasticity's mu ||eps||^2 + lambda/2 tr(eps)^2 per volume.
TEST(PdWeights, MatchLinearElasticityAtSmallStrain) {
  SoftMaterial mat;
  mat.young_modulus = 1e6;
  mat.poisson_ratio = 0.3;
  const double E = mat.young_modulus, nu = mat.poisson_ratio;
  const double mu = E / (2 * (1 + nu)), lambda = E * nu / ((1 + nu) * (1 - 2 * nu));
  Eigen::Matrix3d eps;
  eps << 1.0, 0.3, -0.2, 0.3, -0.5, 0.4, -0.2, 0.4, 0.7;
  eps *= 1e-4;
  {
    const SoftBodies cube = soft_cube(1.0, 1.0, mat);  // one cell: six tetrahedra of volume 1/6
    PdConstraints c;
    c.build(cube, 1.0);
    PdMatrix x(Eigen::Index(cube.size()), 3);
    for (std::size_t i = 0; i < cube.size(); ++i) x.row(Eigen::Index(i)) = ((Eigen::Matrix3d::Identity() + eps) * cube.rest[i]).transpose();
    const double expected = (mu * eps.squaredNorm() + 0.5 * lambda * eps.trace() * eps.trace()) * 1.0;
    EXPECT_NEAR(c.energy(x) / expected, 1.0, 2e-3);
  }
  {
    // Cloth in the x-z plane, in-plane strain, plane stress.
    mat.thickness = 1e-3;
    const SoftBodies cloth = make_cloth(square_cloth(4, 1.0, 0.0), mat, "cloth");
    PdConstraints c;
    c.build(cloth, 1.0);
    Eigen::Matrix3d e2 = Eigen::Matrix3d::Zero();
    e2(0, 0) = 1e-4, e2(2, 2) = -0.4e-4, e2(0, 2) = e2(2, 0) = 0.3e-4;
    PdMatrix x(Eigen::Index(cloth.size()), 3);
    for (std::size_t i = 0; i < cloth.size(); ++i) x.row(Eigen::Index(i)) = ((Eigen::Matrix3d::Identity() + e2) * cloth.rest[i]).transpose();
    const double lambda2 = 2 * mu * lambda / (lambda + 2 * mu);
    const double expected = (mu * e2.squaredNorm() + 0.5 * lambda2 * e2.trace() * e2.trace()) * 1.0 * mat.thickness;
    EXPECT_NEAR(c.energy(x) / expected, 1.0, 2e-3);
  }
}

TEST(PdBodies, MassesAndEmbedding) {
  SoftMaterial mat;
  mat.density = 800;
  const SoftBodies cube = soft_cube(0.2, 0.05, mat);
  EXPECT_EQ(cube.tets.size(), 4u * 4 * 4 * 6);
  EXPECT_EQ(cube.size(), 5u * 5 * 5);
  EXPECT_NEAR(cube.total_mass(), 800 * 0.008, 1e-6);  // the volume of a float mesh
  // The surface at rest is the input mesh.
  const Mesh m = cube.deformed_surface();
  const Mesh in = box_mesh(vec3(0.0f, 0.1f, 0.0f), vec3(0.1f));
  for (std::size_t i = 0; i < m.points.size(); ++i) EXPECT_LT(length(m.points[i] - in.points[i]), 1e-6f);
  const SoftBodies cloth = make_cloth(square_cloth(10, 1.0, 0.0), mat, "cloth");
  EXPECT_NEAR(cloth.total_mass(), 800 * mat.thickness * 1.0, 1e-12);
  // A signed distance that has the surface nowhere inside it: no cell.
  EXPECT_THROW(make_soft_body(box_mesh(vec3(0.0f), vec3(0.01f)), box_collider(vec3(5.0f), vec3(0.01f)), 0.005, mat, "elsewhere"),
               Error);
}

// One implicit-Euler step of a soft cube thrown spinning, no contact.
struct Thrown {
  SoftBodies s;
  Thrown(double nu, int seed) {
    SoftMaterial mat;
    mat.young_modulus = 5e4;
    mat.poisson_ratio = nu;
    s = soft_cube(0.1, 0.05, mat);
    std::mt19937 rng{uint32_t(seed)};
    std::normal_distribution<double> n;
    for (auto& v : s.v) v = Vec3d(n(rng), n(rng), n(rng));
  }
};

PdParams step_params(int iterations) {
  PdParams p;
  p.gravity = vec3(0.0f, -9.81f, 0.0f);
  p.time_step = 0.01f;
  p.iterations = iterations;
  return p;
}

// The local step over a whole cloth and a soft cube, triangles and
// tetrahedra four at a time (AVX2 where the CPU has it, and with SIMD
// switched off), gives every constraint the bits its one-by-one projection
// gives: moderately deformed elements, a collapsed triangle (the general
// path) and inverted tetrahedra.
TEST(PdConstraints, BatchedLocalStepGivesTheBitsOfOneByOne) {
  SoftMaterial mat;
  mat.bend_stiffness = 1e-3;
  mat.strain_min = 0.95;  // strain limits on the cube's tetrahedra
  mat.strain_max = 1.05;
  for (bool cloth : {true, false}) {
    const SoftBodies s = cloth ? make_cloth(square_cloth(9, 1.0, 0.0), mat, "cloth") : soft_cube(0.2, 0.05, mat);
    PdConstraints c;
    c.build(s, 1e4);
    std::mt19937 rng(3);
    std::normal_distribution<double> n(0.0, cloth ? 0.02 : 0.015);
    PdMatrix x(Eigen::Index(s.size()), 3);
    for (std::size_t i = 0; i < s.size(); ++i)
      x.row(Eigen::Index(i)) = (s.rest[i] + Vec3d(n(rng), n(rng), n(rng))).transpose();
    if (cloth) {
      x.row(7) = x.row(8);  // one collapsed triangle at least (the general path)
    } else {
      x.row(5) += Eigen::RowVector3d(0.0, -0.12, 0.0);  // some tetrahedra turned inside out
      int inverted = 0;
      for (const auto& T : s.tets) {
        Eigen::Matrix3d D, R;
        for (int j = 0; j < 3; ++j) {
          D.col(j) = (x.row(T[std::size_t(j) + 1]) - x.row(T[0])).transpose();
          R.col(j) = s.rest[std::size_t(T[std::size_t(j) + 1])] - s.rest[std::size_t(T[0])];
        }
        inverted += D.determinant() * R.determinant() < 0;
      }
      EXPECT_GT(inverted, 0);
    }
    PdMatrix one(Eigen::Index(c.rows()), 3);
    for (std::size_t k = 0; k < c.size(); ++k) c.project(k, x, one);
    const bool was = CpuExecutor::simd_enabled();
    for (bool simd : {true, false}) {
      CpuExecutor::set_simd(simd);
      PdMatrix batched = PdMatrix::Constant(Eigen::Index(c.rows()), 3, std::nan(""));
      pd_local(CpuExecutor(2), c.view(), x.data(), batched.data());
      for (Eigen::Index r = 0; r < batched.rows(); ++r)
        for (int k = 0; k < 3; ++k)
          ASSERT_EQ(batched(r, k), one(r, k)) << (cloth ? "cloth" : "cube") << ", row " << r << ", simd " << simd;
    }
    CpuExecutor::set_simd(was);
  }
}

TEST(PdIterations, LowerTheObjectiveMonotonically) {
  // Thrown in free space, and thrown down onto a floor it touches (contacts
  // in the objective, slots on nodes that do not touch).
  for (bool floor : {false, true}) {
    Thrown t(0.3, 1);
    for (auto& v : t.s.v) v.y() -= floor ? 2.0 : 0.0;
    PdSolver solver(step_params(40), 1);
    solver.load(t.s);
    Collider plane;
    if (floor) solver.set_colliders({plane});
    std::vector<double> F;
    solver.set_iteration_probe([&](int, const PdMatrix& x, const PdMatrix& y) { F.push_back(solver.system().objective(x, y)); });
    solver.step(0.01f, 0.0f);
    if (floor) {
      EXPECT_GT(solver.system().contacts().size(), 4u);
    }
    ASSERT_EQ(F.size(), 40u);
    for (std::size_t k = 1; k < F.size(); ++k) EXPECT_LE(F[k], F[k - 1] * (1 + 1e-12)) << "iteration " << k;
    EXPECT_LT(F.back(), 0.9 * F.front());
  }
}

// Newton's method on the same objective: gradient M/h^2 (x - y) + G^T W (G x
// - P(G x)), Hessian by central differences of the gradient, shifted by a
// multiple of the identity where it is not positive definite (the energy is
// not convex far from rest), backtracking.
PdMatrix newton(const PdSystem& sys, const PdConstraints& c, const std::vector<double>& mass, const PdMatrix& y, double h) {
  const Eigen::SparseMatrix<double, Eigen::RowMajor> G = c.matrix(mass.size());
  const std::vector<double> w = c.row_weights();
  const Eigen::Index n = Eigen::Index(mass.size()), dof = 3 * n;
  auto gradient = [&](const Eigen::VectorXd& q) {
    PdMatrix x = Eigen::Map<const PdMatrix>(q.data(), n, 3);
    PdMatrix p(Eigen::Index(c.rows()), 3);
    for (std::size_t k = 0; k < c.size(); ++k) c.project(k, x, p);
    PdMatrix r = G * x - p;
    for (Eigen::Index i = 0; i < r.rows(); ++i) r.row(i) *= w[std::size_t(i)];
    PdMatrix g = G.transpose() * r;
    for (Eigen::Index i = 0; i < n; ++i) g.row(i) += mass[std::size_t(i)] / (h * h) * (x.row(i) - y.row(i));
    return Eigen::VectorXd(Eigen::Map<const Eigen::VectorXd>(g.data(), dof));
  };
  auto objective = [&](const Eigen::VectorXd& q) { return sys.objective(Eigen::Map<const PdMatrix>(q.data(), n, 3), y); };
  Eigen::VectorXd q = Eigen::Map<const Eigen::VectorXd>(PdMatrix(y).data(), dof);
  for (int it = 0; it < 200; ++it) {
    const Eigen::VectorXd g = gradient(q);
    if (g.norm() < 1e-11) break;
    Eigen::MatrixXd H(dof, dof);
    const double e = 1e-6;
    for (Eigen::Index j = 0; j < dof; ++j) {
      Eigen::VectorXd a = q, b = q;
      a(j) += e, b(j) -= e;
      H.col(j) = (gradient(a) - gradient(b)) / (2 * e);
    }
    H = 0.5 * (H + H.transpose());
    double shift = 0;
    Eigen::VectorXd d;
    for (;;) {
      Eigen::LLT<Eigen::MatrixXd> llt(H + shift * Eigen::MatrixXd::Identity(dof, dof));
      if (llt.info() == Eigen::Success) {
        d = -llt.solve(g);
        break;
      }
      shift = std::max(2 * shift, 1e-6 * H.diagonal().cwiseAbs().maxCoeff());
    }
    double s = 1, f0 = objective(q);
    while (s > 1e-8 && objective(q + s * d) > f0 + 1e-4 * s * g.dot(d)) s *= 0.5;
    q += s * d;
  }
  return Eigen::Map<const PdMatrix>(q.data(), n, 3);
}

TEST(PdIterations, ConvergeToTheImplicitEulerMinimiser) {
  for (double nu : {0.0, 0.3}) {
    Thrown t(nu, 2);
    PdSolver solver(step_params(3000), 1);
    solver.load(t.s);
    PdMatrix last, y;
    solver.set_iteration_probe([&](int, const PdMatrix& x, const PdMatrix& yy) {
      last = x;
      y = yy;
    });
    const std::vector<Vec3d> x0 = t.s.x;
    solver.step(0.01f, 0.0f);
    const PdMatrix ref = newton(solver.system(), solver.constraints(), t.s.mass, y, 0.01);
    double moved = 0;
    for (std::size_t i = 0; i < x0.size(); ++i) moved += (ref.row(Eigen::Index(i)).transpose() - x0[i]).squaredNorm();
    EXPECT_LT((last - ref).norm(), 1e-6 * std::sqrt(moved)) << "nu " << nu << " F(pd) " << solver.system().objective(last, y) << " F(newton) " << solver.system().objective(ref, y);
  }
}

TEST(PdSolver, ConservesMomentumWithoutGravityOrContact) {
  SoftMaterial mat;
  mat.young_modulus = 1e6;
  mat.bend_stiffness = 1e-4;
  SoftBodies cloth = make_cloth(square_cloth(8, 0.5, 0.0), mat, "cloth");
  std::mt19937 rng(7);
  std::normal_distribution<double> n;
  for (auto& v : cloth.v) v = Vec3d(n(rng), n(rng), n(rng));
  PdParams p = step_params(10);
  p.gravity = vec3(0.0f);
  PdSolver solver(p, 1);
  solver.load(cloth);
  const Vec3d P0 = cloth.momentum();
  double scale = 0;
  for (std::size_t i = 0; i < cloth.size(); ++i) scale += cloth.mass[i] * cloth.v[i].norm();
  for (int k = 0; k < 20; ++k) solver.step(0.01f, float(k) * 0.01f);
  EXPECT_LT((solver.state().momentum() - P0).norm(), 1e-10 * scale);
}

TEST(PdSolver, SameResultOnAnyNumberOfThreads) {
  Thrown t(0.3, 4);
  Collider floor;  // the cube lands on a floor just below it
  floor.center = vec3(0.0f, -0.01f, 0.0f);
  floor.friction = 0.5f;
  std::vector<SoftBodies> out;
  for (int threads : {1, 2}) {
    PdSolver solver(step_params(10), threads);
    solver.load(t.s);
    solver.set_colliders({floor});
    for (int k = 0; k < 10; ++k) solver.step(0.01f, float(k) * 0.01f);
    out.push_back(solver.state());
  }
  for (std::size_t i = 0; i < out[0].size(); ++i) {
    EXPECT_EQ(out[0].x[i], out[1].x[i]);
    EXPECT_EQ(out[0].v[i], out[1].v[i]);
  }
  // A cloth falling onto a box by Chebyshev (the batched local step, the
  // fused Jacobi sweep, contact slots in the right-hand side).
  SoftMaterial mat;
  mat.bend_stiffness = 1e-3;
  const SoftBodies cloth = make_cloth(square_cloth(20, 1.0, 0.05), mat, "cloth");
  PdParams p = step_params(10);
  p.method = PdMethod::Chebyshev;
  std::vector<SoftBodies> draped;
  for (int threads : {1, 2}) {
    PdSolver solver(p, threads);
    solver.load(cloth);
    solver.set_colliders({box_collider(vec3(0.5f, -0.1f, 0.5f), vec3(0.2f, 0.1f, 0.2f))});
    for (int k = 0; k < 10; ++k) solver.step(0.01f, float(k) * 0.01f);
    EXPECT_GT(solver.system().contacts().size(), 10u);
    draped.push_back(solver.state());
  }
  for (std::size_t i = 0; i < cloth.size(); ++i) {
    EXPECT_EQ(draped[0].x[i], draped[1].x[i]);
    EXPECT_EQ(draped[0].v[i], draped[1].v[i]);
  }
}

TEST(PdSolver, ChebyshevAgreesWithCholesky) {
  Thrown t(0.3, 6);
  std::vector<PdMatrix> end;
  for (PdMethod m : {PdMethod::Cholesky, PdMethod::Chebyshev}) {
    PdParams p = step_params(m == PdMethod::Cholesky ? 300 : 3000);
    p.method = m;
    p.chebyshev_rho = 0.99f;
    PdSolver solver(p, 2);
    solver.load(t.s);
    PdMatrix last;
    solver.set_iteration_probe([&](int, const PdMatrix& x, const PdMatrix&) { last = x; });
    solver.step(0.01f, 0.0f);
    end.push_back(last);
  }
  double moved = 0;
  for (std::size_t i = 0; i < t.s.size(); ++i) moved += (end[0].row(Eigen::Index(i)).transpose() - t.s.x[i]).squaredNorm();
  EXPECT_LT((end[0] - end[1]).norm(), 1e-6 * std::sqrt(moved));
}

TEST(PdSolver, PinnedClothHangsStill) {
  SoftMaterial mat;
  mat.young_modulus = 1e6;
  mat.thickness = 1e-3;
  mat.density = 300;
  mat.bend_stiffness = 1e-5;
  SoftBodies cloth = make_cloth(square_cloth(12, 0.5, 1.0), mat, "cloth");
  // Two corners (x = -0.25, z = -0.25 and +0.25).
  EXPECT_EQ(cloth.pin_box(0, Vec3d(-0.26, 0.9, -0.26), Vec3d(-0.24, 1.1, -0.24)), 1u);
  EXPECT_EQ(cloth.pin_box(0, Vec3d(-0.26, 0.9, 0.24), Vec3d(-0.24, 1.1, 0.26)), 1u);
  PdParams p = step_params(10);
  p.time_step = 1.0f / 120;
  p.damping = 2.0f;  // the swing from the release decays as exp(-2 t)
  PdSolver solver(p, 2);
  solver.load(cloth);
  auto centre = [&] {
    const SoftBodies& s = solver.state();
    Vec3d c = Vec3d::Zero();
    for (std::size_t i = 0; i < s.size(); ++i) c += s.mass[i] * s.x[i];
    return Vec3d(c / s.total_mass());
  };
  double t = 0;
  const double h = p.time_step;
  for (; t < 6.0; t += h) solver.step(float(h), float(t));
  const Vec3d c4 = centre();
  for (; t < 7.0; t += h) solver.step(float(h), float(t));
  const Vec3d c5 = centre();
  EXPECT_LT((c5 - c4).norm(), 1e-3);   // hangs still: no drift over the last second (the swing decays as exp(-2 t))
  EXPECT_LT(c5.y(), 0.95);             // and it did fall into a hang
  EXPECT_LT(solver.max_speed(), 0.01f);
  const SoftBodies& s = solver.state();
  for (std::size_t i = 0; i < s.size(); ++i)
    if (s.pinned[i]) {
      EXPECT_LT((s.x[i] - s.pin_target[i]).norm(), 1e-5);
    }
}

}  // namespace
}  // namespace eddy

namespace eddy {
namespace {

// A soft cube sliding on a floor at v0 with Coulomb friction mu stops
// after v0^2 / (2 mu g) (the contacts' sideways hold from iterations that
// stop short is given back: without it, 0.32 m of the 0.73).
TEST(PdSolver, SlidesAsCoulombFrictionSays) {
  SoftMaterial mat;
  mat.young_modulus = 1e5;
  mat.friction = 0.1;
  SoftBodies cube = soft_cube(0.1, 0.025, mat);
  for (auto& v : cube.v) v = Vec3d(1.2, 0, 0);
  PdParams p;
  p.collision_margin = 0.0f;
  PdSolver solver(p, 2);
  solver.load(cube);
  Collider floor;
  floor.friction = 0.1f;
  solver.set_colliders({floor});
  const double h = p.time_step;
  for (int k = 0; k < int(1.5 / h); ++k) solver.step(float(h), float(k * h));
  double cx = 0;
  for (const Vec3d& x : solver.state().x) cx += x.x();
  cx /= double(solver.size());
  const double expected = 1.2 * 1.2 / (2 * 0.1 * 9.81);
  std::printf("slid %.4f m, Coulomb %.4f m\n", cx, expected);
  EXPECT_NEAR(cx / expected, 1.0, 0.05);
  EXPECT_LT(solver.max_speed(), 0.01f);
}

}  // namespace
}  // namespace eddy

namespace eddy {
namespace {

// Nodes attached to a collider move with it: a cloth's edge on a bar that
// slides and turns carries the edge exactly where the bar's motion takes it.
// The device's iterations (PdIterationsOn, as gpu/src/pd_cuda.cu runs them
// on CudaExecutor) on CpuExecutor: with their own copies of the system's
// arrays, refreshed only where PdSolver says they changed, they give the bits
// of the solver's own iterations. A cloth attached to a moving bar (targets
// change every step) falls onto a box (contacts every step, slots handed
// out as points arrive: matrix changes), and a jelly cube (tetrahedra) falls
// beside it onto the floor.
TEST(PdSolver, DeviceIterationsGiveTheBitsOfTheSolversOwn) {
  const test::SlidingBarDrape scene = test::sliding_bar_drape(12);
  EXPECT_EQ(std::count_if(scene.cloth.attach.begin(), scene.cloth.attach.end(), [](int32_t a) { return a >= 0; }), 13);
  Thrown jelly(0.3, 2);
  std::vector<SoftBodies> out;
  for (bool device : {false, true}) {
    PdParams p = step_params(10);
    p.time_step = 0.005f;
    p.method = PdMethod::Chebyshev;
    PdSolver cloth_solver(p, 2), jelly_solver(p, 2);
    if (device) {
      cloth_solver.set_device_iterations(std::make_unique<PdIterationsOn<CpuExecutor>>(CpuExecutor(2)));
      jelly_solver.set_device_iterations(std::make_unique<PdIterationsOn<CpuExecutor>>(CpuExecutor(2)));
    }
    cloth_solver.load(scene.cloth);
    cloth_solver.set_colliders({scene.box});
    cloth_solver.set_attach_colliders({scene.bar});
    jelly_solver.load(jelly.s);
    jelly_solver.set_colliders({Collider{}});
    int refactored = 0;
    for (int k = 0; k < 60; ++k) {
      cloth_solver.step(0.005f, float(k) * 0.005f);
      jelly_solver.step(0.005f, float(k) * 0.005f);
      refactored = cloth_solver.system().refactorisations();
    }
    EXPECT_GT(cloth_solver.system().contacts().size(), 10u);
    EXPECT_GT(refactored + int(cloth_solver.system().slot_proxies().size()), 0);
    EXPECT_GT(jelly_solver.system().contacts().size(), 4u);
    EXPECT_STREQ(cloth_solver.backend(), device ? "cuda" : "cpu");
    out.push_back(cloth_solver.state());
    out.push_back(jelly_solver.state());
  }
  for (int o = 0; o < 2; ++o)
    for (std::size_t i = 0; i < out[std::size_t(o)].size(); ++i) {
      ASSERT_EQ(out[std::size_t(o)].x[i], out[std::size_t(o) + 2].x[i]) << "object " << o << ", node " << i;
      ASSERT_EQ(out[std::size_t(o)].v[i], out[std::size_t(o) + 2].v[i]) << "object " << o << ", node " << i;
    }
  // The device runs Chebyshev only: Cholesky factors on the CPU.
  PdSolver cholesky(step_params(10), 1);
  EXPECT_THROW(cholesky.set_device_iterations(std::make_unique<PdIterationsOn<CpuExecutor>>()), Error);
}

TEST(PdSolver, AttachedNodesMoveWithTheirCollider) {
  SoftMaterial mat;
  mat.young_modulus = 1e6;
  SoftBodies cloth = make_cloth(square_cloth(8, 0.4, 1.0), mat, "cloth");
  Collider bar;  // a capsule along z through the cloth's edge x = -0.2
  bar.type = ShapeType::Capsule;
  bar.center = vec3(-0.2f, 1.0f, 0.0f);
  bar.rotation = rotation_from_euler_degrees(vec3(90.0f, 0.0f, 0.0f));
  bar.size = vec3(0.01f, 0.3f, 0.0f);
  bar.velocity = vec3(0.5f, 0.2f, 0.0f);
  bar.angular_velocity = vec3(0.0f, 0.0f, 1.0f);
  EXPECT_EQ(cloth.attach_to({bar}, 0.005, 0.0f), 9u);  // the edge's nine nodes
  const SoftBodies start = cloth;
  PdParams p;
  PdSolver solver(p, 2);
  solver.load(cloth);
  solver.set_attach_colliders({bar});
  const double h = p.time_step;
  const int steps = int(std::lround(1.0 / h));
  for (int k = 0; k < steps; ++k) solver.step(float(h), float(k * h));
  const double t = steps * h;
  const ColliderPose pose = collider_pose(bar, float(t));
  int attached = 0;
  for (std::size_t i = 0; i < cloth.size(); ++i) {
    if (start.attach[i] < 0) continue;
    ++attached;
    const ColliderPose p0 = collider_pose(bar, 0.0f);
    const Vec3f local = mul_transpose(p0.rotation, to_vec3f(start.x[i]) - p0.center);
    const Vec3d expected = to_vec3d(pose.center + pose.rotation * local);
    EXPECT_LT((solver.state().x[i] - expected).norm(), 1e-4) << i;
  }
  EXPECT_EQ(attached, 9);
}

}  // namespace
}  // namespace eddy

namespace eddy {
namespace {

// What the colliders gave a soft cube (reactions, for bodies coupled two
// ways): on a floor, its weight over the step; squeezed between the floor
// and a lid pressed into its top, a push down from the lid and the weight
// plus that push up from the floor.
TEST(PdSolver, ReactionsAccountForTheWeightAndASqueeze) {
  SoftMaterial mat;
  mat.young_modulus = 1e5;
  for (bool lid : {false, true}) {
    PdParams p;
    p.collision_margin = 0.0f;
    p.iterations = 20;
    PdSolver solver(p, 2);
    solver.load(soft_cube(0.1, 0.05, mat));
    Collider floor, top;
    top.type = ShapeType::Box;
    top.center = vec3(0.0f, 0.1f + 0.2f - 0.004f, 0.0f);  // 4 mm into the cube's top
    top.size = vec3(0.2f);
    solver.set_colliders(lid ? std::vector<Collider>{floor, top} : std::vector<Collider>{floor});
    solver.track_reactions(true);
    const double h = p.time_step;
    for (int k = 0; k < 240; ++k) solver.step(float(h), float(k * h));  // 1 s: at rest
    std::vector<ColliderImpulse> r;
    solver.reactions(r);
    const double weight = solver.state().total_mass() * 9.81 * h;  // N s over the step
    ASSERT_EQ(r.size(), lid ? 2u : 1u);
    if (!lid) {
      EXPECT_NEAR(r[0].linear[1] / weight, 1.0, 0.01);
    } else {
      EXPECT_LT(r[1].linear[1], -weight);  // the lid pushes down, harder than the weight
      EXPECT_NEAR((r[0].linear[1] + r[1].linear[1]) / weight, 1.0, 0.05);
    }
  }
}

// A cloth whose mesh has a point no face uses still steps (the point is pinned).
TEST(PdSolver, AClothWithAStrayPointSteps) {
  Mesh m = square_cloth(4, 0.4, 1.0);
  m.points.push_back(vec3(3.0f));
  SoftMaterial mat;
  PdSolver solver(PdParams{}, 1);
  solver.load(make_cloth(m, mat, "cloth"));
  solver.step(0.004f, 0.0f);
  EXPECT_LT((solver.state().x.back() - Vec3d(3, 3, 3)).norm(), 1e-6);  // held by its pin
  EXPECT_LT(solver.state().x[0].y(), 1.0);
}

}  // namespace
}  // namespace eddy
