// What moves in a shot, on the built-in nodes (issue 19): animated
// parameters (an expression places a FluidBox; a collider keyframed at a
// constant rate is the collider given that velocity or angular velocity;
// any animated collider moves within each frame to where the next frame puts
// it; docs/graph-format.md, "Animated parameters"), and sources and sinks (a
// tap pours its flow rate into each solver; a kill volume takes what reaches
// it).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "eddy/core/collider.h"
#include "eddy/core/mat3.h"
#include "eddy/graph/bodies_value.h"
#include "eddy/graph/cook.h"
#include "eddy/graph/graph.h"
#include "../../builtin_registry.h"

namespace eddy {
namespace {

TEST(AnimatedParams, AnExpressionPlacesTheFluidBoxAtEachFrame) {
  const Graph g = parse_graph(R"({"format": "eddy-graph", "version": 2, "frame_range": [1, 5], "fps": 24,
    "nodes": [{"id": "water", "type": "FluidBox", "params": {"center": [{"expr": "0.1 * $F"}, 0.5, 0],
      "size": [0.1, 0.1, 0.1], "particle_radius": 0.01}}], "links": []})",
                              test::builtin_registry(), "test");
  CookEngine e(test::builtin_registry(), g);
  const auto p = e.cook("water", 3)->at("particles").as<Points>();
  ASSERT_GT(p->size(), 0u);
  double x = 0;
  for (std::size_t i = 0; i < p->size(); ++i) x += p->P()[i].x;
  EXPECT_NEAR(x / double(p->size()), 0.3, 1e-6);
}

TEST(AnimatedParams, AVectorIsAnimatedComponentByComponent) {
  try {
    parse_graph(R"({"format": "eddy-graph", "version": 2, "frame_range": [1, 5],
      "nodes": [{"id": "water", "type": "FluidBox", "params": {"center": {"expr": "$F"}}}], "links": []})",
                test::builtin_registry(), "g.json");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "g.json: nodes[0] (\"water\").params.center: expected [x, y, z] of numbers or animated values "
                 "({\"expr\": ...}, {\"keys\": ...}), got {\"expr\":\"$F\"}");
  }
}

// A solver takes its animated parameters at every step, not once a frame:
// a block of water falls freely (no collider, a lattice at rest density, so
// no pressure) under gravity ramping as g(t) = -240 t m/s^2, in equal steps
// of 1/96 s; after two frames (8 steps) its velocity is the sum of g at each
// step's start times dt, -240 dt^2 (0 + 1 + ... + 7) = -0.7292 m/s (taken
// once a frame, -0.4167 m/s); MPM, in its own short steps, nears the
// integral, -0.8333 m/s.
TEST(AnimatedParams, ASolverTakesAnimatedParametersAtEveryStep) {
  const double dt = 1.0 / 96, expected = -240.0 * dt * dt * 28.0;
  for (const char* solver : {R"("PBFSolver", "params": {"substeps": 4, "cfl": 0, "solve": "fixed", "iterations": 2, )",
                             R"("SPHSolver", "params": {"time_step": 0.010416666666666666, )",
                             R"("MPMSolver", "params": {"dx": 0.02, )"}) {
    const Graph g = parse_graph(std::string(R"({"format": "eddy-graph", "version": 2, "frame_range": [1, 3], "fps": 24,
      "nodes": [{"id": "water", "type": "FluidBox", "params": {"center": [0, 1, 0], "size": [0.1, 0.1, 0.1],
        "particle_radius": 0.01}},
        {"id": "sim", "type": )") + solver + R"x("gravity": [0, {"expr": "-240 * $T"}, 0]}}],
      "links": [{"from": "water.particles", "to": "sim.particles"}]})x",
                                test::builtin_registry(), "test");
    CookEngine e(test::builtin_registry(), g);
    const auto p = e.cook("sim", 3)->at("particles").as<Points>();
    double vy = 0;
    for (std::size_t i = 0; i < p->size(); ++i) vy += p->v()[i].y;
    vy /= double(p->size());
    std::printf("%.9s: mean velocity %.5f m/s (every step: %.5f)\n", solver + 1, vy, expected);
    // MPM takes the many short steps its wave speed asks for: towards the
    // integral of g, -120 t^2 = -0.8333 m/s, short of it by 120 t dt (the
    // steps' left sums), 3e-3 m/s for its steps of about 0.3 ms.
    if (std::string(solver).find("MPM") != std::string::npos)
      EXPECT_NEAR(vy, -120.0 * (2.0 / 24) * (2.0 / 24), 5e-3) << solver;
    else
      EXPECT_NEAR(vy, expected, 1e-4) << solver;
  }
}

