#pragma once
// Uniform neighbour grid with cell size = support radius, written once over
// an executor (CpuExecutor, CudaExecutor).
//
// build():   keys = Z-order (Morton) code of each particle's cell, sorted with
//            a stable radix sort (a counting sort per 8-bit digit); runs of
//            equal keys are the occupied cells, found by a scan. Each cell
//            stores the ids of its 27 neighbour cells, found by binary search
//            in the sorted cell keys, so no hash table and no atomics are
//            needed and the result is the same on every thread count.
// find_neighbors(): CSR neighbour lists (count, scan, fill), all j != i with
//            |x_i - x_j|^2 < h^2, in a fixed order (27 cells in order, cell
//            contents in sorted order). Two shapes of the same work, with the
//            same lists: per cell (a cell's candidates gathered once into a
//            buffer and tested in a vectorised loop, whose hits the count
//            keeps as bits for the fill: the CPU's) and per particle (each
//            sorted particle reads its 27 cells in place, without the 8 KB
//            buffer a GPU thread cannot hold fast: the GPU's). The
//            executor's on_device picks; set_strategy overrides.
// find_neighbors_of(): the same lists for points that are not the grid's
//            particles (fluid particles against boundary particles), in the
//            same two shapes; per cell, a run of points in one cell shares
//            its gathered candidates. The origin lies on the lattice of
//            multiples of h, so grids of one h share their cells.
//
// The sorted order is exposed so that a solver can reorder all its particle
// attributes by it every few steps (periodic Z-order reordering): afterwards
// mark_reordered() makes the particle order the sorted order.
//
// Cell coordinates are clamped to [0, 2^21 - 1] per axis. Clamping is
// monotone and never increases the distance between cells, so particles far
// outside the occupied region still find every neighbour (they share edge
// cells, which costs time, not correctness). Non-finite coordinates map to 0.
#include <stdint.h>
#include <cstring>

#include "eddy/core/grow_buffer.h"
#include "eddy/core/reduce_ops.h"
#include "eddy/core/vec.h"

