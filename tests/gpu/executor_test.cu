// The CUDA executor's primitives and the neighbour grid on the device,
// against the CPU executor. Skipped where no device is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "../../gpu/src/cuda_executor.cuh"
#include "eddy/core/cpu_executor.h"
#include "eddy/core/neighbor_grid.h"
#include "eddy/gpu/gpu.h"

namespace eddy {
namespace {

using gpu::CudaExecutor;

// nvcc: an extended lambda may not live in a gtest TestBody (private), so here.
unsigned device_max(const CudaExecutor& gx, const uint32_t* p, uint32_t n) {
  return gx.reduce(n, 0u, [=] EDDY_HD(uint32_t i) { return p[i]; }, MaxOp{});
}

#define REQUIRE_DEVICE() \
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device"

TEST(CudaExecutor, ScanSortReduceMatchTheCpu) {
  REQUIRE_DEVICE();
  CudaExecutor gx;
  CpuExecutor cx;
  std::mt19937_64 rng(5);
  const uint32_t n = 100003;
  std::vector<uint32_t> counts(n);
  for (auto& c : counts) c = rng() % 40;
  CudaExecutor::Vector<uint32_t> d;
  gx.upload(d, counts.data(), n);
  std::vector<uint32_t> ref(n), got(n);
  const uint32_t total = cx.exclusive_scan(counts.data(), ref.data(), n);
  EXPECT_EQ(gx.exclusive_scan(d.data(), d.data(), n), total);
  gx.download(d, got.data(), n);
  EXPECT_EQ(got, ref);

  std::vector<uint64_t> keys(n);
  std::vector<uint32_t> vals(n);
  for (uint32_t i = 0; i < n; ++i) keys[i] = rng() & ((1ull << 30) - 1), vals[i] = i;
  CudaExecutor::Vector<uint64_t> dk;
  CudaExecutor::Vector<uint32_t> dv;
  gx.upload(dk, keys.data(), n);
  gx.upload(dv, vals.data(), n);
  gx.sort_by_key(dk.data(), dv.data(), n, 30);
  cx.sort_by_key(keys.data(), vals.data(), n, 30);
  std::vector<uint64_t> gk(n);
  std::vector<uint32_t> gv(n);
  gx.download(dk, gk.data(), n);
  gx.download(dv, gv.data(), n);
  EXPECT_EQ(gk, keys);
  EXPECT_EQ(gv, vals);  // both stable

  const unsigned mx = device_max(gx, d.data(), n);
  EXPECT_EQ(mx, *std::max_element(ref.begin(), ref.end()));
}

TEST(CudaExecutor, NeighbourGridMatchesTheCpu) {
  REQUIRE_DEVICE();
  std::mt19937 rng(6);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<Vec3f> x(20000);
  for (auto& q : x) q = vec3(u(rng), u(rng), u(rng) * 0.5f);
  x.push_back(vec3(1e7f, 0, 0));  // far outside
  const float h = 0.05f;
  const uint32_t n = uint32_t(x.size());
  CpuExecutor cx;
  NeighborGrid<CpuExecutor> cg(cx);
  cg.build(x.data(), n, h);
  cg.find_neighbors(x.data());
  CudaExecutor gx;
  CudaExecutor::Vector<Vec3f> dx;
  gx.upload(dx, x.data(), n);
  // The device's own shape (per particle, its default) and the CPU's (per cell).
  for (NeighborStrategy s : {NeighborStrategy::PerParticle, NeighborStrategy::PerCell}) {
    NeighborGrid<CudaExecutor> gg(gx);
    EXPECT_EQ(gg.strategy(), NeighborStrategy::PerParticle);
    gg.set_strategy(s);
    gg.build(dx.data(), n, h);
    gg.find_neighbors(dx.data());
    ASSERT_EQ(gg.pair_count(), cg.pair_count());
    // Same lists in the same order: both sorts are stable on the same keys.
    std::vector<uint32_t> off(n + 1), idx(gg.pair_count() + n);
    gpu::check(cudaMemcpy(off.data(), gg.neighbors().offsets, (n + 1) * 4, cudaMemcpyDeviceToHost), "offsets");
    gpu::check(cudaMemcpy(idx.data(), gg.neighbors().indices, idx.size() * 4, cudaMemcpyDeviceToHost), "indices");
    const NeighborView c = cg.neighbors();
    for (uint32_t i = 0; i < n; ++i) {
      ASSERT_EQ(off[i + 1] - off[i], c.offsets[i + 1] - c.offsets[i]) << i << ", strategy " << int(s);
      for (uint32_t q = 0; q + 1 < off[i + 1] - off[i]; ++q)
        ASSERT_EQ(idx[off[i] + q], c.indices[c.offsets[i] + q]) << i << ", strategy " << int(s);
    }
  }
}

}  // namespace
}  // namespace eddy
