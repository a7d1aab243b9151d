// Sparse narrow bands on 8^3 bricks: rasteriser, dilation, closest-point
// propagation, separable Gaussian, zero-crossing seeds. See band.h.
#include "band.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <cmath>
#include <memory>

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

void Bricks::link() {
  index.clear();
  index.reserve(coord.size() * 2);
  for (std::size_t b = 0; b < coord.size(); ++b) index.emplace(pack(coord[b][0], coord[b][1], coord[b][2]), int32_t(b));
  nbr.resize(coord.size());
  tbb::parallel_for(std::size_t(0), coord.size(), [&](std::size_t b) {
    const auto& c = coord[b];
    for (int dx = -1; dx <= 1; ++dx)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dz = -1; dz <= 1; ++dz)
          nbr[b][(dx + 1) * 9 + (dy + 1) * 3 + dz + 1] = find(c[0] + dx, c[1] + dy, c[2] + dz);
  });
}

namespace {

// The voxel at local (x, y, z) (each in -8..15) of brick b: its brick and offset.
inline int32_t locate(const Bricks& B, int32_t b, int x, int y, int z, int& off) {
  const int ox = (x >> 3), oy = (y >> 3), oz = (z >> 3);  // -1, 0 or 1
  off = offset(x & 7, y & 7, z & 7);
  if ((ox | oy | oz) == 0) return b;
  return B.nbr[b][std::size_t((ox + 1) * 9 + (oy + 1) * 3 + oz + 1)];
}

constexpr int nbr_slot(int dx, int dy, int dz) { return (dx + 1) * 9 + (dy + 1) * 3 + dz + 1; }

inline Vec3f voxel_position(const std::array<int, 3>& c, int v) {
  return vec3(float(c[0] * kDim + (v >> 6)), float(c[1] * kDim + ((v >> 3) & 7)), float(c[2] * kDim + (v & 7)));
}

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
  B.link();
  return out;
}

void dilate(Bricks& B, int rings, Seeds* seeds) {
  if (rings <= 0 || B.size() == 0) return;
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
  std::vector<uint8_t> fresh(keys.size());
  tbb::parallel_for(std::size_t(0), keys.size(), [&](std::size_t i) { fresh[i] = B.index.count(keys[i]) == 0; });
  std::vector<uint64_t> added;
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (fresh[i]) added.push_back(keys[i]);
  std::vector<float> fill(added.size());
  tbb::parallel_for(std::size_t(0), added.size(), [&](std::size_t i) {
    fill[i] = std::binary_search(B.inside.begin(), B.inside.end(), added[i]) ? -kInf : kInf;
  });
  B.add(added, fill);
  if (seeds) seeds->id.resize(B.size() * kVoxels, kNoSeed);
  B.link();
}

// ---------------------------------------------------------------------------
// Closest-point propagation.

