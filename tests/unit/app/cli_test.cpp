// The eddy command: every kind of bad input gets a message naming the place,
// exit status 2, and no output written; a good graph cooks and writes files.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "eddy/core/ply.h"
#include "cli_fixture.h"

namespace {

namespace fs = std::filesystem;

using eddy::testing::CliTest;

class Cli : public CliTest {
 protected:
  // A small valid graph; `edit` replaces one substring.
  std::string graph(const std::string& from = "", const std::string& to = "") {
    std::string g = R"({
  "format": "eddy-graph", "version": 1, "frame_range": [1, 3], "fps": 24,
  "nodes": [
    {"id": "tank", "type": "ColliderBox", "params": {"mode": "container", "center": [0.3, 0.3, 0.1], "size": [0.6, 0.6, 0.2]}},
    {"id": "water", "type": "FluidBox", "params": {"center": [0.15, 0.15, 0.1], "size": [0.3, 0.3, 0.2], "particle_radius": 0.02}},
    {"id": "solver", "type": "PBFSolver", "params": {"substeps": 2}},
    {"id": "out", "type": "WriteParticles", "params": {"path": "p.$F4.ply"}}
  ],
  "links": [
    {"from": "tank.colliders", "to": "water.colliders"},
    {"from": "water.particles", "to": "solver.particles"},
    {"from": "tank.colliders", "to": "solver.colliders"},
    {"from": "solver.particles", "to": "out.particles"}
  ]
})";
    if (!from.empty()) {
      const auto at = g.find(from);
      EXPECT_NE(at, std::string::npos) << from;
      if (at != std::string::npos) g.replace(at, from.size(), to);
    }
    return write("g.eddy.json", g);
  }
};

TEST_F(Cli, CooksAGraphAndWritesEveryFrame) {
  const Result r = eddy("run " + graph() + " --out " + out());
  ASSERT_EQ(r.status, 0) << r.output;
  for (int f = 1; f <= 3; ++f) {
    char name[32];
    std::snprintf(name, sizeof name, "p.%04d.ply", f);
    const eddy::Points p = eddy::read_ply_points((dir / "out" / name).string());
    EXPECT_EQ(p.size(), 7u * 7u * 5u);  // spacing 0.04: 7 x 7 x 5 whole particles fit
  }
  EXPECT_NE(r.output.find("PBFSolver"), std::string::npos) << "summary table";
  EXPECT_NE(r.output.find("density error mean"), std::string::npos) << "solver report";
  EXPECT_NE(r.output.find("output folder:"), std::string::npos);
}

TEST_F(Cli, FramesAndOverridesSelectWhatIsCooked) {
  const Result r = eddy("run " + graph() + " --out " + out() + " --frames 2-2 --set out.path=only.ply --threads 1");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(fs::exists(dir / "out" / "only.ply"));
  EXPECT_FALSE(fs::exists(dir / "out" / "p.0001.ply"));
}

struct Bad {
  const char* name;
  std::string from, to, args, message;
};

