// Sparse narrow bands on 8^3 bricks: rasteriser, dilation, closest-point
// propagation, separable Gaussian, zero-crossing seeds. See band.h.
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

namespace {

// A missing neighbour's value: its side, at no known distance.
inline float missing_phi(int32_t o) { return o == kInside ? -kInf : kInf; }

// Trilinear interpolation of the corners c[k], k = (x << 2) | (y << 1) | z.
inline float trilinear(const float c[8], float tx, float ty, float tz) {
  const float c00 = c[0] + (c[1] - c[0]) * tz, c01 = c[2] + (c[3] - c[2]) * tz;
  const float c10 = c[4] + (c[5] - c[4]) * tz, c11 = c[6] + (c[7] - c[6]) * tz;
  const float c0 = c00 + (c01 - c00) * ty, c1 = c10 + (c11 - c10) * ty;
  return c0 + (c1 - c0) * tx;
}

}  // namespace

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

namespace {

// Distance from x to a seed's surface: to its osculating sphere or plane where
// x's foot point on it lies within a voxel of the seed, else to the seed point.
inline float seed_distance(const Seed& s, Vec3f x, float point_d2) {
  if (s.k > 0) {
    const float r = 1.0f / s.k;
    const Vec3f c = s.p - s.n * r, v = x - c;
    const float len = length(v);
    if (len > 1e-6f && length2(c + v * (r / len) - s.p) <= 1.0f) return std::fabs(len - r);
  } else {
    const Vec3f d = x - s.p;
    const float along = dot(d, s.n);
    if (point_d2 - along * along <= 1.0f) return std::fabs(along);
  }
  return std::sqrt(point_d2);
}

}  // namespace

// ---------------------------------------------------------------------------
// Rasteriser. A voxel's value is min_j |x - x_j| - R, the exact distance
// outside the union of spheres. Voxels within `deep` of some centre are found
// first with a cheap bit mask per brick row and get -inf; only the others get
// the min over the candidate points.

