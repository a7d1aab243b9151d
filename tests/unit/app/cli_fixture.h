#pragma once
// The fixture of the eddy command's tests: a fresh folder `dir` per test,
// files written into it, and the output folder dir/out that a run fills.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "../../temp_dir.h"
#include "run_eddy.h"

namespace eddy::testing {

class CliTest : public ::testing::Test {
 protected:
  // `prefix` names the folder: <temp>/<prefix><pid>_<test name>.
  explicit CliTest(std::string prefix = "eddy_cli_") : prefix_(std::move(prefix)) {}
  using Result = ::eddy::testing::Result;
  // Runs this build's eddy with `args` (run_eddy.h).
  static Result eddy(const std::string& args) { return ::eddy::testing::eddy(args); }
  void SetUp() override { dir = test::fresh_test_dir(prefix_); }
  void TearDown() override { std::filesystem::remove_all(dir); }
  // Writes `text` to dir/name; returns its path.
  std::string write(const std::string& name, const std::string& text) {
    const std::filesystem::path p = dir / name;
    std::ofstream(p) << text;
    return p.string();
  }
  std::string out() const { return (dir / "out").string(); }
  bool out_is_empty() const {
    const std::filesystem::path o = dir / "out";
    return !std::filesystem::exists(o) || std::filesystem::is_empty(o);
  }
  std::filesystem::path dir;

 private:
  std::string prefix_;
};

}  // namespace eddy::testing