namespace eddy {

// CSR neighbour lists. Each list has one spare slot at its end (so the fill
// loop can store unconditionally and advance on a hit): the list of i is
// indices[offsets[i], offsets[i + 1] - 1).
struct NeighborView {
  const uint32_t* offsets;  // (n + 1) x 1
  const uint32_t* indices;  // offsets[n] x 1
  EDDY_HD_INLINE uint32_t begin(uint32_t i) const { return offsets[i]; }
  EDDY_HD_INLINE uint32_t end(uint32_t i) const { return offsets[i + 1] - 1u; }
};

namespace grid {

constexpr uint32_t kMaxCoord = (1u << 21) - 1;
constexpr uint32_t kNoCell = 0xffffffffu;

EDDY_HD_INLINE uint64_t spread_bits(uint32_t v) {
  uint64_t x = v & 0x1fffff;
  x = (x | x << 32) & 0x1f00000000ffffull;
  x = (x | x << 16) & 0x1f0000ff0000ffull;
  x = (x | x << 8) & 0x100f00f00f00f00full;
  x = (x | x << 4) & 0x10c30c30c30c30c3ull;
  x = (x | x << 2) & 0x1249249249249249ull;
  return x;
}
EDDY_HD_INLINE uint32_t compact_bits(uint64_t x) {
  x &= 0x1249249249249249ull;
  x = (x ^ (x >> 2)) & 0x10c30c30c30c30c3ull;
  x = (x ^ (x >> 4)) & 0x100f00f00f00f00full;
  x = (x ^ (x >> 8)) & 0x1f0000ff0000ffull;
  x = (x ^ (x >> 16)) & 0x1f00000000ffffull;
  x = (x ^ (x >> 32)) & 0x1fffff;
  return static_cast<uint32_t>(x);
}
EDDY_HD_INLINE uint64_t morton(uint32_t x, uint32_t y, uint32_t z) {
  return spread_bits(x) | (spread_bits(y) << 1) | (spread_bits(z) << 2);
}

EDDY_HD_INLINE uint32_t cell_coord(float x, float origin, float inv_h) {
  const float c = floorf((x - origin) * inv_h);
  // fmaxf maps NaN to 0.
  return static_cast<uint32_t>(fminf(fmaxf(c, 0.0f), static_cast<float>(kMaxCoord)));
}

// First index in sorted keys[0..n) whose key is >= k.
EDDY_HD_INLINE uint32_t lower_bound(const uint64_t* keys, uint32_t n, uint64_t k) {
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    const uint32_t mid = (lo + hi) >> 1;
    if (keys[mid] < k) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// The candidates of one cell: the particles of its 27 neighbour cells,
// gathered into a contiguous buffer (positions and particle indices).
struct Candidates {
  static constexpr uint32_t kMax = 512;
  float x[kMax], y[kMax], z[kMax];
  uint32_t id[kMax];
  uint32_t m = 0;  // total candidates (may exceed kMax: then read in place)

  EDDY_HD_INLINE void gather(const uint32_t* nb, const uint32_t* cell_start, const Vec3f* xs, const uint32_t* order) {
    m = 0;
    for (int s = 0; s < 27; ++s) {
      const uint32_t cell = nb[s];
      if (cell == kNoCell) continue;
      for (uint32_t p = cell_start[cell], e = cell_start[cell + 1]; p < e; ++p, ++m) {
        if (m >= kMax) continue;
        x[m] = xs[p].x;
        y[m] = xs[p].y;
        z[m] = xs[p].z;
        id[m] = order[p];
      }
    }
  }
  // The candidates' ids alone (m counts them all; ids only up to kMax).
  EDDY_HD_INLINE void gather_ids(const uint32_t* nb, const uint32_t* cell_start, const uint32_t* order) {
    m = 0;
    for (int s = 0; s < 27; ++s) {
      const uint32_t cell = nb[s];
      if (cell == kNoCell) continue;
      for (uint32_t p = cell_start[cell], e = cell_start[cell + 1]; p < e; ++p, ++m)
        if (m < kMax) id[m] = order[p];
    }
  }
  // Neighbours of particle i (at xi) within h: candidates other than i.
  EDDY_HD_INLINE uint32_t count(uint32_t i, Vec3f xi, float h2, const uint32_t* nb, const uint32_t* cell_start,
                                const Vec3f* xs, const uint32_t* order) const {
    uint32_t c = 0;
    if (m <= kMax) {
      for (uint32_t t = 0; t < m; ++t) {
        const float dx = xi.x - x[t], dy = xi.y - y[t], dz = xi.z - z[t];
        c += (dx * dx + dy * dy + dz * dz < h2) & (id[t] != i);
      }
      return c;
    }
    return count_in_place(i, xi, h2, nb, cell_start, xs, order);
  }
  // count() reading the 27 cells in place (no gathered candidates).
  EDDY_HD_INLINE static uint32_t count_in_place(uint32_t i, Vec3f xi, float h2, const uint32_t* nb,
                                                const uint32_t* cell_start, const Vec3f* xs, const uint32_t* order) {
    uint32_t c = 0;
    for (int s = 0; s < 27; ++s) {
      const uint32_t cell = nb[s];
      if (cell == kNoCell) continue;
      for (uint32_t p = cell_start[cell], e = cell_start[cell + 1]; p < e; ++p)
        c += (length2(xi - xs[p]) < h2) & (order[p] != i);
    }
    return c;
  }
  // The same neighbours as bits over the candidates (bit t % 64 of word
  // t / 64 for candidate t: (m + 63) / 64 words, at most kWords; m <= kMax);
  // returns their count.
  static constexpr uint32_t kWords = kMax / 64;
  EDDY_HD_INLINE uint32_t hit_bits(uint32_t i, Vec3f xi, float h2, uint64_t* bits) const {
    uint32_t c = 0;
#ifndef __CUDA_ARCH__
    // On the CPU: the tests in a loop the compiler vectorises, one byte per
    // candidate, then eight bytes at a time turned into eight bits.
    alignas(8) uint8_t hit[kMax];
    for (uint32_t t = 0; t < m; ++t) {
      const float dx = xi.x - x[t], dy = xi.y - y[t], dz = xi.z - z[t];
      hit[t] = uint8_t((dx * dx + dy * dy + dz * dz < h2) & (id[t] != i));
    }
    const uint32_t words = (m + 63u) / 64u;
    for (uint32_t t = m; t < words * 64u; ++t) hit[t] = 0;
    for (uint32_t w = 0; w < words; ++w) {
      uint64_t word = 0;
      for (uint32_t g = 0; g < 8; ++g) {
        uint64_t bytes;
        std::memcpy(&bytes, hit + w * 64u + g * 8u, 8);
        // Bytes of 0 or 1 (little endian) to bits: byte k lands on bit 56 + k.
        word |= ((bytes * 0x0102040810204080ull) >> 56) << (g * 8u);
      }
      bits[w] = word;
      c += uint32_t(__builtin_popcountll(word));
    }
#else
    for (uint32_t w = 0; w < (m + 63u) / 64u; ++w) bits[w] = 0;
    for (uint32_t t = 0; t < m; ++t) {
      const float dx = xi.x - x[t], dy = xi.y - y[t], dz = xi.z - z[t];
      const bool hit = (dx * dx + dy * dy + dz * dz < h2) & (id[t] != i);
      bits[t / 64u] |= uint64_t(hit) << (t % 64u);
      c += hit;
    }
#endif
    return c;
  }
  // Writes the ids of the candidates whose bits are set (hit_bits) to out,
  // in candidate order.
  EDDY_HD_INLINE void fill_from_bits(const uint64_t* bits, uint32_t* out) const {
    uint32_t w = 0;
#if !defined(__CUDA_ARCH__) && !defined(__CUDACC__) && !defined(__clang__)  // (a shuffle by a variable mask: GCC's builtin)
    // Each group of eight: its hits' ids moved to the front by one shuffle
    // (a table of the 256 masks; one vpermd in AVX2 code) and stored eight
    // at a time into a local buffer, without a branch per hit (which the
    // hits' irregular pattern mispredicts); then copied out.
    typedef uint32_t Ids8 __attribute__((vector_size(32)));
    struct alignas(32) Perm {
      uint32_t lane[8];
    };
    struct PackTable {
      Perm perm[256];
    };
    static constexpr PackTable kPack = [] {
      PackTable t{};
      for (uint32_t mask = 0; mask < 256; ++mask) {
        uint32_t k = 0;
        for (uint32_t b = 0; b < 8; ++b)
          if (mask >> b & 1u) t.perm[mask].lane[k++] = b;
      }
      return t;
    }();
    alignas(32) uint32_t packed[kMax + 8];
    for (uint32_t t0 = 0; t0 < m; t0 += 8) {
      const uint32_t g = uint32_t(bits[t0 / 64u] >> (t0 % 64u)) & 0xffu;
      Ids8 v;
      std::memcpy(&v, id + t0, sizeof v);  // (t0 + 8 <= kMax: id has room; lanes past m are masked off)
      Ids8 sel;
      std::memcpy(&sel, kPack.perm[g].lane, sizeof sel);
      const Ids8 p = __builtin_shuffle(v, sel);
      std::memcpy(packed + w, &p, sizeof p);
      w += uint32_t(__builtin_popcount(g));
    }
    std::memcpy(out, packed, w * sizeof(uint32_t));
#elif !defined(__CUDA_ARCH__)
    for (uint32_t t0 = 0; t0 < m; t0 += 64) {
      uint64_t g = bits[t0 / 64u];
      while (g) {
        out[w++] = id[t0 + uint32_t(__builtin_ctzll(g))];
        g &= g - 1u;
      }
    }
#else
    for (uint32_t t = 0; t < m; ++t) {
      out[w] = id[t];
      w += uint32_t(bits[t / 64u] >> (t % 64u)) & 1u;
    }
#endif
  }
  // Writes the indices of those neighbours to out (which has one spare
  // slot: stores are unconditional).
  EDDY_HD_INLINE void fill(uint32_t i, Vec3f xi, float h2, const uint32_t* nb, const uint32_t* cell_start,
                           const Vec3f* xs, const uint32_t* order, uint32_t* out) const {
    if (m <= kMax) {
      uint64_t bits[kWords];
      hit_bits(i, xi, h2, bits);
      fill_from_bits(bits, out);
      return;
    }
    fill_in_place(i, xi, h2, nb, cell_start, xs, order, out);
  }
  // fill() reading the 27 cells in place (no gathered candidates).
  EDDY_HD_INLINE static void fill_in_place(uint32_t i, Vec3f xi, float h2, const uint32_t* nb,
                                           const uint32_t* cell_start, const Vec3f* xs, const uint32_t* order,
                                           uint32_t* out) {
    uint32_t w = 0;
    for (int s = 0; s < 27; ++s) {
      const uint32_t cell = nb[s];
      if (cell == kNoCell) continue;
      for (uint32_t p = cell_start[cell], e = cell_start[cell + 1]; p < e; ++p) {
        out[w] = order[p];
        w += (length2(xi - xs[p]) < h2) & (order[p] != i);
      }
    }
  }
};

// The 27 cells around an outside point (a point that is not one of the
// grid's particles), through the dense cell table or by binary search.
// Outside points clamp to the edge cells, which is monotone and so never
// misses a neighbour (see cell_coord).
struct CellWalker {
  Vec3f origin;
  float inv_h;
  const uint32_t* table;  // dense table or null
  int dims[3];
  const uint64_t* cell_keys;
  uint32_t ncells;
  const uint32_t* cell_start;

  // The cell holding qi, as one number (equal for points in one cell).
  EDDY_HD_INLINE uint64_t cell(Vec3f qi) const {
    return uint64_t(cell_coord(qi.x, origin.x, inv_h)) | uint64_t(cell_coord(qi.y, origin.y, inv_h)) << 21 |
           uint64_t(cell_coord(qi.z, origin.z, inv_h)) << 42;
  }
  // The 27 cells around qi's (the order of NeighborGrid's cell_nbr): the
  // occupied ones' ids, kNoCell for the others.
  EDDY_HD_INLINE void cells(Vec3f qi, uint32_t nb[27]) const {
    const int cx = int(cell_coord(qi.x, origin.x, inv_h)), cy = int(cell_coord(qi.y, origin.y, inv_h)),
              cz = int(cell_coord(qi.z, origin.z, inv_h));
    int slot = 0;
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx, ++slot) {
          const int nx = cx + dx, ny = cy + dy, nz = cz + dz;
          uint32_t id = kNoCell;
          if (nx < 0 || ny < 0 || nz < 0) {
          } else if (table) {
            if (nx < dims[0] && ny < dims[1] && nz < dims[2]) id = table[(size_t(nz) * dims[1] + ny) * dims[0] + nx];
          } else if (nx <= int(kMaxCoord) && ny <= int(kMaxCoord) && nz <= int(kMaxCoord)) {
            const uint64_t nk = morton(uint32_t(nx), uint32_t(ny), uint32_t(nz));
            const uint32_t at = lower_bound(cell_keys, ncells, nk);
            if (at < ncells && cell_keys[at] == nk) id = at;
          }
          nb[slot] = id;
        }
  }
};

// Queries (points that are not the grid's particles) in blocks of kBlock:
// f(i, candidates, cells) for each, where a run of queries in one cell
// shares the candidates of that cell's 27 cells, gathered once (null for a
// query whose `near` flag is 0).
struct QueryRuns {
  static constexpr uint32_t kBlock = 16;
  CellWalker walk;
  const Vec3f* q;
  uint32_t nq;
  const uint8_t* near;
  const Vec3f* xs;
  const uint32_t* order;

