// The CUDA backend against the CPU: the same SPH step (WCSPH and DFSPH, with
// boundary particles and surface tension), compared after a few steps.
// Skipped where no device is present; without CUDA the backend must say so.
#include <gtest/gtest.h>

#include <cmath>

#include "eddy/core/sph/sph.h"
#include "eddy/gpu/gpu.h"
#include "gpu_test.h"

namespace eddy {
namespace {

Collider tank() { return test::tank(vec3(0.0f), vec3(1.0f, 1.0f, 0.5f)); }

TEST(GpuSph, StepMatchesTheCpu) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device (" << gpu::device_description() << ")";
  for (SphMethod m : {SphMethod::Wcsph, SphMethod::Dfsph}) {
    SphParams p;
    p.method = m;
    p.surface_tension = SurfaceTension::Akinci2013;
    p.tension = 0.5f;
    p.reorder_interval = 2;
    const Points start = test::splash_block();
    auto cpu = make_sph_solver_cpu(p);
    auto gpu = gpu::make_sph_solver_cuda(p);
    for (auto* s : {cpu.get(), gpu.get()}) {
      s->set_colliders({tank()});
      s->load(start);
    }
    EXPECT_EQ(cpu->boundary_size(), gpu->boundary_size());
    const float dt = m == SphMethod::Wcsph ? 2e-4f : 1e-3f;
    for (int k = 0; k < 6; ++k) {
      const SphStepStats a = cpu->step(dt, k * dt);
      const SphStepStats b = gpu->step(dt, k * dt);
      test::expect_pair_counts_close(a.neighbor_pairs, b.neighbor_pairs, k);
      test::expect_pair_counts_close(a.boundary_pairs, b.boundary_pairs, k);
      EXPECT_NEAR(a.max_speed, b.max_speed, 1e-3f * (1 + a.max_speed)) << "step " << k;
    }
    const float worst = test::store_both(*cpu, *gpu).max_difference("P");
    // Summation order differs (CUB's reductions and float contraction on the device).
    EXPECT_LT(worst, 1e-4f) << "method " << int(m);
  }
}

}  // namespace
}  // namespace eddy
