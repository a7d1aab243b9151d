// The rigid-body nodes cooked through the engine as `eddy run` would: a
// tumbling crate and a ball dropped on a floor come to rest on it, their
// mesh touches the floor, and WriteBodies' files hold their poses.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "eddy/core/mesh.h"
#include "eddy/core/rigid/bodies.h"
#include "eddy/graph/bodies_value.h"
#include "../temp_dir.h"
#include "validation.h"

namespace eddy::validation {
namespace {

std::string drop_scene(const std::string& out_dir) {
  return R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 36], "fps": 24,
    "nodes": [
      {"id": "floor", "type": "ColliderPlane", "params": {"friction": 0.6}},
      {"id": "crate", "type": "RigidBody", "params": {"size": [0.3, 0.2, 0.25], "density": 600,
        "position": [0, 0.6, 0], "rotation": [20, 10, 35], "angular_velocity": [2, -1, 3]}},
      {"id": "ball", "type": "RigidBody", "params": {"name": "ball", "shape": "sphere", "radius": 0.08,
        "position": [0.6, 0.4, 0], "contact_stiffness": 20000}},
      {"id": "sim", "type": "RigidBodySolver"},
      {"id": "shapes", "type": "BodiesToMesh"},
      {"id": "write", "type": "WriteBodies", "params": {"path": ")" +
         out_dir + R"(/bodies.$F4.json"}}
    ],
    "links": [
      {"from": "crate.bodies", "to": "sim.bodies"},
      {"from": "ball.bodies", "to": "sim.bodies"},
      {"from": "floor.colliders", "to": "sim.colliders"},
      {"from": "sim.bodies", "to": "shapes.bodies"},
      {"from": "sim.bodies", "to": "write.bodies"}
    ]})";
}

TEST(RigidNodes, ACrateAndABallDroppedOnAFloorComeToRestOnIt) {
  const auto dir = test::fresh_test_dir("eddy_rigid_");
  const Graph g = parse_graph(drop_scene(dir.string()), builtin_registry(), "test");
  CookEngine e(builtin_registry(), g);
  Reports reports;
  e.set_observer(&reports);
  const auto bodies = e.cook("sim", 36)->at("bodies").as<Bodies>();  // 1.5 s
  ASSERT_EQ(bodies->size(), 2u);
  EXPECT_EQ(bodies->name[0], "crate");  // the node id when no name is given
  EXPECT_EQ(bodies->name[1], "ball");
  for (std::size_t i = 0; i < 2; ++i) EXPECT_LT(bodies->v[i].norm(), 0.05) << bodies->name[i] << " still moving";
  // Resting on the floor: the rubber ball (its own contact stiffness, 2e4
  // N/m) its weight over that into it, the crate's lowest corner on it (to
  // the solver's stiff contact's compliance, well under a millimetre).
  EXPECT_EQ(bodies->stiffness[1], 2e4);
  EXPECT_NEAR(bodies->x[1].y(), 0.08 - bodies->mass[1] * 9.81 / 2e4, 1e-5);
  const auto mesh = e.cook("shapes", 36)->at("mesh").as<Mesh>();
  float lowest = 1e30f;
  for (std::size_t k = 0; k < 8; ++k) lowest = std::min(lowest, mesh->points[k].y);  // the crate's corners
  EXPECT_NEAR(lowest, 0.0, 1e-3);
  // A box at rest lies on a face: its centre is at one of its half extents.
  const double y = bodies->x[0].y();
  EXPECT_TRUE(std::abs(y - 0.15) < 2e-3 || std::abs(y - 0.1) < 2e-3 || std::abs(y - 0.125) < 2e-3) << y;
  // WriteBodies wrote frame 36's poses.
  e.cook("write", 36);
  std::ifstream f(dir / "bodies.0036.json");
  ASSERT_TRUE(f.good());
  const nlohmann::json j = nlohmann::json::parse(f);
  ASSERT_EQ(j.at("bodies").size(), 2u);
  EXPECT_EQ(j["bodies"][1]["name"], "ball");
  EXPECT_NEAR(j["bodies"][1]["position"][1].get<double>(), bodies->x[1].y(), 1e-12);
  EXPECT_EQ(j["bodies"][0]["orientation"].size(), 4u);
  const std::string report = reports.of("sim", 36);
  std::printf("%s\n", report.c_str());
  EXPECT_NE(report.find("2 bodies, 42 steps"), std::string::npos);
}

// Cooking the one RigidBody `id` with `params` (a JSON object) at frame 1
// fails with an error that holds `message`.
void expect_body_error(const std::string& id, const std::string& params, const std::string& message) {
  const Graph g = parse_graph(R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 1], "fps": 24,
    "nodes": [{"id": ")" + id + R"(", "type": "RigidBody", "params": )" + params + R"(}], "links": []})",
                              builtin_registry(), "test");
  CookEngine e(builtin_registry(), g);
  try {
    e.cook(id, 1);
    FAIL();
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find(message), std::string::npos) << err.what();
  }
}

