// SPH benchmark on the reference dam break, beside the figures measured for
// SPlisHSPlasH 2.16 on this kind of machine (2 cores) on another day, see
// ../shared/reference/solver-facts.md of the project's planning notes:
//   WCSPH 108.5 ms per step (stiffness 5e4 Pa, exponent 7, dt 0.5 ms),
//   DFSPH 126 ms per step (dt 1 ms, density error 0.05 %, divergence 0.1 %).
// Only a ratio measured in one run means anything on these shared
// machines: bench/peers/side_by_side.sh runs Eddy and the peer alternately
// (make bench does when the peer is built).
// Scene: a cube of water of 39^3 = 59,319 particles (r = 0.0125 m) in a
// 4 x 3 x 1.5 m box with boundary particles, gravity 9.81, fixed time steps.
// The same stiffness: B = 5e4 Pa is c0 = sqrt(7 B / rho0) = 18.7 m/s.
//
// Also: neighbour pairs per second per core in the WCSPH density pass (one
// published CPU figure: about 3.6e7), the time split by phase, each phase's
// compulsory memory traffic against the triad bandwidth measured in the
// same run, and memory per particle at 1M particles.
//
// These machines are shared: a run's speed varies by 10-15 % from one run to
// the next, so each method runs --repeat times (3) from the same start and
// the median run is reported, with the spread.
//
// Usage: eddy_bench_sph [--steps N] [--warmup N] [--threads N] [--repeat N] [--skip-1m]
//                       [--line] [--only wcsph|dfsph] [--peer-scene] [--no-simd]
// (--peer-scene: no viscosity, as the side-by-side peer's scene.)
#include <tbb/info.h>

#include <algorithm>
#include <cstring>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bench_scene.h"
#include "eddy/core/sph/sph.h"

using namespace eddy;
using namespace eddy::bench;

namespace {

struct Run {
  double ms_per_step = 0, iterations = 0, div_iterations = 0, mean_error = 0, max_error = 0, bytes = 0;
  double pairs = 0, boundary_pairs = 0;
  SphStageTimes t;
  std::size_t n = 0, nb = 0;
  bool viscous = true;
};

Run run(SphMethod method, int n, float r, Vec3f tank, float dt, int steps, int warmup, int threads,
        bool peer_scene) {
  SphParams p;
  p.method = method;
  p.speed_of_sound = 18.7f;  // B = 5e4 Pa
  p.viscosity = peer_scene ? 0.0f : 0.001f;
  auto s = make_sph_solver_cpu(p, threads);
  s->set_colliders({box(tank)});
  s->load(cube(n, r, vec3(0)));
  Run out;
  out.viscous = p.viscosity > 0.0f;
  out.n = s->size();
  out.nb = s->boundary_size();
  const double secs = timed_steps(*s, dt, steps, warmup, [&](const SphStepStats& st, const SphStageTimes& tt) {
    add_mean(out.t, tt, steps);
    out.iterations += double(st.iterations) / steps;
    out.div_iterations += double(st.divergence_iterations) / steps;
    out.mean_error += st.mean_density_error / steps;
    out.max_error = std::max(out.max_error, double(st.mean_density_error));
    out.pairs += double(st.neighbor_pairs) / steps;
    out.boundary_pairs += double(st.boundary_pairs) / steps;
  });
  out.ms_per_step = 1e3 * secs / steps;
  out.bytes = double(s->memory_bytes());
  return out;
}

// The median of `repeat` runs (by time per step); lo / hi the fastest and slowest.
Run median_run(int repeat, double& lo, double& hi, const std::function<Run()>& once) {
  std::vector<Run> runs;
  for (int k = 0; k < std::max(1, repeat); ++k) runs.push_back(once());
  std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.ms_per_step < b.ms_per_step; });
  lo = runs.front().ms_per_step;
  hi = runs.back().ms_per_step;
  return runs[runs.size() / 2];
}

