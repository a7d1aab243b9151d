// Assets (subnetworks): an asset node cooks exactly as its expanded graph
// does, nested assets expand with their path in the ids, promoted
// parameters (animated ones too) reach the inner parameters they drive, and
// a malformed asset file is refused naming the place.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <cstring>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "eddy/graph/asset.h"
#include "eddy/graph/cook.h"
#include "eddy/graph/graph.h"
#include "eddy/graph/util.h"
#include "eddy/graph/volumes_value.h"
#include "../../temp_dir.h"

namespace eddy {
namespace {

namespace fs = std::filesystem;

const std::string kAsset = std::string(EDDY_SOURCE_DIR) + "/examples/assets/liquid_surface.eddy.json";

Registry& registry() {
  static Registry r;
  static bool loaded = false;
  if (!loaded) {
    r.load_plugin(std::string(EDDY_BINARY_DIR) + "/plugins/eddy_builtin_nodes.so");
    r.load_asset(kAsset);
    loaded = true;
  }
  return r;
}

// A small block of PBF water, surfaced by the asset or by its three nodes.
const char* kSim = R"(
  {"id": "water", "type": "FluidBox", "params": {"center": [0, 0.1, 0], "size": [0.1, 0.1, 0.1], "particle_radius": 0.01}},
  {"id": "sim", "type": "PBFSolver"},)";

Graph with_asset() {
  return parse_graph(std::string(R"({"format": "eddy-graph", "version": 2, "frame_range": [1, 4], "nodes": [)") + kSim + R"(
    {"id": "surf", "type": "LiquidSurface", "params": {"voxel_size": 0.005, "velocity": true,
                                                       "smoothing_iterations": {"expr": "$F"}}}],
    "links": [{"from": "water.particles", "to": "sim.particles"}, {"from": "sim.particles", "to": "surf.particles"}]})",
                     registry(), "");
}

Graph expanded_by_hand() {
  return parse_graph(std::string(R"({"format": "eddy-graph", "version": 2, "frame_range": [1, 4], "nodes": [)") + kSim + R"(
    {"id": "to_vdb", "type": "PrimToVDBPointDataGrid"},
    {"id": "liquid", "type": "SmoothLiquidSDF", "params": {"Dx": 0.005, "velocity": true, "iterations": {"expr": "$F"}}},
    {"id": "mesher", "type": "SDFToPrim"}],
    "links": [{"from": "water.particles", "to": "sim.particles"}, {"from": "sim.particles", "to": "to_vdb.particles"},
              {"from": "to_vdb.vdb", "to": "liquid.vdb"}, {"from": "liquid.sdf", "to": "mesher.sdf"}]})",
                     registry(), "");
}

void expect_same_mesh(const Mesh& a, const Mesh& b) {
  ASSERT_EQ(a.points.size(), b.points.size());
  ASSERT_GT(a.points.size(), 100u);
  EXPECT_EQ(a.triangles, b.triangles);
  EXPECT_EQ(a.quads, b.quads);
  for (std::size_t i = 0; i < a.points.size(); ++i) {
    // Bitwise: the same nodes cooked the same values in the same order.
    EXPECT_EQ(std::memcmp(&a.points[i], &b.points[i], sizeof(Vec3f)), 0) << i;
    EXPECT_EQ(std::memcmp(&a.normals[i], &b.normals[i], sizeof(Vec3f)), 0) << i;
    EXPECT_EQ(std::memcmp(&a.velocities[i], &b.velocities[i], sizeof(Vec3f)), 0) << i;
  }
}

