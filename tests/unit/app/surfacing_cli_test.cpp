// The surfacing and file nodes through the eddy command: bad files and
// wrongly wired grids get a message naming the node and exit status 2 with
// nothing written; empty particles give an empty mesh; FileCache cooks a
// simulation once; ColliderMesh keeps liquid out of a mesh.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "eddy/core/mesh.h"
#include "eddy/core/ply.h"
#include "cli_fixture.h"

namespace {

namespace fs = std::filesystem;

using eddy::testing::CliTest;

class SurfacingCli : public CliTest {
 protected:
  std::string graph(const std::string& nodes, const std::string& links, int frames = 3) {
    return write("g.eddy.json", R"({"format": "eddy-graph", "version": 1, "frame_range": [1, )" +
                                    std::to_string(frames) + R"(], "fps": 24, "nodes": [)" + nodes +
                                    R"(], "links": [)" + links + "]}");
  }
};

const char* kWater =
    R"({"id": "water", "type": "FluidBox", "params": {"center": [0.1, 0.1, 0.1], "size": [0.1, 0.1, 0.1], "particle_radius": 0.01}})";

// kWater meshed (SmoothLiquidSDF, SDFToPrim) and written by WriteMesh to `path`.
std::string meshed_water(const std::string& path) {
  return std::string(kWater) + R"(, {"id": "sdf", "type": "SmoothLiquidSDF"}, {"id": "mesh", "type": "SDFToPrim"},
          {"id": "w", "type": "WriteMesh", "params": {"path": ")" + path + R"("}})";
}
const char* kMeshedWaterLinks = R"({"from": "water.particles", "to": "sdf.particles"}, {"from": "sdf.sdf", "to": "mesh.sdf"},
          {"from": "mesh.mesh", "to": "w.mesh"})";

TEST_F(SurfacingCli, BadFilesAndWrongGridsExitWith2AndWriteNothing) {
  write("text.vdb", "not a vdb");
  struct Case {
    const char* name;
    std::string nodes, links, message;
  };
  const std::vector<Case> cases = {
      {"missing mesh",
       R"({"id": "m", "type": "ReadMesh", "params": {"path": "missing.obj"}},
          {"id": "w", "type": "WriteMesh", "params": {"path": "m.$F4.obj"}})",
       R"({"from": "m.mesh", "to": "w.mesh"})", "missing.obj: no such mesh file"},
      {"corrupt vdb",
       R"({"id": "v", "type": "ReadVDB", "params": {"path": "text.vdb"}},
          {"id": "w", "type": "WriteVDB", "params": {"path": "v.$F4.vdb"}})",
       R"({"from": "v.vdb", "to": "w.vdb"})", "text.vdb: not a readable VDB file"},
      {"points grid to SDFToPrim",
       std::string(kWater) + R"(, {"id": "pts", "type": "PrimToVDBPointDataGrid"},
          {"id": "mesh", "type": "SDFToPrim"}, {"id": "w", "type": "WriteMesh", "params": {"path": "m.$F4.obj"}})",
       R"({"from": "water.particles", "to": "pts.particles"}, {"from": "pts.vdb", "to": "mesh.sdf"},
          {"from": "mesh.mesh", "to": "w.mesh"})",
       "node 'mesh' (SDFToPrim), frame 1: input 'sdf' holds no level set; it has 'points' (points)"},
      {"mesh path without frame token", meshed_water("m.obj"), kMeshedWaterLinks, "\"m.obj\" has no frame token"},
      {"unknown mesh extension", meshed_water("m.$F4.stl"), kMeshedWaterLinks, "has extension '.stl'; expected .obj, .ply"},
      {"SmoothLiquidSDF with no input",
       R"({"id": "sdf", "type": "SmoothLiquidSDF"}, {"id": "w", "type": "WriteVDB", "params": {"path": "v.$F4.vdb"}})",
       R"({"from": "sdf.sdf", "to": "w.vdb"})", "no input: connect VDB points"},
  };
  for (const auto& c : cases) {
    fs::remove_all(dir / "out");
    const Result r = eddy("run " + graph(c.nodes, c.links) + " --out " + out());
    EXPECT_EQ(r.status, 2) << c.name << ": " << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.name << ": " << r.output;
    EXPECT_TRUE(out_is_empty()) << c.name << " wrote output";
  }
}

