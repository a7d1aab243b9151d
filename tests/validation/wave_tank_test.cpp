// The wave_tank example as a measurement: its paddle, swung by the expression
// 8 sin(2 pi t / 0.8) degrees, makes waves of the paddle's period in the SPH
// water. Forced waves take the forcing's frequency, whatever the tank's own
// modes; as the tank's third sloshing mode is near 0.8 s (0.79 s for 1.2 m
// at 0.16 m deep), the same tank is also swung at 1.1 s, which no mode near
// it explains. The water's height over ten strips along the tank is read
// from the number of particles above each (the water is incompressible to
// 0.1 %), and the period from their spectrum after two paddle periods of
// start-up.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>

#include "validation.h"

namespace eddy::validation {
namespace {

// The example with its paddle's period changed from 0.8 s to `paddle`;
// checks the waves' period and height in the strips.
void waves_take_the_paddles_period(double paddle) {
  std::ifstream file(std::string(EDDY_SOURCE_DIR) + "/examples/wave_tank.eddy.json");
  std::string text((std::istreambuf_iterator<char>(file)), {});
  const std::string expr = "$T / 0.8)";
  const std::size_t at = text.find(expr);
  ASSERT_NE(at, std::string::npos) << "the example's paddle expression changed";
  text.replace(at, expr.size(), "$T / " + std::to_string(paddle) + ")");
  const Graph graph = parse_graph(text, builtin_registry(), "wave_tank");
  CookEngine engine(builtin_registry(), graph);
  Reports reports;
  engine.set_observer(&reports);
  const double fps = 24.0;
  const int frames = 168;  // 7 s
  // Ten strips 0.1 m long from 0.15 m to 1.15 m, across the tank's 8 cm.
  constexpr int kStrips = 10;
  const double x0 = 0.15, strip = 0.1, width = 0.08;
  std::vector<double> t;
  std::vector<std::vector<double>> height(kStrips);
  for (int f = 1; f <= frames; ++f) {
    const auto pts = engine.cook("solver", f)->at("particles").as<Points>();
    const double cell = std::pow(2.0 * pts->radius, 3);
    int n[kStrips] = {};
    for (std::size_t i = 0; i < pts->size(); ++i) {
      const int k = int(std::floor((pts->P()[i].x - x0) / strip));
      if (k >= 0 && k < kStrips) ++n[k];
    }
    t.push_back((f - 1) / fps);
    for (int k = 0; k < kStrips; ++k) height[k].push_back(n[k] * cell / (strip * width));
  }
  // The power spectrum of each strip's height after two paddle periods
  // (Hann-windowed, its mean taken out), summed over the strips: a node of
  // the standing waves at one strip is a crest at another. Its peak on a
  // fine grid from 0.4 to 3 Hz is the waves' frequency.
  std::size_t first = 0;
  while (t[first] < 2 * paddle) ++first;
  const std::size_t len = t.size() - first;
  std::vector<double> window(len);
  for (std::size_t i = 0; i < len; ++i) window[i] = 0.5 - 0.5 * std::cos(2 * M_PI * double(i) / double(len - 1));
  std::vector<std::vector<double>> swing_of(kStrips);  // each strip's windowed height less its mean
  for (int k = 0; k < kStrips; ++k) {
    double mean = 0;
    for (std::size_t i = first; i < t.size(); ++i) mean += height[k][i];
    mean /= double(len);
    for (std::size_t i = first; i < t.size(); ++i) swing_of[k].push_back((height[k][i] - mean) * window[i - first]);
  }
  double best = 0, best_power = -1, swing = 0;
  for (double freq = 0.4; freq <= 3.0; freq += 0.002) {
    double power = 0;
    for (int k = 0; k < kStrips; ++k) {
      double re = 0, im = 0;
      for (std::size_t i = first; i < t.size(); ++i) {
        const double h = swing_of[k][i - first];
        re += h * std::cos(2 * M_PI * freq * t[i]);
        im += h * std::sin(2 * M_PI * freq * t[i]);
      }
      power += re * re + im * im;
    }
    if (power > best_power) best_power = power, best = freq;
  }
  for (int k = 0; k < kStrips; ++k) {
    const auto [lo, hi] = std::minmax_element(height[k].begin() + std::ptrdiff_t(first), height[k].end());
    swing = std::max(swing, *hi - *lo);
  }
  const double period = 1.0 / best;
  std::printf("  paddle %.3f s: waves of %.3f s, the largest swing %.1f mm\n", paddle, period, 1e3 * swing);
  EXPECT_NEAR(period, paddle, 0.03 * paddle);  // about six periods in the window: its peak within 1 %
  EXPECT_GT(swing, 0.005);  // waves, not ripples: 5 mm or more from trough to crest
}

TEST(WaveTank, TheWavesTakeThePaddlesPeriod) {
  waves_take_the_paddles_period(0.8);
  waves_take_the_paddles_period(1.1);
}

}  // namespace
}  // namespace eddy::validation
