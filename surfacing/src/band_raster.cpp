// Sparse narrow bands: the sphere rasteriser and dilation. See band.h.
#include "band.h"

#include "eddy/core/cpu_executor.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace eddy::band {

// Rasteriser. A voxel's value is min_j |x - x_j| - R, the exact distance
// outside the union of spheres. Voxels within `deep` of some centre are found
// first with a cheap bit mask per brick row and get -inf; only the others get
// the min over the candidate points.

namespace {

// Spheres: per row (y, z) of the brick (at z * 8 + y) and voxel x along it,
// the least squared distance to the candidates (positions relative to the
// brick's origin) and the first candidate giving it; rows wholly in
// `deep_rows` are skipped. Each candidate visits the rows within `reach` of
// it, the 8 voxels of a row at once (in AVX2 through run_rows).
inline void splat(const Vec3f* cand, std::size_t n, const uint8_t deep_rows[64], float reach, Row8f best[64],
                  Row8i arg[64]) {
  const Row8f xs = Row8f{0, 1, 2, 3, 4, 5, 6, 7};
  for (int r = 0; r < 64; ++r) {
    best[r] = Row8f{} + 1e30f;
    arg[r] = Row8i{};
  }
  const float reach2 = reach * reach;
  const int zr = int(std::ceil(reach)) + 1;
  for (std::size_t c = 0; c < n; ++c) {
    const Vec3f u = cand[c];
    const Row8f dx = xs - u.x, dx2 = dx * dx;
    const int z0 = std::max(0, int(std::floor(u.z)) - zr), z1 = std::min(7, int(std::floor(u.z)) + zr);
    const int y0 = std::max(0, int(std::floor(u.y)) - zr), y1 = std::min(7, int(std::floor(u.y)) + zr);
    for (int z = z0; z <= z1; ++z)
      for (int y = y0; y <= y1; ++y) {
        const int r = z * 8 + y;
        if (deep_rows[r] == 0xff) continue;
        const float base = (z - u.z) * (z - u.z) + (y - u.y) * (y - u.y);
        if (base > reach2) continue;
        const Row8f d2 = base + dx2;
        const Row8i nearer = d2 < best[r];
        best[r] = nearer ? d2 : best[r];
        arg[r] = nearer ? Row8i{} + int32_t(c) : arg[r];
      }
  }
}

}  // namespace

