// The neighbour search on the GPU, its two shapes side by side in one run:
// per cell (a cell's candidates gathered into a buffer, the CPU's shape)
// and per particle (each particle reads its 27 cells in place, the GPU's),
// with the CPU's per-cell search on every core for scale. Same points, same
// lists (tests/unit/core/neighbor_grid_test.cpp checks the shapes against
// each other on the CPU; tests/gpu/executor_test.cu the GPU against the
// CPU). Points: the dam-break cube of the solver benchmarks (spacing 2r,
// support h = 4r, about 30 neighbours each) at 59,319 and 1M particles.
// Built only with CUDA; prints "no CUDA device" and exits 0 without one.
//
// Usage: eddy_bench_gpu_neighbors [--steps N]   (timed searches per shape, 20)
#include <tbb/info.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <vector>

#include "../gpu/src/cuda_executor.cuh"
#include "eddy/core/cpu_executor.h"
#include "eddy/core/neighbor_grid.h"
#include "eddy/gpu/gpu.h"

using namespace eddy;
using Clock = std::chrono::steady_clock;

namespace {

std::vector<Vec3f> cube(int n, float r) {
  std::vector<Vec3f> x;
  x.reserve(std::size_t(n) * n * n);
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int k = 0; k < n; ++k) x.push_back(vec3(r + 2 * r * k, r + 2 * r * y, r + 2 * r * z));
  return x;
}

// Milliseconds per build + search (the solvers redo both every step), the
// median of `steps` after two untimed; returns the pair count through `pairs`.
template <class Exec>
double time_search(const Exec& ex, const Vec3f* x, uint32_t n, float h, NeighborStrategy s, int steps,
                   uint32_t& pairs) {
  NeighborGrid<Exec> g(ex);
  g.set_strategy(s);
  std::vector<double> ms;
  for (int k = 0; k < steps + 2; ++k) {
    const auto t0 = Clock::now();
    g.build(x, n, h);
    g.find_neighbors(x);
    if constexpr (Exec::on_device) gpu::check(cudaDeviceSynchronize(), "synchronize");
    if (k >= 2) ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  pairs = g.pair_count();
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 20;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--steps") && i + 1 < argc) steps = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--steps N]\n", argv[0]);
      return 2;
    }
  }
  if (gpu::device_count() == 0) {
    std::printf("GPU neighbour search: skipped, no CUDA device (%s)\n", gpu::device_description().c_str());
    return 0;
  }
  std::printf("Neighbour search (grid build + lists), median of %d: %s, CPU %d cores\n", steps,
              gpu::device_description().c_str(), tbb::info::default_concurrency());
  std::printf("  %-10s %10s %14s %16s %14s %12s\n", "particles", "pairs", "CPU per cell", "GPU per cell",
              "GPU per part.", "per cell / per particle");
  for (int side : {39, 100}) {
    const float r = 0.0125f, h = 4 * r;
    const std::vector<Vec3f> x = cube(side, r);
    const uint32_t n = uint32_t(x.size());
    CpuExecutor cpu;
    gpu::CudaExecutor dev;
    gpu::CudaExecutor::Vector<Vec3f> dx;
    dev.upload(dx, x.data(), n);
    uint32_t pc = 0, pg = 0, pp = 0;
    const double c = time_search(cpu, x.data(), n, h, NeighborStrategy::PerCell, steps, pc);
    const double gc = time_search(dev, dx.data(), n, h, NeighborStrategy::PerCell, steps, pg);
    const double gp = time_search(dev, dx.data(), n, h, NeighborStrategy::PerParticle, steps, pp);
    if (pc != pg || pc != pp) std::printf("  (pair counts differ: %u %u %u)\n", pc, pg, pp);
    std::printf("  %-10u %10u %11.3f ms %13.3f ms %11.3f ms %12.2fx\n", n, pc, c, gc, gp, gc / gp);
  }
  return 0;
}
