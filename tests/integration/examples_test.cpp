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
    // Liquid that only a source brings has none at the start frame: its
    // particles, surface meshes and level sets may be empty there (a soft
    // body's mesh beside it is not), and only there.
    const bool poured = graph.find("FluidSource") != std::string::npos && graph.find("FluidBox") == std::string::npos;
    std::map<std::string, int> files;      // by extension
    std::map<std::string, int> sequences;  // by name with the frame number taken out
    for (const auto& f : fs::recursive_directory_iterator(out)) {
      if (f.is_directory()) continue;
      const std::string ext = f.path().extension().string(), file = f.path().string();
      ++files[ext];
      std::string seq = f.path().filename().string();
      seq.erase(std::remove_if(seq.begin(), seq.end(), [](char ch) { return ch >= '0' && ch <= '9'; }), seq.end());
      ++sequences[seq];
      const bool empty = poured && file.find(".0001.") != std::string::npos;
      if (ext == ".ply") {
        const eddy::Points p = eddy::read_ply_points(file);
        if (!empty) {
          EXPECT_GT(p.size(), 0u) << file;
        }
        EXPECT_GT(p.radius, 0.0f) << file;
      } else if (ext == ".obj") {
        const eddy::MeshStats s = eddy::measure_mesh(eddy::read_mesh(file));
        if (empty && s.triangles == 0) continue;
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
        if (!empty) {
          EXPECT_GT(surface->active_voxels(), 0u) << file;
        }
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

std::string bytes_of(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

// Runs the eddy command; returns its exit status, its output in `log`.
int eddy(const std::string& args, const fs::path& log) {
  const std::string cmd = std::string(EDDY_BINARY_DIR) + "/bin/eddy " + args + " > " + log.string() + " 2>&1";
  const int st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// Every example's simulation, resumed in another process from the
// checkpoints of frame 2, is the one that never stopped, bit for bit: the
// checkpoints of frames 3 and 4 (the stateful nodes' whole outputs) are the
// same files. Liquids, sources, bodies, soft bodies and their couplings.
TEST(Examples, ResumeFromACheckpointBitForBit) {
  int resumed = 0;
  for (const auto& e : fs::directory_iterator(fs::path(EDDY_SOURCE_DIR) / "examples")) {
    const std::string path = e.path().string();
    if (!path.ends_with(".eddy.json")) continue;
    const fs::path dir =
        fs::temp_directory_path() / ("eddy_resume_" + std::to_string(::getpid()) + "_" + e.path().stem().string());
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string sim = "run " + path + " --part sim --out " + (dir / "out").string() + " --checkpoints ";
    ASSERT_EQ(eddy(sim + (dir / "straight").string() + " --frames 1-4", dir / "straight.log"), 0)
        << path << "\n" << bytes_of(dir / "straight.log");
    ASSERT_EQ(eddy(sim + (dir / "cut").string() + " --frames 1-2", dir / "first.log"), 0) << path;
    ASSERT_EQ(eddy(sim + (dir / "cut").string() + " --frames 3-4", dir / "second.log"), 0)
        << path << "\n" << bytes_of(dir / "second.log");
    int files = 0;
    for (const auto& f : fs::recursive_directory_iterator(dir / "straight")) {
      if (!f.is_regular_file()) continue;
      const fs::path rel = fs::relative(f.path(), dir / "straight");
      const std::string name = rel.filename().string();
      if (name.find(".0003.") == std::string::npos && name.find(".0004.") == std::string::npos) continue;
      ++files;
      EXPECT_EQ(bytes_of(f.path()), bytes_of(dir / "cut" / rel)) << path << ": " << rel << " differs when resumed";
    }
    // Stateful nodes in every example; the second run took frame 2 from disk.
    EXPECT_GE(files, 2) << path;
    EXPECT_NE(bytes_of(dir / "second.log").find("frame 2 "), std::string::npos) << path;
    EXPECT_NE(bytes_of(dir / "second.log").find("taken from its checkpoint"), std::string::npos) << path;
    ++resumed;
    fs::remove_all(dir);
  }
  EXPECT_GE(resumed, 7);
}

}  // namespace