Raster rasterize(const Vec3f* U, std::size_t n, const RasterParams& rp) {
  Raster out;
  if (n == 0) return out;
  const float Rv = rp.radius, reach = Rv + rp.reach, deep = std::min(rp.deep, rp.radius);

  struct Item {
    uint64_t key;
    Vec3f u;
  };
  std::vector<Item> items(n);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 8192), [&](const auto& r) {
    for (std::size_t i = r.begin(); i != r.end(); ++i) {
      const Vec3f u = U[i];
      items[i] = {pack(int(std::floor(u.x / kDim)), int(std::floor(u.y / kDim)), int(std::floor(u.z / kDim))), u};
    }
  });
  tbb::parallel_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.key < b.key; });
  std::vector<std::pair<uint64_t, std::pair<uint32_t, uint32_t>>> occupied;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i + 1;
    while (j < n && items[j].key == items[i].key) ++j;
    occupied.push_back({items[i].key, {uint32_t(i), uint32_t(j)}});
    i = j;
  }
  const std::unordered_map<uint64_t, std::pair<uint32_t, uint32_t>> bins(occupied.begin(), occupied.end());
  const int K = int(std::ceil(reach / kDim));

  // Target bricks: those within reach of some occupied brick's point bounds.
  std::vector<std::vector<uint64_t>> parts(occupied.size());
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, occupied.size(), 64), [&](const auto& r) {
    for (std::size_t o = r.begin(); o != r.end(); ++o) {
      Vec3f lo = vec3(1e30f, 1e30f, 1e30f), hi = vec3(-1e30f, -1e30f, -1e30f);
      for (uint32_t i = occupied[o].second.first; i < occupied[o].second.second; ++i) {
        const Vec3f u = items[i].u;
        lo = vec3(std::min(lo.x, u.x), std::min(lo.y, u.y), std::min(lo.z, u.z));
        hi = vec3(std::max(hi.x, u.x), std::max(hi.y, u.y), std::max(hi.z, u.z));
      }
      const int x0 = int(std::floor((lo.x - reach) / kDim)), x1 = int(std::floor((hi.x + reach) / kDim));
      const int y0 = int(std::floor((lo.y - reach) / kDim)), y1 = int(std::floor((hi.y + reach) / kDim));
      const int z0 = int(std::floor((lo.z - reach) / kDim)), z1 = int(std::floor((hi.z + reach) / kDim));
      for (int z = z0; z <= z1; ++z)
        for (int y = y0; y <= y1; ++y)
          for (int x = x0; x <= x1; ++x) parts[o].push_back(pack(x, y, z));
    }
  });
  std::vector<uint64_t> targets;
  {
    std::size_t total = 0;
    for (const auto& t : parts) total += t.size();
    targets.reserve(total);
    for (auto& t : parts) {
      targets.insert(targets.end(), t.begin(), t.end());
      std::vector<uint64_t>().swap(t);
    }
  }
  tbb::parallel_sort(targets.begin(), targets.end());
  targets.erase(std::unique(targets.begin(), targets.end()), targets.end());

  struct Block {
    float phi[kVoxels];
    std::unique_ptr<Seed[]> seed;     // with closest
    std::unique_ptr<uint8_t[]> has;   // with closest: voxel holds a seed
    uint32_t count = 0;
  };
  std::vector<std::unique_ptr<Block>> blocks(targets.size());
  std::vector<uint8_t> all_deep(targets.size(), 0);
  tbb::enumerable_thread_specific<std::vector<Vec3f>> scratch;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, targets.size(), 16), [&](const auto& r) {
    auto& cand = scratch.local();
    for (std::size_t t = r.begin(); t != r.end(); ++t) {
      int bx, by, bz;
      unpack(targets[t], bx, by, bz);
      const Vec3f origin = vec3(float(bx * kDim), float(by * kDim), float(bz * kDim));
      // Candidates: points whose reach touches this brick (relative to its origin).
      cand.clear();
      for (int dz = -K; dz <= K; ++dz)
        for (int dy = -K; dy <= K; ++dy)
          for (int dx = -K; dx <= K; ++dx) {
            const auto it = bins.find(pack(bx + dx, by + dy, bz + dz));
            if (it == bins.end()) continue;
            for (uint32_t i = it->second.first; i < it->second.second; ++i) {
              const Vec3f u = items[i].u - origin;
              const float ex = std::max({0.0f, -u.x, u.x - 7.0f}), ey = std::max({0.0f, -u.y, u.y - 7.0f}),
                          ez = std::max({0.0f, -u.z, u.z - 7.0f});
              if (ex * ex + ey * ey + ez * ez <= reach * reach) cand.push_back(u);
            }
          }
      if (cand.empty()) continue;
      // Deep mask, one byte per (y, z) row of 8 voxels along x.
      uint8_t deep_rows[64] = {};
      if (deep > 0) {
        const float d2 = deep * deep;
        for (const auto& u : cand) {
          const int z0 = std::max(0, int(std::ceil(u.z - deep))), z1 = std::min(7, int(std::floor(u.z + deep)));
          for (int z = z0; z <= z1; ++z) {
            const float rz = d2 - (z - u.z) * (z - u.z);
            if (rz <= 0) continue;
            const float hy = std::sqrt(rz);
            const int y0 = std::max(0, int(std::ceil(u.y - hy))), y1 = std::min(7, int(std::floor(u.y + hy)));
            for (int y = y0; y <= y1; ++y) {
              const float ry = rz - (y - u.y) * (y - u.y);
              if (ry <= 0) continue;
              const float hx = std::sqrt(ry);
              // Strictly inside: |x - u| < deep.
              int x0 = std::max(0, int(std::ceil(u.x - hx))), x1 = std::min(7, int(std::floor(u.x + hx)));
              if (x0 <= 7 && float(x0) - u.x <= -hx) ++x0;
              if (x1 >= 0 && float(x1) - u.x >= hx) --x1;
              if (x0 > x1) continue;
              deep_rows[z * 8 + y] |= uint8_t(((1u << (x1 - x0 + 1)) - 1u) << x0);
            }
          }
        }
      }
      bool every_deep = true;
      for (uint8_t row : deep_rows) every_deep &= row == 0xff;
      if (every_deep) {
        all_deep[t] = 1;
        continue;
      }
      // Squared distance to the nearest candidate for the other voxels.
      float best[kVoxels];
      int32_t arg[kVoxels];
      std::fill_n(best, kVoxels, 1e30f);
      const float reach2 = reach * reach;
      // Two copies of the loop: the plain min vectorises, the argmin does not.
      for (int z = 0; z < 8; ++z)
        for (int y = 0; y < 8; ++y) {
          if (deep_rows[z * 8 + y] == 0xff) continue;
          float* row_best = best;  // voxel (x, y, z) at x * 64 + y * 8 + z
          for (std::size_t c = 0; c < cand.size(); ++c) {
            const Vec3f u = cand[c];
            const float base = (z - u.z) * (z - u.z) + (y - u.y) * (y - u.y);
            if (base > reach2) continue;
            if (rp.closest) {
              for (int x = 0; x < 8; ++x) {
                const float d2 = base + (x - u.x) * (x - u.x);
                const int v = offset(x, y, z);
                if (d2 < row_best[v]) {
                  row_best[v] = d2;
                  arg[v] = int32_t(c);
                }
              }
            } else {
              for (int x = 0; x < 8; ++x) {
                const float d2 = base + (x - u.x) * (x - u.x);
                float& slot = row_best[offset(x, y, z)];
                slot = std::min(slot, d2);
              }
            }
          }
        }
      std::unique_ptr<Block> block(new Block);  // default-initialised: no zeroing of phi
      if (rp.closest) {
        block->seed.reset(new Seed[kVoxels]);
        block->has.reset(new uint8_t[kVoxels]());
      }
      bool finite = false, any_inside = false, any_outside = false;
      for (int v = 0; v < kVoxels; ++v) {
        const int x = v >> 6, y = (v >> 3) & 7, z = v & 7;
        if (deep_rows[z * 8 + y] & (1u << x)) {
          block->phi[v] = -kInf;
          any_inside = true;
          continue;
        }
        const float phi = best[v] < 1e29f ? std::sqrt(best[v]) - Rv : kInf;
        if (phi < rp.reach) {
          block->phi[v] = phi;
          finite = true;
          if (rp.closest) {
            const Vec3f u = cand[std::size_t(arg[v])], x_rel = vec3(float(x), float(y), float(z));
            const Vec3f d = x_rel - u;
            const float len = std::sqrt(best[v]);
            const Vec3f n = len > 1e-6f ? d / len : vec3(1, 0, 0);
            block->seed[v] = {u + n * Rv + origin, n, Rv > 0 ? 1.0f / Rv : 0.0f};
            block->has[v] = 1;
            ++block->count;
          }
        } else {
          block->phi[v] = phi < 0 ? -kInf : kInf;
          (phi < 0 ? any_inside : any_outside) = true;
        }
      }
      if (finite || (any_inside && any_outside)) blocks[t] = std::move(block);
    }
  });
  std::vector<uint64_t> kept;
  for (std::size_t t = 0; t < targets.size(); ++t) {
    if (all_deep[t]) out.bricks.inside.push_back(targets[t]);
    if (blocks[t]) kept.push_back(t);
  }
  Bricks& B = out.bricks;
  B.coord.resize(kept.size());
  B.phi.resize(kept.size() * kVoxels);
  std::vector<uint32_t> first(kept.size() + 1, 0);
  for (std::size_t i = 0; i < kept.size(); ++i) first[i + 1] = first[i] + blocks[kept[i]]->count;
  if (rp.closest) {
    out.seeds.id.resize(kept.size() * kVoxels);
    out.seeds.table.resize(first.back());
  }
  tbb::parallel_for(std::size_t(0), kept.size(), [&](std::size_t i) {
    const std::size_t t = kept[i];
    auto& c = B.coord[i];
    unpack(targets[t], c[0], c[1], c[2]);
    std::copy_n(blocks[t]->phi, kVoxels, B.phi.data() + i * kVoxels);
    if (rp.closest) {
      uint32_t next = first[i];
      for (int v = 0; v < kVoxels; ++v) {
        uint32_t& id = out.seeds.id[i * kVoxels + std::size_t(v)];
        id = kNoSeed;
        if (!blocks[t]->has[v]) continue;
        out.seeds.table[next] = blocks[t]->seed[v];
        id = next++;
      }
    }
    blocks[t].reset();
  });
  return out;  // not linked: the caller links when it needs neighbours
}