  template <class F>
  EDDY_HD_INLINE void operator()(uint32_t blk, F&& f) const {
    Candidates cand;
    uint32_t nb[27];
    uint64_t at = ~uint64_t(0);
    const uint32_t end = nq - blk * kBlock < kBlock ? nq : blk * kBlock + kBlock;
    for (uint32_t i = blk * kBlock; i < end; ++i) {
      if (near && !near[i]) {
        f(i, static_cast<const Candidates*>(nullptr), nb);
        continue;
      }
      const uint64_t c = walk.cell(q[i]);
      if (c != at) {
        walk.cells(q[i], nb);
        cand.gather(nb, walk.cell_start, xs, order);
        at = c;
      }
      f(i, &cand, nb);
    }
  }
};

}  // namespace grid

enum class NeighborStrategy { PerCell, PerParticle };

template <class Exec>
class NeighborGrid {
 public:
  template <class T>
  using Vec = typename Exec::template Vector<T>;

  // How find_neighbors works (see the top of this file); the lists are the same.
  void set_strategy(NeighborStrategy s) { strategy_ = s; }
  NeighborStrategy strategy() const { return strategy_; }

  explicit NeighborGrid(const Exec& ex) : ex_(ex) {}

  void build(const Vec3f* x, uint32_t n, float h) {
    sorted_from_ = nullptr;
    n_ = n;
    h_ = h;
    const float inv_h = 1.0f / h;
    grow_buffer(keys_, n);
    grow_buffer(order_, n);
    grow_buffer(head_, n + 1);
    grow_buffer(cell_of_, n);
    if (n == 0) {
      cells_ = 0;
      return;
    }
    // Bounds of the finite positions.
    const Bounds3 b = ex_.reduce(
        n, empty_bounds(),
        [=] EDDY_HD(uint32_t i) {
          const Vec3f p = x[i];
          return is_finite(p) ? Bounds3{p, p} : empty_bounds();
        },
        BoundsOp{});
    // The origin on the lattice of multiples of h, so that grids of one h
    // (a fluid's and its boundary's) share their cells.
    origin_ = b.lo.x <= b.hi.x ? vec3(floorf(b.lo.x * inv_h) * h, floorf(b.lo.y * inv_h) * h, floorf(b.lo.z * inv_h) * h)
                               : vec3(0.0f);
    const Vec3f ext = b.lo.x <= b.hi.x ? (b.hi - origin_) * inv_h : vec3(0.0f);
    const float maxc = fminf(max_component(ext) + 1.0f, static_cast<float>(grid::kMaxCoord));
    int bits = 0;
    while (bits < 21 && static_cast<float>(1u << bits) <= maxc) ++bits;
    key_bits_ = 3 * bits;

    const Vec3f o = origin_;
    uint64_t* keys = keys_.data();
    uint32_t* order = order_.data();
    ex_.for_each(n, [=] EDDY_HD(uint32_t i) {
      const Vec3f p = x[i];
      keys[i] = grid::morton(grid::cell_coord(p.x, o.x, inv_h), grid::cell_coord(p.y, o.y, inv_h),
                             grid::cell_coord(p.z, o.z, inv_h));
      order[i] = i;
    });
    ex_.sort_by_key(keys, order, n, key_bits_);

    // Cells are the runs of equal keys: head flags, scanned to cell ids.
    uint32_t* head = head_.data();
    ex_.for_each(n, [=] EDDY_HD(uint32_t k) { head[k] = (k == 0 || keys[k] != keys[k - 1]) ? 1u : 0u; });
    uint32_t* cell_of = cell_of_.data();
    cells_ = ex_.exclusive_scan(head, cell_of, n);
    // Exclusive scan counts the heads before k; a particle's cell is the
    // last head at or before it.
    ex_.for_each(n, [=] EDDY_HD(uint32_t k) { cell_of[k] = cell_of[k] + head[k] - 1u; });
    grow_buffer(cell_keys_, cells_);
    grow_buffer(cell_start_, cells_ + 1);
    grow_buffer(cell_nbr_, size_t(cells_) * 27);
    uint64_t* cell_keys = cell_keys_.data();
    uint32_t* cell_start = cell_start_.data();
    const uint32_t ncells = cells_;
    ex_.for_each(n + 1, [=] EDDY_HD(uint32_t k) {
      if (k == n) {
        cell_start[ncells] = n;
      } else if (k == 0 || keys[k] != keys[k - 1]) {
        cell_start[cell_of[k]] = k;
        cell_keys[cell_of[k]] = keys[k];
      }
    });
    // Neighbour cells: through a dense table of the occupied box when it is
    // small (a few entries per particle), else by binary search in the
    // sorted cell keys (particles spread far apart).
    const int dims[3] = {int(fminf(ext.x, float(grid::kMaxCoord))) + 1, int(fminf(ext.y, float(grid::kMaxCoord))) + 1,
                         int(fminf(ext.z, float(grid::kMaxCoord))) + 1};
    const double dense_cells = double(dims[0]) * dims[1] * dims[2];
    const bool dense = dense_cells <= 4.0 * n + 65536.0;
    for (int a = 0; a < 3; ++a) dims_[a] = dims[a];
    dense_used_ = dense;
    uint32_t* table = nullptr;
    if (dense) {
      grow_buffer(dense_, size_t(dense_cells));
      table = dense_.data();
      ex_.for_each(uint32_t(dense_cells), [=] EDDY_HD(uint32_t q) { table[q] = grid::kNoCell; });
      const int dx_ = dims[0], dy_ = dims[1];
      ex_.for_each(ncells, [=] EDDY_HD(uint32_t c) {
        const uint64_t key = cell_keys[c];
        const uint32_t cx = grid::compact_bits(key), cy = grid::compact_bits(key >> 1), cz = grid::compact_bits(key >> 2);
        table[(size_t(cz) * dy_ + cy) * dx_ + cx] = c;
      });
    }
    uint32_t* cell_nbr = cell_nbr_.data();
    const int d0 = dims[0], d1 = dims[1], d2 = dims[2];
    ex_.for_each(ncells, [=] EDDY_HD(uint32_t c) {
      const uint64_t key = cell_keys[c];
      const int cx = static_cast<int>(grid::compact_bits(key));
      const int cy = static_cast<int>(grid::compact_bits(key >> 1));
      const int cz = static_cast<int>(grid::compact_bits(key >> 2));
      int slot = 0;
      for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx, ++slot) {
            const int nx = cx + dx, ny = cy + dy, nz = cz + dz;
            uint32_t id = grid::kNoCell;
            if (table) {
              if (nx >= 0 && ny >= 0 && nz >= 0 && nx < d0 && ny < d1 && nz < d2)
                id = table[(size_t(nz) * d1 + ny) * d0 + nx];
            } else if (nx >= 0 && ny >= 0 && nz >= 0 && nx <= int(grid::kMaxCoord) && ny <= int(grid::kMaxCoord) &&
                       nz <= int(grid::kMaxCoord)) {
              const uint64_t nk = grid::morton(uint32_t(nx), uint32_t(ny), uint32_t(nz));
              const uint32_t at = grid::lower_bound(cell_keys, ncells, nk);
              if (at < ncells && cell_keys[at] == nk) id = at;
            }
            cell_nbr[size_t(c) * 27 + slot] = id;
          }
    });
  }