void propagate(Bricks& B, Seeds& S, float limit_in, float limit_out) {
  // An incremental brushfire: in pass k a voxel looks only at the neighbours
  // that changed in pass k - 1 (layer == k - 1) and takes a neighbour's seed
  // when that seed's point is nearer than its own. Every neighbour's every
  // seed is thus seen once, and passes repeat until nothing changes, so a
  // voxel reached first along a longer path (26-neighbour hops are not
  // Euclidean) still ends with the nearest seed its neighbours know.
  const std::size_t nb = B.size();
  if (nb == 0) return;
  constexpr uint8_t kSeed = 0, kFixed = 254, kNone = 255;  // layer: pass of the last change, or these
  std::vector<uint8_t> layer(nb * kVoxels);
  tbb::parallel_for(std::size_t(0), nb * kVoxels, [&](std::size_t i) {
    layer[i] = S.id[i] != kNoSeed ? kSeed : std::isinf(B.phi[i]) ? kNone : kFixed;
  });
  struct Marks {
    uint64_t fresh[8];
  };
  std::vector<Marks> marks(nb, Marks{});
  std::vector<uint8_t> active(nb, 1), changed(nb, 0);
  std::vector<int32_t> list;
  std::vector<uint32_t> pending(S.id.size());  // this pass's new seeds, committed after it
  for (int k = 1; k < kFixed; ++k) {
    list.clear();
    for (std::size_t b = 0; b < nb; ++b)
      if (active[b]) list.push_back(int32_t(b));
    if (list.empty()) break;
    const uint8_t last = uint8_t(k - 1);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, list.size(), 8), [&](const auto& r) {
      for (std::size_t li = r.begin(); li != r.end(); ++li) {
        const int32_t b = list[li];
        const uint8_t* L = layer.data() + std::size_t(b) * kVoxels;
        float* phi = B.values(std::size_t(b));
        const uint32_t* ids = S.id.data() + std::size_t(b) * kVoxels;
        uint32_t* next = pending.data() + std::size_t(b) * kVoxels;
        Marks& m = marks[std::size_t(b)];
        for (int v = 0; v < kVoxels; ++v) {
          if (L[v] == kSeed || L[v] == kFixed) continue;
          const int x = v >> 6, y = (v >> 3) & 7, z = v & 7;
          const Vec3f g = voxel_position(B.coord[std::size_t(b)], v);
          float best = ids[v] == kNoSeed ? kInf : length2(g - S.table[ids[v]].p);
          uint32_t best_id = kNoSeed;
          for (int dx = -1; dx <= 1; ++dx)
            for (int dy = -1; dy <= 1; ++dy)
              for (int dz = -1; dz <= 1; ++dz) {
                int off;
                const int32_t nbk = locate(B, b, x + dx, y + dy, z + dz, off);
                if (nbk < 0) continue;
                const std::size_t i = std::size_t(nbk) * kVoxels + std::size_t(off);
                if (layer[i] != last) continue;  // seen before, or nothing to pass on
                const uint32_t id = S.id[i];
                if (id == best_id || id == ids[v]) continue;
                const float d2 = length2(g - S.table[id].p);
                if (d2 < best) {
                  best = d2;
                  best_id = id;
                }
              }
          if (best_id == kNoSeed) continue;
          const float d = seed_distance(S.table[best_id], g, best);
          const bool in = phi[v] < 0;
          if (d > (in ? limit_in : limit_out)) continue;
          phi[v] = in ? -d : d;
          next[v] = best_id;
          m.fresh[v >> 6] |= uint64_t(1) << (v & 63);
        }
      }
    });
    // Commit this pass: changed voxels take layer k and their new seed. Until
    // now neighbours read their old layer and seed, and their phi only they did.
    tbb::parallel_for(std::size_t(0), list.size(), [&](std::size_t li) {
      const std::size_t b = std::size_t(list[li]);
      Marks& m = marks[b];
      uint8_t* L = layer.data() + b * kVoxels;
      uint32_t* ids = S.id.data() + b * kVoxels;
      const uint32_t* next = pending.data() + b * kVoxels;
      bool any = false;
      for (int w = 0; w < 8; ++w) {
        for (uint64_t bits = m.fresh[w]; bits; bits &= bits - 1) {
          const int v = w * 64 + __builtin_ctzll(bits);
          L[v] = uint8_t(k);
          ids[v] = next[v];
        }
        any |= m.fresh[w] != 0;
        m.fresh[w] = 0;
      }
      changed[b] = any;
    });
    tbb::parallel_for(std::size_t(0), nb, [&](std::size_t b) {
      uint8_t a = changed[b];
      for (int j = 0; j < 27 && !a; ++j) {
        const int32_t o = B.nbr[b][std::size_t(j)];
        a = o >= 0 && changed[std::size_t(o)];
      }
      active[b] = a;
    });
    for (int32_t b : list) changed[std::size_t(b)] = 0;
  }
}

void clamp(Bricks& B, float c) {
  tbb::parallel_for(std::size_t(0), B.phi.size(), [&](std::size_t i) { B.phi[i] = std::clamp(B.phi[i], -c, c); });
}

// ---------------------------------------------------------------------------
// Separable smoothing.

