// The CUDA backend against the CPU: the same MPM substeps (all four
// materials, a moving collider, APIC and FLIP), compared after a few
// substeps. Skipped where no device is present; without CUDA the backend
// must say so.
#include <gtest/gtest.h>

#include <cmath>

#include "eddy/core/mpm/mpm.h"
#include "eddy/gpu/gpu.h"
#include "gpu_test.h"

namespace eddy {
namespace {

TEST(GpuMpm, SubstepsMatchTheCpu) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device (" << gpu::device_description() << ")";
  for (MpmTransfer tr : {MpmTransfer::Apic, MpmTransfer::Flip}) {
    MpmParams p;
    p.transfer = tr;
    p.domain_min = vec3(0.0f);
    p.domain_max = vec3(0.6f, 0.6f, 0.6f);
    p.reorder_interval = 3;
    Points start = test::block(16, 12, 16, 0.01f, vec3(0.1f, 0.05f, 0.1f));
    start.add("material", AttribType::Int);
    for (std::size_t i = 0; i < start.size(); ++i) {
      start.get_int("material")[i] = int32_t(i % 4);
      start.v()[i] = vec3(0.5f, -1.0f, 0.2f);
    }
    Collider ball;
    ball.type = ShapeType::Sphere;
    ball.size = vec3(0.08f);
    ball.center = vec3(0.3f, 0.45f, 0.3f);
    ball.velocity = vec3(0.0f, -1.0f, 0.0f);
    auto cpu = make_mpm_solver_cpu(p);
    auto gpu = gpu::make_mpm_solver_cuda(p);
    for (auto* s : {cpu.get(), gpu.get()}) {
      s->set_colliders({ball});
      s->load(start, MpmMaterial::Water);
    }
    const float dt = 2e-4f;
    for (int k = 0; k < 8; ++k) {
      const MpmStepStats a = cpu->step(dt, k * dt);
      const MpmStepStats b = gpu->step(dt, k * dt);
      EXPECT_EQ(a.grid_blocks, b.grid_blocks) << "substep " << k;
      EXPECT_NEAR(a.max_speed, b.max_speed, 1e-3f * (1 + a.max_speed)) << "substep " << k;
    }
    const test::StoredPair both = test::store_both(*cpu, *gpu, true);
    const float worst_x = both.max_difference("P");
    float worst_F = 0;
    for (const char* f : {"F0", "F1", "F2"}) worst_F = std::max(worst_F, both.max_difference(f));
    // Float contraction and the device's math library differ from the host's.
    EXPECT_LT(worst_x, 1e-5f) << "transfer " << int(tr);
    EXPECT_LT(worst_F, 1e-4f) << "transfer " << int(tr);
  }
}

}  // namespace
}  // namespace eddy