TEST(Asset, ASubnetCooksBitwiseAsItsExpandedGraph) {
  const NodeSpec* spec = registry().find("LiquidSurface");
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->category, "Assets");
  ASSERT_EQ(spec->inputs.size(), 1u);
  EXPECT_EQ(spec->inputs[0].type, "points");
  EXPECT_FALSE(spec->inputs[0].optional);  // it feeds a required input
  ASSERT_EQ(spec->outputs.size(), 2u);
  EXPECT_EQ(spec->outputs[0].type, "mesh");
  EXPECT_EQ(spec->outputs[1].type, "volumes");
  // A promoted parameter is the driven one's, with the asset's setting as its default.
  const ParamSpec* it = spec->find_param("smoothing_iterations");
  ASSERT_NE(it, nullptr);
  EXPECT_EQ(it->type, ParamType::Int);
  EXPECT_EQ(std::get<int64_t>(it->default_value), 4);
  EXPECT_EQ(it->max, 100.0);

  CookEngine a(registry(), with_asset()), b(registry(), expanded_by_hand());
  for (int f : {1, 3}) {
    const auto out = a.cook("surf", f);
    expect_same_mesh(*out->at("mesh").as<Mesh>(), *b.cook("mesher", f)->at("mesh").as<Mesh>());
    const auto va = out->at("sdf").as<Volumes>(), vb = b.cook("liquid", f)->at("sdf").as<Volumes>();
    ASSERT_EQ(va->grids.size(), 2u);  // surface and v: the promoted velocity flag got through
    for (std::size_t g = 0; g < 2; ++g) {
      EXPECT_EQ(va->grids[g].name(), vb->grids[g].name());
      EXPECT_EQ(va->grids[g].active_voxels(), vb->grids[g].active_voxels());
    }
  }
  // The inner nodes cook under the asset node's path; the asset node's
  // outputs are cached when theirs are.
  EXPECT_TRUE(a.is_cached("surf", 3));
  EXPECT_FALSE(a.is_cached("surf", 2));
  EXPECT_EQ(a.stats().count("surf/liquid"), 1u);
  EXPECT_EQ(a.stats().at("surf/liquid").cooks, 2);
  // The engine's graph is the one given (the asset node unexpanded).
  EXPECT_EQ(a.graph().find("surf")->type, "LiquidSurface");
  // The promoted parameters reach the inner ones, an animated one as its animation.
  const Graph g = expand_assets(with_asset(), registry());
  ASSERT_NE(g.find("surf/liquid"), nullptr);
  EXPECT_EQ(g.find("surf/liquid")->anims.count("iterations"), 1u);
  EXPECT_EQ(std::get<double>(g.find("surf/liquid")->params.at("Dx")), 0.005);
}

fs::path write(const std::string& name, const std::string& text) {
  static const fs::path dir = test::fresh_temp_dir("eddy_asset_", "files");
  std::ofstream(dir / name) << text;
  return dir / name;
}

std::string asset_file(const std::string& asset, const std::string& nodes, const std::string& links, int version = 1) {
  return R"({"format": "eddy-graph", "version": )" + std::to_string(version) + R"(, "frame_range": [1, 4], "asset": )" +
         asset + R"(, "nodes": [)" +
         nodes + R"(], "links": [)" + links + "]}";
}

TEST(Asset, AssetsNestAndTheirParametersReachTheInnerNodes) {
  // A whole shot as an asset: water, solver and the LiquidSurface asset inside.
  const fs::path shot = write("shot.eddy.json",
                              asset_file(R"({"type": "TestShot", "outputs": [{"name": "mesh", "from": "surf.mesh"}],
        "params": [{"name": "radius", "drives": ["water.particle_radius"], "min": 0.005}]})",
                                         std::string(kSim) + R"(
        {"id": "surf", "type": "LiquidSurface", "params": {"voxel_size": 0.005, "velocity": true,
                                                           "smoothing_iterations": 3}})",
                                         R"({"from": "water.particles", "to": "sim.particles"},
                                            {"from": "sim.particles", "to": "surf.particles"})"));
  registry().load_asset(shot.string());
  EXPECT_EQ(std::get<double>(registry().find("TestShot")->find_param("radius")->default_value), 0.01);
  const Graph outer = parse_graph(R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 4],
      "nodes": [{"id": "shot", "type": "TestShot", "params": {"radius": 0.0125}}], "links": []})",
                                  registry(), "");
  CookEngine e(registry(), outer);
  const auto mesh = e.cook("shot", 2)->at("mesh").as<Mesh>();
  EXPECT_EQ(e.stats().count("shot/surf/liquid"), 1u);
  // The same with the shot spelt out, at the promoted radius.
  Graph flat = parse_graph(std::string(R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 4], "nodes": [)") +
                               kSim + R"(
        {"id": "surf", "type": "LiquidSurface", "params": {"voxel_size": 0.005, "velocity": true, "smoothing_iterations": 3}}],
        "links": [{"from": "water.particles", "to": "sim.particles"}, {"from": "sim.particles", "to": "surf.particles"}]})",
                           registry(), "");
  flat.find("water")->params["particle_radius"] = 0.0125;
  CookEngine f(registry(), flat);
  expect_same_mesh(*mesh, *f.cook("surf", 2)->at("mesh").as<Mesh>());
  EXPECT_EQ(e.cook("shot/sim", 2)->at("particles").as<Points>()->radius, 0.0125f);
}

