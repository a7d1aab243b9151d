// Sparse narrow bands: closest-point propagation, separable smoothing,
// two-to-one upsampling and zero-crossing seeds. See band.h.
#include "band.h"

#include "eddy/core/cpu_executor.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <atomic>
#include <memory>
#include <stdexcept>

namespace eddy::band {

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

// 512 voxels as bits: word x, bit y * 8 + z (the voxel order of offset()).
using Mask = std::array<uint64_t, 8>;
inline bool test(const Mask& m, int v) { return (m[std::size_t(v >> 6)] >> (v & 63)) & 1u; }
inline bool any(const Mask& m) {
  uint64_t o = 0;
  for (uint64_t w : m) o |= w;
  return o != 0;
}

// The voxels of brick b with a 26-neighbour set in `m` (its own bricks' and
// its neighbours' masks): the set bits are placed on a 10^3 frame, one
// 100-bit word per x (bit y * 10 + z, the apron included), dilated by one
// voxel along each axis, and the frame's inner 8^3 read back. Each set bit
// on the frame is also handed to on_bit(padded cell, brick, voxel), and
// rows[x] gets bit y where the frame's row (x, y) holds a set bit.
template <typename OnBit>
Mask dilated(const Bricks& B, const std::vector<Mask>& m, std::size_t b, uint16_t rows[kPad], OnBit on_bit) {
  using Word = unsigned __int128;
  Word w[kPad] = {};
  for (int j = 0; j < 27; ++j) {
    const int32_t o = j == nbr_slot(0, 0, 0) ? int32_t(b) : B.nbr[b][std::size_t(j)];
    if (o < 0) continue;
    const int ox = j / 9 - 1, oy = (j / 3) % 3 - 1, oz = j % 3 - 1;
    const Mask& src = m[std::size_t(o)];
    // A neighbour reaches the frame with its layer of voxels next to b only.
    const uint64_t keep = (oy < 0 ? 0xff00000000000000ull : oy > 0 ? 0xffull : ~0ull) &
                          (oz < 0 ? 0x8080808080808080ull : oz > 0 ? 0x0101010101010101ull : ~0ull);
    for (int x = ox < 0 ? kDim - 1 : 0; x < (ox > 0 ? 1 : kDim); ++x) {
      const int px = x + kDim * ox + 1;
      for (uint64_t bits = src[std::size_t(x)] & keep; bits; bits &= bits - 1) {
        const int yz = __builtin_ctzll(bits), py = (yz >> 3) + kDim * oy + 1, pz = (yz & 7) + kDim * oz + 1;
        w[px] |= Word(1) << (py * kPad + pz);
        on_bit((px * kPad + py) * kPad + pz, std::size_t(o), (x << 6) | yz);
      }
    }
  }
  for (int x = 0; x < kPad; ++x) {
    uint16_t o = 0;
    for (int y = 0; y < kPad; ++y) o |= uint16_t(((w[x] >> (y * kPad)) & 0x3ff) != 0) << y;
    rows[x] = o;
  }
  // Shifts carry a bit across a row only into the apron, which is not read back.
  for (Word& r : w) r |= (r << 1) | (r >> 1);
  for (Word& r : w) r |= (r << kPad) | (r >> kPad);
  Mask out{};
  for (int x = 0; x < kDim; ++x) {
    const Word r = w[x] | w[x + 1] | w[x + 2];
    uint64_t o = 0;
    for (int y = 0; y < kDim; ++y) o |= uint64_t((r >> ((y + 1) * kPad + 1)) & 0xff) << (y * kDim);
    out[std::size_t(x)] = o;
  }
  return out;
}

// The seed points on a padded brick, as three coordinate arrays (far away
// where no seed is set, so never the nearest).
struct SeedFrame {
  float x[kPadCells], y[kPadCells], z[kPadCells];
  uint32_t id[kPadCells];
};

// For the row of 8 voxels (x, y, 0..7) of a brick (padded cell p0 for z = 0,
// index-space position (gx, gy, gz0 + z)): the squared distance to the
// nearest of the 26 neighbours' seed points and which neighbour holds it
// (the first in kRing order on a tie), 8 voxels per instruction in the AVX2
// copy (run_rows). Only the neighbours in the rows (x + dx, y + dy) with bit
// (dx + 1) * 3 + dy + 1 set in `near` are read: the others hold no seed.
inline void nearest_in_row(const SeedFrame& F, int p0, unsigned near, float gx, float gy, float gz0,
                           float best_out[8], int at_out[8]) {
  const Row8f gz = gz0 + Row8f{0, 1, 2, 3, 4, 5, 6, 7};
  Row8f best = Row8f{} + kInf;
  Row8i at = Row8i{};
  for (; near; near &= near - 1) {
    const int row = __builtin_ctz(near);
    for (int k = row * 3; k < row * 3 + 3; ++k) {
      if (k == 13) continue;  // the voxel itself
      const int n = k < 13 ? k : k - 1, q = p0 + kRing.off[n];
      Row8f px, py, pz;
      std::memcpy(&px, F.x + q, sizeof px);
      std::memcpy(&py, F.y + q, sizeof py);
      std::memcpy(&pz, F.z + q, sizeof pz);
      const Row8f dx = gx - px, dy = gy - py, dz = gz - pz;
      const Row8f d2 = dx * dx + dy * dy + dz * dz;
      const Row8i nearer = d2 < best;
      at = nearer ? Row8i{} + n : at;
      best = nearer ? d2 : best;
    }
  }
  std::memcpy(best_out, &best, sizeof best);
  std::memcpy(at_out, &at, sizeof at);
}

}  // namespace

