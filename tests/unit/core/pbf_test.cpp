// PBF solver: exact behaviour (thread-count independence, conservation of the
// centre of mass in free space, calibration at rest) and the instability checks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "eddy/core/cpu_executor.h"
#include "eddy/core/error.h"
#include "eddy/core/pbf/pbf.h"
#include "eddy/core/pbf/solver.h"
#include "scenes.h"

namespace eddy {
namespace {

using test::block;
using test::moving_block;
using test::tank;

Points run(const PbfParams& p, int threads, int steps, const Points& start, const std::vector<Collider>& cols) {
  auto s = make_pbf_solver_cpu(p, threads);
  s->load(start);
  s->set_colliders(cols);
  for (int k = 0; k < steps; ++k) s->step(1.0f / 240.0f, k / 240.0f);
  Points out;
  s->store(out);
  return out;
}

// A splashing block (initial velocity into a corner): exercises every stage.
struct Splash {
  Points start = moving_block(14, 10, 9, 0.02f, vec3(0.1f, 0.05f, 0.05f), vec3(2.0f, -1.0f, 0.5f));
  PbfParams p = [] {
    PbfParams q;
    q.vorticity = 0.5f;
    q.reorder_interval = 3;
    return q;
  }();
  std::vector<Collider> cols = {tank(vec3(0), vec3(1.0f, 1.0f, 0.6f))};
  Points run(int threads) const { return eddy::run(p, threads, 20, start, cols); }
};

TEST(Pbf, ResultsDoNotDependOnTheThreadCount) {
  const Splash splash;
  const Points one = splash.run(1);
  const Points all = splash.run(0);
  const Points two = splash.run(2);
  ASSERT_EQ(one.size(), all.size());
  EXPECT_EQ(std::memcmp(one.P(), all.P(), one.size() * sizeof(Vec3f)), 0);
  EXPECT_EQ(std::memcmp(one.v(), all.v(), one.size() * sizeof(Vec3f)), 0);
  EXPECT_EQ(std::memcmp(one.P(), two.P(), one.size() * sizeof(Vec3f)), 0);
  EXPECT_EQ(std::memcmp(one.get_int("id"), all.get_int("id"), one.size() * 4), 0);
}

// Turns CpuExecutor's AVX2 dispatch off for its lifetime (also when a test
// throws), so a failing test leaves the dispatch as it found it.
struct BaselineOnly {
  BaselineOnly() { CpuExecutor::set_simd(false); }
  ~BaselineOnly() { CpuExecutor::set_simd(true); }
};

// The AVX2 dispatch of the batched pair loops (CpuExecutor::for_each_simd)
// against the baseline build of the same loops, with both kernel pairs: the
// same bits, as the lanes do the same IEEE operations and are summed in the
// same order.
TEST(Pbf, AvxDispatchGivesTheSameBitsAsTheBaseline) {
  if (!CpuExecutor::uses_avx2()) GTEST_SKIP() << "this CPU has no AVX2: there is one path only";
  for (KernelPair kernel : {KernelPair::CubicSpline, KernelPair::Poly6Spiky}) {
    Splash splash;
    splash.p.kernel = kernel;
    const Points fast = splash.run(2);
    Points base;
    {
      const BaselineOnly off;
      EXPECT_FALSE(CpuExecutor::uses_avx2());
      base = splash.run(2);
    }
    ASSERT_EQ(fast.size(), base.size());
    EXPECT_EQ(std::memcmp(fast.P(), base.P(), fast.size() * sizeof(Vec3f)), 0) << int(kernel);
    EXPECT_EQ(std::memcmp(fast.v(), base.v(), fast.size() * sizeof(Vec3f)), 0) << int(kernel);
    EXPECT_EQ(std::memcmp(fast.get_float("density"), base.get_float("density"), fast.size() * 4), 0) << int(kernel);
  }
}

// The batched density pass against a plain double-precision sum over all
// pairs, with both kernel pairs: rho_i = m (W(0) + sum_j W(x_i - x_j)) for a
// disordered block in free space (no walls), within float round-off.
TEST(Pbf, BatchedDensityIsThePlainSumOverPairs) {
  Points start = block(9, 8, 7, 0.02f);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> jitter(-0.006f, 0.006f);
  for (std::size_t i = 0; i < start.size(); ++i) start.P()[i] += vec3(jitter(rng), jitter(rng), jitter(rng));
  for (KernelPair kernel : {KernelPair::CubicSpline, KernelPair::Poly6Spiky}) {
    PbfParams p;
    p.kernel = kernel;
    p.reorder_interval = 0;  // the stored particles in their loaded order
    auto s = make_pbf_solver_cpu(p, 2);
    s->load(start);
    Points out;
    s->store(out);
    const float h = pbf_constants(p, start.radius).h;
    const PairKernels K(h, int(kernel));
    for (std::size_t i = 0; i < start.size(); ++i) {
      double w = K.W(0.0f);
      for (std::size_t j = 0; j < start.size(); ++j)
        if (j != i) w += K.W(length2(start.P()[i] - start.P()[j]));
      const double want = double(s->particle_mass()) * w;
      ASSERT_NEAR(out.get_float("density")[i], want, 2e-5 * want) << "kernel " << int(kernel) << " particle " << i;
    }
  }
}

// Two shortcuts give the same bits as the full work: the solve's last
// density pass, where the loop will most likely stop, only measures (the
// density and W, without lambda and the gradient sums), and particles clear
// of the colliders skip them in the projections, the friction pass and the
// density passes' walls.
// With vorticity confinement (which reads the pairs' g) and without, at the
// iteration cap and at the error target, in the tank alone and with a ball
// and a tilted floor in it.
TEST(Pbf, ShortcutsGiveTheFullWorksBits) {
  const Splash splash;
  Collider ball;
  ball.type = ShapeType::Sphere;
  ball.center = vec3(0.6f, 0.15f, 0.3f);
  ball.size = vec3(0.12f, 0.0f, 0.0f);
  Collider slope;
  slope.type = ShapeType::Plane;
  slope.center = vec3(0.5f, 0.08f, 0.3f);
  slope.rotation = rotation_from_euler_degrees(vec3(0.0f, 0.0f, 12.0f));
  std::vector<Collider> scene = splash.cols;
  scene.push_back(ball);
  scene.push_back(slope);
  for (const bool vorticity : {true, false})
    for (const int max_iterations : {2, 20}) {
      PbfParams p = splash.p;
      p.vorticity = vorticity ? 0.5f : 0.0f;
      p.max_iterations = max_iterations;
      p.max_density_error = 1.0f;
      const std::vector<Collider>& cols = max_iterations == 2 ? splash.cols : scene;
      Points out[2];
      int iterations = 0;
      for (int full = 0; full < 2; ++full) {
        PbfSolverT<CpuExecutor> s(p, CpuExecutor(2));
        s.set_shortcuts(full == 0);
        s.load(splash.start);
        s.set_colliders(cols);
        for (int k = 0; k < 20; ++k) iterations += s.step(1.0f / 240.0f, k / 240.0f).iterations;
        s.store(out[full]);
      }
      ASSERT_GE(iterations, 2 * 2 * 20);
      const std::size_t n = out[0].size();
      ASSERT_EQ(out[1].size(), n);
      const std::string where = "vorticity " + std::to_string(vorticity) + ", max " + std::to_string(max_iterations);
      EXPECT_EQ(std::memcmp(out[0].P(), out[1].P(), n * sizeof(Vec3f)), 0) << where;
      EXPECT_EQ(std::memcmp(out[0].v(), out[1].v(), n * sizeof(Vec3f)), 0) << where;
      EXPECT_EQ(std::memcmp(out[0].get_float("density"), out[1].get_float("density"), n * sizeof(float)), 0) << where;
    }
}

TEST(Pbf, ReorderingCarriesEveryAttributeWithItsParticle) {
  Points start = block(10, 10, 10, 0.02f);
  start.add("tag", AttribType::Vec3);
  for (std::size_t i = 0; i < start.size(); ++i) start.get_vec3("tag")[i] = start.P()[i];
  PbfParams p;
  p.gravity = vec3(0);
  p.reorder_interval = 1;
  const Points out = run(p, 0, 3, start, {});
  ASSERT_EQ(out.size(), start.size());
  std::vector<int> seen(out.size(), 0);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int id = out.get_int("id")[i];
    ASSERT_GE(id, 0);
    ASSERT_LT(id, int(out.size()));
    seen[id]++;
    // The tag still belongs to the particle that started at it (which has barely moved).
    EXPECT_EQ(out.get_vec3("tag")[i], start.P()[id]);
    EXPECT_LT(length(out.P()[i] - start.P()[id]), 0.02f);
  }
  for (int c : seen) EXPECT_EQ(c, 1);
}

TEST(Pbf, CentreOfMassIsConservedInFreeSpace) {
  // No gravity, no walls: position corrections are pairwise antisymmetric
  // (grad W_ij = -grad W_ji), so the centre of mass moves with the initial
  // momentum only. A compressed blob (spacing 0.8 of rest) expands violently.
  Points start = moving_block(12, 12, 12, 0.016f, vec3(0), vec3(0.3f, 0, 0));
  start.radius = 0.02f;
  PbfParams p;
  p.gravity = vec3(0);
  p.xsph = 0.05f;
  auto com = [](const Points& q) {
    double c[3] = {0, 0, 0};
    for (std::size_t i = 0; i < q.size(); ++i) c[0] += q.P()[i].x, c[1] += q.P()[i].y, c[2] += q.P()[i].z;
    return vec3(float(c[0] / q.size()), float(c[1] / q.size()), float(c[2] / q.size()));
  };
  const int steps = 30;
  const Points out = run(p, 0, steps, start, {});
  const Vec3f expected = com(start) + vec3(0.3f, 0, 0) * (steps / 240.0f);
  const Vec3f got = com(out);
  EXPECT_NEAR(got.x, expected.x, 2e-5f);
  EXPECT_NEAR(got.y, expected.y, 2e-5f);
  EXPECT_NEAR(got.z, expected.z, 2e-5f);
  // It did expand: the blob is not at rest.
  float spread0 = 0, spread1 = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    spread0 += length(start.P()[i] - com(start));
  }
  for (std::size_t i = 0; i < out.size(); ++i) spread1 += length(out.P()[i] - got);
  EXPECT_GT(spread1, 1.05f * spread0);
}