TEST(Asset, ABypassedAssetNodePassesItsInputOn) {
  const fs::path lift = write("lift.eddy.json",
                              asset_file(R"({"type": "TestLift", "inputs": [{"name": "points", "to": ["move.points"]}],
        "outputs": [{"name": "points", "from": "move.points"}],
        "params": [{"name": "height", "drives": ["move.translate"]}]})",
                                         R"({"id": "move", "type": "Transform", "params": {"translate": [0, 1, 0]}})", ""));
  registry().load_asset(lift.string());
  Graph g = parse_graph(std::string(R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 4], "nodes": [)") +
                            kSim + R"({"id": "lift", "type": "TestLift"}],
      "links": [{"from": "water.particles", "to": "sim.particles"}, {"from": "sim.particles", "to": "lift.points"}]})",
                        registry(), "");
  CookEngine e(registry(), g);
  const float y = e.cook("sim", 1)->at("particles").as<Points>()->P()[0].y;
  EXPECT_FLOAT_EQ(e.cook("lift", 1)->at("points").as<Points>()->P()[0].y, y + 1.0f);
  g.find("lift")->bypass = true;
  e.set_graph(g);
  EXPECT_EQ(e.cook("lift", 1)->at("points").as<Points>()->P()[0].y, y);
}

TEST(Asset, DeclarationsFollowTheInnerSockets) {
  // A solver wrapped whole: its colliders input takes many links, so does the asset's;
  // a promoted parameter's default is the asset's own setting.
  const fs::path p = write("wrapped.eddy.json",
                           asset_file(R"({"type": "TestWrapped", "inputs": [{"name": "colliders", "to": ["sim.colliders"]},
                                                       {"name": "particles", "to": ["sim.particles"]}],
        "outputs": [{"name": "particles", "from": "sim.particles"}],
        "params": [{"name": "steps", "drives": ["sim.substeps"], "max": 8}]})",
                                      R"({"id": "sim", "type": "PBFSolver", "params": {"substeps": 3}})", ""));
  registry().load_asset(p.string());
  const NodeSpec* s = registry().find("TestWrapped");
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(s->inputs[0].multi && s->inputs[0].optional);
  EXPECT_FALSE(s->inputs[1].multi);
  EXPECT_EQ(std::get<int64_t>(s->find_param("steps")->default_value), 3);
  EXPECT_EQ(*s->find_param("steps")->max, 8.0);  // narrowed from the solver's 1000
  EXPECT_EQ(*s->find_param("steps")->min, 1.0);
}

