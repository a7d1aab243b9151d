// MPM benchmark: particle-substeps per second at 100k and 1M particles
// (water and jelly), the time split by phase, memory per particle, and the
// memory traffic of one substep against this machine's bandwidth measured
// in the same run, so the figure reads as a share of the bandwidth limit.
//
// Scene: a cube of particles (r = 5 mm, 8 per cell, dx = 2 cm) falling in a
// domain box onto its floor; fixed substeps of the length the solver
// suggests at the start (the elastic wave speed sets it), so both materials
// and both sizes run the same number of substeps of the same length. For
// scale: a dense-grid CUDA MLS-MPM reference runs 1M particles at about
// 14 ms per substep on an RTX 3080 (../shared/reference of the planning
// notes).
//
// Usage: eddy_bench_mpm [--steps N] [--warmup N] [--threads N] [--skip-1m]
#include <tbb/info.h>
#include <tbb/parallel_for.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "bench_scene.h"
#include "eddy/core/mpm/mpm.h"

using namespace eddy;
using namespace eddy::bench;
using Clock = std::chrono::steady_clock;

namespace {

struct Run {
  std::size_t n = 0;
  double ms = 0;  // per substep
  MpmStageTimes t;
  double nodes = 0;  // active grid nodes (blocks x 64), mean over the timed substeps
  double solver_bytes = 0;
};

Run run(MpmMaterial material, int side, int steps, int warmup, int threads) {
  const float r = 0.005f;
  MpmParams p;
  p.domain_min = vec3(0.0f);
  p.domain_max = vec3(4.0f * side * r, 4.0f * side * r, 4.0f * side * r);
  auto s = make_mpm_solver_cpu(p, threads);
  s->load(cube(side, r, vec3(side * r, 0.5f * side * r, side * r)), material);
  const float dt = s->suggest_dt();
  Run out;
  out.n = s->size();
  const double secs = timed_steps(*s, dt, steps, warmup, [&](const MpmStepStats& st, const MpmStageTimes& tt) {
    add_mean(out.t, tt, steps);
    out.nodes += double(st.grid_blocks) * 64.0 / steps;
  });
  out.ms = 1e3 * secs / steps;
  out.solver_bytes = double(s->memory_bytes());
  return out;
}

// The compulsory memory traffic of one substep: every array read and
// written once per pass that touches it (caches absorb the 27-fold reuse
// inside P2G and G2P). Per particle: stress pass F, C, J_p, material in
// (80 B) and A out (36 B); binning x twice, keys and order (8 + 4 B) through
// three radix passes read and written, flags and block ids (about 180 B);
// P2G order, x, v, A, material (68 B); G2P x, F, J_p, material, block id
// in, x, v, C, F, J_p out (164 B). Per grid node: P2G writes mass and
// momentum (16 B), the grid pass reads 16 and writes 12, G2P reads 12.
double traffic_bytes(const Run& r) { return double(r.n) * (116 + 180 + 68 + 164) + r.nodes * (16 + 28 + 12); }

void report(const char* name, const Run& r, int threads, double bandwidth) {
  const double per_s = double(r.n) / (r.ms * 1e-3);
  const double traffic = traffic_bytes(r);
  const double achieved = traffic / (r.ms * 1e-3);
  std::printf("%-6s %8zu particles  %7.2f ms/substep  %6.2e particle-substeps/s (%5.2e per core)\n", name, r.n, r.ms,
              per_s, per_s / threads);
  std::printf("        phases: binning %.2f  stress %.2f  P2G %.2f  grid %.2f  G2P %.2f ms;  %.0f grid nodes (%.2f per particle)\n",
              r.t.sort * 1e3, r.t.stress * 1e3, r.t.p2g * 1e3, r.t.grid * 1e3, r.t.g2p * 1e3, r.nodes, r.nodes / r.n);
  std::printf("        traffic %.0f B/particle/substep = %.1f GB/s, %.0f %% of the measured %.1f GB/s; solver %.0f B/particle\n",
              traffic / r.n, achieved / 1e9, 100.0 * achieved / bandwidth, bandwidth / 1e9, r.solver_bytes / r.n);
}

}  // namespace

int main(int argc, char** argv) {
  Options o{.steps = 20, .warmup = 3};
  if (!parse_options(argc, argv, o)) return 2;
  const int steps = o.steps, warmup = o.warmup, threads = o.threads;
  const int cores = threads > 0 ? threads : tbb::info::default_concurrency();
  std::printf("MPM benchmark: %d threads, %d substeps after %d warm-up\n", cores, steps, warmup);
  struct Case {
    const char* name;
    Run run;
  };
  std::vector<Case> cases;
  cases.push_back({"water", run(MpmMaterial::Water, 47, steps, warmup, threads)});  // 103,823 particles
  cases.push_back({"jelly", run(MpmMaterial::Jelly, 47, steps, warmup, threads)});
  double peak = 0;
  if (o.big) {
    cases.push_back({"water", run(MpmMaterial::Water, 100, std::max(3, steps / 4), 1, threads)});
    cases.push_back({"jelly", run(MpmMaterial::Jelly, 100, std::max(3, steps / 4), 1, threads)});
    peak = peak_rss_bytes();  // before the bandwidth test's arrays
  }
  const double bw = measure_bandwidth(threads);
  std::printf("measured bandwidth (triad, same run): %.1f GB/s\n\n", bw / 1e9);
  for (const Case& c : cases) report(c.name, c.run, cores, bw);
  if (peak > 0) std::printf("\npeak memory at 1M particles: %.0f B/particle (process peak RSS)\n", peak / 1e6);
  std::printf("\nfor scale: a dense-grid CUDA MLS-MPM reference, 1M particles, about 14 ms per substep on an RTX 3080\n");
  return 0;
}