TEST(Pbf, LatticeInteriorIsAtRestDensityExactly) {
  for (KernelPair k : {KernelPair::CubicSpline, KernelPair::Poly6Spiky}) {
    PbfParams p;
    p.kernel = k;
    auto s = make_pbf_solver_cpu(p);
    s->load(block(9, 9, 9, 0.025f));
    Points out;
    s->store(out);
    const std::size_t centre = 4 + 9 * (4 + 9 * 4);
    EXPECT_NEAR(out.get_float("density")[centre], p.rest_density, 1e-2f);
  }
}

TEST(Pbf, WallLayerIsAtRestDensityWithWallDensity) {
  // A lattice filling a container: particles one radius from the floor see
  // the wall's share and sit at rest density too.
  const float r = 0.025f;
  PbfParams p;
  p.min_iterations = p.max_iterations = 0;  // evaluate the density only
  auto s = make_pbf_solver_cpu(p);
  s->load(block(9, 9, 9, r));
  s->set_colliders({tank(vec3(0), vec3(9 * 2 * r, 1.0f, 9 * 2 * r))});
  const PbfStepStats st = s->step(1e-7f, 0.0f);  // a negligible step recomputes density with the walls
  Points out;
  s->store(out);
  const int* id = out.get_int("id");
  for (std::size_t i = 0; i < out.size(); ++i)
    if (id[i] == 4 + 9 * (0 + 9 * 4)) {
      EXPECT_NEAR(out.get_float("density")[i], p.rest_density, 0.05f);  // floor, centre
    }
  // Everywhere, walls, edges and corners included, within the continuous tail's 0.5 %.
  EXPECT_LT(st.max_density_error, 0.5f);
}

