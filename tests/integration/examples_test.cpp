// Every example graph cooks its first frames through the eddy command and
// writes readable particle files.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>

#include "eddy/core/ply.h"

namespace {

namespace fs = std::filesystem;

TEST(Examples, CookTheirFirstFrames) {
  int examples = 0;
  for (const auto& e : fs::directory_iterator(fs::path(EDDY_SOURCE_DIR) / "examples")) {
    const std::string path = e.path().string();
    if (path.size() < 10 || path.substr(path.size() - 10) != ".eddy.json") continue;
    ++examples;
    const fs::path out = fs::temp_directory_path() / ("eddy_example_" + e.path().stem().string());
    fs::remove_all(out);
    const std::string cmd = std::string(EDDY_BINARY_DIR) + "/bin/eddy run " + path + " --frames 1-3 --quiet --out " +
                            out.string() + " > /dev/null 2>&1";
    const int st = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << path;
    int files = 0;
    for (const auto& f : fs::recursive_directory_iterator(out)) {
      if (f.path().extension() != ".ply") continue;
      const eddy::Points p = eddy::read_ply_points(f.path().string());
      EXPECT_GT(p.size(), 0u) << f.path();
      EXPECT_GT(p.radius, 0.0f) << f.path();
      ++files;
    }
    EXPECT_EQ(files, 3) << path;
    fs::remove_all(out);
  }
  EXPECT_GE(examples, 1);
}

}  // namespace
