// Rigid bodies: mass properties against closed-form values and meshes, the
// torque-free rotation's conserved quantities (the Dzhanibekov flip), SAP's
// cone projection against its closed form and its derivative against
// finite differences, and the broad phase against all pairs.
#include <gtest/gtest.h>
#include <tbb/global_control.h>
#include <tbb/info.h>

#include <cmath>
#include <numbers>
#include <random>

#include "eddy/core/cpu_executor.h"
#include "eddy/core/error.h"
#include "eddy/core/rigid/block_cholesky.h"
#include "eddy/core/rigid/contact.h"
#include "eddy/core/rigid/rigid.h"

namespace eddy {
namespace {

constexpr double kPi = std::numbers::pi;

// A closed surface of revolution about y from a profile of rings (y, radius),
// bottom to top, capped by poles below the first ring and above the last.
Mesh revolve(const std::vector<std::pair<double, double>>& rings, double y_bottom, double y_top, int segs) {
  Mesh m;
  m.points.push_back(vec3(0, float(y_bottom), 0));
  for (const auto& [y, r] : rings)
    for (int j = 0; j < segs; ++j) {
      const double ph = 2 * kPi * j / segs;
      m.points.push_back(vec3(float(r * std::cos(ph)), float(y), float(r * std::sin(ph))));
    }
  m.points.push_back(vec3(0, float(y_top), 0));
  const int n = int(rings.size()), top = int(m.points.size()) - 1;
  auto at = [&](int i, int j) { return 1 + i * segs + (j % segs); };
  for (int j = 0; j < segs; ++j) m.triangles.push_back({0, at(0, j), at(0, j + 1)});
  for (int i = 0; i + 1 < n; ++i)
    for (int j = 0; j < segs; ++j) m.quads.push_back({at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1)});
  for (int j = 0; j < segs; ++j) m.triangles.push_back({top, at(n - 1, j + 1), at(n - 1, j)});
  return m;
}

Mesh capsule_mesh(double r, double hh, int rings, int segs) {
  std::vector<std::pair<double, double>> p;
  for (int i = 1; i <= rings; ++i) {  // lower cap, up to the equator
    const double th = 0.5 * kPi * i / rings;
    p.emplace_back(-hh - r * std::cos(th), r * std::sin(th));
  }
  for (int i = 0; i < rings; ++i) {  // upper cap, from the equator
    const double th = 0.5 * kPi * i / rings;
    p.emplace_back(hh + r * std::sin(th), r * std::cos(th));
  }
  return revolve(p, -hh - r, hh + r, segs);
}

Mesh box_mesh(const Vec3d& lo, const Vec3d& hi) {
  Mesh m;
  for (int c = 0; c < 8; ++c)
    m.points.push_back(vec3(float(c & 1 ? hi.x() : lo.x()), float(c & 2 ? hi.y() : lo.y()), float(c & 4 ? hi.z() : lo.z())));
  // Faces wound counter-clockwise seen from outside.
  const int f[6][4] = {{0, 4, 6, 2}, {1, 3, 7, 5}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 2, 3, 1}, {4, 5, 7, 6}};
  for (const auto& q : f) m.quads.push_back({q[0], q[1], q[2], q[3]});
  return m;
}

void expect_mass_near(const MassProperties& a, const MassProperties& b, double rel) {
  EXPECT_NEAR(a.mass, b.mass, rel * b.mass);
  EXPECT_LT((a.com - b.com).norm(), rel * std::cbrt(b.mass / 1000.0));
  EXPECT_LT((a.inertia - b.inertia).norm(), rel * b.inertia.norm()) << a.inertia << "\nvs\n" << b.inertia;
}

TEST(RigidMass, ABoxMeshHasTheBoxFormulasMassCentreAndInertia) {
  const Vec3d lo(1.0, -2.0, 0.5), hi(2.0, 0.0, 3.5);  // edges 1 x 2 x 3, off the origin
  BodyGeometry g;
  g.half = 0.5 * (hi - lo);
  MassProperties box = mass_properties(g, 700.0);
  box.com = 0.5 * (lo + hi);
  EXPECT_DOUBLE_EQ(box.mass, 700.0 * 6.0);
  EXPECT_DOUBLE_EQ(box.inertia(0, 0), box.mass * (4.0 + 9.0) / 12.0);  // m (b^2 + c^2) / 12
  expect_mass_near(mesh_mass_properties(box_mesh(lo, hi), 700.0), box, 1e-6);
}

TEST(RigidMass, SphereAndCapsuleFormulasMatchFineMeshes) {
  BodyGeometry s;
  s.shape = BodyShape::Sphere;
  s.radius = 0.3;
  EXPECT_NEAR(mass_properties(s, 1000).mass, 1000 * 4.0 / 3.0 * kPi * 0.027, 1e-9);
  BodyGeometry c;
  c.shape = BodyShape::Capsule;
  c.radius = 0.2;
  c.half_height = 0.5;
  // A polygonal surface of 512 segments and 2 x 128 rings holds the volume
  // to about (2 pi / 512)^2 / 3, 5e-5; allow 2e-4.
  expect_mass_near(mesh_mass_properties(capsule_mesh(0.3, 0.0, 128, 512), 1000), mass_properties(s, 1000), 2e-4);
  expect_mass_near(mesh_mass_properties(capsule_mesh(0.2, 0.5, 128, 512), 1000), mass_properties(c, 1000), 2e-4);
}