void print(const char* name, const Run& a, double lo, double hi, double ref_ms, int cores) {
  std::printf("  %-34s %10.1f %14.1f   (%.2fx, not a same-run ratio; runs %.1f-%.1f ms)\n",
              (std::string(name) + " ms per step").c_str(), a.ms_per_step, ref_ms, ref_ms / a.ms_per_step, lo, hi);
  std::printf("    phases (ms): neighbours %.1f, density %.1f, forces %.1f, divergence %.1f, pressure %.1f, "
              "integrate %.1f\n",
              1e3 * a.t.neighbors, 1e3 * a.t.density, 1e3 * a.t.forces, 1e3 * a.t.divergence, 1e3 * a.t.pressure,
              1e3 * a.t.integrate);
  std::printf("    %zu particles, %zu boundary particles, %.1f fluid and %.1f boundary neighbours per particle\n", a.n,
              a.nb, a.pairs / a.n, a.boundary_pairs / a.n);
  if (a.iterations > 0)
    std::printf("    %.2f pressure / %.2f divergence iterations, mean density error %.4f %% (worst step %.4f %%)\n",
                a.iterations, a.div_iterations, a.mean_error, a.max_error);
  // The density pass visits every fluid and boundary pair once (DFSPH's
  // also computes the factor and stores each pair's gradient scale).
  const double per_core = (a.pairs + a.boundary_pairs) / a.t.density / cores;
  std::printf("    %s pass: %.3g neighbour pairs per second per core (published CPU WCSPH figure: 3.6e7)\n",
              a.iterations > 0 ? "density + factor" : "density", per_core);
}

// The compulsory traffic of each phase (bytes each array must move once;
// the neighbours' own values, read in Z-order, are counted as cached), for
// n particles, P fluid and Pb boundary pairs (list entries of 4 B):
//   neighbours  the grid and fluid lists (neighbor_bytes), the boundary
//               lists (positions read, counts, offsets: 20 B)
//   density     lists; offsets, x, density, pressure, error (32 B); DFSPH
//               also writes each pair's gradient scale (4 B a pair), the factor,
//               walls' sums (20 B), the divergence solver's warm start (v,
//               kappa_v: 32 B) and the density solver's (kappa read and
//               halved, the velocity change written: 20 B)
//   forces      fluid list (unless DFSPH runs without viscosity: then no
//               pair terms); offsets, x, v, density, pressure read, a
//               written (48 B); boundary list (WCSPH's pressure)
//   solves      DFSPH, per Jacobi iteration: the stiffness (residual and
//               factor read, total read and written, written into the
//               padded positions' w: 48 B), applying it (list and gradient
//               scales, padded positions, walls' sum, v read and written,
//               padded v written: 8 B a pair, 68 B), the residual (8 B a
//               pair; padded x and v, walls' sums, density, residual: 56 B);
//               first the padding (x, v read, padded written: 56 B) and the
//               first residual
//   integrate   x, v read and written, the clearances lowered and read by
//               the projection (56 B; only the particles near a collider
//               meet it)
struct Traffic {
  double neighbors, density, forces, divergence, pressure, integrate;
};
Traffic traffic(const Run& a, bool dfsph) {
  const double n = double(a.n), P = a.pairs, Pb = a.boundary_pairs;
  const auto solve = [&](double it) { return it * (48 * n + 16 * P + 124 * n) + 56 * n + 8 * P + 56 * n; };
  Traffic t{};
  t.neighbors = neighbor_bytes(n, P) + 4 * Pb + 20 * n;
  t.density = 4 * P + 4 * Pb + 32 * n + (dfsph ? 4 * P + 72 * n : 0.0);
  t.forces = (dfsph && !a.viscous ? 0.0 : 4 * P) + 48 * n + (dfsph ? 0.0 : 4 * Pb);
  t.divergence = dfsph ? solve(a.div_iterations) : 0.0;
  t.pressure = dfsph ? solve(a.iterations) : 0.0;
  t.integrate = 56 * n;
  return t;
}

void print_phases(const char* name, const Run& a, bool dfsph, double bw) {
  const Traffic t = traffic(a, dfsph);
  std::printf("  %s:\n", name);
  print_traffic("neighbour search", a.t.neighbors, t.neighbors, bw);
  print_traffic("density", a.t.density, t.density, bw);
  print_traffic("forces", a.t.forces, t.forces, bw);
  if (dfsph) {
    print_traffic("divergence solve", a.t.divergence, t.divergence, bw);
    print_traffic("density solve", a.t.pressure, t.pressure, bw);
  }
  print_traffic("integrate", a.t.integrate, t.integrate, bw);
}

}  // namespace

