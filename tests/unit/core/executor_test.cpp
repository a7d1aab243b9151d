// The TBB executor against plain sequential loops: scans, stable sorts and
// reductions, and reductions that do not depend on the thread count.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "eddy/core/cpu_executor.h"

namespace eddy {
namespace {

TEST(CpuExecutor, ExclusiveScanMatchesSequential) {
  std::mt19937 rng(1);
  for (uint32_t n : {0u, 1u, 7u, 2048u, 2049u, 100000u}) {
    std::vector<uint32_t> in(n), out(n), ref(n);
    for (auto& x : in) x = rng() % 50;
    uint32_t run = 0;
    for (uint32_t i = 0; i < n; ++i) ref[i] = run, run += in[i];
    CpuExecutor ex;
    EXPECT_EQ(ex.exclusive_scan(in.data(), out.data(), n), run) << n;
    EXPECT_EQ(out, ref) << n;
    // In place.
    EXPECT_EQ(ex.exclusive_scan(in.data(), in.data(), n), run);
    EXPECT_EQ(in, ref);
  }
}

TEST(CpuExecutor, SortByKeyIsStableAndMatchesStdStableSort) {
  std::mt19937_64 rng(2);
  for (int bits : {1, 8, 13, 24, 63}) {
    const uint32_t n = 50000;
    std::vector<uint64_t> keys(n);
    std::vector<uint32_t> vals(n);
    for (uint32_t i = 0; i < n; ++i) keys[i] = rng() & ((bits == 64 ? 0 : (1ull << bits)) - 1), vals[i] = i;
    std::vector<std::pair<uint64_t, uint32_t>> ref(n);
    for (uint32_t i = 0; i < n; ++i) ref[i] = {keys[i], vals[i]};
    std::stable_sort(ref.begin(), ref.end(), [](auto& a, auto& b) { return a.first < b.first; });
    CpuExecutor ex;
    ex.sort_by_key(keys.data(), vals.data(), n, bits);
    for (uint32_t i = 0; i < n; ++i) {
      ASSERT_EQ(keys[i], ref[i].first) << "bits " << bits << " at " << i;
      ASSERT_EQ(vals[i], ref[i].second) << "bits " << bits << " at " << i;
    }
  }
}

TEST(CpuExecutor, SortSkipsNothingWhenKeysShareLowDigits) {
  // All keys equal in the low byte: that pass is skipped, the others must run.
  std::vector<uint64_t> keys = {0x300, 0x100, 0x200, 0x100};
  std::vector<uint32_t> vals = {0, 1, 2, 3};
  CpuExecutor ex;
  ex.sort_by_key(keys.data(), vals.data(), 4, 16);
  EXPECT_EQ(keys, (std::vector<uint64_t>{0x100, 0x100, 0x200, 0x300}));
  EXPECT_EQ(vals, (std::vector<uint32_t>{1, 3, 2, 0}));
}

TEST(CpuExecutor, FloatReductionDoesNotDependOnThreadCount) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1e3f, 1e3f);
  std::vector<float> v(300001);
  for (auto& x : v) x = u(rng);
  const float* p = v.data();
  auto sum = [&](int threads) {
    CpuExecutor ex(threads);
    return ex.reduce(uint32_t(v.size()), 0.0f, [=](uint32_t i) { return p[i]; }, SumOp{});
  };
  const float one = sum(1);
  EXPECT_EQ(one, sum(2));
  EXPECT_EQ(one, sum(0));
  // And it is the sum (to float round-off).
  const double exact = std::accumulate(v.begin(), v.end(), 0.0);
  EXPECT_NEAR(one, exact, 1e-4 * std::accumulate(v.begin(), v.end(), 0.0, [](double a, float b) { return a + std::fabs(b); }));
}

TEST(CpuExecutor, ForEachVisitsEveryIndexOnce) {
  CpuExecutor ex;
  std::vector<int> hits(123457, 0);
  int* h = hits.data();
  ex.for_each(uint32_t(hits.size()), [=](uint32_t i) { h[i] += 1; });
  EXPECT_EQ(std::count(hits.begin(), hits.end(), 1), long(hits.size()));
}

}  // namespace
}  // namespace eddy
