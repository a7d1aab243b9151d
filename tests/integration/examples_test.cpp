// Every example graph cooks its first frames through the eddy command and
// writes readable files: particle clouds with a radius, closed outward
// meshes, .vdb files whose level set is named "surface", and bodies' poses.
#include <gtest/gtest.h>
#include <unistd.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>

#include "eddy/core/mesh.h"
#include "eddy/core/ply.h"
#include "eddy/surfacing/surfacing.h"

namespace {

namespace fs = std::filesystem;

TEST(Examples, CookTheirFirstFrames) {
  int examples = 0;
  for (const auto& e : fs::directory_iterator(fs::path(EDDY_SOURCE_DIR) / "examples")) {
    const std::string path = e.path().string();
    if (path.size() < 10 || path.substr(path.size() - 10) != ".eddy.json") continue;
    ++examples;
    // Per process: two runs at once (a checkout's tests and CI's) must not share it.
    const fs::path out =
        fs::temp_directory_path() / ("eddy_example_" + std::to_string(::getpid()) + "_" + e.path().stem().string());
    fs::remove_all(out);
    const std::string cmd = std::string(EDDY_BINARY_DIR) + "/bin/eddy run " + path + " --frames 1-3 --quiet --out " +
                            out.string() + " > /dev/null 2>&1";
    const int st = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << path;
    std::ifstream graph_file(path);
    const std::string graph((std::istreambuf_iterator<char>(graph_file)), {});
    // A cloth is an open sheet; every other mesh written encloses a volume.
    const bool sheets = graph.find("\"Cloth\"") != std::string::npos;
    std::map<std::string, int> files;      // by extension
    std::map<std::string, int> sequences;  // by name with the frame number taken out
    for (const auto& f : fs::recursive_directory_iterator(out)) {
      if (f.is_directory()) continue;
      const std::string ext = f.path().extension().string(), file = f.path().string();
      ++files[ext];
      std::string seq = f.path().filename().string();
      seq.erase(std::remove_if(seq.begin(), seq.end(), [](char ch) { return ch >= '0' && ch <= '9'; }), seq.end());
      ++sequences[seq];
      if (ext == ".ply") {
        const eddy::Points p = eddy::read_ply_points(file);
        // Liquid that only a source brings has none at the start frame.
        const bool poured = graph.find("FluidSource") != std::string::npos && graph.find("FluidBox") == std::string::npos;
        if (!(poured && file.find(".0001.") != std::string::npos)) {
          EXPECT_GT(p.size(), 0u) << file;
        }
        EXPECT_GT(p.radius, 0.0f) << file;
      } else if (ext == ".obj") {
        const eddy::MeshStats s = eddy::measure_mesh(eddy::read_mesh(file));
        EXPECT_GT(s.triangles, 0u) << file;
        EXPECT_EQ(s.nonmanifold_edges, 0u) << file;
        if (!sheets) {
          EXPECT_EQ(s.boundary_edges, 0u) << file;
          EXPECT_GT(s.volume, 0.0) << file;
        }
      } else if (ext == ".json") {  // WriteBodies' poses
        std::ifstream in(file);
        const nlohmann::json j = nlohmann::json::parse(in);
        EXPECT_GT(j.at("bodies").size(), 0u) << file;
        for (const auto& b : j["bodies"]) EXPECT_EQ(b.at("orientation").size(), 4u) << file;
      } else if (ext == ".vdb") {
        const eddy::Volumes v = eddy::read_vdb(file);
        const eddy::Volume* surface = v.find("surface");
        ASSERT_NE(surface, nullptr) << file;
        EXPECT_EQ(surface->grid_class(), eddy::GridClass::LevelSet) << file;
        EXPECT_GT(surface->active_voxels(), 0u) << file;
      } else {
        ADD_FAILURE() << "unexpected file " << file;
      }
    }
    // Three frames of every sequence the example writes; every example with
    // liquid is surfaced (meshes and VDBs), one of bodies writes their shapes
    // and poses, one of soft bodies their surfaces.
    EXPECT_GE(files[".obj"], 3) << path;
    if (graph.find("SmoothLiquidSDF") != std::string::npos) {
      EXPECT_GE(files[".vdb"], 3) << path;
    }
    if (graph.find("WriteBodies") != std::string::npos) {
      EXPECT_GE(files[".json"], 3) << path;
    }
    for (const auto& [seq, n] : sequences) EXPECT_EQ(n, 3) << path << " " << seq;
    fs::remove_all(out);
  }
  EXPECT_GE(examples, 7);
}

}  // namespace
