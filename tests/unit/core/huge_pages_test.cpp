// HugePageAllocator (eddy/core/huge_pages.h): ordinary storage below 2 MiB,
// 2 MiB-aligned storage marked for transparent huge pages above, and on a
// Linux kernel that grants them, huge pages actually backing it.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "eddy/core/huge_pages.h"

using namespace eddy;

TEST(HugePages, SmallAndLargeVectorsHoldTheirValues) {
  for (std::size_t n : {std::size_t(1), std::size_t(1000), kHugePageBytes / 4 - 1, kHugePageBytes / 4,
                        3 * kHugePageBytes / 4 + 17}) {
    LargeVector<uint32_t> v(n);
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(v[i], 0u) << n;  // value-initialised
    for (std::size_t i = 0; i < n; ++i) v[i] = uint32_t(i * 2654435761u);
    LargeVector<uint32_t> copy = v;
    v.resize(n + 1, 7);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(copy[i], uint32_t(i * 2654435761u)) << n;
    EXPECT_EQ(v[n], 7u);
    const bool large = n * sizeof(uint32_t) >= kHugePageBytes;
    if (large) {
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(copy.data()) % kHugePageBytes, 0u) << n;
    }
  }
}

TEST(HugePages, ResizeOnHugePagesKeepsTheElementsAndValueInitialisesTheRest) {
  std::vector<int> v = {3, 1, 4, 1, 5};
  resize_on_huge_pages(v, 1 << 20);
  ASSERT_EQ(v.size(), std::size_t(1) << 20);
  EXPECT_EQ(v[0], 3);
  EXPECT_EQ(v[4], 5);
  for (std::size_t i = 5; i < v.size(); i += 997) ASSERT_EQ(v[i], 0) << i;
  resize_on_huge_pages(v, 2);  // shrinking keeps the storage, as resize does
  EXPECT_EQ(v.size(), 2u);
  EXPECT_EQ(v[1], 1);
}

#if defined(__linux__)
// The kB of AnonHugePages in the mappings of /proc/self/smaps that overlap
// [p, p + bytes) (madvise on part of a mapping splits it), or -1 if none.
static long anon_huge_kb(const void* p, std::size_t bytes) {
  std::ifstream smaps("/proc/self/smaps");
  const auto a = reinterpret_cast<std::uintptr_t>(p), b = a + bytes;
  std::string line;
  bool inside = false, found = false;
  long kb = 0;
  while (std::getline(smaps, line)) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-' && line.find(':') > line.find(' ')) {
      inside = lo < b && a < hi;
      found |= inside;
      continue;
    }
    if (inside && line.rfind("AnonHugePages:", 0) == 0) kb += std::stol(line.substr(14));
  }
  return found ? kb : -1;
}