  // The attributes have been permuted by sorted_order(): particle i now sits
  // at sorted position i.
  void mark_reordered() {
    sorted_from_ = nullptr;
    uint32_t* order = order_.data();
    ex_.for_each(n_, [=] EDDY_HD(uint32_t k) { order[k] = k; });
  }

  // Sorted position k -> particle index (n x 1).
  const uint32_t* sorted_order() const { return order_.data(); }
  uint32_t size() const { return n_; }
  uint32_t cell_count() const { return cells_; }
  float cell_size() const { return h_; }

  // Neighbour lists of the positions x the grid was built on (or positions
  // that moved less than the margin the caller accounts for).
  //
  // Per cell (the CPU's shape): the candidates of a cell's 27 neighbour
  // cells are gathered once into a small contiguous buffer (structure of
  // arrays) and every particle of the cell is tested against it in a loop
  // the compiler vectorises; a cell with more candidates than the buffer
  // holds (dense clumps) reads them in place instead. Per particle (the
  // GPU's): every particle reads its 27 cells in place.
  void find_neighbors(const Vec3f* x) {
    const uint32_t n = n_;
    grow_buffer(offsets_, n + 1);
    if (n == 0) {
      pairs_ = 0;
      zero_first_offset();
      return;
    }
    const float h2 = h_ * h_;
    const uint32_t* order = order_.data();
    const uint32_t* cell_start = cell_start_.data();
    uint32_t* counts = offsets_.data();
    // Positions in sorted order: each cell's particles are contiguous.
    grow_buffer(sorted_x_, n);
    Vec3f* xs = sorted_x_.data();
    ex_.for_each(n, [=] EDDY_HD(uint32_t k) { xs[k] = x[order[k]]; });
    sorted_from_ = nullptr;  // x may be positions moved since the build
    // Count (+ 1 for the spare slot), scan, fill. Per cell, the count keeps
    // each particle's hits as bits (kKeptWords words a particle, where its
    // cell has at most 64 kKeptWords candidates), and the fill gathers only
    // the candidates' ids and writes out the kept hits: no second test.
    const bool per_cell = strategy_ == NeighborStrategy::PerCell;
    if (per_cell) grow_buffer(kept_hits_, size_t(n) * kKeptWords);
    uint64_t* kept = per_cell ? kept_hits_.data() : nullptr;
    each_sorted_particle(xs, [=] EDDY_HD(const grid::Candidates* cand, uint32_t k, const uint32_t* nb) {
      const uint32_t i = order[k];
      uint32_t c;
      if (!cand) c = grid::Candidates::count_in_place(i, xs[k], h2, nb, cell_start, xs, order);
      else if (cand->m <= 64u * kKeptWords) c = cand->hit_bits(i, xs[k], h2, kept + size_t(k) * kKeptWords);
      else c = cand->count(i, xs[k], h2, nb, cell_start, xs, order);
      counts[i] = c + 1u;
    });
    finish_counts(n);
    const uint32_t* offsets = offsets_.data();
    uint32_t* indices = indices_.data();
    if (per_cell) {
      const uint32_t* cell_nbr = cell_nbr_.data();
      ex_.for_each_simd(cells_, [=] EDDY_HD(uint32_t c) {
        grid::Candidates cand;
        const uint32_t* nb = cell_nbr + size_t(c) * 27;
        cand.gather_ids(nb, cell_start, order);
        const bool bits_kept = cand.m <= 64u * kKeptWords;
        if (!bits_kept) cand.gather(nb, cell_start, xs, order);
        for (uint32_t k = cell_start[c]; k < cell_start[c + 1]; ++k) {
          uint32_t* out = indices + offsets[order[k]];
          if (bits_kept) cand.fill_from_bits(kept + size_t(k) * kKeptWords, out);
          else cand.fill(order[k], xs[k], h2, nb, cell_start, xs, order, out);
        }
      });
      return;
    }
    each_sorted_particle(xs, [=] EDDY_HD(const grid::Candidates*, uint32_t k, const uint32_t* nb) {
      const uint32_t i = order[k];
      grid::Candidates::fill_in_place(i, xs[k], h2, nb, cell_start, xs, order, indices + offsets[i]);
    });
  }