TEST(RigidNodes, ABodyWithoutSizeIsNamedInTheError) {
  expect_body_error("flat", R"({"size": [0.3, 0, 0.25]})",
                    "node 'flat' (RigidBody), frame 1: body 'flat': its size must be positive");
}

// A lemon (examples/assets/lemon.obj, 14 cm long, 9 cm across) as a mesh
// body, dropped end first and turning: it falls over and comes to rest on
// its side, its centre of mass half its width up; BodiesToMesh gives its
// surface as modelled, touching the floor, and WriteBodies names its shape.
TEST(RigidNodes, AMeshLemonDroppedEndFirstComesToRestOnItsSide) {
  const auto dir = test::fresh_test_dir("eddy_rigid_mesh_");
  const Graph g = parse_graph(R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 48], "fps": 24,
    "nodes": [
      {"id": "floor", "type": "ColliderPlane", "params": {"friction": 0.6}},
      {"id": "obj", "type": "ReadMesh", "params": {"path": ")" EDDY_SOURCE_DIR R"(/examples/assets/lemon.obj"}},
      {"id": "lemon", "type": "RigidBody", "params": {"shape": "mesh", "density": 950, "position": [0, 0.2, 0],
        "rotation": [0, 0, 80], "angular_velocity": [0, 0, 1]}},
      {"id": "sim", "type": "RigidBodySolver"},
      {"id": "shapes", "type": "BodiesToMesh"},
      {"id": "write", "type": "WriteBodies", "params": {"path": ")" +
                                  dir.string() + R"(/bodies.$F4.json"}}
    ],
    "links": [
      {"from": "obj.mesh", "to": "lemon.mesh"},
      {"from": "lemon.bodies", "to": "sim.bodies"},
      {"from": "floor.colliders", "to": "sim.colliders"},
      {"from": "sim.bodies", "to": "shapes.bodies"},
      {"from": "sim.bodies", "to": "write.bodies"}
    ]})",
                              builtin_registry(), "test");
  CookEngine e(builtin_registry(), g);
  Reports reports;
  e.set_observer(&reports);
  const auto bodies = e.cook("sim", 48)->at("bodies").as<Bodies>();  // 2 s
  ASSERT_EQ(bodies->size(), 1u);
  ASSERT_EQ(bodies->geometry[0].shape, BodyShape::Mesh);
  const auto mesh = e.cook("shapes", 48)->at("mesh").as<Mesh>();
  EXPECT_EQ(mesh->face_count(), 3072u);
  float lowest = 1e30f;
  for (const Vec3f& p : mesh->points) lowest = std::min(lowest, p.y);
  // Its long axis (the model's x) lies level.
  const auto model = read_mesh(EDDY_SOURCE_DIR "/examples/assets/lemon.obj");
  std::size_t tip = 0;
  for (std::size_t k = 0; k < model.points.size(); ++k)
    if (model.points[k].x > model.points[tip].x) tip = k;
  const Vec3f axis = mesh->points[tip] - to_vec3f(bodies->x[0]);
  std::printf("lemon at rest: centre %.4f m up, lowest point %.3g mm off the floor, tip %.4f m above the centre, "
              "%.3g m/s\n", bodies->x[0].y(), 1e3 * lowest, axis.y, bodies->v[0].norm());
  EXPECT_NEAR(bodies->x[0].y(), 0.045, 2e-3);
  EXPECT_NEAR(lowest, 0.0f, 1e-3f);
  EXPECT_LT(std::abs(axis.y), 0.01f);
  EXPECT_LT(bodies->v[0].norm(), 0.01);
  e.cook("write", 48);
  std::ifstream f(dir / "bodies.0048.json");
  const nlohmann::json j = nlohmann::json::parse(f);
  EXPECT_EQ(j["bodies"][0]["shape"], "mesh");
  const std::string report = reports.of("lemon", 1);
  std::printf("%s\n", report.c_str());
  EXPECT_NE(report.find("surface samples"), std::string::npos);
}

TEST(RigidNodes, AMeshBodyWithoutItsMeshIsNamedInTheError) {
  expect_body_error("rock", R"({"shape": "mesh"})",
                    "node 'rock' (RigidBody), frame 1: shape is mesh, so input 'mesh' must be linked to a closed mesh");
}

}  // namespace
}  // namespace eddy::validation

