// The CUDA backend against the CPU backend (TBB, every core), side by side
// in one run, on the solver benchmarks' scenes: the PBF and DFSPH dam breaks
// (a cube of water on a lattice of spacing 2r in a box) and the MPM water
// cube dropped in its domain, at about 60k / 100k and 1M particles. Both
// backends start from the same particles and take the same steps, so each
// ratio compares the same work. A step's wall-clock time includes its
// statistics' read-back (the step returns them), so device work is finished
// when the clock stops.
//
// Prints "no CUDA device" and exits 0 where there is none, so `make bench`
// runs anywhere.
//
// Usage: eddy_bench_gpu [--steps N] [--warmup N] [--threads N] [--skip-1m]
#include <tbb/info.h>

#include <cstdio>
#include <memory>

#include "bench_scene.h"
#include "eddy/core/mpm/mpm.h"
#include "eddy/core/pbf/pbf.h"
#include "eddy/core/sph/sph.h"
#include "eddy/gpu/gpu.h"

using namespace eddy;
using namespace eddy::bench;

namespace {

struct Side {
  double ms = 0;     // per step
  double bytes = 0;  // the solver's own arrays
  std::size_t n = 0;
};

template <class Solver>
Side time_solver(Solver& s, float dt, int steps, int warmup) {
  Side out;
  out.n = s.size();
  out.ms = 1e3 * timed_steps(s, dt, steps, warmup, [](const auto&, const auto&) {}) / steps;
  out.bytes = double(s.memory_bytes());
  return out;
}

void row(const char* name, const Side& cpu, const Side& gpu) {
  std::printf("  %-24s %9zu %11.2f %11.3f %9.1fx %12.3g %9.0f %9.0f\n", name, cpu.n, cpu.ms, gpu.ms, cpu.ms / gpu.ms,
              double(gpu.n) / (gpu.ms * 1e-3), cpu.bytes / cpu.n, gpu.bytes / gpu.n);
}

// `setup(solver)` loads the same scene into each backend's solver.
template <class MakeCpu, class MakeGpu, class Setup>
void compare(const char* name, MakeCpu&& make_cpu, MakeGpu&& make_gpu, Setup&& setup, float dt, int steps,
             int warmup) {
  auto c = make_cpu();
  setup(*c);
  const Side a = time_solver(*c, dt, steps, warmup);
  c.reset();
  auto g = make_gpu();
  setup(*g);
  const Side b = time_solver(*g, dt, steps, warmup);
  row(name, a, b);
}

PbfParams pbf_params() {
  PbfParams p;
  p.min_iterations = 2;
  p.max_iterations = 100;
  p.max_density_error = 1.0f;
  return p;
}

SphParams dfsph_params() {
  SphParams p;
  p.method = SphMethod::Dfsph;
  p.speed_of_sound = 18.7f;
  p.viscosity = 0.001f;
  return p;
}

void pbf(int n, float r, Vec3f tank, int steps, int warmup, int threads) {
  compare(n == 39 ? "PBF dam break" : "PBF dam break 1M", [&] { return make_pbf_solver_cpu(pbf_params(), threads); },
          [] { return gpu::make_pbf_solver_cuda(pbf_params()); },
          [&](PbfSolver& s) {
            s.load(cube(n, r, vec3(0)));
            s.set_colliders({box(tank)});
          },
          1e-3f, steps, warmup);
}

void dfsph(int n, float r, Vec3f tank, int steps, int warmup, int threads) {
  compare(n == 39 ? "DFSPH dam break" : "DFSPH dam break 1M",
          [&] { return make_sph_solver_cpu(dfsph_params(), threads); },
          [] { return gpu::make_sph_solver_cuda(dfsph_params()); },
          [&](SphSolver& s) {
            s.set_colliders({box(tank)});
            s.load(cube(n, r, vec3(0)));
          },
          1e-3f, steps, warmup);
}

void mpm(int side, int steps, int warmup, int threads) {
  const float r = 0.005f;
  MpmParams p;
  p.domain_min = vec3(0.0f);
  p.domain_max = vec3(4.0f * side * r);
  // The substep the CPU solver suggests for the loaded cube, for both.
  auto probe = make_mpm_solver_cpu(p, threads);
  const Points start = cube(side, r, vec3(side * r, 0.5f * side * r, side * r));
  probe->load(start, MpmMaterial::Water);
  const float dt = probe->suggest_dt();
  probe.reset();
  compare(side < 100 ? "MPM water cube" : "MPM water cube 1M", [&] { return make_mpm_solver_cpu(p, threads); },
          [&] { return gpu::make_mpm_solver_cuda(p); },
          [&](MpmSolver& s) { s.load(start, MpmMaterial::Water); }, dt, steps, warmup);
}

}  // namespace

int main(int argc, char** argv) {
  Options o{.steps = 100, .warmup = 20};
  if (!parse_options(argc, argv, o)) return 2;
  if (gpu::device_count() == 0) {
    std::printf("CUDA backend against the CPU: skipped, no CUDA device (%s)\n", gpu::device_description().c_str());
    return 0;
  }
  const int cores = o.threads > 0 ? o.threads : tbb::info::default_concurrency();
  std::printf("CUDA backend against the CPU backend (%d cores), same scene and steps on each: %s\n", cores,
              gpu::device_description().c_str());
  std::printf("  %-24s %9s %11s %11s %10s %12s %9s %9s\n", "scene", "particles", "CPU ms/step", "GPU ms/step",
              "speed-up", "GPU part/s", "CPU B/p", "GPU B/p");
  pbf(39, 0.0125f, vec3(4, 3, 1.5f), o.steps, o.warmup, o.threads);
  dfsph(39, 0.0125f, vec3(4, 3, 1.5f), o.steps, o.warmup, o.threads);
  mpm(47, o.steps, o.warmup, o.threads);  // 103,823 particles
  if (o.big) {
    // A tenth of the steps at 1M: the CPU side dominates the run time.
    const int steps = std::max(2, o.steps / 10), warmup = std::max(1, o.warmup / 10);
    pbf(100, 0.01f, vec3(4, 3, 2), steps, warmup, o.threads);
    dfsph(100, 0.01f, vec3(4, 3, 2), steps, warmup, o.threads);
    mpm(100, steps, warmup, o.threads);
  }
  return 0;
}