// The rigid solver too: a crate falling freely under the same ramp, in
// steps of 1/480 s: -240 h^2 (0 + ... + 39) after two frames.
TEST(AnimatedParams, TheRigidSolverTakesThemAtEveryStep) {
  const Graph g = parse_graph(R"({"format": "eddy-graph", "version": 2, "frame_range": [1, 3], "fps": 24,
    "nodes": [{"id": "crate", "type": "RigidBody", "params": {"size": [0.2, 0.2, 0.2], "position": [0, 1, 0]}},
      {"id": "sim", "type": "RigidBodySolver", "params": {"time_step": 0.0020833333333333333,
        "gravity": [0, {"expr": "-240 * $T"}, 0]}}],
    "links": [{"from": "crate.bodies", "to": "sim.bodies"}]})",
                              test::builtin_registry(), "test");
  CookEngine e(test::builtin_registry(), g);
  const double h = 1.0 / 480;
  EXPECT_NEAR(e.cook("sim", 3)->at("bodies").as<Bodies>()->v[0].y(), -240.0 * h * h * 780.0, 1e-6);
}

// Transform: a block turned a quarter about y, scaled and moved by an
// expression; a box mesh scaled keeps its faces outward, mirrored too.
TEST(AnimatedParams, TransformMovesTurnsAndScalesPointsAndMeshes) {
  const Graph g = parse_graph(R"({"format": "eddy-graph", "version": 2, "frame_range": [1, 5], "fps": 24,
    "nodes": [
      {"id": "water", "type": "FluidBox", "params": {"center": [1, 0, 0], "size": [0.1, 0.1, 0.1], "particle_radius": 0.01}},
      {"id": "crate", "type": "RigidBody", "params": {"size": [1, 1, 1], "position": [0, 0, 0]}},
      {"id": "shape", "type": "BodiesToMesh"},
      {"id": "turn", "type": "Transform", "params": {"rotate": [0, 90, 0], "translate": [0, {"expr": "$F"}, 0]}},
      {"id": "stretch", "type": "Transform", "params": {"scale": [2, 1, 1]}},
      {"id": "mirror", "type": "Transform", "params": {"scale": [-1, 1, 1], "uniform_scale": 2}}
    ],
    "links": [{"from": "water.particles", "to": "turn.points"}, {"from": "crate.bodies", "to": "shape.bodies"},
              {"from": "shape.mesh", "to": "stretch.mesh"}, {"from": "shape.mesh", "to": "mirror.mesh"}]})",
                              test::builtin_registry(), "test");
  CookEngine e(test::builtin_registry(), g);
  const auto p = e.cook("turn", 3)->at("points").as<Points>();
  Vec3f c = vec3(0.0f);
  for (std::size_t i = 0; i < p->size(); ++i) c += p->P()[i];
  c = c / float(p->size());
  EXPECT_LT(length(c - vec3(0.0f, 3.0f, -1.0f)), 1e-5f);  // +x turned a quarter about +y is -z; up by $F = 3
  EXPECT_FLOAT_EQ(p->radius, 0.01f);
  EXPECT_NEAR(measure_mesh(*e.cook("stretch", 1)->at("mesh").as<Mesh>()).volume, 2.0, 1e-5);
  EXPECT_NEAR(measure_mesh(*e.cook("mirror", 1)->at("mesh").as<Mesh>()).volume, 8.0, 1e-4);  // outward after the mirror
  EXPECT_EQ(e.cook("stretch", 1)->at("points").as<Points>()->size(), 0u);  // no points linked: none out
}

// A collider node's output at `frame`, from a ColliderBox with `params`.
Collider collider_at(const std::string& params, int frame) {
  const Graph g = parse_graph(R"({"format": "eddy-graph", "version": 2, "frame_range": [1, 48], "fps": 24,
    "nodes": [{"id": "c", "type": "ColliderBox", "params": {"size": [0.1, 0.2, 0.3], )" + params + R"(}}],
    "links": []})",
                              test::builtin_registry(), "test");
  CookEngine e(test::builtin_registry(), g);
  return e.cook("c", frame)->at("colliders").as<Colliders>()->shapes.at(0);
}