TEST(Asset, TheContentsAreValidatedAndCookedAsTheyWouldBeSpeltOut) {
  // A writer inside an asset: its path checks run at load of a graph using
  // the asset, and it writes when the frame cooks though no output uses it.
  const fs::path p = write("writes.eddy.json",
                           asset_file(R"({"type": "TestWrites", "inputs": [{"name": "points", "to": ["move.points"]}],
        "outputs": [{"name": "points", "from": "move.points"}],
        "params": [{"name": "path", "drives": ["side.path"]}]})",
                                      R"({"id": "move", "type": "Transform"},
                                         {"id": "side", "type": "WriteParticles", "params": {"path": "side.$F4.ply"}})",
                                      R"({"from": "move.points", "to": "side.particles"})"));
  registry().load_asset(p.string());
  auto graph = [&](const std::string& path) {
    return std::string(R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 3], "nodes": [)") + kSim +
           R"({"id": "w", "type": "TestWrites", "params": {"path": ")" + path + R"("}}],
      "links": [{"from": "water.particles", "to": "sim.particles"}, {"from": "sim.particles", "to": "w.points"}]})";
  };
  try {
    parse_graph(graph("same.ply"), registry(), "g");
    ADD_FAILURE() << "a path without a frame token was accepted inside the asset";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(\"w/side\").params.path"), std::string::npos) << e.what();
  }
  CookOptions o;
  o.output_dir = test::fresh_test_dir("eddy_asset_out_").string();
  CookEngine e(registry(), parse_graph(graph("side.$F4.ply"), registry(), "g"), o);
  e.cook_frame(2);
  EXPECT_TRUE(fs::exists(fs::path(o.output_dir) / "side.0002.ply"));
}

// The catalog (the editor's and `eddy nodes --json`'s list) says what an
// asset's contents make it: stateful with a solver inside, nested or not;
// time dependent with an animated node inside; neither for the surfacing
// chain or a plain transform.
TEST(Asset, TheCatalogSaysWhatTheContentsMakeIt) {
  Registry& r = registry();
  r.load_asset(write("cat_shot.eddy.json",
                     asset_file(R"({"type": "TestCatShot", "outputs": [{"name": "mesh", "from": "surf.mesh"}]})",
                                std::string(kSim) + R"({"id": "surf", "type": "LiquidSurface"})",
                                R"({"from": "water.particles", "to": "sim.particles"},
                                   {"from": "sim.particles", "to": "surf.particles"})"))
                   .string());
  r.load_asset(write("cat_outer.eddy.json",
                     asset_file(R"({"type": "TestCatOuter", "outputs": [{"name": "mesh", "from": "shot.mesh"}]})",
                                R"({"id": "shot", "type": "TestCatShot"})", ""))
                   .string());
  const std::string lift = R"({"inputs": [{"name": "points", "to": ["move.points"]}],
                               "outputs": [{"name": "points", "from": "move.points"}]})";
  r.load_asset(write("cat_lift.eddy.json",
                     asset_file(R"({"type": "TestCatLift", )" + lift.substr(1),
                                R"({"id": "move", "type": "Transform", "params": {"translate": [0, 1, 0]}})", ""))
                   .string());
  r.load_asset(write("cat_keyed.eddy.json",
                     asset_file(R"({"type": "TestCatKeyed", )" + lift.substr(1),
                                R"({"id": "move", "type": "Transform", "params": {"translate": [0, {"expr": "$F"}, 0]}})",
                                "", 2))
                   .string());
  const nlohmann::json cat = nlohmann::json::parse(catalog_json(r));
  auto flags = [&](const std::string& type) {
    for (const auto& e : cat)
      if (e["type"] == type) return std::make_pair(e["stateful"].get<bool>(), e["time_dependent"].get<bool>());
    ADD_FAILURE() << type << " is not in the catalog";
    return std::make_pair(false, false);
  };
  EXPECT_EQ(flags("TestCatShot"), std::make_pair(true, false));
  EXPECT_EQ(flags("TestCatOuter"), std::make_pair(true, false));
  EXPECT_EQ(flags("TestCatLift"), std::make_pair(false, false));
  EXPECT_EQ(flags("TestCatKeyed"), std::make_pair(false, true));
  EXPECT_EQ(flags("LiquidSurface"), std::make_pair(false, false));
  EXPECT_EQ(flags("PBFSolver"), std::make_pair(true, false));  // plain specs as before
  EXPECT_FALSE(r.find("TestCatShot")->stateful);  // the asset node itself is never cooked
}

