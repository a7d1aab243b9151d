// The CUDA backend against the CPU: the same PBF step, compared particle by
// particle (matched by id) after a few steps. Skipped where no device is
// present; without CUDA the backend must say so.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "eddy/core/error.h"
#include "eddy/core/pbf/pbf.h"
#include "eddy/gpu/gpu.h"
#include "gpu_test.h"

namespace eddy {
namespace {

std::vector<Collider> tank() {
  const Collider c = test::tank(vec3(0.0f), vec3(1.0f, 1.0f, 0.5f));
  Collider s;
  s.type = ShapeType::Ellipsoid;
  s.center = vec3(0.8f, 0.1f, 0.15f);
  s.size = vec3(0.1f, 0.08f, 0.06f);
  return {c, s};
}

// Every backend factory: without CUDA it names the missing CUDA; with CUDA
// but no device it refuses.
TEST(Gpu, BackendReportsWhatItIs) {
  if (!gpu::built_with_cuda()) {
    test::expect_built_without_cuda([] { return gpu::make_pbf_solver_cuda(PbfParams{}); });
    test::expect_built_without_cuda([] { return gpu::make_sph_solver_cuda(SphParams{}); });
    test::expect_built_without_cuda([] { return gpu::make_mpm_solver_cuda(MpmParams{}); });
    test::expect_built_without_cuda([] { return gpu::make_pd_iterations_cuda(); });
    return;
  }
  std::printf("  CUDA backend built; device: %s\n", gpu::device_description().c_str());
  if (gpu::device_count() == 0) {
    EXPECT_THROW(gpu::make_pbf_solver_cuda(PbfParams{}), Error);
    EXPECT_THROW(gpu::make_sph_solver_cuda(SphParams{}), Error);
    EXPECT_THROW(gpu::make_mpm_solver_cuda(MpmParams{}), Error);
    EXPECT_THROW(gpu::make_pd_iterations_cuda(), Error);
  }
}

TEST(Gpu, PbfStepMatchesTheCpu) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device (" << gpu::device_description() << ")";
  PbfParams p;
  p.vorticity = 0.2f;
  p.reorder_interval = 2;
  const Points start = test::splash_block();
  auto cpu = make_pbf_solver_cpu(p);
  auto gpu = gpu::make_pbf_solver_cuda(p);
  for (auto* s : {cpu.get(), gpu.get()}) {
    s->load(start);
    s->set_colliders(tank());
  }
  const int steps = 6;
  for (int k = 0; k < steps; ++k) {
    const PbfStepStats a = cpu->step(1.0f / 240, k / 240.0f);
    const PbfStepStats b = gpu->step(1.0f / 240, k / 240.0f);
    test::expect_pair_counts_close(a.neighbor_pairs, b.neighbor_pairs, k);
    EXPECT_NEAR(a.max_speed, b.max_speed, 1e-3f * (1 + a.max_speed)) << "step " << k;
  }
  const test::StoredPair both = test::store_both(*cpu, *gpu);
  // Tolerance: float round-off (fused multiply-adds on the device) growing
  // over a few steps; far below the particle radius (2 cm).
  const float worst_x = both.max_difference("P"), worst_v = both.max_difference("v"),
              worst_rho = both.max_difference("density");
  std::printf("  after %d steps: max |dx| %.3g m, max |dv| %.3g m/s, max |drho| %.3g kg/m^3\n", steps, worst_x,
              worst_v, worst_rho);
  EXPECT_LT(worst_x, 1e-4f);
  EXPECT_LT(worst_v, 2e-2f);
  EXPECT_LT(worst_rho, 1.0f);
}

}  // namespace
}  // namespace eddy
