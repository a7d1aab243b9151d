#pragma once
// What the solver benchmarks share: the reference dam break scene (a cube of
// particles on a lattice of spacing 2r in a container box), the process's
// peak memory, the command line and the timed stepping loop.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "eddy/core/collider.h"
#include "eddy/core/points.h"

namespace eddy::bench {

inline Points cube(int n, float r, Vec3f origin) {
  Points p(std::size_t(n) * n * n);
  p.radius = r;
  std::size_t i = 0;
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) p.P()[i++] = origin + vec3(r + 2 * r * x, r + 2 * r * y, r + 2 * r * z);
  return p;
}

inline Collider box(Vec3f size) {
  Collider c;
  c.type = ShapeType::Box;
  c.inside = 1;
  c.center = size * 0.5f;
  c.size = size * 0.5f;
  return c;
}

inline double peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) * 1024.0;
}

// The command line: --steps N, --warmup N, --threads N (0: all cores),
// --skip-1m and, where the benchmark repeats its runs, --repeat N.
struct Options {
  int steps = 0, warmup = 0, threads = 0, repeat = 1;
  bool big = true;  // also the 1M-particle run; off with --skip-1m
};

// Reads argv over the defaults in `o`; on an argument it does not know,
// prints the usage and returns false.
inline bool parse_options(int argc, char** argv, Options& o, bool with_repeat = false) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--steps") && i + 1 < argc) o.steps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--warmup") && i + 1 < argc) o.warmup = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) o.threads = std::atoi(argv[++i]);
    else if (with_repeat && !std::strcmp(argv[i], "--repeat") && i + 1 < argc) o.repeat = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--skip-1m")) o.big = false;
    else {
      std::fprintf(stderr, "usage: %s [--steps N] [--warmup N] [--threads N]%s [--skip-1m]\n", argv[0],
                   with_repeat ? " [--repeat N]" : "");
      return false;
    }
  }
  return true;
}

// `warmup` untimed steps of dt, then `steps` timed ones, each from the time
// the last one reached; after each timed step, each(step stats, stage
// times). Returns the wall-clock seconds of the timed steps.
template <class Solver, class Each>
double timed_steps(Solver& s, float dt, int steps, int warmup, Each&& each) {
  using Clock = std::chrono::steady_clock;
  for (int k = 0; k < warmup; ++k) s.step(dt, k * dt);
  const auto t0 = Clock::now();
  for (int k = 0; k < steps; ++k) {
    const auto st = s.step(dt, (warmup + k) * dt);
    each(st, s.stage_times());
  }
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace eddy::bench