// Keys at a constant rate give the collider that velocity and angular
// velocity: the same pose as the static collider with them at every time
// within each frame, and the same motion, so the liquid meets the same
// moving wall in every substep. (Compared through the liquid instead, the
// two runs part ways on float round-off: in PBF water, a relative change of
// 1e-6 in a paddle's velocity moves the water's mean velocity after ten
// frames as much as a change of 1 %; measured while writing this test.)
TEST(AnimatedParams, KeysAtAConstantRateGiveTheColliderThatVelocity) {
  const std::string keyed = R"("center": [{"keys": [[1, -0.2], [25, 0.3]]}, 0.1, 0],
                               "rotate": [0, {"keys": [[1, 0], [25, 90]]}, 0])";
  const std::string moving = R"("center": [-0.2, 0.1, 0], "velocity": [0.5, 0, 0],
                                "angular_velocity": [0, 1.5707963267948966, 0])";
  for (int f : {1, 2, 7, 20}) {
    const Collider a = collider_at(keyed, f), b = collider_at(moving, f);
    EXPECT_LT(length(a.velocity - b.velocity), 1e-5f) << "frame " << f;
    EXPECT_LT(length(a.angular_velocity - b.angular_velocity), 1e-5f) << "frame " << f;
    for (double s : {0.0, 0.3, 1.0}) {
      const float t = float((f - 1 + s) / 24.0);
      const ColliderPose pa = collider_pose(a, t), pb = collider_pose(b, t);
      EXPECT_LT(length(pa.center - pb.center), 1e-6f) << "frame " << f << " + " << s;
      EXPECT_LT(std::sqrt(norm2(pa.rotation - pb.rotation)), 1e-5f) << "frame " << f << " + " << s;
    }
  }
}

// Any animation: at each frame the collider stands where the animation puts
// it, and moves on within the frame to where it puts it at the next, so the
// solvers' substeps see a continuous path.
TEST(AnimatedParams, AnAnimatedColliderMovesWithinEachFrameToTheNextFramesPlace) {
  const std::string swing = R"x("center": [{"expr": "0.2 * sin(2 * pi * $T)"}, 0.1, 0],
                                 "rotate": [{"expr": "30 * sin(2 * pi * $T)"}, 0, 0])x";
  for (int f : {1, 4, 9}) {
    const Collider c = collider_at(swing, f), next = collider_at(swing, f + 1);
    const float T = float((f - 1) / 24.0), T1 = float(f / 24.0);
    EXPECT_NEAR(collider_pose(c, T).center.x, 0.2 * std::sin(2 * M_PI * T), 1e-6) << "frame " << f;
    EXPECT_LT(length(collider_pose(c, T1).center - collider_pose(next, T1).center), 1e-6f) << "frame " << f;
    EXPECT_LT(std::sqrt(norm2(collider_pose(c, T1).rotation - collider_pose(next, T1).rotation)), 1e-5f)
        << "frame " << f;
    EXPECT_LT(std::sqrt(norm2(collider_pose(c, T).rotation - rotation_from_euler_degrees(vec3(
                                  float(30 * std::sin(2 * M_PI * T)), 0.0f, 0.0f)))),
              1e-5f)
        << "frame " << f;
  }
}