TEST(RigidMass, AnOpenOrInsideOutMeshIsRefused) {
  Mesh m = box_mesh(Vec3d::Zero(), Vec3d::Ones());
  for (auto& q : m.quads) std::swap(q[1], q[3]);
  EXPECT_THROW(mesh_mass_properties(m, 1000), Error);
  Bodies b;
  BodyGeometry g;
  g.half = Vec3d(0.1, 0.0, 0.1);
  try {
    b.add("crate", g, 500, Vec3d::Zero());
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "body 'crate': its size must be positive");
  }
}

// A box modelled off the origin and turned: as a mesh body its centre of
// mass is found, its body frame lies on the box's axes (the inertia there
// diagonal, and in world axes the turned box's), every corner is a surface
// sample, and the sampled distance is the box's.
TEST(RigidMeshBody, ATurnedBoxMeshFindsItsCentreAxesCornersAndDistance) {
  const Vec3d half(0.15, 0.1, 0.05), centre(1.0, 2.0, 3.0);
  const Quatd turn(Eigen::AngleAxisd(0.6, Vec3d(1, 2, 3).normalized()));
  Mesh m = box_mesh(-half, half);
  for (Vec3f& p : m.points) p = to_vec3f(centre + turn * to_vec3d(p));
  const double dx = 0.01;
  const BodyMeshPlacement placed = body_mesh(m, dx);
  EXPECT_LT((placed.center_of_mass - centre).norm(), 1e-6);

  BodyGeometry g;
  g.shape = BodyShape::Mesh;
  g.mesh = placed.shape;
  Bodies b;
  b.add("crate", g, 500.0, centre, placed.axes);
  BodyGeometry solid;
  solid.half = half;
  Bodies ref;
  ref.add("box", solid, 500.0, centre, turn);
  // The mesh's points are floats, rounded to about 2e-7 m this far off the origin.
  EXPECT_NEAR(b.mass[0], 500.0 * 0.3 * 0.2 * 0.1, 1e-5 * b.mass[0]);
  EXPECT_LT((b.inertia_world(0) - ref.inertia_world(0)).norm(), 1e-5 * ref.inertia_world(0).norm());
  // In the body frame the mesh is centred and the inertia diagonal.
  const MassProperties body = mesh_mass_properties(placed.shape->mesh, 500.0);
  EXPECT_LT(body.com.norm(), 1e-6);
  EXPECT_LT((body.inertia - Mat3d(body.inertia.diagonal().asDiagonal())).norm(), 1e-6 * body.inertia.norm());
  // The corners stand among the samples; no two samples share a cell of the spacing.
  const std::vector<Vec3d>& samples = placed.shape->samples;
  for (const Vec3f& corner : placed.shape->mesh.points) {
    double nearest = 1e9;
    for (const Vec3d& s : samples) nearest = std::min(nearest, (s - to_vec3d(corner)).norm());
    EXPECT_LT(nearest, 1e-12);
  }
  EXPECT_GT(samples.size(), 8u);
  EXPECT_DOUBLE_EQ(placed.shape->spacing, 2 * dx);
  // The world bounds and the distance at world points, against the box's.
  const BoundsD bm = body_bounds(b, 0, 0.0), br = body_bounds(ref, 0, 0.0);
  EXPECT_LT((bm.lo - br.lo).norm() + (bm.hi - br.hi).norm(), 1e-5);
  EXPECT_NEAR(body_reach(b, 0), half.norm(), 1e-6);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-0.25, 0.25);
  double worst = 0;
  for (int k = 0; k < 500; ++k) {
    const Vec3d p = centre + Vec3d(u(rng), u(rng), u(rng));
    Vec3d nm, nr;
    const double dm = body_distance(b, 0, p, &nm), dr = body_distance(ref, 0, p, &nr);
    if (std::abs(dr) > 0.03) continue;  // near the surface, where contacts are
    worst = std::max(worst, std::abs(dm - dr));
  }
  // Trilinear over exact node values: off by at most about a voxel's
  // curvature at edges and corners.
  EXPECT_LT(worst, 0.5 * dx);
}

