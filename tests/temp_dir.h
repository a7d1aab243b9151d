#pragma once
// A fresh, empty scratch folder for a test, in the system's temporary
// folder: <prefix><pid>_<name>, emptied first if a past run left it. Every
// folder handed out is removed when the test process ends, unless
// EDDY_KEEP_TEST_FILES is set (to look at what a test wrote).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

namespace eddy::test {

namespace detail {

// The folders of this process, removed at its exit.
class ScratchFolders {
 public:
  void add(const std::filesystem::path& d) {
    std::lock_guard<std::mutex> lock(mutex_);
    folders_.push_back(d);
  }
  ~ScratchFolders() {
    if (std::getenv("EDDY_KEEP_TEST_FILES")) return;
    std::error_code ec;  // a folder already gone is fine
    for (const auto& d : folders_) std::filesystem::remove_all(d, ec);
  }

 private:
  std::mutex mutex_;
  std::vector<std::filesystem::path> folders_;
};

inline ScratchFolders& scratch_folders() {
  static ScratchFolders folders;
  return folders;
}

}  // namespace detail

inline std::filesystem::path fresh_temp_dir(const std::string& prefix, const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path d = fs::temp_directory_path() / (prefix + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  detail::scratch_folders().add(d);
  return d;
}

// The same, named after the test that is running.
inline std::filesystem::path fresh_test_dir(const std::string& prefix) {
  return fresh_temp_dir(prefix, ::testing::UnitTest::GetInstance()->current_test_info()->name());
}

}  // namespace eddy::test