// A ColliderMesh turned by an expression cooks every frame; its sampled
// distance is in the mesh's own frame, so it is sampled once and kept (the
// same samples, the same values as a fresh engine samples), while the
// placement follows the animation; a new voxel size samples again.
TEST(AnimatedParams, AnAnimatedMeshColliderKeepsItsSamples) {
  auto graph = [](const std::string& voxel) {
    return parse_graph(R"({"format": "eddy-graph", "version": 2, "frame_range": [1, 5], "fps": 24,
      "nodes": [{"id": "cube", "type": "RigidBody", "params": {"size": [0.2, 0.2, 0.2], "position": [0, 0, 0]}},
        {"id": "shape", "type": "BodiesToMesh"},
        {"id": "c", "type": "ColliderMesh", "params": {"rotate": [0, {"expr": "10 * $F"}, 0], "voxelSize": )" +
                           voxel + R"(}}],
      "links": [{"from": "cube.bodies", "to": "shape.bodies"}, {"from": "shape.mesh", "to": "c.mesh"}]})",
                       test::builtin_registry(), "test");
  };
  CookEngine e(test::builtin_registry(), graph("0.02"));
  auto at = [&](CookEngine& engine, int f) { return engine.cook("c", f)->at("colliders").as<Colliders>(); };
  const auto c1 = at(e, 1), c2 = at(e, 2), c3 = at(e, 3);
  ASSERT_EQ(c1->grids.size(), 1u);
  EXPECT_EQ(c2->grids.at(0), c1->grids.at(0));  // the same samples
  EXPECT_EQ(c3->grids.at(0), c1->grids.at(0));
  EXPECT_EQ(c3->shapes.at(0).grid, c1->grids.at(0)->data());
  const ColliderPose p1 = collider_pose(c1->shapes.at(0), 0.0f), p3 = collider_pose(c3->shapes.at(0), 2.0f / 24);
  EXPECT_LT(std::sqrt(norm2(p3.rotation - rotation_from_euler_degrees(vec3(0.0f, 30.0f, 0.0f)))), 1e-5f);
  EXPECT_GT(std::sqrt(norm2(p3.rotation - p1.rotation)), 0.1f);  // turned by 20 degrees
  CookEngine fresh(test::builtin_registry(), graph("0.02"));
  const auto f3 = at(fresh, 3);
  EXPECT_EQ(*f3->grids.at(0), *c3->grids.at(0));
  for (int a = 0; a < 3; ++a) EXPECT_EQ(f3->shapes.at(0).grid_dims[a], c3->shapes.at(0).grid_dims[a]);
  EXPECT_EQ(f3->shapes.at(0).grid_origin, c3->shapes.at(0).grid_origin);
  EXPECT_LT(std::sqrt(norm2(collider_pose(f3->shapes.at(0), 2.0f / 24).rotation - p3.rotation)), 1e-6f);
  // Keyed voxel sizes: each new size samples again.
  CookEngine keyed(test::builtin_registry(), graph(R"({"keys": [[1, 0.02], [2, 0.01]], "interpolation": "constant"})"));
  const auto k1 = at(keyed, 1), k2 = at(keyed, 2);
  EXPECT_NE(k2->grids.at(0), k1->grids.at(0));
  EXPECT_GT(k2->shapes.at(0).grid_dims[0], k1->shapes.at(0).grid_dims[0]);
}

}  // namespace
}  // namespace eddy