TEST(Asset, MalformedAssetsAreRefusedNamingThePlace) {
  Registry& r = registry();
  auto refused = [&](const std::string& name, const std::string& text, const std::string& expected) {
    const fs::path p = write(name, text);
    try {
      r.load_asset(p.string());
      ADD_FAILURE() << name << " was loaded";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind(p.string(), 0), 0u) << "names the file: " << e.what();
    }
  };
  const std::string mesher = R"({"id": "mesher", "type": "SDFToPrim"})";
  refused("unfed.eddy.json", asset_file(R"({"type": "Unfed", "outputs": [{"name": "mesh", "from": "mesher.mesh"}]})",
                                        mesher, ""),
          R"(asset.inputs: nothing feeds the required input "mesher.sdf" (volumes))");
  refused("nonode.eddy.json",
          asset_file(R"({"type": "NoNode", "inputs": [{"name": "sdf", "to": ["meshr.sdf"]}],
                         "outputs": [{"name": "mesh", "from": "mesher.mesh"}]})", mesher, ""),
          R"(asset.inputs[0].to[0]: the asset has no node "meshr")");
  refused("nosocket.eddy.json",
          asset_file(R"({"type": "NoSocket", "inputs": [{"name": "sdf", "to": ["mesher.sdf"]}],
                         "outputs": [{"name": "mesh", "from": "mesher.meshes"}]})", mesher, ""),
          R"(asset.outputs[0].from: SDFToPrim "mesher" has no output "meshes")");
  refused("mixed.eddy.json",
          asset_file(R"({"type": "Mixed", "inputs": [{"name": "sdf", "to": ["mesher.sdf"]}],
                         "outputs": [{"name": "mesh", "from": "mesher.mesh"}],
                         "params": [{"name": "p", "drives": ["mesher.isoValue", "mesher.allowQuads"]}]})", mesher, ""),
          R"(asset.params[0].drives[1]: "mesher.allowQuads" is a bool, the first it drives a float)");
  refused("noout.eddy.json", asset_file(R"({"type": "NoOut", "inputs": [{"name": "sdf", "to": ["mesher.sdf"]}]})", mesher, ""),
          "asset.outputs: an asset has at least one output");
  refused("taken.eddy.json",
          asset_file(R"({"type": "FluidBox", "inputs": [{"name": "sdf", "to": ["mesher.sdf"]}],
                         "outputs": [{"name": "mesh", "from": "mesher.mesh"}]})", mesher, ""),
          "asset: node type 'FluidBox' is registered twice");
  refused("twice.eddy.json",
          asset_file(R"({"type": "Twice", "inputs": [{"name": "a", "to": ["mesher.sdf"]}, {"name": "b", "to": ["mesher.sdf"]}],
                         "outputs": [{"name": "mesh", "from": "mesher.mesh"}]})", mesher, ""),
          R"(asset.inputs[1].to[0]: "mesher.sdf" is fed by another input already and takes only one)");
  refused("animated.eddy.json",
          asset_file(R"({"type": "Animated", "inputs": [{"name": "sdf", "to": ["mesher.sdf"]}],
                         "outputs": [{"name": "mesh", "from": "mesher.mesh"}],
                         "params": [{"name": "iso", "drives": ["mesher.isoValue"]}]})",
                     R"({"id": "mesher", "type": "SDFToPrim", "params": {"isoValue": {"expr": "0.001 * $F"}}})", "", 2),
          R"(asset.params[0].drives[0]: "mesher.isoValue" is animated in the asset)");
  refused("wider.eddy.json",
          asset_file(R"({"type": "Wider", "inputs": [{"name": "sdf", "to": ["mesher.sdf"]}],
                         "outputs": [{"name": "mesh", "from": "mesher.mesh"}],
                         "params": [{"name": "a", "drives": ["mesher.adaptivity"], "max": 2}]})", mesher, ""),
          R"(asset.params[0].max: 2 is outside what the driven parameters take)");
  EXPECT_EQ(r.find("Unfed"), nullptr);
  EXPECT_EQ(r.find("NoOut"), nullptr);
}