void gaussian(Bricks& B, int iterations, float c) {
  const std::size_t nb = B.size();
  if (nb == 0 || iterations <= 0) return;
  static constexpr float w[9] = {1 / 81.f, 4 / 81.f, 10 / 81.f, 16 / 81.f, 19 / 81.f,
                                 16 / 81.f, 10 / 81.f, 4 / 81.f, 1 / 81.f};
  std::vector<float> tmp(B.phi.size());
  std::vector<float> outside(kVoxels, c), inside(kVoxels, -c);
  auto brick_ptr = [&](const std::vector<float>& src, std::size_t b, int j) -> const float* {
    const int32_t o = B.nbr[b][std::size_t(j)];
    return o >= 0 ? src.data() + std::size_t(o) * kVoxels : o == kInside ? inside.data() : outside.data();
  };
  for (int it = 0; it < iterations; ++it)
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
              for (int k = -4; k <= 4; ++k) {
                const int xs = x + k;
                const float* s = xs < 0 ? lo + (xs + 8) * 64 : xs > 7 ? hi + (xs - 8) * 64 : mid + xs * 64;
                const float wk = w[k + 4];
                for (int i = 0; i < 64; ++i) acc[i] += wk * s[i];
              }
              std::copy_n(acc, 64, dst + x * 64);
            }
          } else if (axis == 1) {  // rows of 8 along z, stepping y
            for (int x = 0; x < 8; ++x)
              for (int y = 0; y < 8; ++y) {
                float acc[8] = {};
                for (int k = -4; k <= 4; ++k) {
                  const int ys = y + k;
                  const float* s = ys < 0 ? lo + x * 64 + (ys + 8) * 8 : ys > 7 ? hi + x * 64 + (ys - 8) * 8
                                                                                : mid + x * 64 + ys * 8;
                  const float wk = w[k + 4];
                  for (int i = 0; i < 8; ++i) acc[i] += wk * s[i];
                }
                std::copy_n(acc, 8, dst + x * 64 + y * 8);
              }
          } else {  // along z, within rows
            for (int row = 0; row < 64; ++row) {
              float line[16];
              for (int i = 0; i < 4; ++i) line[i] = lo[row * 8 + 4 + i];
              for (int i = 0; i < 8; ++i) line[4 + i] = mid[row * 8 + i];
              for (int i = 0; i < 4; ++i) line[12 + i] = hi[row * 8 + i];
              for (int z = 0; z < 8; ++z) {
                float a = 0;
                for (int k = 0; k < 9; ++k) a += w[k] * line[z + k];
                dst[row * 8 + z] = a;
              }
            }
          }
        }
      });
      B.phi.swap(tmp);
    }
}

// ---------------------------------------------------------------------------
// Zero-crossing seeds.

Seeds crossing_seeds(Bricks& B) {
  const std::size_t nb = B.size();
  Seeds S;
  S.id.assign(nb * kVoxels, kNoSeed);
  std::vector<Seed> local(nb * kVoxels);  // per voxel first, compacted below
  std::vector<float> out(B.phi.size());
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, nb, 16), [&](const auto& r) {
    for (std::size_t bi = r.begin(); bi != r.end(); ++bi) {
      const int32_t b = int32_t(bi);
      const float* phi = B.values(bi);
      auto value = [&](int x, int y, int z) {
        int off;
        const int32_t o = locate(B, b, x, y, z, off);
        return o >= 0 ? B.phi[std::size_t(o) * kVoxels + std::size_t(off)] : o == kInside ? -kInf : kInf;
      };
      for (int v = 0; v < kVoxels; ++v) {
        const int x = v >> 6, y = (v >> 3) & 7, z = v & 7;
        const float s = phi[v];
        const bool in = s < 0;
        out[bi * kVoxels + std::size_t(v)] = in ? -kInf : kInf;
        if (std::isinf(s)) continue;
        const float n[6] = {value(x - 1, y, z), value(x + 1, y, z), value(x, y - 1, z),
                            value(x, y + 1, z), value(x, y, z - 1), value(x, y, z + 1)};
        bool cross = false;
        for (float q : n) cross |= (q < 0) != in;
        if (!cross) continue;
        float g[3];
        for (int a = 0; a < 3; ++a) {
          const float m = n[2 * a], p = n[2 * a + 1];
          const bool fm = std::isfinite(m), fp = std::isfinite(p);
          g[a] = fm && fp ? 0.5f * (p - m) : fp ? p - s : fm ? s - m : 0.0f;
        }
        const float g2 = g[0] * g[0] + g[1] * g[1] + g[2] * g[2];
        if (!(g2 > 1e-8f)) continue;
        const Vec3f at = voxel_position(B.coord[bi], v);
        const Vec3f grad = vec3(g[0], g[1], g[2]);
        local[bi * kVoxels + std::size_t(v)] = {at - grad * (s / g2), grad / std::sqrt(g2), 0.0f};
        S.id[bi * kVoxels + std::size_t(v)] = 0;
        out[bi * kVoxels + std::size_t(v)] = s / std::sqrt(g2);
      }
    }
  });
  B.phi.swap(out);
  uint32_t next = 0;
  for (std::size_t i = 0; i < S.id.size(); ++i)
    if (S.id[i] != kNoSeed) S.id[i] = next++;
  S.table.resize(next);
  tbb::parallel_for(std::size_t(0), S.id.size(), [&](std::size_t i) {
    if (S.id[i] != kNoSeed) S.table[S.id[i]] = local[i];
  });
  return S;
}

}  // namespace eddy::band