void dilate(Bricks& B, int rings, Seeds* seeds) {
  if (rings <= 0 || B.size() == 0) {
    B.link();
    return;
  }
  const int w = 2 * rings + 1;
  std::vector<uint64_t> keys(B.size() * std::size_t(w * w * w));
  tbb::parallel_for(std::size_t(0), B.size(), [&](std::size_t b) {
    const auto& c = B.coord[b];
    std::size_t k = b * std::size_t(w * w * w);
    for (int dx = -rings; dx <= rings; ++dx)
      for (int dy = -rings; dy <= rings; ++dy)
        for (int dz = -rings; dz <= rings; ++dz) keys[k++] = pack(c[0] + dx, c[1] + dy, c[2] + dz);
  });
  tbb::parallel_sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  if (B.index.size() != B.size()) B.link_index();
  std::vector<int32_t> found(keys.size());
  tbb::parallel_for(std::size_t(0), keys.size(), [&](std::size_t i) {
    int x, y, z;
    unpack(keys[i], x, y, z);
    found[i] = B.find(x, y, z);
  });
  std::vector<uint64_t> added;
  std::vector<float> fill;
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (found[i] < 0) {
      added.push_back(keys[i]);
      fill.push_back(missing_phi(found[i]));
    }
  B.add(added, fill);
  if (seeds) seeds->id.resize(B.size() * kVoxels, kNoSeed);
  B.link();
}

