// restart_with_huge_page_malloc (huge_pages.h).
#include "eddy/core/huge_pages.h"

#include <cstdlib>
#include <cstring>
#include <string>

#if defined(__linux__)
#include <unistd.h>
#endif

namespace eddy {

bool restart_with_huge_page_malloc(char** argv) {
#if defined(__linux__) && defined(__GLIBC__)
  constexpr const char* kTunable = "glibc.malloc.hugetlb=1";
  const char* have = std::getenv("GLIBC_TUNABLES");
  if (have && std::strstr(have, "glibc.malloc.hugetlb")) return std::strstr(have, kTunable) != nullptr;
  const char* off = std::getenv("EDDY_MALLOC_HUGE_PAGES");
  if (off && std::strcmp(off, "0") == 0) return false;
  if (!argv || !argv[0]) return false;
  // Tunables are colon-separated; keep the user's own.
  const std::string value = have && *have ? std::string(have) + ":" + kTunable : std::string(kTunable);
  if (setenv("GLIBC_TUNABLES", value.c_str(), 1) != 0) return false;
  execv("/proc/self/exe", argv);
  // Not restarted (no /proc, say): leave the environment as it was.
  if (have) setenv("GLIBC_TUNABLES", have, 1);
  else unsetenv("GLIBC_TUNABLES");
  return false;
#else
  (void)argv;
  return false;
#endif
}

}  // namespace eddy