TEST(HugePages, LargeVectorsSitOnHugePagesWhereTheKernelOffersThem) {
  std::ifstream mode("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string m;
  if (!mode || !std::getline(mode, m) || m.find("[never]") != std::string::npos)
    GTEST_SKIP() << "transparent huge pages are off here (" << m << ")";
  LargeVector<float> v(16 * kHugePageBytes / sizeof(float), 1.0f);  // 32 MiB, every page written
  const long kb = anon_huge_kb(v.data(), v.size() * sizeof(float));
  ASSERT_GE(kb, 0) << "no mapping in /proc/self/smaps holds the vector";
  // Most of it; the kernel may fall back to small pages where it finds no
  // free 2 MiB frame.
  EXPECT_GE(kb, 8 * 2048) << "THP mode " << m;
  // An ordinary vector through resize_on_huge_pages: its whole 2 MiB pages.
  std::vector<float> w;
  resize_on_huge_pages(w, 16 * kHugePageBytes / sizeof(float));
  const long wkb = anon_huge_kb(w.data(), w.size() * sizeof(float));
  ASSERT_GE(wkb, 0);
  EXPECT_GE(wkb, 8 * 2048) << "THP mode " << m;
}

static bool thp_offered(std::string* mode) {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  return f && std::getline(f, *mode) && mode->find("[never]") == std::string::npos;
}

// What the restarted program sees: run by the test below in a copy of this
// test binary that restart_with_huge_page_malloc started anew; it writes
// GLIBC_TUNABLES, what a second call returns, and the kB of huge pages
// under 64 MiB of 2 KiB mallocs (OpenVDB's leaves are that size) to the
// file named in EDDY_TEST_RESTART_OUT. Run on its own, it does nothing.
TEST(HugePageMalloc, ReportsWhatTheRestartedProgramSees) {
  const char* out = std::getenv("EDDY_TEST_RESTART_OUT");
  if (!out) GTEST_SKIP() << "run by RestartsOnceWithTheTunableAdded";
  const char* t = std::getenv("GLIBC_TUNABLES");
  char* argv[] = {const_cast<char*>("/proc/self/exe"), nullptr};
  const bool again = restart_with_huge_page_malloc(argv);  // must not exec again
  std::vector<std::unique_ptr<char[]>> leaves;
  char* lo = nullptr;
  char* hi = nullptr;
  for (int i = 0; i < 32768; ++i) {
    leaves.emplace_back(new char[2048]);
    char* p = leaves.back().get();
    for (int k = 0; k < 2048; k += 512) p[k] = char(i);
    lo = lo && lo < p ? lo : p;
    hi = hi && hi > p ? hi : p + 2048;
  }
  std::ofstream f(out);
  f << (t ? t : "") << "\n" << again << "\n" << anon_huge_kb(lo, std::size_t(hi - lo)) << "\n";
}

TEST(HugePageMalloc, RestartsOnceWithTheTunableAdded) {
  std::string mode;
  const char* self = "/proc/self/exe";
  const std::string out = ::testing::TempDir() + "eddy_restart_" + std::to_string(getpid()) + ".txt";
  auto restart = [&](const char* tunables) {
    std::remove(out.c_str());
    const pid_t pid = fork();
    if (pid == 0) {
      setenv("EDDY_TEST_RESTART_OUT", out.c_str(), 1);
      unsetenv("EDDY_MALLOC_HUGE_PAGES");
      if (tunables) setenv("GLIBC_TUNABLES", tunables, 1);
      else unsetenv("GLIBC_TUNABLES");
      char* argv[] = {const_cast<char*>(self),
                      const_cast<char*>("--gtest_filter=HugePageMalloc.ReportsWhatTheRestartedProgramSees"), nullptr};
      restart_with_huge_page_malloc(argv);
      _exit(97);  // not restarted
    }
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
    std::ifstream f(out);
    std::string env, again, kb;
    std::getline(f, env);
    std::getline(f, again);
    std::getline(f, kb);
    return std::vector<std::string>{env, again, kb};
  };
  const auto fresh = restart(nullptr);
  EXPECT_EQ(fresh[0], "glibc.malloc.hugetlb=1");
  EXPECT_EQ(fresh[1], "1");  // in effect, and no second restart
  // The user's own tunables are kept.
  const auto kept = restart("glibc.malloc.arena_max=4");
  EXPECT_EQ(kept[0], "glibc.malloc.arena_max=4:glibc.malloc.hugetlb=1");
  // Where the kernel offers huge pages, malloc's small blocks now sit on them.
  std::printf("  restarted: GLIBC_TUNABLES=%s, 64 MiB of 2 KiB blocks on %s kB of huge pages\n", fresh[0].c_str(),
              fresh[2].c_str());
  if (thp_offered(&mode)) {
    ASSERT_FALSE(fresh[2].empty());
    EXPECT_GE(std::stol(fresh[2]), 16 * 2048) << "THP mode " << mode;  // half of the 64 MiB at least
  }
  // Turned off, or already decided by the user: no restart, and the answer says so.
  setenv("EDDY_MALLOC_HUGE_PAGES", "0", 1);
  char* argv[] = {const_cast<char*>(self), nullptr};
  EXPECT_FALSE(restart_with_huge_page_malloc(argv));
  unsetenv("EDDY_MALLOC_HUGE_PAGES");
  const char* before = std::getenv("GLIBC_TUNABLES");
  const std::string saved = before ? before : "";
  setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=0", 1);
  EXPECT_FALSE(restart_with_huge_page_malloc(argv));
  if (before) setenv("GLIBC_TUNABLES", saved.c_str(), 1);
  else unsetenv("GLIBC_TUNABLES");
  std::remove(out.c_str());
}
#endif