// ---------------------------------------------------------------------------
// Closest-point propagation.

namespace {

// A brick with a one-voxel apron: 10^3 cells, cell (x+1, y+1, z+1) for local
// (x, y, z) in -1..8; apron cells come from the 26 neighbours.
constexpr int kPad = 10, kPadCells = kPad * kPad * kPad;
constexpr int pad(int x, int y, int z) { return ((x + 1) * kPad + (y + 1)) * kPad + (z + 1); }

// Offsets of the 26 neighbours in a padded array.
struct Ring {
  int off[26];
  constexpr Ring() : off() {
    int n = 0;
    for (int dx = -1; dx <= 1; ++dx)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dz = -1; dz <= 1; ++dz)
          if (dx || dy || dz) off[n++] = (dx * kPad + dy) * kPad + dz;
  }
};
constexpr Ring kRing;

// Fills out[kPadCells] from brick b and its neighbours; `missing(o)` gives
// the value for a neighbour that is not stored (kOutside or kInside).
template <typename T, typename Get, typename Missing>
void gather(const Bricks& B, std::size_t b, T* out, Get get, Missing missing) {
  for (int x = -1; x <= 8; ++x)
    for (int y = -1; y <= 8; ++y) {
      const int ox = x < 0 ? -1 : x > 7 ? 1 : 0, oy = y < 0 ? -1 : y > 7 ? 1 : 0;
      for (int z = -1; z <= 8; ++z) {
        const int oz = z < 0 ? -1 : z > 7 ? 1 : 0;
        const int32_t o = (ox | oy | oz) == 0 ? int32_t(b) : B.nbr[b][std::size_t(nbr_slot(ox, oy, oz))];
        out[pad(x, y, z)] = o >= 0 ? get(std::size_t(o), offset(x & 7, y & 7, z & 7)) : missing(o);
      }
    }
}

}  // namespace

