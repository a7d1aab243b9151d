#pragma once
// The reference dam break scene shared by the solver benchmarks: a cube of
// particles on a lattice of spacing 2r in a container box, and the process's
// peak memory.
#include <sys/resource.h>

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

}  // namespace eddy::bench