TEST_F(SurfacingCli, EmptyParticlesGiveAnEmptyMeshNotACrash) {
  write("empty.ply", "ply\nformat ascii 1.0\ncomment eddy radius 0.01\nelement vertex 0\nproperty float x\n"
                     "property float y\nproperty float z\nend_header\n");
  const std::string g = graph(
      R"({"id": "in", "type": "ReadParticles", "params": {"path": "empty.ply"}},
         {"id": "pts", "type": "PrimToVDBPointDataGrid"}, {"id": "sdf", "type": "SmoothLiquidSDF"},
         {"id": "mesh", "type": "SDFToPrim"}, {"id": "w", "type": "WriteMesh", "params": {"path": "m.$F4.obj"}})",
      R"({"from": "in.particles", "to": "pts.particles"}, {"from": "pts.vdb", "to": "sdf.vdb"},
         {"from": "sdf.sdf", "to": "mesh.sdf"}, {"from": "mesh.mesh", "to": "w.mesh"})",
      1);
  const Result r = eddy("run " + g + " --out " + out());
  ASSERT_EQ(r.status, 0) << r.output;
  const eddy::Mesh m = eddy::read_mesh((dir / "out" / "m.0001.obj").string());
  EXPECT_TRUE(m.empty());
}

TEST_F(SurfacingCli, FileCacheCooksTheSimulationOnceThenReadsIt) {
  const std::string g = graph(
      std::string(kWater) + R"(, {"id": "solver", "type": "PBFSolver"},
         {"id": "cache", "type": "FileCache", "params": {"path": "cache/sim.$F4.ply"}},
         {"id": "w", "type": "WriteParticles", "params": {"path": "copy.$F4.ply"}})",
      R"({"from": "water.particles", "to": "solver.particles"}, {"from": "solver.particles", "to": "cache.particles"},
         {"from": "cache.particles", "to": "w.particles"})");
  const Result first = eddy("run " + g + " --out " + out());
  ASSERT_EQ(first.status, 0) << first.output;
  EXPECT_NE(first.output.find("solver: "), std::string::npos) << first.output;  // the solver's per-frame report
  const auto written = fs::last_write_time(dir / "out" / "cache" / "sim.0003.ply");
  const Result second = eddy("run " + g + " --out " + out());
  ASSERT_EQ(second.status, 0) << second.output;
  EXPECT_EQ(second.output.find("solver: "), std::string::npos) << "the solver cooked again:\n" << second.output;
  EXPECT_NE(second.output.find("cache: read "), std::string::npos) << second.output;
  EXPECT_EQ(fs::last_write_time(dir / "out" / "cache" / "sim.0003.ply"), written);
  const eddy::Points a = eddy::read_ply_points((dir / "out" / "cache" / "sim.0003.ply").string());
  const eddy::Points b = eddy::read_ply_points((dir / "out" / "copy.0003.ply").string());
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a.P()[i], b.P()[i]);
}

// The lemon of the example (examples/assets/lemon.obj): x along its axis,
// profile b (1 - (x/a)^2)^0.8 with a = 0.07 m, b = 0.045 m.
double lemon_depth(eddy::Vec3f q) {
  const double t = q.x / 0.07;
  if (std::fabs(t) >= 1) return -1;
  const double rho = 0.045 * std::pow(1 - t * t, 0.8);
  return rho - std::sqrt(double(q.y) * q.y + double(q.z) * q.z);  // > 0 inside, roughly the depth
}