namespace eddy {
namespace {

// A tap (FluidSource, 0.02 m^3/s of r = 1 cm particles: 2,500 a second)
// pouring into an empty tank through `solver`, with a KillVolume below
// y = `drain` when given.
Graph tap_scene(const std::string& solver, const std::string& drain = "") {
  std::string g = R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 25], "fps": 24,
    "nodes": [
      {"id": "tank", "type": "ColliderBox", "params": {"mode": "container", "center": [0, 0.5, 0],
        "size": [0.6, 1.0, 0.6]}},
      {"id": "tap", "type": "FluidSource", "params": {"center": [0, 0.8, 0], "size": [0.2, 0.1, 0.2],
        "velocity": [0, -1, 0], "flow_rate": 0.02, "particle_radius": 0.01, "start": 1, "end": 24}},
      {"id": "sim", "type": ")" + solver + R"("})";
  if (!drain.empty())
    g += R"(, {"id": "drain", "type": "KillVolume", "params": {"shape": "plane", "center": [0, )" + drain + R"(, 0]}})";
  g += R"(],
    "links": [{"from": "tank.colliders", "to": "sim.colliders"}, {"from": "tap.sources", "to": "sim.sources"})";
  if (!drain.empty()) g += R"(, {"from": "drain.sinks", "to": "sim.sinks"})";
  g += "]}";
  return parse_graph(g, test::builtin_registry(), "test");
}

std::shared_ptr<const Points> poured(CookEngine& e, int frame) { return e.cook("sim", frame)->at("particles").as<Points>(); }

// Emission over a second is the flow rate's, exactly (the source never
// fills up: the stream leaves it at 1 m/s), into each solver; ids stay unique.
TEST(Sources, ATapPoursItsFlowRateIntoEachSolver) {
  for (const char* solver : {"PBFSolver", "SPHSolver", "MPMSolver"}) {
    CookEngine e(test::builtin_registry(), tap_scene(solver));
    EXPECT_EQ(poured(e, 1)->size(), 0u) << solver;  // the start frame: nothing emitted yet
    EXPECT_EQ(poured(e, 2)->size(), 104u) << solver;  // floor(2500 / 24)
    const auto p = poured(e, 25);
    EXPECT_EQ(p->size(), 2500u) << solver;
    std::set<int32_t> ids(p->get_int("id"), p->get_int("id") + p->size());
    EXPECT_EQ(ids.size(), p->size()) << solver;
    float lowest = 1;
    for (std::size_t i = 0; i < p->size(); ++i) lowest = std::min(lowest, p->P()[i].y);
    EXPECT_LT(lowest, 0.1f) << solver;  // it fell to the floor
  }
}

// A source's rate is read over each frame, not at its start: a rate keyed
// from 0 at frame 1 to 0.04 m^3/s at frame 25 emits its integral, 0.02 m^3
// (2,500 particles of r = 1 cm) by frame 25, and frame 1's emission is the
// integral over frame 1 alone, 0.04 / 48 / 24 m^3 (4.3 particles; the rate
// at the frame's start, 0, or at its end would give 0 or 8).
TEST(Sources, AnAnimatedRateEmitsItsIntegralOverEachFrame) {
  Graph g = tap_scene("PBFSolver");
  set_param(g, test::builtin_registry(), "tap", "flow_rate", R"({"keys": [[1, 0], [25, 0.04]]})", "test");
  CookEngine e(test::builtin_registry(), g);
  EXPECT_EQ(poured(e, 1)->size(), 0u);
  EXPECT_EQ(poured(e, 2)->size(), 4u);
  EXPECT_EQ(poured(e, 13)->size(), 625u);  // a quarter of the volume by half the ramp
  EXPECT_EQ(poured(e, 25)->size(), 2500u);
  // An expression too: 0.02 (1 - cos(2 pi $T)) m^3/s over its second emits 0.02 m^3.
  set_param(g, test::builtin_registry(), "tap", "flow_rate", R"x({"expr": "0.02 * (1 - cos(2 * pi * ($F - 1) / 24))"})x",
            "test");
  e.set_graph(g);
  const std::size_t n = poured(e, 25)->size();
  EXPECT_NEAR(double(n), 2500.0, 1.0);
}

// Mass is conserved with a source and a sink: from frame to frame the
// liquid loses exactly the particles that stood in the drain at the frame's
// start and gains exactly the ones the tap emitted (new ids), nothing else;
// a tap pouring straight into a drain balances it within 10 % over the
// second second.
TEST(Sources, ASourceAndASinkBalanceAndNothingElseIsLost) {
  const Graph g = parse_graph(R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 49], "fps": 24,
    "nodes": [
      {"id": "tank", "type": "ColliderBox", "params": {"mode": "container", "center": [0, 0.5, 0], "size": [0.6, 1.0, 0.6]}},
      {"id": "tap", "type": "FluidSource", "params": {"center": [0, 0.6, 0], "size": [0.1, 0.1, 0.1],
        "velocity": [0, -1.5, 0], "flow_rate": 0.01, "particle_radius": 0.01}},
      {"id": "drain", "type": "KillVolume", "params": {"shape": "sphere", "center": [0, 0, 0], "radius": 0.2}},
      {"id": "sim", "type": "PBFSolver"}],
    "links": [{"from": "tank.colliders", "to": "sim.colliders"}, {"from": "tap.sources", "to": "sim.sources"},
              {"from": "drain.sinks", "to": "sim.sinks"}]})",
                              test::builtin_registry(), "test");
  CookEngine e(test::builtin_registry(), g);
  FluidSource tap;  // the tap's rate, for rate_total
  tap.flow_rate = 0.01;
  tap.start = 1;
  std::shared_ptr<const Points> before = poured(e, 1);
  std::size_t emitted_late = 0, drained_late = 0;
  int32_t max_id = -1;
  for (int f = 2; f <= 49; ++f) {
    const auto now = poured(e, f);
    std::set<int32_t> kept;
    std::size_t drained = 0;
    for (std::size_t i = 0; i < before->size(); ++i) {
      const Vec3f p = before->P()[i];
      if (length(p) < 0.2f) ++drained;  // in the drain at the frame's start
      else kept.insert(before->get_int("id")[i]);
    }
    std::size_t emitted = 0, survivors = 0;
    for (std::size_t i = 0; i < now->size(); ++i) {
      const int32_t id = now->get_int("id")[i];
      if (id > max_id) ++emitted;
      else survivors += kept.count(id);
    }
    ASSERT_EQ(survivors, kept.size()) << "frame " << f << ": a particle outside the drain was lost";
    ASSERT_EQ(now->size(), kept.size() + emitted) << "frame " << f;
    EXPECT_EQ(emitted, rate_total(tap, f - 1, 24.0, 0.01f) - rate_total(tap, f - 2, 24.0, 0.01f))
        << "frame " << f;
    for (std::size_t i = 0; i < now->size(); ++i) max_id = std::max(max_id, now->get_int("id")[i]);
    if (f > 25) emitted_late += emitted, drained_late += drained;
    before = now;
  }
  std::printf("second second: %zu emitted, %zu drained\n", emitted_late, drained_late);
  EXPECT_NEAR(double(drained_late), double(emitted_late), 0.1 * double(emitted_late));
}

