// The MPM nodes cooked through the engine as `eddy run` would:
// ParticlesFromMesh fills a mesh to its volume, MPMMaterial and MergePoints
// build a mixed particle set, MPMSolver keeps each particle's material and
// names what is wrong with bad input.
#include <gtest/gtest.h>

#include "eddy/core/mesh.h"
#include "eddy/core/mpm/mpm.h"
#include "validation.h"

namespace eddy::validation {
namespace {

TEST(MpmNodes, ParticlesFromMeshFillTheLemonToItsVolume) {
  const std::string lemon = std::string(EDDY_SOURCE_DIR) + "/examples/assets/lemon.obj";
  const double r = 0.004;
  const Graph g = parse_graph(R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 1], "fps": 24,
    "nodes": [
      {"id": "mesh", "type": "ReadMesh", "params": {"path": ")" + lemon + R"("}},
      {"id": "fill", "type": "ParticlesFromMesh", "params": {"particle_radius": )" + std::to_string(r) + R"(}}
    ],
    "links": [{"from": "mesh.mesh", "to": "fill.mesh"}]})",
                              builtin_registry(), "test");
  CookEngine e(builtin_registry(), g);
  const auto pts = e.cook("fill", 1)->at("particles").as<Points>();
  const MeshStats st = measure_mesh(read_mesh(lemon));
  // Each particle stands for a lattice cell of (2r)^3; the lattice points
  // inside a smooth body fill its volume to within the cells its surface
  // cuts (area x spacing / 2 on either side, here about 5 %).
  const double filled = double(pts->size()) * std::pow(2 * r, 3);
  EXPECT_NEAR(filled, st.volume, 0.05 * st.volume) << pts->size() << " particles";
  EXPECT_FLOAT_EQ(pts->radius, float(r));
  EXPECT_TRUE(pts->has("id"));
}

// A lattice too fine for any machine (the lemon scaled to 5 m at r = 0.1 mm:
// about 1e13 points) is refused before the mesh is sampled, with the node,
// the count and what to change.
TEST(MpmNodes, ParticlesFromMeshRefusesALatticeBeyondThisMachine) {
  const std::string lemon = std::string(EDDY_SOURCE_DIR) + "/examples/assets/lemon.obj";
  const Graph g = parse_graph(R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 1], "fps": 24,
    "nodes": [
      {"id": "mesh", "type": "ReadMesh", "params": {"path": ")" + lemon + R"("}},
      {"id": "big", "type": "Transform", "params": {"uniform_scale": 50}},
      {"id": "fill", "type": "ParticlesFromMesh", "params": {"particle_radius": 0.0001}}
    ],
    "links": [{"from": "mesh.mesh", "to": "big.mesh"}, {"from": "big.mesh", "to": "fill.mesh"}]})",
                              builtin_registry(), "test");
  CookEngine e(builtin_registry(), g);
  try {
    e.cook("fill", 1);
    FAIL() << "a lattice beyond this machine must be refused";
  } catch (const Error& err) {
    const std::string m = err.what();
    for (const char* part : {"node 'fill' (ParticlesFromMesh)", "particle_radius 0.0001 m in the mesh's bounding box makes ",
                             " particles, needing about ", "Raise particle_radius."})
      EXPECT_NE(m.find(part), std::string::npos) << part << " in: " << m;
  }
}

std::string mixed_scene(const std::string& solver_params) {
  return R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 3], "fps": 24,
    "nodes": [
      {"id": "a", "type": "FluidBox", "params": {"center": [-0.1, 0.1, 0], "size": [0.1, 0.1, 0.1], "particle_radius": 0.01}},
      {"id": "b", "type": "FluidBox", "params": {"center": [0.1, 0.1, 0], "size": [0.1, 0.1, 0.1], "particle_radius": 0.01}},
      {"id": "jelly", "type": "MPMMaterial", "params": {"material": "jelly"}},
      {"id": "sand", "type": "MPMMaterial", "params": {"material": "sand"}},
      {"id": "merge", "type": "MergePoints"},
      {"id": "solver", "type": "MPMSolver", "params": {)" +
         solver_params + R"(}}
    ],
    "links": [
      {"from": "a.particles", "to": "jelly.particles"},
      {"from": "b.particles", "to": "sand.particles"},
      {"from": "jelly.particles", "to": "merge.points"},
      {"from": "sand.particles", "to": "merge.points"},
      {"from": "merge.points", "to": "solver.particles"}
    ]})";
}