void propagate(Bricks& B, Seeds& S, float limit_in, float limit_out) {
  // Gauss-Seidel over bricks: each brick, with its neighbours' seeds in an
  // apron, sweeps its voxels forward and back, every voxel taking the seed
  // of a 26-neighbour whose point is nearer than its own seed's. Bricks are
  // processed in eight colour classes by the parity of their coordinates, so
  // no two neighbours run at once and the result does not depend on the
  // thread count; rounds repeat over bricks near a change until none. A
  // voxel is looked at only when a neighbour's seed changed since its brick
  // was last swept (a stamp per voxel: the round of its last change).
  const std::size_t nb = B.size();
  if (nb == 0) return;
  // Stamps: 0 never changed, 1 a seed, r + 1 changed in round r, 255 a fixed
  // finite value without a seed.
  constexpr uint8_t kSeedStamp = 1, kFixedStamp = 0xff;
  std::vector<uint8_t> stamp(nb * kVoxels);
  tbb::parallel_for(std::size_t(0), nb * kVoxels, [&](std::size_t i) {
    stamp[i] = S.id[i] != kNoSeed ? kSeedStamp : !std::isinf(B.phi[i]) ? kFixedStamp : 0;
  });
  std::vector<int32_t> colour_list[8];
  for (std::size_t b = 0; b < nb; ++b) {
    const auto& c = B.coord[b];
    colour_list[(c[0] & 1) | ((c[1] & 1) << 1) | ((c[2] & 1) << 2)].push_back(int32_t(b));
  }
  std::vector<uint8_t> dirty(nb, 1), changed(nb, 0), swept(nb, 0);  // swept: round last swept, 0 never
  struct Apron {
    uint32_t id[kPadCells];
    uint8_t stamp[kPadCells];
  };
  tbb::enumerable_thread_specific<std::unique_ptr<Apron>> scratch([] { return std::make_unique<Apron>(); });
  for (int round = 1; round < 250; ++round) {
    for (const auto& list : colour_list) {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, list.size(), 4), [&](const auto& r) {
        Apron& A = *scratch.local();
        for (std::size_t li = r.begin(); li != r.end(); ++li) {
          const std::size_t b = std::size_t(list[li]);
          if (!dirty[b]) continue;
          gather(B, b, A.id, [&](std::size_t o, int v) { return S.id[o * kVoxels + std::size_t(v)]; },
                 [](int32_t) { return kNoSeed; });
          gather(B, b, A.stamp, [&](std::size_t o, int v) { return stamp[o * kVoxels + std::size_t(v)]; },
                 [](int32_t) { return uint8_t(0); });
          const uint8_t since = swept[b];  // changes after this are news
          float* phi = B.values(b);
          const auto& c = B.coord[b];
          bool moved = false;
          for (int sweep = 0; sweep < 2; ++sweep)
            for (int i = 0; i < kVoxels; ++i) {
              const int v = sweep == 0 ? i : kVoxels - 1 - i;
              const int x = v >> 6, y = (v >> 3) & 7, z = v & 7, p = pad(x, y, z);
              const uint8_t st = A.stamp[p];
              if (st == kSeedStamp || st == kFixedStamp) continue;
              const uint32_t own = A.id[p];
              const Vec3f g = vec3(float(c[0] * kDim + x), float(c[1] * kDim + y), float(c[2] * kDim + z));
              uint32_t best_id = own;
              float best = -1;
              for (int n = 0; n < 26; ++n) {
                const int q = p + kRing.off[n];
                const uint8_t sq = A.stamp[q];
                if (sq == kFixedStamp || sq <= since) continue;  // nothing new there (0: nothing at all)
                const uint32_t id = A.id[q];
                if (id == best_id) continue;
                if (best < 0) best = own == kNoSeed ? kInf : length2(g - S.table[own].p);
                const float d2 = length2(g - S.table[id].p);
                if (d2 < best) {
                  best = d2;
                  best_id = id;
                }
              }
              if (best_id == own) continue;
              const float d = seed_distance(S.table[best_id], g, best);
              const bool in = phi[v] < 0;
              if (d > (in ? limit_in : limit_out)) continue;
              phi[v] = in ? -d : d;
              A.id[p] = best_id;
              A.stamp[p] = uint8_t(round + 1);
              moved = true;
            }
          if (moved) {
            for (int v = 0; v < kVoxels; ++v) {
              const int p = pad(v >> 6, (v >> 3) & 7, v & 7);
              S.id[b * kVoxels + std::size_t(v)] = A.id[p];
              stamp[b * kVoxels + std::size_t(v)] = A.stamp[p];
            }
          }
          swept[b] = uint8_t(round);
          changed[b] = moved;
        }
      });
    }
    // Next round: bricks next to (or being) one that changed.
    bool any = false;
    tbb::parallel_for(std::size_t(0), nb, [&](std::size_t b) {
      uint8_t d = changed[b];
      for (int j = 0; j < 27 && !d; ++j) {
        const int32_t o = B.nbr[b][std::size_t(j)];
        d = o >= 0 && changed[std::size_t(o)];
      }
      dirty[b] = d;
    });
    for (std::size_t b = 0; b < nb; ++b) {
      any |= changed[b] != 0;
      changed[b] = 0;
    }
    if (!any) break;
  }
}