// A tap of snow into an MPM solver that takes its material from the
// particles: every particle carries the source's material (snow, 2) and
// attributes, which the solver keeps; a malformed attribute list is refused
// when the graph loads, naming the place.
TEST(Sources, ASourcesMaterialAndAttributesReachTheSolver) {
  const std::string scene = R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 5], "fps": 24,
    "nodes": [
      {"id": "tank", "type": "ColliderBox", "params": {"mode": "container", "center": [0, 0.5, 0], "size": [0.6, 1.0, 0.6]}},
      {"id": "tap", "type": "FluidSource", "params": {"center": [0, 0.8, 0], "size": [0.2, 0.1, 0.2],
        "velocity": [0, -1, 0], "flow_rate": 0.02, "particle_radius": 0.01, "material": "snow",
        "attributes": "ATTRS"}},
      {"id": "sim", "type": "MPMSolver", "params": {"material": "from_attribute"}}],
    "links": [{"from": "tank.colliders", "to": "sim.colliders"}, {"from": "tap.sources", "to": "sim.sources"}]})";
  auto with = [&](const std::string& attrs) {
    std::string g = scene;
    g.replace(g.find("ATTRS"), 5, attrs);
    return g;
  };
  CookEngine e(test::builtin_registry(), parse_graph(with("temperature=300.5 Cd=1,0.5,0"), test::builtin_registry(), "test"));
  const auto p = poured(e, 3);
  ASSERT_EQ(p->size(), 208u);  // two frames of 2,500 a second
  for (std::size_t i = 0; i < p->size(); ++i) {
    ASSERT_EQ(p->get_int("material")[i], 2) << i;
    ASSERT_EQ(p->get_float("temperature")[i], 300.5f) << i;
    ASSERT_EQ(p->get_vec3("Cd")[i], vec3(1.0f, 0.5f, 0.0f)) << i;
  }
  for (const auto& [attrs, message] : std::vector<std::pair<std::string, std::string>>{
           {"temperature", "test: nodes[1] (\"tap\").params.attributes: 'temperature' is not name=value (e.g. "
                           "temperature=300.5 or Cd=1,0.5,0)"},
           {"Cd=1,2", "test: nodes[1] (\"tap\").params.attributes: 'Cd=1,2': a vector takes three numbers"},
           {"t=warm", "test: nodes[1] (\"tap\").params.attributes: 't=warm': 'warm' is not a number"},
           {"n=20000000", "test: nodes[1] (\"tap\").params.attributes: 'n=20000000': a whole number beyond 2^24 is "
                          "not held exactly; give it as a float"},
           {"material=1", "test: nodes[1] (\"tap\").params.attributes: 'material' is given here and by the material "
                          "parameter; give it once"},
           {"v=0,1,0", "test: nodes[1] (\"tap\").params.attributes: 'v' is the solver's own; a source cannot set it"}}) {
    try {
      parse_graph(with(attrs), test::builtin_registry(), "test");
      ADD_FAILURE() << "accepted " << attrs;
    } catch (const Error& err) {
      EXPECT_EQ(std::string(err.what()), message);
    }
  }
}

// A closed mesh as the source's shape: a 0.21 m cube fills with the
// 10 x 10 x 10 particles of spacing 2 cm it holds, moved by `center`.
TEST(Sources, AMeshShapedSourceFillsTheMesh) {
  const Graph g = parse_graph(R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 3], "fps": 24,
    "nodes": [{"id": "cube", "type": "RigidBody", "params": {"size": [0.21, 0.21, 0.21], "position": [0, 0, 0]}},
      {"id": "shape", "type": "BodiesToMesh"},
      {"id": "tap", "type": "FluidSource", "params": {"shape": "mesh", "mode": "fill", "center": [0, 5, 0],
        "particle_radius": 0.01, "jitter": 0}},
      {"id": "sim", "type": "PBFSolver", "params": {"gravity": [0, 0, 0]}}],
    "links": [{"from": "cube.bodies", "to": "shape.bodies"}, {"from": "shape.mesh", "to": "tap.mesh"},
              {"from": "tap.sources", "to": "sim.sources"}]})",
                              test::builtin_registry(), "test");
  CookEngine e(test::builtin_registry(), g);
  const auto p = poured(e, 2);
  ASSERT_EQ(p->size(), 1000u);
  // Each a radius or more inside the cube (its sampled distance, to a
  // tenth of a millimetre), all of them around its centre.
  Vec3f c = vec3(0.0f);
  for (std::size_t i = 0; i < p->size(); ++i) {
    const Vec3f q = p->P()[i] - vec3(0.0f, 5.0f, 0.0f);
    EXPECT_LE(max_component(vec3(std::fabs(q.x), std::fabs(q.y), std::fabs(q.z))), 0.105f - 0.01f + 1e-4f) << i;
    c += q;
  }
  EXPECT_LT(length(c / float(p->size())), 0.005f);
}

