// `eddy run` killed (SIGKILL) while it writes particle caches, particles,
// meshes and VDBs: every file under its final name is complete and
// readable (writers write a temporary name and rename it into place), and a
// rerun over the same output folder, resuming through FileCache, writes the
// same files as a run that was never interrupted.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "eddy/core/mesh.h"
#include "eddy/core/ply.h"
#include "eddy/surfacing/surfacing.h"
#include "cli_fixture.h"
#include "tank_shot.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;

using eddy::testing::CliTest;

// Final names (no leading '.': temporary files are hidden), relative to `dir`.
std::vector<std::string> final_files(const fs::path& dir) {
  std::vector<std::string> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename().string()[0] != '.')
      out.push_back(fs::relative(e.path(), dir).generic_string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string bytes_of(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Reads a file the way the next tool would; throws when it is incomplete.
void read_back(const fs::path& p) {
  const std::string ext = p.extension().string();
  if (ext == ".obj") {
    eddy::read_mesh(p.string());
  } else if (ext == ".vdb") {
    eddy::read_vdb(p.string());
  } else if (ext == ".ply") {
    eddy::read_ply_points(p.string());
  } else {
    throw std::runtime_error("unexpected file " + p.string());
  }
}

using FaultTest = CliTest;

TEST_F(FaultTest, KilledMidCookLeavesCompleteFilesAndARerunResumes) {
  const std::string g = write("g.eddy.json", eddy::testing::kTankShot);
  const fs::path ref = dir / "ref", cut = dir / "cut";
  // The uninterrupted run.
  auto r = eddy("run " + g + " --threads 2 --out " + ref.string());
  ASSERT_EQ(r.status, 0) << r.output;
  const std::vector<std::string> all = final_files(ref);
  ASSERT_EQ(all.size(), 4u * 12u) << "cache, particles, mesh and VDB for 12 frames";

  // The same run, killed once the mesh of frame 4 is in place: mid-cook of a
  // later frame, with some of its files written and others not.
  const std::string exe = std::string(EDDY_BINARY_DIR) + "/bin/eddy";
  const std::string out = cut.string();
  const char* argv[] = {exe.c_str(), "run", g.c_str(), "--threads", "2", "--out", out.c_str(), nullptr};
  posix_spawn_file_actions_t quiet;  // its progress is the uninterrupted run's
  posix_spawn_file_actions_init(&quiet);
  posix_spawn_file_actions_addopen(&quiet, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&quiet, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, exe.c_str(), &quiet, nullptr, const_cast<char**>(argv), environ), 0);
  posix_spawn_file_actions_destroy(&quiet);
  const auto t0 = std::chrono::steady_clock::now();
  while (!fs::exists(cut / "mesh" / "surface.0004.obj") && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(120))
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the run ended before it was killed: make it longer";
  const std::vector<std::string> left = final_files(cut);
  EXPECT_GE(left.size(), 4u * 4u - 3u);
  EXPECT_LT(left.size(), all.size());
  for (const auto& f : left) {
    EXPECT_NO_THROW(read_back(cut / f)) << f << " is under its final name but incomplete";
    // A file written before the kill is the uninterrupted run's file.
    EXPECT_EQ(bytes_of(cut / f), bytes_of(ref / f)) << f;
  }

  // The rerun: FileCache reads the frames it holds, the rest are cooked.
  r = eddy("run " + g + " --threads 2 --out " + out);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(final_files(cut), all);
  // VDBs too: their stamp is a hash of their content, not a random id.
  for (const auto& f : all) EXPECT_EQ(bytes_of(cut / f), bytes_of(ref / f)) << f << " differs from the uninterrupted run's";
}

// The farm's parts (docs/farm.md): the simulation cooked in chunks of
// frames by separate processes, each resuming from the checkpoint the one
// before left, then everything downstream in chunks of its own, writes the
// files of one uninterrupted run; a rerun with --skip-done cooks nothing.
TEST_F(FaultTest, ASimulationInChunksThenItsDownstreamWriteTheFilesOfOneRun) {
  const std::string g = write("g.eddy.json", eddy::testing::kTankShot);
  const fs::path ref = dir / "ref", farm = dir / "farm";
  auto r = eddy("run " + g + " --threads 2 --frames 1-6 --out " + ref.string());
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string common = "run " + g + " --threads 2 --skip-done --out " + farm.string() + " --checkpoints " +
                             (dir / "ck").string();
  // Downstream before the simulation reached its frames: an error naming what is missing.
  r = eddy(common + " --part post --frames 1-2");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("node 'solver' (PBFSolver), frame 1: no checkpoint in"), std::string::npos) << r.output;
  for (const char* frames : {"1-3", "4-6"}) {
    r = eddy(common + " --part sim --frames " + frames);
    ASSERT_EQ(r.status, 0) << r.output;
  }
  EXPECT_NE(r.output.find("frame 3 solver: taken from its checkpoint"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("frame 2 solver"), std::string::npos) << "frames 1-2 cooked again:\n" << r.output;
  for (const char* frames : {"4-6", "1-3"}) {
    r = eddy(common + " --part post --frames " + frames);
    ASSERT_EQ(r.status, 0) << r.output;
  }
  std::vector<std::string> written;
  for (const auto& f : final_files(farm))
    if (f.rfind(".eddy/", 0) != 0) written.push_back(f);
  EXPECT_EQ(written, final_files(ref));
  for (const auto& f : final_files(ref)) EXPECT_EQ(bytes_of(farm / f), bytes_of(ref / f)) << f;
  r = eddy(common + " --part post --frames 1-6");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("frame 6 done before (its marker matches): skipped (6 of 6)"), std::string::npos) << r.output;
  // Another parameter: other signatures, so the markers and checkpoints do not count.
  r = eddy(common + " --part post --frames 1-2 --set liquid.Dx=0.006");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find("skipped"), std::string::npos) << r.output;
  r = eddy(common + " --part sim --frames 1 --set solver.gravity=[0,-5,0]");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find("taken from its checkpoint"), std::string::npos) << r.output;
  // Parts other than all pass frames as checkpoints: without a folder, an
  // error, and nothing written.
  r = eddy("run " + g + " --part sim --out " + (dir / "none").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_FALSE(fs::exists(dir / "none"));
  EXPECT_NE(r.output.find("--part sim: the simulation's frames pass between parts as checkpoints"), std::string::npos)
      << r.output;
}

}  // namespace
