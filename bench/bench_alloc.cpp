// First-touch cost of fresh memory: a 512 MiB array allocated, written once
// and freed, three times each with std::vector (4 KiB pages) and with
// LargeVector (eddy/core/huge_pages.h: 2 MiB pages where the kernel's
// transparent huge pages allow them), alternated in one run. The bands of
// the surfacing chain allocate about this much per frame at 1M particles.
//
//   build/bin/eddy_bench_alloc [MiB]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "eddy/core/huge_pages.h"

using Clock = std::chrono::steady_clock;

template <class V>
static double touch(std::size_t n) {
  const auto t0 = Clock::now();
  {
    V v(n);  // value-initialised: every page written
    volatile float sink = v[n / 2];
    (void)sink;
  }
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

int main(int argc, char** argv) {
  const std::size_t mib = argc > 1 ? std::size_t(std::atof(argv[1])) : 512;
  const std::size_t n = mib * (std::size_t(1) << 20) / sizeof(float);
  std::string thp = "unknown";
  std::ifstream mode("/sys/kernel/mm/transparent_hugepage/enabled");
  if (mode) std::getline(mode, thp);
  std::printf("fresh memory, %zu MiB written once (transparent huge pages: %s)\n", mib, thp.c_str());
  double plain = 1e30, huge = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    plain = std::min(plain, touch<std::vector<float>>(n));
    huge = std::min(huge, touch<eddy::LargeVector<float>>(n));
  }
  std::printf("std::vector        %.3f s  (%.2f s per GiB)\n", plain, plain * 1024 / double(mib));
  std::printf("eddy::LargeVector  %.3f s  (%.2f s per GiB)\n", huge, huge * 1024 / double(mib));
  std::printf("ratio: %.1fx faster on huge pages (best of three each)\n", plain / huge);
}
