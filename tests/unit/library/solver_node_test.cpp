// The solver-node skeleton (SolverNode in nodes/library) through the cook
// engine, for every solver node: at the start frame the output is the input
// with an `id` added; a frame resumed from a cached frame (the solver made
// anew and loaded from that frame's output) continues the simulation as the
// solver kept between frames does.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "eddy/graph/cook.h"
#include "eddy/graph/graph.h"
#include "../../builtin_registry.h"
#include "../../unit/graph/test_nodes.h"

namespace eddy {
namespace {

// FluidBox -> <solver> over frames 1..8, with the solver's parameters `params`.
Graph solver_graph(const std::string& type, const std::string& params) {
  return parse_graph(R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 8], "fps": 24,
    "nodes": [
      {"id": "water", "type": "FluidBox", "params": {"center": [0.0, 0.12, 0.0], "size": [0.1, 0.1, 0.1], "particle_radius": 0.01}},
      {"id": "sim", "type": ")" + type + R"(", "params": {)" + params + R"(}}
    ],
    "links": [{"from": "water.particles", "to": "sim.particles"}]})",
                     test::builtin_registry(), "test");
}

struct Case {
  const char* type;
  const char* params;        // a scene that moves from frame 1
  const char* other_params;  // the same with one parameter changed
};

// Gravity differs in the changed scenes, so a restart shows in the output.
// Reordering on (every 3 steps: it changes the order of float sums) and
// SPH's speed estimated from the particles it loads: neither may make a
// resumed frame differ.
const Case kCases[] = {
    {"PBFSolver", R"("reorder_interval": 3)", R"("reorder_interval": 3, "gravity": [0, -5, 0])"},
    {"SPHSolver", R"("reorder_interval": 3)", R"("reorder_interval": 3, "gravity": [0, -5, 0])"},
    {"SPHSolver", R"("reorder_interval": 3, "method": "dfsph")", R"("reorder_interval": 3, "method": "dfsph", "gravity": [0, -5, 0])"},
    {"MPMSolver", R"("reorder_interval": 3, "dx": 0.02)", R"("reorder_interval": 3, "dx": 0.02, "gravity": [0, -5, 0])"},
};

std::shared_ptr<const Points> particles(CookEngine& e, int frame) { return e.cook("sim", frame)->at("particles").as<Points>(); }

// Largest distance between particles of the same id.
float worst_distance(const Points& a, const Points& b) {
  EXPECT_EQ(a.size(), b.size());
  std::vector<std::size_t> at(b.size());
  for (std::size_t i = 0; i < b.size(); ++i) at[std::size_t(b.get_int("id")[i])] = i;
  float worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, length(a.P()[i] - b.P()[at[std::size_t(a.get_int("id")[i])]]));
  return worst;
}

// Every attribute, in the same order, bit for bit.
void expect_same_bits(const Points& a, const Points& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  ASSERT_EQ(a.attributes().size(), b.attributes().size()) << what;
  for (std::size_t k = 0; k < a.attributes().size(); ++k) {
    const auto &x = a.attributes()[k], &y = b.attributes()[k];
    ASSERT_EQ(x.name, y.name) << what;
    EXPECT_EQ(std::memcmp(a.data(x), b.data(y), a.size() * attrib_size(x.type)), 0) << what << ": " << x.name;
  }
}

TEST(SolverNode, TheStartFrameIsTheInputWithAnId) {
  for (const Case& c : kCases) {
    CookEngine e(test::builtin_registry(), solver_graph(c.type, c.params));
    const auto in = e.cook("water", 1)->at("particles").as<Points>();
    const auto out = particles(e, 1);
    ASSERT_EQ(out->size(), in->size()) << c.type;
    ASSERT_TRUE(out->has("id")) << c.type;
    EXPECT_FLOAT_EQ(out->radius, in->radius) << c.type;
    std::vector<int> ids(out->get_int("id"), out->get_int("id") + out->size());
    std::sort(ids.begin(), ids.end());
    for (std::size_t i = 0; i < ids.size(); ++i) ASSERT_EQ(ids[i], int(i)) << c.type;
  }
}

TEST(SolverNode, AFrameResumedFromTheCacheContinuesTheSimulation) {
  for (const Case& c : kCases) {
    // Straight: frames 1..6 with the solver kept between frames.
    CookEngine straight(test::builtin_registry(), solver_graph(c.type, c.params));
    const auto ref = particles(straight, 6);
    // Resumed: frames 1..3, then a parameter change (the solver is made anew
    // for frames 1..2 of the other scene), then back: frame 4 continues from
    // the cached frame 3, through a new solver loaded from it.
    CookEngine resumed(test::builtin_registry(), solver_graph(c.type, c.params));
    const auto at3 = particles(resumed, 3);
    resumed.set_graph(solver_graph(c.type, c.other_params));
    const auto other = particles(resumed, 2);
    resumed.set_graph(solver_graph(c.type, c.params));
    EXPECT_TRUE(resumed.is_cached("sim", 3)) << c.type;
    const auto out = particles(resumed, 6);
    // The scene moves (gravity), and the changed one moves differently.
    EXPECT_GT(worst_distance(*ref, *at3), 1e-3f) << c.type;
    EXPECT_GT(worst_distance(*other, *particles(straight, 2)), 1e-4f) << c.type;
    // The solvers' state is the particles they output (MPM's deformation
    // gradient and affine velocity included), and every frame starts from
    // it: a resumed frame is the straight one bit for bit.
    EXPECT_EQ(worst_distance(*out, *ref), 0.0f) << c.type << " " << c.params;
    expect_same_bits(*out, *ref, c.type);
  }
}

TEST(SolverNode, AddsAnIdWhenTheInputHasNone) {
  Registry r;
  r.load_plugin(std::string(EDDY_BINARY_DIR) + "/plugins/eddy_builtin_nodes.so");
  testing::register_test_nodes(r);  // Source: points without an id
  const Graph g = parse_graph(R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 3],
    "nodes": [{"id": "src", "type": "Source", "params": {"count": 10}}, {"id": "sim", "type": "PBFSolver"}],
    "links": [{"from": "src.points", "to": "sim.particles"}]})",
                              r, "");
  CookEngine e(r, g);
  const auto out = e.cook("sim", 3)->at("particles").as<Points>();
  ASSERT_TRUE(out->has("id"));
  std::vector<int> ids(out->get_int("id"), out->get_int("id") + out->size());
  std::sort(ids.begin(), ids.end());
  for (int i = 0; i < 10; ++i) EXPECT_EQ(ids[i], i);
  EXPECT_TRUE(out->has("density"));
}

}  // namespace
}  // namespace eddy
