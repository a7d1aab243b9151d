#pragma once
// A fresh, empty scratch folder for a test, in the system's temporary
// folder: <prefix><pid>_<name>, emptied first if a past run left it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace eddy::test {

inline std::filesystem::path fresh_temp_dir(const std::string& prefix, const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path d = fs::temp_directory_path() / (prefix + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// The same, named after the test that is running.
inline std::filesystem::path fresh_test_dir(const std::string& prefix) {
  return fresh_temp_dir(prefix, ::testing::UnitTest::GetInstance()->current_test_info()->name());
}

}  // namespace eddy::test
