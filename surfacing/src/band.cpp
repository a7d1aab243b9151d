// Sparse narrow bands on 8^3 bricks: the brick container, sampling, the
// shrink bound, the cell list with the isolated-particle test and the kernel
// average. The rasteriser and dilation
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

void bound_shrink(Bricks& B, const Values& unsmoothed, float max_shrink, float blend) {
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

CellList::CellList(const Vec3f* P, std::size_t n, double h) : inv_(1.0 / h) {
  resize_on_huge_pages(entries_, n);
  tbb::parallel_for(std::size_t(0), n, [&](std::size_t i) { entries_[i] = {key(P[i]), uint32_t(i)}; });
  tbb::parallel_sort(entries_.begin(), entries_.end());
}

uint64_t CellList::key(Vec3f x) const {
  return pack(int(std::floor(x.x * inv_)), int(std::floor(x.y * inv_)), int(std::floor(x.z * inv_)));
}

void CellList::ranges(uint64_t cell, Range out[27]) const {
  int c[3];
  unpack(cell, c[0], c[1], c[2]);
  int k = 0;
  for (int dx = -1; dx <= 1; ++dx)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dz = -1; dz <= 1; ++dz) {
        const uint64_t q = pack(c[0] + dx, c[1] + dy, c[2] + dz);
        const auto lo = std::lower_bound(entries_.begin(), entries_.end(), std::make_pair(q, uint32_t(0)));
        auto hi = lo;
        while (hi != entries_.end() && hi->first == q) ++hi;
        out[k++] = {uint32_t(lo - entries_.begin()), uint32_t(hi - entries_.begin())};
      }
}

std::vector<uint8_t> isolated(const Vec3f* P, std::size_t n, const std::vector<uint32_t>& candidates, double radius,
                              int fewer_than) {
  std::vector<uint8_t> lone(candidates.size(), 0);
  if (candidates.empty()) return lone;
  const CellList cells(P, n, radius);
  const float r2 = float(radius * radius);
  tbb::parallel_for(std::size_t(0), candidates.size(), [&](std::size_t k) {
    const uint32_t i = candidates[k];
    CellList::Range near[27];
    cells.ranges(cells.key(P[i]), near);
    int found = 0;
    for (int c = 0; c < 27 && found < fewer_than; ++c)
      for (uint32_t e = near[c].begin; e != near[c].end && found < fewer_than; ++e) {
        const uint32_t j = cells.point(e);
        if (j != i && length2(P[j] - P[i]) < r2) ++found;
      }
    lone[k] = found < fewer_than;
  });
  return lone;
}

void kernel_average(const Vec3f* P, const Vec3f* V, std::size_t n, const Vec3f* at, std::size_t m, double h,
                    Vec3f* out, uint8_t* found) {
  if (m == 0) return;
  const CellList cells(P, n, h);
  // The queries by cell, so that each cell's 27 neighbour ranges are looked
  // up once for all the queries in it.
  std::vector<std::pair<uint64_t, uint32_t>> queries;
  resize_on_huge_pages(queries, m);
  tbb::parallel_for(std::size_t(0), m, [&](std::size_t i) { queries[i] = {cells.key(at[i]), uint32_t(i)}; });
  tbb::parallel_sort(queries.begin(), queries.end());
  std::vector<std::size_t> first;
  for (std::size_t i = 0; i < m; ++i)
    if (i == 0 || queries[i].first != queries[i - 1].first) first.push_back(i);
  first.push_back(m);
  // The points and values in the cell list's order, one array per
  // coordinate, so each cell's range is read as contiguous memory.
  std::vector<float> ps[6];
  for (auto& a : ps) resize_on_huge_pages(a, n);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1 << 14), [&](const auto& r) {
    for (std::size_t e = r.begin(); e != r.end(); ++e) {
      const uint32_t j = cells.point(uint32_t(e));
      ps[0][e] = P[j].x, ps[1][e] = P[j].y, ps[2][e] = P[j].z;
      ps[3][e] = V[j].x, ps[4][e] = V[j].y, ps[5][e] = V[j].z;
    }
  });
  const float inv_h2 = float(1.0 / (h * h));
  tbb::parallel_for(std::size_t(0), first.size() - 1, [&](std::size_t g) {
    CellList::Range near[27];
    cells.ranges(queries[first[g]].first, near);
    const float *px = ps[0].data(), *py = ps[1].data(), *pz = ps[2].data();
    const float *vx = ps[3].data(), *vy = ps[4].data(), *vz = ps[5].data();
    for (std::size_t q = first[g]; q != first[g + 1]; ++q) {
      const uint32_t i = queries[q].second;
      const Vec3f x = at[i];
      float sx = 0, sy = 0, sz = 0, wsum = 0;
      for (const CellList::Range& r : near)
        for (uint32_t e = r.begin; e != r.end; ++e) {
          const float dx = px[e] - x.x, dy = py[e] - x.y, dz = pz[e] - x.z;
          const float t = 1.0f - (dx * dx + dy * dy + dz * dz) * inv_h2;
          if (t <= 0) continue;
          const float w = t * t * t;
          sx += vx[e] * w;
          sy += vy[e] * w;
          sz += vz[e] * w;
          wsum += w;
        }
      found[i] = wsum > 0;
      out[i] = wsum > 0 ? vec3(sx, sy, sz) / wsum : vec3(0.0f, 0.0f, 0.0f);
    }
  });
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
