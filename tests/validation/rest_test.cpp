// A block of water settles at rest in a tank; and a block emitted flush
// against the walls starts without a blow-up.
#include <gtest/gtest.h>

#include <algorithm>

#include "validation.h"

namespace eddy::validation {
namespace {

struct Stats {
  float max_speed = 0, mean_speed = 0;
  float mean_density_error = 0, max_density_error = 0;  // %, compression
  float top_mean = 0, top_std = 0;                      // heights of the surface layer
};

Stats measure(const Points& p, float rho0, float spacing) {
  Stats s;
  double speed = 0, err = 0;
  float ymax = -1e30f;
  for (std::size_t i = 0; i < p.size(); ++i) ymax = std::max(ymax, p.P()[i].y);
  double top = 0, top2 = 0;
  int ntop = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const float v = length(p.v()[i]);
    s.max_speed = std::max(s.max_speed, v);
    speed += v;
    const float e = std::max(0.0f, p.get_float("density")[i] / rho0 - 1.0f) * 100.0f;
    err += e;
    s.max_density_error = std::max(s.max_density_error, e);
  }
  // The surface: the highest particle of each column (one spacing square in
  // x-z), averaged over patches of 5 x 5 columns so that the disorder of
  // individual particles (a fraction of a spacing) does not count as waves.
  std::map<std::pair<int, int>, float> column_top;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const auto key = std::make_pair(int(std::floor(p.P()[i].x / spacing)), int(std::floor(p.P()[i].z / spacing)));
    auto it = column_top.find(key);
    if (it == column_top.end() || it->second < p.P()[i].y) column_top[key] = p.P()[i].y;
  }
  std::map<std::pair<int, int>, std::pair<double, int>> patch;
  for (const auto& [k, y] : column_top) {
    auto& e = patch[{k.first / 5, k.second / 5}];
    e.first += y;
    e.second += 1;
  }
  for (const auto& [k, e] : patch) {
    const double y = e.first / e.second;
    top += y, top2 += y * y, ++ntop;
  }
  s.mean_speed = float(speed / p.size());
  s.mean_density_error = float(err / p.size());
  s.top_mean = float(top / ntop);
  s.top_std = float(std::sqrt(std::max(0.0, top2 / ntop - (top / ntop) * (top / ntop))));
  return s;
}

// A 1.0 x 0.48 x 0.4 m block of water (r = 2 cm, 3000 particles) in a tank
// 1 m wide, at 24 fps with at least 4 substeps (dt <= 10.4 ms; the CFL condition
// adds more while it sloshes) and default parameters,
// settled for 3 s, then watched for 1 s. Speeds are judged against
// sqrt(g H) = 2.2 m/s, the speed of waves on this depth; the surface
// against the particle spacing.
TEST(Rest, BlockOfWaterSettlesFlatAndStill) {
  const double r = 0.02, H = 0.48;
  const Graph g = parse_graph(tank_scene(0, 0, 0, 1.0, H, 0.4, 1.0, 1.0, 0.4, r, 96, 24, "\"substeps\": 4"),
                              builtin_registry(), "rest");
  CookEngine e(builtin_registry(), g);
  const float spacing = float(2 * r), rho0 = 1000.0f;
  const double wave_speed = std::sqrt(9.81 * H);
  Stats worst;
  for (int f = 73; f <= 96; ++f) {
    const Stats s = measure(*e.cook("solver", f)->at("particles").as<Points>(), rho0, spacing);
    worst.max_speed = std::max(worst.max_speed, s.max_speed);
    worst.mean_speed = std::max(worst.mean_speed, s.mean_speed);
    worst.mean_density_error = std::max(worst.mean_density_error, s.mean_density_error);
    worst.max_density_error = std::max(worst.max_density_error, s.max_density_error);
    worst.top_std = std::max(worst.top_std, s.top_std);
    worst.top_mean = s.top_mean;
  }
  std::printf("  over the last second: max speed %.3f m/s (%.1f %% of sqrt(gH)), mean speed %.4f m/s\n",
              worst.max_speed, 100 * worst.max_speed / wave_speed, worst.mean_speed);
  std::printf("  density error mean %.2f %% max %.2f %%; surface height %.4f m, patches spread %.4f m (%.2f spacings)\n",
              worst.mean_density_error, worst.max_density_error, worst.top_mean, worst.top_std,
              worst.top_std / spacing);
  EXPECT_LT(worst.max_speed, 0.1 * wave_speed);
  EXPECT_LT(worst.mean_speed, 0.025 * wave_speed);
  // The solver's error target is 0.5 % (mean); the bottom carries the hydrostatic load.
  EXPECT_LT(worst.mean_density_error, 0.6f);
  EXPECT_LT(worst.max_density_error, 5.0f);
  // Flat: patches of the surface differ in mean height by less than a
  // quarter spacing, at the height the initial block had (top particles at H - r).
  EXPECT_LT(worst.top_std, 0.25f * spacing);
  EXPECT_NEAR(worst.top_mean, H - r, 1.0f * spacing);
}

// The FluidBox fills the tank exactly (flush with every wall) and a second
// one overlaps the tank's walls: the emitter keeps one radius of clearance
// by itself, so both settle without a blow-up from the first substep.
TEST(Rest, FluidBoxFlushAgainstTheWallsStartsWithoutABlowUp) {
  const double r = 0.02;
  for (const double overlap : {0.0, 0.05}) {
    const Graph g = parse_graph(
        tank_scene(-overlap, -overlap, -overlap, 0.6 + overlap, 0.3, 0.4 + overlap, 0.6, 0.8, 0.4, r, 24, 24,
                   "\"substeps\": 4"),
        builtin_registry(), "flush");
    Reports rep;
    CookEngine e(builtin_registry(), g);
    e.set_observer(&rep);
    const auto first = e.cook("solver", 1)->at("particles").as<Points>();
    EXPECT_EQ(first->size(), 15u * 7u * 10u) << "overlap " << overlap;
    float max_speed = 0;
    for (int f = 2; f <= 24; ++f) {
      const auto p = e.cook("solver", f)->at("particles").as<Points>();
      for (std::size_t i = 0; i < p->size(); ++i) max_speed = std::max(max_speed, length(p->v()[i]));
    }
    // Nothing faster than a fall through one particle spacing, sqrt(2 g 2r).
    std::printf("  overlap %.2f m: max speed over the first second %.3f m/s\n", overlap, max_speed);
    EXPECT_LT(max_speed, std::sqrt(2 * 9.81 * 2 * r)) << "overlap " << overlap;
  }
}

}  // namespace
}  // namespace eddy::validation