void clamp(Bricks& B, float c) {
  tbb::parallel_for(std::size_t(0), B.phi.size(), [&](std::size_t i) { B.phi[i] = std::clamp(B.phi[i], -c, c); });
}

// ---------------------------------------------------------------------------
// Separable smoothing.

void convolve(Bricks& B, const std::vector<float>& w, int passes, float c) {
  const std::size_t nb = B.size();
  const int R = int(w.size() / 2);  // kernel radius, at most one brick
  if (nb == 0 || passes <= 0 || R == 0) return;
  std::vector<float> tmp(B.phi.size());
  std::vector<float> outside(kVoxels, c), inside(kVoxels, -c);
  auto brick_ptr = [&](const std::vector<float>& src, std::size_t b, int j) -> const float* {
    const int32_t o = B.nbr[b][std::size_t(j)];
    return o >= 0 ? src.data() + std::size_t(o) * kVoxels : o == kInside ? inside.data() : outside.data();
  };
  for (int it = 0; it < passes; ++it)
    for (int axis = 0; axis < 3; ++axis) {
      const std::vector<float>& src = B.phi;
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, nb, 16), [&](const auto& r) {
        for (std::size_t b = r.begin(); b != r.end(); ++b) {
          // Neighbours before and after along the axis.
          const int jlo = nbr_slot(axis == 0 ? -1 : 0, axis == 1 ? -1 : 0, axis == 2 ? -1 : 0);
          const int jhi = nbr_slot(axis == 0 ? 1 : 0, axis == 1 ? 1 : 0, axis == 2 ? 1 : 0);
          const float* lo = brick_ptr(src, b, jlo);
          const float* mid = src.data() + b * kVoxels;
          const float* hi = brick_ptr(src, b, jhi);
          float* dst = tmp.data() + b * kVoxels;
          if (axis == 0) {  // slabs of 64 along x
            for (int x = 0; x < 8; ++x) {
              float acc[64] = {};
              for (int k = -R; k <= R; ++k) {
                const int xs = x + k;
                const float* sl = xs < 0 ? lo + (xs + 8) * 64 : xs > 7 ? hi + (xs - 8) * 64 : mid + xs * 64;
                const float wk = w[std::size_t(k + R)];
                for (int i = 0; i < 64; ++i) acc[i] += wk * sl[i];
              }
              std::copy_n(acc, 64, dst + x * 64);
            }
          } else if (axis == 1) {  // rows of 8 along z, stepping y
            for (int x = 0; x < 8; ++x)
              for (int y = 0; y < 8; ++y) {
                float acc[8] = {};
                for (int k = -R; k <= R; ++k) {
                  const int ys = y + k;
                  const float* sl = ys < 0 ? lo + x * 64 + (ys + 8) * 8
                                           : ys > 7 ? hi + x * 64 + (ys - 8) * 8 : mid + x * 64 + ys * 8;
                  const float wk = w[std::size_t(k + R)];
                  for (int i = 0; i < 8; ++i) acc[i] += wk * sl[i];
                }
                std::copy_n(acc, 8, dst + x * 64 + y * 8);
              }
          } else {  // along z, within rows
            for (int row = 0; row < 64; ++row) {
              float line[24];
              for (int i = 0; i < 8; ++i) line[i] = lo[row * 8 + i];
              for (int i = 0; i < 8; ++i) line[8 + i] = mid[row * 8 + i];
              for (int i = 0; i < 8; ++i) line[16 + i] = hi[row * 8 + i];
              for (int z = 0; z < 8; ++z) {
                float acc = 0;
                for (int k = -R; k <= R; ++k) acc += w[std::size_t(k + R)] * line[8 + z + k];
                dst[row * 8 + z] = acc;
              }
            }
          }
        }
      });
      B.phi.swap(tmp);
    }
}