TEST_F(Cli, BadInputExitsWithStatus2AndWritesNothing) {
  const std::vector<Bad> cases = {
      {"invalid JSON", "\"fps\": 24,", "\"fps\": 24,,", "", "g.eddy.json:2:"},
      {"unknown node type", "\"PBFSolver\"", "\"PBFSolvr\"", "", "did you mean \"PBFSolver\"?"},
      {"unknown parameter", "\"substeps\": 2", "\"substep\": 2", "", "params.substep: unknown parameter of PBFSolver"},
      {"wrong type", "\"substeps\": 2", "\"substeps\": \"two\"", "", "params.substeps: expected an integer"},
      {"out of range", "\"substeps\": 2", "\"substeps\": 0", "", "expected an integer in [1, 1000], got 0"},
      {"link to a missing node", "\"from\": \"water.particles\"", "\"from\": \"watr.particles\"", "",
       "links[1].from: no node \"watr\"; did you mean \"water\"?"},
      {"link to a missing socket", "\"to\": \"out.particles\"", "\"to\": \"out.points\"", "",
       "has no input \"points\""},
      {"type-mismatched link", "\"to\": \"solver.particles\"", "\"to\": \"solver.colliders\"", "",
       "cannot connect \"water.particles\" (points) to \"solver.colliders\" (colliders)"},
      {"cycle", "{\"from\": \"solver.particles\", \"to\": \"out.particles\"}",
       "{\"from\": \"solver.particles\", \"to\": \"out.particles\"}, {\"from\": \"out.particles\", \"to\": \"solver.particles\"}",
       "", "already has a link"},
      {"duplicate node id", "{\"id\": \"out\"", "{\"id\": \"tank\"", "", "duplicate node id \"tank\""},
      {"inverted frame range", "[1, 3]", "[3, 1]", "", "frame_range: end 1 is before start 3"},
      {"empty frame range", "[1, 3]", "[]", "", "frame_range: expected [start, end]"},
      {"inverted --frames", "", "", "--frames 3-2", "--frames 3-2: end 2 is before start 3"},
      {"--frames outside the range", "", "", "--frames 2-9", "outside the graph's frame_range 1-3"},
      {"too many particles", "\"particle_radius\": 0.02", "\"particle_radius\": 0.0001", "",
       "particles, needing about"},
      {"path without frame token", "p.$F4.ply", "p.ply", "", "has no frame token ($F or $F4)"},
      {"bad --set", "", "", "--set solver.substeps=-1", "--set solver.substeps=-1: expected an integer"},
      {"--set unknown node", "", "", "--set solvr.substeps=3", "no node \"solvr\"; did you mean \"solver\"?"},
      {"JSON nested 200,000 deep", "\"fps\": 24,",
       "\"fps\": 24, \"comment\": " + std::string(200000, '[') + std::string(200000, ']') + ",", "",
       "g.eddy.json:2:213: JSON nested deeper than 128 levels"},
      {"--set value nested deep", "", "", "--set 'solver.substeps=" + std::string(1000, '[') + "'",
       ":1:129: JSON nested deeper than 128 levels"},
      {"vanishing fps", "\"fps\": 24", "\"fps\": 1e-300", "", "fps: expected a number in [1, 10000], got 1e-300"},
      {"frame beyond int", "[1, 3]", "[1, 3000000000]", "", "frame_range: frame 3000000000 is outside"},
  };
  for (const auto& c : cases) {
    SetUp();
    const std::string g = graph(c.from, c.to);
    const Result r = eddy("run " + g + " --out " + out() + " " + c.args);
    EXPECT_EQ(r.status, 2) << c.name << ": " << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.name << ": " << r.output;
    EXPECT_NE(r.output.find("eddy: error: "), std::string::npos) << c.name;
    EXPECT_TRUE(out_is_empty()) << c.name << " wrote output";
  }
}

TEST_F(Cli, TrueCycleIsNamed) {
  // A cycle through a multi input (MergeColliders feeds itself).
  const std::string g = write("c.eddy.json", R"({"format": "eddy-graph", "version": 1, "frame_range": [1, 1],
    "nodes": [{"id": "m1", "type": "MergeColliders"}, {"id": "m2", "type": "MergeColliders"}],
    "links": [{"from": "m1.colliders", "to": "m2.colliders"}, {"from": "m2.colliders", "to": "m1.colliders"}]})");
  const Result r = eddy("validate " + g);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("the graph has a cycle: m1 -> m2 -> m1"), std::string::npos) << r.output;
}

TEST_F(Cli, MissingGraphFileAndUnwritableOutputFolder) {
  Result r = eddy("run " + (dir / "nope.eddy.json").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("nope.eddy.json: cannot open graph file"), std::string::npos) << r.output;
  // An output folder below a regular file cannot be created.
  const std::string file = write("plain.txt", "x");
  r = eddy("run " + graph() + " --out " + file + "/sub");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("cannot create the output folder"), std::string::npos) << r.output;
}