// The editor's "collapse into asset": the surfacing chain of a graph, its
// smoothing's voxel size and (animated) iterations promoted, becomes an
// asset file; the graph with the asset node in the chain's place cooks
// bitwise as before. Editing the file and reloading the type changes what
// the node cooks.
TEST(Asset, ASelectionCollapsedIntoAnAssetCooksAsBefore) {
  const Graph g = expanded_by_hand();
  CollapseRequest rq;
  rq.nodes = {"to_vdb", "liquid", "mesher"};
  rq.type = "TestCollapsedSurface";
  rq.doc = "the chain, collapsed";
  rq.promote = {"liquid.Dx", "liquid.iterations"};
  const nlohmann::json file = asset_from_selection(g, registry(), rq);
  const nlohmann::json& a = file.at("asset");
  EXPECT_EQ(a.at("inputs"), nlohmann::json::parse(R"([{"name": "particles", "to": ["to_vdb.particles"]}])"));
  // Nothing outside takes from the chain: its last node's outputs.
  EXPECT_EQ(a.at("outputs"), nlohmann::json::parse(R"([{"name": "mesh", "from": "mesher.mesh"}])"));
  EXPECT_EQ(a.at("params"), nlohmann::json::parse(R"([{"name": "Dx", "drives": ["liquid.Dx"]},
                                                      {"name": "iterations", "drives": ["liquid.iterations"]}])"));
  EXPECT_EQ(file.at("nodes").size(), 3u);
  EXPECT_EQ(file.at("links").size(), 2u);
  // The animation went to the asset node; inside, the value at the start frame.
  for (const auto& n : file.at("nodes")) {
    if (n.at("id") == "liquid") {
      EXPECT_EQ(n.at("params").at("iterations"), 1);
    }
  }
  // Collapsing into a type that is not registered yet is refused.
  EXPECT_THROW(collapse_selection(g, registry(), rq), Error);

  const fs::path path = write("collapsed.eddy.json", file.dump(2));
  registry().load_asset(path.string());
  const Graph collapsed = collapse_selection(g, registry(), rq);
  ASSERT_EQ(collapsed.nodes.size(), 3u);
  const GraphNode& node = collapsed.nodes[2];
  EXPECT_EQ(node.id, "test_collapsed_surface");
  EXPECT_EQ(node.type, "TestCollapsedSurface");
  EXPECT_EQ(std::get<double>(node.params.at("Dx")), 0.005);
  EXPECT_EQ(node.anims.count("iterations"), 1u);
  ASSERT_EQ(collapsed.links.size(), 2u);
  EXPECT_EQ(collapsed.links[1].to_node, "test_collapsed_surface");
  EXPECT_EQ(collapsed.links[1].to_socket, "particles");
  // The position: the selection's centre.
  EXPECT_EQ(node.position, (std::array<double, 2>{0, 0}));

  CookEngine before(registry(), g), after(registry(), collapsed);
  for (int f : {1, 3})
    expect_same_mesh(*before.cook("mesher", f)->at("mesh").as<Mesh>(),
                     *after.cook("test_collapsed_surface", f)->at("mesh").as<Mesh>());
  EXPECT_EQ(after.stats().count("test_collapsed_surface/liquid"), 1u);

  // The file edited (the smoothing without velocity, the mesher's iso
  // value moved) and the type reloaded: the engine cooks the new contents.
  nlohmann::json edited = file;
  for (auto& n : edited.at("nodes")) {
    if (n.at("id") == "liquid") n.at("params")["velocity"] = false;
    if (n.at("id") == "mesher") n.at("params")["isoValue"] = 0.002;
  }
  std::ofstream(path) << edited.dump(2);
  registry().reload_asset("TestCollapsedSurface");
  after.set_graph(collapsed);
  const auto mesh = after.cook("test_collapsed_surface", 3)->at("mesh").as<Mesh>();
  EXPECT_TRUE(mesh->velocities.empty());
  EXPECT_NE(mesh->points.size(), before.cook("mesher", 3)->at("mesh").as<Mesh>()->points.size());
  // A file that now declares another type is refused; the old definition stays.
  edited.at("asset")["type"] = "TestRenamed";
  std::ofstream(path) << edited.dump(2);
  try {
    registry().reload_asset("TestCollapsedSurface");
    ADD_FAILURE() << "a renamed asset was reloaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no longer declares \"TestCollapsedSurface\""), std::string::npos) << e.what();
  }
  EXPECT_EQ(registry().find("TestRenamed"), nullptr);
  EXPECT_NE(registry().find("TestCollapsedSurface")->find_param("Dx"), nullptr);
  // Contents that would use the type itself never end expanding: refused.
  edited.at("asset")["type"] = "TestCollapsedSurface";
  edited.at("nodes").push_back({{"id", "self"}, {"type", "TestCollapsedSurface"}});
  edited.at("links").push_back({{"from", "to_vdb.vdb"}, {"to", "liquid.vdb"}});
  std::ofstream(path) << edited.dump(2);
  EXPECT_THROW(registry().reload_asset("TestCollapsedSurface"), Error);
  EXPECT_THROW(registry().reload_asset("PBFSolver"), Error);  // not an asset

  // The editor's contents view writes new contents through edit_asset: the
  // velocity back on, written into the file and reloaded.
  std::ofstream(path) << file.dump(2);
  registry().reload_asset("TestCollapsedSurface");
  nlohmann::json contents = {{"nodes", file.at("nodes")}, {"links", file.at("links")}};
  for (auto& n : contents.at("nodes"))
    if (n.at("id") == "mesher") n.at("params")["isoValue"] = 0.001;
  registry().edit_asset("TestCollapsedSurface", contents);
  const nlohmann::json written = nlohmann::json::parse(std::ifstream(path));
  EXPECT_EQ(written.at("asset"), file.at("asset"));  // the asset section kept
  after.set_graph(collapsed);
  EXPECT_NE(after.cook("test_collapsed_surface", 3)->at("mesh").as<Mesh>()->points.size(),
            before.cook("mesher", 3)->at("mesh").as<Mesh>()->points.size());
  // Contents that do not make the asset (its input's inner node gone) are
  // refused naming the place, and the file is left as it was.
  std::stringstream kept;
  kept << std::ifstream(path).rdbuf();
  nlohmann::json broken = contents;
  broken.at("nodes").erase(0);  // to_vdb, which the asset's input feeds
  broken.at("links").erase(0);
  try {
    registry().edit_asset("TestCollapsedSurface", broken);
    ADD_FAILURE() << "contents without the input's node were written";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(R"(asset.inputs[0].to[0]: the asset has no node "to_vdb")"), std::string::npos)
        << e.what();
  }
  std::stringstream now;
  now << std::ifstream(path).rdbuf();
  EXPECT_EQ(now.str(), kept.str());
}