// A drain below 0.3 m: what reaches it is taken, so the liquid holds what
// the tap gave less what the drain took, all of it above the drain.
TEST(Sources, AKillVolumeTakesWhatReachesIt) {
  CookEngine e(test::builtin_registry(), tap_scene("PBFSolver", "0.3"));
  const auto p = poured(e, 25);
  EXPECT_LT(p->size(), 2500u);
  EXPECT_GT(p->size(), 0u);
  for (std::size_t i = 0; i < p->size(); ++i) EXPECT_GT(p->P()[i].y, 0.3f - 0.25f) << i;  // fell at most a frame's way
}

// A frame resumed from the cache (the solver made anew from the cached
// frame's particles) continues a poured liquid exactly as the node kept
// between frames does: emission depends on the frame alone.
TEST(Sources, AFrameResumedFromTheCacheContinuesThePour) {
  CookEngine straight(test::builtin_registry(), tap_scene("PBFSolver"));
  const auto ref = poured(straight, 8);
  CookEngine resumed(test::builtin_registry(), tap_scene("PBFSolver"));
  poured(resumed, 4);
  resumed.set_graph(tap_scene("SPHSolver"));  // another solver: the PBF node's solver is dropped
  poured(resumed, 2);
  resumed.set_graph(tap_scene("PBFSolver"));
  ASSERT_TRUE(resumed.is_cached("sim", 4));
  const auto out = poured(resumed, 8);
  ASSERT_EQ(out->size(), ref->size());
  for (std::size_t i = 0; i < out->size(); ++i) {
    ASSERT_EQ(out->P()[i], ref->P()[i]) << i;
    ASSERT_EQ(out->get_int("id")[i], ref->get_int("id")[i]) << i;
  }
}

}  // namespace
}  // namespace eddy

namespace eddy {
namespace {

// Force fields in every solver: a block moving at 1 m/s along x, in no
// gravity, under a drag towards rest at 3 /s, for two frames: in PBF and
// SPH in steps of 1/96 s, v = (1 - 3 dt)^8 by explicit steps (0.7757 m/s);
// MPM takes the many short steps its wave speed asks for, towards
// exp(-3 t) = 0.7788 m/s. An upward uniform field cancelling gravity holds
// the block where it is.
TEST(ForceFields, EverySolverAppliesThem) {
  const double dt = 1.0 / 96, stepped = std::pow(1.0 - 3.0 * dt, 8), smooth = std::exp(-3.0 * 2.0 / 24.0);
  const std::pair<const char*, double> solvers[] = {
      {R"("PBFSolver", "params": {"substeps": 4, "cfl": 0, "solve": "fixed", "iterations": 2, )", stepped},
      {R"("SPHSolver", "params": {"time_step": 0.010416666666666666, )", stepped},
      {R"("MPMSolver", "params": {"dx": 0.02, )", smooth}};
  for (const auto& [solver, expected] : solvers)
    for (const bool drag : {true, false}) {
      const std::string field = drag ? R"("type": "drag", "vector": [0, 0, 0], "strength": 3)"
                                     : R"("type": "uniform", "vector": [0, 9.81, 0])";
      const Graph g = parse_graph(
          std::string(R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 3], "fps": 24,
        "nodes": [{"id": "water", "type": "FluidBox", "params": {"center": [0, 1, 0], "size": [0.1, 0.1, 0.1],
          "particle_radius": 0.01, "velocity": [)") +
              (drag ? "1" : "0") + R"(, 0, 0]}},
          {"id": "field", "type": "ForceField", "params": {)" + field + R"(}},
          {"id": "sim", "type": )" + solver + R"("gravity": [0, )" + (drag ? "0" : "-9.81") + R"(, 0]}}],
        "links": [{"from": "water.particles", "to": "sim.particles"}, {"from": "field.forces", "to": "sim.forces"}]})",
          test::builtin_registry(), "test");
      CookEngine e(test::builtin_registry(), g);
      const auto p = e.cook("sim", 3)->at("particles").as<Points>();
      Vec3f v = vec3(0.0f);
      for (std::size_t i = 0; i < p->size(); ++i) v += p->v()[i];
      v = v / float(p->size());
      std::printf("%.9s %s: mean velocity %.5f %.5f %.5f\n", solver + 1, drag ? "drag" : "lift", v.x, v.y, v.z);
      if (drag) EXPECT_NEAR(v.x, expected, 1e-3) << solver;
      else EXPECT_LT(length(v), 1e-3f) << solver;
    }
}

// And on bodies, at their centre of mass: a crate under a field cancelling
// gravity hangs where it was.
TEST(ForceFields, BodiesFeelThemToo) {
  const Graph g = parse_graph(R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 12], "fps": 24,
    "nodes": [{"id": "crate", "type": "RigidBody", "params": {"size": [0.2, 0.2, 0.2], "position": [0, 1, 0]}},
      {"id": "field", "type": "ForceField", "params": {"type": "uniform", "vector": [0, 9.81, 0]}},
      {"id": "sim", "type": "RigidBodySolver"}],
    "links": [{"from": "crate.bodies", "to": "sim.bodies"}, {"from": "field.forces", "to": "sim.forces"}]})",
                              test::builtin_registry(), "test");
  CookEngine e(test::builtin_registry(), g);
  const auto b = e.cook("sim", 12)->at("bodies").as<Bodies>();
  EXPECT_NEAR(b->x[0].y(), 1.0, 1e-5);
  EXPECT_LT(b->v[0].norm(), 1e-5);
}