// A torque-free box spun about its intermediate axis flips over and back
// (the Dzhanibekov effect) while |L| and the energy stay put: the implicit
// midpoint rule keeps both quadratic invariants.
TEST(RigidMotion, TorqueFreeSpinAboutTheMiddleAxisFlipsAndConservesLAndEnergy) {
  Bodies b;
  BodyGeometry g;
  g.half = Vec3d(0.4, 0.2, 0.05);  // I_x < I_y < I_z: y is the intermediate axis
  b.add("nut", g, 1000, Vec3d(0, 1, 0), Quatd::Identity(), Vec3d::Zero(), Vec3d(0.02, 6.0, 0.02));
  RigidParams p;
  p.gravity = vec3(0.0f);
  RigidSolver s(p);
  s.load(b);
  const Vec3d L0 = s.bodies().angular_momentum(0);
  const double E0 = s.bodies().kinetic_energy(0);
  double worst_L = 0, worst_E = 0;
  int flips = 0;
  double last = 1;
  for (int k = 0; k < 10000; ++k) {  // 10 s at 1 ms
    s.step(1e-3f, float(k * 1e-3));
    const Bodies& c = s.bodies();
    worst_L = std::max(worst_L, std::abs(c.angular_momentum(0).norm() - L0.norm()) / L0.norm());
    worst_E = std::max(worst_E, std::abs(c.kinetic_energy(0) - E0) / E0);
    const double wy = (c.q[0].conjugate() * c.w[0]).y();  // body axes
    if (wy * last < 0) ++flips;
    if (wy != 0) last = wy;
  }
  const Vec3d L1 = s.bodies().angular_momentum(0);
  std::printf("Dzhanibekov: %d sign changes of w_y in 10 s; |L| drift %.2e, energy drift %.2e, L direction %.2e rad\n",
              flips, worst_L, worst_E, std::acos(std::min(1.0, L0.normalized().dot(L1.normalized()))));
  EXPECT_GE(flips, 2);
  EXPECT_LT(worst_L, 1e-6);
  EXPECT_LT(worst_E, 1e-4);
}

// An external force and torque (a liquid's push, set_external_wrench) give
// a free body momentum F t (exactly) and angular momentum about its centre
// tau t: the step applies each torque impulse in the body axes of its start
// and turns it with the body over the step, an error of order h |w| (2e-3
// here) relative to the impulse.
TEST(RigidMotion, AnExternalWrenchGivesMomentumAndAngularMomentumAtItsRate) {
  Bodies b;
  BodyGeometry g;
  g.half = Vec3d(0.3, 0.1, 0.2);
  b.add("plate", g, 700, Vec3d(0, 1, 0), Quatd(Eigen::AngleAxisd(0.4, Vec3d(1, 2, 3).normalized())),
        Vec3d(0.1, 0, 0), Vec3d(0.5, -1.0, 2.0));
  RigidParams p;
  p.gravity = vec3(0.0f);
  RigidSolver s(p);
  s.load(b);
  const Vec3d F(3.0, -2.0, 1.0), tau(0.2, 0.1, -0.3);
  s.set_external_wrench({F}, {tau});
  // Angular momentum about the centre of mass (Bodies::angular_momentum is about the origin).
  auto spin = [&]() -> Vec3d { return s.bodies().inertia_world(0) * s.bodies().w[0]; };
  const Vec3d P0 = s.bodies().linear_momentum(0), L0 = spin();
  const int steps = 2000;  // 2 s at 1 ms
  for (int k = 0; k < steps; ++k) s.step(1e-3f, float(k * 1e-3));
  const double t = steps * double(1e-3f);
  const Vec3d dP = s.bodies().linear_momentum(0) - P0 - F * t, dL = spin() - L0 - tau * t;
  std::printf("momentum off by %.2e N s, angular momentum by %.2e N m s\n", dP.norm(), dL.norm());
  EXPECT_LT(dP.norm(), 1e-9 * (F * t).norm());
  EXPECT_LT(dL.norm(), 2e-3 * (tau * t).norm());
  EXPECT_THROW(s.set_external_wrench({F, F}, {}), Error);
}

TEST(Sap, ProjectionMatchesTheWorkedExample) {
  // mu = 0.5, R_t = 0.01, R_n = 1, y = (4, 1): sliding, mu~ = 0.005,
  // gamma_n = (1 + 0.005 * 4) / (1 + 0.5 * 0.005), gamma_t = mu gamma_n.
  const Vec3d g = sap_project(Vec3d(4, 0, 1), 0.5, 0.01, 1.0);
  const double gn = 1.02 / 1.0025;
  EXPECT_NEAR(g.z(), gn, 1e-14);
  EXPECT_NEAR(g.x(), 0.5 * gn, 1e-14);
  EXPECT_EQ(g.y(), 0.0);
  // The R-norm projection leaves y - gamma R-orthogonal to gamma (Moreau).
  const Vec3d R(0.01, 0.01, 1.0);
  EXPECT_NEAR((Vec3d(4, 0, 1) - g).dot(R.cwiseProduct(g)), 0.0, 1e-14);
  // Stiction and separation.
  EXPECT_EQ(sap_project(Vec3d(0.3, -0.2, 1), 0.5, 0.01, 1.0), Vec3d(0.3, -0.2, 1));
  EXPECT_EQ(sap_project(Vec3d(4, 0, -0.03), 0.5, 0.01, 1.0), Vec3d::Zero());
}

