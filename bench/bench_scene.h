#pragma once
// What the solver benchmarks share: the reference dam break scene (a cube of
// particles on a lattice of spacing 2r in a container box), the process's
// peak memory, the command line and the timed stepping loop.
#include <sys/resource.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

#include "eddy/core/collider.h"
#include "eddy/core/cpu_executor.h"
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
// --skip-1m, --line (one machine-readable line per method, for the
// side-by-side script in bench/peers/), --only METHOD, --peer-scene (the
// work of the peer's scene: no XSPH in PBF, no viscosity in SPH), --no-simd
// (no AVX2 dispatch: the baseline for its gain) and, where the benchmark
// repeats its runs, --repeat N.
struct Options {
  int steps = 0, warmup = 0, threads = 0, repeat = 1;
  bool big = true;    // also the 1M-particle run; off with --skip-1m
  bool line = false;  // --line
  const char* only = nullptr;  // --only METHOD: that method's run alone
  bool peer_scene = false;     // --peer-scene
};


// Reads argv over the defaults in `o`; on an argument it does not know,
// prints the usage and returns false.
inline bool parse_options(int argc, char** argv, Options& o, bool with_repeat = false, bool with_line = false) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--steps") && i + 1 < argc) o.steps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--warmup") && i + 1 < argc) o.warmup = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) o.threads = std::atoi(argv[++i]);
    else if (with_repeat && !std::strcmp(argv[i], "--repeat") && i + 1 < argc) o.repeat = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--skip-1m")) o.big = false;
    else if (with_line && !std::strcmp(argv[i], "--line")) o.line = true;
    else if (!std::strcmp(argv[i], "--no-simd")) CpuExecutor::set_simd(false);
    else if (with_line && !std::strcmp(argv[i], "--only") && i + 1 < argc) o.only = argv[++i];
    else if (with_line && !std::strcmp(argv[i], "--peer-scene")) o.peer_scene = true;
    else {
      std::fprintf(stderr, "usage: %s [--steps N] [--warmup N] [--threads N]%s [--skip-1m]%s [--no-simd]\n", argv[0],
                   with_repeat ? " [--repeat N]" : "", with_line ? " [--line] [--only METHOD] [--peer-scene]" : "");
      return false;
    }
  }
  return true;
}

// Adds t / steps to each of `mean`'s stage times. A method's StageTimes
// holds one double a stage and nothing else (core's *StageTimes), so it is
// read and written as an array of them.
template <class Times>
void add_mean(Times& mean, const Times& t, int steps) {
  static_assert(std::is_trivially_copyable_v<Times> && std::is_aggregate_v<Times> &&
                    sizeof(Times) % sizeof(double) == 0 && alignof(Times) == alignof(double),
                "stage times are doubles only");
  using Doubles = std::array<double, sizeof(Times) / sizeof(double)>;
  Doubles m = std::bit_cast<Doubles>(mean);
  const Doubles x = std::bit_cast<Doubles>(t);
  for (std::size_t i = 0; i < m.size(); ++i) m[i] += x[i] / steps;
  mean = std::bit_cast<Times>(m);
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

// Sustained bandwidth of this machine: a parallel triad a = b + s c over
// three arrays far larger than the caches, counting 4 streams (the write
// allocates its line first), best of three.
inline double measure_bandwidth(int threads) {
  using Clock = std::chrono::steady_clock;
  const std::size_t n = std::size_t(1) << 28;  // 1 GiB per array: far beyond any L3
  std::vector<float> a(n), b(n, 1.0f), c(n, 2.0f);
  double best = 0;
  tbb::task_arena arena(threads > 0 ? threads : int(tbb::task_arena::automatic));
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = Clock::now();
    arena.execute([&] {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1 << 16), [&](const tbb::blocked_range<std::size_t>& q) {
        for (std::size_t i = q.begin(); i != q.end(); ++i) a[i] = b[i] + 0.5f * c[i];
      });
    });
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::max(best, 4.0 * 4.0 * double(n) / s);
  }
  if (a[n / 2] != 2.0f) std::printf("(triad check failed)\n");
  return best;
}

// One line of a pass's time, its compulsory memory traffic (the bytes its
// arrays must move at least once, from the model the caller states) and the
// rate that is, as a share of the triad bandwidth: near 100 % a pass is
// memory-bound, far below it bound by arithmetic or latency.
inline void print_traffic(const char* pass, double seconds, double bytes, double bandwidth) {
  const double rate = seconds > 0 ? bytes / seconds : 0.0;
  std::printf("    %-26s %7.2f ms %8.1f MB %7.1f GB/s  %3.0f %% of the triad\n", pass, 1e3 * seconds, bytes / 1e6,
              rate / 1e9, 100.0 * rate / bandwidth);
}

// The bytes the neighbour grid and its lists move per rebuild, for n
// particles and P pairs: positions read and the keys and order written
// (24 B), four radix passes reading and writing key and value (96 B), run
// heads and cell ids (8 B), the sorted positions written and read by the
// count pass (24 B), the hits it keeps for the fill, written and read (64
// B), the counts/offsets (4 B), and the lists' indices (4 B a pair, one
// spare slot per particle).
inline double neighbor_bytes(double n, double pairs) { return n * (24 + 96 + 8 + 24 + 64 + 4 + 4) + 4 * pairs; }

}  // namespace eddy::bench
