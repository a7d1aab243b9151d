#pragma once
// Runs the eddy binary of this build with arguments, capturing its exit
// status and its output (stdout and stderr together).
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace eddy::testing {

struct Result {
  int status;
  std::string output;
};

inline Result eddy(const std::string& args) {
  const std::string cmd = std::string(EDDY_BINARY_DIR) + "/bin/eddy " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (std::size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

}  // namespace eddy::testing