TEST(Sap, ProjectionDerivativeMatchesFiniteDifferences) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  int regions[3] = {0, 0, 0};
  for (int k = 0; k < 400; ++k) {
    // Cases drawn in turn: inside the cone, beyond its surface, in the
    // polar cone, and just below the tip (sliding with y_n < 0).
    const double mu = 0.1 + u(rng), Rt = 0.01 + 0.1 * u(rng), Rn = 0.5;
    const double a = 2 * std::numbers::pi * u(rng);
    const Eigen::Vector2d dir(std::cos(a), std::sin(a));
    double yn = 0.2 + u(rng), t = 0;
    switch (k % 4) {
      case 0: t = 0.9 * u(rng) * mu * yn; break;
      case 1: t = (1.1 + 3 * u(rng)) * mu * yn; break;
      case 2: yn = -yn, t = 0.9 * u(rng) * -yn / (mu * Rt / Rn); break;
      case 3: yn = -1e-3 * u(rng), t = 0.5 + u(rng); break;
    }
    const Vec3d y(t * dir.x(), t * dir.y(), yn);
    Mat3d d;
    const Vec3d g = sap_project(y, mu, Rt, Rn, &d);
    regions[g.isZero() ? 2 : (g == y ? 0 : 1)]++;
    const double e = 1e-6;
    for (int c = 0; c < 3; ++c) {
      Vec3d yp = y, ym = y;
      yp[c] += e;
      ym[c] -= e;
      const Vec3d fd = (sap_project(yp, mu, Rt, Rn) - sap_project(ym, mu, Rt, Rn)) / (2 * e);
      EXPECT_LT((fd - d.col(c)).norm(), 1e-6) << "y " << y.transpose() << " column " << c;
    }
    // G = dgamma/dy R^-1 is symmetric (the Hessian of a convex cost).
    const Mat3d G = d * Vec3d(1 / Rt, 1 / Rt, 1 / Rn).asDiagonal();
    EXPECT_LT((G - G.transpose()).norm(), 1e-9 * (1 + G.norm()));
  }
  EXPECT_EQ(regions[0], 100);
  EXPECT_EQ(regions[1], 200);
  EXPECT_EQ(regions[2], 100);
}

// SAP-shaped blocks over `pairs` (row body > column body) of n bodies:
// H = M + sum over pairs of J^T J, as SAP's Hessian is built, with the
// dense matrix beside them. `blocks` is what BlockCholesky::factorize takes.
struct BlockSystem {
  std::vector<BlockCholesky::Mat66> blocks;
  Eigen::MatrixXd dense;
};
BlockSystem random_hessian(int n, const std::vector<std::pair<int, int>>& pairs, std::mt19937& rng) {
  std::normal_distribution<double> g(0.0, 1.0);
  std::vector<BlockCholesky::Mat66> diag(static_cast<std::size_t>(n)), off(pairs.size());
  for (int i = 0; i < n; ++i) {
    BlockCholesky::Mat66 a;
    for (int r = 0; r < 6; ++r)
      for (int c = 0; c < 6; ++c) a(r, c) = g(rng);
    diag[std::size_t(i)] = a * a.transpose() + 6.0 * BlockCholesky::Mat66::Identity();
  }
  for (std::size_t e = 0; e < pairs.size(); ++e) {
    // A contact's J^T J between the two bodies: adds to both diagonals and the pair.
    Eigen::Matrix<double, 3, 12> J;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 12; ++c) J(r, c) = g(rng);
    const Eigen::Matrix<double, 12, 12> JtJ = J.transpose() * J;
    diag[std::size_t(pairs[e].first)] += JtJ.topLeftCorner<6, 6>();
    diag[std::size_t(pairs[e].second)] += JtJ.bottomRightCorner<6, 6>();
    off[e] = JtJ.bottomLeftCorner<6, 6>().transpose();  // the block at (first, second)
  }
  BlockSystem s;
  s.dense = Eigen::MatrixXd::Zero(6 * n, 6 * n);
  for (int i = 0; i < n; ++i) s.dense.block<6, 6>(6 * i, 6 * i) = diag[std::size_t(i)];
  for (std::size_t e = 0; e < pairs.size(); ++e) {
    s.dense.block<6, 6>(6 * pairs[e].first, 6 * pairs[e].second) = off[e];
    s.dense.block<6, 6>(6 * pairs[e].second, 6 * pairs[e].first) = off[e].transpose();
  }
  s.blocks = diag;
  s.blocks.insert(s.blocks.end(), off.begin(), off.end());
  return s;
}

// The 6x6-block Cholesky against a dense solve: SPD matrices of 40 bodies
// with random pairs (a chain, so fill appears, and a scatter of others).
TEST(BlockCholesky, SolvesAsADenseFactorisationDoes) {
  std::mt19937 rng(11);
  std::normal_distribution<double> g(0.0, 1.0);
  for (int trial = 0; trial < 5; ++trial) {
    const int n = 40;
    std::vector<std::pair<int, int>> pairs;
    for (int i = 1; i < n; ++i) pairs.emplace_back(i, i - 1);
    for (int k = 0; k < 30; ++k) {
      const int a = int(rng() % n), b = int(rng() % n);
      if (a == b || std::find(pairs.begin(), pairs.end(), std::make_pair(std::max(a, b), std::min(a, b))) != pairs.end())
        continue;
      pairs.emplace_back(std::max(a, b), std::min(a, b));
    }
    const BlockSystem h = random_hessian(n, pairs, rng);
    Eigen::VectorXd b(6 * n);
    for (int i = 0; i < 6 * n; ++i) b[i] = g(rng);
    BlockCholesky chol;
    chol.analyze(n, pairs);
    ASSERT_TRUE(chol.factorize(h.blocks));
    const Eigen::VectorXd x = chol.solve(b), ref = h.dense.llt().solve(b);
    EXPECT_LT((x - ref).norm(), 1e-10 * ref.norm()) << "trial " << trial;
    EXPECT_LT((h.dense * x - b).norm(), 1e-10 * b.norm());
  }
}

