// PBF benchmark on the reference dam break.
//
// Scene: a cube of water of 39^3 = 59,319 particles (r = 0.0125 m, spacing
// 2r, so 0.975 m on a side, SPlisHSPlasH's count) in a 4 x 3 x 1.5 m box,
// gravity 9.81, fixed dt = 1 ms, iterating until the mean density error is
// under 1 % (min 2, max 100 iterations, as SPlisHSPlasH).
//
// Reports ms per step and its phases, neighbour pairs per second per core,
// and each phase's compulsory memory traffic against the triad bandwidth
// measured in the same run. The figures for SPlisHSPlasH 2.16 printed here
// were measured on another day (../shared/reference/solver-facts.md of the
// planning notes); on these shared machines only a ratio measured in one
// run means anything: bench/peers/side_by_side.sh runs Eddy and the peer
// alternately (make bench does when the peer is built).
//
// Also: throughput (particle-iterations per second) at 1M particles, and
// peak memory per particle.
//
// Usage: eddy_bench_pbf [--steps N] [--warmup N] [--threads N] [--skip-1m] [--line] [--peer-scene]
//                       [--no-simd]
// (--peer-scene: no XSPH, as the side-by-side peer's scene.)
#include <tbb/info.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "eddy/core/pbf/pbf.h"
#include "bench_scene.h"

using namespace eddy;
using namespace eddy::bench;

namespace {

// SPlisHSPlasH 2.16, measured on another day on this kind of machine.
constexpr double kRefStepMs = 282.5, kRefSearchMs = 61.9, kRefIterations = 3.26;

struct Run {
  double ms_per_step = 0, iterations = 0, mean_error = 0, bytes = 0, pairs = 0;
  PbfStageTimes t;
  std::size_t n = 0;
};

Run run(int n, float r, Vec3f tank, int steps, int warmup, int threads, bool peer_scene) {
  PbfParams p;
  if (peer_scene) p.xsph = 0.0f;
  p.min_iterations = 2;
  p.max_iterations = 100;
  p.max_density_error = 1.0f;
  auto s = make_pbf_solver_cpu(p, threads);
  s->load(cube(n, r, vec3(0)));
  s->set_colliders({box(tank)});
  const float dt = 1e-3f;
  Run out;
  out.n = s->size();
  const double secs = timed_steps(*s, dt, steps, warmup, [&](const PbfStepStats& st, const PbfStageTimes& tt) {
    add_mean(out.t, tt, steps);
    out.iterations += double(st.iterations) / steps;
    out.mean_error += st.mean_density_error / steps;
    out.pairs += double(st.neighbor_pairs) / steps;
  });
  out.ms_per_step = 1e3 * secs / steps;
  out.bytes = double(s->memory_bytes());
  return out;
}

// The compulsory traffic of each phase (bytes each array must move once;
// the neighbours' positions, read in Z-order, are counted as cached):
//   predict   x, v read, v, x* written, the clearances lowered         56 B
//   solve     per iteration a density pass (list 4 B a pair, each pair's
//             W and g written, 8 B; offsets, x* read, density, lambda,
//             error, wall part written: 40 B; x* padded first, x* read and
//             the padded copy written, then read: 44 B), a correction pass
//             (list and the pairs' W and g, 12 B a pair; offsets, padded
//             x* with lambda, wall part read, dp written: 44 B; the padding,
//             x*, lambda read and written padded: 32 B), the move and the
//             collision projection (x*, dp read, x* written, the clearances
//             lowered, then read: 48 B; only the particles near a wall read
//             and write x* again); and the final density pass, which
//             here only measures (list and W written, 8 B a pair; offsets,
//             x*, density and error, the padding: 68 B)
//   velocity  velocity update (x, x*, v, the clearances read, v written:
//             52 B), XSPH (a list pass with the pairs' W and g, 12 B a
//             pair: x*, v, density read, v, omega written: 52 B, and its
//             offsets),
//             vorticity confinement when on (another, with g, 8 B a pair:
//             x*, omega, density, v read, v written: 52 B), commit (x, v
//             read: 24 B)
struct Traffic {
  double predict, neighbors, solve, velocity;
};
Traffic traffic(const Run& a, bool vorticity) {
  const double n = double(a.n), P = a.pairs, it = a.iterations;
  const double arrays = 56 * n;  // offsets and 52 B of arrays
  return {56 * n, neighbor_bytes(n, P), it * (12 * P + 84 * n) + (8 * P + 68 * n) + it * (12 * P + 76 * n + 48 * n),
          52 * n + 12 * P + arrays + (vorticity ? 8 * P + arrays : 0.0) + 24 * n};
}

}  // namespace