  // visit(cand, k, nb) for every sorted particle k, with nb its cell's 27
  // neighbour cells, in the grid's shape: per cell, cand holds the cell's
  // gathered candidates (positions xs); per particle, cand is null and the
  // cells are read in place. (Public: nvcc's extended lambdas need public
  // enclosing functions.)
  template <class Visit>
  void each_sorted_particle(const Vec3f* xs, Visit visit) {
    const uint32_t* order = order_.data();
    const uint32_t* cell_start = cell_start_.data();
    const uint32_t* cell_nbr = cell_nbr_.data();
    if (strategy_ == NeighborStrategy::PerCell) {
      ex_.for_each_simd(cells_, [=] EDDY_HD(uint32_t c) {
        grid::Candidates cand;
        const uint32_t* nb = cell_nbr + size_t(c) * 27;
        cand.gather(nb, cell_start, xs, order);
        for (uint32_t k = cell_start[c]; k < cell_start[c + 1]; ++k) visit(&cand, k, nb);
      });
    } else {
      const uint32_t* cell_of = cell_of_.data();
      ex_.for_each(n_, [=] EDDY_HD(uint32_t k) { visit(nullptr, k, cell_nbr + size_t(cell_of[k]) * 27); });
    }
  }

  // Neighbour lists of nq other points q (not the grid's own particles; e.g.
  // fluid particles against a grid of boundary particles): for each q_i,
  // every grid particle at x (the positions of the last build(), unchanged
  // since: their sorted copy is kept for the next call) within h, in the
  // fixed order of find_neighbors. The lists replace the grid's own.
  // With `near`, points whose flag is 0 are known to have no grid particle
  // within h (the caller's test, e.g. a distance to the surfaces the grid
  // particles sample) and get empty lists without a search.
  void find_neighbors_of(const Vec3f* x, const Vec3f* q, uint32_t nq, const uint8_t* near = nullptr) {
    grow_buffer(offsets_, nq + 1);
    if (nq == 0 || n_ == 0) {
      pairs_ = 0;
      const uint32_t m = nq;
      uint32_t* o = offsets_.data();
      // No grid particles: every list is just its spare slot.
      ex_.for_each(m + 1, [=] EDDY_HD(uint32_t i) { o[i] = i; });
      if (indices_.size() < m) indices_.resize(m);
      return;
    }
    const float h2 = h_ * h_, inv_h = 1.0f / h_;
    const Vec3f o = origin_;
    const uint32_t* order = order_.data();
    const uint32_t* cell_start = cell_start_.data();
    const uint64_t* cell_keys = cell_keys_.data();
    const uint32_t* table = dense_used_ ? dense_.data() : nullptr;
    const int d0 = dims_[0], d1 = dims_[1], d2 = dims_[2];
    const uint32_t ncells = cells_, n = n_;
    // The grid's positions in sorted order: copied once per build (the
    // boundary's grid is built when a collider moves, queried every step).
    if (sorted_from_ != x) {
      grow_buffer(sorted_x_, n);
      Vec3f* out = sorted_x_.data();
      ex_.for_each(n, [=] EDDY_HD(uint32_t k) { out[k] = x[order[k]]; });
      sorted_from_ = x;
    }
    const Vec3f* xs = sorted_x_.data();
    uint32_t* counts = offsets_.data();
    const grid::CellWalker walk{o, inv_h, table, {d0, d1, d2}, cell_keys, ncells, cell_start};
    // A query is no grid particle: no candidate is left out as itself.
    constexpr uint32_t kNotOne = 0xffffffffu;
    if (strategy_ == NeighborStrategy::PerCell) {
      // Per cell (the CPU's shape): the queries in blocks, each run of them
      // in one cell (the fluid's particles, sorted by cells of the same
      // size, come in such runs) gathers that cell's candidates once and
      // tests each query against them in the vectorised loops of
      // find_neighbors. The same lists as per particle.
      const grid::QueryRuns each_query{walk, q, nq, near, xs, order};
      const uint32_t blocks = (nq + grid::QueryRuns::kBlock - 1) / grid::QueryRuns::kBlock;
      ex_.for_each_simd(blocks, [=] EDDY_HD(uint32_t blk) {
        each_query(blk, [&](uint32_t i, const grid::Candidates* cand, const uint32_t* nbc) {
          counts[i] = 1u + (cand ? cand->count(kNotOne, q[i], h2, nbc, cell_start, xs, order) : 0u);
        });
      });
      finish_counts(nq);
      uint32_t* indices = indices_.data();
      const uint32_t* offsets = offsets_.data();
      ex_.for_each_simd(blocks, [=] EDDY_HD(uint32_t blk) {
        each_query(blk, [&](uint32_t i, const grid::Candidates* cand, const uint32_t* nbc) {
          if (cand) cand->fill(kNotOne, q[i], h2, nbc, cell_start, xs, order, indices + offsets[i]);
        });
      });
      return;
    }
    // Per particle (the GPU's): each query reads its 27 cells in place.
    ex_.for_each(nq, [=] EDDY_HD(uint32_t i) {
      uint32_t c = 1;  // the spare slot
      if (!near || near[i]) {
        uint32_t nbc[27];
        walk.cells(q[i], nbc);
        c += grid::Candidates::count_in_place(kNotOne, q[i], h2, nbc, cell_start, xs, order);
      }
      counts[i] = c;
    });
    finish_counts(nq);
    const uint32_t* offsets = offsets_.data();
    uint32_t* indices = indices_.data();
    ex_.for_each(nq, [=] EDDY_HD(uint32_t i) {
      if (near && !near[i]) return;
      uint32_t nbc[27];
      walk.cells(q[i], nbc);
      grid::Candidates::fill_in_place(kNotOne, q[i], h2, nbc, cell_start, xs, order, indices + offsets[i]);
    });
  }