// The message of the error a frame stops with, or "" when it does not stop.
std::string frame_error(const Points& start, SubstepPolicy policy, int frame) {
  auto s = make_pbf_solver_cpu(PbfParams{});
  s->load(start);
  try {
    pbf_advance_frame(*s, 0.0, 1.0 / 24, policy, frame, start.radius);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Pbf, NonFiniteStateStopsTheFrameWithItsNumber) {
  Points start = block(4, 4, 4, 0.02f);
  start.v()[5] = vec3(NAN, 0, 0);
  const std::string m = frame_error(start, SubstepPolicy{2, 2, 0.0f}, 17);
  EXPECT_NE(m.find("simulation became unstable at frame 17 (substep 1 of 2)"), std::string::npos) << m;
  EXPECT_NE(m.find("non-finite"), std::string::npos) << m;
}

TEST(Pbf, RunawaySpeedStopsTheFrameWithItsNumber) {
  Points start = block(4, 4, 4, 0.02f);
  start.v()[0] = vec3(0, 500, 0);
  const std::string m = frame_error(start, SubstepPolicy{4, 4, 0.0f}, 3);
  EXPECT_NE(m.find("unstable at frame 3"), std::string::npos) << m;
  EXPECT_NE(m.find("CFL bound"), std::string::npos) << m;
}

TEST(Pbf, ParametersOutOfRangeAreRefusedByName) {
  PbfParams p;
  p.max_iterations = 1;
  p.min_iterations = 3;
  EXPECT_THROW(make_pbf_solver_cpu(p), Error);
  PbfParams q;
  q.scorr_dq = 1.5f;
  try {
    make_pbf_solver_cpu(q);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("scorr_dq"), std::string::npos);
  }
}