// A pile's contact graph is three-dimensional: 6 x 6 x 6 bodies, each
// touching its lattice neighbours, numbered at random. Its separators
// become supernodes several bodies wide, factored as dense panels. The
// portable kernel and the AVX2 one (where the CPU has it) each solve as the
// dense factorisation does, and agree with each other to round-off; a
// matrix that is not positive definite is refused.
TEST(BlockCholesky, WideSupernodesSolveAsADenseFactorisationDoes) {
  const int side = 6, n = side * side * side;
  std::mt19937 rng(5);
  std::vector<int> label(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) label[std::size_t(i)] = i;
  std::shuffle(label.begin(), label.end(), rng);
  auto body = [&](int x, int y, int z) { return label[std::size_t((x * side + y) * side + z)]; };
  std::vector<std::pair<int, int>> pairs;
  for (int x = 0; x < side; ++x)
    for (int y = 0; y < side; ++y)
      for (int z = 0; z < side; ++z)
        for (const auto& [u, v] : {std::pair(x + 1 < side ? body(x + 1, y, z) : -1, body(x, y, z)),
                                   std::pair(y + 1 < side ? body(x, y + 1, z) : -1, body(x, y, z)),
                                   std::pair(z + 1 < side ? body(x, y, z + 1) : -1, body(x, y, z))})
          if (u >= 0) pairs.emplace_back(std::max(u, v), std::min(u, v));
  const BlockSystem h = random_hessian(n, pairs, rng);
  Eigen::VectorXd b(6 * n);
  std::normal_distribution<double> g(0.0, 1.0);
  for (int i = 0; i < 6 * n; ++i) b[i] = g(rng);
  const Eigen::VectorXd ref = h.dense.llt().solve(b);
  BlockCholesky chol;
  chol.analyze(n, pairs);
  std::printf("%d bodies, %zu pairs: %zu blocks below the diagonal in %d supernodes\n", n, pairs.size(),
              chol.factor_blocks(), chol.supernodes());
  EXPECT_LT(chol.supernodes(), n * 3 / 4);  // many columns share a panel
  std::vector<Eigen::VectorXd> x;
  const bool simd = CpuExecutor::simd_enabled();
  for (const bool avx2 : {false, true}) {
    if (avx2 && !cpu_supports_avx2()) continue;
    CpuExecutor::set_simd(avx2);
    const bool factored = chol.factorize(h.blocks);
    EXPECT_TRUE(factored) << (avx2 ? "AVX2" : "portable");
    if (!factored) continue;
    x.push_back(chol.solve(b));
    EXPECT_LT((x.back() - ref).norm(), 1e-10 * ref.norm()) << (avx2 ? "AVX2" : "portable");
  }
  CpuExecutor::set_simd(simd);
  if (x.size() == 2) {
    EXPECT_LT((x[0] - x[1]).norm(), 1e-13 * x[0].norm());
  }
  // The top panels' rows are shared among the threads; on one thread the
  // factor is the same to the bit.
  ASSERT_TRUE(chol.factorize(h.blocks));
  EXPECT_GT(chol.shared_steps(), 0);
  const Eigen::VectorXd all_threads = chol.solve(b);
  {
    tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
    ASSERT_TRUE(chol.factorize(h.blocks));
  }
  EXPECT_TRUE(chol.solve(b) == all_threads);
  std::vector<BlockCholesky::Mat66> indefinite = h.blocks;
  indefinite[std::size_t(body(3, 3, 3))] *= -1.0;
  EXPECT_FALSE(chol.factorize(indefinite));
}

// `count` boxes turned at random (seeded), four to a layer, falling onto a
// floor of friction 0.5: a heap, which amplifies round-off from step to step.
static void load_tumbling_boxes(RigidSolver& s, int count, unsigned seed) {
  Bodies b;
  BodyGeometry g;
  g.half = Vec3d(0.05, 0.04, 0.06);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int k = 0; k < count; ++k)
    b.add("b" + std::to_string(k), g, 500.0, Vec3d(0.08 * (k % 4), 0.06 + 0.09 * (k / 4), 0.08 * ((k / 2) % 2)),
          Quatd(Eigen::AngleAxisd(u(rng), Vec3d(u(rng), u(rng), u(rng)).normalized())));
  s.load(b);
  Collider floor;
  floor.type = ShapeType::Plane;
  floor.friction = 0.5f;
  s.set_colliders({floor});
}