void propagate(Bricks& B, Seeds& S, float limit_in, float limit_out) {
  // A front moving out from the seeds, one voxel per pass: in each pass
  // every voxel next to one whose seed changed in the pass before looks at
  // those neighbours' seeds and takes the nearest, if nearer than its own
  // (Jacobi: all updates of a pass are computed from the state before it,
  // then applied, so the result does not depend on the thread count or
  // order). The voxels to look at come from bit masks (dilated() above), so
  // a pass costs in proportion to the front, not to the band.
  const std::size_t nb = B.size();
  if (nb == 0) return;
  // frozen: seeds and finite values without a seed (never change).
  std::vector<Mask> frozen(nb), changed(nb), next(nb);
  tbb::parallel_for(std::size_t(0), nb, [&](std::size_t b) {
    Mask f{}, c{};
    for (int v = 0; v < kVoxels; ++v) {
      const std::size_t i = b * kVoxels + std::size_t(v);
      const uint64_t bit = uint64_t(1) << (v & 63);
      if (S.id[i] != kNoSeed) {
        f[std::size_t(v >> 6)] |= bit;
        c[std::size_t(v >> 6)] |= bit;
      } else if (!std::isinf(B.phi[i])) {
        f[std::size_t(v >> 6)] |= bit;
      }
    }
    frozen[b] = f;
    changed[b] = c;
  });
  std::vector<uint8_t> active(nb);  // some seed changed in the brick or a neighbour
  struct Update {
    uint16_t v;
    uint32_t id;
    float phi;
  };
  std::vector<std::vector<Update>> updates(nb);
  constexpr float kFar = 1e15f;
  struct Apron {
    SeedFrame frame;
    std::vector<int> set;  // the cells holding a seed
  };
  tbb::enumerable_thread_specific<std::unique_ptr<Apron>> scratch([&] {
    auto a = std::make_unique<Apron>();
    std::fill_n(a->frame.id, kPadCells, kNoSeed);
    std::fill_n(a->frame.x, kPadCells, kFar);
    std::fill_n(a->frame.y, kPadCells, kFar);
    std::fill_n(a->frame.z, kPadCells, kFar);
    return a;
  });
  const bool wide = CpuExecutor::uses_avx2();
  for (int pass = 0; pass < 100000; ++pass) {
    tbb::parallel_for(std::size_t(0), nb, [&](std::size_t b) {
      uint8_t a = any(changed[b]);
      for (int j = 0; j < 27 && !a; ++j) {
        const int32_t o = B.nbr[b][std::size_t(j)];
        a = o >= 0 && any(changed[std::size_t(o)]);
      }
      active[b] = a;
    });
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, nb, 8), [&](const auto& r) {
      Apron& A = *scratch.local();
      for (std::size_t b = r.begin(); b != r.end(); ++b) {
        std::vector<Update>& up = updates[b];
        up.clear();
        if (!active[b]) continue;
        // The seed points of the neighbours that changed in the last pass,
        // on the padded brick (far away elsewhere, so never the nearest).
        // (The frame is all kNoSeed / kFar between bricks: the cells set are
        // reset below.)
        SeedFrame& F = A.frame;
        A.set.clear();
        uint16_t rows[kPad];
        Mask look = dilated(B, changed, b, rows, [&](int p, std::size_t o, int v) {
          const uint32_t id = S.id[o * kVoxels + std::size_t(v)];
          const Vec3f q = S.table[id].p;
          F.id[p] = id;
          F.x[p] = q.x;
          F.y[p] = q.y;
          F.z[p] = q.z;
          A.set.push_back(p);
        });
        for (int x = 0; x < kDim; ++x) look[std::size_t(x)] &= ~frozen[b][std::size_t(x)];
        const auto& c = B.coord[b];
        const float* phi = B.values(b);
        for (int x = 0; x < kDim; ++x)
          for (int y = 0; y < kDim; ++y) {
            const unsigned rowbits = unsigned(look[std::size_t(x)] >> (y * 8)) & 0xffu;
            if (!rowbits) continue;
            float best[8];
            int at[8];
            const float gx = float(c[0] * kDim + x), gy = float(c[1] * kDim + y), gz0 = float(c[2] * kDim);
            // The frame rows x .. x + 2, y .. y + 2 are the neighbours' rows.
            unsigned near = 0;
            for (int dx = 0; dx < 3; ++dx) near |= ((unsigned(rows[x + dx]) >> y) & 7u) << (dx * 3);
            run_rows(wide, [&] { nearest_in_row(F, pad(x, y, 0), near, gx, gy, gz0, best, at); });
            for (unsigned bits = rowbits; bits; bits &= bits - 1) {
              const int z = __builtin_ctz(bits), v = (x << 6) | (y << 3) | z, p = pad(x, y, z);
              const Vec3f g = vec3(gx, gy, gz0 + float(z));
              const uint32_t own = S.id[b * kVoxels + std::size_t(v)];
              const uint32_t id = F.id[p + kRing.off[at[z]]];
              if (id == kNoSeed || id == own || (own != kNoSeed && !(best[z] < length2(g - S.table[own].p))))
                continue;
              const float d = seed_distance(S.table[id], g, best[z]);
              const bool in = phi[v] < 0;
              if (d > (in ? limit_in : limit_out)) continue;
              up.push_back({uint16_t(v), id, in ? -d : d});
            }
          }
        for (int p : A.set) {
          F.id[p] = kNoSeed;
          F.x[p] = F.y[p] = F.z[p] = kFar;
        }
      }
    });
    std::atomic<bool> moved{false};
    tbb::parallel_for(std::size_t(0), nb, [&](std::size_t b) {
      Mask m{};
      float* phi = B.values(b);
      for (const Update& u : updates[b]) {
        S.id[b * kVoxels + u.v] = u.id;
        phi[u.v] = u.phi;
        m[std::size_t(u.v >> 6)] |= uint64_t(1) << (u.v & 63);
      }
      if (!updates[b].empty()) moved.store(true, std::memory_order_relaxed);
      next[b] = m;
    });
    changed.swap(next);
    if (!moved) break;
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
  Values tmp(B.phi.size());
  std::vector<float> outside(kVoxels, c), inside(kVoxels, -c);
  auto brick_ptr = [&](const Values& src, std::size_t b, int j) -> const float* {
    const int32_t o = B.nbr[b][std::size_t(j)];
    return o >= 0 ? src.data() + std::size_t(o) * kVoxels : o == kInside ? inside.data() : outside.data();
  };
  for (int it = 0; it < passes; ++it)
    for (int axis = 0; axis < 3; ++axis) {
      const Values& src = B.phi;
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
  // The children that can hold such a value: a fine value lies between the
  // least and greatest of the 5^3 coarse voxels its child interpolates.
  std::vector<uint8_t> keep(parents.size() * 8, 0);
  tbb::enumerable_thread_specific<std::vector<float>> scratch([] { return std::vector<float>(kPadCells); });
  auto gather_parent = [&](std::size_t b, float* a) {
    gather(C, b, a, [&](std::size_t o, int v) { return C.phi[o * kVoxels + std::size_t(v)]; }, missing_phi);
  };
  tbb::parallel_for(std::size_t(0), parents.size(), [&](std::size_t pi) {
    float* a = scratch.local().data();
    gather_parent(parents[pi], a);
    for (int child = 0; child < 8; ++child) {
      const int ox = 4 * (child >> 2), oy = 4 * ((child >> 1) & 1), oz = 4 * (child & 1);
      float mn = kInf, mx = -kInf;
      for (int x = 0; x <= 4; ++x)
        for (int y = 0; y <= 4; ++y)
          for (int z = 0; z <= 4; ++z) {
            const float v = a[pad(ox + x, oy + y, oz + z)];
            mn = std::min(mn, v);
            mx = std::max(mx, v);
          }
      keep[pi * 8 + std::size_t(child)] = mn * scale < hi && mx * scale > lo;
    }
  });
  std::vector<uint32_t> slot(keep.size() + 1, 0);  // fine brick of each kept child
  for (std::size_t k = 0; k < keep.size(); ++k) slot[k + 1] = slot[k] + keep[k];
  Bricks F;
  F.coord.resize(slot.back());
  F.phi.resize(F.coord.size() * kVoxels);
  tbb::parallel_for(std::size_t(0), parents.size(), [&](std::size_t pi) {
    const std::size_t b = parents[pi];
    float* a = scratch.local().data();
    gather_parent(b, a);
    const auto& cc = C.coord[b];
    for (int child = 0; child < 8; ++child) {
      if (!keep[pi * 8 + std::size_t(child)]) continue;
      const int ox = child >> 2, oy = (child >> 1) & 1, oz = child & 1;
      const std::size_t f = slot[pi * 8 + std::size_t(child)];
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

namespace {

// Whether brick b and the layers of its six face neighbours next to it all
// lie on one side (phi < 0 or not): then no voxel of b has a 6-neighbour
// on the other side.
bool one_side(const Bricks& B, std::size_t b) {
  const float* own = B.values(b);
  const bool in = own[0] < 0;
  for (int v = 0; v < kVoxels; ++v)
    if ((own[v] < 0) != in) return false;
  for (int axis = 0; axis < 3; ++axis)
    for (int side = -1; side <= 1; side += 2) {
      const int d[3] = {axis == 0 ? side : 0, axis == 1 ? side : 0, axis == 2 ? side : 0};
      const int32_t o = B.nbr[b][std::size_t(nbr_slot(d[0], d[1], d[2]))];
      if (o < 0) {
        if ((missing_phi(o) < 0) != in) return false;
        continue;
      }
      // The neighbour's layer touching b: its coordinate 7 on that axis below b, 0 above.
      const float* n = B.values(std::size_t(o));
      const int layer = side < 0 ? kDim - 1 : 0;
      for (int i = 0; i < kDim; ++i)
        for (int j = 0; j < kDim; ++j) {
          const int v = axis == 0 ? offset(layer, i, j) : axis == 1 ? offset(i, layer, j) : offset(i, j, layer);
          if ((n[v] < 0) != in) return false;
        }
    }
  return true;
}

}  // namespace

Seeds crossing_seeds(Bricks& B) {
  const std::size_t nb = B.size();
  Seeds S;
  S.id.assign(nb * kVoxels, kNoSeed);
  std::vector<std::vector<Seed>> per_brick(nb);  // in voxel order, numbered below
  Values out(B.phi.size());
  tbb::enumerable_thread_specific<std::vector<float>> scratch([] { return std::vector<float>(kPadCells); });
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, nb, 8), [&](const auto& r) {
    float* a = scratch.local().data();
    for (std::size_t b = r.begin(); b != r.end(); ++b) {
      if (one_side(B, b)) {  // no crossing: every voxel becomes its side's infinity
        std::fill_n(out.data() + b * kVoxels, kVoxels, B.values(b)[0] < 0 ? -kInf : kInf);
        continue;
      }
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