void gaussian(Bricks& B, int iterations, float c) {
  static const std::vector<float> w = {1 / 81.f, 4 / 81.f, 10 / 81.f, 16 / 81.f, 19 / 81.f,
                                       16 / 81.f, 10 / 81.f, 4 / 81.f, 1 / 81.f};
  convolve(B, w, iterations, c);
}

void gaussian_variance(Bricks& B, float variance, float c) {
  if (!(variance > 0)) return;
  const float sigma = std::sqrt(variance);
  const int R = std::min(kDim, int(std::ceil(3.0f * sigma)));
  std::vector<float> w(std::size_t(2 * R + 1));
  float sum = 0;
  for (int k = -R; k <= R; ++k) sum += w[std::size_t(k + R)] = std::exp(-0.5f * float(k * k) / variance);
  for (float& x : w) x /= sum;
  convolve(B, w, 1, c);
}

// ---------------------------------------------------------------------------
// Two-to-one upsampling.

Bricks upsample(const Bricks& C, float scale, float lo, float hi) {
  // Fine voxel i sits at coarse coordinate i / 2; a coarse brick's 16^3 fine
  // voxels are the fine bricks 2c + {0, 1}^3.
  const std::size_t nc = C.size();
  std::vector<uint8_t> wanted(nc, 0);
  tbb::parallel_for(std::size_t(0), nc, [&](std::size_t b) {
    const float* v = C.values(b);
    for (int i = 0; i < kVoxels && !wanted[b]; ++i) wanted[b] = v[i] * scale > lo && v[i] * scale < hi;
  });
  std::vector<std::size_t> parents;
  for (std::size_t b = 0; b < nc; ++b)
    if (wanted[b]) parents.push_back(b);
  Bricks F;
  F.coord.resize(parents.size() * 8);
  F.phi.resize(F.coord.size() * kVoxels);
  tbb::enumerable_thread_specific<std::vector<float>> scratch([] { return std::vector<float>(kPadCells); });
  tbb::parallel_for(std::size_t(0), parents.size(), [&](std::size_t pi) {
    const std::size_t b = parents[pi];
    float* a = scratch.local().data();
    gather(C, b, a, [&](std::size_t o, int v) { return C.phi[o * kVoxels + std::size_t(v)]; },
           missing_phi);
    const auto& cc = C.coord[b];
    for (int child = 0; child < 8; ++child) {
      const int ox = child >> 2, oy = (child >> 1) & 1, oz = child & 1;
      const std::size_t f = pi * 8 + std::size_t(child);
      F.coord[f] = {cc[0] * 2 + ox, cc[1] * 2 + oy, cc[2] * 2 + oz};
      float* out = F.phi.data() + f * kVoxels;
      for (int v = 0; v < kVoxels; ++v) {
        // Fine local (x, y, z) in the child -> coarse local coordinate in the parent.
        const int fx = ox * 8 + (v >> 6), fy = oy * 8 + ((v >> 3) & 7), fz = oz * 8 + (v & 7);
        const int x0 = fx >> 1, y0 = fy >> 1, z0 = fz >> 1;
        const float tx = 0.5f * float(fx & 1), ty = 0.5f * float(fy & 1), tz = 0.5f * float(fz & 1);
        float corner[8];
        bool finite = true;
        for (int k = 0; k < 8; ++k) {
          corner[k] = a[pad(x0 + (k >> 2), y0 + ((k >> 1) & 1), z0 + (k & 1))];
          finite &= std::isfinite(corner[k]);
        }
        if (!finite) {
          out[v] = corner[0] < 0 ? -kInf : kInf;
          continue;
        }
        out[v] = trilinear(corner, tx, ty, tz) * scale;
      }
    }
  });
  return F;
}