// TimeShift passes on a solver's output of another frame: the very value
// the solver cooked there (an offset, and a held frame).
TEST(TimeShift, PassesOnTheSolversFrame) {
  const Graph g = parse_graph(R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 8], "fps": 24,
    "nodes": [{"id": "water", "type": "FluidBox", "params": {"center": [0, 1, 0], "size": [0.1, 0.1, 0.1]}},
      {"id": "sim", "type": "PBFSolver"},
      {"id": "before", "type": "TimeShift", "params": {"offset": -2}},
      {"id": "still", "type": "TimeShift", "params": {"mode": "hold", "frame": 3}}],
    "links": [{"from": "water.particles", "to": "sim.particles"}, {"from": "sim.particles", "to": "before.points"},
              {"from": "sim.particles", "to": "still.points"}]})",
                              test::builtin_registry(), "test");
  CookEngine e(test::builtin_registry(), g);
  const auto at = [&](const std::string& node, int f) {
    return e.cook(node, f)->at(node == "sim" ? "particles" : "points").as<Points>();
  };
  EXPECT_EQ(at("before", 6), at("sim", 4));
  EXPECT_EQ(at("still", 7), at("sim", 3));
  EXPECT_EQ(at("still", 2), at("sim", 3));  // a later frame, cooked on demand
  EXPECT_NE(at("sim", 4)->P()[0], at("sim", 3)->P()[0]);  // the frames differ (it falls)
  try {
    parse_graph(R"({"format": "eddy-graph", "version": 2, "frame_range": [1, 8],
      "nodes": [{"id": "t", "type": "TimeShift", "params": {"offset": {"expr": "-$F"}}}], "links": []})",
                test::builtin_registry(), "g.json");
    FAIL() << "accepted";
  } catch (const Error& err) {
    EXPECT_STREQ(err.what(), "g.json: nodes[0] (\"t\").params.offset: TimeShift's parameters choose the frame its "
                             "inputs are cooked at; they cannot be animated");
  }
}

// Switch passes on the chosen link, cutting on an animated choice.
TEST(Switch, PassesOnTheChosenInput) {
  const Graph g = parse_graph(R"({"format": "eddy-graph", "version": 2, "frame_range": [1, 8], "fps": 24,
    "nodes": [{"id": "a", "type": "FluidBox", "params": {"center": [0, 1, 0], "size": [0.1, 0.1, 0.1]}},
      {"id": "b", "type": "FluidBox", "params": {"center": [5, 1, 0], "size": [0.1, 0.1, 0.1]}},
      {"id": "cut", "type": "Switch", "params": {"input": {"keys": [[1, 0], [4, 1]], "interpolation": "constant"}}}],
    "links": [{"from": "a.particles", "to": "cut.points"}, {"from": "b.particles", "to": "cut.points"}]})",
                              test::builtin_registry(), "test");
  CookEngine e(test::builtin_registry(), g);
  EXPECT_EQ(e.cook("cut", 3)->at("points").as<Points>(), e.cook("a", 3)->at("particles").as<Points>());
  EXPECT_EQ(e.cook("cut", 4)->at("points").as<Points>(), e.cook("b", 4)->at("particles").as<Points>());
  EXPECT_EQ(e.cook("cut", 4)->at("mesh").as<Mesh>()->face_count(), 0u);
}

}  // namespace
}  // namespace eddy
