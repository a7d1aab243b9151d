#pragma once
// Helpers for the validation tests: scenes are graphs of the built-in nodes,
// cooked by the engine exactly as `eddy run` would.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "eddy/graph/cook.h"
#include "eddy/graph/graph.h"
#include "eddy/graph/registry.h"
#include "../builtin_registry.h"

namespace eddy::validation {

using test::builtin_registry;

inline std::string vec(double x, double y, double z) {
  std::ostringstream s;
  s.precision(9);
  s << "[" << x << ", " << y << ", " << z << "]";
  return s.str();
}

// A tank (container box from the origin to (tx1, ty1, tz1)), a FluidBox (f0
// to f1) and a solver node (PBFSolver unless told) with extra parameters (a
// JSON object body, e.g. "\"substeps\": 4").
inline std::string tank_scene(double fx0, double fy0, double fz0, double fx1, double fy1, double fz1, double tx1,
                              double ty1, double tz1, double radius, int frames, double fps,
                              const std::string& solver_params, const std::string& solver_type = "PBFSolver") {
  std::ostringstream g;
  g << R"({"format": "eddy-graph", "version": 1, "frame_range": [1, )" << frames << R"(], "fps": )" << fps << R"(,
  "nodes": [
    {"id": "tank", "type": "ColliderBox", "params": {"mode": "container", "center": )"
    << vec(tx1 / 2, ty1 / 2, tz1 / 2) << R"(, "size": )" << vec(tx1, ty1, tz1) << R"(}},
    {"id": "water", "type": "FluidBox", "params": {"center": )"
    << vec((fx0 + fx1) / 2, (fy0 + fy1) / 2, (fz0 + fz1) / 2) << R"(, "size": )" << vec(fx1 - fx0, fy1 - fy0, fz1 - fz0)
    << R"(, "particle_radius": )" << radius << R"(}},
    {"id": "solver", "type": ")" << solver_type << R"(", "params": {)"
    << solver_params << R"(}}
  ],
  "links": [
    {"from": "tank.colliders", "to": "water.colliders"},
    {"from": "water.particles", "to": "solver.particles"},
    {"from": "tank.colliders", "to": "solver.colliders"}
  ]})";
  return g.str();
}

// Collects the solver's per-frame report lines.
class Reports final : public CookObserver {
 public:
  void node_info(const std::string& node, int frame, const std::string& message) override {
    lines.push_back(node + " frame " + std::to_string(frame) + ": " + message);
  }
  // The last line of `node`'s report at `frame` (empty when there is none).
  std::string of(const std::string& node, int frame) const {
    const std::string prefix = node + " frame " + std::to_string(frame) + ": ";
    std::string found;
    for (const auto& l : lines)
      if (l.rfind(prefix, 0) == 0) found = l;
    return found;
  }
  std::vector<std::string> lines;
};

struct Sample {
  double x, y;
};

// (T, Z) pairs of a CSV with a header line; '#' lines are comments.
inline std::vector<Sample> read_csv(const std::string& path) {
  std::ifstream f(path);
  std::vector<Sample> out;
  std::string line;
  bool header = true;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    double a, b;
    if (std::sscanf(line.c_str(), "%lf,%lf", &a, &b) == 2) out.push_back({a, b});
  }
  return out;
}

// Linear interpolation of samples (sorted by x) at x.
inline double interpolate(const std::vector<Sample>& s, double x) {
  for (std::size_t k = 1; k < s.size(); ++k)
    if (s[k].x >= x) {
      const double w = (x - s[k - 1].x) / (s[k].x - s[k - 1].x);
      return s[k - 1].y * (1 - w) + s[k].y * w;
    }
  return s.back().y;
}

}  // namespace eddy::validation