// ---------------------------------------------------------------------------
// Zero-crossing seeds.

Seeds crossing_seeds(Bricks& B) {
  const std::size_t nb = B.size();
  Seeds S;
  S.id.assign(nb * kVoxels, kNoSeed);
  std::vector<std::vector<Seed>> per_brick(nb);  // in voxel order, numbered below
  std::vector<float> out(B.phi.size());
  tbb::enumerable_thread_specific<std::vector<float>> scratch([] { return std::vector<float>(kPadCells); });
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, nb, 8), [&](const auto& r) {
    float* a = scratch.local().data();
    for (std::size_t b = r.begin(); b != r.end(); ++b) {
      gather(B, b, a, [&](std::size_t o, int v) { return B.phi[o * kVoxels + std::size_t(v)]; },
             missing_phi);
      for (int v = 0; v < kVoxels; ++v) {
        const int x = v >> 6, y = (v >> 3) & 7, z = v & 7, p = pad(x, y, z);
        const float s = a[p];
        const bool in = s < 0;
        const std::size_t i = b * kVoxels + std::size_t(v);
        out[i] = in ? -kInf : kInf;
        if (std::isinf(s)) continue;
        constexpr int step[3] = {kPad * kPad, kPad, 1};
        bool cross = false;
        float g[3];
        for (int ax = 0; ax < 3; ++ax) {
          const float m = a[p - step[ax]], q = a[p + step[ax]];
          cross |= ((m < 0) != in) | ((q < 0) != in);
          const bool fm = std::isfinite(m), fq = std::isfinite(q);
          g[ax] = fm && fq ? 0.5f * (q - m) : fq ? q - s : fm ? s - m : 0.0f;
        }
        if (!cross) continue;
        const float g2 = g[0] * g[0] + g[1] * g[1] + g[2] * g[2];
        if (!(g2 > 1e-8f)) continue;
        const Vec3f grad = vec3(g[0], g[1], g[2]);
        per_brick[b].push_back({voxel_position(B.coord[b], v) - grad * (s / g2), grad / std::sqrt(g2), 0.0f});
        S.id[i] = 0;
        out[i] = s / std::sqrt(g2);
      }
    }
  });
  B.phi.swap(out);
  std::vector<uint32_t> first(nb + 1, 0);
  for (std::size_t b = 0; b < nb; ++b) first[b + 1] = first[b] + uint32_t(per_brick[b].size());
  S.table.resize(first[nb]);
  tbb::parallel_for(std::size_t(0), nb, [&](std::size_t b) {
    uint32_t next = first[b];
    for (int v = 0; v < kVoxels; ++v) {
      uint32_t& id = S.id[b * kVoxels + std::size_t(v)];
      if (id == kNoSeed) continue;
      S.table[next] = per_brick[b][next - first[b]];
      id = next++;
    }
    std::vector<Seed>().swap(per_brick[b]);
  });
  return S;
}

}  // namespace eddy::band
