// The CUDA backend's Projective Dynamics iterations (core/pd/iteration.h on
// the CUDA executor) against the CPU's: a cloth attached to a sliding bar
// falls onto a box, a jelly cube onto the floor, by Chebyshev. Skipped where
// no device is present (gpu_pbf_test.cpp checks the factory's refusal).
#include <gtest/gtest.h>

#include <algorithm>

#include "eddy/core/pd/pd.h"
#include "eddy/gpu/gpu.h"
#include "../unit/core/pd_scenes.h"

namespace eddy {
namespace {

TEST(GpuPd, IterationsMatchTheCpu) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device (" << gpu::device_description() << ")";
  const test::SlidingBarDrape scene = test::sliding_bar_drape(24);
  Collider inside;
  inside.type = ShapeType::Box;
  inside.center = vec3(0.6f, 0.11f, 0.0f);
  inside.size = vec3(0.1f);
  const SoftBodies jelly = make_soft_body(box_mesh(inside.center, inside.size), inside, 0.05, SoftMaterial{}, "jelly");
  std::vector<SoftBodies> out;
  for (bool device : {false, true}) {
    PdParams p;
    p.time_step = 0.005f;
    p.method = PdMethod::Chebyshev;
    const SoftBodies* objects[] = {&scene.cloth, &jelly};
    for (const SoftBodies* s : objects) {
      PdSolver solver(p, 2);
      if (device) solver.set_device_iterations(gpu::make_pd_iterations_cuda());
      solver.load(*s);
      solver.set_colliders({scene.box, Collider{}});
      solver.set_attach_colliders({scene.bar});
      for (int k = 0; k < 60; ++k) solver.step(0.005f, float(k) * 0.005f);
      EXPECT_GT(solver.system().contacts().size(), 4u);
      out.push_back(solver.state());
    }
  }
  for (int o = 0; o < 2; ++o) {
    double worst = 0;
    for (std::size_t i = 0; i < out[std::size_t(o)].size(); ++i)
      worst = std::max(worst, (out[std::size_t(o)].x[i] - out[std::size_t(o) + 2].x[i]).norm());
    // The device contracts multiply-adds, so the two differ from the first
    // operation at round-off (1e-16 relative); 600 iterations of a
    // contractive map keep that far below 1 um, three orders under the
    // contact margin (2 mm), where a contact decided differently would show.
    EXPECT_LT(worst, 1e-6) << "object " << o;
  }
}

}  // namespace
}  // namespace eddy