TEST_F(Cli, NodesAndValidate) {
  Result r = eddy("nodes");
  ASSERT_EQ(r.status, 0);
  for (const char* t : {"FluidBox", "ColliderBox", "ColliderSphere", "ColliderEllipsoid", "ColliderCapsule",
                        "ColliderPlane", "MergeColliders", "PBFSolver", "WriteParticles"})
    EXPECT_NE(r.output.find(t), std::string::npos) << t;
  r = eddy("nodes PBFSolver");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.output.find("max_density_error"), std::string::npos);
  EXPECT_NE(r.output.find("kg/m^3"), std::string::npos);
  r = eddy("nodes FluidBx");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("did you mean \"FluidBox\"?"), std::string::npos);
  r = eddy("nodes --json");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.output.find("\"type\": \"PBFSolver\""), std::string::npos);
  r = eddy("validate " + graph());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("valid (4 nodes, 4 links, frames 1-3"), std::string::npos) << r.output;
  r = eddy("run");
  EXPECT_EQ(r.status, 2) << "missing argument";
  r = eddy("frobnicate");
  EXPECT_EQ(r.status, 2) << "unknown command";
}

TEST_F(Cli, ExamplesValidate) {
  for (const auto& e : fs::directory_iterator(fs::path(EDDY_SOURCE_DIR) / "examples")) {
    if (e.path().string().find(".eddy.json") == std::string::npos) continue;
    const Result r = eddy("validate " + e.path().string());
    EXPECT_EQ(r.status, 0) << e.path() << ": " << r.output;
  }
}

}  // namespace

namespace {

TEST(Docs, NodeReferenceMatchesTheSpecs) {
  // docs/nodes.md is generated by `make docs` from `eddy nodes`.
  const eddy::testing::Result r = eddy::testing::eddy("nodes");
  ASSERT_EQ(r.status, 0);
  std::ifstream f(std::string(EDDY_SOURCE_DIR) + "/docs/nodes.md");
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string doc = ss.str();
  const auto a = doc.find("```\n"), b = doc.rfind("```");
  ASSERT_NE(a, std::string::npos);
  ASSERT_NE(b, a);
  EXPECT_EQ(doc.substr(a + 4, b - a - 4), r.output) << "docs/nodes.md is out of date: run `make docs`";
}

}  // namespace

namespace {

TEST_F(Cli, InterruptStopsTheRunAndLeavesOnlyCompleteFiles) {
  // A run long enough to interrupt: 1 cm particles (2,000) for 240 frames.
  std::string text;
  {
    std::ifstream f(graph("\"frame_range\": [1, 3]", "\"frame_range\": [1, 240]"));
    std::stringstream ss;
    ss << f.rdbuf();
    text = ss.str();
  }
  const std::string coarse = "\"particle_radius\": 0.02";
  text.replace(text.find(coarse), coarse.size(), "\"particle_radius\": 0.01");
  const std::string g = write("long.eddy.json", text);
  const std::string out_dir = out();
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string exe = std::string(EDDY_BINARY_DIR) + "/bin/eddy";
    freopen("/dev/null", "w", stderr);
    freopen("/dev/null", "w", stdout);
    execl(exe.c_str(), exe.c_str(), "run", g.c_str(), "--out", out_dir.c_str(), (char*)nullptr);
    _exit(99);
  }
  // Wait for the first frame on disk, then interrupt.
  for (int k = 0; k < 600 && !fs::exists(dir / "out" / "p.0002.ply"); ++k) usleep(10000);
  kill(pid, SIGINT);
  int st = 0;
  waitpid(pid, &st, 0);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 130);
  int complete = 0;
  for (const auto& e : fs::directory_iterator(dir / "out")) {
    EXPECT_EQ(e.path().extension(), ".ply") << "left behind: " << e.path();
    EXPECT_NO_THROW(eddy::read_ply_points(e.path().string())) << e.path();
    ++complete;
  }
  EXPECT_GE(complete, 2);
  EXPECT_LT(complete, 240);
}

}  // namespace