TEST(Pbf, IterationsStayWithinBoundsAndStopAtTheTarget) {
  Points start = block(10, 10, 10, 0.02f);
  PbfParams p;
  p.min_iterations = 3;
  p.max_iterations = 7;
  p.max_density_error = 0.05f;
  auto s = make_pbf_solver_cpu(p);
  s->load(start);
  s->set_colliders({tank(vec3(0), vec3(0.4f, 1.0f, 0.4f))});
  for (int k = 0; k < 30; ++k) {
    const PbfStepStats st = s->step(1.0f / 96, k / 96.0f);
    EXPECT_GE(st.iterations, 3);
    EXPECT_LE(st.iterations, 7);
    if (st.iterations < 7) {
      EXPECT_LE(st.mean_density_error, 0.05f);
    }
  }
}

TEST(Pbf, ParticlesStayInsideTheirContainer) {
  const Points start = moving_block(10, 10, 10, 0.02f, vec3(0.0f, 0.0f, 0.0f), vec3(3.0f, 4.0f, -2.0f));
  const Vec3f lo = vec3(0), hi = vec3(0.6f, 0.6f, 0.6f);
  const Points out = run(PbfParams{}, 0, 120, start, {tank(lo, hi)});
  for (std::size_t i = 0; i < out.size(); ++i) {
    const Vec3f q = out.P()[i];
    ASSERT_TRUE(q.x >= lo.x + 0.02f - 1e-5f && q.x <= hi.x - 0.02f + 1e-5f) << q.x;
    ASSERT_TRUE(q.y >= lo.y + 0.02f - 1e-5f && q.y <= hi.y - 0.02f + 1e-5f) << q.y;
    ASSERT_TRUE(q.z >= lo.z + 0.02f - 1e-5f && q.z <= hi.z - 0.02f + 1e-5f) << q.z;
  }
}

}  // namespace
}  // namespace eddy

namespace eddy {
namespace {

TEST(Pbf, SubstepsFollowTheCflCondition) {
  // r = 1 cm, 24 fps: at rest gravity alone adds 0.41 m/s over the frame,
  // 1.7 cm of travel: under one diameter at cfl 1, two diameters at cfl 0.5.
  const double dt = 1.0 / 24;
  EXPECT_EQ(pbf_substeps({2, 16, 0.5f}, 0.0f, 9.81f, dt, 0.01f), 2);
  // 3 m/s: (3 + 0.41) / 24 = 14.2 cm = 7.1 diameters, at half a diameter per substep: 15.
  EXPECT_EQ(pbf_substeps({2, 16, 0.5f}, 3.0f, 9.81f, dt, 0.01f), 15);
  EXPECT_EQ(pbf_substeps({2, 8, 0.5f}, 3.0f, 9.81f, dt, 0.01f), 8);  // capped
  EXPECT_EQ(pbf_substeps({3, 16, 0.0f}, 30.0f, 9.81f, dt, 0.01f), 3);  // off
  EXPECT_THROW(pbf_substeps({0, 16, 0.5f}, 0.0f, 9.81f, dt, 0.01f), Error);
}

}  // namespace
}  // namespace eddy

