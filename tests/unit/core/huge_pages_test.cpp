// HugePageAllocator (eddy/core/huge_pages.h): ordinary storage below 2 MiB,
// 2 MiB-aligned storage marked for transparent huge pages above, and on a
// Linux kernel that grants them, huge pages actually backing it.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

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
#endif
