// eddy farm without Slurm: `submit --dry-run` writes a simulation chain per
// wedge variant and one array for what lies downstream; those scripts, run
// one after the other as Slurm would run them (the array's tasks by
// SLURM_ARRAY_TASK_ID), write the files of a local `eddy run` of each
// variant, byte for byte; planned again, only what is not done is
// submitted; bad input is named. (tests/farm/ runs them on a real Slurm.)
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_fixture.h"
#include "tank_shot.h"

namespace {

namespace fs = std::filesystem;
using eddy::testing::CliTest;

std::string bytes_of(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Files under dir, relative, without the farm's own (.eddy markers, checkpoints).
std::vector<std::string> outputs(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string rel = fs::relative(e.path(), dir).generic_string();
    if (e.is_regular_file() && rel.rfind(".eddy/", 0) != 0 && rel.rfind("checkpoints/", 0) != 0) out.push_back(rel);
  }
  std::sort(out.begin(), out.end());
  return out;
}

int sh(const std::string& cmd) {
  const int st = std::system((cmd + " > /dev/null 2>&1").c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

class FarmTest : public CliTest {
 protected:
  FarmTest() : CliTest("eddy_farm_") {}
};

TEST_F(FarmTest, DryRunJobsRunInOrderWriteTheFilesOfLocalRuns) {
  const std::string g = write("shot.eddy.json", eddy::testing::kTankShot);
  const fs::path farm = dir / "farm";
  const std::string submit =
      "farm submit " + g + " --frames 1-12 --chunk 4 --wedge solver.xsph=0.0,0.05 --dry-run --out " + farm.string();
  auto r = eddy(submit);
  ASSERT_EQ(r.status, 0) << r.output;
  const fs::path jobs = farm / "farm" / "shot";
  EXPECT_NE(r.output.find("2 variant(s) x frames 1-12 in 3 chunk(s) (downstream 3); 0 of 24 frames done"), std::string::npos)
      << r.output;
  // A chain per variant, each job after the one before; the array's tasks
  // each after the chain job of their own frames.
  EXPECT_NE(r.output.find("sim_v1_c2=$(job --dependency=afterok:$sim_v1_c1 sim.v1.c2.sh)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("post=$(job --hold --array=0,1,2,3,4,5 post.sh)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("scontrol update JobId=${post}_4 Dependency=afterok:$sim_v1_c1"), std::string::npos) << r.output;
  for (const char* f : {"plan.json", "submit.sh", "post.sh", "sim.v0.c0.sh", "sim.v1.c2.sh"})
    EXPECT_TRUE(fs::is_regular_file(jobs / f)) << f;
  EXPECT_FALSE(fs::exists(jobs / "sim.v2.c0.sh"));
  EXPECT_NE(bytes_of(jobs / "sim.v0.c1.sh").find("#SBATCH --job-name=eddy.shot.sim.v0.c1\n"), std::string::npos);
  EXPECT_NE(bytes_of(jobs / "sim.v0.c1.sh").find("--part sim --frames 5-8"), std::string::npos);

  // As Slurm would: the chains, then the array's tasks (last first: a task
  // needs only its own chunk's simulation).
  for (const char* job : {"sim.v0.c0", "sim.v0.c1", "sim.v0.c2", "sim.v1.c0", "sim.v1.c1", "sim.v1.c2"})
    ASSERT_EQ(sh("bash " + (jobs / (std::string(job) + ".sh")).string()), 0) << job;
  for (int t = 5; t >= 0; --t)
    ASSERT_EQ(sh("SLURM_ARRAY_TASK_ID=" + std::to_string(t) + " bash " + (jobs / "post.sh").string()), 0) << t;
  EXPECT_NE(sh("SLURM_ARRAY_TASK_ID=6 bash " + (jobs / "post.sh").string()), 0);

  // Each variant in its own folder, named by its value, as a local run writes it.
  for (const char* value : {"0.0", "0.05"}) {
    const fs::path local = dir / (std::string("local") + value), variant = farm / (std::string("solver.xsph=") + value);
    r = eddy("run " + g + " --frames 1-12 --set solver.xsph=" + value + " --out " + local.string());
    ASSERT_EQ(r.status, 0) << r.output;
    ASSERT_EQ(outputs(variant), outputs(local)) << value;
    EXPECT_EQ(outputs(local).size(), 48u);  // cache, particles, mesh, VDB
    for (const auto& f : outputs(local)) EXPECT_EQ(bytes_of(variant / f), bytes_of(local / f)) << value << " " << f;
  }
  EXPECT_NE(bytes_of(farm / "solver.xsph=0.0" / "particles" / "p.0012.ply"),
            bytes_of(farm / "solver.xsph=0.05" / "particles" / "p.0012.ply"));

  // Planned again: nothing left. With a frame's files lost (its marker
  // gone), only that chunk's task, and no simulation.
  r = eddy(submit);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("24 of 24 frames done"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("nothing to submit"), std::string::npos) << r.output;
  fs::remove(farm / "solver.xsph=0.05" / ".eddy" / "done" / "shot.post.0006");
  r = eddy(submit);
  EXPECT_NE(r.output.find("post=$(job --hold --array=4 post.sh)"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("sim_v"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("scontrol update"), std::string::npos) << r.output;
  // A simulated frame lost: its chunk's job alone (the frames after it are
  // on disk, and so is everything downstream of it).
  fs::remove(farm / "solver.xsph=0.0" / ".eddy" / "done" / "shot.sim.0007");
  r = eddy(submit);
  EXPECT_NE(r.output.find("sim_v0_c1=$(job sim.v0.c1.sh)"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("sim_v0_c2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("post=$(job --hold --array=4 post.sh)"), std::string::npos) << r.output;
  // Status without a queue: what the disk holds.
  r = eddy("farm status --jobs-dir " + jobs.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("solver.xsph=0.0 (" + (farm / "solver.xsph=0.0").string() + "): simulated 8, finished 12 of 12 frames"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("frames: 20 done, 0 pending, 4 failed"), std::string::npos) << r.output;
}

// Downstream in chunks of their own: each task waits on every simulation
// job whose frames it reads, and only those.
TEST_F(FarmTest, DownstreamChunksWaitOnTheSimulationOfTheirFrames) {
  const std::string g = write("shot.eddy.json", eddy::testing::kTankShot);
  const auto r = eddy("farm submit " + g + " --frames 1-12 --chunk 6 --post-chunk 4 --dry-run --out " + out());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("in 2 chunk(s) (downstream 3)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("post=$(job --hold --array=0,1,2 post.sh)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("JobId=${post}_0 Dependency=afterok:$sim_v0_c0\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("JobId=${post}_1 Dependency=afterok:$sim_v0_c0:$sim_v0_c1\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("JobId=${post}_2 Dependency=afterok:$sim_v0_c1\n"), std::string::npos) << r.output;
  const std::string post = bytes_of(fs::path(out()) / "farm" / "shot" / "post.sh");
  EXPECT_NE(post.find("1) cook"), std::string::npos);
  EXPECT_NE(post.find("--part post --frames 5-8 "), std::string::npos) << post;
}

TEST_F(FarmTest, BadInputIsNamed) {
  const std::string g = write("shot.eddy.json", eddy::testing::kTankShot);
  const std::string base = "farm submit " + g + " --dry-run --out " + out();
  struct Case {
    std::string args, message;
  } cases[] = {
      {" --wedge solver", "--wedge solver: expected NODE.PARAM=v1,v2,..."},
      {" --wedge solver.xsph=0.1,", "--wedge solver.xsph=0.1,: an empty value"},
      {" --wedge solver.nothing=1,2", "--wedge, variant solver.nothing=1: PBFSolver \"solver\" has no parameter \"nothing\""},
      {" --wedge solver.xsph=0.1,-4", "variant solver.xsph=-4"},
      {" --frames 5-40", "--frames 5-40: outside the graph's frame_range 1-12"},
      {" --name 'a b'", "--name a b: letters, digits, _ and - only"},
      {" --chunk 0", "--chunk: Value 0 not in range 1 to 1000000"},
  };
  for (const Case& c : cases) {
    const auto r = eddy(base + c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.args << "\n" << r.output;
  }
  EXPECT_TRUE(out_is_empty());
  auto r = eddy("farm status --jobs-dir " + dir.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find(dir.string() + ": no plan.json"), std::string::npos) << r.output;
}

}  // namespace