  // After the counts of n lists (spare slot included): offsets by an
  // exclusive scan, the pair count, and room for the indices. (Public, as
  // zero_first_offset.)
  void finish_counts(uint32_t n) {
    uint32_t* counts = offsets_.data();
    ex_.for_each(1, [=] EDDY_HD(uint32_t) { counts[n] = 0; });
    const uint32_t slots = ex_.exclusive_scan(counts, counts, n + 1);
    pairs_ = slots - n;
    if (indices_.size() < slots) indices_.resize(size_t(slots) + slots / 4);  // headroom: rare regrowth
  }

  // Public: nvcc's extended lambdas need a public enclosing function.
  void zero_first_offset() {
    uint32_t* o = offsets_.data();
    ex_.for_each(1, [=] EDDY_HD(uint32_t) { o[0] = 0; });
  }

  NeighborView neighbors() const { return {offsets_.data(), indices_.data()}; }
  uint32_t pair_count() const { return pairs_; }

  // Bytes held by the grid and the neighbour lists.
  size_t memory_bytes() const {
    return keys_.size() * 8 + order_.size() * 4 + head_.size() * 4 + cell_of_.size() * 4 + cell_keys_.size() * 8 +
           cell_start_.size() * 4 + cell_nbr_.size() * 4 + offsets_.size() * 4 + indices_.size() * 4 +
           sorted_x_.size() * sizeof(Vec3f) + dense_.size() * 4 + kept_hits_.size() * 8;
  }

 private:
  const Exec& ex_;
  uint32_t n_ = 0, cells_ = 0, pairs_ = 0;
  NeighborStrategy strategy_ = Exec::on_device ? NeighborStrategy::PerParticle : NeighborStrategy::PerCell;
  int key_bits_ = 0;
  int dims_[3] = {0, 0, 0};
  bool dense_used_ = false;
  float h_ = 0;
  Vec3f origin_{0, 0, 0};
  Vec<uint64_t> keys_;
  Vec<uint32_t> order_, head_, cell_of_;
  Vec<uint64_t> cell_keys_;
  Vec<uint32_t> cell_start_, cell_nbr_;
  Vec<uint32_t> offsets_, indices_;
  Vec<Vec3f> sorted_x_;
  static constexpr uint32_t kKeptWords = 4;  // find_neighbors' kept hits: 256 candidates, 32 bytes a particle
  Vec<uint64_t> kept_hits_;
  const Vec3f* sorted_from_ = nullptr;  // the build's positions sorted_x_ holds (find_neighbors_of), or null
  Vec<uint32_t> dense_;
};

}  // namespace eddy