TEST(MpmNodes, MixedMaterialsKeepTheirIdsThroughTheSolver) {
  const Graph g = parse_graph(mixed_scene("\"domain_size\": [1, 1, 1], \"domain_center\": [0, 0.5, 0]"), builtin_registry(), "test");
  CookEngine e(builtin_registry(), g);
  const auto pts = e.cook("solver", 3)->at("particles").as<Points>();
  ASSERT_EQ(pts->size(), 250u);
  const int32_t* mat = pts->get_int("material");
  const int32_t* id = pts->get_int("id");
  for (std::size_t i = 0; i < pts->size(); ++i) {
    // MergePoints numbered the jelly block first.
    ASSERT_EQ(mat[i], id[i] < 125 ? int(MpmMaterial::Jelly) : int(MpmMaterial::Sand)) << i;
  }
  EXPECT_TRUE(pts->has("F0"));
  EXPECT_TRUE(pts->has("J"));
  // One material for all overrides the attribute.
  const Graph g2 = parse_graph(mixed_scene("\"material\": \"snow\""), builtin_registry(), "test");
  CookEngine e2(builtin_registry(), g2);
  const auto snow = e2.cook("solver", 2)->at("particles").as<Points>();
  for (std::size_t i = 0; i < snow->size(); ++i) ASSERT_EQ(snow->get_int("material")[i], int(MpmMaterial::Snow));
}

TEST(MpmNodes, FilterPointsPicksOneMaterial) {
  std::string scene = mixed_scene("");
  const std::string filters =
      R"(, {"id": "jelly_only", "type": "FilterPoints", "params": {"attribute": "material", "value": 1}},
         {"id": "not_jelly", "type": "FilterPoints", "params": {"value": 1, "mode": "remove"}},
         {"id": "bad", "type": "FilterPoints", "params": {"attribute": "J"}}
    ],)";
  scene.replace(scene.find("\n    ],"), 7, filters);
  scene.replace(scene.rfind("]"), 1,
                R"(, {"from": "solver.particles", "to": "jelly_only.points"},
                     {"from": "solver.particles", "to": "not_jelly.points"},
                     {"from": "solver.particles", "to": "bad.points"}])");
  const Graph g = parse_graph(scene, builtin_registry(), "test");
  CookEngine e(builtin_registry(), g);
  const auto jelly = e.cook("jelly_only", 2)->at("points").as<Points>();
  const auto rest = e.cook("not_jelly", 2)->at("points").as<Points>();
  ASSERT_EQ(jelly->size(), 125u);
  ASSERT_EQ(rest->size(), 125u);
  for (std::size_t i = 0; i < 125; ++i) {
    EXPECT_EQ(jelly->get_int("material")[i], int(MpmMaterial::Jelly));
    EXPECT_EQ(rest->get_int("material")[i], int(MpmMaterial::Sand));
  }
  EXPECT_TRUE(jelly->has("F0"));  // every attribute comes along
  try {
    e.cook("bad", 2);
    FAIL() << "a float attribute cannot be matched";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("'J' is a float attribute"), std::string::npos) << err.what();
  }
}

TEST(MpmNodes, BadMaterialsAndTooFineGridsAreNamed) {
  try {
    parse_graph(mixed_scene("\"material\": \"lava\""), builtin_registry(), "test.eddy.json");
    FAIL() << "an unknown material must not load";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("material"), std::string::npos) << m;
    EXPECT_NE(m.find("lava"), std::string::npos) << m;
    EXPECT_NE(m.find("water"), std::string::npos) << m;  // the valid ones are listed
  }
  const Graph g = parse_graph(mixed_scene("\"dx\": 0.00001, \"max_grid_memory\": 0.001"), builtin_registry(), "test");
  CookEngine e(builtin_registry(), g);
  try {
    e.cook("solver", 1);
    FAIL() << "a grid far too fine must be refused";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("coarser dx"), std::string::npos) << err.what();
  }
}

}  // namespace
}  // namespace eddy::validation