int main(int argc, char** argv) {
  Options o{.steps = 100, .warmup = 100, .repeat = 3};
  if (!parse_options(argc, argv, o, true, true)) return 2;
  const int steps = o.steps, warmup = o.warmup, threads = o.threads, repeat = o.repeat;
  const int cores = threads > 0 ? threads : tbb::info::default_concurrency();
  const double rss0 = peak_rss_bytes();
  const auto wcsph = [&] { return run(SphMethod::Wcsph, 39, 0.0125f, vec3(4, 3, 1.5f), 5e-4f, steps, warmup, threads, o.peer_scene); };
  // (DFSPH's 1 ms steps cover the warm-up's time in half the steps; one
  // line for the side-by-side script takes the warm-up as given, as the
  // peer does.)
  const int dfsph_warmup = o.line ? warmup : warmup / 2;
  const auto dfsph = [&] {
    return run(SphMethod::Dfsph, 39, 0.0125f, vec3(4, 3, 1.5f), 1e-3f, steps, dfsph_warmup, threads, o.peer_scene);
  };
  const bool want_w = !o.only || !std::strcmp(o.only, "wcsph"), want_d = !o.only || !std::strcmp(o.only, "dfsph");
  if (!want_w && !want_d) {
    std::fprintf(stderr, "--only: expected wcsph or dfsph, got '%s'\n", o.only);
    return 2;
  }
  if (o.line) {  // one run each, one line each (bench/peers/side_by_side.sh)
    for (int k = 0; k < 2; ++k) {
      if (!(k == 0 ? want_w : want_d)) continue;
      const Run a = k == 0 ? wcsph() : dfsph();
      std::printf("peer=eddy method=%s particles=%zu ms_per_step=%.2f search_ms=%.2f iterations=%.2f steps=%d\n",
                  k == 0 ? "wcsph" : "dfsph", a.n, a.ms_per_step, 1e3 * a.t.neighbors, a.iterations, steps);
    }
    return 0;
  }
  std::printf("SPH dam break, 39^3 = 59,319 particles, r = 0.0125 m, 4 x 3 x 1.5 m box, boundary particles, "
              "%d cores (%d steps after %d warm-up steps)\n", cores, steps, warmup);
  std::printf("  %-34s %10s %14s\n", "", "Eddy", "SPlisHSPlasH (another day)");
  double lo = 0, hi = 0;
  Run w, d;
  if (want_w) {
    w = median_run(repeat, lo, hi, wcsph);
    print("WCSPH (dt 0.5 ms, B 5e4 Pa)", w, lo, hi, 108.5, cores);
  }
  if (want_d) {
    d = median_run(repeat, lo, hi, dfsph);
    print("DFSPH (dt 1 ms, 0.05 % / 0.1 %)", d, lo, hi, 126.0, cores);
  }
  if (want_w && want_d)
    std::printf("  solver memory: %.0f bytes per particle (WCSPH), %.0f (DFSPH)\n", w.bytes / w.n, d.bytes / d.n);
  if (o.big && !o.only) {
    std::printf("\n1M particles (100^3 block, r = 0.01 m, in a 4 x 3 x 2 m box), DFSPH, 5 steps after 2 warm-up\n");
    const Run b = run(SphMethod::Dfsph, 100, 0.01f, vec3(4, 3, 2), 1e-3f, 5, 2, threads, o.peer_scene);
    std::printf("  ms per step %.1f, %.2f pressure / %.2f divergence iterations\n", b.ms_per_step, b.iterations,
                b.div_iterations);
    std::printf("  solver memory: %.0f bytes per particle (with %zu boundary particles); process peak RSS %.0f bytes "
                "per particle\n",
                b.bytes / b.n, b.nb, (peak_rss_bytes() - rss0) / b.n);
  }
  // (After the 1M run: the bandwidth test's arrays would count in its peak memory.)
  const double bw = measure_bandwidth(threads);
  std::printf("\nphases of the 59,319-particle runs against the bandwidth measured in this run (triad %.1f GB/s):\n",
              bw / 1e9);
  if (want_w) print_phases("WCSPH", w, false, bw);
  if (want_d) print_phases("DFSPH", d, true, bw);
  return 0;
}