namespace eddy::validation {
namespace {

// A crate dropped into a small tank of water, with the bodies linked into
// the solver (`bodies` input) or not; the solver PBF unless `solver` names
// another, with its parameters.
Graph tank_with_crate(bool linked, const std::string& gravity,
                      const std::string& solver = R"("PBFSolver", "params": {"substeps": 4, )") {
  std::string g = R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 12], "fps": 24,
    "nodes": [
      {"id": "tank", "type": "ColliderBox", "params": {"mode": "container", "center": [0.15, 0.2, 0.15],
        "size": [0.3, 0.4, 0.3]}},
      {"id": "water", "type": "FluidBox", "params": {"center": [0.15, 0.05, 0.15], "size": [0.3, 0.1, 0.3],
        "particle_radius": 0.01}},
      {"id": "crate", "type": "RigidBody", "params": {"size": [0.1, 0.06, 0.1], "density": 500,
        "position": [0.15, 0.16, 0.15], "rotation": [0, 0, 10]}},
      {"id": "sim", "type": )" + solver + R"("reorder_interval": 0, "gravity": )" + gravity + R"(}}
    ],
    "links": [
      {"from": "tank.colliders", "to": "sim.colliders"},
      {"from": "water.particles", "to": "sim.particles"})";
  if (linked) g += R"(,
      {"from": "crate.bodies", "to": "sim.bodies"})";
  g += "]}";
  return parse_graph(g, builtin_registry(), "test");
}

std::shared_ptr<const Bodies> bodies_at(CookEngine& e, int frame) {
  return e.cook("sim", frame)->at("bodies").as<Bodies>();
}

// Linked, the crate falls into the water (0.1 m deep), is caught by it and
// floats; unlinked, the output holds no bodies.
void crate_is_caught(const std::string& solver) {
  CookEngine e(builtin_registry(), tank_with_crate(true, "[0, -9.81, 0]", solver));
  const auto b = bodies_at(e, 12);
  ASSERT_EQ(b->size(), 1u);
  std::printf("crate at %.4f m, %.3f m/s at frame 12\n", b->x[0].y(), b->v[0].norm());
  EXPECT_GT(b->x[0].y(), 0.08);  // afloat (about 0.10 m: half its 0.06 m height under water), not sunk (0.03 m)
  EXPECT_LT(b->v[0].norm(), 0.3);
  CookEngine unlinked(builtin_registry(), tank_with_crate(false, "[0, -9.81, 0]", solver));
  EXPECT_EQ(bodies_at(unlinked, 4)->size(), 0u);
}

TEST(CoupledBodiesNode, ACrateDroppedIntoTheWaterIsCaughtByIt) {
  crate_is_caught(R"("PBFSolver", "params": {"substeps": 4, )");
}
TEST(CoupledBodiesNode, ACrateDroppedIntoDfsphWaterIsCaughtByIt) {
  crate_is_caught(R"("SPHSolver", "params": {"method": "dfsph", )");
}
TEST(CoupledBodiesNode, ACrateDroppedIntoMpmWaterIsCaughtByIt) {
  crate_is_caught(R"("MPMSolver", "params": {"material": "water", )");
}
// The crate is 1.5 cells tall at MPM's dx = 4 cm: in water the node says it
// is too small to float right, once, at the start frame; in sand it is not.
TEST(CoupledBodiesNode, MpmNamesABodyTooSmallForItsWater) {
  for (const std::string material : {"water", "sand"}) {
    CookEngine e(builtin_registry(),
                 tank_with_crate(true, "[0, -9.81, 0]", R"("MPMSolver", "params": {"material": ")" + material + "\", "));
    Reports r;
    e.set_observer(&r);
    e.cook("sim", 3);
    int warned = 0;
    for (const std::string& l : r.lines)
      warned += l.find("warning: body 'crate' is 1.5 cells across at dx = 0.04 m: in MPM water") != std::string::npos;
    EXPECT_EQ(warned, material == "water" ? 1 : 0) << material;
  }
}

// As every solver node (tests/unit/library/solver_node_test.cpp): a frame
// resumed from the cache (liquid and bodies loaded from the cached frame's
// outputs) continues the coupled simulation as the node kept between frames
// does.
TEST(CoupledBodiesNode, AFrameResumedFromTheCacheContinuesTheCoupledSimulation) {
  CookEngine straight(builtin_registry(), tank_with_crate(true, "[0, -9.81, 0]"));
  const auto ref = bodies_at(straight, 8);
  CookEngine resumed(builtin_registry(), tank_with_crate(true, "[0, -9.81, 0]"));
  bodies_at(resumed, 4);
  resumed.set_graph(tank_with_crate(true, "[0, -5, 0]"));
  const auto other = bodies_at(resumed, 3);
  resumed.set_graph(tank_with_crate(true, "[0, -9.81, 0]"));
  ASSERT_TRUE(resumed.is_cached("sim", 4));
  const auto out = bodies_at(resumed, 8);
  EXPECT_GT((other->x[0] - bodies_at(straight, 3)->x[0]).norm(), 1e-4);  // the other scene differs
  EXPECT_LT((out->x[0] - ref->x[0]).norm(), 1e-6);
  EXPECT_LT((out->v[0] - ref->v[0]).norm(), 1e-5);
}

}  // namespace
}  // namespace eddy::validation