TEST(Asset, ACollapseThatCannotBeOneIsRefusedSayingWhy) {
  // (The asset node's id comes from the type's name.)
  EXPECT_EQ(snake_case("LiquidSurface"), "liquid_surface");
  EXPECT_EQ(snake_case("MPMSolver"), "mpm_solver");
  EXPECT_EQ(snake_case("E2EShot"), "e2e_shot");
  EXPECT_EQ(snake_case("Vec3Field"), "vec3_field");
  EXPECT_EQ(snake_case("already_snake"), "already_snake");
  const Graph g = expanded_by_hand();
  auto refused = [&](std::vector<std::string> nodes, const std::string& type, const std::string& expected,
                     std::vector<std::string> promote = {}) {
    CollapseRequest rq;
    rq.nodes = std::move(nodes);
    rq.type = type;
    rq.promote = std::move(promote);
    try {
      asset_from_selection(g, registry(), rq);
      ADD_FAILURE() << "collapsed: " << expected;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  refused({}, "TestNone", "no nodes are selected");
  refused({"liquid"}, "FluidBox", "the node type exists already");
  refused({"liquid"}, "Test None", "is not a node type name");
  refused({"liquid", "mesh"}, "TestMissing", R"(the graph has no node "mesh")");
  refused({"liquid", "liquid"}, "TestTwice", R"(node "liquid" is selected twice)");
  // The solver between the water and the surfacing would feed the asset and take from it.
  refused({"water", "to_vdb"}, "TestAround", R"(node "sim" takes from the selection and feeds it)");
  refused({"liquid"}, "TestPromote", R"(promote "mesher.isoValue": "mesher" is not a selected node)",
          {"mesher.isoValue"});
  refused({"liquid"}, "TestPromote", R"(SmoothLiquidSDF has no parameter "dx")", {"liquid.dx"});
  refused({"liquid"}, "TestPromote", R"(promote: expected "node.parameter", got "Dx")", {"Dx"});
  // A solver's colliders taking a collider from inside the selection and one from outside.
  const Graph two = parse_graph(R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 2], "nodes": [
      {"id": "a", "type": "ColliderBox"}, {"id": "b", "type": "ColliderSphere"},
      {"id": "water", "type": "FluidBox"}, {"id": "sim", "type": "PBFSolver"}],
      "links": [{"from": "a.colliders", "to": "sim.colliders"}, {"from": "b.colliders", "to": "sim.colliders"},
                {"from": "water.particles", "to": "sim.particles"}]})",
                                registry(), "");
  CollapseRequest rq;
  rq.nodes = {"b", "sim"};
  rq.type = "TestMixed";
  try {
    asset_from_selection(two, registry(), rq);
    ADD_FAILURE() << "an input linked from inside and outside was collapsed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(R"(input "sim.colliders" takes links from inside and outside)"),
              std::string::npos)
        << e.what();
  }
  // Selecting both colliders makes it one input of many links, in their order.
  rq.nodes = {"water", "sim"};
  const nlohmann::json file = asset_from_selection(two, registry(), rq);
  EXPECT_EQ(file.at("asset").at("inputs"), nlohmann::json::parse(R"([{"name": "colliders", "to": ["sim.colliders"]}])"));
  registry().load_asset(write("mixed_ok.eddy.json", file.dump()).string());
  const Graph c = collapse_selection(two, registry(), rq);
  ASSERT_EQ(c.links.size(), 2u);
  EXPECT_EQ(c.links[0].from_node, "a");
  EXPECT_EQ(c.links[1].from_node, "b");
  EXPECT_EQ(c.links[1].to_node, "test_mixed");
  EXPECT_EQ(c.links[1].to_socket, "colliders");
  EXPECT_TRUE(registry().find("TestMixed")->inputs[0].multi);

  // collapse_into_file leaves nothing behind when the asset cannot be made:
  // a mesher whose required input nothing feeds (a graph still being built).
  ValidateOptions building{false};
  building.required_inputs = false;
  Graph partial = parse_graph(R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 2],
      "nodes": [{"id": "mesher", "type": "SDFToPrim"}], "links": []})",
                              registry(), "", building);
  const fs::path target = write("partial.eddy.json", "").parent_path() / "partial_asset.eddy.json";
  rq = CollapseRequest{};
  rq.nodes = {"mesher"};
  rq.type = "TestPartial";
  try {
    collapse_into_file(partial, registry(), rq, target.string());
    ADD_FAILURE() << "an asset with an unfed required input was made";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(R"(nothing feeds the required input "mesher.sdf")"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(target));
  EXPECT_EQ(registry().find("TestPartial"), nullptr);
  ASSERT_EQ(partial.nodes.size(), 1u);
  EXPECT_EQ(partial.nodes[0].id, "mesher");
  // Nor over an existing file.
  rq.nodes = {"water", "sim"};
  rq.type = "TestOverFile";
  Graph whole = two;
  const fs::path taken = write("taken_asset.eddy.json", "{}");
  EXPECT_THROW(collapse_into_file(whole, registry(), rq, taken.string()), Error);
  EXPECT_EQ(registry().find("TestOverFile"), nullptr);
  EXPECT_EQ(whole.nodes.size(), 4u);
}

}  // namespace
}  // namespace eddy