// SAP with the block factorisation takes the same steps as with Eigen's
// scalar LDLT: 40 boxes tumbling into a heap for 300 steps, stepped both
// ways, keep the same velocities within SAP's tolerance (1e-6 of the
// momenta; a heap amplifies round-off from step to step).
TEST(BlockCholesky, SapStepsAsWithTheScalarFactorisation) {
  auto run = [](bool block) {
    RigidSolver s(RigidParams{});
    load_tumbling_boxes(s, 40, 2);
    s.set_block_factorisation(block);
    for (int k = 0; k < 300; ++k) s.step(1e-3f, float(k * 1e-3));
    return s.bodies();
  };
  const Bodies a = run(true), b = run(false);
  double dv = 0, v = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    dv = std::max(dv, (a.v[i] - b.v[i]).norm());
    v = std::max(v, b.v[i].norm());
  }
  std::printf("40 boxes after 0.3 s: velocities differ by %.3g m/s at most (fastest %.3g m/s)\n", dv, v);
  EXPECT_LT(dv, 1e-6 * std::max(v, 1.0));
}

// SAP by islands reaches the minimiser of the whole problem: two heaps of
// 20 boxes a metre apart, and a box falling alone beside them. The heaps
// are two islands (the floor joins none); the lone box, touching nothing,
// is not solved at all. From the same state, every 30 steps of the
// heaps' landing, one step with each island solved apart and one with all
// bodies in one problem give the same velocities within SAP's tolerance
// (relative 1e-6 on the momenta: here, 1e-6 of the fastest box's speed;
// angular velocities weighted by the boxes' half size). Over many steps
// the two would part: a tumbling heap amplifies any difference.
// Two heaps of `n` tumbling boxes a metre apart and a box falling alone
// beside them (body 2 n).
static void load_two_heaps(RigidSolver& s, int n) {
  load_tumbling_boxes(s, n, 4);
  Bodies b = s.bodies();
  for (std::size_t i = 0; i < std::size_t(n); ++i) {
    const BodyGeometry g = b.geometry[i];
    const Vec3d x = b.x[i] + Vec3d(1.0, 0, 0);
    const Quatd q = b.q[i];
    b.add("c" + std::to_string(i), g, 500.0, x, q);
  }
  BodyGeometry lone;
  lone.half = Vec3d(0.05, 0.05, 0.05);
  b.add("lone", lone, 500.0, Vec3d(-1.0, 0.8, 0), Quatd::Identity());
  s.load(b);
}

TEST(Sap, IslandsStepAsOneProblemDoes) {
  RigidSolver s(RigidParams{});
  const std::size_t n = 20;
  load_two_heaps(s, int(n));
  double worst = 0;
  int checked = 0;
  for (int k = 0; k < 300; ++k) {
    if (k % 30 == 10) {
      auto one_step = [&](bool islands) {
        RigidSolver t(RigidParams{});
        t.load(s.bodies());
        Collider floor;
        floor.type = ShapeType::Plane;
        floor.friction = 0.5f;
        t.set_colliders({floor});
        t.set_islands(islands);
        t.step(1e-3f, float(k * 1e-3));
        return std::make_pair(t.bodies(), t.sap_stats());
      };
      const auto [apart, sa] = one_step(true);
      const auto [whole, sw] = one_step(false);
      EXPECT_GE(sa.islands, 2) << "step " << k;
      EXPECT_LE(sa.largest_island, 20) << "step " << k;
      EXPECT_EQ(sw.islands, 1);
      EXPECT_EQ(sw.largest_island, 41);
      EXPECT_TRUE(sa.converged && sw.converged);
      double dv = 0, v = 0;
      for (std::size_t i = 0; i < apart.size(); ++i) {
        dv = std::max(dv, (apart.v[i] - whole.v[i]).norm());
        dv = std::max(dv, (apart.w[i] - whole.w[i]).norm() * 0.05);
        v = std::max(v, whole.v[i].norm());
      }
      const Vec3f g = RigidParams{}.gravity;
      const Vec3d free_v = s.bodies().v[2 * n] + 1e-3 * Vec3d(g.x, g.y, g.z);
      EXPECT_LT((apart.v[2 * n] - free_v).norm(), 1e-9) << "the lone box falls freely";
      worst = std::max(worst, dv / std::max(v, 1.0));
      ++checked;
    }
    s.step(1e-3f, float(k * 1e-3));
  }
  std::printf("one step by islands against one problem, %d states of two heaps: velocities differ by %.3g of the "
              "fastest at most\n", checked, worst);
  EXPECT_LT(worst, 1e-6);
}