TEST_F(SurfacingCli, ColliderMeshKeepsLiquidOutOfTheLemon) {
  const std::string lemon = std::string(EDDY_SOURCE_DIR) + "/examples/assets/lemon.obj";
  const std::string g = graph(
      R"({"id": "glass", "type": "ColliderBox", "params": {"mode": "container", "center": [0, 0.15, 0], "size": [0.3, 0.3, 0.2]}},
         {"id": "mesh", "type": "ReadMesh", "params": {"path": ")" + lemon + R"("}},
         {"id": "lemon", "type": "ColliderMesh", "params": {"center": [0, 0.045, 0], "voxelSize": 0.003}},
         {"id": "all", "type": "MergeColliders"},
         {"id": "water", "type": "FluidBox", "params": {"center": [0, 0.16, 0], "size": [0.08, 0.06, 0.08], "particle_radius": 0.004}},
         {"id": "solver", "type": "PBFSolver"},
         {"id": "w", "type": "WriteParticles", "params": {"path": "p.$F4.ply"}})",
      R"({"from": "mesh.mesh", "to": "lemon.mesh"}, {"from": "glass.colliders", "to": "all.colliders"},
         {"from": "lemon.colliders", "to": "all.colliders"}, {"from": "all.colliders", "to": "solver.colliders"},
         {"from": "water.particles", "to": "solver.particles"}, {"from": "solver.particles", "to": "w.particles"})",
      12);
  const Result r = eddy("run " + g + " --out " + out() + " --quiet");
  ASSERT_EQ(r.status, 0) << r.output;
  // Over frames 1-12 (0.46 s) the water falls 0.07 m onto the lemon and runs off it.
  int on_lemon = 0;
  double deepest = -1;
  for (int f = 1; f <= 12; ++f) {
    char name[32];
    std::snprintf(name, sizeof name, "p.%04d.ply", f);
    const eddy::Points p = eddy::read_ply_points((dir / "out" / name).string());
    int near = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
      const double d = lemon_depth(p.P()[i] - eddy::vec3(0, 0.045f, 0));
      deepest = std::max(deepest, d);
      near += d > -0.01;
    }
    on_lemon = std::max(on_lemon, near);
  }
  std::printf("  %d particles on the lemon, deepest %.4f m\n", on_lemon, deepest);
  EXPECT_GT(on_lemon, 50);         // the liquid reached the lemon (within 1 cm of its skin, in some frame)
  EXPECT_LT(deepest, -0.5 * 0.004);  // and no particle centre is nearer than r/2 to its skin
}

// SmoothLiquidSDF's engine parameter reaches the chain: the band engine's
// mesh of a block of water is closed and within a few per cent of the
// default engine's (the engines differ at the block's corners).
TEST_F(SurfacingCli, BandEngineSurfacesTheSameBlock) {
  const std::string g = graph(
      std::string(kWater) + R"(,
         {"id": "a", "type": "SmoothLiquidSDF"}, {"id": "b", "type": "SmoothLiquidSDF", "params": {"engine": "bands"}},
         {"id": "ma", "type": "SDFToPrim"}, {"id": "mb", "type": "SDFToPrim"},
         {"id": "wa", "type": "WriteMesh", "params": {"path": "a.$F4.obj"}},
         {"id": "wb", "type": "WriteMesh", "params": {"path": "b.$F4.obj"}})",
      R"({"from": "water.particles", "to": "a.particles"}, {"from": "water.particles", "to": "b.particles"},
         {"from": "a.sdf", "to": "ma.sdf"}, {"from": "b.sdf", "to": "mb.sdf"},
         {"from": "ma.mesh", "to": "wa.mesh"}, {"from": "mb.mesh", "to": "wb.mesh"})",
      1);
  const Result r = eddy("run " + g + " --out " + out());
  ASSERT_EQ(r.status, 0) << r.output;
  const ::eddy::MeshStats a = ::eddy::measure_mesh(::eddy::read_mesh((dir / "out" / "a.0001.obj").string()));
  const ::eddy::MeshStats b = ::eddy::measure_mesh(::eddy::read_mesh((dir / "out" / "b.0001.obj").string()));
  EXPECT_EQ(b.boundary_edges, 0u);
  EXPECT_EQ(b.components, 1u);
  EXPECT_NEAR(b.volume / a.volume, 1.0, 0.05);
}

}  // namespace
