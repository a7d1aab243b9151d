// Dam break surge front against Martin & Moyce (1952), data/ (a = 2.25 in,
// n^2 = 2): a water column of width a and height 2a collapses in a tank;
// the front is the 99.5th percentile of particle x minus the wall, as
// Z = z / a against T = t sqrt(2 g / a), compared over T in [0.8, 3]; and
// again with the simulation's time origin fitted, which checks the course
// of the front apart from how the experiment's release started it.
//
// Measured on this same test: SPlisHSPlasH's PBF runs ahead of the
// experiment by 23 % on average (28 % at worst), its DFSPH by 6 % (8 %),
// and PySPH's WCSPH by 5 % (6 %).
//
// Setup: a = 0.25 m, 40 particles across the column (r = 3.125 mm), a slab
// 4 particles deep between free-slip walls (the experiment is a 2D flow),
// water's viscosity; defaults otherwise.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>

#include "validation.h"

namespace eddy::validation {
namespace {

struct FrontErrors {
  double mean = 0, worst = 0;
  // The same against Z(T - shift) with the shift that fits best: how well
  // the front's course matches the experiment's once the time origins agree.
  double shift = 0, shifted_mean = 0;
  std::vector<std::string> reports;
};

// Mean |error| of the front against the reference over T in [0.8, 3], with
// the simulated front read at T - shift.
double mean_error(const std::vector<Sample>& front, const std::vector<Sample>& ref, double shift) {
  double sum = 0;
  int n = 0;
  for (const Sample& s : ref) {
    if (s.x < 0.8 || s.x > 3.0) continue;
    sum += std::fabs(interpolate(front, s.x - shift) - s.y) / s.y;
    ++n;
  }
  return sum / std::max(n, 1);
}

// Runs the dam break with `solver` and its parameters at `fps` and returns
// the front's error against the experiment.
FrontErrors surge_front(const std::string& solver, const std::string& params, double fps, const char* label) {
  const double a = 0.25, g = 9.81;
  const int across = 40, depth = 4;
  const double r = a / across / 2;
  const double T_end = 3.1;
  const double t_scale = std::sqrt(2 * g / a);
  const int frames = int(std::ceil(T_end / t_scale * fps)) + 1;
  const std::string text = tank_scene(0, 0, 0, a, 2 * a, depth * 2 * r, 5 * a, 2.5 * a, depth * 2 * r, r, frames, fps,
                                      params, solver);
  const Graph graph = parse_graph(text, builtin_registry(), "dam_break");
  CookEngine engine(builtin_registry(), graph);
  Reports reports;
  engine.set_observer(&reports);

  std::vector<Sample> front;  // (T, Z)
  std::vector<float> xs;
  for (int f = 1; f <= frames; ++f) {
    const auto pts = engine.cook("solver", f)->at("particles").as<Points>();
    xs.resize(pts->size());
    for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = pts->P()[i].x;
    const std::size_t q = std::size_t(0.995 * double(xs.size() - 1));
    std::nth_element(xs.begin(), xs.begin() + q, xs.end());
    front.push_back({(f - 1) / fps * t_scale, xs[q] / a});  // the wall is at x = 0
  }
  EXPECT_EQ(engine.cook("solver", 1)->at("particles").as<Points>()->size(), std::size_t(across * 2 * across * depth));

  const auto ref = read_csv(std::string(EDDY_SOURCE_DIR) + "/tests/validation/data/martin_moyce_1952_a2.25in.csv");
  FrontErrors out;
  int n = 0;
  std::printf("  [%s]\n    T      Z (Martin & Moyce)   Z (Eddy)   error\n", label);
  for (const Sample& s : ref) {
    if (s.x < 0.8 || s.x > 3.0) continue;
    const double z = interpolate(front, s.x);
    const double err = (z - s.y) / s.y;
    std::printf("  %5.3f   %8.3f             %8.3f   %+5.1f %%\n", s.x, s.y, z, 100 * err);
    out.worst = std::max(out.worst, std::fabs(err));
    ++n;
  }
  EXPECT_GE(n, 4);
  out.mean = mean_error(front, ref, 0.0);
  std::printf("  mean |error| %.1f %%, worst %.1f %%\n", 100 * out.mean, 100 * out.worst);
  out.shifted_mean = out.mean;
  for (int k = 1; k <= 300; ++k) {
    const double e = mean_error(front, ref, 0.001 * k);
    if (e < out.shifted_mean) out.shifted_mean = e, out.shift = 0.001 * k;
  }
  std::printf("  with the time origin fitted: shift T by %.3f (%.1f ms at a = 2.25 in), mean |error| %.1f %%\n",
              out.shift, 1000 * out.shift / std::sqrt(2 * g / 0.05715), 100 * out.shifted_mean);
  out.reports = reports.lines;
  return out;
}

// Goal for Eddy's PBF: mean error under 8 %, worst under 12 %. dt = 1 ms
// fixed (fps 250, 4 substeps, no CFL substepping).
TEST(DamBreak, SurgeFrontTracksMartinMoyce1952) {
  const FrontErrors e = surge_front("PBFSolver", "\"substeps\": 4, \"cfl\": 0", 250, "PBF");
  EXPECT_LT(e.mean, 0.08);
  EXPECT_LT(e.worst, 0.12);
  EXPECT_LT(e.shifted_mean, 0.02);  // measured 1.0 % (see the SPH tests below)
}

// Both SPH methods at water's viscosity, adaptive time steps, free-slip
// boundary particles. The goal for SPH is a mean error under 4 % and a worst
// under 7 %; measured: WCSPH 6.9 % / 8.6 %, DFSPH 7.3 % / 9.4 % (7.0-7.5 %
// also at cfl 0.2 and at the experiment's own scale, a = 2.25 in), both
// ahead of the experiment. Until the goal is met these hold the measured
// accuracy against regressions.
//
// The lead is a matter of the time origin, not of the front's course: read
// at T - 0.13 to 0.14 (7-8 ms at the experiment's scale, about what
// releasing the column takes in a real tank, which a simulation starting at
// rest does not have), the fronts lie within 1.8 % (WCSPH) and 1.9 % (DFSPH)
// of the experiment on average, and the shape checks hold that to 2.5 %.
// PBF, a different method, fits the same shift (0.126, then 1.0 %). Measured without moving the goal: 20 and
// 2000 times water's viscosity (6.9 % and 6.2 %), negative pressure
// unclamped (14.8 %), 60 particles across (DFSPH 7.1 %), a slab 8 deep, a
// no-slip floor, surface tension and the Wendland kernel (7.0-8.5 %).
TEST(DamBreak, WcsphSurgeFrontTracksMartinMoyce1952) {
  const FrontErrors e = surge_front("SPHSolver", "\"method\": \"wcsph\", \"viscosity\": 0.001", 250, "WCSPH");
  EXPECT_LT(e.mean, 0.075);
  EXPECT_LT(e.worst, 0.095);
  EXPECT_LT(e.shifted_mean, 0.025);
}

TEST(DamBreak, DfsphSurgeFrontTracksMartinMoyce1952AndHoldsItsDensityTarget) {
  const FrontErrors e = surge_front("SPHSolver", "\"method\": \"dfsph\", \"viscosity\": 0.001", 250, "DFSPH");
  EXPECT_LT(e.mean, 0.08);
  EXPECT_LT(e.worst, 0.10);
  EXPECT_LT(e.shifted_mean, 0.025);
  // Every frame's mean density error (the mean over its steps of the
  // solver's final mean compression) within the 0.05 % target.
  const std::regex mean_error("density error mean ([0-9.]+) %");
  int frames = 0;
  for (const auto& line : e.reports) {
    std::smatch m;
    if (!std::regex_search(line, m, mean_error)) continue;
    ++frames;
    EXPECT_LE(std::stod(m[1]), 0.05) << line;
  }
  EXPECT_GT(frames, 50);
}

}  // namespace
}  // namespace eddy::validation
