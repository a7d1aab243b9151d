// PBF benchmark on the reference dam break, against the figures measured
// for SPlisHSPlasH 2.16 on this kind of machine (2 cores), see
// ../shared/reference/solver-facts.md of the project's planning notes:
//   282.5 ms per step (1 % error, 3.26 iterations), 61.9 ms neighbour search.
// Scene: a cube of water of 39^3 = 59,319 particles (r = 0.0125 m, spacing
// 2r, so 0.975 m on a side, SPlisHSPlasH's count) in a 4 x 3 x 1.5 m box,
// gravity 9.81, fixed dt = 1 ms, iterating until the mean density error is
// under 1 % (min 2, max 100 iterations, as SPlisHSPlasH).
//
// Also: throughput (particle-iterations per second) at 1M particles, and
// peak memory per particle.
//
// Usage: eddy_bench_pbf [--steps N] [--warmup N] [--threads N] [--skip-1m]
#include <cstdio>
#include <string>

#include "eddy/core/pbf/pbf.h"
#include "bench_scene.h"

using namespace eddy;
using namespace eddy::bench;

namespace {

constexpr double kRefStepMs = 282.5, kRefSearchMs = 61.9, kRefIterations = 3.26;

struct Run {
  double ms_per_step = 0, search_ms = 0, solve_ms = 0, iterations = 0, mean_error = 0, bytes = 0;
  std::size_t n = 0;
};

Run run(int n, float r, Vec3f tank, int steps, int warmup, int threads) {
  PbfParams p;
  p.min_iterations = 2;
  p.max_iterations = 100;
  p.max_density_error = 1.0f;
  auto s = make_pbf_solver_cpu(p, threads);
  s->load(cube(n, r, vec3(0)));
  s->set_colliders({box(tank)});
  const float dt = 1e-3f;
  Run out;
  out.n = s->size();
  double search = 0, solve = 0, iters = 0, err = 0;
  const double secs = timed_steps(*s, dt, steps, warmup, [&](const PbfStepStats& st, const PbfStageTimes& tt) {
    search += tt.neighbors;
    solve += tt.solve;
    iters += st.iterations;
    err += st.mean_density_error;
  });
  out.ms_per_step = 1e3 * secs / steps;
  out.search_ms = 1e3 * search / steps;
  out.solve_ms = 1e3 * solve / steps;
  out.iterations = iters / steps;
  out.mean_error = err / steps;
  out.bytes = double(s->memory_bytes());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Options o{.steps = 300, .warmup = 200};
  if (!parse_options(argc, argv, o)) return 2;
  const int steps = o.steps, warmup = o.warmup, threads = o.threads;
  const double rss0 = peak_rss_bytes();
  std::printf("PBF dam break, 39^3 = 59,319 particles, r = 0.0125 m, 4 x 3 x 1.5 m box, dt = 1 ms, "
              "mean density error < 1 %% (%d steps after %d warm-up steps)\n", steps, warmup);
  const Run a = run(39, 0.0125f, vec3(4, 3, 1.5f), steps, warmup, threads);
  std::printf("  %-28s %10s %14s\n", "", "Eddy", "SPlisHSPlasH");
  std::printf("  %-28s %10.1f %14.1f   -> %.2fx faster\n", "ms per step", a.ms_per_step, kRefStepMs,
              kRefStepMs / a.ms_per_step);
  std::printf("  %-28s %10.2f %14.2f\n", "iterations per step", a.iterations, kRefIterations);
  std::printf("  %-28s %10.3f %14s\n", "mean density error (%)", a.mean_error, "< 1");
  std::printf("  %-28s %10.2f %14.1f   -> %.2fx faster\n", "neighbour search ms", a.search_ms, kRefSearchMs,
              kRefSearchMs / a.search_ms);
  std::printf("  %-28s %10.2f\n", "pressure solve ms", a.solve_ms);
  std::printf("  particle-iterations per second: %.3g\n", a.n * a.iterations / (a.ms_per_step * 1e-3));
  std::printf("  solver memory: %.0f bytes per particle\n", a.bytes / a.n);
  if (o.big) {
    std::printf("\n1M particles (100^3 block, r = 0.01 m, in a 4 x 3 x 2 m box), 10 steps after 3 warm-up\n");
    const Run b = run(100, 0.01f, vec3(4, 3, 2), 10, 3, threads);
    std::printf("  ms per step %.1f, iterations %.2f, neighbour search %.1f ms, pressure solve %.1f ms\n",
                b.ms_per_step, b.iterations, b.search_ms, b.solve_ms);
    std::printf("  particle-iterations per second: %.3g\n", b.n * b.iterations / (b.ms_per_step * 1e-3));
    std::printf("  solver memory: %.0f bytes per particle; process peak RSS %.0f bytes per particle\n",
                b.bytes / b.n, (peak_rss_bytes() - rss0) / b.n);
  }
  return 0;
}