namespace eddy {
namespace {

// A lone particle (no neighbours, so no density correction) on a floor.
std::unique_ptr<PbfSolver> lone_particle(Vec3f p, Vec3f v, float friction, float restitution) {
  Points start(1);
  start.radius = 0.01f;
  start.P()[0] = p;
  start.v()[0] = v;
  PbfParams params;
  params.xsph = 0.0f;
  auto s = make_pbf_solver_cpu(params, 1);
  s->load(start);
  Collider floor;
  floor.type = ShapeType::Plane;
  floor.friction = friction;
  floor.restitution = restitution;
  s->set_colliders({floor});
  return s;
}

TEST(Pbf, CoulombFrictionDeceleratesASlidingParticleAtMuG) {
  // Resting on the floor (centre one radius up), sliding at 2 m/s, mu = 0.3:
  // the tangential speed falls by mu g per second until it stops.
  auto s = lone_particle(vec3(0, 0.01f, 0), vec3(2, 0, 0), 0.3f, 0.0f);
  const float dt = 1e-3f;
  for (int k = 0; k < 300; ++k) s->step(dt, k * dt);
  Points out;
  s->store(out);
  const float expected = 2.0f - 0.3f * 9.81f * 0.3f;  // after 0.3 s
  EXPECT_NEAR(out.v()[0].x, expected, 0.01f);
  EXPECT_NEAR(out.P()[0].y, 0.01f, 1e-5f);  // still on the floor
  for (int k = 300; k < 1000; ++k) s->step(dt, k * dt);
  s->store(out);
  EXPECT_NEAR(out.v()[0].x, 0.0f, 1e-6f);  // stopped (at t = 0.68 s), no reversal
}

TEST(Pbf, RestitutionGivesBackItsShareOfTheImpactSpeed) {
  // Dropped from 0.2 m onto the floor: impact at sqrt(2 g 0.19) = 1.93 m/s,
  // rebound at e times that.
  for (const float e : {0.0f, 0.5f, 0.8f}) {
    auto s = lone_particle(vec3(0, 0.2f, 0), vec3(0, 0, 0), 0.0f, e);
    const float dt = 2e-4f;
    float impact = 0, rebound = 0, prev = 0;
    for (int k = 0; k < 2500; ++k) {
      s->step(dt, k * dt);
      Points out;
      s->store(out);
      const float vy = out.v()[0].y;
      if (prev < 0 && vy >= prev * 0.0f - 1e-6f && impact == 0) impact = -prev, rebound = vy;
      prev = vy;
    }
    const float v_impact = std::sqrt(2 * 9.81f * 0.19f);
    EXPECT_NEAR(impact, v_impact, 0.01f) << "e = " << e;
    EXPECT_NEAR(rebound, e * v_impact, 0.01f + 0.02f * e) << "e = " << e;
  }
}

TEST(Pbf, VorticityConfinementKeepsASwirlAlive) {
  // A rotating blob in zero gravity loses angular momentum to XSPH and the
  // position corrections; confinement feeds swirl back, so it keeps more.
  auto angular = [](float eps) {
    Points start = block(14, 14, 14, 0.01f, vec3(-0.14f, -0.14f, -0.14f));
    for (std::size_t i = 0; i < start.size(); ++i) {
      const Vec3f p = start.P()[i];
      start.v()[i] = vec3(-p.y, p.x, 0) * 4.0f;  // rigid rotation about z, 4 rad/s
    }
    PbfParams p;
    p.gravity = vec3(0);
    p.xsph = 0.1f;
    p.vorticity = eps;
    auto s = make_pbf_solver_cpu(p);
    s->load(start);
    for (int k = 0; k < 60; ++k) s->step(1.0f / 240, k / 240.0f);
    Points out;
    s->store(out);
    double L = 0;
    for (std::size_t i = 0; i < out.size(); ++i) L += cross(out.P()[i], out.v()[i]).z;
    return L;
  };
  const double without = angular(0.0f), with = angular(0.5f);
  EXPECT_GT(without, 0.0);
  EXPECT_GT(with, 1.02 * without);
}

}  // namespace
}  // namespace eddy