// Contact detection and SAP's loops over contacts run on TBB's threads, in
// chunks combined in a fixed order: a heap of 60 steps to the same bits on
// one thread as on all of them.
TEST(RigidSolver, StepsToTheSameBitsOnOneThreadAsOnAll) {
  auto run = [](int threads) {
    tbb::global_control g(tbb::global_control::max_allowed_parallelism, std::size_t(threads));
    RigidSolver s(RigidParams{});
    load_tumbling_boxes(s, 60, 3);
    std::size_t most = 0;
    for (int k = 0; k < 300; ++k) {
      s.step(1e-3f, float(k * 1e-3));
      most = std::max(most, s.contacts().size());
    }
    return std::make_pair(s.bodies(), most);
  };
  const auto [one, contacts] = run(1);
  const auto [all, contacts_all] = run(int(tbb::info::default_concurrency()));
  EXPECT_GT(contacts, 300u);  // several of SAP's chunks of 256 contacts
  EXPECT_EQ(contacts, contacts_all);
  for (std::size_t i = 0; i < one.size(); ++i) {
    for (int k = 0; k < 3; ++k) {
      ASSERT_EQ(one.x[i][k], all.x[i][k]) << "body " << i;
      ASSERT_EQ(one.v[i][k], all.v[i][k]) << "body " << i;
      ASSERT_EQ(one.w[i][k], all.w[i][k]) << "body " << i;
    }
  }
}

// The islands are solved in parallel, each as on one thread: two heaps
// step 200 times to the same bits on one thread as on all of them.
TEST(Sap, IslandsStepToTheSameBitsOnOneThreadAsOnAll) {
  auto run = [](int threads) {
    tbb::global_control g(tbb::global_control::max_allowed_parallelism, std::size_t(threads));
    RigidSolver s(RigidParams{});
    load_two_heaps(s, 20);
    int most = 0;
    for (int k = 0; k < 200; ++k) {
      s.step(1e-3f, float(k * 1e-3));
      most = std::max(most, s.sap_stats().islands);
    }
    return std::make_pair(s.bodies(), most);
  };
  const auto [one, islands] = run(1);
  const auto [all, islands_all] = run(int(tbb::info::default_concurrency()));
  EXPECT_GE(islands, 2);
  EXPECT_EQ(islands, islands_all);
  for (std::size_t i = 0; i < one.size(); ++i)
    for (int k = 0; k < 3; ++k) {
      ASSERT_EQ(one.x[i][k], all.x[i][k]) << "body " << i;
      ASSERT_EQ(one.v[i][k], all.v[i][k]) << "body " << i;
      ASSERT_EQ(one.w[i][k], all.w[i][k]) << "body " << i;
    }
}

// A contact's stiffness and dissipation from its two surfaces': the
// solver's where neither has its own, a surface's own against one without,
// and two Kelvin-Voigt elements in series where both have theirs.
TEST(RigidContact, ContactParametersCombineAsKelvinVoigtElementsInSeries) {
  const double k0 = 1e8, tau0 = 0.02;
  auto expect = [](ContactParameters c, double k, double tau) {
    EXPECT_DOUBLE_EQ(c.stiffness, k);
    EXPECT_DOUBLE_EQ(c.tau, tau);
  };
  expect(contact_parameters(0, 0, 0, 0, k0, tau0), k0, tau0);
  expect(contact_parameters(1e4, 0.01, 0, 0, k0, tau0), 1e4, 0.01);
  expect(contact_parameters(0, 0, 1e4, 0, k0, tau0), 1e4, tau0);  // its own k, the solver's tau
  expect(contact_parameters(0, 0.05, 0, 0, k0, tau0), k0, 0.05);
  // Springs 1e4 and 3e4 in series: 7,500 N/m; dampers 100 and 600 N s/m: 600 / 7 N s/m.
  expect(contact_parameters(1e4, 0.01, 3e4, 0.02, k0, tau0), 7500.0, (600.0 / 7.0) / 7500.0);
  expect(contact_parameters(3e4, 0.02, 1e4, 0.01, k0, tau0), 7500.0, (600.0 / 7.0) / 7500.0);
}

// A ball of its own stiffness k resting on the floor sinks into it by its
// weight over k (the floor, without its own, is rigid beside it), into a
// box of the same stiffness by its weight over k / 2 (springs in series),
// and a ball without its own into a floor of stiffness k as the soft ball.
// SAP's compliant normal at rest: gamma_n = h k (-phi0), its force k (-phi0).
TEST(RigidContact, ASoftBallSinksByItsWeightOverItsContactStiffness) {
  const double k = 2e4, r = 0.1;
  BodyGeometry ball;
  ball.shape = BodyShape::Sphere;
  ball.radius = r;
  BodyGeometry slab;
  slab.half = Vec3d(0.3, 0.05, 0.3);
  // `soft_floor`: the floor has the stiffness instead of the ball.
  auto rest = [&](bool on_slab, bool soft_floor = false) {
    Bodies b;
    if (on_slab) b.add("slab", slab, 1000.0, Vec3d(0, 0.05, 0));
    b.add("ball", ball, 1000.0, Vec3d(0, (on_slab ? 0.1 : 0.0) + r, 0));
    if (!soft_floor)
      for (std::size_t i = 0; i < b.size(); ++i) b.set_contact(i, k, 0.0);
    RigidSolver s{RigidParams{}};
    s.load(b);
    Collider floor;
    floor.type = ShapeType::Plane;
    if (soft_floor) floor.stiffness = float(k);
    s.set_colliders({floor});
    for (int n = 0; n < 1500; ++n) s.step(1e-3f, float(n * 1e-3));  // at rest within 0.2 s (damping ratio 0.7)
    const Bodies& e = s.bodies();
    const std::size_t i = on_slab ? 1 : 0;
    const double under = on_slab ? e.x[0].y() + slab.half.y() : 0.0;
    return std::make_pair(under + r - e.x[i].y(), e.mass[i] * 9.81);
  };
  const auto [floor_depth, weight] = rest(false);
  const auto [slab_depth, weight2] = rest(true);
  std::printf("ball of %.2f N: %.4f mm into the floor (W / k %.4f), %.4f mm into the slab (2 W / k %.4f)\n", weight,
              1e3 * floor_depth, 1e3 * weight / k, 1e3 * slab_depth, 2e3 * weight2 / k);
  EXPECT_NEAR(floor_depth, weight / k, 0.01 * weight / k);
  EXPECT_NEAR(slab_depth, 2.0 * weight2 / k, 0.01 * 2.0 * weight2 / k);
  // A stiff ball on a floor of that stiffness: the same as the soft ball.
  EXPECT_NEAR(rest(false, true).first, weight / k, 0.01 * weight / k);
}

