// Sparse narrow bands on 8^3 bricks: the brick container, sampling, the
// shrink bound and the isolated-particle test. The rasteriser and dilation
// are in band_raster.cpp, the distance and smoothing passes in
// band_fields.cpp. See band.h.
#include "band.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

namespace eddy::band {

uint64_t pack(int x, int y, int z) {
  return (uint64_t(uint32_t(x + (1 << 20)) & 0x1fffff) << 42) | (uint64_t(uint32_t(y + (1 << 20)) & 0x1fffff) << 21) |
         uint64_t(uint32_t(z + (1 << 20)) & 0x1fffff);
}

void unpack(uint64_t k, int& x, int& y, int& z) {
  x = int((k >> 42) & 0x1fffff) - (1 << 20);
  y = int((k >> 21) & 0x1fffff) - (1 << 20);
  z = int(k & 0x1fffff) - (1 << 20);
}

int32_t Bricks::find(int bx, int by, int bz) const {
  const uint64_t k = pack(bx, by, bz);
  const auto it = index.find(k);
  if (it != index.end()) return it->second;
  return std::binary_search(inside.begin(), inside.end(), k) ? kInside : kOutside;
}

void Bricks::add(const std::vector<uint64_t>& keys, const std::vector<float>& fill) {
  const std::size_t n0 = coord.size();
  coord.resize(n0 + keys.size());
  phi.resize((n0 + keys.size()) * kVoxels);
  tbb::parallel_for(std::size_t(0), keys.size(), [&](std::size_t i) {
    auto& c = coord[n0 + i];
    unpack(keys[i], c[0], c[1], c[2]);
    std::fill_n(phi.data() + (n0 + i) * kVoxels, kVoxels, fill[i]);
  });
}

void Bricks::link_index() {
  index.clear();
  index.reserve(coord.size() * 2);
  for (std::size_t b = 0; b < coord.size(); ++b) index.emplace(pack(coord[b][0], coord[b][1], coord[b][2]), int32_t(b));
}

void Bricks::link() {
  link_index();
  nbr.resize(coord.size());
  tbb::parallel_for(std::size_t(0), coord.size(), [&](std::size_t b) {
    const auto& c = coord[b];
    for (int dx = -1; dx <= 1; ++dx)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dz = -1; dz <= 1; ++dz)
          nbr[b][std::size_t(nbr_slot(dx, dy, dz))] = find(c[0] + dx, c[1] + dy, c[2] + dz);
  });
}

void bound_shrink(Bricks& B, const std::vector<float>& unsmoothed, float max_shrink, float blend) {
  if (unsmoothed.size() != B.phi.size()) throw std::logic_error("bound_shrink: the bricks changed since smoothing");
  float* phi = B.phi.data();
  const float* u = unsmoothed.data();
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, B.phi.size(), 1 << 14), [&](const auto& r) {
    for (std::size_t i = r.begin(); i != r.end(); ++i) {
      const float a = phi[i], b = u[i] + max_shrink;
      float m = std::min(a, b);
      if (blend > 0 && std::isfinite(a) && std::isfinite(b)) {
        const float h = std::max(blend - std::fabs(a - b), 0.0f) / blend;
        m -= 0.25f * blend * h * h;
      }
      phi[i] = m;
    }
  });
}

std::vector<uint8_t> isolated(const Vec3f* P, std::size_t n, const std::vector<uint32_t>& candidates, double radius,
                              int fewer_than) {
  std::vector<uint8_t> lone(candidates.size(), 0);
  if (candidates.empty()) return lone;
  const double inv = 1.0 / radius;
  auto cell = [&](Vec3f x, int c[3]) {
    c[0] = int(std::floor(x.x * inv));
    c[1] = int(std::floor(x.y * inv));
    c[2] = int(std::floor(x.z * inv));
  };
  std::vector<std::pair<uint64_t, uint32_t>> keys(n);
  tbb::parallel_for(std::size_t(0), n, [&](std::size_t i) {
    int c[3];
    cell(P[i], c);
    keys[i] = {pack(c[0], c[1], c[2]), uint32_t(i)};
  });
  tbb::parallel_sort(keys.begin(), keys.end());
  const float r2 = float(radius * radius);
  tbb::parallel_for(std::size_t(0), candidates.size(), [&](std::size_t k) {
    const uint32_t i = candidates[k];
    int c[3];
    cell(P[i], c);
    int found = 0;
    for (int dx = -1; dx <= 1 && found < fewer_than; ++dx)
      for (int dy = -1; dy <= 1 && found < fewer_than; ++dy)
        for (int dz = -1; dz <= 1 && found < fewer_than; ++dz) {
          const uint64_t key = pack(c[0] + dx, c[1] + dy, c[2] + dz);
          auto it = std::lower_bound(keys.begin(), keys.end(), std::make_pair(key, uint32_t(0)));
          for (; it != keys.end() && it->first == key && found < fewer_than; ++it)
            if (it->second != i && length2(P[it->second] - P[i]) < r2) ++found;
        }
    lone[k] = found < fewer_than;
  });
  return lone;
}

float sample(const Bricks& B, Vec3f u) {
  const float fx = std::floor(u.x), fy = std::floor(u.y), fz = std::floor(u.z);
  const int x0 = int(fx), y0 = int(fy), z0 = int(fz);
  const int bx = x0 >> 3, by = y0 >> 3, bz = z0 >> 3;  // arithmetic shift: floor division
  const int32_t base = B.find(bx, by, bz);
  float c[8];
  bool finite = true;
  for (int k = 0; k < 8; ++k) {
    const int x = x0 + (k >> 2), y = y0 + ((k >> 1) & 1), z = z0 + (k & 1);
    const int dx = (x >> 3) - bx, dy = (y >> 3) - by, dz = (z >> 3) - bz;
    const int32_t b = base >= 0 ? B.nbr[std::size_t(base)][std::size_t(nbr_slot(dx, dy, dz))]
                                : B.find(bx + dx, by + dy, bz + dz);
    c[k] = b >= 0 ? B.values(std::size_t(b))[offset(x & 7, y & 7, z & 7)] : missing_phi(b);
    finite &= std::isfinite(c[k]);
  }
  const float tx = u.x - fx, ty = u.y - fy, tz = u.z - fz;
  if (!finite) return c[(tx >= 0.5f ? 4 : 0) | (ty >= 0.5f ? 2 : 0) | (tz >= 0.5f ? 1 : 0)];
  return trilinear(c, tx, ty, tz);
}

}  // namespace eddy::band