Raster rasterize(const Vec3f* U, std::size_t n, const RasterParams& rp) {
  const bool wide = CpuExecutor::uses_avx2();
  Raster out;
  if (n == 0) return out;
  const float Rv = rp.radius, deep = std::min(rp.deep, rp.radius);
  const Ellipsoid* shape = rp.shape;
  // How far from its centre a point's values are computed: its sphere's or
  // ellipsoid's longest radius plus the shell.
  auto reach_of = [&](uint32_t i) { return (shape ? Rv * shape[i].outer : Rv) + rp.reach; };

  struct Item {
    uint64_t key;
    Vec3f u;
    uint32_t id;
  };
  std::vector<Item> items;
  resize_on_huge_pages(items, n);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 8192), [&](const auto& r) {
    for (std::size_t i = r.begin(); i != r.end(); ++i) {
      const Vec3f u = U[i];
      items[i] = {pack(int(std::floor(u.x / kDim)), int(std::floor(u.y / kDim)), int(std::floor(u.z / kDim))), u,
                  uint32_t(i)};
    }
  });
  tbb::parallel_sort(items.begin(), items.end(),
                     [](const Item& a, const Item& b) { return a.key < b.key || (a.key == b.key && a.id < b.id); });
  std::vector<std::pair<uint64_t, std::pair<uint32_t, uint32_t>>> occupied;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i + 1;
    while (j < n && items[j].key == items[i].key) ++j;
    occupied.push_back({items[i].key, {uint32_t(i), uint32_t(j)}});
    i = j;
  }
  const std::unordered_map<uint64_t, std::pair<uint32_t, uint32_t>> bins(occupied.begin(), occupied.end());
  float reach = Rv + rp.reach;  // the longest
  if (shape)
    for (std::size_t i = 0; i < n; ++i) reach = std::max(reach, reach_of(uint32_t(i)));
  const int K = int(std::ceil(reach / kDim));

  // Target bricks: those within reach of some occupied brick's point bounds.
  std::vector<std::vector<uint64_t>> parts(occupied.size());
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, occupied.size(), 64), [&](const auto& r) {
    for (std::size_t o = r.begin(); o != r.end(); ++o) {
      Vec3f lo = vec3(1e30f, 1e30f, 1e30f), hi = vec3(-1e30f, -1e30f, -1e30f);
      for (uint32_t i = occupied[o].second.first; i < occupied[o].second.second; ++i) {
        const Vec3f u = items[i].u, a = vec3(reach_of(items[i].id));
        lo = vec3(std::min(lo.x, u.x - a.x), std::min(lo.y, u.y - a.y), std::min(lo.z, u.z - a.z));
        hi = vec3(std::max(hi.x, u.x + a.x), std::max(hi.y, u.y + a.y), std::max(hi.z, u.z + a.z));
      }
      const int x0 = int(std::floor(lo.x / kDim)), x1 = int(std::floor(hi.x / kDim));
      const int y0 = int(std::floor(lo.y / kDim)), y1 = int(std::floor(hi.y / kDim));
      const int z0 = int(std::floor(lo.z / kDim)), z1 = int(std::floor(hi.z / kDim));
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

  // Every target's values, in place (the kept ones are gathered below), and
  // with `closest` its seeds in voxel order, appended to its thread's list.
  const std::size_t nt = targets.size();
  Values phi_all(nt * kVoxels);
  std::vector<uint8_t> all_deep(nt, 0), kept_target(nt, 0);
  struct SeedRun {
    const LargeVector<Seed>* list = nullptr;
    uint32_t first = 0, count = 0;
    std::array<uint64_t, 8> has{};  // voxel v holds a seed: bit v & 63 of word v >> 6
  };
  std::vector<SeedRun> runs(rp.closest ? nt : 0);
  tbb::enumerable_thread_specific<LargeVector<Seed>> thread_seeds;
  tbb::enumerable_thread_specific<std::vector<Vec3f>> scratch;
  tbb::enumerable_thread_specific<std::vector<uint32_t>> scratch_ids;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, nt, 16), [&](const auto& r) {
    auto& cand = scratch.local();
    auto& cand_id = scratch_ids.local();  // with shape: the candidates' points
    auto& seeds_here = thread_seeds.local();
    for (std::size_t t = r.begin(); t != r.end(); ++t) {
      int bx, by, bz;
      unpack(targets[t], bx, by, bz);
      const Vec3f origin = vec3(float(bx * kDim), float(by * kDim), float(bz * kDim));
      // Deep mask, one byte per (y, z) row of 8 voxels along x: the voxels
      // strictly within `deep` of some point. An OR, so the points are taken
      // in any order: those of the brick's own bin first, which fill the
      // whole mask of a brick inside the liquid soonest, and the search stops
      // there (the other points could add nothing).
      uint8_t deep_rows[64] = {};
      auto add_deep = [&](Vec3f u, float d) {
        const float d2 = d * d;
        const int z0 = std::max(0, int(std::ceil(u.z - d))), z1 = std::min(7, int(std::floor(u.z + d)));
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
      };
      auto mask_full = [&] {
        uint64_t all = ~uint64_t(0);
        for (int w = 0; w < 8; ++w) {
          uint64_t word;
          std::memcpy(&word, deep_rows + 8 * w, sizeof word);
          all &= word;
        }
        return all == ~uint64_t(0);
      };
      bool every_deep = false;
      if (deep > 0) {
        const int side = 2 * K + 1, bins_around = side * side * side, own = bins_around / 2;
        for (int j = -1; j < bins_around && !every_deep; ++j) {
          if (j == own) continue;
          const int k = j < 0 ? own : j, dx = k % side - K, dy = (k / side) % side - K, dz = k / (side * side) - K;
          const auto it = bins.find(pack(bx + dx, by + dy, bz + dz));
          if (it == bins.end()) continue;
          for (uint32_t i = it->second.first; i < it->second.second; ++i) {
            const Vec3f u = items[i].u - origin;
            const float d = shape ? deep * shape[items[i].id].inner : deep;
            if (u.x + d <= 0 || u.x - d >= 7 || u.y + d <= 0 || u.y - d >= 7 || u.z + d <= 0 || u.z - d >= 7)
              continue;  // the open ball misses the brick's voxels
            add_deep(u, d);
          }
          every_deep = mask_full();
        }
      }
      if (every_deep) {
        all_deep[t] = 1;
        continue;
      }
      // Candidates: points whose reach touches this brick (relative to its
      // origin), in bin order (ties in distance go to the first).
      cand.clear();
      cand_id.clear();
      for (int dz = -K; dz <= K; ++dz)
        for (int dy = -K; dy <= K; ++dy)
          for (int dx = -K; dx <= K; ++dx) {
            const auto it = bins.find(pack(bx + dx, by + dy, bz + dz));
            if (it == bins.end()) continue;
            for (uint32_t i = it->second.first; i < it->second.second; ++i) {
              const Vec3f u = items[i].u - origin;
              const float ex = std::max({0.0f, -u.x, u.x - 7.0f}), ey = std::max({0.0f, -u.y, u.y - 7.0f}),
                          ez = std::max({0.0f, -u.z, u.z - 7.0f});
              const float a = shape ? reach_of(items[i].id) : reach;
              if (ex * ex + ey * ey + ez * ez > a * a) continue;
              cand.push_back(u);
              if (shape) cand_id.push_back(items[i].id);
            }
          }
      if (cand.empty()) continue;
      // Squared distance to the nearest candidate for the other voxels
      // (spheres), or the least first-order distance (ellipsoids).
      float best[kVoxels];
      int32_t arg[kVoxels];
      Row8f rows_best[64];  // spheres: row (y, z) at z * 8 + y, lane x
      Row8i rows_arg[64];
      std::fill_n(best, kVoxels, 1e30f);
      if (shape) {
        for (int z = 0; z < 8; ++z)
          for (int y = 0; y < 8; ++y) {
            if (deep_rows[z * 8 + y] == 0xff) continue;
            for (std::size_t c = 0; c < cand.size(); ++c) {
              const Vec3f u = cand[c];
              const Mat3f& G = shape[cand_id[c]].G;
              const float a = reach_of(cand_id[c]);
              if ((z - u.z) * (z - u.z) + (y - u.y) * (y - u.y) > a * a) continue;
              // Along the row, G d and G G d are affine in x (G symmetric).
              const Vec3f d0 = vec3(-u.x, float(y) - u.y, float(z) - u.z);
              const Vec3f q0 = G * d0, gx = vec3(G.r0.x, G.r1.x, G.r2.x);
              const Vec3f m0 = G * q0, mx = G * gx;
              for (int x = 0; x < 8; ++x) {
                const Vec3f q = q0 + gx * float(x), m = m0 + mx * float(x);
                const float s2 = length2(q), t2 = length2(m);
                const float s = std::sqrt(s2);
                const float phi = t2 > 1e-20f ? (s - Rv) * s / std::sqrt(t2) : -Rv * shape[cand_id[c]].inner;
                const int v = offset(x, y, z);
                if (phi < best[v]) {
                  best[v] = phi;
                  arg[v] = int32_t(c);
                }
              }
            }
          }
      } else {
        run_rows(wide, [&] { splat(cand.data(), cand.size(), deep_rows, reach, rows_best, rows_arg); });
        for (int v = 0; v < kVoxels; ++v) {
          const int x = v >> 6, y = (v >> 3) & 7, z = v & 7;
          best[v] = rows_best[z * 8 + y][x];
          arg[v] = rows_arg[z * 8 + y][x];
        }
      }
      float* phi_out = phi_all.data() + t * kVoxels;
      SeedRun run;
      run.list = &seeds_here;
      run.first = uint32_t(seeds_here.size());
      bool finite = false, any_inside = false, any_outside = false;
      for (int v = 0; v < kVoxels; ++v) {
        const int x = v >> 6, y = (v >> 3) & 7, z = v & 7;
        if (deep_rows[z * 8 + y] & (1u << x)) {
          phi_out[v] = -kInf;
          any_inside = true;
          continue;
        }
        const float phi = best[v] < 1e29f ? (shape ? best[v] : std::sqrt(best[v]) - Rv) : kInf;
        if (phi < rp.reach) {
          phi_out[v] = phi;
          finite = true;
          if (rp.closest) {
            const Vec3f u = cand[std::size_t(arg[v])], x_rel = vec3(float(x), float(y), float(z));
            const Vec3f d = x_rel - u;
            if (shape) {
              // The boundary point along d in the ellipsoid's metric, the
              // normal along the gradient G G d there.
              const Mat3f& G = shape[cand_id[std::size_t(arg[v])]].G;
              const Vec3f q = G * d, m = G * q;
              const float s = length(q), t = length(m);
              const Vec3f p = s > 1e-6f ? d * (Rv / s) : vec3(Rv, 0.0f, 0.0f);
              const float lp = length(p);
              seeds_here.push_back({u + p + origin, t > 1e-12f ? m / t : vec3(1, 0, 0), lp > 0 ? 1.0f / lp : 0.0f});
            } else {
              const float len = std::sqrt(best[v]);
              const Vec3f n = len > 1e-6f ? d / len : vec3(1, 0, 0);
              seeds_here.push_back({u + n * Rv + origin, n, Rv > 0 ? 1.0f / Rv : 0.0f});
            }
            run.has[std::size_t(v >> 6)] |= uint64_t(1) << (v & 63);
            ++run.count;
          }
        } else {
          phi_out[v] = phi < 0 ? -kInf : kInf;
          (phi < 0 ? any_inside : any_outside) = true;
        }
      }
      kept_target[t] = finite || (any_inside && any_outside);
      if (!rp.closest) continue;
      if (kept_target[t]) runs[t] = run;
      else seeds_here.resize(run.first);
    }
  });
  std::vector<uint64_t> kept;
  for (std::size_t t = 0; t < nt; ++t) {
    if (all_deep[t]) out.bricks.inside.push_back(targets[t]);
    if (kept_target[t]) kept.push_back(t);
  }
  Bricks& B = out.bricks;
  B.coord.resize(kept.size());
  B.phi.resize(kept.size() * kVoxels);
  std::vector<uint32_t> first(kept.size() + 1, 0);
  if (rp.closest) {
    for (std::size_t i = 0; i < kept.size(); ++i) first[i + 1] = first[i] + runs[kept[i]].count;
    out.seeds.id.resize(kept.size() * kVoxels);
    out.seeds.table.resize(first.back());
  }
  tbb::parallel_for(std::size_t(0), kept.size(), [&](std::size_t i) {
    const std::size_t t = kept[i];
    auto& c = B.coord[i];
    unpack(targets[t], c[0], c[1], c[2]);
    std::copy_n(phi_all.data() + t * kVoxels, kVoxels, B.phi.data() + i * kVoxels);
    if (rp.closest) {
      const SeedRun& run = runs[t];
      std::copy_n(run.list->data() + run.first, run.count, out.seeds.table.data() + first[i]);
      uint32_t next = first[i];
      uint32_t* id = out.seeds.id.data() + i * kVoxels;
      for (int v = 0; v < kVoxels; ++v) id[v] = (run.has[std::size_t(v >> 6)] >> (v & 63)) & 1u ? next++ : kNoSeed;
    }
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

}  // namespace eddy::band