// The Lagged model's projection: the normal part max(0, y_n), the
// tangential part clamped to the disc of the frozen bound; its derivative
// matches finite differences, and G = dgamma/dy R^-1 is symmetric, in
// stiction and sliding, pressed and separating.
TEST(Sap, LaggedProjectionAndItsDerivative) {
  std::mt19937 rng(4);
  std::uniform_real_distribution<double> u(0, 1);
  int sliding = 0;
  for (int k = 0; k < 200; ++k) {
    const double bound = 0.05 + u(rng), Rt = 0.01 + 0.1 * u(rng), Rn = 0.5;
    const double a = 2 * std::numbers::pi * u(rng);
    const double t = (k % 2 ? 1.1 + 2 * u(rng) : 0.9 * u(rng)) * bound;
    const Vec3d y(t * std::cos(a), t * std::sin(a), (k % 4 < 2 ? 1 : -1) * (0.1 + u(rng)));
    Mat3d d;
    const Vec3d g = lagged_project(y, bound, &d);
    EXPECT_EQ(g.z(), std::max(0.0, y.z()));
    EXPECT_LE(g.head<2>().norm(), bound * (1 + 1e-12));
    sliding += g.head<2>().norm() < y.head<2>().norm();
    const double e = 1e-6;
    for (int c = 0; c < 3; ++c) {
      Vec3d yp = y, ym = y;
      yp[c] += e;
      ym[c] -= e;
      const Vec3d fd = (lagged_project(yp, bound) - lagged_project(ym, bound)) / (2 * e);
      EXPECT_LT((fd - d.col(c)).norm(), 1e-6) << "y " << y.transpose() << " column " << c;
    }
    const Mat3d G = d * Vec3d(1 / Rt, 1 / Rt, 1 / Rn).asDiagonal();
    EXPECT_LT((G - G.transpose()).norm(), 1e-9 * (1 + G.norm()));
  }
  EXPECT_EQ(sliding, 100);
}

TEST(RigidContact, SweepAndPruneFindsExactlyTheOverlappingPairs) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0, 4), s(0.05, 0.4);
  std::vector<BoundsD> b(300);
  for (auto& x : b) {
    const Vec3d c(u(rng), u(rng), u(rng)), e(s(rng), s(rng), s(rng));
    x = {c - e, c + e};
  }
  std::vector<std::pair<int, int>> brute;
  for (int i = 0; i < 300; ++i)
    for (int j = i + 1; j < 300; ++j)
      if ((b[i].lo.array() <= b[j].hi.array()).all() && (b[j].lo.array() <= b[i].hi.array()).all())
        brute.emplace_back(i, j);
  EXPECT_GT(brute.size(), 50u);
  EXPECT_EQ(overlapping_pairs(b), brute);
}

TEST(RigidContact, ABoxRestingOnAnotherTouchesAtItsBottomCorners) {
  Bodies b;
  BodyGeometry g;
  g.half = Vec3d(0.1, 0.1, 0.1);
  b.add("lower", g, 500, Vec3d(0, 0.1, 0));
  b.add("upper", g, 500, Vec3d(0.05, 0.299, 0));  // 1 mm into the lower box, shifted half a half-width
  std::vector<BodyContact> c;
  find_contacts(b, {}, 0.0, 1e-4, c);
  ASSERT_FALSE(c.empty());
  for (const auto& k : c) {
    // Normals point from the other body into the one sampled, along y.
    const Vec3d up = k.a == 1 ? Vec3d::UnitY() : Vec3d(-Vec3d::UnitY());
    EXPECT_NEAR(k.n.dot(up), 1.0, 1e-12);
    EXPECT_NEAR(k.phi, -0.001, 1e-9);
    EXPECT_NEAR(k.p.y(), 0.1995, 1e-9);
  }
}

}  // namespace
}  // namespace eddy