int main(int argc, char** argv) {
  Options o{.steps = 300, .warmup = 200};
  if (!parse_options(argc, argv, o, false, true)) return 2;
  if (o.only && std::strcmp(o.only, "pbf") != 0) {
    std::fprintf(stderr, "--only: this benchmark runs pbf only, got '%s'\n", o.only);
    return 2;
  }
  const int steps = o.steps, warmup = o.warmup, threads = o.threads;
  const int cores = threads > 0 ? threads : tbb::info::default_concurrency();
  const double rss0 = peak_rss_bytes();
  if (o.line) {
    const Run a = run(39, 0.0125f, vec3(4, 3, 1.5f), steps, warmup, threads, o.peer_scene);
    std::printf("peer=eddy method=pbf particles=%zu ms_per_step=%.2f search_ms=%.2f iterations=%.2f steps=%d\n", a.n,
                a.ms_per_step, 1e3 * a.t.neighbors, a.iterations, steps);
    return 0;
  }
  std::printf("PBF dam break, 39^3 = 59,319 particles, r = 0.0125 m, 4 x 3 x 1.5 m box, dt = 1 ms, "
              "mean density error < 1 %% (%d steps after %d warm-up steps, %d cores)\n", steps, warmup, cores);
  const Run a = run(39, 0.0125f, vec3(4, 3, 1.5f), steps, warmup, threads, o.peer_scene);
  std::printf("  %-28s %10s %24s\n", "", "Eddy", "SPlisHSPlasH (another day)");
  std::printf("  %-28s %10.1f %24.1f   (%.2fx, not a same-run ratio)\n", "ms per step", a.ms_per_step, kRefStepMs,
              kRefStepMs / a.ms_per_step);
  std::printf("  %-28s %10.2f %24.2f\n", "iterations per step", a.iterations, kRefIterations);
  std::printf("  %-28s %10.3f %24s\n", "mean density error (%)", a.mean_error, "< 1");
  std::printf("  %-28s %10.2f %24.1f\n", "neighbour search ms", 1e3 * a.t.neighbors, kRefSearchMs);
  std::printf("  %.1f neighbours per particle; pressure solve %.3g neighbour pairs per second per core "
              "(%.0f list passes)\n", a.pairs / a.n,
              (2 * a.iterations + 1) * a.pairs / a.t.solve / cores, 2 * a.iterations + 1);
  std::printf("  particle-iterations per second: %.3g\n", a.n * a.iterations / (a.ms_per_step * 1e-3));
  std::printf("  solver memory: %.0f bytes per particle\n", a.bytes / a.n);
  if (o.big) {
    std::printf("\n1M particles (100^3 block, r = 0.01 m, in a 4 x 3 x 2 m box), 10 steps after 3 warm-up\n");
    const Run b = run(100, 0.01f, vec3(4, 3, 2), 10, 3, threads, o.peer_scene);
    std::printf("  ms per step %.1f, iterations %.2f, neighbour search %.1f ms, pressure solve %.1f ms\n",
                b.ms_per_step, b.iterations, 1e3 * b.t.neighbors, 1e3 * b.t.solve);
    std::printf("  particle-iterations per second: %.3g\n", b.n * b.iterations / (b.ms_per_step * 1e-3));
    std::printf("  solver memory: %.0f bytes per particle; process peak RSS %.0f bytes per particle\n",
                b.bytes / b.n, (peak_rss_bytes() - rss0) / b.n);
  }
  // (After the 1M run: the bandwidth test's arrays would count in its peak memory.)
  const double bw = measure_bandwidth(threads);
  const Traffic tr = traffic(a, PbfParams{}.vorticity > 0.0f);
  std::printf("\nphases of the 59,319-particle run against the bandwidth measured in this run (triad %.1f GB/s):\n", bw / 1e9);
  print_traffic("predict", a.t.predict, tr.predict, bw);
  print_traffic("neighbour search", a.t.neighbors, tr.neighbors, bw);
  print_traffic("pressure solve", a.t.solve, tr.solve, bw);
  print_traffic(PbfParams{}.vorticity > 0.0f ? "velocity, XSPH, vorticity" : "velocity, XSPH", a.t.velocity,
                tr.velocity, bw);
  return 0;
}
