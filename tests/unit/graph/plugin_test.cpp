// Node libraries as plug-ins: the built-in library and a tiny third-party
// one are loaded from shared libraries and their nodes cook.
#include <gtest/gtest.h>

#include <cstdlib>

#include "eddy/graph/cook.h"
#include "eddy/graph/graph.h"
#include "eddy/graph/registry.h"

namespace eddy {
namespace {

const std::string kBuiltin = std::string(EDDY_BINARY_DIR) + "/plugins/eddy_builtin_nodes.so";
const std::string kThirdParty = std::string(EDDY_TEST_PLUGIN);

TEST(Plugins, ThirdPartyPluginRegistersAndCooksItsNode) {
  Registry r;
  r.load_plugin(kBuiltin);
  r.load_plugin(kThirdParty);
  r.load_plugin(kThirdParty);  // loading twice is a no-op
  ASSERT_NE(r.find("ThirdPartyScale"), nullptr);
  ASSERT_NE(r.find("FluidBox"), nullptr);
  const Graph g = parse_graph(R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 1],
    "nodes": [{"id": "box", "type": "FluidBox", "params": {"size": [0.2, 0.2, 0.2], "particle_radius": 0.05,
                                                             "center": [1, 1, 1]}},
              {"id": "scale", "type": "ThirdPartyScale", "params": {"factor": 3}}],
    "links": [{"from": "box.particles", "to": "scale.particles"}]})",
                              r, "");
  CookEngine e(r, g);
  const auto out = e.cook("scale", 1)->at("particles").as<Points>();
  ASSERT_EQ(out->size(), 8u);  // 2 x 2 x 2 lattice
  EXPECT_NEAR(out->P()[0].x, 3.0f * 0.95f, 1e-5f);
}

TEST(Plugins, DefaultSearchFindsTheBuiltinLibraryAndEddyPluginPath) {
  ::setenv("EDDY_PLUGIN_PATH", kThirdParty.c_str(), 1);
  Registry r;
  // As if the executable were in <build>/bin.
  const int n = r.load_default_plugins(std::string(EDDY_BINARY_DIR) + "/bin/eddy");
  ::unsetenv("EDDY_PLUGIN_PATH");
  EXPECT_EQ(n, 2);
  EXPECT_NE(r.find("PBFSolver"), nullptr);
  EXPECT_NE(r.find("ThirdPartyScale"), nullptr);
}

TEST(Plugins, BadPluginFilesAreNamedInTheError) {
  Registry r;
  auto msg = [&](const std::string& path) {
    try {
      r.load_plugin(path);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(msg("/nonexistent/lib.so").find("'/nonexistent/lib.so' does not exist"), std::string::npos);
  // A shared library that is not a plug-in.
  const std::string core = std::string(EDDY_BINARY_DIR) + "/lib/libeddy_core.so";
  EXPECT_NE(msg(core).find("is not an eddy node plug-in"), std::string::npos) << msg(core);
}

TEST(Plugins, TwoLibrariesRegisteringOneTypeIsAnError) {
  Registry r;
  r.load_plugin(kBuiltin);
  NodeSpec s;
  s.type = "FluidBox";
  s.factory = [] { return std::unique_ptr<Node>(); };
  try {
    r.add(s);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("registered twice"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("eddy_builtin_nodes.so"), std::string::npos);
  }
}

}  // namespace
}  // namespace eddy
